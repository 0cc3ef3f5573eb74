"""DRLSC paper reproduction (structreg.experiments.drlsc) through the experiment engine."""

import csv
import warnings

import numpy as np
import pytest

from structreg.exceptions import NonConvexObjectiveWarning
from structreg.experiments import Options, find_table, run_table
from structreg.experiments import drlsc as D

# the protocol's fuzzy c-means on small folds may stop at max_iter (it says so)
pytestmark = [
    pytest.mark.filterwarnings(
        "ignore:fuzzy c-means did not converge:sklearn.exceptions.ConvergenceWarning"
    ),
]


def test_tables_and_aliases():
    assert [t.name for t in D.TABLES] == ["4-5", "6", "7", "8", "9", "10", "11", "12"]
    assert find_table("drlsc", "toy").name == "4-5" and find_table("drlsc", "fig1").name == "4-5"
    assert find_table("drlsc", "Table 5").name == "4-5"
    assert find_table("drlsc", "7").name == "7"


CASES = {
    "RN": [dict(sigma=2.0, gamma_A=2.0**-5), dict(sigma=8.0, gamma_A=2.0**3)],
    "GRBFN": [dict(sigma=2.0, gamma_A=2.0**-5, n_centers=7, random_state=3)],
    "SVM": [dict(sigma=2.0, C=2.0), dict(sigma=4.0, C=2.0**6)],
    "LS-SVM": [dict(sigma=2.0, C=8.0), dict(sigma=8.0, C=0.25)],
    "MR": [
        dict(sigma=2.0, gamma_A=2.0**-5, gamma_I=2.0**3, k=5),
        dict(sigma=1.0, gamma_A=0.5, gamma_I=2.0**8, k=8),
    ],
    "DRGV": [dict(sigma=2.0, eta=0.9), dict(sigma=4.0, eta=0.3)],
    "DRLSC": [
        dict(sigma=2.0, eta=0.9, k=5),
        dict(sigma=8.0, eta=0.5, k=3),
        dict(sigma=1.0, eta=1.0, k=3),
    ],
}


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
@pytest.mark.parametrize("method", list(CASES))
def test_fold_evaluators_reproduce_the_estimators(method, kernel):
    """The shared-work fold evaluators give the estimators' own decision values."""
    if kernel == "linear" and method not in D.LINEAR_METHODS:
        pytest.skip("RBF-only method")
    Xtr, ytr, _, _ = D.train_test("Wine", 0)
    (train, test), *_ = D.cv_folds(ytr, 3, seed=0)
    evaluator = D.FoldEvaluator(method, kernel, Xtr, ytr, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonConvexObjectiveWarning)
        outs = [evaluator.decisions([c], train, test)[0] for c in CASES[method]]
        hits = evaluator(CASES[method], train, test)
        for params, F, h in zip(CASES[method], outs, hits, strict=True):
            est = D.make_estimator(method, kernel, params, 3).fit(Xtr[train], ytr[train])
            np.testing.assert_allclose(F, est.decision_function(Xtr[test]), rtol=1e-6, atol=1e-6)
            assert h == np.sum(est.predict(Xtr[test]) == ytr[test])


def test_data_versions_and_splits():
    X, y = D.load_uci("Ecoli")
    assert X.shape == (332, 7) and len(np.unique(y)) == 6
    assert D.load_uci("Dermatology")[0].shape == (366, 33)
    X, y = D.load_uci("Lenses")
    assert X.shape == (24, 4) and set(np.unique(X)) <= {1.0, 2.0, 3.0}
    Xtr, ytr, Xte, yte = D.train_test("Iris", 3)
    assert len(ytr) == len(yte) == 75 and np.all(np.bincount(ytr) == 25)
    np.testing.assert_allclose(Xtr.mean(0), 0, atol=1e-12)
    plan = D.TABLES[2].plan(Options(draws=1, extra={"datasets": ["water", "diabetes", "iris"]}))
    assert set(plan.skipped) == {"Water", "Diabetes"} and {c.key.dataset for c in plan.cells} == {
        "Iris"
    }
    Xtr, ytr, Xte, yte = D.train_test("usps:2v3:G10", 0)
    assert Xtr.shape == (20, 256) and len(yte) == 2180 and Xtr.max() <= 1
    assert D.neighbour_list(1) == [1] and D.neighbour_list(6) == [2, 3, 5, 6]


def test_table7_end_to_end_and_resume(tmp_path):
    extra = {
        "datasets": ["Water", "Lenses", "Wine"],
        "grid": "quick",
        "methods": ["SVM", "DRLSC"],
    }
    options = Options(draws=2, extra=extra)
    table = find_table("drlsc", "7")
    run = run_table(table, tmp_path, options)
    assert run.n_computed == 2 * 2 * 2 and run.paths[0].name == "drlsc_7.md"
    text = run.paths[0].read_text()
    assert "| Lenses |" in text and "87.69" in text and "(97.56" in text  # paper values
    assert "- Water: not among structreg's data sets" in text  # skipped with the reason
    assert "Lenses: 24 x 4" in text
    with open(run.paths[1]) as fh:
        rows = list(csv.DictReader(fh))
    accs = [float(r["mean"]) for r in rows if r["mean"]]
    assert len(accs) == 4 and all(0 <= a <= 100 for a in accs)
    assert min(float(r["mean"]) for r in rows if r["data_set"] == "Wine") > 85
    again = run_table(table, tmp_path, options)
    assert again.n_computed == 0 and again.paths[0].read_text() == text


def test_toy_tables_and_figure(tmp_path):
    options = Options(quick=True, draws=1, extra={"methods": ["RN", "DRLSC"]})
    run = run_table(find_table("drlsc", "toy"), tmp_path, options)
    assert run.n_computed == 6
    md, *rest = run.paths
    text = md.read_text()
    assert md.name == "drlsc_4-5.md" and "Table 5: test accuracy" in text and "k=10" in text
    test_acc = {k.dataset: r["test_acc"] for k, r in run.results.items()}
    assert test_acc["moons:A"] == 100.0
    png = [p for p in rest if p.suffix == ".png"][0].read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def test_image_tables(tmp_path):
    ar = run_table(find_table("drlsc", "8"), tmp_path, Options())
    text = ar.paths[0].read_text()
    assert ar.n_computed == 0 and "74.27" in text and "AR face database is not among" in text
    options = Options(quick=True, extra={"rows": ["2 vs. 3"], "methods": ["RN", "DRLSC"]})
    run = run_table(find_table("drlsc", "10"), tmp_path, options)
    text = run.paths[0].read_text()
    assert run.n_computed == 2 and "| 2 vs. 3 |" in text and "96.79" in text
    assert all(r["test_acc"] > 80 for r in run.results.values())
