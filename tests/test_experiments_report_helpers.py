"""The generic output helpers appended to structreg.experiments.report (write_csv, pyplot,
skipped_rows)."""

import csv

import pytest

from structreg.experiments.report import pyplot, skipped_rows, write_csv


def test_write_csv_header_then_rows(tmp_path):
    path = write_csv(tmp_path / "t.csv", ["a", "b"], [[1, "x"], [2, ""]])
    assert path == tmp_path / "t.csv"
    with open(path, newline="") as fh:
        assert list(csv.reader(fh)) == [["a", "b"], ["1", "x"], ["2", ""]]


def test_pyplot_uses_the_agg_backend():
    pytest.importorskip("matplotlib")
    plt = pyplot()
    assert plt.get_backend().lower() == "agg"


def test_skipped_rows_pad_to_the_reason_column():
    rows = skipped_rows({"water": "not among the data sets", "pima": "too large"}, 2)
    assert rows == [
        ["water", "", 0, "", "", "skipped: not among the data sets"],
        ["pima", "", 0, "", "", "skipped: too large"],
    ]
    assert skipped_rows({}, 3) == []
