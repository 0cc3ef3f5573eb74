"""The solvers of Laplace-type systems beyond the direct size: multigrid-preconditioned CG,
CHOLMOD's sparse Cholesky (where scikit-sparse is installed) and the measured crossover of
``method="auto"`` (structreg.solvers.laplace.solve_laplace_system, its cost model
choose_method), each against a dense solve of the same system."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_moons
from sklearn.exceptions import ConvergenceWarning

import structreg.solvers.laplace as base
from structreg.models import GFHF, PoissonLearning
from structreg.solvers import multigrid
from structreg.solvers.laplace import choose_method, hop_depth
from structreg.solvers.laplace import solve_harmonic as _harmonic
from structreg.solvers.laplace import solve_poisson as _poisson
from structreg.solvers.multigrid import amg_conjugate_gradient, amg_preconditioner, amg_strength
from structreg.structure.graphs import self_tuning_graph


def _moons_graph(n=3000, seed=0):
    """A mesh-like kNN graph (2-D data: plain CG is slow on it) with 3 labels per class."""
    X, y = make_moons(n, noise=0.1, random_state=seed)
    W = self_tuning_graph(X, 7)[0]
    rng = np.random.default_rng(seed)
    labeled = np.zeros(n, dtype=bool)
    for c in (0, 1):
        labeled[rng.choice(np.flatnonzero(y == c), 3, replace=False)] = True
    return W, labeled, np.eye(2)[y[labeled]], y


def _dense_solution(solve, W, labeled, targets):
    """The same problem by the dense path (every system below HARMONIC_DIRECT_MAX is)."""
    F, _, info = solve(W, labeled, targets, "direct", 1e-12, None)
    assert info["method"] == "direct"
    return F


def test_the_v_cycle_is_a_symmetric_positive_definite_operator():
    W, labeled, _, _ = _moons_graph(1500)
    free = ~labeled
    A = (sp.diags(np.asarray(W.sum(axis=1)).ravel()[free]) - W[free][:, free]).tocsr()
    apply = amg_preconditioner(A)
    V = np.random.default_rng(0).normal(size=(A.shape[0], 4))
    G = V.T @ apply(V)
    np.testing.assert_allclose(G, G.T, rtol=1e-10, atol=1e-12 * np.abs(G).max())
    assert np.linalg.eigvalsh((G + G.T) / 2).min() > 0


@pytest.mark.parametrize("solve", [_harmonic, _poisson], ids=["harmonic", "poisson"])
def test_multigrid_gives_the_direct_solution(solve):
    W, labeled, targets, _ = _moons_graph()
    F, unreachable, info = solve(W, labeled, targets, "amg", 1e-10, None)
    assert info["method"] == "amg" and 0 < info["n_iter"] < 200
    assert not unreachable.any()
    reference = _dense_solution(solve, W, labeled, targets)
    scale = np.abs(reference).max()
    np.testing.assert_allclose(F, reference, atol=1e-7 * scale)


def test_multigrid_solves_a_graph_of_several_components():
    """Poisson learning's singular Laplacian with two labeled components (two null vectors):
    the multigrid CG on the consistent system, then centred per component, as the LU."""
    W1, labeled1, targets1, _ = _moons_graph(2500, seed=1)
    W2, labeled2, targets2, _ = _moons_graph(2500, seed=2)
    W = sp.block_diag([W1, W2]).tocsr()
    labeled = np.concatenate([labeled1, labeled2])
    targets = np.vstack([targets1, targets2])
    U, _, info = _poisson(W, labeled, targets, "amg", 1e-10, None)
    assert info["method"] == "amg"
    reference = _dense_solution(_poisson, W, labeled, targets)
    np.testing.assert_allclose(U, reference, atol=1e-7 * np.abs(reference).max())


def test_multigrid_cg_on_a_plain_spd_system_against_numpy():
    """amg_conjugate_gradient on its own: a shifted 2-D grid Laplacian, several columns."""
    n = 40
    T = sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1])
    A = (sp.kronsum(T, T) + 1e-3 * sp.eye(n * n)).tocsr()
    C = np.random.default_rng(1).normal(size=(n * n, 3))
    result = amg_conjugate_gradient(A, C, tol=1e-12)
    assert result.converged and result.n_iter < 60
    np.testing.assert_allclose(result.x, np.linalg.solve(A.toarray(), C), rtol=1e-8, atol=1e-9)


def _wide_weight_grid(n=60, seed=0):
    """A Jacobi-scaled grid Laplacian with weights log-uniform over 1e-8 .. 1, its first row
    of vertices grounded (the harmonic system's labeled neighbours), and its null vector's
    stand-in ``1 / s``: nearly singular along sets behind light edges."""
    rng = np.random.default_rng(seed)
    idx = np.arange(n * n).reshape(n, n)
    rows = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    cols = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    W = sp.coo_matrix((10 ** rng.uniform(-8, 0, rows.size), (rows, cols)), shape=(n * n,) * 2)
    W = (W + W.T).tocsr()
    grounded = np.where(np.arange(n * n) < n, 1.0, 0.0)
    A = sp.diags(np.asarray(W.sum(axis=1)).ravel() + grounded) - W
    s = 1 / np.sqrt(A.diagonal())
    N = sp.csr_matrix(A.multiply(s[:, None]).multiply(s[None, :]))
    return N, 1 / s, rng.normal(size=(n * n, 2))


def test_multigrid_meets_the_plain_norm_rule(monkeypatch):
    """The V-cycle norm of the residual reaches tol before its plain norm on a nearly
    singular system; the solver goes on until both hold (plain CG's rule), unless asked
    not to (singular systems) or not allowed to restart."""
    N, near_null, C = _wide_weight_grid()
    result = amg_conjugate_gradient(N, C, near_null=near_null, tol=1e-8)
    plain = np.linalg.norm(C - N @ result.x, axis=0) / np.linalg.norm(C, axis=0)
    assert result.converged and np.all(plain <= 1e-8)
    metric_only = amg_conjugate_gradient(N, C, near_null=near_null, tol=1e-8, plain_rule=False)
    plain = np.linalg.norm(C - N @ metric_only.x, axis=0) / np.linalg.norm(C, axis=0)
    assert metric_only.converged and np.any(plain > 1e-8)
    assert np.all(metric_only.column_iter < result.column_iter)
    monkeypatch.setattr(multigrid, "AMG_RESTARTS", 0)
    once = amg_conjugate_gradient(N, C, near_null=near_null, tol=1e-8)
    np.testing.assert_array_equal(once.x, metric_only.x)


def test_multigrid_strength_of_connection_follows_the_spread_of_the_weights():
    """Aggregates keep off more edges where edges many orders lighter than their others are
    common: the wide-weight grid, not a uniform grid."""
    N, _, _ = _wide_weight_grid()
    assert amg_strength(N) == ("symmetric", {"theta": multigrid.AMG_THETA_TINY})
    n = 40
    T = sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1])
    uniform = (sp.kronsum(T, T) + 1e-3 * sp.eye(n * n)).tocsr()
    assert amg_strength(uniform) == ("symmetric", {"theta": multigrid.AMG_THETA})
    assert multigrid.AMG_THETA < multigrid.AMG_THETA_TINY


def test_multigrid_that_does_not_converge_warns():
    W, labeled, targets, _ = _moons_graph()
    with pytest.warns(ConvergenceWarning):
        _harmonic(W, labeled, targets, "amg", 1e-14, 2)


@pytest.fixture
def slow_cg(monkeypatch):
    """Every system above 10 unknowns goes to the cost model, which rules CG out on the
    mesh-like graphs of two moons."""
    monkeypatch.setattr(base, "HARMONIC_DIRECT_MAX", 10)
    return monkeypatch


def _auto(solve=_harmonic):
    W, labeled, targets, _ = _moons_graph()
    F, _, info = solve(W, labeled, targets, "auto", 1e-10, None)
    np.testing.assert_allclose(
        F, _dense_solution(solve, W, labeled, targets), atol=1e-7 * np.abs(F).max()
    )
    return info


@pytest.mark.parametrize("solve", [_harmonic, _poisson], ids=["harmonic", "poisson"])
def test_auto_takes_multigrid_for_large_slow_systems(slow_cg, solve):
    slow_cg.setattr(base, "_cholmod_fits", lambda A: False)
    slow_cg.setattr(base, "AMG_MIN_UNKNOWNS", 100)
    info = _auto(solve)
    assert info["method"] == "amg" and info["n_iter"] > 0


def test_auto_takes_the_bounded_lu_below_the_multigrid_size(slow_cg):
    slow_cg.setattr(base, "_cholmod_fits", lambda A: False)
    assert _auto()["method"] == "direct"


def test_auto_takes_multigrid_when_the_lu_does_not_fit(slow_cg):
    slow_cg.setattr(base, "_cholmod_fits", lambda A: False)
    slow_cg.setattr(base, "HARMONIC_FILL_MAX", 0.5)  # no LU fits
    assert _auto()["method"] == "amg"


def test_auto_goes_on_with_cg_when_nothing_replaces_it(slow_cg):
    slow_cg.setattr(base, "_cholmod_fits", lambda A: False)
    slow_cg.setattr(base, "HARMONIC_FILL_MAX", 0.5)
    slow_cg.setattr(base, "amg_available", lambda: False)
    assert _auto()["method"] == "cg"


def test_auto_takes_cholmod_where_installed(slow_cg):
    pytest.importorskip("sksparse.cholmod", reason="CHOLMOD needs scikit-sparse (optional)")
    slow_cg.setattr(base, "amg_available", lambda: False)
    slow_cg.setattr(base, "HARMONIC_FILL_MAX", 0.5)  # the LU would not fit: CHOLMOD solved
    info = _auto(_poisson)
    assert info["method"] == "direct"


def test_cholmod_is_not_taken_when_its_factor_may_not_fit(monkeypatch):
    pytest.importorskip("sksparse.cholmod", reason="CHOLMOD needs scikit-sparse (optional)")
    A = sp.eye(100, format="csr")
    assert base._cholmod_fits(A)
    monkeypatch.setattr(base, "available_memory", lambda: 100 * base.CHOLMOD_FILL_BYTES)
    assert not base._cholmod_fits(A)


def test_cholmod_refuses_a_singular_system():
    pytest.importorskip("sksparse.cholmod", reason="CHOLMOD needs scikit-sparse (optional)")
    L = sp.csr_matrix(np.array([[1.0, -1.0], [-1.0, 1.0]]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # CHOLMOD's own warning about the matrix
        assert base._cholmod_solve(L, np.ones((2, 1))) is None


@pytest.mark.parametrize("Estimator", [GFHF, PoissonLearning])
def test_estimators_report_multigrid(Estimator, slow_cg):
    slow_cg.setattr(base, "_cholmod_fits", lambda A: False)
    slow_cg.setattr(base, "AMG_MIN_UNKNOWNS", 100)
    X, y = make_moons(3000, noise=0.1, random_state=0)
    y_semi = np.full_like(y, -1)
    y_semi[:10] = y[:10]
    clf = Estimator(weights="self-tuning", tol=1e-10).fit(X, y_semi)
    assert clf.solver_ == "amg"
    slow_cg.setattr(base, "amg_available", lambda: False)
    reference = Estimator(weights="self-tuning", tol=1e-10).fit(X, y_semi)
    assert reference.solver_ == "direct"
    np.testing.assert_array_equal(clf.transduction_, reference.transduction_)


def test_hop_depth_is_the_distance_to_the_nearest_source():
    path = sp.diags([np.ones(9), np.ones(9)], [-1, 1], shape=(10, 10), format="csr")
    sources = np.zeros(10, dtype=bool)
    sources[[0, 9]] = True
    assert hop_depth(path, sources) == 4  # vertices 4 and 5 are 4 edges from the nearer end
    sources[:] = False
    sources[0] = True
    assert hop_depth(path, sources) == 9
    two = sp.block_diag([path, path], format="csr")  # a component without a source: 0
    assert hop_depth(two, np.r_[sources, np.zeros(10, bool)]) == 9


def _scaled_system(W, labeled):
    free = ~labeled
    degree = np.asarray(W.sum(axis=1)).ravel()
    A = (sp.diags(degree[free]) - W[free][:, free]).tocsr()
    return A, (W[free][:, labeled] @ np.eye(2)[np.arange(labeled.sum()) % 2])[:, :1]


@pytest.mark.parametrize("kind", ["expander", "mesh"])
def test_the_cost_model_predicts_which_side_of_the_cg_limit_a_system_is(kind, monkeypatch):
    """The model rules CG in where it converges within CG_MAX_ITERATIONS per column (a kNN
    graph of 50-d blobs) and out where it does not (two moons), measured by running it."""
    from sklearn.datasets import make_blobs

    monkeypatch.setattr(base, "HARMONIC_DIRECT_MAX", 10)
    if kind == "expander":
        X = make_blobs(4000, n_features=50, centers=4, random_state=0)[0]
    else:
        X = make_moons(4000, noise=0.1, random_state=0)[0]
    W = self_tuning_graph(X, 7)[0]
    labeled = np.zeros(len(X), dtype=bool)
    labeled[np.random.default_rng(0).choice(len(X), 6, replace=False)] = True
    A, C = _scaled_system(W, labeled)
    chosen = choose_method(A)
    _, info = base.solve_laplace_system(A, C, "cg", 1e-6, None)
    assert (chosen == "cg") == (info["n_iter"] <= base.CG_MAX_ITERATIONS)
    assert chosen == ("cg" if kind == "expander" else "replace")


def test_auto_weights_give_the_fit_of_the_chosen_weighting():
    """weights="auto" decides on solves to DECISION_TOL and solves the chosen weighting on to
    tol from there: the labels and scores of a fit with that weighting alone."""
    from structreg.datasets import load_dataset

    X, y = load_dataset("usps", return_X_y=True)
    X, y = np.asarray(X, dtype=float)[:4000], np.unique(y[:4000], return_inverse=True)[1]
    y_semi = np.full_like(y, -1)
    for c in np.unique(y):
        y_semi[np.flatnonzero(y == c)[:3]] = c
    auto = GFHF(tol=1e-8).fit(X, y_semi)
    alone = GFHF(weights=auto.weights_, tol=1e-8).fit(X, y_semi)
    assert auto.solver_ == alone.solver_ == "cg"
    np.testing.assert_array_equal(auto.transduction_, alone.transduction_)
    np.testing.assert_allclose(auto.label_distributions_, alone.label_distributions_, atol=1e-6)


@pytest.mark.parametrize("Estimator", [GFHF, PoissonLearning])
def test_estimators_say_which_neighbour_search_built_the_graph(Estimator):
    X, y = make_moons(300, noise=0.1, random_state=0)
    y_semi = np.full_like(y, -1)
    y_semi[:6] = y[:6]
    assert Estimator().fit(X, y_semi).knn_algorithm_ == "exact"
    W = self_tuning_graph(X, 7)[0]
    assert Estimator(graph=W).fit(X, y_semi).knn_algorithm_ == "precomputed"


def test_poisson_class_sizes_solve_the_harmonic_system_as_the_poisson_one_was(slow_cg):
    """class_prior="auto" solves GFHF's system on the same graph, which the cost model sends
    to multigrid as it did the Poisson system; the labels are those of the direct solves."""
    slow_cg.setattr(base, "_cholmod_fits", lambda A: False)
    slow_cg.setattr(base, "AMG_MIN_UNKNOWNS", 100)
    methods = []
    original = base.solve_laplace_system

    def spy(*args, **kwargs):
        X, info = original(*args, **kwargs)
        methods.append(info["method"])
        return X, info

    slow_cg.setattr(base, "solve_laplace_system", spy)
    X, y = make_moons(3000, noise=0.1, random_state=0)
    y_semi = np.full_like(y, -1)
    y_semi[:10] = y[:10]
    clf = PoissonLearning(tol=1e-10).fit(X, y_semi)
    assert clf.solver_ == "amg" and methods == ["amg", "amg"]
    slow_cg.setattr(base, "amg_available", lambda: False)
    reference = PoissonLearning(tol=1e-10).fit(X, y_semi)
    assert reference.solver_ == "direct" and methods[-1] == "direct"
    np.testing.assert_array_equal(clf.transduction_, reference.transduction_)


def _scaled_moons_system(n, seed=0):
    """The Jacobi-scaled harmonic system of a moons kNN graph and its null vector's
    near-null vector ``D^{1/2} 1`` (as ``solve_laplace_system`` passes it)."""
    W, labeled, _, _ = _moons_graph(n, seed)
    free = ~labeled
    A = (sp.diags(np.asarray(W.sum(axis=1)).ravel()[free]) - W[free][:, free]).tocsr()
    s = 1 / np.sqrt(A.diagonal())
    return sp.csr_matrix(A.multiply(s[:, None]).multiply(s[None, :])), 1 / s


def _pyamg_v_cycle(N, near_null):
    """PyAMG's own hierarchy of the options amg_preconditioner asks for, in one call, and its
    V-cycle as a preconditioner."""
    import pyamg

    hierarchy = pyamg.smoothed_aggregation_solver(
        N,
        B=None if near_null is None else near_null.reshape(-1, 1),
        symmetry="hermitian",
        strength=amg_strength(N),
        smooth=("jacobi", {"weighting": "local"}),
        max_coarse=multigrid.AMG_MAX_COARSE,
    )
    return hierarchy, hierarchy.aspreconditioner(cycle="V")


@pytest.mark.parametrize(
    "n, scaled",
    [(20000, True), (20000, False), (300, True)],
    ids=["scaled-near-null", "constants", "one-level"],
)
def test_the_v_cycle_is_pyamgs_own(n, scaled):
    """The hierarchy built one level at a time from CSR copies and the package's V-cycle on
    it: the same levels as PyAMG's one-call hierarchy of the same options and, applied to
    vectors, PyAMG's own aspreconditioner(cycle="V") to rounding (a system below
    AMG_MAX_COARSE: the pseudo-inverse alone)."""
    N, near_null = _scaled_moons_system(n)
    if not scaled:
        near_null = None
    hierarchy, reference = _pyamg_v_cycle(N, near_null)
    levels, coarsest = multigrid._hierarchy(
        sp.csr_matrix(N), None if near_null is None else near_null.reshape(-1, 1)
    )
    assert [A.shape for A, _, _ in levels] + [coarsest.shape] == [
        level.A.shape for level in hierarchy.levels
    ]
    assert len(levels) >= 2 if n > multigrid.AMG_MAX_COARSE else not levels
    for (A, P, R), level in zip(levels, hierarchy.levels, strict=False):
        assert A.format == P.format == R.format == "csr"
        np.testing.assert_allclose(P.toarray(), level.P.toarray(), rtol=1e-10, atol=1e-14)
    apply = amg_preconditioner(N, near_null)
    V = np.random.default_rng(1).normal(size=(N.shape[0], 3))
    expected = np.column_stack([reference @ V[:, j] for j in range(3)])
    got = apply(V)
    assert np.linalg.norm(got - expected) <= 1e-10 * np.linalg.norm(expected)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12 * np.abs(expected).max())


def test_the_set_up_leaves_pyamg_and_scipy_as_they_were(monkeypatch):
    """amg_preconditioner patches no class and writes into no PyAMG object: SciPy's BSR
    sum_duplicates is SciPy's own during and after every set-up call, and the level
    matrices of the hierarchies PyAMG built keep their objects, formats and entries after the
    set-up and the V-cycle's use."""
    import pyamg

    N, near_null = _scaled_moons_system(20000)
    own = {cls: cls.sum_duplicates for cls in (sp.bsr_array, sp.bsr_matrix)}
    built, seen = [], []
    original = pyamg.smoothed_aggregation_solver

    def record(*args, **kwargs):
        seen.append({cls: cls.sum_duplicates for cls in own})
        hierarchy = original(*args, **kwargs)
        matrices = [
            (level, name, getattr(level, name))
            for level in hierarchy.levels
            for name in ("A", "P", "R")
            if hasattr(level, name)
        ]
        built.append([(level, name, M, M.format, M.data.copy()) for level, name, M in matrices])
        return hierarchy

    monkeypatch.setattr(pyamg, "smoothed_aggregation_solver", record)
    apply = amg_preconditioner(N, near_null)
    apply(np.random.default_rng(2).normal(size=(N.shape[0], 2)))
    monkeypatch.undo()
    assert built and len(seen) == len(built)
    for methods in [*seen, {cls: cls.sum_duplicates for cls in own}]:
        assert all(methods[cls] is own[cls] for cls in own)
    formats = set()
    for matrices in built:
        for level, name, M, fmt, data in matrices:
            assert getattr(level, name) is M and M.format == fmt
            np.testing.assert_array_equal(M.data, data)
            formats.add(fmt)
    assert "bsr" in formats  # PyAMG's coarse levels and transfers, left as they were
    assert len(built) > 1  # one call per level
