"""GFHF: harmonic property, clamping, agreement with LabelPropagation, out-of-sample rule."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_blobs, make_moons
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.semi_supervised import LabelPropagation

from structreg.models.harmonic import GFHF, DisconnectedGraphWarning, harmonic_function
from structreg.structure.graphs import HEAT_FLOOR, knn_graph


def _semi(y, n_per_class, seed=0):
    """Copy of y with all but ``n_per_class`` random labels per class set to -1."""
    rng = np.random.default_rng(seed)
    keep = np.concatenate(
        [rng.choice(np.flatnonzero(y == c), n_per_class, replace=False) for c in np.unique(y)]
    )
    y_semi = np.full_like(y, -1)
    y_semi[keep] = y[keep]
    return y_semi


@pytest.fixture
def moons():
    X, y = make_moons(150, noise=0.06, random_state=1)
    return X, y, _semi(y, 3)


def test_unlabeled_values_are_harmonic_and_labeled_clamped(moons):
    X, y, y_semi = moons
    clf = GFHF().fit(X, y_semi)
    W, F = clf.graph_, clf.label_distributions_
    unl = y_semi == -1
    degree = np.asarray(W.sum(axis=1)).ravel()
    # W f = D f on the unlabeled rows: each value is the weighted mean of its neighbours'
    np.testing.assert_allclose((W @ F)[unl], degree[unl, None] * F[unl], atol=1e-12)
    np.testing.assert_array_equal(F[~unl], np.eye(2)[y_semi[~unl]])
    np.testing.assert_allclose(F.sum(axis=1), 1.0)
    np.testing.assert_array_equal(clf.transduction_[~unl], y_semi[~unl])
    assert (clf.transduction_ == y).mean() > 0.95
    assert not clf.unreachable_.any()


def test_knn_graph_and_width(moons):
    X, _, y_semi = moons
    clf = GFHF(n_neighbors=5, weights="heat").fit(X, y_semi)
    expected = knn_graph(X, 5, weights="heat")
    assert abs(clf.graph_ - expected).max() == 0
    W = clf.graph_.tocoo()
    d2 = np.sum((X[W.row] - X[W.col]) ** 2, axis=1)
    assert clf.t_ == pytest.approx(d2.mean())
    np.testing.assert_allclose(W.data, np.exp(-d2 / clf.t_))
    assert GFHF(n_neighbors=5, weights="heat", t=0.3).fit(X, y_semi).t_ == 0.3


@pytest.mark.parametrize("diagonal", [0.0, 1.0])
def test_agrees_with_label_propagation_on_the_full_rbf_graph(diagonal):
    # LabelPropagation iterates F <- D^-1 W F with rbf_kernel's unit self-loops and clamps the
    # labeled rows; at its fixed point (D_uu - W_uu) F_u = W_ul Y_l, where the self-loops
    # cancel, so it is GFHF on the same affinities with the diagonal removed.
    X, y = make_blobs(90, centers=[[0, 0], [4, 0], [0, 4]], cluster_std=1.0, random_state=0)
    y_semi = _semi(y, 3)
    gamma = 0.5
    W = rbf_kernel(X, gamma=gamma)
    np.fill_diagonal(W, diagonal)
    ours = GFHF(graph=W).fit(X, y_semi)
    ref = LabelPropagation(kernel="rbf", gamma=gamma, max_iter=100000, tol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a ConvergenceWarning would void the comparison
        ref.fit(X, y_semi)
    np.testing.assert_array_equal(ours.transduction_, ref.transduction_)
    np.testing.assert_allclose(ours.label_distributions_, ref.label_distributions_, atol=1e-9)
    assert (ours.transduction_ == y).mean() > 0.9


def test_out_of_sample_rule_is_the_knn_weighted_average(moons):
    X, _, y_semi = moons
    clf = GFHF(n_neighbors=6, weights="heat").fit(X, y_semi)
    X_new = np.random.default_rng(3).uniform(-1.5, 2.5, size=(25, 2))
    X_new[0] = X[10]  # a training point: its own value enters with weight 1
    d2 = ((X_new[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)
    nearest = np.argsort(d2, axis=1)[:, :6]
    w = np.maximum(np.exp(-np.take_along_axis(d2, nearest, axis=1) / clf.t_), HEAT_FLOOR)
    assert (w == HEAT_FLOOR).any() and (w > HEAT_FLOOR).any()  # both sides of the floor
    expected = np.einsum("ik,ikc->ic", w, clf.label_distributions_[nearest]) / w.sum(1)[:, None]
    proba = clf.predict_proba(X_new)
    np.testing.assert_allclose(proba, expected, rtol=1e-10)
    np.testing.assert_array_equal(clf.predict(X_new), clf.classes_[expected.argmax(axis=1)])
    far = np.array([[1e3, 1e3]])  # every weight at the floor: the plain mean of the nearest
    nearest = np.argsort(((far - X) ** 2).sum(axis=1))[:6]
    np.testing.assert_allclose(
        clf.predict_proba(far), clf.label_distributions_[nearest].mean(axis=0)[None], rtol=1e-12
    )


def test_unlabeled_component_gets_the_prior_with_a_warning(rng):
    A, yA = make_blobs(40, centers=[[0, 0], [3, 0]], cluster_std=0.4, random_state=0)
    B = rng.normal(size=(15, 2)) * 0.3 + [100.0, 100.0]  # far away: no edge to A
    X = np.vstack([A, B])
    y_semi = np.r_[_semi(yA, 4), np.full(15, -1)]
    y_semi[np.flatnonzero(y_semi == 1)[1:4]] = -1  # class 1 keeps 1 label: prior 4:1
    with pytest.warns(DisconnectedGraphWarning, match="15 unlabeled training point"):
        clf = GFHF(n_neighbors=4).fit(X, y_semi)
    far = np.arange(len(X)) >= 40
    np.testing.assert_array_equal(clf.unreachable_, far)
    np.testing.assert_allclose(clf.label_distributions_[far], [[0.8, 0.2]] * 15)
    np.testing.assert_array_equal(clf.transduction_[far], 0)
    assert np.all(np.isfinite(clf.label_distributions_))
    # the connected part is still harmonic
    W, F = clf.graph_, clf.label_distributions_
    unl = (y_semi == -1) & ~far
    degree = np.asarray(W.sum(axis=1)).ravel()
    np.testing.assert_allclose((W @ F)[unl], degree[unl, None] * F[unl], atol=1e-12)


def test_isolated_vertex_of_a_precomputed_graph(moons):
    X, _, y_semi = moons
    W = knn_graph(X, 7, weights="heat").tolil()
    i = np.flatnonzero(y_semi == -1)[0]
    W[i, :] = 0
    W[:, i] = 0
    with pytest.warns(DisconnectedGraphWarning, match="1 unlabeled"):
        clf = GFHF(graph=sp.csr_matrix(W), weights="heat").fit(X, y_semi)
    assert clf.unreachable_.sum() == 1 and clf.unreachable_[i]
    # the width of the out-of-sample rule: mean squared distance to the 7 nearest points
    d2 = np.sort(((X[:, None] - X[None]) ** 2).sum(axis=2), axis=1)[:, 1:8]
    assert clf.t_ == pytest.approx(d2.mean())


def test_harmonic_function_small_chain():
    W = sp.csr_matrix(np.array([[0, 2, 0, 0], [2, 0, 1, 0], [0, 1, 0, 0], [0, 0, 0, 0.0]]))
    F, unreachable = harmonic_function(W, np.array([True, False, False, False]), [[1.0]])
    np.testing.assert_allclose(F[:3, 0], 1.0)
    assert np.isnan(F[3, 0]) and unreachable.tolist() == [False, False, False, True]


@pytest.mark.filterwarnings("ignore::structreg.exceptions.UnlabeledScoringWarning")
def test_label_conventions(moons):
    X, y, y_semi = moons
    names = np.array(["left", "right"], dtype=object)[y]
    names[y_semi == -1] = None
    clf = GFHF().fit(X, names)
    assert list(clf.classes_) == ["left", "right"]
    ref = GFHF().fit(X, y_semi)
    np.testing.assert_array_equal(clf.transduction_, names_of(ref.transduction_))
    # -1 as a real class: the unlabeled mask says which samples are unlabeled
    pm = np.where(y == 0, -1, 1)
    clf = GFHF().fit(X, pm, unlabeled=y_semi == -1)
    np.testing.assert_array_equal(clf.classes_, [-1, 1])
    np.testing.assert_array_equal(clf.transduction_, np.where(ref.transduction_ == 0, -1, 1))
    assert clf.score(X, pm) == pytest.approx(ref.score(X, y))
    assert ref.score(X, y_semi) == 1.0  # -1 markers are ignored by score


def names_of(codes):
    return np.array(["left", "right"], dtype=object)[codes]


def test_errors(moons):
    X, y, y_semi = moons
    bad = X.copy()
    bad[4, 0] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        GFHF().fit(bad, y_semi)
    with pytest.raises(ValueError, match="at least 2 classes; got 0 labeled sample"):
        GFHF().fit(X, np.full_like(y, -1))
    with pytest.raises(ValueError, match="at least 2 classes; got 150 labeled sample.* 1 class"):
        GFHF().fit(X, np.zeros_like(y))
    with pytest.raises(ValueError, match="precomputed graph has shape \\(10, 10\\)"):
        GFHF(graph=np.ones((10, 10))).fit(X, y_semi)
    with pytest.raises(ValueError, match="graph='knn' or a precomputed"):
        GFHF(graph="class-wise").fit(X, y_semi)
    with pytest.raises(ValueError, match="n_neighbors=200 must be smaller"):
        GFHF(n_neighbors=200).fit(X, y_semi)
    with pytest.raises(ValueError, match="unlabeled must be a boolean mask"):
        GFHF().fit(X, y, unlabeled=np.zeros(3, bool))
    clf = GFHF().fit(X, y_semi)
    with pytest.raises(ValueError, match="X has 3 features, but GFHF is expecting 2"):
        clf.predict(np.ones((2, 3)))
    with pytest.raises(ValueError, match="Input X contains NaN"):
        clf.predict_proba(bad)


# -- issue 21: self-tuning weights, the CG solve and its switch to a factorisation ------------


def _dense_harmonic(W, labeled, Y):
    """F_u = (D_uu - W_uu)^{-1} W_ul Y_l by numpy's dense solve."""
    W = np.asarray(W.toarray() if sp.issparse(W) else W, dtype=float).copy()
    np.fill_diagonal(W, 0.0)
    u = ~labeled
    A = np.diag(W[u].sum(axis=1)) - W[np.ix_(u, u)]
    F = np.zeros((len(labeled), Y.shape[1]))
    F[labeled] = Y
    F[u] = np.linalg.solve(A, W[np.ix_(u, labeled)] @ Y)
    return F


def test_default_graph_is_self_tuning(moons):
    X, _, y_semi = moons
    clf = GFHF().fit(X, y_semi)
    D2 = ((X[:, None] - X[None]) ** 2).sum(axis=2)
    np.fill_diagonal(D2, np.inf)
    sigma = np.sqrt(np.sort(D2, axis=1)[:, 6])  # the 7th nearest other point
    np.testing.assert_allclose(clf.local_scale_, sigma, rtol=1e-12)
    W = clf.graph_.toarray()
    edges = W != 0
    np.testing.assert_allclose(W[edges], np.exp(-4 * D2 / np.outer(sigma, sigma))[edges])
    assert not hasattr(clf, "t_")
    labeled = y_semi != -1
    F = _dense_harmonic(clf.graph_, labeled, np.eye(2)[y_semi[labeled]])
    np.testing.assert_allclose(
        clf.label_distributions_, F / F.sum(axis=1, keepdims=True), atol=1e-12
    )


def test_self_tuning_out_of_sample_rule(moons):
    X, _, y_semi = moons
    clf = GFHF(n_neighbors=6).fit(X, y_semi)
    X_new = np.random.default_rng(4).uniform(-1.5, 2.5, size=(20, 2))
    d2 = ((X_new[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)
    nearest = np.argsort(d2, axis=1)[:, :6]
    d2k = np.take_along_axis(d2, nearest, axis=1)
    sigma_new = np.sqrt(d2k[:, -1:])  # distance to the 6th nearest training point
    w = np.exp(-4 * d2k / (sigma_new * clf.local_scale_[nearest]))
    expected = np.einsum("ik,ikc->ic", w, clf.label_distributions_[nearest]) / w.sum(1)[:, None]
    np.testing.assert_allclose(clf.predict_proba(X_new), expected, rtol=1e-10)


def test_connectivity_weights(moons):
    X, _, y_semi = moons
    clf = GFHF(weights="connectivity").fit(X, y_semi)
    assert np.all(clf.graph_.data == 1.0)
    X_new = X[:5] + 0.01
    _, ind = clf.neighbors_.kneighbors(X_new)
    np.testing.assert_allclose(clf.predict_proba(X_new), clf.label_distributions_[ind].mean(1))


def test_width_only_with_heat_weights(moons):
    X, _, y_semi = moons
    with pytest.raises(ValueError, match="t is the width of heat weights"):
        GFHF(t=0.5, weights="self-tuning").fit(X, y_semi)
    with pytest.raises(ValueError, match="weights"):
        GFHF(weights="dot").fit(X, y_semi)


def _chain_and_blob_graphs(rng):
    """A long chain (mesh-like: CG is slow, an LU stays sparse) and a random 8-regular-ish
    graph (expander-like: CG is fast), 300 vertices each, positive random weights."""
    n = 300
    chain = sp.diags([rng.uniform(0.5, 1.5, n - 1)], [1], shape=(n, n))
    rows = np.repeat(np.arange(n), 4)
    cols = rng.integers(0, n, size=4 * n)
    blob = sp.coo_matrix((rng.uniform(0.5, 1.5, 4 * n), (rows, cols)), shape=(n, n))
    return [sp.csr_matrix(G + G.T) for G in (chain, blob)]


@pytest.mark.parametrize("method", ["cg", "direct"])
def test_harmonic_solvers_match_the_dense_solve(rng, method):
    for W in _chain_and_blob_graphs(rng):
        labeled = np.zeros(300, dtype=bool)
        labeled[[0, 150, 299]] = True
        Y = np.eye(3)
        F, unreachable = harmonic_function(W, labeled, Y, method=method, tol=1e-12)
        assert not unreachable.any()
        np.testing.assert_allclose(F, _dense_harmonic(W, labeled, Y), atol=1e-9)


def test_auto_factorises_a_chain_and_runs_cg_on_an_expander(rng, monkeypatch):
    """The cost model sees the chain's long paths (CG slow) and the expander's short ones."""
    import structreg.solvers.laplace as base

    monkeypatch.setattr(base, "_cholmod_fits", lambda A: False)  # the LU of bounded fill

    monkeypatch.setattr(base, "HARMONIC_DIRECT_MAX", 10)
    chain, blob = _chain_and_blob_graphs(rng)
    labeled = np.zeros(300, dtype=bool)
    labeled[[0, 299]] = True
    for W, expected in ((chain, "direct"), (blob, "cg")):
        F, _, info = base.solve_harmonic(W, labeled, np.eye(2), "auto", 1e-10, None)
        assert info["method"] == expected, info
        np.testing.assert_allclose(F, _dense_harmonic(W, labeled, np.eye(2)), atol=1e-7)
    assert info["n_iter"] <= 2 * 40  # 2 columns


def test_cg_reaches_the_harmonic_labels_on_a_large_graph(rng):
    """GFHF beyond the direct size: the CG solution's labels are the direct solve's."""
    X = np.vstack([rng.normal(size=(1300, 20)), rng.normal(size=(1300, 20)) + 1.5])
    y = np.repeat([0, 1], 1300)
    y_semi = _semi(y, 5, seed=1)
    clf = GFHF(n_neighbors=8).fit(X, y_semi)
    assert clf.solver_ == "cg" and clf.n_iter_ > 1
    labeled = y_semi != -1
    F = _dense_harmonic(clf.graph_, labeled, np.eye(2)[y_semi[labeled]])
    np.testing.assert_allclose(clf.label_distributions_, F / F.sum(1)[:, None], atol=1e-4)
    np.testing.assert_array_equal(clf.transduction_, F.argmax(axis=1))


def test_a_factorisation_that_would_not_fit_is_not_taken(rng, monkeypatch):
    """The expander's LU fills in beyond HARMONIC_FILL_MAX: when the cost model asks for a
    factorisation (here forced by a CG limit of 0), CG runs instead, to the dense solution
    (with CHOLMOD and multigrid out of the way: tests/test_laplace_solvers.py covers them)."""
    import structreg.solvers.laplace as base

    monkeypatch.setattr(base, "_cholmod_fits", lambda A: False)
    monkeypatch.setattr(base, "amg_available", lambda: False)

    chain, blob = _chain_and_blob_graphs(rng)
    A = (sp.diags(np.asarray(blob.sum(axis=1)).ravel() + 0.1) - blob).tocsr()
    B = rng.normal(size=(300, 2))
    # at 300 points the blob's LU holds about 10x its nonzeros (a dense one 34x); the cap is
    # lowered to 3x so that it does not fit, while the chain's (about 1x) does
    monkeypatch.setattr(base, "HARMONIC_FILL_MAX", 3)
    assert base._bounded_factor_solve(A, B, 1e-10) is None
    A_chain = (sp.diags(np.asarray(chain.sum(axis=1)).ravel() + 0.1) - chain).tocsr()
    F = base._bounded_factor_solve(A_chain, B, 1e-10)
    np.testing.assert_allclose(A_chain @ F, B, atol=1e-10)

    monkeypatch.setattr(base, "HARMONIC_DIRECT_MAX", 10)
    monkeypatch.setattr(base, "CG_MAX_ITERATIONS", 0)
    labeled = np.zeros(300, dtype=bool)
    labeled[[0, 299]] = True
    F, _, info = base.solve_harmonic(blob, labeled, np.eye(2), "auto", 1e-10, None)
    assert info["method"] == "cg" and info["n_iter"] > 2 * 2
    np.testing.assert_allclose(F, _dense_harmonic(blob, labeled, np.eye(2)), atol=1e-7)


@pytest.mark.parametrize("method", ["direct", "cg"])
@pytest.mark.parametrize("kind", ["one-hot", "row sums differ"])
def test_solution_with_one_column_derived_from_the_row_sums(method, kind):
    """One-of-c targets: the last column is the row sum minus the others (harmonic functions'
    rows sum to the targets' common row sum); other targets: every column solved.  Both
    against numpy's dense solve, on a graph with an unlabeled component of its own."""
    rng = np.random.default_rng(3)
    n = 120
    G = sp.random(n, n, density=0.05, random_state=4, data_rvs=lambda k: rng.uniform(0.1, 2, k))
    G = sp.lil_matrix(G + G.T + sp.diags([np.ones(n - 1)], [1], shape=(n, n)))
    G = sp.lil_matrix(G + G.T)
    G[110:, :110] = 0  # points 110-119: a component without labels
    G[:110, 110:] = 0
    W = sp.csr_matrix(G)
    labeled = np.zeros(n, dtype=bool)
    labeled[[0, 10, 20, 30, 40, 50]] = True
    Y = np.eye(3)[[0, 1, 2, 0, 1, 2]]
    if kind == "row sums differ":
        Y = Y * np.arange(1.0, 7.0)[:, None]
    F, unreachable = harmonic_function(W, labeled, Y, method=method, tol=1e-12)
    assert unreachable[110:].all() and not unreachable[:110].any()
    reach = np.arange(110)
    expected = _dense_harmonic(W[:110][:, :110], labeled[:110], Y)
    np.testing.assert_allclose(F[reach], expected, atol=1e-9)
    assert np.isnan(F[110:]).all()


def _three_per_class(y, seed):
    rng = np.random.default_rng(seed)
    y_semi = np.full_like(y, -1)
    for c in np.unique(y):
        pick = rng.choice(np.flatnonzero(y == c), 3, replace=False)
        y_semi[pick] = c
    return y_semi


@pytest.mark.parametrize("data", ["moons", "digits"])
def test_auto_weights_keep_the_labeling_of_smaller_normalized_cut(data):
    """weights="auto" equals the fit of the weighting whose labeling has the smaller
    normalized cut of the kNN graph, in labels, scores and the out-of-sample rule."""
    from sklearn.datasets import load_digits

    from structreg.structure.labeled_graph import normalized_cut

    if data == "moons":
        X, y = make_moons(3000, noise=0.1, random_state=0)
    else:
        X, y = load_digits(return_X_y=True)
    y_semi = _three_per_class(y, 2)
    fits = {w: GFHF(weights=w).fit(X, y_semi) for w in ("self-tuning", "heat")}
    pattern = fits["self-tuning"].graph_
    cuts = {w: normalized_cut(pattern, fit.transduction_) for w, fit in fits.items()}
    auto = GFHF().fit(X, y_semi)
    best = min(cuts, key=cuts.get)
    assert auto.weights_ == best
    np.testing.assert_array_equal(auto.transduction_, fits[best].transduction_)
    # solved on from a looser solve: the same solution to the solver's tolerance
    np.testing.assert_allclose(
        auto.label_distributions_, fits[best].label_distributions_, atol=1e-5
    )
    np.testing.assert_allclose(
        auto.predict_proba(X[:50]), fits[best].predict_proba(X[:50]), atol=1e-5
    )
    assert ("t_" in vars(auto)) == (best == "heat")
    if data == "moons":  # self-tuning weights join the moons across the sparse gap here
        assert best == "heat" and np.mean(auto.transduction_ == y) > 0.99
        assert np.mean(fits["self-tuning"].transduction_ == y) < 0.97


def test_normalized_cut_counts_each_cut_edge_against_its_class():
    from structreg.structure.labeled_graph import normalized_cut

    # path 0-1-2-3-4, classes {0, 1} and {2, 3, 4}: edge 1-2 is cut; volumes 3 and 5
    W = sp.diags([np.ones(4), np.ones(4)], [1, -1], shape=(5, 5)).tocsr()
    assert normalized_cut(W, np.array([0, 0, 1, 1, 1])) == pytest.approx(1 / 3 + 1 / 5)
    assert normalized_cut(W, np.zeros(5)) == 0.0
    W2 = W.copy()
    W2.data *= 7.0  # weights are ignored
    assert normalized_cut(W2, np.array([0, 0, 1, 1, 1])) == pytest.approx(1 / 3 + 1 / 5)


def test_exact_ties_go_to_the_nearest_labeled_point():
    """Points of a component without labels get the class prior; with one label per class
    that prior is an exact tie, which the nearest labeled point's class breaks (not the
    first class, as an argmax would), in transduction_ and predict alike."""
    X = np.r_[np.zeros((5, 1)) + np.arange(5)[:, None] * 0.1, [[10.0], [10.1], [10.2]]]
    X = np.r_[X, [[30.0], [30.1], [30.2]]]  # a component near the class-1 label's side
    y = np.full(len(X), -1)
    y[0], y[5] = 0, 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = GFHF(n_neighbors=2, weights="connectivity").fit(X, y)
    far = np.arange(8, 11)
    assert clf.unreachable_[far].all()
    np.testing.assert_allclose(clf.label_distributions_[far], 0.5, atol=1e-12)  # a tie
    assert (clf.transduction_[far] == 1).all()  # nearest label: x = 10 (class 1)
    assert (clf.predict(X[far] + 0.01) == 1).all()


def test_auto_weights_fit_both_weightings_at_any_size(monkeypatch):
    """weights="auto" fits both weightings whatever the number of points: no size at which
    the choice changes (a fit of 300 points runs both, and so would one of 1e9)."""
    X, y = make_moons(300, noise=0.1, random_state=0)
    fitted = []
    original = GFHF._use_graph

    def spy(self, X, graph, index):
        fitted.append(graph.weights)
        return original(self, X, graph, index)

    monkeypatch.setattr(GFHF, "_use_graph", spy)
    clf = GFHF().fit(X, _three_per_class(y, 0))
    assert fitted[:2] == ["self-tuning", "heat"] and clf.weights_ in fitted
    for n in (10**6 + 1, 10**7, 10**9):
        assert GFHF()._weightings(n) == ("self-tuning", "heat")


def test_auto_weights_search_the_neighbours_once(knn_searches):
    """weights="auto" builds the self-tuning and the heat graph from one neighbour search,
    and gives what the two weightings give fitted on their own."""
    X, y = make_moons(300, noise=0.1, random_state=0)
    y_semi = np.full_like(y, -1)
    y_semi[[0, 1, 2, 3]] = y[[0, 1, 2, 3]]
    auto = GFHF().fit(X, y_semi)
    assert len(knn_searches) == 1  # (below 20,000 points it looks a few neighbours ahead)
    alone = GFHF(weights=auto.weights_).fit(X, y_semi)
    np.testing.assert_array_equal(auto.label_distributions_, alone.label_distributions_)


def test_heat_weights_are_floored_and_keep_every_knn_edge():
    """Heat weights never fall below HEAT_FLOOR: the graph has the kNN graph's edges, a far
    cluster joined only by edges whose exp(-d^2 / t) underflows is reached (no
    DisconnectedGraphWarning) and the weights inside each cluster are the plain heat weights."""
    rng = np.random.default_rng(0)
    near = rng.normal(size=(60, 2)) * 0.3
    far = rng.normal(size=(8, 2)) * 0.3 + [40.0, 0.0]  # exp(-40^2 / 1) is 0 in float64
    X = np.vstack([near, far])
    y_semi = np.full(len(X), -1)
    y_semi[[0, 1]] = [0, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("error", DisconnectedGraphWarning)
        clf = GFHF(n_neighbors=10, weights="heat", t=1.0).fit(X, y_semi)
    pattern = knn_graph(X, 10, weights="connectivity")
    assert (abs(clf.graph_ - clf.graph_.T) > 0).nnz == 0
    assert (clf.graph_ != 0).toarray().tolist() == (pattern != 0).toarray().tolist()
    assert clf.graph_.data.min() == HEAT_FLOOR
    assert not clf.unreachable_.any()
    edges = clf.graph_.tocoo()
    d2 = ((X[edges.row] - X[edges.col]) ** 2).sum(axis=1)
    np.testing.assert_allclose(edges.data, np.maximum(np.exp(-d2 / clf.t_), HEAT_FLOOR))
    assert np.exp(-d2.max() / clf.t_) == 0.0  # the edge to the far cluster underflowed
