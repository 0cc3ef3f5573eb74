"""The penalty Gram ``Z^T L Z`` of a design formed a block of rows at a time (RowDesign) against
the direct formula, and LapRLSC's fit with features by rows against the fit that holds them."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_moons

import structreg
from structreg import LapRLSC
from structreg.kernels import kernel_matrix, rbf_section
from structreg.models._nystroem_rows import features_by_rows
from structreg.solvers.design import RowDesign, design_penalty_gram
from structreg.structure.graphs import knn_graph, laplacian


def _laplacian(X, far_edges=0, seed=0):
    """The kNN Laplacian of X, with ``far_edges`` random extra edges (far from the diagonal in
    any locality order: they take the path that forms rows again)."""
    W = knn_graph(X, n_neighbors=4)
    if far_edges:
        rng = np.random.default_rng(seed)
        i, j = rng.integers(0, X.shape[0], size=(2, far_edges))
        E = sp.coo_matrix((rng.uniform(0.5, 1.5, far_edges), (i, j)), shape=W.shape).tocsr()
        W = W + E + E.T
    return laplacian(W).tocsr()


@pytest.mark.parametrize("far_edges", [0, 40])
@pytest.mark.parametrize("block_rows", [10, 37, 200])  # 103 rows: none divides n
def test_blocked_penalty_gram_equals_direct(far_edges, block_rows):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(103, 2))
    Z = rng.normal(size=(103, 7))
    L = _laplacian(X, far_edges)
    direct = Z.T @ (L @ Z)
    reads = []

    def rows(idx):
        reads.append(len(idx))
        return Z[idx]

    design = RowDesign(*Z.shape, rows=rows)
    G = design_penalty_gram(design, L, fit_intercept=False, block_elements=block_rows * 7)
    np.testing.assert_allclose(G, direct, rtol=1e-10, atol=1e-10 * np.abs(direct).max())
    assert max(reads) <= block_rows  # no block of rows above the budget
    if not far_edges and block_rows >= 37:  # the order's bandwidth within a block: every
        assert sum(reads) == 103  # row formed once
    else:  # rows far from the diagonal formed again, no more than once a block
        assert sum(reads) <= 103 * (1 + -(-103 // block_rows))
    assert design.squared_norm_ == pytest.approx(np.sum(Z * Z), rel=1e-12)
    # the held design, in blocks of the same size, gives the same matrix
    held = design_penalty_gram(Z, L, fit_intercept=False, block_elements=block_rows * 7)
    np.testing.assert_allclose(G, held, rtol=1e-10, atol=1e-10 * np.abs(direct).max())


def test_row_design_rows_and_products():
    Z = np.arange(12.0).reshape(6, 2)
    design = RowDesign(6, 2, rows=lambda idx: Z[idx])
    np.testing.assert_array_equal(design[np.array([4, 1])], Z[[4, 1]])
    np.testing.assert_array_equal(design[2:5], Z[2:5])
    mask = np.array([True, False, False, True, True, False])
    np.testing.assert_array_equal(design[mask], Z[mask])
    V = np.array([[1.0, 2.0], [3.0, -1.0]])
    np.testing.assert_array_equal(design @ V, Z @ V)
    assert design.squared_norm() == np.sum(Z * Z)
    with pytest.raises(ValueError, match="without an intercept"):
        design_penalty_gram(design, sp.identity(6, format="csr"), fit_intercept=True)


def _moons():
    X, y = make_moons(500, noise=0.1, random_state=0)
    y_semi = np.full_like(y, -1)
    for c in (0, 1):
        y_semi[np.flatnonzero(y == c)[:3]] = c
    return X, y, y_semi


def test_fit_with_features_by_rows_equals_the_held_features():
    X, y, y_semi = _moons()
    params = dict(solver="nystroem", n_components=80, random_state=0)
    held = LapRLSC(**params).fit(X, y_semi)
    assert not features_by_rows(held, X, None)  # 500 x 80 floats: kept whole
    with structreg.config_context(working_memory=0.01):  # 10 KiB blocks: 16 rows of Z
        rows = LapRLSC(**params).fit(X, y_semi)
        assert features_by_rows(rows, X, None)
    F_held, F_rows = held.decision_function(X), rows.decision_function(X)
    np.testing.assert_allclose(F_rows, F_held, rtol=1e-9, atol=1e-9 * np.abs(F_held).max())
    np.testing.assert_array_equal(rows.transduction_, held.transduction_)
    np.testing.assert_array_equal(rows.predict(X), held.predict(X))
    np.testing.assert_allclose(rows.predict_proba(X), held.predict_proba(X), atol=1e-9)
    info_held, info_rows = held.solver_info_, rows.solver_info_
    share = info_held["unexplained_trace"]
    assert info_rows["unexplained_trace"] == pytest.approx(share, abs=1e-12)
    assert info_rows["factorization"] == info_held["factorization"]
    assert rows.score(X, y) == held.score(X, y) > 0.9


def test_features_by_rows_only_where_the_same_system_is_solved():
    X, _, y_semi = _moons()
    with structreg.config_context(working_memory=0.01):
        for params in ({"fit_intercept": True}, {"gamma_A": 0.0}, {"solver": "dense"}):
            clf = LapRLSC(n_components=80, random_state=0, **params).fit(X, y_semi)
            assert not features_by_rows(clf, X, None)


@pytest.mark.parametrize("shift", [0.0, 1e3])  # points far from the origin: cancellation
def test_rbf_section_equals_the_kernel_matrix(shift):
    rng = np.random.default_rng(2)
    X, Y = rng.normal(size=(70, 3)) + shift, rng.normal(size=(9, 3)) + shift
    for gamma in (1e-3, 0.7, 70.0):
        exact = np.exp(-gamma * np.sum((X[:, None, :] - Y[None, :, :]) ** 2, axis=2))
        K = kernel_matrix(X, Y, kernel="rbf", gamma=gamma)
        F = rbf_section(X, Y, gamma)
        # the exponent to a few ulps of gamma |x - mean(Y)|^2 (scikit-learn's formula: of
        # gamma |x|^2); K's relative error is that error of the exponent
        centred = gamma * np.max(np.sum((X - Y.mean(axis=0)) ** 2, axis=1))
        np.testing.assert_allclose(F, exact, rtol=16 * np.finfo(float).eps * max(centred, 1))
        sklearn_error = 16 * np.finfo(float).eps * gamma * np.max(np.sum(X * X, axis=1))
        np.testing.assert_allclose(F, K, rtol=max(sklearn_error, 1e-14), atol=1e-300)
        assert F.min() >= 0.0 and F.max() <= 1.0
    np.testing.assert_allclose(rbf_section(X[:5], X[:5], 0.5).diagonal(), 1.0, rtol=1e-14)
    # worker threads take shares of the rows: the same bits
    one = rbf_section(X, Y, 0.7, threads=1)
    for threads in (2, 3, None):
        np.testing.assert_array_equal(rbf_section(X, Y, 0.7, threads=threads), one)


def test_fit_with_features_by_rows_solves_the_stated_objective():
    # the normal equations of LapRLSC on its Nystroem features, written out and solved
    # directly, against the fit that forms the features a block of rows at a time
    X, _, y_semi = _moons()
    params = dict(solver="nystroem", n_components=60, random_state=0)
    model = LapRLSC(**params)
    Xv, yv = model._validated(X, y_semi)
    problem = model._problem(Xv, yv, None)  # the held features, the penalty matrices
    Z, c, Y = problem.Z, problem.loss_weights, problem.Y
    setting = problem.setting(model)
    H = Z.T @ (c[:, None] * Z) + setting.ridge * np.eye(Z.shape[1])
    for w, M in zip(setting.weights, problem.penalties, strict=True):
        H += w * (Z.T @ (M @ Z))
    coef = np.linalg.solve(H, Z.T @ (c[:, None] * Y))
    with structreg.config_context(working_memory=0.01):
        rows = LapRLSC(**params).fit(X, y_semi)
        assert features_by_rows(rows, X, None)
    np.testing.assert_allclose(rows.coef_, coef, rtol=1e-8, atol=1e-8 * np.abs(coef).max())
    F = (Z @ coef)[:, 0]  # binary: one output column
    F_rows = rows.decision_function(X)
    np.testing.assert_allclose(F_rows, F, rtol=1e-8, atol=1e-8 * np.abs(F).max())
