"""Ward's linkage with the number of clusters at the knee of the merge-distance curve.

SLMM (Yeung et al., 2007) and SRSVM (Xue, Chen & Yang, IEEE TNN 2011, Sec. III-A) describe
the structure inside every class by the clusters of an agglomerative Ward clustering and pick
the number of clusters at the *knee* of the merge-distance curve with the L-method of
Salvador & Chan (2004).  This module provides the three pieces:

* :func:`merge_curve` -- the Ward tree and its merge-distance curve (number of clusters on
  the x axis, cost of the next merge on the y axis);
* :func:`l_method` -- the knee of any such evaluation curve (two least-squares lines);
* :func:`ward_knee` / :func:`class_clusters` -- Ward clustering cut at the knee, for one set of
  points or separately inside every class.

Ward's linkage of two clusters A and B is (SRSVM paper, Sec. III-A)

    W(A, B) = |A| |B| / (|A| + |B|) * ||mu_A - mu_B||^2,

the increase of the total within-cluster sum of squares caused by merging A and B; for two
single points it is ``||x_i - x_j||^2 / 2``.  :func:`scipy.cluster.hierarchy.linkage` with
``method="ward"`` builds the same tree and reports the merge *height*
``sqrt(2 W(A, B))``; :func:`merge_curve` reports ``W`` itself (``squared=True``, the papers'
quantity) or scipy's height (``squared=False``).  :func:`ward_knee` fits the L-method to the
logarithm of the curve by default (see its ``log_scale``), on which both give the same knee.

**Kernel Ward.**  Ward's criterion only needs squared Euclidean distances between points, so
Ward's linkage in the feature space of a kernel ``k`` uses
``||phi(x_i) - phi(x_j)||^2 = K_ii + K_jj - 2 K_ij``.  Running Ward on explicit kernel
features -- the rows of any ``V`` with ``V V^T = K``, e.g.
``structreg.kernels.KernelFeatureMap().fit_transform(X)`` -- is exactly kernel Ward.  With only
a Gram matrix, :func:`kernel_ward_distances` gives the condensed distance vector, which every
function here accepts in place of an observation matrix (scipy's convention: a 1-D array is a
condensed distance matrix).

References
----------
S. Salvador and P. Chan, "Determining the number of clusters/segments in hierarchical
clustering/segmentation algorithms", Proc. 16th IEEE ICTAI, 2004, pp. 576-584.

J. H. Ward, "Hierarchical grouping to optimize an objective function", J. Amer. Stat. Assoc.
58 (301), 1963.
"""

from __future__ import annotations

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import squareform
from sklearn.utils import check_array

from .._numerics import unit_scaled

__all__ = [
    "DEFAULT_MAX_CLUSTERS",
    "class_clusters",
    "kernel_ward_distances",
    "l_method",
    "merge_curve",
    "ward_knee",
]

DEFAULT_MAX_CLUSTERS = 20
"""Default largest number of clusters examined by :func:`ward_knee` (see its docstring)."""


# -- input handling ------------------------------------------------------------------------------
def _as_ward_input(X) -> tuple[np.ndarray, int]:
    """Observations (2-D) or a condensed distance vector (1-D); returns (array, n_points)."""
    X = np.asarray(X)
    if X.ndim == 1:
        d = check_array(X, ensure_2d=False, dtype=float, ensure_min_samples=0)
        m = d.shape[0]
        n = int(round((1.0 + np.sqrt(1.0 + 8.0 * m)) / 2.0)) if m else 1
        if n * (n - 1) // 2 != m:
            raise ValueError(
                f"a 1-D input is read as a condensed distance vector; its length {m} is not "
                "n (n - 1) / 2 for any n"
            )
        if np.any(d < 0):
            raise ValueError("condensed distances must be non-negative")
        return d, n
    if X.ndim == 2 and X.dtype == np.float64 and np.isfinite(X).all():
        return X, X.shape[0]  # already valid: skip check_array's per-call overhead
    X = check_array(X, dtype=float, ensure_min_samples=0)
    return X, X.shape[0]


# -- the merge-distance curve --------------------------------------------------------------------
def merge_curve(X, *, squared: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ward tree of ``X`` and its merge-distance curve.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features), or condensed distances
        Observations (Euclidean geometry), or a 1-D condensed vector of Euclidean distances
        such as :func:`kernel_ward_distances` returns.
    squared : bool, default=True
        ``True``: the curve is Ward's linkage ``W(A, B)`` of the SRSVM/SLMM papers (increase of
        the within-cluster sum of squares, ``= height^2 / 2``).  ``False``: scipy's merge
        height ``sqrt(2 W(A, B))``.  Both are non-increasing in the number of clusters.

    Returns
    -------
    Z : ndarray of shape (n_samples - 1, 4)
        The linkage matrix of :func:`scipy.cluster.hierarchy.linkage` (``method="ward"``).
    num_clusters : ndarray of shape (n_samples - 1,)
        ``2, 3, ..., n_samples``: the x axis of the curve.
    distances : ndarray of shape (n_samples - 1,)
        ``distances[j]`` is the cost of the merge performed when ``num_clusters[j]`` clusters
        are left, i.e. the merge that turns ``num_clusters[j]`` clusters into
        ``num_clusters[j] - 1``.  The steep part at small ``num_clusters`` holds the expensive
        merges between well separated groups; the knee is the last of them
        (:func:`l_method`).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [10.0], [11.0]])
    >>> Z, k, d = merge_curve(X)
    >>> k.tolist(), np.round(d, 9).tolist()
    ([2, 3, 4], [100.0, 0.5, 0.5])
    """
    X, n = _as_ward_input(X)
    if n < 2:
        return np.zeros((0, 4)), np.zeros(0, dtype=int), np.zeros(0)
    Z = linkage(X, method="ward")
    heights = Z[::-1, 2].copy()  # the last merge (2 -> 1 clusters) first
    distances = 0.5 * heights**2 if squared else heights
    num_clusters = np.arange(2, n + 1)
    return Z, num_clusters, distances


# -- the L-method --------------------------------------------------------------------------------
def _masked_line_sse(x: np.ndarray, y: np.ndarray, mask: np.ndarray, count: np.ndarray):
    """Residual sum of squares of the least-squares line through the ``count[r]`` points
    selected by each row ``r`` of ``mask`` (shape (s, b)), all rows at once; 0 for fewer than
    two points.  Centred sums and explicit residuals: exact lines give ~eps, not ~sqrt(eps)."""
    w = mask.astype(float)
    xc = (x - (w @ x / count)[:, None]) * w
    yc = (y - (w @ y / count)[:, None]) * w
    sxx = np.einsum("ij,ij->i", xc, xc)
    sxy = np.einsum("ij,ij->i", xc, yc)
    slope = np.divide(sxy, sxx, out=np.zeros_like(sxx), where=sxx > 0.0)
    yc -= slope[:, None] * xc  # the residuals
    sse = np.einsum("ij,ij->i", yc, yc)
    sse[count < 2] = 0.0
    return sse


def _knee_once(x: np.ndarray, y: np.ndarray, min_points: int) -> int:
    """One pass of the L-method: index of the last point of the best left line.

    Scores equal up to rounding (``1e-12`` of the curve's range) go to the smaller knee.  The
    two line fits of every split are computed at once (O(b^2) vectorised work on a curve of b
    points); the scan over the scores keeps the sequential tie rule.
    """
    b = len(x)
    splits = np.arange(min_points, b - min_points + 1)  # left = [:i], right = [i:]
    left = np.arange(b)[None, :] < splits[:, None]
    sizes = np.concatenate([splits, b - splits])
    rmse = np.sqrt(_masked_line_sse(x, y, np.vstack([left, ~left]), sizes) / sizes)
    s = len(splits)
    scores = (splits * rmse[:s] + (b - splits) * rmse[s:]) / b
    tie = 1e-12 * float(y.max() - y.min())
    best, best_err = -1, np.inf
    for i, err in zip(splits.tolist(), scores.tolist(), strict=True):
        if err < best_err - tie:
            best, best_err = i - 1, err
    return best


def l_method(
    num_clusters,
    distances,
    *,
    min_points: int = 2,
    iterative: bool = True,
    min_cutoff: int = 20,
) -> int:
    """Knee of an evaluation curve by the L-method of Salvador & Chan (2004).

    For every split ``c`` of the curve's points ``x_1 < ... < x_b`` into a left part
    ``x_1..x_c`` and a right part ``x_{c+1}..x_b`` (each at least ``min_points`` points), a
    least-squares line is fitted to each part and the split is scored by the size-weighted
    root mean squared error

        RMSE_c = c / b * RMSE(left) + (b - c) / b * RMSE(right).

    The knee is ``x_c`` of the split with the smallest score: the last point of the steep
    part.  On a Ward curve (:func:`merge_curve`, ``x = 2, 3, ...`` clusters) it is the number
    of clusters.

    **Iterative refinement** (``iterative=True``, the paper's Sec. 4.2): a long flat tail
    dominates both fits and drags the knee to the right, so the curve is cut at
    ``cutoff = max(2 * knee, min_cutoff)`` (never above the previous cutoff) and the knee is
    recomputed on the points with ``x <= cutoff``, until the knee no longer decreases.

    Parameters
    ----------
    num_clusters : array-like of shape (b,)
        The x axis (distinct values; sorted here).
    distances : array-like of shape (b,)
        The evaluation metric at each x (e.g. merge distances).
    min_points : int, default=2
        Fewest points per line (2: a line needs two points).
    iterative : bool, default=True
        Apply the iterative refinement of the cutoff.
    min_cutoff : int, default=20
        Smallest cutoff (in x units) of the refinement; Salvador & Chan use 20.

    Returns
    -------
    int
        The x value at the knee.  A curve with fewer than ``2 * min_points`` points cannot be
        split into two lines; the function then returns 1 ("no knee: one cluster").  With
        ``x`` starting at 2 and ``min_points=2`` the smallest knee is 3 (two points are needed
        left of the knee); :func:`ward_knee` adds a test for 2 clusters.

    Examples
    --------
    >>> x = np.arange(2, 21)
    >>> y = np.where(x <= 6, 100.0 - 15.0 * x, 16.0 - 0.5 * x)  # steep up to x = 6
    >>> l_method(x, y)
    6
    """
    x = np.asarray(num_clusters, dtype=float).ravel()
    y = np.asarray(distances, dtype=float).ravel()
    if x.shape != y.shape:
        raise ValueError(
            f"num_clusters and distances must have the same length, got {x.size} and {y.size}"
        )
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("num_clusters and distances must be finite")
    if int(min_points) != min_points or min_points < 1:
        raise ValueError(f"min_points must be a positive integer, got {min_points!r}")
    min_points = int(min_points)
    order = np.argsort(x, kind="stable")
    x, y = x[order], y[order]
    if np.any(np.diff(x) == 0):
        raise ValueError("num_clusters must not contain duplicates")
    return _l_method_sorted(x, y, min_points, iterative, min_cutoff)


def _l_method_sorted(
    x: np.ndarray, y: np.ndarray, min_points: int, iterative: bool, min_cutoff: int
) -> int:
    """:func:`l_method` on validated input: finite floats, ``x`` increasing."""
    if len(x) < 2 * min_points:
        return 1
    knee = x[_knee_once(x, y, min_points)]
    if not iterative:
        return int(knee)
    cutoff = x[-1]
    while True:
        last = knee
        cutoff = min(cutoff, max(2 * last, min_cutoff))
        keep = x <= cutoff
        if keep.sum() < 2 * min_points or keep.all():
            break
        knee = x[keep][_knee_once(x[keep], y[keep], min_points)]
        if knee >= last:
            break
    return int(knee)


# -- Ward clustering at the knee -----------------------------------------------------------------
TWO_CLUSTER_TOLERANCE = 5.0
"""Tolerance of the 2-or-3-clusters test of :func:`ward_knee` (see ``_two_or_three``)."""


def _log_curve(distances: np.ndarray) -> np.ndarray:
    """Natural log of non-negative merge distances, zeros floored at 1e-12 * max."""
    top = float(distances.max()) if distances.size else 0.0
    return np.log(np.maximum(distances, 1e-12 * top if top > 0 else 1.0))


def _two_or_three(log_d: np.ndarray) -> int:
    """Resolve a knee at 3 clusters: is the 3 -> 2 merge in the steep or in the flat part?

    ``log_d`` is the log merge-distance curve at ``x = 2, 3, ..., m`` (``m >= 5``).  The
    L-method cannot isolate a steep part made of the single point ``x = 2`` (a line needs two
    points), so its smallest knee, 3, is ambiguous between 2 and 3 clusters.  The answer is 2
    when the 3 -> 2 merge looks like the flat part on both counts:

    * relative drops: ``d_2 / d_3 > d_3 / d_4`` (the big drop comes first), and
    * the flat line: ``log d_3`` exceeds the extrapolation to ``x = 3`` of the least-squares
      line through ``log d_4 .. log d_m`` by at most :data:`TWO_CLUSTER_TOLERANCE` times that
      line's largest absolute residual.

    Either test alone errs in simulations (2 or 3 Gaussian clusters, 2-10 dimensions, 6-20
    standard deviations apart, 300 draws each): the first calls "two close clusters and a far
    one" 2 clusters (14 / 300 errors), the second is sensitive to its tolerance; together they
    erred once in 600 draws.
    """
    drop_first, drop_second = log_d[0] - log_d[1], log_d[1] - log_d[2]
    if drop_first <= drop_second:
        return 3
    x = np.arange(len(log_d) - 2, dtype=float)  # x = 4..m, shifted; x = 3 is at -1
    tail = log_d[2:]
    slope, intercept = np.polyfit(x, tail, 1)
    spread = float(np.max(np.abs(tail - (slope * x + intercept))))
    above = log_d[1] - (intercept - slope)
    return 2 if above <= TWO_CLUSTER_TOLERANCE * spread else 3


def _first_appearance_labels(labels: np.ndarray) -> np.ndarray:
    """Relabel to 0..c-1 in the order in which the clusters first appear."""
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=int)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[inverse.ravel()]


def ward_knee(X, *, max_clusters: int | None = None, log_scale: bool = True) -> np.ndarray:
    """Ward clustering of ``X`` with the number of clusters at the knee of the merge curve.

    The knee is found by :func:`l_method` (iterative refinement on) on the curve of
    :func:`merge_curve` restricted to ``2..max_clusters`` clusters, and the tree is cut as
    :func:`scipy.cluster.hierarchy.fcluster` does with ``criterion="maxclust"``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features), or condensed distances
        Observations, or a condensed Euclidean distance vector (see
        :func:`kernel_ward_distances` for kernel Ward from a Gram matrix).
    max_clusters : int, optional
        Largest number of clusters considered (at most ``n_samples``).  Default
        ``min(n_samples // 2, 20)``.  The cap of 20: the knee of a Ward curve lies among the
        few expensive final merges, while the many cheap early merges of a large class form
        a long tail that only biases the two-line fit (the reason for the L-method's
        refinement, whose minimum cutoff is 20).  The cap of ``n_samples // 2``: clusters
        describe the data by their covariance matrices, which need two points, so the curve
        stops where clusters hold two points on average; below it the log curve ends in the
        steep drop of the nearest-neighbour merges, which pulls the knee to many tiny
        clusters (measured in :doc:`/user_guide/defaults`, "Measurements behind other
        defaults").
    log_scale : bool, default=True
        Fit the L-method's lines to the logarithm of the merge distances (Ward's ``W`` and
        scipy's height then give the same knee).  Merge costs between well separated groups
        span orders of magnitude, so on a linear scale the steep part is far from a line
        and the knee lands early, missing the number of well separated clusters where the
        log curve finds it (measured in :doc:`/user_guide/defaults`, "Measurements behind
        other defaults").  ``False`` uses the papers' linear ``W`` curve.

    Returns
    -------
    labels : ndarray of int, shape (n_samples,)
        Cluster of every point, ``0..c-1`` numbered in order of first appearance.

    Notes
    -----
    * One point, two points, or a curve too short for two lines (fewer than 4 points: fewer
      than 10 samples with the default ``max_clusters``, or ``max_clusters < 5``) give a
      single cluster: no knee can be fitted, and tiny clusters have no covariance to speak
      of.
    * Identical points (all merge distances 0) give a single cluster.
    * The L-method needs two points left of the knee, so on a curve starting at 2 clusters
      it never returns 2; when it returns 3, ``_two_or_three`` decides between 2 and 3.
    * The L-method never answers "1 cluster" on a long curve: a class without cluster
      structure is still split at its most knee-like merge.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(c, 0.1, size=(20, 2)) for c in (0.0, 5.0, 10.0)])
    >>> labels = ward_knee(X)
    >>> int(labels.max() + 1)
    3
    """
    X, n = _as_ward_input(X)
    if max_clusters is not None and (int(max_clusters) != max_clusters or max_clusters < 1):
        raise ValueError(f"max_clusters must be a positive integer or None, got {max_clusters!r}")
    if n <= 2:
        return np.zeros(n, dtype=int)
    return _ward_knee(X, n, max_clusters, log_scale)


def _ward_knee(X: np.ndarray, n: int, max_clusters: int | None, log_scale: bool) -> np.ndarray:
    """:func:`ward_knee` on validated input (``_as_ward_input``'s output, ``n > 2``).

    The knee does not depend on the scale of X (it scales every merge distance alike): data
    far from unit scale are clustered divided by a power of two (exact), so that the squared
    merge heights neither over- nor underflow."""
    X = unit_scaled(X, far_only=True)[1]
    Z = linkage(X, method="ward")
    if max_clusters is None:
        m = min(n // 2, DEFAULT_MAX_CLUSTERS)
    else:
        m = min(n, int(max_clusters))
    # the merge curve of merge_curve(squared=True) at 2..m clusters: the last m - 1 merges
    d = 0.5 * Z[::-1, 2][: max(m - 1, 0)] ** 2
    if len(d) == 0 or d[0] <= 0.0:
        return np.zeros(n, dtype=int)
    ks = np.arange(2.0, m + 1.0)
    log_d = _log_curve(d)
    k = _l_method_sorted(ks, log_d if log_scale else d, 2, True, 20)
    if k == 3:
        k = _two_or_three(log_d)
    if k <= 1:
        return np.zeros(n, dtype=int)
    return _first_appearance_labels(_maxclust(Z, n, k))


def _maxclust(Z: np.ndarray, n: int, k: int) -> np.ndarray:
    """Flat clusters of ``fcluster(Z, t=k, criterion="maxclust")`` (the same partition).

    For merge heights in non-decreasing order (scipy's linkage output) fcluster cuts at the
    height ``h`` of the merge that leaves k clusters and keeps every merge of height <= h
    (ties can leave fewer than k clusters); the clusters are the roots of those merges,
    found here by pointer jumping instead of through fcluster's validation of Z.  Other
    inputs go to fcluster.
    """
    h = Z[:, 2]
    if not 2 <= k <= n - 2 or np.any(h[1:] < h[:-1]):
        return fcluster(Z, t=k, criterion="maxclust")
    m = int(np.searchsorted(h, h[n - k - 1], side="right"))  # merges kept
    parent = np.arange(2 * n - 1)
    parent[Z[:m, :2].astype(np.intp)] = (n + np.arange(m))[:, None]
    while True:
        up = parent[parent]
        if np.array_equal(up, parent):
            return parent[:n]
        parent = up


def class_clusters(
    X,
    y,
    labeled=None,
    *,
    max_clusters: int | None = None,
    log_scale: bool = True,
    gram: bool = False,
) -> tuple[np.ndarray, dict]:
    """Ward clusters at the knee, found separately inside every class of the labeled points.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features), or (n_samples, n_samples) if ``gram``
        Inputs; pass explicit kernel features (rows of ``V`` with ``V V^T = K``) or, with
        ``gram=True``, the Gram matrix ``K`` itself for kernel Ward's linkage.
    y : array-like of shape (n_samples,)
        Class labels (entries of unlabeled points are ignored).
    labeled : array-like of bool, shape (n_samples,), optional
        Mask of the labeled points; None means every point is labeled.
    max_clusters : int, optional
        Largest number of clusters per class (see :func:`ward_knee`).
    log_scale : bool, default=True
        See :func:`ward_knee`.
    gram : bool, default=False
        ``X`` is a symmetric PSD Gram matrix: every class is clustered on the feature-space
        distances of its block (:func:`kernel_ward_distances`), which is Ward's linkage on
        any explicit features ``V`` with ``V V^T = K`` without forming them (O(n^2) instead
        of the O(n^2 r) distances between r-dimensional features).

    Returns
    -------
    cluster_ids : ndarray of int, shape (n_samples,)
        Global cluster ids, numbered consecutively class by class (classes in sorted order,
        clusters inside a class in order of first appearance); -1 for unlabeled points.
    counts : dict
        Number of clusters of every class, keyed by the class label.

    Examples
    --------
    >>> X = np.array([[0.0], [0.1], [5.0], [5.1], [9.0]])
    >>> ids, counts = class_clusters(X, [0, 0, 1, 1, 1], [True, True, True, True, False])
    >>> ids.tolist(), {int(k): v for k, v in counts.items()}
    ([0, 0, 1, 1, -1], {0: 1, 1: 1})
    """
    if not (isinstance(X, np.ndarray) and X.ndim == 2 and X.dtype == np.float64):
        X = check_array(X, dtype=float)
    elif not np.isfinite(X).all():
        X = check_array(X, dtype=float)  # raises the usual error
    y = np.asarray(y)
    n = X.shape[0]
    if gram and X.shape[1] != n:
        raise ValueError(f"a Gram matrix must be square, got shape {X.shape}")
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"y must have shape ({n},), got {y.shape}")
    if labeled is None:
        mask = np.ones(n, dtype=bool)
    else:
        mask = np.asarray(labeled)
        if mask.dtype != bool or mask.shape != (n,):
            raise ValueError(
                f"labeled must be a boolean mask of shape ({n},), got dtype {mask.dtype} and "
                f"shape {mask.shape}"
            )
    if max_clusters is not None and (int(max_clusters) != max_clusters or max_clusters < 1):
        raise ValueError(f"max_clusters must be a positive integer or None, got {max_clusters!r}")
    ids = np.full(n, -1, dtype=int)
    counts: dict = {}
    offset = 0
    for cls in np.unique(y[mask]):
        members = np.flatnonzero(mask & (y == cls))
        m = len(members)
        if m <= 2:
            labels = np.zeros(m, dtype=int)
        elif gram:
            d = _gram_distances(X[np.ix_(members, members)], symmetric=False, overwrite=True)
            labels = _ward_knee(d, m, max_clusters, log_scale)
        else:
            labels = _ward_knee(X[members], m, max_clusters, log_scale)
        ids[members] = labels + offset
        c = int(labels.max()) + 1
        counts[cls.item() if hasattr(cls, "item") else cls] = c
        offset += c
    return ids, counts


def kernel_ward_distances(K) -> np.ndarray:
    """Condensed feature-space distances of a Gram matrix, for kernel Ward's linkage.

    ``||phi(x_i) - phi(x_j)|| = sqrt(K_ii + K_jj - 2 K_ij)`` (negative rounding clipped to 0),
    in :func:`scipy.spatial.distance.squareform`'s condensed order.  Ward's linkage on these
    distances equals Ward's linkage on any explicit features ``V`` with ``V V^T = K``:
    ``linkage(kernel_ward_distances(K), "ward")`` and ``linkage(V, "ward")`` merge the same
    clusters at the same heights.  The vector can be passed to :func:`merge_curve` and
    :func:`ward_knee` in place of observations.

    Parameters
    ----------
    K : array-like of shape (n_samples, n_samples)
        Symmetric positive semi-definite Gram matrix (symmetrised here).

    Returns
    -------
    ndarray of shape (n_samples * (n_samples - 1) / 2,)

    Examples
    --------
    >>> V = np.array([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]])
    >>> kernel_ward_distances(V @ V.T).tolist()
    [5.0, 1.0, 4.242640687119285]
    """
    K = check_array(K, dtype=float)
    if K.shape[0] != K.shape[1]:
        raise ValueError(f"K must be square, got shape {K.shape}")
    return _gram_distances(K)


def _gram_distances(K: np.ndarray, symmetric: bool = True, overwrite: bool = False) -> np.ndarray:
    """:func:`kernel_ward_distances` of a validated square Gram matrix.

    ``symmetric=False`` skips the symmetrisation (only the upper triangle is read: the
    same distances when K is symmetric); ``overwrite=True`` computes in K's memory.
    """
    if symmetric:
        K = 0.5 * (K + K.T)
    elif not overwrite:
        K = K.copy()
    diag = np.diag(K).copy()
    K *= -2.0
    K += diag[:, None]  # (-2 K_ij + d_i) + d_j: no n x n temporary
    K += diag[None, :]
    np.fill_diagonal(K, 0.0)
    np.maximum(K, 0.0, out=K)
    np.sqrt(K, out=K)
    return squareform(K, checks=False)
