"""The results store of the reproductions: one embedded SQLite file per output folder, one
row per finished cell, written atomically as it finishes (how a run resumes and why a killed
run loses only the cells in flight: ``docs/reproducing/engine.md``).
"""

from __future__ import annotations

import json
import socket
import sqlite3
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["CellKey", "ResultsStore", "canonical_json"]

_SCHEMA = """
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
)
"""


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces: equal settings give equal strings."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=_jsonable)


def _jsonable(value: Any) -> Any:
    """numpy scalars and arrays (and tuples, via json) become plain JSON values."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable: {value!r}")


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


class ResultsStore:
    """Finished cells in the SQLite file ``path`` (created on first use, its folder too); a
    context manager.  ``timeout``: seconds to wait for a lock held by another process."""

    def __init__(self, path: str | Path, timeout: float = 30.0) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._con = sqlite3.connect(self.path, timeout=timeout, isolation_level=None)
        self._con.execute("PRAGMA journal_mode=WAL")
        self._con.execute("PRAGMA synchronous=NORMAL")
        self._con.execute(_SCHEMA)

    def __enter__(self) -> ResultsStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._con.close()

    def get(self, key: CellKey) -> dict[str, Any] | None:
        """The stored result of ``key``, or None if that cell has not finished."""
        row = self._con.execute(
            "SELECT result FROM cells WHERE paper=? AND tbl=? AND dataset=? AND method=? "
            "AND split=? AND params=?",
            key.as_row(),
        ).fetchone()
        return None if row is None else json.loads(row[0])

    def get_many(self, keys: Iterable[CellKey]) -> dict[CellKey, dict[str, Any]]:
        """The stored results of those ``keys`` that have finished."""
        return {key: result for key in keys if (result := self.get(key)) is not None}

    def put(self, key: CellKey, result: Mapping[str, Any], seconds: float | None = None) -> None:
        """Store one finished cell (atomically; replaces an earlier result of the same key)."""
        text = canonical_json(dict(result))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        with self._con:  # one transaction per cell: committed, or rolled back on an error
            self._con.execute("BEGIN IMMEDIATE")
            self._con.execute(
                "INSERT OR REPLACE INTO cells VALUES (?,?,?,?,?,?,?,?,?,?)",
                (*key.as_row(), text, seconds, socket.gethostname(), stamp),
            )

    def count(self, paper: str | None = None, table: str | None = None) -> int:
        """Number of stored cells (of one paper / table)."""
        given = {k: v for k, v in (("paper", paper), ("tbl", table)) if v is not None}
        sql = "SELECT COUNT(*) FROM cells WHERE 1=1" + "".join(f" AND {k}=?" for k in given)
        return int(self._con.execute(sql, list(given.values())).fetchone()[0])

    def integrity_ok(self) -> bool:
        """SQLite's own integrity check of the file."""
        return self._con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
