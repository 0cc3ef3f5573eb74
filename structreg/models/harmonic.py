"""Gaussian fields and harmonic functions (GFHF; Zhu, Ghahramani & Lafferty, ICML 2003).

Semi-supervised label inference on a weighted graph over labeled and unlabeled training
points: the class scores ``F`` minimise ``sum_ij w_ij ||F_i - F_j||^2 = tr(F^T L F)`` with the
labeled rows clamped to their one-of-c labels, whose minimiser is *harmonic* (every unlabeled
value is the weighted mean of its neighbours' values).  An inductive extension (the
harmonic rule applied to a new point's neighbourhood) classifies unseen points.  The S-RLSC
paper (Fan et al. 2011) uses GFHF with a 7-nearest-neighbour graph as a baseline.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import splu
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.neighbors import NearestNeighbors
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from .._params import constraints_for
from ..structure.graphs import check_graph, knn_graph
from ._base import SemiSupervisedLabelsMixin, check_training_X, missing_as_unlabeled

__all__ = ["GFHF", "DisconnectedGraphWarning", "class_mass_normalize", "harmonic_function"]

_DENSE_FRACTION = 0.125
"""Unlabeled blocks with more than this fraction of nonzeros are solved by dense Cholesky."""


class DisconnectedGraphWarning(UserWarning):
    """Some unlabeled points lie in graph components without any labeled point."""


def harmonic_function(
    W: sp.spmatrix | np.ndarray, labeled: np.ndarray, targets: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The harmonic extension of labeled values over a graph.

    Solves ``(D_uu - W_uu) F_u = W_ul F_l`` (``D`` the degree matrix of ``W``), the minimiser
    of ``tr(F^T L F)``, ``L = D - W``, with the labeled rows fixed to ``targets``.  The matrix
    is singular exactly on connected components of the graph that hold no labeled point;
    those rows are not solved for but reported, and every other block is symmetric positive
    definite (irreducibly diagonally dominant), factorised by a sparse LU (dense Cholesky for
    dense blocks).

    Parameters
    ----------
    W : sparse matrix or ndarray of shape (n, n)
        Symmetric non-negative affinities (the diagonal is ignored).
    labeled : ndarray of bool, shape (n,)
    targets : ndarray of shape (n_labeled, n_outputs)
        Values at the labeled points, in the order of ``np.flatnonzero(labeled)``.

    Returns
    -------
    F : ndarray of shape (n, n_outputs)
        Harmonic values; the labeled rows are ``targets``, the unreachable rows are NaN.
    unreachable : ndarray of bool, shape (n,)
        Unlabeled points whose connected component holds no labeled point.

    Examples
    --------
    >>> import numpy as np
    >>> W = np.array([[0, 1, 0], [1, 0, 3], [0, 3, 0]], dtype=float)  # path 0 - 1 - 2
    >>> F, unreachable = harmonic_function(W, np.array([True, False, True]), np.eye(2))
    >>> F[1]  # (1 * [1, 0] + 3 * [0, 1]) / 4
    array([0.25, 0.75])
    """
    W = sp.csr_matrix(W, dtype=float)
    W = W - sp.diags(W.diagonal())  # self-loops cancel in D - W
    labeled = np.asarray(labeled, dtype=bool)
    targets = np.asarray(targets, dtype=float).reshape(int(labeled.sum()), -1)
    n = W.shape[0]
    _, component = connected_components(W, directed=False)
    has_label = np.zeros(component.max() + 1 if n else 0, dtype=bool)
    has_label[component[labeled]] = True
    unreachable = ~labeled & ~has_label[component]
    solve = ~labeled & ~unreachable

    F = np.full((n, targets.shape[1]), np.nan)
    F[labeled] = targets
    if solve.any():
        degree = np.asarray(W.sum(axis=1)).ravel()
        W_u = W[solve]
        A = (sp.diags(degree[solve]) - W_u[:, solve]).tocsc()
        B = W_u[:, labeled] @ targets
        n_u = A.shape[0]
        if A.nnz > _DENSE_FRACTION * n_u * n_u:
            F[solve] = scipy.linalg.solve(A.toarray(), B, assume_a="pos")
        else:
            F[solve] = splu(A).solve(B)
    return F, unreachable


def class_mass_normalize(F: np.ndarray, rows: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """Class mass normalisation (Zhu, Ghahramani & Lafferty 2003): ``F`` with the class
    columns of ``F[rows]`` rescaled so that the class masses match ``prior``.

    ``F[i, k] <- prior[k] F[i, k] / sum_{j in rows} F[j, k]`` for ``i`` in ``rows`` (the
    unlabeled points), so that ``sum_{j in rows} F[j, k] = prior[k]``; a class of zero mass
    keeps its zero column.  Other rows are returned unchanged.

    Examples
    --------
    >>> import numpy as np
    >>> F = np.array([[1.0, 0.0], [0.9, 0.1], [0.6, 0.4]])
    >>> class_mass_normalize(F, np.array([False, True, True]), np.array([0.5, 0.5]))
    array([[1. , 0. ],
           [0.3, 0.1],
           [0.2, 0.4]])
    """
    mass = F[rows].sum(axis=0)
    prior = np.asarray(prior, dtype=float)
    scale = np.divide(prior, mass, out=np.zeros_like(mass), where=mass > 0)
    out = F.copy()
    out[rows] *= scale
    return out


class GFHF(SemiSupervisedLabelsMixin, ClassifierMixin, BaseEstimator):
    """Gaussian fields and harmonic functions: semi-supervised graph label inference.

    On a graph ``W`` over all training points the class scores are the harmonic function
    with the labeled points clamped to their one-of-c labels ``Y_l``:

        F_u = (D_uu - W_uu)^{-1} W_ul Y_l,    D = diag(W 1),

    i.e. every unlabeled point's score vector is the ``W``-weighted mean of its neighbours'
    (:func:`harmonic_function`).  Unlabeled samples are marked ``-1`` (``None`` for string
    labels), by a missing label (NaN, None, ``pd.NA``) or by the ``unlabeled`` mask of
    ``fit``.  Unlabeled points in a connected component
    without any labeled point have no harmonic value: they get the class prior (labeled
    class frequencies) and a :class:`DisconnectedGraphWarning`.

    New points are classified by the same rule on their neighbourhood:
    ``f(x) = sum_j w(x, x_j) f_j / sum_j w(x, x_j)`` over the ``n_neighbors`` nearest training
    points, ``w(x, x_j) = exp(-||x - x_j||^2 / t_)``, ``f_j`` the training label distributions.

    Parameters
    ----------
    n_neighbors : int, default=7
        k of the kNN graph (7 in the S-RLSC experiments), and the neighbourhood of a new
        point in the out-of-sample rule.
    t : float or None, default=None
        Heat-kernel width of the graph weights ``exp(-||x_i - x_j||^2 / t)`` and of the
        out-of-sample rule.  None: the mean squared edge length of the kNN graph (for a
        precomputed graph: the mean squared distance of the training points to their
        ``n_neighbors`` nearest training points).
    graph : "knn", sparse matrix or array-like, default="knn"
        ``"knn"``: the symmetric kNN graph with heat weights,
        ``knn_graph(X, n_neighbors, weights="heat", t=t)``.  An (n_samples, n_samples)
        symmetric non-negative affinity matrix over the training points is used as given
        (its diagonal is ignored), e.g. the dense Gaussian affinities of Zhu et al.
    class_mass_normalization : bool, default=False
        Class mass normalisation (CMN, Zhu et al. 2003, Sec. 4): the class columns of the
        harmonic scores of the unlabeled points are rescaled,
        ``F_ik <- q_k F_ik / sum_{j unlabeled} F_jk``, so that the class masses match the
        class priors ``q`` (:func:`class_mass_normalize`) before the rows are normalised
        (without it, the argmax of the harmonic scores can give badly unbalanced classes
        when the classes are not well separated, as the paper notes).  ``transduction_``,
        ``label_distributions_`` and hence the out-of-sample rule use the rescaled scores.
    class_prior : array-like of shape (n_classes,) or None, default=None
        The priors ``q`` of CMN, in the order of ``classes_`` (normalised to sum to 1); None:
        the class frequencies of the labeled points.  Only with
        ``class_mass_normalization=True``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    X_ : ndarray of shape (n_samples, n_features)
        The training points (neighbours of the out-of-sample rule).
    graph_ : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        The affinity matrix ``W`` used.
    t_ : float
        Heat-kernel width of the out-of-sample rule (and of the kNN graph).
    label_distributions_ : ndarray of shape (n_samples, n_classes)
        Harmonic class scores of the training points, rows normalised to sum to 1; labeled
        rows are their one-of-c labels.
    transduction_ : ndarray of shape (n_samples,)
        Labels of the training points (argmax of ``label_distributions_``).
    unreachable_ : ndarray of bool, shape (n_samples,)
        Unlabeled training points in components without labeled points (given the prior:
        ``class_prior_`` with CMN).
    class_prior_ : ndarray of shape (n_classes,)
        ``class_mass_normalization=True``: the class priors CMN matched.
    neighbors_ : NearestNeighbors
        Index over ``X_`` for the out-of-sample rule.

    References
    ----------
    X. Zhu, Z. Ghahramani and J. Lafferty, "Semi-supervised learning using Gaussian fields and
    harmonic functions", ICML 2003, pp. 912-919.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_moons
    >>> from structreg.models.harmonic import GFHF
    >>> X, y = make_moons(200, noise=0.05, random_state=0)
    >>> y_semi = np.full_like(y, -1)
    >>> y_semi[[0, 1, 2, 3]] = y[[0, 1, 2, 3]]
    >>> clf = GFHF().fit(X, y_semi)
    >>> bool((clf.transduction_ == y).mean() > 0.95)
    True
    >>> clf.predict_proba(X[:2]).sum(axis=1)
    array([1., 1.])
    """

    _semi_supervised = True

    def __init__(
        self,
        n_neighbors=7,
        t=None,
        graph="knn",
        class_mass_normalization=False,
        class_prior=None,
    ):
        self.n_neighbors = n_neighbors
        self.t = t
        self.graph = graph
        self.class_mass_normalization = class_mass_normalization
        self.class_prior = class_prior

    def fit(self, X, y, unlabeled=None) -> GFHF:
        """Infer the labels of the unlabeled training points.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Labels; ``-1`` (``None`` for string labels) and missing values (NaN, None,
            ``pd.NA``, e.g. in a pandas Series) mark unlabeled samples.
        unlabeled : array-like of bool, shape (n_samples,), optional
            Marks unlabeled samples explicitly (use when -1 is a real class).

        Returns
        -------
        self
        """
        self._validate_params()
        y = missing_as_unlabeled(y, unlabeled)
        X, y = validate_data(self, X, y, dtype=float, y_numeric=False)
        check_training_X(self, X)
        y = column_or_1d(y, warn=True)
        self.classes_, y_codes, labeled = self._encode_labels(y, unlabeled)
        n, n_classes = X.shape[0], len(self.classes_)

        self.X_ = X
        self.neighbors_ = NearestNeighbors(n_neighbors=min(self.n_neighbors, n)).fit(X)
        self.graph_, self.t_ = self._build_graph(X)

        F, self.unreachable_ = harmonic_function(
            self.graph_, labeled, np.eye(n_classes)[y_codes[labeled]]
        )
        prior = np.bincount(y_codes[labeled], minlength=n_classes) / labeled.sum()
        self.__dict__.pop("class_prior_", None)  # a refit without CMN
        if self.class_mass_normalization:
            prior = self.class_prior_ = self._checked_prior(prior)
        elif self.class_prior is not None:
            raise ValueError(
                "class_prior is used by class mass normalisation only; set "
                "class_mass_normalization=True"
            )
        if self.unreachable_.any():
            warnings.warn(
                f"{int(self.unreachable_.sum())} unlabeled training point(s) lie in graph "
                "components without any labeled point, where the harmonic solution is "
                "undefined; they get the class prior (labeled class frequencies). Connect "
                "the graph (larger n_neighbors) or label a point in every component.",
                DisconnectedGraphWarning,
                stacklevel=2,
            )
            F[self.unreachable_] = prior
        if self.class_mass_normalization:
            F = class_mass_normalize(F, ~labeled & ~self.unreachable_, prior)
        sums = F.sum(axis=1, keepdims=True)
        degenerate = ~(sums[:, 0] > 0)  # cannot happen in exact arithmetic; be safe
        F[degenerate], sums[degenerate] = prior, 1.0
        self.label_distributions_ = F / sums
        self.transduction_ = self.classes_[np.argmax(self.label_distributions_, axis=1)]
        return self

    def _checked_prior(self, labeled_prior: np.ndarray) -> np.ndarray:
        """The priors of CMN: ``class_prior`` checked and normalised, or the labeled
        class frequencies."""
        if self.class_prior is None:
            return labeled_prior
        prior = np.asarray(self.class_prior, dtype=float).ravel()
        if prior.shape != labeled_prior.shape:
            raise ValueError(
                f"class_prior has {prior.size} entries; expected one per class "
                f"({labeled_prior.size}: {self.classes_.tolist()})"
            )
        if not (np.all(np.isfinite(prior)) and np.all(prior >= 0) and prior.sum() > 0):
            raise ValueError(
                f"class_prior must be finite, non-negative and not all zero, got {prior}"
            )
        return prior / prior.sum()

    def _build_graph(self, X: np.ndarray) -> tuple[sp.csr_matrix, float]:
        if isinstance(self.graph, str):
            if self.graph != "knn":
                raise ValueError(
                    f"GFHF takes graph='knn' or a precomputed affinity matrix, got "
                    f"graph={self.graph!r}"
                )
            W = knn_graph(X, self.n_neighbors, weights="heat", t=self.t)
            if self.t is not None:
                return W, float(self.t)
            edges = W.tocoo()  # the width knn_graph used: the mean squared edge length
            return W, _positive_width(np.sum((X[edges.row] - X[edges.col]) ** 2, axis=1))
        W = check_graph(self.graph, X.shape[0])
        if self.t is not None:
            return W, float(self.t)
        k = min(self.n_neighbors + 1, X.shape[0])
        dist, ind = self.neighbors_.kneighbors(X, n_neighbors=k)
        others = ind != np.arange(X.shape[0])[:, None]
        return W, _positive_width(dist[others] ** 2)

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities by the harmonic rule over each point's nearest training points.

        ``f(x) = sum_j w_j f_j / sum_j w_j``, ``w_j = exp(-||x - x_j||^2 / t_)`` over the
        ``n_neighbors`` nearest training points, ``f_j = label_distributions_[j]``.  (For
        training points this averages over a neighbourhood that contains the point itself; see
        ``transduction_`` for the fitted labels.)

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=float, reset=False)
        dist, ind = self.neighbors_.kneighbors(X)
        d2 = dist**2
        # shift by the nearest distance: the same ratios, without underflow far from the data
        w = np.exp(-(d2 - d2[:, :1]) / self.t_)
        return np.einsum("ik,ikc->ic", w, self.label_distributions_[ind]) / w.sum(
            axis=1, keepdims=True
        )

    def predict(self, X) -> np.ndarray:
        """Most probable class by :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]


def _positive_width(squared_lengths: np.ndarray) -> float:
    """Mean squared length, or 1 when there are no edges or all have length 0 (as knn_graph)."""
    t = float(np.mean(squared_lengths)) if squared_lengths.size else 0.0
    return t if t > 0 else 1.0


GFHF._parameter_constraints = constraints_for(GFHF)
