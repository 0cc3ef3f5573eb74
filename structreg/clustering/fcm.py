"""Fuzzy c-means (Bezdek, 1981).

Fuzzy c-means minimises

    J_m(U, V) = sum_i sum_j u_ij^m ||x_i - v_j||^2,  subject to  sum_j u_ij = 1,  u_ij >= 0,

over the memberships ``U`` (n_samples, n_clusters) and the centres ``V`` (n_clusters,
n_features), for a fuzzifier ``m > 1``, by alternating the two exact block minimisations

* centres for fixed memberships: ``v_j = sum_i u_ij^m x_i / sum_i u_ij^m``;
* memberships for fixed centres: ``u_ij = 1 / sum_k (d_ij / d_ik)^(2 / (m - 1))`` with
  ``d_ij = ||x_i - v_j||``.

Each step can only lower ``J_m``, so the objective is monotone along the iterations.  A point
that coincides with one or more centres (``d_ij = 0``) gets membership 1 on the coinciding
centre(s), split evenly if there are several, and 0 elsewhere (the limit of the formula).
As ``m -> 1`` the memberships become hard and the algorithm tends to k-means; larger ``m``
gives fuzzier partitions (``m = 2`` is the usual choice).
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from scipy.spatial.distance import cdist
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.cluster import kmeans_plusplus
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_array, check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from .._compat import Interval
from .._numerics import unit_scaled
from .._params import constraints_for

__all__ = ["FuzzyCMeans", "fuzzy_cmeans"]


def _squared_distances(X: np.ndarray, centers: np.ndarray) -> np.ndarray:
    # Direct differences (not the ||x||^2 - 2<x, v> + ||v||^2 expansion), so a point equal
    # to a centre is at distance exactly 0 and gets the exact "coinciding" memberships.
    return cdist(X, centers, metric="sqeuclidean")


def _memberships(D2: np.ndarray, m: float) -> np.ndarray:
    """Optimal memberships for squared distances ``D2`` (n_samples, n_clusters).

    ``u_ij = d_ij^(-2/(m-1)) / sum_k d_ik^(-2/(m-1))``, evaluated as a row-wise softmax of
    ``-log(d_ij^2) / (m - 1)`` so that neither overflows nor underflows for ``m`` close to 1.
    Rows with a zero distance get the limit: 1 shared evenly by the zero-distance centres.
    """
    zero = D2 <= 0.0
    with np.errstate(divide="ignore"):
        logits = -np.log(D2) / (m - 1.0)
    hit = zero.any(axis=1)
    logits[hit] = 0.0  # replaced below; keeps +inf out of the softmax
    logits -= logits.max(axis=1, keepdims=True)
    U = np.exp(logits)
    U /= U.sum(axis=1, keepdims=True)
    if hit.any():
        Z = zero[hit].astype(float)
        U[hit] = Z / Z.sum(axis=1, keepdims=True)
    return U


def _centers(X: np.ndarray, U: np.ndarray, m: float, previous: np.ndarray) -> np.ndarray:
    """Weighted means ``sum_i u_ij^m x_i / sum_i u_ij^m``.

    A cluster whose weights ``u_ij^m`` all underflow to 0 does not enter ``J_m`` at all, so
    any centre minimises it; it keeps its previous centre.
    """
    W = U**m
    mass = W.sum(axis=0)
    centers = previous.copy()
    ok = mass > 0.0
    centers[ok] = (W[:, ok].T @ X) / mass[ok, None]
    return centers


def _objective(U: np.ndarray, D2: np.ndarray, m: float) -> float:
    return float(np.sum(U**m * D2))


def _check_m(m) -> float:
    if isinstance(m, (bool, np.bool_)) or not isinstance(m, Real):
        raise ValueError(f"the fuzzifier m must be a real number > 1, got {m!r}")
    if not (np.isfinite(m) and m > 1):
        raise ValueError(f"the fuzzifier m must be a finite real number > 1, got m={m!r}")
    return float(m)


def _initial_centers(X: np.ndarray, n_clusters: int, init, random_state) -> np.ndarray:
    n_samples, n_features = X.shape
    if isinstance(init, str):
        rng = check_random_state(random_state)
        if init == "k-means++":
            centers, _ = kmeans_plusplus(X, n_clusters, random_state=rng)
            return np.asarray(centers, dtype=float)
        if init == "random":
            idx = rng.choice(n_samples, size=n_clusters, replace=False)
            return X[idx].copy()
        raise ValueError(
            f"init must be 'k-means++', 'random' or an array of initial centres, got {init!r}"
        )
    centers = check_array(init, dtype=np.float64, copy=True, input_name="init")
    if centers.shape != (n_clusters, n_features):
        raise ValueError(
            f"init array has shape {centers.shape}, expected (n_clusters, n_features) = "
            f"({n_clusters}, {n_features})"
        )
    return centers


def fuzzy_cmeans(
    X,
    n_clusters: int,
    *,
    m: float = 2.0,
    tol: float = 1e-6,
    max_iter: int = 300,
    init="k-means++",
    random_state=None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Fuzzy c-means clustering of the rows of ``X``.

    Minimises ``J_m(U, V) = sum_i sum_j u_ij^m ||x_i - v_j||^2`` over memberships ``U`` on
    the simplex (rows sum to 1, entries >= 0) and centres ``V`` by alternating the exact
    centre and membership updates (see the module docstring).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Data; must be finite.
    n_clusters : int
        Number of clusters, ``1 <= n_clusters <= n_samples``.
    m : float, default=2.0
        Fuzzifier, ``m > 1``.  Close to 1 gives nearly hard (k-means like) memberships.
    tol : float, default=1e-6
        Stopping tolerance (> 0): iterations stop as soon as the largest absolute change of any
        membership between two successive iterations, ``max_ij |u_ij^(t) - u_ij^(t-1)|``,
        is below ``tol``.
    max_iter : int, default=300
        Maximum number of iterations (centre update followed by membership update); a
        :class:`~sklearn.exceptions.ConvergenceWarning` is issued if it is reached first.
    init : {"k-means++", "random"} or array-like of shape (n_clusters, n_features), \
default="k-means++"
        Initial centres: k-means++ seeding (:func:`sklearn.cluster.kmeans_plusplus`),
        ``n_clusters`` distinct samples drawn at random, or the given array.
    random_state : int, RandomState instance or None, default=None
        Seed of the initialisation (unused when ``init`` is an array).

    Returns
    -------
    centers : ndarray of shape (n_clusters, n_features)
        Final centres ``V``.
    memberships : ndarray of shape (n_samples, n_clusters)
        Memberships ``U``; the optimal ones for ``centers`` (so rows sum to 1).
    objective_history : ndarray of shape (n_iter + 1,)
        ``J_m`` at the initial centres (with their optimal memberships) and after every
        iteration; non-increasing.  The last entry is ``J_m(memberships, centers)``.
    n_iter : int
        Number of iterations run.

    Examples
    --------
    >>> import numpy as np
    >>> from structreg.clustering import fuzzy_cmeans
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [10.0, 0.0], [10.0, 1.0]])
    >>> centers, U, history, n_iter = fuzzy_cmeans(X, 2, random_state=0)
    >>> np.round(centers[np.argsort(centers[:, 0])], 2)
    array([[ 0. ,  0.5],
           [10. ,  0.5]])
    >>> bool(np.allclose(U.sum(axis=1), 1.0))
    True
    """
    X = check_array(X, dtype=np.float64, input_name="X")
    n_samples = X.shape[0]
    if isinstance(n_clusters, (bool, np.bool_)) or not isinstance(n_clusters, Integral):
        raise ValueError(f"n_clusters must be an integer, got {n_clusters!r}")
    if not 1 <= n_clusters <= n_samples:
        raise ValueError(
            f"n_clusters={n_clusters} must be between 1 and the number of samples "
            f"(n_samples={n_samples})"
        )
    m = _check_m(m)
    if isinstance(tol, (bool, np.bool_)) or not isinstance(tol, Real) or not tol > 0:
        raise ValueError(f"tol must be a positive real number, got {tol!r}")
    if isinstance(max_iter, (bool, np.bool_)) or not isinstance(max_iter, Integral):
        raise ValueError(f"max_iter must be a positive integer, got {max_iter!r}")
    if max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer, got {max_iter!r}")

    # memberships depend on ratios of distances only: data far from unit scale are clustered
    # divided by a power of two (exact), so their squared distances neither over- nor underflow
    scale, X = unit_scaled(X, far_only=True)
    centers = _initial_centers(X, int(n_clusters), init, random_state)
    if not isinstance(init, str):
        centers /= scale  # given in X's units
    D2 = _squared_distances(X, centers)
    U = _memberships(D2, m)
    history = [_objective(U, D2, m)]
    n_iter, change = 0, np.inf
    while n_iter < max_iter and not change < tol:
        n_iter += 1
        centers = _centers(X, U, m, centers)
        D2 = _squared_distances(X, centers)
        U_new = _memberships(D2, m)
        history.append(_objective(U_new, D2, m))
        change = float(np.max(np.abs(U_new - U)))
        U = U_new
    if not change < tol:
        warnings.warn(
            f"fuzzy c-means did not converge in max_iter={max_iter} iterations (largest "
            f"membership change {change:.3g} >= tol={tol:g}); increase max_iter or tol",
            ConvergenceWarning,
            stacklevel=2,
        )
    return centers * scale, U, np.asarray(history) * (scale * scale), n_iter


class FuzzyCMeans(ClusterMixin, BaseEstimator):
    """Fuzzy c-means clustering (Bezdek).

    Minimises ``J_m(U, V) = sum_i sum_j u_ij^m ||x_i - v_j||^2`` over centres ``V`` and
    memberships ``U`` whose rows lie on the probability simplex, by alternating the exact
    centre and membership updates (see :func:`fuzzy_cmeans`).

    Parameters
    ----------
    n_clusters : int, default=3
        Number of clusters (at most the number of training samples).
    m : float, default=2.0
        Fuzzifier, ``m > 1``; values close to 1 give nearly hard memberships (k-means).
    tol : float, default=1e-6
        Stop when the largest absolute change of any membership between two successive
        iterations is below ``tol``.
    max_iter : int, default=300
        Maximum number of iterations.
    init : {"k-means++", "random"} or array-like of shape (n_clusters, n_features), \
default="k-means++"
        Initial centres: k-means++ seeding, random distinct samples, or the given array.
    random_state : int, RandomState instance or None, default=None
        Seed of the initialisation.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        Centres ``V``.
    memberships_ : ndarray of shape (n_samples, n_clusters)
        Memberships ``U`` of the training samples (optimal for ``cluster_centers_``; rows
        sum to 1).
    labels_ : ndarray of shape (n_samples,)
        Hard labels, ``argmax_j memberships_[i, j]`` (the nearest centre).
    objective_ : float
        Final value of ``J_m``.
    objective_history_ : ndarray of shape ``(n_iter_ + 1,)``
        ``J_m`` at the initialisation and after each iteration (non-increasing).
    n_iter_ : int
        Number of iterations run.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape ``(n_features_in_,)``
        Names of features seen during fit, when ``X`` has string column names.

    Examples
    --------
    >>> import numpy as np
    >>> from structreg.clustering import FuzzyCMeans
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [10.0, 0.0], [10.0, 1.0]])
    >>> fcm = FuzzyCMeans(n_clusters=2, random_state=0).fit(X)
    >>> bool(fcm.labels_[0] == fcm.labels_[1] != fcm.labels_[2] == fcm.labels_[3])
    True
    >>> np.round(fcm.predict_memberships([[5.0, 0.5]]), 3)
    array([[0.5, 0.5]])
    """

    def __init__(
        self,
        n_clusters: int = 3,
        m: float = 2.0,
        tol: float = 1e-6,
        max_iter: int = 300,
        init="k-means++",
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.m = m
        self.tol = tol
        self.max_iter = max_iter
        self.init = init
        self.random_state = random_state

    def fit(self, X, y=None) -> FuzzyCMeans:
        """Compute the fuzzy c-means partition of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : Ignored

        Returns
        -------
        self : FuzzyCMeans
        """
        self._validate_params()
        X = validate_data(self, X, dtype=np.float64)
        centers, U, history, n_iter = fuzzy_cmeans(
            X,
            self.n_clusters,
            m=self.m,
            tol=self.tol,
            max_iter=self.max_iter,
            init=self.init,
            random_state=self.random_state,
        )
        self.cluster_centers_ = centers
        self.memberships_ = U
        self.labels_ = np.argmax(U, axis=1)
        self.objective_history_ = history
        self.objective_ = float(history[-1])
        self.n_iter_ = n_iter
        return self

    def predict_memberships(self, X) -> np.ndarray:
        """Memberships of new points: the optimal ``U`` for the fitted centres.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        memberships : ndarray of shape (n_samples, n_clusters)
            Non-negative, each row sums to 1.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        _, X, centers = unit_scaled(X, self.cluster_centers_, far_only=True)
        return _memberships(_squared_distances(X, centers), float(self.m))

    def predict(self, X) -> np.ndarray:
        """Hard labels of new points: the cluster of largest membership (nearest centre).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        return np.argmax(self.predict_memberships(X), axis=1)


# the glossary's rules, except that fuzzy c-means always needs an iteration cap
FuzzyCMeans._parameter_constraints = {
    **constraints_for(FuzzyCMeans),
    "max_iter": [Interval(Integral, 1, None, closed="left")],
}
