"""Many ridges at fixed penalty weights from one symmetric eigendecomposition.

With ``B = G + sum_k w_k P_k`` the system of a ridge is ``H = B + ridge D``.  The unpenalised
bias is eliminated first by its Schur complement,

    S = B_11 - b_12 b_12^T / b_22,   r~ = r_1 - b_12 r_2 / b_22,

exact when ``b_22 = 1^T (C + sum_k w_k M_k) 1`` is positive (always with loss weights on at
least one sample and penalties that annihilate constants); then ``S = Q diag(lambda) Q^T``
once gives every ridge's ``theta = Q diag(1 / (lambda + ridge)) Q^T r~`` (the spectral
shortcut of scikit-learn's ``RidgeCV``) and ``b = (r_2 - b_12^T theta) / b_22``.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import eigh

from .normal_equations import NormalEquations
from .solution import LeastSquaresSolution


def eigh_ridge_path(
    equations: NormalEquations, ridges: list[float], weights: list[float]
) -> list[LeastSquaresSolution] | None:
    """One solution per ridge (as solved, divided by ``s^2``), ``factorization="eigh-path"``.

    Eigenvalues of the ridge-shifted system within ``q eps max|lambda|`` of zero are treated
    as zero (minimum-norm solution, as in a single fit).  None when the bias cannot be
    eliminated (``b_22`` not safely positive): every ridge is then solved directly.
    """
    B = equations.penalised(weights)
    B = 0.5 * (B + B.T)
    p = equations.n_features
    r = equations.rhs
    if equations.fit_intercept:
        b22 = B[p, p]
        scale = max(float(np.abs(B).max(initial=0.0)), 1e-300)
        if not b22 > (p + 1) * np.finfo(float).eps * scale:  # no Schur elimination
            return None
        b12 = B[:p, p]
        S = B[:p, :p] - np.outer(b12, b12) / b22
        rt = r[:p] - np.outer(b12, r[p]) / b22
    else:
        S, rt = B, r
    lam, U = eigh(0.5 * (S + S.T), check_finite=False)
    Urt = U.T @ rt
    shifted = lam[:, None] + np.asarray(ridges)[None, :]  # (p, n_ridges)
    top = np.abs(shifted).max(axis=0, initial=0.0)
    tol = (p + int(equations.fit_intercept)) * np.finfo(float).eps * np.maximum(top, 1e-300)
    keep = np.abs(shifted) > tol
    inverse = np.divide(1.0, shifted, out=np.zeros_like(shifted), where=keep)
    # every ridge's theta in one product: U (Urt / shifted), ridges side by side
    thetas = U @ (Urt[:, None, :] * inverse[:, :, None]).reshape(len(lam), -1)
    thetas = thetas.reshape(p, len(ridges), -1)
    out = []
    for j in range(len(ridges)):
        theta = np.ascontiguousarray(thetas[:, j, :])
        convex = bool(shifted[:, j].min(initial=np.inf) >= -tol[j])
        singular = bool(not keep[:, j].all())
        if equations.fit_intercept:
            b = (r[p] - b12 @ theta) / b22
            x = np.vstack([theta, b[None, :]])
        else:
            x = theta
        out.append(equations.solution(x, "eigh-path", convex, singular))
    return out
