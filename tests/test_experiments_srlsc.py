"""S-RLSC paper reproduction (Fan et al. 2011)."""

import pytest

pytest.importorskip("matplotlib")


def test_srlsc_usps_tiny(tmp_path):
    from structreg.experiments.srlsc import srlsc_usps

    res = srlsc_usps(
        tmp_path, m_values=(5,), n_draws=1, l1_mode="lasso", src_max_points=20, per_class=30
    )
    text = (tmp_path / "srlsc_usps.md").read_text()
    assert "Extended Yale B" in text and "skipped" in text.lower()
    assert "72.63" in text  # the paper's Table 4 value printed beside ours
    for part in ("unlabeled", "out_of_sample"):
        for method, acc in res[part].items():
            assert acc.shape == (1, 1)
            assert 30 < acc[0, 0] <= 100, (part, method)  # 10 classes: chance is 10 %
    assert (tmp_path / "srlsc_usps_fig7.png").stat().st_size > 10_000
    # the l1-graph is cached: a second run reads it instead of recomputing it
    assert len(list(tmp_path.glob("l1_graph_lasso_*.A.npz"))) == 1
