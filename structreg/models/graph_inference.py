"""Graph inference of the Laplace type: the estimator base of GFHF and Poisson learning.

Both infer the labels of the unlabeled training points from a weighted graph ``W`` over all
training points by solving a linear system of the graph Laplacian ``L = D - W``: GFHF the
harmonic system ``(D_uu - W_uu) F_u = W_ul Y_l`` (:mod:`structreg.models.harmonic`), Poisson
learning ``L u = b`` with sources at the labeled points (:mod:`structreg.models.poisson`).

:class:`GraphInferenceClassifier` holds the road from the data to those solves and back:
validation, label encoding, the graph (:func:`~structreg.structure.graphs.weighted_knn_graphs`,
every weighting from one neighbour search), the class prior of points that no label reaches,
``transduction_`` and the out-of-sample rule; a subclass gives its system
(``_solve_system``), solved in :mod:`structreg.solvers.laplace` on the
:class:`~structreg.structure.labeled_graph.LabeledGraph` of the graph.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.neighbors import NearestNeighbors
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from .._compat import StrOptions
from .._params import constraints_for
from ..solvers.laplace import HARMONIC_TOL
from ..structure.graphs import (
    HEAT_FLOOR,
    WeightedGraph,
    check_graph,
    heat_width,
    positive_scales,
    resolve_algorithm,
    weighted_knn_graphs,
)
from ..structure.labeled_graph import normalized_cut
from ._base import (
    SemiSupervisedLabelsMixin,
    check_training_X,
    is_dask_collection,
    missing_as_unlabeled,
)
from ._degenerate import warn_if_degenerate
from .distributed import checked_on_cluster, cluster_graphs

__all__ = ["DisconnectedGraphWarning", "GraphInferenceClassifier"]


class DisconnectedGraphWarning(UserWarning):
    """Some unlabeled points lie in graph components without any labeled point."""


TIE_RTOL = 64 * float(np.finfo(float).eps)
"""Two class scores closer than this fraction of the largest training score are a tie
(:meth:`GraphInferenceClassifier._break_ties`)."""


# ---------------------------------------------------------------------------------------------
# the estimator base

WEIGHT_CHOICES = ("self-tuning", "heat", "connectivity")
AUTO_WEIGHTINGS = ("self-tuning", "heat")
"""``weights="auto"``: the weightings fitted, at every size; the labeling of smallest
:func:`normalized_cut` is kept (the first on a tie).  What it costs and gains on two moons of
1e6 and 1e7 points is measured in the scale guide (:doc:`/user_guide/scale`, "Measurements
behind the solvers' settings")."""


DECISION_TOL = 1e-2
"""``weights="auto"`` compares the labelings of solves to this relative residual; only the
chosen weighting is solved on to ``tol`` (from that solution)."""


class GraphInferenceClassifier(SemiSupervisedLabelsMixin, ClassifierMixin, BaseEstimator):
    """Base of the semi-supervised graph classifiers of the Laplace type (GFHF, Poisson
    learning).

    :meth:`fit` checks the parameters and the data, encodes the labels (unlabeled samples:
    ``-1``, ``None`` for string labels, a missing label or the ``unlabeled`` mask), builds the
    graph over all training points (``graph``, ``n_neighbors``, ``weights``, ``t``), solves
    the subclass's system for the class scores of every training point, gives the points of
    components without labels the class prior (with a :class:`DisconnectedGraphWarning`),
    and sets ``transduction_``: the given label of every labeled point, the class of the
    largest score elsewhere.  A new point's scores are the weighted mean of its
    ``n_neighbors`` nearest training points' (the out-of-sample rule, ``_extend``);
    :meth:`predict` takes their largest.

    The parameters are those of the graph (``n_neighbors``, ``weights``, ``t``, ``graph``) and
    of its solve (``tol``, ``max_iter``;
    :func:`~structreg.solvers.laplace.solve_laplace_system`); a subclass with more lists them
    all in its own ``__init__`` (scikit-learn reads the parameters from its signature) and
    passes these on.  It gives its system:

    - ``_scores_attribute``: the name of the fitted attribute that holds the training
      points' scores (the ``f_j`` of the out-of-sample rule);
    - ``_solve_system(W, labeled, targets)``: ``(scores, unreachable, info)`` for the
      one-of-c ``targets`` of the labeled points (see ``_solve_system``);
    - ``_degenerate_hint``: the advice of the degenerate-solution warning (what to try when
      every point gets one class);
    - optionally ``_class_prior`` (the prior of unreachable points) and ``_finish_scores``
      (what becomes of the scores before they are stored).

    Its parameter constraints are the glossary's, with the weights this base knows
    (``WEIGHT_CHOICES``, filled in when the subclass is defined); its docstring writes the
    ``weights`` entry and the tie rule's attributes out in full (``tests/test_docstrings.py``
    checks that the documented choices of ``weights`` are the constraint's).
    """

    _semi_supervised = True
    _scores_attribute: str
    _degenerate_hint: str

    def __init__(
        self,
        n_neighbors=7,
        weights="self-tuning",
        t=None,
        graph="knn",
        tol=HARMONIC_TOL,
        max_iter=None,
    ):
        self.n_neighbors = n_neighbors
        self.weights = weights
        self.t = t
        self.graph = graph
        self.tol = tol
        self.max_iter = max_iter

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._parameter_constraints = {
            **constraints_for(cls),
            "weights": [StrOptions(set(WEIGHT_CHOICES))],
            **getattr(cls, "_constraint_overrides", {}),
        }

    def fit(self, X, y, unlabeled=None) -> GraphInferenceClassifier:
        """Infer the labels of the unlabeled training points over the graph of all of them.

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
        if is_dask_collection(X):  # the graph is built and held on the Dask workers
            X, y = checked_on_cluster(self, X, y, unlabeled)
            points = X.compute()  # the out-of-sample rule's neighbours, on the client
        else:
            y = missing_as_unlabeled(y, unlabeled)
            X, y = validate_data(self, X, y, dtype=float, y_numeric=False)
            check_training_X(self, X)
            y = column_or_1d(y, warn=True)
            points = X
        self.classes_, y_codes, labeled = self._encode_labels(y, unlabeled)
        graphs = self._graphs(X)
        # the out-of-sample rule's index, one for every weighting
        index = NearestNeighbors(n_neighbors=min(self.n_neighbors, len(points))).fit(points)
        try:
            if len(graphs) == 1:
                self._use_graph(points, graphs[0], index)
                self._infer(labeled, y_codes, self.tol)
            else:  # weights="auto": the labeling that cuts the kNN graph least
                self._fit_least_cut(points, graphs, index, labeled, y_codes)
        finally:
            for graph in graphs:
                if graph.release():  # rows held on workers: gone with the fit
                    self.graph_ = None
        if self.unreachable_.any():
            _warn_unreachable(self.unreachable_)
        scores = getattr(self, self._scores_attribute)
        warn_if_degenerate(self, scores, labeled, y_codes, self._degenerate_hint)
        return self

    def _fit_least_cut(
        self,
        X: np.ndarray,
        graphs: list,
        index: NearestNeighbors,
        labeled: np.ndarray,
        y_codes: np.ndarray,
    ) -> None:
        """Fit on the graph (of ``graphs``, one edge set with several weightings) whose
        labeling has the smallest :func:`~structreg.structure.labeled_graph.normalized_cut`
        (the first on a tie).  The labelings compared are those of solves to
        :data:`DECISION_TOL` (or ``tol`` if looser; a factorisation solves exactly); the
        chosen one's iterative solve then goes on to ``tol`` from there (its ``"resume"``)."""
        decide = max(self.tol, DECISION_TOL)
        fits = []
        for graph in graphs:
            self._use_graph(X, graph, index)
            info = self._infer(labeled, y_codes, decide)
            kept = {k: self.__dict__[k] for k in self._fitted_names() if k in self.__dict__}
            fits.append((kept, info))
        cuts = [normalized_cut(graphs[0].W, fit["transduction_"]) for fit, _ in fits]
        best, info = fits[int(np.argmin(cuts))]
        for name in self._fitted_names():
            self.__dict__.pop(name, None)
        self.__dict__.update(best)
        if decide > self.tol and "resume" in info:
            scores, more = info["resume"](self.tol)
            self._infer(labeled, y_codes, self.tol, solved=(scores, self.unreachable_, more))

    def _infer(
        self,
        labeled: np.ndarray,
        y_codes: np.ndarray,
        tol: float,
        solved: tuple | None = None,
    ) -> dict:
        """The scores and labels of the training points on ``graph_``, solved to ``tol``
        (``solved``: the ``_solve_system`` result to use instead of solving); returns the
        solve's ``info``."""
        n_classes = len(self.classes_)
        frequencies = np.bincount(y_codes[labeled], minlength=n_classes) / labeled.sum()
        prior = self._class_prior(frequencies)
        targets = np.eye(n_classes)[y_codes[labeled]]
        if solved is None:
            solved = self._solve_system(self.graph_, labeled, targets, tol)
        scores, self.unreachable_, info = solved
        self.solver_, self.n_iter_ = info["method"], max(1, info["n_iter"])
        scores = scores.copy()
        scores[self.unreachable_] = prior
        scores = self._finish_scores(scores, labeled, y_codes, prior, info)
        self.labeled_ = labeled
        self.labeled_codes_ = y_codes[labeled]
        self.score_scale_ = float(np.max(np.abs(scores), initial=0.0))
        scores = self._break_ties(scores, self.X_)
        setattr(self, self._scores_attribute, scores)
        codes = np.argmax(scores, axis=1)
        codes[labeled] = y_codes[labeled]
        self.transduction_ = self.classes_[codes]
        return info

    def _break_ties(self, scores: np.ndarray, points: np.ndarray) -> np.ndarray:
        """``scores`` (of the rows of ``points``) with every row whose two best scores tie to
        rounding -- within :data:`TIE_RTOL` of the training scores' largest magnitude,
        ``score_scale_`` -- raised by that much at the class of the nearest labeled training
        point, so that the tie goes to it in every output (labels, probabilities, decision
        values) rather than to the first class.  Rounding cannot decide such ties: the
        class prior of a component without labels when the labels are balanced, or exact
        copies of a labeled point in a clique without a net source (Poisson learning)."""
        if scores.shape[1] < 2:
            return scores
        best_two = np.sort(scores, axis=1)[:, -2:]
        tied = best_two[:, 1] - best_two[:, 0] <= TIE_RTOL * self.score_scale_
        if not tied.any():
            return scores
        index = NearestNeighbors(n_neighbors=1).fit(self.X_[self.labeled_])
        nearest = index.kneighbors(points[tied], return_distance=False)[:, 0]
        best = best_two[tied, 1]
        scores = scores.copy()
        scores[np.flatnonzero(tied), self.labeled_codes_[nearest]] = best + np.maximum(
            TIE_RTOL * self.score_scale_, 4 * np.spacing(np.abs(best))
        )
        return scores

    def _weightings(self, n_samples: int) -> tuple[str, ...]:
        """The edge weightings to fit: ``weights``; ``"auto"``: :data:`AUTO_WEIGHTINGS`, at
        every size (``n_samples`` is not consulted: the choice is the same at any size)."""
        if self.weights != "auto":
            return (self.weights,)
        return AUTO_WEIGHTINGS

    def _fitted_names(self) -> tuple[str, ...]:
        """The attributes one weighting's fit sets (what ``weights="auto"`` keeps of the best)."""
        return (
            "weights_",
            "X_",
            "neighbors_",
            "graph_",
            "t_",
            "local_scale_",
            "unreachable_",
            "solver_",
            "n_iter_",
            "class_prior_",
            "transduction_",
            "labeled_",
            "labeled_codes_",
            "score_scale_",
            "knn_algorithm_",
            self._scores_attribute,
        )

    def predict(self, X) -> np.ndarray:
        """The class of the largest score of each point by the out-of-sample rule: the
        weighted mean of its ``n_neighbors`` nearest training points' scores.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        scores = self._extend(X)  # first: it checks that the estimator is fitted
        return self.classes_[np.argmax(scores, axis=1)]

    # -- the system: the subclass's ---------------------------------------------------------

    def _solve_system(
        self,
        W: sp.csr_matrix,
        labeled: np.ndarray,
        targets: np.ndarray,
        tol: float,
    ) -> tuple[np.ndarray, np.ndarray, dict]:
        """``(scores, unreachable, info)``: the class scores of all training points on the
        graph ``W`` (NaN rows allowed where unreachable), the unlabeled points whose
        component holds no labeled point, and the solve's ``info`` (``"method"``,
        ``"n_iter"``; :func:`~structreg.solvers.laplace.solve_laplace_system`), for the one-of-c
        ``targets`` of the points of the mask ``labeled``, solved to the relative residual
        ``tol``.  ``info`` may carry what the subclass's ``_finish_scores`` needs of the
        solve, and an iterative solve's ``"resume"`` (returning the scores and ``info`` of
        the same solve gone on to a tighter ``tol``)."""
        raise NotImplementedError

    def _class_prior(self, frequencies: np.ndarray) -> np.ndarray:
        """The class prior, given to unreachable points: the labeled class frequencies."""
        return frequencies

    def _finish_scores(
        self,
        scores: np.ndarray,
        labeled: np.ndarray,
        y_codes: np.ndarray,
        prior: np.ndarray,
        info: dict,
    ) -> np.ndarray:
        """The scores to store, from those of the solve (unreachable rows: the prior) and
        its ``info``."""
        return scores

    def _checked_class_prior(self) -> np.ndarray:
        """The subclass's ``class_prior`` array, checked (one finite non-negative number per
        class, not all zero) and normalised to sum to 1."""
        prior = np.asarray(self.class_prior, dtype=float).ravel()
        if prior.shape != self.classes_.shape:
            raise ValueError(
                f"class_prior has {prior.size} entries; expected one per class "
                f"({self.classes_.size}: {self.classes_.tolist()})"
            )
        if not (np.all(np.isfinite(prior)) and np.all(prior >= 0) and prior.sum() > 0):
            raise ValueError(
                f"class_prior must be finite, non-negative and not all zero, got {prior}"
            )
        return prior / prior.sum()

    # -- the graph and the out-of-sample rule -------------------------------------------------

    def _check_width(self) -> None:
        if self.t is not None and self.weights not in ("heat", "auto"):
            raise ValueError(
                f"t is the width of heat weights; it is not used with weights={self.weights!r} "
                "(set weights='heat' or t=None)"
            )

    def _graphs(self, X) -> list[WeightedGraph]:
        """The graphs to fit on: one per weighting of :meth:`_weightings`, all from one
        neighbour search (``graph="knn"``; held on the Dask workers for a dask array,
        :func:`~structreg.models.distributed.cluster_graphs`), or the precomputed ``graph``
        with the scale of each weighting's out-of-sample rule."""
        self._check_width()
        n = X.shape[0]
        weightings = self._weightings(n)
        if is_dask_collection(X):  # checked_on_cluster refused a precomputed graph
            self.knn_algorithm_ = "exact"  # every block pair searched exactly
            return cluster_graphs(X, self.n_neighbors, weightings, self.t)
        if isinstance(self.graph, str):
            if self.graph != "knn":
                raise ValueError(
                    f"{type(self).__name__} takes graph='knn' or a precomputed affinity "
                    f"matrix, got graph={self.graph!r}"
                )
            self.knn_algorithm_ = resolve_algorithm(X, "auto")
            return weighted_knn_graphs(X, self.n_neighbors, weightings, t=self.t)
        self.knn_algorithm_ = "precomputed"
        W = check_graph(self.graph, n)
        k = min(self.n_neighbors + 1, n)
        dist, ind = NearestNeighbors(n_neighbors=k).fit(X).kneighbors(X)
        others = ind != np.arange(n)[:, None]
        graphs = []
        for weights in weightings:
            if weights == "heat":
                t = self.t
                t = (
                    float(t)
                    if t is not None
                    else heat_width(dist[others] ** 2, X, self.n_neighbors)
                )
                graphs.append(WeightedGraph(W, weights, t=t))
            elif weights == "self-tuning":  # the distance to the n_neighbors-th other point
                sigma = positive_scales(np.max(np.where(others, dist, 0.0), axis=1), X)
                graphs.append(WeightedGraph(W, weights, local_scale=sigma))
            else:
                graphs.append(WeightedGraph(W, weights))
        return graphs

    def _use_graph(self, X: np.ndarray, graph: WeightedGraph, index: NearestNeighbors) -> None:
        """``X_``, ``neighbors_`` (``index``, over ``X``), ``weights_``, ``graph_`` and the
        weights' scale (``t_`` for heat weights, ``local_scale_`` for self-tuning ones) of
        one graph."""
        for name in ("t_", "local_scale_"):  # a refit with other weights
            self.__dict__.pop(name, None)
        self.X_, self.neighbors_ = X, index
        self.weights_ = graph.weights
        self.graph_ = graph.W
        if graph.t is not None:
            self.t_ = graph.t
        if graph.local_scale is not None:
            self.local_scale_ = graph.local_scale

    def _neighbour_weights(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(w, ind)``: the ``n_neighbors`` nearest training points of each row of ``X`` and
        their weights in the out-of-sample rule, up to a positive factor per row."""
        dist, ind = self.neighbors_.kneighbors(X)
        d2 = dist**2
        if self.weights_ == "connectivity":
            return np.ones_like(d2), ind
        if self.weights_ == "heat":  # never below the floor: nothing underflows
            return np.maximum(np.exp(-d2 / self.t_), HEAT_FLOOR), ind
        scale = np.maximum(dist[:, -1:], self.local_scale_.min())
        # ratios before the product: squared distances of points near 1e-160 underflow
        exponent = 4.0 * (dist / scale) * (dist / self.local_scale_[ind])
        # shift by the smallest exponent: the same ratios, without underflow far from the data
        return np.exp(-(exponent - exponent.min(axis=1, keepdims=True))), ind

    def _extend(self, X) -> np.ndarray:
        """The out-of-sample rule at the rows of ``X``: ``f(x) = sum_j w(x, x_j) f_j /
        sum_j w(x, x_j)`` over the ``n_neighbors`` nearest training points, ``w`` the edge
        weight of ``weights``, ``f_j`` the training points' scores; shape
        (n_samples, n_classes)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=float, reset=False)
        w, ind = self._neighbour_weights(X)
        scores = getattr(self, self._scores_attribute)
        extended = np.einsum("ik,ikc->ic", w, scores[ind]) / w.sum(axis=1, keepdims=True)
        return self._break_ties(extended, X)


def _warn_unreachable(unreachable: np.ndarray) -> None:
    warnings.warn(
        f"{int(unreachable.sum())} unlabeled training point(s) lie in graph "
        "components without any labeled point, where the solution is "
        "undefined; they get the class prior (labeled class frequencies). Connect "
        "the graph (larger n_neighbors) or label a point in every component.",
        DisconnectedGraphWarning,
        stacklevel=3,
    )
