"""Discriminative regularization: DRLSC and DRGV (Xue, Chen & Yang 2009), DiscriminativeRLS
(GDR / LDR, Zhang et al. 2008)."""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
from scipy.linalg import pinvh

from .._compat import Interval, StrOptions
from .._params import NONNEGATIVE_OR_AUTO
from ..solvers.design import penalty_products
from ..solvers.solution import warn_nonconvex
from ..structure import ClassScatterPenalty, LaplacianPenalty, build_penalties, smallest_eigenvalue
from ._base import StructuralClassifier
from ._losses import BorderedDual

AUTO_CONVEX_FRACTION = 0.5
"""``DiscriminativeRLS(gamma_D="auto")``: this fraction of the largest convex weight."""

AUTO_DRLSC_NEIGHBORS = 5
"""``DRLSC(n_neighbors="auto")``: this k, unless the smallest class is not larger."""


class _DRLSCBase(StructuralClassifier):
    """Shared fit of DRLSC and DRGV: ``1/2 sum_i c_i e_i^2 + 1/2 f^T M_eta f``, no RKHS norm
    (``c_i = w_{y_i}`` the class weights, all 1 by default).

    ``M_eta = eta A - (1 - eta) B`` (A: compactness, B: separability) on the outputs
    ``f = Z w + b`` of a linear model on the features Z (the inputs, or the kernel feature map
    for a nonlinear kernel).  ``formulation="bordered"`` solves the paper's Theorems 1-2 literally
    (with ``diag(1/c)`` for the paper's ``I`` under class weights):

        S = Z^T M Z,  Omega = Z S^+ Z^T,  [[0, 1^T], [1, Omega + diag(1/c)]] [b; Gamma] = [0; Y],
        w = S^+ Z^T Gamma,

    with the Moore-Penrose pseudo-inverse ``S^+`` (``scipy.linalg.pinvh``).  When ``S`` is
    nonsingular this is the unique stationary point of the objective -- its minimiser when
    ``S`` is positive definite (e.g. eta = 1 on low-dimensional data).  For eta < 1, ``S`` is
    usually indefinite: the objective (a difference of convex functions) is then unbounded
    below along the negative-curvature directions, and the bordered solution is the stationary
    point the paper's closed form defines (a saddle point); when ``S`` is singular, ``S^+``
    keeps ``w`` in the range of ``S`` (the paper's minimum-norm choice), which is a stationary
    point only if ``Z^T Gamma`` lies in that range.  ``formulation="primal"`` instead solves the
    normal equations ``(Z~^T (C + M) Z~) [w; b] = Z~^T C Y`` (``Z~ = [Z, 1]``, ``C = diag(c)``) with
    :func:`structreg.solvers.solve_penalized_least_squares` (Cholesky, or eigh pseudo-inverse
    for indefinite / singular systems): always a stationary point, minimum-norm when singular.
    ``solver_info_["convex"]`` reports whether the objective was convex (its Hessian
    ``[Z, 1]^T (C + M) [Z, 1]`` PSD) and ``solver_info_["S_eta_psd"]`` whether ``S_eta`` was.
    """

    _semi_supervised = False

    def _loss(self):
        return "bordered_square" if self.formulation == "bordered" else "square"

    def _fit_intercept(self):
        return True

    def _loss_weights(self, labeled):
        return labeled.astype(float)  # the paper's 1/2 sum e_i^2 (the 1/2 is common)

    _exact_kernel_cg = False  # no RKHS norm: "cg" runs CG/MINRES on the exact feature map

    @property
    def _path_params(self) -> tuple[str, ...]:
        """``eta`` only weights the primal normal equations; the bordered formulation solves
        its own system (``S_eta^+``), so it has no shared path."""
        return ("eta",) if self.formulation == "primal" else ()

    def _ridge(self) -> float:
        return 0.0

    def _bordered_system(self, X, Z, weights, M):
        """Theorems 1-2: ``Omega = Z S^+ Z^T`` with ``S = Z^T M Z``, ``r_i = 1 / c_i`` (1
        without class weights), ``w = S^+ Z^T Gamma``; ``solver_info_`` says whether the
        objective was convex."""
        MZ = penalty_products(M, Z)
        S = Z.T @ MZ
        S = 0.5 * (S + S.T)
        SZ = pinvh(S) @ Z.T
        # convexity of the objective itself: Hessian [Z, 1]^T (I + M) [Z, 1]
        A = np.hstack([Z, np.ones((Z.shape[0], 1))])
        H = A.T @ (weights[:, None] * A) + A.T @ np.hstack([MZ, penalty_products(M, A[:, -1:])])
        eig = np.linalg.eigvalsh(0.5 * (H + H.T))
        tol = len(eig) * np.finfo(float).eps * max(np.abs(eig).max(initial=0.0), 1e-300)
        info = {
            "convex": bool(eig.min(initial=0.0) >= -tol),
            "S_eta_psd": bool(np.linalg.eigvalsh(S).min(initial=0.0) >= -tol),
        }
        if not info["convex"]:
            warn_nonconvex("the DRLSC objective has a negative-curvature direction")
        reg = self._bordered_reg(weights)
        return BorderedDual(Z @ SZ, reg, coef=lambda G: SZ @ G, label="pinvh+", info=info)

    def _bordered_reg(self, weights):
        return 1.0 / weights  # e_i = Gamma_i / c_i


class DRLSC(_DRLSCBase):
    """Discriminatively regularized least-squares classification (Xue, Chen & Yang 2009).

    ``min 1/2 sum_i ||y_i - f(x_i)||^2 + 1/2 [eta f^T L_w f - (1 - eta) f^T L_b f]`` for
    ``f(x) = W^T phi(x) + b``, where ``L_w`` / ``L_b`` are the Laplacians of the edges of the
    (0/1, symmetrised) kNN graph that join samples of the same / different classes (eqs. 13-15).
    One-of-c targets (coded +-1 here; the paper's 0/1 coding gives the same classifier since the
    bias absorbs the shift), argmax prediction.

    Parameters
    ----------
    eta : float in [0, 1], default=0.5
        Trade-off between compactness (eta) and separability (1 - eta).
    kernel : {"linear", "rbf", "poly", "precomputed"} or callable, default="linear"
        ``"precomputed"``: ``fit`` takes the training Gram matrix, ``predict`` the
        test-vs-training kernel; structure uses the kernel-induced distance (see
        :class:`~structreg.StructuralClassifier`).
        ``"linear"`` is the paper's linear DRLSC; other kernels give the nonlinear version on
        the explicit kernel feature map (an empirical kernel map of the training samples).
    gamma : float, "scale" or None, default="scale"
    degree : int, default=3
    coef0 : float, default=1.0
    formulation : {"primal", "bordered"}, default="primal"
        ``"primal"``: the normal equations of the stated objective (its exact stationary point,
        minimum-norm when singular).  ``"bordered"``: the paper's dual bordered system with
        ``S_eta^+``.  Identical when ``S_eta`` is nonsingular and well conditioned; when it is
        singular or ill-conditioned (a wide RBF kernel, more features than graph constraints)
        the pseudo-inverse truncation changes the answer and the bordered solution need not be
        a stationary point: on the paper's two-moons toy with a wide RBF kernel the bordered
        solution predicts a single class on some draws where the primal one does not
        (measured in :doc:`/user_guide/defaults`, "Measurements behind other defaults");
        hence the default.
    solver : {"auto", "dense", "nystroem", "cg"}, default="auto"
        Kernel version: ``"dense"`` factors the exact Gram matrix, ``"nystroem"`` uses
        ``n_components`` centres (O(n m^2) time, O(n m) memory), ``"cg"`` solves the primal
        normal equations iteratively (CG, MINRES on negative curvature; primal formulation
        only); ``"auto"``: dense up to 5000 samples, else Nystroem.  The linear kernel with
        fewer features than samples always solves its (d+1)-system directly.
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
    class_weight : dict, "balanced" or None, default=None
        Class weights ``w_c`` of the labeled samples, as in scikit-learn: the loss becomes ``1/2
        sum_i c_i ||e_i||^2`` with ``c_i = w_{y_i}`` (the bordered formulation: ``Omega +
        diag(1/c)``).  ``"balanced"``: ``w_c = l / (n_classes l_c)`` over the l labeled samples
        (unlabeled ones never count); a dict ``{label: weight}`` weighs the classes it omits 1
        and refuses labels that are not classes.  See :class:`~structreg.StructuralClassifier`.

    Attributes
    ----------
    classes_, feature_map_, coef_, dual_coef_, intercept_, solver_info_, solver_,
    calibrator_
        See :class:`StructuralClassifier`.
    n_neighbors : int or "auto", default="auto"
        k of the kNN graph; must be smaller than the smallest class.  ``"auto"``:
        ``AUTO_DRLSC_NEIGHBORS`` (5), reduced with a warning to one less than the
        smallest class when that class is smaller (``n_neighbors_`` holds the k used).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from structreg import DRLSC
    >>> X, y = load_iris(return_X_y=True)
    >>> DRLSC(eta=0.5, n_neighbors=5).fit(X, y).score(X, y) > 0.8
    True
    """

    def __init__(
        self,
        eta=0.5,
        n_neighbors="auto",
        kernel="linear",
        gamma="scale",
        degree=3,
        coef0=1.0,
        formulation="primal",
        solver="auto",
        n_components=1000,
        centers="uniform",
        tol=1e-6,
        max_iter=None,
        random_state=None,
        class_weight=None,
    ):
        self.eta = eta
        self.n_neighbors = n_neighbors
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.formulation = formulation
        self.solver = solver
        self.n_components = n_components
        self.centers = centers
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.class_weight = class_weight

    _constraint_overrides = {
        "n_neighbors": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})]
    }

    def _penalty_terms(self, n_samples, n_labeled):
        graph = dict(n_neighbors=self.n_neighbors_, weights="connectivity")
        return [
            (self.eta, LaplacianPenalty(graph="within-class", **graph)),
            (-(1.0 - self.eta), LaplacianPenalty(graph="between-class", **graph)),
        ]

    def _check_labels(self, y_codes):
        """``n_neighbors_``: ``n_neighbors`` if every class is larger, ``"auto"`` reduced
        to the smallest class minus one (with a warning), else an error."""
        counts = np.bincount(y_codes[y_codes >= 0])
        smallest = int(counts.min())
        if self.n_neighbors != "auto":
            if self.n_neighbors >= smallest:
                raise ValueError(
                    f"n_neighbors={self.n_neighbors} must be smaller than the smallest class "
                    f"({smallest} samples); the paper chooses k in [2, min_c n_c - 1]"
                )
            self.n_neighbors_ = self.n_neighbors
            return
        if smallest < 2:
            raise ValueError(
                f"DRLSC's graph joins each sample to its nearest samples of the same class, "
                f"but class {self.classes_[np.argmin(counts)].tolist()!r} has a single sample"
            )
        self.n_neighbors_ = min(AUTO_DRLSC_NEIGHBORS, smallest - 1)
        if self.n_neighbors_ < AUTO_DRLSC_NEIGHBORS:
            warnings.warn(
                f"DRLSC: the smallest class has {smallest} samples, so n_neighbors='auto' "
                f"uses k={self.n_neighbors_} instead of {AUTO_DRLSC_NEIGHBORS}",
                UserWarning,
                stacklevel=5,
            )


class DRGV(_DRLSCBase):
    """DRLSC with the generalized-variance discriminative term (Xue, Chen & Yang 2009, eqs.
    11-12).

    ``min 1/2 sum_i ||y_i - f(x_i)||^2 + 1/2 [eta S_w(f) - (1 - eta) S_b(f)]`` with
    ``S_w = sum_c 1/n_c sum_{i in c} ||f_i - m_c||^2`` and ``S_b = sum_c sum_{k != c}
    ||m_c - m_k||^2`` (``m_c`` the class means of the outputs), a global (class-granularity)
    counterpart of DRLSC's local graphs.

    Parameters
    ----------
    eta : float in [0, 1], default=0.5
        Trade-off between compactness (eta) and separability (1 - eta).
    kernel : {"linear", "rbf", "poly", "precomputed"} or callable, default="linear"
        ``"precomputed"``: ``fit`` takes the training Gram matrix, ``predict`` the
        test-vs-training kernel; structure uses the kernel-induced distance (see
        :class:`~structreg.StructuralClassifier`).
        ``"linear"`` is the paper's linear DRLSC; other kernels give the nonlinear version on
        the explicit kernel feature map (an empirical kernel map of the training samples).
    gamma : float, "scale" or None, default="scale"
    degree : int, default=3
    coef0 : float, default=1.0
    formulation : {"primal", "bordered"}, default="primal"
        ``"primal"``: the normal equations of the stated objective (its exact stationary point,
        minimum-norm when singular).  ``"bordered"``: the paper's dual bordered system with
        ``S_eta^+``.  Identical when ``S_eta`` is nonsingular and well conditioned; when it is
        singular or ill-conditioned (a wide RBF kernel, more features than graph constraints)
        the pseudo-inverse truncation changes the answer and the bordered solution need not be
        a stationary point: on the paper's two-moons toy with a wide RBF kernel the bordered
        solution predicts a single class on some draws where the primal one does not
        (measured in :doc:`/user_guide/defaults`, "Measurements behind other defaults");
        hence the default.
    solver : {"auto", "dense", "nystroem", "cg"}, default="auto"
        Kernel version: ``"dense"`` factors the exact Gram matrix, ``"nystroem"`` uses
        ``n_components`` centres (O(n m^2) time, O(n m) memory), ``"cg"`` solves the primal
        normal equations iteratively (CG, MINRES on negative curvature; primal formulation
        only); ``"auto"``: dense up to 5000 samples, else Nystroem.  The linear kernel with
        fewer features than samples always solves its (d+1)-system directly.
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
    class_weight : dict, "balanced" or None, default=None
        Class weights ``w_c`` of the labeled samples, as in scikit-learn: the loss becomes ``1/2
        sum_i c_i ||e_i||^2`` with ``c_i = w_{y_i}`` (the bordered formulation: ``Omega +
        diag(1/c)``).  ``"balanced"``: ``w_c = l / (n_classes l_c)`` over the l labeled samples
        (unlabeled ones never count); a dict ``{label: weight}`` weighs the classes it omits 1
        and refuses labels that are not classes.  See :class:`~structreg.StructuralClassifier`.

    Attributes
    ----------
    classes_, feature_map_, coef_, dual_coef_, intercept_, solver_info_, solver_,
    calibrator_
        See :class:`StructuralClassifier`.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from structreg import DRGV
    >>> X, y = load_iris(return_X_y=True)
    >>> DRGV(eta=0.9).fit(X, y).score(X, y) > 0.8
    True
    """

    def __init__(
        self,
        eta=0.5,
        kernel="linear",
        gamma="scale",
        degree=3,
        coef0=1.0,
        formulation="primal",
        solver="auto",
        n_components=1000,
        centers="uniform",
        tol=1e-6,
        max_iter=None,
        random_state=None,
        class_weight=None,
    ):
        self.eta = eta
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.formulation = formulation
        self.solver = solver
        self.n_components = n_components
        self.centers = centers
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.class_weight = class_weight

    def _penalty_terms(self, n_samples, n_labeled):
        return [
            (self.eta, ClassScatterPenalty("within", "variance")),
            (-(1.0 - self.eta), ClassScatterPenalty("between", "variance")),
        ]


class DiscriminativeRLS(StructuralClassifier):
    """Classification by discriminative regularization (Zhang, Wang, Li, Yin & Dong 2008).

    ``min (1/l) sum_i ||f(x_i) - y_i||^2 + gamma_A ||f||_K^2 + (gamma_D / l) f^T L_D f`` over
    the l training points, with a discriminality Laplacian ``L_D`` that pulls same-class
    outputs together and pushes different-class outputs apart:

    * ``margin="global"`` (GDR): ``L_D = L_W - L_B``, the within-class minus the between-class
      scatter of the outputs (:class:`~structreg.structure.ClassScatterPenalty`,
      ``definition="scatter"``; eigenvalues +1, -1, 0, so always indefinite);
    * ``margin="local"`` (LDR): ``L_D = L_o - L_e``, the Laplacians of the 0/1 homogeneous
      (``n_neighbors`` nearest same-class points) and heterogeneous (``n_neighbors_other``
      nearest other-class points) neighbourhood graphs, union-symmetrised.

    Both the loss and the discriminality term are averages over the training points, so a
    ``gamma_D`` means the same objective at any number of samples (a value chosen by
    cross-validation on folds is right for the refit).  The paper's sum-form weight
    ``gamma`` at l training points is ``gamma_D = gamma * l``.

    Convexity: on the training outputs the Hessian is ``(2/l) (I + gamma_D L_D) + 2 gamma_A
    K^+``, so the objective is convex for every kernel when ``gamma_D <= 1 / max(0,
    -lambda_min(L_D))``: ``gamma_D <= 1`` for the global margin; for the local margin the
    bound depends on the heterogeneous graph (``-lambda_min(L_D) <= lambda_max(L_e) <= 2`` x
    its largest degree).  The default ``gamma_D="auto"`` takes half of that bound, computed
    from ``L_D`` at fit (``gamma_D_``): 0.5 for the global margin.

    Kernel version (GDR, LDR): ``f = K alpha``, closed form
    ``alpha = (K + l gamma_A I + gamma_D L_D K)^{-1} Y`` (no bias).  Linear version (LGDR,
    LLDR: ``kernel="linear"``): ``f(x) = w^T x + b`` with an unpenalised bias, the paper's
    (d+1)-system ``(G^T G + gamma_D L~_D) [w; b] = G^T y~``.  Both are solved by
    :func:`structreg.solvers.solve_penalized_least_squares` (the same equations), directly
    or by the matrix-free ``solver="cg"`` path (conjugate gradients, MINRES on negative
    curvature; O(nnz(X) + nnz(L_D)) per iteration for the linear kernel, where the global L_D
    is applied in O(n) as diagonal plus rank-c).  Above the bound the objective is not
    convex (reported in ``solver_info_["convex"]`` by the
    direct solver, with a :class:`~structreg.solvers.NonConvexObjectiveWarning` otherwise; CG
    reports False only when it meets negative curvature, else None = not checked); the returned
    solution is always the stationary point the closed form defines.  One-of-c targets coded
    +-1, argmax.

    Presets: GDR = ``DiscriminativeRLS(margin="global", kernel="rbf")``, LDR =
    ``margin="local"`` with ``kernel="rbf"``, LGDR / LLDR = the same with ``kernel="linear"``.

    Parameters
    ----------
    margin : {"global", "local"}, default="global"
    kernel : {"linear", "rbf", "poly", "precomputed"} or callable, default="rbf"
        ``"precomputed"``: ``fit`` takes the training Gram matrix, ``predict`` the
        test-vs-training kernel; structure uses the kernel-induced distance (see
        :class:`~structreg.StructuralClassifier`).
    gamma : float, "scale" or None, default="scale"
        Kernel width as in scikit-learn.
    degree : int, default=3
    coef0 : float, default=1.0
    gamma_A : float, default=1e-2
        RKHS-norm weight (the paper's lambda).
    gamma_D : float or "auto", default="auto"
        Discriminality weight of the averaged term ``(gamma_D / l) f^T L_D f`` (the paper's
        gamma times l).  ``"auto"``: half the largest weight that keeps the objective convex
        for any kernel, ``0.5 / max(1, -lambda_min(L_D))`` (0.5 for the global margin).
    n_neighbors : int, default=5
        Homogeneous neighbourhood size (xi), local margin only.
    n_neighbors_other : int, default=5
        Heterogeneous neighbourhood size (zeta), local margin only.
    fit_intercept : bool or None, default=None
        Unpenalised bias; None follows the paper (bias for the linear kernel only).
    solver : {"auto", "dense", "nystroem", "cg"}, default="auto"
        ``"dense"``: exact kernel factor and a direct solve.  ``"nystroem"``: ``n_components``
        centres, O(n m^2 + nnz(L_D) m) time, O(n m) memory.  ``"cg"``: iterative and exact
        (kernel: K-preconditioned CG on the kernel expansion, MINRES on negative curvature;
        ``kernel="linear"``: CG on the features, which also accepts scipy.sparse X (CSR),
        never densified).  ``"auto"``: dense up to 5000 samples, Nystroem beyond, CG for
        sparse X.
    tol : float, default=1e-8
        Relative residual at which ``solver="cg"`` stops.
    max_iter : int or None, default=None
        Iteration cap of ``solver="cg"`` (None: the solver's default).
    n_components : int, default=1000
        Number of Nystroem centres m (``solver="nystroem"``).
    centers : {"uniform", "k-means++"}, default="uniform"
        How the Nystroem centres are drawn from the training samples.
    random_state : int, RandomState instance or None, default=None
        Seed of the Nystroem centre selection.
    class_weight : dict, "balanced" or None, default=None
        Class weights ``w_c`` of the labeled samples, as in scikit-learn: the loss becomes
        ``sum_labeled c_i ||f(x_i) - y_i||^2`` with ``c_i = w_{y_i} / l``, the same weight in
        every output column.  ``"balanced"``: ``w_c = l / (n_classes l_c)`` over the l labeled
        samples (unlabeled ones never count); a dict ``{label: weight}`` weighs the classes it
        omits 1 and refuses labels that are not classes.  See
        :class:`~structreg.StructuralClassifier`.

    Attributes
    ----------
    classes_, feature_map_, coef_, dual_coef_, intercept_, solver_info_, solver_,
    calibrator_
        See :class:`StructuralClassifier`.
    gamma_D_ : float
        The discriminality weight used (``gamma_D``, or what ``"auto"`` computed).
    n_iter_ : int
        Iterations of the CG/MINRES solver (largest over the outputs); 1 for a direct solve.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from structreg import DiscriminativeRLS
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = DiscriminativeRLS(margin="local", gamma=0.5, gamma_A=1e-3, gamma_D=1e-4)
    >>> clf.fit(X, y).score(X, y) > 0.95
    True
    """

    _semi_supervised = False
    _path_params = ("gamma_A", "gamma_D")
    _constraint_overrides = {"gamma_D": NONNEGATIVE_OR_AUTO}

    def __init__(
        self,
        margin="global",
        kernel="rbf",
        gamma="scale",
        degree=3,
        coef0=1.0,
        gamma_A=1e-2,
        gamma_D="auto",
        n_neighbors=5,
        n_neighbors_other=5,
        fit_intercept=None,
        solver="auto",
        tol=1e-8,
        max_iter=None,
        n_components=1000,
        centers="uniform",
        random_state=None,
        class_weight=None,
    ):
        self.margin = margin
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.gamma_A = gamma_A
        self.gamma_D = gamma_D
        self.n_neighbors = n_neighbors
        self.n_neighbors_other = n_neighbors_other
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.n_components = n_components
        self.centers = centers
        self.random_state = random_state
        self.class_weight = class_weight

    def _loss(self):
        return "square"

    def _fit_intercept(self):
        if self.fit_intercept is None:  # the paper: bias in the linear version only
            return self.kernel == "linear"
        return self.fit_intercept

    def _discriminality(self, weight: float) -> list:
        """``weight * L_D`` as the (weight, penalty) pairs of the margin's two terms."""
        if self.margin == "global":
            within = ClassScatterPenalty("within", "scatter")
            between = ClassScatterPenalty("between", "scatter")
        else:
            within = LaplacianPenalty("class-wise", self.n_neighbors, "connectivity")
            between = LaplacianPenalty("other-class", self.n_neighbors_other, "connectivity")
        return [(weight, within), (-weight, between)]

    def _prepare(self, X, Z, y_codes, labeled):
        """``gamma_D_``: ``gamma_D``, or for ``"auto"`` half of ``1 / max(1, -lambda_min(L_D))``
        (:data:`AUTO_CONVEX_FRACTION` of the largest weight that keeps the objective convex
        for any kernel)."""
        self.gamma_D_ = self.gamma_D
        if self.gamma_D == "auto" and self.margin == "global":  # L_W - L_B: eigenvalues -1, 0, 1
            self.gamma_D_ = AUTO_CONVEX_FRACTION
        elif self.gamma_D == "auto":  # the local graphs' spectrum: build them and ask
            L_D, _ = build_penalties(self._discriminality(1.0), X, y_codes, labeled)
            lowest = smallest_eigenvalue(L_D, X.shape[0])
            self.gamma_D_ = AUTO_CONVEX_FRACTION / max(1.0, -lowest)

    def _penalty_terms(self, n_samples, n_labeled):
        gamma_D = self.gamma_D if self.gamma_D != "auto" else self.gamma_D_
        return self._discriminality(gamma_D / n_labeled)
