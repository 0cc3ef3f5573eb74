"""Loading the benchmark classification data sets: parsing, missing values, encoding.

The data are gzip-compressed CSV files named ``<name>.csv.gz``: a header row, the feature columns,
and a last column ``label`` holding the class as a string.  Empty cells are missing values.
Where the files are found (the packaged copy, a user's data home, downloads) and how they are
checked is the business of :mod:`structreg.datasets._home`.
"""

from __future__ import annotations

import copy
import csv
import io
import math
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from sklearn.utils import Bunch

from ._home import _entry, locate, read_gzip, verify_csv

__all__ = ["load_dataset"]

_LABEL_COLUMN = "label"
_MISSING_POLICIES = ("impute", "drop", "error")


# --------------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------------
def _read_table(path: Path, expected_sha: str | None) -> tuple[list[str], list[list[str]]]:
    raw = read_gzip(path)
    if expected_sha is not None:
        verify_csv(path, expected_sha, raw)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text: {exc}") from exc
    rows = list(csv.reader(io.StringIO(text, newline="")))
    if not rows:
        raise ValueError(f"{path} is empty")
    header, body = rows[0], rows[1:]
    if header[-1] != _LABEL_COLUMN:
        raise ValueError(f"{path}: the last column must be {_LABEL_COLUMN!r}, got {header[-1]!r}")
    width = len(header)
    for i, row in enumerate(body):
        if len(row) != width:
            raise ValueError(
                f"{path}: data row {i + 1} has {len(row)} cells, the header has {width}"
            )
    return header, body


def _numeric_block(path: Path, names: Sequence[str], cols: Sequence[int], body) -> np.ndarray:
    """Parse the given columns as float64; empty cells become NaN."""
    n = len(body)
    if not cols:
        return np.empty((n, 0), dtype=np.float64)
    contiguous = list(cols) == list(range(len(cols)))
    try:  # fast path: no missing cells, every cell a number
        if contiguous:
            values = [list(map(float, row[: len(cols)])) for row in body]
        else:
            values = [[float(row[j]) for j in cols] for row in body]
        out = np.array(values, dtype=np.float64).reshape(n, len(cols))
    except ValueError:
        out = np.empty((n, len(cols)), dtype=np.float64)
        for i, row in enumerate(body):
            for k, j in enumerate(cols):
                cell = row[j]
                if cell == "":
                    out[i, k] = math.nan
                    continue
                try:
                    out[i, k] = float(cell)
                except ValueError:
                    raise ValueError(
                        f"{path}: column {names[k]!r}, data row {i + 1}: {cell!r} is not a number "
                        "and the column is not listed as nominal in the manifest"
                    ) from None
    bad = ~np.isfinite(out) & ~np.isnan(out)
    if bad.any():
        i, k = np.argwhere(bad)[0]
        raise ValueError(f"{path}: column {names[k]!r}, data row {i + 1} is not finite")
    return out


def _impute_numeric(block: np.ndarray) -> None:
    """Replace NaN by the column mean of the observed values, in place."""
    for k in range(block.shape[1]):
        column = block[:, k]
        miss = np.isnan(column)
        if miss.any():
            observed = column[~miss]
            column[miss] = observed.mean() if observed.size else 0.0


def _most_frequent(values: Sequence[str]) -> str:
    counts = Counter(v for v in values if v != "")
    if not counts:
        return ""
    top = max(counts.values())
    return min(v for v, c in counts.items() if c == top)


def _describe(entry: dict[str, Any]) -> str:
    lines = [
        f"{entry['name']}",
        "=" * len(entry["name"]),
        "",
        f"samples: {entry.get('n_samples', '?')}, features in the file: "
        f"{entry.get('n_features', '?')}, classes: {entry.get('n_classes', '?')}",
        f"class counts: {entry.get('class_counts', '?')}",
    ]
    if entry.get("nominal_columns"):
        lines.append(f"nominal columns (one-hot encoded): {', '.join(entry['nominal_columns'])}")
    if entry.get("coded_categorical_columns"):
        lines.append(
            "integer-coded categorical columns (kept numeric): "
            + ", ".join(entry["coded_categorical_columns"])
        )
    if entry.get("missing_cells"):
        lines.append(
            f"missing cells: {entry['missing_cells']} "
            f"({entry.get('rows_with_missing', '?')} rows): {entry.get('missing_by_column', {})}"
        )
    source = entry.get("source_repo") or entry.get("available_via")
    if source:
        where = f"{source}:{entry['source_path']}" if entry.get("source_path") else source
        if entry.get("source_commit"):
            where += f" @ {entry['source_commit']}"
        lines.append(f"source: {where}")
    lines += ["", "Notes", "-----", entry.get("notes", "")]
    return "\n".join(lines)


def _load_wdbc(entry: dict[str, Any]) -> Bunch:
    from sklearn.datasets import load_breast_cancer

    bc = load_breast_cancer()
    target = np.asarray(bc.target_names, dtype=object)[bc.target]
    return Bunch(
        data=np.asarray(bc.data, dtype=np.float64),
        target=target,
        feature_names=[str(f) for f in bc.feature_names],
        filename=None,
    )


_WITHOUT_FILE = {"wdbc": _load_wdbc}
"""The data sets whose manifest entry has no file, by name, and what serves them (the
packaged manifest's ``wdbc``: scikit-learn); any other entry without a file is not available."""


def _load_without_file(entry: dict[str, Any]) -> Bunch:
    """The set of a manifest entry without a file, or FileNotFoundError saying why not."""
    load = _WITHOUT_FILE.get(entry["name"])
    if load is None:
        raise FileNotFoundError(
            f"dataset {entry['name']!r} is not available: its manifest entry names no file"
        )
    return load(entry)


def _load_csv(entry: dict[str, Any], path: Path, verify: bool, missing: str) -> Bunch:
    header, body = _read_table(path, entry.get("csv_sha256") if verify else None)
    names = header[:-1]
    nominal = set(entry.get("nominal_columns", []))
    unknown = nominal - set(names)
    if unknown:
        raise ValueError(f"{path}: nominal columns {sorted(unknown)} are not in the header")

    if any(row[-1] == "" for row in body):
        raise ValueError(f"{path}: some rows have an empty label")
    missing_rows = [i for i, row in enumerate(body) if "" in row]
    if missing_rows:
        if missing == "error":
            by_column = Counter(
                names[j] for i in missing_rows for j, v in enumerate(body[i]) if v == ""
            )
            raise ValueError(
                f"dataset {entry['name']!r} has {len(missing_rows)} rows with missing values "
                f"(per column: {dict(by_column)}); use missing='impute' or missing='drop'"
            )

    # Categories come from every observed value in the file, so the encoded columns do not
    # depend on the missing-value policy.
    num_idx = [j for j, name in enumerate(names) if name not in nominal]
    categories = {
        j: sorted({row[j] for row in body} - {""})
        for j, name in enumerate(names)
        if name in nominal
    }
    if missing == "drop" and missing_rows:
        dropped = set(missing_rows)
        body = [row for i, row in enumerate(body) if i not in dropped]

    numeric = _numeric_block(path, [names[j] for j in num_idx], num_idx, body)
    if missing == "impute":
        _impute_numeric(numeric)

    target = np.array([row[-1] for row in body], dtype=object)
    if not nominal:
        return Bunch(data=numeric, target=target, feature_names=list(names), filename=str(path))

    blocks: list[np.ndarray] = []
    feature_names: list[str] = []
    num_pos = {j: k for k, j in enumerate(num_idx)}
    for j, name in enumerate(names):
        if j in num_pos:
            blocks.append(numeric[:, num_pos[j]][:, None])
            feature_names.append(name)
            continue
        column = [row[j] for row in body]
        if missing == "impute":
            fill = _most_frequent(column)
            column = [fill if v == "" else v for v in column]
        cats = categories[j]
        index = {c: k for k, c in enumerate(cats)}
        onehot = np.zeros((len(body), len(cats)), dtype=np.float64)
        for i, value in enumerate(column):
            if value != "":
                onehot[i, index[value]] = 1.0
        blocks.append(onehot)
        feature_names.extend(f"{name}={c}" for c in cats)
    data = np.hstack(blocks)
    return Bunch(data=data, target=target, feature_names=feature_names, filename=str(path))


def load_dataset(
    name: str,
    *,
    data_home: str | os.PathLike[str] | None = None,
    return_X_y: bool = False,
    missing: Literal["impute", "drop", "error"] = "impute",
    download_if_missing: bool = True,
    verify: bool = True,
) -> Bunch | tuple[np.ndarray, np.ndarray]:
    """Load a benchmark classification data set.

    Parameters
    ----------
    name : str
        Data set name, one of :func:`list_datasets` (case-insensitive; ``-`` may be used for
        ``_``).  ``"wdbc"`` is served by :func:`sklearn.datasets.load_breast_cancer`, with the
        target mapped to the strings ``"malignant"`` / ``"benign"``; the file-related arguments are
        ignored for it.
    data_home : str or path-like, optional
        A folder of your own: a ``<name>.csv.gz`` found there is read instead of the packaged
        copy, its ``MANIFEST.json`` (if any) adds or replaces entries, and downloads are written
        there.  Default: ``STRUCTREG_DATA`` if set, else the packaged copy and then the user cache
        (see :func:`get_data_home`).
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a :class:`~sklearn.utils.Bunch`.
    missing : {"impute", "drop", "error"}, default="impute"
        What to do with empty (missing) cells; only dermatology, automobile and horse
        have any.

        - ``"impute"``: numeric columns get the mean of their observed values, nominal columns
          their most frequent value (ties broken by the alphabetically first word).  Imputation
          happens before one-hot encoding, so an imputed nominal cell is a regular one-hot row.
        - ``"drop"``: rows with at least one missing cell are removed (this yields the 159-row
          automobile version of the papers, and 358 rows of dermatology).
        - ``"error"``: raise :class:`ValueError` if the data set has missing cells.
    download_if_missing : bool, default=True
        Download a file that is not found, from the entry's ``url`` or from
        ``$STRUCTREG_DATA_URL/<file>`` (with :func:`pooch.retrieve`).  Downloads are always checked
        against the manifest's checksums.  The packaged sets are never downloaded.
    verify : bool, default=True
        Check that the SHA-256 of the uncompressed CSV equals the manifest's ``csv_sha256``.  The
        result is cached per (path, modification time, size) for the rest of the process.

    Returns
    -------
    bunch : sklearn.utils.Bunch
        With fields

        - ``data``: float64 array of shape (n_samples, n_encoded_features).  Numeric columns are
          parsed as numbers; columns in the manifest's ``nominal_columns`` are one-hot encoded in
          place, one column per category word in sorted order, named ``"<column>=<word>"`` (e.g.
          ``"fuel-type=gas"``).  The categories are all words seen in the file, whatever the
          missing policy.  ``coded_categorical_columns`` (integer codes of categorical or ordinal
          attributes, e.g. in cmc or dermatology) stay numeric, as the literature used them.
        - ``target``: object array of the label strings exactly as in the file (usps: the digits
          ``"0"`` .. ``"9"``).
        - ``target_names``: sorted unique labels (string order, so coil20 gives
          ``"1", "10", "11", ...``).
        - ``feature_names``: list of column names matching ``data``.
        - ``DESCR``: a text description built from the manifest; ``notes``: the manifest's notes.
        - ``name``, ``filename`` (None for wdbc), ``nominal_columns``, ``coded_categorical_columns``
          and ``info`` (a copy of the manifest entry).
    (data, target) : tuple of ndarray
        If ``return_X_y`` is True.

    Raises
    ------
    ValueError
        Unknown name, invalid ``missing`` value, missing cells with ``missing="error"``, a
        checksum mismatch (the message names the file and both hashes) or a malformed file (not
        a whole gzip file, not UTF-8 text, ...: the message names the file and the reason).
    FileNotFoundError
        The file is absent and cannot be downloaded; the message says where the loader looked
        and how to provide the data.  Also for a data home manifest's entry without a file
        (other than ``wdbc``, which scikit-learn serves): that set is not available.

    Examples
    --------
    >>> from structreg.datasets import load_dataset
    >>> X, y = load_dataset("wdbc", return_X_y=True)
    >>> X.shape, sorted(set(y))
    ((569, 30), ['benign', 'malignant'])
    """
    if missing not in _MISSING_POLICIES:
        raise ValueError(f"missing must be one of {_MISSING_POLICIES}, got {missing!r}")
    entry = _entry(name, data_home)
    key = entry["name"]
    if entry.get("file"):
        path = locate(entry, data_home, download_if_missing)
        bunch = _load_csv(entry, path, verify, missing)
    else:
        bunch = _load_without_file(entry)
    if return_X_y:
        return bunch.data, bunch.target
    bunch.update(
        target_names=np.unique(bunch.target.astype(str)).astype(object),
        DESCR=_describe(entry),
        notes=entry.get("notes", ""),
        name=key,
        nominal_columns=list(entry.get("nominal_columns", [])),
        coded_categorical_columns=list(entry.get("coded_categorical_columns", [])),
        info=copy.deepcopy(entry),
    )
    return bunch
