"""Tests for structreg.datasets: loaders, data home, checksums, downloads and toy generators."""

from __future__ import annotations

import csv
import doctest
import functools
import gzip
import hashlib
import http.server
import json
import os
import socket
import threading
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier

import structreg.datasets as ds
from structreg.datasets import _base, _home, _toys

MANIFEST = {
    entry["name"]: entry
    for entry in json.loads(
        (Path(_base.__file__).parent / "MANIFEST.json").read_text(encoding="utf-8")
    )
}
FILE_DATASETS = sorted(name for name, entry in MANIFEST.items() if entry.get("file"))
SMALL_FILE_DATASETS = [name for name in FILE_DATASETS if name != "usps"]


DATA_HOME = ds.packaged_data_dir()


def _raw_table(name: str) -> tuple[list[str], list[list[str]]]:
    """Independent reader of a data file, for cross-checks."""
    with gzip.open(DATA_HOME / f"{name}.csv.gz", "rt", encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    return rows[0], rows[1:]


def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in (ds.DATA_ENV_VAR, ds.URL_ENV_VAR):
        monkeypatch.delenv(var, raising=False)


def _write_gzip_csv(path: Path, text: str) -> None:
    path.write_bytes(gzip.compress(text.encode("utf-8")))


def _corrupted_iris_text() -> str:
    text = gzip.decompress((DATA_HOME / "iris.csv.gz").read_bytes()).decode("utf-8")
    header, first, rest = text.split("\n", 2)
    assert first.startswith("5.1,")
    return "\n".join([header, "5.2," + first[4:], rest])


# ------------------------------------------------------------------------------------------
# Manifest, names
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", FILE_DATASETS)
def test_every_manifest_file_ships_with_the_package_and_matches_its_checksums(name):
    path = ds.packaged_data_dir() / MANIFEST[name]["file"]
    assert path.is_file(), f"{path} is not installed with the package"
    raw = path.read_bytes()
    assert hashlib.sha256(raw).hexdigest() == MANIFEST[name]["file_sha256"]
    assert hashlib.sha256(gzip.decompress(raw)).hexdigest() == MANIFEST[name]["csv_sha256"]


def test_packaged_copy_is_read_by_default(monkeypatch, tmp_path):
    _clean_env(monkeypatch)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty-cache"))
    bunch = ds.load_dataset("wine", download_if_missing=False)
    assert Path(bunch.filename) == ds.packaged_data_dir() / "wine.csv.gz"
    assert not (tmp_path / "empty-cache").exists(), "loading must not create the user cache"


def test_list_datasets_is_sorted_and_complete():
    names = ds.list_datasets()
    assert names == sorted(names)
    assert set(names) == set(MANIFEST)
    assert {"iris", "usps", "coil20", "wdbc", "automobile"} <= set(names)


def test_dataset_info_returns_an_independent_copy():
    info = ds.dataset_info("iris")
    assert info["n_samples"] == 150 and info["file"] == "iris.csv.gz"
    info["class_counts"]["Iris-setosa"] = -1
    assert ds.dataset_info("iris")["class_counts"]["Iris-setosa"] == 50


def test_names_are_normalised():
    assert ds.dataset_info("New-Thyroid")["name"] == "new_thyroid"
    assert ds.dataset_info(" IRIS ")["name"] == "iris"


@pytest.mark.parametrize("func", [ds.dataset_info, ds.load_dataset])
def test_unknown_name_lists_known_names(func):
    with pytest.raises(ValueError, match="unknown dataset 'mnist'.*iris.*wine"):
        func("mnist")


def test_invalid_missing_policy():
    with pytest.raises(ValueError, match="missing must be one of"):
        ds.load_dataset("wdbc", missing="zero")


def test_docstring_examples():
    for module in (_base, _home, _toys):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0, module.__name__
        assert result.attempted > 0


# ------------------------------------------------------------------------------------------
# Loading every data set
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", SMALL_FILE_DATASETS)
def test_dataset_matches_manifest(name):
    entry = MANIFEST[name]
    bunch = ds.load_dataset(name, data_home=DATA_HOME)
    X, y = bunch.data, bunch.target
    assert X.dtype == np.float64 and X.ndim == 2
    assert X.shape[0] == entry["n_samples"] == y.shape[0]
    assert np.isfinite(X).all(), "default missing policy must leave no NaN"
    assert len(bunch.feature_names) == X.shape[1]
    assert Counter(y.tolist()) == entry["class_counts"]
    assert all(isinstance(label, str) for label in y)
    assert list(bunch.target_names) == sorted(entry["class_counts"])
    assert len(bunch.target_names) == entry["n_classes"]
    assert bunch.name == name
    assert bunch.notes == entry["notes"] and entry["notes"] in bunch.DESCR

    header, rows = _raw_table(name)
    nominal = entry["nominal_columns"]
    n_categories = sum(len({row[header.index(col)] for row in rows} - {""}) for col in nominal)
    assert X.shape[1] == entry["n_features"] - len(nominal) + n_categories
    if not nominal:
        assert X.shape[1] == entry["n_features"]
        assert bunch.feature_names == header[:-1]


def test_usps_loads_once():
    X, y = ds.load_dataset("usps", data_home=DATA_HOME, return_X_y=True)
    assert X.shape == (11000, 256) and X.dtype == np.float64
    assert Counter(y.tolist()) == {str(d): 1100 for d in range(10)}
    assert X.min() >= 0 and X.max() <= 255


def test_values_are_parsed_exactly():
    header, rows = _raw_table("wine")
    X, y = ds.load_dataset("wine", data_home=DATA_HOME, return_X_y=True)
    expected = np.array([[float(v) for v in row[:-1]] for row in rows])
    np.testing.assert_array_equal(X, expected)
    assert y.tolist() == [row[-1] for row in rows]


def test_lenses_one_hot_encoding():
    bunch = ds.load_dataset("lenses", data_home=DATA_HOME)
    assert bunch.data.shape == (24, 3 + 2 + 2 + 2)
    assert bunch.feature_names[:3] == ["age=pre-presbyopic", "age=presbyopic", "age=young"]
    header, rows = _raw_table("lenses")
    for k, col in enumerate(header[:-1]):
        group = [i for i, f in enumerate(bunch.feature_names) if f.startswith(col + "=")]
        np.testing.assert_array_equal(bunch.data[:, group].sum(axis=1), 1.0)
        for i, row in enumerate(rows):
            hot = bunch.feature_names[group[int(np.argmax(bunch.data[i, group]))]]
            assert hot == f"{col}={row[k]}"


def test_automobile_encoding_and_imputation():
    bunch = ds.load_dataset("automobile", data_home=DATA_HOME)
    header, rows = _raw_table("automobile")
    names = bunch.feature_names
    assert "fuel-type=gas" in names and "fuel-type=diesel" in names
    assert names.index("fuel-type=diesel") < names.index("fuel-type=gas")
    assert "num-of-doors=four" in names and "make=alfa-romero" in names
    # numeric column: observed values kept, missing ones replaced by the observed mean
    col = header.index("normalized-losses")
    observed = [float(r[col]) for r in rows if r[col] != ""]
    values = bunch.data[:, names.index("normalized-losses")]
    missing_rows = [i for i, r in enumerate(rows) if r[col] == ""]
    assert len(missing_rows) == 41
    np.testing.assert_allclose(values[missing_rows], np.mean(observed))
    kept = [i for i, r in enumerate(rows) if r[col] != ""]
    np.testing.assert_array_equal(values[kept], observed)
    # nominal column: missing cells get the most frequent word, before one-hot encoding
    col = header.index("num-of-doors")
    top = Counter(r[col] for r in rows if r[col] != "").most_common(1)[0][0]
    missing_rows = [i for i, r in enumerate(rows) if r[col] == ""]
    assert len(missing_rows) == 2
    group = [i for i, f in enumerate(names) if f.startswith("num-of-doors=")]
    np.testing.assert_array_equal(bunch.data[:, group].sum(axis=1), 1.0)
    assert (bunch.data[missing_rows, names.index(f"num-of-doors={top}")] == 1).all()


def test_automobile_drop_gives_the_papers_159_rows():
    bunch = ds.load_dataset("automobile", data_home=DATA_HOME, missing="drop")
    assert bunch.data.shape[0] == 205 - MANIFEST["automobile"]["rows_with_missing"] == 159
    assert Counter(bunch.target.tolist()) == {"-2": 3, "-1": 20, "0": 48, "1": 46, "2": 29, "3": 13}
    # the encoded columns do not depend on the missing-value policy
    assert bunch.feature_names == ds.load_dataset("automobile", data_home=DATA_HOME).feature_names


def test_dermatology_missing_policies():
    entry = MANIFEST["dermatology"]
    full = ds.load_dataset("dermatology", data_home=DATA_HOME)
    dropped = ds.load_dataset("dermatology", data_home=DATA_HOME, missing="drop")
    assert dropped.data.shape == (entry["n_samples"] - entry["rows_with_missing"], 34)
    assert dropped.data.shape[0] == 358
    assert np.isfinite(dropped.data).all()
    age = full.feature_names.index("Age")
    header, rows = _raw_table("dermatology")
    missing_rows = [i for i, r in enumerate(rows) if r[header.index("Age")] == ""]
    kept = np.setdiff1d(np.arange(len(rows)), missing_rows)
    np.testing.assert_array_equal(full.data[kept], dropped.data)
    np.testing.assert_allclose(full.data[missing_rows, age], dropped.data[:, age].mean())
    with pytest.raises(ValueError, match="8 rows with missing values.*Age"):
        ds.load_dataset("dermatology", data_home=DATA_HOME, missing="error")


def test_missing_error_is_fine_without_missing_cells():
    X, _ = ds.load_dataset("iris", data_home=DATA_HOME, missing="error", return_X_y=True)
    assert X.shape == (150, 4)


def test_coded_categorical_columns_stay_numeric():
    bunch = ds.load_dataset("cmc", data_home=DATA_HOME)
    assert bunch.data.shape == (1473, 9)
    assert bunch.coded_categorical_columns == MANIFEST["cmc"]["coded_categorical_columns"]
    edu = bunch.data[:, bunch.feature_names.index("Wifes_education")]
    assert set(np.unique(edu)) == {1.0, 2.0, 3.0, 4.0}


@pytest.fixture
def fake_dataset(tmp_path, monkeypatch):
    """Register a tiny data set ``toy`` in the manifest; returns a writer for its CSV text."""

    def write(text: str, nominal=("colour",)) -> Path:
        path = tmp_path / "toy.csv.gz"
        _write_gzip_csv(path, text)
        entry = {
            "name": "toy",
            "file": "toy.csv.gz",
            "n_samples": 0,
            "n_features": 0,
            "n_classes": 0,
            "class_counts": {},
            "nominal_columns": list(nominal),
            "notes": "synthetic",
            "csv_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        }
        monkeypatch.setitem(_home._packaged_manifest(), "toy", entry)
        return tmp_path

    return write


def test_imputation_ties_and_category_order(fake_dataset):
    home = fake_dataset("x,colour,label\n1,red,a\n,blue,b\n4,,a\n7,red,b\n,blue,a\n")
    bunch = ds.load_dataset("toy", data_home=home)
    assert bunch.feature_names == ["x", "colour=blue", "colour=red"]
    # x: mean of 1, 4, 7; colour: "blue" and "red" tie, the alphabetically first wins
    expected = [[1, 0, 1], [4, 1, 0], [4, 1, 0], [7, 0, 1], [4, 1, 0]]
    np.testing.assert_array_equal(bunch.data, expected)
    assert bunch.target.tolist() == ["a", "b", "a", "b", "a"]
    dropped = ds.load_dataset("toy", data_home=home, missing="drop")
    np.testing.assert_array_equal(dropped.data, [[1, 0, 1], [7, 0, 1]])
    assert dropped.feature_names == bunch.feature_names


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x,colour,label\n1,red,a\nabc,red,b\n", "'x'.*'abc' is not a number"),
        ("x,colour,label\n1,red,a\n2,red\n", "row 2 has 2 cells"),
        ("x,colour,target\n1,red,a\n", "last column must be 'label'"),
        ("x,colour,label\n1,red,a\n2,red,\n", "empty label"),
        ("x,colour,label\ninf,red,a\n", "not finite"),
    ],
)
def test_malformed_files_are_reported(fake_dataset, text, message):
    home = fake_dataset(text)
    with pytest.raises(ValueError, match=message):
        ds.load_dataset("toy", data_home=home)


def test_wdbc_comes_from_scikit_learn():
    bunch = ds.load_dataset("wdbc", data_home="/nonexistent/folder", download_if_missing=False)
    assert bunch.data.shape == (569, 30) and bunch.data.dtype == np.float64
    assert Counter(bunch.target.tolist()) == MANIFEST["wdbc"]["class_counts"]
    assert list(bunch.target_names) == ["benign", "malignant"]
    assert bunch.filename is None and "load_breast_cancer" in bunch.DESCR
    X, y = ds.load_dataset("wdbc", return_X_y=True)
    np.testing.assert_array_equal(X, bunch.data)
    np.testing.assert_array_equal(y, bunch.target)


# ------------------------------------------------------------------------------------------
# Checksums
# ------------------------------------------------------------------------------------------
def test_checksum_mismatch_raises(tmp_path):
    path = tmp_path / "iris.csv.gz"
    _write_gzip_csv(path, _corrupted_iris_text())
    expected = MANIFEST["iris"]["csv_sha256"]
    with pytest.raises(ValueError, match="checksum mismatch") as info:
        ds.load_dataset("iris", data_home=tmp_path)
    message = str(info.value)
    assert str(path) in message and expected in message
    actual = [w for w in message.replace(",", " ").split() if len(w) == 64 and w != expected]
    assert actual, "the message must give the actual hash too"
    X, _ = ds.load_dataset("iris", data_home=tmp_path, verify=False, return_X_y=True)
    assert X[0, 0] == 5.2


def test_verification_is_cached_per_path_mtime_and_size(tmp_path, monkeypatch):
    path = tmp_path / "iris.csv.gz"
    path.write_bytes((DATA_HOME / "iris.csv.gz").read_bytes())
    ds.load_dataset("iris", data_home=tmp_path)
    assert _home._cache_key(path) in _home._VERIFIED

    def no_hashing(*args, **kwargs):
        raise AssertionError("the file was hashed again")

    monkeypatch.setattr(_home, "hashlib", SimpleNamespace(sha256=no_hashing))
    ds.load_dataset("iris", data_home=tmp_path)  # cached: no hashing
    monkeypatch.undo()

    # a changed file (new mtime/size) is checked again
    stat = path.stat()
    _write_gzip_csv(path, _corrupted_iris_text())
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    with pytest.raises(ValueError, match="checksum mismatch"):
        ds.load_dataset("iris", data_home=tmp_path)


# ------------------------------------------------------------------------------------------
# Data home and downloads
# ------------------------------------------------------------------------------------------
def test_data_home_resolution_order(tmp_path, monkeypatch):
    _clean_env(monkeypatch)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    cache = tmp_path / "xdg" / "structreg" / "datasets"
    assert ds.get_data_home() == cache  # nothing named: the user cache
    assert not cache.exists(), "get_data_home must not create folders"
    assert _home._search_dirs(None) == ([ds.packaged_data_dir(), cache], cache)

    monkeypatch.setenv(ds.DATA_ENV_VAR, str(tmp_path / "env"))
    assert ds.get_data_home() == tmp_path / "env"  # the environment variable wins
    assert ds.get_data_home(tmp_path / "arg") == tmp_path / "arg"  # the argument wins
    # a named data home is searched before the packaged copy, and downloads go there
    home = tmp_path / "env"
    assert _home._search_dirs(None) == ([home, ds.packaged_data_dir()], home)


def test_the_loader_knows_nothing_of_folders_around_the_working_directory(tmp_path, monkeypatch):
    """A team folder of data files above the working directory is not a data source."""
    _clean_env(monkeypatch)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    team = tmp_path / "team" / "datasets"
    team.mkdir(parents=True)
    _write_gzip_csv(team / "iris.csv.gz", _corrupted_iris_text())
    (team / "MANIFEST.json").write_text(json.dumps([{"name": "extra", "file": "extra.csv.gz"}]))
    work = tmp_path / "main"
    work.mkdir()
    monkeypatch.chdir(work)
    assert ds.load_dataset("iris").filename == str(ds.packaged_data_dir() / "iris.csv.gz")
    assert "extra" not in ds.list_datasets()


def test_a_file_in_the_data_home_overrides_the_packaged_copy(tmp_path, monkeypatch):
    _clean_env(monkeypatch)
    (tmp_path / "iris.csv.gz").write_bytes((DATA_HOME / "iris.csv.gz").read_bytes())
    assert ds.load_dataset("iris", data_home=tmp_path).filename == str(tmp_path / "iris.csv.gz")
    monkeypatch.setenv(ds.DATA_ENV_VAR, str(tmp_path))
    assert ds.load_dataset("iris").filename == str(tmp_path / "iris.csv.gz")
    # sets the data home does not hold still come from the package
    assert ds.load_dataset("wine").filename == str(DATA_HOME / "wine.csv.gz")


def _user_entry(name: str = "mydata", **extra) -> dict:
    text = "a,b,label\n1,2,x\n3,4,y\n5,6,x\n"
    entry = {
        "name": name,
        "file": f"{name}.csv.gz",
        "n_samples": 3,
        "n_features": 2,
        "n_classes": 2,
        "class_counts": {"x": 2, "y": 1},
        "nominal_columns": [],
        "notes": "a user's own set",
        "csv_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
    }
    entry.update(extra)
    return entry, text


def test_data_home_manifest_adds_and_replaces_entries(tmp_path, monkeypatch):
    _clean_env(monkeypatch)
    entry, text = _user_entry("My-Data")
    replaced = {**MANIFEST["iris"], "notes": "my notes on iris"}
    (tmp_path / "MANIFEST.json").write_text(json.dumps([entry, replaced]))
    _write_gzip_csv(tmp_path / "My-Data.csv.gz", text)
    assert "my_data" in ds.list_datasets(data_home=tmp_path)
    assert "my_data" not in ds.list_datasets()
    assert ds.dataset_info("iris", data_home=tmp_path)["notes"] == "my notes on iris"
    assert ds.dataset_info("iris")["notes"] == MANIFEST["iris"]["notes"]
    bunch = ds.load_dataset("my-data", data_home=tmp_path)
    np.testing.assert_array_equal(bunch.data, [[1, 2], [3, 4], [5, 6]])
    assert bunch.target.tolist() == ["x", "y", "x"] and bunch.name == "my_data"
    monkeypatch.setenv(ds.DATA_ENV_VAR, str(tmp_path))  # the same through the variable
    assert ds.load_dataset("my_data").data.shape == (3, 2)
    assert ds.load_dataset("iris").notes == "my notes on iris"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "cannot read the data home manifest"),
        ('{"name": "x"}', "must hold a JSON list"),
        ('[{"file": "x.csv.gz"}]', "entry 0 must be an object with a string field 'name'"),
        ('[{"name": "x"}, {"name": 3}]', "entry 1 must be an object with a string field 'name'"),
        ('["x"]', "entry 0 must be an object with a string field 'name'"),
        ('[{"name": "x", "file": "../x.csv.gz"}]', "'file' must be a file name"),
        ('[{"name": "x", "file": 3}]', "'file' must be a file name or null, got 3"),
        ('[{"name": "x", "file": ""}]', "'file' must be a file name or null, got ''"),
    ],
)
def test_malformed_data_home_manifest_is_reported(tmp_path, content, message):
    (tmp_path / "MANIFEST.json").write_text(content)
    with pytest.raises(ValueError, match=message) as info:
        ds.list_datasets(data_home=tmp_path)
    assert str(tmp_path / "MANIFEST.json") in str(info.value)
    with pytest.raises(ValueError, match=message):  # the check before a run says the same
        _home.check_data_home(tmp_path)


def test_a_copy_of_the_packaged_manifest_is_a_valid_data_home_manifest(tmp_path, monkeypatch):
    """Its wdbc entry has no file (``"file": null``): served by scikit-learn as packaged."""
    _clean_env(monkeypatch)
    packaged = Path(_base.__file__).parent / "MANIFEST.json"
    (tmp_path / "MANIFEST.json").write_text(packaged.read_text(encoding="utf-8"))
    assert ds.list_datasets(data_home=tmp_path) == ds.list_datasets()
    assert ds.dataset_info("wdbc", data_home=tmp_path) == MANIFEST["wdbc"]
    X, y = ds.load_dataset("wdbc", data_home=tmp_path, return_X_y=True)
    X0, y0 = ds.load_dataset("wdbc", return_X_y=True)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)
    assert _home.check_data_home(tmp_path) == {}


def test_a_data_home_entry_without_a_file_is_not_available(tmp_path, monkeypatch):
    """Other than wdbc, a set with no file has nothing to load (it is not wdbc in disguise)."""
    _clean_env(monkeypatch)
    entries = [{"name": "mine"}, {"name": "iris", "file": None}]
    (tmp_path / "MANIFEST.json").write_text(json.dumps(entries))
    assert {"mine", "iris", "wdbc"} <= set(ds.list_datasets(data_home=tmp_path))
    for name in ("mine", "iris"):
        with pytest.raises(FileNotFoundError, match=f"dataset '{name}' is not available: its"):
            ds.load_dataset(name, data_home=tmp_path)
    assert _home.check_data_home(tmp_path) == {}


def _plain_text(path: Path) -> str:
    path.write_text("sepal_length,label\n5.1,setosa\n")
    return "is not a valid gzip file: Not a gzipped file"


def _truncated(path: Path) -> str:
    path.write_bytes((DATA_HOME / "iris.csv.gz").read_bytes()[:400])
    return "is not a valid gzip file: it is truncated"


def _damaged(path: Path) -> str:
    data = bytearray((DATA_HOME / "iris.csv.gz").read_bytes())
    data[20:60] = bytes(40)  # zeros over the deflate stream
    path.write_bytes(bytes(data))
    return "is not a valid gzip file: "


def _not_utf8(path: Path) -> str:
    path.write_bytes(gzip.compress(b"x,label\n1,\xff\n"))
    return "is not UTF-8 text"


@pytest.mark.parametrize("spoil", [_plain_text, _truncated, _damaged, _not_utf8])
def test_a_data_file_that_is_not_gzip_is_refused_with_its_path_and_the_reason(
    tmp_path, monkeypatch, spoil
):
    _clean_env(monkeypatch)
    path = tmp_path / "iris.csv.gz"
    reason = spoil(path)
    # a whole gzip file of other bytes (not UTF-8) fails its checksum first
    checked = f"checksum mismatch for {path}: " if spoil is _not_utf8 else f"{path} {reason}"
    with pytest.raises(ValueError) as info:
        ds.load_dataset("iris", data_home=tmp_path)
    assert str(info.value).startswith(checked)
    with pytest.raises(ValueError) as info:
        ds.load_dataset("iris", data_home=tmp_path, verify=False)
    assert str(info.value).startswith(f"{path} {reason}")
    monkeypatch.setenv(ds.DATA_ENV_VAR, str(tmp_path))
    problems = _home.check_data_home()  # what a run warns of before it starts
    assert list(problems) == ["iris"] and problems["iris"].startswith(checked)


def test_check_data_home(tmp_path, monkeypatch):
    _clean_env(monkeypatch)
    assert _home.check_data_home() == {}  # no data home: only checked files
    assert _home.check_data_home(tmp_path / "not-yet") == {}  # downloads would create it
    (tmp_path / "iris.csv.gz").write_bytes((DATA_HOME / "iris.csv.gz").read_bytes())
    assert _home.check_data_home(tmp_path) == {}
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv(ds.DATA_ENV_VAR, str(tmp_path / "a-file"))
    with pytest.raises(ValueError, match=f"the data home {tmp_path / 'a-file'} \\(STRUCTREG_DATA"):
        _home.check_data_home()


@pytest.fixture
def http_server(tmp_path):
    """A real HTTP server on 127.0.0.1 serving the folder ``tmp_path / "www"``."""
    root = tmp_path / "www"
    root.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):  # keep the test output clean
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(root))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield SimpleNamespace(root=root, url=f"http://127.0.0.1:{server.server_address[1]}")
    finally:
        server.shutdown()
        server.server_close()


def test_download_from_a_local_http_server(tmp_path, monkeypatch, http_server):
    _clean_env(monkeypatch)
    entry, text = _user_entry(url=f"{http_server.url}/files/mydata.csv.gz")
    (http_server.root / "files").mkdir()
    _write_gzip_csv(http_server.root / "files" / "mydata.csv.gz", text)
    entry["file_sha256"] = hashlib.sha256(
        (http_server.root / "files" / "mydata.csv.gz").read_bytes()
    ).hexdigest()
    home = tmp_path / "home"
    home.mkdir()
    (home / "MANIFEST.json").write_text(json.dumps([entry]))

    with pytest.raises(FileNotFoundError, match="download_if_missing=False"):
        ds.load_dataset("mydata", data_home=home, download_if_missing=False)
    bunch = ds.load_dataset("mydata", data_home=home)
    assert bunch.filename == str(home / "mydata.csv.gz")
    assert sorted(p.name for p in home.iterdir()) == ["MANIFEST.json", "mydata.csv.gz"]
    assert bunch.target.tolist() == ["x", "y", "x"]
    # cached: a second load reads the local file, even with the server's copy gone
    (http_server.root / "files" / "mydata.csv.gz").unlink()
    assert ds.load_dataset("mydata", data_home=home).filename == bunch.filename


def test_download_through_the_base_url_into_the_user_cache(tmp_path, monkeypatch, http_server):
    """A set with no ``url`` of its own comes from ``$STRUCTREG_DATA_URL/<file>``."""
    _clean_env(monkeypatch)
    entry, text = _user_entry()
    _write_gzip_csv(http_server.root / "mydata.csv.gz", text)
    monkeypatch.setitem(_home._packaged_manifest(), "mydata", entry)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv(ds.URL_ENV_VAR, http_server.url + "/")
    bunch = ds.load_dataset("mydata")
    assert bunch.filename == str(tmp_path / "xdg" / "structreg" / "datasets" / "mydata.csv.gz")


def test_corrupted_download_is_refused_and_deleted(tmp_path, monkeypatch, http_server):
    _clean_env(monkeypatch)
    entry, text = _user_entry()
    _write_gzip_csv(http_server.root / "good.csv.gz", text)
    good_sha = hashlib.sha256((http_server.root / "good.csv.gz").read_bytes()).hexdigest()
    _write_gzip_csv(http_server.root / "mydata.csv.gz", text.replace("5,6", "5,7"))
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv(ds.URL_ENV_VAR, http_server.url)

    # with the file's own hash: pooch refuses it before it is moved into place
    (home / "MANIFEST.json").write_text(json.dumps([{**entry, "file_sha256": good_sha}]))
    with pytest.raises(ValueError, match="download .*mydata.csv.gz.*does not match the known"):
        ds.load_dataset("mydata", data_home=home)
    assert sorted(p.name for p in home.iterdir()) == ["MANIFEST.json"]
    # with only the CSV's hash: the uncompressed content is checked, the file deleted
    (home / "MANIFEST.json").write_text(json.dumps([entry]))
    with pytest.raises(ValueError, match="checksum mismatch for the download") as info:
        ds.load_dataset("mydata", data_home=home)
    assert entry["csv_sha256"] in str(info.value)
    assert sorted(p.name for p in home.iterdir()) == ["MANIFEST.json"]
    # not a gzip file at all
    (http_server.root / "mydata.csv.gz").write_text("<html>not found</html>")
    with pytest.raises(ValueError, match="not a valid gzip file"):
        ds.load_dataset("mydata", data_home=home)
    assert sorted(p.name for p in home.iterdir()) == ["MANIFEST.json"]


def test_missing_remote_file_and_server_down_fail_cleanly(tmp_path, monkeypatch, http_server):
    _clean_env(monkeypatch)
    entry, _ = _user_entry()
    home = tmp_path / "home"
    home.mkdir()
    (home / "MANIFEST.json").write_text(json.dumps([entry]))
    monkeypatch.setenv(ds.URL_ENV_VAR, http_server.url)
    with pytest.raises(OSError, match=r"could not download http://127\.0\.0\.1.*mydata.csv.gz"):
        ds.load_dataset("mydata", data_home=home)  # 404
    assert sorted(p.name for p in home.iterdir()) == ["MANIFEST.json"]

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv(ds.URL_ENV_VAR, f"http://127.0.0.1:{port}")
    with pytest.raises(OSError, match=f"could not download http://127.0.0.1:{port}/mydata"):
        ds.load_dataset("mydata", data_home=home)
    assert sorted(p.name for p in home.iterdir()) == ["MANIFEST.json"]


def test_missing_file_without_source_explains_what_to_do(tmp_path, monkeypatch):
    _clean_env(monkeypatch)
    entry, _ = _user_entry()
    (tmp_path / "MANIFEST.json").write_text(json.dumps([entry]))
    with pytest.raises(FileNotFoundError) as info:
        ds.load_dataset("mydata", data_home=tmp_path)
    message = str(info.value)
    assert str(tmp_path) in message and str(ds.packaged_data_dir()) in message
    assert ds.DATA_ENV_VAR in message and ds.URL_ENV_VAR in message and "'url'" in message


# ------------------------------------------------------------------------------------------
# Toy generators
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("level", [1, 2, 3, "A", "c"])
def test_drlsc_moons_shapes_and_reproducibility(level):
    X, y = ds.make_drlsc_moons(level=level, random_state=0)
    assert X.shape == (200, 2) and y.shape == (200,)
    assert np.issubdtype(y.dtype, np.integer)
    assert Counter(y.tolist()) == {0: 100, 1: 100}
    X2, y2 = ds.make_drlsc_moons(level=level, random_state=0)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    X3, _ = ds.make_drlsc_moons(level=level, random_state=1)
    assert not np.allclose(X, X3)


def test_drlsc_moons_geometry():
    X, y = ds.make_drlsc_moons(level=2, n_samples_per_class=50, noise=0.0, shuffle=False)
    np.testing.assert_array_equal(y, np.repeat([0, 1], 50))
    np.testing.assert_allclose(np.hypot(X[:50, 0], X[:50, 1]), 1.0)
    np.testing.assert_allclose(np.hypot(X[50:, 0] - 1.0, X[50:, 1] - 0.6), 1.0)
    assert (X[:50, 1] >= 0).all() and (X[50:, 1] <= 0.6).all()


@pytest.mark.parametrize(
    ("level", "offset", "noise"), [(1, 0.0, 0.05), (2, 0.6, 0.1), (3, 0.7, 0.13)]
)
def test_drlsc_moons_documented_parameters(level, offset, noise):
    assert ds.DRLSC_MOONS_LEVELS[level] == {"offset": offset, "noise": noise}
    X, y = ds.make_drlsc_moons(level, n_samples_per_class=3000, shuffle=False, random_state=0)
    clean, _ = ds.make_drlsc_moons(
        level, n_samples_per_class=3000, noise=0.0, shuffle=False, random_state=0
    )
    # same angles, noise added on top: the residual has the documented standard deviation
    assert np.mean(clean[3000:, 1]) == pytest.approx(offset - 2 / np.pi, abs=0.03)
    np.testing.assert_allclose(np.std(X - clean, axis=0), noise, rtol=0.05)


def test_drlsc_moons_overlap_increases_with_level():
    scores = []
    for level in (1, 2, 3):
        X, y = ds.make_drlsc_moons(level, n_samples_per_class=1500, random_state=level)
        Xt, yt = ds.make_drlsc_moons(level, n_samples_per_class=1500, random_state=10 + level)
        scores.append(KNeighborsClassifier(n_neighbors=15).fit(X, y).score(Xt, yt))
    assert scores[0] == 1.0
    assert scores[0] > scores[1] > scores[2]
    assert scores[2] > 0.95


def test_drlsc_moons_rejects_bad_arguments():
    with pytest.raises(ValueError, match="level"):
        ds.make_drlsc_moons(level=4)
    with pytest.raises(ValueError, match="n_samples_per_class"):
        ds.make_drlsc_moons(n_samples_per_class=0)
    with pytest.raises(ValueError, match="noise"):
        ds.make_drlsc_moons(noise=-1.0)


def test_xor_gaussians_shapes_and_reproducibility():
    X, y, comp = ds.make_xor_gaussians(random_state=0, return_components=True)
    assert X.shape == (800, 2)
    assert Counter(y.tolist()) == {0: 400, 1: 400}
    assert Counter(comp.tolist()) == {0: 200, 1: 200, 2: 200, 3: 200}
    np.testing.assert_array_equal(y, np.where(comp < 2, 0, 1))
    X2, y2 = ds.make_xor_gaussians(random_state=0)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    X3, _ = ds.make_xor_gaussians(n_samples_per_component=10, random_state=0)
    assert X3.shape == (40, 2)
    with pytest.raises(ValueError, match="n_samples_per_component"):
        ds.make_xor_gaussians(n_samples_per_component=-3)


def test_xor_gaussians_follow_table_i():
    X, y, comp = ds.make_xor_gaussians(
        n_samples_per_component=4000, random_state=1, return_components=True
    )
    table = {
        0: ((2, 5), (0.75, 5)),
        1: ((1, -5), (6, 0.75)),
        2: ((-5, 0), (0.75, 6)),
        3: ((8, 0), (5, 0.75)),
    }
    for k, (mean, var) in table.items():
        pts = X[comp == k]
        np.testing.assert_allclose(pts.mean(axis=0), mean, atol=0.15)
        cov = np.cov(pts.T)
        np.testing.assert_allclose(np.diag(cov), var, rtol=0.1)
        assert abs(cov[0, 1]) < 0.2
    # both classes have about the same mean (1.5, 0): an XOR pattern
    for label in (0, 1):
        np.testing.assert_allclose(X[y == label].mean(axis=0), (1.5, 0.0), atol=0.2)


def test_xor_gaussian_classes_sit_in_opposite_quadrants():
    X, y, comp = ds.make_xor_gaussians(random_state=3, return_components=True)
    centre = X.mean(axis=0)
    rotated = (X - centre) @ np.array([[1.0, 1.0], [1.0, -1.0]])  # 45-degree frame
    quadrant = {}
    for k in range(4):
        quadrant[k] = tuple(np.sign(rotated[comp == k].mean(axis=0)).astype(int))
    # each class's two clusters are in opposite quadrants, and the classes alternate
    assert quadrant[0] == tuple(-s for s in quadrant[1])
    assert quadrant[2] == tuple(-s for s in quadrant[3])
    assert {quadrant[0], quadrant[1]} == {(1, -1), (-1, 1)}
    assert {quadrant[2], quadrant[3]} == {(1, 1), (-1, -1)}
    # so no linear rule separates the classes, while a local rule does
    linear = LogisticRegression().fit(X, y).score(X, y)
    local = KNeighborsClassifier(n_neighbors=5).fit(X, y).score(X, y)
    assert linear < 0.8 < 0.97 < local
