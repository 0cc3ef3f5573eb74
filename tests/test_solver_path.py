"""SquareLossPath: factor once, solve many -- against single solves and the objective itself."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize

from structreg.solvers import (
    NonConvexObjectiveWarning,
    SquareLossPath,
    solve_penalized_least_squares,
)
from structreg.solvers.loewner import below


def _problem(rng, n=30, p=4, k=2, labeled=18):
    Z = rng.normal(size=(n, p))
    Y = np.sign(rng.normal(size=(n, k)))
    c = np.zeros(n)
    c[:labeled] = 1.0 / labeled
    W = sp.random(n, n, density=0.2, random_state=1)
    W = W + W.T
    L = sp.diags(np.asarray(W.sum(axis=1)).ravel()) - W  # PSD graph Laplacian
    S = rng.normal(size=(n, 3))
    M2 = S @ S.T / n  # PSD low-rank
    return Z, Y, c, [L.tocsr(), M2]


def _objective(x, Z, Y, c, Ms, ws, ridge, fit_intercept):
    p = Z.shape[1]
    X = x.reshape(-1, Y.shape[1])
    theta = X[:p]
    F = Z @ theta + (X[p] if fit_intercept else 0.0)
    value = np.sum(c[:, None] * (F - Y) ** 2) + ridge * np.sum(theta**2)
    for w, M in zip(ws, Ms, strict=True):
        value += w * np.sum(F * (M @ F))
    return value


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_solve_minimises_the_stated_objective(rng, fit_intercept):
    Z, Y, c, Ms = _problem(rng)
    ws, ridge = [0.3, 2.0], 0.05
    sol = SquareLossPath(Z, Y, c, Ms, fit_intercept=fit_intercept).solve(ridge, ws)
    assert sol.convex and sol.factorization == "cholesky"
    x = np.vstack([sol.coef, sol.intercept[None]]) if fit_intercept else sol.coef
    direct = minimize(
        _objective,
        np.zeros(x.size),
        args=(Z, Y, c, Ms, ws, ridge, fit_intercept),
        method="BFGS",
        options={"gtol": 1e-10, "maxiter": 10_000},
    )
    np.testing.assert_allclose(x.ravel(), direct.x, atol=1e-5)
    assert _objective(x.ravel(), Z, Y, c, Ms, ws, ridge, fit_intercept) <= direct.fun + 1e-10


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_solve_equals_the_single_fit_with_the_combined_penalty(rng, fit_intercept):
    Z, Y, c, Ms = _problem(rng)
    ws, ridge = [0.7, 0.1], 0.2
    path = SquareLossPath(Z, Y, c, Ms, fit_intercept=fit_intercept)
    single = solve_penalized_least_squares(
        Z, Y, c, ws[0] * Ms[0] + ws[1] * Ms[1], ridge=ridge, fit_intercept=fit_intercept
    )
    sol = path.solve(ridge, ws)
    np.testing.assert_allclose(sol.coef, single.coef, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(sol.intercept, single.intercept, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_ridge_path_equals_one_solve_per_ridge(rng, fit_intercept):
    Z, Y, c, Ms = _problem(rng)
    path = SquareLossPath(Z, Y, c, Ms, fit_intercept=fit_intercept)
    ridges = np.logspace(-6, 2, 9)
    for ws in ([0.0, 0.0], [1.0, 0.5], [10.0, 0.0]):
        for ridge, sol in zip(ridges, path.ridge_path(ridges, ws, method="eigh"), strict=True):
            ref = path.solve(ridge, ws)
            np.testing.assert_allclose(sol.coef, ref.coef, rtol=1e-8, atol=1e-10)
            np.testing.assert_allclose(sol.intercept, ref.intercept, rtol=1e-8, atol=1e-10)
            assert sol.convex and not sol.singular and sol.factorization == "eigh-path"
    # "auto": a factorisation per ridge for a few ridges, one eigendecomposition for many
    assert {s.factorization for s in path.ridge_path(ridges, [1.0, 0.5])} == {"cholesky"}
    many = np.logspace(-6, 2, 30)
    assert {s.factorization for s in path.ridge_path(many, [1.0, 0.5])} == {"eigh-path"}
    with pytest.raises(ValueError, match="method must be"):
        path.ridge_path(ridges, method="qr")


def test_ridge_path_auto_factors_indefinite_systems_per_ridge(rng):
    Z, Y, c, (L, M2) = _problem(rng)
    n = len(c)
    centre = np.eye(n) - 1.0 / n
    M2c = centre @ M2 @ centre  # annihilates constants: the bias stays eliminable
    path = SquareLossPath(Z, Y, c, [L, M2c], fit_intercept=True)
    ws, ridges = [1.0, -50.0], [1e-3, 1e-2, 1e-1]
    with pytest.warns(NonConvexObjectiveWarning):
        sols = path.ridge_path(ridges, ws)
    assert [s.factorization for s in sols] == ["ldl", "ldl", "ldl"]  # Bunch-Kaufman each
    assert all(s.convex is False for s in sols)
    for ridge, s in zip(ridges, sols, strict=True):
        H = path.system(ridge, ws)
        x = np.vstack([s.coef, s.intercept[None]])
        np.testing.assert_allclose(H @ x, path.rhs_, atol=1e-8)


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_indefinite_penalty_gives_the_stationary_point_and_says_so(rng, fit_intercept):
    Z, Y, c, (L, M2) = _problem(rng)
    path = SquareLossPath(Z, Y, c, [L, M2], fit_intercept=fit_intercept)
    ws, ridge = [1.0, -50.0], 1e-3  # subtract a large PSD term: indefinite system
    with pytest.warns(NonConvexObjectiveWarning):
        sol = path.solve(ridge, ws)
    with pytest.warns(NonConvexObjectiveWarning):
        (along,) = path.ridge_path([ridge], ws)
    assert sol.convex is False and along.convex is False
    H = path.system(ridge, ws)
    for s in (sol, along):
        x = np.vstack([s.coef, s.intercept[None]]) if fit_intercept else s.coef
        np.testing.assert_allclose(H @ x, path.rhs_, atol=1e-8)  # gradient zero


def test_singular_system_gets_the_minimum_norm_solution(rng):
    Z0 = rng.normal(size=(12, 3))
    Z = np.hstack([Z0, Z0[:, :1]])  # a repeated column: singular without a ridge
    Y = rng.normal(size=(12, 1))
    c = np.full(12, 1 / 12)
    path = SquareLossPath(Z, Y, c)
    expected = np.linalg.pinv(Z) @ Y
    sol = path.solve(0.0)
    (along,) = path.ridge_path([0.0])
    for s in (sol, along):
        assert s.singular
        np.testing.assert_allclose(s.coef, expected, atol=1e-9)


def test_ridge_path_falls_back_when_the_bias_cannot_be_eliminated(rng):
    Z, Y, c, _ = _problem(rng)
    n = len(c)
    ones = np.ones((n, n)) / n**2
    path = SquareLossPath(Z, Y, c, [ones], fit_intercept=True)
    ws = [-1.0]  # 1^T (C - ones) 1 = 1 - 1 = 0: the bias row of H vanishes
    assert abs(path.system(0.1, ws)[-1, -1]) < 1e-12
    with pytest.warns(NonConvexObjectiveWarning):
        sols = path.ridge_path([0.1, 1.0], ws)
    assert [s.factorization for s in sols] == ["ldl", "ldl"]  # indefinite, nonsingular
    for ridge, s in zip([0.1, 1.0], sols, strict=True):
        ref = path.solve(ridge, ws, warn=False)
        np.testing.assert_allclose(s.coef, ref.coef)


def test_weights_must_match_the_penalties(rng):
    Z, Y, c, Ms = _problem(rng)
    path = SquareLossPath(Z, Y, c, Ms)
    with pytest.raises(ValueError, match="got 1 penalty weights for 2 penalties"):
        path.solve(1.0, [1.0])
    np.testing.assert_allclose(path.solve(1.0).coef, path.solve(1.0, [1.0, 1.0]).coef)


def test_bordered_path_equals_one_bordered_solve_per_reg(rng):
    from structreg.solvers import BorderedPath, solve_bordered

    V = rng.normal(size=(15, 6))
    Y = np.sign(rng.normal(size=(15, 2)))
    for Omega in (V @ V.T, V[:, :3] @ V[:, :3].T - V[:, 3:] @ V[:, 3:].T):  # PSD, indefinite
        path = BorderedPath(Omega, Y)
        for reg in (1e-3, 0.1, 10.0):
            sol, ref = path.solve(reg), solve_bordered(Omega, Y, reg)
            np.testing.assert_allclose(sol.dual_coef, ref.dual_coef, rtol=1e-8, atol=1e-9)
            np.testing.assert_allclose(sol.intercept, ref.intercept, rtol=1e-8, atol=1e-9)
            # the bordered equations hold: 1^T Gamma = 0, (Omega + reg I) Gamma + 1 b = Y
            np.testing.assert_allclose(sol.dual_coef.sum(axis=0), 0.0, atol=1e-8)
            lhs = (Omega + reg * np.eye(15)) @ sol.dual_coef + sol.intercept
            np.testing.assert_allclose(lhs, Y, atol=1e-7)
    assert BorderedPath(V @ V.T, Y).solve(0.1).factorization == "eigh-path+schur"


def test_cg_warm_start_from_a_neighbouring_grid_point(rng):
    Z, Y, c, Ms = _problem(rng, n=200, p=40, labeled=60)
    M = 0.5 * Ms[0]
    common = dict(fit_intercept=True, method="cg", tol=1e-10)
    near = solve_penalized_least_squares(Z, Y, c, M, ridge=0.011, **common)
    cold = solve_penalized_least_squares(Z, Y, c, M, ridge=0.01, **common)
    x0 = np.vstack([near.coef, near.intercept[None]])
    warm = solve_penalized_least_squares(Z, Y, c, M, ridge=0.01, x0=x0, **common)
    direct = solve_penalized_least_squares(Z, Y, c, M, ridge=0.01, fit_intercept=True)
    for sol in (cold, warm):
        np.testing.assert_allclose(sol.coef, direct.coef, rtol=1e-6, atol=1e-8)
    assert warm.n_iter < cold.n_iter
    with pytest.raises(ValueError, match="x0 must have 40"):
        solve_penalized_least_squares(Z, Y, c, M, ridge=0.01, x0=np.zeros((3, 2)), **common)


def test_a_rank_deficient_design_is_solved_on_its_complement(rng):
    Z0 = rng.normal(size=(12, 3))
    Z = np.hstack([Z0, Z0[:, :1]])  # a repeated column: singular at ridge 0
    Y, c = rng.normal(size=(12, 1)), np.full(12, 1 / 12)
    sols = SquareLossPath(Z, Y, c).ridge_path([0.0, 1e-3, 1e-1])
    assert [s.factorization for s in sols] == ["projected-cholesky", "cholesky", "cholesky"]
    assert sols[0].singular and not sols[1].singular
    np.testing.assert_allclose(sols[0].coef, np.linalg.pinv(Z) @ Y, atol=1e-9)
    # the bias column in the span of the features: every weight's system is singular
    Zb = np.hstack([Z0, np.ones((12, 1))])
    W = sp.random(12, 12, density=0.4, random_state=2)
    L = (sp.diags(np.asarray((W + W.T).sum(axis=1)).ravel()) - W - W.T).tocsr()
    path = SquareLossPath(Zb, Y, c, [L], fit_intercept=True)
    for w in (0.5, -0.05):
        sol = path.solve(0.0, [w], warn=False)
        assert sol.factorization in ("projected-cholesky", "projected-ldl") and sol.singular
        H = path.system(0.0, [w])
        x = np.vstack([sol.coef, sol.intercept[None]])
        np.testing.assert_allclose(x, np.linalg.pinv(H) @ path.rhs_, atol=1e-8)


def test_a_singular_restricted_system_gets_the_minimum_norm_solution_of_the_full_one(rng):
    # the bias in the span of the features AND a loss-plus-penalty S = c (I - P) singular on
    # the design's range (P projects on two columns of A): neither the design's complement
    # nor H can be factored; the pseudo-inverse comes from H's restriction to its range
    Z0 = rng.normal(size=(15, 4))
    A = np.hstack([Z0, np.ones((15, 1))])
    Zb, Y, c = A, rng.normal(size=(15, 2)), np.full(15, 1 / 15)
    Q, _ = np.linalg.qr(A[:, :2])
    M = -(Q @ Q.T) / 15  # a weight of 1: S = (I - Q Q^T) / 15, singular on span(Q)
    path = SquareLossPath(Zb, Y, c, [M], fit_intercept=True)
    sol = path.solve(0.0, [1.0], warn=False)
    assert sol.factorization == "eigh" and sol.singular and sol.convex
    H = path.system(0.0, [1.0])
    x = np.vstack([sol.coef, sol.intercept[None]])
    x_ref = np.linalg.pinv(H, rcond=1e-10, hermitian=True) @ path.rhs_
    np.testing.assert_allclose(x, x_ref, atol=1e-9)
    assert np.linalg.matrix_rank(H) == 3  # 6 unknowns: the design's null space and span(Q)
    # an indefinite singular one: S = I/15 - 2 Q Q^T / 15 on span(Q), 0 on a third direction
    R, _ = np.linalg.qr(A[:, 2:4])
    R -= Q @ (Q.T @ R)
    R = R[:, :1] / np.linalg.norm(R[:, 0])
    M2 = -(2 * Q @ Q.T + R @ R.T) / 15
    path = SquareLossPath(Zb, Y, c, [M2], fit_intercept=True)
    sol = path.solve(0.0, [1.0], warn=False)
    assert sol.factorization == "eigh" and not sol.convex
    x = np.vstack([sol.coef, sol.intercept[None]])
    H = path.system(0.0, [1.0])
    np.testing.assert_allclose(
        x, np.linalg.pinv(H, rcond=1e-10, hermitian=True) @ path.rhs_, atol=1e-9
    )


def test_paths_on_one_design_share_its_complement(rng):
    Z0 = rng.normal(size=(12, 3))
    Zb = np.hstack([Z0, np.ones((12, 1))])  # the bias in the span of the features
    Y, c = rng.normal(size=(12, 1)), np.full(12, 1 / 12)
    design: dict = {}
    graphs = [sp.diags(rng.uniform(0.1, 1.0, 12)).tocsr() for _ in range(2)]
    paths = [SquareLossPath(Zb, Y, c, [M], fit_intercept=True, design_cache=design) for M in graphs]
    for path, M in zip(paths, graphs, strict=True):
        shared = path.solve(0.0, [0.3])
        alone = SquareLossPath(Zb, Y, c, [M], fit_intercept=True).solve(0.0, [0.3])
        assert shared.factorization.startswith("projected")
        np.testing.assert_array_equal(shared.coef, alone.coef)
    V, AV, _ = design["complement_basis"]
    assert V.shape == (5, 4)
    np.testing.assert_allclose(AV.T @ AV, np.eye(4), atol=1e-10)  # A V orthonormal
    assert all(p._equations.complement().basis is V for p in paths)  # computed once


def test_an_ill_conditioned_full_row_rank_design_gets_the_exact_restricted_solution(rng):
    # a smooth kernel's factor: singular values over six decades, the bias in its span; the
    # outputs f = A x are then free, and the objective's minimiser is f = (I + w L)^{-1} Y
    n = 30
    Q1, _ = np.linalg.qr(rng.normal(size=(n, n)))
    Q2, _ = np.linalg.qr(rng.normal(size=(n, n)))
    Z = Q1 @ np.diag(np.logspace(0, -6, n)) @ Q2
    Y, c = rng.normal(size=(n, 2)), np.ones(n)
    W = sp.random(n, n, density=0.2, random_state=3)
    L = (sp.diags(np.asarray((W + W.T).sum(axis=1)).ravel()) - W - W.T).toarray()
    path = SquareLossPath(Z, Y, c, [L], fit_intercept=True)
    sol = path.solve(0.0, [0.7])
    assert sol.factorization == "projected-cholesky" and sol.singular
    f = Z @ sol.coef + sol.intercept
    np.testing.assert_allclose(f, np.linalg.solve(np.eye(n) + 0.7 * L, Y), atol=1e-7)


def test_ridge_path_auto_switches_to_one_eigendecomposition_when_singular(rng):
    Z = rng.normal(size=(12, 3))  # full-rank design; the loss minus the penalty is singular
    Y, c = rng.normal(size=(12, 1)), np.full(12, 1 / 12)
    M = np.diag(np.where(np.arange(12) < 10, 1 / 12, 0.0))
    path = SquareLossPath(Z, Y, c, [M])
    sols = path.ridge_path([0.0, 1e-3, 1e-1], [-1.0])
    assert [s.factorization for s in sols] == ["eigh", "eigh-path", "eigh-path"]
    H = path.system(0.0, [-1.0])
    np.testing.assert_allclose(sols[0].coef, np.linalg.pinv(H) @ path.rhs_, atol=1e-9)


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_grid_from_one_eigendecomposition_equals_one_solve_per_point(rng, fit_intercept):
    Z, Y, c, Ms = _problem(rng, n=60, p=40, labeled=8)
    path = SquareLossPath(Z, Y, c, Ms, fit_intercept=fit_intercept)
    direction = np.array([1.0, 0.5])
    settings = [(r, t * direction) for r in np.logspace(-6, 1, 6) for t in (0.0, 0.01, 1.0, 100.0)]
    sols = path.solve_grid(settings)
    assert {s.factorization for s in sols} == {"spectral-path"}
    for (ridge, w), s in zip(settings, sols, strict=True):
        ref = path.solve(ridge, w)
        assert s.convex and not s.singular
        np.testing.assert_allclose(s.coef, ref.coef, rtol=1e-7, atol=1e-9 * np.abs(ref.coef).max())
        np.testing.assert_allclose(s.intercept, ref.intercept, rtol=1e-7, atol=1e-9)
        H, x = path.system(ridge, w), np.vstack([s.coef, s.intercept[None]])
        if not fit_intercept:
            x = s.coef
        np.testing.assert_allclose(H @ x, path.rhs_, atol=1e-8)  # the normal equations hold


def test_grid_solves_directly_what_one_eigendecomposition_cannot_serve(rng):
    Z, Y, c, Ms = _problem(rng, n=60, p=40, labeled=8)
    path = SquareLossPath(Z, Y, c, Ms, fit_intercept=True)
    ridges = np.logspace(-3, 1, 12)
    # weights that are not multiples of one direction: one eigendecomposition per weight
    mixed = [(r, w) for r in ridges for w in ([1.0, 0.0], [0.0, 1.0])]
    assert "spectral-path" not in {s.factorization for s in path.solve_grid(mixed)}
    # a subtracted penalty: the settings whose diagonal is not positive are solved directly
    signed = [(r, t * np.array([1.0, -1.0])) for r in ridges for t in (0.01, 50.0)]
    with pytest.warns(NonConvexObjectiveWarning):
        sols = path.solve_grid(signed)
    kinds = {s.factorization for s in sols}
    assert "spectral-path" in kinds and len(kinds) > 1
    for (ridge, w), s in zip(signed, sols, strict=True):
        ref = path.solve(ridge, w, warn=False)
        assert s.convex == ref.convex
        np.testing.assert_allclose(s.coef, ref.coef, rtol=1e-6, atol=1e-8 * np.abs(ref.coef).max())
    # few settings, or every sample labeled: ridge paths as before
    assert "spectral-path" not in {s.factorization for s in path.solve_grid(signed[:5], warn=False)}
    full = SquareLossPath(Z, Y, np.full(60, 1 / 60), Ms, fit_intercept=True)
    assert "spectral-path" not in {s.factorization for s in full.solve_grid(mixed[::2])}


# ------------------------------------------------------------------------------------------
# A line of weights monotone in the Loewner order (DRLSC's eta): skipped Cholesky attempts
# ------------------------------------------------------------------------------------------
def _graph_laplacian(n, density, seed):
    W = sp.random(n, n, density=density, random_state=seed)
    W = W + W.T
    return (sp.diags(np.asarray(W.sum(axis=1)).ravel()) - W).tocsr()


def _discriminative_line(rng, rank_deficient):
    """DRLSC's system along eta: ``A^T (I + eta L_w - (1 - eta) L_b) A``, PSD ``L_w``, ``L_b``;
    ``L_b`` large enough that small eta is indefinite.  ``rank_deficient``: the bias column in
    the span of the features (a kernel factor's case), solved on the design's complement."""
    n, p = 40, 10
    Z = rng.normal(size=(n, p))
    if rank_deficient:
        Z[:, -1] = 1.0
    Y = np.sign(rng.normal(size=(n, 2)))
    Ms = [_graph_laplacian(n, 0.1, 4), 3.0 * _graph_laplacian(n, 0.1, 5)]
    return Z, Y, np.ones(n), Ms


def _counting_cholesky(monkeypatch):
    import structreg.solvers.direct as direct_module

    calls = []
    original = direct_module.cholesky_attempt

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(direct_module, "cholesky_attempt", counting)
    return calls


@pytest.mark.parametrize("rank_deficient", [False, True])
def test_a_monotone_line_skips_only_the_cholesky_attempts_that_must_fail(
    rng, monkeypatch, rank_deficient
):
    Z, Y, c, Ms = _discriminative_line(rng, rank_deficient)
    etas = np.linspace(0.0, 1.0, 11)
    settings = [(0.0, [eta, -(1.0 - eta)]) for eta in etas]
    calls = _counting_cholesky(monkeypatch)
    path = SquareLossPath(Z, Y, c, Ms, fit_intercept=True, psd=[True, True])
    skipping = path.solve_grid(settings, warn=False)
    attempted = len(calls)
    calls.clear()
    plain = SquareLossPath(Z, Y, c, Ms, fit_intercept=True).solve_grid(settings, warn=False)
    assert len(calls) == len(settings)  # without psd: one attempt per setting
    # with it: one per positive definite setting, and the first (largest) one that is not
    H = [path.system(0.0, w) for _, w in settings]
    if rank_deficient:  # the bias in the features' span: judged on the complement
        V = path._equations.complement().basis
        H = [V.T @ h @ V for h in H]
    lowest = [np.linalg.eigvalsh(h)[0] for h in H]
    positive = sum(m > 1e-8 * np.abs(h).max() for m, h in zip(lowest, H, strict=True))
    assert 0 < positive < len(settings) - 1 and min(lowest) < 0
    assert attempted == positive + 1
    for (_, w), s, r, low in zip(settings, skipping, plain, lowest, strict=True):
        np.testing.assert_array_equal(s.coef, r.coef)  # the same factorisation, or the same
        np.testing.assert_array_equal(s.intercept, r.intercept)  # fallback after a refusal
        assert (s.factorization, s.convex, s.singular) == (r.factorization, r.convex, r.singular)
        assert s.convex == (low > 0)
        x = np.vstack([s.coef, s.intercept[None]])
        full = path.system(0.0, w)
        if rank_deficient:  # the minimum-norm solution of the singular full system
            ref = np.linalg.pinv(full, rcond=1e-10, hermitian=True) @ path.rhs_
        else:
            ref = np.linalg.solve(full, path.rhs_)
        np.testing.assert_allclose(x, ref, atol=1e-8 * np.abs(ref).max())


def test_settings_off_the_loewner_order_attempt_cholesky_each(rng, monkeypatch):
    # the subtracted penalty is not declared PSD: a larger eta no longer dominates a smaller
    # one, nothing may be skipped; a ridge changes the system's kind (not compared either)
    Z, Y, c, Ms = _discriminative_line(rng, rank_deficient=False)
    settings = [(0.0, [eta, -(1.0 - eta)]) for eta in np.linspace(0.0, 1.0, 6)]
    settings += [(1e-3, [0.0, -1.0])]
    calls = _counting_cholesky(monkeypatch)
    sols = SquareLossPath(Z, Y, c, Ms, fit_intercept=True, psd=[True, False]).solve_grid(
        settings, warn=False
    )
    assert len(calls) == len(settings)
    path = SquareLossPath(Z, Y, c, Ms, fit_intercept=True, psd=[True, True])
    psd = [True, True]
    assert not below((0.0, [0.2, -0.8]), (1e-3, [0.9, -0.1]), psd)  # another kind of system
    assert below((0.0, [0.2, -0.8]), (0.0, [0.9, -0.1]), psd)
    assert not below((0.0, [0.9, -0.1]), (0.0, [0.2, -0.8]), psd)
    for (ridge, w), s in zip(settings, sols, strict=True):
        x = np.vstack([s.coef, s.intercept[None]])
        np.testing.assert_allclose(path.system(ridge, w) @ x, path.rhs_, atol=1e-8)
    with pytest.raises(ValueError, match="psd has 1 entries for 2 penalties"):
        SquareLossPath(Z, Y, c, Ms, psd=[True])


def test_paths_with_equal_loss_weights_and_targets_share_the_loss_parts(rng):
    Z0 = rng.normal(size=(14, 3))
    Zb = np.hstack([Z0, np.ones((14, 1))])  # the bias in the features' span: a complement
    Y, c = rng.normal(size=(14, 2)), np.full(14, 1 / 14)
    graphs = [_graph_laplacian(14, 0.3, seed) for seed in (6, 7)]
    design: dict = {}
    a, b = (SquareLossPath(Zb, Y, c, [M], fit_intercept=True, design_cache=design) for M in graphs)
    assert a.gram_ is b.gram_ and a.rhs_ is b.rhs_
    assert a._equations.complement().gram is b._equations.complement().gram  # (AV)^T C (AV)
    c2 = c.copy()
    c2[:3] = 0.0  # other loss weights on the same design: their own parts
    d = SquareLossPath(Zb, Y, c2, [graphs[0]], fit_intercept=True, design_cache=design)
    assert d.gram_ is not a.gram_
    cases = [(graphs[0], c), (graphs[1], c), (graphs[0], c2)]
    for path, (M, weights) in zip((a, b, d), cases, strict=True):
        alone = SquareLossPath(Zb, Y, weights, [M], fit_intercept=True)
        np.testing.assert_array_equal(path.gram_, alone.gram_)
        shared, ref = path.solve(0.0, [0.4]), alone.solve(0.0, [0.4])
        np.testing.assert_allclose(shared.coef, ref.coef, rtol=1e-12, atol=1e-12)
        A = np.hstack([Zb, np.ones((14, 1))])
        H = A.T @ ((np.diag(weights) + 0.4 * M.toarray()) @ A)
        x = np.vstack([shared.coef, shared.intercept[None]])
        np.testing.assert_allclose(
            x, np.linalg.pinv(H, rcond=1e-10) @ (A.T @ (weights[:, None] * Y)), atol=1e-8
        )


@pytest.mark.parametrize("exponent", [-300, -560])  # 1e-90; 1e-169, whose square underflows
def test_design_far_below_unit_scale_with_a_ridge(rng, exponent):
    """A design whose entries are all tiny (GRBFN units of a narrow kernel): the ridge
    dominates, and the fit is the intercept alone (the weighted mean of the targets) with
    coefficients of the order |Z| / ridge -- not an error (the scale squared underflowed to
    0), and not a lost intercept (the rescaled system's ridge, 1 / s^2 times the intercept's
    block, made the relative pivot tests drop it)."""
    Z, Y, c, Ms = _problem(rng)
    Z = Z * 2.0**exponent
    sol = SquareLossPath(Z, Y, c, Ms, fit_intercept=True).solve_grid([(0.1, [0.0, 0.0])])[0]
    assert np.all(np.isfinite(sol.coef)) and np.all(np.isfinite(sol.intercept))
    np.testing.assert_allclose(sol.intercept, c @ Y / c.sum(), rtol=1e-12)
    assert np.max(np.abs(sol.coef)) < 2.0 ** (exponent + 10)


def test_a_design_whose_gram_matrix_underflows_is_refused_by_name():
    """Without a ridge or an intercept, a design so small that ``A^T A`` underflows to zero
    leaves no complement of its null space to solve on: a clear error, not a crash inside
    the restricted solve; with a ridge the problem is well posed and solved."""
    rng = np.random.default_rng(0)
    Z, Y = rng.normal(size=(20, 3)) * 1e-170, rng.normal(size=(20, 1))
    c = np.full(20, 1 / 20)
    with pytest.raises(ValueError, match="numerically zero"):
        SquareLossPath(Z, Y, c).solve(0.0)
    sol = SquareLossPath(Z, Y, c).solve(1e-3)
    assert np.all(np.isfinite(sol.coef)) and np.abs(sol.coef).max() < 1e-160
