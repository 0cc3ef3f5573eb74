"""The generic output helpers appended to structreg.experiments.report (write_csv, pyplot)."""

import csv

import pytest

from structreg.experiments.report import pyplot, write_csv


def test_write_csv_header_then_rows(tmp_path):
    path = write_csv(tmp_path / "t.csv", ["a", "b"], [[1, "x"], [2, ""]])
    assert path == tmp_path / "t.csv"
    with open(path, newline="") as fh:
        assert list(csv.reader(fh)) == [["a", "b"], ["1", "x"], ["2", ""]]


def test_pyplot_uses_the_agg_backend():
    pytest.importorskip("matplotlib")
    plt = pyplot()
    assert plt.get_backend().lower() == "agg"
