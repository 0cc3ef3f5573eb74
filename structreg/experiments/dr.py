"""Reproduction of Zhang, Wang, Li, Yin & Dong, "Classification by discriminative
regularization" (AAAI 2008): Table 4 (UCI), Table 5 (COIL) and Fig. 2 (toy).

The paper's settings, what is done here and why: ``docs/reproducing/dr.md``.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping
from functools import cache, partial
from pathlib import Path
from typing import Any

import numpy as np
from scipy.spatial.distance import pdist
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC, LinearSVC

from ..datasets import load_dataset, make_drlsc_moons
from ..exceptions import NonConvexObjectiveWarning
from ..models import DiscriminativeRLS, LapRLSC, fit_path
from . import reference
from .engine import Cell, Options, Plan, Results, Table, cell_grid
from .plots import boundary_figure
from .protocol import (
    chosen_methods,
    grid_name,
    load_lenses,
    n_draws,
    per_class_sample,
    per_class_split,
    runs_table,
    seed_from,
    standardised_halves,
    uci_rows,
)
from .report import (
    comparison_table,
    cost_line,
    format_params,
    markdown_table,
    most_frequent,
    write_markdown,
)
from .search import (
    Axis,
    coarse_to_fine,
    cv_evaluator,
    stratified_folds,
    trivial_gaussian_widths,
    value_axis,
)

PAPER = "dr"
VERSION = 2
"""Protocol version; part of every cell's key."""

METHODS = ("LSVM", "KSVM", "LLapRLS", "KLapRLS", "LGDR", "LLDR", "GDR", "LDR")
REFERENCE = "LDR"

# The paper's numbers (Table 3: n, d, classes; Tables 4-5: accuracy %, its "SVM" is KSVM), the
# data-set mapping, the grids (exponents: sigma is 4^e s0, the others 10^e) and the reports'
# fixed text (``str.format`` templates): reference/dr.json
_REF = reference.load(PAPER)
UCI_SETS: dict[str, tuple[str | None, str]] = _REF["uci_sets"]
_GRIDS: dict[str, dict[str, Any]] = _REF["grids"]
_TEXT: dict[str, str] = _REF["report_text"]
_FIT_ERRORS = (ValueError, ArithmeticError, np.linalg.LinAlgError)


# -- data ----------------------------------------------------------------------------------------
_seed = partial(seed_from, sep=":")  # a seed derived from the cell's identity (no global RNG)


@cache
def _load(name: str) -> tuple[np.ndarray, np.ndarray]:
    """A structreg data set as (X float, y str); lenses recoded to its UCI integer codes."""
    if name == "lenses":
        return load_lenses()
    X, y = load_dataset(name, return_X_y=True)
    return np.asarray(X, dtype=float), np.asarray(y).astype(str)


@cache
def _load_coil(n_objects: int | None) -> tuple[np.ndarray, np.ndarray]:
    """COIL-20 pixels scaled to [0, 1], optionally the first ``n_objects`` objects only."""
    X, y = _load("coil20")
    if n_objects is not None:
        keep = np.isin(y.astype(int), np.arange(1, n_objects + 1))
        X, y = X[keep], y[keep]
    return X / 255.0, y


# -- the methods -----------------------------------------------------------------------------------
class _TrainingSet:
    """What the parameters of a fit depend on: ``s0``, the neighbourhood sizes and ``n_cv``,
    the number of training points of the CV folds the weights were chosen on (the mean fold
    size for the final fit after a search; the set's own size on a fold): the paper's
    sum-form ``gamma`` is DiscriminativeRLS's averaged ``gamma_D = gamma n_cv``
    (docs/reproducing/dr.md)."""

    def __init__(self, X: np.ndarray, y: np.ndarray, n_cv: float | None = None) -> None:
        self.n_cv = n_cv or len(y)
        self.sigma0 = float(pdist(X).mean()) if len(X) > 1 else 1.0
        counts = np.unique(y, return_counts=True)[1]
        self.xi = int(max(1, min(5, counts.min() - 1)))
        self.zeta = int(max(1, min(5, len(y) - counts.max())))
        self.graph_k = int(min(6, len(y) - 1))

    def gamma(self, log4_sigma: float) -> float:
        """scikit-learn's rbf ``gamma`` of the width ``4^log4_sigma * s0``."""
        return 1.0 / (2.0 * (4.0**log4_sigma * self.sigma0) ** 2)


def make_estimator(method: str, params: Mapping[str, float], data: _TrainingSet) -> Any:
    """The paper's ``method`` with searched exponents ``params`` for a training set."""
    e = {k: 10.0**v for k, v in params.items() if k != "sigma"}
    gamma = data.gamma(params["sigma"]) if "sigma" in params else None
    linear = method in ("LSVM", "LLapRLS", "LGDR", "LLDR")
    kernel = {"kernel": "linear", "gamma": "scale"} if linear else {"kernel": "rbf", "gamma": gamma}
    if method == "LSVM":
        return LinearSVC(C=e["C"], max_iter=10_000)
    if method == "KSVM":
        return SVC(C=e["C"], gamma=gamma)
    if method in ("LLapRLS", "KLapRLS"):
        weights = {"gamma_A": e["gamma_A"], "gamma_I": e["gamma_I"]}
        return LapRLSC(**kernel, **weights, n_neighbors=data.graph_k, fit_intercept=linear)
    if method in ("LGDR", "LLDR", "GDR", "LDR"):
        margin = "local" if method in ("LLDR", "LDR") else "global"
        weights = {"gamma_A": e["gamma_A"], "gamma_D": e["gamma_D"] * data.n_cv}
        neighbours = {"n_neighbors": data.xi, "n_neighbors_other": data.zeta}
        return DiscriminativeRLS(margin=margin, **kernel, **weights, **neighbours)
    raise ValueError(f"unknown method {method!r}; choose from {METHODS}")


def _fit(method: str, params: Mapping[str, float], X: np.ndarray, y: np.ndarray, n_cv=None) -> Any:
    """``method`` fitted on ``(X, y)`` (``n_cv``: see :class:`_TrainingSet`)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonConvexObjectiveWarning)
        warnings.simplefilter("ignore", ConvergenceWarning)
        return make_estimator(method, params, _TrainingSet(X, y, n_cv)).fit(X, y)


class _FoldEvaluator:
    """Fold evaluator for :func:`~structreg.experiments.cv_evaluator`: hits per candidate,
    the batch fitted by :func:`~structreg.models.fit_path` (docs/reproducing/dr.md)."""

    def __init__(self, method: str, X: np.ndarray, y: np.ndarray) -> None:
        self.method, self.X, self.y = method, X, y
        self.caches: dict[bytes, dict] = {}

    def __call__(self, candidates: list[dict], train: np.ndarray, test: np.ndarray) -> list:
        X, y = self.X[train], self.y[train]
        data = _TrainingSet(X, y)
        models = [make_estimator(self.method, params, data) for params in candidates]
        points = [m.get_params(deep=False) for m in models]
        cache = self.caches.setdefault(train.tobytes(), {})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            fits = fit_path(models[0], X, y, points, warn=False, errors="return", cache=cache)
        hits = []
        for model in fits:
            try:
                if isinstance(model, Exception):
                    raise model
                hits.append(float(np.sum(model.predict(self.X[test]) == self.y[test])))
            except _FIT_ERRORS:
                hits.append(np.nan)
        return hits


def _axes(method: str, grid: str, X: np.ndarray) -> list[Axis]:
    """The searched exponents of ``method``; trivial Gaussian widths on X pruned."""
    g = _GRIDS[grid]
    axes = []
    for name in _REF["axes"][method]:
        values = g["exponents"][name]
        if name == "sigma":
            s0 = _TrainingSet(X, np.zeros(len(X))).sigma0
            trivial = trivial_gaussian_widths(X, [4.0**k * s0 for k in values])
            values = [k for k in values if 4.0**k * s0 not in trivial] or list(values)
        axes.append(value_axis(name, values, coarse_step=g["coarse_step"]))
    return axes


def _search(
    method: str, grid: str, X: np.ndarray, y: np.ndarray, folds: list
) -> tuple[dict[str, Any], float, int]:
    """Coarse-to-fine CV search: (best exponents, CV accuracy %, candidates evaluated)."""
    evaluate = cv_evaluator(_FoldEvaluator(method, X, y), folds)
    result = coarse_to_fine(evaluate, _axes(method, grid, X), refine=_GRIDS[grid]["refine"])
    return result.best_params, 100.0 * result.best_score, result.n_evaluated


def _final(
    method: str, found: tuple, folds: list, train: tuple, test: tuple, start: float
) -> dict[str, Any]:
    """Fit the searched parameters on the whole training set ``(X, y)``, score it on ``test``:
    the cell's result."""
    params, cv_acc, n_eval = found
    model = _fit(method, params, *train, n_cv=float(np.mean([len(tr) for tr, _ in folds])))
    return {
        "test_acc": 100.0 * float(np.mean(model.predict(test[0]) == test[1])),
        "cv_acc": cv_acc,
        "params": params,
        "n_candidates": n_eval,
        "convex": getattr(model, "solver_info_", {}).get("convex"),
        "seconds": time.perf_counter() - start,
    }


def _plan_cells(
    options: Options, table: str, func: Any, datasets: list[str], **params: Any
) -> tuple[list[Cell], dict[str, Any]]:
    """The cells of ``func`` (data set, run, method) and the plan's context."""
    grid = grid_name(options, _GRIDS, paper="dr", key="dr_grid")
    methods = tuple(m for m in METHODS if m in chosen_methods(options, METHODS))
    draws = n_draws(options, quick=5 if table == "5" else 3, full=50 if table == "5" else 10)
    key = {"paper": PAPER, "table": table, "v": VERSION, "grid": grid}
    cells = cell_grid(func, datasets=datasets, draws=draws, methods=methods, **key, **params)
    return cells, {"table": table, "methods": methods, "draws": draws, "grid": grid}


# -- Table 4 -------------------------------------------------------------------------------------
def uci_cell(
    *, dataset: str, method: str, split: int, v: int, grid: str, n_folds: int
) -> dict[str, Any]:
    """One (UCI set, split, method): CV search on the training half, test accuracy."""
    start = time.perf_counter()
    X, y = _load(dataset)
    seed = _seed(dataset, split)
    Xtr, Xte, ytr, yte = standardised_halves(X, y, seed % 2**31)
    folds = stratified_folds(ytr, n_folds, seed, min_train_per_class=2)
    found = _search(method, grid, Xtr, ytr, folds)
    return _final(method, found, folds, (Xtr, ytr), (Xte, yte), start)


def _quick_list(row: str, data: Any) -> str | None:
    """Why ``--quick`` leaves out a UCI row (not one of the smaller sets), or None."""
    return None if row in _REF["quick_uci"] else _TEXT["quick_left_out"]


def plan_table4(options: Options) -> Plan:
    used, skipped, notes = uci_rows(options, UCI_SETS, lambda r: _load(UCI_SETS[r][0]), _quick_list)
    sets = {row: UCI_SETS[row][0] for row in used}
    shapes = {row: (*X.shape, len(np.unique(y))) for row, (X, y) in used.items()}
    n_folds = 3 if options.quick else 5
    cells, context = _plan_cells(options, "4", uci_cell, list(sets.values()), n_folds=n_folds)
    return Plan(
        cells, skipped, notes, {**context, "sets": sets, "shapes": shapes, "n_folds": n_folds}
    )


def _params_summary(by: Mapping[str, Mapping[str, list[dict[str, Any]]]]) -> list[str]:
    """One line per (row, method): the most frequent chosen exponents."""

    def exponent(name: str, value: float) -> str:
        return f"{name}=4^{value:g} s0" if name == "sigma" else f"{name}=10^{value:g}"

    lines = []
    for row, per in by.items():
        for method, runs in per.items():
            best, count = most_frequent(
                format_params(dict(sorted(r["params"].items())), fmt=exponent) for r in runs
            )
            cv = np.mean([r["cv_acc"] for r in runs])
            non_convex = sum(r.get("convex") is False for r in runs)
            note = f"; non-convex final fit in {non_convex} runs" if non_convex else ""
            shown = f"{best} ({count}/{len(runs)} runs)"
            lines.append(f"- {row}, {method}: {shown}; mean CV accuracy {cv:.1f} %{note}")
    return lines


def _search_lines(grid: str) -> list[str]:
    """The search of ``grid`` in words."""
    g, step = _GRIDS[grid], _GRIDS[grid]["coarse_step"]
    shown = "; ".join(
        f"{name} {'4^k s0' if name == 'sigma' else '10^k'}, k in {list(values)}"
        for name, values in g["exponents"].items()
    )
    how = _TEXT["refine" if g["refine"] else "no_refine"].format(step=step, half=step // 2)
    return [_TEXT["search"].format(grid=grid, shown=shown, how=how)]


def report_table(plan: Plan, results: Results, out: Path, options: Options) -> list[Path]:
    """The accuracy table of Table 4 or 5 (``plan.context["table"]``): the protocol, the
    table, the notes, the chosen parameters and the cost."""
    ctx = plan.context
    table, methods = ctx["table"], ctx["methods"]
    spec = _REF["reports"][table]
    if table == "4":
        how = _TEXT["table4_protocol"].format(draws=ctx["draws"], n_folds=ctx["n_folds"])
        after = [_TEXT["table4_methods"]]
        notes = ["Data-set versions (the paper's Table 3 vs structreg's):", ""]
        for row, (n_, d_, c_) in ctx["shapes"].items():
            (n, d, c), note = _REF["table3"][row], UCI_SETS[row][1]
            line = f"- {row}: paper {n} x {d}, {c} classes; here {n_} x {d_}, {c_} classes"
            notes.append(line + (f" ({note})" if note else ""))
        row_of = {name: row for row, name in ctx["sets"].items()}
    else:
        how = _TEXT["table5_protocol"].format(
            draws=ctx["draws"], objects=ctx["n_objects"] or 20, dev_repeats=ctx["dev_repeats"]
        )
        after = [_TEXT["table5_data"], _TEXT["table5_laprls"]]
        notes, row_of = [_TEXT["table5_note"]], {"coil20": "COIL (2 train)"}
    by = runs_table(plan, results, row=lambda k: row_of[k.dataset])
    runs = [(m, r) for per in by.values() for m, rs in per.items() for r in rs]
    notes = [*notes, "", *plan.notes, spec["params_heading"], "", *_params_summary(by), ""]
    notes.append(cost_line(runs, label="Compute", where="on this machine", per_group=False))
    return comparison_table(
        out,
        f"{PAPER}_{table}",
        title=f"Discriminative regularization (Zhang et al. 2008), Table {table}: {spec['title']}",
        values={
            r: {m: [x["test_acc"] for x in rs] for m, rs in per.items()} for r, per in by.items()
        },
        methods=methods,
        paper=_REF[f"table{table}"],
        reference=REFERENCE if REFERENCE in methods else None,
        skipped=plan.skipped,
        intro=[spec["lead"], "", how, *_search_lines(ctx["grid"]), *after],
        notes=notes,
        row_label=spec["row_label"],
    )


# -- Table 5 -------------------------------------------------------------------------------------
@cache
def coil_parameters(
    method: str, grid: str, n_labeled: int, n_objects: int | None, repeats: int
) -> tuple[tuple[dict[str, Any], float, int], list]:
    """Parameters of ``method`` for COIL, chosen on the development draw (docs/reproducing/dr.md).

    ``2 n_labeled`` images per object; ``repeats`` repetitions of a 2-fold split inside every
    object, so each training fold holds ``n_labeled`` images per object.  Cached per process: every
    run of the table uses the same, deterministic choice.  Returns the search's
    ``(parameters, CV accuracy, candidates)`` and the folds.
    """
    X, y = _load_coil(n_objects)
    rng = np.random.default_rng(_seed("coil20", "development", n_labeled))
    chosen = per_class_sample(y, 2 * n_labeled, rng)
    dev = np.concatenate(chosen)
    position = {index: i for i, index in enumerate(dev)}
    folds = []
    for _ in range(repeats):
        halves = [rng.permutation(idx) for idx in chosen]
        first = np.array([position[i] for h in halves for i in h[:n_labeled]])
        second = np.array([position[i] for h in halves for i in h[n_labeled:]])
        folds += [(first, second), (second, first)]
    return _search(method, grid, X[dev], y[dev], folds), folds


def coil_cell(
    *,
    dataset: str,
    method: str,
    split: int,
    v: int,
    grid: str,
    n_labeled: int,
    n_objects: int | None,
    dev_repeats: int,
) -> dict[str, Any]:
    """One COIL run: ``n_labeled`` random images per object train, the rest test."""
    start = time.perf_counter()
    found, folds = coil_parameters(method, grid, n_labeled, n_objects, dev_repeats)
    X, y = _load_coil(n_objects)
    train, test = per_class_split(y, n_labeled, np.random.default_rng(_seed(dataset, split)))
    return _final(method, found, folds, (X[train], y[train]), (X[test], y[test]), start)


def plan_table5(options: Options) -> Plan:
    n_objects, dev_repeats = options.extra.get("coil_objects"), 1 if options.quick else 2
    rows = _REF["table5_rows"]  # row -> (data set or None, names for --datasets)
    sets = {
        row: (names[0], "" if names[0] else _TEXT["pie_missing"]) for row, names in rows.items()
    }
    aliases = {row: names[1:] for row, names in rows.items()}
    used, skipped, notes = uci_rows(
        options, sets, lambda row: _load_coil(n_objects), lambda row, data: None, aliases
    )
    setting = {"n_labeled": 2, "dev_repeats": dev_repeats, "n_objects": n_objects}
    cells, context = _plan_cells(options, "5", coil_cell, [sets[r][0] for r in used], **setting)
    return Plan(cells, skipped, notes, {**context, **setting})


# -- Fig. 2 --------------------------------------------------------------------------------------
_TOY_SETS = ("I", "II", "III")
_TOY_MARGINS = {"GDR": "global", "LDR": "local"}


def _toy_fit(
    *, level: int, margin: str, gamma_D: float, n_per_class: int, n_neighbors: int, v: int
) -> tuple[DiscriminativeRLS, np.ndarray, np.ndarray]:
    """A Fig. 2 panel's fit from its cell's parameters (``v``, the protocol version, keys it)."""
    X, y = make_drlsc_moons(
        level=level, n_samples_per_class=n_per_class, random_state=_seed("moons", level)
    )
    weights = {"gamma": 1.0 / (2.0 * 0.1**2), "gamma_A": 0.1, "gamma_D": gamma_D}  # sigma = 0.1
    neighbours = {"n_neighbors": n_neighbors, "n_neighbors_other": n_neighbors}
    clf = DiscriminativeRLS(margin=margin, kernel="rbf", **weights, **neighbours)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonConvexObjectiveWarning)
        clf.fit(X, y)
    return clf, X, y


def toy_cell(*, dataset: str, method: str, split: int, **params: Any) -> dict[str, Any]:
    """One panel of Fig. 2 (``params``: those of :func:`_toy_fit`): training accuracy and
    convexity of the objective."""
    clf, X, y = _toy_fit(**params)
    return {"train_acc": 100.0 * float(clf.score(X, y)), "convex": bool(clf.solver_info_["convex"])}


def plan_fig2(options: Options) -> Plan:
    n_per_class = int(options.extra.get("toy_per_class", 100))
    key = {"paper": PAPER, "table": "fig2", "split": 0, "v": VERSION, "n_neighbors": 5}
    cell = partial(Cell.make, toy_cell, n_per_class=n_per_class, **key)
    cells = []
    for level, name in enumerate(_TOY_SETS, start=1):
        # discriminality weights: the paper's (sum-form) 0.1 and the convex 0.1 / n, as
        # DiscriminativeRLS's averaged gamma_D (n times the sum-form weight)
        for label, gamma_D in {"paper": 0.1 * 2 * n_per_class, "0.1/n": 0.1}.items():
            for method, margin in _TOY_MARGINS.items():
                panel = {"level": level, "margin": margin, "gamma_D": gamma_D}
                cells.append(cell(dataset=f"moons {name}", method=f"{method} ({label})", **panel))
    return Plan(cells, context={"n_per_class": n_per_class})


def report_fig2(plan: Plan, results: Results, out: Path, options: Options) -> list[Path]:
    """Fig. 2: the training accuracies (Markdown) and the decision boundaries (PNG)."""
    n_per_class = plan.context["n_per_class"]
    cols = list(dict.fromkeys(c.key.method for c in plan.cells))  # method (weight), plan order
    cells = {(c.key.dataset, c.key.method): c.key for c in plan.cells}
    fitted, table = {}, []
    for s, name in enumerate(_TOY_SETS):
        shown = []
        for col in cols:
            key = cells[(f"moons {name}", col)]
            r = results[key]
            shown.append(f"{r['train_acc']:.1f} %{'' if r['convex'] else ' (non-convex)'}")
            fitted[(col, s)] = (*_toy_fit(**key.params), None, None)
        table.append([name, *shown])
    intro = _TEXT["fig2_intro"].format(n_per_class=n_per_class, weight=0.1 / (2 * n_per_class))
    lines = [_TEXT["fig2_heading"], "", intro, "", *markdown_table(["set", *cols], table), ""]
    lines += [_TEXT["fig2_cells"], "", _TEXT["fig2_figure_note"]]
    md = write_markdown(out / f"{PAPER}_fig2.md", lines)
    png = out / f"{PAPER}_fig2.png"
    rows = [f"set {name}" for name in _TOY_SETS]
    boundary_figure(png, fitted, rows=rows, cols=cols, title=_TEXT["fig2_figure"])
    return [md, png]


TABLES: tuple[Table, ...] = (
    Table(PAPER, "4", _TEXT["title_4"], plan_table4, report_table),
    Table(PAPER, "5", _TEXT["title_5"], plan_table5, report_table),
    Table(PAPER, "fig2", _TEXT["title_fig2"], plan_fig2, report_fig2, aliases=("2", "toy")),
)
