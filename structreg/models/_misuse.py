"""Warnings against the classic mistake of semi-supervised model selection.

``GridSearchCV(model, grid, cv=3).fit(X, y)`` with ``y == -1`` marking unlabeled samples runs
scikit-learn's ``StratifiedKFold``, which takes -1 for a class: a third of the unlabeled
samples are held out of every training fold, and a scikit-learn scorer scores them as if -1
were a label.  Nothing fails; the search just picks on wrong numbers.  The checks here see it
from the labels a fold receives:

- at ``fit``, inside scikit-learn's cross-validation (``_fit_and_score`` /
  ``_fit_and_predict`` up the call stack), when the split's test part holds marked samples
  (:func:`warn_if_fold_tests_unlabeled`);
- at ``score`` and in structreg's labeled scorers, when the labels to score hold marks
  (:func:`warn_if_scoring_unlabeled`): always for ``score`` outside a training-fold score,
  for a labeled scorer only on a test fold (dropping marks elsewhere is its job);
- in structreg's own searches, when a user's splitter puts marked samples in a test fold
  (:func:`warn_if_folds_test_unlabeled`).

Each warning has one text, so Python's default filter shows it once per place.  The normal
paths (``SemiSupervisedKFold``, the labeled scorers on training folds, the CV estimators)
never see a marked test sample and stay silent.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Iterable

import numpy as np

from .._compat import safe_indexing
from ..exceptions import UnlabeledScoringWarning

Mask = Callable[[np.ndarray], np.ndarray]

FIX = (
    "Use structreg.model_selection.SemiSupervisedKFold as the splitter (every unlabeled "
    "sample in every training fold, test folds of labeled samples only) with "
    "labeled_accuracy_scorer, or semi_supervised_grid_search, or a cross-validated "
    "estimator (LapRLSCCV, DRLSCCV, ...)."
)

FOLD_MESSAGE = (
    "{name} is fitted on a cross-validation split whose test part holds samples marked "
    "unlabeled (-1 or a missing label): the splitter took the mark for a class, so these "
    "samples are held out of training and a scikit-learn scorer scores them as if the mark "
    "were a label. " + FIX
)

SCORE_MESSAGE = (
    "{name}.score was given samples marked unlabeled (-1 or a missing label) and scored "
    "only the labeled ones. If these are the test part of a cross-validation split, the "
    "splitter took the mark for a class and held them out of training. " + FIX
)

SCORER_MESSAGE = (
    "A labeled scorer was given a test fold that holds samples marked unlabeled: the "
    "splitter took the mark for a class and held them out of training. " + FIX
)

_CV_FUNCTIONS = ("_fit_and_score", "_fit_and_predict")


def _cv_frame_locals() -> dict | None:
    """The local variables of scikit-learn's cross-validation step that called us (the
    split's ``y``, ``train``, ``test``, and ``y_train`` / ``y_test`` once made), or None
    outside one."""
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_name in _CV_FUNCTIONS and frame.f_globals.get("__name__", "").startswith(
            "sklearn.model_selection"
        ):
            return frame.f_locals
        frame = frame.f_back
    return None


def warn_if_fold_tests_unlabeled(name: str, is_marked: Mask) -> None:
    """At ``fit``: warn when this fit is a step of scikit-learn's cross-validation whose
    test part holds samples that ``is_marked`` (the model's unlabeled rule) flags."""
    local = _cv_frame_locals()
    if local is None or local.get("y") is None or local.get("test") is None:
        return
    y_test = np.asarray(safe_indexing(local["y"], local["test"]))
    if y_test.ndim == 1 and is_marked(y_test).any():
        warnings.warn(FOLD_MESSAGE.format(name=name), UnlabeledScoringWarning, stacklevel=4)


def warn_if_scoring_unlabeled(y, *, name: str | None = None) -> None:
    """At ``score`` (``name``: the model's) or in a labeled scorer (``name`` None), given
    labels ``y`` that hold marked samples: warn, except when ``y`` is the training part of a
    cross-validation split (training scores drop the marks by design) and, for a scorer,
    except outside a test part."""
    local = _cv_frame_locals()
    role = None
    if local is not None:
        if y is local.get("y_train"):
            role = "train"
        elif y is local.get("y_test"):
            role = "test"
    if role == "train" or (name is None and role != "test"):
        return
    message = SCORER_MESSAGE if name is None else SCORE_MESSAGE.format(name=name)
    warnings.warn(message, UnlabeledScoringWarning, stacklevel=3)


def warn_if_folds_test_unlabeled(
    name: str, splits: Iterable[tuple[np.ndarray, np.ndarray]], marked: np.ndarray
) -> None:
    """In a structreg search (``name``): warn when a split's test part holds samples of the
    mask ``marked``."""
    if any(marked[test].any() for _, test in splits):
        warnings.warn(FOLD_MESSAGE.format(name=name), UnlabeledScoringWarning, stacklevel=3)
