"""A structural model's pickle carries the kernel factor its outputs need: the same outputs
after a round trip.

A kernel feature map leaves its Cholesky factor out of its pickle and rebuilds it from
``basis_`` on demand (an unpivoted factorisation of k(basis_, basis_): the same matrix up to
rounding, not to the bit).  A model that scores with a kernel expansion (``dual_coef_``)
never needs it; one whose outputs map new points through ``feature_map_.transform`` (libsvm
on the deformed features: LapSVM with ``solver="dense"``; a wrapped kernel map, as
SSDRWang's centred one) carries the factor it was fitted with, so that a pickled model
answers bit for bit the same.  :class:`~structreg.models.StructuralEstimator`'s
``__getstate__`` and ``__setstate__`` call the two functions here.
"""

from __future__ import annotations

from ..kernels import KernelFeatureMap

FEATURE_FACTOR = "_feature_map_factor"
"""The key of the factor in a model's pickled state."""


def factored_map(feature_map) -> KernelFeatureMap | None:
    """The kernel map whose factor ``feature_map.transform`` uses: the map itself, or the
    ``base`` of a wrapper around one; None for other maps."""
    if isinstance(feature_map, KernelFeatureMap):
        return feature_map
    base = getattr(feature_map, "base", None)
    return base if isinstance(base, KernelFeatureMap) else None


def with_factor(state: dict) -> dict:
    """A model's pickled ``state`` with its feature map's factor added under
    :data:`FEATURE_FACTOR`, where its outputs need it (no ``dual_coef_``, a factored kernel
    map); else ``state`` as given."""
    fm = factored_map(state.get("feature_map_"))
    if "dual_coef_" in state or fm is None:
        return state
    factor = fm.cholesky_factor_
    if factor is None:
        return state
    return {**state, FEATURE_FACTOR: factor}


def split_factor(state) -> tuple[dict, object]:
    """``(state, factor)``: a pickled state without the factor :func:`with_factor` added, and
    that factor (None when it added none)."""
    state = dict(state)
    return state, state.pop(FEATURE_FACTOR, None)


def restore_factor(model, factor) -> None:
    """Give the unpickled ``model``'s feature map back the ``factor`` it was fitted with
    (nothing when ``factor`` is None)."""
    if factor is not None:
        factored_map(model.feature_map_).cholesky_factor_ = factor
