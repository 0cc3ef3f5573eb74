"""The Nystroem features of a single fit formed a block of rows at a time, and the warning
when the Nystroem centres miss much of the kernel: one collaborator of
:class:`~structreg.models.StructuralEstimator`'s fit template."""

from __future__ import annotations

import warnings

from .. import _resources
from ..kernels import LandmarkFeatureMap, NystroemApproximationWarning
from ..solvers.design import RowDesign

NYSTROEM_WARN_UNEXPLAINED = 0.4
"""``solver="nystroem"`` warns (:class:`~structreg.kernels.NystroemApproximationWarning`) when
the centres miss more than this share of the kernel's trace over the training samples
(``solver_info_["unexplained_trace"]``).  Measured with LapRLSC (``benchmarks/
laprlsc_solvers.py``, unlabeled accuracy of Nystroem minus dense): two moons 0.0000 (gap 0),
moons with 18 noise dimensions and a wide kernel 0.003-0.007 (gaps within 0.4 points), USPS
0.22 with m = 2000 (gaps -1.3 to +1.6 points), and the same noisy moons with a narrow kernel
0.49-0.88 (gaps up to 5.5 points)."""


def features_by_rows(model, X, memo: dict | None) -> bool:
    """Whether ``model``'s Nystroem features are formed a block of rows at a time rather
    than held (:class:`~structreg.solvers.design.RowDesign`): a single fit (no grid ``memo``)
    of the square loss without intercept, with a ridge and without a ``_prepare`` step, whose
    n x m features pass the largest kernel matrix kept whole
    (:func:`~structreg._resources.kernel_store_bytes`, 16 memory blocks).  It solves the same
    normal equations, formed in blocks."""
    return (
        memo is None
        and type(model.feature_map_) is LandmarkFeatureMap
        and model.loss_.name == "square"
        and model.solver_ != "cg"
        and not model.loss_.has_intercept(model)
        and model._ridge() > 0
        and not model._has_prepare_step()
        and 8 * X.shape[0] * len(model.feature_map_.landmarks) > _resources.kernel_store_bytes()
    )


def row_design(model, X) -> RowDesign:
    """The Nystroem features of X under ``model``'s feature map as a
    :class:`~structreg.solvers.design.RowDesign`: rows mapped when read, ``Z @ V`` as the
    kernel expansion ``k(X, C) R^{-1} V``, their kernel sections in the map's fused form
    (``fused=True``: the rbf exponent as one product; the passes over all n rows are most of
    such a fit)."""
    fmap = model.feature_map_
    X = fmap.fit_landmarks(X)
    return RowDesign(
        X.shape[0],
        fmap.n_components_,
        rows=lambda idx: fmap._map(X[idx], fused=True),
        product=lambda V: fmap.decision(X, fmap.dual_coef(V), fused=True),
    )


def warn_nystroem(model, unexplained: float, n_components: int) -> None:
    """Warn when the Nystroem centres miss much of the kernel (see
    :data:`NYSTROEM_WARN_UNEXPLAINED`)."""
    if unexplained > NYSTROEM_WARN_UNEXPLAINED:
        warnings.warn(
            f"{type(model).__name__}: the {n_components} Nystroem centres leave "
            f"{100 * unexplained:.0f}% of the kernel's trace over the training samples "
            "unexplained, so the fit may differ markedly from the exact-kernel solution; "
            "use more centres (n_components), a wider kernel, or solver='dense' / 'cg'",
            NystroemApproximationWarning,
            stacklevel=4,
        )
