"""Fit a model along a grid of weights, sharing everything that does not change.

A grid point of a preset differs from its neighbours either in *structure* parameters
(kernel, graph, clusters: they change the design ``Z`` or a penalty matrix) or only in
*weights* (the RKHS ridge, the penalty weights, a loss scale: they only change the solve).
Each preset names its weight parameters in ``_path_params`` (LapRLSC: ``gamma_A``,
``gamma_I``; DRLSC: ``eta``; LS-SVM: ``C``; ...).  :func:`fit_path` groups the grid by the
structure parameters, builds each group's :class:`~structreg.models.problem.Problem` once
(labels, feature map, design, unweighted penalty matrices: the same
:meth:`~structreg.models._base.StructuralEstimator._problem` that ``fit`` builds) and hands
the group's points to the loss's one grid entry point, ``Loss.fit_grid`` -- the call ``fit``
makes with a single model.  What a loss shares inside a group is its own business: the
square loss assembles the normal equations once and solves all ridges of a penalty-weight
setting from one eigendecomposition; the hinge loss shares the deformed kernel between
points with the same ``w_k / gamma_A`` (libsvm alone runs again per ``C``); the bordered
square loss factors LS-SVM's kernel once for every ``C``.  The returned estimators are
ordinary fitted estimators (``predict``, ``decision_function``, ``coef_``, ...), equal to
``clone(estimator).set_params(**params).fit(X, y)`` up to rounding.  Across groups, a
feature map or penalty with the same parameters is built once too (e.g. the kNN graph is
shared by every kernel width), one kNN search serves the penalties that split the same graph
(DRLSC's within- and between-class Laplacians), and so do the loss parts of the normal
equations on one design (the groups of its graphs).

A model that declares no weight parameters (e.g. DRLSC's ``formulation="bordered"``) is
fitted point by point.
"""

from __future__ import annotations

import copy
import warnings
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import joblib
import numpy as np
from sklearn.base import clone
from sklearn.model_selection import ParameterGrid

from .._compat import validate_parameter_constraints
from ..exceptions import GroupFallbackWarning, InsufficientMemoryError, NonConvexObjectiveWarning
from ._base import (
    LinearFeatures,
    StructuralClassifier,
    StructuralEstimator,
    blas_threads_for,
)
from ._losses import SquareLoss, side_by_side
from ._output_checks import checked_outputs

__all__ = ["decision_path", "decision_values", "drop_label_work", "fit_path"]


def candidate_list(param_grid: Mapping | Iterable[Mapping]) -> list[dict[str, Any]]:
    """Grid points as a list of dicts: a dict of lists (or a list of such dicts) is expanded
    with :class:`~sklearn.model_selection.ParameterGrid`; a sequence of dicts of scalars is
    taken as the list of points itself."""
    if isinstance(param_grid, Mapping):
        return list(ParameterGrid(param_grid))
    points = list(param_grid)
    if all(isinstance(p, Mapping) for p in points) and all(
        not any(isinstance(v, (list, tuple, np.ndarray)) for v in p.values()) for p in points
    ):
        return [dict(p) for p in points]
    return list(ParameterGrid(points))


def _key(value: Any) -> Any:
    """A hashable stand-in for a parameter value (arrays and objects by identity)."""
    try:
        hash(value)
    except TypeError:
        return ("id", id(value))
    return value


def _effective(estimator, point: Mapping, path_params) -> dict:
    """The point with the estimator's weights where it sets none (their kind -- a number or a
    string such as ``"auto"`` -- is part of the structure)."""
    params = estimator.get_params(deep=False)
    return {**{k: params[k] for k in path_params if k in params}, **point}


def _template_params(estimator, point: Mapping) -> dict:
    """The parameters a group's template takes from its first point: the structure, and a
    weight only where its kind differs from the estimator's (a number where the estimator
    says ``"auto"``, or a string): numeric weights stay the estimator's, which a point
    without them takes."""
    params = estimator.get_params(deep=False)
    path_params = set(estimator._path_params)
    return {
        k: v
        for k, v in point.items()
        if k not in path_params or isinstance(v, str) or isinstance(params.get(k), str)
    }


def _structure_key(point: Mapping, path_params) -> tuple:
    """The point's parameters other than the numeric weights: grid points with equal keys
    share the feature map, the penalty matrices and (hinge loss) possibly the deformed kernel.
    A weight given as a string (e.g. ``gamma_I="auto"``, which changes the penalty matrix
    itself) is structure too."""
    return tuple(
        sorted((k, _key(v)) for k, v in point.items() if k not in path_params or isinstance(v, str))
    )


def _shares_structure(estimator) -> bool:
    """Whether the grid of ``estimator`` is fitted by structure groups (a structural model
    that names its weight parameters), else point by point."""
    return isinstance(estimator, StructuralEstimator) and bool(
        getattr(estimator, "_path_params", ())
    )


class _Group:
    """The grid points of one structure: the problem built once, the points fitted by the
    loss's grid entry point."""

    def __init__(self, template, X, y, unlabeled, memo: dict, labels: str, call: dict) -> None:
        """``template``: an unfitted estimator with the group's structure parameters, owned
        (and structure-fitted) by this object."""
        try:
            X, y = _validated(template, X, y, unlabeled, call)
        except TypeError as exc:  # scikit-learn refuses the input's type (e.g. sparse X)
            if isinstance(exc, ValueError):  # an InvalidParameterError is both
                raise
            raise RefusedInputType(str(exc)) from exc
        if "encoded" not in call:
            call["encoded"] = template._encode_targets(y, unlabeled)
        self.template = template
        self.X = X
        self.problem = template._problem(
            X,
            y,
            unlabeled,
            grid=True,
            memo=memo,
            encoded=call["encoded"],
            graphs=call.setdefault("knn_graphs", {}),
            labels=labels,
        )
        self._settings: dict = {}  # the Setting of each weight values, see decisions

    def fit(self, points: Sequence[dict], path_params, checked: set, warn: bool) -> list:
        """The group's points as fitted estimators: copies of the structure-fitted template
        with the points' weights, solved together by the loss."""
        models = [_with_weights(self.template, p, path_params, checked) for p in points]
        with warnings.catch_warnings():
            if not warn:
                warnings.simplefilter("ignore", NonConvexObjectiveWarning)
            fitted = self.template.loss_.fit_grid(self.problem, models, warn=warn)
        for model, outputs in zip(models, fitted, strict=True):
            model._finish_fit(self.problem, outputs, self.X)
        return models

    def decisions(
        self, points: Sequence[dict], path_params, checked: set, X_eval, warn: bool, sections
    ):
        """Decision values on ``X_eval`` of the group's grid points, straight from the
        square loss's solutions (no fitted estimator per point), with each point's
        convexity; or None when this model's decision is not ``section @ dual_coef +
        intercept`` of a direct solve (then the points are fitted as estimators).
        ``sections``: the caller's ``{id(feature map): (feature map, section)}`` for this
        ``X_eval``, shared by the groups on one feature map (e.g. other graphs)."""
        template, loss = self.template, self.template.loss_
        fm = template.feature_map_
        if not (
            isinstance(loss, SquareLoss)
            and loss.direct(template, self.problem)
            and (hasattr(fm, "dual_coef") or _linear(fm))
        ):
            return None
        settings = []
        defaults = {k: getattr(template, k) for k in path_params}  # of a point without k
        for point in points:
            weights = {**defaults, **_checked_weights(template, point, path_params, checked)}
            key = tuple(sorted((k, _key(v)) for k, v in weights.items()))
            if key not in self._settings:  # the group's points differ in these values only
                model = _with_weights(template, weights, path_params)
                self._settings[key] = self.problem.setting(model)
            settings.append(self._settings[key])
        sols = loss.solve_grid(self.problem, settings, warn=warn)
        coefs, cols = side_by_side([sol.coef for sol in sols])
        if id(fm) not in sections:  # the entry holds fm, so its id is not reused meanwhile
            sections[id(fm)] = (fm, _test_section(template, X_eval))
        F = sections[id(fm)][1] @ (coefs if _linear(fm) else fm.dual_coef(coefs))
        out = []
        for sol, col in zip(sols, cols, strict=True):
            Fi = F[:, col] + sol.intercept
            out.append(Fi.ravel() if Fi.shape[1] == 1 else Fi)
        return out, [sol.convex is not False for sol in sols]


def fit_path(
    estimator: StructuralClassifier,
    X,
    y,
    param_grid: Mapping | Iterable[Mapping],
    *,
    unlabeled=None,
    warn: bool = True,
    errors: str = "raise",
    cache: dict | None = None,
) -> list[StructuralClassifier | Exception]:
    """Fit ``estimator`` at every point of ``param_grid``, sharing work between points.

    Parameters
    ----------
    estimator : StructuralClassifier
        The model (its parameters are the defaults of every grid point).
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Labels; ``-1`` / ``None`` (or the ``unlabeled`` mask) mark unlabeled samples of
        semi-supervised models.
    param_grid : dict of lists, or list of dicts
        As in ``GridSearchCV`` (a list of dicts of scalars is taken as the points in order).
    unlabeled : array-like of bool, optional
        Passed to ``fit``.
    warn : bool, default=True
        Issue :class:`~structreg.solvers.NonConvexObjectiveWarning` for non-convex points
        (``solver_info_["convex"]`` says it in any case).
    errors : {"raise", "return"}, default="raise"
        What a point whose fit fails gets: the exception is raised, or returned in that
        point's place (so that a search can score it as ``error_score``).
    cache : dict, optional
        Kept by the caller across calls on the same ``X`` (e.g. the batches of a
        coarse-to-fine search on one fold): fitted feature maps and penalty matrices with plain
        parameters are built once for all calls, and each structure group's assembled system
        once per labels ``(y, unlabeled)``.  :func:`drop_label_work` empties it of what belongs
        to particular labels (to reuse it over many label draws without growing).

    Returns
    -------
    estimators : list of fitted estimators
        One per grid point, in grid order; each equals ``clone(estimator).set_params(**p)
        .fit(X, y)`` up to rounding (predictions, ``coef_``, ``solver_info_``, ...).  Points
        of one structure group share their fitted feature map and other structure
        attributes.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_moons
    >>> from structreg import LapRLSC
    >>> from structreg.models import fit_path
    >>> X, y = make_moons(100, noise=0.1, random_state=0)
    >>> y_semi = np.where(np.arange(100) < 10, y, -1)
    >>> grid = {"gamma_A": [1e-4, 1e-2], "gamma_I": [0.0, 1.0]}
    >>> fits = fit_path(LapRLSC(gamma=2.0), X, y_semi, grid)
    >>> one = LapRLSC(gamma=2.0, gamma_A=1e-2, gamma_I=1.0).fit(X, y_semi)
    >>> bool(np.allclose(fits[-1].decision_function(X), one.decision_function(X)))
    True
    """
    return _path(estimator, X, y, param_grid, unlabeled, warn, errors, cache, None)


def _path(estimator, X, y, param_grid, unlabeled, warn, errors, cache, X_eval) -> list:
    """:func:`fit_path`; with ``X_eval``, the decision values on it in place of each fitted
    estimator (a square-loss group's straight from its solutions)."""
    out = grid_outputs(
        estimator,
        X,
        y,
        candidate_list(param_grid),
        unlabeled=unlabeled,
        warn=warn,
        errors=errors,
        cache=cache,
        X_eval=X_eval,
    )
    return out if X_eval is None else _decisions_of_fits(out, X_eval)


def grid_outputs(
    estimator,
    X,
    y,
    candidates: list[dict],
    *,
    unlabeled=None,
    warn: bool = True,
    errors: str = "raise",
    cache: dict | None = None,
    X_eval=None,
    info: dict | None = None,
) -> list:
    """Per grid point (``candidates``, a list of parameter dicts): the fitted estimator, or
    with ``X_eval`` the decision values on it where a group gives them straight from its
    solutions (the other points stay fitted estimators), or the exception of a failed point
    with ``errors="return"``.  ``info`` (if given) receives ``"convex"`` (one flag per
    point) and ``"classes"`` (the labels' classes, once a group encoded them)."""
    if errors not in ("raise", "return"):
        raise ValueError(f"errors must be 'raise' or 'return', got {errors!r}")
    flags = [True] * len(candidates)
    if not _shares_structure(estimator):
        out = [
            _guarded(errors, _plain_fit, estimator, X, y, p, unlabeled, warn) for p in candidates
        ]
        return _with_info(out, flags, info)
    path_params = set(estimator._path_params)
    groups: dict[tuple, list[int]] = defaultdict(list)
    for i, point in enumerate(candidates):
        key = _structure_key(_effective(estimator, point, path_params), path_params)
        groups[key].append(i)
    out: list[Any] = [None] * len(candidates)
    checked: set = set()  # (weight, value) pairs validated once for the grid
    sections: dict = {}  # X_eval's kernel section per feature map (decision values only)
    cache = {} if cache is None else cache
    labels = joblib.hash((y, unlabeled))
    call: dict = {}  # the validated data, encoded labels and kNN graphs, shared by the groups
    n = X.shape[0] if hasattr(X, "shape") else len(X)  # (len of a sparse matrix raises)
    with blas_threads_for(n):  # the whole grid: its factorisations are as small as one fit's
        for idx in groups.values():
            points = [candidates[i] for i in idx]
            template = clone(estimator).set_params(**_template_params(estimator, points[0]))
            try:
                group = _group(template, X, y, unlabeled, path_params, cache, labels, call)
                fitted = None
                if X_eval is not None:
                    fitted = group.decisions(points, path_params, checked, X_eval, warn, sections)
                    if fitted is not None:
                        fitted, group_flags = fitted
                        for i, flag in zip(idx, group_flags, strict=True):
                            flags[i] = flag
                if fitted is None:
                    fitted = group.fit(points, path_params, checked, warn)
            except GROUP_FAILURES as exc:  # the group's structure (or a weight) is invalid here
                if errors == "raise":
                    raise
                _warn_group_fallback(template, len(idx), exc)
                for i in idx:  # refit one by one: only the points that fail get the error
                    out[i] = _guarded(
                        errors, _plain_fit, estimator, X, y, candidates[i], unlabeled, warn
                    )
                continue
            for i, f in zip(idx, fitted, strict=True):
                out[i] = f
    if info is not None and "encoded" in call:
        info["classes"] = call["encoded"][0]
    return _with_info(out, flags, info)


class RefusedInputType(TypeError):
    """The training data's type is refused by a structure group's model (scikit-learn's
    ``TypeError`` for sparse X where dense data is required), raised from it with its
    message: a failure of the group's input, not of the code."""


GROUP_FAILURES = (ValueError, ArithmeticError, InsufficientMemoryError, RefusedInputType)
"""What a structure group's shared fit may fail with because its structure, a weight or
its input is invalid for these data, so that with ``errors="return"`` :func:`fit_path` fits
the group's points one by one and only the points that fail get the error: a
``ValueError`` (an invalid parameter, structure or weight; ``numpy.linalg.LinAlgError`` and
:class:`~structreg.exceptions.NonFiniteError` are ValueErrors), an ``ArithmeticError``
(floating-point trouble), an :class:`~structreg.exceptions.InsufficientMemoryError` or a
:class:`RefusedInputType`.  Any other exception (e.g. a ``TypeError`` from a bug)
propagates, whatever ``errors`` says."""


def _warn_group_fallback(template, n_points: int, exc: BaseException) -> None:
    """Say that the group of ``template``'s structure failed with ``exc`` and is refitted
    point by point."""
    warnings.warn(
        f"fit_path: the structure group of {n_points} grid point(s) of "
        f"{type(template).__name__} failed as a whole ({type(exc).__name__}: {exc}); its "
        "points are fitted one by one, and those that fail get the error",
        GroupFallbackWarning,
        stacklevel=4,
    )


def _group(template, X, y, unlabeled, path_params, cache: dict, labels: str, call: dict) -> _Group:
    """The group's :class:`_Group`, from ``cache`` when it holds it for these labels.
    ``call``: what one call validates and encodes once for all its groups."""
    key = _structure_key(template.get_params(deep=False), path_params)
    if ("group", key, labels) not in cache:
        cache["group", key, labels] = _Group(template, X, y, unlabeled, cache, labels, call)
    return cache["group", key, labels]


def _with_info(out: list, flags: list[bool], info: dict | None) -> list:
    """``out``; ``info["convex"]`` (if given) set from ``flags``, where the fitted estimators
    of ``out`` say theirs (``solver_info_["convex"]``) themselves."""
    if info is not None:
        info["convex"] = [
            flag
            if isinstance(f, np.ndarray)
            else getattr(f, "solver_info_", {}).get("convex") is not False
            for f, flag in zip(out, flags, strict=True)
        ]
    return out


def _decisions_of_fits(out: list, X_eval) -> list:
    """``out`` with each fitted estimator replaced by its decision values on ``X_eval``."""
    rest = [i for i, f in enumerate(out) if not isinstance(f, (np.ndarray, Exception))]
    for i, F in zip(rest, decision_values([out[i] for i in rest], X_eval), strict=True):
        out[i] = F
    return out


def _validated(est: StructuralClassifier, X, y, unlabeled, call: dict):
    """``est._validated(X, y, unlabeled)``; the data are converted and checked on the call's
    first group only (per answer of ``_accepts_sparse``), the later ones check the parameters
    in which they differ from it (each value once per call) and take its input attributes."""
    key = ("data", est._accepts_sparse())
    params = est.get_params(deep=False)
    if key not in call:
        data = est._validated(X, y, unlabeled)
        inputs = {k: getattr(est, k) for k in _INPUT_ATTRIBUTES if hasattr(est, k)}
        call[key] = (data, inputs, params)
        return data
    data, inputs, first = call[key]
    changed = {k: v for k, v in params.items() if _key(v) != _key(first[k])}
    _checked_weights(est, changed, changed.keys(), call.setdefault("checked", set()))
    for name, value in inputs.items():  # what validating the data would have set
        setattr(est, name, value)
    return data


_INPUT_ATTRIBUTES = ("n_features_in_", "feature_names_in_")
"""What validating the training data sets on an estimator (scikit-learn's ``validate_data``)."""


def drop_label_work(cache: dict) -> None:
    """Remove from a :func:`fit_path` ``cache`` what was built for particular labels (the
    assembled systems, label-reading penalties), keeping the feature maps and the penalties
    that read only X (and what depends on a cached feature map's design alone): for a cache
    reused over many label draws of one X without growing."""
    held = {id(v[1]) for k, v in cache.items() if k[0] == "feature_map"}
    for key in [
        k
        for k in cache
        if k[0] == "group"
        or (k[0] == "penalty" and k[2] is not None)
        or (k[0] == "design" and k[1] not in held)
    ]:
        del cache[key]


def _with_weights(
    base: StructuralClassifier, point: dict, path_params, checked: set | None = None
) -> StructuralClassifier:
    """``base`` with the point's weight parameters: a shallow copy (``clone`` per grid point
    costs more than the solve), the weights checked by :func:`_checked_weights`.  A
    structure-fitted ``base`` (a group's template) passes its structure attributes
    (``classes_``, ``feature_map_``, clusters, ...) to the copy, shared, not copied."""
    cand = copy.copy(base)
    for name, value in _checked_weights(base, point, path_params, checked).items():
        setattr(cand, name, value)
    return cand


def _checked_weights(base, point: dict, path_params, checked: set | None = None) -> dict:
    """The point's parameters named in ``path_params`` (its weights, or any others the caller
    names), checked against the model's constraints (each ``(name, value)`` once when the
    caller keeps a ``checked`` set across the grid)."""
    weights = {k: v for k, v in point.items() if k in path_params}
    constraints = getattr(base, "_parameter_constraints", {})
    todo = {k: v for k, v in weights.items() if k in constraints}
    if checked is not None:
        todo = {k: v for k, v in todo.items() if (k, _key(v)) not in checked}
    if todo:
        validate_parameter_constraints(
            {k: constraints[k] for k in todo}, todo, caller_name=type(base).__name__
        )
        if checked is not None:
            checked.update((k, _key(v)) for k, v in todo.items())
    return weights


def _guarded(errors: str, func, *args):
    """``func(*args)``, or its exception when ``errors="return"``."""
    if errors == "raise":
        return func(*args)
    try:
        return func(*args)
    except Exception as exc:
        return exc


def _plain_fit(estimator, X, y, params, unlabeled, warn):
    est = clone(estimator).set_params(**params)
    with warnings.catch_warnings():
        if not warn:
            warnings.simplefilter("ignore", NonConvexObjectiveWarning)
        if isinstance(est, StructuralClassifier):
            return est.fit(X, y, unlabeled=unlabeled)
        return est.fit(X, y)


def decision_path(
    estimator: StructuralClassifier,
    X,
    y,
    param_grid: Mapping | Iterable[Mapping],
    X_eval=None,
    *,
    unlabeled=None,
    cache: dict | None = None,
) -> np.ndarray:
    """Decision values along a grid: those of ``fit_path(...)[i].decision_function(X_eval)``.

    A square-loss structure group's points are not made into fitted estimators: their
    decision values come straight from the group's solutions: the kernel section
    ``k(X_eval, basis)`` is formed once per feature map and multiplied by all of a group's
    coefficients at once.  ``cache``: as in :func:`fit_path`.

    Returns
    -------
    F : ndarray of shape (n_points, n_eval) or (n_points, n_eval, n_classes)
        ``X_eval`` defaults to ``X``.
    """
    X_eval = X if X_eval is None else X_eval
    return np.stack(_path(estimator, X, y, param_grid, unlabeled, False, "raise", cache, X_eval))


def _linear(feature_map) -> bool:
    return isinstance(feature_map, LinearFeatures)


def _test_section(est, X) -> np.ndarray:
    """What ``est``'s decision multiplies its coefficients with: the inputs (linear features)
    or the kernel section ``k(X, basis_)`` of its feature map."""
    fm = est.feature_map_
    Xv = est._validated_new(X, "csr" if est._accepts_sparse() else False)
    return Xv if _linear(fm) else fm.kernel_(Xv, fm.basis_)


def _shares_test_features(est) -> bool:
    """A square-loss fit whose decision is ``k(X, basis_) @ dual_coef_`` or ``X @ coef_``."""
    return (
        isinstance(est, StructuralClassifier)
        and est._primal_output()
        and (hasattr(est, "dual_coef_") or _linear(est.feature_map_))
    )


def _deformation(fit):
    """The deformed kernel a fitted hinge model (libsvm on the deformed kernel) shares with the
    other points of its group, else None."""
    if not (isinstance(fit, StructuralEstimator) and hasattr(fit, "svm_")):
        return None
    kernel = getattr(fit, "deformed_kernel_", None)
    return kernel if kernel is not None else getattr(fit, "deformation_", None)


def decision_values(fits: Sequence, X) -> list[np.ndarray]:
    """``f.decision_function(X)`` of every fitted estimator in ``fits``, with the kernel section
    ``k(X, basis_)`` computed once per feature map: the fits of one :func:`fit_path` group share
    theirs, and mapping ``X`` again per grid point costs more than the solves; likewise the
    deformed kernel between ``X`` and the labeled points once per deformation that hinge fits
    share (libsvm alone differs between them).  The section is held whole (n_X x n_basis):
    meant for test folds, not for predicting on millions of points."""
    out: list[Any] = [None] * len(fits)
    shared: dict[int, list[int]] = defaultdict(list)  # feature map -> the fits using it
    deformed: dict[int, list[int]] = defaultdict(list)  # deformation -> the fits using it
    for i, f in enumerate(fits):
        if _shares_test_features(f):
            shared[id(f.feature_map_)].append(i)
        elif _deformation(f) is not None:
            deformed[id(_deformation(f))].append(i)
        else:
            out[i] = f.decision_function(X) if hasattr(f, "decision_function") else f.predict(X)
    for idx in deformed.values():
        first = fits[idx[0]]
        Xv = first._validated_new(X, "csr" if first._accepts_sparse() else False)
        G = first.loss_.deformed_gram(first, Xv)
        for i in idx:
            out[i] = checked_outputs(fits[i], fits[i].svm_.decision_function(G))
    for idx in shared.values():
        first = fits[idx[0]]
        linear = _linear(first.feature_map_)
        coefs, cols = side_by_side([fits[i].coef_ if linear else fits[i].dual_coef_ for i in idx])
        F = _test_section(first, X) @ coefs  # one product for the group's grid points
        for i, col in zip(idx, cols, strict=True):
            out[i] = fits[i]._square_output(F[:, col])
    return out
