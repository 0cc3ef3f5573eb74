"""Tables of reproduced results beside the papers' numbers (Markdown and CSV).

:func:`comparison_table` writes one accuracy table: rows are data sets (or settings), columns
methods; each cell is the reproduced mean and standard deviation over the splits, the paper's
number, the difference, and the significance mark.  The mark follows the papers: ``*`` when a
method's accuracies differ from the proposed (reference) method's at the 5 % level.  The
papers compare the 10 runs with a t-test (000's threshold 1.7341 is the one-sided 5 % point
with 18 degrees of freedom); here the runs of the two methods share their splits, so the test
is the paired t-test (``scipy.stats.ttest_rel``), two-sided at 5 %.  No mark is printed when
fewer than two splits exist or the two methods give identical accuracies on every split.
Data sets that could not be run are listed with the reason, never dropped.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

__all__ = ["comparison_table", "significance_mark", "write_markdown"]


def significance_mark(
    reference: Sequence[float], other: Sequence[float], alpha: float = 0.05
) -> str:
    """``"*"`` if the paired t-test rejects equal means of the two methods at level ``alpha``."""
    a, b = np.asarray(reference, dtype=float), np.asarray(other, dtype=float)
    if a.shape != b.shape or a.size < 2 or np.allclose(a, b):
        return ""
    diff = a - b
    if np.allclose(diff, diff[0]):  # constant non-zero difference: t is infinite
        return "*"
    return "*" if stats.ttest_rel(a, b).pvalue < alpha else ""


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
    out : folder
    stem : file name without extension
    title : the Markdown heading
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
    lines = [f"# {title}", "", *intro]
    if intro:
        lines.append("")
    lines += [
        "Cells: reproduced mean ± std over the splits, then (paper's value, difference);"
        + (f" `*`: differs from {reference} at 5 % (paired t-test)." if reference else ""),
        "",
        f"| {row_label} | " + " | ".join(methods) + " |",
        "| --- | " + " | ".join("---" for _ in methods) + " |",
    ]
    rows = []
    for row, by_method in values.items():
        cells = []
        for method in methods:
            v = np.asarray(by_method.get(method, []), dtype=float)
            ref = paper.get(row, {}).get(method)
            if v.size == 0:
                cells.append("-" if ref is None else f"- ({_fmt(ref)})")
                continue
            mean, std = float(v.mean()), float(v.std())
            mark = ""
            if reference and method != reference and reference in by_method:
                mark = significance_mark(by_method[reference], v)
            diff = None if ref is None else mean - ref
            shown = f"{mean:.2f} ± {std:.2f}"
            if ref is not None:
                shown += f" ({ref:.2f}, {diff:+.2f})"
            cells.append(shown + mark)
            rows.append([row, method, v.size, _fmt(mean), _fmt(std), _fmt(ref), _fmt(diff), mark])
        lines.append(f"| {row} | " + " | ".join(cells) + " |")
    if skipped:
        lines += ["", "Not run:", ""]
        lines += [f"- {row}: {reason}" for row, reason in skipped.items()]
        rows += [
            [row, "", 0, "", "", "", "", f"skipped: {reason}"] for row, reason in skipped.items()
        ]
    if notes:
        lines += ["", *notes]
    md = out / f"{stem}.md"
    write_markdown(md, lines)
    path_csv = out / f"{stem}.csv"
    with open(path_csv, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(
            [
                row_label.replace(" ", "_"),
                "method",
                "n_splits",
                "mean",
                "std",
                "paper",
                "difference",
                "mark",
            ]
        )
        writer.writerows(rows)
    return [md, path_csv]


def write_markdown(path: str | Path, lines: Sequence[str]) -> Path:
    """Write Markdown lines to ``path`` (one trailing newline)."""
    path = Path(path)
    path.write_text("\n".join(lines).rstrip("\n") + "\n")
    return path


# -- generic output helpers (appended for issue 18: srsvm / srlsc use them) -------------------
def write_csv(path: str | Path, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Path:
    """Write ``path`` as CSV: the ``header`` row, then ``rows``."""
    path = Path(path)
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the non-interactive Agg backend (figures go to files)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
