"""SRSVM paper reproductions (Xue, Chen & Yang 2011)."""

import numpy as np
import pytest

pytest.importorskip("matplotlib")


def test_srsvm_xor_and_timing_quick(tmp_path):
    from structreg.experiments.srsvm import uci_timing, xor_toy

    acc = xor_toy(tmp_path, fractions=(0.1,), n_draws=1, with_slmm=False)
    assert acc["SRSVM"][10].shape == (1, 2) and acc["SRSVM"][10][0, 1] > 80
    assert "| 10 |" in (tmp_path / "srsvm_xor.md").read_text()
    assert (tmp_path / "srsvm_xor_fig56.png").stat().st_size > 10_000
    res = uci_timing(tmp_path, repeats=1, with_socp=False)
    text = (tmp_path / "srsvm_timing.md").read_text()
    # data sets missing from the data home are listed, never dropped silently
    assert "hepatitis" in res["skipped"] and "hepatitis: not available" in text
    for r in res["results"].values():
        assert r["times"]["SRSVM"][0] > 0 and sum(r["clusters"]) >= 2


def test_bound_figure(tmp_path):
    from structreg.experiments.srsvm import bound_figure

    res = bound_figure(tmp_path, datasets=("sonar", "hepatitis"))
    assert "hepatitis" in res["skipped"]
    assert set(res["results"]["sonar"]) == {"SVM", "EKM", "LapSVM", "SRSVM"}
    assert all(0 < b < np.inf for b in res["results"]["sonar"].values())
    assert (tmp_path / "srsvm_bounds_fig10.png").stat().st_size > 5_000
