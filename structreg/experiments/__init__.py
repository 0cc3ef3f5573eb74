"""Experiment protocols of the papers (reproductions) and the engine that runs them.

One module per paper (``drlsc``, ``dr``, ``srsvm``, ``srlsc``, ``damr``) holds its
``TABLES``; :mod:`.engine` plans, runs (resumably, in parallel) and reports them;
:mod:`.store` is the SQLite results store; :mod:`.report` writes the comparison tables;
:mod:`.registry` maps the command line's paper and table names to them.
"""

from .engine import Cell, Options, Plan, Table, TableRun, run_cells, run_table
from .registry import PAPERS, find_table, paper_tables
from .report import comparison_table, significance_mark
from .store import CellKey, ResultsStore

__all__ = [
    "PAPERS",
    "Cell",
    "CellKey",
    "Options",
    "Plan",
    "ResultsStore",
    "Table",
    "TableRun",
    "comparison_table",
    "find_table",
    "paper_tables",
    "run_cells",
    "run_table",
    "significance_mark",
]
