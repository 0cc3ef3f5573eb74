"""Loaders for the benchmark classification data sets used by the papers.

Every data set is described by an entry of the ``MANIFEST.json`` file shipped inside this
package (sizes, class counts, nominal columns, provenance, notes and the SHA-256 of the
uncompressed CSV).  The data themselves are gzip-compressed CSV files named
``<name>.csv.gz``: a header row, the feature columns, and a last column ``label`` holding the
class as a string.  Empty cells are missing values.

Where the files are looked for (the *data home*)
------------------------------------------------
The first rule that applies decides:

1. the ``data_home`` argument of :func:`load_dataset` / :func:`get_data_home`;
2. the environment variable ``STRUCTREG_DATA`` (a folder holding ``<name>.csv.gz`` files);
3. a team copy: starting at the current working directory and going up one parent at a time,
   the first folder ``<ancestor>/shared/datasets`` that contains a ``MANIFEST.json``.  Seen from a
   checkout at ``/work/main`` this finds ``/work/shared/datasets`` (the ``../shared/datasets`` of
   the checkout); this is how the test-suite and CI find the data;
4. the user cache folder ``$XDG_CACHE_HOME/structreg/datasets`` (``~/.cache/structreg/datasets``
   when ``XDG_CACHE_HOME`` is unset).

Rules 1 and 2 are exclusive: the named folder is the only place searched, and downloads are written
into it.  With rule 3 a file that is absent from the team copy is also looked for in the user cache,
and downloads go to the user cache (the team copy is never written to).

Downloads
---------
A file that is not found is downloaded when ``download_if_missing=True`` and the environment
variable ``STRUCTREG_DATA_URL`` is set: the loader fetches ``$STRUCTREG_DATA_URL/<name>.csv.gz``
(any URL scheme :func:`urllib.request.urlopen` understands, ``file://`` included), writes it to a
temporary file next to its destination, checks its SHA-256 against the manifest and only then moves
it into place with :func:`os.replace`.  A corrupt download is deleted and reported.  There is no
default public mirror yet; without ``STRUCTREG_DATA_URL`` a missing file raises
:class:`FileNotFoundError` saying where the loader looked and how to provide the data.

Checksums
---------
With ``verify=True`` (the default) the SHA-256 of the *uncompressed* CSV must equal the manifest's
``csv_sha256``.  A successful check is remembered for the life of the process, keyed by the file's
path, modification time and size, so repeated loads do not hash the file again.
"""

from __future__ import annotations

import copy
import csv
import gzip
import hashlib
import io
import json
import math
import os
import tempfile
import urllib.request
from collections import Counter
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import numpy as np
from sklearn.utils import Bunch

__all__ = [
    "DATA_ENV_VAR",
    "URL_ENV_VAR",
    "dataset_info",
    "get_data_home",
    "list_datasets",
    "load_dataset",
]

DATA_ENV_VAR = "STRUCTREG_DATA"
URL_ENV_VAR = "STRUCTREG_DATA_URL"
_LABEL_COLUMN = "label"
_MISSING_POLICIES = ("impute", "drop", "error")
_DOWNLOAD_TIMEOUT_S = 60.0

# (resolved path, st_mtime_ns, st_size) -> sha256 that matched the manifest
_VERIFIED: dict[tuple[str, int, int], str] = {}
_MANIFEST: dict[str, dict[str, Any]] | None = None


# --------------------------------------------------------------------------------------------
# Manifest
# --------------------------------------------------------------------------------------------
def _manifest() -> dict[str, dict[str, Any]]:
    """Return the packaged manifest as a dict keyed by data set name (read once)."""
    global _MANIFEST
    if _MANIFEST is None:
        text = resources.files(__package__).joinpath("MANIFEST.json").read_text(encoding="utf-8")
        entries = json.loads(text)
        _MANIFEST = {entry["name"]: entry for entry in entries}
    return _MANIFEST


def _resolve_name(name: str) -> str:
    """Normalise ``name`` (case, ``-`` for ``_``) and check that the manifest knows it."""
    if not isinstance(name, str):
        raise TypeError(f"dataset name must be a string, got {type(name).__name__}")
    key = name.strip().lower().replace("-", "_")
    manifest = _manifest()
    if key not in manifest:
        known = ", ".join(sorted(manifest))
        raise ValueError(f"unknown dataset {name!r}; known datasets: {known}")
    return key


def list_datasets() -> list[str]:
    """Names of all data sets described by the packaged manifest.

    Returns
    -------
    names : list of str
        Sorted data set names, usable with :func:`load_dataset` and :func:`dataset_info`.

    Examples
    --------
    >>> from structreg.datasets import list_datasets
    >>> "iris" in list_datasets()
    True
    """
    return sorted(_manifest())


def dataset_info(name: str) -> dict[str, Any]:
    """Manifest entry of one data set.

    Parameters
    ----------
    name : str
        Data set name, as listed by :func:`list_datasets` (case-insensitive; ``-`` may be used
        for ``_``).

    Returns
    -------
    info : dict
        A copy of the manifest entry: ``n_samples``, ``n_features`` (columns in the file, before any
        one-hot encoding), ``n_classes``, ``class_counts``, ``nominal_columns``,
        ``coded_categorical_columns``, ``missing_cells``, ``rows_with_missing``, ``notes``,
        provenance fields and ``csv_sha256``.

    Raises
    ------
    ValueError
        If the name is unknown; the message lists the known names.

    Examples
    --------
    >>> from structreg.datasets import dataset_info
    >>> dataset_info("iris")["n_samples"]
    150
    """
    return copy.deepcopy(_manifest()[_resolve_name(name)])


# --------------------------------------------------------------------------------------------
# Data home
# --------------------------------------------------------------------------------------------
def _user_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join("~", ".cache")
    return Path(base).expanduser() / "structreg" / "datasets"


def _find_shared_dir(start: Path | None = None) -> Path | None:
    """First ``<ancestor>/shared/datasets`` holding a MANIFEST.json, walking up from ``start``."""
    try:
        here = (start or Path.cwd()).resolve()
    except OSError:  # the working directory may have been removed
        return None
    for folder in (here, *here.parents):
        candidate = folder / "shared" / "datasets"
        if (candidate / "MANIFEST.json").is_file():
            return candidate
    return None


def _search_dirs(data_home: str | os.PathLike[str] | None) -> tuple[list[Path], Path]:
    """Folders to read from (in order) and the folder downloads are written to."""
    if data_home is not None:
        home = Path(data_home).expanduser()
        return [home], home
    env = os.environ.get(DATA_ENV_VAR)
    if env:
        home = Path(env).expanduser()
        return [home], home
    cache = _user_cache_dir()
    shared = _find_shared_dir()
    if shared is not None:
        return [shared, cache], cache
    return [cache], cache


def get_data_home(data_home: str | os.PathLike[str] | None = None) -> Path:
    """Folder the data set files are read from.

    The order of the rules is given in the module documentation: the ``data_home`` argument, the
    ``STRUCTREG_DATA`` environment variable, a ``shared/datasets`` folder found above the current
    working directory, and finally the user cache ``$XDG_CACHE_HOME/structreg/datasets``
    (``~/.cache/structreg/datasets``).  Downloads are written here, except when the folder is a
    discovered team copy (rule 3): then they go to the user cache.  The folder is not created.

    Parameters
    ----------
    data_home : str or path-like, optional
        Explicit folder; returned as is (with ``~`` expanded).

    Returns
    -------
    path : pathlib.Path
        The folder.

    Examples
    --------
    >>> from structreg.datasets import get_data_home
    >>> str(get_data_home("/tmp/my_data"))
    '/tmp/my_data'
    """
    return _search_dirs(data_home)[0][0]


# --------------------------------------------------------------------------------------------
# Files, checksums, downloads
# --------------------------------------------------------------------------------------------
def _sha256_of_gzip(path: Path) -> str:
    digest = hashlib.sha256()
    with gzip.open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _cache_key(path: Path) -> tuple[str, int, int]:
    stat = path.stat()
    return (str(path.resolve()), stat.st_mtime_ns, stat.st_size)


def _check_sha256(what: str | Path, expected: str, actual: str) -> None:
    if actual != expected:
        raise ValueError(
            f"checksum mismatch for {what}: the SHA-256 of the uncompressed CSV is {actual}, "
            f"but the manifest expects {expected}. The file is corrupt or a different version; "
            "delete it and provide a correct copy."
        )


def _verify_file(path: Path, expected: str, raw: bytes | None = None) -> None:
    """Check the SHA-256 of the uncompressed content of ``path`` (cached per path/mtime/size)."""
    key = _cache_key(path)
    if _VERIFIED.get(key) == expected:
        return
    actual = hashlib.sha256(raw).hexdigest() if raw is not None else _sha256_of_gzip(path)
    _check_sha256(path, expected, actual)
    _VERIFIED[key] = expected


def _download(url: str, target: Path, expected: str | None) -> Path:
    """Fetch ``url`` into ``target`` atomically, checking the SHA-256 before the final move."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            try:
                with urllib.request.urlopen(url, timeout=_DOWNLOAD_TIMEOUT_S) as response:
                    for chunk in iter(lambda: response.read(1 << 20), b""):
                        out.write(chunk)
            except OSError as exc:  # URLError and HTTPError are OSError subclasses
                raise OSError(f"could not download {url}: {exc}") from exc
        if expected is not None:
            try:
                actual = _sha256_of_gzip(tmp)
            except (OSError, EOFError) as exc:  # not a gzip file, or truncated
                raise ValueError(f"downloaded file {url} is not a valid gzip file: {exc}") from exc
            _check_sha256(f"the download {url}", expected, actual)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if expected is not None:
        _VERIFIED[_cache_key(target)] = expected
    return target


def _locate(
    entry: dict[str, Any], data_home: str | os.PathLike[str] | None, download_if_missing: bool
) -> Path:
    """Path of the data set file, downloading it when allowed and needed."""
    filename = entry["file"]
    search, write_dir = _search_dirs(data_home)
    for folder in search:
        path = folder / filename
        if path.is_file():
            return path
    base_url = os.environ.get(URL_ENV_VAR, "").strip()
    looked = ", ".join(str(folder) for folder in search)
    how = (
        f"Put {filename} into one of these folders, pass data_home=..., or set the environment "
        f"variable {DATA_ENV_VAR} to a folder that holds it"
    )
    if not download_if_missing:
        raise FileNotFoundError(
            f"{filename} not found (looked in: {looked}) and download_if_missing=False. {how}."
        )
    if not base_url:
        raise FileNotFoundError(
            f"{filename} not found (looked in: {looked}) and no download source is configured. "
            f"{how}, or set {URL_ENV_VAR} to a base URL serving <name>.csv.gz files "
            "(there is no default public mirror)."
        )
    url = base_url.rstrip("/") + "/" + filename
    return _download(url, write_dir / filename, entry.get("csv_sha256"))


# --------------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------------
def _read_table(path: Path, expected_sha: str | None) -> tuple[list[str], list[list[str]]]:
    raw = gzip.decompress(path.read_bytes())
    if expected_sha is not None:
        _verify_file(path, expected_sha, raw)
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8"), newline="")))
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
        f"samples: {entry['n_samples']}, features in the file: {entry['n_features']}, "
        f"classes: {entry['n_classes']}",
        f"class counts: {entry['class_counts']}",
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
        Folder holding ``<name>.csv.gz``.  Default: see :func:`get_data_home` (``STRUCTREG_DATA``,
        then a ``shared/datasets`` folder above the working directory, then the user cache).
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a :class:`~sklearn.utils.Bunch`.
    missing : {"impute", "drop", "error"}, default="impute"
        What to do with empty (missing) cells; only dermatology and automobile have any.

        - ``"impute"``: numeric columns get the mean of their observed values, nominal columns
          their most frequent value (ties broken by the alphabetically first word).  Imputation
          happens before one-hot encoding, so an imputed nominal cell is a regular one-hot row.
        - ``"drop"``: rows with at least one missing cell are removed (this yields the 159-row
          automobile version of the papers, and 358 rows of dermatology).
        - ``"error"``: raise :class:`ValueError` if the data set has missing cells.
    download_if_missing : bool, default=True
        Download the file from ``$STRUCTREG_DATA_URL/<name>.csv.gz`` if it is not found.  Downloads
        are always checked against the manifest's checksum.
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
        checksum mismatch (the message names the file and both hashes) or a malformed file.
    FileNotFoundError
        The file is absent and cannot be downloaded; the message says where the loader looked
        and how to provide the data.

    Examples
    --------
    >>> from structreg.datasets import load_dataset
    >>> X, y = load_dataset("wdbc", return_X_y=True)
    >>> X.shape, sorted(set(y))
    ((569, 30), ['benign', 'malignant'])
    """
    if missing not in _MISSING_POLICIES:
        raise ValueError(f"missing must be one of {_MISSING_POLICIES}, got {missing!r}")
    key = _resolve_name(name)
    entry = _manifest()[key]
    if entry.get("file"):
        path = _locate(entry, data_home, download_if_missing)
        bunch = _load_csv(entry, path, verify, missing)
    else:
        bunch = _load_wdbc(entry)
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
