"""Where the data set files live: manifests, the packaged copy, a user's data home, downloads.

The benchmark files ship inside the package (``structreg/datasets/data/<name>.csv.gz``), each
described by an entry of the packaged ``MANIFEST.json`` (sizes, class counts, provenance, the
SHA-256 of the ``.csv.gz`` file as shipped and of the uncompressed CSV).

A *data home* is a folder of the user's: the ``data_home`` argument, else the folder named by the
environment variable ``STRUCTREG_DATA``, else the user cache (``pooch.os_cache("structreg")``,
e.g. ``~/.cache/structreg/datasets`` on Linux).  Files are looked for in this order:

1. the ``data_home`` argument or ``STRUCTREG_DATA`` (when given), so a user's own copy of a file
   overrides the packaged one;
2. the packaged copy;
3. the user cache (when neither 1 applies), where earlier downloads are kept.

A data home may also hold a ``MANIFEST.json`` of its own (a JSON list of entries in the packaged
manifest's format; ``name`` is required, ``file`` is a file name or absent / ``null``): its
entries add data sets or replace packaged entries of the same name.  An entry without a file is
a set with no file to read: the loader serves it as it serves the packaged manifest's entry of
that name (``wdbc`` from scikit-learn), and any other such set is not available.  A copy of the
packaged manifest is therefore a valid data home manifest.  An entry may give ``url`` (where
to download its file) and ``file_sha256`` (the SHA-256 of that file); without ``url`` the file
is fetched from ``$STRUCTREG_DATA_URL/<file>`` when that variable is set.  Downloads go to the
data home (the user cache when none is given) through :func:`pooch.retrieve`, which checks
``file_sha256`` before the file is moved into place; ``csv_sha256`` (the SHA-256 of the
uncompressed CSV) is checked on every load, once per file version and process.  A file that is
not a whole gzip file (plain text, truncated) is refused with its path and the reason.
"""

from __future__ import annotations

import copy
import gzip
import hashlib
import json
import os
import zlib
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = [
    "DATA_ENV_VAR",
    "URL_ENV_VAR",
    "dataset_info",
    "get_data_home",
    "list_datasets",
    "packaged_data_dir",
]

DATA_ENV_VAR = "STRUCTREG_DATA"
URL_ENV_VAR = "STRUCTREG_DATA_URL"
_MANIFEST_FILE = "MANIFEST.json"
_DOWNLOAD_TIMEOUT_S = 60.0

PathLike = str | os.PathLike[str]

# (resolved path, st_mtime_ns, st_size) -> csv_sha256 that matched the manifest
_VERIFIED: dict[tuple[str, int, int], str] = {}
_PACKAGED: dict[str, dict[str, Any]] | None = None


# --------------------------------------------------------------------------------------------
# Folders
# --------------------------------------------------------------------------------------------
def packaged_data_dir() -> Path:
    """Folder of the data files installed with the package.

    Examples
    --------
    >>> from structreg.datasets import packaged_data_dir
    >>> (packaged_data_dir() / "iris.csv.gz").is_file()
    True
    """
    return Path(str(resources.files(__package__).joinpath("data")))


def _user_cache_dir() -> Path:
    import pooch

    return Path(pooch.os_cache("structreg")) / "datasets"


def _user_home(data_home: PathLike | None) -> Path | None:
    """The folder the user named (argument, then ``STRUCTREG_DATA``), or None."""
    if data_home is not None:
        return Path(data_home).expanduser()
    env = os.environ.get(DATA_ENV_VAR, "").strip()
    return Path(env).expanduser() if env else None


def get_data_home(data_home: PathLike | None = None) -> Path:
    """The user's data home: where own copies are read from and downloads are written.

    The ``data_home`` argument if given, else the folder in the environment variable
    ``STRUCTREG_DATA``, else the user cache (``pooch.os_cache("structreg") / "datasets"``,
    ``~/.cache/structreg/datasets`` on Linux).  Files found here override the packaged copy
    (:func:`packaged_data_dir`).  The folder is not created.

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
    home = _user_home(data_home)
    return home if home is not None else _user_cache_dir()


def _search_dirs(data_home: PathLike | None) -> tuple[list[Path], Path]:
    """Folders to read from (in order) and the folder downloads are written to."""
    home = _user_home(data_home)
    if home is not None:
        return [home, packaged_data_dir()], home
    cache = _user_cache_dir()
    return [packaged_data_dir(), cache], cache


# --------------------------------------------------------------------------------------------
# Manifests
# --------------------------------------------------------------------------------------------
def _packaged_manifest() -> dict[str, dict[str, Any]]:
    """The packaged manifest keyed by data set name (read once)."""
    global _PACKAGED
    if _PACKAGED is None:
        text = resources.files(__package__).joinpath(_MANIFEST_FILE).read_text(encoding="utf-8")
        _PACKAGED = {entry["name"]: entry for entry in json.loads(text)}
    return _PACKAGED


def _user_manifest(home: Path) -> dict[str, dict[str, Any]]:
    """Entries of ``home/MANIFEST.json`` (empty when there is none), checked for form."""
    path = home / _MANIFEST_FILE
    if not path.is_file():
        return {}
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read the data home manifest {path}: {exc}") from exc
    if not isinstance(entries, list):
        raise ValueError(f"{path} must hold a JSON list of data set entries")
    out: dict[str, dict[str, Any]] = {}
    for i, entry in enumerate(entries):
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"{path}: entry {i} must be an object with a string field 'name'")
        file = entry.get("file")  # absent or null: no file (as the packaged wdbc entry)
        if file is not None and (not isinstance(file, str) or not file or Path(file).name != file):
            raise ValueError(
                f"{path}: entry {name!r}: 'file' must be a file name or null, got {file!r}"
            )
        key = _normalise(name)
        out[key] = {**entry, "name": key}
    return out


def _manifest(data_home: PathLike | None = None) -> dict[str, dict[str, Any]]:
    """Packaged entries, updated by the user's data home manifest (if any)."""
    home = _user_home(data_home)
    user = _user_manifest(home) if home is not None else {}
    if not user:
        return _packaged_manifest()
    return {**_packaged_manifest(), **user}


def _normalise(name: str) -> str:
    return name.strip().lower().replace("-", "_")


def _entry(name: str, data_home: PathLike | None = None) -> dict[str, Any]:
    """Manifest entry of ``name`` (case-insensitive, ``-`` for ``_``); clear error if unknown."""
    if not isinstance(name, str):
        raise TypeError(f"dataset name must be a string, got {type(name).__name__}")
    manifest = _manifest(data_home)
    key = _normalise(name)
    if key not in manifest:
        known = ", ".join(sorted(manifest))
        raise ValueError(f"unknown dataset {name!r}; known datasets: {known}")
    return manifest[key]


def list_datasets(data_home: PathLike | None = None) -> list[str]:
    """Names of all data sets: the packaged manifest's and those of the data home's manifest.

    Parameters
    ----------
    data_home : str or path-like, optional
        A data home whose ``MANIFEST.json`` adds entries (default: ``STRUCTREG_DATA``).

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
    return sorted(_manifest(data_home))


def dataset_info(name: str, data_home: PathLike | None = None) -> dict[str, Any]:
    """Manifest entry of one data set.

    Parameters
    ----------
    name : str
        Data set name, as listed by :func:`list_datasets` (case-insensitive; ``-`` may be used
        for ``_``).
    data_home : str or path-like, optional
        A data home whose ``MANIFEST.json`` adds or replaces entries (default: ``STRUCTREG_DATA``).

    Returns
    -------
    info : dict
        A copy of the manifest entry: ``n_samples``, ``n_features`` (columns in the file, before any
        one-hot encoding), ``n_classes``, ``class_counts``, ``nominal_columns``,
        ``coded_categorical_columns``, ``missing_cells``, ``rows_with_missing``, ``notes``,
        provenance fields, ``file_sha256`` and ``csv_sha256``.

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
    return copy.deepcopy(_entry(name, data_home))


# --------------------------------------------------------------------------------------------
# Checksums
# --------------------------------------------------------------------------------------------
def _cache_key(path: Path) -> tuple[str, int, int]:
    stat = path.stat()
    return (str(path.resolve()), stat.st_mtime_ns, stat.st_size)


def _sha256_of_gzip(path: Path) -> str:
    digest = hashlib.sha256()
    with gzip.open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def read_gzip(path: Path) -> bytes:
    """The uncompressed content of the data file ``path``; :class:`ValueError` naming the file
    and the reason when it is not a whole gzip file (plain text, truncated, damaged)."""
    data = path.read_bytes()
    try:
        return gzip.decompress(data)
    except EOFError as exc:  # the compressed stream stops before its end marker
        reason = "it is truncated (the compressed data ends early)"
        raise ValueError(f"{path} is not a valid gzip file: {reason}") from exc
    except (gzip.BadGzipFile, zlib.error) as exc:  # not gzip at all, or damaged data / CRC
        raise ValueError(f"{path} is not a valid gzip file: {exc}") from exc


def _check_sha256(what: str | Path, expected: str, actual: str) -> None:
    if actual != expected:
        raise ValueError(
            f"checksum mismatch for {what}: the SHA-256 of the uncompressed CSV is {actual}, "
            f"but the manifest expects {expected}. The file is corrupt or a different version; "
            "delete it and provide a correct copy."
        )


def verify_csv(path: Path, expected: str, raw: bytes | None = None) -> None:
    """Check the SHA-256 of the uncompressed content of ``path`` (cached per path/mtime/size)."""
    key = _cache_key(path)
    if _VERIFIED.get(key) == expected:
        return
    actual = hashlib.sha256(raw).hexdigest() if raw is not None else _sha256_of_gzip(path)
    _check_sha256(path, expected, actual)
    _VERIFIED[key] = expected


# --------------------------------------------------------------------------------------------
# Locating and downloading
# --------------------------------------------------------------------------------------------
def _download(url: str, target: Path, entry: dict[str, Any]) -> Path:
    """Fetch ``url`` to ``target`` with pooch; check both checksums, leave nothing bad behind."""
    import pooch

    file_sha = entry.get("file_sha256")
    downloader = pooch.HTTPDownloader(progressbar=False, timeout=_DOWNLOAD_TIMEOUT_S)
    try:
        pooch.retrieve(
            url,
            known_hash=f"sha256:{file_sha}" if file_sha else None,
            fname=target.name,
            path=target.parent,
            downloader=downloader,
        )
    except ValueError as exc:  # pooch: hash mismatch (the temporary file is already removed)
        raise ValueError(f"checksum mismatch for the download {url}: {exc}") from exc
    except OSError as exc:  # requests' errors derive from OSError
        raise OSError(f"could not download {url}: {exc}") from exc
    expected = entry.get("csv_sha256")
    if expected:
        try:
            actual = _sha256_of_gzip(target)
        except (OSError, EOFError, zlib.error) as exc:  # not a gzip file, truncated, damaged
            target.unlink(missing_ok=True)
            raise ValueError(f"downloaded file {url} is not a valid gzip file: {exc}") from exc
        if actual != expected:
            target.unlink(missing_ok=True)
        _check_sha256(f"the download {url}", expected, actual)
        _VERIFIED[_cache_key(target)] = expected
    return target


def locate(entry: dict[str, Any], data_home: PathLike | None, download_if_missing: bool) -> Path:
    """Path of the data set file, downloading it when allowed and needed."""
    filename = entry["file"]
    search, write_dir = _search_dirs(data_home)
    for folder in search:
        path = folder / filename
        if path.is_file():
            return path
    url = entry.get("url") or ""
    base_url = os.environ.get(URL_ENV_VAR, "").strip()
    if not url and base_url:
        url = base_url.rstrip("/") + "/" + filename
    looked = ", ".join(str(folder) for folder in search)
    how = (
        f"Put {filename} into {write_dir}, pass data_home=... or set the environment variable "
        f"{DATA_ENV_VAR} to a folder that holds it"
    )
    if not download_if_missing:
        raise FileNotFoundError(
            f"{filename} not found (looked in: {looked}) and download_if_missing=False. {how}."
        )
    if not url:
        raise FileNotFoundError(
            f"{filename} not found (looked in: {looked}) and no download source is configured. "
            f"{how}, give the entry a 'url' in the data home's {_MANIFEST_FILE}, or set "
            f"{URL_ENV_VAR} to a base URL serving <name>.csv.gz files."
        )
    return _download(url, write_dir / filename, entry)


# --------------------------------------------------------------------------------------------
# Checking a data home before a run
# --------------------------------------------------------------------------------------------
def check_data_home(data_home: PathLike | None = None) -> dict[str, str]:
    """Check the user's data home (``data_home``, else ``STRUCTREG_DATA``) before work starts.

    Raises :class:`ValueError` naming the folder or its manifest when the data home cannot be
    used at all: it is a file, or its ``MANIFEST.json`` cannot be read or is malformed.
    Returns ``{data set: reason}`` for the files in it that cannot be loaded (not a whole gzip
    file, a checksum mismatch, unreadable), each reason naming the file; loading such a set
    fails with the same reason.  Without a data home (only the packaged copy and the user cache,
    whose downloads were checked) there is nothing to check.  A data home that does not exist
    yet is fine: files are then read from the packaged copy, and downloads create it.
    """
    home = _user_home(data_home)
    if home is None:
        return {}
    if home.exists() and not home.is_dir():
        where = f" ({DATA_ENV_VAR})" if data_home is None else ""
        raise ValueError(f"the data home {home}{where} is a file, not a folder")
    problems: dict[str, str] = {}
    for name, entry in sorted(_manifest(data_home).items()):
        file = entry.get("file")
        path = home / file if file else None
        if path is None or not path.is_file():
            continue
        try:
            raw = read_gzip(path)
            if entry.get("csv_sha256"):
                verify_csv(path, entry["csv_sha256"], raw)
        except (OSError, ValueError) as exc:
            problems[name] = str(exc)
    return problems
