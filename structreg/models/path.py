"""Fit a square-loss model along a grid of weights, sharing everything that does not change.

A grid point of a square-loss preset differs from its neighbours either in *structure*
parameters (kernel, graph, clusters: they change the design ``Z`` or a penalty matrix) or only
in *weights* (the RKHS ridge, the penalty weights: they only change the linear system).  Each
preset names its weight parameters in ``_path_params`` (LapRLSC: ``gamma_A``, ``gamma_I``;
DRLSC: ``eta``; ...).  :func:`fit_path` groups the grid by the structure parameters, builds the
labels, feature map, design and penalty matrices once per group, assembles the normal
equations once (:class:`~structreg.solvers.SquareLossPath`) and solves every weight setting
of the group -- all ridges of one penalty-weight setting from one eigendecomposition.  The
returned estimators are ordinary fitted estimators (``predict``, ``decision_function``,
``coef_``, ...), equal to ``clone(estimator).set_params(**params).fit(X, y)`` up to rounding.
Across groups, a feature map or penalty with the same parameters is built once too (e.g. the
kNN graph is shared by every kernel width), one kNN search serves the penalties that split
the same graph (DRLSC's within- and between-class Laplacians), and so do the loss parts of
the normal equations on one design (the groups of its graphs).

Hinge-loss models solved by libsvm share the deformed kernel between grid points whose
penalty weights scale with ``gamma_A`` (SRSVM's ``C`` at fixed ``lam``; LapSVM at a fixed
``gamma_I / gamma_A``): libsvm alone runs again per ``C``.  Grid points that cannot share
(the iterative ``solver="cg"``, the hinge loss's primal solvers, a model that declares no
weight parameters, e.g. DRLSC's ``formulation="bordered"``) are fitted one by one.
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
from sklearn.utils._param_validation import validate_parameter_constraints
from sklearn.utils.validation import validate_data

from ..exceptions import NonConvexObjectiveWarning
from ..solvers import SquareLossPath
from ..structure.graphs import reusing_knn_graphs
from ._base import (
    LinearFeatures,
    StructuralClassifier,
    blas_threads_for,
    memo_key,
    pm_one_targets,
)

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


def _shares_factorisation(estimator: StructuralClassifier) -> bool:
    return (
        isinstance(estimator, StructuralClassifier)
        and bool(getattr(estimator, "_path_params", ()))
        and estimator._loss() == "square"
    )


def _string_weights(*models) -> bool:
    """Whether a weight of these models is a string (e.g. ``"auto"``, which may change the
    penalty matrix itself, not only its weight)."""
    return any(isinstance(getattr(m, k, None), str) for m in models for k in m._path_params)


def _penalty_kind(penalty) -> tuple:
    """What must agree between a group's template and its points: the penalty's class and
    its plain-valued parameters (arrays, e.g. cluster ids, are the group's own)."""
    params = penalty.get_params(deep=False) if hasattr(penalty, "get_params") else {}
    plain = (bool, int, float, str, type(None))
    return (type(penalty), tuple(sorted((k, v) for k, v in params.items() if isinstance(v, plain))))


class _SharedFit:
    """One group of grid points: the structure built once, the weights solved per point."""

    def __init__(
        self, est: StructuralClassifier, X, y, unlabeled, memo: dict, labels: str, call: dict
    ) -> None:
        """``est``: an unfitted estimator with the group's structure parameters, owned (and
        fitted) by this object."""
        self.labels = labels  # fingerprint of (y, unlabeled)
        self._settings: dict = {}  # (ridge, penalty weights) per weight values, see decisions
        X, y = _validated(est, X, y, unlabeled, call)
        self.template = est
        # the iterative solver, or a group (e.g. DRLSC bordered) without weights: one fit per point
        self.shared = bool(est._path_params) and est._resolve_solver(X) != "cg"
        if not self.shared:
            return
        if "encoded" not in call:
            call["encoded"] = est._encode_targets(y, unlabeled)
        structure = est._fit_structure(X, y, unlabeled, memo, call["encoded"])
        self.y_codes, self.labeled, self.Z, self.unexplained = structure
        self.n, self.n_labeled = X.shape[0], int(self.labeled.sum())
        terms = est._penalty_terms(self.n, self.n_labeled)
        self.penalties = [penalty for _, penalty in terms]
        points = est._structure_points(X, self.Z)
        graphs = call.setdefault("knn_graphs", {})
        self.matrices = [self._build(p, points, memo, graphs) for p in self.penalties]
        Y = pm_one_targets(self.y_codes, self.labeled, len(est.classes_))
        # what depends on the design alone is shared by the groups on one feature map (the
        # entry holds Z, so its id is not reused while the memo lives)
        design = memo.setdefault(("design", id(self.Z), est._fit_intercept()), {"Z": self.Z})
        self.path = SquareLossPath(
            self.Z,
            Y,
            est._fit_weights(self.labeled, self.y_codes),
            self.matrices,
            fit_intercept=est._fit_intercept(),
            design_cache=design,
            psd=[bool(getattr(penalty, "psd", False)) for penalty in self.penalties],
        )

    def _build(self, penalty, X, memo: dict, graphs: dict):
        """The penalty's matrix, from ``memo`` when the same penalty was built on this X
        (e.g. the kNN graph of another kernel width) -- for the same labels if it reads them.
        The kNN graphs it searches are kept in ``graphs``, the call's (DRLSC's within- and
        between-class penalties split one graph)."""
        key = memo_key(penalty)
        entry = None
        if key is not None:
            reads = getattr(penalty, "reads_labels", lambda: True)()
            entry = ("penalty", key, self.labels if reads else None)
            if entry in memo:
                return memo[entry]
        with reusing_knn_graphs(graphs):
            matrix = penalty.build(X, self.y_codes, self.labeled)
        if entry is not None:
            memo[entry] = matrix
        return matrix

    def _weights(self, candidate: StructuralClassifier) -> tuple[float, ...]:
        terms = candidate._penalty_terms(self.n, self.n_labeled)
        same = [type(p) for _, p in terms] == [type(p) for p in self.penalties]
        if same and _string_weights(candidate, self.template):  # e.g. "auto": compare fully
            same = [_penalty_kind(p) for _, p in terms] == [
                _penalty_kind(p) for p in self.penalties
            ]
        if not same:
            raise ValueError(
                f"{type(candidate).__name__}._path_params changes the penalties themselves, "
                "not only their weights"
            )
        return tuple(float(w) for w, _ in terms)

    def fit(self, candidates: Sequence[StructuralClassifier], warn: bool) -> None:
        """Fit every candidate (clones of the template with other weight parameters)."""
        fitted_state = {
            k: v
            for k, v in vars(self.template).items()
            if k.endswith("_") and not k.startswith("_")
        }  # classes_, feature_map_, what _prepare found (e.g. clusters), ...
        for cand in candidates:
            vars(cand).update(fitted_state)
        settings = [(cand._ridge(), self._weights(cand)) for cand in candidates]
        sols = self.path.solve_grid(settings, warn=warn)
        if not sols:
            return
        # the grid's coefficients side by side: one BLAS-3 product each for the kernel
        # expansions and the training outputs instead of one matrix-vector product per point
        coefs, cols = _side_by_side([sol.coef for sol in sols])
        feature_map = self.template.feature_map_
        duals = feature_map.dual_coef(coefs) if hasattr(feature_map, "dual_coef") else None
        outputs = self.Z @ coefs if self.template._semi_supervised else None
        for cand, sol, col in zip(candidates, sols, cols, strict=True):
            dual = None if duals is None else np.ascontiguousarray(duals[:, col])
            self._assemble(cand, sol, dual)
            if outputs is not None:
                fitted = cand._square_output(outputs[:, col])
                cand.transduction_ = cand.classes_[cand._decide(fitted)]

    def decisions(
        self, points: Sequence[dict], path_params, checked: set, X_eval, warn: bool, sections
    ):
        """Decision values on ``X_eval`` of the group's grid points, straight from the
        solutions (no fitted estimator per point), with each point's convexity; or None when
        this model's decision is not ``section @ dual_coef + intercept`` (then the points are
        fitted as estimators).
        ``sections``: the caller's ``{id(feature map): (feature map, section)}`` for this
        ``X_eval``, shared by the groups on one feature map (e.g. other graphs)."""
        probe = copy.copy(self.template)
        fm = probe.feature_map_
        if not (probe._primal_output() and (hasattr(fm, "dual_coef") or _linear(fm))):
            return None
        settings = []
        defaults = {k: getattr(self.template, k) for k in path_params}  # of a point without k
        for point in points:
            weights = {**defaults, **_checked_weights(self.template, point, path_params, checked)}
            key = tuple(sorted((k, _key(v)) for k, v in weights.items()))
            if key not in self._settings:  # the group's points differ in these values only
                vars(probe).update(weights)
                self._settings[key] = (probe._ridge(), self._weights(probe))
            settings.append(self._settings[key])
        sols = self.path.solve_grid(settings, warn=warn)
        coefs, cols = _side_by_side([sol.coef for sol in sols])
        if id(fm) not in sections:  # the entry holds fm, so its id is not reused meanwhile
            sections[id(fm)] = (fm, _test_section(probe, X_eval))
        F = sections[id(fm)][1] @ (coefs if _linear(fm) else fm.dual_coef(coefs))
        out = []
        for sol, col in zip(sols, cols, strict=True):
            Fi = F[:, col] + sol.intercept
            out.append(Fi.ravel() if Fi.shape[1] == 1 else Fi)
        return out, [sol.convex is not False for sol in sols]

    def _assemble(self, cand: StructuralClassifier, sol, dual_coef) -> None:
        """Give ``cand`` the fitted attributes that ``fit`` would have given it, but for
        ``transduction_`` (set by :meth:`fit`)."""
        info = {
            "factorization": sol.factorization,
            "convex": sol.convex,
            "singular": sol.singular,
            "n_iter": 1,
        }
        cand._set_solution(sol.coef, sol.intercept, "square", self.Z.shape[1], info, dual_coef)
        if self.unexplained is not None:
            cand.solver_info_["unexplained_trace"] = self.unexplained
        cand.n_iter_ = 1


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
    estimator (a shared square-loss group's straight from its solutions)."""
    out = _grid_outputs(estimator, X, y, param_grid, unlabeled, warn, errors, cache, X_eval)
    return out if X_eval is None else _decisions_of_fits(out, X_eval)


def _grid_outputs(
    estimator, X, y, param_grid, unlabeled, warn, errors, cache, X_eval, info=None
) -> list:
    """:func:`fit_path`'s fitted estimators (or exceptions), except that with ``X_eval`` the
    points of a shared square-loss group get their decision values on ``X_eval`` instead,
    straight from the group's solutions.  ``info``: a dict that receives ``"convex"``, each
    point's convexity (False for a saddle point of a non-convex objective; True for a failed
    fit), and ``"classes"``, the ``classes_`` of the shared groups' fits (if there was one)."""
    if errors not in ("raise", "return"):
        raise ValueError(f"errors must be 'raise' or 'return', got {errors!r}")
    candidates = candidate_list(param_grid)
    flags = [True] * len(candidates)
    if _shares_deformation(estimator):
        out = _hinge_path(estimator, X, y, candidates, unlabeled, warn, errors)
        return _with_info(out, flags, info)
    if not _shares_factorisation(estimator):
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
            base = clone(estimator).set_params(**_template_params(estimator, candidates[idx[0]]))
            try:
                shared = _shared_fit(base, X, y, unlabeled, path_params, cache, labels, call)
                fitted = None
                if shared.shared and X_eval is not None:
                    points = [candidates[i] for i in idx]
                    fitted = shared.decisions(points, path_params, checked, X_eval, warn, sections)
                    if fitted is not None:
                        fitted, group_flags = fitted
                        for i, flag in zip(idx, group_flags, strict=True):
                            flags[i] = flag
                if shared.shared and fitted is None:
                    fitted = [_with_weights(base, candidates[i], path_params, checked) for i in idx]
                    shared.fit(fitted, warn)
            except Exception:  # the group's structure (or a weight) is invalid here
                if errors == "raise":
                    raise
                for i in idx:  # refit one by one: only the points that fail get the error
                    out[i] = _guarded(
                        errors, _plain_fit, estimator, X, y, candidates[i], unlabeled, warn
                    )
                continue
            if not shared.shared:
                for i in idx:
                    out[i] = _guarded(
                        errors, _plain_fit, estimator, X, y, candidates[i], unlabeled, warn
                    )
                continue
            for i, f in zip(idx, fitted, strict=True):
                out[i] = f
    if info is not None and "encoded" in call:
        info["classes"] = call["encoded"][0]
    return _with_info(out, flags, info)


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


def _shares_deformation(estimator) -> bool:
    """A hinge-loss model solved by libsvm on the deformed kernel (not its primal solvers)."""
    return (
        isinstance(estimator, StructuralClassifier)
        and bool(getattr(estimator, "_path_params", ()))
        and estimator._loss() == "hinge"
        and getattr(estimator, "solver", "dense") in ("auto", "dense")
    )


def _deformation_key(model) -> tuple[float, ...]:
    """``w_k / gamma_A`` of a fitted (or state-copied) hinge model: the deformed kernel
    ``k - k_x^T (gamma_A I + M K)^{-1} M k_z`` depends on the weights only through them."""
    _, labeled = model._hinge_labels
    terms = model._penalty_terms(len(labeled), int(labeled.sum()))
    return tuple(float(w) / model.gamma_A for w, _ in terms)


def _hinge_path(estimator, X, y, candidates, unlabeled, warn, errors) -> list:
    """Hinge-loss models along a grid: grid points whose structure parameters agree and whose
    penalty weights scale with ``gamma_A`` (e.g. SRSVM's ``C`` at fixed ``lam``; LapSVM's
    ``gamma_A`` and ``gamma_I`` at a fixed ratio) share the deformed kernel, and only libsvm
    runs again with the point's ``C = 1 / (2 gamma_A l)``; the others are fitted."""
    path_params = set(estimator._path_params)
    out: list[Any] = [None] * len(candidates)
    refs: dict[tuple, list] = defaultdict(list)  # structure -> [(key, fitted, cache)]
    for i, point in enumerate(candidates):
        structure = _structure_key(_effective(estimator, point, path_params), path_params)
        try:
            shared = _sharing(refs[structure], point, path_params)
        except Exception as exc:  # an invalid weight
            if errors == "raise":
                raise
            out[i] = exc
            continue
        if shared is not None:
            cand, ref, grams = shared
            out[i] = _guarded(errors, _refit_svm, cand, ref, grams, X)
            continue
        fitted = _guarded(errors, _plain_fit, estimator, X, y, point, unlabeled, warn)
        out[i] = fitted
        if hasattr(fitted, "svm_"):  # libsvm on the deformed kernel (not a primal solver)
            refs[structure].append((_deformation_key(fitted), fitted, {}))
    return out


def _sharing(refs: list, point: dict, path_params) -> tuple | None:
    """``(candidate, ref, grams)`` for the first fitted ``ref`` whose deformed kernel the
    point shares (the candidate: a copy of ref with the point's weights), else None."""
    for key, ref, grams in refs:
        cand = _with_weights(ref, point, path_params)
        if np.allclose(_deformation_key(cand), key, rtol=1e-12, atol=0.0):
            return cand, ref, grams
    return None


def _refit_svm(cand, ref, grams: dict, X):
    """``cand`` (a copy of the fitted ``ref`` with other weights, the same deformed kernel)
    with its own libsvm fit; ``grams`` caches ref's deformed Gram matrices."""
    if "labeled" not in grams:
        grams["labeled"] = ref.deformed_gram()
    info = {k: v for k, v in ref.solver_info_.items() if k not in ("loss", "C")}
    cand.loss_.fit_svm(cand, grams["labeled"], info)
    cand.__dict__.pop("penalty_", None)  # the combined matrix of ref's weights: not cand's
    cand.__dict__.pop("calibrator_", None)  # calibrated for ref's C
    if cand._semi_supervised:  # decisions on every training point
        if "training" not in grams:
            Xv = validate_data(ref, X, dtype=float, reset=False)
            grams["training"] = ref.loss_.deformed_gram(ref, Xv)
        fitted = cand.svm_.decision_function(grams["training"])
        cand.transduction_ = cand.classes_[cand._decide(fitted)]
    return cand


def _shared_fit(
    base, X, y, unlabeled, path_params, cache: dict, labels: str, call: dict
) -> _SharedFit:
    """The group's :class:`_SharedFit`, from ``cache`` when it holds it for these labels.
    ``call``: what one call validates and encodes once for all its groups."""
    key = _structure_key(base.get_params(deep=False), path_params)
    if ("group", key, labels) not in cache:
        cache["group", key, labels] = _SharedFit(base, X, y, unlabeled, cache, labels, call)
    return cache["group", key, labels]


def _validated(est: StructuralClassifier, X, y, unlabeled, call: dict):
    """``est._validated(X, y, unlabeled)``; the data are converted and checked on the call's
    first group only (per answer of ``_accepts_sparse``), the later ones check the parameters
    in which they differ from it (each value once per call) and take its input attributes."""
    key = ("data", est._accepts_sparse())
    params = est.get_params(deep=False)
    if key not in call:
        data = est._validated(X, y, unlabeled)
        attrs = {k: v for k, v in vars(est).items() if k in ("n_features_in_", "feature_names_in_")}
        call[key] = (data, attrs, params)
        return data
    data, attrs, first = call[key]
    changed = {k: v for k, v in params.items() if _key(v) != _key(first[k])}
    _checked_weights(est, changed, changed.keys(), call.setdefault("checked", set()))
    vars(est).update(attrs)
    return data


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
    costs more than the solve), the weights checked by :func:`_checked_weights`."""
    cand = copy.copy(base)
    vars(cand).update(_checked_weights(base, point, path_params, checked))
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


def _side_by_side(blocks: Sequence[np.ndarray]) -> tuple[np.ndarray, list[slice]]:
    """The blocks stacked as columns (for one BLAS-3 product over a grid) and each block's
    columns."""
    stacked = np.hstack(blocks)
    ends = np.cumsum([0, *(b.shape[1] for b in blocks)])
    return stacked, [slice(a, b) for a, b in zip(ends[:-1], ends[1:], strict=True)]


def _shares_test_features(est) -> bool:
    """A square-loss fit whose decision is ``k(X, basis_) @ dual_coef_`` or ``X @ coef_``."""
    return (
        isinstance(est, StructuralClassifier)
        and est._primal_output()
        and (hasattr(est, "dual_coef_") or _linear(est.feature_map_))
    )


def decision_values(fits: Sequence, X) -> list[np.ndarray]:
    """``f.decision_function(X)`` of every fitted estimator in ``fits``, with the kernel section
    ``k(X, basis_)`` computed once per feature map: the fits of one :func:`fit_path` group share
    theirs, and mapping ``X`` again per grid point costs more than the solves.  The section is
    held whole (n_X x n_basis): meant for test folds, not for predicting on millions of points."""
    out: list[Any] = [None] * len(fits)
    shared: dict[int, list[int]] = defaultdict(list)  # feature map -> the fits using it
    for i, f in enumerate(fits):
        if _shares_test_features(f):
            shared[id(f.feature_map_)].append(i)
        else:
            out[i] = f.decision_function(X) if hasattr(f, "decision_function") else f.predict(X)
    for idx in shared.values():
        first = fits[idx[0]]
        linear = _linear(first.feature_map_)
        coefs, cols = _side_by_side([fits[i].coef_ if linear else fits[i].dual_coef_ for i in idx])
        F = _test_section(first, X) @ coefs  # one product for the group's grid points
        for i, col in zip(idx, cols, strict=True):
            out[i] = fits[i]._square_output(F[:, col])
    return out
