"""The ``structreg`` command line.

``structreg demo`` fits LapRLSC and RLSC on the two-moons toy and on a real data set with a
few labels per class and prints their accuracies on the unlabeled points.
``structreg reproduce drlsc|dr|srsvm|srlsc|damr [--table T] [--quick] [--n-jobs J]
[--scheduler ADDR] [--out DIR]`` runs a paper's tables through the experiment engine
(:mod:`structreg.experiments`), resuming from ``OUT/results.sqlite``; see
``structreg reproduce --help``.
``structreg datasets list|info NAME|path`` inspects the data sets.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from sklearn.preprocessing import StandardScaler

from . import RLSC, LapRLSC
from .experiments.registry import PAPERS
from .models import UNLABELED

# Fixed demo settings (not tuned per run): an RBF kernel, a heat-kernel 6-NN graph, and a
# graph weight much larger than the ambient one, as is usual with very few labels.
DEMO_MOONS = dict(gamma=5.0, gamma_A=1e-4, gamma_I=1e2)
DEMO_REAL = dict(gamma="scale", gamma_A=1e-3, gamma_I=1e2)


def _few_labels(y: np.ndarray, per_class: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of ``per_class`` random labeled points of every class."""
    return np.concatenate(
        [rng.choice(np.flatnonzero(y == c), per_class, replace=False) for c in np.unique(y)]
    )


def _compare(
    name: str, X: np.ndarray, y: np.ndarray, per_class: int, seed: int, repeats: int, params: dict
) -> dict[str, np.ndarray]:
    """Accuracy on the unlabeled points of LapRLSC (all points) and RLSC (labeled only)."""
    codes = np.unique(y, return_inverse=True)[1].ravel()
    rls_params = {k: v for k, v in params.items() if k != "gamma_I"}
    acc: dict[str, list] = {"LapRLSC": [], "RLSC": []}
    seconds = {"LapRLSC": 0.0, "RLSC": 0.0}
    for r in range(repeats):
        labeled = _few_labels(codes, per_class, np.random.default_rng(seed + r))
        y_semi = np.full(len(y), UNLABELED)
        y_semi[labeled] = codes[labeled]
        unl = y_semi == UNLABELED
        t0 = time.perf_counter()
        lap = LapRLSC(**params).fit(X, y_semi)
        seconds["LapRLSC"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        rls = RLSC(**rls_params).fit(X[labeled], codes[labeled])
        seconds["RLSC"] += time.perf_counter() - t0
        acc["LapRLSC"].append(np.mean(lap.transduction_[unl] == codes[unl]))
        acc["RLSC"].append(np.mean(rls.predict(X[unl]) == codes[unl]))
    print(
        f"\n{name}: n={len(y)}, d={X.shape[1]}, {per_class} labeled points per class, "
        f"{repeats} random draws of the labels"
    )
    print(f"  {'method':<8} {'accuracy on unlabeled (mean, min-max)':>38} {'fit time':>9}")
    for method, values in acc.items():
        v = np.asarray(values)
        print(
            f"  {method:<8} {v.mean():>17.1%}  ({v.min():.1%} - {v.max():.1%})"
            f"{seconds[method] / repeats:>14.2f}s"
        )
    return {k: np.asarray(v) for k, v in acc.items()}


def demo(args: argparse.Namespace) -> int:
    from .datasets import load_dataset, make_drlsc_moons

    print(
        "structreg demo: semi-supervised LapRLSC (labeled + unlabeled points) vs supervised "
        "RLSC (the same labeled points)"
    )
    X, y = make_drlsc_moons(level=args.moons_level, random_state=args.seed)
    _compare(
        f"two moons (DRLSC toy set, level {args.moons_level})",
        X,
        y,
        2,
        args.seed,
        args.repeats,
        DEMO_MOONS,
    )
    try:
        X, y = load_dataset(args.dataset, return_X_y=True)
    except (FileNotFoundError, OSError) as exc:
        print(f"\n{args.dataset}: skipped, data not available ({exc})")
        return 0
    X = StandardScaler().fit_transform(X)
    _compare(
        f"{args.dataset} (standardised)",
        X,
        np.asarray(y),
        args.per_class,
        args.seed,
        args.repeats,
        DEMO_REAL,
    )
    return 0


def datasets_command(args: argparse.Namespace) -> int:
    from .datasets import (
        DATA_ENV_VAR,
        dataset_info,
        get_data_home,
        list_datasets,
        packaged_data_dir,
    )

    if args.action == "list":
        for name in list_datasets():
            info = dataset_info(name)
            print(
                f"{name:<15} n={info.get('n_samples', '?'):<6} "
                f"d={info.get('n_features', '?'):<4} classes={info.get('n_classes', '?')}"
            )
    elif args.action == "info":
        if not args.name:
            print("structreg datasets info: give a data set name", file=sys.stderr)
            return 2
        print(json.dumps(dataset_info(args.name), indent=2))
    else:  # the folders in the order files are looked for
        home, packaged = get_data_home(), packaged_data_dir()
        if os.environ.get(DATA_ENV_VAR, "").strip():
            print(f"data home: {home}\npackaged:  {packaged}")
        else:
            print(f"packaged:  {packaged}\ndata home: {home} (user cache; downloads go here)")
    return 0


def reproduce(args: argparse.Namespace) -> int:
    from .experiments import Options, find_table, paper_tables, run_table

    if args.list_tables:
        for table in paper_tables(args.paper):
            aliases = f" (also: {', '.join(table.aliases)})" if table.aliases else ""
            print(f"{table.name:<6} {table.title}{aliases}")
        return 0
    tables = [find_table(args.paper, args.table)] if args.table else paper_tables(args.paper)
    extra: dict[str, object] = {}
    if args.datasets:
        extra["datasets"] = [d.strip() for d in args.datasets.split(",") if d.strip()]
    if args.l1_mode:
        extra["l1_mode"] = args.l1_mode
    if args.grid:
        extra["grid"] = args.grid
    options = Options(quick=args.quick, draws=args.draws, n_jobs=args.n_jobs, extra=extra)
    progress = {"auto": None, "on": True, "off": False}[args.progress]
    for table in tables:
        run = run_table(table, args.out, options, scheduler=args.scheduler, progress=progress)
        print(run.paths[0].read_text())
        print(
            f"{args.paper} table {table.name}: {run.n_computed} cells computed, {run.n_cached} "
            f"reused from {Path(args.out) / 'results.sqlite'}; {run.wall_time_s:.1f} s"
        )
        print("written: " + ", ".join(str(p) for p in run.paths) + "\n")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="structreg", description="Structure-aware regularized classifiers."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("demo", help="LapRLSC vs RLSC on two moons and a real data set")
    p.add_argument("--dataset", default="wdbc", help="real data set (default: wdbc)")
    p.add_argument("--per-class", type=int, default=5, help="labels per class on the real set")
    p.add_argument("--moons-level", type=int, default=1, choices=(1, 2, 3))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeats", type=int, default=10, help="random draws of the labels")
    p.set_defaults(func=demo)
    p = sub.add_parser(
        "reproduce",
        help="run a paper's tables and figures (resumable) and write Markdown/CSV/PNG",
        description="Run a paper's experiment protocol and write its tables (Markdown and CSV, "
        "the paper's numbers beside the reproduced ones) and figures (PNG). Finished cells are "
        "kept in OUT/results.sqlite, so a re-run (or a run after an interruption) resumes.",
    )
    p.add_argument(
        "paper", choices=sorted(PAPERS), help="; ".join(f"{k}: {v[1]}" for k, v in PAPERS.items())
    )
    p.add_argument(
        "--table", help="one table/figure (default: all of the paper's; see --list-tables)"
    )
    p.add_argument("--list-tables", action="store_true", help="list the paper's tables and exit")
    p.add_argument(
        "--quick",
        action="store_true",
        help="reduced protocol (fewer splits, coarser grids, smaller sets): minutes, not hours",
    )
    p.add_argument(
        "--draws", type=int, default=None, help="random splits/repetitions (default: the paper's)"
    )
    p.add_argument("--n-jobs", type=int, default=None, help="local worker processes (joblib)")
    p.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDR",
        help="run the cells on a dask.distributed cluster, e.g. tcp://127.0.0.1:8786",
    )
    p.add_argument("--datasets", help="comma-separated data sets to run (default: all available)")
    p.add_argument(
        "--l1-mode",
        choices=("exact", "lasso"),
        default=None,
        help="srlsc: l1-graph solved exactly (default) or by the fast lasso approximation",
    )
    p.add_argument(
        "--grid", choices=("coarse", "paper"), default=None, help="damr: the 100-label CV grid"
    )
    p.add_argument(
        "--progress",
        choices=("auto", "on", "off"),
        default="auto",
        help="progress bar on stderr (auto: only on a terminal)",
    )
    p.add_argument("--out", default="results", help="output folder (default: results)")
    p.set_defaults(func=reproduce)
    p = sub.add_parser("datasets", help="list, describe or locate the data sets")
    p.add_argument("action", choices=("list", "info", "path"))
    p.add_argument("name", nargs="?")
    p.set_defaults(func=datasets_command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ValueError as exc:
        print(f"structreg: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
