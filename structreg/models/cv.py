"""Cross-validated estimators that share kernels, graphs and factorisations across the grid.

:class:`StructuralClassifierCV` is ``GridSearchCV`` for structreg's models: the same
``best_params_``, ``best_score_``, ``cv_results_`` and refitted ``best_estimator_`` as
``GridSearchCV(estimator, param_grid, cv=cv, scoring=scoring)`` on the same folds, but inside
each fold the grid is fitted by :func:`~structreg.models.fit_path`: the labels, feature map,
kNN graphs and penalty matrices are built once per group of structure parameters, the normal
equations assembled once, and every ridge of a penalty-weight setting comes from one
eigendecomposition (as scikit-learn's ``RidgeCV`` does for its alphas).  With the model's own
score, a group's points are scored from their decision values on the test fold, computed
straight from the group's solutions (one product with the test kernel section per group).

:class:`LapRLSCCV`, :class:`DiscriminativeRLSCV` and :class:`DRLSCCV` are the same class with
a default model and grid; one implementation serves every square-loss preset (a new model
gets a CV version by naming its weight parameters in ``_path_params``).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np
from joblib import Parallel, delayed
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.exceptions import FitFailedWarning
from sklearn.metrics import check_scoring
from sklearn.model_selection import StratifiedKFold
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._compat import check_feature_names, get_feature_names, label_array, safe_split
from ..exceptions import NonConvexObjectiveWarning
from ._base import (
    StructuralClassifier,
    blas_threads_for,
    check_no_missing_labels,
    check_training_X,
    is_unlabeled,
    missing_as_unlabeled,
)
from ._misuse import warn_if_folds_test_unlabeled
from ._splits import SemiSupervisedKFold
from .discriminative import DRLSC, DiscriminativeRLS
from .manifold import LapRLSC
from .path import _shares_test_features, candidate_list, decision_values, grid_outputs

__all__ = ["DRLSCCV", "DiscriminativeRLSCV", "LapRLSCCV", "StructuralClassifierCV"]

DEFAULT_FOLDS = 5
"""Folds of ``cv=None`` (fewer when a class has fewer labeled samples)."""


def _fold_scores(estimator, X, y, train, test, candidates, scorer, error_score):
    """Fit the grid on one fold (shared work) and score each point on the test part; small
    folds run on one BLAS thread, as ``fit`` does.  With the model's own score, the points of
    a shared square-loss group are scored from their decision values on the test part, got
    straight from the group's solutions (no fitted estimator per point)."""
    errors = "raise" if isinstance(error_score, str) and error_score == "raise" else "return"
    if estimator.get_params(deep=False).get("probability"):  # folds score decision values:
        estimator = clone(estimator).set_params(probability=False)  # no calibration fits
    with blas_threads_for(len(train)), warnings.catch_warnings():
        warnings.simplefilter("ignore", NonConvexObjectiveWarning)
        t0 = time.perf_counter()
        X_train, y_train = safe_split(estimator, X, y, train)
        X_test, y_test = safe_split(estimator, X, y, test, train)  # K[test][:, train]
        info: dict = {}
        fits = grid_outputs(
            estimator,
            X_train,
            y_train,
            candidates,
            warn=False,
            errors=errors,
            X_eval=X_test if scorer is None else None,
            info=info,
        )
        fit_time = time.perf_counter() - t0
        t0 = time.perf_counter()
        ok = [i for i, f in enumerate(fits) if not isinstance(f, Exception)]
        scores = np.full(len(fits), np.nan)
        if len(ok) < len(fits):  # only with errors="return": error_score is a number
            scores[[i for i in range(len(fits)) if i not in ok]] = error_score
        decided = [i for i in ok if isinstance(fits[i], np.ndarray)]  # decision values
        shared = [i for i in ok if scorer is None and _shares_test_features(fits[i])]
        values = decision_values([fits[i] for i in shared], X_test)  # (from shared sections)
        if decided or shared:  # the model's own score: accuracy on the labeled test points
            keep = estimator._labeled_mask(y_test, None)
            classes = _classes(fits, info)
            pairs = [(i, fits[i]) for i in decided] + list(zip(shared, values, strict=True))
            for i, F in pairs:
                scores[i] = np.mean(classes[estimator._decide(F)][keep] == y_test[keep])
        for i in set(ok) - set(shared) - set(decided):
            scores[i] = (scorer or check_scoring(fits[i]))(fits[i], X_test, y_test)
        score_time = time.perf_counter() - t0
    failures = [
        f"{candidates[i]}: {type(f).__name__}: {f}"
        for i, f in enumerate(fits)
        if isinstance(f, Exception)
    ]
    return scores, np.array(info["convex"]), fit_time, score_time, failures


def _classes(fits: list, info: dict) -> np.ndarray:
    """The ``classes_`` of the fold's fits (every point of a fold sees the same labels): the
    shared groups' (whose points have decision values only), else a fitted estimator's."""
    if "classes" in info:
        return info["classes"]
    return next(f.classes_ for f in fits if hasattr(f, "classes_"))


def _needs_probabilities(scorer) -> bool:
    """Whether a scikit-learn scorer reads only ``predict_proba`` / ``predict_log_proba``."""
    method = getattr(scorer, "_response_method", None)
    methods = (method,) if isinstance(method, str) else tuple(method or ())
    return bool(methods) and set(methods) <= {"predict_proba", "predict_log_proba"}


def _model_has(name: str):
    """``available_if`` test of a search: its refitted model (before fit: its model) has
    ``name`` (the model's own AttributeError, which says why not, propagates)."""

    def check(search) -> bool:
        if "best_estimator_" in vars(search):
            getattr(search.best_estimator_, name)
        else:
            getattr(search._resolved()[0], name)
        return True

    return check


class StructuralClassifierCV(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Exhaustive grid search over a structreg model, sharing work across the grid.

    Gives the results of ``GridSearchCV(estimator, param_grid, cv=cv, scoring=scoring)``
    (same folds, same scores up to rounding, same ``best_params_``) in a fraction of the time:
    in each fold the grid points that differ only in weight parameters (the model's
    ``_path_params``: e.g. ``gamma_A`` and ``gamma_I`` of LapRLSC) share the feature map, the
    penalty matrices and one assembly of the normal equations (see
    :func:`~structreg.models.fit_path`); points that change the kernel or the graph share what
    they can (e.g. the graph across kernel widths is rebuilt, but only once per group).

    Parameters
    ----------
    estimator : StructuralClassifier
        The model; its parameters are the defaults of every grid point.
    param_grid : dict of lists or list of such dicts
        As in ``GridSearchCV``.
    cv : int, cross-validation generator or iterable, default=None
        None: 5 folds (as many as the smallest class has labeled samples, with a warning,
        when that is fewer; at least 2); an int: that many folds -- of
        :class:`~structreg.model_selection.SemiSupervisedKFold` for semi-supervised models
        (labeled points cut into folds, every unlabeled point in every training set),
        of ``StratifiedKFold`` for supervised ones; both shuffled with ``random_state=0``,
        so the folds are reproducible.  Otherwise any scikit-learn splitter or iterable of
        (train, test) indices.
    scoring : str, callable or None, default=None
        As in ``GridSearchCV``; None uses the model's ``score`` (accuracy on the labeled
        samples).
    n_jobs : int or None, default=None
        Folds run in parallel (joblib).
    refit : bool, default=True
        Refit the best point on all of ``(X, y)`` as ``best_estimator_``.
    error_score : "raise" or float, default=np.nan
        Score of a point whose fit fails on a fold (a ``FitFailedWarning`` says which and
        why), as in ``GridSearchCV``; ``"raise"`` raises the error.  When every fit fails the
        search raises.

    Attributes
    ----------
    cv_results_ : dict of arrays
        As ``GridSearchCV``'s: ``params``, ``param_<name>``, ``split<i>_test_score``,
        ``mean_test_score``, ``std_test_score``, ``rank_test_score``, plus
        ``mean_fit_time`` / ``mean_score_time`` (a fold's time shared evenly by its points;
        the fit time includes the test decision values that come with the solves)
        and ``nonconvex_folds`` (folds whose fit was a saddle point of a non-convex objective).
    best_index_ : int
    best_params_ : dict
    best_score_ : float
    best_estimator_ : estimator
        The best point refitted on all data (``refit=True``).
    n_splits_ : int
    classes_ : ndarray
    n_features_in_ : int
        Number of features (columns) of the X given to ``fit``.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Column names of the X given to ``fit``, when it had string column names (a data
        frame); ``predict``, ``decision_function``, ``predict_proba`` and ``score`` refuse an
        X whose columns are reordered or renamed (scikit-learn's ValueError), and the refit
        takes X as given, so ``best_estimator_`` has the same names.
    refit_time_ : float

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_moons
    >>> from structreg import LapRLSC
    >>> from structreg.models import StructuralClassifierCV
    >>> X, y = make_moons(200, noise=0.1, random_state=0)
    >>> y_semi = np.full_like(y, -1)
    >>> y_semi[:20] = y[:20]
    >>> search = StructuralClassifierCV(
    ...     LapRLSC(gamma=2.0), {"gamma_A": [1e-4, 1e-2], "gamma_I": [0.0, 10.0]}, cv=3
    ... ).fit(X, y_semi)
    >>> sorted(search.best_params_)
    ['gamma_A', 'gamma_I']
    """

    _default_grid: dict[str, Any] | None = None

    def __init__(
        self,
        estimator=None,
        param_grid=None,
        *,
        cv=None,
        scoring=None,
        n_jobs=None,
        refit=True,
        error_score=np.nan,
    ):
        self.estimator = estimator
        self.param_grid = param_grid
        self.cv = cv
        self.scoring = scoring
        self.n_jobs = n_jobs
        self.refit = refit
        self.error_score = error_score

    def _default_estimator(self) -> StructuralClassifier:
        raise ValueError("StructuralClassifierCV needs an estimator")

    def _resolved(self) -> tuple[StructuralClassifier, list[dict[str, Any]]]:
        estimator = self._default_estimator() if self.estimator is None else self.estimator
        grid = self._default_grid if self.param_grid is None else self.param_grid
        if grid is None:
            raise ValueError(f"{type(self).__name__} needs a param_grid")
        candidates = candidate_list(grid)
        if not candidates:
            raise ValueError("param_grid has no points")
        valid = set(estimator.get_params())
        for point in candidates:
            unknown = sorted(set(point) - valid)
            if unknown:
                raise ValueError(
                    f"param_grid names {unknown}, which {type(estimator).__name__} does not have"
                )
        return estimator, candidates

    def _splits(self, estimator, X, y) -> list[tuple[np.ndarray, np.ndarray]]:
        cv = self._default_folds(estimator, y) if self.cv is None else self.cv
        if isinstance(cv, int | np.integer):
            if getattr(estimator, "_semi_supervised", True):
                cv = SemiSupervisedKFold(int(cv), random_state=0)
            else:  # -1 may be a real class of a supervised model
                cv = StratifiedKFold(int(cv), shuffle=True, random_state=0)
        if hasattr(cv, "split"):
            splits = [(np.asarray(a), np.asarray(b)) for a, b in cv.split(X, y)]
        else:
            splits = [(np.asarray(a), np.asarray(b)) for a, b in cv]
        if getattr(estimator, "_semi_supervised", True):  # a splitter that tests marked samples
            warn_if_folds_test_unlabeled(type(self).__name__, splits, is_unlabeled(y))
        return splits

    @staticmethod
    def _default_folds(estimator, y) -> int:
        """``cv=None``: :data:`DEFAULT_FOLDS` folds, fewer (with a warning) when the smallest
        class has fewer labeled samples, so that every class reaches every test fold."""
        keep = ~is_unlabeled(y) if getattr(estimator, "_semi_supervised", True) else slice(None)
        counts = np.unique(label_array(y)[keep], return_counts=True)[1]
        smallest = int(counts.min()) if counts.size else 0
        if smallest < 2:
            raise ValueError(
                f"cross-validation needs at least 2 labeled samples of every class; the smallest "
                f"class has {smallest}"
            )
        if smallest < DEFAULT_FOLDS:
            warnings.warn(
                f"the smallest class has {smallest} labeled samples, so cv=None uses "
                f"{smallest} folds instead of {DEFAULT_FOLDS}",
                UserWarning,
                stacklevel=4,
            )
        return min(DEFAULT_FOLDS, smallest)

    def fit(self, X, y):
        """Search the grid on ``(X, y)`` (``-1`` / ``None`` mark unlabeled samples), then refit.

        Returns
        -------
        self
        """
        estimator, candidates = self._resolved()
        given = X  # the refit takes X as given, so the refitted model knows its column names
        X, y = self._check_data(estimator, X, y)
        splits = self._splits(estimator, X, y)
        # scoring=None: the model's own score (accuracy on labeled points), computed directly
        scorer = None if self.scoring is None else check_scoring(estimator, scoring=self.scoring)
        if _needs_probabilities(scorer):
            raise ValueError(
                f"scoring={self.scoring!r} needs predict_proba, which the grid fits of "
                f"{type(self).__name__} do not have (they share one factorisation over the "
                "grid and keep no leave-one-out outputs to calibrate on); score by decision "
                "values (e.g. 'roc_auc') or search with GridSearchCV, whose fits are calibrated"
            )
        out = Parallel(n_jobs=self.n_jobs)(
            delayed(_fold_scores)(
                estimator, X, y, train, test, candidates, scorer, self.error_score
            )
            for train, test in splits
        )
        failures = [msg for *_, fold_failures in out for msg in fold_failures]
        n_fits = len(candidates) * len(splits)
        if len(failures) == n_fits:
            raise ValueError(f"all {n_fits} fits failed; the first: {failures[0]}")
        if failures:
            warnings.warn(
                f"{len(failures)} of {n_fits} fits failed and score error_score="
                f"{self.error_score}; the first: {failures[0]}",
                FitFailedWarning,
                stacklevel=2,
            )
        self.n_splits_ = len(splits)
        self.cv_results_ = self._results(candidates, out)
        self.best_index_ = int(np.argmin(self.cv_results_["rank_test_score"]))
        self.best_params_ = candidates[self.best_index_]
        self.best_score_ = float(self.cv_results_["mean_test_score"][self.best_index_])
        if self.refit:
            t0 = time.perf_counter()
            best = clone(estimator).set_params(**self.best_params_)
            self.best_estimator_ = best.fit(given, y)
            self.refit_time_ = time.perf_counter() - t0
            self.classes_ = self.best_estimator_.classes_
            if hasattr(self.best_estimator_, "n_features_in_"):
                self.n_features_in_ = self.best_estimator_.n_features_in_
        return self

    def _check_data(self, estimator, X, y):
        """The checks of the model's own ``fit``, before anything is split."""
        tags = estimator.__sklearn_tags__()
        semi = getattr(estimator, "_semi_supervised", True)
        if semi:
            y = missing_as_unlabeled(y)
        else:
            check_no_missing_labels(self, y)
        X, y = validate_data(
            self,
            X,
            y,
            accept_sparse="csr" if tags.input_tags.sparse else False,
            dtype="numeric",
            ensure_min_samples=2,
            y_numeric=False,
        )
        labeled = ~is_unlabeled(y) if semi else slice(None)
        check_classification_targets(y[labeled])
        encode = getattr(estimator, "_encode_labels", None)
        if encode is not None:  # the model's own label check, before any fold is fitted: e.g.
            encode(y, None, caller=type(self).__name__)  # -1 / +1 labels leave one class
        check_training_X(estimator, X)
        return X, y

    def _results(self, candidates, out) -> dict[str, Any]:
        n = len(candidates)
        scores = np.stack([s for s, *_ in out], axis=1)  # (n_candidates, n_splits)
        results: dict[str, Any] = {"params": candidates}
        for name in sorted({k for c in candidates for k in c}):
            column = np.ma.MaskedArray(np.empty(n, dtype=object), mask=True)
            for i, c in enumerate(candidates):
                if name in c:
                    column[i] = c[name]
            results[f"param_{name}"] = column
        for j in range(scores.shape[1]):
            results[f"split{j}_test_score"] = scores[:, j]
        mean = scores.mean(axis=1)
        results["mean_test_score"] = mean
        results["std_test_score"] = scores.std(axis=1)
        finite = np.where(np.isnan(mean), -np.inf, mean)
        results["rank_test_score"] = rankdata(-finite, method="min").astype(np.int32)
        results["mean_fit_time"] = np.full(n, np.mean([o[2] for o in out]) / n)
        results["mean_score_time"] = np.full(n, np.mean([o[3] for o in out]) / n)
        results["nonconvex_folds"] = np.sum([~o[1] for o in out], axis=0)
        return results

    # -- the refitted model -----------------------------------------------------------------
    def _best(self, X):
        """``best_estimator_``, after ``X``'s column names are checked against those seen at
        ``fit`` (``feature_names_in_``): reordered or renamed columns are scikit-learn's
        ValueError.  The refitted model, fitted on the same X, checks them too (and warns when
        only one of the two has names); the search checks them itself so that no refitted
        model can answer on columns it was not fitted on."""
        check_is_fitted(self, "best_estimator_")
        if "feature_names_in_" in vars(self) and get_feature_names(X) is not None:
            check_feature_names(self, X, reset=False)
        return self.best_estimator_

    def predict(self, X):
        """Labels predicted by ``best_estimator_``."""
        return self._best(X).predict(X)

    def decision_function(self, X):
        """Decision values of ``best_estimator_``."""
        return self._best(X).decision_function(X)

    @available_if(_model_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of ``best_estimator_`` (calibrated by its own refit)."""
        return self._best(X).predict_proba(X)

    @available_if(_model_has("predict_log_proba"))
    def predict_log_proba(self, X):
        """Log-probabilities of ``best_estimator_``."""
        return self._best(X).predict_log_proba(X)

    def score(self, X, y, sample_weight=None):
        """``best_estimator_.score`` (accuracy on the labeled samples)."""
        return self._best(X).score(X, y, sample_weight=sample_weight)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        try:
            estimator = self._resolved()[0]
        except ValueError:  # no estimator yet: the generic class's defaults
            return tags
        inner = estimator.__sklearn_tags__().input_tags
        tags.input_tags.sparse, tags.input_tags.pairwise = inner.sparse, inner.pairwise
        return tags


def _grid(**axes: Iterable) -> dict[str, list]:
    return {k: list(v) for k, v in axes.items()}


class LapRLSCCV(StructuralClassifierCV):
    """:class:`~structreg.LapRLSC` with ``gamma_A`` and ``gamma_I`` chosen by cross-validation.

    The default grid is ``gamma_A`` in 1e-6 .. 10 (8 values) times ``gamma_I`` in
    0, 1e-2 .. 1e4 (8 values): 64 points, of which each fold assembles the normal equations
    8 times (once per ``gamma_I``) and factors them 8 times (one eigendecomposition gives
    every ``gamma_A``).  Parameters and attributes: :class:`StructuralClassifierCV`
    (``estimator`` defaults to ``LapRLSC()``).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_moons
    >>> from structreg.models import LapRLSCCV
    >>> X, y = make_moons(150, noise=0.1, random_state=0)
    >>> y_semi = np.where(np.arange(150) < 20, y, -1)
    >>> bool(LapRLSCCV(cv=3).fit(X, y_semi).score(X, y) > 0.8)
    True
    """

    _default_grid = _grid(gamma_A=np.logspace(-6, 1, 8), gamma_I=np.r_[0.0, np.logspace(-2, 4, 7)])

    def _default_estimator(self):
        return LapRLSC()


class DiscriminativeRLSCV(StructuralClassifierCV):
    """:class:`~structreg.DiscriminativeRLS` with ``gamma_A`` and ``gamma_D`` chosen by
    cross-validation.

    The default grid is ``gamma_A`` in 1e-4 .. 10 (6 values) times ``gamma_D`` in
    0, 1e-4 .. 1e-1 (5 values).  Points whose objective is non-convex are scored like any other
    (``cv_results_["nonconvex_folds"]`` counts them).  Parameters and attributes:
    :class:`StructuralClassifierCV` (``estimator`` defaults to ``DiscriminativeRLS()``).
    """

    _default_grid = _grid(gamma_A=np.logspace(-4, 1, 6), gamma_D=np.r_[0.0, np.logspace(-4, -1, 4)])

    def _default_estimator(self):
        return DiscriminativeRLS()


class DRLSCCV(StructuralClassifierCV):
    """:class:`~structreg.DRLSC` with ``eta`` chosen by cross-validation.

    The default grid is ``eta`` in 0, 0.1, ..., 1; add ``n_neighbors`` (or ``gamma`` of a
    kernel) to search the graph (width) too.  Each fold builds the within/between-class graphs
    and their projected matrices once per ``n_neighbors`` and solves one small system per
    ``eta``.  Parameters and attributes: :class:`StructuralClassifierCV` (``estimator``
    defaults to ``DRLSC()``).
    """

    _default_grid = _grid(eta=np.round(np.linspace(0.0, 1.0, 11), 10))

    def _default_estimator(self):
        return DRLSC()
