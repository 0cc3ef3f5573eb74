"""The DAMR reproduction (structreg.experiments.damr) runs end to end on tiny settings."""

import csv

import numpy as np
import pytest

from structreg.experiments.damr import (
    METHODS,
    TABLE2,
    TABLE3,
    TABLE4,
    TABLE5,
    _pick_labeled,
    damr_tables,
    param_grids,
)


def test_damr_tables_tiny(tmp_path):
    res = damr_tables(tmp_path, n_labeled=(10,), n_repeats=2, datasets=["wdbc", "Sonar"])
    md = (tmp_path / "damr_tables.md").read_text()
    with open(tmp_path / "damr_tables.csv") as fh:
        rows = list(csv.DictReader(fh))

    assert set(res["accuracy"][10]) == {"Sonar", "Wdbc"}
    for per in res["accuracy"][10].values():
        assert set(per) == set(METHODS)
        for values in per.values():
            assert values.shape == (2,) and np.all((values >= 0) & (values <= 100))
    # Wdbc is easy: the graph methods are far better than chance even with 10 labels
    wdbc = res["accuracy"][10]["Wdbc"]
    assert all(wdbc[m].mean() > 75 for m in ("LapRLSC", "SSDR_Wu", "DA_LapRLSC"))
    assert all(v.mean() > 50 for v in wdbc.values())
    assert all(t.min() > 0 for t in res["fit_time"][10]["Wdbc"].values())

    # every Table-2 set is accounted for: run or skipped with a reason, never dropped
    assert set(res["datasets"]) | set(res["skipped"]) == set(TABLE2)
    assert res["skipped"]["Pima"] == "not run: not requested"
    for name in ("Austra", "Ethn", "Isolet"):  # not in the shipped data home
        assert res["skipped"][name] == "skipped: not in the data home"
        assert f"| {name} (" in md and "skipped: not in the data home" in md
        assert any(r["dataset"] == name and r["status"].startswith("skipped") for r in rows)

    # the paper's values sit beside the reproduced ones, in the Markdown and the CSV
    assert "Table 3: 10 labeled points" in md and "Table 5" in md and "(62.81 ± 0.00)" in md
    run = [r for r in rows if r["status"] == "run"]
    assert len(run) == 2 * len(METHODS)
    assert {float(r["paper_acc_mean"]) for r in run if r["dataset"] == "Wdbc"} >= {67.33}
    assert res["summary"][10]["n_sets"] == 2


def test_reference_tables_and_grids():
    for table in (TABLE3, TABLE4, TABLE5):
        assert list(table) == list(TABLE2)
        assert all(set(row) == set(METHODS) for row in table.values())
    assert TABLE3["Isolet"]["DA_LapRLSC"] == (94.13, 0.10)
    assert TABLE4["Vehicle"]["SSDR_Wu"] == (81.11, 0.09)
    assert TABLE5["Ethn"]["SSDR_Wang"] == (541.8539, 21.3753)
    paper = param_grids("paper")
    assert len(paper["DA_LapRLSC"]["gamma_A"]) == 5
    assert paper["SSDR_Wu"]["eta"] == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    with pytest.raises(ValueError, match="grid"):
        param_grids("fine")


def test_labeled_points_cover_every_class():
    y = np.r_[np.zeros(95, int), np.ones(5, int)]
    for seed in range(20):
        picked = _pick_labeled(y, 3, np.random.default_rng(seed))
        assert len(picked) == len(set(picked)) == 3 and set(y[picked]) == {0, 1}
    assert len(_pick_labeled(y, 500, np.random.default_rng(0))) == 100


def test_unknown_dataset_is_rejected(tmp_path):
    with pytest.raises(ValueError, match="Table 2"):
        damr_tables(tmp_path, datasets=["iris"], n_repeats=1, n_labeled=(10,))
