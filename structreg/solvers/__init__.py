"""Solver layer: square-loss linear systems (direct, CG, exact-kernel PCG), hinge-loss SVMs on
deformed kernels and the primal squared-hinge Newton solver.  Every iterative path runs on the
one CG routine, :func:`~structreg.solvers.cg.conjugate_gradient`."""

from .bordered import BorderedPath, BorderedSolution, solve_bordered
from .cg import CGResult, conjugate_gradient
from .hinge import DeformedFeatures, DeformedKernel, PrecomputedSVM
from .kernel_cg import GramOperator, KernelLeastSquaresSolution, solve_kernel_least_squares
from .mvee import minimum_volume_ellipsoid
from .path import SquareLossPath
from .primal_hinge import SquaredHingeSolution, solve_squared_hinge
from .square import (
    LeastSquaresSolution,
    NonConvexObjectiveWarning,
    penalty_products,
    solve_penalized_least_squares,
    solve_symmetric,
)

__all__ = [
    "BorderedPath",
    "BorderedSolution",
    "solve_bordered",
    "CGResult",
    "conjugate_gradient",
    "minimum_volume_ellipsoid",
    "DeformedFeatures",
    "DeformedKernel",
    "GramOperator",
    "KernelLeastSquaresSolution",
    "SquaredHingeSolution",
    "solve_kernel_least_squares",
    "solve_squared_hinge",
    "LeastSquaresSolution",
    "NonConvexObjectiveWarning",
    "PrecomputedSVM",
    "penalty_products",
    "solve_penalized_least_squares",
    "solve_symmetric",
    "SquareLossPath",
]
