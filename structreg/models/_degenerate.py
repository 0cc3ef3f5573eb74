"""Saying when a semi-supervised answer is degenerate.

Graph-based semi-supervised solutions fail in two recognisable ways: they *collapse* (most
unlabeled points are given one class although the labels are spread over several, and the
scores decide them weakly), or
they go *flat* (away from the labeled points the class scores are nearly constant, so the
decision rests on differences at rounding level: Laplace learning at very low label rates is
the classic case).  Neither is an error -- the answer is the solution of the stated problem
-- but both are almost never what the user wants, so the fit warns with the reason and what
to try.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ..exceptions import DegenerateSolutionWarning

COLLAPSE_SHARE = 0.8
"""A fit collapses when at least this share of the unlabeled points gets one class ..."""
COLLAPSE_LABEL_SHARE = 0.5
"""... while that class holds at most this share of the labels ..."""
COLLAPSE_MARGIN = 0.5
"""... and the unlabeled points' median score margin is at most this fraction of the labeled
points' (weakly decided: a common level of the scores, not the data, puts the points in one
class).  A confident answer that gives most points to one class -- a class that really is
that big -- is left alone.  The three numbers were chosen on the defaults suite's draws
(``benchmarks/degenerate_signals.py``; the rates are in the user guide's defaults page)."""
FLAT_RATIO = 1e-3
"""Scores are flat when the median score margin (best minus second best) of the unlabeled
points is below this fraction of the labeled points' median margin."""
MIN_UNLABELED = 20
"""Fewer unlabeled points than this are too few to judge."""


@dataclass(frozen=True)
class Signals:
    """What the rule of :func:`degenerate_reason` reads from a fit's training scores."""

    top: int
    """The class most unlabeled points get."""
    top_share: float
    """The share of the unlabeled points it gets."""
    label_share: float
    """Its share of the labels."""
    margin_unlabeled: float
    """The unlabeled points' median score margin (best class score minus second best)."""
    margin_labeled: float
    """The labeled points' median score margin."""


def signals(
    scores: np.ndarray, labeled: np.ndarray, y_codes: np.ndarray, n_classes: int
) -> Signals | None:
    """The :class:`Signals` of finite training scores (the arguments of
    :func:`degenerate_reason`), or None where there is nothing to judge: fewer than two
    classes, fewer than :data:`MIN_UNLABELED` unlabeled points, no labels, or scores that
    are not finite."""
    scores = np.asarray(scores, dtype=float).reshape(len(labeled), -1)
    if scores.shape[1] == 1:
        scores = np.column_stack([-scores[:, 0], scores[:, 0]])
    unlabeled = ~labeled
    if n_classes < 2 or unlabeled.sum() < MIN_UNLABELED or not labeled.any():
        return None
    if not np.all(np.isfinite(scores)):
        return None
    predicted = np.argmax(scores[unlabeled], axis=1)
    shares = np.bincount(predicted, minlength=n_classes) / predicted.size
    top = int(np.argmax(shares))
    ordered = np.sort(scores, axis=1)
    margin = ordered[:, -1] - ordered[:, -2]
    return Signals(
        top=top,
        top_share=float(shares[top]),
        label_share=float(np.mean(y_codes[labeled] == top)),
        margin_unlabeled=float(np.median(margin[unlabeled])),
        margin_labeled=float(np.median(margin[labeled])),
    )


def degenerate_reason(
    scores: np.ndarray, labeled: np.ndarray, y_codes: np.ndarray, classes: np.ndarray
) -> str | None:
    """Why the fitted scores of the training points are degenerate, or None.

    Parameters
    ----------
    scores : ndarray of shape (n_samples, n_classes), or (n_samples,) / (n_samples, 1) for two
        classes
        Class scores (or the decision value of the second class) of the training points.
    labeled : ndarray of bool, shape (n_samples,)
    y_codes : ndarray of int, shape (n_samples,)
        Class codes of the labeled points (anything elsewhere).
    classes : ndarray of shape (n_classes,)
        The class labels (named in the reason).
    """
    seen = signals(scores, labeled, y_codes, len(classes))
    if seen is None:
        return None
    top, share, label_share = seen.top, seen.top_share, seen.label_share
    spread, reference = seen.margin_unlabeled, seen.margin_labeled
    if (
        share >= COLLAPSE_SHARE
        and label_share <= COLLAPSE_LABEL_SHARE
        and spread <= COLLAPSE_MARGIN * reference
    ):
        return (
            f"{100 * share:.0f} % of the unlabeled points get class {_plain(classes[top])!r} "
            f"although it holds {100 * label_share:.0f} % of the labels, and they are weakly "
            f"decided (median margin {spread:.2g} against {reference:.2g} at the labels)"
        )
    if reference > 0 and spread < FLAT_RATIO * reference:
        return (
            f"the class scores are nearly constant away from the labeled points (median margin "
            f"{spread:.1e} of the unlabeled points against {reference:.1e} at the labels)"
        )
    return None


def _plain(label):
    """A class label as Python writes it (``'b'``, ``1``), not as NumPy's repr."""
    return label.item() if isinstance(label, np.generic) else label


def warn_if_degenerate(
    estimator, scores, labeled: np.ndarray, y_codes: np.ndarray, hint: str
) -> None:
    """Issue a :class:`~structreg.exceptions.DegenerateSolutionWarning` naming the reason
    and ``hint`` (what to try) when :func:`degenerate_reason` finds one."""
    reason = degenerate_reason(scores, labeled, y_codes, estimator.classes_)
    if reason is not None:
        warnings.warn(
            f"{type(estimator).__name__}: the semi-supervised answer looks degenerate: {reason}. "
            f"{hint} (If the classes really are this unbalanced, ignore this warning.)",
            DegenerateSolutionWarning,
            stacklevel=3,
        )
