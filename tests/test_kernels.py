import numpy as np
import pytest
from sklearn.metrics.pairwise import pairwise_kernels

from structreg.kernels import (
    EmpiricalKernelMap,
    KernelFeatureMap,
    LandmarkFeatureMap,
    kernel_diagonal,
    kernel_matrix,
)


@pytest.mark.parametrize("method", ["cholesky", "eigh"])
@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly"])
def test_feature_map_reproduces_gram(rng, method, kernel):
    X = rng.normal(size=(30, 4))
    X[3] = X[2]  # singular Gram matrix
    fmap = KernelFeatureMap(kernel=kernel, gamma=0.3, method=method)
    V = fmap.fit_transform(X)
    K = kernel_matrix(X, kernel=kernel, gamma=0.3, degree=3, coef0=1.0)
    np.testing.assert_allclose(V @ V.T, K, atol=1e-8 * np.abs(K).max())
    assert V.shape[1] < 30  # the duplicate is dropped
    np.testing.assert_allclose(fmap.transform(X), V, atol=1e-7 * np.abs(V).max())
    Xt = rng.normal(size=(5, 4))
    # phi(x)^T phi(x_i) = k(x, x_i) for every training point x_i
    np.testing.assert_allclose(
        fmap.transform(Xt) @ V.T, kernel_matrix(Xt, X, kernel=kernel, gamma=0.3), atol=1e-6
    )


def test_linear_kernel_rank(rng):
    X = rng.normal(size=(20, 3))
    assert KernelFeatureMap(kernel="linear").fit(X).n_components_ == 3


def test_empirical_kernel_map_is_kpca_coordinates(rng):
    X = rng.normal(size=(25, 3))
    Z = EmpiricalKernelMap(kernel="rbf", gamma=0.5).fit_transform(X)
    # columns are orthogonal with squared norms equal to the eigenvalues, decreasing
    G = Z.T @ Z
    np.testing.assert_allclose(G, np.diag(np.diag(G)), atol=1e-8)
    assert np.all(np.diff(np.diag(G)) <= 1e-12)
    assert "method" not in EmpiricalKernelMap().get_params()


def test_callable_kernel(rng):
    X = rng.normal(size=(10, 2))
    fmap = KernelFeatureMap(kernel=lambda A, B: (A @ B.T + 1) ** 2).fit(X)
    V = fmap.transform(X)
    np.testing.assert_allclose(V @ V.T, (X @ X.T + 1) ** 2, atol=1e-8)
    bad = KernelFeatureMap(kernel=lambda A, B: np.ones((2, 2)))
    with pytest.raises(ValueError, match="kernel callable returned shape"):
        bad.fit(X)


def test_gamma_scale_and_none(rng):
    X = rng.normal(size=(10, 4)) * 3
    assert KernelFeatureMap(gamma="scale").fit(X).gamma_ == pytest.approx(1 / (4 * X.var()))
    assert KernelFeatureMap(gamma=None).fit(X).gamma_ == pytest.approx(0.25)


@pytest.mark.parametrize(
    "kernel", ["rbf", "linear", "poly", lambda A, B: (A @ B.T + 2.0) ** 2], ids=str
)
def test_kernel_diagonal_is_the_gram_diagonal(rng, kernel):
    X = rng.normal(size=(600, 3))  # more than one 256-row block for the callable
    params = dict(kernel=kernel, gamma=0.3, degree=3, coef0=1.5)
    np.testing.assert_allclose(
        kernel_diagonal(X, **params), np.diag(kernel_matrix(X, **params)), rtol=1e-12
    )


@pytest.mark.parametrize("kernel", ["rbf", "poly"])
def test_landmark_map_reports_the_unexplained_trace(rng, kernel):
    X = rng.normal(size=(80, 3))
    params = dict(kernel=kernel, gamma=0.7, degree=2)
    K = kernel_matrix(X, **params, coef0=1.0)
    fmap = LandmarkFeatureMap(landmarks=X[:6], **params)  # the poly space has 10 dimensions
    Z = fmap.fit_transform(X)
    direct = np.trace(K - Z @ Z.T) / np.trace(K)  # the trace of the PSD Nystroem residual
    assert 0.0 < fmap.unexplained_trace_ < 1.0
    assert fmap.unexplained_trace_ == pytest.approx(direct, rel=1e-9)
    # every sample a landmark: nothing is left
    assert LandmarkFeatureMap(landmarks=X, **params).fit(X).unexplained_trace_ < 1e-9
    # a narrow Gaussian keeps almost nothing of the points that are not landmarks
    narrow = LandmarkFeatureMap(landmarks=X[:8], gamma=1e3).fit(X)
    assert narrow.unexplained_trace_ == pytest.approx(72 / 80, abs=1e-6)


@pytest.mark.parametrize(
    "kernel, params",
    [("rbf", {"gamma": 0.3}), ("rbf", {"gamma": None}), ("linear", {}), ("poly", {"gamma": 0.5})],
)
def test_kernel_matrix_gives_scikit_learns_bits(kernel, params):
    # the dense float64 path skips pairwise_kernels' validation, not its arithmetic
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(60, 5)), rng.normal(size=(25, 5))
    for A, B in [(X, None), (X, Y), (np.asfortranarray(X), None), (X[::2], Y[::3]), (X, X)]:
        ours = kernel_matrix(A, B, kernel=kernel, **params)
        np.testing.assert_array_equal(ours, pairwise_kernels(A, B, metric=kernel, **params))
    with pytest.raises(ValueError, match="Incompatible dimension"):
        kernel_matrix(X, Y[:, :3], kernel=kernel, **params)
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity"):
        kernel_matrix(bad, Y, kernel=kernel, **params)


def test_empirical_map_fixes_each_eigenvectors_sign(rng):
    """LAPACK builds may return either sign of an eigenvector: the map fixes it (each
    column's entry of largest magnitude on the training points is positive), so transform is
    the same with every build, and a negated eigenvector basis would give the same map."""
    X = rng.normal(size=(25, 3))
    ekm = EmpiricalKernelMap(kernel="rbf", gamma=0.5).fit(X)
    Z = ekm.transform(X)
    top = Z[np.argmax(np.abs(Z), axis=0), np.arange(Z.shape[1])]
    assert np.all(top > 0)
    np.testing.assert_allclose(Z @ Z.T, ekm.kernel_(X), atol=1e-8)
