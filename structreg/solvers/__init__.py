"""Solver layer: square-loss linear systems and hinge-loss SVMs on deformed kernels."""

from .bordered import BorderedSolution, solve_bordered
from .hinge import DeformedFeatures, PrecomputedSVM
from .mvee import minimum_volume_ellipsoid
from .square import (
    LeastSquaresSolution,
    NonConvexObjectiveWarning,
    penalty_products,
    solve_penalized_least_squares,
    solve_symmetric,
)

__all__ = [
    "BorderedSolution",
    "solve_bordered",
    "minimum_volume_ellipsoid",
    "DeformedFeatures",
    "LeastSquaresSolution",
    "NonConvexObjectiveWarning",
    "PrecomputedSVM",
    "penalty_products",
    "solve_penalized_least_squares",
    "solve_symmetric",
]
