"""DA_LapRLSC (DAMR) and the two SSDR baselines: penalties against the papers' definitions,
closed forms against direct minimisation, equivalences and errors."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize
from sklearn.base import BaseEstimator
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs

from structreg import LapRLSC
from structreg.kernels import kernel_matrix
from structreg.models.damr import DALapRLSC
from structreg.models.ssdr import SSDRWang, SSDRWu
from structreg.solvers import NonConvexObjectiveWarning
from structreg.structure import knn_graph, laplacian
from structreg.structure.signed import (
    LabeledPairPenalty,
    SignedLaplacianPenalty,
    cluster_agreement,
    signed_laplacian,
)

# few labels on purpose: the degenerate-answer warning is expected where a test is not about it
pytestmark = [
    pytest.mark.filterwarnings("ignore::structreg.exceptions.DegenerateSolutionWarning"),
]


def _semi(y, idx):
    y_semi = np.full_like(y, -1)
    y_semi[idx] = y[idx]
    return y_semi


def _two_blobs(n=40, seed=0):
    """Two touching blobs; two labeled points per class on the far sides (so no kNN edge
    joins labeled points of different classes) and cross-cluster kNN edges in the middle."""
    X, y = make_blobs(n, centers=[[-1.2, 0], [1.2, 0]], cluster_std=0.8, random_state=seed)
    far = np.r_[np.argsort(X[:, 0])[:2], np.argsort(X[:, 0])[-2:]]
    return X, y, far


def _pm(y_codes):
    return np.where(y_codes == 1, 1.0, -1.0)[:, None]


def _minimise_alpha(K, labeled, Y, ridge, M):
    """argmin (1/l)||J K a - Y||^2 + ridge a^T K a + a^T K M K a by trust-region Newton on a.

    The Hessian is singular (K_D 1 = 0, and a linear or smooth kernel has tiny eigenvalues),
    so the trust-region subproblems are solved by Steihaug's truncated CG (``trust-ncg``),
    which a singular positive semidefinite Hessian does not trouble; SciPy 1.9's
    ``trust-exact`` does not return on the RBF case.  Run to a gradient norm of 1e-10 (checked
    below 1e-9): the outputs ``K a`` then agree with the closed form to ~1e-12."""
    n_lab = labeled.sum()
    Kl = K[labeled]
    KMK = K @ M @ K

    def fun(a):
        r = Kl @ a - Y[:, 0]
        val = r @ r / n_lab + ridge * a @ K @ a + a @ KMK @ a
        grad = 2 * Kl.T @ r / n_lab + 2 * ridge * K @ a + 2 * KMK @ a
        return val, grad

    hess = 2 * Kl.T @ Kl / n_lab + 2 * ridge * K + 2 * KMK
    res = minimize(
        fun,
        np.zeros(K.shape[0]),
        jac=True,
        hess=lambda a: hess,
        method="trust-ncg",
        options={"gtol": 1e-10, "maxiter": 1000},
    )
    # stationary (the objective is a convex quadratic): the gradient at rounding level, also
    # where the last step's predicted decrease is lost in rounding (scipy's "bad
    # approximation" message, not a failure to converge)
    assert np.linalg.norm(fun(res.x)[1]) <= 1e-9, res.message
    return res.x


# --------------------------------------------------------------------------- signed Laplacian
def _reference_LD(W0, y, labeled, clusters, reliability, rule="full"):
    """Dense eqs. (9)-(11) and (13) of the DAMR paper, literally."""
    Sc = np.where(clusters[:, None] == clusters[None, :], 1, -1)
    Sl = np.where(y[:, None] == y[None, :], 1, -1)
    S0 = np.where(labeled[:, None] & labeled[None, :], Sl, Sc)
    w = np.where(labeled, 1.0, reliability)  # reliability: a number or one per point
    T = np.outer(w, w)
    S = np.where((S0 == 1) | (T <= 0.5), 1, -1)
    W = np.where((S if rule == "full" else S0) == 1, W0, T * W0)
    return np.diag(W.sum(axis=1)) - W * S, W, S


def test_signed_laplacian_is_psd_with_the_unsigned_degree(rng):
    n = 30
    A = sp.random(n, n, density=0.2, random_state=0)
    W = (A + A.T).tocsr()
    W.setdiag(0)
    W.eliminate_zeros()
    signs = np.sign(rng.normal(size=(n, n)))
    S = sp.csr_matrix(np.triu(signs, 1) + np.triu(signs, 1).T)
    L = signed_laplacian(W, S).toarray()
    assert np.linalg.eigvalsh(L).min() > -1e-10
    f = rng.normal(size=n)
    Wd, Sd = W.toarray(), S.toarray()
    quad = 0.5 * np.sum(Wd * (f[:, None] - Sd * f[None, :]) ** 2)  # eq. (13)
    assert f @ L @ f == pytest.approx(quad, rel=1e-12)
    # the signed degree sum_j W_ij S_ij would not be PSD
    signed_degree = np.diag((Wd * Sd).sum(axis=1)) - Wd * Sd
    assert np.linalg.eigvalsh(signed_degree).min() < -1e-3


@pytest.mark.parametrize("rule", ["full", "scaled"])
@pytest.mark.parametrize("reliability", [0.0, 0.3, 0.6, 0.8, 1.0])
def test_signed_penalty_follows_eqs_9_to_13(rng, reliability, rule):
    X = rng.normal(size=(30, 2))
    y = rng.integers(0, 3, size=30)
    labeled = rng.random(30) < 0.4
    clusters = rng.integers(0, 3, size=30)
    pen = SignedLaplacianPenalty(clusters, reliability, n_neighbors=5, demoted_weight=rule)
    L = pen.build(X, y, labeled)
    assert sp.issparse(L)
    W0 = knn_graph(X, 5, weights="heat").toarray()
    ref, W, S = _reference_LD(W0, y, labeled, clusters, reliability, rule)
    np.testing.assert_allclose(L.toarray(), ref, atol=1e-14)
    assert np.linalg.eigvalsh(ref).min() > -1e-10
    # only kNN edges are stored
    assert L.nnz <= np.count_nonzero(W0) + 30
    f = rng.normal(size=30)
    assert f @ (L @ f) == pytest.approx(0.5 * np.sum(W * (f[:, None] - S * f[None, :]) ** 2))


def test_cluster_agreement_is_the_in_cluster_share_of_each_degree(rng):
    X = rng.normal(size=(25, 2))
    W = knn_graph(X, 4, weights="heat").toarray()
    clusters = rng.integers(-1, 3, size=25)
    expected = [
        sum(W[i, j] for j in range(25) if clusters[j] == clusters[i] >= 0) / W[i].sum()
        for i in range(25)
    ]
    np.testing.assert_allclose(cluster_agreement(sp.csr_matrix(W), clusters), expected)


def test_auto_reliability_is_eq_10_with_the_clusters_local_agreement(rng):
    X = rng.normal(size=(30, 2))
    y = rng.integers(0, 2, size=30)
    labeled = rng.random(30) < 0.3
    clusters = rng.integers(0, 2, size=30)
    L = SignedLaplacianPenalty(clusters, "auto", n_neighbors=5).build(X, y, labeled)
    W0 = knn_graph(X, 5, weights="heat").toarray()
    share = np.array([W0[i, clusters == clusters[i]].sum() / W0[i].sum() for i in range(30)])
    ref, _, S = _reference_LD(W0, y, labeled, clusters, share)
    np.testing.assert_allclose(L.toarray(), ref, atol=1e-14)
    assert np.any((S == -1) & ~(labeled[:, None] & labeled[None, :]))  # not vacuous


def test_auto_reliability_keeps_gaps_and_drops_cuts_through_dense_parts():
    """A chain cut in its middle (the clustering disagrees with the graph) signs no pair;
    two groups with a gap between them keep every cross-cluster pair signed."""
    unlabeled = np.zeros(40, bool)
    y = np.full(40, -1)
    chain = np.c_[np.arange(40.0), np.zeros(40)]
    halves = (np.arange(40) >= 20).astype(int)
    pen = SignedLaplacianPenalty(halves, "auto", n_neighbors=6, weights="connectivity")
    W, S = pen.signed_graph(chain, y, unlabeled)
    assert (S.toarray() == -1).sum() == 0
    W1, S1 = SignedLaplacianPenalty(halves, 1.0, n_neighbors=6).signed_graph(chain, y, unlabeled)
    assert (S1.toarray() == -1).sum() > 0  # trusting the cut signs the pairs across it
    groups = np.r_[
        np.c_[np.arange(20.0) * 0.1, np.zeros(20)], np.c_[3 + np.arange(20.0) * 0.1, np.zeros(20)]
    ]
    pen = SignedLaplacianPenalty(halves, "auto", n_neighbors=22, weights="heat")
    W, S = pen.signed_graph(groups, y, unlabeled)
    across = halves[:, None] != halves[None, :]
    edges = W.toarray() > 0
    assert np.any(edges & across)
    assert np.all(S.toarray()[edges & across] == -1)


def test_noise_cluster_ids_carry_no_discrimination(rng):
    X = rng.normal(size=(20, 2))
    y, labeled = np.zeros(20, int), np.zeros(20, bool)
    clusters = np.full(20, -1)
    L = SignedLaplacianPenalty(clusters, 1.0, n_neighbors=4).build(X, y, labeled)
    np.testing.assert_allclose(L.toarray(), laplacian(knn_graph(X, 4, weights="heat")).toarray())


# --------------------------------------------------------------------------- DALapRLSC
def test_low_reliability_reduces_to_laprlsc_exactly():
    X, y, far = _two_blobs()
    y_semi = _semi(y, far)
    W0 = knn_graph(X, 6)
    rows, cols = W0.nonzero()
    labeled = y_semi >= 0
    assert not np.any(labeled[rows] & labeled[cols] & (y[rows] != y[cols]))
    params = dict(kernel="rbf", gamma=0.5, gamma_A=1e-3, n_neighbors=6, random_state=0)
    lap = LapRLSC(gamma=0.5, gamma_A=1e-3, gamma_I=5.0, n_neighbors=6).fit(X, y_semi)
    Xt = np.random.default_rng(1).normal(size=(15, 2))
    for reliability in (0.0, 0.5):
        da = DALapRLSC(gamma_D=5.0, reliability=reliability, **params).fit(X, y_semi)
        np.testing.assert_allclose(
            da.penalty_matrix(X, y_semi).toarray(),
            lap.penalty_matrix(X, y_semi).toarray(),
            atol=1e-15,
        )
        np.testing.assert_allclose(da.decision_function(Xt), lap.decision_function(Xt), atol=1e-10)
    # not vacuous: the clusters cut kNN edges, so full reliability changes the penalty
    da1 = DALapRLSC(gamma_D=5.0, reliability=1.0, **params).fit(X, y_semi)
    c = da1.cluster_labels_
    assert np.any(c[rows] != c[cols])
    assert abs(da1.penalty_matrix(X, y_semi) - lap.penalty_matrix(X, y_semi)).max() > 1e-6


def test_labeled_pairs_of_different_classes_stay_signed_at_zero_reliability(rng):
    X, y = make_blobs(30, centers=[[-0.5, 0], [0.5, 0]], random_state=0)
    y_semi = _semi(y, np.arange(12))
    da = DALapRLSC(gamma_D=1.0, reliability=0.0, n_neighbors=5, random_state=0).fit(X, y_semi)
    lap = LapRLSC(gamma_I=1.0, n_neighbors=5).fit(X, y_semi)
    diff = (da.penalty_matrix(X, y_semi) - lap.penalty_matrix(X, y_semi)).toarray()
    labeled = y_semi >= 0
    assert np.abs(diff).max() > 0
    assert np.all(diff[~labeled] == 0) and np.all(diff[:, ~labeled] == 0)


@pytest.mark.parametrize("reliability", [0.0, 1.0])
def test_damr_closed_form_equals_direct_minimisation(rng, reliability):
    X, y = make_blobs(24, centers=[[-1, 0], [1, 0]], cluster_std=0.9, random_state=3)
    idx = np.r_[np.flatnonzero(y == 0)[:3], np.flatnonzero(y == 1)[:3]]
    y_semi = _semi(y, idx)
    gamma_A, gamma_D, n = 0.05, 4.0, len(X)
    clf = DALapRLSC(
        gamma=0.5,
        gamma_A=gamma_A,
        gamma_D=gamma_D,
        reliability=reliability,
        n_neighbors=4,
        random_state=0,
    ).fit(X, y_semi)
    labeled = y_semi >= 0
    L_D = (
        SignedLaplacianPenalty(clf.cluster_labels_, reliability, n_neighbors=4)
        .build(X, y, labeled)
        .toarray()
    )
    K = kernel_matrix(X, kernel="rbf", gamma=0.5)
    Y = _pm(y[labeled])
    M = gamma_D / n**2 * L_D
    alpha = _minimise_alpha(K, labeled, Y, gamma_A, M)
    # eq. (17) literally
    Kl, n_lab = K[labeled], labeled.sum()
    alpha17 = np.linalg.solve(Kl.T @ Kl / n_lab + gamma_A * K + K @ M @ K, Kl.T @ Y / n_lab)
    Xt = rng.normal(size=(8, 2))
    Kt = kernel_matrix(Xt, X, kernel="rbf", gamma=0.5)
    np.testing.assert_allclose(clf.decision_function(X), K @ alpha, atol=1e-6)
    np.testing.assert_allclose(clf.decision_function(Xt), Kt @ alpha, atol=1e-6)
    np.testing.assert_allclose(clf.decision_function(Xt), (Kt @ alpha17).ravel(), atol=1e-8)
    assert clf.solver_info_["convex"]


def test_damr_multiclass_default_fcm_and_transduction():
    X, y = make_blobs(90, centers=3, cluster_std=1.0, random_state=2)
    idx = np.r_[[np.flatnonzero(y == c)[:2] for c in range(3)]].ravel()
    clf = DALapRLSC(random_state=0).fit(X, _semi(y, idx))
    assert len(np.unique(clf.cluster_labels_)) == 3
    assert clf.decision_function(X).shape == (90, 3)
    assert np.mean(clf.transduction_ == y) > 0.9
    # random_state makes the default clustering reproducible
    again = DALapRLSC(random_state=0).fit(X, _semi(y, idx))
    np.testing.assert_array_equal(again.cluster_labels_, clf.cluster_labels_)


def test_damr_accepts_any_clusterer_and_clones_it():
    X, y, far = _two_blobs()
    km = KMeans(n_clusters=2, n_init=3, random_state=0)
    clf = DALapRLSC(clusterer=km).fit(X, _semi(y, far))
    assert not hasattr(km, "labels_")  # the given clusterer is left untouched
    np.testing.assert_array_equal(clf.cluster_labels_, clf.clusterer_.labels_)


class _BadClusterer(BaseEstimator):
    def fit_predict(self, X, y=None):
        return np.zeros((len(X), 2))


@pytest.mark.parametrize(
    "params, match",
    [
        ({"reliability": 1.5}, "reliability"),
        ({"reliability": -0.1}, "reliability"),
        ({"clusterer": KMeans}, "fit_predict"),
        ({"clusterer": "kmeans"}, "fit_predict"),
        ({"clusterer": _BadClusterer()}, "one integer cluster id per sample"),
        ({"n_neighbors": 100}, "n_neighbors"),
    ],
)
def test_damr_parameter_errors(params, match):
    X, y, far = _two_blobs()
    with pytest.raises(ValueError, match=match):
        DALapRLSC(**params).fit(X, _semi(y, far))


def test_signed_penalty_errors(rng):
    X, y, lab = rng.normal(size=(10, 2)), np.zeros(10, int), np.ones(10, bool)
    with pytest.raises(ValueError, match="reliability"):
        SignedLaplacianPenalty(np.zeros(10, int), 2.0, n_neighbors=3).build(X, y, lab)
    with pytest.raises(ValueError, match="integer ids of shape"):
        SignedLaplacianPenalty(np.zeros(9, int), n_neighbors=3).build(X, y, lab)
    with pytest.raises(ValueError, match="cluster id"):
        SignedLaplacianPenalty(None, n_neighbors=3).build(X, y, lab)
    with pytest.raises(ValueError, match="demoted_weight"):
        SignedLaplacianPenalty(np.zeros(10, int), demoted_weight="x").build(X, y, lab)


@pytest.mark.parametrize("make", [DALapRLSC, SSDRWu, SSDRWang])
def test_input_errors(make):
    X, y, far = _two_blobs()
    y_semi = _semi(y, far)
    bad = X.copy()
    bad[3, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        make().fit(bad, y_semi)
    one_class = np.full_like(y, -1)
    one_class[far[:2]] = 0
    with pytest.raises(ValueError, match="at least 2 classes"):
        make().fit(X, one_class)
    with pytest.raises(ValueError, match="at least 2 classes"):
        make().fit(X, np.full_like(y, -1))


# --------------------------------------------------------------------------- SSDR (Wu et al.)
def test_labeled_pair_penalties_match_eqs_4_and_5(rng):
    y = rng.integers(0, 3, size=15)
    labeled = rng.random(15) < 0.6
    n_lab = labeled.sum()
    both = labeled[:, None] & labeled[None, :]
    Ww = np.where(both & (y[:, None] == y[None, :]), 1.0 / n_lab, 0.0)
    Wb = np.where(both & (y[:, None] != y[None, :]), 1.0 / n_lab, 0.0)
    np.fill_diagonal(Ww, 0)
    X = np.zeros((15, 1))
    eye = np.eye(15)
    Lw = LabeledPairPenalty("within").build(X, y, labeled) @ eye
    Lb = LabeledPairPenalty("between").build(X, y, labeled) @ eye
    Lb_signed = LabeledPairPenalty("between", signed=True).build(X, y, labeled) @ eye
    np.testing.assert_allclose(Lw, np.diag(Ww.sum(1)) - Ww, atol=1e-14)
    np.testing.assert_allclose(Lb, np.diag(Wb.sum(1)) - Wb, atol=1e-14)
    np.testing.assert_allclose(Lb_signed, np.diag(Wb.sum(1)) + Wb, atol=1e-14)
    f = rng.normal(size=15)
    assert f @ Lb_signed @ f == pytest.approx(0.5 * np.sum(Wb * (f[:, None] + f[None, :]) ** 2))
    with pytest.raises(ValueError, match="between"):
        LabeledPairPenalty("within", signed=True).build(X, y, labeled)


@pytest.mark.parametrize("separation", ["signed", "subtract", "add"])
def test_ssdrwu_without_labeled_pair_terms_equals_laprlsc(rng, separation):
    X, y = make_blobs(40, centers=3, random_state=1)
    y_semi = _semi(y, np.arange(9))
    Xt = rng.normal(size=(10, 2)) * 4
    wu = SSDRWu(gamma=0.2, gamma_A=0.03, gamma_I=2.0, gamma_D=0.0, separation=separation)
    lap = LapRLSC(gamma=0.2, gamma_A=0.03, gamma_I=2.0)
    np.testing.assert_allclose(
        wu.fit(X, y_semi).decision_function(Xt),
        lap.fit(X, y_semi).decision_function(Xt),
        atol=1e-10,
    )


def _wu_penalty(X, y, labeled, n_neighbors, gamma_I, eta, gamma_D, sign, signed):
    n = len(X)
    L = laplacian(knn_graph(X, n_neighbors, weights="heat")).toarray()
    eye = np.eye(n)
    Lw = LabeledPairPenalty("within").build(X, y, labeled) @ eye
    Lb = LabeledPairPenalty("between", signed=signed).build(X, y, labeled) @ eye
    weight = gamma_D / labeled.sum()  # the pair terms averaged like the loss (issue 19)
    return gamma_I / n**2 * L + weight * (eta * Lw + sign * (1 - eta) * Lb)


@pytest.mark.parametrize("separation", ["signed", "add", "subtract"])
def test_ssdrwu_closed_form_equals_direct_minimisation(rng, separation):
    X, y = make_blobs(24, centers=[[-1, 0], [1, 0]], random_state=4)
    idx = np.r_[np.flatnonzero(y == 0)[:4], np.flatnonzero(y == 1)[:4]]
    y_semi = _semi(y, idx)
    labeled = y_semi >= 0
    gamma_D = 0.05 if separation == "subtract" else 1.0  # keep the subtracted form convex
    clf = SSDRWu(
        gamma=0.5,
        gamma_A=0.05,
        gamma_I=2.0,
        n_neighbors=4,
        eta=0.6,
        gamma_D=gamma_D,
        separation=separation,
    ).fit(X, y_semi)
    sign = -1.0 if separation == "subtract" else 1.0
    M = _wu_penalty(X, y, labeled, 4, 2.0, 0.6, gamma_D, sign, separation == "signed")
    K = kernel_matrix(X, kernel="rbf", gamma=0.5)
    alpha = _minimise_alpha(K, labeled, _pm(y[labeled]), 0.05, M)
    Xt = rng.normal(size=(8, 2))
    Kt = kernel_matrix(Xt, X, kernel="rbf", gamma=0.5)
    assert clf.solver_info_["convex"]
    np.testing.assert_allclose(clf.decision_function(X), K @ alpha, atol=1e-6)
    np.testing.assert_allclose(clf.decision_function(Xt), Kt @ alpha, atol=1e-6)


def test_ssdrwu_subtracted_form_at_paper_weights_is_a_saddle():
    X, y = make_blobs(40, centers=[[-2, 0], [2, 0]], random_state=0)
    idx = np.r_[np.flatnonzero(y == 0)[:5], np.flatnonzero(y == 1)[:5]]
    y_semi = _semi(y, idx)
    labeled = y_semi >= 0
    paper = labeled.sum()  # the paper's weight 1 on its sum-form terms: gamma_D = l
    with pytest.warns(NonConvexObjectiveWarning):
        clf = SSDRWu(
            kernel="linear", gamma_A=1.0, gamma_I=1.0, eta=0.6, gamma_D=paper, separation="subtract"
        ).fit(X, y_semi)
    assert clf.solver_info_["convex"] is False
    # the returned point is stationary: gradient of the objective in w (f = X w) vanishes
    M = _wu_penalty(X, y, labeled, 6, 1.0, 0.6, paper, -1.0, False)
    w, Yl = clf.coef_, _pm(y[labeled])
    grad = 2 * X[labeled].T @ (X[labeled] @ w - Yl) / labeled.sum() + 2 * w + 2 * X.T @ M @ X @ w
    np.testing.assert_allclose(grad, 0, atol=1e-10)
    # ... and it inverts the classifier, while the default signed form is fine
    assert clf.score(X, y) < 0.1
    assert SSDRWu(kernel="linear", gamma_A=1.0).fit(X, y_semi).score(X, y) > 0.95


# --------------------------------------------------------------------------- SSDR (Wang & Zhang)
def _centred_gram(K):
    n = K.shape[0]
    H = np.eye(n) - 1.0 / n
    return H @ K @ H


@pytest.mark.parametrize("kernel, gamma", [("linear", None), ("rbf", 0.3), ("poly", 0.5)])
@pytest.mark.parametrize("lam", [0.1, 1.0, 10.0])
def test_wang_kernel_on_training_points_and_out_of_sample(rng, kernel, gamma, lam):
    X = rng.normal(size=(25, 3))
    y = np.r_[np.zeros(12, int), np.ones(13, int)]
    clf = SSDRWang(kernel=kernel, gamma=gamma or "scale", lam=lam).fit(X, _semi(y, [0, 1, 20, 21]))
    K = kernel_matrix(X, kernel=kernel, gamma=gamma, degree=3, coef0=1.0)
    G = _centred_gram(K)
    KD = 25 * (np.eye(25) - np.linalg.inv(np.eye(25) + G / (25 * lam)))
    np.testing.assert_allclose(clf.discriminative_kernel(X), KD, atol=1e-8)
    # new points against training points: n [(n lam I + G)^{-1} k_c(x)]_i
    Xt = rng.normal(size=(6, 3))
    Kt = kernel_matrix(Xt, X, kernel=kernel, gamma=gamma, degree=3, coef0=1.0)
    Kt_c = Kt - Kt.mean(1, keepdims=True) - K.mean(0) + K.mean()
    expected = 25 * np.linalg.solve(25 * lam * np.eye(25) + G, Kt_c.T).T
    np.testing.assert_allclose(clf.discriminative_kernel(Xt, X), expected, atol=1e-8)
    np.testing.assert_allclose(clf.discriminative_kernel(X, Xt), expected.T, atol=1e-8)


def test_wang_linear_kernel_closed_form_in_feature_space(rng):
    X = rng.normal(size=(30, 4))
    y = (X[:, 0] > 0).astype(int)
    clf = SSDRWang(kernel="linear", lam=0.7).fit(X, _semi(y, np.arange(8)))
    mu = X.mean(0)
    Xc = X - mu
    A, B = rng.normal(size=(5, 4)), rng.normal(size=(3, 4))
    expected = (A - mu) @ np.linalg.solve(0.7 * np.eye(4) + Xc.T @ Xc / 30, (B - mu).T)
    np.testing.assert_allclose(clf.discriminative_kernel(A, B), expected, atol=1e-12)


@pytest.mark.parametrize("kernel, gamma", [("linear", None), ("rbf", 0.5)])
def test_wang_closed_form_equals_direct_minimisation(rng, kernel, gamma):
    X, y = make_blobs(26, centers=[[-1, 0], [1, 0]], random_state=5)
    idx = np.r_[np.flatnonzero(y == 0)[:3], np.flatnonzero(y == 1)[:3]]
    y_semi = _semi(y, idx)
    labeled = y_semi >= 0
    lam, gamma_A = 0.5, 0.05
    clf = SSDRWang(
        kernel=kernel, gamma=gamma or "scale", lam=lam, gamma_A=gamma_A, fit_intercept=False
    )
    clf.fit(X, y_semi)
    K = kernel_matrix(X, kernel=kernel, gamma=gamma)
    KD = 26 * (np.eye(26) - np.linalg.inv(np.eye(26) + _centred_gram(K) / (26 * lam)))
    # the stated objective: (1/l)||J K_D a - Y||^2 + gamma_A a^T K_D a
    alpha = _minimise_alpha(KD, labeled, _pm(y[labeled]), gamma_A, np.zeros((26, 26)))
    np.testing.assert_allclose(clf.decision_function(X), KD @ alpha, atol=1e-6)
    Xt = rng.normal(size=(7, 2))
    np.testing.assert_allclose(
        clf.decision_function(Xt), clf.discriminative_kernel(Xt, X) @ alpha, atol=1e-6
    )
    # K_D 1 = 0: without an intercept the training outputs sum to zero
    assert abs(clf.decision_function(X).sum()) < 1e-8


def test_wang_zero_lam_is_the_projection_limit(rng):
    X = rng.normal(size=(20, 3))
    y = (X[:, 1] > 0).astype(int)
    y_semi = _semi(y, np.arange(6))
    f0 = SSDRWang(kernel="linear", lam=0.0).fit(X, y_semi).decision_function(X)
    f_small = SSDRWang(kernel="linear", lam=1e-9).fit(X, y_semi).decision_function(X)
    np.testing.assert_allclose(f0, f_small, atol=1e-6)
    G = _centred_gram(X @ X.T)
    np.testing.assert_allclose(
        SSDRWang(kernel="linear", lam=0.0).fit(X, y_semi).discriminative_kernel(X),
        20 * G @ np.linalg.pinv(G),
        atol=1e-10,
    )


def test_wang_paper_weights_at_n_points_are_ours_rescaled(rng):
    """The paper's sum form (gamma_1, lambda) on n points is gamma_A = n gamma_1,
    lam = lambda / n: both written on the same n, the decision functions agree."""
    X = rng.normal(size=(30, 3))
    y_semi = _semi((X[:, 0] > 0).astype(int), np.arange(6))
    gamma_1, lam_paper = 0.05, 2.0
    clf = SSDRWang(
        kernel="linear", gamma_A=30 * gamma_1, lam=lam_paper / 30, fit_intercept=False
    ).fit(X, y_semi)
    KD = np.eye(30) - np.linalg.inv(np.eye(30) + _centred_gram(X @ X.T) / lam_paper)
    labeled = y_semi >= 0
    Y = _pm(y_semi[labeled])
    alpha = _minimise_alpha(KD, labeled, Y, gamma_1, np.zeros((30, 30)))
    np.testing.assert_allclose(clf.decision_function(X), KD @ alpha, atol=1e-6)


def test_wang_with_intercept_and_multiclass():
    X, y = make_blobs(90, centers=3, random_state=0)
    idx = np.r_[[np.flatnonzero(y == c)[:3] for c in range(3)]].ravel()
    clf = SSDRWang(kernel="linear", fit_intercept=True).fit(X, _semi(y, idx))
    assert clf.decision_function(X).shape == (90, 3)
    assert np.mean(clf.transduction_ == y) > 0.85
    assert np.all(clf.intercept_ != 0)
