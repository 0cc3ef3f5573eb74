"""``--record PATH``: a benchmark script's rows written into the data file of its table on the
benchmarks page (``docs/benchmarks/<table>.csv``), which the documentation renders.

A data file is a CSV file: the columns the page shows, then hidden columns (their names start
with ``_``): ``_key`` (the row's name, what the pages look a number up by), ``_measured`` (the
date), ``_load`` (the load average during the measurement), ``_command`` (the command that
wrote the row), ``_source`` (``written by --record`` or ``transcribed from the page``) and
``_note``.  Recording replaces the rows of the same ``_key`` (or of the same group, the key's
first word) and keeps the others, so a run of some cases leaves the other cases' rows (with
their own dates) in place; a new row goes after the last row of its group, or at the end.
"""

from __future__ import annotations

import csv
import datetime
import os
import shlex
import sys
from pathlib import Path

HIDDEN = ("_key", "_measured", "_load", "_command", "_source", "_note")
RECORDED = "written by --record"


def command() -> str:
    """The command line that runs this script, without ``--record`` and its value."""
    args, skip = [], False
    for arg in sys.argv[1:]:
        if skip:
            skip = False
            continue
        if arg == "--record":
            skip = True
            continue
        if arg.startswith("--record="):
            continue
        args.append(arg)
    return shlex.join(["python", f"benchmarks/{Path(sys.argv[0]).name}", *args])


def load_range(loads: list[float]) -> str:
    """``"0.7-1.2"``: the smallest and largest of the 1-minute load averages seen."""
    lo, hi = min(loads), max(loads)
    return f"{lo:.1f}" if f"{lo:.1f}" == f"{hi:.1f}" else f"{lo:.1f}-{hi:.1f}"


def current_load() -> float:
    return os.getloadavg()[0]


def read(path: Path) -> tuple[list[str], list[dict]]:
    with Path(path).open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        return list(reader.fieldnames or []), list(reader)


def _group(row: dict) -> str:
    return row.get("_key", "").split(" ")[0]


def record(
    path: str | Path,
    columns: list[str],
    rows: list[dict],
    *,
    load: str = "",
    measured: str | None = None,
    merge_cells: bool = False,
    replace_groups: bool = False,
) -> None:
    """Write ``rows`` (dicts of the shown ``columns`` and ``_key``) into the CSV at ``path``.

    ``merge_cells``: a row whose key is already there keeps the cells this run left empty
    (a run of some of the table's columns, e.g. one of its models); its date and command then
    list the old and the new.  ``replace_groups``: the rows of every group (the key's first
    word, e.g. a case) this run wrote replace all the old rows of that group, where the first
    of them stood (a case's rows come from one run, its ratios from one reference).
    """
    path, count = Path(path), len(rows)
    if measured is None:  # "" leaves the date empty (rows from stored results)
        measured = datetime.date.today().isoformat()
    stamp = {"_measured": measured, "_load": load, "_command": command(), "_source": RECORDED}
    old_columns, old_rows = read(path) if path.exists() else ([], [])
    shown_old = [c for c in old_columns if not c.startswith("_")]
    if old_rows and shown_old != list(columns):
        raise SystemExit(
            f"--record: {path} has the columns {shown_old}, this script writes {list(columns)}"
        )
    out = [dict(r) for r in old_rows]
    if replace_groups:
        groups = {_group(r) for r in rows}
        first = next((i for i, r in enumerate(out) if _group(r) in groups), len(out))
        at = sum(1 for r in out[:first] if _group(r) not in groups)
        out = [r for r in out if _group(r) not in groups]
        out[at:at] = [{**{c: "" for c in (*columns, *HIDDEN)}, **r, **stamp} for r in rows]
        rows = []
    for row in rows:
        new = {**{c: "" for c in (*columns, *HIDDEN)}, **row, **stamp}
        where = next((i for i, r in enumerate(out) if r.get("_key") == row["_key"]), None)
        if where is None:
            same = [i for i, r in enumerate(out) if _group(r) == _group(row)]
            out.insert(same[-1] + 1 if same else len(out), new)
            continue
        if merge_cells:
            old = out[where]
            kept = [c for c in columns if not new[c] and old.get(c)]
            for c in kept:
                new[c] = old[c]
            for c in HIDDEN[1:] if kept else ():  # the row now holds both runs' cells
                if old.get(c) and old[c] != new[c]:
                    new[c] = "; ".join(v for v in (old[c], new[c]) if v)
        out[where] = new
    fields = list(columns) + [h for h in HIDDEN if any(r.get(h) for r in out)]
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(fields)
        for r in out:
            writer.writerow([r.get(c, "") for c in fields])
    print(f"recorded {count} rows in {path}", file=sys.stderr)
