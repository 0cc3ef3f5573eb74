"""The solver a structural model's ``fit`` uses: its ``solver`` parameter, or what
``solver="auto"`` picks for the training data."""

from __future__ import annotations

import scipy.sparse as sp

from ._losses import loss_for

AUTO_DENSE_MAX = 5000
"""``solver="auto"`` factors the exact kernel up to this many training samples and uses the
Nystroem path beyond (where the n x n Gram matrix alone passes 200 MB and its factorisation
O(n^2 r) time); sparse input goes to ``"cg"``, a linear kernel with fewer features than
samples to ``"dense"`` (its primal system is only (d+1) x (d+1))."""


def resolve_solver(model, X) -> str:
    """The solver ``model`` fits ``X`` with: ``model.solver``, or what ``"auto"`` picks for
    this X (see :data:`AUTO_DENSE_MAX`; up to it, the model's ``_auto_exact_solver``).  A
    solver the model's loss does not accept, and an iterative or Nystroem solver with
    ``kernel="precomputed"``, are refused with a ``ValueError``."""
    solver = getattr(model, "solver", "dense")
    loss_for(model, solver)  # refuses a solver the loss does not accept
    if model.kernel == "precomputed":
        if solver in ("nystroem", "cg"):
            raise ValueError(
                f"{type(model).__name__} with kernel='precomputed' solves on the exact Gram "
                f"matrix: solver must be 'auto' or 'dense' ('primal' for the hinge loss), "
                f"got {solver!r}"
            )
        return model._auto_exact_solver if solver == "auto" else solver
    if solver != "auto":
        return solver
    if sp.issparse(X):
        return "cg"
    if model.kernel == "linear" and X.shape[1] < X.shape[0]:
        return model._auto_exact_solver
    return model._auto_exact_solver if X.shape[0] <= AUTO_DENSE_MAX else "nystroem"
