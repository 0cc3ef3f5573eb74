"""Ward's linkage, the L-method knee and per-class clustering (structreg.clustering.ward)."""

import numpy as np
import pytest
from scipy.cluster.hierarchy import fcluster, linkage
from sklearn.metrics import adjusted_rand_score

from structreg.clustering import (
    class_clusters,
    kernel_ward_distances,
    l_method,
    merge_curve,
    ward_knee,
)
from structreg.clustering.ward import _two_or_three
from structreg.kernels import KernelFeatureMap


def gaussian_mixture(k, seed, n_per=30, radius=10.0, std=1.0, dim=2):
    """k equal Gaussian clusters with centres evenly spaced on a circle (well separated)."""
    rng = np.random.default_rng(seed)
    angles = 2 * np.pi * np.arange(k) / k + rng.uniform(0, 2 * np.pi)
    centers = np.zeros((k, dim))
    centers[:, 0], centers[:, 1] = radius * np.cos(angles), radius * np.sin(angles)
    X = np.vstack([rng.normal(c, std, size=(n_per, dim)) for c in centers])
    return X, np.repeat(np.arange(k), n_per)


# -- merge curve ---------------------------------------------------------------------------------
def test_merge_curve_axis_and_ward_linkage_values(rng):
    X = rng.normal(size=(12, 3))
    Z, k, d = merge_curve(X)
    assert Z.shape == (11, 4)
    np.testing.assert_array_equal(k, np.arange(2, 13))
    # d at k clusters is the merge turning k clusters into k - 1 (the (n-k)-th merge of Z)
    np.testing.assert_allclose(d, 0.5 * Z[::-1, 2] ** 2)
    _, _, h = merge_curve(X, squared=False)
    np.testing.assert_allclose(h, Z[::-1, 2])
    assert np.all(np.diff(d) <= 1e-12)  # Ward has no inversions: non-increasing in k


def test_merge_curve_is_the_papers_ward_linkage():
    """W(A, B) = |A||B| / (|A| + |B|) ||mu_A - mu_B||^2 on a hand-computed example."""
    X = np.array([[0.0, 0.0], [0.0, 2.0], [10.0, 0.0]])
    _, k, d = merge_curve(X)
    # first merge: the two points 2 apart, W = 4 / 2 = 2; then {mu = (0, 1)} with (10, 0):
    # W = 2 * 1 / 3 * (100 + 1)
    np.testing.assert_allclose(d, [2.0 / 3.0 * 101.0, 2.0])
    np.testing.assert_array_equal(k, [2, 3])


def test_merge_curve_tiny_inputs():
    Z, k, d = merge_curve(np.zeros((1, 2)))
    assert Z.shape == (0, 4) and k.size == 0 and d.size == 0


# -- L-method ------------------------------------------------------------------------------------
@pytest.mark.parametrize("knee", [3, 4, 7, 12])
@pytest.mark.parametrize("b", [20, 40])
def test_l_method_piecewise_linear_knee(knee, b):
    x = np.arange(2, b + 1)
    steep = 1000.0 - 80.0 * (x - 2)
    flat = 1000.0 - 80.0 * (knee - 2) - 100.0 - 2.0 * (x - knee)
    y = np.where(x <= knee, steep, flat)
    assert l_method(x, y) == knee
    assert l_method(x, y, iterative=False) == knee


def test_l_method_with_noise_and_unsorted_input():
    rng = np.random.default_rng(1)
    x = np.arange(2, 31)
    y = np.where(x <= 6, 200.0 - 30.0 * x, 25.0 - 0.3 * x) + rng.normal(0, 0.3, x.size)
    perm = rng.permutation(x.size)
    assert l_method(x[perm], y[perm]) == 6


@pytest.mark.parametrize(("knee", "slope", "power"), [(4, 40.0, 1.0), (6, 10.0, 0.5)])
def test_l_method_iterative_refinement_corrects_long_tails(knee, slope, power):
    """A long curved tail drags the one-pass knee far right; the refinement recovers it."""
    x = np.arange(2, 401).astype(float)
    y = np.where(x <= knee, 30.0 + slope * (knee - x), 30.0 * ((knee + 1) / x) ** power)
    assert l_method(x, y, iterative=False) > 2 * knee
    assert l_method(x, y) == knee


def test_l_method_tiny_curves_and_min_points():
    assert l_method([], []) == 1
    assert l_method([2], [5.0]) == 1
    assert l_method([2, 3, 4], [9.0, 1.0, 0.5]) == 1  # 3 points < 2 * min_points
    # smallest knee with min_points=2 on a curve starting at 2 is 3
    assert l_method([2, 3, 4, 5], [100.0, 1.0, 0.9, 0.8]) == 3
    # one-point lines allowed: the single steep point is found
    assert l_method([2, 3, 4, 5, 6], [100.0, 1.0, 0.9, 0.8, 0.7], min_points=1) == 2
    assert l_method([2, 3, 4, 5, 6], [100.0, 1.0, 0.9, 0.8, 0.7], min_points=3) == 1


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        (([2, 3], [1.0]), {}, "same length"),
        (([2, 3, 4, 5], [1.0, np.nan, 1.0, 1.0]), {}, "finite"),
        (([2, 2, 4, 5], [4.0, 3.0, 2.0, 1.0]), {}, "duplicates"),
        (([2, 3, 4, 5], [4.0, 3.0, 2.0, 1.0]), {"min_points": 0}, "min_points"),
    ],
)
def test_l_method_errors(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        l_method(*args, **kwargs)


# -- ward_knee -----------------------------------------------------------------------------------
@pytest.mark.parametrize("k", [2, 3, 4, 5])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ward_knee_recovers_gaussian_mixtures(k, seed):
    X, y = gaussian_mixture(k, seed)
    labels = ward_knee(X)
    assert labels.max() + 1 == k
    assert adjusted_rand_score(y, labels) == 1.0
    np.testing.assert_array_equal(np.unique(labels), np.arange(k))


@pytest.mark.parametrize("k", [2, 3, 4])
def test_ward_knee_in_higher_dimensions_and_unequal_sizes(k):
    rng = np.random.default_rng(k)
    centers = 12.0 * np.eye(6)[:k]
    sizes = [15, 40, 25, 30][:k]
    X = np.vstack([rng.normal(c, 1.0, size=(s, 6)) for c, s in zip(centers, sizes, strict=True)])
    y = np.repeat(np.arange(k), sizes)
    assert adjusted_rand_score(y, ward_knee(X)) == 1.0


def test_ward_knee_linear_scale_option_on_easy_data():
    X, y = gaussian_mixture(3, 0, radius=20.0)
    assert adjusted_rand_score(y, ward_knee(X, log_scale=False)) == 1.0


def test_ward_knee_labels_in_order_of_first_appearance():
    X, _ = gaussian_mixture(3, 4)
    perm = np.random.default_rng(0).permutation(len(X))
    labels = ward_knee(X[perm])
    first = [int(np.flatnonzero(labels == c)[0]) for c in range(3)]
    assert first == sorted(first) and labels[0] == 0


def test_ward_knee_edge_cases():
    assert ward_knee(np.zeros((0, 2))).shape == (0,)
    np.testing.assert_array_equal(ward_knee([[1.0, 2.0]]), [0])
    np.testing.assert_array_equal(ward_knee([[0.0], [100.0]]), [0, 0])  # documented
    np.testing.assert_array_equal(ward_knee([[0.0], [0.1], [100.0], [100.1]]), [0, 0, 0, 0])
    np.testing.assert_array_equal(ward_knee(np.ones((30, 3))), np.zeros(30))  # identical
    X, _ = gaussian_mixture(4, 0)
    np.testing.assert_array_equal(ward_knee(X, max_clusters=4), np.zeros(len(X)))  # curve < 4
    assert ward_knee(X, max_clusters=5).max() + 1 <= 5
    with pytest.raises(ValueError, match="max_clusters"):
        ward_knee(X, max_clusters=0)


def test_ward_knee_duplicate_groups():
    """Two groups of identical points: most merge distances are exactly 0."""
    X = np.vstack([np.zeros((10, 2)), np.full((10, 2), 5.0)])
    np.testing.assert_array_equal(ward_knee(X), np.repeat([0, 1], 10))
    X3 = np.vstack([X, np.full((10, 2), [0.0, 9.0])])
    np.testing.assert_array_equal(ward_knee(X3), np.repeat([0, 1, 2], 10))


def test_two_or_three_rule():
    flat = np.log([8.0, 7.5, 7.2, 7.0, 6.9, 6.7, 6.6])
    # a single huge merge, then the flat part: 2 clusters
    assert _two_or_three(np.r_[np.log([500.0, 9.0]), flat]) == 2
    # two big merges of similar size: 3 clusters
    assert _two_or_three(np.r_[np.log([500.0, 400.0]), flat]) == 3
    # "two close clusters and a far one": the first drop is the larger one, but the 3 -> 2
    # merge is far above the flat part, so still 3 clusters
    assert _two_or_three(np.r_[np.log([595.4, 53.6]), np.log([6.6, 6.2, 6.1, 5.1, 5.0])]) == 3


def test_ward_knee_on_condensed_distances_matches_observations():
    X, _ = gaussian_mixture(3, 5)
    from scipy.spatial.distance import pdist

    np.testing.assert_array_equal(ward_knee(pdist(X)), ward_knee(X))
    with pytest.raises(ValueError, match="condensed"):
        ward_knee(np.ones(5))


# -- kernel Ward ---------------------------------------------------------------------------------
def test_kernel_ward_distances_equal_feature_space_ward():
    X, _ = gaussian_mixture(3, 6, n_per=15)
    fmap = KernelFeatureMap(kernel="rbf", gamma=0.05)
    V = fmap.fit_transform(X)
    K = fmap.kernel_(X)
    D = kernel_ward_distances(K)
    assert D.shape == (len(X) * (len(X) - 1) // 2,)
    Z_gram, Z_feat = linkage(D, method="ward"), linkage(V, method="ward")
    np.testing.assert_allclose(Z_gram[:, 2], Z_feat[:, 2], rtol=1e-7, atol=1e-9)
    for t in (2, 3, 5, 8):
        a = fcluster(Z_gram, t, criterion="maxclust")
        b = fcluster(Z_feat, t, criterion="maxclust")
        assert adjusted_rand_score(a, b) == 1.0
    np.testing.assert_array_equal(ward_knee(D), ward_knee(V))


def test_kernel_ward_distances_linear_kernel_is_euclidean(rng):
    from scipy.spatial.distance import pdist

    X = rng.normal(size=(9, 4))
    np.testing.assert_allclose(kernel_ward_distances(X @ X.T), pdist(X), atol=1e-10)
    with pytest.raises(ValueError, match="square"):
        kernel_ward_distances(np.ones((3, 4)))


# -- class_clusters ------------------------------------------------------------------------------
def test_class_clusters_numbering_and_unlabeled():
    A, _ = gaussian_mixture(2, 0, n_per=20)  # class "a": 2 clusters
    B, _ = gaussian_mixture(3, 1, n_per=20)  # class "b": 3 clusters
    X = np.vstack([B, A, np.zeros((5, 2))])
    y = np.array(["b"] * 60 + ["a"] * 40 + ["a"] * 5, dtype=object)
    labeled = np.r_[np.ones(100, dtype=bool), np.zeros(5, dtype=bool)]
    ids, counts = class_clusters(X, y, labeled)
    assert counts == {"a": 2, "b": 3}
    np.testing.assert_array_equal(ids[100:], -1)
    # class "a" (first in sorted order) gets ids 0..1, class "b" gets 2..4
    assert set(ids[60:100]) == {0, 1} and set(ids[:60]) == {2, 3, 4}
    np.testing.assert_array_equal(ids[60:100], ward_knee(A))
    np.testing.assert_array_equal(ids[:60], ward_knee(B) + 2)


def test_class_clusters_integer_codes_like_srsvm():
    X, _ = gaussian_mixture(2, 3, n_per=10)
    y_codes = np.array([0] * 10 + [1] * 10)
    y_codes[[0, 15]] = -1  # unlabeled markers are ignored through the mask
    labeled = y_codes >= 0
    ids, counts = class_clusters(X, y_codes, labeled, max_clusters=4)
    assert [counts[c] for c in range(2)] == [1, 1]  # max_clusters=4: curve too short
    np.testing.assert_array_equal(ids, np.where(labeled, (y_codes == 1).astype(int), -1))
    ids_all, counts_all = class_clusters(X, np.repeat([0, 1], 10))
    assert (ids_all >= 0).all() and sum(counts_all.values()) == ids_all.max() + 1


def test_class_clusters_errors():
    X = np.zeros((4, 2))
    with pytest.raises(ValueError, match="boolean mask"):
        class_clusters(X, [0, 0, 1, 1], [0, 1, 2, 3])
    with pytest.raises(ValueError, match="shape"):
        class_clusters(X, [0, 1])
