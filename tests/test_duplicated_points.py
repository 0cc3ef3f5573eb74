"""Duplicated training points: graph weights and widths stay defined, the Laplace-type solves
(GFHF, Poisson learning) give the exact answer, and ``gamma="graph"`` keeps a positive width.

The references solve the harmonic and Poisson equations in 400-digit decimal arithmetic on
the fitted graph, so they stay exact where float64 elimination of ``D - W`` does not (edge
weights of 1e-18 next to weights near 1, as self-tuning weights give around a cluster of
copies)."""

import warnings
from decimal import Decimal, localcontext

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from sklearn.datasets import make_blobs, make_moons

import structreg.solvers.laplace as laplace
from structreg.models.harmonic import GFHF, DisconnectedGraphWarning, harmonic_function
from structreg.models.poisson import PoissonLearning, poisson_function
from structreg.solvers.laplace import NUMERICALLY_SINGULAR, excess_solve
from structreg.structure.graphs import knn_graph, neighbor_scale, self_tuning_graph
from structreg.structure.labeled_graph import LabeledGraph, contract

# -- exact references ------------------------------------------------------------------------


def _decimal_solve(A, B):
    """``A^{-1} B`` by Gaussian elimination with partial pivoting on lists of Decimals."""
    n = len(A)
    A = [row[:] for row in A]
    B = [row[:] for row in B]
    for k in range(n):
        p = max(range(k, n), key=lambda i: abs(A[i][k]))
        A[k], A[p], B[k], B[p] = A[p], A[k], B[p], B[k]
        for i in range(k + 1, n):
            if A[i][k]:
                f = A[i][k] / A[k][k]
                A[i][k:] = [a - f * b for a, b in zip(A[i][k:], A[k][k:], strict=True)]
                B[i] = [a - f * b for a, b in zip(B[i], B[k], strict=True)]
    X = [None] * n
    for k in range(n - 1, -1, -1):
        X[k] = [
            (B[k][j] - sum(A[k][i] * X[i][j] for i in range(k + 1, n))) / A[k][k]
            for j in range(len(B[k]))
        ]
    return X


def _decimal_graph(W):
    W = W.toarray() if sp.issparse(W) else np.asarray(W, dtype=float)
    np.fill_diagonal(W, 0.0)
    Wd = [[Decimal(float(x)) for x in row] for row in W]
    return W, Wd, [sum(row) for row in Wd]


def exact_harmonic(W, labeled, Y):
    """F_u = (D_uu - W_uu)^{-1} W_ul Y_l in 400 digits (NaN rows: components without labels)."""
    with localcontext() as ctx:
        ctx.prec = 400
        W, Wd, degree = _decimal_graph(W)
        n_comp, comp = connected_components(W != 0, directed=False)
        reached = (np.bincount(comp[labeled], minlength=n_comp) > 0)[comp]
        u, lab = np.flatnonzero(~labeled & reached), np.flatnonzero(labeled)
        A = [[(degree[i] if i == j else 0) - Wd[i][j] for j in u] for i in u]
        B = [
            [sum(Wd[i][v] * Decimal(float(Y[a, c])) for a, v in enumerate(lab)) for c in range(2)]
            for i in u
        ]
        F = np.full((len(W), 2), np.nan)
        F[lab] = Y
        if len(u):
            F[u] = np.array(_decimal_solve(A, B), dtype=float)
    return F


def exact_poisson(W, labeled, Y):
    """The Poisson solution ``L u = b``, zero degree-weighted mean, in 400 digits, on the
    component of the labeled points (all in one; NaN rows elsewhere), two classes."""
    W = W.toarray() if sp.issparse(W) else np.asarray(W, dtype=float)
    comp = connected_components(W != 0, directed=False)[1]
    assert np.unique(comp[labeled]).size == 1
    inside = comp == comp[labeled][0]
    out = np.full((len(W), 2), np.nan)
    out[inside] = _exact_poisson(W[np.ix_(inside, inside)], labeled[inside], Y)
    return out


def _exact_poisson(W, labeled, Y):
    with localcontext() as ctx:
        ctx.prec = 400
        W, Wd, degree = _decimal_graph(W)
        n, lab = len(W), np.flatnonzero(labeled)
        mean = [sum(Decimal(float(v)) for v in Y[:, c]) / len(lab) for c in range(2)]
        b = [[Decimal(0), Decimal(0)] for _ in range(n)]
        for a, i in enumerate(lab):
            b[i] = [Decimal(float(Y[a, c])) - mean[c] for c in range(2)]
        A = [[(degree[i] if i == j else 0) - Wd[i][j] for j in range(1, n)] for i in range(1, n)]
        u = [[Decimal(0), Decimal(0)]] + _decimal_solve(A, b[1:])  # vertex 0 grounded
        volume = sum(degree)
        for c in range(2):
            shift = sum(d * row[c] for d, row in zip(degree, u, strict=True)) / volume
            for row in u:
                row[c] -= shift
        return np.array(u, dtype=float)


# -- data --------------------------------------------------------------------------------------

# 50 copies of the origin, the labeled points among them, and 3 other points; self-tuning
# weights join the far pair (rows 51, 52) to the copies by edges of weight ~1e-18 (found by
# fuzzing: scipy's Cholesky / SuperLU reported the harmonic system singular)
ALL_BUT_THREE = np.vstack(
    [np.zeros((50, 2)), [[3.17145527, -0.84518446], [-33.79770916, 6.28888153]], [[-31.0, 13.3]]]
)


def _all_but_three():
    y = np.full(53, -1)
    y[[7, 30]] = [0, 1]
    return ALL_BUT_THREE, y


def _repeated(multiplicity, seed=0):
    """Two blobs of 12 points each, every point ``multiplicity`` times; one label per blob,
    on a copy."""
    X, y = make_blobs(24, centers=[[0, 0], [4, 0]], cluster_std=0.7, random_state=seed)
    X, y = np.repeat(X, multiplicity, axis=0), np.repeat(y, multiplicity)
    y_semi = np.full_like(y, -1)
    for c in (0, 1):
        y_semi[np.flatnonzero(y == c)[0]] = c
    return X, y, y_semi


def _cluster_of_copies(multiplicity):
    """A cluster of ``multiplicity`` copies of one point among 20 others; one label on a copy,
    one outside (with one neighbour, self-tuning weights: a singular system before)."""
    rng = np.random.default_rng(13)
    X = np.vstack([np.zeros((multiplicity, 2)), rng.normal(size=(20, 2))])
    y = np.full(len(X), -1)
    y[0], y[multiplicity + 3] = 0, 1
    return X, y


# -- GFHF and Poisson learning on copies ----------------------------------------------------------


def _fit_quietly(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DisconnectedGraphWarning)
        warnings.simplefilter("ignore", UserWarning)  # e.g. a degenerate-looking answer
        return est.fit(X, y)


def _check_harmonic(clf, y):
    labeled = y >= 0
    F = exact_harmonic(clf.graph_, labeled, np.eye(2)[y[labeled]])
    reached = ~np.isnan(F[:, 0])
    np.testing.assert_array_equal(clf.unreachable_, ~reached)
    np.testing.assert_allclose(clf.label_distributions_[reached], F[reached], atol=1e-7)


@pytest.mark.parametrize("weights", ["self-tuning", "heat", "connectivity"])
@pytest.mark.parametrize("n_neighbors", [1, 2, 3, 5, 7])
def test_gfhf_on_all_but_three_copies_is_the_exact_harmonic_solution(weights, n_neighbors):
    X, y = _all_but_three()
    clf = _fit_quietly(GFHF(n_neighbors=n_neighbors, weights=weights), X, y)
    _check_harmonic(clf, y)


@pytest.mark.parametrize("weights", ["self-tuning", "heat", "connectivity"])
@pytest.mark.parametrize("multiplicity", [2, 5, 50])
@pytest.mark.parametrize("n_neighbors", [1, 3, 7])
def test_gfhf_around_a_cluster_of_copies_is_the_exact_harmonic_solution(
    weights, multiplicity, n_neighbors
):
    X, y = _cluster_of_copies(multiplicity)
    clf = _fit_quietly(GFHF(n_neighbors=n_neighbors, weights=weights), X, y)
    _check_harmonic(clf, y)


# 25 copies of the origin (one labeled 0), 25 of (10, 0) (one labeled 1) and 4 points between
TWO_CLUSTERS = np.vstack(
    [
        np.zeros((25, 2)),
        np.tile([10.0, 0.0], (25, 1)),
        [[3.04, -0.52], [9.99, 1.98], [0.08, -0.02], [3.13, 0.45]],
    ]
)


@pytest.mark.parametrize("n_neighbors", range(1, 8))
def test_copies_of_a_labeled_point_take_its_label(n_neighbors):
    """Before, self-tuning weights gave the copies the smallest positive scale of the data,
    and the solve reported a singular system (4-7 neighbours) or returned wrong values (2-3:
    scores -0.0004 and 1.0004, the point at distance 0.08 from the copies labeled 0 given
    class 1)."""
    y = np.full(54, -1)
    y[[3, 30]] = [0, 1]
    clf = _fit_quietly(GFHF(n_neighbors=n_neighbors), TWO_CLUSTERS, y)
    _check_harmonic(clf, y)
    np.testing.assert_array_equal(clf.transduction_[:50], np.repeat([0, 1], 25))
    assert clf.transduction_[52] == 0  # next to the copies labeled 0
    assert np.all((clf.label_distributions_ >= 0) & (clf.label_distributions_ <= 1))
    # a new point on a labeled point: its label
    np.testing.assert_array_equal(clf.predict(TWO_CLUSTERS[[3, 30]]), [0, 1])


@pytest.mark.parametrize("multiplicity", [2, 5])
def test_every_point_repeated(multiplicity):
    X, y, y_semi = _repeated(multiplicity)
    clf = _fit_quietly(GFHF(), X, y_semi)
    _check_harmonic(clf, y_semi)
    for i in np.flatnonzero(y_semi >= 0):
        copies = np.flatnonzero(np.all(X == X[i], axis=1))
        assert copies.size == multiplicity
        assert np.all(clf.transduction_[copies] == y_semi[i])
    if multiplicity == 2:  # 5 copies and 7 neighbours: the graph falls apart
        assert np.mean(clf.transduction_ == y) > 0.9


@pytest.mark.parametrize("weights", ["self-tuning", "heat", "connectivity"])
@pytest.mark.parametrize("n_neighbors", [1, 2, 3, 5, 7])
def test_poisson_on_all_but_three_copies_is_the_exact_solution(weights, n_neighbors):
    X, y = _all_but_three()
    clf = _fit_quietly(PoissonLearning(n_neighbors=n_neighbors, weights=weights), X, y)
    labeled = y >= 0
    Y = np.eye(2)[y[labeled]]
    U, unreachable = poisson_function(clf.graph_, labeled, Y)
    exact = exact_poisson(clf.graph_, labeled, Y)
    np.testing.assert_array_equal(unreachable, np.isnan(exact[:, 0]))
    np.testing.assert_allclose(U, exact, atol=1e-7)


@pytest.mark.parametrize("weights", ["self-tuning", "heat", "connectivity"])
@pytest.mark.parametrize("multiplicity", [2, 5, 50])
def test_poisson_around_a_cluster_of_copies_is_the_exact_solution(weights, multiplicity):
    X, y = _cluster_of_copies(multiplicity)
    clf = _fit_quietly(PoissonLearning(n_neighbors=3, weights=weights), X, y)
    labeled = y >= 0
    Y = np.eye(2)[y[labeled]]
    U, unreachable = poisson_function(clf.graph_, labeled, Y)
    exact = exact_poisson(clf.graph_, labeled, Y)
    np.testing.assert_array_equal(unreachable, np.isnan(exact[:, 0]))
    np.testing.assert_allclose(U, exact, atol=1e-7 * np.nanmax(np.abs(exact)))


# -- the solves: zero weights, weakly joined sets --------------------------------------------------


def test_an_explicit_zero_weight_joins_nothing():
    """A weight stored as 0 (an underflowed exp) is no edge: the points behind it are
    unreachable, not a singular system."""
    W = sp.csr_matrix(
        (
            [1.0, 1.0, 0.0, 0.0, 2.0, 2.0],
            ([0, 1, 1, 2, 2, 3], [1, 0, 2, 1, 3, 2]),
        ),
        shape=(4, 4),
    )
    assert W.nnz == 6  # the zeros are stored
    labeled = np.array([True, False, False, False])
    assert LabeledGraph.build(W, labeled, [[1.0, 0.0]]).unreachable.tolist() == [
        False,
        False,
        True,
        True,
    ]
    F, unreachable = harmonic_function(W, labeled, np.array([[1.0, 0.0]]), method="direct")
    np.testing.assert_array_equal(F[1], [1.0, 0.0])
    assert np.isnan(F[2:]).all() and unreachable[2:].all()
    U, unreachable = poisson_function(W, np.array([True, True, False, False]), np.eye(2))
    assert np.isnan(U[2:]).all() and unreachable[2:].all() and np.isfinite(U[:2]).all()


def test_contracting_places_sums_their_edges_exactly_symmetrically():
    """``contract`` is the graph of ``P^T W P`` without self-loops (``P`` the places'
    indicator matrix), summed in one pass over the edges, and exactly symmetric (each edge
    read once), with weights of many orders of magnitude."""
    rng = np.random.default_rng(0)
    n, m = 300, 40
    W = sp.random(n, n, density=0.05, random_state=1, format="csr")
    W.data = 10.0 ** rng.uniform(-30, 0, W.nnz)
    W = sp.csr_matrix(W + W.T)
    W.setdiag(0)
    W.eliminate_zeros()
    place = rng.integers(0, m, n)
    place[:m] = np.arange(m)  # every place used
    P = sp.csr_matrix((np.ones(n), (np.arange(n), place)), shape=(n, m))
    expected = (P.T @ W @ P).toarray()
    np.fill_diagonal(expected, 0.0)
    Wc = contract(W, place)
    assert Wc.shape == (m, m) and not Wc.diagonal().any()
    assert (Wc != Wc.T).nnz == 0
    np.testing.assert_allclose(Wc.toarray(), expected, rtol=1e-13, atol=0)


def _weakly_joined(weak=1e-20):
    """Two 6-cliques (weights 1) joined by one edge of weight ``weak`` between vertices 5
    and 6, and a path 12 - 13 hanging off vertex 0 by weight 0.5."""
    W = np.zeros((14, 14))
    W[:6, :6] = W[6:12, 6:12] = 1.0
    W[5, 6] = W[6, 5] = weak
    W[0, 12] = W[12, 0] = 0.5
    W[12, 13] = W[13, 12] = 2.0
    np.fill_diagonal(W, 0.0)
    return W


def _tailed_island():
    """The graph of :func:`_weakly_joined` and two points on the second clique: vertex 14
    joined to vertex 7 by weight 1e-4 (part of the clique's strongly joined set, with a
    small degree) and vertex 15 hanging off vertex 8 by weight 1e-9 alone (its whole degree,
    but below WEAK_LINK times vertex 8's).  The set's edges out total 1e-9 (to 15), far above
    WEAK_LINK times vertex 14's degree: a test on the smallest degree finds no weak set, yet
    the clique with its tail is joined to the rest by the weight 1e-20 alone.  Heat weights
    on millions of points give such sets (a tight pair, small-degree points next to it,
    sparser points hanging off them)."""
    W = np.zeros((16, 16))
    W[:14, :14] = _weakly_joined()
    W[7, 14] = W[14, 7] = 1e-4
    W[8, 15] = W[15, 8] = 1e-9
    return W


@pytest.mark.parametrize("method", ["direct", "cg"])
@pytest.mark.parametrize("graph, joined", [(_weakly_joined, 12), (_tailed_island, 16)])
def test_harmonic_values_of_a_weakly_joined_set(method, graph, joined):
    """The second clique (with its tail), unlabeled, reaches the labels only through the
    weight 1e-20: in float64 its rows of D - W sum to 0.  The harmonic solution there is
    constant, the value across the weak edge, not rounding noise amplified 1e20 times."""
    W = graph()
    labeled = np.zeros(len(W), dtype=bool)
    labeled[[1, 2]] = True
    Y = np.array([[1.0, 0.0], [0.0, 1.0]])
    F, unreachable = harmonic_function(W, labeled, Y, method=method, tol=1e-12)
    exact = exact_harmonic(W, labeled, Y)
    assert not unreachable.any()
    np.testing.assert_allclose(F, exact, atol=1e-8)
    np.testing.assert_allclose(F[6:joined], np.tile(F[5], (joined - 6, 1)), atol=1e-12)


def test_poisson_values_of_a_weakly_joined_labeled_set():
    """A label in the second clique: its source flows out through the weight 1e-20, so the
    solution there is about 1e20 -- well defined, and solved from the edge weights alone."""
    W = _weakly_joined()
    labeled = np.zeros(14, dtype=bool)
    labeled[[1, 8]] = True
    U, _ = poisson_function(W, labeled, np.eye(2))
    exact = exact_poisson(W, labeled, np.eye(2))
    assert np.abs(exact).max() > 1e19
    np.testing.assert_allclose(U, exact, rtol=1e-10)
    assert np.all(np.argmax(U[6:12], axis=1) == 1) and np.all(np.argmax(U[:6], axis=1) == 0)


def test_poisson_weakly_joined_labeled_set_beyond_the_dense_size_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(laplace, "HARMONIC_DIRECT_MAX", 10)
    labeled = np.zeros(14, dtype=bool)
    labeled[[1, 8]] = True
    with pytest.raises(ValueError, match="numerically singular") as info:
        poisson_function(_weakly_joined(), labeled, np.eye(2))
    assert str(info.value) == NUMERICALLY_SINGULAR


def test_poisson_large_system_holds_a_vertex_of_the_weakly_joined_set_at_zero(monkeypatch):
    """Beyond the dense size, one weakly joined labeled set per component is solved by the
    LU with the vertex held at 0 taken inside the set: vertex 0, hanging off the labeled
    clique by a weight 1e-20, would leave the clique's rows singular."""
    monkeypatch.setattr(laplace, "HARMONIC_DIRECT_MAX", 3)
    W = np.zeros((8, 8))
    W[1:, 1:] = 1.0
    np.fill_diagonal(W, 0.0)
    W[0, 4] = W[4, 0] = 1e-20
    labeled = np.zeros(8, dtype=bool)
    labeled[[2, 6]] = True
    U, _ = poisson_function(W, labeled, np.eye(2), method="direct")
    np.testing.assert_allclose(U, exact_poisson(W, labeled, np.eye(2)), atol=1e-12)


def test_excess_solve_is_the_solution_of_the_m_matrix_system():
    rng = np.random.default_rng(1)
    for m in (1, 3, 70, 150):  # one panel, several panels and a partial one
        W = rng.uniform(size=(m, m)) * (rng.uniform(size=(m, m)) < 0.3)
        W = W + W.T
        excess = rng.uniform(size=m) * (rng.uniform(size=m) < 0.2)
        excess[-1] = 1.0
        B = rng.normal(size=(m, 2))
        A = np.diag(excess + W.sum(axis=1) - W.diagonal()) - (W - np.diag(W.diagonal()))
        np.testing.assert_allclose(excess_solve(W, excess, B), np.linalg.solve(A, B), atol=1e-10)


# -- graph weights and widths --------------------------------------------------------------------


def test_self_tuning_scale_of_copies_is_their_distance_to_the_nearest_other_point():
    # three copies of the origin, and a tight group far away (its own scales are 0.1-0.2)
    X = np.array([[0.0], [0.0], [0.0], [5.0], [5.1], [5.2], [5.4]])
    W, sigma = self_tuning_graph(X, 2)
    np.testing.assert_allclose(sigma[:3], 5.0)  # not the smallest positive scale, 0.1
    np.testing.assert_allclose(sigma[3:], [0.2, 0.1, 0.2, 0.3])
    assert W[0, 1] == 1.0 and W[1, 2] == 1.0  # copies: weight 1
    assert np.all(W.data > 0) and np.all(np.isfinite(W.data))


def test_heat_width_ignores_the_edges_between_copies():
    X, _, y_semi = _repeated(3)
    W = knn_graph(X, 4, weights="heat").tocoo()
    d2 = np.sum((X[W.row] - X[W.col]) ** 2, axis=1)
    assert (d2 == 0).any()
    t = d2[d2 > 0].mean()
    np.testing.assert_allclose(W.data, np.exp(-d2 / t), rtol=1e-12)
    clf = _fit_quietly(GFHF(n_neighbors=4, weights="heat"), X, y_semi)
    assert clf.t_ == pytest.approx(t, rel=1e-12)


def test_heat_width_of_a_graph_of_copies_only():
    """Every point 10 times and 4 neighbours: every edge joins copies (weight 1 whatever the
    width); the out-of-sample width is then the neighbour scale of the distinct points."""
    X, _, y_semi = _repeated(10)
    clf = _fit_quietly(GFHF(n_neighbors=4, weights="heat"), X, y_semi)
    assert np.all(clf.graph_.data == 1.0)
    assert clf.t_ == pytest.approx(neighbor_scale(X[::10], 4), rel=1e-12)


@pytest.mark.parametrize("sparse", [False, True])
def test_neighbor_scale_counts_copies_once(sparse):
    X = np.random.default_rng(0).normal(size=(300, 3))
    exact = neighbor_scale(X, 5)
    for copies in (np.repeat(X, 2, axis=0), np.repeat(X, 10, axis=0), np.vstack([X, X[:7]])):
        data = sp.csr_matrix(copies) if sparse else copies
        assert neighbor_scale(data, 5) == pytest.approx(exact, rel=1e-12)
    # one neighbour and every point twice: all nearest other points are copies
    assert neighbor_scale(np.repeat(X, 2, axis=0), 1) == pytest.approx(neighbor_scale(X, 1))
    # a graph: the mean over its edges of positive length
    Xd = np.repeat(X, 2, axis=0)
    W = knn_graph(Xd, 3).tocoo()
    d2 = np.sum((Xd[W.row] - Xd[W.col]) ** 2, axis=1)
    assert neighbor_scale(Xd, knn_graph(Xd, 3)) == pytest.approx(d2[d2 > 0].mean())


def test_neighbor_scale_of_identical_points_is_an_error():
    with pytest.raises(ValueError, match="all 6 rows of X are identical"):
        neighbor_scale(np.full((6, 2), 3.0))
    with pytest.raises(ValueError, match="identical"):
        neighbor_scale(sp.csr_matrix(np.ones((4, 3))), 2)


@pytest.mark.parametrize("name", ["LapRLSC", "LapSVM", "DALapRLSC", "SSDRWu"])
def test_graph_kernel_width_on_duplicated_rows(name):
    import structreg

    X, y = make_moons(60, noise=0.1, random_state=0)
    y_semi = np.full_like(y, -1)
    y_semi[:10] = y[:10]
    Est = getattr(structreg, name)
    for copies, params in ((10, {}), (2, {"n_neighbors": 1})):
        est = Est(**params)
        Xd = np.repeat(X, copies, axis=0)
        assert est._kernel_gamma(Xd) == pytest.approx(est._kernel_gamma(X), rel=1e-12)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted = est.fit(Xd, np.repeat(y_semi, copies))
        assert np.mean(fitted.predict(X) == y) > 0.75
