"""Losses on the labeled outputs, as small objects that :class:`StructuralClassifier` composes.

Each loss declares what it accepts -- the ``solver`` values, indefinite penalties or PSD ones
only, the ``multi_class`` decompositions, whether the model has a bias -- and does two jobs:
``fit`` (given the feature map's output or the kernel, the targets, the loss weights and the
combined penalty ``M``) and ``decision`` (the outputs at new points).  A preset names its loss
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

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
from sklearn import config_context
from sklearn.base import clone
from sklearn.multiclass import OneVsOneClassifier
from sklearn.utils.metaestimators import _safe_split

from ..kernels import KernelExpansion, KernelOperator, kernel_blocks
from ..solvers import (
    DeformedFeatures,
    DeformedKernel,
    PrecomputedSVM,
    solve_bordered,
    solve_penalized_least_squares,
)
from ..solvers.square import leave_one_out_outputs
from ._proba import CG_REASON


@dataclass
class FitData:
    """What a loss fits on: inputs ``X``, features ``Z`` (None: the kernel is not factored),
    class codes, labeled mask, loss weights ``c_i``, combined penalty ``M`` and the +-1
    one-of-c targets ``Y`` (zero rows where unlabeled).

    ``loo_rows`` asks the loss for the exact leave-one-out outputs of these labeled samples:
    its ``fit`` sets ``loo`` (shape (len(loo_rows), n_outputs), NaN rows where undefined) or
    says in ``loo_missing`` why its solver has none."""

    X: np.ndarray
    Z: np.ndarray | None
    y_codes: np.ndarray
    labeled: np.ndarray
    weights: np.ndarray
    M: object
    Y: np.ndarray
    loo_rows: np.ndarray | None = None
    loo: np.ndarray | None = None
    loo_missing: str = ""

    def set_loo(self, fitted: np.ndarray | None, leverages: np.ndarray | None, why: str) -> None:
        """``loo`` from the outputs at the training samples and the leverages of ``loo_rows``
        (:func:`~structreg.solvers.square.leave_one_out_outputs`), or ``loo_missing = why``
        when the solver gave no leverages."""
        if self.loo_rows is None:
            return
        if leverages is None or fitted is None:
            self.loo_missing = why
            return
        rows = self.loo_rows
        F = np.asarray(fitted, dtype=float).reshape(len(self.labeled), -1)[rows]
        self.loo = leave_one_out_outputs(F, self.Y[rows], leverages)


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

    def check(self, model, M, psd: bool) -> None:
        """Refuse a fit whose penalty or decomposition this loss cannot handle."""
        if self.psd_only and M is not None and not psd:
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

    def fit(self, model, data: FitData) -> np.ndarray | None:
        """Fit ``model`` (sets its solution attributes and ``solver_info_``); return the
        outputs at the training points, or None when they are not a by-product."""
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

    Solvers ``"dense"`` / ``"nystroem"`` (direct on the features), ``"cg"`` (CG on the
    features, or K-preconditioned CG on the kernel expansion when ``Z`` is None).  Indefinite
    penalties are allowed (the solvers handle them; ``solver_info_["convex"]`` tells).
    ``multi_class`` is not used: the outputs are the one-of-c columns.
    """

    name = "square"
    solvers = ("auto", "dense", "nystroem", "cg")

    def check(self, model, M, psd: bool) -> None:
        pass  # any penalty; one-of-c outputs whatever multi_class says

    def fit(self, model, data: FitData) -> np.ndarray | None:
        if data.Z is None:
            fitted, info = self._solve_kernel(model, data)
            n_components = model.feature_map_.n_components_
            leverages = None
        else:
            coef, intercept, info, leverages = self._solve_features(model, data)
            model.coef_, model.intercept_ = coef, intercept
            fitted = self._fitted(model, data.Z)
            n_components = data.Z.shape[1]
        model._set_solution(model.coef_, model.intercept_, self.name, n_components, info)
        why = (
            CG_REASON
            if model.solver_ == "cg"
            else "its normal equations are singular (a pseudo-inverse solution)"
        )
        data.set_loo(fitted, leverages, why)
        return fitted

    @staticmethod
    def _solve_features(model, data: FitData):
        """Direct or CG solve of the normal equations on the design Z; the leverages of the
        factored system's ``data.loo_rows`` too (None from CG)."""
        iterative = model.solver_ == "cg"
        sol = solve_penalized_least_squares(
            data.Z,
            data.Y,
            data.weights,
            data.M,
            ridge=model._ridge(),
            fit_intercept=model._fit_intercept(),
            method="cg" if iterative else "direct",
            tol=model._square_tol() if iterative else 1e-8,
            max_iter=getattr(model, "max_iter", None) if iterative else None,
            leverage_rows=None if iterative else data.loo_rows,
        )
        info = {
            "factorization": sol.factorization,
            "convex": sol.convex,
            "singular": sol.singular,
            "n_iter": sol.n_iter or 1,
        }
        return sol.coef, sol.intercept, info, sol.leverages

    @staticmethod
    def _solve_kernel(model, data: FitData):
        """Exact kernel, iterative: K-preconditioned CG on the full expansion (no factor)."""
        from ..solvers.kernel_cg import solve_kernel_least_squares

        sol = solve_kernel_least_squares(
            KernelOperator(data.X, model.feature_map_.kernel_),
            data.Y,
            data.weights,
            data.M,
            ridge=model._ridge(),
            fit_intercept=model._fit_intercept(),
            tol=model._square_tol(),
            max_iter=getattr(model, "max_iter", None),
        )
        model.coef_, model.intercept_ = sol.dual_coef, sol.intercept
        info = {
            "factorization": sol.method,
            "convex": sol.convex,
            "singular": False,
            "n_iter": sol.n_iter,
            "converged": sol.converged,
        }
        F = sol.fitted
        return (F.ravel() if F.shape[1] == 1 else F), info


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

    def fit(self, model, data: FitData) -> np.ndarray | None:
        if not data.labeled.all():
            raise ValueError(
                f"{type(model).__name__} (bordered square loss) fits labeled samples only; "
                f"got {int((~data.labeled).sum())} unlabeled"
            )
        if len(model.classes_) > 2 and model._multi_class() == "ovo":
            binary = clone(model).set_params(multi_class="ovr")
            if getattr(model, "class_weight", None) is None:
                ovo = OneVsOneClassifier(binary)
            else:
                ovo = _WeightedOneVsOne(binary, model.class_weight_)
            model.ovo_ = ovo.fit(data.X, data.y_codes)
            model.solver_info_ = {"loss": self.name, "multi_class": "ovo"}
            data.set_loo(
                None,
                None,
                "multi_class='ovo' votes over pairwise models (multi_class='ovr' has them)",
            )
            return None
        dual = model._bordered_system(data.X, data.Z, data.weights, data.M)
        sol = solve_bordered(dual.Omega, data.Y, reg=dual.reg, leverage_rows=data.loo_rows)
        # the outputs at the samples: Omega Gamma + b = Y - diag(reg) Gamma
        reg = np.reshape(dual.reg, (-1, 1)) if np.ndim(dual.reg) else dual.reg
        data.set_loo(
            data.Y - reg * sol.dual_coef,
            sol.leverages,
            "its bordered system is singular (a pseudo-inverse solution)",
        )
        coef = sol.dual_coef if dual.coef is None else dual.coef(sol.dual_coef)
        info = {
            "factorization": dual.label + sol.factorization,
            "singular": bool(sol.singular),
            **dual.info,
        }
        n_components = model.feature_map_.n_components_ if data.Z is None else data.Z.shape[1]
        model._set_solution(coef, sol.intercept, self.name, n_components, info)
        return self._fitted(model, data.Z)

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
            X_pair = _safe_split(est, X, None, pair)[0]  # K[pair][:, pair] for a Gram matrix
            self.estimators_.append(est.fit(X_pair, (y[pair] == j).astype(int)))
            rows.append(pair)
        self.pairwise_indices_ = rows if self.__sklearn_tags__().input_tags.pairwise else None
        return self


class HingeLoss(Loss):
    """``sum_i c_i max(0, 1 - y_i f(x_i))``: libsvm on the deformed kernel, with a bias.

    ``k~(x, z) = k(x, z) - k_x^T (gamma_A I + M K)^{-1} M k_z``, so M must be PSD.  From
    explicit features Z: ``x -> L^{-1} phi(x)`` with ``L L^T = I + Z^T M Z / gamma_A``
    (:class:`~structreg.solvers.DeformedFeatures`).  From the Gram matrix of a
    :class:`TrainingGram` feature map (no factor of K) and a model whose penalty comes as a
    root, ``M / gamma_A = w R R^T`` (``_penalty_root``): Woodbury with an SPD middle factor
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

    def check(self, model, M, psd: bool) -> None:
        if not model.gamma_A > 0:
            raise ValueError("the hinge loss needs gamma_A > 0")
        super().check(model, M, psd)

    def fit(self, model, data: FitData) -> np.ndarray | None:
        labeled = data.labeled
        if data.Z is None:
            K = model.feature_map_.labeled_gram(labeled)
            root = None if data.M is None else model._penalty_root(labeled)
            model.deformed_kernel_ = DeformedKernel(K, *(root or (None,)))
            gram = model.deformed_kernel_.gram_
            info = {"n_components": K.shape[0], "deformation": "woodbury"}
        else:
            model.deformed_kernel_ = None
            model.deformation_ = DeformedFeatures(data.Z, data.M, model.gamma_A)
            model._Z_labeled = model.deformation_.transform(data.Z[labeled])
            gram = model._Z_labeled @ model._Z_labeled.T
            info = {"n_components": data.Z.shape[1], "deformation": "features"}
        model._hinge_labels = (data.y_codes, labeled)
        self.fit_svm(model, gram, info)
        if data.Z is None or not model._semi_supervised:
            return None
        return model.svm_.decision_function(
            model.deformation_.transform(data.Z) @ model._Z_labeled.T
        )

    def fit_svm(self, model, gram: np.ndarray, info: dict) -> None:
        """libsvm with ``C = 1 / (2 gamma_A l)`` (times each sample's class weight) on the
        deformed Gram matrix of the labeled points; also used by
        :func:`~structreg.models.fit_path` to refit only the SVM of grid points that share a
        deformed kernel (the same ``M / gamma_A``)."""
        y_codes, labeled = model._hinge_labels
        n_classes = len(model.classes_)
        C = 1.0 / (2.0 * model.gamma_A * labeled.sum())
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
        if X is None:
            return model._Z_labeled @ model._Z_labeled.T
        return model.deformation_.transform(model.feature_map_.transform(X)) @ model._Z_labeled.T

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
    (:func:`~structreg.solvers.solve_squared_hinge`): linear on the features, with a bias,
    PSD penalties only, one-vs-rest."""

    name = "squared_hinge"
    solvers = ("primal", "nystroem")
    multi_class = ("ovr",)
    linear = True

    def for_solver(self, solver: str) -> Loss:
        return self

    def _multi_class_message(self, model, decomposition: str) -> str:
        return (
            f"solver={model.solver_!r} decomposes one-vs-rest; use multi_class='ovr' or "
            "solver='dense'"
        )

    def fit(self, model, data: FitData) -> np.ndarray | None:
        from ..solvers.primal_hinge import solve_squared_hinge

        sol = solve_squared_hinge(
            data.Z,
            data.Y,
            data.weights,
            data.M,
            ridge=model.gamma_A,
            fit_intercept=True,
            max_iter=model.max_iter or 100,
        )
        info = {"n_iter": sol.n_iter, "converged": sol.converged}
        model._set_solution(sol.coef, sol.intercept, self.name, data.Z.shape[1], info)
        return self._fitted(model, data.Z)

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
