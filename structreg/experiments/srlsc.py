"""Reproduction of the S-RLSC paper's USPS experiment (Fan, Gu, Qiao & Zhang 2011, Fig. 7
and Table 4) on the experiment engine.

``structreg reproduce srlsc [--table fig7|4]``: both tables read the same cells (one per
``(m, draw, method)``, cell-key table ``"usps"``).  The protocol, ``--quick``, the options and
the reuse of the data-only work are described in ``docs/reproducing/srlsc.md``.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import normalize

from ..datasets import load_dataset
from ..models import GFHF, SRC, LapRLSC, SparseRLSC, drop_label_work, fit_path
from ..models._base import UNLABELED
from ..structure.l1graph import l1_graph
from . import reference
from .engine import Cell, Options, Plan, Table
from .protocol import runs_by
from .report import comparison_table, pyplot
from .store import CellKey

__all__ = [
    "FIG7_M",
    "METHODS",
    "SRLSC_TABLE4",
    "TABLE4_M",
    "TABLES",
    "UNAVAILABLE",
    "cached_l1_graph",
    "usps_subset",
]

PAPER = "srlsc"
CELL_TABLE = "usps"
"""Table name in the cell keys: Fig. 7 and Table 4 share their cells."""
VERSION = 1
METHODS = ("S-RLSC", "LapRLSC", "GFHF", "SRC", "1-NN")
FIG7_M = (5, 10, 20, 40, 70, 100, 130, 160, 190)
TABLE4_M = (5, 10, 40, 100, 160)
# Table 4 of the paper (``reference/srlsc.json``): out-of-sample accuracy (%) on USPS, one run,
# {method: (m = 5, 10, 40, 100, 160)}.
SRLSC_TABLE4 = reference.load(PAPER)["table4"]
UNAVAILABLE = {
    "MIT CBCL faces": "not among structreg's data sets (the paper's Fig. 5 and Table 2)",
    "ITS pedestrians": "not among structreg's data sets (the paper's Fig. 6 and Table 3)",
    "Extended Yale B": "not among structreg's data sets (the paper's Fig. 8 and Tables 5-7, "
    "with the noisy versions)",
}
C_A, C_I, KERNEL_GAMMA, K_GRAPH, SRC_EPSILON = 0.005, 0.01, 1.0 / 0.5**2, 7, 0.05
PER_CLASS, HOLDOUT, SUBSET_SEED, DRAW_SEED = 250, 0.15, 0, 2011
FULL = {"m_values": FIG7_M, "draws": 5, "l1_mode": "exact", "src_max_points": 200}
QUICK = {"m_values": (5, 10, 40), "draws": 2, "l1_mode": "lasso", "src_max_points": 20}


# -- data ------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=4)
def usps_subset(per_class: int = PER_CLASS, holdout: float = HOLDOUT, random_state: int = 0):
    """The paper's USPS subset: ``(X1, y1, X_out, y_out)``, rows scaled to unit l2 norm.

    Cached per process; the arrays are read-only.
    """
    X, y = load_dataset("usps", return_X_y=True)
    y = np.asarray(y).astype(int)
    rng = np.random.default_rng(random_state)
    n_out = int(np.ceil(holdout * per_class))
    keep, out = [], []
    for c in np.unique(y):
        idx = rng.choice(np.flatnonzero(y == c), per_class, replace=False)
        out.append(idx[:n_out])
        keep.append(idx[n_out:])
    keep, out = np.concatenate(keep), np.concatenate(out)
    X = normalize(np.asarray(X, dtype=float))
    arrays = (X[keep], y[keep], X[out], y[out])
    for a in arrays:
        a.setflags(write=False)
    return arrays


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/structreg/l1graph`` (``~/.cache/structreg/l1graph``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join("~", ".cache")
    return Path(base).expanduser() / "structreg" / "l1graph"


def _graph_path(X: np.ndarray, per_class: int, mode: str, cache_dir: Path) -> Path:
    digest = hashlib.sha256(np.ascontiguousarray(X).tobytes()).hexdigest()[:16]
    return cache_dir / f"l1graph_usps_{per_class}pc_{mode}_{digest}.npz"


def cached_l1_graph(
    X: np.ndarray,
    per_class: int,
    mode: str,
    cache_dir: str | Path,
    n_jobs: int | None = None,
    verbose: bool = False,
) -> tuple[sp.csr_matrix, float, Path, bool]:
    """The l1-graph of ``X``: ``(A, seconds to compute it, file, computed now?)``.

    Read from ``cache_dir`` if there, else computed and written there (atomically; a folder
    that cannot be written only loses the cache, never the result).
    """
    path = _graph_path(X, per_class, mode, Path(cache_dir))
    if path.exists():
        with np.load(path) as f:
            A = sp.csr_matrix((f["data"], f["indices"], f["indptr"]), shape=tuple(f["shape"]))
            return A, float(f["seconds"]), path, False
    if verbose:
        print(
            f"srlsc: computing the {mode} l1-graph of {X.shape[0]} points once (minutes in "
            f"the exact mode); it is cached in {path}",
            file=sys.stderr,
        )
    t0 = time.perf_counter()
    A = sp.csr_matrix(l1_graph(X, mode=mode, n_jobs=n_jobs))
    seconds = time.perf_counter() - t0
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".npz", delete=False) as fh:
            np.savez(
                fh, data=A.data, indices=A.indices, indptr=A.indptr, shape=A.shape, seconds=seconds
            )
        os.replace(fh.name, path)
    except OSError:
        pass
    return A, seconds, path, True


# -- shared data-only work inside one worker process ------------------------------------------
class _Shared:
    """Data-only structures of one USPS subset, built on first use in this process."""

    def __init__(self, per_class: int) -> None:
        self.per_class = per_class
        self.X1 = usps_subset(per_class)[0]
        self.graphs: dict[str, sp.csr_matrix] = {}  # l1 mode -> A
        self.cache: dict = {}  # fit_path's work over X1 that reads no labels

    def l1(self, mode: str, cache_dir: str | None) -> sp.csr_matrix:
        """The l1-graph ``A`` of X1 in ``mode`` (from the file cache)."""
        if mode not in self.graphs:
            folder = cache_dir or default_cache_dir()
            self.graphs[mode] = cached_l1_graph(self.X1, self.per_class, mode, folder)[0]
        return self.graphs[mode]

    def fit(self, estimator, y: np.ndarray):
        """``estimator`` fitted on ``(X1, y)`` by ``fit_path``, reusing the data-only work."""
        (fitted,) = fit_path(estimator, self.X1, y, [{}], cache=self.cache)
        drop_label_work(self.cache)  # keep what reads no labels: the kernel map, the kNN graph
        return fitted


@functools.lru_cache(maxsize=2)
def _shared(per_class: int) -> _Shared:
    return _Shared(per_class)


def _estimator(method: str, n_labeled: int, n_total: int, store: _Shared, l1=None):
    """One of the five classifiers with the paper's fixed parameters."""
    if method == "S-RLSC":
        mode, cache_dir = l1
        return SparseRLSC(C_A=C_A, C_I=C_I, gamma=KERNEL_GAMMA, graph=store.l1(mode, cache_dir))
    if method == "LapRLSC":
        # LapRLSC's objective uses gamma_A and gamma_I / n^2: C_A = gamma_A l and
        # C_I = gamma_I l / n^2 give the same weights as S-RLSC's.
        return LapRLSC(
            gamma=KERNEL_GAMMA,
            gamma_A=C_A / n_labeled,
            gamma_I=C_I * n_total**2 / n_labeled,
            n_neighbors=K_GRAPH,
            weights="heat",
        )
    if method == "GFHF":
        return GFHF(n_neighbors=K_GRAPH)
    if method == "SRC":
        return SRC(epsilon=SRC_EPSILON)
    if method == "1-NN":
        return KNeighborsClassifier(n_neighbors=1)
    raise ValueError(f"unknown method {method!r}; choose from {METHODS}")


def labeled_points(y: np.ndarray, m: int, draw: int) -> np.ndarray:
    """Indices of the first ``m`` points of every class in draw ``draw``'s random order."""
    rng = np.random.default_rng([DRAW_SEED, draw])
    return np.sort(
        np.concatenate([rng.permutation(np.flatnonzero(y == c))[:m] for c in np.unique(y)])
    )


def _usps_cell(
    *,
    dataset: str,
    method: str,
    split: int,
    v: int,
    m: int,
    per_class: int,
    l1_mode: str | None = None,
    src_max_points: int | None = None,
    graph_cache: str | None = None,
) -> dict[str, Any]:
    """Fit one method on draw ``split`` with ``m`` labels per class; both accuracies (%)."""
    X1, y1, X_out, y_out = usps_subset(per_class)
    store = _shared(per_class)
    labeled = labeled_points(y1, m, split)
    y_semi = np.full(len(y1), UNLABELED)
    y_semi[labeled] = y1[labeled]
    unl = np.flatnonzero(y_semi == UNLABELED)
    out = np.arange(len(y_out))
    if method == "SRC" and src_max_points:
        rng = np.random.default_rng([DRAW_SEED, split, m])
        if len(unl) > src_max_points:
            unl = np.sort(rng.choice(unl, src_max_points, replace=False))
        if len(out) > src_max_points:
            out = np.sort(rng.choice(out, src_max_points, replace=False))
    if method == "S-RLSC":
        store.l1(l1_mode, graph_cache)  # load (or compute) the graph outside the timing
    est = _estimator(method, len(labeled), len(y1), store, (l1_mode, graph_cache))
    t0 = time.perf_counter()
    if method in ("SRC", "1-NN"):
        est.fit(X1[labeled], y1[labeled])
        pred = est.predict(np.vstack([X1[unl], X_out[out]]))
        pred_unl, pred_out = pred[: len(unl)], pred[len(unl) :]
    else:
        est = store.fit(est, y_semi)
        pred_unl, pred_out = est.transduction_[unl], est.predict(X_out[out])
    seconds = time.perf_counter() - t0
    return {
        "unlabeled": 100.0 * float(np.mean(pred_unl == y1[unl])),
        "out_of_sample": 100.0 * float(np.mean(pred_out == y_out[out])),
        "n_unlabeled_scored": int(len(unl)),
        "n_out_scored": int(len(out)),
        "n_labeled": int(len(labeled)),
        "seconds": float(seconds),
    }


# -- plan ------------------------------------------------------------------------------------
def _settings(options: Options) -> dict[str, Any]:
    s = dict(QUICK if options.quick else FULL)
    extra = dict(options.extra or {})
    if options.draws is not None:
        s["draws"] = int(options.draws)
    for name in ("l1_mode", "src_max_points", "m_values"):
        if extra.get(name) is not None:
            s[name] = extra[name]
    s["m_values"] = tuple(int(m) for m in s["m_values"])
    s["per_class"] = int(extra.get("per_class") or PER_CLASS)
    s["cache_dir"] = str(extra.get("cache_dir") or default_cache_dir())
    s["datasets"] = extra.get("datasets")
    if s["l1_mode"] not in ("exact", "lasso"):
        raise ValueError(f"l1_mode must be 'exact' or 'lasso', got {s['l1_mode']!r}")
    if s["draws"] < 1 or not s["m_values"] or min(s["m_values"]) < 1:
        raise ValueError("draws and every m must be positive")
    if s["src_max_points"] is not None:
        s["src_max_points"] = int(s["src_max_points"])
    return s


def _plan(options: Options, m_filter: Sequence[int] | None) -> Plan:
    s = _settings(options)
    skipped = dict(UNAVAILABLE)
    context: dict[str, Any] = {"settings": s, "graph": None}
    if s["datasets"] is not None and "usps" not in {str(d).lower() for d in s["datasets"]}:
        return Plan([], {"USPS": "not run: not requested", **skipped}, context=context)
    try:
        X1, y1, X_out, _ = usps_subset(s["per_class"])
    except (OSError, ValueError) as exc:
        return Plan([], {"USPS": f"data not available: {exc}", **skipped}, context=context)
    n_x1 = int(np.bincount(y1).min())
    if max(s["m_values"]) >= n_x1:
        raise ValueError(
            f"m must be below the {n_x1} points per class of X1 (per_class={s['per_class']}), "
            f"got m_values={s['m_values']}"
        )
    A, seconds, path, computed = cached_l1_graph(
        X1, s["per_class"], s["l1_mode"], s["cache_dir"], n_jobs=options.n_jobs, verbose=True
    )
    context["graph"] = {
        "seconds": seconds,
        "file": str(path),
        "computed_now": computed,
        "nnz_per_row": float(A.nnz / A.shape[0]),
    }
    context.update(n_x1=len(y1), n_out=len(X_out))
    m_values = [m for m in s["m_values"] if m_filter is None or m in m_filter]
    func = functools.partial(_usps_cell, graph_cache=s["cache_dir"])
    common = {"paper": PAPER, "table": CELL_TABLE, "dataset": "USPS", "v": VERSION}
    common["per_class"] = s["per_class"]
    cells = []
    # SRC cells first, the largest m first: the longest cells start early (load balance)
    for method in ("SRC", "S-RLSC", "LapRLSC", "GFHF", "1-NN"):
        for m in sorted(m_values, reverse=method == "SRC"):
            extra: dict[str, Any] = {}
            if method == "S-RLSC":
                extra["l1_mode"] = s["l1_mode"]
            if method == "SRC":
                extra["src_max_points"] = s["src_max_points"]
            for draw in range(s["draws"]):
                cells.append(Cell.make(func, method=method, split=draw, m=m, **common, **extra))
    context["m_values"] = m_values
    return Plan(cells, skipped, context=context)


def plan_fig7(options: Options) -> Plan:
    """Cells of Fig. 7 (every m)."""
    return _plan(options, None)


def plan_table4(options: Options) -> Plan:
    """Cells of Table 4 (the m of the paper's Table 4 among the run's m values)."""
    return _plan(options, TABLE4_M)


# -- report ----------------------------------------------------------------------------------
def _collect(plan: Plan, results: dict[CellKey, dict], part: str) -> dict[str, dict[str, list]]:
    """``{"m = 5": {method: [accuracy per draw, in draw order]}}``."""
    table: dict[int, dict[str, list[float]]] = {}
    for (m, meth), runs in runs_by(plan, results, lambda k: (k.params["m"], k.method)).items():
        table.setdefault(m, {})[meth] = [r[part] for r in runs]
    return {f"m = {m}": dict(sorted(by.items())) for m, by in sorted(table.items())}


def _intro(plan: Plan, results: dict[CellKey, dict]) -> list[str]:
    s, g = plan.context["settings"], plan.context.get("graph")
    if g is None:
        return ["Nothing run: USPS is not available (see below)."]
    src = s["src_max_points"]
    runs = runs_by(plan, results, lambda k: k.method)
    seconds = {method: sum(float(r["seconds"]) for r in rs) for method, rs in runs.items()}
    return [
        f"USPS: {s['per_class']} random points per digit, unit l2 norm; 15 % per class held out "
        f"({plan.context['n_out']} points), X1 = {plan.context['n_x1']} points; m labeled "
        f"points per class drawn from X1, {s['draws']} random draws per m (the paper: one "
        "run). S-RLSC, LapRLSC and GFHF train on all of X1, SRC and 1-NN on the labeled points. "
        f"Fixed parameters (the paper's): C_A = {C_A}, C_I = {C_I}, Gaussian width 0.5 on "
        f"unit-norm data, k = {K_GRAPH} heat graph (LapRLSC, GFHF; width: mean squared edge "
        f"length), SRC epsilon = {SRC_EPSILON}.",
        "",
        f"l1-graph: mode `{s['l1_mode']}`, {g['nnz_per_row']:.1f} nonzeros per row, "
        f"{g['seconds']:.1f} s to compute (once over X1, cached in `{g['file']}`).  Fit + "
        "predict seconds summed over the cells: "
        + ", ".join(f"{k} {v:.1f}" for k, v in seconds.items())
        + "."
        + (
            f"  SRC's accuracies are measured on at most {src} random unlabeled and {src} "
            "random held-out points per cell (one l1 problem per point)."
            if src
            else ""
        ),
    ]


def _curve_figure(path: Path, values: dict[str, dict[str, list]]) -> Path:
    plt = pyplot()
    ms = [int(row.split("=")[1]) for row in values]
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for method in METHODS:
        acc = [np.asarray(values[row].get(method, [np.nan])) for row in values]
        ax.errorbar(
            ms,
            [a.mean() for a in acc],
            yerr=[a.std() for a in acc],
            marker="o",
            ms=3,
            capsize=2,
            label=method,
        )
    ax.set_xlabel("m (labeled points per class)")
    ax.set_ylabel("accuracy on the unlabeled points of X1 (%)")
    ax.set_title("USPS (Fan et al. 2011, Fig. 7 protocol)")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def report_fig7(plan: Plan, results: dict[CellKey, dict], out: Path, options: Options):
    """``srlsc_fig7.md``, ``.csv`` and ``.png``."""
    values = _collect(plan, results, "unlabeled")
    paths = comparison_table(
        out,
        "srlsc_fig7",
        title="S-RLSC paper, Fig. 7: accuracy (%) on the unlabeled points of X1, USPS",
        values=values,
        methods=METHODS,
        reference="S-RLSC",
        skipped=plan.skipped,
        intro=_intro(plan, results),
        notes=[
            "The paper plots these curves (Fig. 7) without printing numbers, so no paper value "
            "is shown; its text says S-RLSC is best except at m = 5 and 10."
        ],
        row_label="m per class",
    )
    if values:
        paths.append(_curve_figure(out / "srlsc_fig7.png", values))
    return paths


def report_table4(plan: Plan, results: dict[CellKey, dict], out: Path, options: Options):
    """``srlsc_4.md`` and ``.csv``."""
    values = _collect(plan, results, "out_of_sample")
    paper = {
        f"m = {m}": {meth: SRLSC_TABLE4[meth][j] for meth in METHODS}
        for j, m in enumerate(TABLE4_M)
    }
    return comparison_table(
        out,
        "srlsc_4",
        title="S-RLSC paper, Table 4: out-of-sample accuracy (%) on USPS",
        values=values,
        methods=METHODS,
        paper=paper,
        reference="S-RLSC",
        skipped=plan.skipped,
        intro=_intro(plan, results),
        notes=[
            "The paper's values are from one run (one draw of the labeled points); ours are "
            "mean ± std over the draws. The paper's SRC at m = 5 and 10 (5.26 %, 9.47 %) is "
            "below chance (10 %); with 50-100 atoms in 256 dimensions SRC's noisy basis "
            "pursuit is mostly infeasible at epsilon = 0.05, and structreg's SRC then uses the "
            "least-squares code (see structreg.models.SRC)."
        ],
        row_label="m per class",
    )


TABLES = (
    Table(
        PAPER,
        "fig7",
        "Fig. 7: S-RLSC, LapRLSC, GFHF, SRC, 1-NN on USPS, accuracy on the unlabeled points vs m",
        plan_fig7,
        report_fig7,
        aliases=("7", "curve"),
    ),
    Table(
        PAPER,
        "4",
        "Table 4: out-of-sample accuracy on USPS for m = 5, 10, 40, 100, 160",
        plan_table4,
        report_table4,
    ),
)
