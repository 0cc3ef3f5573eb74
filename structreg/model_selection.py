"""Cross-validation and scoring for semi-supervised estimators.

scikit-learn's splitters know nothing about unlabeled samples: with ``GridSearchCV`` and
``KFold`` the unlabeled points that fall in a test fold are dropped from that fold's training
set (wasting them), and the test folds contain unlabeled points that must not be scored.

This module provides

- :class:`SemiSupervisedKFold`, a splitter that cuts only the *labeled* samples into folds
  and puts *every* unlabeled sample in every training set; test sets are labeled only;
- :func:`make_labeled_scorer` and :data:`labeled_accuracy_scorer`, scorers that score only
  the labeled samples of ``(X, y)``, so that they are safe with any splitter (including the
  training-set scores of ``return_train_score=True``);
- :func:`semi_supervised_grid_search`, a ``GridSearchCV`` wired with both.

Unlabeled samples are marked as in :mod:`structreg.models`: ``-1`` in numeric label arrays,
``None`` in object (e.g. string) label arrays, and missing values (NaN, None, ``pd.NA``: a
pandas label Series with missing entries) in any (see
:func:`structreg.models._base.is_unlabeled`).

Examples
--------
>>> import numpy as np
>>> from sklearn.datasets import make_moons
>>> from structreg import LapRLSC
>>> from structreg.model_selection import semi_supervised_grid_search
>>> X, y = make_moons(200, noise=0.05, random_state=0)
>>> y_semi = np.full_like(y, -1)
>>> labeled = np.r_[np.flatnonzero(y == 0)[:6], np.flatnonzero(y == 1)[:6]]
>>> y_semi[labeled] = y[labeled]
>>> search = semi_supervised_grid_search(
...     LapRLSC(gamma=5.0, gamma_A=1e-4), {"gamma_I": [0.0, 1e4]}, n_splits=3, random_state=0
... )
>>> search.fit(X, y_semi).best_params_
{'gamma_I': 10000.0}
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from sklearn.metrics import accuracy_score, make_scorer
from sklearn.model_selection import GridSearchCV

from ._compat import safe_indexing
from .models._base import UNLABELED
from .models._misuse import warn_if_scoring_unlabeled
from .models._splits import SemiSupervisedKFold, _as_label_array, _unlabeled_mask

__all__ = [
    "SemiSupervisedKFold",
    "labeled_accuracy_scorer",
    "make_labeled_scorer",
    "semi_supervised_grid_search",
]


class _LabeledScorer:
    """Scorer ``scorer(estimator, X, y)`` that evaluates a wrapped scorer on labeled samples."""

    def __init__(self, scorer: Callable, unlabeled_label: Any = UNLABELED) -> None:
        self._scorer = scorer
        self._unlabeled_label = unlabeled_label

    def __call__(
        self, estimator: Any, X: Any, y: Any, sample_weight: Any = None, **kwargs: Any
    ) -> float:
        if y is None:
            raise ValueError("a labeled scorer needs the true labels y; got y=None")
        given, y = y, _as_label_array(y)
        keep = ~_unlabeled_mask(y, self._unlabeled_label)
        if not keep.all():  # dropped by design, but not from a cross-validation's test fold
            warn_if_scoring_unlabeled(given)
        if not keep.any():
            raise ValueError(
                f"cannot score: none of the {y.shape[0]} samples is labeled (all are marked "
                f"{self._unlabeled_label!r} or missing); with a plain splitter, use "
                "SemiSupervisedKFold so that test folds hold labeled samples"
            )
        X = safe_indexing(X, keep)
        if sample_weight is not None:
            kwargs["sample_weight"] = safe_indexing(sample_weight, keep)
        return self._scorer(estimator, X, y[keep], **kwargs)

    def __repr__(self) -> str:
        return f"make_labeled_scorer({self._scorer!r}, unlabeled_label={self._unlabeled_label!r})"


def make_labeled_scorer(
    score_func: Callable = accuracy_score,
    *,
    unlabeled_label: Any = UNLABELED,
    response_method: str | Sequence[str] = "predict",
    greater_is_better: bool = True,
    **kwargs: Any,
) -> Callable[..., float]:
    """Make a scorer that scores only the labeled samples of ``(X, y)``.

    The returned callable has the scorer signature ``scorer(estimator, X, y)``
    (plus optional ``sample_weight``), so it can be passed as ``scoring=`` to
    ``GridSearchCV``, ``cross_validate``, ... .  It drops the samples whose label marks them
    unlabeled (``unlabeled_label``, default -1, or a missing value: None, NaN, ``pd.NA``) and
    applies ``sklearn.metrics.make_scorer(score_func, ...)`` to the rest, which makes it safe
    with any splitter, and for training-set scores (``return_train_score=True``).

    Parameters
    ----------
    score_func : callable, default=accuracy_score
        Metric ``score_func(y_true, y_pred, **kwargs)``.
    unlabeled_label : object, default=-1
        The label that marks an unlabeled sample (missing values -- ``None``, NaN,
        ``pd.NA`` -- always do).  ``None``: only missing values, so that -1 can be a real
        class.
    response_method : str or list of str, default="predict"
        Estimator method whose output is passed to ``score_func`` (see ``make_scorer``).
    greater_is_better : bool, default=True
        False negates the score, as in ``make_scorer``.
    **kwargs
        Extra keyword arguments of ``score_func``.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y, sample_weight=None)``; raises ValueError when ``y`` is
        None or has no labeled sample.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.metrics import f1_score
    >>> from structreg import LapRLSC
    >>> from structreg.model_selection import make_labeled_scorer
    >>> X = np.array([[0.0], [0.1], [1.0], [1.1], [0.5]])
    >>> y = np.array([0, 0, 1, 1, -1])
    >>> clf = LapRLSC(gamma_I=0.0, fit_intercept=True).fit(X, y)
    >>> make_labeled_scorer(f1_score)(clf, X, y)
    1.0
    """
    scorer = make_scorer(
        score_func,
        response_method=response_method,
        greater_is_better=greater_is_better,
        **kwargs,
    )
    return _LabeledScorer(scorer, unlabeled_label)


labeled_accuracy_scorer = make_labeled_scorer()
"""Accuracy on the labeled samples only (-1 and missing entries of ``y`` are ignored)."""


def semi_supervised_grid_search(
    estimator: Any,
    param_grid: Mapping[str, Sequence] | Sequence[Mapping[str, Sequence]],
    *,
    n_splits: int = 5,
    stratify: bool = True,
    random_state: int | np.random.RandomState | None = None,
    n_jobs: int | None = None,
    unlabeled_label: Any = UNLABELED,
    **kwargs: Any,
) -> GridSearchCV:
    """``GridSearchCV`` with :class:`SemiSupervisedKFold` and a labeled-only scorer.

    Every candidate is trained on the labeled training folds plus all unlabeled samples and
    scored on held-out labeled samples only; the best candidate is refit on all of ``(X, y)``
    (labeled and unlabeled).

    Parameters
    ----------
    estimator : estimator
        A semi-supervised classifier such as :class:`structreg.LapRLSC`.
    param_grid : dict or list of dicts
        As in ``GridSearchCV``.
    n_splits : int, default=5
        Folds of the labeled samples.
    stratify : bool, default=True
        Stratify the folds by class (see :class:`SemiSupervisedKFold`).
    random_state : int, RandomState instance or None, default=None
        Seeds the (shuffled) folds.
    n_jobs : int or None, default=None
        As in ``GridSearchCV``.
    unlabeled_label : object, default=-1
        Marker of unlabeled samples for the splitter and the default scorer.
    **kwargs
        Other ``GridSearchCV`` arguments (``scoring``, ``refit``, ``verbose``,
        ``return_train_score``, ...).  ``scoring`` defaults to
        ``make_labeled_scorer(unlabeled_label=unlabeled_label)`` (accuracy) and ``refit`` to
        True; ``cv`` cannot be given (use ``GridSearchCV`` directly for that).

    Returns
    -------
    search : GridSearchCV
        Unfitted; call ``search.fit(X, y)``.

    Examples
    --------
    >>> from structreg import LapRLSC
    >>> from structreg.model_selection import semi_supervised_grid_search
    >>> search = semi_supervised_grid_search(LapRLSC(), {"gamma_I": [0.0, 1.0]}, n_splits=3)
    >>> search.cv.get_n_splits(), search.refit
    (3, True)
    """
    if "cv" in kwargs:
        raise TypeError(
            "semi_supervised_grid_search sets cv itself; use GridSearchCV(..., cv=...) to "
            "choose another splitter"
        )
    kwargs.setdefault("scoring", make_labeled_scorer(unlabeled_label=unlabeled_label))
    kwargs.setdefault("refit", True)
    cv = SemiSupervisedKFold(
        n_splits,
        stratify=stratify,
        random_state=random_state,
        unlabeled_label=unlabeled_label,
    )
    return GridSearchCV(estimator, param_grid, cv=cv, n_jobs=n_jobs, **kwargs)
