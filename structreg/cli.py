"""The ``structreg`` command line.

``structreg demo`` fits LapRLSC and RLSC on the two-moons toy and on a real data set with a
few labels per class and prints their accuracies on the unlabeled points.
``structreg reproduce drlsc|dr|srsvm|srlsc|damr [--table T] [--quick] [--n-jobs J]
[--scheduler ADDR] [--out DIR] [--recover]`` runs a paper's tables through the experiment
engine (:mod:`structreg.experiments`), resuming from ``OUT/results.sqlite`` and sharing the
cells with concurrent runs on the same ``OUT``; see ``structreg reproduce --help``.
``structreg datasets list|info NAME|path`` inspects the data sets.

Exit status (``EXIT_CODES``): 0 done; 1 failed (the output folder or the results store
cannot be used); 2 usage error (as argparse's: an invalid option or table name, or an unusable
``STRUCTREG_DATA`` folder); 130 interrupted (Ctrl-C; the cells already stored are kept and the
same command resumes).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from sklearn.preprocessing import StandardScaler

from . import RLSC, LapRLSC
from .experiments.registry import PAPERS
from .experiments.store import StoreError
from .models import UNLABELED

if TYPE_CHECKING:
    from .experiments.engine import Table

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
EXIT_CODES = {
    EXIT_OK: "done",
    EXIT_FAILED: "failed: the output folder cannot be created, or cannot be written while cells "
    "are missing, or the results store is damaged (see --recover)",
    EXIT_USAGE: "usage error, as argparse's: an invalid option or table name, or a "
    "STRUCTREG_DATA folder that cannot be used (a file, or a malformed MANIFEST.json)",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C): the cells already stored are kept; the same command "
    "resumes",
}
"""The exit status of ``structreg``, and what each means (also in ``structreg --help``)."""
EPILOG = "exit status: " + "; ".join(f"{code} {text}" for code, text in EXIT_CODES.items())

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
    if per_class >= (smallest := np.bincount(codes).min()):
        raise ValueError(
            f"--per-class {per_class}: {name} has {smallest} points in its smallest class, and "
            "some of every class must stay unlabeled"
        )
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
        return EXIT_OK
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
    return EXIT_OK


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
            return EXIT_USAGE
        print(json.dumps(dataset_info(args.name), indent=2))
    else:  # the folders in the order files are looked for
        home, packaged = get_data_home(), packaged_data_dir()
        if os.environ.get(DATA_ENV_VAR, "").strip():
            print(f"data home: {home}\npackaged:  {packaged}")
        else:
            print(f"packaged:  {packaged}\ndata home: {home} (user cache; downloads go here)")
    return EXIT_OK


def _tables(paper: str, name: str | None) -> tuple[Table, ...]:
    """The tables to run: all of ``paper``'s (``name`` None) or the one called ``name``; an
    empty or unknown name is refused with the paper's table names."""
    from .experiments import find_table, paper_tables

    if name is None:
        return paper_tables(paper)
    if not name.strip():
        available = ", ".join(
            t.name + (f" ({'/'.join(t.aliases)})" if t.aliases else "") for t in paper_tables(paper)
        )
        raise ValueError(
            f"--table {name!r}: give a table name; {paper}'s tables: {available} "
            "(leave --table out to run them all)"
        )
    return (find_table(paper, name),)


def _check_data_home() -> None:
    """Refuse an unusable data home (ValueError) and warn, one line each, of its data files that
    cannot be loaded (the tables skip their sets) -- before any output file is made."""
    from .datasets._home import check_data_home

    for name, reason in check_data_home().items():
        print(f"structreg: warning: data set {name!r} is skipped: {reason}", file=sys.stderr)


def _stored_cells(store: Path, paper: str) -> int | None:
    """How many of ``paper``'s cells the store at ``store`` holds (None: it cannot be read)."""
    from .experiments.store import ResultsStore

    if not store.exists():
        return 0
    try:
        with ResultsStore(store) as results:
            return results.count(paper)
    except StoreError:
        return None


ALL = "all"
"""``structreg reproduce all``: every paper in turn, each into ``OUT/<paper>``."""


def reproduce(args: argparse.Namespace) -> int:
    from .experiments import Options, paper_tables
    from .experiments.engine import STORE_NAME

    if args.list_tables:
        for paper in sorted(PAPERS) if args.paper == ALL else [args.paper]:
            for table in paper_tables(paper):
                aliases = f" (also: {', '.join(table.aliases)})" if table.aliases else ""
                prefix = f"{paper:<6} " if args.paper == ALL else ""
                print(f"{prefix}{table.name:<6} {table.title}{aliases}")
        return EXIT_OK
    if args.paper == ALL and args.table is not None:
        raise ValueError("--table names one paper's table: give the paper instead of 'all'")
    papers = list(PAPERS) if args.paper == ALL else [args.paper]
    tables = {paper: _tables(paper, args.table) for paper in papers}
    extra: dict[str, object] = {}
    if args.datasets:
        extra["datasets"] = args.datasets
    if args.l1_mode:
        extra["l1_mode"] = args.l1_mode
    if args.grid:
        extra["grid"] = args.grid
    n_jobs = None if args.scheduler else args.n_jobs  # on a cluster: all of its workers
    options = Options(quick=args.quick, draws=args.draws, n_jobs=n_jobs, extra=extra)
    progress = {"auto": None, "on": True, "off": False}[args.progress]
    outs = {p: args.out / p if args.paper == ALL else args.out for p in papers}
    _check_data_home()  # refused before any file is made
    for paper in papers:
        _open_store(outs[paper] / STORE_NAME, args.recover)
    entries, not_run = [], {}
    paper = papers[0]
    try:
        with contextlib.ExitStack() as stack:
            if args.scheduler:
                _on_dask_cluster(args.scheduler, stack)
            for paper in papers:
                for table in tables[paper]:
                    entry = _run_one(table, outs[paper], options, progress)
                    entries.append(entry)
                    not_run[f"{paper} {table.name}"] = entry.skipped
    except KeyboardInterrupt:  # each finished cell is stored as it finishes: nothing is lost
        store = outs[paper] / STORE_NAME
        kept = _stored_cells(store, paper)
        what = "the cells" if kept is None else f"{kept} cells of {paper}"
        print(
            f"structreg: interrupted; {what} already stored in {store} are kept: run the same "
            "command again to resume",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    from .experiments.index import collect_not_run, status_verdicts, write_index

    lines = collect_not_run(not_run)
    if lines:  # once per run, not once per table
        print("Not run (each table's report lists its own):\n" + "\n".join(lines) + "\n")
    if args.paper == ALL:
        index = write_index(args.out, entries, quick=args.quick, verdicts=status_verdicts())
        print(f"index of {len(entries)} tables: {index}")
    return EXIT_OK


def _open_store(store: Path, recover: bool) -> None:
    """Refuse a damaged results store before any work (or, with ``recover``, move it aside and
    keep what SQLite can read); a missing one is made by the first table, once planned."""
    from .experiments.store import ResultsStore, StoreDamaged
    from .experiments.store import recover as recover_store

    try:
        if store.exists():
            ResultsStore(store).close()
    except StoreDamaged as exc:
        if not recover:
            raise StoreError(
                f"{exc}\n  run again with --recover to move it aside and keep the cells SQLite "
                "can still read"
            ) from exc
        aside, kept = recover_store(store)
        print(f"moved the damaged store to {aside}; kept the {kept} cells SQLite could read")


def _run_one(table: Table, out: Path, options, progress: bool | None):
    """Run one table into ``out``, print its report (without its "Not run" list, which the
    caller prints once) and what was computed; return its index entry."""
    from .experiments import run_table
    from .experiments.engine import STORE_NAME
    from .experiments.index import IndexEntry

    run = run_table(table, out, options, progress=progress)
    print(_without_not_run(run.paths[0].read_text(), run.skipped))
    print(
        f"{table.paper} table {table.name}: {run.n_computed} cells computed, "
        f"{run.n_cached} reused from {out / STORE_NAME}; {run.wall_time_s:.1f} s"
    )
    if run.paths[0].parent != out:
        print(f"{out} is not writable: the report files went to a temporary folder")
    print("written: " + ", ".join(str(p) for p in run.paths) + "\n")
    return IndexEntry(
        paper=table.paper,
        table=table.name,
        title=table.title,
        report=run.paths[0],
        n_cells=len(run.results),
        n_computed=run.n_computed,
        skipped=dict(run.skipped),
    )


def _without_not_run(report: str, skipped: dict[str, str]) -> str:
    """A report's Markdown without the ``Not run:`` list that
    :func:`~structreg.experiments.report.skipped_lines` wrote into it for ``skipped``."""
    from .experiments.report import skipped_lines

    listed = "\n".join(skipped_lines(skipped))
    return report.replace(listed, "", 1) if listed else report


def _on_dask_cluster(address: str, stack: contextlib.ExitStack) -> None:
    """Run joblib's work on the dask cluster at ``address`` until ``stack`` closes."""
    try:
        from distributed import Client
        from joblib import parallel_config
    except ImportError as exc:  # pragma: no cover - dask is in the test extra
        raise ValueError(
            "--scheduler needs dask.distributed: pip install 'structreg[dask]'"
        ) from exc
    client = stack.enter_context(Client(address))
    stack.enter_context(parallel_config(backend="dask", client=client, wait_for_workers_timeout=60))


def _integer(check: Callable[[int], bool], what: str) -> Callable[[str], int]:
    """An argparse type: an integer that passes ``check`` (else an error saying ``what``)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or not check(value):
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
        return value

    return parse


POSITIVE = _integer(lambda v: v >= 1, "a positive integer")
SEED = _integer(lambda v: 0 <= v < 2**32, "an integer from 0 to 2**32 - 1")
N_JOBS = _integer(lambda v: v != 0, "a non-zero integer (-1: all cores)")


def _folder(text: str) -> Path:
    """An argparse type: a folder, existing or to be created (no file in its way)."""
    path = Path(text)
    there = next(p for p in (path, *path.parents) if p.exists())
    if not there.is_dir():
        raise argparse.ArgumentTypeError(f"{there} is a file, not a folder")
    return path


def _names(text: str) -> list[str]:
    """An argparse type: a comma-separated list of at least one name."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"give at least one name, got {text!r}")
    return names


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="structreg", description="Structure-aware regularized classifiers.", epilog=EPILOG
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("demo", help="LapRLSC vs RLSC on two moons and a real data set")
    p.add_argument("--dataset", default="wdbc", help="real data set (default: wdbc)")
    p.add_argument("--per-class", type=POSITIVE, default=5, help="labels per class, real set")
    p.add_argument("--moons-level", type=int, default=1, choices=(1, 2, 3))
    p.add_argument("--seed", type=SEED, default=0)
    p.add_argument("--repeats", type=POSITIVE, default=10, help="random draws of the labels")
    p.set_defaults(func=demo)
    p = sub.add_parser(
        "reproduce",
        help="run a paper's tables and figures (resumable) and write Markdown/CSV/PNG",
        description="Run a paper's experiment protocol and write its tables (Markdown and CSV, "
        "the paper's numbers beside the reproduced ones) and figures (PNG). Finished cells are "
        "kept in OUT/results.sqlite, so a re-run (or a run after an interruption) resumes.",
        epilog=EPILOG,
    )
    p.add_argument(
        "paper",
        choices=[*sorted(PAPERS), ALL],
        help="; ".join(f"{k}: {v[1]}" for k, v in PAPERS.items())
        + f"; {ALL}: every paper in turn, each into OUT/<paper> (its own results store), then "
        "OUT/index.md listing every table with its cells and the verdict of the project's "
        "status table",
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
        "--draws", type=POSITIVE, default=None, help="random splits/repeats (default: the paper's)"
    )
    p.add_argument(
        "--n-jobs", type=N_JOBS, default=None, help="local worker processes (joblib; -1: all cores)"
    )
    p.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDR",
        help="run the cells on a dask.distributed cluster, e.g. tcp://127.0.0.1:8786 "
        "(--n-jobs is then ignored)",
    )
    p.add_argument(
        "--datasets", type=_names, help="comma-separated data sets to run (default: all available)"
    )
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
    p.add_argument(
        "--out", type=_folder, default="results", help="output folder (default: results)"
    )
    p.add_argument(
        "--recover",
        action="store_true",
        help="if OUT/results.sqlite is damaged: move it aside (results.sqlite.damaged-TIME-PID), "
        "keep every cell SQLite can still read in a fresh store, and go on",
    )
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
        return EXIT_USAGE
    except (StoreError, PermissionError) as exc:  # a damaged or read-only results store
        print(f"structreg: error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:  # reproduce says what it kept; the other commands keep nothing
        print("structreg: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
