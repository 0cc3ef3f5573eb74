"""The experiment engine: cells, tables, and a resumable, parallel runner.

A table *plans* its :class:`Cell` s, :func:`run_cells` runs the ones not yet in the results
store (joblib or dask; deterministic cells, so a resumed run gives the same table) and the table
*reports* them.  How and why: ``docs/reproducing/engine.md``.
"""

from __future__ import annotations

import itertools
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .store import CellKey, ResultsStore

__all__ = ["Cell", "Options", "Plan", "Table", "TableRun", "cell_grid", "run_cells", "run_table"]

STORE_NAME = "results.sqlite"
Results = dict[CellKey, dict[str, Any]]
"""The stored results of a table's cells, by key."""


@dataclass(frozen=True)
class Cell:
    """One unit of work: ``func(dataset=..., method=..., split=..., **params)``.

    ``func`` must be a module-level function (it is pickled to the workers) returning a
    JSON-able dict.  The key is built from the same arguments, so a cell's stored result is
    found again exactly when it would be recomputed with the same arguments.
    """

    key: CellKey
    func: Callable[..., dict[str, Any]]

    @classmethod
    def make(
        cls,
        func: Callable[..., dict[str, Any]],
        *,
        paper: str,
        table: str,
        dataset: str,
        method: str,
        split: int,
        **params: Any,
    ) -> Cell:
        return cls(CellKey(paper, table, dataset, method, split, params), func)

    def run(self) -> dict[str, Any]:
        k = self.key
        return self.func(dataset=k.dataset, method=k.method, split=k.split, **dict(k.params))


def cell_grid(
    func: Callable[..., dict[str, Any]],
    *,
    paper: str,
    table: str,
    datasets: Iterable[str],
    draws: int,
    methods: Iterable[str],
    **params: Any,
) -> list[Cell]:
    """One :class:`Cell` per (data set, split ``0 .. draws - 1``, method), in that nesting
    order, all with the same ``params``."""
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
    """One reproducible table or figure of a paper.

    ``plan(options)`` returns the :class:`Plan`; ``report(plan, results, out, options)``
    writes the outputs (Markdown first) and returns their paths.  ``aliases`` are other names
    accepted on the command line (e.g. ``"toy"`` for DRLSC's Tables 4-5).
    """

    paper: str
    name: str
    title: str
    plan: Callable[[Options], Plan]
    report: Callable[[Plan, Results, Path, Options], list[Path]]
    aliases: tuple[str, ...] = ()


@dataclass
class TableRun:
    """What :func:`run_table` did: output paths, results, cells reused / computed, time."""

    table: Table
    paths: list[Path]
    results: Results
    n_cached: int
    n_computed: int
    wall_time_s: float


def _execute(index: int, cell: Cell, threads: int | None) -> tuple[int, dict[str, Any], float]:
    """Run one cell with at most ``threads`` BLAS/OpenMP threads (None: no limit)."""
    from threadpoolctl import threadpool_limits

    start = time.perf_counter()
    with threadpool_limits(limits=threads):
        result = cell.run()
    return index, result, time.perf_counter() - start


def _results_as_completed(
    todo: Sequence[Cell], n_jobs: int | None, scheduler: Any
) -> Iterator[tuple[int, dict[str, Any], float]]:
    """Yield ``(index, result, seconds)`` in completion order.  Cells running side by side
    share the cores: ``cores // workers`` threads each, one on a dask worker (one in-process
    worker keeps the default threading; docs/reproducing/engine.md)."""
    if scheduler is None and (n_jobs is None or n_jobs == 1):
        for i, cell in enumerate(todo):  # in-process: plain tracebacks, no pickling
            yield _execute(i, cell, None)
        return
    from joblib import Parallel, cpu_count, delayed, parallel_config

    workers = cpu_count() if n_jobs is None or n_jobs < 0 else n_jobs
    threads = 1 if scheduler is not None else max(1, cpu_count() // workers)
    calls = (delayed(_execute)(i, cell, threads) for i, cell in enumerate(todo))
    if scheduler is None:
        yield from Parallel(n_jobs=n_jobs, return_as="generator_unordered")(calls)
        return
    try:
        from distributed import Client
    except ImportError as exc:  # pragma: no cover - dask is in the test extra
        raise ValueError(
            "--scheduler needs dask.distributed: pip install 'structreg[dask]'"
        ) from exc
    client = scheduler if isinstance(scheduler, Client) else Client(scheduler)
    with parallel_config(backend="dask", wait_for_workers_timeout=60):
        yield from Parallel(n_jobs=-1, return_as="generator_unordered")(calls)
    if client is not scheduler:
        client.close()


def run_cells(
    cells: Iterable[Cell],
    store: ResultsStore,
    *,
    n_jobs: int | None = None,
    scheduler: Any = None,
    progress: bool | None = None,
    desc: str = "",
) -> tuple[Results, int]:
    """Run the cells not yet in ``store`` (duplicated keys once) and store each result as it
    arrives; return ``({key: result}, n_cached)``.  ``n_jobs``: joblib workers here (None or 1:
    this process); ``scheduler``: a ``dask.distributed`` address or client (then ``n_jobs`` is
    ignored); ``progress``: a bar on stderr (None: only on a terminal) labelled ``desc``.
    """
    from tqdm.auto import tqdm

    unique = list({cell.key: cell for cell in cells}.values())
    results = store.get_many(cell.key for cell in unique)
    n_cached = len(results)
    todo = [cell for cell in unique if cell.key not in results]
    quiet = None if progress is None else not progress  # None: on only when stderr is a terminal
    with tqdm(
        total=len(unique),
        initial=n_cached,
        desc=desc,
        unit="cell",
        file=sys.stderr,
        disable=quiet,
        dynamic_ncols=True,
    ) as bar:
        for index, result, seconds in _results_as_completed(todo, n_jobs, scheduler):
            key = todo[index].key
            store.put(key, result, seconds)
            results[key] = store.get(key)  # exactly what a resumed run will read back
            bar.update(1)
    return results, n_cached


def run_table(
    table: Table,
    out: str | Path,
    options: Options = Options(),
    *,
    scheduler: Any = None,
    progress: bool | None = None,
) -> TableRun:
    """Plan, run (resuming from ``out/results.sqlite``) and report one table."""
    start = time.perf_counter()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    plan = table.plan(options)
    with ResultsStore(out / STORE_NAME) as store:
        results, n_cached = run_cells(
            plan.cells,
            store,
            n_jobs=options.n_jobs,
            scheduler=scheduler,
            progress=progress,
            desc=f"{table.paper} {table.name}",
        )
    paths = table.report(plan, results, out, options)
    return TableRun(
        table, paths, results, n_cached, len(results) - n_cached, time.perf_counter() - start
    )
