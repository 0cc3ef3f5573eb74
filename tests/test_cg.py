"""The one CG routine (:mod:`structreg.solvers.cg`) and the one kernel operator
(:mod:`structreg.kernels`: blocked ``k(A, B) @ V`` under the one memory budget,
:func:`structreg._resources.block_bytes`)."""

import functools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_moons
from sklearn.exceptions import ConvergenceWarning

from structreg import LapRLSC
from structreg.kernels import KernelOperator, kernel_blocks, kernel_matrix, kernel_product
from structreg.solvers.cg import conjugate_gradient, warn_not_converged
from structreg.solvers.square import solve_penalized_least_squares
from structreg.structure import knn_graph, laplacian


def _spd(n=60, seed=0, cond=1e4):
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    return (Q * np.geomspace(1.0, cond, n)) @ Q.T


def _plain(H):
    return lambda V, _: H @ V


# ----------------------------------------------------------------------------------------
# conjugate_gradient


def test_spd_block_equals_direct_solve():
    H = _spd()
    C = np.random.default_rng(1).normal(size=(60, 3))
    res = conjugate_gradient(_plain(H), C, tol=1e-12)
    assert res.converged and res.column_converged.all() and not res.minres.any()
    assert not res.negative_curvature
    assert res.x.shape == (60, 3) and res.n_iter == res.column_iter.max() >= 1
    np.testing.assert_allclose(res.x, np.linalg.solve(H, C), rtol=1e-8, atol=1e-10)
    # the stopping rule: every column's residual within tol of its right-hand side (CG stops
    # on its updated residual; the one recomputed here differs by rounding, ~1e-12 relative
    # with numpy 2.4, hence the factor 10)
    R = C - H @ res.x
    assert np.all(np.linalg.norm(R, axis=0) <= 1e-11 * np.linalg.norm(C, axis=0))
    # one column solved alone gives that column of the block (columns are independent)
    one = conjugate_gradient(_plain(H), C[:, 1], tol=1e-12)
    assert one.x.shape == (60,)
    np.testing.assert_allclose(one.x, res.x[:, 1], rtol=1e-10, atol=1e-12)


def test_metric_is_a_preconditioner_applied_by_products_only():
    """N = P^{-1} H with P SPD: CG in the P inner product solves H x = P c without P^{-1}."""
    H, P = _spd(seed=2), _spd(seed=3, cond=1e2)
    C = np.random.default_rng(4).normal(size=(60, 2))
    N = np.linalg.solve(P, H)
    calls = {"metric": 0}

    def metric(V):
        calls["metric"] += 1
        return P @ V

    res = conjugate_gradient(lambda V, PV: N @ V, C, metric=metric, tol=1e-12)
    assert res.converged
    np.testing.assert_allclose(H @ res.x, P @ C, rtol=1e-8, atol=1e-8)
    assert calls["metric"] == res.n_iter + 1  # one product with P per iteration (+ P C)


def test_warm_start_lowers_iterations():
    H = _spd(cond=1e5)
    C = np.random.default_rng(5).normal(size=(60, 2))
    cold = conjugate_gradient(_plain(H), C, tol=1e-10)
    near = np.linalg.solve(H, C) + 1e-6 * np.random.default_rng(6).normal(size=C.shape)
    warm = conjugate_gradient(_plain(H), C, x0=near, tol=1e-10)
    assert cold.converged and warm.converged
    assert warm.n_iter < cold.n_iter
    exact = conjugate_gradient(_plain(H), C, x0=np.linalg.solve(H, C), tol=1e-8)
    assert exact.n_iter == 0 and exact.converged


def test_non_convergence_is_reported():
    H = _spd(cond=1e8)
    C = np.random.default_rng(7).normal(size=(60, 2))
    with pytest.warns(ConvergenceWarning, match="did not reach"):
        res = conjugate_gradient(_plain(H), C, tol=1e-14, max_iter=3)
    assert not res.converged and not res.column_converged.any()
    assert res.n_iter == 3 and np.all(res.column_iter == 3)


def test_zero_right_hand_side_has_the_zero_solution():
    H = _spd()
    C = np.zeros((60, 2))
    C[:, 0] = 1.0
    res = conjugate_gradient(_plain(H), C, x0=np.ones((60, 2)), tol=1e-12)
    assert res.converged and res.column_iter[1] == 0
    assert np.all(res.x[:, 1] == 0)


def test_sparse_operator_and_a_run_in_stages():
    """N given as a sparse matrix (the graph solves): the same solution as N given as a
    function; a probe without the warning, a warm start from it, one warning at the end."""
    n = 300
    rng = np.random.default_rng(11)
    G = sp.random(n, n, density=0.02, random_state=12, data_rvs=lambda k: rng.uniform(0.5, 1.5, k))
    G = G + G.T
    N = sp.csr_matrix(sp.diags(np.asarray(G.sum(axis=1)).ravel() + 0.05) - G)
    C = rng.normal(size=(n, 3))
    C[:, 2] = 0.0
    matrix = conjugate_gradient(N, C, tol=1e-12)
    function = conjugate_gradient(lambda V, _: N @ V, C, tol=1e-12)
    assert matrix.converged and np.all(matrix.x[:, 2] == 0)
    np.testing.assert_allclose(matrix.x, function.x, rtol=1e-9, atol=1e-11)
    assert np.all(np.abs(matrix.column_iter - function.column_iter) <= 1)  # rounding only
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the probe does not converge, silently
        probe = conjugate_gradient(N, C, tol=1e-12, max_iter=5, warn=False)
    assert not probe.converged and probe.column_iter.tolist() == [5, 5, 0]
    rest = conjugate_gradient(N, C, x0=probe.x, tol=1e-12, warn=False)
    assert rest.converged
    np.testing.assert_allclose(rest.x, matrix.x, rtol=1e-9, atol=1e-11)
    with pytest.warns(ConvergenceWarning, match="max_iter=5 iterations for 2 of 3 column"):
        warn_not_converged(probe.column_converged, 1e-12, 5)


def test_indefinite_system_is_finished_by_minres():
    """Negative curvature ends CG for that column; MINRES returns the stationary point."""
    rng = np.random.default_rng(8)
    Q, _ = np.linalg.qr(rng.normal(size=(40, 40)))
    w = np.concatenate([np.geomspace(1.0, 10.0, 30), -np.geomspace(0.5, 5.0, 10)])
    H = (Q * w) @ Q.T
    C = rng.normal(size=(40, 2))
    res = conjugate_gradient(_plain(H), C, tol=1e-10)
    assert res.negative_curvature and res.minres.all() and res.converged
    np.testing.assert_allclose(res.x, np.linalg.solve(H, C), rtol=1e-7, atol=1e-8)
    # stopping rule of the fallback: the plain 2-norm of the residual of H x = P c
    assert np.all(np.linalg.norm(C - H @ res.x, axis=0) <= 1e-10 * np.linalg.norm(C, axis=0))
    # without the fallback the columns end at the CG iterate, not converged
    cut = conjugate_gradient(_plain(H), C, tol=1e-10, minres_fallback=False, warn=False)
    assert cut.negative_curvature and not cut.minres.any() and not cut.column_converged.any()
    assert np.all(np.linalg.norm(C - H @ cut.x, axis=0) > 1e-10 * np.linalg.norm(C, axis=0))


def test_square_loss_cg_uses_it():
    """solve_penalized_least_squares(method="cg"): dense agreement, warm start, indefinite M."""
    X, y = make_moons(100, noise=0.1, random_state=0)
    rng = np.random.default_rng(0)
    Z = np.hstack([X, X**2, rng.normal(size=(100, 3))])
    c = np.zeros(100)
    c[:20] = 1 / 20
    Y = np.where(c > 0, 2.0 * y - 1, 0.0)[:, None]
    L = laplacian(knn_graph(X, 6))
    common = dict(ridge=1e-2, fit_intercept=True)
    direct = solve_penalized_least_squares(Z, Y, c, 1e-2 * L, **common)
    cold = solve_penalized_least_squares(Z, Y, c, 1e-2 * L, method="cg", tol=1e-12, **common)
    assert cold.factorization == "cg" and cold.convex is None
    np.testing.assert_allclose(cold.coef, direct.coef, rtol=1e-7, atol=1e-9)
    x0 = np.vstack([direct.coef, direct.intercept]) * (1 + 1e-10)
    loose = dict(method="cg", tol=1e-8, **common)
    warm = solve_penalized_least_squares(Z, Y, c, 1e-2 * L, x0=x0, **loose)
    assert warm.n_iter < solve_penalized_least_squares(Z, Y, c, 1e-2 * L, **loose).n_iter
    # an indefinite penalty (between-class term subtracted): MINRES, a saddle, flagged
    with pytest.warns(UserWarning, match="non-convex"):
        sad = solve_penalized_least_squares(
            Z, Y, c, -5.0 * L, method="cg", tol=1e-12, max_iter=2000, **common
        )
    assert sad.factorization == "minres" and sad.convex is False
    with pytest.warns(UserWarning, match="non-convex"):
        ref = solve_penalized_least_squares(Z, Y, c, -5.0 * L, **common)
    np.testing.assert_allclose(sad.coef, ref.coef, rtol=1e-6, atol=1e-8)


# ----------------------------------------------------------------------------------------
# the kernel operator


def _kernel_fn(calls=None):
    def fn(A, B):
        if calls is not None:
            calls.append(len(A))
        return kernel_matrix(A, B, kernel="rbf", gamma=0.7)

    return fn


@pytest.mark.parametrize("block_rows", [1, 7, 50, 1000])
def test_blocked_products_equal_the_unblocked_product(block_rows):
    rng = np.random.default_rng(9)
    A, B = rng.normal(size=(50, 3)), rng.normal(size=(23, 3))
    V, U = rng.normal(size=(23, 4)), rng.normal(size=(50, 4))
    K = kernel_matrix(A, B, kernel="rbf", gamma=0.7)
    calls = []
    fn = _kernel_fn(calls)
    out = kernel_product(fn, A, B, V, block_rows=block_rows)
    np.testing.assert_allclose(out, K @ V, rtol=1e-13, atol=1e-13)
    assert calls == [min(block_rows, 50 - s) for s in range(0, 50, block_rows)]  # uneven last
    np.testing.assert_allclose(
        kernel_product(fn, A, B, U, transpose=True, block_rows=block_rows),
        K.T @ U,
        rtol=1e-12,
        atol=1e-12,
    )
    np.testing.assert_allclose(
        kernel_product(fn, A, B, V[:, 0], block_rows=block_rows), K @ V[:, 0]
    )
    rows = [(r, Kb) for r, Kb in kernel_blocks(fn, A, B, block_rows=block_rows)]
    np.testing.assert_allclose(np.vstack([Kb for _, Kb in rows]), K, rtol=1e-13, atol=1e-15)


def test_tiny_budget_and_the_one_budget(memory_budget):
    rng = np.random.default_rng(10)
    A, B, V = rng.normal(size=(101, 2)), rng.normal(size=(9, 2)), rng.normal(size=(9, 2))
    K = kernel_matrix(A, B, kernel="rbf", gamma=0.7)
    calls = []
    # a budget below one row still makes progress, one row at a time
    out = kernel_product(_kernel_fn(calls), A, B, V, block_bytes=1)
    np.testing.assert_allclose(out, K @ V, rtol=1e-13, atol=1e-13)
    assert calls == [1] * 101
    # the budget is read at call time: 5 rows of 9 float64 entries = 360 bytes
    calls.clear()
    memory_budget(5 * 9 * 8)
    kernel_product(_kernel_fn(calls), A, B, V)
    assert calls == [5] * 20 + [1]
    # ... and so does the operator: 101 x 9 entries are more than it stores (16 blocks)
    calls.clear()
    op = KernelOperator(A, _kernel_fn(calls), B)
    assert not op.stored and op.block_size == 5 and calls == []
    np.testing.assert_allclose(op @ V, K @ V, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(op.T @ np.ones((101, 1)), K.T @ np.ones((101, 1)), rtol=1e-12)
    np.testing.assert_allclose(op.rmatvec(np.ones(101)), K.T @ np.ones(101), rtol=1e-12)


def test_symmetric_operator_stored_and_blockwise_agree():
    X = np.random.default_rng(11).normal(size=(40, 3))
    fn = _kernel_fn()
    K = fn(X, X)
    V = np.random.default_rng(12).normal(size=(40, 2))
    stored = KernelOperator(X, fn)
    blocked = KernelOperator(X, fn, max_bytes=0, block_size=6)
    assert stored.stored and stored.block_size is None
    assert not blocked.stored and blocked.matrix is None and blocked.block_size == 6
    for op in (stored, blocked):
        np.testing.assert_allclose(op @ V, K @ V, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(op.T @ V, K @ V, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(op.matvec(V[:, 0]), K @ V[:, 0], rtol=1e-13, atol=1e-13)
    with pytest.raises(ValueError, match="2-D"):
        KernelOperator(X[0], fn)


# ----------------------------------------------------------------------------------------
# an estimator on the iterative path


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_laprlsc_cg_agrees_with_dense(fit_intercept):
    X, y = make_moons(150, noise=0.1, random_state=3)
    y_semi = np.full(150, -1)
    lab = np.random.default_rng(3).choice(150, 16, replace=False)
    y_semi[lab] = y[lab]
    params = dict(gamma=2.0, gamma_A=1e-3, gamma_I=1.0, fit_intercept=fit_intercept)
    dense = LapRLSC(solver="dense", **params).fit(X, y_semi)
    cg = LapRLSC(solver="cg", tol=1e-10, **params).fit(X, y_semi)
    assert cg.solver_info_["factorization"] == "pcg" and cg.solver_info_["converged"]
    Xt = np.random.default_rng(4).normal(size=(40, 2))
    np.testing.assert_allclose(
        cg.decision_function(Xt), dense.decision_function(Xt), rtol=1e-6, atol=1e-7
    )
    np.testing.assert_array_equal(cg.transduction_, dense.transduction_)


def test_laprlsc_cg_with_a_tiny_budget_is_unchanged(memory_budget):
    """A budget of a few rows forces every kernel product into blocks: same fit."""
    X, y = make_moons(80, noise=0.1, random_state=5)
    y_semi = np.where(np.arange(80) % 8 == 0, y, -1)
    params = dict(gamma=2.0, gamma_A=1e-3, gamma_I=1.0, solver="cg", tol=1e-10)
    ref = LapRLSC(**params).fit(X, y_semi)
    memory_budget(3 * 80 * 8)
    small = LapRLSC(**params).fit(X, y_semi)
    Xt = X[:20] + 0.05
    np.testing.assert_allclose(
        small.decision_function(Xt), ref.decision_function(Xt), rtol=1e-9, atol=1e-11
    )


def test_the_kernel_cg_operator_is_the_kernel_layer_one():
    from structreg.solvers.kernel_cg import GramOperator

    assert GramOperator is KernelOperator
    fn = functools.partial(kernel_matrix, kernel="rbf", gamma=0.5)
    X = np.random.default_rng(13).normal(size=(10, 2))
    np.testing.assert_allclose(GramOperator(X, fn) @ np.eye(10), fn(X, X))


def test_threaded_product_is_the_plain_product_bit_for_bit():
    """Row blocks on threads: every row computed by the same code on the same entries."""
    from structreg.solvers.products import ThreadedProduct

    rng = np.random.default_rng(0)
    A = sp.random(3001, 2999, density=0.01, format="csr", random_state=1)
    A.indptr[1500:] = A.indptr[1500]  # empty rows at a block boundary
    A = sp.csr_matrix((A.data[: A.indptr[1500]], A.indices[: A.indptr[1500]], A.indptr), A.shape)
    for threads in (1, 2, 3, 7):
        product = ThreadedProduct(A, threads)
        for V in (
            rng.normal(size=2999),
            rng.normal(size=(2999, 3)),
            rng.normal(size=(2999, 3)).T.copy().T,
        ):
            np.testing.assert_array_equal(product @ V, A @ V)
        product.close()


def test_threaded_products_take_their_threads_from_the_limiter():
    import structreg
    from structreg.solvers import products

    A = sp.random(2000, 2000, density=0.3, format="csr", random_state=0)
    assert A.nnz >= products.THREADED_MIN_NNZ
    with structreg.config_context(threads=1):
        assert products.threaded(A) is A
    with structreg.config_context(threads=3):
        product = products.threaded(A)
        assert len(product.blocks) == 3 and product.row_major
        product.close()
    small = sp.eye(10, format="csr")
    with structreg.config_context(threads=3):
        assert products.threaded(small) is small


def test_cg_on_a_threaded_product_runs_the_same_iterations():
    from structreg.solvers.products import ThreadedProduct

    rng = np.random.default_rng(0)
    B = sp.random(4000, 4000, density=0.002, format="csr", random_state=2)
    N = sp.csr_matrix(B @ B.T + sp.eye(4000))
    C = rng.normal(size=(4000, 2))
    plain = conjugate_gradient(N, C, tol=1e-10)
    product = ThreadedProduct(N, 2)
    threaded = conjugate_gradient(product, C, tol=1e-10)
    product.close()
    np.testing.assert_array_equal(threaded.column_iter, plain.column_iter)
    np.testing.assert_array_equal(threaded.x, plain.x)
