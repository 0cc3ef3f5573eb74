"""Solver layer: square-loss linear systems (direct, CG, exact-kernel PCG), hinge-loss SVMs on
deformed kernels and the primal squared-hinge Newton solver.  Every iterative path runs on the
one CG routine, :func:`~structreg.solvers.cg.conjugate_gradient`; every direct solve of a
symmetric system on the one factor module, :mod:`structreg.solvers.factor`."""

from ..exceptions import NonConvexObjectiveWarning
from .bordered import BorderedPath, BorderedSolution, solve_bordered
from .cg import CGResult, conjugate_gradient
from .design import design_penalty_diagonal as design_penalty_diagonal
from .design import design_penalty_gram as design_penalty_gram
from .design import penalty_products
from .factor import ldl_solve as ldl_solve
from .factor import solve_symmetric
from .hinge import DeformedFeatures, DeformedKernel, PrecomputedSVM
from .kernel_cg import GramOperator, KernelLeastSquaresSolution, solve_kernel_least_squares
from .mvee import minimum_volume_ellipsoid
from .path import SquareLossPath
from .primal_hinge import SquaredHingeSolution, solve_squared_hinge
from .solution import LeastSquaresSolution
from .solution import leave_one_out_outputs as leave_one_out_outputs
from .solution import warn_nonconvex as warn_nonconvex
from .square import solve_penalized_least_squares

# the names imported "as" themselves (design_penalty_gram, design_penalty_diagonal, ldl_solve,
# leave_one_out_outputs, warn_nonconvex) are importable from here for the layers above, but
# not part of the documented API: not in __all__
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
