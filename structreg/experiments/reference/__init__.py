"""The papers' printed numbers: one JSON file per reproduced paper (``<paper>.json``).

The experiment modules (:mod:`structreg.experiments.drlsc`, ``dr``, ``srsvm``, ``srlsc``,
``damr``) print these values beside their own results.  Each file maps a table name
(``"table6"``, ...) to the paper's values as the module uses them, plus a ``"source"`` string
naming the paper; the drlsc, dr, damr and srlsc files also hold protocol data that reads better as
data (data-set mappings with their notes, search grids) and their reports' fixed text
(``"report_text"``: ``str.format`` templates).

>>> load("srlsc")["table4"]["S-RLSC"]
(72.63, 86.58, 95.0, 98.16, 98.68)
"""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

__all__ = ["load"]


def _tuples(obj: Any) -> Any:
    """JSON arrays -> tuples (the reference values are read-only), recursively."""
    if isinstance(obj, dict):
        return {k: _tuples(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return tuple(_tuples(v) for v in obj)
    return obj


def load(paper: str) -> dict[str, Any]:
    """The printed numbers of ``paper`` (``"drlsc"``, ``"dr"``, ...), JSON arrays as tuples."""
    text = files(__name__).joinpath(f"{paper}.json").read_text(encoding="utf-8")
    return _tuples(json.loads(text))
