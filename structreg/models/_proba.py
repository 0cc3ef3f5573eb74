"""Class probabilities of the structural classifiers: temperature scaling on out-of-fold outputs.

``predict_proba(x) = softmax(a F(x))`` over the decision values ``F`` (two classes:
``sigmoid(a f(x))``) with one ``a > 0`` fitted by 1-D minimisation of the log loss of the
labeled training samples' *out-of-fold* outputs (never their in-sample fitted values; the
unlabeled samples never enter it).  A positive scale keeps the ranking of the outputs, so
the argmax of ``predict_proba`` is ``predict`` (sign for two classes, argmax of F otherwise).

Where the out-of-fold outputs come from:

* square loss (direct solvers): the fitted model is a linear smoother of the labeled targets,
  so the exact leave-one-out outputs ``(f_i - h_i y_i) / (1 - h_i)`` follow from the leverages
  ``h_i`` of the normal equations, taken from the fit's own factorisation
  (``SquareLossPath.solve(leverage_rows=...)``; ``solve_bordered`` for the bordered LS-SVM /
  DRLSC system) at the cost of one triangular solve per calibrating sample (at most
  :data:`LOO_MAX_SAMPLES` of them);
* hinge loss with ``probability=True``: internal stratified 5-fold cross-validation of the
  labeled samples (as :class:`sklearn.svm.SVC` with ``probability=True``), five more fits.

The leave-one-out output of sample i is that of the same objective without sample i's loss
term: the feature map, the graph and the other samples' loss weights stay as they are (a
semi-supervised model: as if sample i were unlabeled; a supervised kernel model without
label-reading penalties: as if it were removed, with the ridge rescaled by ``l / (l - 1)``
for the ``1/l``-weighted losses).  Penalties built from the labels (class graphs and scatter
of DRLSC, DiscriminativeRLS, SSDRWu, DALapRLSC) keep the sample's label.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_softmax, softmax
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold

from .._compat import safe_split

N_SPLITS = 5
"""Folds of the internal cross-validation of the hinge loss (``probability=True``)."""

LOO_MAX_SAMPLES = 256
"""Labeled samples whose leave-one-out outputs calibrate a square-loss model (a stratified
subsample, drawn with a fixed seed, when there are more): the scale is one number, and a
supervised fit would otherwise pay one triangular solve per training sample (see
``benchmarks/proba_overhead.py``)."""

CG_REASON = (
    "solver_='cg' solves iteratively and keeps no factorisation (solver='dense' or "
    "'nystroem' factor the system)"
)
"""Why an iterative square-loss fit has no ``predict_proba``."""


def _missing(why: str) -> str:
    return (
        f"{why}, so it has no exact leave-one-out outputs to calibrate probabilities on; "
        "wrap it in sklearn.calibration.CalibratedClassifierCV for probabilities calibrated "
        "by cross-validation"
    )


class TemperatureScaling:
    """``softmax(scale_ * F)`` (two classes: ``sigmoid(scale_ * f)``), ``scale_ > 0`` fitted on
    out-of-fold outputs.

    ``scale_`` minimises the mean cross-entropy against Platt's smoothed targets (a sample of
    class c counts ``(n_c + 1) / (n_c + 2)`` for c and ``1 / (n_c + 2)`` spread over the other
    classes), which keeps it finite on separable outputs; the loss is convex in the scale,
    so the root of its derivative is found by bracketing (Brent).  The scale is at least
    ``sqrt(eps) / max|F|``, so probabilities never become exactly uniform where ``F`` is not.

    Parameters
    ----------
    method : str
        Where the outputs come from (``"leave-one-out"`` or ``"5-fold"``), kept as ``method_``.

    Attributes
    ----------
    scale_ : float
        The fitted ``a`` (the inverse temperature).
    method_ : str
    decision_values_ : ndarray of shape (n_calibration,) or (n_calibration, n_classes)
        The out-of-fold outputs it was fitted on (NaN rows where undefined, left out).
    sample_indices_ : ndarray of shape (n_calibration,)
        The training samples they belong to (labeled ones, in training order).
    """

    def __init__(self, method: str):
        self.method = method

    def fit(
        self, decision: np.ndarray, codes: np.ndarray, n_classes: int, indices: np.ndarray
    ) -> TemperatureScaling:
        """Fit ``scale_`` on the out-of-fold ``decision`` values of the training samples
        ``indices``, of classes ``codes``."""
        self.method_ = self.method
        self.decision_values_ = decision
        self.sample_indices_ = indices
        L = _logits(decision)
        keep = np.isfinite(L).all(axis=1)
        L, codes = L[keep], codes[keep]
        if len(codes) == 0:
            raise ValueError("no finite out-of-fold output to calibrate on")
        L = L - L.mean(axis=1, keepdims=True)
        counts = np.bincount(codes, minlength=n_classes)[codes]
        T = np.empty_like(L)
        T[:] = (1.0 / (counts + 2.0) / max(n_classes - 1, 1))[:, None]
        T[np.arange(len(codes)), codes] = (counts + 1.0) / (counts + 2.0)
        top = float(np.abs(L).max(initial=0.0))
        if top == 0.0:  # constant outputs: every scale gives the uniform distribution
            self.scale_ = 1.0
            return self

        def slope(a: float) -> float:  # d/da of the mean cross-entropy, increasing in a
            E = np.exp(a * (L - L.max(axis=1, keepdims=True)))
            return float(np.sum((E / E.sum(axis=1, keepdims=True) - T) * L)) / len(L)

        low, high = np.sqrt(np.finfo(float).eps) / top, 1.0 / top
        if slope(low) >= 0:
            self.scale_ = float(low)
            return self
        while slope(high) < 0 and high < 1e12 / top:
            high *= 2.0
        self.scale_ = float(brentq(slope, low, high, rtol=1e-10)) if slope(high) >= 0 else high
        return self

    def predict_proba(self, decision: np.ndarray) -> np.ndarray:
        """``softmax(scale_ * F)`` of decision values, columns in ``classes_`` order."""
        L = _logits(decision)
        return _prefer_argmax(softmax(self.scale_ * L, axis=1), L)

    def predict_log_proba(self, decision: np.ndarray) -> np.ndarray:
        """The logarithm of :meth:`predict_proba`, computed directly (no underflow)."""
        L = _logits(decision)
        return _prefer_argmax(log_softmax(self.scale_ * L, axis=1), L)


def _prefer_argmax(P: np.ndarray, L: np.ndarray) -> np.ndarray:
    """``P`` with the class of the largest logit (``predict``'s) one unit in the last place
    above the rest where rounding made them equal (decision values far from the data, e.g.
    ``|a f| < 1e-16``), so that the argmax of the probabilities is always ``predict``."""
    winner = L.argmax(axis=1)
    rows = np.flatnonzero(P.argmax(axis=1) != winner)
    if len(rows):
        P[rows, winner[rows]] = np.nextafter(P[rows].max(axis=1), np.inf)
    return P


def _logits(decision: np.ndarray) -> np.ndarray:
    """Two classes' decision ``f`` as the logits ``[0, f]``; (n, c) outputs as they are."""
    decision = np.asarray(decision, dtype=float)
    if decision.ndim == 1:
        return np.column_stack([np.zeros_like(decision), decision])
    return decision


def calibration_rows(y_codes: np.ndarray, labeled: np.ndarray) -> np.ndarray:
    """The labeled samples whose leave-one-out outputs calibrate the model: all of them up to
    :data:`LOO_MAX_SAMPLES`, else a stratified subsample drawn with a fixed seed (each class
    its share of that number rounded down, at least one sample)."""
    rows = np.flatnonzero(labeled)
    if len(rows) <= LOO_MAX_SAMPLES:
        return rows
    rng = np.random.default_rng(0)
    codes = y_codes[rows]
    counts = np.bincount(codes)
    share = np.maximum(1, np.floor(LOO_MAX_SAMPLES * counts / len(rows)).astype(int))
    picked = [
        rng.choice(rows[codes == c], share[c], replace=False)
        for c in range(len(counts))
        if counts[c]
    ]
    return np.sort(np.concatenate(picked))


def calibrate(model, X, y, unlabeled, data) -> None:
    """Compose ``model.calibrator_`` at the end of its fit, or record why it has none.

    ``data``: the :class:`~structreg.models.problem.Problem` of the fit (its ``loo`` for the
    square losses).  Hinge loss: internal cross-validation when ``probability=True``.
    """
    n_classes = len(model.classes_)
    if model._loss() == "hinge":
        if not getattr(model, "probability", False):
            return
        decision, method = cross_fitted_decisions(model, X, y, unlabeled, data), "5-fold"
        codes = data.y_codes[data.labeled]
    elif data.loo is None:
        model._proba_missing = _missing(data.loo_missing)
        return
    else:
        decision, method = data.loo, "leave-one-out"
        decision = decision.ravel() if decision.shape[1] == 1 else decision
        codes = data.y_codes[data.loo_rows]
    rows = data.loo_rows if method == "leave-one-out" else np.flatnonzero(data.labeled)
    try:
        model.calibrator_ = TemperatureScaling(method).fit(decision, codes, n_classes, rows)
    except ValueError:  # every leave-one-out output undefined
        model._proba_missing = _missing("every labeled sample has leverage 1")


def cross_fitted_decisions(model, X, y, unlabeled, data) -> np.ndarray:
    """Out-of-fold decision values of the labeled samples, by stratified
    :data:`N_SPLITS`-fold cross-validation over them (fewer folds when a class has fewer
    labeled samples): a semi-supervised model keeps every sample and sees the held-out
    ones as unlabeled, a supervised one is refitted without them."""
    labeled = data.labeled
    rows = np.flatnonzero(labeled)
    codes = data.y_codes[rows]
    smallest = int(np.bincount(codes).min())
    if smallest < 2:
        raise ValueError(
            f"{type(model).__name__}(probability=True) calibrates its probabilities by "
            f"cross-validation over the labeled samples and needs at least 2 labeled samples "
            f"per class; class {model.classes_[np.argmin(np.bincount(codes))]!r} has {smallest}"
        )
    folds = StratifiedKFold(min(N_SPLITS, smallest), shuffle=True, random_state=0)
    sub = clone(model).set_params(probability=False)
    decision = None
    for _, test in folds.split(rows, codes):
        held = rows[test]
        if model._semi_supervised:  # the graph keeps every point; held-out ones unlabeled
            mask = ~labeled
            mask[held] = True
            fold = sub.fit(X, y, unlabeled=mask)
            X_test = X[held]
        else:
            kept = np.setdiff1d(np.arange(len(labeled)), held)
            X_train, y_train = safe_split(model, X, y, kept)
            mask = None if unlabeled is None else np.asarray(unlabeled)[kept]
            fold = sub.fit(X_train, y_train, unlabeled=mask)
            X_test = safe_split(model, X, y, held, kept)[0]
        values = fold.decision_function(X_test)
        if decision is None:
            decision = np.full((len(rows),) + values.shape[1:], np.nan)
        decision[test] = values
    return decision


def check_available(model) -> bool:
    """The ``available_if`` test of ``predict_proba``: raises AttributeError saying why a
    model has none (a hinge loss without ``probability=True``, a fit without out-of-fold
    outputs)."""
    name = type(model).__name__
    if model._loss() == "hinge" and not getattr(model, "probability", False):
        raise AttributeError(
            f"{name}: predict_proba is not available when probability=False; set "
            "probability=True to calibrate the hinge loss's outputs on internal 5-fold "
            "cross-validation during fit (as SVC(probability=True))"
        )
    if model._loss() != "hinge" and getattr(model, "solver", None) == "cg":
        raise AttributeError(f"{name} has no predict_proba: {_missing(CG_REASON)}")
    if "loss_" in vars(model) and "calibrator_" not in vars(model):
        why = vars(model).get(
            "_proba_missing",
            "this model was not fitted by its own fit (the grid fits of fit_path and "
            "StructuralClassifierCV share one factorisation and keep no out-of-fold outputs); "
            "refit it with fit(X, y) to get predict_proba",
        )
        raise AttributeError(f"{name} has no predict_proba: {why}")
    return True
