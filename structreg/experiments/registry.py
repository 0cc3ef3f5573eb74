"""Which papers and tables ``structreg reproduce`` knows.

Each paper's module holds a ``TABLES`` tuple of :class:`~structreg.experiments.engine.Table`
objects, in the order ``structreg reproduce <paper>`` runs them when no table is named.
"""

from __future__ import annotations

from importlib import import_module

from .engine import Table

__all__ = ["PAPERS", "find_table", "paper_tables"]

# paper id -> (module holding TABLES, one-line description)
PAPERS: dict[str, tuple[str, str]] = {
    "drlsc": ("structreg.experiments.drlsc", "Xue, Chen & Yang 2009, DRLSC (Pattern Recognition)"),
    "dr": ("structreg.experiments.dr", "Zhang et al. 2008, discriminative regularization (AAAI)"),
    "srsvm": ("structreg.experiments.srsvm", "Xue, Chen & Yang 2011, SRSVM (IEEE TNN)"),
    "srlsc": ("structreg.experiments.srlsc", "Fan et al. 2011, S-RLSC (Pattern Recognition)"),
    "damr": ("structreg.experiments.damr", "Wang et al. 2015, DAMR (Neurocomputing)"),
}


def paper_tables(paper: str) -> tuple[Table, ...]:
    """The tables of one paper, in run order."""
    if paper not in PAPERS:
        raise ValueError(f"unknown paper {paper!r}; choose from {sorted(PAPERS)}")
    return tuple(import_module(PAPERS[paper][0]).TABLES)


def _norm(name: str) -> str:
    name = str(name).strip().lower().replace(" ", "")
    for prefix in ("table", "tab.", "fig.", "fig"):
        if name.startswith(prefix) and len(name) > len(prefix):
            name = name[len(prefix) :]
    return name


def find_table(paper: str, name: str) -> Table:
    """The table of ``paper`` called ``name`` (or one of its aliases; case-insensitive)."""
    tables = paper_tables(paper)
    wanted = _norm(name)
    for table in tables:
        if wanted in {_norm(table.name), *(_norm(a) for a in table.aliases)}:
            return table
    available = ", ".join(
        f"{t.name}" + (f" ({'/'.join(t.aliases)})" if t.aliases else "") for t in tables
    )
    raise ValueError(f"paper {paper!r} has no table {name!r}; available: {available}")
