"""Protocol helpers shared by the paper modules: seeds, splits, data, options, result grouping.

Each paper keeps its own conventions (separator of the seed parts, default numbers of draws,
grid names); they are parameters here, so every paper's seeds, cells and tables stay the same.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Hashable, Mapping, Sequence
from functools import cache
from typing import Any

import numpy as np

from .engine import Options, Plan
from .store import CellKey

__all__ = [
    "chosen_methods",
    "class_codes",
    "grid_name",
    "load_images",
    "load_lenses",
    "n_draws",
    "per_class_sample",
    "per_class_split",
    "precomputed_svc",
    "precomputed_svc_params",
    "runs_table",
    "seed_from",
    "standardised_halves",
    "uci_rows",
]


def seed_from(*parts: Any, sep: str = ":", bits: int = 32) -> int:
    """A seed from the given parts: the CRC-32 of ``sep.join(map(str, parts))``, cut to ``bits``
    low bits (stable across processes and Python versions; never a global RNG)."""
    return zlib.crc32(sep.join(map(str, parts)).encode()) & ((1 << bits) - 1)


def class_codes(y: Any) -> np.ndarray:
    """Class codes 0, 1, ... of the labels ``y`` (in the sorted order of their strings)."""
    return np.unique(np.asarray(y).astype(str), return_inverse=True)[1].ravel().astype(int)


@cache
def load_images(name: str) -> tuple[np.ndarray, np.ndarray]:
    """An image set's grey levels scaled to [0, 1] and its labels (str); cached per process."""
    from ..datasets import load_dataset

    X, y = load_dataset(name, return_X_y=True)
    return np.asarray(X, dtype=float) / 255.0, np.asarray(y).astype(str)


def per_class_sample(y: np.ndarray, n: int, rng: np.random.Generator) -> list[np.ndarray]:
    """``n`` random indices of every class (a list of arrays, class order)."""
    return [rng.choice(np.flatnonzero(y == c), n, replace=False) for c in np.unique(y)]


def per_class_split(
    y: np.ndarray, n: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``(train, test)``: ``n`` random indices of every class (class order), the rest sorted."""
    train = np.concatenate(per_class_sample(y, n, rng))
    return train, np.setdiff1d(np.arange(len(y)), train)


def n_draws(options: Options, quick: int, full: int) -> int:
    """``options.draws`` when given (and not 0), else ``quick`` under --quick, else ``full``."""
    return int(options.draws or (quick if options.quick else full))


def grid_name(
    options: Options,
    grids: Mapping[str, Any],
    *,
    paper: str,
    key: str = "grid",
    quick: str = "quick",
    full: str = "full",
) -> str:
    """The search grid's name: ``options.extra[key]``, else ``quick`` / ``full``; checked
    against ``grids``."""
    grid = str((options.extra or {}).get(key) or (quick if options.quick else full))
    if grid not in grids:
        raise ValueError(f"{paper}: unknown {key} {grid!r}; choose from {sorted(grids)}")
    return grid


def chosen_methods(options: Options, default: Sequence[str]) -> list[str]:
    """``options.extra["methods"]`` in the given order (else ``default``), each one of
    ``default``."""
    chosen = list((options.extra or {}).get("methods") or default)
    unknown = [m for m in chosen if m not in default]
    if unknown:
        raise ValueError(f"unknown methods {unknown}; choose from {list(default)}")
    return chosen


LENSES_CODES = {
    "age": ("young", "pre-presbyopic", "presbyopic"),
    "spectacle-prescrip": ("myope", "hypermetrope"),
    "astigmatism": ("no", "yes"),
    "tear-prod-rate": ("reduced", "normal"),
}
"""The UCI integer codes (1, 2, ...) of the lenses attributes' words."""


def load_lenses() -> tuple[np.ndarray, np.ndarray]:
    """Lenses with the UCI integer codes of its 4 attributes (the shipped file has the words):
    ``(X float, y str)``."""
    from ..datasets import load_dataset

    bunch = load_dataset("lenses")
    X = np.zeros((bunch.data.shape[0], len(LENSES_CODES)))
    for j, (column, words) in enumerate(LENSES_CODES.items()):
        for code, word in enumerate(words, start=1):
            X[:, j] += code * bunch.data[:, list(bunch.feature_names).index(f"{column}={word}")]
    return X, np.asarray(bunch.target).astype(str)


def precomputed_svc(n_classes: int) -> Any:
    """The papers' SVM baseline on a precomputed Gram matrix: scikit-learn's
    ``SVC(kernel="precomputed")`` for two classes, one such machine per class (one-vs-rest)
    for more.  Its parameters: :func:`precomputed_svc_params`."""
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.svm import SVC

    svc = SVC(kernel="precomputed")
    return svc if n_classes == 2 else OneVsRestClassifier(svc)


def precomputed_svc_params(n_classes: int, **params: Any) -> dict[str, Any]:
    """``params`` (e.g. ``C``) addressed to the SVC(s) of :func:`precomputed_svc` (a grid
    point of :func:`~structreg.models.decision_path`)."""
    if n_classes == 2:
        return dict(params)
    return {f"estimator__{name}": value for name, value in params.items()}


def standardised_halves(
    X: np.ndarray, y: np.ndarray, random_state: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A stratified half/half split (scikit-learn's ``train_test_split``), features
    standardised with the training half's mean and deviation: ``(Xtr, Xte, ytr, yte)``."""
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    train, test = train_test_split(
        np.arange(len(y)), test_size=0.5, stratify=y, random_state=random_state
    )
    scaler = StandardScaler().fit(X[train])
    return scaler.transform(X[train]), scaler.transform(X[test]), y[train], y[test]


def runs_table(
    plan: Plan,
    results: Mapping[CellKey, Any],
    row: Callable[[CellKey], Hashable] = lambda k: k.dataset,
    col: Callable[[CellKey], Hashable] = lambda k: k.method,
    order: Sequence[Hashable] = (),
    field: str | None = None,
) -> dict[Hashable, dict[Hashable, list[Any]]]:
    """``{row(key): {col(key): [results in split order]}}`` of the plan's cells that have a
    result (``field``: each result's ``result[field]``): rows in ``order`` first (empty if
    they have no result), then in plan order."""
    runs: dict[tuple[Hashable, Hashable], list[tuple[int, Any]]] = {}
    for k in (cell.key for cell in plan.cells if cell.key in results):
        runs.setdefault((row(k), col(k)), []).append((k.split, results[k]))
    out: dict[Hashable, dict[Hashable, list[Any]]] = {r: {} for r in order}
    for (r, c), pairs in runs.items():
        ordered = [res for _, res in sorted(pairs, key=lambda t: t[0])]
        out.setdefault(r, {})[c] = ordered if field is None else [x[field] for x in ordered]
    return out


def uci_rows(
    options: Options,
    sets: Mapping[str, tuple[str | None, str]],
    load: Callable[[str], Any],
    quick_reason: Callable[[str, Any], str | None],
    aliases: Mapping[str, Sequence[str]] | None = None,
) -> tuple[dict[str, Any], dict[str, str], list[str]]:
    """The rows of a table of data sets that a plan runs.

    ``sets``: row -> (data set name, or None with the reason it is missing); ``load(row)``: the
    row's data; ``quick_reason(row, data)``: why ``--quick`` leaves the row out (None: it runs).
    ``options.extra["datasets"]`` chooses rows by name or alias (any case; ``aliases``: row ->
    other names, by default the data set's name); then ``--quick`` leaves none out.  Returns
    ``({row: data}, {row: reason skipped}, notes)``, rows in the order of ``sets``; the notes
    name the rows not chosen.
    """
    if aliases is None:
        aliases = {row: (source or "",) for row, (source, _) in sets.items()}
    wanted = {str(w).lower() for w in (options.extra or {}).get("datasets") or ()}
    rows = [r for r in sets if not wanted or {r.lower(), *aliases[r]} & wanted]
    left_out = [r for r in sets if r not in rows]
    notes = [f"Not selected (--datasets): {', '.join(left_out)}."] if left_out else []
    used: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    for row in rows:
        if sets[row][0] is None:
            skipped[row] = sets[row][1]
            continue
        try:
            data = load(row)
        except (OSError, ValueError) as exc:
            skipped[row] = f"could not be loaded ({exc.__class__.__name__}: {exc})"
            continue
        reason = quick_reason(row, data) if options.quick and not wanted else None
        if reason is None:
            used[row] = data
        else:
            skipped[row] = reason
    return used, skipped, notes
