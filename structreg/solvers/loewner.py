"""Single settings of a grid solved from the top of the Loewner order down.

With the penalties declared positive semi-definite, a setting ``a`` whose ridge and weights
on them are no larger (and whose weights on the others are equal) has ``H(a) <= H(b)``: once
Cholesky's factorisation of ``H(b)`` meets a non-positive pivot, ``H(a)`` is not positive
definite either, and its solve starts with Bunch-Kaufman.  DRLSC's ``eta``, weighting
``eta P_w - (1 - eta) P_b``, is such a line.
"""

from __future__ import annotations

from collections.abc import Sequence

from .direct import solve_setting
from .normal_equations import NormalEquations

Setting = tuple[float, list[float]]
"""``(ridge as solved, penalty weights)``."""


def below(a: Setting, b: Setting, psd: Sequence[bool]) -> bool:
    """Whether ``H(a) <= H(b)`` in the Loewner order, for settings solved on the same
    system (both with or both without a ridge: without one, a rank-deficient design's
    system is restricted to its complement); ``psd``: which penalties are PSD."""
    (ra, wa), (rb, wb) = a, b
    if ra > rb or (ra == 0) != (rb == 0):
        return False
    return all(x <= y if is_psd else x == y for x, y, is_psd in zip(wa, wb, psd, strict=True))


def solve_monotone(
    equations: NormalEquations,
    settings: list[Setting],
    todo: list[int],
    out: list,
    psd: Sequence[bool],
) -> None:
    """Solve ``settings[i]`` into ``out[i]`` for i in ``todo``, from the top of the
    Loewner order down (the height of a setting: its ridge plus its weights on the PSD
    penalties), without the Cholesky attempts that an earlier failure rules out."""

    def height(i: int) -> float:
        ridge, w = settings[i]
        return ridge + sum(v for v, is_psd in zip(w, psd, strict=True) if is_psd)

    not_pd: list[Setting] = []  # settings whose H Cholesky refused
    for i in sorted(todo, key=height, reverse=True):
        ridge, w = settings[i]
        known = any(below(settings[i], top, psd) for top in not_pd)
        x, how, convex, singular, refused = solve_setting(equations, ridge, w, cholesky=not known)
        if refused:
            not_pd.append(settings[i])
        out[i] = equations.solution(x, how, convex, singular)
