"""Poisson learning (Calder, Cook, Thorpe & Slepcev, ICML 2020).

Graph-based semi-supervised classification designed for very low label rates: instead of
clamping the labeled points (Laplace learning / GFHF, whose solution flattens to a constant
away from the labels as the label rate goes to zero), each labeled point is a *source* of its
label minus the mean label, and the class scores solve the graph Poisson equation

    L u = b,   b_i = y_i - y_bar (i labeled),  b_i = 0 (i unlabeled),   sum_i d_i u_i = 0,

``L = D - W`` the graph Laplacian, ``d_i`` the degrees, ``y_i`` the one-of-c labels and
``y_bar`` their mean.  A point's label is the argmax of its score vector ``u_i``.

Designed for few labels is not the same as better at few labels: on which data and at which
label counts it is ahead of Laplace learning, and where it is not (points on curves or in
clusters; classes of unequal sizes with the same number of labels in each), see the
"Which estimator?" page of the documentation.
"""

from __future__ import annotations

import numpy as np

from .._compat import StrOptions
from ..solvers.laplace import HARMONIC_TOL, harmonic_function, poisson_function, solve_poisson
from ..structure.labeled_graph import label_graph
from .graph_inference import GraphInferenceClassifier

__all__ = ["PoissonLearning", "matched_offsets", "poisson_function"]


def _matched_threshold(U: np.ndarray, rows: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Two-class scores ``U`` shifted (``+c/2`` to one class, ``-c/2`` to the other, so the
    rows still sum as before) so that the share of ``rows`` given the second class is
    ``sizes[1]``: the threshold of ``u_1 - u_0`` moved from 0 to its ``sizes[0]`` quantile."""
    return U + matched_offsets(U[rows], sizes) if rows.any() else U


MATCH_SWEEPS = 100
"""The most sweeps of :func:`matched_offsets` over the classes."""


def matched_offsets(U: np.ndarray, shares: np.ndarray) -> np.ndarray:
    """Offsets ``c`` (one per column, summing to 0) such that the rows of ``U + c`` give each
    column ``k`` -- its largest entry -- to a ``shares[k]`` fraction of the rows.

    ``c`` minimises the convex dual of that assignment, ``sum_i max_k (U_ik + c_k) - n
    shares . c``; it is found by exact minimisation over one ``c_k`` at a time (the quantile
    of ``U_ik - max_{j != k} (U_ij + c_j)`` that leaves the share of column ``k`` right),
    sweeping over the columns until every share is within the larger of one row and 0.5 %
    of the rows of its target, or for ``MATCH_SWEEPS`` (100) sweeps.  Two columns: one step,
    exact.  ``shares`` (non-negative, one per column) is normalised to sum to 1."""
    U = np.asarray(U, dtype=float)
    n, k = U.shape
    shares = np.asarray(shares, dtype=float).ravel()
    if shares.shape != (k,) or not (np.all(shares >= 0) and shares.sum() > 0):
        raise ValueError(
            f"shares must be {k} non-negative numbers (one per column of U), not all zero; "
            f"got {shares}"
        )
    shares = shares / shares.sum()
    if k == 2:
        c = float(np.quantile(U[:, 1] - U[:, 0], shares[0]))
        return np.array([c / 2, -c / 2])
    c = np.zeros(k)
    tolerance = max(1.0, 0.005 * n)
    for _ in range(MATCH_SWEEPS):
        for j in range(k):
            others = np.max(np.delete(U + c, j, axis=1), axis=1)
            c[j] = -float(np.quantile(U[:, j] - others, 1.0 - shares[j]))
        counts = np.bincount(np.argmax(U + c, axis=1), minlength=k)
        if np.max(np.abs(counts - shares * n)) <= tolerance:
            break
    return c - c.mean()


class PoissonLearning(GraphInferenceClassifier):
    """Poisson learning: semi-supervised graph classification designed for very low label rates.

    On a kNN graph ``W`` over all training points (labeled and unlabeled), the class scores
    ``u`` solve the graph Poisson equation with a source at every labeled point,

        L u = sum_{i labeled} (y_i - y_bar) e_i^T,   sum_i d_i u_i = 0,

    ``L = D - W``, ``y_i`` the one-of-c labels, ``y_bar`` their mean (:func:`poisson_function`),
    and a point's label is the argmax of its scores (Calder et al. 2020, Algorithm 1; the
    class-size correction is ``class_prior``'s).  Unlike the harmonic solution
    (:class:`~structreg.models.GFHF`), which flattens to a constant away from the labels when
    they are few, the Poisson solution keeps its contrast.

    Where that helps and where it does not (the defaults suite: accuracy on the hidden points
    with the same number of labels drawn in every class; the measurements are on the "Which
    estimator?" page, :doc:`/which_estimator`, and in the suite's table on the defaults
    page, :doc:`/user_guide/defaults`):

    * images at 1-3 labels per class: ahead of GFHF and of scikit-learn's LabelSpreading
      (USPS digits, COIL-20);
    * many irrelevant features: ahead of GFHF at 3 labels per class (two moons + 50 noise
      dimensions), but no better than RLSC on the labeled points alone, which is ahead from
      10 labels per class on;
    * points on a curve or in clusters: behind GFHF (two moons, Gaussian mixtures).  Over the
      suite's sets GFHF is significantly ahead on more sets than Poisson learning at 3 labels
      per class, and on most of them at 10 and 40;
    * classes of unequal sizes with the same number of labels in each: ``class_prior="auto"``
      splits the points too evenly (see ``class_prior``) and falls below LabelSpreading and
      GFHF; with the class sizes passed as ``class_prior`` the same draws do better
      (``benchmarks/poisson_class_sizes.py``).

    Unlabeled samples are marked ``-1`` (``None`` for string labels), by a missing label (NaN,
    None, ``pd.NA``) or by the ``unlabeled`` mask of ``fit``.  Unlabeled points in a connected
    component without any labeled point get the class prior (labeled class frequencies) and a
    :class:`~structreg.models.harmonic.DisconnectedGraphWarning`; each component with labels
    is solved on its own (:func:`poisson_function`), and one whose labels are all of one class
    takes that class.

    New points: the Poisson equation at a point without a source says that its score is the
    weighted mean of its neighbours', ``u(x) = sum_j w(x, x_j) u_j / sum_j w(x, x_j)`` over
    the ``n_neighbors`` nearest training points (``decision_function``).

    Parameters
    ----------
    n_neighbors : int, default=7
        k of the kNN graph, and the neighbourhood of a new point (as GFHF; on USPS at 1-10
        labels per class k = 7 is more accurate than graphlearning's k = 10, measured in the
        scale guide, :doc:`/user_guide/scale`, "Measurements behind the solvers' settings").
    weights : {"connectivity", "heat", "self-tuning"}, default="self-tuning"
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
    t : float or None, default=None
        Width of heat weights (``weights="heat"`` only); None: the mean squared edge length.
    graph : "knn", sparse matrix or array-like, default="knn"
        ``"knn"``: the symmetric kNN graph with ``weights``; or an (n_samples, n_samples)
        symmetric non-negative affinity matrix over the training points (diagonal ignored;
        ``weights`` then only sets the out-of-sample rule).
    class_prior : "auto", array-like of shape (n_classes,) or None, default="auto"
        The class-size correction.  An array: class sizes ``b`` (fractions of the points in
        each class, in the order of ``classes_``) for the correction of Calder et al.
        (Algorithm 1: the scores of class k multiplied by ``b_k / ybar_k``, ``ybar`` the
        labels' class shares); with two classes those weights cannot change any decision
        (``u_1 = -u_0``), and the zero-mean normalisation puts the boundary where the two
        classes' volumes balance, so the equivalent correction is used: the threshold of
        ``u_1 - u_0`` is moved so that the share of unlabeled points given each class is
        ``b``.  ``"auto"``: in every graph component with labels of several classes, the
        scores of those classes are shifted by one constant each (:func:`matched_offsets`)
        so that the shares of the component's unlabeled points given to them are the class
        masses of Laplace learning there (the mean harmonic scores,
        :func:`~structreg.models.harmonic.harmonic_function`; with two classes, the moved
        threshold above).  Behind a bottleneck of the graph every class's scores step by an
        amount set by its label count, so without it a class with more labels takes the
        points of one with fewer; the defaults suite (user guide, defaults page) chose
        ``"auto"`` over no correction and over other estimates of the shares.  Its limit: at
        a few labels per class the class masses follow the labeled points' class shares,
        each label weighted by its degree, rather than the class sizes, so with the same
        number of labels in classes of unequal sizes the large class is given too few points
        (measured in the scale guide, :doc:`/user_guide/scale`, "Measurements behind the
        solvers' settings").  When
        the class sizes are known, pass them.  None: no correction (plain Algorithm 1).
    tol : float, default=1e-6
        Relative residual of the conjugate-gradient solve of large systems.
    max_iter : int or None, default=None
        Iteration cap of that solve (None: ten times the number of points).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    X_ : ndarray of shape (n_samples, n_features)
    graph_ : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
    t_ : float
        ``weights="heat"``: the width used.
    local_scale_ : ndarray of shape (n_samples,)
        ``weights="self-tuning"``: the training points' ``sigma_i``.
    scores_ : ndarray of shape (n_samples, n_classes)
        The Poisson solution ``u`` at the training points (unreachable rows: the prior),
        after the class-size correction of ``class_prior`` (``"auto"``: the scores of the
        classes without labels in a point's component set below the others).
    transduction_ : ndarray of shape (n_samples,)
        Labels of the training points: the given label of every labeled point, the argmax of
        ``scores_`` elsewhere.
    unreachable_ : ndarray of bool, shape (n_samples,)
    class_prior_ : ndarray of shape (n_classes,) or None
        The class sizes ``b`` of the correction: ``class_prior`` normalised, or with
        ``"auto"`` Laplace learning's class masses over all reachable unlabeled points
        (each component's shares are its own); None: no correction.
    solver_ : {"direct", "cg", "amg"}
        How the Poisson equation was solved (:func:`poisson_function`, ``method="auto"``).
    n_iter_ : int
        Conjugate-gradient iterations run, summed over the class columns (1 for a direct
        solve alone).
    weights_ : {"self-tuning", "heat", "connectivity"}
        The edge weights used.
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
    J. Calder, B. Cook, M. Thorpe and D. Slepcev, "Poisson learning: graph based
    semi-supervised learning at very low label rates", ICML 2020, PMLR 119:1306-1316.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_moons
    >>> from structreg.models.poisson import PoissonLearning
    >>> X, y = make_moons(300, noise=0.05, random_state=0)
    >>> y_semi = np.full_like(y, -1)
    >>> first = [np.flatnonzero(y == 0)[0], np.flatnonzero(y == 1)[0]]
    >>> y_semi[first] = y[first]  # one label per class
    >>> clf = PoissonLearning().fit(X, y_semi)
    >>> bool((clf.transduction_ == y).mean() > 0.95)
    True
    """

    _scores_attribute = "scores_"
    _constraint_overrides = {"class_prior": ["array-like", None, StrOptions({"auto"})]}
    _degenerate_hint = (
        "Check that the graph joins the classes' labeled points to their clusters (n_neighbors, "
        "weights), or try GFHF when the labels are not few."
    )

    def __init__(
        self,
        n_neighbors=7,
        weights="self-tuning",
        t=None,
        graph="knn",
        class_prior="auto",
        tol=HARMONIC_TOL,
        max_iter=None,
    ):
        super().__init__(
            n_neighbors=n_neighbors, weights=weights, t=t, graph=graph, tol=tol, max_iter=max_iter
        )
        self.class_prior = class_prior

    def _solve_system(self, W, labeled, targets, tol):
        """The Poisson scores on ``W`` with weak edges between labeled parts cut; ``info``
        also holds ``"component"``, the components of the graph solved on."""
        graph = label_graph(W, labeled, targets).apart_labeled_parts()
        U, unreachable, info = solve_poisson(graph, labeled, targets, "auto", tol, self.max_iter)
        return U, unreachable, {**info, "component": graph.component}

    def _finish_scores(self, U, labeled, y_codes, prior, info):
        """A component whose labels are all of one class has no source: it takes that
        class.  Then the class-size correction of ``class_prior``."""
        n_classes = len(self.classes_)
        targets = np.eye(n_classes)[y_codes[labeled]]
        component = info["component"]  # the components of the solve
        lab_comp = component[labeled]
        mixed = []  # the components with labels of two or more classes, and those classes
        for c in np.unique(lab_comp):
            codes = np.unique(y_codes[labeled][lab_comp == c])
            if codes.size == 1:
                U[component == c] = np.eye(n_classes)[codes[0]]
            else:
                mixed.append((c, codes))
        rows = ~labeled & ~self.unreachable_
        if isinstance(self.class_prior, str):  # "auto"
            return self._matched_to_laplace(U, rows, labeled, targets, component, mixed)
        self.class_prior_ = None if self.class_prior is None else self._checked_class_prior()
        if self.class_prior_ is None:
            return U
        if n_classes == 2:
            return _matched_threshold(U, rows, self.class_prior_)
        label_share = np.bincount(y_codes[labeled], minlength=n_classes) / labeled.sum()
        return U * (self.class_prior_ / label_share)

    def _matched_to_laplace(self, U, rows, labeled, targets, component, mixed):
        """``class_prior="auto"``: in every component with labels of several classes, the
        scores of those classes shifted (:func:`matched_offsets`) so that the unlabeled
        points' predicted shares are the class masses of Laplace learning there; the other
        classes' scores, without a source in the component, put below them."""
        self.class_prior_ = None
        if not rows.any():
            return U
        F, _ = harmonic_function(self.graph_, labeled, targets, tol=self.tol)
        mass = F[rows].mean(axis=0)
        self.class_prior_ = mass / mass.sum()
        for c, codes in mixed:
            members = component == c
            inside = rows & members  # where the shares are counted
            if not inside.any():
                continue
            shares = F[np.ix_(inside, codes)].mean(axis=0)
            if not shares.sum() > 0:  # no harmonic mass on these classes: nothing to match
                continue
            offsets = matched_offsets(U[np.ix_(inside, codes)], shares)
            shifted = U[np.ix_(members, codes)] + offsets  # every point of the component
            U[np.ix_(members, codes)] = shifted
            absent = np.setdiff1d(np.arange(U.shape[1]), codes)
            floor = shifted.min(axis=1) - np.abs(shifted).max(axis=1)
            U[np.ix_(members, absent)] = floor[:, None]
        return U

    def decision_function(self, X) -> np.ndarray:
        """Scores of new points: ``u(x) = sum_j w_j u_j / sum_j w_j`` over the ``n_neighbors``
        nearest training points, ``w_j`` the edge weight of ``weights``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes), or (n_samples,) for two classes
            (the score of ``classes_[1]`` minus that of ``classes_[0]``).
        """
        scores = self._extend(X)
        return scores[:, 1] - scores[:, 0] if scores.shape[1] == 2 else scores
