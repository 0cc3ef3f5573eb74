"""Losses on the labeled outputs, as small objects that :class:`StructuralClassifier` composes.

Each loss declares what it accepts -- the ``solver`` values, indefinite penalties or PSD ones
only, the ``multi_class`` decompositions, whether the model has a bias -- and does two jobs:
``fit_grid`` (fit models that share one :class:`~structreg.models.problem.Problem` -- design,
targets, loss weights and unweighted penalties -- and differ only in their weights: ``fit``
passes one model, :func:`~structreg.models.fit_path` a group of grid points) and ``decision``
(the outputs at new points).  A preset names its loss
with ``_loss()`` (``"square"``, ``"bordered_square"``, ``"hinge"``); :func:`loss_for` turns
the name and the solver into the object (the hinge loss's primal solvers minimise the squared
hinge, :class:`SquaredHingeLoss`).

* :class:`SquareLoss` -- ``sum_i c_i ||f_i - y_i||^2``, normal equations (direct, CG, exact
  kernel PCG); indefinite penalties allowed.
* :class:`BorderedSquareLoss` -- the same loss with a bias, solved through the model's bordered
  dual system ``[[0, 1^T], [1, Omega + r I]]`` (LS-SVM, DRLSC's Theorems 1-2).
* :class:`HingeLoss` -- libsvm on the deformed kernel (PSD penalties only), from explicit
  features or, for a model that factors its penalty, from the Gram matrix (Woodbury).
* :class:`SquaredHingeLoss` -- ``sum_i c_i max(0, 1 - y_i f_i)^2`` by Newton's method in the
  primal (PSD penalties only, one-vs-rest).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
from sklearn import config_context
from sklearn.base import clone
from sklearn.multiclass import OneVsOneClassifier

from .._compat import safe_split
from ..kernels import KernelExpansion, KernelOperator, kernel_blocks
from ..solvers import (
    BorderedPath,
    DeformedFeatures,
    DeformedKernel,
    PrecomputedSVM,
    solve_bordered,
    solve_penalized_least_squares,
)
from ._output_checks import check_finite_solution
from ._proba import CG_REASON
from .problem import Problem, Setting


@dataclass
class BorderedDual:
    """A model's bordered system ``[[0, 1^T], [1, Omega + diag(reg)]] [b; Gamma] = [0; Y]``
    (``reg`` a number, or one per sample: the weighted LS-SVM).

    ``coef`` maps ``Gamma`` to the coefficients of the linear output on the features (None:
    ``Gamma`` itself, the kernel expansion over the training samples); ``label`` prefixes
    ``solver_info_["factorization"]`` and ``info`` is merged into ``solver_info_``.
    """

    Omega: np.ndarray
    reg: float | np.ndarray
    coef: Callable[[np.ndarray], np.ndarray] | None = None
    label: str = ""
    info: dict = field(default_factory=dict)


class TrainingGram(KernelExpansion):
    """The exact kernel on the training samples, nothing factored.

    The Gram matrix of the labeled samples is computed once (finite, exactly symmetric) and
    shared by a structure step (e.g. kernel Ward clustering) and :class:`HingeLoss`'s deformed
    kernel; new points are scored against ``train_`` in row blocks.  scikit-learn's checks of
    inputs that the model has already validated are skipped.
    """

    def kernel_(self, X, Y=None):
        with config_context(assume_finite=True, skip_parameter_validation=True):
            return super().kernel_(X, Y)

    def labeled_gram(self, labeled: np.ndarray) -> np.ndarray:
        """``k(X_l, X_l)`` over the labeled training samples (computed on the first call)."""
        if "gram_" not in vars(self):
            self.train_ = self.basis_ if labeled.all() else self.basis_[labeled]
            K = self.kernel_(self.train_)
            if callable(self.kernel):  # the callable's array may be shared or read-only
                K = np.array(K, dtype=float, order="C")
            if not np.isfinite(K.sum()) and not np.isfinite(K).all():  # one pass when finite
                raise ValueError("kernel matrix has non-finite entries")
            K += K.T  # symmetric to the last bit, as the SVM's Gram matrix must be
            K *= 0.5
            self.gram_ = K
        return self.gram_

    def cross_blocks(self, X: np.ndarray) -> Iterator[np.ndarray]:
        """Row blocks of ``k(X, train_)`` (the one memory budget of
        :func:`~structreg.kernels.kernel_blocks`)."""
        for _, block in kernel_blocks(self.kernel_, X, self.train_):
            yield block


class Loss:
    """A loss on the labeled outputs (see the module docstring).

    Attributes
    ----------
    name : str
        ``solver_info_["loss"]`` of a fit.
    solvers : tuple of str
        The ``solver`` values the loss accepts.
    psd_only : bool
        Whether the combined penalty must be PSD (the deformed kernel, a convex Newton step).
    multi_class : tuple of str
        The ``multi_class`` decompositions it accepts for more than two classes.
    bias : {"optional", "always"}
        ``fit_intercept`` decides, or the loss always has an unpenalised bias.
    linear : bool
        Whether the output is linear on the feature map (``phi(x) @ coef_ + intercept_``).
    """

    name = ""
    solvers: tuple[str, ...] = ("auto", "dense")
    psd_only = False
    multi_class: tuple[str, ...] = ("ovr", "ovo")
    bias = "optional"
    linear = True

    def has_intercept(self, model) -> bool:
        """Whether ``model``'s outputs carry an unpenalised bias: always for a loss that has
        one of its own (``bias="always"``), else as ``fit_intercept`` says."""
        return self.bias == "always" or model._fit_intercept()

    def check_solver(self, model, solver: str) -> None:
        """Refuse a ``solver`` value this loss does not accept."""
        if solver not in self.solvers:
            raise ValueError(f"{self._solver_message(model)}, got {solver!r}")

    def _solver_message(self, model) -> str:
        return (
            f"{type(model).__name__} with loss={model._loss()!r} accepts solver in {self.solvers}"
        )

    def for_solver(self, solver: str) -> Loss:
        """The loss the given solver minimises (itself, but for the hinge's primal solvers)."""
        return self

    def check(self, model, setting: Setting, psd: bool) -> None:
        """Refuse a fit whose setting, penalty or decomposition this loss cannot handle
        (``setting``: the model's ridge and weights; ``psd``: the weighted sum is PSD)."""
        if self.psd_only and setting.penalised and not psd:
            raise ValueError(
                "the hinge loss needs positive semi-definite penalties with positive weights; "
                "use loss='square' for indefinite (e.g. between-class) penalties"
            )
        decomposition = model._multi_class()
        if len(model.classes_) > 2 and decomposition not in self.multi_class:
            raise ValueError(self._multi_class_message(model, decomposition))

    def _multi_class_message(self, model, decomposition: str) -> str:
        return (
            f"loss {self.name!r} accepts multi_class in {self.multi_class}, got {decomposition!r}"
        )

    def fit_grid(
        self, problem: Problem, models: Sequence, *, warn: bool = True
    ) -> list[np.ndarray | None]:
        """Fit every model of ``models`` on ``problem`` (sets each one's solution attributes
        and ``solver_info_``); return each one's outputs at the training points, or None
        where they are not a by-product.

        The models share the problem's structure (their fitted structure attributes, e.g.
        ``feature_map_``, are the problem's) and differ only in their weights (the ridge, the
        penalty weights, a loss scale): ``fit`` passes one model, :func:`~structreg.models.
        fit_path` the grid points of one structure.  ``warn``: issue
        :class:`~structreg.exceptions.NonConvexObjectiveWarning` for non-convex settings.
        """
        settings = [problem.setting(model) for model in models]
        for model, setting in zip(models, settings, strict=True):
            self.check(model, setting, problem.is_psd(setting))
        return self._fit_settings(problem, models, settings, warn)

    def _fit_settings(
        self, problem: Problem, models: Sequence, settings: list[Setting], warn: bool
    ) -> list[np.ndarray | None]:
        raise NotImplementedError

    def decision(self, model, X) -> np.ndarray:
        """Outputs of the fitted ``model`` at validated inputs ``X``."""
        if hasattr(model, "dual_coef_"):  # kernel expansion over the basis samples
            return model._square_output(model.feature_map_.decision(X, model.dual_coef_))
        return model._square_output(model.feature_map_.transform(X) @ model.coef_)

    @staticmethod
    def _fitted(model, Z) -> np.ndarray | None:
        return None if Z is None else model._square_output(Z @ model.coef_)


class SquareLoss(Loss):
    """``sum_i c_i ||f(x_i) - y_i||^2`` on +-1 one-of-c targets: the normal equations.

    Solvers ``"dense"`` / ``"nystroem"`` (direct on the features: every setting of a grid
    from one assembly, :meth:`solve_grid`), ``"cg"`` (CG on the features, or K-preconditioned
    CG on the kernel expansion when ``Z`` is None; one solve per setting).  Indefinite
    penalties are allowed (the solvers handle them; ``solver_info_["convex"]`` tells).
    ``multi_class`` is not used: the outputs are the one-of-c columns.
    """

    name = "square"
    solvers = ("auto", "dense", "nystroem", "cg")

    def check(self, model, setting: Setting, psd: bool) -> None:
        pass  # any penalty; one-of-c outputs whatever multi_class says

    @staticmethod
    def direct(model, problem: Problem) -> bool:
        """Whether the problem is solved by factoring its normal equations (a design, and a
        solver other than CG): then every setting comes from one assembly."""
        return problem.Z is not None and model.solver_ != "cg"

    def solve_grid(
        self, problem: Problem, settings: Sequence[Setting], *, warn: bool = True
    ) -> list:
        """The direct solutions (:class:`~structreg.solvers.LeastSquaresSolution`) of the
        settings, from the problem's one assembly of the normal equations
        (:meth:`~structreg.solvers.SquareLossPath.solve_grid`).  A single fit that asks for
        leave-one-out outputs (``problem.loo_rows``) gets its leverages from the same
        factorisation."""
        path = problem.square_path()
        if len(settings) == 1 and problem.loo_rows is not None:
            ridge, weights = settings[0].ridge, settings[0].weights
            return [path.solve(ridge, weights, warn=warn, leverage_rows=problem.loo_rows)]
        if len(settings) == 1:
            return [path.solve(settings[0].ridge, settings[0].weights, warn=warn)]
        return path.solve_grid([(s.ridge, s.weights) for s in settings], warn=warn)

    def _fit_settings(self, problem, models, settings, warn):
        if problem.Z is None:
            return [self._fit_kernel(m, problem, s) for m, s in zip(models, settings, strict=True)]
        if models[0].solver_ == "cg":
            return [
                self._fit_features_cg(m, problem, s) for m, s in zip(models, settings, strict=True)
            ]
        sols = self.solve_grid(problem, settings, warn=warn)
        for model, sol in zip(models, sols, strict=True):  # before the kernel expansions
            check_finite_solution(model, sol.coef, sol.intercept)
        # the grid's coefficients side by side: one BLAS-3 product each for the kernel
        # expansions and the training outputs instead of one matrix-vector product per model
        coefs, cols = side_by_side([sol.coef for sol in sols])
        feature_map = models[0].feature_map_
        duals = feature_map.dual_coef(coefs) if hasattr(feature_map, "dual_coef") else None
        outputs = problem.Z @ coefs
        fitted = []
        for model, sol, col in zip(models, sols, cols, strict=True):
            info = self._solution_info(sol)
            dual = None if duals is None else np.ascontiguousarray(duals[:, col])
            n_components = problem.Z.shape[1]
            model._set_solution(sol.coef, sol.intercept, self.name, n_components, info, dual)
            fitted.append(model._square_output(outputs[:, col]))
        if len(models) == 1:
            why = "its normal equations are singular (a pseudo-inverse solution)"
            problem.set_loo(fitted[0], sols[0].leverages, why)
        return fitted

    @staticmethod
    def _solution_info(sol) -> dict:
        """``solver_info_`` entries of a :class:`~structreg.solvers.LeastSquaresSolution`."""
        return {
            "factorization": sol.factorization,
            "convex": sol.convex,
            "singular": sol.singular,
            "n_iter": sol.n_iter or 1,
        }

    def _fit_features_cg(self, model, problem: Problem, setting: Setting) -> np.ndarray:
        """CG on the normal equations of the design (matrix-free, Jacobi-scaled)."""
        sol = solve_penalized_least_squares(
            problem.Z,
            problem.Y,
            problem.loss_weights,
            problem.combined(setting),
            ridge=setting.ridge,
            fit_intercept=problem.fit_intercept,
            method="cg",
            tol=model._square_tol(),
            max_iter=getattr(model, "max_iter", None),
        )
        info = self._solution_info(sol)
        model._set_solution(sol.coef, sol.intercept, self.name, problem.Z.shape[1], info)
        problem.set_loo(None, None, CG_REASON)
        return self._fitted(model, problem.Z)

    def _fit_kernel(self, model, problem: Problem, setting: Setting) -> np.ndarray:
        """Exact kernel, iterative: K-preconditioned CG on the full expansion (no factor)."""
        from ..solvers.kernel_cg import solve_kernel_least_squares

        sol = solve_kernel_least_squares(
            KernelOperator(problem.X, model.feature_map_.kernel_),
            problem.Y,
            problem.loss_weights,
            problem.combined(setting),
            ridge=setting.ridge,
            fit_intercept=problem.fit_intercept,
            tol=model._square_tol(),
            max_iter=getattr(model, "max_iter", None),
        )
        info = {
            "factorization": sol.method,
            "convex": sol.convex,
            "singular": False,
            "n_iter": sol.n_iter,
            "converged": sol.converged,
        }
        n_components = model.feature_map_.n_components_
        model._set_solution(sol.dual_coef, sol.intercept, self.name, n_components, info)
        problem.set_loo(None, None, CG_REASON)
        F = sol.fitted
        return F.ravel() if F.shape[1] == 1 else F


def side_by_side(blocks: Sequence[np.ndarray]) -> tuple[np.ndarray, list[slice]]:
    """The blocks stacked as columns (for one BLAS-3 product over a grid) and each block's
    columns."""
    stacked = np.hstack(blocks)
    ends = np.cumsum([0, *(b.shape[1] for b in blocks)])
    return stacked, [slice(a, b) for a, b in zip(ends[:-1], ends[1:], strict=True)]


class BorderedSquareLoss(Loss):
    """The square loss with a bias, solved through the model's bordered dual system.

    ``[[0, 1^T], [1, Omega + diag(r)]] [b; Gamma] = [0; Y]`` with ``Omega`` and ``r`` from
    the model's ``_bordered_system(X, Z, weights, M)`` (:class:`BorderedDual`; a loss
    ``1/2 sum_i c_i e_i^2`` gives ``r_i`` proportional to ``1 / c_i``, the weighted LS-SVM),
    solved by :func:`~structreg.solvers.solve_bordered` (Cholesky and the Schur complement
    of the border, or eigh of the whole system when ``Omega + diag(r)`` is not positive
    definite).  Direct solvers only; labeled samples only; ``multi_class="ovo"`` fits one
    binary model per pair of classes (:class:`~sklearn.multiclass.OneVsOneClassifier`; with
    class weights each sample keeps its class's weight in every pair), ``"ovr"`` all
    one-of-c outputs from one factorisation.
    """

    name = "bordered_square"
    solvers = ("auto", "dense", "nystroem")
    bias = "always"

    def _solver_message(self, model) -> str:
        return (
            f"{type(model).__name__}: the bordered system is solved directly; solver must be "
            f"one of {self.solvers}"
        )

    def _fit_settings(self, problem, models, settings, warn):
        if not problem.labeled.all():
            raise ValueError(
                f"{type(models[0]).__name__} (bordered square loss) fits labeled samples only; "
                f"got {int((~problem.labeled).sum())} unlabeled"
            )
        fitted: list[np.ndarray | None] = [None] * len(models)
        shared: dict[tuple, list[int]] = {}  # penalty weights -> the models of one Omega
        for i, (model, setting) in enumerate(zip(models, settings, strict=True)):
            if len(model.classes_) > 2 and model._multi_class() == "ovo":
                self._fit_one_vs_one(model, problem)
            else:
                shared.setdefault(setting.weights, []).append(i)
        for idx in shared.values():
            first = models[idx[0]]
            M = problem.combined(settings[idx[0]])
            dual = first._bordered_system(problem.X, problem.Z, problem.loss_weights, M)
            regs = [models[i]._bordered_reg(problem.loss_weights) for i in idx]
            sols = self._solve(dual.Omega, problem, regs)
            for i, reg, sol in zip(idx, regs, sols, strict=True):
                fitted[i] = self._assemble(models[i], problem, dual, reg, sol)
        return fitted

    @staticmethod
    def _solve(Omega: np.ndarray, problem: Problem, regs: list) -> list:
        """The bordered solutions for each ``reg`` on one ``Omega``: one eigendecomposition for
        several constant ``reg`` (:class:`~structreg.solvers.BorderedPath`), else
        :func:`~structreg.solvers.solve_bordered` each (with the leverages a single fit's
        leave-one-out outputs ask for)."""
        constant = [np.ndim(r) == 0 or np.ptp(r) == 0 for r in regs]
        if len(regs) > 1 and all(constant):
            path = BorderedPath(Omega, problem.Y)
            return [path.solve(float(np.max(r))) for r in regs]
        return [
            solve_bordered(Omega, problem.Y, reg=r, leverage_rows=problem.loo_rows) for r in regs
        ]

    def _assemble(self, model, problem: Problem, dual: BorderedDual, reg, sol) -> np.ndarray | None:
        """Give ``model`` the solution ``sol`` of its bordered system; return its outputs at the
        training samples (a single fit also gets its leave-one-out outputs)."""
        # the outputs at the samples: Omega Gamma + b = Y - diag(reg) Gamma
        reg_column = np.reshape(reg, (-1, 1)) if np.ndim(reg) else reg
        problem.set_loo(
            problem.Y - reg_column * sol.dual_coef,
            sol.leverages,
            "its bordered system is singular (a pseudo-inverse solution)",
        )
        coef = sol.dual_coef if dual.coef is None else dual.coef(sol.dual_coef)
        info = {
            "factorization": dual.label + sol.factorization,
            "singular": bool(sol.singular),
            **dual.info,
        }
        Z = problem.Z
        n_components = model.feature_map_.n_components_ if Z is None else Z.shape[1]
        model._set_solution(coef, sol.intercept, self.name, n_components, info)
        return self._fitted(model, Z)

    def _fit_one_vs_one(self, model, problem: Problem) -> None:
        """``multi_class="ovo"``: one binary model per pair of classes."""
        binary = clone(model).set_params(multi_class="ovr")
        if getattr(model, "class_weight", None) is None:
            ovo = OneVsOneClassifier(binary)
        else:
            ovo = _WeightedOneVsOne(binary, model.class_weight_)
        model.ovo_ = ovo.fit(problem.X, problem.y_codes)
        model.solver_info_ = {"loss": self.name, "multi_class": "ovo"}
        problem.set_loo(
            None,
            None,
            "multi_class='ovo' votes over pairwise models (multi_class='ovr' has them)",
        )

    def decision(self, model, X) -> np.ndarray:
        if hasattr(model, "ovo_"):
            return model.ovo_.decision_function(X)
        return super().decision(model, X)


class _WeightedOneVsOne(OneVsOneClassifier):
    """:class:`~sklearn.multiclass.OneVsOneClassifier` whose model of the pair of class codes
    ``(i, j)`` weighs them ``class_weight[i]`` and ``class_weight[j]``: a sample keeps its
    class's weight in every pair, as in libsvm's one-vs-one (the stock meta-estimator fits
    one clone, relabelled 0/1, per pair)."""

    def __init__(self, estimator, class_weight: np.ndarray) -> None:
        self.estimator = estimator
        self.class_weight = class_weight

    def fit(self, X, y: np.ndarray) -> _WeightedOneVsOne:
        """Fit the pairwise models on validated ``X`` and class codes ``y``."""
        self.classes_ = np.unique(y)
        self.n_features_in_ = X.shape[1]
        self.estimators_, rows = [], []
        for i, j in combinations(range(len(self.classes_)), 2):
            pair = np.flatnonzero((y == i) | (y == j))
            est = clone(self.estimator)
            est.set_params(class_weight={0: self.class_weight[i], 1: self.class_weight[j]})
            X_pair = safe_split(est, X, None, pair)[0]  # K[pair][:, pair] for a Gram matrix
            self.estimators_.append(est.fit(X_pair, (y[pair] == j).astype(int)))
            rows.append(pair)
        self.pairwise_indices_ = rows if self.__sklearn_tags__().input_tags.pairwise else None
        return self


@dataclass
class _Deformation:
    """The deformed kernel of one ``M / gamma_A``, shared by the hinge models that have it.

    ``gram``: its Gram matrix on the labeled points (what libsvm trains on); ``kernel``: the
    Woodbury form on the Gram matrix (:class:`~structreg.solvers.DeformedKernel`), or
    ``features``: the deformed explicit features
    (:class:`~structreg.solvers.DeformedFeatures`, whose ``basis_`` are the labeled points'
    deformed features); ``training``: the deformed kernel between every training point and
    the labeled ones where the outputs at the training points are a by-product (explicit
    features of a semi-supervised model).
    """

    gram: np.ndarray
    info: dict
    kernel: DeformedKernel | None = None
    features: DeformedFeatures | None = None
    training: np.ndarray | None = None


class HingeLoss(Loss):
    """``sum_i c_i max(0, 1 - y_i f(x_i))``: libsvm on the deformed kernel, with a bias.

    ``k~(x, z) = k(x, z) - k_x^T (gamma_A I + M K)^{-1} M k_z``, so M must be PSD.  From
    explicit features Z: ``x -> L^{-1} phi(x)`` with ``L L^T = I + Z^T M Z / gamma_A``
    (:class:`~structreg.solvers.DeformedFeatures`).  From the Gram matrix of a
    :class:`TrainingGram` feature map (no factor of K) and a model whose penalty comes as a
    root, ``M / gamma_A = w R R^T`` (a penalty with a ``root`` method, weighted by the
    setting): Woodbury with an SPD middle factor
    (:class:`~structreg.solvers.DeformedKernel`).  libsvm's ``C = 1 / (2 gamma_A l)``, times
    the sample's class weight ``class_weight_[y_i]`` (libsvm's per-sample C).
    ``solver="primal"`` / ``"nystroem"`` minimise the squared hinge instead
    (:class:`SquaredHingeLoss`).
    """

    name = "hinge"
    solvers = ("auto", "dense", "primal", "nystroem")
    psd_only = True
    bias = "always"
    linear = False

    def for_solver(self, solver: str) -> Loss:
        return SquaredHingeLoss() if solver in SquaredHingeLoss.solvers else self

    def check(self, model, setting: Setting, psd: bool) -> None:
        if not setting.ridge > 0:  # the model's gamma_A (its _ridge())
            raise ValueError("the hinge loss needs gamma_A > 0")
        super().check(model, setting, psd)

    def _fit_settings(self, problem, models, settings, warn):
        """Models whose penalty weights scale with ``gamma_A`` (the same ``w_k / gamma_A``)
        share one deformed kernel; libsvm alone runs per model, with its own ``C``.
        ``gamma_A`` is each setting's ridge (the model's ``_ridge()``, read into the
        :class:`~structreg.models.problem.Setting`)."""
        fitted: list[np.ndarray | None] = [None] * len(models)
        groups: list[tuple[tuple[float, ...], list[int]]] = []
        for i, setting in enumerate(settings):
            key = tuple(w / setting.ridge for w in setting.weights)
            for shared_key, idx in groups:
                if np.allclose(key, shared_key, rtol=1e-12, atol=0.0):
                    idx.append(i)
                    break
            else:
                groups.append((key, [i]))
        for _, idx in groups:
            shared = self._deform(models[idx[0]], problem, settings[idx[0]])
            for i in idx:
                model = models[i]
                model.deformed_kernel_ = shared.kernel
                if shared.features is not None:  # what predict maps new points with
                    model.deformation_ = shared.features
                self.fit_svm(model, problem, settings[i], shared.gram, shared.info)
                if shared.training is not None:
                    fitted[i] = model.svm_.decision_function(shared.training)
        return fitted

    @staticmethod
    def _deform(model, problem: Problem, setting: Setting) -> _Deformation:
        """The deformation of one ``M / gamma_A`` (see :class:`_Deformation`)."""
        labeled = problem.labeled
        if problem.Z is None:
            K = model.feature_map_.labeled_gram(labeled)
            root = HingeLoss._penalty_root(model, problem, setting)  # None: no penalty
            kernel = DeformedKernel(K, *(root or (None,)))
            info = {"n_components": K.shape[0], "deformation": "woodbury"}
            return _Deformation(kernel.gram_, info, kernel=kernel)
        Z = problem.Z
        features = DeformedFeatures(Z, problem.combined(setting), setting.ridge, basis=labeled)
        Z_labeled = features.basis_
        training = None
        if model._semi_supervised:
            training = features.transform(Z) @ Z_labeled.T
        info = {"n_components": Z.shape[1], "deformation": "features"}
        return _Deformation(
            Z_labeled @ Z_labeled.T,
            info,
            features=features,
            training=training,
        )

    @staticmethod
    def _penalty_root(model, problem: Problem, setting: Setting):
        """``(R, w)`` with ``M / gamma_A = w R R^T`` on the labeled points, what the Woodbury
        deformation of a Gram matrix needs: the one penalised term of the problem, given as a
        root (its ``root`` method, e.g. :class:`~structreg.structure.ClusterScatterPenalty`),
        with ``w`` its weight over the setting's ridge.  None when no weight is nonzero."""
        penalised = [
            (w, problem.terms[k])
            for w, k in zip(setting.weights, problem.built, strict=True)
            if w != 0
        ]
        if not penalised:
            return None
        if len(penalised) > 1 or not hasattr(penalised[0][1], "root"):
            raise ValueError(
                f"{type(model).__name__}: the hinge loss on an unfactored kernel needs a "
                "penalty given as a root (M / gamma_A = w R R^T): one penalised term with a "
                "root method, such as ClusterScatterPenalty"
            )
        weight, term = penalised[0]
        return term.root(problem.n_samples, rows=problem.labeled), weight / setting.ridge

    def fit_svm(
        self, model, problem: Problem, setting: Setting, gram: np.ndarray, info: dict
    ) -> None:
        """libsvm with ``C = 1 / (2 gamma_A l)`` (times each sample's class weight) on the
        deformed Gram matrix of the labeled points of ``problem``; ``gamma_A`` is the
        setting's ridge.  Grid points that share a deformed kernel (the same
        ``M / gamma_A``) run only this, each with its own ``C``."""
        y_codes, labeled = problem.y_codes, problem.labeled
        n_classes = len(model.classes_)
        C = 1.0 / (2.0 * setting.ridge * labeled.sum())
        codes = y_codes[labeled]
        weighted = getattr(model, "class_weight", None) is not None
        weights = model.class_weight_[codes] if weighted else None
        model.svm_ = PrecomputedSVM(C=C, multi_class=model._multi_class(), tol=model.tol).fit(
            gram, codes, n_classes, sample_weight=weights
        )
        model.solver_info_ = {"loss": self.name, "C": C, **info}
        model.support_ = np.flatnonzero(labeled)[model.svm_.support_]
        model.n_support_ = np.bincount(y_codes[model.support_], minlength=n_classes)

    def deformed_gram(self, model, X=None) -> np.ndarray:
        """The deformed Gram matrix against the labeled training points: (l, l) for
        ``X=None``, else (n_X, l) for validated ``X``."""
        if model.deformed_kernel_ is not None:
            if X is None:
                return model.deformed_kernel_.gram_
            return np.vstack(list(self._deformed_blocks(model, X)))
        basis = model.deformation_.basis_  # the labeled points' deformed features
        if X is None:
            return basis @ basis.T
        return model.deformation_.transform(model.feature_map_.transform(X)) @ basis.T

    @staticmethod
    def _deformed_blocks(model, X) -> Iterator[np.ndarray]:
        for Kx in model.feature_map_.cross_blocks(X):
            yield model.deformed_kernel_.cross(Kx)

    def decision(self, model, X) -> np.ndarray:
        if model.deformed_kernel_ is None:
            return model.svm_.decision_function(self.deformed_gram(model, X))
        parts = [model.svm_.decision_function(G) for G in self._deformed_blocks(model, X)]
        return parts[0] if len(parts) == 1 else np.concatenate(parts)


class SquaredHingeLoss(HingeLoss):
    """``sum_i c_i max(0, 1 - y_i f(x_i))^2`` in the primal by Newton's method
    (:func:`~structreg.solvers.solve_squared_hinge`): linear on the features, with an
    unpenalised bias when ``fit_intercept`` says so, PSD penalties only, one-vs-rest."""

    name = "squared_hinge"
    solvers = ("primal", "nystroem")
    multi_class = ("ovr",)
    bias = "optional"
    linear = True

    def for_solver(self, solver: str) -> Loss:
        return self

    def _multi_class_message(self, model, decomposition: str) -> str:
        return (
            f"solver={model.solver_!r} decomposes one-vs-rest; use multi_class='ovr' or "
            "solver='dense'"
        )

    def _fit_settings(self, problem, models, settings, warn):
        return [self._fit_one(m, problem, s) for m, s in zip(models, settings, strict=True)]

    def _fit_one(self, model, problem: Problem, setting: Setting) -> np.ndarray:
        from ..solvers.primal_hinge import solve_squared_hinge

        sol = solve_squared_hinge(
            problem.Z,
            problem.Y,
            problem.loss_weights,
            problem.combined(setting),
            ridge=setting.ridge,
            fit_intercept=problem.fit_intercept,
            max_iter=model.max_iter or 100,
        )
        info = {"n_iter": sol.n_iter, "converged": sol.converged}
        model._set_solution(sol.coef, sol.intercept, self.name, problem.Z.shape[1], info)
        return self._fitted(model, problem.Z)

    decision = Loss.decision


LOSSES = {"square": SquareLoss, "bordered_square": BorderedSquareLoss, "hinge": HingeLoss}
"""The loss names presets give with ``_loss()``."""


def loss_for(model, solver: str) -> Loss:
    """The loss object of ``model`` (named by its ``_loss()``) for ``solver``; raises a
    ``ValueError`` naming the problem for an unknown loss or a solver it does not accept."""
    name = model._loss()
    if name not in LOSSES:
        raise ValueError(f"unknown loss {name!r}; expected one of {sorted(LOSSES)}")
    loss = LOSSES[name]()
    loss.check_solver(model, solver)
    return loss.for_solver(solver)
