"""Reproduction of the DRLSC paper (Xue, Chen & Yang, Pattern Recognition 2009, Sec. 6).

``structreg reproduce drlsc [--table T]`` runs the two-moons toy (Tables 4-5, Fig. 1), the UCI
sets with the linear and the Gaussian kernel (Tables 6, 7), AR faces (Table 8, paper values
only), COIL-20 (Table 9) and USPS (Tables 10-12).  The protocol, the search, the methods and the
data versions: ``docs/reproducing/drlsc.md``.
"""

from __future__ import annotations

import math
import time
import warnings
from collections import defaultdict
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
from ..kernels import kernel_matrix
from ..models import DRGV, DRLSC, GRBFN, LSSVM, RLSC, LapRLSC, decision_values, fit_path
from ..models._base import pm_one_targets
from ..solvers import BorderedPath, NonConvexObjectiveWarning, PrecomputedSVM
from . import reference
from .engine import Cell, Options, Plan, Table
from .protocol import (
    chosen_methods,
    grid_name,
    load_lenses,
    n_draws,
    per_class_split,
    runs_table,
    seed_from,
)
from .report import comparison_table, cost_line, format_params, write_csv, write_markdown
from .search import (
    Axis,
    coarse_to_fine,
    cv_evaluator,
    log2_axis,
    stratified_folds,
    trivial_gaussian_widths,
    value_axis,
)

PAPER = "drlsc"
VERSION = 2
"""Protocol version: part of every cell key (bump it when a cell's result would change)."""

# -- The paper's numbers and the protocol's data (reference/drlsc.json) -----------------------
_REF = reference.load(PAPER)
TOY_METHODS = ("RN", "DRGV", "DRLSC")
TOY_SETS = ("A", "B", "C")
# Tables 4 / 5 (training / test accuracy %): {method: (set A, set B, set C)}.
TABLE4_TRAIN = _REF["table4"]
TABLE5_TEST = _REF["table5"]
LINEAR_METHODS = ("SVM", "LS-SVM", "MR", "DRGV", "DRLSC")
RBF_METHODS = ("RN", "GRBFN", "SVM", "LS-SVM", "MR", "DRGV", "DRLSC")
_TEXT: dict[str, str] = _REF["report_text"]
"""The reports' fixed text (``str.format`` templates)."""
UCI_SETS: dict[str, tuple[str | None, str]] = _REF["uci_sets"]
"""Table 6/7 row -> (structreg data set name or None when not available, note or reason)."""
IMAGE_TABLES: dict[str, dict[str, Any]] = _REF["image_tables"]
"""Tables 9-12: the data set, row label -> data set id, the rows ``--quick`` runs (USPS: the
setting)."""
QUICK_MAX_SIZE = 250
"""``--quick`` runs only the UCI sets with at most this many points."""


def _codes(y: np.ndarray) -> np.ndarray:
    return np.unique(np.asarray(y).astype(str), return_inverse=True)[1].ravel().astype(int)


@cache
def load_uci(name: str) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` of a Table-6/7 row in the version described in docs/reproducing/drlsc.md."""
    source = UCI_SETS[name][0]
    if source is None:
        raise FileNotFoundError(UCI_SETS[name][1])
    if name == "Lenses":
        X, y = load_lenses()
        return X, _codes(y)
    if name == "Dermatology":
        bunch = load_dataset(source, missing="impute")
        keep = [i for i, c in enumerate(bunch.feature_names) if c != "Age"]
        return bunch.data[:, keep], _codes(bunch.target)
    X, y = load_dataset(source, return_X_y=True)
    y = np.asarray(y).astype(str)
    if name == "Ecoli":
        keep = ~np.isin(y, ["imL", "imS"])
        X, y = X[keep], y[keep]
    return np.asarray(X, dtype=float), _codes(y)


def uci_status(name: str) -> str | None:
    """None when the row can run, else the reason it is skipped."""
    source, reason = UCI_SETS[name]
    if source is None:
        return reason
    if source != "wdbc" and source not in set(list_datasets()):
        return f"{source!r} is not among structreg's data sets"
    try:
        load_uci(name)
    except (OSError, ValueError) as exc:
        return f"{source!r} could not be loaded ({exc})"
    return None


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


@cache
def _images(name: str) -> tuple[np.ndarray, np.ndarray]:
    X, y = load_dataset(name, return_X_y=True)
    return np.asarray(X, dtype=float) / 255.0, np.asarray(y).astype(str)


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
        y = _codes(y)
        tr, te = _half_split(y, seed)
        return X[tr], y[tr], X[te], y[te]
    X, labels = _images(parts[0])
    if parts[0] == "usps":
        a, b = parts[1].split("v")
        keep = np.isin(labels, [a, b])
        X, labels = X[keep], labels[keep]
    y = _codes(labels)
    tr, te = per_class_split(y, int(parts[-1][1:]), np.random.default_rng(seed))
    tr = np.sort(tr)
    return X[tr], y[tr], X[te], y[te]


# -- Search spaces -----------------------------------------------------------------------------
ETAS = tuple(round(0.1 * i, 1) for i in range(11))
K_LIST: tuple[int, ...] = _REF["k_list"]
SVM_MAX_ITER = 100_000
"""libsvm's iteration cap per binary problem (reached only at large C on non-separable data,
where an uncapped libsvm can run for minutes; such a candidate is an approximate SVM)."""
N_FOLDS = 3
SMALL_TRAIN = 30
GRIDS: dict[str, dict[str, Any]] = _REF["grids"]
"""Grid name -> coarse steps of the log2 axes, of MR's gamma_I, of eta, of k (DRLSC, MR) and
whether the pattern search refines."""


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


def _k_max(y: np.ndarray, folds) -> int:
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


def n_centers(n: int) -> int:
    """GRBFN's number of fuzzy c-means centres for ``n`` training points."""
    return max(2, math.ceil(math.sqrt(n)))


# -- The estimators, and fold evaluators that share work across the candidates -----------------
def make_estimator(method: str, kernel: str, params: dict[str, Any], n_classes: int):
    """The estimator of ``method`` with the searched ``params`` (sigma -> gamma)."""
    kw: dict[str, Any] = {"kernel": kernel}
    if kernel == "rbf":
        kw["gamma"] = sigma_to_gamma(params["sigma"])
    if method == "RN":
        return RLSC(gamma_A=params["gamma_A"], **kw)
    if method == "GRBFN":
        return GRBFN(
            n_centers=params["n_centers"],
            gamma_A=params["gamma_A"],
            random_state=params["random_state"],
            **kw,
        )
    if method == "SVM":
        svc = SVC(C=params["C"], max_iter=params.get("max_iter", -1), **kw)
        return svc if n_classes == 2 else OneVsRestClassifier(svc)
    if method == "LS-SVM":
        return LSSVM(C=params["C"], **kw)
    if method == "MR":
        return LapRLSC(
            gamma_A=params["gamma_A"],
            gamma_I=params["gamma_I"],
            n_neighbors=params["k"],
            graph="knn",
            weights="heat",
            fit_intercept=True,
            **kw,
        )
    if method == "DRGV":
        return DRGV(eta=params["eta"], **kw)
    if method == "DRLSC":
        return DRLSC(eta=params["eta"], n_neighbors=params["k"], **kw)
    raise ValueError(f"unknown method {method!r}")


def _decide(F: np.ndarray) -> np.ndarray:
    return (F > 0).astype(int) if F.ndim == 1 else np.argmax(F, axis=1)


def _out(F: np.ndarray) -> np.ndarray:
    return F.ravel() if F.shape[1] == 1 else F


class FoldPath:
    """Fold evaluator of one method that shares per-fold work across the candidates.

    ``__call__(candidates, train, test)`` returns the number of correctly classified test
    points per candidate.  Candidates are grouped by ``group_keys`` (the parameters that the
    expensive shared work depends on); ``outputs`` returns the decision values of a group.
    Per-fold results (feature maps, graphs, ...) are cached for later batches.
    """

    group_keys: tuple[str, ...] = ()

    def __init__(self, method: str, kernel: str, X: np.ndarray, y: np.ndarray, n_classes: int):
        self.method, self.kernel, self.X, self.y, self.n_classes = method, kernel, X, y, n_classes
        self._cache: dict[tuple, Any] = {}

    def cached(self, key: tuple, make):
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    def grams(self, train, test, sigma) -> tuple[np.ndarray, np.ndarray]:
        """The training and test-vs-training Gram matrices of one fold and width."""
        g = None if self.kernel == "linear" else sigma_to_gamma(sigma)
        return (
            kernel_matrix(self.X[train], kernel=self.kernel, gamma=g),
            kernel_matrix(self.X[test], self.X[train], kernel=self.kernel, gamma=g),
        )

    def __call__(self, candidates, train, test):
        groups: dict[tuple, list[int]] = defaultdict(list)
        for i, c in enumerate(candidates):
            groups[tuple(c.get(k) for k in self.group_keys)].append(i)
        hits = np.zeros(len(candidates))
        fold = train.tobytes()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NonConvexObjectiveWarning)
            for idx in groups.values():
                outs = self.outputs(fold, [candidates[i] for i in idx], train, test)
                for i, F in zip(idx, outs, strict=True):
                    hits[i] = np.sum(_decide(F) == self.y[test])
        return hits

    def outputs(self, fold, candidates, train, test) -> list[np.ndarray]:  # pragma: no cover
        raise NotImplementedError


class LSSVMPath(FoldPath):
    """LS-SVM: one eigendecomposition of the Gram matrix per (fold, width) gives every C."""

    group_keys = ("sigma",)

    def outputs(self, fold, candidates, train, test):
        def make():
            K, Kte = self.grams(train, test, candidates[0].get("sigma"))
            # one-of-c +-1 targets of the fold's training points, as the estimators code them
            Y = pm_one_targets(self.y[train], np.ones(len(train), bool), self.n_classes)
            return BorderedPath(K, Y), Kte

        path, Kte = self.cached((fold, "eig", candidates[0].get("sigma")), make)
        outs = []
        for c in candidates:  # bordered system [0 1^T; 1 K + I/C], one eigh for every C
            sol = path.solve(1.0 / c["C"])
            outs.append(_out(Kte @ sol.dual_coef + sol.intercept))
        return outs


class SVMPath(FoldPath):
    """SVM: the Gram matrices once per (fold, width), libsvm per C (one-vs-rest)."""

    group_keys = ("sigma",)

    def outputs(self, fold, candidates, train, test):
        sigma = candidates[0].get("sigma")
        K, Kte = self.cached((fold, "gram", sigma), lambda: self.grams(train, test, sigma))
        return [
            PrecomputedSVM(C=c["C"], multi_class="ovr", max_iter=c.get("max_iter", -1))
            .fit(K, self.y[train], self.n_classes)
            .decision_function(Kte)
            for c in candidates
        ]


class ModelPath(FoldPath):
    """RN, GRBFN, MR, DRGV, DRLSC: the batch fitted by :func:`~structreg.models.fit_path`
    (docs/reproducing/drlsc.md)."""

    def outputs(self, fold, candidates, train, test):
        models = [make_estimator(self.method, self.kernel, c, self.n_classes) for c in candidates]
        names = models[0].get_params(deep=False)
        points = [{k: getattr(e, k) for k in names} for e in models]
        fits = fit_path(
            models[0],
            self.X[train],
            self.y[train],
            points,
            warn=False,
            cache=self.cached((fold, "fit_path"), dict),
        )
        return decision_values(fits, self.X[test])  # the test section once per feature map


PATHS = {
    "RN": ModelPath,
    "GRBFN": ModelPath,
    "SVM": SVMPath,
    "LS-SVM": LSSVMPath,
    "MR": ModelPath,
    "DRGV": ModelPath,
    "DRLSC": ModelPath,
}


# -- The cell: one (data set, run, method) -----------------------------------------------------
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
    ``search`` (the coarse steps of ``grid``) and ``v`` only key the stored result.  Returns
    test / train / CV accuracy (%), the chosen parameters, the number of candidates and the
    seconds (wall and CPU) spent.
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
        if method == "GRBFN":
            fixed.update(n_centers=n_centers(len(ytr)), random_state=_seed(dataset, split, "fcm"))
        axes = [
            a
            for a in search_axes(method, kernel, Xtr, _k_max(ytr, folds), grid)
            if a.name not in fixed
        ]
        evaluate = cv_evaluator(PATHS[method](method, kernel, Xtr, ytr, n_classes), folds)
        result = coarse_to_fine(evaluate, axes, fixed=fixed, refine=GRIDS[grid]["refine"])
        search_s = time.perf_counter() - start
        params = result.best_params
        est = make_estimator(method, kernel, params, n_classes).fit(Xtr, ytr)
        test_acc = 100.0 * float(np.mean(est.predict(Xte) == yte))
        train_acc = 100.0 * float(np.mean(est.predict(Xtr) == ytr))
        return {
            "test_acc": test_acc,
            "train_acc": train_acc,
            "cv_acc": 100.0 * result.best_score,
            "params": {k: (float(v_) if isinstance(v_, float) else v_) for k, v_ in params.items()},
            "n_candidates": result.n_evaluated,
            "n_train": int(len(ytr)),
            "n_test": int(len(yte)),
            "search_s": search_s,
            "seconds": time.perf_counter() - start,
            "cpu_s": time.process_time() - cpu,
        }


def make_cell(
    table: str,
    dataset: str,
    method: str,
    split: int,
    kernel: str,
    grid: str,
    n_folds: int = N_FOLDS,
    fixed: dict[str, Any] | None = None,
) -> Cell:
    """The cell of one (data set, run, method); its key holds the whole search setting."""
    fixed = dict(fixed or {})
    if method == "SVM":
        fixed["max_iter"] = SVM_MAX_ITER
    return Cell.make(
        fit_cell,
        paper=PAPER,
        table=table,
        dataset=dataset,
        method=method,
        split=split,
        kernel=kernel,
        grid=grid,
        search=GRIDS[grid],
        n_folds=n_folds,
        fixed=fixed or None,
        v=VERSION,
    )


# -- Tables 6 and 7: UCI -----------------------------------------------------------------------
def _grid(options: Options) -> str:
    return grid_name(options, GRIDS, paper="drlsc")


def uci_row(name: str) -> str:
    """The Table-6/7 row of ``name`` (a row name or a data set name, any case)."""
    for row, (source, _) in UCI_SETS.items():
        if name.lower() in (row.lower(), (source or "").lower()):
            return row
    raise ValueError(f"unknown data set {name!r}; choose from {list(UCI_SETS)}")


def _uci_plan(table: str, kernel: str, methods: Sequence[str]):
    def plan(options: Options) -> Plan:
        grid, draws = _grid(options), n_draws(options, quick=3, full=10)
        wanted = options.extra.get("datasets")
        if wanted is not None:
            wanted = [uci_row(d) for d in wanted]
        chosen = chosen_methods(options, methods)
        skipped, used = {}, {}
        for name in UCI_SETS:
            if wanted is not None and name not in wanted:
                continue
            reason = uci_status(name)
            if reason is None and options.quick and wanted is None:
                n = len(load_uci(name)[1])
                if n > QUICK_MAX_SIZE:
                    reason = (
                        f"--quick runs only the sets with at most {QUICK_MAX_SIZE} points ({n})"
                    )
            if reason is not None:
                skipped[name] = reason
                continue
            X, y = load_uci(name)
            used[name] = (X.shape[0], X.shape[1], int(y.max() + 1))
        # largest sets first: the long cells start early and the two workers finish together
        cells = [
            make_cell(table, name, method, split, kernel, grid)
            for name in sorted(used, key=lambda d: -used[d][0])
            for split in range(draws)
            for method in chosen
        ]
        context = {"kernel": kernel, "grid": grid, "draws": draws, "methods": chosen, "used": used}
        return Plan(cells, skipped, context=context)

    return plan


def _search_lines(grid: str, kernel: str, n_folds: int = N_FOLDS) -> list[str]:
    g = GRIDS[grid]
    return [
        _TEXT["search"].format(
            **g,
            grid=grid,
            n_folds=n_folds,
            small_train=SMALL_TRAIN,
            width=_TEXT["search_width"] if kernel == "rbf" else "",
            k_list=", ".join(map(str, K_LIST)),
            refinement=_TEXT["refine" if g["refine"] else "no_refine"],
            max_iter=SVM_MAX_ITER,
        )
    ]


def _cost_lines(by: dict[str, dict[str, list[dict]]]) -> list[str]:
    runs = [(m, r) for per in by.values() for m, rs in per.items() for r in rs]
    return [cost_line(runs)] if runs else []


def _report(table: str, intro: str = ""):
    """The accuracy table of Tables 6-7 (no ``intro``: UCI rows) and 8-12 (settings)."""
    paper = _REF[f"table{table}"]
    if table in IMAGE_TABLES:  # USPS: the paper's rows are keyed "1v7"
        paper = {row: paper[row.replace(" vs. ", "v")] for row in IMAGE_TABLES[table]["rows"]}

    def report(plan: Plan, results, out: Path, options: Options) -> list[Path]:
        ctx = plan.context
        by = runs_table(plan, results, order=list(ctx.get("used", ())))
        label = {d: row for row, d in ctx.get("rows", {}).items()}
        values = {
            label.get(d, d): {m: [r["test_acc"] for r in rs] for m, rs in per.items()}
            for d, per in by.items()
        }
        if not intro:
            lines = [
                _TEXT["uci"].format(table=table, draws=ctx["draws"]),
                "",
                *_search_lines(ctx["grid"], ctx["kernel"]),
            ]
            notes = ["Data sets (n, d, classes as used here):", ""]
            for name, (n, d, c) in ctx["used"].items():
                extra = UCI_SETS[name][1]
                notes.append(f"- {name}: {n} x {d}, {c} classes" + (f"; {extra}" if extra else ""))
            notes += [
                "",
                *_cost_lines(by),
                "Chosen parameters per run: the `_params.csv` file beside this table.",
            ]
        else:
            for row in ctx["rows"]:  # rows not run still show the paper's numbers
                values.setdefault(row, {})
            lines, notes = [intro], _cost_lines(by)
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

    return report


def _write_params(path: Path, by: dict[str, dict[str, list[dict]]]) -> Path:
    rows = [
        [
            d,
            m,
            i,
            *(f"{r[k]:.2f}" for k in ("test_acc", "train_acc", "cv_acc")),
            format_params(r["params"], sep=";", skip=("random_state",)),
            r["n_candidates"],
            f"{r['seconds']:.2f}",
        ]
        for d, per in by.items()
        for m, rs in per.items()
        for i, r in enumerate(rs)
    ]
    header = "dataset method run test_acc train_acc cv_acc params n_candidates seconds"
    return write_csv(path, header.split(), rows)


# -- Tables 4-5 and Fig. 1: the two-moons toy --------------------------------------------------
TOY_K = 10
"""The paper's k of DRLSC on the toy ("fixed to 10")."""


def _toy_plan(options: Options) -> Plan:
    grid, draws = _grid(options), n_draws(options, quick=2, full=10)
    methods = chosen_methods(options, TOY_METHODS)
    cells = [
        make_cell(
            "4-5", f"moons:{s}", m, split, "rbf", grid, 5, {"k": TOY_K} if m == "DRLSC" else None
        )
        for s in TOY_SETS
        for split in range(draws)
        for m in methods
    ]
    return Plan(cells, context={"grid": grid, "draws": draws, "methods": methods})


def _toy_report(plan: Plan, results, out: Path, options: Options) -> list[Path]:
    ctx = plan.context
    by = runs_table(plan, results)
    paths = []
    for part, key, ref, number in (
        ("train", "train_acc", TABLE4_TRAIN, "4"),
        ("test", "test_acc", TABLE5_TEST, "5"),
    ):
        values = {
            s: {m: [r[key] for r in by[f"moons:{s}"][m]] for m in ctx["methods"]} for s in TOY_SETS
        }
        paper = {s: {m: ref[m][i] for m in ctx["methods"]} for i, s in enumerate(TOY_SETS)}
        paths += comparison_table(
            out,
            f"{PAPER}_table{number}",
            title=f"DRLSC Table {number}: {part} accuracy (%) on the two-moons sets A, B, C",
            values=values,
            methods=ctx["methods"],
            paper=paper,
            reference="DRLSC",
            row_label="set",
        )
    # one Markdown for the pair, first in the list
    lines = [
        "# DRLSC toy problem (Xue, Chen & Yang 2009, Sec. 6.1, Tables 4-5, Fig. 1)",
        "",
        _TEXT["toy"].format(draws=ctx["draws"], k=TOY_K),
        "",
        *_search_lines(ctx["grid"], "rbf", n_folds=5),
        "",
    ]
    headings = ("Table 4: training accuracy", "Table 5: test accuracy")
    for p, heading in zip(paths[::2], headings, strict=True):
        lines += [f"## {heading} (%)", *p.read_text().splitlines()[1:], ""]
    lines += ["## Parameters chosen on draw 0", ""]
    lines += [
        f"- set {s}, {m}: " + format_params(by[f"moons:{s}"][m][0]["params"])
        for s in TOY_SETS
        for m in ctx["methods"]
    ]
    md = write_markdown(out / f"{PAPER}_4-5.md", lines)
    png = out / f"{PAPER}_fig1.png"
    _toy_figure(png, by, ctx["methods"])
    return [md, *paths, png]


def _toy_figure(path: Path, by, methods: Sequence[str]) -> None:
    from .plots import boundary_figure

    fitted = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonConvexObjectiveWarning)
        for i, s in enumerate(TOY_SETS):
            Xtr, ytr, Xte, yte = train_test(f"moons:{s}", 0)
            for m in methods:
                est = make_estimator(m, "rbf", by[f"moons:{s}"][m][0]["params"], 2)
                fitted[(m, i)] = (est.fit(Xtr, ytr), Xtr, ytr, Xte, yte)
    boundary_figure(
        path,
        fitted,
        rows=[f"set {s}" for s in TOY_SETS],
        cols=list(methods),
        title="DRLSC toy (draw 0): RN, DRGV, DRLSC; '.' train, '+' test",
    )


# -- Tables 8-12: image recognition ------------------------------------------------------------
def _image_plan(table: str):
    """The rows of ``IMAGE_TABLES[table]``; in ``--quick`` only its quick rows run."""
    spec = IMAGE_TABLES[table]

    def plan(options: Options) -> Plan:
        grid, draws = _grid(options), n_draws(options, quick=1, full=10)
        chosen = chosen_methods(options, RBF_METHODS)
        wanted = options.extra.get("rows")
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
        cells = [
            make_cell(table, d, m, split, "rbf", grid)
            for d in datasets
            for split in range(draws)
            for m in chosen
        ]
        context = {"grid": grid, "draws": draws, "methods": chosen, "rows": spec["rows"]}
        return Plan(cells, skipped, context=context)

    return plan


def _ar_plan(options: Options) -> Plan:
    reason = "the AR face database is not among structreg's data sets"
    context = {"methods": list(RBF_METHODS), "rows": {s: s for s in _REF["table8"]}}
    return Plan([], {s: reason for s in _REF["table8"]}, context=context)


_TITLES = {t: titles[0] for t, titles in _REF["tables"].items()}
TABLES: tuple[Table, ...] = (
    Table(PAPER, "4-5", _TITLES["4-5"], _toy_plan, _toy_report, aliases=("4", "5", "toy", "fig1")),
    Table(PAPER, "6", _TITLES["6"], _uci_plan("6", "linear", LINEAR_METHODS), _report("6")),
    Table(PAPER, "7", _TITLES["7"], _uci_plan("7", "rbf", RBF_METHODS), _report("7")),
    Table(PAPER, "8", _TITLES["8"], _ar_plan, _report("8", _TEXT["8"])),
    *(
        Table(
            PAPER, t, _TITLES[t], _image_plan(t), _report(t, _TEXT[spec["source"]].format(**spec))
        )
        for t, spec in IMAGE_TABLES.items()
    ),
)
