"""Docstring fragments shared by the estimators: numpydoc parameter entries, indented for a
class docstring (four spaces before a name, eight before its description).

The square-loss presets take the same solver parameters (``solver``, ``n_components``,
``centers``, ``tol``, ``max_iter``, ``random_state``); their entries are written once here and
composed into each docstring, a preset with something of its own to say about ``solver``
giving its own first entry.
"""

from __future__ import annotations

SQUARE_SOLVER_ENTRY = """    solver : {"auto", "dense", "nystroem", "cg"}, default="auto"
        ``"dense"``: the exact kernel factor ``K = V V^T`` and a direct solve (O(n^2) memory).
        ``"nystroem"``: ``n_components`` centres, an m x m system, O(n m^2 + nnz(M) m) time and
        O(n m) memory.  ``"cg"``: iterative and exact (K-preconditioned conjugate gradients on
        the kernel expansion; CG on the features for the linear kernel).  ``"auto"``: dense up
        to 5000 training samples, Nystroem beyond (``solver_`` says which was used).
"""
"""The ``solver`` entry of the square-loss presets."""

NYSTROEM_DOC = """    n_components : int, default=1000
        Number of Nystroem centres m (``solver="nystroem"``).
    centers : {"uniform", "k-means++"}, default="uniform"
        How the Nystroem centres are drawn from the training samples.
"""
"""The ``n_components`` and ``centers`` entries."""

RANDOM_STATE_DOC = """    random_state : int, RandomState instance or None, default=None
        Seed of the Nystroem centre selection.
"""
"""The ``random_state`` entry, for a preset whose only randomness is the Nystroem centres."""


def cg_doc(tol: str = "1e-6") -> str:
    """The ``tol`` and ``max_iter`` entries of ``solver="cg"``, ``tol`` defaulting to ``tol``."""
    return f"""    tol : float, default={tol}
        Relative residual at which ``solver="cg"`` stops.
    max_iter : int or None, default=None
        Iteration cap of ``solver="cg"`` (None: the solver's default).
"""


def square_solver_doc(
    solver: str = SQUARE_SOLVER_ENTRY, *, tol: str = "1e-6", random_state: bool = True
) -> str:
    """The solver parameters of a square-loss preset, in the order of their signatures:
    ``solver`` (the entry ``solver``), ``n_components``, ``centers``, ``tol`` (default
    ``tol``), ``max_iter`` and, when ``random_state``, ``random_state`` (a preset whose
    ``random_state`` also seeds something else documents its own)."""
    return solver + NYSTROEM_DOC + cg_doc(tol) + (RANDOM_STATE_DOC if random_state else "")


SQUARE_SOLVER_DOC = square_solver_doc()
"""The solver parameters of LapRLSC, RLSC, SparseRLSC, the SSDR models and the regressors."""
