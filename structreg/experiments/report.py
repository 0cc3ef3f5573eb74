"""Tables of reproduced results beside the papers' numbers (Markdown and CSV); what a
cell shows and how the significance mark is computed: ``docs/reproducing/engine.md``.
"""

from __future__ import annotations

import csv
import math
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

__all__ = [
    "comparison_table",
    "cost_line",
    "format_params",
    "markdown_table",
    "most_frequent",
    "pyplot",
    "save_figure",
    "significance_mark",
    "skipped_lines",
    "skipped_rows",
    "write_csv",
    "write_markdown",
]


def significance_mark(
    reference: Sequence[float], other: Sequence[float], alpha: float = 0.05
) -> str:
    """``"*"`` if the paired t-test rejects equal means of the two methods at level ``alpha``."""
    a, b = np.asarray(reference, dtype=float), np.asarray(other, dtype=float)
    if a.shape != b.shape or a.size < 2 or np.allclose(a, b):
        return ""
    diff = a - b
    constant = np.allclose(diff, diff[0])  # a constant non-zero difference: t is infinite
    return "*" if constant or stats.ttest_rel(a, b).pvalue < alpha else ""


def _fmt(value: float | None, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}f}"


def comparison_table(
    out: str | Path,
    stem: str,
    *,
    title: str,
    values: Mapping[str, Mapping[str, Sequence[float]]],
    methods: Sequence[str],
    paper: Mapping[str, Mapping[str, float | None]] | None = None,
    reference: str | None = None,
    skipped: Mapping[str, str] | None = None,
    intro: Sequence[str] = (),
    notes: Sequence[str] = (),
    row_label: str = "data set",
) -> list[Path]:
    """Write ``<stem>.md`` and ``<stem>.csv``; return their paths.

    Parameters
    ----------
    out, stem, title : folder, file name without extension, Markdown heading
    values : ``values[row][method]`` -- the reproduced numbers, one per split (%)
    methods : column order (methods missing from a row are shown as ``-``)
    paper : ``paper[row][method]`` -- the paper's number, or None where it has none
    reference : the proposed method that the others are t-tested against
    skipped : rows that could not be run, with the reason
    intro, notes : Markdown lines before and after the table
    row_label : heading of the first column
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paper = paper or {}
    lines = [f"# {title}", "", *intro, *([""] if intro else [])]
    lines += [
        "Cells: reproduced mean ± std over the splits, then (paper's value, difference);"
        + (f" `*`: differs from {reference} at 5 % (paired t-test)." if reference else ""),
        "",
    ]
    table, rows = [], []
    for row, by_method in values.items():
        cells = []
        for method in methods:
            v = np.asarray(by_method.get(method, []), dtype=float)
            ref = paper.get(row, {}).get(method)
            if v.size == 0:
                cells.append("-" if ref is None else f"- ({_fmt(ref)})")
                continue
            mean, std = float(v.mean()), float(v.std())
            tested = reference and method != reference and reference in by_method
            mark = significance_mark(by_method[reference], v) if tested else ""
            diff = None if ref is None else mean - ref
            paper_part = "" if ref is None else f" ({ref:.2f}, {diff:+.2f})"
            cells.append(f"{mean:.2f} ± {std:.2f}{paper_part}{mark}")
            rows.append([row, method, v.size, _fmt(mean), _fmt(std), _fmt(ref), _fmt(diff), mark])
        table.append([row, *cells])
    lines += markdown_table([row_label, *methods], table)
    lines += skipped_lines(skipped or {})
    rows += skipped_rows(skipped or {}, blanks=4)
    if notes:
        lines += ["", *notes]
    header = [row_label.replace(" ", "_"), "method", "n_splits", "mean", "std", "paper"]
    return [
        write_markdown(out / f"{stem}.md", lines),
        write_csv(out / f"{stem}.csv", [*header, "difference", "mark"], rows),
    ]


def markdown_table(header: Sequence[Any], rows: Iterable[Sequence[Any]]) -> list[str]:
    """The lines of a Markdown table: the header, the rule, one line per row (``str`` cells)."""
    return [
        "| " + " | ".join(map(str, header)) + " |",
        "| " + " | ".join("---" for _ in header) + " |",
        *("| " + " | ".join(map(str, row)) + " |" for row in rows),
    ]


def skipped_lines(skipped: Mapping[str, str]) -> list[str]:
    """``Not run:`` and one ``- row: reason`` line per skipped row (nothing when none)."""
    if not skipped:
        return []
    return ["", "Not run:", "", *(f"- {row}: {why}" for row, why in skipped.items())]


def skipped_rows(skipped: Mapping[str, str], blanks: int) -> list[list[Any]]:
    """CSV rows of the rows not run: the name, no method, 0 splits, ``blanks`` empty cells and
    ``skipped: <reason>`` (``blanks=4``: :func:`comparison_table`'s form)."""
    return [[row, "", 0, *[""] * blanks, f"skipped: {why}"] for row, why in skipped.items()]


def format_params(
    params: Mapping[str, Any],
    *,
    sep: str = ", ",
    skip: Sequence[str] = (),
    fmt: Callable[[str, Any], str] | None = None,
) -> str:
    """``k=v`` pairs (floats as ``:g``) joined by ``sep``; ``fmt(k, v)`` overrides the form."""
    fmt = fmt or (lambda k, v: f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}")
    return sep.join(fmt(k, v) for k, v in params.items() if k not in skip)


def most_frequent(items: Iterable[Hashable]) -> tuple[Any, int]:
    """The most frequent item and its count (ties: the one seen first)."""
    return Counter(items).most_common(1)[0]


def cost_line(
    runs: Iterable[tuple[str, Mapping[str, Any]]],
    *,
    label: str = "Cost",
    where: str = "one core each",
    per_group: bool = True,
) -> str:
    """``<label>: N cells, S s of cell time in all (<where>[; group s, ...]).`` from
    ``(group, result)`` pairs whose results hold ``"seconds"``."""
    seconds: dict[str, float] = {}
    n = 0
    for group, result in runs:
        seconds[group] = seconds.get(group, 0.0) + result.get("seconds", 0.0)
        n += 1
    shown = ", ".join(f"{g} {s:.0f} s" for g, s in seconds.items())
    detail = f"{where}; {shown}" if per_group and shown else where
    return f"{label}: {n} cells, {sum(seconds.values()):.0f} s of cell time in all ({detail})."


def write_csv(path: str | Path, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Path:
    """Write a CSV file: the header, then the rows."""
    path = Path(path)
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def write_markdown(path: str | Path, lines: Sequence[str]) -> Path:
    """Write Markdown lines to ``path`` (one trailing newline)."""
    path = Path(path)
    path.write_text("\n".join(lines).rstrip("\n") + "\n")
    return path


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the non-interactive Agg backend (figures go to files)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, path: Path, dpi: int = 100) -> Path:
    """Write a figure to ``path`` (tight layout) and close it."""
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    pyplot().close(fig)
    return path
