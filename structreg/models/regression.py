"""Structure-regularised least-squares regression: StructuralRegressor and LapRLSRegressor.

The regressors solve the square-loss problem of the classifiers with real targets,

    (1/l) sum_{i labeled} ||y_i - f(x_i)||^2 + gamma_A ||f||_K^2 + sum_k w_k f^T M_k f,

through the same machinery (:class:`~structreg.models._base.StructuralEstimator`: feature
maps, penalties, the square-loss object and its dense / Nystroem / CG solvers, the
unpenalised bias).  Only the targets differ: the classifiers code labels as +-1 columns, the
regressors pass y itself, one column per output.  A row of y that is NaN (every output NaN
for a 2-d y) is unlabeled: it enters the penalties, not the loss.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.metrics import r2_score
from sklearn.utils.validation import (
    check_array,
    check_consistent_length,
    validate_data,
)

from ._base import StructuralEstimator, check_unlabeled_mask
from .manifold import _ManifoldMixin

__all__ = ["LapRLSRegressor", "StructuralRegressor", "labeled_rows"]


def labeled_rows(y: np.ndarray) -> np.ndarray:
    """Boolean mask of the labeled rows of real targets ``y`` (shape (n,) or (n, k)): the rows
    without NaN.  A row of a 2-d ``y`` is unlabeled when all its outputs are NaN; a row with
    some outputs NaN and others not is refused (one loss weight per row serves every output:
    fit such outputs separately)."""
    missing = np.isnan(y).reshape(len(y), -1)
    unlabeled = missing.all(axis=1)
    partial = missing.any(axis=1) & ~unlabeled
    if partial.any():
        rows = np.flatnonzero(partial)
        raise ValueError(
            f"y has {len(rows)} row(s) with some outputs NaN and others not (first: row "
            f"{rows[0]}); a row is either labeled (every output finite) or unlabeled (every "
            "output NaN). Fit the outputs separately to use partly labeled rows."
        )
    return ~unlabeled


class StructuralRegressor(RegressorMixin, StructuralEstimator):
    """Least-squares regression with any weighted sum of structure penalties, in an RKHS.

    Minimises ``(1/l) sum_labeled ||y_i - f(x_i)||^2 + gamma_A ||f||_K^2 + sum_k w_k f^T M_k f``
    over ``f(x) = sum_i alpha_i k(x_i, x) + b``: the square-loss problem of
    :class:`StructuralClassifier` with real targets (one column per output), solved by the
    same feature maps, penalties and solvers.  With no penalty and ``fit_intercept=False`` it
    is :class:`~sklearn.kernel_ridge.KernelRidge` with ``alpha = l gamma_A`` (l labeled rows).

    Unlabeled samples: rows of ``y`` that are NaN (all outputs NaN for a 2-d ``y``; rows with
    only some outputs NaN are refused) or marked by the ``unlabeled`` mask of ``fit``; they
    enter the penalties, not the loss.  ``predict`` returns shape (n,) after a 1-d ``y`` and
    (n, n_outputs) after a 2-d one; ``score`` is R^2 on the labeled rows of ``y``.

    Parameters
    ----------
    loss : {"square"}, default="square"
        The square loss (the hinge loss is a classification loss and is refused).
    penalties : list of (float, Penalty), default=None
        Weighted structure penalties (e.g. ``[(1e-3, LaplacianPenalty())]``); weights are used
        as given.  Penalties built from class labels (class-wise graphs, class or cluster
        scatter, labeled-pair graphs: ``penalty.reads_labels()`` is true) are refused: a
        regressor has no classes.  None or [] gives kernel ridge regression.
    kernel : {"linear", "rbf", "poly"} or callable, default="rbf"
    gamma : float, "scale" or None, default="scale"
        Kernel width as in scikit-learn.
    degree : int, default=3
    coef0 : float, default=1.0
    gamma_A : float, default=1e-2
        Weight of the RKHS norm ``||f||_K^2`` (ambient regularisation).
    fit_intercept : bool, default=True
        Add an unpenalised bias ``b``, fitted with the rest of the model (not by centring y):
        the predictions then shift with the targets.  ``False`` gives ``f(x) = k_x^T alpha``,
        scikit-learn's :class:`~sklearn.kernel_ridge.KernelRidge` model.
    solver : {"auto", "dense", "nystroem", "cg"}, default="auto"
        ``"dense"``: the exact kernel factor ``K = V V^T`` and a direct solve (O(n^2) memory).
        ``"nystroem"``: ``n_components`` centres, an m x m system, O(n m^2 + nnz(M) m) time and
        O(n m) memory.  ``"cg"``: iterative and exact (K-preconditioned conjugate gradients on
        the kernel expansion; CG on the features for the linear kernel).  ``"auto"``: dense up
        to 5000 training samples, Nystroem beyond (``solver_`` says which was used).
    n_components : int, default=1000
        Number of Nystroem centres m (``solver="nystroem"``).
    centers : {"uniform", "k-means++"}, default="uniform"
        How the Nystroem centres are drawn from the training samples.
    tol : float, default=1e-6
        Relative residual at which ``solver="cg"`` stops.
    max_iter : int or None, default=None
        Iteration cap of ``solver="cg"`` (None: the solver's default).
    random_state : int, RandomState instance or None, default=None
        Seed of the Nystroem centre selection.

    Attributes
    ----------
    n_features_in_ : int
    feature_map_ : KernelFeatureMap, LandmarkFeatureMap, KernelExpansion or LinearFeatures
        Explicit map ``phi`` with ``phi(x)^T phi(z) = k(x, z)`` on the training set (the
        identity for the linear kernel with fewer features than samples).
    coef_ : ndarray of shape (n_components, n_outputs)
        ``f(x) = phi(x) @ coef_ + intercept_``.
    dual_coef_ : ndarray of shape (n_basis, n_outputs)
        Kernel paths: ``f(x) = k(x, feature_map_.basis_) @ dual_coef_ + intercept_``.
    intercept_ : ndarray of shape (n_outputs,)
        Zero when ``fit_intercept=False``.
    solver_ : str
        The solver used (what ``solver="auto"`` picked).
    loss_ : SquareLoss
        The loss object that fitted the model (``structreg.models._losses``).
    solver_info_ : dict
        How the problem was solved (factorisation, convexity, iterations, ...).
    n_iter_ : int
        Iterations of the iterative solver (1 for a direct solve).
    transduction_ : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        The fitted values ``f(x_i)`` at the training points, labeled and unlabeled.

    Examples
    --------
    >>> import numpy as np
    >>> from structreg import StructuralRegressor
    >>> from structreg.structure import LaplacianPenalty
    >>> X = np.linspace(0, 1, 40)[:, None]
    >>> y = np.sin(2 * np.pi * X[:, 0])
    >>> reg = StructuralRegressor(penalties=[(1e-4, LaplacianPenalty())], gamma_A=1e-4)
    >>> bool(reg.fit(X, y).score(X, y) > 0.9)
    True
    """

    def __init__(
        self,
        loss="square",
        penalties=None,
        kernel="rbf",
        gamma="scale",
        degree=3,
        coef0=1.0,
        gamma_A=1e-2,
        fit_intercept=True,
        tol=1e-6,
        solver="auto",
        n_components=1000,
        centers="uniform",
        max_iter=None,
        random_state=None,
    ):
        self.loss = loss
        self.penalties = penalties
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.gamma_A = gamma_A
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.solver = solver
        self.n_components = n_components
        self.centers = centers
        self.max_iter = max_iter
        self.random_state = random_state

    def _loss(self) -> str:
        loss = getattr(self, "loss", "square")
        if loss != "square":
            raise ValueError(
                f"{type(self).__name__} fits the square loss only; got loss={loss!r} (the "
                "hinge loss is a classification loss: use StructuralClassifier)"
            )
        return loss

    # -- targets ------------------------------------------------------------------------------
    def fit(self, X, y, unlabeled=None) -> StructuralRegressor:
        """Fit on X with real targets y; NaN rows of y (or the ``unlabeled`` mask) are
        unlabeled.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Targets; a NaN row (every output NaN) marks an unlabeled sample.
        unlabeled : array-like of bool, shape (n_samples,), optional
            Marks unlabeled samples besides the NaN rows (their targets are ignored).

        Returns
        -------
        self
        """
        return super().fit(X, y, unlabeled)

    def _validated_data(self, X, y, sparse):
        """X and real targets y (NaN allowed, inf refused)."""
        self._loss()
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None"
            )
        X = validate_data(self, X, dtype=float, accept_sparse=sparse)
        y = check_array(y, ensure_2d=False, dtype=float, ensure_all_finite=False, input_name="y")
        check_consistent_length(X, y)
        if y.ndim == 2 and y.shape[1] == 0:
            raise ValueError("y has no output columns")
        if np.isinf(y).any():
            raise ValueError(
                "y contains infinite values; mark unlabeled samples with NaN (or the "
                "unlabeled mask of fit)"
            )
        return X, y

    def _encode_targets(self, y, unlabeled) -> tuple:
        labeled = labeled_rows(y)
        if unlabeled is not None:
            labeled &= ~check_unlabeled_mask(unlabeled, labeled.shape)
        if not labeled.any():
            raise ValueError(
                f"{type(self).__name__} needs at least one labeled sample (a row of y that is "
                f"not NaN); all {len(labeled)} are unlabeled"
            )
        return None, np.where(labeled, 0, -1), labeled

    def _check_labels(self, y_codes: np.ndarray) -> None:
        """Refuse penalties built from class labels: a regressor has none."""
        for weight, penalty in self._penalty_terms(len(y_codes), int((y_codes >= 0).sum())):
            if weight != 0 and hasattr(penalty, "reads_labels") and penalty.reads_labels():
                raise ValueError(
                    f"{type(self).__name__}: the penalty {penalty!r} is built from class "
                    "labels, which a regressor does not have; use label-free penalties (a "
                    "'knn' or precomputed graph, a sparse-reconstruction graph, ...)"
                )

    def _targets(self, y, y_codes: np.ndarray, labeled: np.ndarray) -> np.ndarray:
        self._output_1d = y.ndim == 1
        return np.where(labeled[:, None], y.reshape(len(y), -1), 0.0)

    def _shaped(self, F: np.ndarray) -> np.ndarray:
        """Outputs as (n,) after a 1-d y, else (n, n_outputs)."""
        F = np.reshape(F, (len(F), -1))
        return F.ravel() if self._output_1d else F

    def _transduction(self, fitted: np.ndarray) -> np.ndarray:
        return self._shaped(fitted)

    def _square_output(self, F: np.ndarray) -> np.ndarray:
        return self._shaped(F + self.intercept_)

    # -- outputs ------------------------------------------------------------------------------
    def predict(self, X) -> np.ndarray:
        """Predicted targets ``f(X)``: shape (n,) after a 1-d y, else (n, n_outputs)."""
        return self._outputs(X)

    def score(self, X, y, sample_weight=None) -> float:
        """R^2 of the predictions on the labeled rows of y (NaN rows are ignored).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        score : float
            :func:`~sklearn.metrics.r2_score` (outputs averaged uniformly).
        """
        y = check_array(y, ensure_2d=False, dtype=float, ensure_all_finite=False)
        keep = labeled_rows(y)
        y_pred = self.predict(X)
        check_consistent_length(y_pred, y)
        if sample_weight is not None:
            sample_weight = np.asarray(sample_weight)[keep]
        return r2_score(y[keep], y_pred[keep], sample_weight=sample_weight)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags


class LapRLSRegressor(_ManifoldMixin, StructuralRegressor):
    """Laplacian regularized least-squares regression (Belkin, Niyogi & Sindhwani 2006).

    ``min (1/l) sum_labeled ||y_i - f(x_i)||^2 + gamma_A ||f||_K^2 + gamma_I/n^2 f^T L f``
    over ``f(x) = sum_i alpha_i k(x_i, x) + b``, with the graph Laplacian L of all n training
    points (labeled and unlabeled): the problem of :class:`LapRLSC` with real targets, solved
    by the same machinery.  ``gamma_I`` is divided by ``n^2``, so one value means the same
    objective at any n.  With ``gamma_I=0`` and ``fit_intercept=False`` it is
    :class:`~sklearn.kernel_ridge.KernelRidge` with ``alpha = l gamma_A`` on the labeled rows.

    Unlabeled samples: rows of ``y`` that are NaN (all outputs NaN for a 2-d ``y``; rows with
    only some outputs NaN are refused) or marked by the ``unlabeled`` mask of ``fit``; they
    enter the penalties, not the loss.  ``predict`` returns shape (n,) after a 1-d ``y`` and
    (n, n_outputs) after a 2-d one; ``score`` is R^2 on the labeled rows of ``y``.

    Parameters
    ----------
    kernel : {"linear", "rbf", "poly", "precomputed"} or callable, default="rbf"
        ``"precomputed"``: ``fit`` takes the training Gram matrix, ``predict`` the
        test-vs-training kernel; structure uses the kernel-induced distance (see
        :class:`~structreg.StructuralClassifier`).
    gamma : float, "graph", "scale" or None, default="scale"
        Kernel width as in scikit-learn, or ``"graph"``: the RBF kernel
        ``exp(-||x - z||^2 / (4 t))`` with ``t`` the mean squared distance of a point to its
        ``n_neighbors`` nearest neighbours (the graph's length scale, also the default width
        of its heat weights; estimated on at most 1000 points), so the kernel follows the
        data's local scale as the graph does (other kernels: ``"scale"``).
    degree : int, default=3
    coef0 : float, default=1.0
    gamma_A : float, default=1e-2
        RKHS-norm (ambient) weight.
    gamma_I : float or "auto", default=1.0
        Intrinsic (graph) weight; the penalty is ``gamma_I / n^2 f^T L f`` (Belkin et al.).
        0 gives the purely supervised model.
        ``"auto"``: ``10 f^T L f / vol(W)``, the graph term normalised by the total edge
        weight ``vol(W) = sum_ij W_ij`` (the weighted mean of ``(f_i - f_j)^2 / 2`` over the
        edges), which means the same whatever the number of neighbours and the edge weights;
        it is ``gamma_I = 10 n^2 / vol(W)``.
    n_neighbors : int, default=6
        k of the kNN graph.
    graph : "knn" or sparse matrix, default="knn"
        ``"knn"``: one graph over labeled and unlabeled points.  A sparse (n_samples,
        n_samples) adjacency matrix over the training points is used as given.  (The
        classifiers' label graphs, e.g. ``"class-wise"``, are refused.)
    weights : {"connectivity", "heat", "dot"}, default="heat"
        Edge weights.
    t : float or None, default=None
        Heat-kernel width; None uses the mean squared kNN distance.
    normalized : bool, default=False
        Normalised Laplacian ``I - D^{-1/2} W D^{-1/2}``.
    metric : {"euclidean", "cosine"}, default="euclidean"
        Distance of the kNN graph; ``"cosine"`` for text-like rows (TF-IDF): the graph of the
        rows scaled to unit norm (sparse rows stay sparse; see
        :func:`~structreg.structure.graphs.knn_graph`).  The kernel still sees X as given.
    fit_intercept : bool, default=True
        Add an unpenalised bias ``b``, fitted with the rest of the model (not by centring y):
        the predictions then shift with the targets.  ``False`` gives ``f(x) = k_x^T alpha``,
        scikit-learn's :class:`~sklearn.kernel_ridge.KernelRidge` model.
    solver : {"auto", "dense", "nystroem", "cg"}, default="auto"
        ``"dense"``: the exact kernel factor ``K = V V^T`` and a direct solve (O(n^2) memory).
        ``"nystroem"``: ``n_components`` centres, an m x m system, O(n m^2 + nnz(M) m) time and
        O(n m) memory.  ``"cg"``: iterative and exact (K-preconditioned conjugate gradients on
        the kernel expansion; CG on the features for the linear kernel).  ``"auto"``: dense up
        to 5000 training samples, Nystroem beyond (``solver_`` says which was used).
    n_components : int, default=1000
        Number of Nystroem centres m (``solver="nystroem"``).
    centers : {"uniform", "k-means++"}, default="uniform"
        How the Nystroem centres are drawn from the training samples.
    tol : float, default=1e-6
        Relative residual at which ``solver="cg"`` stops.
    max_iter : int or None, default=None
        Iteration cap of ``solver="cg"`` (None: the solver's default).
    random_state : int, RandomState instance or None, default=None
        Seed of the Nystroem centre selection.

    Attributes
    ----------
    n_features_in_ : int
    feature_map_ : KernelFeatureMap, LandmarkFeatureMap, KernelExpansion or LinearFeatures
        Explicit map ``phi`` with ``phi(x)^T phi(z) = k(x, z)`` on the training set (the
        identity for the linear kernel with fewer features than samples).
    coef_ : ndarray of shape (n_components, n_outputs)
        ``f(x) = phi(x) @ coef_ + intercept_``.
    dual_coef_ : ndarray of shape (n_basis, n_outputs)
        Kernel paths: ``f(x) = k(x, feature_map_.basis_) @ dual_coef_ + intercept_``.
    intercept_ : ndarray of shape (n_outputs,)
        Zero when ``fit_intercept=False``.
    solver_ : str
        The solver used (what ``solver="auto"`` picked).
    loss_ : SquareLoss
        The loss object that fitted the model (``structreg.models._losses``).
    solver_info_ : dict
        How the problem was solved (factorisation, convexity, iterations, ...).
    n_iter_ : int
        Iterations of the iterative solver (1 for a direct solve).
    transduction_ : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        The fitted values ``f(x_i)`` at the training points, labeled and unlabeled.

    Examples
    --------
    A noisy half circle, its arc length as the target, 6 of 200 points labeled:

    >>> import numpy as np
    >>> from structreg import LapRLSRegressor
    >>> rng = np.random.default_rng(0)
    >>> s = np.sort(rng.uniform(0, np.pi, 200))
    >>> X = np.c_[np.cos(s), np.sin(s)] + rng.normal(scale=0.02, size=(200, 2))
    >>> y = np.full(200, np.nan)
    >>> y[::40] = s[::40]
    >>> reg = LapRLSRegressor(gamma=1.0, gamma_A=1e-4, gamma_I=1.0).fit(X, y)
    >>> bool(reg.score(X, s) > 0.95)
    True
    """

    def __init__(
        self,
        kernel="rbf",
        gamma="scale",
        degree=3,
        coef0=1.0,
        gamma_A=1e-2,
        gamma_I=1.0,
        n_neighbors=6,
        graph="knn",
        weights="heat",
        t=None,
        normalized=False,
        metric="euclidean",
        fit_intercept=True,
        solver="auto",
        n_components=1000,
        centers="uniform",
        tol=1e-6,
        max_iter=None,
        random_state=None,
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.gamma_A = gamma_A
        self.gamma_I = gamma_I
        self.n_neighbors = n_neighbors
        self.graph = graph
        self.weights = weights
        self.t = t
        self.normalized = normalized
        self.metric = metric
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.n_components = n_components
        self.centers = centers
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
