"""Gaussian fields and harmonic functions (GFHF; Zhu, Ghahramani & Lafferty, ICML 2003).

Semi-supervised label inference on a weighted graph over labeled and unlabeled training
points: the class scores ``F`` minimise ``sum_ij w_ij ||F_i - F_j||^2 = tr(F^T L F)`` with the
labeled rows clamped to their one-of-c labels, whose minimiser is *harmonic* (every unlabeled
value is the weighted mean of its neighbours' values).  An inductive extension (the
harmonic rule applied to a new point's neighbourhood) classifies unseen points.  The S-RLSC
paper (Fan et al. 2011) uses GFHF with a 7-nearest-neighbour graph as a baseline.
"""

from __future__ import annotations

import numpy as np

from .._compat import StrOptions
from ..solvers.laplace import HARMONIC_TOL, harmonic_function, solve_harmonic
from .graph_inference import WEIGHT_CHOICES, DisconnectedGraphWarning, GraphInferenceClassifier

__all__ = ["GFHF", "DisconnectedGraphWarning", "class_mass_normalize", "harmonic_function"]


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


class GFHF(GraphInferenceClassifier):
    """Gaussian fields and harmonic functions: semi-supervised graph label inference.

    On a graph ``W`` over all training points the class scores are the harmonic function
    with the labeled points clamped to their one-of-c labels ``Y_l``:

        F_u = (D_uu - W_uu)^{-1} W_ul Y_l,    D = diag(W 1),

    i.e. every unlabeled point's score vector is the ``W``-weighted mean of its neighbours'
    (:func:`harmonic_function`; "Laplace learning").  Unlabeled samples are marked ``-1``
    (``None`` for string labels), by a missing label (NaN, None, ``pd.NA``) or by the
    ``unlabeled`` mask of ``fit``.  Unlabeled points in a connected component
    without any labeled point have no harmonic value: they get the class prior (labeled
    class frequencies) and a :class:`DisconnectedGraphWarning`.

    New points are classified by the same rule on their neighbourhood:
    ``f(x) = sum_j w(x, x_j) f_j / sum_j w(x, x_j)`` over the ``n_neighbors`` nearest training
    points, ``w`` the graph's edge weight (``weights``), ``f_j`` the training label
    distributions.

    Parameters
    ----------
    n_neighbors : int, default=7
        k of the kNN graph (7 in the S-RLSC experiments), and the neighbourhood of a new
        point in the out-of-sample rule.
    t : float or None, default=None
        Width of heat weights ``exp(-||x_i - x_j||^2 / t)`` (``weights="heat"`` or
        ``"auto"``), in the graph and the out-of-sample rule.  None: the mean squared edge
        length of the kNN graph (for a precomputed graph: the mean squared distance of the
        training points to their ``n_neighbors`` nearest training points).
    graph : "knn", sparse matrix or array-like, default="knn"
        ``"knn"``: the symmetric kNN graph with ``weights``.  An (n_samples, n_samples)
        symmetric non-negative affinity matrix over the training points is used as given
        (its diagonal is ignored), e.g. the dense Gaussian affinities of Zhu et al.;
        ``weights`` then only sets the out-of-sample rule.
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
    weights : {"auto", "connectivity", "heat", "self-tuning"}, default="auto"
        Edge weights of the kNN graph and of the out-of-sample rule.  ``"self-tuning"``:
        ``max(exp(-4 ||x_i - x_j||^2 / (sigma_i sigma_j)), 1e-8)``, ``sigma_i`` the distance
        from ``x_i`` to its ``n_neighbors``-th nearest other training point, copies of a
        point counted once (``structreg.structure.graphs.distinct_local_scales``; the
        floor is ``structreg.structure.graphs.SELF_TUNING_FLOOR``; a new point's ``sigma``
        is its distance to its ``n_neighbors``-th nearest training point).  ``"heat"``:
        ``max(exp(-||x_i - x_j||^2 / t), 1e-4)`` with one width ``t`` (Zhu et al.'s
        Gaussian fields; the floor keeps the systems of large graphs well conditioned,
        ``structreg.structure.graphs.HEAT_FLOOR``).
        ``"connectivity"``: 1 on every edge.
        ``"auto"``: builds the self-tuning and the heat graph from one neighbour search,
        solves both to a relative residual of 1e-2 and keeps the weighting whose labeling
        cuts fewer kNN edges relative to the classes' sizes
        (:func:`~structreg.structure.labeled_graph.normalized_cut`; ``weights_`` says which),
        solved on to ``tol``.
        Neither weighting wins everywhere: local scales follow classes of different
        densities (USPS), one width keeps a sparse gap between classes weak (two moons).
        The smaller cut picks the better of the two on both, and on 18 of 19 sets at 3-10
        labels per class it is within a point of the better (measured on the user guide's
        defaults page, :doc:`/user_guide/defaults`; at 1e6 and 1e7 points in the scale
        guide, :doc:`/user_guide/scale`, "Measurements behind the solvers' settings").
    tol : float, default=1e-6
        Relative residual of the conjugate-gradient solve of large systems
        (:func:`harmonic_function`).
    max_iter : int or None, default=None
        Iteration cap of that solve (None: ten times the unknowns).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    X_ : ndarray of shape (n_samples, n_features)
        The training points (neighbours of the out-of-sample rule).
    graph_ : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        The affinity matrix ``W`` used.
    t_ : float
        ``weights="heat"``: the width of the out-of-sample rule (and of the kNN graph).
    local_scale_ : ndarray of shape (n_samples,)
        ``weights="self-tuning"``: the training points' ``sigma_i``.
    weights_ : {"self-tuning", "heat", "connectivity"}
        The edge weights used (what ``weights="auto"`` picked).
    solver_ : {"direct", "cg", "amg"}
        How the harmonic system was solved (:func:`harmonic_function`, ``method="auto"``).
    n_iter_ : int
        Conjugate-gradient iterations run, summed over the class columns (including those
        before a switch to another method; 1 for a direct solve alone).
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
    labeled_ : ndarray of bool, shape (n_samples,)
        The labeled training points.
    labeled_codes_ : ndarray of int, shape (n_labeled,)
        Their class codes (indices into ``classes_``).
    score_scale_ : float
        The largest magnitude of the training scores: two class scores closer than
        ``64 eps`` times it are a tie, which goes to the nearest labeled training point's
        class (its score is raised by that much, so every output agrees).
    knn_algorithm_ : {"exact", "approximate", "precomputed"}
        The neighbour search that built the graph: exact, or approximate (faiss's inverted
        file tuned to a measured recall of 0.99, else NN-descent with ``pynndescent``)
        for large high-dimensional data (:func:`~structreg.structure.graphs.knn_graph`,
        ``algorithm="auto"``); ``"precomputed"`` for a graph given as a matrix.
    neighbors_ : NearestNeighbors
        Index over ``X_`` for the out-of-sample rule.

    References
    ----------
    X. Zhu, Z. Ghahramani and J. Lafferty, "Semi-supervised learning using Gaussian fields and
    harmonic functions", ICML 2003, pp. 912-919.
    L. Zelnik-Manor and P. Perona, "Self-tuning spectral clustering", NIPS 2004.

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

    _scores_attribute = "label_distributions_"
    _constraint_overrides = {"weights": [StrOptions({*WEIGHT_CHOICES, "auto"})]}
    _degenerate_hint = (
        "Harmonic solutions go flat when the labels are very few for the number of points: "
        "try PoissonLearning, more labels, or class_mass_normalization=True."
    )

    def __init__(
        self,
        n_neighbors=7,
        t=None,
        graph="knn",
        class_mass_normalization=False,
        class_prior=None,
        weights="auto",
        tol=HARMONIC_TOL,
        max_iter=None,
    ):
        super().__init__(
            n_neighbors=n_neighbors, weights=weights, t=t, graph=graph, tol=tol, max_iter=max_iter
        )
        self.class_mass_normalization = class_mass_normalization
        self.class_prior = class_prior

    def _solve_system(self, W, labeled, targets, tol):
        return solve_harmonic(W, labeled, targets, "auto", tol, self.max_iter)

    def _class_prior(self, frequencies: np.ndarray) -> np.ndarray:
        """The prior of unreachable points and of CMN: ``class_prior_`` with CMN, the labeled
        class ``frequencies`` without."""
        self.__dict__.pop("class_prior_", None)  # a refit without CMN
        if self.class_mass_normalization:
            self.class_prior_ = self._checked_prior(frequencies)
            return self.class_prior_
        if self.class_prior is not None:
            raise ValueError(
                "class_prior is used by class mass normalisation only; set "
                "class_mass_normalization=True"
            )
        return frequencies

    def _checked_prior(self, labeled_prior: np.ndarray) -> np.ndarray:
        """The priors of CMN: ``class_prior`` checked and normalised, or the labeled
        class frequencies."""
        return labeled_prior if self.class_prior is None else self._checked_class_prior()

    def _finish_scores(self, F, labeled, y_codes, prior, info):
        """Class mass normalisation (if asked), then rows normalised to sum to 1."""
        if self.class_mass_normalization:
            F = class_mass_normalize(F, ~labeled & ~self.unreachable_, prior)
        sums = F.sum(axis=1, keepdims=True)
        degenerate = ~(sums[:, 0] > 0)  # cannot happen in exact arithmetic; be safe
        F[degenerate], sums[degenerate] = prior, 1.0
        return F / sums

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities by the harmonic rule over each point's nearest training points.

        ``f(x) = sum_j w_j f_j / sum_j w_j`` over the ``n_neighbors`` nearest training points,
        ``w_j`` the edge weight of ``weights`` (heat: ``exp(-||x - x_j||^2 / t_)``;
        self-tuning: ``exp(-4 ||x - x_j||^2 / (sigma(x) sigma_j))``), ``f_j =
        label_distributions_[j]``.  (For training points this averages over a neighbourhood
        that contains the point itself; see ``transduction_`` for the fitted labels.)

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        return self._extend(X)
