"""The experiment engine: results store, resume, SIGKILL safety, joblib and dask, progress."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import engine_cells
import numpy as np
import pytest

from structreg.experiments import Cell, CellKey, ResultsStore, comparison_table, run_cells
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
        assert store.count("p", "other") == 0 and store.count("other") == 0
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
    with sqlite3.connect(store_path) as con:
        assert con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    with ResultsStore(store_path) as store:
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
    """Inside ``parallel_config(backend="dask")`` the cells run on the cluster's workers."""
    from distributed import Client
    from joblib import parallel_config

    log = tmp_path / "log.txt"
    cells = engine_cells.cells(8, log=str(log), table="dask")
    with Client(dask_scheduler) as client, parallel_config(backend="dask", client=client):
        with ResultsStore(tmp_path / "r.sqlite") as store:
            remote, _ = run_cells(cells, store, progress=False)
    pids = {line.split()[-1] for line in log.read_text().splitlines()}
    assert len(pids) >= 1 and str(os.getpid()) not in pids  # not computed in this process
    with ResultsStore(tmp_path / "local.sqlite") as store:
        local, _ = run_cells(cells, store, progress=False)
    assert remote == local and str(os.getpid()) in log.read_text()


def test_in_process_cells_get_one_blas_thread_unless_omp_num_threads_is_set(tmp_path, monkeypatch):
    from threadpoolctl import threadpool_info

    default = max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    cell = Cell.make(
        engine_cells.blas_threads, paper="p", table="t", dataset="d", method="m", split=0
    )
    with ResultsStore(tmp_path / "one.sqlite") as store:
        assert run_cells([cell], store, n_jobs=1, progress=False)[0][cell.key]["threads"] == 1
    monkeypatch.setenv("OMP_NUM_THREADS", str(default))  # the user's say: no limit
    with ResultsStore(tmp_path / "user.sqlite") as store:
        assert run_cells([cell], store, progress=False)[0][cell.key]["threads"] == default


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


def test_report_pieces(tmp_path):
    from structreg.experiments.report import (
        cost_line,
        format_params,
        markdown_table,
        most_frequent,
        skipped_lines,
        write_csv,
    )

    assert markdown_table(["set", "A", "B"], [["x", 1, "2 %"]]) == [
        "| set | A | B |",
        "| --- | --- | --- |",
        "| x | 1 | 2 % |",
    ]
    assert skipped_lines({}) == []
    assert skipped_lines({"Water": "missing"}) == ["", "Not run:", "", "- Water: missing"]
    params = {"sigma": 0.25, "k": 3, "random_state": 7}
    assert format_params(params) == "sigma=0.25, k=3, random_state=7"
    assert format_params(params, sep=";", skip=("random_state",)) == "sigma=0.25;k=3"
    assert format_params({"C": 2}, fmt=lambda k, v: f"{k}=10^{v}") == "C=10^2"
    assert most_frequent(["a", "b", "b", "a", "c"]) == ("a", 2)  # a tie: the first one seen
    runs = [("SVM", {"seconds": 1.2}), ("MR", {"seconds": 3.0}), ("SVM", {"seconds": 0.5})]
    assert cost_line(runs) == (
        "Cost: 3 cells, 5 s of cell time in all (one core each; SVM 2 s, MR 3 s)."
    )
    assert cost_line(runs, label="Compute", where="here", per_group=False) == (
        "Compute: 3 cells, 5 s of cell time in all (here)."
    )
    path = write_csv(tmp_path / "t.csv", ["a", "b"], [[1, "x,y"]])
    assert path.read_text().splitlines() == ["a,b", '1,"x,y"']


def test_protocol_grouping_splits_and_lenses():
    from structreg.experiments import Cell, Plan
    from structreg.experiments.protocol import (
        load_lenses,
        per_class_split,
        runs_table,
        standardised_halves,
    )

    cells = [
        Cell.make(dict, paper="p", table="t", dataset=d, method=m, split=s)
        for d in ("b", "a")
        for s in (1, 0)
        for m in ("M", "N")
    ]
    results = {c.key: {"v": (c.key.dataset, c.key.method, c.key.split)} for c in cells[:-1]}
    by = runs_table(Plan(cells), results, order=["z"])
    assert list(by) == ["z", "b", "a"] and by["z"] == {}
    assert [r["v"][2] for r in by["b"]["M"]] == [0, 1]  # split order
    assert [r["v"][2] for r in by["a"]["N"]] == [1]  # the missing result is left out
    X, y = np.arange(40.0).reshape(20, 2), np.repeat([0, 1], 10)
    Xtr, Xte, ytr, yte = standardised_halves(X, y, 0)
    assert len(ytr) == len(yte) == 10 and np.bincount(ytr).tolist() == [5, 5]
    np.testing.assert_allclose(Xtr.mean(0), 0, atol=1e-12)
    y = np.repeat([2, 0, 1], [4, 5, 6])
    train, test = per_class_split(y, 2, np.random.default_rng(0))
    assert y[train].tolist() == [0, 0, 1, 1, 2, 2] and np.all(np.diff(test) > 0)
    assert sorted([*train, *test]) == list(range(15))
    X, y = load_lenses()
    assert X.shape == (24, 4) and set(np.unique(X[:, 0])) == {1.0, 2.0, 3.0}
    assert sorted(set(y)) == ["hard", "none", "soft"]


def test_cell_grid_nests_data_sets_splits_methods():
    from structreg.experiments.engine import Cell, cell_grid

    cells = cell_grid(
        dict, paper="p", table="t", datasets=["b", "a"], draws=2, methods=iter("MN"), v=3
    )
    keys = [(c.key.dataset, c.key.split, c.key.method) for c in cells]
    assert keys == [(d, s, m) for d in "ba" for s in (0, 1) for m in "MN"]
    assert cells[0] == Cell.make(dict, paper="p", table="t", dataset="b", method="M", split=0, v=3)
    assert all(c.key.params == {"v": 3} for c in cells)
    assert cell_grid(dict, paper="p", table="t", datasets=["a"], draws=0, methods="M") == []
