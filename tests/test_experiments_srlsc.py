"""S-RLSC paper reproduction (Fan et al. 2011) on the experiment engine, on tiny settings."""

import csv

import numpy as np
import pytest

from structreg.experiments import Options, find_table, run_table
from structreg.experiments.srlsc import (
    _PATH_CACHES,
    METHODS,
    TABLES,
    _estimator,
    _fit_on_x1,
    _l1_graph_of,
    cached_l1_graph,
    labeled_points,
    usps_subset,
)
from structreg.models import LapRLSC, SparseRLSC
from structreg.models._base import UNLABELED

pytest.importorskip("matplotlib")

TINY = {"per_class": 30, "m_values": [3, 5], "l1_mode": "lasso", "src_max_points": 15}


def test_tables_registered_with_aliases():
    assert [t.name for t in TABLES] == ["fig7", "4"]
    for name in ("fig7", "7", "curve", "Fig. 7"):
        assert find_table("srlsc", name).name == "fig7"
    assert find_table("srlsc", "table 4").name == "4"


def test_usps_tables_end_to_end(tmp_path):
    out = tmp_path / "out"
    options = Options(draws=2, extra={**TINY, "cache_dir": str(tmp_path / "cache")})
    fig7, table4 = TABLES
    run = run_table(fig7, out, options)
    assert run.n_computed == 2 * 2 * len(METHODS) and run.n_cached == 0
    md, csv_path, png = run.paths
    assert md.name == "srlsc_fig7.md" and png.stat().st_size > 10_000
    text = md.read_text()
    assert "Extended Yale B" in text and "Not run" in text and "m = 5" in text
    with open(csv_path) as fh:
        rows = [r for r in csv.DictReader(fh) if r["method"]]
    assert len(rows) == 2 * len(METHODS)
    for r in rows:  # 10 classes: chance is 10 %
        assert r["n_splits"] == "2" and 25 < float(r["mean"]) <= 100, r
    # the l1-graph was computed once, in the cache folder
    assert len(list((tmp_path / "cache").glob("l1graph_usps_30pc_lasso_*.npz"))) == 1

    # Table 4 reads the same cells: nothing new to compute; the paper's values are printed
    run4 = run_table(table4, out, options)
    assert run4.n_computed == 0 and run4.n_cached == 2 * len(METHODS)  # only m = 5
    text4 = run4.paths[0].read_text()
    assert run4.paths[0].name == "srlsc_4.md" and "72.63" in text4 and "m = 5" in text4
    assert "m = 3" not in text4 and "MIT CBCL" in text4
    # a second run of the same table on the same folder computes nothing
    assert run_table(fig7, out, options).n_computed == 0


def test_shared_estimators_equal_the_plain_ones(tmp_path):
    X1, y1, _, _ = usps_subset(12)
    A, _, _, computed = cached_l1_graph(X1, 12, "lasso", tmp_path)
    assert computed and not cached_l1_graph(X1, 12, "lasso", tmp_path)[3]  # read back
    y_semi = np.full(len(y1), UNLABELED)
    maps = []
    for draw in (0, 1):  # the second draw reuses the feature map and the kNN Laplacian
        lab = labeled_points(y1, 2, draw)
        y_semi[:] = UNLABELED
        y_semi[lab] = y1[lab]
        srlsc = _estimator("S-RLSC", len(lab), len(y1), _l1_graph_of(12, "lasso", str(tmp_path)))
        lap = _estimator("LapRLSC", len(lab), len(y1))
        assert type(srlsc) is SparseRLSC and type(lap) is LapRLSC  # plain estimators
        assert srlsc.graph is A or (srlsc.graph != A).nnz == 0  # the cached l1-graph
        plain = SparseRLSC(gamma_A=srlsc.gamma_A, gamma_I=srlsc.gamma_I, gamma=4.0, graph=A)
        plain_lap = LapRLSC(gamma=4.0, gamma_A=lap.gamma_A, gamma_I=lap.gamma_I, n_neighbors=7)
        for est, ref in ((srlsc, plain), (lap, plain_lap)):
            fitted = _fit_on_x1(est, 12, y_semi)
            ref.fit(X1, y_semi)
            np.testing.assert_allclose(
                fitted.decision_function(X1[:20]),
                ref.decision_function(X1[:20]),
                rtol=1e-7,
                atol=1e-9,
            )
            np.testing.assert_array_equal(fitted.transduction_, ref.transduction_)
            maps.append(fitted.feature_map_)
    # one kernel map (both methods, both draws) and one Laplacian; nothing label-dependent
    assert all(fm is maps[0] for fm in maps)
    kinds = sorted(k[0] for k in _PATH_CACHES[12])  # no label work; the design's own entry
    assert kinds == ["design", "feature_map", "penalty"]


def test_labeled_points_nested_and_per_class():
    y = np.repeat(np.arange(3), 10)
    small, large = labeled_points(y, 2, 0), labeled_points(y, 5, 0)
    assert set(small) <= set(large) and np.bincount(y[large]).tolist() == [5, 5, 5]
    assert not np.array_equal(labeled_points(y, 5, 1), large)


def test_bad_settings_are_rejected():
    with pytest.raises(ValueError, match="m must be below"):
        TABLES[0].plan(Options(extra={"per_class": 30, "m_values": [40], "l1_mode": "lasso"}))
    with pytest.raises(ValueError, match="l1_mode"):
        TABLES[0].plan(Options(extra={"l1_mode": "fast"}))


def test_usps_not_requested_is_listed(tmp_path):
    plan = TABLES[1].plan(Options(extra={"datasets": ["wdbc"]}))
    assert plan.cells == [] and plan.skipped["USPS"] == "not run: not requested"
    paths = TABLES[1].report(plan, {}, tmp_path, Options())
    assert "USPS: not run: not requested" in paths[0].read_text()
