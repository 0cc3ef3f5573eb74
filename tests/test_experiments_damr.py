"""The DAMR reproduction (structreg.experiments.damr) on the experiment engine, tiny settings."""

import csv

import numpy as np
import pytest

from structreg.clustering import FuzzyCMeans
from structreg.experiments import Options, find_table, run_table
from structreg.experiments.damr import (
    METHODS,
    TABLE2,
    TABLE3,
    TABLE4,
    TABLE5,
    TABLES,
    _half_split,
    _pick_labeled,
    _transductive_fold_eval,
    load_table2_dataset,
    make_estimator,
    search_axes,
)
from structreg.structure.graphs import knn_graph


@pytest.mark.parametrize(
    "name, n, paper_note",
    [
        ("Austra", 690, "15 dimensions"),
        ("German", 1000, "24"),
        ("Heart", 270, "9 dimensions"),
        ("Horse", 368, "366 x 27"),
    ],
)
def test_shipped_credit_and_medical_sets_are_the_papers_sets(name, n, paper_note):
    """The four Table-2 sets shipped later load as two-class problems of the shipped size, and
    the description says how they differ from the paper's version."""
    X, y, how = load_table2_dataset(name)
    assert X.shape[0] == len(y) == n and set(np.unique(y)) == {0, 1}
    assert np.isfinite(X).all()  # horse's missing cells are imputed
    assert paper_note in how


def _csv(path):
    with open(path) as fh:
        return list(csv.DictReader(fh))


def test_tables_end_to_end_and_resume(tmp_path):
    options = Options(draws=2, extra={"datasets": ["wdbc", "Sonar"]})
    t3, t4, t5 = TABLES
    run3 = run_table(t3, tmp_path, options)
    assert run3.n_computed == 4 and [p.name for p in run3.paths] == ["damr_3.md", "damr_3.csv"]
    md = run3.paths[0].read_text()
    # the paper's values sit beside the reproduced ones; every Table-2 set is accounted for
    assert "(67.33, " in md and "62.81 ± 0.00" in md and "Table 3" in md
    assert "- Pima: not run: not requested" in md
    for name in ("Biomed", "Ethn", "Isolet"):  # not among the shipped data sets
        assert f"- {name}: skipped: not among structreg's data sets" in md
    rows = [r for r in _csv(run3.paths[1]) if r["method"]]
    assert len(rows) == 2 * len(METHODS)
    wdbc = {r["method"]: float(r["mean"]) for r in rows if r["data_set"] == "Wdbc"}
    # Wdbc is easy: the graph methods are far better than chance even with 10 labels
    assert all(wdbc[m] > 75 for m in ("Lap_RLSC", "SSDR [16] (Wu)", "DA_LapRLSC"))
    assert all(0 <= float(r["mean"]) <= 100 for r in rows)

    # Table 4 with the coarse-to-fine grid on one set and one repetition
    opt4 = Options(draws=1, extra={"datasets": ["sonar"], "grid": "coarse"})
    run4 = run_table(t4, tmp_path, opt4)
    assert run4.n_computed == 1
    (result,) = run4.results.values()
    assert result["n_labeled"] == 100 and set(result["params"]) == set(METHODS)
    assert result["params"]["DA_LapRLSC"]["reliability"] in (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
    assert 0 < result["n_evaluated"]["DA_LapRLSC"] < 150  # fewer than the full grid
    md4 = run4.paths[0].read_text()
    assert "(77.73, " in md4 and "coarse-to-fine" in md4 and "Chosen parameters" in md4

    # Table 5 reads the cells of Tables 3 and 4: nothing new to compute
    run5 = run_table(t5, tmp_path, Options(draws=1, extra=opt4.extra))
    assert run5.n_computed == 0 and run5.n_cached == 2
    md5 = run5.paths[0].read_text()
    assert "(0.2527 ± 0.0031)" in md5 and "100 labeled points" in md5
    times = [r for r in _csv(run5.paths[1]) if r["method"]]
    assert all(float(r["fit_s_mean"]) > 0 for r in times)
    # a second run on the same folder computes nothing
    assert run_table(t3, tmp_path, options).n_computed == 0


def _sonar_with_graph_and_clusters():
    """Sonar's first training half with 30 labels, its 10-NN heat graph and 2 FCM clusters."""
    Xtr, _, ytr, _ = _half_split("Sonar", 0)
    labeled = _pick_labeled(ytr, 30, np.random.default_rng(0))
    y_semi = np.full_like(ytr, -1)
    y_semi[labeled] = ytr[labeled]
    graph = knn_graph(Xtr, 10, weights="heat")
    clusters = FuzzyCMeans(n_clusters=2, random_state=3).fit_predict(Xtr)
    return Xtr, y_semi, labeled, graph, clusters


def test_shared_graph_and_clusters_give_the_plain_fits():
    Xtr, y_semi, labeled, graph, clusters = _sonar_with_graph_and_clusters()
    params = {"gamma_A": 0.1, "gamma_I": 10.0}
    for method, p in [
        ("LapRLSC", params),
        ("SSDR_Wu", {**params, "eta": 0.4}),
        ("DA_LapRLSC", {"gamma_A": 0.1, "gamma_D": 10.0, "reliability": 0.8}),
    ]:
        l_ = {"n_labeled": int(np.sum(y_semi != -1)), "n_samples": len(Xtr)}
        shared = make_estimator(method, 3, graph=graph, clusters=clusters, **l_, **p)
        shared.fit(Xtr, y_semi)
        plain = make_estimator(method, 3, **l_, **p).fit(Xtr, y_semi)
        np.testing.assert_allclose(
            shared.decision_function(Xtr), plain.decision_function(Xtr), rtol=1e-9, atol=1e-12
        )


def test_reference_tables_and_search_spaces():
    for table in (TABLE3, TABLE4, TABLE5):
        assert list(table) == list(TABLE2)
        assert all(set(row) == set(METHODS) for row in table.values())
    assert TABLE3["Isolet"]["DA_LapRLSC"] == (94.13, 0.10)
    assert TABLE4["Vehicle"]["SSDR_Wu"] == (81.11, 0.09)
    assert TABLE5["Ethn"]["SSDR_Wang"] == (541.8539, 21.3753)
    axes, refine = search_axes("DA_LapRLSC", "paper")
    assert not refine and np.prod([len(a.values) for a in axes]) == 150
    assert [a.coarse_indices() for a in axes] == [list(range(5)), list(range(5)), list(range(6))]
    axes, refine = search_axes("SSDR_Wu", "coarse")
    assert refine and axes[2].values == (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
    assert [axes[0].values[i] for i in axes[0].coarse_indices()] == [0.01, 1.0, 100.0]
    with pytest.raises(ValueError, match="grid"):
        search_axes("LapRLSC", "fine")
    assert [t.name for t in TABLES] == ["3", "4", "5"] and find_table("damr", "Table 5").name == "5"


def test_labeled_points_cover_every_class():
    y = np.r_[np.zeros(95, int), np.ones(5, int)]
    for seed in range(20):
        picked = _pick_labeled(y, 3, np.random.default_rng(seed))
        assert len(picked) == len(set(picked)) == 3 and set(y[picked]) == {0, 1}
    assert len(_pick_labeled(y, 500, np.random.default_rng(0))) == 100


def test_unknown_dataset_and_grid_are_rejected():
    with pytest.raises(ValueError, match="Table 2"):
        TABLES[0].plan(Options(extra={"datasets": ["iris"]}))
    with pytest.raises(ValueError, match="grid"):
        TABLES[1].plan(Options(extra={"grid": "fine"}))


def test_transductive_fold_evaluator_scores_the_plain_fits():
    Xtr, y_semi, labeled, graph, clusters = _sonar_with_graph_and_clusters()
    test, train = labeled[::3], np.setdiff1d(labeled, labeled[::3])
    y_fold = y_semi.copy()
    y_fold[test] = -1
    for method in METHODS:
        axes, _ = search_axes(method, "coarse")
        grid = [
            {a.name: a.values[i] for a, i in zip(axes, idx, strict=True)}
            for idx in np.ndindex(*(len(a.values) for a in axes))
        ][::11]
        fold_eval = _transductive_fold_eval(method, 3, Xtr, y_semi, graph, clusters)
        hits = fold_eval(grid[:2], train, test) + fold_eval(grid[2:], train, test)
        plain = []
        for p in grid:
            sizes = {"n_labeled": int(np.sum(y_semi != -1)), "n_samples": len(Xtr)}
            est = make_estimator(method, 3, **sizes, **p)
            est.fit(Xtr, y_fold)
            plain.append(float(np.sum(est.transduction_[test] == y_semi[test])))
        assert hits == plain, method
