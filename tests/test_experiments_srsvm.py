"""SRSVM paper reproduction (Xue, Chen & Yang 2011) on the experiment engine, on tiny settings."""

import csv

import numpy as np
import pytest

from structreg.experiments import Options, find_table, run_table
from structreg.experiments.srsvm import (
    TABLE2,
    TABLES,
    _search,
    _task,
)

pytest.importorskip("matplotlib")
pytest.importorskip("cvxpy")  # SLMM

# one grid point: the tests check the plumbing, not the model selection
TINY_GRID = {"exps": {"gamma": [-4], "C": [2], "lam": [0]}}


def test_tables_registered_with_aliases():
    assert [t.name for t in TABLES] == ["II", "V", "VI", "VII", "fig9", "fig10"]
    for name, expected in [
        ("xor", "II"),
        ("I", "II"),
        ("fig5", "II"),
        ("Fig. 6", "II"),
        ("timing", "V"),
        ("table VI", "VI"),
        ("vii", "VII"),
        ("9", "fig9"),
        ("Fig. 9", "fig9"),
        ("10", "fig10"),
        ("bound", "fig10"),
    ]:
        assert find_table("srsvm", name).name == expected


def test_coarse_to_fine_search_finds_the_optimum():
    calls = []

    def evaluate(candidates):
        calls.append(len(candidates))
        return [-abs(c["gamma"] - 3) - abs(c["C"] + 5) for c in candidates]

    best, score, n = _search(evaluate, ["gamma", "C"], {"lo": -10, "hi": 10, "steps": [4, 2, 1]})
    assert best == {"gamma": 3, "C": -5} and score == 0
    assert calls[0] == 36 and n == sum(calls) < 36 + 2 * 9  # no point is evaluated twice
    # ties go to the most regularised point: small gamma and C, large lam
    flat = {"exps": {"gamma": [-2, 0], "lam": [-3, 3], "C": [-2, 0, 3]}}
    best, _, _ = _search(lambda candidates: [1.0] * len(candidates), ["gamma", "lam", "C"], flat)
    assert best == {"gamma": -2, "lam": 3, "C": -2}
    # scores equal to 12 decimals tie (a mean of fold accuracies may differ in its last bit)
    best, _, _ = _search(
        lambda candidates: [0.5 + 1e-15 * c["C"] for c in candidates],
        ["C"],
        {"exps": {"C": [0, 3]}},
    )
    assert best == {"C": 0}


def test_splits_depend_on_data_set_and_split_only():
    a = _task("xor", "XOR 10%", 0)
    b = _task("xor", "XOR 10%", 0)
    assert all(np.array_equal(u, v) for u, v in zip(a, b, strict=True))
    assert len(a[1]) == 80 and len(a[3]) == 720  # 10 % of each Gaussian of 200
    c = _task("xor", "XOR 10%", 1)
    assert not np.array_equal(a[0], c[0])


def test_xor_table_end_to_end(tmp_path):
    table = find_table("srsvm", "II")
    extra = {"fractions": [10], "methods": ["SVM", "SRSVM"], "grid": TINY_GRID}
    options = Options(quick=True, draws=1, extra=extra)
    run = run_table(table, tmp_path, options)
    assert run.n_computed == 2  # SVM and SRSVM at 10 %, one draw (SLMM: see the UCI test)
    md, csv_path, train_csv, png = run.paths
    assert md.name == "srsvm_II.md" and png.stat().st_size > 10_000
    text = md.read_text()
    assert f"({TABLE2[10]['SRSVM'][1]:.2f}," in text and "| 10 |" in text
    for res in run.results.values():
        assert 85 <= res["test_acc"] <= 100 and res["fit_s"] > 0 and "grid" in res
    with open(train_csv) as fh:
        assert {row["method"] for row in csv.DictReader(fh)} == {"SVM", "SRSVM"}
    assert run_table(table, tmp_path, options).n_computed == 0


def test_uci_tables_share_cells(tmp_path):
    options = Options(
        quick=True, draws=2, extra={"datasets": ["automobile", "hepatitis"], "grid": TINY_GRID}
    )
    run = run_table(find_table("srsvm", "V"), tmp_path, options)
    assert run.n_computed == 2 * 5  # automobile x 2 splits x 5 methods
    text = run.paths[0].read_text()
    assert "0.47 / 0.02" in text  # the paper's SVM times on automobile
    assert "hepatitis: not among structreg's data sets" in text
    for res in run.results.values():
        assert 60 <= res["test_acc"] <= 100
        assert res["fit_s"] > 0 and res["predict_s"] > 0
        assert res["bound"]["bound"] is None or 0 < res["bound"]["bound"] < 10
    by_method = {k.method: r for k, r in run.results.items() if k.split == 0}
    assert by_method["SLMM"]["n_support"] is None and by_method["SVM"]["n_support"] > 0
    assert len(by_method["SRSVM"]["n_clusters"]) == 2
    for name, expected in [("VI", "59"), ("VII", "7 (4, 3)"), ("fig10", "SRSVM")]:
        again = run_table(find_table("srsvm", name), tmp_path, options)
        assert again.n_computed == 0 and again.n_cached == 10
        body = again.paths[0].read_text()
        assert expected in body and "hepatitis" in body
    assert (tmp_path / "srsvm_fig10.png").stat().st_size > 5_000
    assert run_table(find_table("srsvm", "V"), tmp_path, options).n_computed == 0


def test_uci_sets_chosen_by_name_run_under_quick_and_the_others_are_noted():
    plan = find_table("srsvm", "V").plan(Options(quick=True, extra={"datasets": ["WDBC"]}))
    assert {c.key.dataset for c in plan.cells} == {"wdbc"}  # 569 points: too large for --quick
    assert plan.skipped == {} and plan.notes[0].startswith("Not selected (--datasets): automob")
    default = find_table("srsvm", "V").plan(Options(quick=True))
    assert "wdbc" not in {c.key.dataset for c in default.cells} and "wdbc" in default.skipped


def test_fig9_plan_and_run(tmp_path):
    table = find_table("srsvm", "fig9")
    quick = table.plan(Options(quick=True))
    assert {c.key.dataset for c in quick.cells} == {"COIL-20 G9/P63"}
    assert "USPS 10%" in quick.skipped and "COIL-20 G18/P54" in quick.skipped
    full = table.plan(Options())
    assert {c.key.method for c in full.cells if c.key.dataset == "USPS 10%"} == {
        "SVM",
        "EKM",
        "LapSVM",
        "SRSVM",
    }
    assert "EKM" not in {c.key.method for c in full.cells if c.key.dataset == "USPS 30%"}
    # LapSVM on COIL-20 G9: 6 images per object in a CV fold, fewer than the graph's
    # 6 neighbours + 1, so the graphs use fewer neighbours
    methods = ["LapSVM", "SRSVM"]
    extra = {"settings": ["COIL-20 G9/P63"], "methods": methods, "grid": TINY_GRID}
    run = run_table(table, tmp_path, Options(quick=True, draws=1, extra=extra))
    assert run.n_computed == 2
    assert all(85 <= r["test_acc"] <= 100 for r in run.results.values())
    assert "COIL-20 G9/P63" in run.paths[0].read_text()
    assert run.paths[-1].suffix == ".png"
