"""SRSVM against its definition and its stated equivalences."""

import numpy as np
import pytest
from scipy.linalg import sqrtm
from sklearn.datasets import make_blobs
from sklearn.svm import SVC

from structreg import SRSVM
from structreg.bounds import (
    classifier_bound,
    fitted_bound,
    generalization_bound,
    linear_bound,
    upsilon,
)
from structreg.datasets import make_xor_gaussians


def _cluster_sigma(Z, ids):
    d = Z.shape[1]
    S = np.zeros((d, d))
    for c in np.unique(ids[ids >= 0]):
        D = Z[ids == c] - Z[ids == c].mean(0)
        S += D.T @ D / len(D)
    return S


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_lam_zero_is_svc(kernel):
    X, y = make_xor_gaussians(30, random_state=1)
    a = SRSVM(kernel=kernel, gamma=0.05, C=2.0, lam=0.0, tol=1e-10).fit(X, y)
    b = SVC(kernel=kernel, gamma=0.05, C=2.0, tol=1e-10).fit(X, y)
    Xt = np.random.default_rng(0).normal(size=(20, 2)) * 5
    np.testing.assert_allclose(a.decision_function(Xt), b.decision_function(Xt), atol=1e-5)


def test_linear_srsvm_is_svc_on_whitened_features():
    X, y = make_blobs(80, centers=[[0, 0], [3, 3]], cluster_std=[1.0, 2.0], random_state=0)
    clf = SRSVM(C=1.0, lam=2.0, tol=1e-10).fit(X, y)
    Sigma = _cluster_sigma(X, clf.cluster_ids_)
    T = np.real(sqrtm(np.linalg.inv(np.eye(2) + 2.0 * Sigma)))
    ref = SVC(kernel="linear", C=1.0, tol=1e-10).fit(X @ T, y)
    Xt = np.random.default_rng(1).normal(size=(15, 2)) * 3
    np.testing.assert_allclose(clf.decision_function(Xt), ref.decision_function(Xt @ T), atol=1e-5)
    # and the dual kernel x^T (I + lam Sigma)^{-1} z of eq. (14)
    G = X @ np.linalg.solve(np.eye(2) + 2.0 * Sigma, X.T)
    pre = SVC(kernel="precomputed", C=1.0, tol=1e-10).fit(G, y)
    Gt = Xt @ np.linalg.solve(np.eye(2) + 2.0 * Sigma, X.T)
    np.testing.assert_allclose(clf.decision_function(Xt), pre.decision_function(Gt), atol=1e-5)


def test_kernel_srsvm_with_linear_kernel_equals_linear_srsvm():
    X, y = make_blobs(60, centers=[[0, 0], [4, 1]], cluster_std=1.5, random_state=2)
    lin = SRSVM(C=1.0, lam=1.0, tol=1e-10).fit(X, y)  # explicit features (primal)
    ker = SRSVM(C=1.0, lam=1.0, kernel=lambda A, B: A @ B.T, tol=1e-10).fit(X, y)
    np.testing.assert_array_equal(
        np.unique(lin.cluster_ids_, return_inverse=True)[1],
        np.unique(ker.cluster_ids_, return_inverse=True)[1],
    )
    Xt = np.random.default_rng(3).normal(size=(10, 2)) * 3
    np.testing.assert_allclose(lin.decision_function(Xt), ker.decision_function(Xt), atol=1e-5)


def test_xor_and_fitted_attributes():
    X, y = make_xor_gaussians(40, random_state=0)
    clf = SRSVM(kernel="rbf", gamma=0.05, C=10.0, lam=1.0).fit(X, y)
    assert clf.score(X, y) > 0.95
    assert clf.n_clusters_.shape == (2,) and np.all(clf.n_clusters_ >= 1)
    assert clf.n_support_.sum() == len(clf.support_)
    assert len(np.unique(clf.cluster_ids_)) == clf.n_clusters_.sum()


@pytest.mark.parametrize("multi_class", ["ovr", "ovo"])
def test_multiclass(multi_class):
    X, y = make_blobs(90, centers=3, cluster_std=0.8, random_state=0)
    clf = SRSVM(kernel="rbf", gamma=0.2, C=10.0, lam=0.5, multi_class=multi_class).fit(X, y)
    assert clf.score(X, y) > 0.9 and clf.n_clusters_.shape == (3,)
    base = SRSVM(kernel="rbf", gamma=0.2, C=10.0, lam=0.0, multi_class=multi_class).fit(X, y)
    assert not np.allclose(clf.decision_function(X), base.decision_function(X))


def test_generalization_bound_behaves():
    X, y = make_xor_gaussians(60, random_state=0)
    clf = SRSVM(kernel="rbf", gamma=0.05, C=10.0, lam=1.0).fit(X, y)
    b = fitted_bound(clf, X, y)
    assert 0 < b["bound"] < np.inf and 0 < b["gamma"] <= 1 and b["m"] >= 2
    assert b["bound"] == pytest.approx(b["empirical_risk"] + b["complexity"])
    svc = SVC(kernel="rbf", gamma=0.05, C=10.0).fit(X, y)
    assert np.isfinite(fitted_bound(svc, X, y)["bound"])
    # Upsilon decreases with m; more data (same distribution) gives a smaller bound
    lam = np.linalg.eigvalsh(np.exp(-0.05 * ((X[:, None] - X) ** 2).sum(-1))) / len(X)
    ups = [upsilon(lam, m, len(X)) for m in (3, 10, 40)]
    assert ups[0] >= ups[1] >= ups[2]
    margins = np.ones(len(X))
    small = generalization_bound(lam, margins[:50], bias=0.0)["bound"]
    large = generalization_bound(lam, margins, bias=0.0)["bound"]
    assert large < small
    with pytest.raises(ValueError, match="theta"):
        generalization_bound(lam, margins, bias=0.0, theta=1.5)


def test_classifier_bound_matches_manual_normalisation():
    X, y = make_xor_gaussians(30, random_state=2)
    svc = SVC(kernel="rbf", gamma=0.05, C=5.0).fit(X, y)
    K = np.exp(-0.05 * ((X[:, None] - X) ** 2).sum(-1))
    y_pm = np.where(y == 1, 1.0, -1.0)
    res = classifier_bound(K, svc.dual_coef_, svc.support_, svc.intercept_[0], y_pm)
    w2 = svc.dual_coef_ @ K[np.ix_(svc.support_, svc.support_)] @ svc.dual_coef_.T
    margins = y_pm * svc.decision_function(X) / np.sqrt(w2[0, 0])
    ref = generalization_bound(
        np.linalg.eigvalsh(K) / len(X), margins, bias=abs(svc.intercept_[0]) / np.sqrt(w2[0, 0])
    )
    assert res["bound"] == pytest.approx(ref["bound"])


@pytest.mark.parametrize("gamma", ["scale", "auto", 0.3])
def test_fitted_bound_of_svc_resolves_gamma(gamma):
    X, y = make_xor_gaussians(30, random_state=3)
    X = 2.0 * X  # variance far from 1, so "scale" differs from "auto"
    svc = SVC(kernel="rbf", gamma=gamma, C=5.0).fit(X, y)
    K = np.exp(-svc._gamma * ((X[:, None] - X) ** 2).sum(-1))  # the width libsvm used
    ref = classifier_bound(K, svc.dual_coef_, svc.support_, svc.intercept_[0], np.where(y, 1, -1))
    assert fitted_bound(svc, X, y)["bound"] == pytest.approx(ref["bound"])


def test_linear_bound_is_the_kernel_bound_of_a_linear_svc():
    X, y = make_xor_gaussians(30, random_state=4)
    X = np.c_[X, X[:, 0] * X[:, 1]]  # separable by a plane
    svc = SVC(kernel="linear", C=5.0).fit(X, y)
    y_pm = np.where(y == 1, 1.0, -1.0)
    res = linear_bound(X, svc.coef_[0], svc.intercept_[0], y_pm)
    assert res["bound"] == pytest.approx(fitted_bound(svc, X, y)["bound"])
    assert res["empirical_risk"] == pytest.approx(
        np.mean(y_pm * svc.decision_function(X) < res["gamma"] * np.linalg.norm(svc.coef_))
    )


def test_fitted_bound_of_slmm_is_its_linear_model_on_the_kernel_features():
    pytest.importorskip("cvxpy")
    from structreg.models import SLMM

    X, y = make_xor_gaussians(30, random_state=5)
    clf = SLMM(kernel="rbf", gamma=0.5, C=4.0).fit(X, y)
    V = clf.feature_map_.transform(X)
    y_pm = np.where(y == clf.classes_[1], 1.0, -1.0)
    ref = linear_bound(V, clf.coef_[0], float(clf.intercept_[0]), y_pm)
    assert fitted_bound(clf, X, y) == ref
    w = clf.coef_[0]
    margins = y_pm * clf.decision_function(X) / np.linalg.norm(w)
    eig = np.linalg.eigvalsh(V @ V.T) / len(y)
    bias = abs(clf.intercept_[0]) / np.linalg.norm(w)
    assert ref["bound"] == pytest.approx(generalization_bound(eig, margins, bias=bias)["bound"])


def test_errors():
    X, y = make_xor_gaussians(10, random_state=0)
    with pytest.raises(ValueError, match="lam"):
        SRSVM(lam=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="at least 2 classes"):
        SRSVM().fit(X, np.zeros(len(y)))
