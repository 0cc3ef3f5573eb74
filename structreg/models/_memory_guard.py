"""The memory guard of the dense paths: a structural fit that would form an n x n matrix
larger than the machine's available memory is refused before anything is allocated, with
advice naming the model's solvers that form nothing n x n."""

from __future__ import annotations

import numpy as np

from .. import _resources
from ..kernels import KernelExpansion, KernelFeatureMap, LandmarkFeatureMap
from ._losses import loss_for


def dense_matrices(model, X, labeled: np.ndarray) -> list[tuple[int, int, str]]:
    """The square float64 matrices ``model``'s fit forms whole with the feature map and loss
    just made (``feature_map_``, ``loss_``), as ``(rows, arrays held at once, what)``; none
    for the Nystroem centres, the matrix-free kernel CG and the linear primal path.

    The exact factor (``KernelFeatureMap``: solvers ``"dense"``, ``"primal"``, and ``"cg"``
    of a model without ``_exact_kernel_cg``) and the bordered loss on a kernel expansion
    (LS-SVM) form the Gram matrix of the n training points and factor it
    (:data:`~structreg._resources.DENSE_GRAM_ARRAYS` arrays, one fewer when
    ``kernel="precomputed"`` gives it); the hinge loss on an unfactored kernel
    (``TrainingGram``) that of the l labeled points; and libsvm (``loss="hinge"``, solver
    ``"dense"``) trains on the deformed Gram matrix of the labeled points, whatever the
    feature map.  A map that wraps another (SSDR's centring) is read through its ``base``."""
    n, n_labeled = X.shape[0], int(np.sum(labeled))
    arrays = _resources.DENSE_GRAM_ARRAYS
    given = arrays - 1 if model.kernel == "precomputed" else arrays
    fm = model.feature_map_
    fm = getattr(fm, "base", fm)
    exact = isinstance(fm, KernelFeatureMap) and not isinstance(fm, LandmarkFeatureMap)
    out = []
    if exact and hasattr(fm, "labeled_gram"):  # TrainingGram
        out.append((n_labeled, arrays, "kernel matrix of its labeled samples"))
    elif exact and (not isinstance(fm, KernelExpansion) or model.loss_.name == "bordered_square"):
        out.append((n, given, "kernel matrix of its training samples"))
    if model.loss_.name == "hinge":
        out.append((n_labeled, 1, "deformed kernel matrix of its labeled samples (libsvm)"))
    return out


def check_fit_memory(model, X, labeled: np.ndarray) -> None:
    """Refuse, before anything n x n is formed, a dense fit of ``model`` that needs more
    memory at once than the machine has available
    (:func:`structreg._resources.check_dense_memory`: an
    :class:`~structreg._resources.InsufficientMemoryError`, a ``MemoryError``, naming the
    size in GiB and the scalable solvers of this model).  The matrices of
    :func:`dense_matrices` are formed one after the other: the largest counts."""
    matrices = dense_matrices(model, X, labeled)
    if not matrices:
        return
    rows, arrays, what = max(matrices, key=lambda m: _resources.dense_gram_bytes(m[0], arrays=m[1]))
    solver, setting = getattr(model, "solver", None), ""
    if solver is not None:
        setting = f" with solver={solver!r}"
        if solver != model.solver_:
            setting += f" (which chose {model.solver_!r})"
    _resources.check_dense_memory(
        _resources.dense_gram_bytes(rows, arrays=arrays),
        f"{type(model).__name__}{setting} forms the {rows:,} x {rows:,} {what}: this",
        lambda: scalable_remedy(model, X),
    )


def scalable_remedy(model, X) -> str:
    """The solvers of ``model`` that form nothing n x n, as advice (or that there are none):
    ``"nystroem"``; ``"cg"`` (exact, matrix-free) where the loss takes it and the model runs
    it on the kernel expansion; ``"primal"`` for the linear kernel with fewer features than
    samples (the squared hinge on the inputs)."""
    name = type(model).__name__
    options = []
    if "solver" in model.get_params(deep=False):
        linear_primal = model.kernel == "linear" and X.shape[1] < X.shape[0]
        for solver, what, usable in (
            ("nystroem", "n_components centres, O(n m) memory", True),
            ("cg", "exact and matrix-free", model._exact_kernel_cg),
            ("primal", "the squared hinge on the inputs", linear_primal),
        ):
            try:
                loss_for(model, solver)
            except ValueError:
                continue
            if usable:
                options.append(f"solver={solver!r} ({what})")
    if not options:
        return f"{name} has no solver that avoids it: fit it on fewer samples"
    if model.kernel == "precomputed":
        return (
            "a precomputed kernel is solved on its own n x n matrix: pass the inputs with "
            f"a named kernel and use {' or '.join(options)}"
        )
    return f"use {' or '.join(options)}"
