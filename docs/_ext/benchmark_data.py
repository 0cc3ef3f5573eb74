"""Sphinx extension: the measured numbers of the documentation come from data files.

Every table of measured numbers on the benchmarks page, and every measured number the
"Which estimator?" page quotes, is read at build time from one of these sources:

* ``docs/benchmarks/<name>.csv``: one file per table of the benchmarks page, written by the
  benchmark script that measures it (``python benchmarks/<script>.py ... --record
  docs/benchmarks/<name>.csv``; ``docs/benchmarks/README.txt`` lists them).  The columns the
  page shows come first; columns whose names start with ``_`` are not shown: ``_key`` (the
  row's name, by which a page looks a number up), ``_measured``, ``_load``, ``_command``,
  ``_source`` and ``_note``;
* ``defaults_suite``: the defaults suite's accuracy table, ``user_guide/defaults_suite_table.md``
  (printed by ``benchmarks/defaults_suite.py --table-only`` from the published fits), its rows
  named ``"<set> <labels per class>"``, e.g. ``"usps 3"``, its columns by method.

Markup (MyST):

``` ```{benchmark-table} ssl_peers``` ``` (a fenced directive) renders a table with the line
of when and how it was measured and a link to the file.  Options: ``:rows:`` (keys, ``;``
between them; default all), ``:columns:`` (``;`` between them, ``name=shown heading`` renames;
default all shown columns), ``:group:`` (a first-column cell equal to the one above is left
blank), ``:strong:`` (cells shown in bold, ``;`` between them), ``:best:`` (columns among which
each row's largest number is shown in bold) and ``:marks:`` (keep the defaults suite's marks
``(k)``, ``v``, ``x``, ``g``; left out by default).

``{bench}`TABLE:KEYS:COLUMNS``` is the number of a cell, as the table shows it, without its
``± sd`` or anything after it: ``{bench}`ssl_peers:usps10 GFHF:accuracy``` gives ``91.0 %``.
Several keys or columns (``;`` between them) give the range of their cells, ``70.2-81.1 %``.
``{bench-cell}`TABLE:KEY:COLUMN``` is one cell as it stands, and ``{bench-range}`...``` the
range of all the numbers in the cells that carry the unit of their first (``10.3-22.7x`` from
cells ``"22.3x / 20.0x / 21.6x"``, ...).  A key, column or number that is
not there fails the build, so a page cannot quote a number that the data do not hold.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective, SphinxRole

DATA_DIR = "benchmarks"  # docs/benchmarks/<name>.csv
SUITE = "defaults_suite"
SUITE_TABLE = "user_guide/defaults_suite_table.md"
PERCENT = {SUITE, "defaults_suite_labels1", "poisson_class_sizes"}
"""Tables whose cells are percentages without the sign (the defaults suite's format)."""

SUITE_NAMES = {
    "australian": "australian credit",
    "german": "german credit",
    "horse": "horse colic",
    "usps": "USPS digits",
    "coil20": "COIL-20 images",
    "moons_1e4": "two moons",
    "moons_noise50": "two moons + 50 noise dimensions",
}
"""The defaults suite's set names as the benchmarks page shows them (the others as they are)."""

NUMBER = re.compile(
    r"^(?P<prefix>[<>]\s*)?(?P<num>[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?)"
    r"(?:\s*±\s*\d+(?:\.\d+)?)?(?:\s*(?P<unit>%|ms|s|GiB|MiB)(?!\w)|(?P<times>x))?"
)
MARKS = re.compile(r"\s*\(\d+\)|\s+[vxg]+$")
SUITE_LABELS = ("data (n)", "labels per class", "set", "n", "L")


@dataclass
class Table:
    name: str
    path: Path
    columns: list[str]  # the columns shown
    rows: list[dict]

    def row(self, key: str) -> dict:
        for r in self.rows:
            if r["_key"] == key:
                return r
        raise KeyError(f"{self.name}: no row {key!r} (rows: {[r['_key'] for r in self.rows]})")

    def cell(self, key: str, column: str) -> str:
        row = self.row(key)
        if column not in row or column.startswith("_"):
            raise KeyError(f"{self.name}: no column {column!r} (columns: {self.columns})")
        return row[column]


def _markdown_rows(path: Path) -> tuple[list[str], list[dict]]:
    """The first Markdown table of ``path`` whose header begins ``| set | n | L |``."""
    header, rows = None, []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            if header:
                break
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            if cells[:3] == ["set", "n", "L"]:
                header = cells
            continue
        if set(line) <= set("|- "):
            continue
        rows.append(dict(zip(header, cells, strict=True)))
    if header is None:
        raise ValueError(f"{path}: no table beginning '| set | n | L |'")
    return header, rows


def load_table(srcdir: str | Path, name: str) -> Table:
    """The table ``name``: ``defaults_suite`` or ``docs/benchmarks/<name>.csv``."""
    srcdir = Path(srcdir)
    if name == SUITE:
        path = srcdir / SUITE_TABLE
        columns, rows = _markdown_rows(path)
        for r in rows:
            r["_key"] = f"{r['set']} {r['L']}"
            r["data (n)"] = f"{SUITE_NAMES.get(r['set'], r['set'])} ({r['n']})"
            r["labels per class"] = r["L"]
        return Table(name, path, ["data (n)", "labels per class", *columns], rows)
    path = srcdir / DATA_DIR / f"{name}.csv"
    if not path.is_file():
        raise KeyError(f"no data file {DATA_DIR}/{name}.csv")
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        rows = list(reader)
        columns = [c for c in reader.fieldnames or [] if not c.startswith("_")]
    if rows and "_key" not in rows[0]:
        raise ValueError(f"{path}: no _key column")
    return Table(name, path, columns, rows)


def number(table: Table, key: str, column: str) -> tuple[str, float, str]:
    """``(prefix, number as shown, unit)`` of a cell: its leading number."""
    text = table.cell(key, column)
    match = NUMBER.match(text.strip())
    if not match:
        raise ValueError(f"{table.name}: the cell {key!r} / {column!r} holds no number: {text!r}")
    unit = match["unit"] or match["times"] or ("%" if table.name in PERCENT else "")
    return match["prefix"] or "", match["num"], unit


def _with_unit(value: str, unit: str) -> str:
    return f"{value}{unit}" if unit in ("", "x") else f"{value} {unit}"


def quote(table: Table, keys: list[str], columns: list[str]) -> str:
    """The text a page shows for ``{bench}``: one number, or the range of several."""
    found = [number(table, k, c) for k in keys for c in columns]
    units = {u for _, _, u in found}
    if len(units) > 1:
        raise ValueError(f"{table.name}: cells of different units {sorted(units)}")
    unit = units.pop()
    shown = {p + v for p, v, _ in found}
    if len(shown) == 1:
        return _with_unit(shown.pop(), unit)
    if any(p for p, _, _ in found):
        raise ValueError(f"{table.name}: a range of bounds ({sorted(shown)})")
    low = min((float(v), v) for _, v, _ in found)[1]
    high = max((float(v), v) for _, v, _ in found)[1]
    return _with_unit(f"{low}-{high}", unit)


def all_numbers(table: Table, key: str, column: str) -> tuple[list[str], str]:
    """Every number of a cell that carries the unit of its leading number (``"22.3x / 20.0x
    / 21.6x; 22.7x"`` gives the four speed-ups), and that unit."""
    _, _, unit = number(table, key, column)
    if not unit or unit == "%" and table.name in PERCENT:
        raise ValueError(f"{table.name}: bench-range needs numbers with a unit in {key!r}")
    gap = "" if unit == "x" else r"\s*"
    found = re.findall(
        rf"(?<![\d.])(\d+(?:\.\d+)?){gap}{re.escape(unit)}(?![\w])", table.cell(key, column)
    )
    return found, unit


def quote_all(table: Table, keys: list[str], columns: list[str]) -> str:
    """The text a page shows for ``{bench-range}``: the range of every number of the cells."""
    values, units = [], set()
    for k in keys:
        for c in columns:
            found, unit = all_numbers(table, k, c)
            values += found
            units.add(unit)
    if len(units) != 1:
        raise ValueError(f"{table.name}: cells of different units {sorted(units)}")
    low = min((float(v), v) for v in values)[1]
    high = max((float(v), v) for v in values)[1]
    return _with_unit(f"{low}-{high}" if low != high else low, units.pop())


def _split(spec: str) -> list[str]:
    return [s.strip() for s in spec.split(";") if s.strip()]


def _parse_target(text: str) -> tuple[str, list[str], list[str]]:
    parts = text.split(":", 2)
    if len(parts) != 3:
        raise ValueError(f"{text!r}: give TABLE:KEYS:COLUMNS")
    return parts[0].strip(), _split(parts[1]), _split(parts[2])


def resolve(srcdir, text: str, kind: str = "bench") -> tuple[str, Path]:
    """What ``{bench}`text``` (or ``{bench-cell}``, ``{bench-range}``) shows, and the file it
    comes from."""
    name, keys, columns = _parse_target(text)
    table = load_table(srcdir, name)
    if kind == "bench-cell":
        if len(keys) != 1 or len(columns) != 1:
            raise ValueError(f"{text!r}: bench-cell takes one key and one column")
        return table.cell(keys[0], columns[0]), table.path
    if kind == "bench-range":
        return quote_all(table, keys, columns), table.path
    return quote(table, keys, columns), table.path


class BenchRole(SphinxRole):
    kind = "bench"

    def run(self):
        try:
            shown, path = resolve(self.env.srcdir, self.text, self.kind)
        except (KeyError, ValueError) as exc:
            message = self.inliner.reporter.error(f"{self.name}: {exc.args[0]}", line=self.lineno)
            return [self.inliner.problematic(self.rawtext, self.rawtext, message)], [message]
        self.env.note_dependency(str(path))
        return [nodes.Text(shown)], []


class BenchCellRole(BenchRole):
    kind = "bench-cell"


class BenchRangeRole(BenchRole):
    kind = "bench-range"


def _escape(cell: str) -> str:
    return cell.replace("|", "\\|")


def _bold(cell: str) -> str:
    return f"**{cell}**" if cell else cell


def provenance(table: Table, rows: list[dict], docname: str) -> list[str]:
    """The line under a table: when and how its rows were measured, notes, the file."""
    runs: list[tuple[str, str, str]] = []
    for r in rows:
        run = (r.get("_measured", ""), r.get("_load", ""), r.get("_command", ""))
        if run not in runs:
            runs.append(run)
    parts = []
    for measured, load, command in runs:
        text = f"{measured or 'date not recorded'}"
        text += f" (load {load})" if load[:1].isdigit() else f" ({load})" if load else ""
        text += f" with `{command}`" if command else ", not by a script of `benchmarks/`"
        parts.append(text)
    lines = ["Measured " + "; ".join(parts) + "."]
    notes: dict[str, list[str]] = {}
    first = table.columns[0]
    for r in rows:
        if r.get("_note"):
            labels = notes.setdefault(r["_note"], [])
            if r[first] not in labels:
                labels.append(r[first])
    for note, labels in notes.items():
        lines.append(f"{', '.join(labels)}: {note}.")
    data = f"{DATA_DIR}/{table.name}.csv"
    lines.append(f"Data: {{download}}`{table.name}.csv </{data}>`.")
    return [" ".join(lines)]


class BenchmarkTable(SphinxDirective):
    required_arguments = 1
    has_content = False
    option_spec = {
        "rows": directives.unchanged,
        "columns": directives.unchanged,
        "group": directives.flag,
        "strong": directives.unchanged,
        "best": directives.unchanged,
        "marks": directives.flag,
    }

    def run(self):
        name = self.arguments[0]
        try:
            table = load_table(self.env.srcdir, name)
            keys = _split(self.options.get("rows", ""))
            rows = [table.row(k) for k in keys] if keys else table.rows
        except (KeyError, ValueError) as exc:
            raise self.error(f"benchmark-table: {exc.args[0]}") from exc
        self.env.note_dependency(str(table.path))
        shown = []  # (source column, heading)
        for spec in _split(self.options.get("columns", "")) or table.columns:
            column, _, heading = spec.partition("=")
            if column not in table.columns:
                raise self.error(f"benchmark-table {name}: no column {column!r}")
            shown.append((column, heading or column))
        strong = set(_split(self.options.get("strong", "")))
        best = _split(self.options.get("best", ""))
        lines = [
            "| " + " | ".join(h for _, h in shown) + " |",
            "|" + " --- |" * len(shown),
        ]
        above = None
        for r in rows:
            cells = {c: r[c] for c, _ in shown}
            if name == SUITE and "marks" not in self.options:  # the methods' cells
                cells = {c: v if c in SUITE_LABELS else MARKS.sub("", v) for c, v in cells.items()}
            if best:
                values = {c: float(number(table, r["_key"], c)[1]) for c in best}
                top = max(values.values())
                cells.update({c: _bold(cells[c]) for c, v in values.items() if v == top})
            cells = {c: _bold(v) if v in strong else v for c, v in cells.items()}
            first = shown[0][0]
            if "group" in self.options:
                cells[first], above = ("" if r[first] == above else cells[first]), r[first]
            lines.append("| " + " | ".join(_escape(cells[c]) for c, _ in shown) + " |")
        if name == SUITE:
            lines += [
                "",
                "The cells of the defaults suite's table on "
                "{doc}`its page </user_guide/defaults>`.",
            ]
        else:
            lines += [""] + provenance(table, rows, self.env.docname)
        container = nodes.container(classes=["benchmark-table"])
        self.state.nested_parse(lines, self.content_offset, container)
        return [container]


def setup(app):
    app.add_directive("benchmark-table", BenchmarkTable)
    app.add_role("bench", BenchRole())
    app.add_role("bench-cell", BenchCellRole())
    app.add_role("bench-range", BenchRangeRole())
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
