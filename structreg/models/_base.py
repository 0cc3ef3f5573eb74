"""The structural classifier: loss x structure penalties x solver, with a scikit-learn API.

Every named model in structreg is a preset of :class:`StructuralClassifier` (the regressors
of :mod:`structreg.models.regression`: of :class:`StructuralEstimator`, the machinery both
share up to the targets); a preset only says which penalties to build (``_penalty_terms``),
which loss to use (``_loss``: the base composes the loss object of
``structreg.models._losses``) and its feature map / structure hooks.
The objective is

    (1/l) sum_{i labeled} loss(y_i, f(x_i)) + gamma_A ||f||_K^2 + sum_k w_k f^T M_k f,

over ``f(x) = sum_i alpha_i k(x_i, x) (+ b)``, with the penalties' matrices ``M_k`` built on
all training points (labeled and unlabeled).
"""

from __future__ import annotations

import copy
import sys
from numbers import Integral, Real

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.preprocessing import LabelBinarizer
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from .._compat import label_array, safe_indexing
from .._numerics import (
    check_not_degenerate,
    check_representable,
)
from .._params import check_finite_reals, constraints_for
from .._resources import SMALL_PROBLEM, blas_threads_for  # noqa: F401 (SMALL_PROBLEM: re-export)
from ..kernels import (
    EmpiricalKernelMap,
    KernelExpansion,
    KernelFeatureMap,
    LandmarkFeatureMap,
    check_precomputed_gram,
    internal_map,
    kernel_points,
    select_centers,
    validated_samples,
)
from ..solvers.design import RowDesign
from ..structure import build_penalties
from ..structure.graphs import reusing_knn_graphs
from ..structure.penalties import checked_terms
from . import _pickled_factor, _proba
from ._degenerate import warn_if_degenerate
from ._losses import loss_for
from ._memory_guard import check_fit_memory
from ._misuse import warn_if_fold_tests_unlabeled, warn_if_scoring_unlabeled
from ._nystroem_rows import (  # noqa: F401 (NYSTROEM_WARN_UNEXPLAINED: re-export)
    NYSTROEM_WARN_UNEXPLAINED,
    features_by_rows,
    row_design,
    warn_nystroem,
)
from ._output_checks import check_finite_solution, checked_outputs
from ._solver_choice import AUTO_DENSE_MAX, resolve_solver  # noqa: F401 (re-export)
from .problem import Problem, setting_of, string_weights

_SOLUTION_ATTRIBUTES = (
    "coef_",
    "dual_coef_",
    "intercept_",
    "svm_",
    "deformation_",
    "deformed_kernel_",
    "support_",
    "n_support_",
    "ovo_",
    "calibrator_",
    "_proba_missing",
)
"""What one loss's fit sets and another's does not: removed before a refit."""

UNLABELED = -1
"""Marker of an unlabeled sample in numeric label arrays (scikit-learn's convention).

For string / object labels the marker is ``None``.  Missing values -- NaN, ``None`` and
pandas' ``pd.NA``, which is how a pandas label Series holds the samples it has no label for
-- mark unlabeled samples of every dtype too (see ``missing_labels``).  When -1 is a real
class, pass the ``unlabeled`` boolean mask to ``fit`` instead."""


def memo_key(obj) -> tuple | None:
    """``(class, params)`` of an unfitted estimator-like object whose parameters are all plain
    values (numbers, strings, None, bools), else None: two such objects with the same key
    compute the same thing from the same data."""
    get_params = getattr(obj, "get_params", None)
    if get_params is None:
        return (type(obj).__name__,) if not vars(obj) else None
    params = get_params(deep=False)
    if not all(v is None or isinstance(v, (bool, int, float, str)) for v in params.values()):
        return None
    return (type(obj).__name__, tuple(sorted(params.items())))


def _is_missing(value) -> bool:
    """NaN, None or pandas' NA (recognised by its type's name: pandas is not a dependency)."""
    if value is None:
        return True
    if isinstance(value, (float, np.floating)):
        return bool(value != value)
    return type(value).__name__ == "NAType"


def missing_labels(y: ArrayLike) -> np.ndarray:
    """Boolean mask of the missing entries of ``y``: NaN in float arrays; None, NaN or
    ``pd.NA`` in object arrays.

    pandas label Series arrive so: ``None`` in a numeric Series is NaN, a nullable ``Int64``
    Series with ``pd.NA`` converts to float with NaN, and ``str`` / ``string`` / ``boolean``
    Series give object arrays holding NaN, None or ``pd.NA``.
    """
    y = np.asarray(y)
    if y.dtype.kind == "f":
        return np.isnan(y)
    if y.dtype.kind == "O":
        flat = np.fromiter((_is_missing(v) for v in y.ravel()), dtype=bool, count=y.size)
        return flat.reshape(y.shape)
    return np.zeros(y.shape, dtype=bool)


def is_unlabeled(y: ArrayLike) -> np.ndarray:
    """Boolean mask of the entries of ``y`` that mark unlabeled samples: -1, or a missing
    value (NaN, None, ``pd.NA``; see ``missing_labels``)."""
    y = np.asarray(y)
    if y.dtype.kind in "iuf":
        return (y == UNLABELED) | missing_labels(y)
    if y.dtype.kind == "O":
        minus_one = [isinstance(v, Real) and not isinstance(v, bool) and v == UNLABELED for v in y]
        return np.array(minus_one, dtype=bool) | missing_labels(y)
    return np.zeros(y.shape, dtype=bool)


def missing_as_unlabeled(y: ArrayLike, unlabeled: ArrayLike | None = None) -> ArrayLike:
    """``y`` with its missing entries (``missing_labels``) replaced by the unlabeled
    markers: ``None`` in object arrays, -1 in numeric ones.

    What a semi-supervised ``fit`` does first, so a pandas label Series with missing values
    fits as the same labels with the -1 / None convention; a nullable integer Series
    (``Int64`` with ``pd.NA``) becomes an int64 array, so ``classes_`` stay integers.  ``y``
    without missing entries is returned as given.  With an ``unlabeled`` mask, which then
    alone says what is unlabeled, a missing label of a sample it marks as labeled is an error.
    """
    if y is None:  # validation refuses it with scikit-learn's message
        return y
    values = label_array(y)
    missing = missing_labels(values)
    if not missing.any():
        return y
    if unlabeled is not None:
        mask = np.asarray(unlabeled)
        if mask.dtype == bool and mask.shape == (missing.size,):
            stray = missing.ravel() & ~mask
            if stray.any():
                raise ValueError(
                    f"y has {int(stray.sum())} missing label(s) (NaN, None or pd.NA) at "
                    "samples the unlabeled mask marks as labeled"
                )
    if values.dtype.kind == "f":
        filled = np.where(missing, float(UNLABELED), values)
        dtype = getattr(y, "dtype", None)  # a pandas nullable integer dtype: back to integers
        if dtype is not None and not isinstance(dtype, np.dtype) and dtype.kind in ("i", "u"):
            return filled.astype(np.int64)
        return filled
    filled = values.copy()
    filled[missing] = None
    return filled


def check_no_missing_labels(estimator: BaseEstimator, y: ArrayLike) -> None:
    """Refuse missing labels (NaN, None, ``pd.NA``) in the targets of a supervised fit, with
    a message that says what they mean elsewhere."""
    n_missing = 0 if y is None else int(missing_labels(y).sum())
    if n_missing:
        raise ValueError(
            f"labels None/NaN mark unlabeled points; {type(estimator).__name__} is supervised "
            f"and needs a label for every sample, but y has {n_missing} missing label(s) "
            "(NaN, None or pd.NA): drop those samples, or use a semi-supervised estimator"
        )


def check_training_X(estimator: BaseEstimator, X) -> None:
    """The checks of training data beyond scikit-learn's: values whose squares float64 can
    represent, and not every sample the same point (see :mod:`structreg._numerics`).  A
    precomputed Gram matrix is not checked so (its entries are kernel values)."""
    if getattr(estimator, "kernel", None) == "precomputed":
        return
    owner = type(estimator).__name__
    check_representable(X, owner)
    check_not_degenerate(X, owner)


def validated_training_data(estimator: BaseEstimator, X, y, **kwargs):
    """``validate_data(estimator, X, y, dtype=float, **kwargs)`` for the ``fit`` of a
    supervised estimator that is not a :class:`StructuralEstimator`: missing labels refused
    first (:func:`check_no_missing_labels`), then the checks of :func:`check_training_X`."""
    check_no_missing_labels(estimator, y)
    X, y = validate_data(estimator, X, y, dtype=float, **kwargs)
    check_training_X(estimator, X)
    return X, y


def check_supervised_classes(estimator, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Validate the targets of a supervised fit: ``(classes, codes)``, at least two classes."""
    check_classification_targets(y)
    classes, codes = np.unique(y, return_inverse=True)
    if len(classes) < 2:
        raise ValueError(
            f"{type(estimator).__name__} needs samples of at least 2 classes; got 1 class "
            f"({classes[0]!r})"
        )
    return classes, codes.ravel()


def pm_one_targets(y_codes: np.ndarray, labeled: np.ndarray, n_classes: int) -> np.ndarray:
    """One-of-c targets coded +-1 (a single +-1 column for two classes); 0 where unlabeled."""
    Y = np.zeros((len(y_codes), 1 if n_classes == 2 else n_classes))
    codes = np.asarray(y_codes)[labeled]
    if n_classes == 2:
        Y[labeled, 0] = np.where(codes == 1, 1.0, -1.0)
    elif n_classes > 2:
        block = np.full((len(codes), n_classes), -1.0)
        block[np.arange(len(codes)), codes] = 1.0
        Y[labeled] = block
    else:  # one class: LabelBinarizer's convention
        binarizer = LabelBinarizer(neg_label=-1, pos_label=1).fit(np.arange(n_classes))
        Y[labeled] = binarizer.transform(codes)
    return Y


def class_weights(
    class_weight, classes: np.ndarray, y_codes: np.ndarray, labeled: np.ndarray
) -> np.ndarray:
    """Per-class weights ``w_c`` of ``class_weight`` (scikit-learn's meaning), by class code.

    ``None``: all 1.  ``"balanced"``: ``l / (n_classes * l_c)`` with ``l_c`` the labeled
    samples of class c (unlabeled samples never count).  A dict ``{label: weight}``: classes
    it does not name weigh 1; a label that is not a class of the labeled samples is refused.
    Computed by :func:`sklearn.utils.class_weight.compute_class_weight` on the class codes.
    """
    codes = np.arange(len(classes))
    if class_weight is None:  # scikit-learn's answer, without its validation per grid point
        return np.ones(len(classes))
    if isinstance(class_weight, dict):
        known = set(classes.tolist())
        unknown = [label for label in class_weight if label not in known]
        if unknown:
            raise ValueError(
                f"class_weight names label(s) {unknown} that are not classes of the labeled "
                f"training samples ({classes.tolist()})"
            )
        values = np.array([class_weight.get(label, 1.0) for label in classes.tolist()])
        if values.dtype.kind not in "iuf" or not np.all(np.isfinite(values) & (values > 0)):
            raise ValueError(
                f"class_weight values must be finite positive numbers, got {class_weight!r}"
            )
        class_weight = dict(zip(codes.tolist(), values.tolist(), strict=True))
    return compute_class_weight(class_weight, classes=codes, y=y_codes[labeled])


def check_unlabeled_mask(unlabeled, shape: tuple) -> np.ndarray:
    """The ``unlabeled`` argument of ``fit``: a boolean mask of ``shape`` (else a clear error)."""
    mask = column_or_1d(unlabeled)
    if mask.dtype != bool or mask.shape != shape:
        raise ValueError(
            f"unlabeled must be a boolean mask of shape {shape}, got dtype {mask.dtype} and "
            f"shape {mask.shape}"
        )
    return mask


class LinearFeatures:
    """Identity feature map for the primal (explicit-feature) path of the linear kernel."""

    def fit_transform(self, X: np.ndarray) -> np.ndarray:
        return X

    def transform(self, X: np.ndarray) -> np.ndarray:
        return X


def explicit_feature_map(estimator, rtol: float | None = None):
    """The inputs for the linear kernel, else the empirical kernel map of ``estimator``'s kernel
    parameters (``kernel, gamma, degree, coef0``): the feature space of EKM, MPM and friends."""
    if estimator.kernel == "linear":
        return LinearFeatures()
    if estimator.kernel == "precomputed":
        raise ValueError(
            f"{type(estimator).__name__} does not take kernel='precomputed' (only the "
            "StructuralClassifier family does); pass the inputs with a named or callable kernel"
        )
    feature_map = EmpiricalKernelMap(
        kernel=estimator.kernel,
        gamma=estimator.gamma,
        degree=estimator.degree,
        coef0=estimator.coef0,
        rtol=rtol,
    )
    return internal_map(feature_map)


def is_dask_collection(X) -> bool:
    """Whether ``X`` is a Dask collection (a ``dask.array``): False without importing Dask
    when it has not been imported (then nothing can be one)."""
    if "dask" not in sys.modules:
        return False
    from dask.base import is_dask_collection as dask_collection

    return bool(dask_collection(X))


class SemiSupervisedLabelsMixin:
    """Label handling shared by the semi-supervised estimators.

    ``y == -1`` (``None`` for object labels), a missing label (NaN, None or ``pd.NA``, as in
    a pandas Series; see :func:`missing_as_unlabeled`) or ``fit(..., unlabeled=mask)`` marks
    unlabeled samples when the class attribute ``_semi_supervised`` is true; ``score``
    ignores them.
    """

    _semi_supervised = True

    def _labeled_mask(self, y: np.ndarray, unlabeled) -> np.ndarray:
        if unlabeled is not None:
            return ~check_unlabeled_mask(unlabeled, y.shape)
        if not self._semi_supervised:
            return np.ones(y.shape, dtype=bool)
        return ~is_unlabeled(y)

    def _encode_labels(self, y, unlabeled, *, caller: str | None = None):
        """``(classes, y_codes, labeled)`` of the labels ``y`` (codes -1 where unlabeled),
        refusing labels this model cannot fit: fewer than two classes among the labeled
        samples (see :meth:`_too_few_classes`).  ``caller``: the name of an estimator that
        checks the labels on the model's behalf before fitting it (a CV search), for the
        message."""
        labeled = self._labeled_mask(y, unlabeled)
        if unlabeled is None and self._semi_supervised:  # a splitter that tests marked samples
            warn_if_fold_tests_unlabeled(type(self).__name__, is_unlabeled)
        y_lab = y[labeled]
        if y_lab.dtype.kind == "f" and not np.all(np.isfinite(y_lab)):
            raise ValueError("y contains NaN or infinite labels")
        check_classification_targets(y_lab) if y_lab.size else None
        if y_lab.dtype.kind == "O":
            kinds = {type(v) for v in y_lab}
            if len(kinds) > 1 and not all(issubclass(k, (Integral, Real)) for k in kinds):
                raise ValueError(f"y mixes label types {sorted(k.__name__ for k in kinds)}")
        classes, codes = np.unique(y_lab, return_inverse=True)
        if len(classes) < 2:
            raise ValueError(self._too_few_classes(y, labeled, len(classes), unlabeled, caller))
        y_codes = np.full(y.shape[0], -1, dtype=int)
        y_codes[labeled] = codes.ravel()
        return classes, y_codes, labeled

    def _too_few_classes(self, y, labeled, n_classes: int, unlabeled, caller=None) -> str:
        """The message of labels with fewer than two classes among the labeled samples.

        When ``y`` holds -1 and no ``unlabeled`` mask was given, a semi-supervised model took
        those samples as unlabeled: the message says so and how to keep -1 as a class (the
        usual cause when every sample is labeled, e.g. classes -1 / +1)."""
        name = type(self).__name__
        message = (
            f"{name} needs labeled samples of at least 2 classes; got {int(labeled.sum())} "
            f"labeled sample(s) and {n_classes} class(es)"
        )
        if caller is not None:
            message = f"{caller}: {message}"
        if unlabeled is None and self._semi_supervised:
            y = np.asarray(y)
            n_marked = int(np.sum(is_unlabeled(y) & ~missing_labels(y)))  # the -1 entries
            if n_marked:
                remedy = (
                    f"recode the labels (e.g. to 0 / 1); {caller} takes no unlabeled mask"
                    if caller is not None
                    else "recode the labels (e.g. to 0 / 1) or pass the unlabeled mask "
                    "(fit(X, y, unlabeled=mask); all False when every sample is labeled)"
                )
                message += (
                    f"; -1 marks unlabeled samples for {name} ({n_marked} of the "
                    f"{y.shape[0]} samples here, taken as unlabeled): if -1 is a class, {remedy}"
                )
        return message

    def score(self, X, y, sample_weight=None):
        """Accuracy on the labeled samples of (X, y); unlabeled markers (-1, None, NaN,
        ``pd.NA``) are ignored, with an
        :class:`~structreg.exceptions.UnlabeledScoringWarning` (unless they are a training
        fold's, scored by a cross-validation): marked samples in an evaluation are the sign
        of a splitter that took the mark for a class."""
        given, y = y, label_array(y)
        keep = self._labeled_mask(y, None)
        if not keep.all():
            warn_if_scoring_unlabeled(given, name=type(self).__name__)
        if sample_weight is not None:
            sample_weight = np.asarray(sample_weight)[keep]
        if not keep.all():  # the labeled rows, in X's own container: a data frame keeps its
            X = safe_indexing(X, np.flatnonzero(keep))  # column names for predict to check
        return super().score(X, y[keep], sample_weight)


DEGENERATE_HINT = (
    "Try more labeled points, a weaker structure term (gamma_I, where the model has one), "
    "another n_neighbors or kernel width, or a graph method meant for few labels "
    "(PoissonLearning)."
)


class StructuralEstimator(BaseEstimator):
    """The machinery shared by :class:`StructuralClassifier` and
    :class:`~structreg.models.StructuralRegressor`: everything up to the targets.

    Parameter validation, the solver choice, the feature map (exact factor, Nystroem, kernel
    expansion, the identity of the linear primal path), the structure penalties, the loss
    object and its solvers, the intercept, ``transduction_``.  A subclass says how ``y``
    becomes targets through three hooks: :meth:`_encode_targets` (labeled mask, integer codes
    for the penalties, classes), :meth:`_targets` (the ``(n, n_outputs)`` matrix the square
    loss fits) and :meth:`_transduction` (what ``transduction_`` holds), and exposes the
    outputs (``predict``, ``decision_function``) through :meth:`_outputs`.
    """

    @classmethod
    def _get_param_names(cls) -> list[str]:
        """scikit-learn's parameter names, read from the signature once per class:
        ``get_params`` and ``clone`` run per grid point in :func:`~structreg.models.fit_path`
        and the searches, and ``inspect.signature`` dominated their cost on small data."""
        names = cls.__dict__.get("_param_names")
        if names is None:
            names = tuple(super()._get_param_names())
            cls._param_names = names
        return list(names)

    _constraint_overrides: dict[str, list] = {}
    """Per-class constraints that replace the glossary's (e.g. a parameter's ``"auto"``)."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._parameter_constraints = check_finite_reals(
            {**constraints_for(cls), **cls._constraint_overrides}
        )

    # -- pickling: the same outputs after a round trip (structreg.models._pickled_factor) --
    def __getstate__(self):
        return _pickled_factor.with_factor(super().__getstate__())

    def __setstate__(self, state):
        state, factor = _pickled_factor.split_factor(state)
        super().__setstate__(state)
        _pickled_factor.restore_factor(self, factor)

    # -- hooks for presets ------------------------------------------------------------------
    _semi_supervised = True
    """Whether ``fit`` reads unlabeled samples and sets ``transduction_``."""

    _path_params: tuple[str, ...] = ("gamma_A",)
    """Parameters that only weight terms of the objective (the ridge, penalty weights), never
    change the design or a penalty matrix: :func:`structreg.models.fit_path` solves grids over
    them from one assembly of the normal equations."""

    def _loss(self) -> str:
        """Name of the loss (``structreg.models._losses.LOSSES``): ``"square"``,
        ``"bordered_square"`` or ``"hinge"``; ``fit`` composes the matching loss object
        (``loss_``)."""
        return self.loss

    def _penalty_terms(self, n_samples: int, n_labeled: int) -> list:
        """The (weight, Penalty) pairs of this model for ``n_samples`` training points."""
        return list(self.penalties or [])

    def _fit_intercept(self) -> bool:
        return self.fit_intercept

    def _ridge(self) -> float:
        """Weight of the RKHS norm ``||f||_K^2`` in the objective."""
        return self.gamma_A

    def _multi_class(self) -> str:
        return getattr(self, "multi_class", "ovr")

    def _make_feature_map(self, X: np.ndarray, memo: dict | None = None):
        """The map phi of this model's kernel for ``solver_``: the identity (linear kernel,
        primal path), Nystroem features on ``n_components`` centres, the full kernel
        expansion (iterative exact kernel), or the exact factor ``K = V V^T``.  ``memo``: the
        dict :func:`~structreg.models.fit_path` keeps for one X (what a map learns from X alone
        may be kept there)."""
        solver = getattr(self, "solver_", "dense")
        if self.kernel == "linear" and (X.shape[1] < X.shape[0] or solver == "cg"):
            return LinearFeatures()
        idx = None
        if solver == "nystroem":
            idx = select_centers(X, self.n_components, self.centers, self.random_state)
        gamma = self._kernel_gamma(X, memo, centres=idx)
        params = dict(kernel=self.kernel, gamma=gamma, degree=self.degree, coef0=self.coef0)
        if solver == "nystroem":
            return LandmarkFeatureMap(landmarks=X[idx], **params)
        if solver == "cg" and self._exact_kernel_cg:
            return KernelExpansion(**params)
        return KernelFeatureMap(**params)

    def _kernel_gamma(self, X, memo: dict | None = None, centres: np.ndarray | None = None):
        """The ``gamma`` the kernel map gets (a hook for data-dependent widths); ``centres``:
        the rows of X that span the Nystroem features, if any."""
        return self.gamma

    def _prepare(self, X: np.ndarray, Z: np.ndarray, y_codes: np.ndarray, labeled: np.ndarray):
        """Hook run after the feature map and before the penalties (e.g. clustering)."""

    def _has_prepare_step(self) -> bool:
        """Whether this preset overrides :meth:`_prepare` (a fit step before the problem:
        clustering, ...)."""
        return type(self)._prepare is not StructuralEstimator._prepare

    def _loss_weights(self, labeled: np.ndarray) -> np.ndarray:
        """Per-sample loss weights before the class weights: ``1/l`` on the l labeled
        samples (a preset whose paper sums the loss unnormalised returns 1 there)."""
        return labeled / labeled.sum()

    def _fit_weights(self, labeled: np.ndarray, y_codes: np.ndarray) -> np.ndarray:
        """The loss weights ``c_i`` of a fit (``fit`` and :func:`~structreg.models.fit_path`):
        :meth:`_loss_weights` times the sample's class weight ``class_weight_[y_i]`` (a
        classifier's; 0 where unlabeled).  ``class_weight=None``: :meth:`_loss_weights`."""
        c = self._loss_weights(labeled)
        if getattr(self, "class_weight", None) is None:
            return c
        return c * np.where(labeled, self.class_weight_[np.maximum(y_codes, 0)], 0.0)

    def _loo_rows(self, y_codes: np.ndarray, labeled: np.ndarray) -> np.ndarray | None:
        """The samples whose exact leave-one-out outputs ``fit`` asks the loss for (the
        classifiers' square losses calibrate their probabilities on them), or None."""
        return None

    def _calibrate(self, X, y, unlabeled, data: Problem) -> None:
        """Hook run at the end of ``fit`` (the classifiers compose their probability
        calibration here)."""

    def _bordered_system(self, X, Z, weights, M):
        """The bordered dual system (:class:`~structreg.models._losses.BorderedDual`) of a
        model with ``_loss() == "bordered_square"``."""
        raise NotImplementedError(f"{type(self).__name__} has no bordered formulation")

    def _bordered_reg(self, weights: np.ndarray):
        """The diagonal ``r`` of the bordered system for the loss weights ``c_i``: a number
        or one per sample (what a grid over a loss scale such as LS-SVM's ``C`` changes)."""
        raise NotImplementedError(f"{type(self).__name__} has no bordered formulation")

    # -- targets: what a classifier and a regressor do differently ----------------------------
    def _encode_targets(self, y, unlabeled) -> tuple:
        """``(classes, y_codes, labeled)`` for the training targets ``y``: ``classes`` is stored
        as ``classes_`` (None: a regressor, no classes), ``y_codes`` are the integer codes the
        penalties read (-1 where unlabeled) and ``labeled`` the boolean mask of the samples
        that carry loss."""
        raise NotImplementedError

    def _targets(self, y, y_codes: np.ndarray, labeled: np.ndarray) -> np.ndarray:
        """The ``(n_samples, n_outputs)`` targets of the loss (zero rows where unlabeled)."""
        raise NotImplementedError

    def _transduction(self, fitted: np.ndarray):
        """``transduction_`` from the outputs at the training points."""
        raise NotImplementedError

    # -- fit / predict -----------------------------------------------------------------------
    _cluster_fit = None
    """``(self, X, y, unlabeled)`` -> self: the fit of a ``dask.array`` X on the Dask cluster
    (:mod:`structreg.models.distributed`), or None: then X is gathered, as any array-like."""

    def fit(self, X, y, unlabeled=None):
        """Fit on X with labels y (``-1`` / ``None`` or the ``unlabeled`` mask: unlabeled).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Labels.  Semi-supervised models take ``-1`` (``None`` for object labels) and
            missing values (NaN, None, ``pd.NA``: e.g. a pandas Series with missing entries)
            as unlabeled samples; supervised ones refuse missing labels.
        unlabeled : array-like of bool, shape (n_samples,), optional
            Marks unlabeled samples explicitly (use when -1 is a real class).

        Returns
        -------
        self
        """
        if self._cluster_fit is not None and is_dask_collection(X):  # fitted on the cluster
            return self._cluster_fit(X, y, unlabeled)
        X, y = self._validated(X, y, unlabeled)
        with blas_threads_for(X.shape[0]):
            return self._fit(X, y, unlabeled)

    def _validated(self, X, y, unlabeled=None):
        """Parameters and training data checked as ``fit`` checks them; returns ``(X, y)``."""
        self._validate_params()
        X, y = self._validated_data(X, y, "csr" if self._accepts_sparse() else False)
        if self.kernel == "precomputed":
            check_precomputed_gram(X, type(self).__name__)
        check_training_X(self, X)
        return X, y

    def _validated_data(self, X, y, sparse):
        """X and the targets converted and checked (labels here; the regressors' real
        targets, NaN rows allowed, in :class:`~structreg.models.StructuralRegressor`)."""
        return validate_data(self, X, y, dtype=float, y_numeric=False, accept_sparse=sparse)

    def _validated_new(self, X, sparse=False):
        """Samples to score, checked against the training data (a precomputed kernel: one
        column per training sample)."""
        return validated_samples(self, X, dtype=float, accept_sparse=sparse)

    def _structure_points(self, X, Z):
        """The training points the penalties and ``_prepare`` see: X, or for a precomputed
        kernel points with the kernel's geometry (:func:`~structreg.kernels.kernel_points`;
        the exact factor Z itself when the feature map computed it)."""
        if self.kernel != "precomputed":
            return X
        if Z is not None and type(self.feature_map_) is KernelFeatureMap:
            return Z
        return kernel_points(X)

    def _check_labels(self, y_codes: np.ndarray) -> None:
        """Hook: refuse labels this model's parameters cannot serve (e.g. too few samples in
        a class for its graph), after they are encoded."""

    def _start_fit(self, y, unlabeled, encoded=None) -> tuple[np.ndarray, np.ndarray]:
        """``(y_codes, labeled)`` of the training targets (``encoded``: what
        :meth:`_encode_targets` returned for them, else encoded here), with ``classes_`` and
        ``class_weight_`` set, the labels checked and a previous fit's solution dropped; the
        start of every fit, in memory or on a cluster."""
        if encoded is None:
            encoded = self._encode_targets(y, unlabeled)
        classes, y_codes, labeled = encoded
        if classes is not None:  # a regressor has no classes
            self.classes_ = classes
            self.class_weight_ = class_weights(
                getattr(self, "class_weight", None), classes, y_codes, labeled
            )
        self._check_labels(y_codes)
        for stale in _SOLUTION_ATTRIBUTES:
            self.__dict__.pop(stale, None)  # a refit with another loss / solver
        return y_codes, labeled

    def _fit_structure(self, X, y, unlabeled, memo: dict | None = None, encoded=None):
        """Everything of ``fit`` before the penalties: labels, solver, feature map, ``_prepare``.

        Sets ``classes_``, ``solver_`` and ``feature_map_``; returns ``(y_codes, labeled, Z,
        unexplained)`` (Z is None for the iterative exact-kernel path, ``unexplained`` the
        Nystroem centres' missed share of the kernel trace, or None).  Shared by ``fit`` and
        :func:`structreg.models.fit_path`, which passes a ``memo`` (kept for one X) so that
        models with the same feature map (e.g. other graph parameters) reuse its design, and
        ``encoded``, what :meth:`_encode_targets` returned for these labels (once per grid).
        """
        y_codes, labeled = self._start_fit(y, unlabeled, encoded)
        self.solver_ = resolve_solver(self, X)
        self.loss_ = loss_for(self, self.solver_)
        self.feature_map_ = internal_map(self._make_feature_map(X, memo))
        key = memo_key(self.feature_map_) if memo is not None else None
        if key is not None and ("feature_map", key) in memo:
            self.feature_map_, Z = memo["feature_map", key]
        elif features_by_rows(self, X, memo):
            Z = row_design(self, X)
        elif isinstance(self.feature_map_, KernelExpansion):  # iterative exact kernel: no Z
            check_fit_memory(self, X, labeled)
            Z = None
            if self.kernel != "precomputed":  # the expansion keeps its training samples: its
                X = X.copy()  # own copy, not the caller's array (which may change, and which
                # a later predict on it would meet by identity: k(X, X)'s symmetric shortcut)
            self.feature_map_.fit(X)
        else:
            check_fit_memory(self, X, labeled)
            Z = self.feature_map_.fit_transform(X)
            if key is not None:
                memo["feature_map", key] = (self.feature_map_, Z)
        unexplained = None  # share of the kernel the Nystroem centres miss
        if self.solver_ == "nystroem" and not isinstance(Z, RowDesign):  # (RowDesign: _fit)
            unexplained = getattr(self.feature_map_, "unexplained_trace_", None)
        if unexplained is not None:
            warn_nystroem(self, unexplained, Z.shape[1])
        self._prepare(self._structure_points(X, Z), Z, y_codes, labeled)
        return y_codes, labeled, Z, unexplained

    def _problem(
        self,
        X,
        y,
        unlabeled,
        *,
        grid: bool = False,
        memo: dict | None = None,
        encoded: tuple | None = None,
        graphs: dict | None = None,
        labels: str | None = None,
    ) -> Problem:
        """The fit problem of this model's structure on (X, y): fits the structure
        (:meth:`_fit_structure`: labels, solver, feature map, ``_prepare``) and builds the
        design, targets, loss weights and the **unweighted** penalty matrices.

        ``fit`` builds it for its one setting (``grid=False``: only the penalties with a
        nonzero weight are built, and the leave-one-out outputs the calibration reads are
        requested); :func:`~structreg.models.fit_path` for a group of grid points
        (``grid=True``: every penalty), with its ``memo`` (feature maps, penalty matrices and
        design-only work kept for one X; ``labels`` fingerprints (y, unlabeled) for the
        penalties that read the labels), the ``encoded`` labels of the call and the kNN
        ``graphs`` its penalties share.
        """
        y_codes, labeled, Z, unexplained = self._fit_structure(X, y, unlabeled, memo, encoded)
        n, n_labeled = X.shape[0], int(labeled.sum())
        points = self._structure_points(X, Z)
        terms = checked_terms(self._penalty_terms(n, n_labeled))
        built = [k for k, (w, _) in enumerate(terms) if grid or w != 0]
        matrices = [
            self._penalty_matrix(terms[k][1], points, y_codes, labeled, memo, graphs, labels)
            for k in built
        ]
        fit_intercept = self.loss_.has_intercept(self)
        design_cache: dict = {}
        if memo is not None:  # shared by the structures on one design (the entry holds Z)
            design_cache = memo.setdefault(("design", id(Z), fit_intercept), {"Z": Z})
        return self._assembled_problem(
            X,
            Z,
            y,
            y_codes,
            labeled,
            terms,
            built,
            matrices,
            fit_intercept=fit_intercept,
            loo_rows=None if grid else self._loo_rows(y_codes, labeled),
            design_cache=design_cache,
            unexplained=unexplained,
        )

    def _assembled_problem(
        self, X, Z, y, y_codes, labeled, terms, built, matrices, **extra
    ) -> Problem:
        """The :class:`Problem` of the design ``Z``, the labels and the penalty ``matrices``
        of the ``built`` ones of ``terms`` (``extra``: ``fit_intercept``, ``loo_rows``,
        ``design_cache``, ``unexplained``), with this model's loss weights, targets and
        weight kinds: the one assembly, whether the matrices were built in memory or summed
        on a cluster.  ``terms`` are this model's ``_penalty_terms``, read once per fit: the
        problem keeps this model's :class:`~structreg.models.problem.Setting` (ridge and
        weights) from them, which the loss reads (``Problem.setting``)."""
        return Problem(
            X=X,
            Z=Z,
            y_codes=y_codes,
            labeled=labeled,
            loss_weights=self._fit_weights(labeled, y_codes),
            Y=self._targets(y, y_codes, labeled),
            penalties=matrices,
            psd=[bool(getattr(terms[k][1], "psd", False)) for k in built],
            terms=[penalty for _, penalty in terms],
            built=built,
            strict_kinds=string_weights(self),
            builder=self,
            builder_setting=setting_of(self, terms, built),
            **extra,
        )

    @staticmethod
    def _penalty_matrix(penalty, points, y_codes, labeled, memo, graphs, labels):
        """The penalty's matrix on the training points; with a grid's ``memo``, from it when
        the same penalty was built on this X (e.g. the kNN graph of another kernel width) --
        for the same labels if it reads them -- and the kNN graphs it searches are kept in
        ``graphs`` (DRLSC's within- and between-class penalties split one graph)."""
        if memo is None:
            return penalty.build(points, y_codes, labeled)
        key = memo_key(penalty)
        entry = None
        if key is not None:
            reads = getattr(penalty, "reads_labels", lambda: True)()
            entry = ("penalty", key, labels if reads else None)
            if entry in memo:
                return memo[entry]
        with reusing_knn_graphs(graphs if graphs is not None else {}):
            matrix = penalty.build(points, y_codes, labeled)
        if entry is not None:
            memo[entry] = matrix
        return matrix

    def _fit(self, X, y, unlabeled):
        problem = self._problem(X, y, unlabeled)
        fitted = self.loss_.fit_grid(problem, [self])[0]
        if isinstance(problem.Z, RowDesign):  # the penalty pass measured ||Z||_F^2
            problem.unexplained = self.feature_map_.set_explained(X, problem.Z.squared_norm())
            warn_nystroem(self, problem.unexplained, problem.Z.shape[1])
        fitted = self._finish_fit(problem, fitted, X)
        if fitted is not None and getattr(self, "classes_", None) is not None:
            warn_if_degenerate(self, fitted, problem.labeled, problem.y_codes, DEGENERATE_HINT)
        self._calibrate(X, y, unlabeled, problem)
        return self

    def _finish_fit(self, problem: Problem, fitted: np.ndarray | None, X) -> np.ndarray | None:
        """What follows the solve in ``fit`` and :func:`~structreg.models.fit_path` alike:
        ``n_iter_``, the Nystroem share in ``solver_info_``, ``transduction_`` (from the
        outputs at the training points, computed here when the loss gave none).  Returns
        those outputs of a semi-supervised model, None otherwise."""
        if problem.unexplained is not None:
            self.solver_info_["unexplained_trace"] = problem.unexplained
        self.n_iter_ = int(self.solver_info_.get("n_iter", 1))
        if self._semi_supervised:  # outputs at the training points, unlabeled ones included
            if fitted is None:
                fitted = self.loss_.decision(self, X)
            self.transduction_ = self._transduction(fitted)
            return fitted
        return None

    def penalty_matrix(self, X, y, unlabeled=None):
        """The combined structure penalty ``sum_k w_k M_k`` of this fitted model over its
        training data, rebuilt on demand.

        A fitted model keeps what ``predict`` needs, not the n x n penalty nor the graph it
        came from (issue 19, slim models); this rebuilds it from the training data with the
        fitted structure (clusters, ``n_neighbors_``, ``gamma_D_``, ...).

        Parameters
        ----------
        X, y, unlabeled
            The training data given to ``fit``.

        Returns
        -------
        M : sparse matrix, ndarray, LinearOperator or None
            None when the model has no penalty.
        """
        check_is_fitted(self)
        est = copy.copy(self)  # validation and label encoding set attributes: on a copy
        X, y = est._validated(X, y, unlabeled)
        _, y_codes, labeled = est._encode_targets(y, unlabeled)
        Z = None
        if self.kernel == "precomputed" and type(self.feature_map_) is KernelFeatureMap:
            Z = self.feature_map_.transform(X)
        points = self._structure_points(X, Z)
        terms = self._penalty_terms(X.shape[0], int(labeled.sum()))
        return build_penalties(terms, points, y_codes, labeled)[0]

    # -- solver choice: structreg.models._solver_choice; the hooks it reads --------------
    def _primal_output(self) -> bool:
        """Whether the fitted model is linear on its features (``phi(x) @ coef_ +
        intercept_``: the square losses and the hinge's primal solvers) rather than a libsvm
        machine on the deformed kernel."""
        return self.loss_.linear

    _auto_exact_solver = "dense"
    """What ``solver="auto"`` picks up to ``AUTO_DENSE_MAX`` samples (and for a precomputed
    or low-dimensional linear kernel)."""

    _exact_kernel_cg = True
    """Whether ``solver="cg"`` with a kernel solves on the full kernel expansion by the
    K-preconditioned CG of :mod:`structreg.solvers.kernel_cg` (False: models whose feature map
    is not the plain kernel map run CG on the normal equations of their exact feature map)."""

    def _square_tol(self) -> float:
        return self.tol

    def _set_solution(
        self, coef, intercept, loss: str, n_components: int, info: dict, dual_coef=None
    ) -> None:
        """Store a linear solution on the feature map (and its kernel expansion) and
        ``solver_info_``; used by ``fit`` and by :func:`~structreg.models.fit_path` (which
        passes the kernel expansion ``dual_coef``, computed for a whole grid at once)."""
        check_finite_solution(self, coef, intercept, dual_coef)
        self.coef_, self.intercept_ = coef, intercept
        if hasattr(self.feature_map_, "dual_coef"):
            if dual_coef is None:
                dual_coef = self.feature_map_.dual_coef(coef)
                check_finite_solution(self, dual_coef)
            self.dual_coef_ = dual_coef
        self.solver_info_ = {
            "loss": loss,
            "solver": self.solver_,
            "n_components": n_components,
            **info,
        }

    def _square_output(self, F: np.ndarray) -> np.ndarray:
        F = F + self.intercept_
        return F.ravel() if F.shape[1] == 1 else F

    def _outputs(self, X) -> np.ndarray:
        """The fitted model's outputs ``f(x)`` at new inputs (checked as at fit); outputs
        that are not finite are a :class:`~structreg._numerics.NonFiniteError`."""
        check_is_fitted(self)
        X = self._validated_new(X, "csr" if self._accepts_sparse() else False)
        return checked_outputs(self, self.loss_.decision(self, X))

    _sparse_structure = True
    """Whether this model's structure steps (penalties, ``_prepare``) work on scipy.sparse
    rows (kNN graphs, class scatter, labeled pairs do; clustering, l1-graphs, centring do
    not)."""

    def _accepts_sparse(self) -> bool:
        """Whether this configuration takes scipy.sparse X: the square loss with the linear
        kernel on the matrix-free CG path (``solver="cg"``, or ``"auto"``, which picks it for
        sparse X), X never densified."""
        return (
            self._sparse_structure
            and self.kernel == "linear"
            and getattr(self, "solver", "dense") in ("cg", "auto")
            and self._loss() == "square"
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self._accepts_sparse()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags


class StructuralClassifier(SemiSupervisedLabelsMixin, ClassifierMixin, StructuralEstimator):
    """Any loss with any weighted sum of structure penalties, in an RKHS.

    Minimises ``sum_labeled c_i loss(y_i, f(x_i)) + gamma_A ||f||_K^2 + sum_k w_k f^T M_k f``,
    ``c_i = w_{y_i} / l`` (``w`` the class weights, all 1 by default), where each
    ``(w_k, penalty_k)`` in ``penalties`` builds ``M_k`` on the training points.  Semi-supervised:
    samples with ``y == -1`` (``None`` for string labels, or marked by the ``unlabeled`` mask
    given to ``fit``) enter only the penalties; so do missing labels (NaN, None, ``pd.NA``:
    a pandas label Series with missing values).

    Parameters
    ----------
    loss : {"square", "hinge"}, default="square"
        ``"square"``: regularised least squares on one-of-c targets coded +-1 (a single +-1
        column for two classes), solved in closed form (see :mod:`structreg.solvers.square`;
        indefinite penalties allowed).  ``"hinge"``: SVM on the deformed kernel
        (:mod:`structreg.solvers.hinge`; penalties must be PSD), with libsvm's
        ``C = 1 / (2 gamma_A l)``.  ``fit`` composes the matching loss object
        (``structreg.models._losses``, attribute ``loss_``), which declares the solvers
        and penalties it accepts.
    penalties : list of (float, Penalty), default=None
        Weighted structure penalties (e.g. ``[(1e-3, LaplacianPenalty())]``); weights are used
        as given.  None or [] gives plain RLSC / SVM.
    kernel : {"linear", "rbf", "poly", "precomputed"} or callable, default="rbf"
        ``"precomputed"`` (as :class:`sklearn.svm.SVC`): ``fit(K, y)`` with the square,
        symmetric Gram matrix of the training samples, ``predict(K_test)`` with the
        (n_test, n_train) kernel between test and training samples.  The penalties and
        structure steps then see the training points through the kernel-induced distance
        ``d(i, j)^2 = K_ii + K_jj - 2 K_ij`` and inner products ``K_ij``
        (:func:`~structreg.kernels.kernel_points`); solvers ``"dense"`` (and ``"primal"``)
        only.  The ``pairwise`` tag is set, so scikit-learn's cross-validation slices K.
    gamma : float, "scale" or None, default="scale"
        Kernel width as in scikit-learn.
    degree : int, default=3
    coef0 : float, default=1.0
    gamma_A : float, default=1e-2
        Weight of the RKHS norm ``||f||_K^2`` (ambient regularisation).
    fit_intercept : bool, default=False
        Square loss only: add an unpenalised bias.  The hinge loss always has libsvm's bias.
    multi_class : {"ovr", "ovo"}, default="ovr"
        Hinge loss only: one-vs-rest or one-vs-one decomposition.
    tol : float, default=1e-3
        libsvm stopping tolerance (hinge loss); relative residual of ``solver="cg"``.
    solver : {"auto", "dense", "nystroem", "cg"}, default="auto"
        Square loss: ``"dense"`` factors the exact Gram matrix (``K = V V^T``, pivoted
        Cholesky) and solves the normal equations directly; ``"nystroem"`` uses
        ``n_components`` centres (O(n m^2 + nnz(M) m) time, O(n m) memory); ``"cg"`` is exact
        and iterative (K-preconditioned CG on the kernel expansion, one product with K per
        iteration; CG on the features for the linear kernel); ``"auto"``: dense up to
        ``AUTO_DENSE_MAX`` samples, Nystroem beyond, CG for sparse X.  Hinge loss:
        ``"dense"`` is libsvm on the exact deformed kernel; ``"primal"`` (exact kernel map) and
        ``"nystroem"`` (``n_components`` centres) minimise the *squared* hinge
        ``(1/l) sum max(0, 1 - y_i f_i)^2`` in the primal by Newton's method
        (:mod:`structreg.solvers.primal_hinge`, one-vs-rest); ``"auto"``: dense up to
        ``AUTO_DENSE_MAX`` samples, Nystroem beyond.  The exact solvers that form the n x n
        Gram matrix (``"dense"``, ``"primal"``; libsvm's l x l one of the labeled samples)
        are checked against the memory the machine has available before anything is
        allocated: a fit that cannot fit is refused with an
        :class:`~structreg._resources.InsufficientMemoryError` (a ``MemoryError``) naming
        the size in GiB and the solvers to use instead.
    n_components : int, default=1000
        Number of Nystroem centres m.
    centers : {"uniform", "k-means++"}, default="uniform"
        How the Nystroem centres are drawn (:func:`structreg.kernels.select_centers`).
    max_iter : int or None, default=None
        Iteration cap of ``solver="cg"`` (square loss) or of the Newton iterations (primal
        hinge solvers; None: 100).
    random_state : int, RandomState instance or None, default=None
        Seed of the Nystroem centre selection.
    class_weight : dict, "balanced" or None, default=None
        Per-class weights ``w_c`` of the labeled samples' loss, as in scikit-learn: the loss
        of labeled sample i is multiplied by ``w_{y_i}`` (``c_i = w_{y_i} / l``).  None: all
        1.  ``"balanced"``: ``w_c = l / (n_classes l_c)``, ``l_c`` the labeled samples of class
        c (unlabeled samples never count).  A dict ``{label: weight}``: classes it omits
        weigh 1; a label that is not a class of the labeled samples is an error.  Square
        loss: the weight applies to every output column of the one-of-c +-1 targets (as
        ``RidgeClassifier``'s sample weights).  Hinge loss: libsvm's C of sample i is
        ``C w_{y_i}`` (``SVC``'s ``class_weight``; with one-vs-rest, a sample of the "rest"
        keeps its own class's weight); the primal squared-hinge solvers weight the sample's
        term by ``w_{y_i}``.
    probability : bool, default=False
        Hinge loss: calibrate :meth:`predict_proba` on internal stratified 5-fold
        cross-validation of the labeled samples during ``fit`` (five more fits, as
        ``SVC(probability=True)``); without it the hinge loss has no ``predict_proba``.
        The square loss always has it, calibrated on its exact leave-one-out outputs
        (leverages of the factored system), whatever this says.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_weight_ : ndarray of shape (n_classes,)
        The weight ``w_c`` of each class (all 1 for ``class_weight=None``).
    n_features_in_ : int
    feature_map_ : KernelFeatureMap or LinearFeatures
        Explicit map ``phi`` with ``phi(x)^T phi(z) = k(x, z)`` on the training set (the
        identity in the primal path: linear kernel with fewer features than samples).
    coef_ : ndarray of shape (n_components, n_outputs)
        Square loss: ``f(x) = phi(x) @ coef_ + intercept_``.
    dual_coef_ : ndarray of shape (n_basis, n_outputs)
        Square loss, kernel path: ``f(x) = k(x, feature_map_.basis_) @ dual_coef_ + intercept_``.
    intercept_ : ndarray of shape (n_outputs,)
    solver_ : str
        The solver used (``solver``, or what ``"auto"`` picked).
    loss_ : Loss
        The loss object that fitted the model and computes its outputs
        (``SquareLoss``, ``HingeLoss``, ``SquaredHingeLoss``
        for the hinge's primal solvers, ...).
    solver_info_ : dict
        How the problem was solved (solver, factorisation, convexity, iterations, ...).
    n_iter_ : int
        Iterations of the iterative solver (1 for a direct solve or libsvm).
    transduction_ : ndarray of shape (n_samples,)
        Semi-supervised models: predicted labels of the training points (labeled and
        unlabeled).
    calibrator_ : TemperatureScaling
        What :meth:`predict_proba` applies to the decision values: ``softmax(a F)`` with
        ``a = calibrator_.scale_ > 0`` minimising the log loss of the labeled samples'
        out-of-fold outputs (``calibrator_.decision_values_``; see
        ``structreg.models._proba``).  Not set where there are none (``solver="cg"``, a
        singular system, ``multi_class="ovo"`` of the bordered loss, the hinge loss without
        ``probability=True``): ``predict_proba`` then raises an AttributeError saying why.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from structreg import StructuralClassifier
    >>> from structreg.structure import LaplacianPenalty
    >>> X, y = make_moons(100, noise=0.05, random_state=0)
    >>> clf = StructuralClassifier(penalties=[(1e-4, LaplacianPenalty())], gamma=2.0)
    >>> clf.fit(X, y).score(X, y) > 0.9
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
        fit_intercept=False,
        multi_class="ovr",
        tol=1e-3,
        solver="auto",
        n_components=1000,
        centers="uniform",
        max_iter=None,
        random_state=None,
        class_weight=None,
        probability=False,
    ):
        self.loss = loss
        self.penalties = penalties
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.gamma_A = gamma_A
        self.fit_intercept = fit_intercept
        self.multi_class = multi_class
        self.tol = tol
        self.solver = solver
        self.n_components = n_components
        self.centers = centers
        self.max_iter = max_iter
        self.random_state = random_state
        self.class_weight = class_weight
        self.probability = probability

    def _validated(self, X, y, unlabeled=None):
        """As :meth:`StructuralEstimator._validated`, missing labels replaced by the unlabeled
        markers (semi-supervised; :func:`missing_as_unlabeled`) or refused (supervised)."""
        if self._semi_supervised:
            y = missing_as_unlabeled(y, unlabeled)
        else:
            check_no_missing_labels(self, y)
        return super()._validated(X, y, unlabeled)

    def _encode_targets(self, y, unlabeled) -> tuple:
        return self._encode_labels(column_or_1d(y, warn=True), unlabeled)

    def _targets(self, y, y_codes: np.ndarray, labeled: np.ndarray) -> np.ndarray:
        return pm_one_targets(y_codes, labeled, len(self.classes_))

    def _transduction(self, fitted: np.ndarray):
        return self.classes_[self._decide(fitted)]

    def deformed_gram(self, X=None) -> np.ndarray:
        """Gram matrix of the deformed kernel (hinge loss solved by libsvm).

        ``k~(x, z) = k(x, z) - k_x^T (gamma_A I + M K)^{-1} M k_z`` against the labeled
        training points: ``X=None`` gives the (l, l) matrix the SVM was trained on, otherwise
        the (n_X, l) matrix between ``X`` and them (what ``svm_`` scores).
        """
        check_is_fitted(self)
        if not hasattr(self, "svm_"):
            raise AttributeError(
                f"{type(self).__name__} was fitted with solver={self.solver_!r}, which solves "
                "in the primal and has no deformed kernel; fit with solver='dense' (libsvm on "
                "the deformed kernel) to get it"
            )
        if X is not None:
            X = self._validated_new(X)
        return self.loss_.deformed_gram(self, X)

    def _decide(self, F: np.ndarray) -> np.ndarray:
        return (F > 0).astype(int) if F.ndim == 1 else np.argmax(F, axis=1)

    def decision_function(self, X):
        """Output f(x): shape (n,) for two classes (positive means ``classes_[1]``), else
        (n, n_classes)."""
        return self._outputs(X)

    def predict(self, X):
        """Predicted class labels."""
        decision = self.decision_function(X)
        return self.classes_[self._decide(decision)]

    # -- probabilities (structreg.models._proba) ----------------------------------------------
    def _loo_rows(self, y_codes: np.ndarray, labeled: np.ndarray) -> np.ndarray | None:
        return None if self._loss() == "hinge" else _proba.calibration_rows(y_codes, labeled)

    def _calibrate(self, X, y, unlabeled, data: Problem) -> None:
        _proba.calibrate(self, X, y, unlabeled, data)

    @available_if(_proba.check_available)
    def predict_proba(self, X):
        """Class probabilities ``softmax(a F(x))`` (two classes: ``sigmoid(a f(x))``).

        ``F`` is :meth:`decision_function`; the one scale ``a > 0`` (``calibrator_.scale_``)
        minimises the log loss of the labeled training samples' out-of-fold outputs: exact
        leave-one-out outputs for the square losses, internal 5-fold cross-validation for
        the hinge loss with ``probability=True`` (see ``structreg.models._proba``).  Rows
        sum to 1, columns follow ``classes_``, and the argmax is :meth:`predict`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        return self.calibrator_.predict_proba(self.decision_function(X))

    @available_if(_proba.check_available)
    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba` (same input and shape), computed as a
        log-softmax: finite where the probability underflows to 0."""
        check_is_fitted(self)
        return self.calibrator_.predict_log_proba(self.decision_function(X))
