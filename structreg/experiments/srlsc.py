"""Reproduction of the S-RLSC paper's USPS experiment (Fan, Gu, Qiao & Zhang 2011, Fig. 7
and Table 4) on the experiment engine.

``structreg reproduce srlsc [--table fig7|4]``: both tables read the same cells (one per
``(m, draw, method)``, cell-key table ``"usps"``).  The protocol, ``--quick``, the options and
the reuse of the data-only work are described in ``docs/reproducing/srlsc.md``.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import normalize

from ..datasets import load_dataset
from ..models import GFHF, SRC, UNLABELED, LapRLSC, SparseRLSC, drop_label_work, fit_path
from ..structure.l1graph import l1_graph
from . import reference
from .engine import Options, Plan, Results, Table, cell_grid
from .protocol import per_class_sample, runs_table
from .report import comparison_table, pyplot, save_figure

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
_REF = reference.load(PAPER)
"""The paper's numbers, the protocol's settings and the reports' text (``reference/srlsc.json``)."""
FIG7_M, TABLE4_M = _REF["fig7_m"], _REF["table4_m"]
SRLSC_TABLE4: dict[str, tuple[float, ...]] = _REF["table4"]
"""Table 4 of the paper: out-of-sample accuracy (%) on USPS, one run, {method: (m = 5, 10, 40,
100, 160)}."""
UNAVAILABLE: dict[str, str] = _REF["unavailable"]
"""The paper's other data sets, with the reason they are not run."""
FULL, QUICK = {"m_values": FIG7_M, **_REF["full"]}, _REF["quick"]
_TEXT: dict[str, str] = _REF["report_text"]
C_A, C_I, KERNEL_GAMMA, K_GRAPH, SRC_EPSILON = 0.005, 0.01, 1.0 / 0.5**2, 7, 0.05
PER_CLASS, HOLDOUT, DRAW_SEED = 250, 0.15, 2011


# -- data ------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=4)
def usps_subset(per_class: int = PER_CLASS, holdout: float = HOLDOUT, random_state: int = 0):
    """The paper's USPS subset: ``(X1, y1, X_out, y_out)``, rows scaled to unit l2 norm
    (cached per process, read-only)."""
    X, y = load_dataset("usps", return_X_y=True)
    y = np.asarray(y).astype(int)
    n_out = int(np.ceil(holdout * per_class))
    picked = per_class_sample(y, per_class, np.random.default_rng(random_state))
    keep = np.concatenate([idx[n_out:] for idx in picked])
    out = np.concatenate([idx[:n_out] for idx in picked])
    X = normalize(np.asarray(X, dtype=float))
    arrays = (X[keep], y[keep], X[out], y[out])
    for a in arrays:
        a.setflags(write=False)
    return arrays


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/structreg/l1graph`` (``~/.cache/structreg/l1graph``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join("~", ".cache")
    return Path(base).expanduser() / "structreg" / "l1graph"


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
    digest = hashlib.sha256(np.ascontiguousarray(X).tobytes()).hexdigest()[:16]
    path = Path(cache_dir) / f"l1graph_usps_{per_class}pc_{mode}_{digest}.npz"
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
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".npz", delete=False) as fh:
            np.savez(
                fh, data=A.data, indices=A.indices, indptr=A.indptr, shape=A.shape, seconds=seconds
            )
        os.replace(fh.name, path)
    return A, seconds, path, True


# -- the data-only work, shared by the cells of one worker process ---------------------------
@functools.lru_cache(maxsize=4)
def _l1_graph_of(per_class: int, mode: str, cache_dir: str | None) -> sp.csr_matrix:
    """The l1-graph ``A`` of the subset's X1 in ``mode`` (from the file cache)."""
    X1 = usps_subset(per_class)[0]
    return cached_l1_graph(X1, per_class, mode, cache_dir or default_cache_dir())[0]


_PATH_CACHES: dict[int, dict] = {}
"""``per_class`` -> ``fit_path``'s cache over that subset's X1, kept in this process."""


def _fit_on_x1(estimator, per_class: int, y: np.ndarray):
    """``estimator`` fitted on ``(X1, y)`` by ``fit_path``, reusing the data-only work."""
    cache = _PATH_CACHES.setdefault(per_class, {})
    (fitted,) = fit_path(estimator, usps_subset(per_class)[0], y, [{}], cache=cache)
    drop_label_work(cache)  # keep what reads no labels: the kernel map, the kNN graph
    return fitted


def _estimator(method: str, n_labeled: int, n_total: int, graph: sp.csr_matrix | None = None):
    """One of the five classifiers with the paper's fixed parameters (``graph``: S-RLSC's
    l1-graph).  The paper quotes ``C_A = gamma_A l`` and ``C_I = gamma_I l / n^2``; S-RLSC
    and LapRLSC take ``gamma_A`` and ``gamma_I`` (both divide ``gamma_I`` by ``n^2``)."""
    penalties = {"gamma_A": C_A / n_labeled, "gamma_I": C_I * n_total**2 / n_labeled}
    if method == "S-RLSC":
        return SparseRLSC(**penalties, gamma=KERNEL_GAMMA, graph=graph)
    if method == "LapRLSC":
        return LapRLSC(gamma=KERNEL_GAMMA, **penalties, n_neighbors=K_GRAPH, weights="heat")
    if method == "GFHF":
        return GFHF(n_neighbors=K_GRAPH, weights="heat")
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
    labeled = labeled_points(y1, m, split)
    y_semi = np.full(len(y1), UNLABELED)
    y_semi[labeled] = y1[labeled]
    unl, out = np.flatnonzero(y_semi == UNLABELED), np.arange(len(y_out))
    if method == "SRC" and src_max_points:  # SRC scores random subsets (one l1 problem a point)
        rng = np.random.default_rng([DRAW_SEED, split, m])
        if len(unl) > src_max_points:
            unl = np.sort(rng.choice(unl, src_max_points, replace=False))
        if len(out) > src_max_points:
            out = np.sort(rng.choice(out, src_max_points, replace=False))
    # S-RLSC's l1-graph is loaded (or computed) outside the timing
    graph = _l1_graph_of(per_class, l1_mode, graph_cache) if method == "S-RLSC" else None
    est = _estimator(method, len(labeled), len(y1), graph)
    t0 = time.perf_counter()
    if method in ("SRC", "1-NN"):
        est.fit(X1[labeled], y1[labeled])
        pred = est.predict(np.vstack([X1[unl], X_out[out]]))
        pred_unl, pred_out = pred[: len(unl)], pred[len(unl) :]
    else:
        est = _fit_on_x1(est, per_class, y_semi)
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
    """The full protocol's or ``--quick``'s settings, overridden by ``options``."""
    s = dict(QUICK if options.quick else FULL)
    extra = dict(options.extra or {})
    given = ("l1_mode", "src_max_points", "m_values")
    s.update({k: extra[k] for k in given if extra.get(k) is not None})
    s.update(
        draws=int(s["draws"] if options.draws is None else options.draws),
        m_values=tuple(int(m) for m in s["m_values"]),
        per_class=int(extra.get("per_class") or PER_CLASS),
        cache_dir=str(extra.get("cache_dir") or default_cache_dir()),
        datasets=extra.get("datasets"),
    )
    if s["l1_mode"] not in ("exact", "lasso"):
        raise ValueError(f"l1_mode must be 'exact' or 'lasso', got {s['l1_mode']!r}")
    if s["draws"] < 1 or not s["m_values"] or min(s["m_values"]) < 1:
        raise ValueError("draws and every m must be positive")
    if s["src_max_points"] is not None:
        s["src_max_points"] = int(s["src_max_points"])
    return s


def _plan(options: Options, table: str) -> Plan:
    """The cells of the run's m values (Table 4: those of the paper's table only)."""
    s = _settings(options)
    context: dict[str, Any] = {"table": table, "settings": s, "graph": None}
    if s["datasets"] is not None and "usps" not in {str(d).lower() for d in s["datasets"]}:
        return Plan([], {"USPS": "not run: not requested", **UNAVAILABLE}, context=context)
    try:
        X1, y1, X_out, _ = usps_subset(s["per_class"])
    except (OSError, ValueError) as exc:
        return Plan([], {"USPS": f"data not available: {exc}", **UNAVAILABLE}, context=context)
    n_x1 = int(np.bincount(y1).min())
    if max(s["m_values"]) >= n_x1:
        raise ValueError(
            f"m must be below the {n_x1} points per class of X1 (per_class={s['per_class']}), "
            f"got m_values={s['m_values']}"
        )
    A, seconds, path, _ = cached_l1_graph(
        X1, s["per_class"], s["l1_mode"], s["cache_dir"], n_jobs=options.n_jobs, verbose=True
    )
    graph = {"seconds": seconds, "file": str(path), "nnz_per_row": float(A.nnz / A.shape[0])}
    m_values = [m for m in s["m_values"] if table != "4" or m in TABLE4_M]
    context.update(graph=graph, n_x1=len(y1), n_out=len(X_out), m_values=m_values)
    func = functools.partial(_usps_cell, graph_cache=s["cache_dir"])
    common = {"paper": PAPER, "table": CELL_TABLE, "datasets": ["USPS"], "draws": s["draws"]}
    common.update(v=VERSION, per_class=s["per_class"])
    own = {"S-RLSC": {"l1_mode": s["l1_mode"]}, "SRC": {"src_max_points": s["src_max_points"]}}
    cells = []
    # SRC cells first, the largest m first: the longest cells start early (load balance)
    for method in ("SRC", "S-RLSC", "LapRLSC", "GFHF", "1-NN"):
        for m in sorted(m_values, reverse=method == "SRC"):
            cells += cell_grid(func, methods=[method], m=m, **common, **own.get(method, {}))
    return Plan(cells, dict(UNAVAILABLE), context=context)


# -- report ----------------------------------------------------------------------------------
def _collect(plan: Plan, results: Results, part: str) -> dict[str, dict[str, list]]:
    """``{"m = 5": {method: [accuracy per draw, in draw order]}}``."""
    by_m = runs_table(plan, results, row=lambda k: k.params["m"], field=part)
    return {f"m = {m}": dict(sorted(by.items())) for m, by in sorted(by_m.items())}


def _intro(plan: Plan, results: Results) -> list[str]:
    """The protocol as run, the l1-graph and the seconds spent per method."""
    s, g = plan.context["settings"], plan.context["graph"]
    if g is None:
        return [_TEXT["no_data"]]
    runs = runs_table(plan, results, row=lambda k: k.method, col=lambda k: 0, field="seconds")
    spent = ", ".join(f"{k} {sum(float(s) for s in by[0]):.1f}" for k, by in runs.items())
    sizes = {"n_out": plan.context["n_out"], "n_x1": plan.context["n_x1"]}
    params = {"C_A": C_A, "C_I": C_I, "k": K_GRAPH, "epsilon": SRC_EPSILON}
    src = _TEXT["src"].format(src=s["src_max_points"]) if s["src_max_points"] else ""
    return [
        _TEXT["protocol"].format(**s, **sizes, **params),
        "",
        _TEXT["graph"].format(**g, l1_mode=s["l1_mode"], cell_seconds=spent) + src,
    ]


def _curve_figure(path: Path, values: dict[str, dict[str, list]]) -> Path:
    """Fig. 7: every method's mean accuracy (± std over the draws) against m."""
    ms = [int(row.split("=")[1]) for row in values]
    fig, ax = pyplot().subplots(figsize=(6, 4.5))
    for method in METHODS:
        acc = [np.asarray(values[row].get(method, [np.nan])) for row in values]
        mean, std = [a.mean() for a in acc], [a.std() for a in acc]
        ax.errorbar(ms, mean, yerr=std, marker="o", ms=3, capsize=2, label=method)
    ax.set(**_REF["figure"])  # the labels and the title
    ax.grid(alpha=0.3)
    ax.legend()
    return save_figure(fig, path, dpi=120)


def _report(plan: Plan, results: Results, out: Path, options: Options) -> list[Path]:
    """``srlsc_<table>.md`` and ``.csv`` (Fig. 7: and the curve, ``srlsc_fig7.png``)."""
    table = plan.context["table"]
    text = _REF["reports"][table]
    values = _collect(plan, results, text["part"])
    paper = {
        f"m = {m}": {method: SRLSC_TABLE4[method][j] for method in METHODS}
        for j, m in enumerate(TABLE4_M)
    }
    paths = comparison_table(
        out,
        f"srlsc_{table}",
        title=text["title"],
        values=values,
        methods=METHODS,
        paper=paper if table == "4" else None,
        reference="S-RLSC",
        skipped=plan.skipped,
        intro=_intro(plan, results),
        notes=[text["notes"]],
        row_label="m per class",
    )
    if table == "fig7" and values:
        paths.append(_curve_figure(out / "srlsc_fig7.png", values))
    return paths


TABLES = tuple(
    Table(PAPER, name, _REF["tables"][name], functools.partial(_plan, table=name), _report, aliases)
    for name, aliases in (("fig7", ("7", "curve")), ("4", ()))
)
