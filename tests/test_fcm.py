"""Fuzzy c-means: constraints, monotone objective, optimality of both updates, recovery."""

import warnings

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import adjusted_rand_score
from sklearn.utils.estimator_checks import parametrize_with_checks

from structreg.clustering import FuzzyCMeans, fuzzy_cmeans


def objective(X, U, V, m):
    """J_m computed directly from its definition (no shared code with the estimator)."""
    diff = X[:, None, :] - V[None, :, :]
    return float(np.sum(U**m * np.sum(diff**2, axis=2)))


@pytest.fixture(scope="module")
def blobs():
    X, y, centers = make_blobs(
        n_samples=300, centers=3, cluster_std=0.5, random_state=0, return_centers=True
    )
    return X, y, centers


@pytest.fixture(scope="module")
def overlapping():
    # Overlapping blobs so that memberships are genuinely fuzzy.
    X, _ = make_blobs(n_samples=120, centers=4, cluster_std=2.0, random_state=3)
    return X


def assert_on_simplex(U):
    assert np.all(np.isfinite(U))
    assert np.all(U >= 0)
    np.testing.assert_allclose(U.sum(axis=1), 1.0, rtol=0, atol=1e-12)


# --- constraints and objective -------------------------------------------------------------


@pytest.mark.parametrize("m", [1.05, 1.5, 2.0, 3.0])
def test_memberships_on_simplex_train_and_new_points(overlapping, m):
    fcm = FuzzyCMeans(n_clusters=4, m=m, random_state=0).fit(overlapping)
    assert fcm.memberships_.shape == (120, 4)
    assert_on_simplex(fcm.memberships_)
    X_new = np.random.default_rng(1).normal(scale=20.0, size=(50, 2))
    U_new = fcm.predict_memberships(X_new)
    assert U_new.shape == (50, 4)
    assert_on_simplex(U_new)
    np.testing.assert_array_equal(fcm.predict(X_new), U_new.argmax(axis=1))
    # training memberships are the membership formula at the fitted centres
    np.testing.assert_allclose(fcm.predict_memberships(overlapping), fcm.memberships_)
    np.testing.assert_array_equal(fcm.predict(overlapping), fcm.labels_)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("m", [1.2, 2.0, 4.0])
def test_objective_history_never_increases(overlapping, seed, m):
    fcm = FuzzyCMeans(n_clusters=4, m=m, init="random", tol=1e-9, random_state=seed)
    fcm.fit(overlapping)
    h = fcm.objective_history_
    assert len(h) == fcm.n_iter_ + 1 >= 2
    assert np.all(np.diff(h) <= 1e-10 * np.abs(h[:-1]))
    assert h[-1] < h[0]
    # the reported objective is J_m of the reported memberships and centres
    J = objective(overlapping, fcm.memberships_, fcm.cluster_centers_, m)
    assert fcm.objective_ == pytest.approx(J, rel=1e-12)
    assert fcm.objective_ == h[-1]


def test_stopping_criterion_is_max_membership_change(overlapping):
    """Stops at the first iteration whose largest membership change is below tol."""
    init = overlapping[[0, 1, 2, 3]]
    tol = 1e-5
    _, U_n, _, n = fuzzy_cmeans(overlapping, 4, tol=tol, init=init)
    assert 2 < n < 300
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        _, U_prev, _, n_prev = fuzzy_cmeans(overlapping, 4, tol=tol, max_iter=n - 1, init=init)
    with pytest.warns(ConvergenceWarning):
        _, U_prev2, _, _ = fuzzy_cmeans(overlapping, 4, tol=tol, max_iter=n - 2, init=init)
    assert n_prev == n - 1
    assert np.max(np.abs(U_n - U_prev)) < tol
    assert np.max(np.abs(U_prev - U_prev2)) >= tol


# --- optimality of the two block updates ---------------------------------------------------


@pytest.fixture(scope="module", params=[1.3, 2.0, 3.0])
def converged(request, overlapping):
    m = request.param
    fcm = FuzzyCMeans(n_clusters=4, m=m, tol=1e-11, max_iter=5000, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        fcm.fit(overlapping)
    return overlapping, fcm.memberships_, fcm.cluster_centers_, m


def test_centres_are_stationary_for_fixed_memberships(converged):
    X, U, V, m = converged
    # central finite differences of J_m in every centre coordinate (J is quadratic in V,
    # so these are exact up to rounding)
    h = 1e-4
    grad = np.zeros_like(V)
    for j in range(V.shape[0]):
        for d in range(V.shape[1]):
            E = np.zeros_like(V)
            E[j, d] = h
            grad[j, d] = (objective(X, U, V + E, m) - objective(X, U, V - E, m)) / (2 * h)
    # scale: size of either half of the analytic gradient 2 sum_i u_ij^m (x_i - v_j)
    scale = 2 * np.sum(U**m) * np.max(np.abs(X))
    assert np.max(np.abs(grad)) < 1e-7 * scale
    # and the analytic gradient agrees (sanity of the finite differences themselves)
    analytic = -2 * ((U**m).T @ X - (U**m).sum(axis=0)[:, None] * V)
    np.testing.assert_allclose(grad, analytic, atol=1e-6 * scale)
    # J is convex in V for fixed U, so a stationary point is the minimum
    rng = np.random.default_rng(0)
    J0 = objective(X, U, V, m)
    for step in (1e-3, 1e-1, 1.0):
        for _ in range(20):
            assert objective(X, U, V + step * rng.normal(size=V.shape), m) >= J0 * (1 - 1e-12)


def test_memberships_minimise_objective_on_simplex(converged):
    X, U, V, m = converged
    rng = np.random.default_rng(1)
    J0 = objective(X, U, V, m)
    n, c = U.shape
    for t in (1e-4, 1e-2, 0.3, 1.0):
        for _ in range(30):
            R = rng.dirichlet(np.ones(c), size=n)  # random feasible memberships
            U_pert = (1 - t) * U + t * R  # convex combination: still on the simplex
            assert_on_simplex(U_pert)
            assert objective(X, U_pert, V, m) >= J0 * (1 - 1e-12)
    # moving a little mass between two clusters of a single point never helps either
    for _ in range(200):
        i, (a, b) = rng.integers(n), rng.choice(c, size=2, replace=False)
        eps = min(U[i, a], 1e-3) * rng.uniform()
        U_pert = U.copy()
        U_pert[i, a] -= eps
        U_pert[i, b] += eps
        assert objective(X, U_pert, V, m) >= J0 * (1 - 1e-14)


def test_one_centre_update_is_the_weighted_mean(overlapping):
    init = overlapping[[5, 50, 90, 110]] + 0.25  # off the data: no zero distance
    m = 2.0
    D2 = ((overlapping[:, None, :] - init[None]) ** 2).sum(axis=2)
    U0 = 1.0 / ((D2[:, :, None] / D2[:, None, :]) ** (1 / (m - 1))).sum(axis=2)
    with pytest.warns(ConvergenceWarning):
        V1, U1, hist, n_iter = fuzzy_cmeans(overlapping, 4, m=m, max_iter=1, init=init)
    assert n_iter == 1 and len(hist) == 2
    W = U0**m
    np.testing.assert_allclose(V1, W.T @ overlapping / W.sum(axis=0)[:, None], rtol=1e-12)
    assert hist[0] == pytest.approx(objective(overlapping, U0, init, m), rel=1e-12)
    D2 = ((overlapping[:, None, :] - V1[None]) ** 2).sum(axis=2)
    U1_direct = 1.0 / ((D2[:, :, None] / D2[:, None, :]) ** (1 / (m - 1))).sum(axis=2)
    np.testing.assert_allclose(U1, U1_direct, rtol=1e-10)


# --- recovery --------------------------------------------------------------------------------


def match_centres(found, true):
    dist = np.linalg.norm(found[:, None, :] - true[None, :, :], axis=2)
    rows, cols = linear_sum_assignment(dist)
    return dist[rows, cols]


@pytest.mark.parametrize("init", ["k-means++", "random"])
def test_recovers_separated_blobs(blobs, init):
    X, y, true_centres = blobs
    fcm = FuzzyCMeans(n_clusters=3, init=init, random_state=0).fit(X)
    assert adjusted_rand_score(y, fcm.labels_) == 1.0
    assert np.all(match_centres(fcm.cluster_centers_, true_centres) < 0.2)
    np.testing.assert_array_equal(fcm.fit_predict(X), fcm.labels_)


def test_small_fuzzifier_is_nearly_hard_and_matches_kmeans(blobs):
    X, y, _ = blobs
    fcm = FuzzyCMeans(n_clusters=3, m=1.05, random_state=0).fit(X)
    assert fcm.memberships_.max(axis=1).min() > 0.999
    km = KMeans(n_clusters=3, n_init=10, random_state=0).fit(X)
    assert adjusted_rand_score(km.labels_, fcm.labels_) == 1.0
    assert np.all(match_centres(fcm.cluster_centers_, km.cluster_centers_) < 1e-3)
    # larger m: fuzzier
    fuzzy = FuzzyCMeans(n_clusters=3, m=3.0, random_state=0).fit(X)
    assert fuzzy.memberships_.max(axis=1).mean() < fcm.memberships_.max(axis=1).mean()


def test_fuzzifier_close_to_one_is_numerically_stable():
    # d^(-2/(m-1)) with m = 1.001 overflows for any d < 1 if evaluated naively
    X, _ = make_blobs(n_samples=60, centers=3, cluster_std=0.5, random_state=2)
    for scale in (1e-100, 1.0, 1e100):
        fcm = FuzzyCMeans(n_clusters=3, m=1.001, random_state=0).fit(scale * X)
        assert_on_simplex(fcm.memberships_)
        assert np.all(np.isfinite(fcm.cluster_centers_))
        assert np.all(np.isfinite(fcm.objective_history_))


def test_scale_invariance_of_memberships(overlapping):
    init = overlapping[[0, 1, 2, 3]]
    ref = FuzzyCMeans(n_clusters=4, init=init, tol=1e-10).fit(overlapping)
    for scale in (1e-80, 1e80):
        fcm = FuzzyCMeans(n_clusters=4, init=scale * init, tol=1e-10).fit(scale * overlapping)
        np.testing.assert_allclose(fcm.memberships_, ref.memberships_, atol=1e-7)
        np.testing.assert_allclose(fcm.cluster_centers_ / scale, ref.cluster_centers_, rtol=1e-7)


# --- coinciding points and degenerate cases ------------------------------------------------


def test_point_on_a_centre_gets_membership_exactly_one(overlapping):
    fcm = FuzzyCMeans(n_clusters=4, random_state=0).fit(overlapping)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no inf - inf or 0 / 0 inside
        U = fcm.predict_memberships(fcm.cluster_centers_)
    np.testing.assert_array_equal(U, np.eye(4))
    # with other points around it, still exact and finite
    X_new = np.vstack([fcm.cluster_centers_[2], [100.0, -100.0], fcm.cluster_centers_[0]])
    U = fcm.predict_memberships(X_new)
    assert not np.any(np.isnan(U))
    np.testing.assert_array_equal(U[0], [0, 0, 1, 0])
    np.testing.assert_array_equal(U[2], [1, 0, 0, 0])
    assert_on_simplex(U)


def test_coinciding_centres_split_membership_evenly():
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [5.0, 5.0]])
    init = np.array([[0.0, 0.0], [0.0, 0.0], [5.0, 5.0]])
    with pytest.warns(ConvergenceWarning):
        V, U, hist, _ = fuzzy_cmeans(X, 3, init=init, max_iter=1)
    # after one step the two identical centres are still identical
    np.testing.assert_array_equal(V[0], V[1])
    assert_on_simplex(U)
    np.testing.assert_array_equal(U[:, 0], U[:, 1])
    fcm = FuzzyCMeans(n_clusters=3, init=init).fit(X)
    U = fcm.predict_memberships(np.vstack([fcm.cluster_centers_[0], [5.0, 5.0]]))
    np.testing.assert_array_equal(U[0], [0.5, 0.5, 0.0])
    assert np.all(np.isfinite(fcm.objective_history_))


def test_as_many_clusters_as_points_interpolates_exactly():
    X = np.array([[0.0, 0.0], [3.0, 1.0], [-2.0, 4.0]])
    centers, U, hist, _ = fuzzy_cmeans(X, 3, random_state=0)
    order = np.argmax(U, axis=1)
    np.testing.assert_array_equal(U, np.eye(3)[order])
    np.testing.assert_array_equal(centers[order], X)
    assert hist[-1] == 0.0


def test_single_cluster_is_the_mean(overlapping):
    fcm = FuzzyCMeans(n_clusters=1).fit(overlapping)
    np.testing.assert_array_equal(fcm.memberships_, 1.0)
    np.testing.assert_allclose(fcm.cluster_centers_[0], overlapping.mean(axis=0))
    np.testing.assert_array_equal(fcm.labels_, 0)


def test_duplicated_points(overlapping):
    X = np.vstack([overlapping, overlapping[:10]])
    fcm = FuzzyCMeans(n_clusters=4, random_state=0).fit(X)
    assert_on_simplex(fcm.memberships_)
    np.testing.assert_array_equal(fcm.memberships_[-10:], fcm.memberships_[:10])


# --- initialisation and reproducibility ----------------------------------------------------


@pytest.mark.parametrize("init", ["k-means++", "random"])
def test_reproducible_with_random_state(overlapping, init):
    a = FuzzyCMeans(n_clusters=4, init=init, random_state=42).fit(overlapping)
    b = FuzzyCMeans(n_clusters=4, init=init, random_state=42).fit(overlapping)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    np.testing.assert_array_equal(a.memberships_, b.memberships_)
    np.testing.assert_array_equal(a.objective_history_, b.objective_history_)
    rs = np.random.RandomState(7)
    c = fuzzy_cmeans(overlapping, 4, init=init, random_state=np.random.RandomState(7))
    d = fuzzy_cmeans(overlapping, 4, init=init, random_state=rs)
    np.testing.assert_array_equal(c[0], d[0])


def test_different_seeds_give_different_starts(overlapping):
    h = [
        FuzzyCMeans(n_clusters=4, init="random", random_state=s).fit(overlapping) for s in range(2)
    ]
    assert h[0].objective_history_[0] != h[1].objective_history_[0]


def test_explicit_array_init(blobs):
    X, y, true_centres = blobs
    fcm = FuzzyCMeans(n_clusters=3, init=true_centres + 0.5).fit(X)
    assert adjusted_rand_score(y, fcm.labels_) == 1.0
    # the initial objective is that of the given centres with their optimal memberships
    D2 = ((X[:, None, :] - (true_centres + 0.5)[None]) ** 2).sum(axis=2)
    U0 = 1.0 / ((D2[:, :, None] / D2[:, None, :]) ** 1.0).sum(axis=2)
    assert fcm.objective_history_[0] == pytest.approx(objective(X, U0, true_centres + 0.5, 2))
    # the order of the given centres is kept: cluster j starts from init[j]
    assert np.all(np.linalg.norm(fcm.cluster_centers_ - true_centres, axis=1) < 0.2)
    # random_state is irrelevant; the init array is not modified
    init = true_centres.copy()
    other = FuzzyCMeans(n_clusters=3, init=init, random_state=5).fit(X)
    np.testing.assert_array_equal(init, true_centres)
    again = FuzzyCMeans(n_clusters=3, init=init.tolist(), random_state=9).fit(X)
    np.testing.assert_array_equal(other.cluster_centers_, again.cluster_centers_)


# --- errors ----------------------------------------------------------------------------------


def test_errors():
    X = np.random.default_rng(0).normal(size=(5, 2))
    X_nan = X.copy()
    X_nan[1, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        fuzzy_cmeans(X_nan, 2)
    with pytest.raises(ValueError, match="NaN"):
        FuzzyCMeans(n_clusters=2).fit(X_nan)
    with pytest.raises(ValueError, match="infinity"):
        fuzzy_cmeans(np.where(np.isnan(X_nan), np.inf, X_nan), 2)
    with pytest.raises(ValueError, match=r"n_clusters=6 .*n_samples=5"):
        fuzzy_cmeans(X, 6)
    with pytest.raises(ValueError, match=r"n_clusters=6 .*n_samples=5"):
        FuzzyCMeans(n_clusters=6).fit(X)
    with pytest.raises(ValueError, match="n_clusters=0"):
        fuzzy_cmeans(X, 0)
    for m in (1.0, 0.5, -2.0, np.inf, np.nan):
        with pytest.raises(ValueError, match="fuzzifier m"):
            fuzzy_cmeans(X, 2, m=m)
    for m in (1.0, 0.5):
        with pytest.raises(ValueError, match="'m' parameter"):
            FuzzyCMeans(n_clusters=2, m=m).fit(X)
    for tol in (-1.0, 0.0, np.nan):
        with pytest.raises(ValueError, match="tol must be a positive"):
            fuzzy_cmeans(X, 2, tol=tol)
    with pytest.raises(ValueError, match="max_iter"):
        fuzzy_cmeans(X, 2, max_iter=0)
    with pytest.raises(ValueError, match="init"):
        fuzzy_cmeans(X, 2, init="kmeans")
    with pytest.raises(ValueError, match="'init' parameter"):
        FuzzyCMeans(n_clusters=2, init="kmeans").fit(X)
    with pytest.raises(ValueError, match=r"init array has shape \(3, 2\)"):
        fuzzy_cmeans(X, 2, init=np.zeros((3, 2)))
    with pytest.raises(ValueError, match=r"init array has shape \(2, 3\)"):
        FuzzyCMeans(n_clusters=2, init=np.zeros((2, 3))).fit(X)
    with pytest.raises(ValueError, match="NaN"):
        fuzzy_cmeans(X, 2, init=np.array([[0.0, np.nan], [1.0, 1.0]]))
    fcm = FuzzyCMeans(n_clusters=2, random_state=0).fit(X)
    with pytest.raises(ValueError, match="3 features"):
        fcm.predict_memberships(np.zeros((1, 3)))


def test_not_fitted():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        FuzzyCMeans().predict_memberships(np.zeros((2, 2)))


# --- scikit-learn compatibility --------------------------------------------------------------


@parametrize_with_checks([FuzzyCMeans(), FuzzyCMeans(m=1.5, init="random", n_clusters=2)])
def test_sklearn_compatible(estimator, check):
    check(estimator)
