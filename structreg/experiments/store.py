"""The results store of the reproductions: one SQLite file per output folder, one row per
finished cell, written atomically as it finishes, and the cells claimed by the runs sharing it
(resuming, concurrent runs, damaged and read-only stores: ``docs/reproducing/engine.md``)."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["CellKey", "ResultsStore", "StoreDamaged", "StoreError", "canonical_json", "recover"]

_SCHEMA = """
PRAGMA journal_mode = WAL;
PRAGMA synchronous = NORMAL;

CREATE TABLE IF NOT EXISTS cells (
    paper    TEXT    NOT NULL,
    tbl      TEXT    NOT NULL,
    dataset  TEXT    NOT NULL,
    method   TEXT    NOT NULL,
    split    INTEGER NOT NULL,
    params   TEXT    NOT NULL,
    result   TEXT    NOT NULL,
    seconds  REAL,
    host     TEXT,
    finished TEXT,
    PRIMARY KEY (paper, tbl, dataset, method, split, params)
);

CREATE TABLE IF NOT EXISTS claims (
    cell    TEXT PRIMARY KEY,
    owner   TEXT NOT NULL,
    expires REAL
);
"""
"""The two tables.  ``cells``: one finished cell per row, keyed by its :class:`CellKey`
(``params`` and ``result`` are canonical JSON, ``host`` the ``host:pid`` that computed it,
``finished`` the local time it was stored).  ``claims``: the cells a run has taken on
(``cell``: the canonical JSON of the key), by whom and until when (``time.time()``)."""

_INSERT_CELL = """
INSERT OR REPLACE INTO cells (paper, tbl, dataset, method, split, params,
                              result, seconds, host, finished)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
_SELECT_CELL_BY_ROWID = """
SELECT paper, tbl, dataset, method, split, params, result, seconds, host, finished
FROM cells
WHERE rowid = ?
"""
_SELECT_RESULT = """
SELECT result
FROM cells
WHERE paper = ? AND tbl = ? AND dataset = ? AND method = ? AND split = ? AND params = ?
"""
_CELL_EXISTS = """
SELECT 1
FROM cells
WHERE paper = ? AND tbl = ? AND dataset = ? AND method = ? AND split = ? AND params = ?
"""
_COUNT_CELLS = """
SELECT COUNT(*)
FROM cells
WHERE ifnull(?, paper) = paper AND ifnull(?, tbl) = tbl
"""
_CLAIM_HOLDERS = "SELECT owner, expires FROM claims WHERE cell = ?"
_TAKE_CLAIM = "REPLACE INTO claims VALUES (?, ?, ?)"
_RENEW_CLAIMS = "UPDATE claims SET expires = ? WHERE owner = ?"
_DROP_CLAIM = "DELETE FROM claims WHERE cell = ?"
_RELEASE_CLAIMS = "DELETE FROM claims WHERE owner = ?"

_ME = f"{socket.gethostname()}:{os.getpid()}"
"""This process, as the ``host`` of the cells it computes and the ``owner`` of its claims."""

_SCHEMA_RETRY_WAITS = tuple(0.01 * 1.5**i for i in range(15))
"""Seconds slept between the attempts to set up the schema (about nine seconds in all):
switching a new file to WAL does not wait for the busy timeout while another run is creating
it."""


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces: equal settings give equal strings."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=_jsonable)


def _jsonable(value: Any) -> Any:
    """numpy scalars and arrays (and tuples, via json) become plain JSON values."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable: {value!r}")


class StoreError(OSError):
    """The results store cannot be used as asked (the message names the file and why)."""


class StoreDamaged(StoreError):
    """The store's file is not a sound SQLite database (:func:`recover` keeps what is left)."""


@dataclass(frozen=True)
class CellKey:
    """What identifies one cell of a reproduced table (see the module docstring)."""

    paper: str
    table: str
    dataset: str
    method: str
    split: int
    params: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)
    params_json: str = field(default="", repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "split", int(self.split))
        object.__setattr__(self, "params_json", canonical_json(dict(self.params)))

    def as_row(self) -> tuple[str, str, str, str, int, str]:
        return (self.paper, self.table, self.dataset, self.method, self.split, self.params_json)


def _make_folder(folder: Path) -> None:
    """Create ``folder`` (and its parents) if missing; :class:`StoreError` naming it and the
    reason (read-only file system, permission denied, ...) when it cannot be made."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        reason = os.strerror(exc.errno).lower() if exc.errno else str(exc)
        if exc.filename is not None and Path(exc.filename) != folder:
            reason += f" (at {exc.filename})"
        raise StoreError(f"cannot create output folder {folder}: {reason}") from exc


def _writable(path: Path) -> bool:
    """Whether this process may write ``path`` (judged by its effective ids where the platform
    can)."""
    effective_ids = os.access in os.supports_effective_ids
    return os.access(path, os.W_OK, effective_ids=effective_ids)


class ResultsStore(AbstractContextManager):
    """Finished cells in the SQLite file ``path`` (created on first use, its folder too) and
    the claims of the runs sharing it; ``timeout``: seconds to wait for another process's lock;
    ``lease``: seconds a claim lasts unless renewed (docs/reproducing/engine.md)."""

    def __init__(self, path: str | Path, timeout: float = 30.0, lease: float = 1800.0) -> None:
        self.path = Path(path)
        self.lease = lease
        self._lock = threading.RLock()
        _make_folder(self.path.parent)
        existing = [p for p in (self.path.parent, self.path) if p.exists()]
        self.writable = all(_writable(p) for p in existing)
        if not self.writable and not self.path.exists():
            raise StoreError(f"{self.path.parent} is not writable: cannot create {self.path}")
        self._con = self._connect(timeout)
        try:
            self._create_schema()
            self._check_integrity()
        except sqlite3.DatabaseError as exc:
            self._con.close()
            raise _open_error(self.path, exc) from exc

    def _connect(self, timeout: float) -> sqlite3.Connection:
        """A connection usable from any thread, in autocommit mode (transactions are explicit,
        :meth:`_write`); a store that is not writable is read as the file is (immutable)."""
        if self.writable:
            target: str | Path = self.path
        else:
            target = self.path.absolute().as_uri() + "?immutable=1"
        return sqlite3.connect(
            target, timeout, isolation_level=None, check_same_thread=False, uri=True
        )

    def _create_schema(self) -> None:
        """The tables (a store that is not writable: none), retried while another run is
        creating the file; the last attempt's error is the caller's."""
        script = _SCHEMA if self.writable else ""
        for wait in _SCHEMA_RETRY_WAITS:
            try:
                self._con.executescript(script)
                return
            except sqlite3.OperationalError:
                time.sleep(wait)
        self._con.executescript(script)

    def _check_integrity(self) -> None:
        """Raise :class:`sqlite3.DatabaseError` naming the first problems SQLite finds."""
        check = self._con.execute("PRAGMA quick_check").fetchall()
        if check != [("ok",)]:
            problems = "; ".join(row[0] for row in check[:3])
            raise sqlite3.DatabaseError(problems)

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release this process's claims (a run that stopped early) and close the file."""
        try:
            with self._write() as con:
                con.execute(_RELEASE_CLAIMS, (_ME,))
        except sqlite3.Error:
            pass  # e.g. a store read as it is: no claims of this process there
        self._con.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """A ``BEGIN IMMEDIATE`` transaction that first renews this process's claims; committed
        at the end, rolled back on an error."""
        with self._lock, self._con:
            self._con.execute("BEGIN IMMEDIATE")
            expires = time.time() + self.lease
            self._con.execute(_RENEW_CLAIMS, (expires, _ME))
            yield self._con

    def get(self, key: CellKey) -> dict[str, Any] | None:
        """The stored result of ``key``, or None if that cell has not finished."""
        with self._lock:  # joblib's dispatching thread claims cells through this connection
            row = self._con.execute(_SELECT_RESULT, key.as_row()).fetchone()
        if row is None:
            return None
        return json.loads(row[0])

    def get_many(self, keys: Iterable[CellKey]) -> dict[CellKey, dict[str, Any]]:
        """The stored results of those ``keys`` that have finished."""
        found = {}
        for key in keys:
            result = self.get(key)
            if result is not None:
                found[key] = result
        return found

    def put(self, key: CellKey, result: Mapping[str, Any], seconds: float | None = None) -> None:
        """Store one finished cell (atomically, replacing an earlier result) and drop its claim."""
        text = canonical_json(dict(result))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        row = (*key.as_row(), text, seconds, _ME, stamp)
        with self._write() as con:
            con.execute(_INSERT_CELL, row)
            con.execute(_DROP_CLAIM, (canonical_json(key.as_row()),))

    def claim(self, key: CellKey) -> bool:
        """True once ``key`` is claimed for this process; False when it is stored or claimed by
        a live peer (lease not expired, and not a process of this host that has ended)."""
        cell = canonical_json(key.as_row())
        now = time.time()
        with self._write() as con:
            for owner, expires in con.execute(_CLAIM_HOLDERS, (cell,)).fetchall():
                if owner != _ME and expires > now and _alive(owner):
                    return False
            if con.execute(_CELL_EXISTS, key.as_row()).fetchone():
                return False
            con.execute(_TAKE_CLAIM, (cell, _ME, now + self.lease))
            return True

    def count(self, paper: str | None = None, table: str | None = None) -> int:
        """Number of stored cells (of one paper / table)."""
        with self._lock:
            return self._con.execute(_COUNT_CELLS, (paper, table)).fetchone()[0]


def _open_error(path: Path, exc: sqlite3.DatabaseError) -> StoreError:
    """The error of a store that could not be opened: :class:`StoreError` when SQLite could not
    use the file (locked, no access, ...), :class:`StoreDamaged` when the file is unsound."""
    if isinstance(exc, sqlite3.OperationalError):
        return StoreError(f"the results store {path} cannot be used: {exc}")
    return StoreDamaged(f"the results store {path} is damaged: {exc}")


def _alive(owner: str) -> bool:
    """False for a claimer known to have ended: a process of this host that no longer exists."""
    host, pid = owner.rsplit(":", 1)
    if host != socket.gethostname() or os.name != "posix":
        return True  # another host's process, or (Windows) os.kill would end the process
    try:
        os.kill(int(pid), 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it exists, another user's
        return True
    return True


def recover(path: str | Path) -> tuple[Path, int]:
    """Move the damaged store ``path`` (and its ``-wal`` / ``-shm`` files) aside to
    ``<path>.damaged-<time>-<pid>``, copy every cell SQLite can still read from it into a fresh
    store at ``path`` and return ``(the moved file, the number of cells kept)``."""
    path = Path(path)
    stamp = time.strftime("%Y%m%dT%H%M%S")
    aside = path.with_name(f"{path.name}.damaged-{stamp}-{os.getpid()}")
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{path}{suffix}").exists():
            os.replace(f"{path}{suffix}", f"{aside}{suffix}")
    kept = 0
    with ResultsStore(path) as store, store._write() as new:
        with closing(sqlite3.connect(aside)) as old:
            for rowid in _rowids_to_try(old, aside):
                row = _sound_row(old, rowid)
                if row is None:
                    continue
                try:
                    kept += new.execute(_INSERT_CELL, row).rowcount
                except sqlite3.Error:
                    continue
    return aside, kept


def _rowids_to_try(old: sqlite3.Connection, file: Path) -> range:
    """The rowids to read from a damaged store: none when its ``cells`` table cannot be read
    at all (no database, or its schema is lost), else more than the file can hold rows (the
    rows of a truncated file's remaining pages are still read)."""
    try:
        old.execute("PRAGMA writable_schema=ON")
        old.execute(_SELECT_CELL_BY_ROWID, (0,))
    except sqlite3.Error:
        return range(0)
    return range(1, file.stat().st_size // 16)


def _sound_row(old: sqlite3.Connection, rowid: int) -> tuple | None:
    """The cell ``rowid`` of a damaged store, or None when it is missing or cannot be read or
    its ``params`` or ``result`` is not a JSON object (read one at a time: a damaged page
    loses only its own rows)."""
    try:
        row = old.execute(_SELECT_CELL_BY_ROWID, (rowid,)).fetchone()
        if not row:
            return None
        params, result = row[5], row[6]
        if not isinstance(json.loads(params), dict):
            return None
        if not isinstance(json.loads(result), dict):
            return None
    except (sqlite3.Error, TypeError, ValueError):
        return None
    return row
