"""Faults injected into the results store and ``structreg reproduce``: a damaged store (random
bytes over its middle, truncated, not SQLite at all), a read-only output folder (complete store,
missing cells, no store), an output folder that cannot be created (permissions, read-only file
system), Ctrl-C during a run (in the cell runner, and a real SIGINT), a killed claimer, a claim
whose lease expires, and two concurrent runs on one store."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import random
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import engine_cells
import pytest

import structreg.experiments.damr  # noqa: F401  (imported before a test drops privileges)
from structreg.cli import _without_not_run, main
from structreg.experiments import CellKey, Options, ResultsStore, engine, find_table, run_cells
from structreg.experiments.store import StoreDamaged, canonical_json, recover

HERE = Path(__file__).parent
TINY = ["reproduce", "damr", "--table", "3", "--quick", "--draws", "2", "--datasets", "sonar"]
PAD = "x" * 100  # a few hundred such cells fill some twenty pages of 4 KiB


def _key(i: int) -> CellKey:
    return CellKey("filler", "t", "d", "m", i, {"i": i})


def _fill(path: Path, n: int = 300) -> None:
    with ResultsStore(path) as store:
        for i in range(n):
            store.put(_key(i), {"value": i, "pad": PAD})


def _check_kept(path: Path, n: int = 300) -> int:
    """The filler cells still in the store at ``path``, each checked against what was put."""
    with ResultsStore(path) as store:
        found = {i: store.get(_key(i)) for i in range(n)}
    kept = {i: r for i, r in found.items() if r is not None}
    assert all(r == {"value": i, "pad": PAD} for i, r in kept.items())
    return len(kept)


def _scribble_over_middle(path: Path) -> None:
    """Random bytes over two pages in the middle of the file (not the first, schema, page)."""
    data = bytearray(path.read_bytes())
    start = len(data) // 2 // 4096 * 4096
    data[start : start + 8192] = random.Random(0).randbytes(8192)
    path.write_bytes(bytes(data))


def _aside(folder: Path) -> list[Path]:
    """The damaged stores moved aside (without their -wal / -shm files)."""
    found = folder.glob("results.sqlite.damaged-*")
    return sorted(p for p in found if not p.name.endswith(("-wal", "-shm")))


@pytest.fixture
def reproduced(tmp_path, capsys):
    """An output folder holding the tiny damr table (2 cells) and 300 filler cells."""
    assert main([*TINY, "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    _fill(tmp_path / "results.sqlite")
    return tmp_path


def test_random_bytes_over_the_middle_are_reported_and_recovered(reproduced, capsys):
    store, table = reproduced / "results.sqlite", (reproduced / "damr_3.md").read_text()
    _scribble_over_middle(store)
    with pytest.raises(StoreDamaged, match="is damaged: database disk image is malformed"):
        ResultsStore(store)
    assert main([*TINY, "--out", str(reproduced)]) == 1  # no traceback, nothing run
    err = capsys.readouterr().err
    assert f"the results store {store} is damaged" in err and "--recover" in err
    assert not _aside(reproduced)
    assert main([*TINY, "--out", str(reproduced), "--recover"]) == 0
    out = capsys.readouterr().out
    (aside,) = _aside(reproduced)
    assert f"moved the damaged store to {aside}; kept the " in out
    kept, fillers = int(out.split("kept the ")[1].split()[0]), _check_kept(store)
    assert 0 < fillers < 300  # the readable ones, each intact; the others lost
    damr = kept - fillers  # the table's own cells that were kept are not computed again
    assert f"{2 - damr} cells computed, {damr} reused" in out
    assert (reproduced / "damr_3.md").read_text() == table


def test_truncated_store_keeps_the_cells_before_the_cut(tmp_path):
    store = tmp_path / "results.sqlite"
    _fill(store)
    with open(store, "r+b") as fh:
        fh.truncate(store.stat().st_size // 2 + 100)
    with pytest.raises(StoreDamaged, match=f"{store} is damaged"):
        ResultsStore(store)
    aside, kept = recover(store)
    assert aside.name.startswith("results.sqlite.damaged-") and aside.exists()
    assert 0 < kept == _check_kept(store) < 300


def test_a_file_that_is_not_sqlite_is_moved_aside_and_the_table_recomputed(tmp_path, capsys):
    (tmp_path / "results.sqlite").write_text("not a database\n" * 200)
    assert main([*TINY, "--out", str(tmp_path)]) == 1
    assert "is damaged: file is not a database" in capsys.readouterr().err
    assert main([*TINY, "--out", str(tmp_path), "--recover"]) == 0
    out = capsys.readouterr().out
    assert "kept the 0 cells" in out and "2 cells computed, 0 reused" in out
    assert _aside(tmp_path)[0].read_text().startswith("not a database")


@pytest.fixture
def folder():
    """A fresh folder that the user ``nobody`` can reach (see :func:`read_only`)."""
    path = Path(tempfile.mkdtemp(prefix="structreg-faults-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def read_only(folder: Path):
    """``folder`` and its files not writable by this process.  Permissions do not stop root,
    so a root process also takes the effective user id of ``nobody`` meanwhile."""
    modes = {p: p.stat().st_mode for p in [folder, *folder.iterdir()]}
    for p in modes:
        p.chmod(0o555 if p.is_dir() else 0o444)
    root = os.geteuid() == 0
    if root:
        os.seteuid(65534)
    try:
        yield
    finally:
        if root:
            os.seteuid(0)
        for p, mode in modes.items():
            p.chmod(mode)


def test_read_only_folder_with_every_cell_stored_prints_the_tables(folder, capsys):
    assert main([*TINY, "--out", str(folder)]) == 0
    capsys.readouterr()
    before = sorted(folder.iterdir())
    with read_only(folder):
        assert main([*TINY, "--out", str(folder)]) == 0
    out = capsys.readouterr().out
    table = (folder / "damr_3.md").read_text()
    plan = find_table("damr", "3").plan(Options(quick=True, draws=2, extra={"datasets": ["sonar"]}))
    # the table, printed without its "Not run" list, which follows once for the run
    assert _without_not_run(table, plan.skipped) in out
    assert "Not run (" in out and "Biomed, Ethn, Isolet" in out
    assert "0 cells computed, 2 reused" in out and f"{folder} is not writable" in out
    assert sorted(folder.iterdir()) == before


def test_read_only_folder_with_missing_cells_says_so(folder, capsys):
    assert main([*TINY[:-4], "--draws", "1", *TINY[-2:], "--out", str(folder)]) == 0
    capsys.readouterr()
    before = {p: p.read_bytes() for p in folder.iterdir()}
    with read_only(folder):
        assert main([*TINY, "--out", str(folder)]) == 1  # 1 of the 2 cells is missing
    err = capsys.readouterr().err
    assert f"structreg: error: {folder} is not writable; 1 cell(s) missing" in err
    assert {p: p.read_bytes() for p in folder.iterdir()} == before
    empty = folder / "empty"
    empty.mkdir()
    with read_only(empty):
        assert main([*TINY, "--out", str(empty)]) == 1
    assert (
        f"{empty} is not writable: cannot create {empty}/results.sqlite" in capsys.readouterr().err
    )


def test_an_output_folder_that_cannot_be_created_is_named_with_the_reason(folder, capsys):
    """``--out`` under a folder this process may not write: one line naming the folder and
    why, exit status 1, and nothing made."""
    assert main([*TINY, "--out", str(folder / "warm")]) == 0  # everything imported
    shutil.rmtree(folder / "warm")
    capsys.readouterr()
    out = folder / "new" / "out"
    with read_only(folder):
        assert main([*TINY, "--out", str(out)]) == 1
    assert capsys.readouterr().err == (
        f"structreg: error: cannot create output folder {out}: permission denied "
        f"(at {folder / 'new'})\n"
    )
    assert list(folder.iterdir()) == []


def test_an_output_folder_on_a_read_only_file_system(tmp_path, monkeypatch, capsys):
    """mkdir failing with EROFS (a read-only mount) used to end in an OSError traceback."""
    mkdir, blocked = Path.mkdir, tmp_path / "ro"

    def read_only_mkdir(self, *args, **kwargs):
        if self == blocked or blocked in self.parents:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(self))
        return mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", read_only_mkdir)
    assert main([*TINY, "--out", str(blocked / "out")]) == 1
    assert capsys.readouterr().err == (
        f"structreg: error: cannot create output folder {blocked / 'out'}: read-only file system\n"
    )
    assert list(tmp_path.iterdir()) == []


def _interrupted(store: Path, n: int) -> str:
    return (
        f"structreg: interrupted; {n} cells of damr already stored in {store} are kept: run the "
        "same command again to resume\n"
    )


def _stored(store: Path) -> tuple[int, int, list]:
    """(cells, claims, quick_check) of the store at ``store``, read without changing it."""
    with contextlib.closing(sqlite3.connect(f"{store.as_uri()}?mode=ro", uri=True)) as con:
        cells = con.execute("SELECT COUNT(*) FROM cells").fetchone()[0]
        claims = con.execute("SELECT COUNT(*) FROM claims").fetchone()[0]
        return cells, claims, con.execute("PRAGMA quick_check").fetchall()


def test_ctrl_c_keeps_the_stored_cells_and_the_same_command_resumes(tmp_path, monkeypatch, capsys):
    """KeyboardInterrupt in the third cell: one line, exit status 130, the two finished cells
    kept (no claim left), and the same command computes only the cells that are missing."""
    args = [*TINY[:-4], "--draws", "4", *TINY[-2:], "--out", str(tmp_path), "--progress", "off"]
    run, calls = engine._execute, []

    def interrupted_third(cell, threads):
        calls.append(cell.key)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return run(cell, threads)

    monkeypatch.setattr(engine, "_execute", interrupted_third)
    try:
        code = main(args)
    except KeyboardInterrupt:  # would end the test session, not just fail this test
        pytest.fail("KeyboardInterrupt escaped structreg.cli.main")
    assert code == 130
    store = tmp_path / "results.sqlite"
    captured = capsys.readouterr()
    assert captured.err == _interrupted(store, 2) and "Traceback" not in captured.out
    assert _stored(store) == (2, 0, [("ok",)])
    monkeypatch.setattr(engine, "_execute", run)
    assert main(args) == 0
    assert "damr table 3: 2 cells computed, 2 reused" in capsys.readouterr().out
    assert main([*args[:-3], str(tmp_path / "whole"), "--progress", "off"]) == 0
    assert (tmp_path / "damr_3.md").read_text().replace(str(tmp_path), "") == (
        tmp_path / "whole" / "damr_3.md"
    ).read_text().replace(str(tmp_path / "whole"), "")


SLOW_CELLS = """
import signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)  # as at a terminal, even where the
import structreg.experiments.engine as engine              # test runs with SIGINT ignored
run = engine._execute
def slow(cell, threads):
    time.sleep(0.3)
    return run(cell, threads)
engine._execute = slow
from structreg.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_sigint_during_a_run_prints_one_line_and_exits_130(tmp_path, capsys):
    """A real SIGINT to a ``structreg reproduce`` process once the store has cells: no
    traceback, one line saying how many cells are kept, exit status 130; a rerun resumes."""
    store, n = tmp_path / "results.sqlite", 40
    args = [*TINY[:-4], "--draws", str(n), *TINY[-2:], "--out", str(tmp_path), "--progress", "off"]
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_CELLS, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        deadline = time.time() + 60
        while time.time() < deadline and proc.poll() is None:
            if store.exists() and _count_ro(store) >= 2:
                break
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    kept, claims, check = _stored(store)
    assert proc.returncode == 130 and 2 <= kept < n and claims == 0 and check == [("ok",)]
    assert err.decode() == _interrupted(store, kept)
    assert main(args) == 0
    assert f"damr table 3: {n - kept} cells computed, {kept} reused" in capsys.readouterr().out


def _count_ro(store: Path) -> int:
    try:
        return _stored(store)[0]
    except sqlite3.Error:  # the schema is not there yet
        return 0


def test_claims_skip_live_peers_and_take_over_ended_or_expired_ones(tmp_path):
    key = engine_cells.cells(1)[0].key
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    cell, here = canonical_json(key.as_row()), socket.gethostname()
    try:
        with ResultsStore(tmp_path / "r.sqlite") as store:
            con = sqlite3.connect(tmp_path / "r.sqlite", isolation_level=None)
            for owner, lease, mine in [
                (f"{here}:{live.pid}", 60, False),  # a live process of this host
                ("elsewhere:1", 60, False),  # another host: trusted until its lease ends
                (f"{here}:{ended.pid}", 60, True),  # a process that ended: taken over at once
                ("elsewhere:1", -1, True),  # its lease ended
            ]:
                con.execute(
                    "REPLACE INTO claims VALUES (?,?,?)", (cell, owner, time.time() + lease)
                )
                assert store.claim(key) is mine
            assert store.claim(key)  # this process's own claim
            store.put(key, {"value": 0})
            assert not store.claim(key)  # finished
            assert con.execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0
    finally:
        live.kill()
        live.wait()


def test_a_claim_whose_lease_expires_is_computed_after_all(tmp_path):
    """A claimer on another host that stops renewing: its cell waits for the lease, then runs."""
    log = tmp_path / "log.txt"
    cells = engine_cells.cells(4, log=str(log))
    with ResultsStore(tmp_path / "r.sqlite") as store:
        cell = canonical_json(cells[2].key.as_row())
        with sqlite3.connect(tmp_path / "r.sqlite") as con:
            con.execute("INSERT INTO claims VALUES (?,?,?)", (cell, "elsewhere:1", time.time() + 1))
        results, cached = run_cells(cells, store, progress=False)
    assert cached == 0 and [results[c.key]["value"] for c in cells] == [0.0, 2.0, 8.0, 18.0]
    assert sorted(line.split()[2] for line in log.read_text().splitlines()) == ["0", "1", "2", "3"]


def _runner(store: Path, n: int, sleep: float, log: Path, n_jobs: int, report: Path, go: str):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), *sys.path])}
    args = [sys.executable, str(HERE / "engine_cells.py"), str(store), str(n), str(sleep)]
    args += [str(log), str(n_jobs), str(report), go]
    return subprocess.Popen(args, env=env, start_new_session=True)


def _count(store: Path) -> int:
    with ResultsStore(store) as s:
        return s.count()


def test_killed_claimer_loses_only_its_cell_in_flight(tmp_path, monkeypatch):
    """SIGKILL leaves the claim on the cell in flight; the next run takes it over at once (its
    claimer's process has ended), and only that cell runs twice."""
    store, log = tmp_path / "r.sqlite", tmp_path / "log.txt"
    proc = _runner(store, 6, 0.5, log, 1, tmp_path / "report.json", "")
    try:
        deadline = time.time() + 60
        while time.time() < deadline and not (store.exists() and _count(store)):
            time.sleep(0.05)
        time.sleep(0.1)  # the next cell is claimed and running
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    with ResultsStore(store) as s:
        done = s.count()
        claimed = sqlite3.connect(store).execute("SELECT COUNT(*) FROM claims").fetchone()[0]
        assert 1 <= done < 6 and claimed == 1  # the dead run's claim on its cell in flight

        def no_waiting(seconds: float) -> None:
            raise AssertionError("waited for the claim of a process that has ended")

        clock = SimpleNamespace(perf_counter=time.perf_counter, sleep=no_waiting)
        monkeypatch.setattr(engine, "time", clock)
        results, cached = run_cells(engine_cells.cells(6, 0.5, str(log)), s, progress=False)
    assert cached == done and sorted(r["value"] for r in results.values()) == [
        2.0 * i**2 for i in range(6)
    ]
    runs = [line.split()[2] for line in log.read_text().splitlines()]
    assert len(runs) == 6 + 1 and len(set(runs)) == 6  # only the killed cell ran twice


@pytest.mark.parametrize("n_jobs", [(1, 1), (2, 1)], ids=["in-process", "joblib+in-process"])
def test_two_concurrent_runs_compute_each_cell_once(tmp_path, n_jobs):
    store, log, go = tmp_path / "r.sqlite", tmp_path / "log.txt", tmp_path / "go"
    n = 12
    reports = [tmp_path / "a.json", tmp_path / "b.json"]
    procs = [
        _runner(store, n, 0.2, log, j, r, str(go)) for j, r in zip(n_jobs, reports, strict=True)
    ]
    deadline = time.time() + 60
    while len(list(tmp_path.glob("go.*"))) < 2 and time.time() < deadline:
        time.sleep(0.01)  # both ready
    go.touch()
    try:
        assert [p.wait(timeout=120) for p in procs] == [0, 0]
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
    a, b = (json.loads(r.read_text()) for r in reports)
    assert a["table"] == b["table"] == [2.0 * i**2 for i in range(n)]  # the same table
    computed = [line.split()[2] for line in log.read_text().splitlines()]
    assert sorted(computed, key=int) == [str(i) for i in range(n)]  # each cell once in all
    assert a["computed"] + b["computed"] == n and a["computed"] > 0 and b["computed"] > 0
    with ResultsStore(store) as s:
        hosts = sqlite3.connect(store).execute("SELECT host FROM cells").fetchall()
        assert s.count() == n and len(set(hosts)) == 2  # stored by both processes
