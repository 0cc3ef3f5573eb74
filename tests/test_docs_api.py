"""The API reference (docs/api/*.rst, with the developer guide's internals page) documents every
public name of structreg exactly once, and keeps the internal helpers off the API pages.

Public names: the ``__all__`` of every module of the package whose dotted path has no
component starting with an underscore, except the paper protocol modules (described on the
reproducing pages, not part of the API), plus the names listed in ``EXPLICIT`` for modules that
have no ``__all__``.  One object exported under several names (``structreg.LapRLSC`` is
``structreg.models.LapRLSC``) is one public object and must be documented under one of them.
The command line is documented by a ``.. argparse::`` directive on ``structreg.cli``.

Cheap: reads the reStructuredText sources, needs no Sphinx.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import structreg

DOCS = Path(__file__).resolve().parents[1] / "docs"
API_DIR = DOCS / "api"
# the helpers the estimators share among themselves: documented, but not in the API's sidebar
INTERNALS_PAGE = DOCS / "developer" / "internals.rst"
INTERNAL = {
    "structreg.models.drop_label_work",
    "structreg.models.pm_one_targets",
    "structreg.models.regression.labeled_rows",
    "structreg.structure.unit_rows",
    "structreg.models.sparse_representation.unit_rows",
    "structreg.models.slmm.FixedRhoSOCP",
    "structreg.models.slmm.cluster_cone_terms",
}

# the paper protocols: their TABLES and helpers are the reproducing pages' business
NOT_API = {
    "structreg.cli",  # documented through its parser (.. argparse::)
    "structreg.experiments.damr",
    "structreg.experiments.dr",
    "structreg.experiments.drlsc",
    "structreg.experiments.srlsc",
    "structreg.experiments.srsvm",
    "structreg.experiments.plots",
}
# public modules without __all__: their public names
EXPLICIT = {
    "structreg.kernels": [
        "kernel_matrix",
        "resolve_gamma",
        "select_centers",
        "kernel_points",
        "KernelFeatureMap",
        "LandmarkFeatureMap",
        "EmpiricalKernelMap",
        "KernelExpansion",
        "NystroemApproximationWarning",
    ],
    "structreg.bounds": [
        "generalization_bound",
        "classifier_bound",
        "linear_bound",
        "fitted_bound",
        "plot_bounds",
        "upsilon",
        "upsilon_curve",
        "covering_exponent",
    ],
    "structreg.structure.l1graph": [
        "l1_graph",
        "reconstruction_penalty",
        "SparseReconstructionPenalty",
    ],
    # most of structure.graphs is exported by structreg.structure; these two are not
    "structreg.structure.graphs": ["self_tuning_graph", "resolve_algorithm"],
}


def _public_modules() -> list[str]:
    names = ["structreg"]
    for info in pkgutil.walk_packages(structreg.__path__, "structreg."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return [name for name in names if name not in NOT_API]


def _key(name: str, obj) -> tuple:
    """One key per public object: constants by name (equal ints are one object in CPython)."""
    if isinstance(obj, (int, float, str, bool, bytes, tuple, type(None))):
        return ("constant", name.rsplit(".", 1)[-1], repr(obj))
    return ("object", id(obj))


def public_names() -> dict[tuple, list[str]]:
    """``key -> [full names]`` of every public object."""
    found: dict[tuple, list[str]] = {}
    for modname in _public_modules():
        module = importlib.import_module(modname)
        names = getattr(module, "__all__", None)
        if names is None:
            names = EXPLICIT.get(modname, [])
        elif modname in EXPLICIT:
            raise AssertionError(f"{modname} has __all__; drop it from EXPLICIT")
        for name in names:
            if name.startswith("__"):
                continue  # __version__
            obj = getattr(module, name)
            found.setdefault(_key(name, obj), []).append(f"{modname}.{name}")
    return found


def reference_pages() -> list[Path]:
    return sorted(API_DIR.glob("*.rst")) + [INTERNALS_PAGE]


def documented_names(pages: list[Path] | None = None) -> list[str]:
    """Full names of the ``autosummary`` entries of the reference pages, qualified with the
    ``currentmodule`` in force."""
    entries = []
    for page in reference_pages() if pages is None else pages:
        module = None
        in_summary = False
        for line in page.read_text(encoding="utf-8").splitlines():
            if match := re.match(r"\.\. (?:current)?module:: (\S+)", line):
                module, in_summary = match.group(1), False
            elif line.startswith(".. autosummary::"):
                in_summary = True
            elif in_summary:
                item = line.strip()
                if line and not line[0].isspace():
                    in_summary = False
                elif item and not item.startswith(":"):
                    name = item.lstrip("~")
                    if module and not name.startswith("structreg"):
                        name = f"{module}.{name}"
                    entries.append(name)
    return entries


def _resolve(full: str):
    parts = full.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(full)


def test_every_public_name_is_documented_exactly_once():
    public = public_names()
    counts: dict[tuple, list[str]] = {key: [] for key in public}
    unknown = []
    for full in documented_names():
        key = _key(full, _resolve(full))
        if key in counts:
            counts[key].append(full)
        else:
            unknown.append(full)
    missing = sorted(names[0] for key, names in public.items() if not counts[key])
    twice = sorted(f"{public[key][0]}: {where}" for key, where in counts.items() if len(where) > 1)
    assert not missing, f"public names missing from the reference pages: {missing}"
    assert not twice, f"public names documented more than once: {twice}"
    assert not unknown, f"the reference pages document names that are not public: {unknown}"


def test_internal_helpers_are_on_the_internals_page_not_in_the_api():
    on_api_pages = set(documented_names(sorted(API_DIR.glob("*.rst"))))
    on_internals = set(documented_names([INTERNALS_PAGE]))
    assert not INTERNAL & on_api_pages, f"internal helpers in docs/api: {INTERNAL & on_api_pages}"
    assert INTERNAL <= on_internals, f"not on the internals page: {INTERNAL - on_internals}"


def test_the_command_line_is_documented_once():
    directives = [
        page.name
        for page in reference_pages()
        for block in page.read_text(encoding="utf-8").split(".. argparse::")[1:]
        if re.search(r":module: structreg\.cli\b", block.split("\n\n", 1)[0])
    ]
    assert len(directives) == 1, f"the CLI's '.. argparse::' directive appears in {directives}"


def test_the_checks_see_the_estimators():
    """Guards the parser: the top-level estimators are found where the reference puts them."""
    documented = set(documented_names())
    assert {"structreg.LapRLSC", "structreg.models.fit_path"} <= documented
    assert len(public_names()) > 100
