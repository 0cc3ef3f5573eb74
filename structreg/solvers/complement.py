"""The normal equations of a rank-deficient design, restricted to the complement of its null
space.

When the design ``A = [Z, 1]`` has a numerical null space (the bias column in the span of a
full-rank kernel factor, a redundant feature), every part ``A^T X A`` of the normal equations
vanishes on it: without a ridge, ``H`` is singular whatever the weights.  Its minimum-norm
solution is that of the system restricted to the complement,

    x = V (V^T H V)^{-1} V^T r,   V = U_+ Lambda_+^{-1/2}   (A^T A = U Lambda U^T),

with ``A V`` orthonormal.  The restricted parts are built from ``A V`` itself, so that
``(AV)^T (C + sum_k w_k M_k) (AV)`` is conditioned like the loss and the penalties on the
design's range, not squared by the spread of the design's singular values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from scipy.linalg import eigh

from .design import design_penalty_gram, weighted_gram


class Complement(NamedTuple):
    """The normal equations restricted to the complement of the design's null space."""

    basis: np.ndarray
    """``V`` (q, r): ``A V`` has orthonormal columns."""
    gram: np.ndarray
    """``(AV)^T C (AV)`` (r, r)."""
    parts: list[np.ndarray]
    """``(AV)^T M_k (AV)`` (r, r) per penalty."""
    rhs: np.ndarray
    """``(AV)^T C Y`` (r, n_outputs)."""
    root: np.ndarray
    """``Lambda_+^(1/2)`` (r,): ``U_+ = V diag(root)``."""


def complement_basis(
    Z: np.ndarray, gram: np.ndarray, loss_rows: tuple, fit_intercept: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(V, A V, Lambda_+^(1/2))`` with ``V = U_+ Lambda_+^{-1/2}`` from
    ``A^T A = U Lambda U^T``, ``U_+`` the eigenvectors whose eigenvalues exceed
    ``q eps max`` (the threshold of the eigendecomposition solve); None when the design has
    full column rank.

    ``gram`` is the loss Gram ``A^T C A``, which gives ``A^T A`` when every sample has the same
    loss weight; ``loss_rows`` is ``(active rows, their loss weights, C Y on them)``.

    ``A V`` is computed from A, and each column divided by the eigenvalue's square root
    (not by its own computed norm): a direction that only rounding put above the threshold
    (e.g. a redundant linear feature) then gets a column near zero, which the restricted
    system's condition estimate rejects, instead of a unit column of rounding noise."""
    p = Z.shape[1]
    q = p + int(fit_intercept)
    active, ca, _ = loss_rows
    if 0 < len(active) == Z.shape[0] and np.all(ca == ca[0]):  # A^T A: the loss Gram / c
        T = gram / ca[0]
    else:
        T = weighted_gram(Z, np.ones(Z.shape[0]), fit_intercept)
    lam, U = eigh(T, check_finite=False)
    keep = lam > q * np.finfo(float).eps * max(float(lam[-1]), 1e-300)
    if keep.all():
        return None
    root = np.sqrt(lam[keep])
    V = U[:, keep] / root
    AV = Z @ V[:p]
    if fit_intercept:
        AV += V[p]
    return V, AV, root


def restricted_loss(AV: np.ndarray, loss_rows: tuple) -> tuple[np.ndarray, np.ndarray]:
    """``((AV)^T C (AV), (AV)^T C Y)``: the loss parts on the complement, from the rows with
    loss."""
    active, ca, CY = loss_rows
    AVa = AV[active]
    return weighted_gram(AVa, ca, False), AVa.T @ CY


def restricted_penalties(AV: np.ndarray, penalties: Sequence) -> list[np.ndarray]:
    """``(AV)^T M_k (AV)`` per penalty."""
    return [design_penalty_gram(AV, M, fit_intercept=False) for M in penalties]
