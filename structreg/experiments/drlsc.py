"""Reproduction of the DRLSC paper (Xue, Chen & Yang, Pattern Recognition 2009, Sec. 6).

``structreg reproduce drlsc [--table T]`` runs the two-moons toy (Tables 4-5, Fig. 1), the UCI
sets with the linear and the Gaussian kernel (Tables 6, 7), AR faces (Table 8, paper values
only), COIL-20 (Table 9) and USPS (Tables 10-12).  The protocol, the search, the methods and the
data versions: ``docs/reproducing/drlsc.md``.
"""

from __future__ import annotations

import itertools
import math
import time
import warnings
from collections.abc import Sequence
from functools import cache, lru_cache, partial
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.multiclass import OneVsRestClassifier
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from ..datasets import list_datasets, load_dataset, make_drlsc_moons
from ..exceptions import NonConvexObjectiveWarning
from ..kernels import kernel_matrix
from ..models import DRGV, DRLSC, GRBFN, LSSVM, RLSC, LapRLSC, decision_path
from . import reference
from .engine import Cell, Options, Plan, Table
from .plots import boundary_figure
from .protocol import (
    chosen_methods,
    class_codes,
    grid_name,
    load_images,
    load_lenses,
    n_draws,
    per_class_split,
    precomputed_svc,
    precomputed_svc_params,
    runs_table,
    seed_from,
    uci_rows,
)
from .report import comparison_table, cost_line, format_params, write_csv, write_markdown
from .search import (
    Axis,
    coarse_to_fine,
    cv_evaluator,
    log2_axis,
    n_correct,
    stratified_folds,
    trivial_gaussian_widths,
    value_axis,
)

PAPER = "drlsc"
VERSION = 3
"""Protocol version: part of every cell key (bump it when a cell's result would change)."""

# The paper's numbers, the protocol's data and the reports' fixed text (reference/drlsc.json)
_REF = reference.load(PAPER)
_TEXT: dict[str, str] = _REF["report_text"]
TOY_METHODS, LINEAR_METHODS, RBF_METHODS = (_REF["methods"][k] for k in ("4-5", "linear", "rbf"))
UCI_SETS: dict[str, tuple[str | None, str]] = _REF["uci_sets"]
"""Table 6/7 row -> (structreg data set name or None when not available, note or reason)."""
IMAGE_TABLES: dict[str, dict[str, Any]] = _REF["image_tables"]
"""Tables 9-12: the data set, row label -> data set id, the rows ``--quick`` runs."""
GRIDS: dict[str, dict[str, Any]] = _REF["grids"]
"""Grid name -> coarse steps of the log2 axes, MR's gamma_I, eta, k (DRLSC, MR); refinement."""
K_LIST: tuple[int, ...] = _REF["k_list"]
ETAS = tuple(round(0.1 * i, 1) for i in range(11))
_P = _REF["protocol"]
TOY_SETS, TOY_K = _P["toy_sets"], _P["toy_k"]
N_FOLDS, SMALL_TRAIN = _P["n_folds"], _P["small_train"]
QUICK_MAX_SIZE, SVM_MAX_ITER = _P["quick_max_size"], _P["svm_max_iter"]


# -- Data ----------------------------------------------------------------------------------------
@cache
def load_uci(name: str) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` of a Table-6/7 row in the version described in docs/reproducing/drlsc.md."""
    source = UCI_SETS[name][0]
    if source is None:
        raise FileNotFoundError(UCI_SETS[name][1])
    if name == "Lenses":
        X, y = load_lenses()
        return X, class_codes(y)
    if name == "Dermatology":
        bunch = load_dataset(source, missing="impute")
        keep = [i for i, c in enumerate(bunch.feature_names) if c != "Age"]
        return bunch.data[:, keep], class_codes(bunch.target)
    X, y = load_dataset(source, return_X_y=True)
    y = np.asarray(y).astype(str)
    if name == "Ecoli":
        keep = ~np.isin(y, ["imL", "imS"])
        X, y = X[keep], y[keep]
    return np.asarray(X, dtype=float), class_codes(y)


_seed = partial(seed_from, sep="|", bits=31)


def _half_split(y: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Random stratified half/half split (odd class sizes: the extra point alternates)."""
    rng = np.random.default_rng(seed)
    train, extra = [], 0
    for c in np.unique(y):
        members = rng.permutation(np.flatnonzero(y == c))
        half = len(members) // 2 + (len(members) % 2) * extra
        extra ^= len(members) % 2
        train.append(members[:half])
    train = np.sort(np.concatenate(train))
    return train, np.setdiff1d(np.arange(len(y)), train)


@lru_cache(maxsize=8)
def train_test(dataset: str, split: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(X_train, y_train, X_test, y_test)`` of one run (integer class codes).

    ``dataset``: a Table-6/7 row name (half/half, standardised on the training half),
    ``"moons:A"`` (the toy set A, half/half), or ``"coil20:G9"`` / ``"usps:2v3:G10"`` (``m``
    per class for training, grey levels / 255).
    """
    seed = _seed(dataset, split)
    if ":" not in dataset:
        X, y = load_uci(dataset)
        tr, te = _half_split(y, seed)
        scaler = StandardScaler().fit(X[tr])
        return scaler.transform(X[tr]), y[tr], scaler.transform(X[te]), y[te]
    parts = dataset.split(":")
    if parts[0] == "moons":  # the toy: 100 points per class, raw coordinates
        X, y = make_drlsc_moons(level=TOY_SETS.index(parts[1]) + 1, random_state=seed)
        y = class_codes(y)
        tr, te = _half_split(y, seed)
        return X[tr], y[tr], X[te], y[te]
    X, labels = load_images(parts[0])
    if parts[0] == "usps":
        keep = np.isin(labels, parts[1].split("v"))
        X, labels = X[keep], labels[keep]
    y = class_codes(labels)
    tr, te = per_class_split(y, int(parts[-1][1:]), np.random.default_rng(seed))
    tr = np.sort(tr)
    return X[tr], y[tr], X[te], y[te]


# -- Search spaces -------------------------------------------------------------------------------
def sigma_to_gamma(sigma: float) -> float:
    """``gamma`` of ``exp(-gamma ||x - z||^2)`` for the width ``sigma`` of the paper."""
    return 1.0 / (2.0 * sigma**2)


def neighbour_list(k_max: int) -> list[int]:
    """The thinned k candidates inside ``[2, k_max]`` (``[1]`` when ``k_max < 2``)."""
    if k_max < 2:
        return [1]
    ks = [k for k in K_LIST if k <= k_max]
    if k_max < K_LIST[-1] and k_max not in ks:
        ks.append(k_max)
    return ks


def _k_max(y: np.ndarray, folds: list[tuple[np.ndarray, np.ndarray]]) -> int:
    """``min_c n_c - 1`` over the training set and every CV training fold (at least 1)."""
    smallest = min(
        [int(np.bincount(y).min())]
        + [int(np.bincount(y[tr], minlength=y.max() + 1).min()) for tr, _ in folds]
    )
    return max(1, smallest - 1)


def search_axes(method: str, kernel: str, X: np.ndarray, k_max: int, grid: str) -> list[Axis]:
    """The searched axes of ``method`` (docs/reproducing/drlsc.md), widths pruned on ``X``.

    Axis orders make ties prefer the simpler model: wider Gaussians, larger ridges
    (``gamma_A``, ``gamma_I``), smaller ``C``, larger ``eta`` (the convex end), smaller ``k``.
    """
    g = GRIDS[grid]
    axes: list[Axis] = []
    if kernel == "rbf":
        sigmas = [2.0**e for e in range(10, -11, -1)]
        trivial = trivial_gaussian_widths(X, sigmas)
        kept = [s for s in sigmas if s not in trivial] or sigmas
        axes.append(Axis("sigma", tuple(kept), g["log2"]))
    ridge = {"exhaustive": True, "descending": True}
    if method in ("RN", "GRBFN"):
        axes.append(log2_axis("gamma_A", **ridge))
    elif method == "LS-SVM":
        axes.append(log2_axis("C", exhaustive=True))
    elif method == "SVM":
        axes.append(log2_axis("C", coarse_step=g["log2"]))
    elif method == "MR":
        axes.append(log2_axis("gamma_I", coarse_step=g["gamma_I"], descending=True))
        axes.append(value_axis("k", neighbour_list(k_max), coarse_step=g["k_mr"]))
        axes.append(log2_axis("gamma_A", **ridge))
    elif method in ("DRGV", "DRLSC"):
        axes.append(value_axis("eta", ETAS[::-1], coarse_step=g["eta"]))
        if method == "DRLSC":
            axes.append(value_axis("k", neighbour_list(k_max), coarse_step=g["k"]))
    else:
        raise ValueError(f"unknown method {method!r}")
    return axes


def cv_folds(y: np.ndarray, n_folds: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The CV folds of one run: ``n_folds``-fold stratified, or (below ``SMALL_TRAIN``
    training points) as many folds as the largest class has points; a class stays in every
    training fold when a fold would leave it fewer than 2 points."""
    if len(y) < SMALL_TRAIN:
        n_folds = int(np.bincount(y).max())
    return stratified_folds(y, n_folds, seed, min_train_per_class=2)


# -- The estimators, and the fold evaluator that shares work across the candidates ------------
_MODELS = {"RN": RLSC, "GRBFN": GRBFN, "LS-SVM": LSSVM, "MR": LapRLSC, "DRGV": DRGV, "DRLSC": DRLSC}


def model_params(method: str, kernel: str, params: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of ``method``'s model for the searched ``params`` (sigma ->
    gamma, k -> n_neighbors; MR is LapRLSC on a heat-weighted kNN graph with a bias)."""
    kw: dict[str, Any] = {"kernel": kernel}
    if kernel == "rbf":
        kw["gamma"] = sigma_to_gamma(params["sigma"])
    names = {"RN": ("gamma_A",), "GRBFN": ("n_centers", "gamma_A", "random_state")}
    names |= {"LS-SVM": ("C",), "MR": ("gamma_A", "gamma_I"), "DRGV": ("eta",), "DRLSC": ("eta",)}
    kw.update({k: params[k] for k in names[method]})
    if method in ("MR", "DRLSC"):
        kw["n_neighbors"] = params["k"]
    if method == "MR":
        kw.update(graph="knn", weights="heat", fit_intercept=True)
    return kw


def make_estimator(method: str, kernel: str, params: dict[str, Any], n_classes: int) -> Any:
    """The estimator of ``method`` with the searched ``params`` (sigma -> gamma)."""
    if method == "SVM":
        gamma = {"gamma": sigma_to_gamma(params["sigma"])} if kernel == "rbf" else {}
        svc = SVC(C=params["C"], max_iter=params.get("max_iter", -1), kernel=kernel, **gamma)
        return svc if n_classes == 2 else OneVsRestClassifier(svc)
    if method not in _MODELS:
        raise ValueError(f"unknown method {method!r}")
    return _MODELS[method](**model_params(method, kernel, params))


class FoldEvaluator:
    """Fold evaluator of one method (for :func:`~structreg.experiments.search.cv_evaluator`):
    the number of correctly classified test points per candidate, from the decision values of
    :func:`~structreg.models.decision_path` on the fold, which shares the work of a batch of
    candidates (docs/reproducing/drlsc.md).

    The SVM runs as ``SVC(kernel="precomputed")`` on the Gram matrices of the fold and width,
    computed once for all values of ``C`` and kept for the later batches; every other method
    passes the fold's points to its model, with a :func:`~structreg.models.fit_path` cache per
    fold kept for the later batches.
    """

    def __init__(
        self, method: str, kernel: str, X: np.ndarray, y: np.ndarray, n_classes: int
    ) -> None:
        self.method = method
        self.kernel = kernel
        self.X = X
        self.y = y
        self.n_classes = n_classes
        self._path_caches: dict[bytes, dict] = {}  # fold -> fit_path cache
        self._grams: dict[tuple[bytes, float | None], tuple[np.ndarray, np.ndarray]] = {}

    def __call__(self, candidates: list[dict], train: np.ndarray, test: np.ndarray) -> np.ndarray:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NonConvexObjectiveWarning)
            decisions = self.decisions(candidates, train, test)
        return np.array([n_correct(F, self.y[test]) for F in decisions], dtype=float)

    def decisions(
        self, candidates: list[dict], train: np.ndarray, test: np.ndarray
    ) -> list[np.ndarray]:
        """The decision values on the test fold of every candidate fitted on the training
        fold."""
        if self.method == "SVM":
            return self._svm_decisions(candidates, train, test)
        points = [model_params(self.method, self.kernel, c) for c in candidates]
        model = _MODELS[self.method](**points[0])
        cache = self._path_caches.setdefault(train.tobytes(), {})
        Xtr, ytr, Xte = self.X[train], self.y[train], self.X[test]
        return list(decision_path(model, Xtr, ytr, points, Xte, cache=cache))

    def _svm_decisions(
        self, candidates: list[dict], train: np.ndarray, test: np.ndarray
    ) -> list[np.ndarray]:
        """libsvm along ``C``, one :func:`~structreg.models.decision_path` per width."""
        by_width: dict[float | None, list[int]] = {}
        for i, c in enumerate(candidates):
            by_width.setdefault(c.get("sigma"), []).append(i)
        svm = precomputed_svc(self.n_classes)
        out: list[Any] = [None] * len(candidates)
        for sigma, indices in by_width.items():
            K, K_test = self._gram(train, test, sigma)
            points = []
            for i in indices:
                libsvm = {"C": candidates[i]["C"], "max_iter": candidates[i].get("max_iter", -1)}
                points.append(precomputed_svc_params(self.n_classes, **libsvm))
            F = decision_path(svm, K, self.y[train], points, K_test)
            for i, decision in zip(indices, F, strict=True):
                out[i] = decision
        return out

    def _gram(
        self, train: np.ndarray, test: np.ndarray, sigma: float | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The training and test-vs-training Gram matrices of one fold and width."""
        key = (train.tobytes(), sigma)
        if key not in self._grams:
            gamma = None if self.kernel == "linear" else sigma_to_gamma(sigma)
            Xtr = self.X[train]
            K = kernel_matrix(Xtr, kernel=self.kernel, gamma=gamma)
            K_test = kernel_matrix(self.X[test], Xtr, kernel=self.kernel, gamma=gamma)
            self._grams[key] = (K, K_test)
        return self._grams[key]


# -- The cell: one (data set, run, method) -------------------------------------------------------
def fit_cell(
    *,
    dataset: str,
    method: str,
    split: int,
    kernel: str,
    grid: str,
    n_folds: int = N_FOLDS,
    fixed: dict[str, Any] | None = None,
    search: dict[str, Any] | None = None,
    v: int = VERSION,
) -> dict[str, Any]:
    """Search the parameters of ``method`` by CV on the training half, refit, score.

    ``fixed``: parameters not searched (e.g. the toy's k = 10, SVM's iteration cap).
    ``search`` (the coarse steps of ``grid``) and ``v`` only key the stored result.
    """
    if search is not None and search != GRIDS[grid]:
        raise ValueError(f"search settings {search} differ from the {grid!r} grid {GRIDS[grid]}")
    with warnings.catch_warnings():
        # saddle points of DRLSC / DRGV (eta < 1) are the paper's closed form; fuzzy c-means
        # stopping at max_iter a hair above its tolerance does not change the centres
        warnings.simplefilter("ignore", NonConvexObjectiveWarning)
        warnings.simplefilter("ignore", ConvergenceWarning)
        start, cpu = time.perf_counter(), time.process_time()
        Xtr, ytr, Xte, yte = train_test(dataset, split)
        n_classes = int(max(ytr.max(), yte.max()) + 1)
        folds = cv_folds(ytr, n_folds, _seed(dataset, split, "cv"))
        fixed = dict(fixed or {})
        if method == "GRBFN":  # ceil(sqrt(n)) fuzzy c-means centres: the paper gives no number
            n_centers = max(2, math.ceil(math.sqrt(len(ytr))))
            fixed.update(n_centers=n_centers, random_state=_seed(dataset, split, "fcm"))
        axes = search_axes(method, kernel, Xtr, _k_max(ytr, folds), grid)
        axes = [a for a in axes if a.name not in fixed]
        evaluate = cv_evaluator(FoldEvaluator(method, kernel, Xtr, ytr, n_classes), folds)
        result = coarse_to_fine(evaluate, axes, fixed=fixed, refine=GRIDS[grid]["refine"])
        search_s = time.perf_counter() - start
        params = result.best_params
        est = make_estimator(method, kernel, params, n_classes).fit(Xtr, ytr)
        return {
            "test_acc": 100.0 * float(np.mean(est.predict(Xte) == yte)),
            "train_acc": 100.0 * float(np.mean(est.predict(Xtr) == ytr)),
            "cv_acc": 100.0 * result.best_score,
            "params": {k: (float(x) if isinstance(x, float) else x) for k, x in params.items()},
            "n_candidates": result.n_evaluated,
            "n_train": int(len(ytr)),
            "n_test": int(len(yte)),
            "search_s": search_s,
            "seconds": time.perf_counter() - start,
            "cpu_s": time.process_time() - cpu,
        }


def _cells(
    table: str,
    datasets: Sequence[str],
    options: Options,
    methods: Sequence[str],
    *,
    quick: int,
    kernel: str = "rbf",
    n_folds: int = N_FOLDS,
) -> tuple[list[Cell], dict[str, Any]]:
    """The cells (data set, run, method nested in that order) and the plan's context; a key
    holds the whole search setting (the fixed parameters: SVM's iteration cap, the paper's
    k = 10 of DRLSC on the toy)."""
    grid, draws = grid_name(options, GRIDS, paper="drlsc"), n_draws(options, quick, full=10)
    chosen = chosen_methods(options, methods)
    setting = {"kernel": kernel, "grid": grid, "search": GRIDS[grid], "n_folds": n_folds}
    fixed = {"SVM": {"max_iter": SVM_MAX_ITER}, "DRLSC": {"k": TOY_K} if table == "4-5" else None}
    key = {"paper": PAPER, "table": table, **setting, "v": VERSION}
    cells = [
        Cell.make(fit_cell, **key, dataset=d, method=m, split=s, fixed=fixed.get(m))
        for d, s, m in itertools.product(datasets, range(draws), chosen)
    ]
    return cells, {"table": table, "grid": grid, "draws": draws, "methods": chosen}


def _search_lines(grid: str, kernel: str, n_folds: int = N_FOLDS) -> list[str]:
    """The search of ``grid`` in words (the reports' protocol paragraph)."""
    g = GRIDS[grid]
    fields = {"grid": grid, "n_folds": n_folds, "k_list": ", ".join(map(str, K_LIST))}
    fields["width"] = _TEXT["search_width"] if kernel == "rbf" else ""
    fields["refinement"] = _TEXT["refine" if g["refine"] else "no_refine"]
    return [_TEXT["search"].format_map({**_P, **g, **fields})]


# -- Tables 6-12: accuracy tables of UCI sets and images -----------------------------------------
def _quick_size(row: str, data: tuple[np.ndarray, np.ndarray]) -> str | None:
    """Why ``--quick`` leaves out a UCI set (more than ``QUICK_MAX_SIZE`` points), or None."""
    n = len(data[1])
    if n > QUICK_MAX_SIZE:
        return f"--quick runs only the sets with at most {QUICK_MAX_SIZE} points ({n})"
    return None


def _uci_plan(options: Options, table: str) -> Plan:
    """Table 6 (linear kernel) or 7 (Gaussian) on the UCI sets that load, largest first."""
    kernel, methods = ("linear", LINEAR_METHODS) if table == "6" else ("rbf", RBF_METHODS)
    data, skipped, notes = uci_rows(options, UCI_SETS, load_uci, _quick_size)
    used = {row: (X.shape[0], X.shape[1], int(y.max() + 1)) for row, (X, y) in data.items()}
    # largest sets first: the long cells start early and the two workers finish together
    order = sorted(used, key=lambda d: -used[d][0])
    cells, context = _cells(table, order, options, methods, quick=3, kernel=kernel)
    return Plan(cells, skipped, notes, {**context, "kernel": kernel, "used": used})


def _image_plan(options: Options, table: str) -> Plan:
    """The rows of ``IMAGE_TABLES[table]``; in ``--quick`` only its quick rows run."""
    spec, wanted = IMAGE_TABLES[table], options.extra.get("rows")
    skipped, datasets = {}, []
    available = spec["source"] in set(list_datasets())
    for label, dataset in spec["rows"].items():
        if wanted is not None and label not in wanted:
            continue
        if not available:
            skipped[label] = f"{spec['source']!r} is not among structreg's data sets"
        elif options.quick and wanted is None and label not in spec["quick"]:
            skipped[label] = "not run with --quick (run the table without --quick)"
        else:
            datasets.append(dataset)
    cells, context = _cells(table, datasets, options, RBF_METHODS, quick=1)
    return Plan(cells, skipped, context={**context, "rows": spec["rows"]})


def _ar_plan(options: Options) -> Plan:
    reason = "the AR face database is not among structreg's data sets"
    context = {"table": "8", "methods": list(RBF_METHODS), "rows": {s: s for s in _REF["table8"]}}
    return Plan([], {s: reason for s in _REF["table8"]}, context=context)


def _report(plan: Plan, results: dict, out: Path, options: Options) -> list[Path]:
    """The accuracy table of Tables 6-7 (UCI rows) and 8-12 (settings, after an ``intro``)."""
    ctx = plan.context
    table = ctx["table"]
    paper, intro = _REF[f"table{table}"], _TEXT.get(table, "")
    if table in IMAGE_TABLES:  # USPS: the paper's rows are keyed "1v7"
        spec = IMAGE_TABLES[table]
        paper = {row: paper[row.replace(" vs. ", "v")] for row in spec["rows"]}
        intro = _TEXT[spec["source"]].format(**spec)
    by = runs_table(plan, results, order=list(ctx.get("used", ())))
    label = {d: row for row, d in ctx.get("rows", {}).items()}
    values = {
        label.get(d, d): {m: [r["test_acc"] for r in rs] for m, rs in per.items()}
        for d, per in by.items()
    }
    runs = [(m, r) for per in by.values() for m, rs in per.items() for r in rs]
    cost = [cost_line(runs)] if runs else []
    if not intro:
        uci = _TEXT["uci"].format(table=table, draws=ctx["draws"])
        lines = [uci, "", *_search_lines(ctx["grid"], ctx["kernel"])]
        notes = ["Data sets (n, d, classes as used here):", ""]
        for name, (n, d, c) in ctx["used"].items():
            extra = UCI_SETS[name][1]
            notes.append(f"- {name}: {n} x {d}, {c} classes" + (f"; {extra}" if extra else ""))
        notes += ["", *plan.notes, *cost, _TEXT["params_csv"]]
    else:
        for row in ctx["rows"]:  # rows not run still show the paper's numbers
            values.setdefault(row, {})
        lines, notes = [intro], cost
        if "grid" in ctx:  # Table 8 (AR) has the paper's numbers only
            lines += ["", f"{ctx['draws']} random draws of the training images per row."]
            lines += ["", *_search_lines(ctx["grid"], "rbf")]
    paths = comparison_table(
        out,
        f"{PAPER}_{table}",
        title=_REF["tables"][table][1],
        values=values,
        methods=ctx["methods"],
        paper=paper,
        reference="DRLSC" if intro or "DRLSC" in ctx["methods"] else None,
        skipped=plan.skipped,
        intro=lines,
        notes=notes,
        row_label="setting" if intro else "data set",
    )
    if by or not intro:
        paths.append(_write_params(out / f"{PAPER}_{table}_params.csv", by))
    return paths


def _write_params(path: Path, by: dict[str, dict[str, list[dict]]]) -> Path:
    """The chosen parameters, accuracies, candidates and seconds of every run (CSV)."""
    header = "dataset method run test_acc train_acc cv_acc params n_candidates seconds"
    rows = [
        [d, m, i, *(f"{r[k]:.2f}" for k in ("test_acc", "train_acc", "cv_acc"))]
        + [format_params(r["params"], sep=";", skip=("random_state",)), r["n_candidates"]]
        + [f"{r['seconds']:.2f}"]
        for d, per in by.items()
        for m, rs in per.items()
        for i, r in enumerate(rs)
    ]
    return write_csv(path, header.split(), rows)


# -- Tables 4-5 and Fig. 1: the two-moons toy ----------------------------------------------------
def _toy_plan(options: Options) -> Plan:
    datasets = [f"moons:{s}" for s in TOY_SETS]
    cells, context = _cells("4-5", datasets, options, TOY_METHODS, quick=2, n_folds=5)
    return Plan(cells, context=context)


def _toy_report(plan: Plan, results: dict, out: Path, options: Options) -> list[Path]:
    """Tables 4 and 5 (each a Markdown and a CSV; one Markdown for the pair, first), Fig. 1."""
    methods, by = plan.context["methods"], runs_table(plan, results)
    paths = []
    for part, key, number in (("train", "train_acc", "4"), ("test", "test_acc", "5")):
        values = {s: {m: [r[key] for r in by[f"moons:{s}"][m]] for m in methods} for s in TOY_SETS}
        ref = _REF[f"table{number}"]
        paths += comparison_table(
            out,
            f"{PAPER}_table{number}",
            title=_TEXT["toy_table"].format(number=number, part=part),
            values=values,
            methods=methods,
            paper={s: {m: ref[m][i] for m in methods} for i, s in enumerate(TOY_SETS)},
            reference="DRLSC",
            row_label="set",
        )
    toy = _TEXT["toy"].format(draws=plan.context["draws"], k=TOY_K)
    lines = [_TEXT["toy_heading"], "", toy, "", *_search_lines(plan.context["grid"], "rbf", 5), ""]
    headings = ("Table 4: training accuracy", "Table 5: test accuracy")
    for p, heading in zip(paths[::2], headings, strict=True):
        lines += [f"## {heading} (%)", *p.read_text().splitlines()[1:], ""]
    lines += ["## Parameters chosen on draw 0", ""]
    for s, m in itertools.product(TOY_SETS, methods):
        lines.append(f"- set {s}, {m}: " + format_params(by[f"moons:{s}"][m][0]["params"]))
    md = write_markdown(out / f"{PAPER}_4-5.md", lines)
    fitted = {}  # Fig. 1: draw 0's fits
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonConvexObjectiveWarning)
        for i, s in enumerate(TOY_SETS):
            Xtr, ytr, Xte, yte = train_test(f"moons:{s}", 0)
            for m in methods:
                est = make_estimator(m, "rbf", by[f"moons:{s}"][m][0]["params"], 2)
                fitted[(m, i)] = (est.fit(Xtr, ytr), Xtr, ytr, Xte, yte)
    png = out / f"{PAPER}_fig1.png"
    rows = [f"set {s}" for s in TOY_SETS]
    boundary_figure(png, fitted, rows=rows, cols=list(methods), title=_TEXT["toy_figure"])
    return [md, *paths, png]


_TITLES = {t: titles[0] for t, titles in _REF["tables"].items()}
TABLES: tuple[Table, ...] = (
    Table(PAPER, "4-5", _TITLES["4-5"], _toy_plan, _toy_report, aliases=("4", "5", "toy", "fig1")),
    *(Table(PAPER, t, _TITLES[t], partial(_uci_plan, table=t), _report) for t in ("6", "7")),
    Table(PAPER, "8", _TITLES["8"], _ar_plan, _report),
    *(Table(PAPER, t, _TITLES[t], partial(_image_plan, table=t), _report) for t in IMAGE_TABLES),
)
