"""The index page of ``structreg reproduce all``: every table that ran, its cells and the
verdict that the project's status table (``reference/status.md``) gives for it.

The status table is one Markdown table of the papers' headline claims; the first column of
each row names the result files it rests on (e.g. ```damr_3.md```), and the index copies a
row's verdict beside every table whose report has that name.
"""

from __future__ import annotations

import datetime
import platform
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from .report import markdown_table, write_markdown

__all__ = ["IndexEntry", "Verdict", "collect_not_run", "status_verdicts", "write_index"]

INDEX_NAME = "index.md"


@dataclass(frozen=True)
class Verdict:
    """One row of the status table: the claim (with the files it rests on), what the full
    protocol gave, and the verdict."""

    claim: str
    ours: str
    verdict: str

    def files(self) -> set[str]:
        """The result files (``<paper>_<table>.md``, without ``.md``) the row names."""
        return set(re.findall(r"`([\w.-]+)\.md`", f"{self.claim} {self.ours}"))


def status_verdicts(text: str | None = None) -> list[Verdict]:
    """The rows of the status table (``text``: its Markdown; None: the packaged copy)."""
    if text is None:
        text = files("structreg.experiments.reference").joinpath("status.md").read_text("utf-8")
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if not line.startswith("| ") or len(cells) != 3 or set(cells[0]) <= {"-", " "}:
            continue
        if cells == ["claim (paper)", "ours", "verdict"]:
            continue
        rows.append(Verdict(*cells))
    return rows


def verdicts_for(stem: str, verdicts: Sequence[Verdict]) -> list[Verdict]:
    """The status rows that rest on the report ``<stem>.md``."""
    return [v for v in verdicts if stem in v.files()]


def collect_not_run(skipped_by_table: Mapping[str, Mapping[str, str]]) -> list[str]:
    """The list printed once per run instead of once per table: one ``- rows: reason
    (tables)`` line per reason and set of tables, naming the rows (data sets, settings) that
    those tables skipped for that reason."""
    tables_of: dict[tuple[str, str], list[str]] = {}
    for table, skipped in skipped_by_table.items():
        for row, why in skipped.items():
            tables_of.setdefault((row, why), []).append(table)
    rows_of: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for (row, why), tables in tables_of.items():
        rows_of.setdefault((why, tuple(tables)), []).append(row)
    return [
        f"- {', '.join(rows)}: {why} ({', '.join(tables)})"
        for (why, tables), rows in rows_of.items()
    ]


@dataclass(frozen=True)
class IndexEntry:
    """What one table's run gave, for the index."""

    paper: str
    table: str
    title: str
    report: Path
    n_cells: int
    n_computed: int
    skipped: Mapping[str, str]


def write_index(
    out: Path, entries: Sequence[IndexEntry], *, quick: bool, verdicts: Sequence[Verdict]
) -> Path:
    """Write ``out/index.md``: one row per table (cells stored, computed in this run, data sets
    not run, the report's path relative to ``out``) and the status table's verdict rows for it;
    return its path."""
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    protocol = "the reduced protocol (--quick)" if quick else "the full protocol"
    lines = [
        "# structreg reproduce all",
        "",
        f"Every table of the five papers, run with {protocol} on {when} ({platform.node()}, "
        f"Python {platform.python_version()}). One results store per paper "
        "(`<paper>/results.sqlite`): running the same command again resumes.",
        "",
        "Cells: the table's cells in the store (data set x method x split x setting), of which "
        "computed in this run; the rest were reused. Not run: the data sets of the paper that "
        "the table could not run (listed in its report).",
        "",
    ]
    rows = []
    for e in entries:
        rel = e.report.relative_to(out) if e.report.is_relative_to(out) else e.report
        not_run = f"{len(e.skipped)} set(s)" if e.skipped else "-"
        rows.append(
            [e.paper, e.table, e.title, f"{e.n_cells} ({e.n_computed} new)", not_run, f"`{rel}`"]
        )
    lines += markdown_table(["paper", "table", "title", "cells", "not run", "report"], rows)
    lines += ["", "## Verdicts", ""]
    lines += [
        "The status table of the project (its full-protocol runs, committed with the "
        "package) says of each table:",
        "",
    ]
    for e in entries:
        found = verdicts_for(e.report.stem, verdicts)
        if not found:
            lines.append(f"- {e.paper} {e.table}: no headline claim of the paper rests on it.")
        for v in found:
            lines.append(
                f"- {e.paper} {e.table}: {v.claim} -- ours: {v.ours} -- verdict: {v.verdict}"
            )
    if quick:
        lines += [
            "",
            "The verdicts come from the full protocol; this run used the reduced one, so its "
            "numbers can differ from those the verdicts quote.",
        ]
    return write_markdown(out / INDEX_NAME, lines)
