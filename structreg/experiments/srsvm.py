"""Reproductions of the SRSVM paper (Xue, Chen & Yang, IEEE TNN 22(4), 2011).

``structreg reproduce srsvm [--table T]`` runs ``TABLES``: II (XOR toy, Tables I-II and
Figs. 5-6), V / VI / VII and fig10 (timings, support vectors, Ward clusters and bounds of the
same UCI fits) and fig9 (COIL-20, USPS).  The protocol, the search, ``--quick`` and the
differences from the paper are described in ``docs/reproducing/srsvm.md``; the reports' fixed
text is in ``reference/srsvm.json`` beside the paper's numbers.
"""

from __future__ import annotations

import json
import time
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from functools import cache, cached_property, lru_cache, partial
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import StratifiedKFold
from sklearn.multiclass import OneVsRestClassifier
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from ..bounds import fitted_bound, plot_bounds
from ..datasets import list_datasets, load_dataset, make_xor_gaussians
from ..models import EKM, SLMM, SRSVM, LapSVM, decision_path, fit_path
from ..structure import LaplacianPenalty
from . import reference
from .engine import Cell, Options, Plan, Table
from .plots import boundary_figure, decision_grid
from .protocol import (
    class_codes,
    grid_name,
    load_images,
    n_draws,
    precomputed_svc,
    precomputed_svc_params,
    runs_table,
    seed_from,
    uci_rows,
)
from .report import (
    comparison_table,
    markdown_table,
    pyplot,
    save_figure,
    significance_mark,
    skipped_lines,
    skipped_rows,
    write_csv,
    write_markdown,
)
from .search import Axis, coarse_to_fine, cv_evaluator, n_correct, value_axis

__all__ = ["TABLE2", "TABLE5", "TABLE6", "TABLE7", "TABLES", "TWO_CLASS_SETS", "run_cell"]

PAPER = "srsvm"
VERSION = 1
"""Protocol version, part of every cell's key."""

# -- the paper's numbers and the reports' text (``reference/srsvm.json``) --------------------
_REF = reference.load(PAPER)
TABLE2 = {int(pct): row for pct, row in _REF["table2"].items()}
"""Table II: training / testing accuracy (%) per training percentage."""
TABLE5, TABLE5_AVERAGE = _REF["table5"], _REF["table5_average"]
"""Table V: training / testing seconds per set, and its "average" row (the paper's 8 sets)."""
TABLE6 = _REF["table6"]
"""Table VI: average numbers of support vectors (SLMM: none reported)."""
TABLE7 = _REF["table7"]
"""Table VII: Ward clusters in the two classes."""
_TEXT: dict[str, Any] = _REF["report_text"]

# -- protocol constants ----------------------------------------------------------------------
TWO_CLASS_SETS = ("automobile", "bupa", "hepatitis", "ionosphere", "pima", "sonar", "water", "wdbc")
METHODS = ("SVM", "EKM", "SLMM", "LapSVM", "SRSVM")
XOR_METHODS = ("SVM", "SLMM", "SRSVM")
FRACTIONS = (10, 20, 30, 40, 50)
N_SPLITS = {"xor": 10, "uci": 10, "image": 5}
QUICK_SPLITS = {"xor": 2, "uci": 2, "image": 1}
TABLE_OF = {"xor": "II", "uci": "V", "image": "fig9"}
"""The table that names the cells of each kind of task (V's fits serve VI, VII and fig10)."""
N_FOLDS = 3
N_NEIGHBORS = 6
"""LapSVM's class-wise kNN graphs (fewer neighbours where a class has at most 6 points)."""
QUICK_MAX_SIZE = 400
"""``--quick`` runs the two-class sets with at most this many points."""
QUICK_SOCP_SETS = ("automobile", "sonar")
"""``--quick`` runs EKM and SLMM on these sets only."""
QUICK_SLMM_FRACTIONS = (10,)
IMAGE_SETTINGS: dict[str, list] = _REF["image_settings"]
"""Fig. 9: image set, training images per class (or fraction of each class) and the methods
run (SLMM on COIL-20 only; EKM's ellipsoid of 3300 images had not finished in 6 minutes)."""
QUICK_IMAGE = {"COIL-20 G9/P63": ("SVM", "EKM", "LapSVM", "SRSVM")}
IMAGE_CV_MAX = 550
"""Fig. 9: model selection on a stratified subsample of at most this many training points."""
GRIDS: dict[str, dict[str, Any]] = json.loads(json.dumps(_REF["grids"]))  # lists, not tuples
"""The searches (:func:`_search`): ``"paper"`` coarse to fine, ``"coarse"`` a fixed subgrid."""
SLMM_C_EXPS = (-4, 0, 4)
"""Exponents of SLMM's ``C`` searched by CV under ``grid="paper"``."""
FIGURE_GRID = 100
"""Points per axis of the decision-value grid stored for Figs. 5-6."""


# -- seeds and data ---------------------------------------------------------------------------
_seed = partial(seed_from, sep="/")


def _take_per_group(groups: np.ndarray, count: Callable[[int], int], seed: int) -> np.ndarray:
    """Boolean mask with ``count(size)`` random members of every group."""
    rng = np.random.default_rng(seed)
    mask = np.zeros(len(groups), dtype=bool)
    for g in np.unique(groups):
        idx = np.flatnonzero(groups == g)
        mask[rng.choice(idx, count(len(idx)), replace=False)] = True
    return mask


@cache
def _two_class(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Features and 0/1 classes of a two-class UCI set (automobile: docs/reproducing/srsvm.md)."""
    if name == "automobile":
        X, y = load_dataset("automobile", return_X_y=True, missing="drop")
        return X, (np.asarray(y).astype(int) > 0).astype(int)
    X, y = load_dataset(name, return_X_y=True)
    if len(np.unique(y)) != 2:
        raise ValueError(f"{len(np.unique(y))} classes here; the paper used a two-class version")
    return X, class_codes(y)


def _xor_pct(dataset: str) -> int:
    """The training percentage of an XOR row (``"XOR 10%"`` -> 10)."""
    return int(dataset.split()[1].rstrip("%"))


@lru_cache(maxsize=8)
def _task(kind: str, dataset: str, split: int) -> tuple[np.ndarray, ...]:
    """``(X_train, y_train, X_test, y_test)`` of one split (the same for every method)."""
    if kind == "xor":
        X, y, comp = make_xor_gaussians(
            200, random_state=_seed("xor", split), return_components=True
        )
        pct = _xor_pct(dataset)
        train = _take_per_group(comp, lambda n: round(pct * n / 100), _seed(dataset, split))
        return X[train], y[train], X[~train], y[~train]
    if kind == "uci":
        X, y = _two_class(dataset)
        train = _take_per_group(y, lambda n: n // 2, _seed(dataset, split))
        scaler = StandardScaler().fit(X[train])
        return scaler.transform(X[train]), y[train], scaler.transform(X[~train]), y[~train]
    source, size, _ = IMAGE_SETTINGS[dataset]
    X, labels = load_images(source)
    y = class_codes(labels)
    count = (lambda n: int(size)) if size >= 1 else (lambda n: round(size * n))
    train = _take_per_group(y, count, _seed(dataset, split))
    return X[train], y[train], X[~train], y[~train]


# -- model selection --------------------------------------------------------------------------
def _search_space(names: Sequence[str], spec: dict) -> tuple[list[Axis], bool | list[int]]:
    """The axes of the exponents ``names`` and the refinement of a :data:`GRIDS` ``spec`` for
    :func:`~structreg.experiments.search.coarse_to_fine`.

    ``{"exps": {name: [exponents]}}``: every point of that grid, no refinement.
    ``{"lo", "hi", "steps"}``: the exponents ``lo, lo + step, ..., hi`` at the first step,
    then the ``3^p`` neighbourhood of the best point at each further step.
    """
    if "exps" in spec:
        return [value_axis(name, spec["exps"][name]) for name in names], False
    exponents = range(spec["lo"], spec["hi"] + 1)
    first, *further = spec["steps"]
    axes = [value_axis(name, exponents, coarse_step=first) for name in names]
    return axes, list(further)


def _most_regularised(names: Sequence[str]) -> Callable[[dict], tuple]:
    """The tie-break of the searches: the most regularised point first, i.e. the smallest
    ``sum_k s_k e_k`` with ``s = +1`` for ``gamma`` and ``C`` (smoother kernel, softer margin)
    and ``-1`` for ``lam`` (more weight on the structure), then the smallest signed exponents
    in the order of ``names``."""
    signs = {name: -1 if name == "lam" else 1 for name in names}

    def preference(candidate: dict) -> tuple:
        signed = tuple(signs[name] * candidate[name] for name in names)
        return (sum(signed), signed)

    return preference


def _search(
    evaluate: Callable[[list[dict]], Sequence[float]],
    names: Sequence[str],
    spec: dict,
    fixed: dict[str, int] | None = None,
) -> tuple[dict[str, int], float, int]:
    """Best exponents by ``evaluate`` (a score per candidate dict of exponents), their score
    and the number of points scored: the grid of ``spec`` (:func:`_search_space`) searched by
    :func:`~structreg.experiments.search.coarse_to_fine`, ties to the most regularised point
    (:func:`_most_regularised`); ``fixed``: exponents taken as given."""
    axes, refine = _search_space(names, spec)
    prefer = _most_regularised(names)
    found = coarse_to_fine(evaluate, axes, fixed=fixed, refine=refine, prefer=prefer)
    return found.best_params, found.best_score, found.n_evaluated


class _CVData:
    """One split's training part for model selection: its stratified folds, and LapSVM's
    class-wise graphs on the folds' training parts (built once)."""

    def __init__(self, X: np.ndarray, y: np.ndarray, seed: int) -> None:
        self.X = X
        self.y = y
        self.n_classes = int(y.max()) + 1
        cv = StratifiedKFold(N_FOLDS, shuffle=True, random_state=seed % 2**31)
        self.folds = list(cv.split(X, y))

    @cached_property
    def graphs(self) -> dict[bytes, Any]:
        """LapSVM's class-wise graph of each fold's training part, by its indices' bytes."""
        out = {}
        for train, _ in self.folds:
            k = _lapsvm(1.0, 1.0, 1.0, self.y[train]).n_neighbors
            penalty = LaplacianPenalty(graph="class-wise", n_neighbors=k)
            graph = penalty.adjacency(self.X[train], self.y[train], np.ones(len(train), bool))
            out[train.tobytes()] = graph
        return out

    def accuracy(self, method: str) -> Callable[[list[dict]], list[float]]:
        """``evaluate(candidates)`` of ``method``: the mean validation accuracy over the folds
        of every candidate (a dict of exponents ``e``, the parameters being ``2^e``)."""

        def fold_hits(candidates: list[dict], train: np.ndarray, test: np.ndarray) -> list[int]:
            decisions = self.decisions(method, candidates, train, test)
            return [n_correct(F, self.y[test]) for F in decisions]

        return cv_evaluator(fold_hits, self.folds, average="folds")

    def decisions(
        self, method: str, candidates: list[dict], train: np.ndarray, test: np.ndarray
    ) -> list[np.ndarray]:
        """The decision values on the fold's validation points ``test`` of every candidate
        fitted on ``train``, by :func:`~structreg.models.decision_path`: SRSVM and LapSVM
        share their deformed kernel along ``C`` there; the SVM and EKM run
        ``SVC(kernel="precomputed")`` along ``C`` on the fold's Gram matrices of each width
        (the kernel's, or the linear kernel of EKM's remapped points: one ellipsoid)."""
        X_fit, y_fit, X_val = self.X[train], self.y[train], self.X[test]
        if method in ("SVM", "EKM"):
            return self._svm_decisions(method, candidates, X_fit, y_fit, X_val)
        if method == "SRSVM":
            model = SRSVM(kernel="rbf")
            points = [
                {"gamma": 2.0 ** c["gamma"], "lam": 2.0 ** c["lam"], "C": 2.0 ** c["C"]}
                for c in candidates
            ]
        else:
            graph = self.graphs[train.tobytes()]
            models = [
                _lapsvm(2.0 ** c["gamma"], 2.0 ** c["C"], 2.0 ** c["lam"], y_fit, graph=graph)
                for c in candidates
            ]
            model = models[0]
            points = [m.get_params(deep=False) for m in models]
        return list(decision_path(model, X_fit, y_fit, points, X_val))

    def _svm_decisions(
        self,
        method: str,
        candidates: list[dict],
        X_fit: np.ndarray,
        y_fit: np.ndarray,
        X_val: np.ndarray,
    ) -> list[np.ndarray]:
        """libsvm along ``C`` on the Gram matrices of each width (one
        :func:`~structreg.models.decision_path` per width)."""
        by_width: dict[int, list[int]] = {}
        for i, c in enumerate(candidates):
            by_width.setdefault(c["gamma"], []).append(i)
        svm = precomputed_svc(self.n_classes)
        out: list[Any] = [None] * len(candidates)
        for gamma_exp, indices in by_width.items():
            G, G_val = _fold_grams(method, 2.0**gamma_exp, X_fit, y_fit, X_val)
            points = [
                precomputed_svc_params(self.n_classes, C=2.0 ** candidates[i]["C"]) for i in indices
            ]
            F = decision_path(svm, G, y_fit, points, G_val)
            for i, decision in zip(indices, F, strict=True):
                out[i] = decision
        return out


def _fold_grams(
    method: str, gamma: float, X_fit: np.ndarray, y_fit: np.ndarray, X_val: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The (fit x fit, validation x fit) Gram matrices of the SVM's RBF kernel of width
    ``gamma``, or of the linear kernel on EKM's remapped points (EKM's ellipsoid does not
    depend on ``C``)."""
    if method == "SVM":
        return rbf_kernel(X_fit, X_fit, gamma=gamma), rbf_kernel(X_val, X_fit, gamma=gamma)
    ekm = EKM(kernel="rbf", gamma=gamma, C=1.0).fit(X_fit, y_fit)
    R_fit, R_val = ekm.remap(X_fit), ekm.remap(X_val)
    return R_fit @ R_fit.T, R_val @ R_fit.T


def _lapsvm(g: float, C: float, lam: float, y: np.ndarray, graph: Any = "class-wise") -> LapSVM:
    """LapSVM of width ``g``, libsvm's ``C`` and graph weight ``lam`` relative to the RKHS norm:
    ``gamma_A = 1 / (2 C l)``, ``gamma_I = lam gamma_A l^2`` (``l = len(y)``); class-wise heat
    kNN graphs of :data:`N_NEIGHBORS` neighbours (fewer where a class of ``y`` is smaller)."""
    n = len(y)
    gamma_A = 1.0 / (2.0 * C * n)
    k = int(min(N_NEIGHBORS, np.bincount(y).min() - 1))
    return LapSVM(
        gamma=g,
        gamma_A=gamma_A,
        gamma_I=lam * gamma_A * n**2,
        graph=graph,
        n_neighbors=k,
        solver="dense",  # the paper's hinge loss
    )


_AXES = {"SVM": ("gamma", "C"), "EKM": ("C",), "SRSVM": ("gamma", "lam", "C")}
_AXES["LapSVM"] = _AXES["SRSVM"]
"""The exponents each method searches (EKM: at the SVM's width), ``C`` last."""


def _select(
    method: str, data: _CVData, spec: dict, fixed: dict[str, int] | None = None
) -> tuple[dict[str, int], float, int]:
    """Cross-validated exponents of ``method`` (``fixed``: exponents taken as given)."""
    fixed = dict(fixed or {})
    names = [name for name in _AXES[method] if name not in fixed]
    return _search(data.accuracy(method), names, spec, fixed)


def _select_slmm(
    data: _CVData, gamma_exp: int, c_exps: Sequence[int]
) -> tuple[dict[str, int], float, int]:
    """SLMM's ``C`` by CV at the given width (a cone program per fold and C; ties: smallest C)."""

    def fold_hits(candidates: list[dict], train: np.ndarray, test: np.ndarray) -> list[int]:
        model = SLMM(kernel="rbf", gamma=2.0**gamma_exp)
        points = [{"C": 2.0 ** c["C"]} for c in candidates]
        fits = fit_path(model, data.X[train], data.y[train], points)
        return [int(np.sum(fit.predict(data.X[test]) == data.y[test])) for fit in fits]

    evaluate = cv_evaluator(fold_hits, data.folds, average="folds")
    spec = {"exps": {"C": list(c_exps)}}
    return _search(evaluate, ["C"], spec, fixed={"gamma": gamma_exp})


@lru_cache(maxsize=4)
def _cv_data(kind: str, dataset: str, split: int) -> _CVData:
    """The CV folds of one split's training part (images: of a stratified subsample of at most
    ``IMAGE_CV_MAX`` points)."""
    Xtr, ytr, _, _ = _task(kind, dataset, split)
    if kind == "image" and len(ytr) > IMAGE_CV_MAX:
        seed = _seed(dataset, split, "cv-subsample")
        keep = _take_per_group(
            ytr, lambda n: max(N_FOLDS, round(n * IMAGE_CV_MAX / len(ytr))), seed
        )
        Xtr, ytr = Xtr[keep], ytr[keep]
    return _CVData(Xtr, ytr, _seed(dataset, split, "cv"))


@lru_cache(maxsize=16)
def _svm_selection(kind: str, dataset: str, split: int, spec_json: str):
    """The SVM's CV choice for one split (cached: EKM and SLMM take its width)."""
    return _select("SVM", _cv_data(kind, dataset, split), json.loads(spec_json))


# -- the cell ---------------------------------------------------------------------------------
def _estimator(method: str, exps: dict[str, int], y_train: np.ndarray, n_classes: int):
    """The final model of ``method`` at the chosen exponents (``2^e``)."""
    g, C = 2.0 ** exps["gamma"], 2.0 ** exps["C"]
    if method == "SVM":
        svc = SVC(kernel="rbf", gamma=g, C=C)
        return OneVsRestClassifier(svc) if n_classes > 2 else svc
    if method == "LapSVM":
        return _lapsvm(g, C, 2.0 ** exps["lam"], y_train)
    if method == "SRSVM":
        return SRSVM(kernel="rbf", gamma=g, C=C, lam=2.0 ** exps["lam"])
    return {"EKM": EKM, "SLMM": SLMM}[method](kernel="rbf", gamma=g, C=C)


def _n_support(est) -> int | None:
    """Number of distinct training points that are support vectors (None for SLMM)."""
    if isinstance(est, SLMM):
        return None
    est = getattr(est, "svc_", est)  # EKM: its SVM on the remapped points
    if isinstance(est, OneVsRestClassifier):
        return int(np.unique(np.concatenate([e.support_ for e in est.estimators_])).size)
    return int(est.support_.size)


def _bound(est, X: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    """Theorem 1's bound of a fitted binary model (:func:`~structreg.bounds.fitted_bound`;
    values that are not finite become None)."""
    res = fitted_bound(est, X, y)
    return {k: (None if v is None or not np.isfinite(v) else float(v)) for k, v in res.items()}


def _choose(
    method: str, kind: str, dataset: str, split: int, grid: dict, slmm_c: Sequence[int] | None
) -> tuple[dict[str, int], float | None, int]:
    """``(exponents, CV accuracy, number of grid points)`` chosen for one cell.

    The SVM's own cell always searches (its search time is reported); EKM and SLMM take its
    width (SLMM without ``slmm_c`` also its ``C``) and reuse the search when this process has
    done it already."""
    if method in ("SVM", "EKM", "SLMM"):
        select = _svm_selection.__wrapped__ if method == "SVM" else _svm_selection
        svm_exps, svm_cv, n_points = select(kind, dataset, split, json.dumps(grid, sort_keys=True))
    if method == "SVM":
        return svm_exps, svm_cv, n_points
    if method == "SLMM" and slmm_c is None:
        return svm_exps, None, 0
    data = _cv_data(kind, dataset, split)
    if method == "SLMM":
        return _select_slmm(data, svm_exps["gamma"], slmm_c)
    fixed = {"gamma": svm_exps["gamma"]} if method == "EKM" else None
    return _select(method, data, grid, fixed)


def _timed(func: Callable, *args: Any) -> tuple[Any, float]:
    """``func(*args)`` and its ``time.perf_counter`` seconds."""
    start = time.perf_counter()
    out = func(*args)
    return out, time.perf_counter() - start


def run_cell(
    *,
    dataset: str,
    method: str,
    split: int,
    kind: str,
    grid: dict,
    v: int,
    slmm_c: Sequence[int] | None = None,
    bound: bool = False,
    figure: bool = False,
) -> dict[str, Any]:
    """One fit: choose the parameters by CV on the training part, fit, time, score.

    ``kind`` is ``"xor"``, ``"uci"`` or ``"image"``; ``grid`` a :data:`GRIDS` entry; SLMM's
    ``C`` is searched over the exponents ``slmm_c`` (None: the SVM's ``C``); ``bound``: also
    Theorem 1's bound; ``figure``: also the decision values on a grid (XOR).
    """
    del v  # part of the key only
    Xtr, ytr, Xte, yte = _task(kind, dataset, split)
    n_classes = int(max(ytr.max(), yte.max())) + 1
    with warnings.catch_warnings(record=True) as log:
        warnings.simplefilter("always")
        (exps, cv_acc, n_points), search_s = _timed(
            _choose, method, kind, dataset, split, grid, slmm_c
        )
        est = _estimator(method, exps, ytr, n_classes)
        _, fit_s = _timed(est.fit, Xtr, ytr)
        pred, predict_s = _timed(est.predict, Xte)
        clusters = getattr(est, "n_clusters_", None)
        result: dict[str, Any] = {
            "test_acc": 100.0 * float(np.mean(pred == yte)),
            "train_acc": 100.0 * float(np.mean(est.predict(Xtr) == ytr)),
            "fit_s": fit_s,
            "predict_s": predict_s,
            "search_s": search_s,
            "cv_acc": None if cv_acc is None else 100.0 * cv_acc,
            "n_grid_points": int(n_points),
            "exps": {k: int(e) for k, e in exps.items()},
            "n_train": int(len(ytr)),
            "n_test": int(len(yte)),
            "n_support": _n_support(est),
            "n_clusters": None if clusters is None else [int(c) for c in clusters],
        }
        if bound:
            result["bound"] = _bound(est, Xtr, ytr)
        if figure:
            grid = decision_grid(est, np.vstack([Xtr, Xte]), 1.0, FIGURE_GRID)
            result["grid"] = {**grid, "values": np.round(grid["values"], 4).tolist()}
        caught = sorted({f"{w.category.__name__}: {str(w.message)[:160]}" for w in log})
    result["warnings"] = caught
    return result


# -- plans ------------------------------------------------------------------------------------
def _grid(options: Options, full: str = "paper") -> tuple[str, dict]:
    """``(name, spec)`` of the search grid: ``options.extra["grid"]`` (a :data:`GRIDS` name, or
    a spec dict such as ``{"exps": {"gamma": [-4], "C": [2], "lam": [0]}}``), else "coarse"
    under --quick and ``full`` otherwise."""
    if isinstance(options.extra.get("grid"), dict):
        return "custom", dict(options.extra["grid"])
    name = grid_name(options, GRIDS, paper=PAPER, quick="coarse", full=full)
    return name, GRIDS[name]


def _wanted(options: Options, key: str, default: Sequence) -> list:
    """The entries of ``default`` named in ``options.extra[key]`` (any case), all if not given."""
    chosen = options.extra.get(key)
    chosen = None if chosen is None else {str(c).lower() for c in chosen}
    return [d for d in default if chosen is None or str(d).lower() in chosen]


def _plan(
    options: Options,
    kind: str,
    rows: dict[str, Sequence[str] | str],
    methods: list[str],
    full_grid: str = "paper",
    **params: Any,
) -> Plan:
    """One cell per row, method and split (in that order) of ``rows``: data set -> its methods,
    or why it is not run.  SLMM's cells name its ``C`` exponents (None: the SVM's ``C``; not in
    Fig. 9) and the XOR cells whether they store the decision values (split 0 at 10 and 50 %).
    """
    name, grid = _grid(options, full_grid)
    draws = n_draws(options, QUICK_SPLITS[kind], N_SPLITS[kind])
    cells = []
    for dataset, run in rows.items():
        for method in () if isinstance(run, str) else run:
            p = {"v": VERSION, "kind": kind, "grid": grid, **params}
            if method == "SLMM" and kind != "image":
                p["slmm_c"] = list(SLMM_C_EXPS) if name == "paper" else None
            for split in range(draws):
                if kind == "xor":
                    p["figure"] = split == 0 and _xor_pct(dataset) in (10, 50)
                where = {"table": TABLE_OF[kind], "dataset": dataset, "method": method}
                cells.append(Cell.make(run_cell, paper=PAPER, split=split, **where, **p))
    skipped = {dataset: why for dataset, why in rows.items() if isinstance(why, str)}
    context = {"grid": grid, "draws": draws, "methods": methods}
    return Plan(cells, skipped=skipped, context=context)


def _plan_xor(options: Options) -> Plan:
    """Table II: every XOR training percentage (``--quick``: SLMM at 10 % only)."""
    methods = _wanted(options, "methods", XOR_METHODS)
    rows = {}
    for pct in [int(f) for f in options.extra.get("fractions", FRACTIONS)]:
        slmm = not options.quick or pct in QUICK_SLMM_FRACTIONS
        rows[f"XOR {pct}%"] = [m for m in methods if slmm or m != "SLMM"]
    plan = _plan(options, "xor", rows, methods)
    if options.quick and "SLMM" in methods:
        fractions = ", ".join(f"{p} %" for p in QUICK_SLMM_FRACTIONS)
        plan.notes.append(_TEXT["xor_quick"].format(fractions=fractions))
    return plan


def _plan_uci(options: Options) -> Plan:
    """Tables V, VI, VII and Fig. 10: the same fits (one plan, cells keyed under table V)."""
    methods = _wanted(options, "methods", METHODS)
    available, why = set(list_datasets()), "not among structreg's data sets"
    sets = {name: (name if name in available else None, why) for name in TWO_CLASS_SETS}
    large = _TEXT["uci_too_large"].format(size=QUICK_MAX_SIZE)
    data, skipped, notes = uci_rows(
        options, sets, _two_class, lambda _, d: large if len(d[1]) > QUICK_MAX_SIZE else None
    )
    socp = [m for m in methods if not options.quick or m not in ("EKM", "SLMM")]
    rows = {name: methods if name in QUICK_SOCP_SETS else socp for name in data}
    plan = _plan(options, "uci", {**rows, **skipped}, methods, bound=True)
    plan.notes += notes
    if options.quick:
        sets = ", ".join(QUICK_SOCP_SETS)
        plan.notes.append(_TEXT["uci_quick"].format(draws=plan.context["draws"], sets=sets))
    return plan


def _plan_images(options: Options) -> Plan:
    """Fig. 9: the COIL-20 and USPS settings (grid "coarse"; SLMM and EKM on some only)."""
    methods = _wanted(options, "methods", METHODS)
    sources = _wanted(options, "datasets", sorted({s[0] for s in IMAGE_SETTINGS.values()}))
    available = set(list_datasets())
    rows: dict[str, Sequence[str] | str] = {}
    for setting in _wanted(options, "settings", list(IMAGE_SETTINGS)):
        source, _, run = IMAGE_SETTINGS[setting]
        if source not in sources:
            continue  # not asked for
        if source not in available:
            rows[setting] = f"{source} is not among structreg's data sets"
        elif options.quick and setting not in QUICK_IMAGE:
            rows[setting] = "--quick: full protocol only"
        else:
            run = QUICK_IMAGE[setting] if options.quick else run
            rows[setting] = [m for m in run if m in methods]
    plan = _plan(options, "image", rows, methods, full_grid="coarse")
    plan.notes += [note.format(cv_max=IMAGE_CV_MAX) for note in _TEXT["fig9_notes"]]
    plan.notes += [_TEXT["fig9_quick"]] if options.quick else []
    return plan


# -- reports ----------------------------------------------------------------------------------
def _rows(values: dict[str, dict[str, list]], columns: Sequence[str], cell: Callable) -> list:
    """Table rows: the row's name, then ``cell(row, column, values or None)`` per column."""
    return [[r, *(cell(r, c, by.get(c)) for c in columns)] for r, by in values.items()]


def _protocol(plan: Plan) -> dict[str, Any]:
    """The intros' fields: ``draws``, ``search`` (the grid searched) and ``slmm`` (SLMM's C)."""
    grid = plan.context["grid"]
    if "exps" in grid:
        exps = grid["exps"]
        axes = ", ".join(f"{n} 2^{exps[n]}" for n in ("gamma", "C", "lam") if n in exps)
        search = _TEXT["search_subgrid"].format(axes=axes)
    else:
        steps = ", ".join(map(str, grid["steps"]))
        search = _TEXT["search_paper"].format(lo=grid["lo"], hi=grid["hi"], steps=steps)
    slmm = _TEXT["slmm_cv" if grid == GRIDS["paper"] else "slmm_svm"]
    slmm = slmm.format(c_exps=list(SLMM_C_EXPS))
    return {"draws": plan.context["draws"], "search": search, "slmm": slmm}


def _uci_intro(plan: Plan, *lines: str) -> list[str]:
    """A UCI table's intro: the protocol, then ``lines``."""
    return [_TEXT["uci_intro"].format(**_protocol(plan)), *lines]


def _warning_lines(plan: Plan, results: dict) -> list[str]:
    """Markdown lines counting the warnings caught in the cells (model selection included)."""
    runs = [(c.key.method, results.get(c.key, {})) for c in plan.cells]
    counts = Counter((m, w) for m, res in runs for w in res.get("warnings", []))
    lines = [f"- {m}, {n} cell(s): {w}" for (m, w), n in sorted(counts.items())]
    return ["", _TEXT["warnings"], "", *lines] if lines else []


def _mark(by_method: dict[str, list], method: str) -> str:
    """The paired t-test mark of ``method`` against SRSVM (none for SRSVM or without it)."""
    if method == "SRSVM" or "SRSVM" not in by_method:
        return ""
    return significance_mark(by_method["SRSVM"], by_method[method])


def _write(
    out: Path, stem: str, lines: list[str], header: str, rows: list, plan: Plan, blanks: int
) -> list[Path]:
    """``srsvm_<stem>.md`` from ``lines``, the skipped data sets and the plan's notes; ``.csv``
    from the header names, ``rows`` and the skipped data sets (``blanks`` empty cells before
    the reason)."""
    lines += [*skipped_lines(plan.skipped), *([""] + plan.notes if plan.notes else [])]
    md = write_markdown(out / f"{PAPER}_{stem}.md", lines)
    rows = [*rows, *skipped_rows(plan.skipped, blanks)]
    return [md, write_csv(out / f"{PAPER}_{stem}.csv", header.split(), rows)]


def _report_xor(plan: Plan, results: dict, out: Path, options: Options) -> list[Path]:
    methods, figure = plan.context["methods"], f"{PAPER}_II_fig5_fig6.png"
    test, train = (
        runs_table(plan, results, field=f, row=lambda k: str(_xor_pct(k.dataset)))
        for f in ("test_acc", "train_acc")
    )
    paper = {str(p): {m: v[0] for m, v in row.items()} for p, row in TABLE2.items()}

    def shown(pct: str, m: str, v: list | None) -> str:
        ref = paper.get(pct, {}).get(m)
        return "-" if not v else f"{np.mean(v):.2f}" + ("" if ref is None else f" ({ref:.2f})")

    train_lines = ["", _TEXT["xor_train"], ""]
    train_lines += markdown_table(["% train", *methods], _rows(train, methods, shown))
    paths = comparison_table(
        out,
        f"{PAPER}_II",
        title="SRSVM paper, Tables I-II and Figs. 5-6: the XOR toy",
        values=test,
        methods=methods,
        paper={str(p): {m: v[1] for m, v in row.items()} for p, row in TABLE2.items()},
        reference="SRSVM",
        intro=[_TEXT["xor_intro"].format(**_protocol(plan))],
        notes=[*plan.notes, *train_lines, *_warning_lines(plan, results), "", f"Figure: {figure}"],
        row_label="% train",
    )
    rows_csv = [
        [p, m, len(by[m]), f"{np.mean(by[m]):.2f}", f"{np.std(by[m]):.2f}", paper.get(p, {}).get(m)]
        for p, by in train.items()
        for m in methods
        if by.get(m)
    ]
    header = "pct_train method n_draws train_mean train_std paper_train".split()
    paths.append(write_csv(out / f"{PAPER}_II_train.csv", header, rows_csv))
    png = _xor_figure(plan, results, out / figure)
    return paths + ([png] if png else [])


def _xor_figure(plan: Plan, results: dict, path: Path) -> Path | None:
    """Figs. 5-6: the decision boundaries stored by the split-0 cells, over the training (dots)
    and testing (crosses) points of that draw."""
    grids = {
        (c.key.method, _xor_pct(c.key.dataset)): results[c.key]["grid"]
        for c in plan.cells
        if "grid" in results.get(c.key, {})
    }
    if not grids:
        return None
    pcts = sorted({pct for _, pct in grids})
    fitted = {
        (m, pcts.index(pct)): (g, *_task("xor", f"XOR {pct}%", 0)) for (m, pct), g in grids.items()
    }
    cols = [m for m in XOR_METHODS if any(m == k[0] for k in grids)]
    rows = [f"{pct}% of each Gaussian training (draw 0)" for pct in pcts]
    boundary_figure(path, fitted, rows=rows, cols=cols, title=_TEXT["xor_figure"])
    return path


def _report_timing(plan: Plan, results: dict, out: Path, options: Options) -> list[Path]:
    methods = plan.context["methods"]
    fit, pred, search, acc = (
        runs_table(plan, results, field=f) for f in ("fit_s", "predict_s", "search_s", "test_acc")
    )
    times = {
        n: {m: (float(np.mean(v)), float(np.mean(pred[n][m]))) for m, v in by.items()}
        for n, by in fit.items()
    }
    run = {m: [by[m] for by in times.values() if m in by] for m in methods}

    def shown(t: tuple | None, ref: tuple | None) -> str:
        paper = f" ({ref[0]:.2f} / {ref[1]:.2f})" if ref else ""
        return ("-" if t is None else f"{t[0]:.3f} / {t[1]:.3f}") + paper

    def accuracy(n: str, m: str, v: list | None) -> str:
        return "-" if v is None else f"{np.mean(v):.2f} ± {np.std(v):.2f}{_mark(acc[n], m)}"

    rows = _rows(times, methods, lambda n, m, t: shown(t, TABLE5.get(n, {}).get(m)))
    average = [
        shown(np.mean(run[m], axis=0), TABLE5_AVERAGE[m]) if run[m] else "-" for m in methods
    ]
    search_rows = _rows(search, methods, lambda n, m, v: "-" if v is None else f"{np.mean(v):.1f}")
    head = ["data set", *methods]
    lines = [
        "# SRSVM paper, Table V: training / testing times (s) of the fits after model selection",
        "",
        *_uci_intro(plan, "", _TEXT["V_times"], ""),
        *markdown_table(head, [*rows, ["average (sets run)", *average]]),
        *["", _TEXT["V_average"], "", _TEXT["V_search"], "", *markdown_table(head, search_rows)],
        *["", _TEXT["V_accuracy"], "", _TEXT["V_mark"], ""],
        *markdown_table(head, _rows(acc, methods, accuracy)),
        *_warning_lines(plan, results),
    ]
    rows_csv = []
    for n, m in ((n, m) for n in times for m in methods if m in times[n]):
        (tr, te), ref, a = times[n][m], TABLE5.get(n, {}).get(m), acc[n][m]
        row = [n, m, len(fit[n][m]), f"{tr:.4f}", f"{te:.4f}"]
        row += [f"{r:.2f}" for r in ref] if ref else ["-", "-"]
        row += [f"{np.mean(search[n][m]):.2f}", f"{np.mean(a):.2f}", f"{np.std(a):.2f}"]
        rows_csv.append([*row, _mark(acc[n], m)])
    header = "data_set method n_splits train_s test_s paper_train_s paper_test_s search_s"
    header += " test_acc_mean test_acc_std mark_vs_SRSVM"
    return _write(out, "V", lines, header, rows_csv, plan, 7)


def _report_support(plan: Plan, results: dict, out: Path, options: Options) -> list[Path]:
    values = runs_table(plan, results, field="n_support")
    sizes = runs_table(plan, results, field="n_train")
    sizes_txt = ", ".join(f"{n} {next(iter(by.values()))[0]}" for n, by in sizes.items())
    return comparison_table(
        out,
        f"{PAPER}_VI",
        title="SRSVM paper, Table VI: numbers of support vectors",
        values={n: {m: v for m, v in by.items() if m != "SLMM"} for n, by in values.items()},
        methods=plan.context["methods"],
        paper=TABLE6,
        intro=_uci_intro(plan, _TEXT["VI_values"], f"Training-set sizes: {sizes_txt}."),
        skipped=plan.skipped,
        notes=plan.notes,
    )


def _report_clusters(plan: Plan, results: dict, out: Path, options: Options) -> list[Path]:
    rows, rows_csv = [], []
    for name, by_method in runs_table(plan, results, field="n_clusters").items():
        cells = []
        for m in ("SRSVM", "SLMM"):
            v = by_method.get(m)
            if not v:
                cells += ["-", "-"]
                continue
            first, mean = v[0], np.asarray(v, dtype=float).mean(axis=0)
            cells.append(f"{sum(first)} ({', '.join(map(str, first))})")
            cells.append(f"{mean.sum():.1f} ({', '.join(f'{c:.1f}' for c in mean)})")
            totals = [f"{c:.2f}" for c in (mean.sum(), *mean)]
            rows_csv.append([name, m, len(v), sum(first), *first, *totals])
        ref = TABLE7.get(name)
        rows.append([name, *cells, f"{sum(ref)} ({ref[0]}, {ref[1]})" if ref else "-"])
    head = ["data set", "SRSVM split 0", "SRSVM mean", "SLMM split 0", "SLMM mean", "paper"]
    lines = [
        "# SRSVM paper, Table VII: Ward clusters per class",
        "",
        *_uci_intro(plan, _TEXT["VII_values"], ""),
        *markdown_table(head, rows),
    ]
    rows_csv += [[n, "paper", "", sum(r), r[0], r[1], "", "", ""] for n, r in TABLE7.items()]
    header = "data_set method n_splits split0_total split0_class0 split0_class1 mean_total"
    return _write(out, "VII", lines, header + " mean_class0 mean_class1", rows_csv, plan, 0)


def _report_bounds(plan: Plan, results: dict, out: Path, options: Options) -> list[Path]:
    methods = plan.context["methods"]
    raw = runs_table(plan, results, field="bound")
    bounds = {
        n: {m: [b["bound"] for b in v if b and b.get("bound") is not None] for m, v in by.items()}
        for n, by in raw.items()
    }
    means = {n: {m: float(np.mean(v)) for m, v in by.items() if v} for n, by in bounds.items()}

    def shown(n: str, m: str, v: list | None) -> str:
        if not v:  # the count of splits without an admissible margin in brackets
            return "-" if v is None else f"- [{len(raw[n][m])}]"
        missing = len(raw[n][m]) - len(v)
        return f"{np.mean(v):.3f} ± {np.std(v):.3f}" + (f" [{missing}]" if missing else "")

    rows = [
        [*row, min(means[row[0]], key=means[row[0]].get) if means[row[0]] else "-"]
        for row in _rows(bounds, methods, shown)
    ]
    lines = [
        "# SRSVM paper, Fig. 10: eigenvalue bounds on the expected risk",
        "",
        *_uci_intro(plan, _TEXT["fig10_values"], "", _TEXT["fig10_paper"], ""),
        *markdown_table(["data set", *methods, "smallest"], rows),
    ]
    rows_csv = [
        [n, m, len(by[m]), f"{np.mean(by[m]):.4f}", f"{np.std(by[m]):.4f}"]
        for n, by in bounds.items()
        for m in methods
        if by.get(m)
    ]
    paths = _write(
        out, "fig10", lines, "data_set method n_splits bound_mean bound_std", rows_csv, plan, 1
    )
    if any(means.values()):
        pyplot()  # the Agg backend before plot_bounds draws
        ax = plot_bounds({n: v for n, v in means.items() if v})
        ax.set_title("Fig. 10 (reproduced): bound of Theorem 1, mean over splits", fontsize=9)
        paths.append(save_figure(ax.figure, out / f"{PAPER}_fig10.png"))
    return paths


def _report_images(plan: Plan, results: dict, out: Path, options: Options) -> list[Path]:
    methods = plan.context["methods"]
    values = runs_table(plan, results, field="test_acc")
    values = {s: values[s] for s in IMAGE_SETTINGS if s in values}
    fit = runs_table(plan, results, field="fit_s")
    fit_txt = "; ".join(
        f"{s}: " + ", ".join(f"{m} {np.mean(v):.1f}" for m, v in by.items())
        for s, by in fit.items()
    )
    paths = comparison_table(
        out,
        f"{PAPER}_fig9",
        title="SRSVM paper, Fig. 9: COIL-20 and USPS",
        values=values,
        methods=methods,
        reference="SRSVM",
        skipped=plan.skipped,
        intro=[_TEXT["fig9_intro"].format(**_protocol(plan))],
        notes=[
            *plan.notes,
            "",
            f"Training seconds of the final fits (mean): {fit_txt}",
            *_warning_lines(plan, results),
        ],
        row_label="setting",
    )
    if not values:
        return paths
    settings, x = list(values), np.arange(len(values))
    shown = [m for m in methods if any(m in values[st] for st in settings)]
    fig, ax = pyplot().subplots(figsize=(2.8 + 1.7 * len(settings), 3.6))
    width = 0.8 / len(shown)
    for j, m in enumerate(shown):
        means = [np.mean(values[st][m]) if m in values[st] else np.nan for st in settings]
        stds = [np.std(values[st][m]) if m in values[st] else 0.0 for st in settings]
        ax.bar(x + j * width, means, width, yerr=stds, label=m)
    ax.set_xticks(x + 0.4 - width / 2, settings, fontsize=8)
    lo = np.nanmin([np.mean(v) for by in values.values() for v in by.values()])
    ax.set(ylim=(max(0.0, lo - 5.0), 100.0), ylabel="test accuracy (%)")
    ax.set_title("Fig. 9 (reproduced)", fontsize=9)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return [*paths, save_figure(fig, out / f"{PAPER}_fig9.png")]


_TABLES = {  # name: (plan, report, aliases); the titles are in reference/srsvm.json
    "II": (_plan_xor, _report_xor, ("I", "xor", "fig5", "fig6")),
    "V": (_plan_uci, _report_timing, ("timing",)),
    "VI": (_plan_uci, _report_support, ()),
    "VII": (_plan_uci, _report_clusters, ()),
    "fig9": (_plan_images, _report_images, ("9",)),
    "fig10": (_plan_uci, _report_bounds, ("10", "bound")),
}
TABLES = tuple(Table(PAPER, name, _TEXT["titles"][name], *spec) for name, spec in _TABLES.items())
