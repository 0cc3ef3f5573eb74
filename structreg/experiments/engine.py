"""The experiment engine: cells, tables, and a resumable, parallel runner.

A table *plans* its :class:`Cell` s, :func:`run_cells` runs the ones not yet in the results
store (joblib or dask; deterministic cells, so a resumed run gives the same table) and the table
*reports* them.  How and why: ``docs/reproducing/engine.md``.
"""

from __future__ import annotations

import itertools
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from joblib import Parallel, cpu_count, delayed
from tqdm.auto import tqdm

from .._resources import blas_threads
from .store import CellKey, ResultsStore, StoreError

__all__ = ["Cell", "Options", "Plan", "Table", "TableRun", "cell_grid", "run_cells", "run_table"]

STORE_NAME = "results.sqlite"
Results = dict[CellKey, dict[str, Any]]
"""The stored results of a table's cells, by key."""
CellFn = Callable[..., dict[str, Any]]


@dataclass(frozen=True)
class Cell:
    """One unit of work: ``func(dataset=d, method=m, split=s, **params)``, ``func`` a
    module-level function (pickled to the workers) returning a JSON-able dict; the key holds the
    same arguments, so a stored result is found again exactly when it would be recomputed."""

    key: CellKey
    func: CellFn

    @staticmethod
    def make(
        func: CellFn, *, paper: str, table: str, dataset: str, method: str, split: int, **kw: Any
    ) -> Cell:
        return Cell(CellKey(paper, table, dataset, method, split, kw), func)

    def run(self) -> dict[str, Any]:
        key = self.key
        return self.func(
            dataset=key.dataset, method=key.method, split=key.split, **dict(key.params)
        )


def cell_grid(
    func: CellFn,
    *,
    paper: str,
    table: str,
    datasets: Iterable[str],
    draws: int,
    methods: Iterable[str],
    **params: Any,
) -> list[Cell]:
    """One :class:`Cell` per (data set, split ``range(draws)``, method), nested in that order."""
    return [
        Cell.make(func, paper=paper, table=table, dataset=d, method=m, split=s, **params)
        for d, s, m in itertools.product(datasets, range(draws), methods)
    ]


@dataclass(frozen=True)
class Options:
    """Run options every table understands (``extra`` holds paper-specific ones)."""

    quick: bool = False
    draws: int | None = None
    n_jobs: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class Plan:
    """The cells of one table, and the data sets it cannot run with the reason."""

    cells: list[Cell]
    skipped: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    context: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Table:
    """One reproducible table or figure of a paper: ``plan(options)`` returns the
    :class:`Plan`, ``report(plan, results, out, options)`` writes the outputs (Markdown first)
    and returns their paths; ``aliases``: other names on the command line (e.g. ``"toy"``)."""

    paper: str
    name: str
    title: str
    plan: Callable[[Options], Plan]
    report: Callable[[Plan, Results, Path, Options], list[Path]]
    aliases: tuple[str, ...] = ()


@dataclass
class TableRun:
    """What :func:`run_table` did: output paths, results, cells reused / computed, time, and
    the data sets the table could not run (with the reason)."""

    table: Table
    paths: list[Path]
    results: Results
    n_cached: int
    n_computed: int
    wall_time_s: float
    skipped: dict[str, str] = field(default_factory=dict)


def _execute(cell: Cell, threads: int | None) -> tuple[CellKey, dict[str, Any], float]:
    """Run one cell with at most ``threads`` BLAS/OpenMP threads (None: no limit)."""
    start = time.perf_counter()
    with blas_threads(threads, user_api=None, rescan=True):
        result = cell.run()
    return cell.key, result, time.perf_counter() - start


def _threads_per_cell(n_jobs: int | None) -> int | None:
    """The BLAS/OpenMP threads of each cell (docs/reproducing/engine.md): one in this process
    (``n_jobs`` None or 1) and on dask, the cores shared out among ``n_jobs`` local workers,
    and no limit (None) when ``OMP_NUM_THREADS`` says how many the libraries should use."""
    if "OMP_NUM_THREADS" in os.environ:
        return None
    if n_jobs is None:
        workers = 1
    elif n_jobs < 0:
        workers = cpu_count()
    else:
        workers = n_jobs
    if workers > 1:
        return max(1, cpu_count() // workers)
    return 1


def run_cells(
    cells: Iterable[Cell],
    store: ResultsStore,
    *,
    n_jobs: int | None = None,
    progress: bool | None = None,
    desc: str = "",
) -> tuple[Results, int]:
    """Run the cells not in ``store`` (duplicated keys once; each claimed first, so concurrent
    runs share them) with joblib, on dask inside ``parallel_config(backend="dask")``; store the
    results as they arrive and return ``({key: result}, cells not computed here)``.  ``n_jobs``:
    workers (None or 1: this process); ``progress``: a bar on stderr (None: on a terminal)."""
    unique = list({cell.key: cell for cell in cells}.values())
    results = store.get_many(cell.key for cell in unique)
    todo = [cell for cell in unique if cell.key not in results]
    if todo and not store.writable:
        raise StoreError(f"{store.path.parent} is not writable; {len(todo)} cell(s) missing")
    threads = _threads_per_cell(n_jobs)
    n_computed = 0
    bar = tqdm(
        desc=desc,
        unit="cell",
        file=sys.stderr,
        total=len(unique),
        initial=len(results),
        disable=None if progress is None else not progress,  # None: only on a terminal
    )
    with bar:
        while todo:
            # each cell is claimed as a worker frees up; a cell a live peer claimed is skipped
            calls = (delayed(_execute)(cell, threads) for cell in todo if store.claim(cell.key))
            for key, value, seconds in Parallel(n_jobs, return_as="generator_unordered")(calls):
                store.put(key, value, seconds)
                results[key] = store.get(key)  # exactly what a resumed run reads
                n_computed += 1
                bar.update(1)
            left = [cell.key for cell in todo if cell.key not in results]
            by_peers = store.get_many(left)
            results.update(by_peers)
            bar.update(len(by_peers))
            todo = [cell for cell in todo if cell.key not in results]
            if todo:
                time.sleep(1.0)  # claimed by live peers: poll the store for their results
    return results, len(results) - n_computed


def run_table(
    table: Table, out: str | Path, options: Options = Options(), *, progress: bool | None = None
) -> TableRun:
    """Plan, run (resuming from ``out/results.sqlite``, sharing cells with concurrent runs) and
    report one table (into a new temporary folder when ``out`` is not writable)."""
    start = time.perf_counter()
    plan = table.plan(options)
    desc = f"{table.paper} {table.name}"
    with ResultsStore(Path(out) / STORE_NAME) as store:
        results, n_cached = run_cells(
            plan.cells, store, n_jobs=options.n_jobs, progress=progress, desc=desc
        )
    if store.writable:
        report_to = Path(out)
    else:
        report_to = Path(tempfile.mkdtemp(prefix="structreg-report-"))
    paths = table.report(plan, results, report_to, options)
    seconds = time.perf_counter() - start
    n_computed = len(results) - n_cached
    return TableRun(table, paths, results, n_cached, n_computed, seconds, dict(plan.skipped))
