"""Cell functions for the engine tests (a module, so that worker processes can import them)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from structreg.experiments import Cell, ResultsStore, run_cells


def square(
    *, dataset: str, method: str, split: int, scale: float = 1.0, sleep: float = 0.0, log: str = ""
) -> dict:
    """``split**2 * scale``; appends one line to ``log`` per execution (to count them)."""
    if log:
        with open(log, "a") as fh:
            fh.write(f"{dataset} {method} {split} {os.getpid()}\n")
    time.sleep(sleep)
    return {"value": split**2 * scale, "dataset": dataset, "method": method}


def blas_threads(*, dataset: str, method: str, split: int) -> dict:
    """The BLAS threads this cell may use."""
    from threadpoolctl import threadpool_info

    return {"threads": max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")}


def cells(n: int, sleep: float = 0.0, log: str = "", table: str = "t") -> list[Cell]:
    return [
        Cell.make(
            square,
            paper="selftest",
            table=table,
            dataset="d",
            method="m",
            split=i,
            scale=2.0,
            sleep=sleep,
            log=log,
        )
        for i in range(n)
    ]


if __name__ == "__main__":  # python engine_cells.py STORE N SLEEP LOG N_JOBS [REPORT [GO]]
    store_path, n, sleep, log, n_jobs, report, go = (sys.argv[1:] + ["", ""])[:7]
    if go:  # start together with a peer: say "ready", wait for "go"
        Path(f"{go}.{os.getpid()}").touch()
    while go and not Path(go).exists():
        time.sleep(0.01)
    with ResultsStore(Path(store_path)) as store:
        todo = cells(int(n), float(sleep), log)
        results, cached = run_cells(todo, store, n_jobs=int(n_jobs), progress=False)
    if report:  # what this run computed itself, and the table it would print
        table = [results[cell.key]["value"] for cell in todo]
        Path(report).write_text(json.dumps({"computed": len(results) - cached, "table": table}))
