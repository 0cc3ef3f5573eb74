"""Warnings and errors of structreg, importable from every layer (as
:mod:`sklearn.exceptions`): a model, an experiment or a user's code catches them without
importing the solver or model that issues them."""

from __future__ import annotations

from ._numerics import NonFiniteError
from ._resources import InsufficientMemoryError

__all__ = [
    "DegenerateSolutionWarning",
    "InsufficientMemoryError",
    "NonConvexObjectiveWarning",
    "NonFiniteError",
]


class NonConvexObjectiveWarning(UserWarning):
    """The structure penalty makes the objective non-convex; a stationary point is returned."""


class DegenerateSolutionWarning(UserWarning):
    """A semi-supervised fit gave a degenerate answer: nearly every unlabeled point in one
    class although the labels are spread, or class scores nearly constant away from the
    labeled points.  The message names the reason and what to try."""
