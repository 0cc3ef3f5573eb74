"""Warnings and errors of structreg, importable from every layer (as
:mod:`sklearn.exceptions`): a model, an experiment or a user's code catches them without
importing the solver or model that issues them."""

from __future__ import annotations

from ._numerics import NonFiniteError

__all__ = ["NonConvexObjectiveWarning", "NonFiniteError"]


class NonConvexObjectiveWarning(UserWarning):
    """The structure penalty makes the objective non-convex; a stationary point is returned."""
