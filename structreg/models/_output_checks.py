"""Refusing fitted coefficients and outputs that are not finite, with a message that names
the parameters setting the problem's scale: one collaborator of
:class:`~structreg.models.StructuralEstimator`'s fit template."""

from __future__ import annotations

import numpy as np

from .._numerics import check_finite


def scale_cause(model) -> str:
    """What a non-finite solution or output of ``model`` comes from: the parameters that set
    the scale of the problem, for :func:`~structreg._numerics.check_finite`'s message."""
    parts = [f"kernel={model.kernel!r}"]
    gamma = getattr(getattr(model, "feature_map_", None), "gamma_", None)
    if gamma is not None:
        parts.append(f"gamma={gamma:.3g}")
    names = ("gamma_A", "degree", "coef0") if model.kernel == "poly" else ("gamma_A",)
    parts += [f"{n}={getattr(model, n)!r}" for n in names if n in model._parameter_constraints]
    return (
        f"{', '.join(parts)} on inputs of this scale overflow float64 (rescale X, or lower "
        "the kernel's gamma / degree)"
    )


def check_finite_solution(model, *arrays) -> None:
    """Refuse fitted coefficients of ``model`` that are not finite."""
    what = f"{type(model).__name__}'s fitted coefficients"
    check_finite(list(arrays), what, lambda: scale_cause(model))


def checked_outputs(model, F: np.ndarray) -> np.ndarray:
    """``F``, ``model``'s outputs at new inputs, refused when not finite."""
    check_finite(F, f"{type(model).__name__}'s decision values", lambda: scale_cause(model))
    return F
