"""The experiment engine: results store, resume, SIGKILL safety, joblib and dask, progress."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import engine_cells
import numpy as np
import pytest

from structreg.experiments import CellKey, ResultsStore, comparison_table, run_cells
from structreg.experiments.report import significance_mark

HERE = Path(__file__).parent


def test_store_roundtrip_and_canonical_keys(tmp_path):
    a = CellKey("p", "t", "d", "m", 0, {"x": 1, "y": [1, 2]})
    b = CellKey("p", "t", "d", "m", 0, {"y": [1, 2], "x": 1})  # same settings, other order
    c = CellKey("p", "t", "d", "m", 0, {"x": 2, "y": [1, 2]})
    assert a == b and hash(a) == hash(b) and a != c
    with ResultsStore(tmp_path / "r.sqlite") as store:
        assert store.get(a) is None
        store.put(a, {"acc": np.float64(0.5), "v": np.arange(3)}, seconds=1.0)
        assert store.get(b) == {"acc": 0.5, "v": [0, 1, 2]}
        assert store.get(c) is None and store.count() == 1 and store.count("p", "t") == 1
        assert store.integrity_ok()
    with ResultsStore(tmp_path / "r.sqlite") as store:  # persisted
        assert store.get(a)["acc"] == 0.5


def test_store_rejects_results_that_are_not_json(tmp_path):
    with ResultsStore(tmp_path / "r.sqlite") as store:
        with pytest.raises(TypeError, match="not JSON serialisable"):
            store.put(CellKey("p", "t", "d", "m", 0), {"bad": object()})
        assert store.count() == 0


def test_run_cells_resumes_and_parallel_equals_serial(tmp_path):
    log = tmp_path / "log.txt"
    with ResultsStore(tmp_path / "r.sqlite") as store:
        first, cached = run_cells(engine_cells.cells(6, log=str(log))[:4], store, progress=False)
        assert cached == 0 and len(first) == 4
        # the four finished cells are reused, only the two new ones run (in 2 processes)
        every, cached = run_cells(
            engine_cells.cells(6, log=str(log)), store, n_jobs=2, progress=False
        )
        assert cached == 4 and len(every) == 6
    assert len(log.read_text().splitlines()) == 6
    values = sorted(r["value"] for r in every.values())
    assert values == [2.0 * i**2 for i in range(6)]


def test_progress_bar_on_and_quiet_off_terminal(tmp_path, capsys):
    with ResultsStore(tmp_path / "r.sqlite") as store:
        run_cells(engine_cells.cells(3), store, desc="quiet")  # stderr is not a terminal here
        assert capsys.readouterr().err == ""
        run_cells(engine_cells.cells(5), store, progress=True, desc="shown")
    err = capsys.readouterr().err
    assert "shown" in err and "5/5" in err and "3/5" in err  # starts at the 3 cached cells


def test_sigkill_loses_only_cells_in_flight_and_never_corrupts(tmp_path):
    store_path, log = tmp_path / "r.sqlite", tmp_path / "log.txt"
    n, n_jobs = 40, 2
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), *sys.path])}
    args = [
        sys.executable,
        str(HERE / "engine_cells.py"),
        str(store_path),
        str(n),
        "0.1",
        str(log),
        str(n_jobs),
    ]
    proc = subprocess.Popen(args, env=env, start_new_session=True)
    try:
        deadline = time.time() + 120
        done = 0
        while time.time() < deadline and done < 8:
            time.sleep(0.2)
            if store_path.exists():
                with ResultsStore(store_path) as store:
                    done = store.count()
        assert 8 <= done < n, "the run should be killed half way"
        os.killpg(proc.pid, signal.SIGKILL)  # the runner and its workers, no clean-up
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    with ResultsStore(store_path) as store:
        assert store.integrity_ok()
        kept = store.count()
        assert kept >= 8
        executed_before = len(log.read_text().splitlines())
        # restart: only the missing cells run, and the table is complete and right
        results, cached = run_cells(engine_cells.cells(n, 0.1, str(log)), store, progress=False)
    assert cached == kept and len(results) == n
    assert sorted(r["value"] for r in results.values()) == [2.0 * i**2 for i in range(n)]
    rerun = len(log.read_text().splitlines()) - executed_before
    assert rerun == n - kept
    # work lost to the kill: cells that had started but were not stored (at most the in-flight)
    assert executed_before - kept <= 2 * n_jobs + 2


def test_dask_local_cluster_runs_the_same_cells(tmp_path, dask_scheduler):
    assert dask_scheduler.startswith("tcp://127.0.0.1:")
    with ResultsStore(tmp_path / "r.sqlite") as store:
        remote, _ = run_cells(
            engine_cells.cells(8, table="dask"), store, scheduler=dask_scheduler, progress=False
        )
    with ResultsStore(tmp_path / "local.sqlite") as store:
        local, _ = run_cells(engine_cells.cells(8, table="dask"), store, progress=False)
    assert remote == local


def test_significance_mark():
    rng = np.random.default_rng(0)
    a = 90 + rng.normal(0, 1, 10)
    assert significance_mark(a, a - 5 + rng.normal(0, 0.5, 10)) == "*"
    assert significance_mark(a, a + rng.normal(0, 2, 10)) in ("", "*")
    assert significance_mark(a, a) == ""
    assert significance_mark(a, a - 1.0) == "*"  # a constant shift is significant
    assert significance_mark(a[:1], a[:1] - 1) == ""  # one split: no test
    same_mean = np.r_[a[:5] + 1, a[5:] - 1]
    assert significance_mark(a, np.r_[same_mean[5:], same_mean[:5]]) == ""


def test_comparison_table_lists_paper_values_and_skipped_sets(tmp_path):
    values = {"iris": {"A": [90.0, 92.0, 91.0], "B": [80.0, 81.0, 79.0]}}
    md, csv_path = comparison_table(
        tmp_path,
        "t",
        title="T",
        values=values,
        methods=["A", "B", "C"],
        paper={"iris": {"A": 95.5, "B": 80.0}},
        reference="A",
        skipped={"water": "not in the data home"},
    )
    text = md.read_text()
    assert "91.00 ± 0.82 (95.50, -4.50)" in text
    assert "80.00 ± 0.82 (80.00, +0.00)*" in text
    assert "- water: not in the data home" in text
    rows = csv_path.read_text().splitlines()
    assert rows[0].startswith("data_set,method,n_splits,mean,std,paper,difference,mark")
    assert any(r.startswith("water,") and "skipped" in r for r in rows)
