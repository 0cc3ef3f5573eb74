"""The bad-input battery's cases (issue 20, point 4): every public estimator x every bad-input
case, run by ``tests/test_bad_input_battery.py`` and printed as a table by
``benchmarks/bad_input_battery.py``.

Each cell is either a *correct fit* -- what "correct" means is stated per case, e.g. the same
predictions as on the unscaled data for a rescaled X -- or an error of a documented type
(``ValueError`` / ``TypeError``) whose message matches the case's pattern, i.e. names the
problem.  Anything else (a wrong answer, non-finite outputs, a deep crash with another
message) fails.

The estimators are the estimator classes of ``structreg.__all__`` with their defaults
(``StructuralClassifierCV``, which has no default model, with ``RLSC`` and a two-point grid)
and the kernel-map transformers of :mod:`structreg.kernels`.
"""

from __future__ import annotations

import functools
import math
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from numbers import Real

import numpy as np
from sklearn.base import is_classifier, is_regressor

import structreg
from structreg._compat import Interval
from structreg.kernels import (
    EmpiricalKernelMap,
    KernelExpansion,
    KernelFeatureMap,
    LandmarkFeatureMap,
)
from structreg.models.graph_inference import GraphInferenceClassifier

# -- estimators -------------------------------------------------------------------------------


def _public_estimators() -> dict[str, Callable]:
    out: dict[str, Callable] = {}
    for name in structreg.__all__:
        obj = getattr(structreg, name)
        if not isinstance(obj, type):
            continue
        if name == "StructuralClassifierCV":  # no default model: RLSC and a small grid
            out[name] = lambda: structreg.StructuralClassifierCV(
                structreg.RLSC(), {"gamma_A": [1e-3, 1e-1]}, cv=2
            )
        else:
            out[name] = obj
    for cls in (KernelFeatureMap, EmpiricalKernelMap, KernelExpansion, LandmarkFeatureMap):
        out[cls.__name__] = cls
    return out


ESTIMATORS = _public_estimators()


def make(name: str):
    est = ESTIMATORS[name]()
    if "random_state" in est.get_params(deep=False):
        est.set_params(random_state=0)
    return est


def kind(name: str) -> str:
    """``"classifier"``, ``"regressor"`` or ``"transformer"``."""
    est = ESTIMATORS[name]()
    if is_classifier(est):
        return "classifier"
    return "regressor" if is_regressor(est) else "transformer"


def semi_supervised(name: str) -> bool:
    """Whether the classifier reads -1 / None / NaN labels as unlabeled points (a CV
    estimator: whether its model does)."""
    est = model = ESTIMATORS[name]()
    if hasattr(est, "_default_estimator"):
        model = est.estimator or est._default_estimator()
    return kind(name) == "classifier" and getattr(model, "_semi_supervised", False)


# -- data ---------------------------------------------------------------------------------------


def blobs(n: int = 60, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two well-separated Gaussian blobs in 3-D (centres -+1.5 on the first two axes), labels
    0 / 1 alternating, so any prefix is balanced; every default model separates them."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    X = rng.normal(scale=0.5, size=(n, 3))
    X[:, :2] += np.where(y == 1, 1.5, -1.5)[:, None]
    return X, y


X_ALL, Y_ALL = blobs()
X_TRAIN, Y_TRAIN, X_TEST, Y_TEST = X_ALL[:40], Y_ALL[:40], X_ALL[40:], Y_ALL[40:]


def targets(name: str, y: np.ndarray, X: np.ndarray | None = None) -> np.ndarray | None:
    """The classification labels ``y`` as this estimator's targets (real ones for a
    regressor, from ``X``; None for a transformer)."""
    k = kind(name)
    if k == "transformer":
        return None
    if k == "regressor":
        X = X_TRAIN[: len(y)] if X is None else X
        return X[:, 0] - 0.5 * X[:, 1]
    return y


# -- outcomes -----------------------------------------------------------------------------------

PASS, ERROR, FAIL, NA = "pass", "clear error", "FAIL", "n/a"


class CellFailure(AssertionError):
    """A cell's result is neither a correct fit nor a clear error."""


class NotApplicable(Exception):
    """The case does not apply to this estimator (e.g. labels for a transformer)."""


@dataclass
class Expect:
    """An acceptable error: its type and a regex on its message."""

    pattern: str
    types: tuple = (ValueError, TypeError)


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)


def fit(est, X, y):
    if y is None:
        return quiet(est.fit, X)
    return quiet(est.fit, X, y)


def outputs(est, X) -> np.ndarray:
    """Decision values (classifier), predictions (regressor) or the transform."""
    if hasattr(est, "decision_function"):
        return np.asarray(quiet(est.decision_function, X), dtype=float)
    if hasattr(est, "predict_proba"):
        return np.asarray(quiet(est.predict_proba, X), dtype=float)
    if hasattr(est, "predict"):
        return np.asarray(quiet(est.predict, X), dtype=float)
    return np.asarray(quiet(est.transform, X), dtype=float)


def check_finite_outputs(est, X) -> np.ndarray:
    out = outputs(est, X)
    if not np.all(np.isfinite(out)):
        raise CellFailure(f"non-finite outputs ({int((~np.isfinite(out)).sum())} entries)")
    return out


@functools.cache
def clean_accuracy(name: str) -> float:
    """Test accuracy of the default fit on the clean blobs: what a benign perturbation of the
    data (a constant column, duplicated rows) should about keep."""
    est = make(name)
    fit(est, X_TRAIN, Y_TRAIN)
    return float(np.mean(quiet(est.predict, X_TEST) == Y_TEST))


def check_accuracy(name: str, est, X, y) -> None:
    """Test accuracy at least 0.9, or no more than 0.1 below that on the clean blobs."""
    acc = float(np.mean(quiet(est.predict, X) == y))
    at_least = min(0.9, clean_accuracy(name) - 0.1)
    if acc < at_least:
        raise CellFailure(f"accuracy {acc:.2f} < {at_least:.2f} on well-separated blobs")


def check_transform(est, X) -> None:
    """A kernel map's features reproduce the kernel on its training points: ``Z Z^T == K``
    (the landmark map and the kernel expansion: finite features)."""
    Z = check_finite_outputs(est, X)
    if isinstance(est, (LandmarkFeatureMap, KernelExpansion)):
        return
    K = est.kernel_(X)
    if not np.allclose(Z @ Z.T, K, rtol=1e-6, atol=1e-8 * max(1.0, np.abs(K).max())):
        raise CellFailure("transform: Z Z^T differs from the kernel matrix")


def check_fit_quality(name: str, est, X, y, X_test, y_test) -> None:
    """The generic "correct fit": finite outputs on the test points and, for classifiers, the
    accuracy of :func:`check_accuracy`; a regressor's R^2 above 0.5; a transformer's
    ``Z Z^T = K`` on its training points."""
    k = kind(name)
    if k == "transformer":
        check_transform(est, X)
        return
    check_finite_outputs(est, X_test)
    if k == "classifier":
        check_accuracy(name, est, X_test, y_test)
    else:
        r2 = quiet(est.score, X_test, targets(name, np.zeros(len(X_test)), X_test))
        if not r2 > 0.5:
            raise CellFailure(f"R^2 {r2:.2f} <= 0.5 on a linear target")


def prepare(name: str, est, X) -> None:
    """Parameters that depend on the training data (LandmarkFeatureMap's landmarks)."""
    if isinstance(est, LandmarkFeatureMap):
        est.set_params(landmarks=np.asarray(X)[:8])


def fit_or_error(name: str, X, y, expect: Expect | None, est=None, **params):
    """Fit ``name`` (with ``params``) on (X, y): the fitted estimator, or ERROR when it raises
    an error that ``expect`` accepts; any other exception is a :class:`CellFailure`."""
    est = make(name) if est is None else est
    if params:
        est.set_params(**params)
    prepare(name, est, X)
    try:
        return fit(est, X, y)
    except Exception as exc:  # every exception is classified
        accept(exc, expect)
        return ERROR


def accept(exc: Exception, expect: Expect | None) -> None:
    """Return if ``exc`` is a clear error the case allows, else raise :class:`CellFailure`."""
    if isinstance(exc, (CellFailure, NotApplicable)):
        raise exc
    if expect is not None and isinstance(exc, expect.types):
        if re.search(expect.pattern, str(exc), flags=re.IGNORECASE | re.DOTALL):
            return
    raise CellFailure(f"{type(exc).__name__}: {str(exc)[:300]}") from exc


def call_or_error(fn, expect: Expect | None):
    """``fn()``, or ERROR for an accepted error."""
    try:
        return quiet(fn)
    except Exception as exc:  # every exception is classified
        accept(exc, expect)
        return ERROR


# -- cases ----------------------------------------------------------------------------------------

SCALE_ERROR = Expect(r"overflow|underflow|representable|float64")


def signature(name: str, est, X) -> np.ndarray:
    """What a rescaling of the data must leave alone: the predictions, or a kernel map's
    ``Z Z^T`` (its kernel between the points)."""
    if kind(name) == "transformer":
        Z = outputs(est, X)
        return Z @ Z.T
    return quiet(est.predict, X)


def same(name: str, a: np.ndarray, b: np.ndarray) -> bool:
    if kind(name) == "classifier":
        return bool(np.array_equal(a, b))
    return bool(np.allclose(a, b, rtol=1e-6, atol=1e-9))


@functools.cache
def unscaled_signature(name: str) -> np.ndarray:
    """:func:`signature` of the default fit on the unscaled blobs (what every scale must give)."""
    return signature(name, fit_or_error(name, X_TRAIN, targets(name, Y_TRAIN), None), X_TEST)


def scaled(factor: float) -> Callable[[str], str]:
    """X (training and test) multiplied by ``factor``: the same predictions (a kernel map:
    the same kernel) as on the unscaled data -- every default here is scale-invariant -- or a
    clear error naming the over- / underflow; never non-finite outputs."""

    def case(name: str) -> str:
        with np.errstate(all="ignore"):
            Xs, Xs_test = X_TRAIN * factor, X_TEST * factor
        y = targets(name, Y_TRAIN)
        est = fit_or_error(name, Xs, y, SCALE_ERROR)
        if est is ERROR:
            return ERROR
        out = call_or_error(lambda: outputs(est, Xs_test), SCALE_ERROR)
        if out is ERROR:
            return ERROR
        if not np.all(np.isfinite(out)):
            raise CellFailure("non-finite outputs (decision values / features)")
        got = signature(name, est, Xs_test)
        expected = unscaled_signature(name)
        if not same(name, got, expected):
            detail = ""
            if kind(name) == "classifier":
                detail = (
                    f" at {int((got != expected).sum())} of {len(got)} test points (classes "
                    f"predicted: {np.unique(got).tolist()})"
                )
            raise CellFailure(f"results differ from the unscaled data's{detail}")
        return PASS

    return case


NON_FINITE_X = Expect(r"Input (X )?contains (NaN|infinity)")


def non_finite_X(value: float, at_predict: bool = False) -> Callable[[str], str]:
    """X with one NaN / inf entry: refused by validation (at fit, or at predict)."""

    def case(name: str) -> str:
        X = X_TRAIN.copy()
        if not at_predict:
            X[3, 1] = value
            est = fit_or_error(name, X, targets(name, Y_TRAIN), NON_FINITE_X)
            if est is not ERROR:
                raise CellFailure("fit accepted a non-finite X")
            return ERROR
        est = fit_or_error(name, X, targets(name, Y_TRAIN), None)
        X_bad = X_TEST.copy()
        X_bad[2, 0] = value
        if call_or_error(lambda: outputs(est, X_bad), NON_FINITE_X) is not ERROR:
            raise CellFailure("predict / transform accepted a non-finite X")
        return ERROR

    return case


def refused(X, y_of: Callable[[str], np.ndarray | None], pattern: str) -> Callable[[str], str]:
    """Data that no estimator can fit: a clear error matching ``pattern``."""

    def case(name: str) -> str:
        est = fit_or_error(name, X, y_of(name), Expect(pattern))
        if est is not ERROR:
            raise CellFailure("fit accepted it")
        return ERROR

    return case


def wrong_n_features_at_predict(name: str) -> str:
    est = fit_or_error(name, X_TRAIN, targets(name, Y_TRAIN), None)
    expect = Expect(r"X has 4 features, but \w+ is expecting 3 features")
    if call_or_error(lambda: outputs(est, np.zeros((2, 4))), expect) is not ERROR:
        raise CellFailure("predict accepted 4 features")
    return ERROR


def mismatched_lengths(name: str) -> str:
    if kind(name) == "transformer":
        raise NotApplicable(f"{name} is a transformer: it takes no labels")
    return refused(X_TRAIN, lambda n: targets(n, Y_TRAIN)[:-1], "inconsistent numbers")(name)


def single_class(name: str) -> str:
    """Classifiers: 'at least 2 classes'; a regressor's constant target fits (a constant)."""
    k = kind(name)
    if k == "transformer":
        raise NotApplicable(f"{name} is a transformer: it takes no labels")
    if k == "regressor":
        y = np.full(len(X_TRAIN), 3.0)
        est = fit_or_error(name, X_TRAIN, y, None)
        pred = check_finite_outputs(est, X_TEST)
        if not np.allclose(pred, 3.0, atol=1e-6):
            raise CellFailure("a constant target is not predicted")
        return PASS
    expect = Expect(r"at least 2 (labeled )?(classes|samples)|1 class|one class")
    est = fit_or_error(name, X_TRAIN, np.zeros(len(X_TRAIN), int), expect)
    if est is not ERROR:
        raise CellFailure("fit accepted a single class")
    return ERROR


def one_labeled_point(name: str) -> str:
    """A single labeled point, the rest -1: semi-supervised models see one class and say so;
    supervised ones see two classes (-1 is a label to them) and fit."""
    if kind(name) != "classifier":
        raise NotApplicable(f"{name} is not a classifier")
    y = np.full(len(X_TRAIN), -1)
    y[0] = 1
    expect = Expect(r"at least 2 (labeled )?(classes|samples)|1 class|single sample")
    est = fit_or_error(name, X_TRAIN, y, expect)
    if est is ERROR:
        return ERROR
    if semi_supervised(name):
        raise CellFailure("a semi-supervised model fitted one labeled point")
    check_finite_outputs(est, X_TEST)
    return PASS


def one_label_per_class(name: str) -> str:
    """One labeled point per class (semi-supervised models): a fit with finite outputs that
    classifies the blobs, or a clear error saying a class has too few labeled points."""
    if not semi_supervised(name):
        raise NotApplicable(f"{name} is supervised: it has no unlabeled points")
    y = np.full(len(X_TRAIN), -1)
    y[:2] = Y_TRAIN[:2]
    expect = Expect(r"labeled (samples|points)|n_neighbors|at least 2")
    est = fit_or_error(name, X_TRAIN, y, expect)
    if est is ERROR:
        return ERROR
    check_fit_quality(name, est, X_TRAIN, Y_TRAIN, X_TEST, Y_TEST)
    return PASS


def too_few_points(name: str) -> str:
    """Five training points (3 + 2), fewer than a default kNN graph needs: a fit or an error
    naming n_neighbors / the number of points."""
    X, y = X_TRAIN[:5], Y_TRAIN[:5]
    expect = Expect(
        r"n_neighbors|n_samples|number of (points|samples)|fewer|at least|single sample"
    )
    est = fit_or_error(name, X, targets(name, y, X), expect)
    if est is ERROR:
        return ERROR
    # five points in 3-D: no accuracy is asked (MPM's and SLMM's class covariances are
    # singular there), only finite outputs and the classes it was given
    check_finite_outputs(est, X_TEST)
    if kind(name) == "classifier" and not set(quiet(est.predict, X_TEST)) <= {0, 1}:
        raise CellFailure("predicts labels it was not given")
    return PASS


def unseen_labels_at_score(name: str) -> str:
    """``score`` with labels the model never saw: the accuracy counts them as errors."""
    if kind(name) != "classifier":
        raise NotApplicable(f"{name} is not a classifier: it has no accuracy")
    est = fit_or_error(name, X_TRAIN, Y_TRAIN, None)
    y = Y_TEST.copy()
    y[:5] = 7
    expected = float(np.mean(quiet(est.predict, X_TEST) == y))
    got = quiet(est.score, X_TEST, y)
    if not math.isclose(got, expected):
        raise CellFailure(f"score {got} != accuracy {expected}")
    return PASS


MISSING_LABELS = Expect(r"None/NaN mark unlabeled (points|samples).*\w+ is supervised")


def missing_labels(dtype: str) -> Callable[[str], str]:
    """Labels with missing entries (None in string labels, NaN in float labels): unlabeled
    points to a semi-supervised model (a correct fit with the labeled classes only), a clear
    error from a supervised one."""

    def case(name: str) -> str:
        if kind(name) != "classifier":
            raise NotApplicable(f"{name} is not a classifier")
        if dtype == "str":
            y = np.array(["a", "b"], dtype=object)[Y_TRAIN]
            missing = None
        else:
            y = Y_TRAIN.astype(float)
            missing = np.nan
        y[5:40:3] = missing
        est = fit_or_error(name, X_TRAIN, y, None if semi_supervised(name) else MISSING_LABELS)
        if est is ERROR:
            return ERROR
        if not semi_supervised(name):
            raise CellFailure("a supervised model accepted missing labels")
        expected_classes = ["a", "b"] if dtype == "str" else [0.0, 1.0]
        if list(est.classes_) != expected_classes:
            raise CellFailure(f"classes_ {list(est.classes_)}")
        y_test = np.array(expected_classes, dtype=object)[Y_TEST]
        check_finite_outputs(est, X_TEST)
        check_accuracy(name, est, X_TEST, y_test)
        return PASS

    return case


def continuous_targets(name: str) -> str:
    if kind(name) != "classifier":
        raise NotApplicable(f"{name} is not a classifier: continuous targets are its input")
    return refused(X_TRAIN, lambda n: np.linspace(0, 1, len(X_TRAIN)), "Unknown label type")(name)


DEGENERATE = Expect(r"zero variance|all zero|identical|same point")


def degenerate_X(X: np.ndarray, linear: bool) -> Callable[[str], str]:
    """Zero-variance X (all zero, or one point repeated): estimators refuse it with a message
    that says so; a kernel map's features still reproduce the kernel (e.g. rank 0)."""

    def case(name: str) -> str:
        params = {}
        if linear and "kernel" in make(name).get_params(deep=False):
            params["kernel"] = "linear"
        y = targets(name, Y_TRAIN[: len(X)], np.ones((len(X), 2)))
        if kind(name) == "regressor":
            y = np.arange(len(X), dtype=float)
        est = fit_or_error(name, X, y, DEGENERATE, **params)
        if est is ERROR:
            return ERROR
        if kind(name) != "transformer":
            raise CellFailure("fit accepted zero-variance X")
        check_transform(est, X)
        return PASS

    return case


def constant_column(name: str) -> str:
    """An extra constant column: a correct fit (finite outputs, the blobs classified)."""
    X = np.c_[X_TRAIN, np.full(len(X_TRAIN), 3.0)]
    X_test = np.c_[X_TEST, np.full(len(X_TEST), 3.0)]
    est = fit_or_error(name, X, targets(name, Y_TRAIN), None)
    check_fit_quality(name, est, X, Y_TRAIN, X_test, Y_TEST)
    return PASS


def duplicated_rows(name: str) -> str:
    """Every training row twice: a correct fit."""
    X, y = np.r_[X_TRAIN, X_TRAIN], np.r_[Y_TRAIN, Y_TRAIN]
    est = fit_or_error(name, X, targets(name, y, X), None)
    check_fit_quality(name, est, X, y, X_TEST, Y_TEST)
    return PASS


def real_parameters(est) -> list[str]:
    """The parameters whose constraints accept real numbers (intervals over the reals)."""
    names = []
    for param, constraints in getattr(est, "_parameter_constraints", {}).items():
        for c in constraints:
            if (isinstance(c, Interval) and c.type is Real) or c is Real:
                names.append(param)
                break
    return names


def bad_parameter(value_of: Callable[[Interval | type], float | None]) -> Callable[[str], str]:
    """Every real-valued parameter set, one at a time, to a value outside its range (negative,
    NaN, inf): a ValueError naming the parameter, for each."""

    def case(name: str) -> str:
        base = make(name)
        tried = 0
        for param in real_parameters(base):
            constraint = next(
                c
                for c in base._parameter_constraints[param]
                if (isinstance(c, Interval) and c.type is Real) or c is Real
            )
            value = value_of(constraint)
            if value is None:
                continue
            tried += 1
            est = fit_or_error(
                name,
                X_TRAIN,
                targets(name, Y_TRAIN),
                Expect(rf"'{param}' parameter", (ValueError,)),
                **{param: value},
            )
            if est is not ERROR:
                raise CellFailure(f"{param}={value!r} accepted")
        if not tried:
            raise NotApplicable(f"{name} has none of the parameters this case tries")
        return ERROR

    return case


def _negative(c) -> float | None:
    if isinstance(c, Interval) and c.left is not None and c.left >= 0:
        return -1.0
    return None


def poly_coef0_nan(name: str) -> str:
    if "coef0" not in make(name).get_params(deep=False):
        raise NotApplicable(f"{name} has no coef0")
    est = fit_or_error(
        name,
        X_TRAIN,
        targets(name, Y_TRAIN),
        Expect(r"'coef0' parameter", (ValueError,)),
        kernel="poly",
        coef0=np.nan,
    )
    if est is not ERROR:
        raise CellFailure("coef0=nan accepted")
    return ERROR


NON_FINITE_KERNEL = Expect(r"kernel values are not finite")


def poly_scale_low_variance(name: str) -> str:
    """The poly kernel with gamma="scale" on data of variance ~1e-220 (gamma ~ 1e220): at that
    scale the same results as on unscaled data; on points of unit scale (kernel values
    ~(1e220)^3) finite outputs or a clear error -- never NaN decisions with a predicted class."""
    params = make(name).get_params(deep=False)
    if "kernel" not in params or "gamma" not in params:
        raise NotApplicable(f"{name} has no kernel width gamma")
    y = targets(name, Y_TRAIN)
    reference = fit_or_error(name, X_TRAIN, y, None, kernel="poly", gamma="scale")
    est = fit_or_error(name, X_TRAIN * 1e-110, y, None, kernel="poly", gamma="scale")
    if not same(name, signature(name, est, X_TEST * 1e-110), signature(name, reference, X_TEST)):
        raise CellFailure("results at scale 1e-110 differ from the unscaled data's")
    out = call_or_error(lambda: outputs(est, X_TEST), NON_FINITE_KERNEL)
    if out is not ERROR:
        if not np.all(np.isfinite(out)):
            raise CellFailure("non-finite outputs on unit-scale points")
        return PASS
    if kind(name) != "transformer":
        if call_or_error(lambda: est.predict(X_TEST), NON_FINITE_KERNEL) is not ERROR:
            raise CellFailure("predict returns results where decision_function refuses")
    return ERROR


HUGE_KERNEL = Expect(r"not finite|lower the kernel's gamma|not representable")


def poly_huge_kernel(name: str) -> str:
    """The poly kernel with gamma=1e30 (kernel values ~1e90, finite): finite outputs that
    classify the blobs about as the default does, or a clear error naming the kernel's size
    (libsvm's single-precision cache, a deformed kernel that rounding makes indefinite)."""
    params = make(name).get_params(deep=False)
    if "kernel" not in params or "gamma" not in params:
        raise NotApplicable(f"{name} has no kernel width gamma")
    y = targets(name, Y_TRAIN)
    est = fit_or_error(name, X_TRAIN, y, HUGE_KERNEL, kernel="poly", gamma=1e30)
    if est is ERROR:
        return ERROR
    out = call_or_error(lambda: outputs(est, X_TEST), HUGE_KERNEL)
    if out is ERROR:
        return ERROR
    if not np.all(np.isfinite(out)):
        raise CellFailure("non-finite outputs")
    return PASS


def shape_case(X, pattern: str) -> Callable[[str], str]:
    def case(name: str) -> str:
        y = targets(name, Y_TRAIN[: len(X)] if len(X) else np.zeros(0, int))
        return refused(X, lambda n: y, pattern)(name)

    return case


# -- duplicated points, small neighbourhoods ----------------------------------------------------

NEIGHBOURS_ERROR = Expect(
    r"n_neighbors|neighbou?rs?|duplicat|identical|distinct|connected|component|smallest class"
)


def graph_estimator(name: str) -> None:
    """Raise :class:`NotApplicable` unless ``name`` builds a kNN graph (has ``n_neighbors``)."""
    if "n_neighbors" not in make(name).get_params(deep=False):
        raise NotApplicable(f"{name} builds no kNN graph (no n_neighbors)")


def graph_targets(name: str, y_semi: np.ndarray, y_full: np.ndarray, X) -> np.ndarray:
    """A graph estimator's targets: ``y_semi`` (-1 unlabeled) for a semi-supervised classifier,
    ``y_full`` for a supervised one (-1 would be a class), the linear target of
    :func:`targets` for a regressor (NaN at the unlabeled points if it is semi-supervised)."""
    k = kind(name)
    if k == "classifier":
        return y_semi if semi_supervised(name) else y_full
    t = targets(name, y_full, X)
    if getattr(make(name), "_semi_supervised", False):
        t = t.copy()
        t[y_semi == -1] = np.nan
    return t


SINGULAR_OR_NEIGHBOURS = Expect(NEIGHBOURS_ERROR.pattern + "|singular")


def check_copies_labeled(name: str, est, X, copies, originals, labels) -> None:
    """The rows ``copies`` of X, exact duplicates of the labeled rows ``originals``, get those
    points' ``labels`` (``predict`` and, for a transductive model, ``transduction_``); a
    regressor predicts at each copy what it predicts at its original."""
    if kind(name) == "regressor":
        pred = quiet(est.predict, X)
        if not np.allclose(pred[copies], pred[originals], rtol=1e-9, atol=1e-12):
            raise CellFailure("different predictions at identical rows")
        return
    got = quiet(est.predict, X[copies])
    if not np.array_equal(got, labels):
        raise CellFailure(
            f"{int((got != labels).sum())} of {len(copies)} exact copies of labeled points "
            f"predicted another label ({np.unique(got).tolist()} for {np.unique(labels).tolist()})"
        )
    transduction = getattr(est, "transduction_", None)
    if transduction is not None and not np.array_equal(np.asarray(transduction)[copies], labels):
        raise CellFailure("transduction_ gives exact copies of labeled points another label")


CROWD = np.vstack(
    [np.zeros((50, 2)), [[3.17145527, -0.84518446], [-33.79770916, 6.28888153], [-31.0, 13.3]]]
)
"""53 points in 2-D: 50 copies of the origin and 3 others, two of them far off (self-tuning
weights join that pair to the copies by edges of ~1e-18 next to weights near 1: the shape that
made the Laplace systems of GFHF / Poisson learning numerically singular)."""
CROWD_NEW = np.array([[0.0, 0.0], [0.5, 0.5], [3.0, -1.0], [-32.0, 10.0], [10.0, 10.0]])


def crowded_point(n_neighbors: int | None, both_labels: bool = False) -> Callable[[str], str]:
    """:data:`CROWD` (50 of 53 points at one location) for the graph estimators (those with
    ``n_neighbors``; set to ``n_neighbors`` when given).

    One class among the copies (copies 7 and 30 labeled 0, the point (3.2, -0.8) labeled 1,
    the rest unlabeled; a supervised model gets 0 for every copy and 1 for the others): a
    correct fit -- finite outputs, and all 50 copies predicted 0 (``predict`` and a
    transductive model's ``transduction_``) -- or a clear error naming the neighbours /
    duplicates / the singular system.  ``both_labels``: copies 7 and 30 labeled 0 and 1 (a
    supervised model: every other row 0 / 1), the rest unlabeled: no label is right for the
    copies, so a fit must only give finite outputs, keep the given labels in
    ``transduction_`` (GFHF, Poisson learning) and predict the two classes only."""

    def case(name: str) -> str:
        graph_estimator(name)
        X = CROWD
        y_semi = np.full(53, -1)
        if both_labels:
            y_semi[[7, 30]] = [0, 1]
            y_full = np.arange(53) % 2
        else:
            y_semi[[7, 30, 50]] = [0, 0, 1]
            y_full = np.r_[np.zeros(50, int), np.ones(3, int)]
        params = {} if n_neighbors is None else {"n_neighbors": n_neighbors}
        y = graph_targets(name, y_semi, y_full, X)
        est = fit_or_error(name, X, y, SINGULAR_OR_NEIGHBOURS, **params)
        if est is ERROR:
            return ERROR
        check_finite_outputs(est, X)
        check_finite_outputs(est, CROWD_NEW)
        if not both_labels:
            check_copies_labeled(name, est, X, np.arange(50), np.full(50, 7), np.zeros(50, int))
        elif kind(name) == "classifier":
            if not set(quiet(est.predict, np.r_[X, CROWD_NEW]).tolist()) <= {0, 1}:
                raise CellFailure("predicts labels it was not given")
            # graph inference (GFHF, Poisson learning) keeps the given labels in transduction_
            # (the other models' transduction_ is their prediction at the training points)
            keeps_labels = isinstance(est, GraphInferenceClassifier)
            if keeps_labels and list(est.transduction_[[7, 30]]) != [0, 1]:
                raise CellFailure("transduction_ changes the given labels")
        return PASS

    return case


def copies_of_points(n_neighbors: int) -> Callable[[str], str]:
    """The 40 training blobs plus an unlabeled copy of 20 labeled points and of 5 unlabeled
    ones (points 20-29 unlabeled; supervised models get every label), with ``n_neighbors``
    (1 or 2: each copy's nearest neighbour is its twin).  Graph estimators: a correct fit --
    finite outputs, the copies of labeled points predicted with their labels, the blobs
    classified -- or a clear error naming the neighbours / duplicates."""

    def case(name: str) -> str:
        graph_estimator(name)
        X = np.r_[X_TRAIN, X_TRAIN[:20], X_TRAIN[20:25]]
        y_full = np.r_[Y_TRAIN, Y_TRAIN[:20], Y_TRAIN[20:25]]
        y_semi = y_full.copy()
        y_semi[20:30] = -1
        y_semi[40:] = -1
        y = graph_targets(name, y_semi, y_full, X)
        est = fit_or_error(name, X, y, NEIGHBOURS_ERROR, n_neighbors=n_neighbors)
        if est is ERROR:
            return ERROR
        check_fit_quality(name, est, X, y_full, X_TEST, Y_TEST)
        check_copies_labeled(name, est, X, np.arange(40, 60), np.arange(20), Y_TRAIN[:20])
        return PASS

    return case


def graph_gamma(name: str) -> None:
    """Raise :class:`NotApplicable` unless the default kernel width is ``gamma="graph"``."""
    if make(name).get_params(deep=False).get("gamma") != "graph":
        raise NotApplicable(f"the default kernel width of {name} is not gamma='graph'")


def kernel_width(est) -> float:
    """The RBF width ``gamma_`` of a fitted model's feature map (read through a wrapper)."""
    fm = est.feature_map_
    gamma = getattr(fm, "gamma_", getattr(getattr(fm, "base", None), "gamma_", None))
    if gamma is None:
        raise CellFailure("no fitted kernel width (feature_map_.gamma_)")
    return float(gamma)


def graph_gamma_duplicated(name: str) -> str:
    """``gamma="graph"`` (the kernel width from the mean squared kNN distance) with every
    training row twice, at the default ``n_neighbors`` and at 1: a correct fit whose width is
    positive and the one of the rows without their copies (copies count once), never
    "the mean squared distance ... is 0"."""
    graph_gamma(name)
    X, y = np.r_[X_TRAIN, X_TRAIN], np.r_[Y_TRAIN, Y_TRAIN]
    for n_neighbors in (make(name).get_params()["n_neighbors"], 1):
        est = fit_or_error(name, X, y, None, n_neighbors=n_neighbors)
        gamma = kernel_width(est)
        single = kernel_width(fit_or_error(name, X_TRAIN, Y_TRAIN, None, n_neighbors=n_neighbors))
        if not (math.isfinite(gamma) and gamma > 0):
            raise CellFailure(f"kernel width {gamma} (n_neighbors={n_neighbors})")
        if not math.isclose(gamma, single, rel_tol=1e-9):
            raise CellFailure(
                f"kernel width {gamma:.6g} on the doubled rows, {single:.6g} without the copies "
                f"(n_neighbors={n_neighbors})"
            )
        check_fit_quality(name, est, X, y, X_TEST, Y_TEST)
    return PASS


DEGENERATE_OR_DISTINCT = Expect(r"zero variance|all zero|identical|same point|distinct points")


def graph_gamma_identical(name: str) -> str:
    """``gamma="graph"`` with all 40 rows identical (no neighbour distance to read a width
    from), at the default ``n_neighbors`` and at 1: a clear error that says the points are
    identical."""
    graph_gamma(name)
    X = np.tile(X_TRAIN[0], (40, 1))
    for n_neighbors in (make(name).get_params()["n_neighbors"], 1):
        est = fit_or_error(name, X, Y_TRAIN, DEGENERATE_OR_DISTINCT, n_neighbors=n_neighbors)
        if est is not ERROR:
            raise CellFailure(f"fit accepted identical rows (n_neighbors={n_neighbors})")
    return ERROR


# -- feature names, -1 as a class, pickling, memory ------------------------------------------------


def data_frame(values, columns):
    """A pandas DataFrame of ``values`` with these column names."""
    import pandas as pd

    return pd.DataFrame(np.asarray(values), columns=list(columns))


def select_columns(frame, columns):
    """The frame's ``columns``, in that order."""
    return frame[list(columns)]


FEATURE_NAMES = Expect(r"feature names", (ValueError,))
PREDICT_METHODS = ("predict", "decision_function", "predict_proba", "transform")


def feature_names_reordered(name: str) -> str:
    """Fitted on a data frame with named columns: ``feature_names_in_`` are those names, the
    same frame at predict gives the results of its values as an array, and a frame with the
    same columns in another order is refused by every predict method with scikit-learn's
    ValueError on the feature names (it must not answer on the permuted features)."""
    columns = ["f0", "f1", "f2"]
    frame = data_frame(X_TRAIN, columns)
    test = data_frame(X_TEST, columns)
    est = fit_or_error(name, frame, targets(name, Y_TRAIN), None)
    names = getattr(est, "feature_names_in_", None)
    if names is None or list(names) != columns:
        raise CellFailure(f"feature_names_in_ is {names!r}, not the frame's columns")
    arr = np.asarray(test, dtype=float)
    reordered = select_columns(test, columns[::-1])
    for method in PREDICT_METHODS:
        if not hasattr(est, method):
            continue
        fn = getattr(est, method)
        got, expected = np.asarray(quiet(fn, test)), np.asarray(quiet(fn, arr))
        if method == "predict" and kind(name) == "classifier":
            ok = np.array_equal(got, expected)
        else:
            ok = np.allclose(got, expected, rtol=1e-9, atol=1e-12)
        if not ok:
            raise CellFailure(f"{method} on the frame differs from {method} on its values")
        if call_or_error(lambda fn=fn: fn(reordered), FEATURE_NAMES) is not ERROR:
            raise CellFailure(f"{method} accepted the columns in another order")
    return ERROR


MINUS_ONE_IS_UNLABELED = Expect(r"-1.*unlabeled|unlabeled.*-1", (ValueError,))


def minus_one_as_class(name: str) -> str:
    """Labels -1 / +1, every point labeled: to a semi-supervised classifier (or a CV search
    of one) -1 marks unlabeled points, so it sees one class and must say so up front, naming
    -1 and unlabeled; a supervised one fits the two classes (``classes_`` [-1, 1]) correctly."""
    if kind(name) != "classifier":
        raise NotApplicable(f"{name} is not a classifier")
    y, y_test = 2 * Y_TRAIN - 1, 2 * Y_TEST - 1
    est = fit_or_error(name, X_TRAIN, y, MINUS_ONE_IS_UNLABELED if semi_supervised(name) else None)
    if est is ERROR:
        return ERROR
    if semi_supervised(name):
        raise CellFailure("a semi-supervised model fitted -1 / +1 labels")
    if list(est.classes_) != [-1, 1]:
        raise CellFailure(f"classes_ {list(est.classes_)}")
    check_finite_outputs(est, X_TEST)
    check_accuracy(name, est, X_TEST, y_test)
    return PASS


def pickle_round_trip(name: str) -> str:
    """A fitted estimator pickled and unpickled gives bit-identical outputs (decision values,
    predictions) on new points: ``np.array_equal``, not merely close.  The kernel maps are
    the exception by design: ``KernelFeatureMap.__getstate__`` drops the Cholesky factor,
    which ``transform`` rebuilds from ``basis_`` (equal up to rounding), so their features
    are compared to a relative 1e-9."""
    import pickle

    est = fit_or_error(name, X_TRAIN, targets(name, Y_TRAIN), None)
    copy = pickle.loads(pickle.dumps(est))
    for method in PREDICT_METHODS:
        if not hasattr(est, method):
            continue
        a = np.asarray(quiet(getattr(est, method), X_TEST))
        b = np.asarray(quiet(getattr(copy, method), X_TEST))
        if kind(name) == "transformer":
            same_output = np.allclose(a, b, rtol=1e-9, atol=1e-12 * max(1.0, np.abs(a).max()))
        else:
            same_output = np.array_equal(a, b)
        if not same_output:
            detail = ""
            if a.dtype.kind == "f":
                detail = f" (max difference {np.max(np.abs(a - b)):.2g})"
            raise CellFailure(f"{method} after a pickle round trip differs{detail}")
    return PASS


DENSE_MEMORY = Expect(
    r"\d[\d,]* x \d[\d,]*.*\d GiB.*available.*solver='(nystroem|cg|primal)'",
    (MemoryError, ValueError),
)


def dense_out_of_memory(name: str) -> str:
    """``solver="dense"`` with the RBF kernel on a machine with less memory available than
    the n x n Gram matrix needs (``structreg._resources.available_memory`` set to 1 KiB, the
    working-memory budget below the matrix's size): a clear error before anything is
    allocated, naming the matrix's size and a scalable solver (``solver='nystroem'`` /
    ``'cg'`` / ``'primal'``)."""
    from structreg import _resources

    constraints = getattr(make(name), "_parameter_constraints", {}).get("solver", [])
    if not any("dense" in getattr(c, "options", ()) for c in constraints):
        raise NotApplicable(f"{name} has no solver='dense'")
    # the RBF kernel: the linear one of DRGV / DRLSC / SSDRWang solves on the 3 features
    params = {"solver": "dense", "kernel": "rbf"}
    saved = _resources.available_memory
    _resources.available_memory = lambda: 1024
    try:
        with structreg.config_context(working_memory=1 / 1024):
            est = fit_or_error(name, X_TRAIN, targets(name, Y_TRAIN), DENSE_MEMORY, **params)
    finally:
        _resources.available_memory = saved
    if est is not ERROR:
        raise CellFailure("solver='dense' fitted with 1 KiB of memory available")
    return ERROR


_LARGEST = np.abs(X_ALL).max()
EDGE_HIGH = 0.5 * math.sqrt(np.finfo(float).max / (4 * X_ALL.shape[1])) / _LARGEST
"""The factor that puts max|X| at half the largest value whose squared distances are finite
(about 1e153): what validation accepts, and where sums of squares overflow unless rescaled."""
EDGE_LOW = 2.0 * math.sqrt(np.finfo(float).tiny) / _LARGEST
"""The factor that puts max|X| at twice the smallest value whose square is a normal number
(about 1e-154)."""

CASES: dict[str, Callable[[str], str]] = {
    "X * 1e300": scaled(1e300),
    f"X * {EDGE_HIGH:.0e} (largest accepted)": scaled(EDGE_HIGH),
    "X * 1e150": scaled(1e150),
    "X * 1e-8": scaled(1e-8),
    "X * 1e-150": scaled(1e-150),
    f"X * {EDGE_LOW:.0e} (smallest accepted)": scaled(EDGE_LOW),
    "X * 1e-300": scaled(1e-300),
    "NaN in X": non_finite_X(np.nan),
    "inf in X": non_finite_X(np.inf),
    "NaN in X at predict": non_finite_X(np.nan, at_predict=True),
    "1-D X": shape_case(X_TRAIN[:, 0], r"Expected 2D array"),
    "3-D X": shape_case(X_TRAIN[:, :, None], r"dim 3|Expected 2D array|3-dimensional"),
    "empty X": shape_case(np.zeros((0, 3)), r"0 sample"),
    "no features": shape_case(np.zeros((40, 0)), r"0 feature"),
    "wrong n_features at predict": wrong_n_features_at_predict,
    "X, y lengths differ": mismatched_lengths,
    "single class": single_class,
    "one labeled point": one_labeled_point,
    "one label per class": one_label_per_class,
    "5 points (graph needs more)": too_few_points,
    "unseen labels at score": unseen_labels_at_score,
    "string labels with None": missing_labels("str"),
    "float labels with NaN": missing_labels("float"),
    "continuous targets": continuous_targets,
    "all-zero X, n <= d, linear": degenerate_X(np.zeros((10, 12)), linear=True),
    "all-zero X": degenerate_X(np.zeros((40, 3)), linear=False),
    "one point repeated": degenerate_X(np.tile([[1.0, -2.0, 0.5]], (40, 1)), linear=False),
    "constant column": constant_column,
    "duplicated rows": duplicated_rows,
    "negative parameters": bad_parameter(_negative),
    "NaN parameters": bad_parameter(lambda c: np.nan),
    "inf parameters": bad_parameter(lambda c: np.inf),
    "poly, coef0=nan": poly_coef0_nan,
    "poly, gamma='scale', variance 1e-220": poly_scale_low_variance,
    "poly, gamma=1e30 (kernel ~1e90)": poly_huge_kernel,
    "53 points, 50 identical": crowded_point(None),
    "53 points, 50 identical, n_neighbors=1": crowded_point(1),
    "53 points, 50 identical, n_neighbors=2": crowded_point(2),
    "53 points, 50 identical, both labels among them": crowded_point(None, both_labels=True),
    "53 points, 50 identical, both labels, n_neighbors=1": crowded_point(1, both_labels=True),
    "copies of points, n_neighbors=1": copies_of_points(1),
    "copies of points, n_neighbors=2": copies_of_points(2),
    "gamma='graph', every row twice": graph_gamma_duplicated,
    "gamma='graph', all rows identical": graph_gamma_identical,
    "data frame, columns reordered at predict": feature_names_reordered,
    "labels -1 / +1, all labeled": minus_one_as_class,
    "pickle round trip": pickle_round_trip,
    "solver='dense', too little memory": dense_out_of_memory,
}


def run_cell(case: str, name: str) -> tuple[str, str]:
    """``(outcome, detail)`` of one cell: PASS, ERROR, NA or FAIL (with the reason)."""
    try:
        return CASES[case](name), ""
    except NotApplicable as exc:
        return NA, str(exc)
    except CellFailure as exc:
        return FAIL, str(exc)
    except Exception as exc:  # a crash of the case itself is a failure too
        return FAIL, f"{type(exc).__name__}: {str(exc)[:300]}"
