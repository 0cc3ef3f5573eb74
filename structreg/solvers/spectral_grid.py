"""The semi-supervised two-parameter grid ``(ridge, t)`` from one eigendecomposition.

When the penalty weights of a grid are multiples ``t w`` of one direction and the loss covers
few samples (l rows with ``c_i > 0``), ``P = Q diag(mu) Q^T`` of the penalty block once makes
``ridge I + t P`` diagonal in Q for every setting; the loss Gram is the rank-l product
``U U^T`` (``U = Z^T C^(1/2)``) added by the Woodbury identity, and the bias eliminated by its
Schur complement, all in O(q l^2) per setting (``factorization="spectral-path"``).  This is
LapRLSC's case: few labels, one graph.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve, eigh

from .normal_equations import NormalEquations


def spectral_grid(equations: NormalEquations, settings: list, out: list) -> None:
    """Fill ``out`` for the settings ``(ridge as solved, weights)`` the one-eigendecomposition
    grid can serve; leave the others None (a setting whose diagonal is not safely positive is
    left to the direct solve, and so is every setting when the weights are not multiples of
    one direction or the loss rows are not few, ``equations.roots`` None).

    With ``S = ridge I + t P_pp + U U^T`` (p x p block) written in the eigenbasis Q of
    ``P_pp`` as ``D + U~ U~^T`` (D diagonal), the right-hand side ``r = U s`` and the loss
    part of the bias column ``U u0`` lie in the range of ``U``, so the push-through
    identity ``S^{-1} U~ = D^{-1} U~ K^{-1}`` with the SPD ``K = I + U~^T D^{-1} U~``
    (l x l) gives them without cancellation; only the penalty's own bias column ``e``
    (zero for Laplacians) needs the general Woodbury formula."""
    if equations.roots is None or not equations.parts:
        return
    U, u0, s_root = equations.roots  # C^(1/2) Z (l, p), C^(1/2) 1, C^(1/2) Y
    p = equations.n_features
    q = p + int(equations.fit_intercept)
    l_active = U.shape[0]
    direction = next((np.asarray(w) for _, w in settings if any(w)), None)
    if direction is None:
        return
    scale = [float(w @ direction) / float(direction @ direction) for _, w in settings]
    if any(
        not np.allclose(w, t * direction, rtol=1e-12, atol=0)
        for (_, w), t in zip(settings, scale, strict=True)
    ):
        return
    P = equations.penalty(direction)
    mu, Q = eigh(0.5 * (P[:p, :p] + P[:p, :p].T), check_finite=False)
    Ut = Q.T @ U.T  # (p, l)
    pb, p22 = (Q.T @ P[:p, p], P[p, p]) if equations.fit_intercept else (None, 0.0)
    eps = np.finfo(float).eps
    top = float(np.abs(mu).max(initial=0.0))
    gram = equations.gram
    loss_top = float(np.abs(np.diag(gram)).max(initial=0.0))
    eye = np.eye(l_active)
    for i, ((ridge, _), t) in enumerate(zip(settings, scale, strict=True)):
        d = ridge + t * mu
        if not d.min(initial=np.inf) > q * eps * max(top * abs(t) + ridge, loss_top, 1e-300):
            continue  # not safely positive: solved directly
        B = Ut / d[:, None]  # D^{-1} U~
        K = cho_factor(eye + Ut.T @ B, check_finite=False)
        ks = cho_solve(K, s_root, check_finite=False)
        theta = B @ ks  # S^{-1} r
        if equations.fit_intercept:
            ku = cho_solve(K, u0, check_finite=False)
            e = t * pb
            Se = e / d - B @ cho_solve(K, Ut.T @ (e / d), check_finite=False)
            y_h = B @ ku + Se  # S^{-1} (U~ u0 + e)
            schur = u0 @ ku + t * p22 - 2.0 * e @ (B @ ku) - e @ Se
            if not schur > q * eps * max(abs(gram[p, p] + t * p22), 1e-300):
                continue
            b = (u0 @ ks - e @ theta) / schur
            x = np.vstack([Q @ (theta - np.outer(y_h, b)), b[None, :]])
        else:
            x = Q @ theta
        out[i] = equations.solution(x, "spectral-path", True, False)
