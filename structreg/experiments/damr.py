"""Reproduction of the DAMR paper's UCI experiments (Wang, Chen, Xue & Fu, Neurocomputing 2015,
Section 5, Tables 2-5): Lap_RLSC, SSDR [24], SSDR [16] and DA_LapRLSC with 10 and 100 labels.

Tables ``3`` (10 labels, fixed parameters), ``4`` (100 labels, CV) and ``5`` (times, read from
the cells of Tables 3 and 4).  One cell per (data set, repetition, number of labels) runs all
four methods.  Protocol, ranges and the parameter mapping: ``docs/reproducing/damr.md``.
"""

from __future__ import annotations

import functools
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from ..clustering import FuzzyCMeans
from ..datasets import list_datasets, load_dataset
from ..model_selection import SemiSupervisedKFold
from ..models import DALapRLSC, LapRLSC, SSDRWang, SSDRWu, fit_path
from ..structure import knn_graph
from . import reference
from .engine import Options, Plan, Results, Table, cell_grid
from .protocol import grid_name, n_draws, runs_table, standardised_halves
from .report import (
    comparison_table,
    format_params,
    markdown_table,
    most_frequent,
    skipped_lines,
    skipped_rows,
    write_csv,
    write_markdown,
)
from .search import Axis, coarse_to_fine, cv_evaluator

__all__ = [
    "METHODS",
    "TABLE2",
    "TABLE3",
    "TABLE4",
    "TABLE5",
    "TABLES",
    "load_table2_dataset",
    "make_estimator",
    "search_axes",
]

PAPER = "damr"
VERSION = 1
METHODS = ("LapRLSC", "SSDR_Wang", "SSDR_Wu", "DA_LapRLSC")
"""Keys of the four methods in the returned dicts and the CSV."""

_REF = reference.load(PAPER)
"""The paper's numbers (Table 2: ``{name: (size, dimension)}``; Tables 3-5: ``{name: {method:
(mean, variance)}}``), data set names, fixed and searched parameters, report text."""
TABLE2: dict[str, tuple[int, int]] = _REF["table2"]
TABLE3, TABLE4, TABLE5 = _REF["table3"], _REF["table4"], _REF["table5"]
METHOD_TITLES: dict[str, str] = _REF["method_titles"]
_TEXT: dict[str, str] = _REF["report_text"]

FIXED_MAX_LABELS = 10
"""Label counts up to this use the paper's fixed 10-label parameters; larger ones use CV."""
N_REPEATS, QUICK_REPEATS = 20, 3
QUICK_MAX_SIZE = 400
"""``--quick`` runs only the data sets with at most this many points."""
LABEL_COUNTS = {"3": 10, "4": 100}
"""Cell-key table -> labeled points."""
GRIDS = ("coarse", "paper")
_GRAPH = {"kernel": "linear", "n_neighbors": 10, "weights": "heat"}


# -- data ------------------------------------------------------------------------------------
def _two_class(name: str, source: str) -> tuple[np.ndarray, np.ndarray, str]:
    """``(X, y, how)``: data set ``source`` as the paper's two-class set ``name``, ``y`` in 0, 1."""
    if name == "Automobile":
        X, y = load_dataset(source, return_X_y=True, missing="drop")
        risky = np.asarray(y).astype(int) > 0
        return X, risky.astype(int), "rows with missing cells dropped; symboling > 0 vs <= 0"
    X, y = load_dataset(source, return_X_y=True)
    y = np.asarray(y).astype(str)
    if name == "Vehicle":
        keep = np.isin(y, ["bus", "saab"])
        return X[keep], (y[keep] == "saab").astype(int), "bus vs saab (inferred from the size 435)"
    classes, codes = np.unique(y, return_inverse=True)
    how = f"as shipped ({', '.join(classes)})"
    return X, codes.astype(int), f"{how}; {_DIFFERS[name]}" if name in _DIFFERS else how


_DIFFERS = {
    "Austra": "Statlog Australian credit, 690 x 14 (the paper lists 15 dimensions)",
    "German": (
        "Statlog German credit in Weka's coding, 7 numeric and 13 nominal columns, the nominal "
        "ones one-hot encoded (61 features; the paper's 24 are the UCI numeric coding's)"
    ),
    "Heart": "Statlog heart, 270 x 13 (the paper lists 9 dimensions, a subset it does not name)",
    "Horse": (
        "Weka's horse colic (UCI's 300 training + 68 test rows), class surgical_lesion, 22 "
        "features of which 15 nominal, one-hot encoded (62 features), 1,927 missing cells "
        "imputed (column mean, or most frequent word); the paper's Horse is 366 x 27"
    ),
}
"""How a shipped set differs from the paper's version of it (Table 2's sizes)."""


@functools.cache
def load_table2_dataset(name: str) -> tuple[np.ndarray, np.ndarray, str] | str:
    """``(X, y, how)`` of a Table-2 set as :func:`_two_class` builds it (cached per process,
    read-only), or the reason it is skipped."""
    available = set(list_datasets())
    found = [c for c in _REF["sources"][name] if c in available]
    if not found:
        return "skipped: not among structreg's data sets"
    try:
        X, y, how = _two_class(name, found[0])
    except (OSError, ValueError) as exc:  # listed in the manifest but not loadable
        return f"skipped: {found[0]!r} could not be loaded ({exc})"
    n_classes = len(np.unique(y))
    if n_classes != 2:
        return (
            f"skipped: {found[0]!r} has {n_classes} classes here and the two-class version "
            "the paper used is not known"
        )
    X, y = np.asarray(X, dtype=float), np.asarray(y)
    X.setflags(write=False)
    y.setflags(write=False)
    return X, y, f"{found[0]}: {how}"


# -- estimators ------------------------------------------------------------------------------
def _averaged(method: str, params: dict, n_labeled: int | None, n_samples: int | None) -> dict:
    """The paper's sum-form weights at l labels and n points as structreg's averaged ones."""
    n = n_samples or 1
    scale = {"SSDR_Wu": {"gamma_D": n_labeled}, "SSDR_Wang": {"gamma_A": n, "lam": 1 / n}}
    return {k: v * scale.get(method, {}).get(k, 1) for k, v in params.items()}


class _FixedClusters(ClusterMixin, BaseEstimator):
    """A "clusterer" that returns cluster ids computed beforehand (reused across fits)."""

    def __init__(self, labels=None):
        self.labels = labels

    def fit(self, X, y=None):
        labels = np.asarray(self.labels)
        if labels.shape != (np.shape(X)[0],):
            raise ValueError(f"{labels.shape[0]} cluster ids for {np.shape(X)[0]} points")
        self.labels_ = labels
        return self


def make_estimator(
    method: str,
    seed: int,
    *,
    graph=None,
    clusters: np.ndarray | None = None,
    n_labeled: int | None = None,
    n_samples: int | None = None,
    **params: float,
):
    """One of the four methods: the paper's 10-label parameters, overridden by ``params``.

    ``graph``: a precomputed 10-NN heat graph of the training points for Lap_RLSC and
    SSDR [16]; ``clusters``: precomputed fuzzy c-means ids for DA_LapRLSC (what it would
    build itself with ``random_state=seed``); ``n_labeled``, ``n_samples``: the training
    set's l and n, for the SSDRs' sum-form weights (:func:`_averaged`; folds keep them).
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose from {METHODS}")
    if method.startswith("SSDR") and None in (n_labeled, n_samples):
        raise ValueError(f"{method} needs n_labeled and n_samples, the training set's sizes")
    params = _averaged(method, {**_REF["fixed"][method], **params}, n_labeled, n_samples)
    if method == "SSDR_Wang":
        return SSDRWang(kernel="linear", fit_intercept=False, **params)
    if method == "DA_LapRLSC":
        clusterer = None if clusters is None else _FixedClusters(clusters)
        return DALapRLSC(**_GRAPH, **params, clusterer=clusterer, random_state=seed)
    graph = "knn" if graph is None else graph
    return (LapRLSC if method == "LapRLSC" else SSDRWu)(**_GRAPH, graph=graph, **params)


def search_axes(method: str, grid: str) -> tuple[list[Axis], bool]:
    """The CV search space of ``method``: ``(axes, refine)`` for :func:`coarse_to_fine`.

    ``"paper"``: every value of every range, no refinement (the full grid); ``"coarse"``:
    every other value first, then the pattern search down to the paper's resolution.
    """
    if grid not in GRIDS:
        raise ValueError(f"grid must be one of {GRIDS}, got {grid!r}")
    step = 1 if grid == "paper" else 2
    space = _REF["space"][method].items()
    return [Axis(name, values, step) for name, values in space], grid == "coarse"


# -- one cell: a (data set, repetition, number of labels) ------------------------------------
def _pick_labeled(y: np.ndarray, n_labeled: int, rng: np.random.Generator) -> np.ndarray:
    """One random point per class (in random class order), then uniform random points."""
    if n_labeled >= len(y):
        return np.arange(len(y))
    first = [int(rng.choice(np.flatnonzero(y == c))) for c in rng.permutation(np.unique(y))]
    first = np.asarray(first[:n_labeled], dtype=int)
    more = rng.choice(np.setdiff1d(np.arange(len(y)), first), n_labeled - len(first), replace=False)
    return np.sort(np.concatenate([first, more]))


def _half_split(name: str, rep: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The standardised stratified half split of repetition ``rep`` (shared by 10 and 100)."""
    X, y, _ = load_table2_dataset(name)
    rng = np.random.default_rng([list(TABLE2).index(name), rep])
    return standardised_halves(X, y, int(rng.integers(2**31 - 1)))


def _transductive_fold_eval(
    method: str, seed: int, X: np.ndarray, y_semi: np.ndarray, graph, clusters: np.ndarray
) -> Callable[[list[dict], np.ndarray, np.ndarray], list[float]]:
    """Fold evaluator for :func:`cv_evaluator`: hide the test fold's labels, fit the batch by
    :func:`~structreg.models.fit_path` on the shared graph and clusters (one cache per fold,
    kept for the later batches), count hits."""
    sizes = {"n_labeled": int(np.sum(y_semi != -1)), "n_samples": len(X)}
    base = make_estimator(method, seed, graph=graph, clusters=clusters, **sizes)
    caches: dict[bytes, dict] = {}

    def fold_eval(candidates: list[dict], train: np.ndarray, test: np.ndarray) -> list[float]:
        y_fold = y_semi.copy()
        y_fold[test] = -1
        candidates = [_averaged(method, point, **sizes) for point in candidates]
        fits = fit_path(base, X, y_fold, candidates, cache=caches.setdefault(test.tobytes(), {}))
        return [float(np.sum(est.transduction_[test] == y_semi[test])) for est in fits]

    return fold_eval


def _damr_cell(
    *, dataset: str, method: str, split: int, v: int, n_labeled: int, grid: str | None = None
) -> dict[str, Any]:
    """All four methods on one half split with ``n_labeled`` labels (docs/reproducing/damr.md)."""
    Xtr, Xte, ytr, yte = _half_split(dataset, split)
    rng = np.random.default_rng([list(TABLE2).index(dataset), split, n_labeled])
    seed = int(rng.integers(2**31 - 1))
    labeled = _pick_labeled(ytr, n_labeled, rng)
    y_semi = np.full_like(ytr, -1)
    y_semi[labeled] = ytr[labeled]
    res: dict[str, Any] = {"n_labeled": len(labeled), "n_train": len(ytr), "acc": {}, "time": {}}
    cv = n_labeled > FIXED_MAX_LABELS
    if cv:
        res.update(params={}, cv_score={}, search_time={}, n_evaluated={})
        t0 = time.perf_counter()
        graph = knn_graph(Xtr, _GRAPH["n_neighbors"], weights="heat")
        clusters = FuzzyCMeans(n_clusters=2, random_state=seed).fit_predict(Xtr)
        res["shared_time"] = time.perf_counter() - t0  # graph + clustering, once
        stratify = bool(np.bincount(ytr[labeled]).min() >= 5)
        splitter = SemiSupervisedKFold(5, stratify=stratify, shuffle=True, random_state=seed)
        folds = list(splitter.split(Xtr, y_semi))
    messages: set[str] = set()
    predicted: dict[str, np.ndarray] = {}
    for m in METHODS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            params: dict[str, float] = {}
            if cv:
                t0 = time.perf_counter()
                axes, refine = search_axes(m, grid)
                fold_eval = _transductive_fold_eval(m, seed, Xtr, y_semi, graph, clusters)
                found = coarse_to_fine(cv_evaluator(fold_eval, folds), axes, refine=refine)
                params = {k: float(value) for k, value in found.best_params.items()}
                res["search_time"][m] = time.perf_counter() - t0
                res["params"][m] = params
                res["cv_score"][m] = 100.0 * found.best_score
                res["n_evaluated"][m] = found.n_evaluated
            # builds its own graph and clusters
            est = make_estimator(m, seed, n_labeled=len(labeled), n_samples=len(ytr), **params)
            t0 = time.perf_counter()
            est.fit(Xtr, y_semi)
            res["time"][m] = time.perf_counter() - t0
            predicted[m] = est.predict(Xte)
            res["acc"][m] = 100.0 * float(np.mean(predicted[m] == yte))
        messages.update(f"{m}: {w.category.__name__}: {w.message}" for w in caught)
    res["warnings"] = sorted(messages)
    res["disagree"] = 100.0 * float(np.mean(predicted["DA_LapRLSC"] != predicted["LapRLSC"]))
    return res


# -- plan ------------------------------------------------------------------------------------
def _settings(options: Options) -> dict[str, Any]:
    """Repetitions, search grid and the requested sets (Table-2 names; None: all)."""
    draws = n_draws(options, quick=QUICK_REPEATS, full=N_REPEATS)
    grid = grid_name(options, GRIDS, paper="damr", quick="coarse", full="paper")
    if draws < 1:
        raise ValueError(f"draws must be positive, got {draws}")
    requested, datasets = (options.extra or {}).get("datasets"), None
    if requested is not None:  # Table-2 or data set names
        requested = list(requested)
        lookup = {n.lower(): k for k, names in _REF["sources"].items() for n in (k, *names)}
        datasets = [lookup.get(str(name).lower().replace("-", "_")) for name in requested]
        if None in datasets:
            unknown = requested[datasets.index(None)]
            raise ValueError(
                f"{unknown!r} is not a data set of the paper's Table 2: {list(TABLE2)}"
            )
    return {"draws": draws, "grid": grid, "datasets": datasets}


def _plan(options: Options, cell_tables: tuple[str, ...]) -> Plan:
    """The cells of the cell tables: ``"3"`` (10 labels, fixed parameters), ``"4"`` (100
    labels, CV) or both (Table 5's times)."""
    s = _settings(options)
    built, skipped = {}, {}
    for name in TABLE2:
        loaded = load_table2_dataset(name)
        if isinstance(loaded, str):
            skipped[name] = loaded
        elif s["datasets"] is not None and name not in s["datasets"]:
            skipped[name] = "not run: not requested"
        elif options.quick and s["datasets"] is None and len(loaded[1]) > QUICK_MAX_SIZE:
            skipped[name] = f"not run: --quick runs only the sets of <= {QUICK_MAX_SIZE} points"
        else:
            X, y, how = loaded
            classes = np.bincount(y).tolist()
            built[name] = f"{how}; n = {len(y)}, d = {X.shape[1]}, classes {classes}"
    common = {"paper": PAPER, "datasets": built, "draws": s["draws"], "methods": ["all"]}
    cells = []
    for table in cell_tables:
        n_labeled = LABEL_COUNTS[table]
        grid = {"grid": s["grid"]} if n_labeled > FIXED_MAX_LABELS else {}
        cells += cell_grid(
            _damr_cell, table=table, **common, v=VERSION, n_labeled=n_labeled, **grid
        )
    return Plan(cells, skipped, context={"tables": cell_tables, "settings": s, "built": built})


# -- report ----------------------------------------------------------------------------------
def _rows(plan: Plan, results: Results, table: str) -> dict[str, list[dict]]:
    """``{data set: [cell result per repetition, in order]}`` of one cell table."""
    by = runs_table(plan, results, col=lambda k: k.table)
    return {name: per[table] for name, per in by.items() if table in per}


def _of(reps: list[dict], key: str, method: str) -> np.ndarray:
    """``r[key][method]`` of every repetition ``r`` (accuracies, times, ...)."""
    return np.array([r[key][method] for r in reps])


def _mean_var(reps: list[dict], key: str, method: str) -> tuple[float, float]:
    """Mean and variance of ``r[key][method]`` over the repetitions."""
    values = _of(reps, key, method)
    return values.mean(), values.var()


def _per_method(rows: dict[str, list[dict]], cell: Callable[[str, list[dict], str], str]):
    """A Markdown table of ``cell(name, runs, method)``: a row per data set, a column per method."""
    table = [[name, *(cell(name, reps, m) for m in METHODS)] for name, reps in rows.items()]
    return markdown_table(["data set", *(METHOD_TITLES[m] for m in METHODS)], table)


def _intro(plan: Plan) -> list[str]:
    return [_TEXT["protocol"].format(**plan.context["settings"]), "", _TEXT["mapping"]]


def _accuracy_report(plan: Plan, results: Results, out: Path, options: Options) -> list[Path]:
    """``damr_<table>.md`` and ``.csv``: test accuracy beside the paper's Table 3 or 4."""
    (table,) = plan.context["tables"]
    rows, n_labeled = _rows(plan, results, table), LABEL_COUNTS[table]
    paper_table = _REF[f"table{table}"]

    def spread(name: str, reps: list[dict], m: str) -> str:
        # the paper's "variance": of the accuracy as a fraction, times 100
        acc, ref = _of(reps, "acc", m), paper_table[name][m]
        return f"{acc.mean():.2f} ± {np.var(acc / 100.0) * 100.0:.2f} / {ref[0]:.2f} ± {ref[1]:.2f}"

    def chosen(name: str, reps: list[dict], m: str) -> str:
        best, k = most_frequent(format_params(r["params"][m]) for r in reps)
        return f"{best} ({k}/{len(reps)}; {_of(reps, 'n_evaluated', m).mean():.0f} cand.)"

    notes = [_TEXT["spread"], "", *_per_method(rows, spread), "", _summary(rows, paper_table)]
    how = _TEXT["fixed"]
    if n_labeled > FIXED_MAX_LABELS:
        how = _TEXT["cv"].format(search=_TEXT[plan.context["settings"]["grid"]])
        notes += ["", _TEXT["chosen"], "", *_per_method(rows, chosen)]
    notes += ["", "Data sets run (version used):", ""]
    notes += [f"- {name}: {version}" for name, version in plan.context["built"].items()]
    messages = sorted(
        {f"{n}: {w}" for n, reps in rows.items() for r in reps for w in r["warnings"]}
    )
    if messages:
        notes += ["", "Warnings raised during the fits:", ""] + [f"- {w}" for w in messages[:30]]
    return comparison_table(
        out,
        f"damr_{table}",
        title=f"DAMR paper, Table {table}: test accuracy (%) with {n_labeled} labeled points",
        values={
            n: {METHOD_TITLES[m]: _of(reps, "acc", m) for m in METHODS} for n, reps in rows.items()
        },
        methods=[METHOD_TITLES[m] for m in METHODS],
        paper={n: {METHOD_TITLES[m]: paper_table[n][m][0] for m in METHODS} for n in TABLE2},
        reference=METHOD_TITLES["DA_LapRLSC"],
        skipped=plan.skipped,
        intro=[*_intro(plan), "", how],
        notes=notes,
    )


def _summary(rows: dict[str, list[dict]], paper_table: dict) -> str:
    """DA_LapRLSC against Lap_RLSC: mean accuracies, the paper's, predictions that differ."""
    da, lap = (
        {n: _of(reps, "acc", m).mean() for n, reps in rows.items()}
        for m in ("DA_LapRLSC", "LapRLSC")
    )
    short = [
        f"{n} ({reps[0]['n_labeled']} labels: the whole training half)"
        for n, reps in rows.items()
        if reps[0]["n_labeled"] not in (10, 100)
    ]
    return _TEXT["summary"].format(
        ge=sum(da[n] >= lap[n] for n in rows),
        gt=sum(da[n] > lap[n] for n in rows),
        n=len(rows),
        paper_gt=sum(paper_table[n]["DA_LapRLSC"][0] > paper_table[n]["LapRLSC"][0] for n in rows),
        disagree=", ".join(
            f"{n} {np.mean([r['disagree'] for r in reps]):.2f}" for n, reps in rows.items()
        ),
    ) + (_TEXT["short"].format(", ".join(short)) if short else "")


def report_table5(plan: Plan, results: Results, out: Path, options: Options) -> list[Path]:
    """``damr_5.md`` and ``.csv``: fit times at 10 labels, search + refit times at 100."""
    rows3, rows4 = _rows(plan, results, "3"), _rows(plan, results, "4")

    def fit_time(name: str, reps: list[dict], m: str) -> str:
        (mean, var), ref = _mean_var(reps, "time", m), TABLE5[name][m]
        return f"{mean:.4f} ± {var:.1e} ({ref[0]:.4f} ± {ref[1]:.4f})"

    def search_time(name: str, reps: list[dict], m: str) -> str:
        return f"{_of(reps, 'search_time', m).mean():.2f} + {_of(reps, 'time', m).mean():.4f}"

    lines = ["# DAMR paper, Table 5: computation time (s)", "", *_intro(plan), ""]
    lines += ["## 10 labeled points", "", _TEXT["fit_times"], "", *_per_method(rows3, fit_time)]
    if rows4:
        shared = ", ".join(
            f"{n} {np.mean([r['shared_time'] for r in reps]):.3f} s" for n, reps in rows4.items()
        )
        lines += ["", "## 100 labeled points (not in the paper)", ""]
        lines += [_TEXT["search_times"].format(shared=shared), "", *_per_method(rows4, search_time)]
    csv_rows: list[list[Any]] = []
    for n_labeled, rows in ((10, rows3), (100, rows4)):
        for name, reps in rows.items():
            for m in METHODS:
                paper = TABLE5[name][m] if n_labeled == 10 else ("", "")
                search = ("", "") if n_labeled == 10 else _mean_var(reps, "search_time", m)
                row = [n_labeled, name, m, len(reps), *_mean_var(reps, "time", m), *paper, *search]
                csv_rows.append(row)
    csv_rows += [["", *row] for row in skipped_rows(plan.skipped, blanks=5)]
    header = "n_labeled data_set method n_splits fit_s_mean fit_s_var paper_fit_s_mean"
    header += " paper_fit_s_var search_s_mean search_s_var"
    return [
        write_markdown(out / "damr_5.md", lines + skipped_lines(plan.skipped)),
        write_csv(out / "damr_5.csv", header.split(), csv_rows),
    ]


_SPECS = {  # table: (the cell tables it reads, its report)
    "3": (("3",), _accuracy_report),
    "4": (("4",), _accuracy_report),
    "5": (("3", "4"), report_table5),
}
TABLES = tuple(
    Table(PAPER, table, _REF["tables"][table], functools.partial(_plan, cell_tables=cells), report)
    for table, (cells, report) in _SPECS.items()
)
