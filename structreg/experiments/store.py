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
from contextlib import AbstractContextManager, closing, contextmanager, nullcontext, suppress
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

__all__ = ["CellKey", "ResultsStore", "StoreDamaged", "StoreError", "canonical_json", "recover"]

_SCHEMA = """PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;
CREATE TABLE IF NOT EXISTS cells (paper TEXT NOT NULL, tbl TEXT NOT NULL, dataset TEXT NOT NULL,
    method TEXT NOT NULL, split INTEGER NOT NULL, params TEXT NOT NULL, result TEXT NOT NULL,
seconds REAL, host TEXT, finished TEXT, PRIMARY KEY (paper, tbl, dataset, method, split, params));
CREATE TABLE IF NOT EXISTS claims (cell TEXT PRIMARY KEY, owner TEXT NOT NULL, expires REAL);"""
_COLUMNS = "paper, tbl, dataset, method, split, params, result, seconds, host, finished"
_INSERT = f"INSERT OR REPLACE INTO cells ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)"
_KEY = " WHERE paper=? AND tbl=? AND dataset=? AND method=? AND split=? AND params=?"
_ME = f"{socket.gethostname()}:{os.getpid()}"  # who computed a cell (``host``) / holds claims
_can_write = partial(os.access, mode=os.W_OK, effective_ids=os.access in os.supports_effective_ids)
_CONNECT = {"isolation_level": None, "check_same_thread": False, "uri": True}  # any thread


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


class ResultsStore(AbstractContextManager):
    """Finished cells in the SQLite file ``path`` (created on first use, its folder too) and
    the claims of the runs sharing it; ``timeout``: seconds to wait for another process's lock;
    ``lease``: seconds a claim lasts unless renewed (docs/reproducing/engine.md)."""

    def __init__(self, path: str | Path, timeout: float = 30.0, lease: float = 1800.0) -> None:
        self.path, self.lease, self._lock = Path(path), lease, threading.RLock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.writable = all(_can_write(p) for p in (self.path.parent, self.path) if p.exists())
        if not (self.writable or self.path.exists()):
            raise StoreError(f"{self.path.parent} is not writable: cannot create {self.path}")
        ro = self.path.absolute().as_uri() + "?immutable=1"  # not writable: read the file as is
        self._con = sqlite3.connect(self.path if self.writable else ro, timeout, **_CONNECT)
        try:  # switching to WAL skips the busy timeout: wait (~9 s) while another run creates it
            for wait in [*(0.01 * 1.5**i for i in range(15)), None]:
                with suppress(sqlite3.OperationalError) if wait else nullcontext():
                    self._con.executescript(_SCHEMA if self.writable else "")
                    break
                time.sleep(wait)
            if (check := self._con.execute("PRAGMA quick_check").fetchall()) != [("ok",)]:
                raise sqlite3.DatabaseError("; ".join(row[0] for row in check[:3]))
        except sqlite3.DatabaseError as exc:  # OperationalError: locked, no access, ...
            self._con.close()
            bad = not isinstance(exc, sqlite3.OperationalError)
            what = f"the results store {self.path} {'is damaged' if bad else 'cannot be used'}"
            raise (StoreDamaged if bad else StoreError)(f"{what}: {exc}") from exc

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release this process's claims (a run that stopped early) and close the file."""
        with suppress(sqlite3.Error), self._write() as con:
            con.execute("DELETE FROM claims WHERE owner=?", (_ME,))
        self._con.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """A ``BEGIN IMMEDIATE`` transaction that first renews this process's claims."""
        with self._lock, self._con:  # committed at the end, rolled back on an error
            self._con.execute("BEGIN IMMEDIATE")
            renew, expires = "UPDATE claims SET expires=? WHERE owner=?", time.time() + self.lease
            yield self._con.execute(renew, (expires, _ME)).connection

    def get(self, key: CellKey) -> dict[str, Any] | None:
        """The stored result of ``key``, or None if that cell has not finished."""
        with self._lock:  # joblib's dispatching thread claims cells through this connection
            row = self._con.execute("SELECT result FROM cells" + _KEY, key.as_row()).fetchone()
        return None if row is None else json.loads(row[0])

    def get_many(self, keys: Iterable[CellKey]) -> dict[CellKey, dict[str, Any]]:
        """The stored results of those ``keys`` that have finished."""
        return {key: result for key in keys if (result := self.get(key)) is not None}

    def put(self, key: CellKey, result: Mapping[str, Any], seconds: float | None = None) -> None:
        """Store one finished cell (atomically, replacing an earlier result) and drop its claim."""
        text, stamp = canonical_json(dict(result)), time.strftime("%Y-%m-%dT%H:%M:%S%z")
        with self._write() as con:
            con.execute(_INSERT, (*key.as_row(), text, seconds, _ME, stamp))
            con.execute("DELETE FROM claims WHERE cell=?", (canonical_json(key.as_row()),))

    def claim(self, key: CellKey) -> bool:
        """True once ``key`` is claimed for this process; False when it is stored or claimed by
        a live peer (lease not expired, and not a process of this host that has ended)."""
        cell, now = canonical_json(key.as_row()), time.time()
        with self._write() as con:
            held = con.execute("SELECT owner, expires FROM claims WHERE cell=?", (cell,))
            if any(o != _ME and end > now and _alive(o) for o, end in held.fetchall()):
                return False
            if con.execute("SELECT 1 FROM cells" + _KEY, key.as_row()).fetchone():
                return False
            con.execute("REPLACE INTO claims VALUES (?,?,?)", (cell, _ME, now + self.lease))
            return True

    def count(self, paper: str | None = None, table: str | None = None) -> int:
        """Number of stored cells (of one paper / table)."""
        sql = "SELECT COUNT(*) FROM cells WHERE ifnull(?, paper)=paper AND ifnull(?, tbl)=tbl"
        with self._lock:
            return self._con.execute(sql, (paper, table)).fetchone()[0]


def _alive(owner: str) -> bool:
    """False for a claimer known to have ended: a process of this host that no longer exists."""
    host, pid = owner.rsplit(":", 1)
    try:  # (on Windows, os.kill would end the process)
        return host != socket.gethostname() or os.name != "posix" or not os.kill(int(pid), 0)
    except OSError as exc:  # PermissionError: it exists, another user's
        return not isinstance(exc, ProcessLookupError)


def recover(path: str | Path) -> tuple[Path, int]:
    """Move the damaged store ``path`` (and its ``-wal`` / ``-shm`` files) aside to
    ``<path>.damaged-<time>-<pid>``, copy every cell SQLite can still read from it into a fresh
    store at ``path`` and return ``(the moved file, the number of cells kept)``."""
    path, kept, rowids = Path(path), 0, range(0)
    aside = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}")
    for end in [end for end in ("", "-wal", "-shm") if Path(f"{path}{end}").exists()]:
        os.replace(f"{path}{end}", f"{aside}{end}")
    with ResultsStore(path) as store, store._write() as new, closing(sqlite3.connect(aside)) as old:
        select = f"SELECT {_COLUMNS} FROM cells WHERE rowid=?"
        with suppress(sqlite3.Error):  # no database, or its schema is lost: nothing to keep
            old.execute("PRAGMA writable_schema=ON").execute(select, (0,))  # truncated: the rest
            rowids = range(1, aside.stat().st_size // 16)  # more than the file can hold rows
        for rowid in rowids:  # one at a time: a damaged page loses only its own rows
            with suppress(sqlite3.Error, TypeError, ValueError):  # unreadable or malformed: lost
                row = old.execute(select, (rowid,)).fetchone()
                if row and all(isinstance(json.loads(v), dict) for v in row[5:7]):
                    kept += new.execute(_INSERT, row).rowcount
    return aside, kept
