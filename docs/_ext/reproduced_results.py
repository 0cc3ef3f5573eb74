"""Sphinx extension: each paper's reproducing page shows the results of the full protocol.

``structreg reproduce PAPER --out docs/reproducing/results/PAPER`` writes Markdown tables
(``PAPER_T.md``), CSV files and PNG figures.  When Sphinx reads ``reproducing/PAPER.md`` this
extension appends a section "Results of the full protocol" with every ``*.md`` table of that
folder (headings demoted under the section) and every ``*.png`` figure, found at build time:
nothing is copied into the page's source; a ``MISSING.txt`` there (the tables whose full run
has not finished) is shown as a warning.  A missing or empty folder gives a note that the
protocol has not yet been run in full, and a table written by a reduced run (``--quick``, or
one that says it is partial) carries a warning.  The pages are re-read on every build, so new
results show up without a clean build.
"""

from __future__ import annotations

import re
from pathlib import Path

PAPERS = ("damr", "dr", "drlsc", "srlsc", "srsvm")
RESULTS = "results"  # relative to docs/reproducing/
MISSING = "MISSING.txt"  # in a paper's folder: the tables not yet run in full, and why
# a table from a reduced or unfinished run says so in its text
PARTIAL = re.compile(r"--quick|\bquick\b|\bpartial\b|\bnot finished\b", re.IGNORECASE)


def _demote(markdown: str, levels: int = 2) -> str:
    """Headings of an included table moved ``levels`` below its own level (``#`` -> ``###``)."""
    out = []
    for line in markdown.splitlines():
        if re.match(r"#{1,6} ", line):
            line = "#" * min(6, line.index(" ") + levels) + line[line.index(" ") :]
        out.append(line)
    return "\n".join(out)


def results_markdown(paper: str, reproducing_dir: Path) -> str:
    """The Markdown appended to ``reproducing/<paper>.md``."""
    folder = reproducing_dir / RESULTS / paper
    command = f"structreg reproduce {paper} --n-jobs 2 --out docs/reproducing/results/{paper}"
    parts = ["", "", "## Results of the full protocol", ""]
    tables = sorted(folder.glob("*.md")) if folder.is_dir() else []
    figures = sorted(folder.glob("*.png")) if folder.is_dir() else []
    if not tables and not figures:
        parts += [
            "```{note}",
            f"**Not yet run in full.** The folder `docs/reproducing/results/{paper}/` holds no",
            "results of the full protocol yet; they are written by",
            f"`{command}` and shown here when the site is built.",
            "```",
        ]
        return "\n".join(parts) + "\n"
    parts += [
        f"Written by `{command}` (files in `docs/reproducing/results/{paper}/`); the tables",
        "are included as the command wrote them.",
        "",
    ]
    missing = folder / MISSING
    if missing.is_file():  # tables whose full run has not finished: listed, with why
        parts += ["```{warning}", "**Partial:** " + missing.read_text(encoding="utf-8").strip()]
        parts += ["```", ""]
    for table in tables:
        text = table.read_text(encoding="utf-8")
        if PARTIAL.search(text):
            parts += [
                "```{warning}",
                f"**Not yet run in full:** `{table.name}` comes from a reduced or partial run",
                "(it says so below); its numbers are not the full protocol's.",
                "```",
                "",
            ]
        parts += [_demote(text), ""]
    if figures:
        parts += ["### Figures", ""]
        for png in figures:
            parts += [f"```{{figure}} {RESULTS}/{paper}/{png.name}", ":width: 90%", "", png.stem]
            parts += ["```", ""]
    return "\n".join(parts) + "\n"


def _source_read(app, docname: str, source: list[str]) -> None:
    folder, _, paper = docname.partition("/")
    if folder == "reproducing" and paper in PAPERS:
        source[0] += results_markdown(paper, Path(app.srcdir) / "reproducing")


def _always_reread(app, env, added, changed, removed) -> list[str]:
    return [f"reproducing/{paper}" for paper in PAPERS if f"reproducing/{paper}" in env.found_docs]


def setup(app):
    app.connect("source-read", _source_read)
    app.connect("env-get-outdated", _always_reread)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
