"""Warnings and errors of structreg, importable from every layer (as
:mod:`sklearn.exceptions`): a model, an experiment or a user's code catches them without
importing the solver or model that issues them."""

from __future__ import annotations

from ._numerics import NonFiniteError
from ._resources import InsufficientMemoryError

__all__ = [
    "DegenerateSolutionWarning",
    "GroupFallbackWarning",
    "InsufficientMemoryError",
    "NonConvexObjectiveWarning",
    "NonFiniteError",
    "UnlabeledScoringWarning",
]


class NonConvexObjectiveWarning(UserWarning):
    """The structure penalty makes the objective non-convex; a stationary point is returned."""


class DegenerateSolutionWarning(UserWarning):
    """A semi-supervised fit gave a degenerate answer: most unlabeled points in one class,
    weakly decided, although the labels are spread, or class scores nearly constant away
    from the labeled points.  The message names the reason and what to try."""


class GroupFallbackWarning(UserWarning):
    """A structure group of a grid (:func:`~structreg.models.fit_path` with
    ``errors="return"``, and the ``*CV`` estimators) failed as a whole -- its structure, a
    weight or the input is invalid for these data -- and its grid points are fitted one by
    one; the message names the group and the cause."""


class UnlabeledScoringWarning(UserWarning):
    """Samples marked unlabeled (-1, or a missing label) reached an evaluation: ``score``
    was given them, or a cross-validation split put them in a test fold -- a splitter that
    took the mark for a class, so that they are held out of training and, by scikit-learn's
    scorers, scored as if -1 were a label.

    The fix, which the message gives:
    :class:`~structreg.model_selection.SemiSupervisedKFold` (every unlabeled sample in every
    training fold, test folds of labeled samples only) with
    :data:`~structreg.model_selection.labeled_accuracy_scorer`, or
    :func:`~structreg.model_selection.semi_supervised_grid_search`, or a cross-validated
    estimator such as :class:`~structreg.LapRLSCCV`."""
