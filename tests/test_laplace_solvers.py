"""The solvers of Laplace-type systems beyond the direct size: multigrid-preconditioned CG,
CHOLMOD's sparse Cholesky (where scikit-sparse is installed) and the measured crossover of
``method="auto"`` (structreg.models.graph_inference.solve_laplace_system), each against a
dense solve of the same system."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_moons
from sklearn.exceptions import ConvergenceWarning

import structreg.models.graph_inference as base
from structreg.models.harmonic import GFHF, _harmonic
from structreg.models.poisson import PoissonLearning, _poisson
from structreg.solvers import multigrid
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


def test_the_v_cycle_runs_on_csr_levels_with_the_block_format_answer():
    """The hierarchy's coarse operators and transfers are converted from PyAMG's 1 x 1 BSR
    blocks to CSR (a faster Gauss-Seidel kernel): the V-cycle applied to the same vectors is
    the one PyAMG's own hierarchy gives, to rounding."""
    import pyamg

    W, labeled, _, _ = _moons_graph(20000)
    free = ~labeled
    A = (sp.diags(np.asarray(W.sum(axis=1)).ravel()[free]) - W[free][:, free]).tocsr()
    built = []
    original = pyamg.smoothed_aggregation_solver

    def keep(*args, **kwargs):
        built.append(original(*args, **kwargs))
        return built[-1]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pyamg, "smoothed_aggregation_solver", keep)
        apply = amg_preconditioner(A)
    unconverted = original(
        A,
        symmetry="hermitian",
        strength=amg_strength(A),
        smooth=("jacobi", {"weighting": "local"}),
        max_coarse=multigrid.AMG_MAX_COARSE,
    )
    reference = unconverted.aspreconditioner(cycle="V")
    levels = built[0].levels
    assert len(levels) > 2
    assert all(level.A.format == "csr" for level in levels)
    assert all(level.P.format == "csr" and level.R.format == "csr" for level in levels[:-1])
    assert any(level.A.format == "bsr" for level in unconverted.levels)  # what PyAMG left
    V = np.random.default_rng(1).normal(size=(A.shape[0], 3))
    expected = np.column_stack([reference @ V[:, j] for j in range(3)])
    np.testing.assert_allclose(apply(V), expected, rtol=1e-10, atol=1e-12 * np.abs(expected).max())


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
    """Every system above 10 unknowns goes to CG, whose probe of 5 iterations is slow."""
    monkeypatch.setattr(base, "HARMONIC_DIRECT_MAX", 10)
    monkeypatch.setattr(base, "HARMONIC_CG_PROBE", 5)
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
    assert info["method"] == "amg" and info["n_iter"] > 5  # the probe counted too


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


def test_without_the_probe_a_failed_replacement_is_not_tried_again(slow_cg):
    """probe=False: the replacement is tried once; when it gives nothing, CG runs to the cap
    from the start (no probe, no second attempt) and meets the tolerance."""
    W, labeled, targets, _ = _moons_graph(1500)
    free = ~labeled
    degree = np.asarray(W.sum(axis=1)).ravel()
    A = (sp.diags(degree[free]) - W[free][:, free]).tocsr()
    s = 1 / np.sqrt(A.diagonal())
    N = sp.csr_matrix(A.multiply(s[:, None]).multiply(s[None, :]))
    C = s[:, None] * (W[free][:, labeled] @ targets[:, :1])
    calls = []
    Y, info = base._cg_or_replace(N, C, "auto", 1e-10, None, lambda: calls.append(1), False)
    assert calls == [1] and info["method"] == "cg" and info["n_iter"] > 5
    residual = np.linalg.norm(C - N @ Y) / np.linalg.norm(C)
    assert residual <= 1e-10


def test_auto_weights_skip_the_second_probe_after_multigrid(slow_cg):
    """weights="auto": where the first weighting's system needed multigrid, the second's
    (the same kNN graph) goes to multigrid without the CG probe, with the labels of a fit
    of that weighting alone (which runs the probe)."""
    slow_cg.setattr(base, "_cholmod_fits", lambda A: False)
    slow_cg.setattr(base, "AMG_MIN_UNKNOWNS", 100)
    X, y = make_moons(3000, noise=0.1, random_state=0)
    y_semi = np.full_like(y, -1)
    y_semi[:10] = y[:10]
    probes = []
    original = base._cg_or_replace

    def spy(*args, **kwargs):
        probes.append(kwargs.get("probe", args[6] if len(args) > 6 else True))
        return original(*args, **kwargs)

    slow_cg.setattr(base, "_cg_or_replace", spy)
    auto = GFHF(tol=1e-10).fit(X, y_semi)
    assert probes == [True, False] and auto.solver_ == "amg"
    probes.clear()
    alone = GFHF(weights=auto.weights_, tol=1e-10).fit(X, y_semi)
    assert probes == [True] and alone.solver_ == "amg"
    np.testing.assert_array_equal(auto.transduction_, alone.transduction_)
    np.testing.assert_allclose(auto.label_distributions_, alone.label_distributions_, atol=1e-7)
    if auto.weights_ == "heat":  # the self-tuning fit came first: its probe ran
        assert auto.n_iter_ < alone.n_iter_


@pytest.mark.parametrize("Estimator", [GFHF, PoissonLearning])
def test_estimators_say_which_neighbour_search_built_the_graph(Estimator):
    X, y = make_moons(300, noise=0.1, random_state=0)
    y_semi = np.full_like(y, -1)
    y_semi[:6] = y[:6]
    assert Estimator().fit(X, y_semi).knn_algorithm_ == "exact"
    W = self_tuning_graph(X, 7)[0]
    assert Estimator(graph=W).fit(X, y_semi).knn_algorithm_ == "precomputed"


def test_poisson_class_sizes_solve_the_harmonic_system_as_the_poisson_one_was(slow_cg):
    """class_prior="auto" solves GFHF's system on the same graph: by multigrid, without a
    second CG probe, when the Poisson system went to multigrid; the labels are those of the
    direct solves."""
    import structreg.models.poisson as poisson

    slow_cg.setattr(base, "_cholmod_fits", lambda A: False)
    slow_cg.setattr(base, "AMG_MIN_UNKNOWNS", 100)
    methods = []
    original = poisson.harmonic_function

    def spy(*args, **kwargs):
        methods.append(kwargs.get("method"))
        return original(*args, **kwargs)

    slow_cg.setattr(poisson, "harmonic_function", spy)
    X, y = make_moons(3000, noise=0.1, random_state=0)
    y_semi = np.full_like(y, -1)
    y_semi[:10] = y[:10]
    clf = PoissonLearning(tol=1e-10).fit(X, y_semi)
    assert clf.solver_ == "amg" and methods == ["amg"]
    slow_cg.setattr(base, "amg_available", lambda: False)
    reference = PoissonLearning(tol=1e-10).fit(X, y_semi)
    assert reference.solver_ == "direct" and methods[-1] == "auto"
    np.testing.assert_array_equal(clf.transduction_, reference.transduction_)


def test_the_set_up_merges_duplicate_block_entries_as_scipy_does():
    """Within the set-up, BSR matrices of 1 x 1 blocks merge duplicate entries by the CSR
    code: the same matrix as SciPy's own method; other block sizes take SciPy's; the method
    is restored after."""
    rng = np.random.default_rng(0)
    rows, cols = np.sort(rng.integers(0, 50, 400)), rng.integers(0, 50, 400)  # duplicates
    values = rng.normal(size=400)
    indptr = np.r_[0, np.cumsum(np.bincount(rows, minlength=50))]

    def block(size):
        data = np.repeat(values, size * size).reshape(-1, size, size)
        # copies: merging sorts the arrays in place
        return sp.bsr_array((data, cols.copy(), indptr.copy()), shape=(50 * size, 50 * size))

    original = sp.bsr_array.sum_duplicates
    expected, expected_wide = block(1), block(2)
    assert not expected.has_canonical_format
    expected.sum_duplicates()
    expected_wide.sum_duplicates()
    scalar, wide = block(1), block(2)
    with multigrid._scalar_block_deduplication():
        assert sp.bsr_array.sum_duplicates is not original
        scalar.sum_duplicates()
        wide.sum_duplicates()
    assert sp.bsr_array.sum_duplicates is original
    for got, want in [(scalar, expected), (wide, expected_wide)]:
        assert got.has_canonical_format and got.nnz == want.nnz < 400 * got.blocksize[0] ** 2
        np.testing.assert_array_equal(got.indptr, want.indptr)
        np.testing.assert_array_equal(got.indices, want.indices)
        np.testing.assert_allclose(got.data, want.data, rtol=1e-14)
