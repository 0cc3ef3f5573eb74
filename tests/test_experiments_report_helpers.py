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


def test_uci_rows_selects_skips_and_notes():
    from structreg.experiments import Options
    from structreg.experiments.protocol import uci_rows

    sets = {"A": ("a", ""), "B": (None, "not shipped"), "C": ("c", ""), "D": ("d", "")}

    def load(row):
        if row == "D":
            raise FileNotFoundError("no file")
        return row.lower() * 3

    def quick(row, data):
        return "too big" if row == "C" else None

    used, skipped, notes = uci_rows(Options(), sets, load, quick)
    assert used == {"A": "aaa", "C": "ccc"} and notes == []
    assert skipped == {"B": "not shipped", "D": "could not be loaded (FileNotFoundError: no file)"}
    used, skipped, _ = uci_rows(Options(quick=True), sets, load, quick)
    assert list(used) == ["A"] and skipped["C"] == "too big"
    # --datasets: names or aliases in any case; --quick then leaves nothing out
    chosen = Options(quick=True, extra={"datasets": ["c", "Alpha"]})
    used, skipped, notes = uci_rows(chosen, sets, load, quick, {r: (r.lower(),) for r in sets})
    assert (
        list(used) == ["C"] and skipped == {} and notes == ["Not selected (--datasets): A, B, D."]
    )
    aliases = {"A": ("alpha",), "B": (), "C": (), "D": ()}
    used, _, notes = uci_rows(chosen, sets, load, quick, aliases)
    assert list(used) == ["A", "C"] and notes == ["Not selected (--datasets): B, D."]
