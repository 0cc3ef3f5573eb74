"""DRLSC paper reproductions (Xue, Chen & Yang 2009)."""

import csv

import numpy as np
import pytest

from structreg.experiments.toys import drlsc_toy

pytest.importorskip("matplotlib")


def test_drlsc_toy_quick(tmp_path):
    acc = drlsc_toy(tmp_path, n_draws=1, quick=True)
    for part in ("train", "test"):
        for method in ("RN", "DRGV", "DRLSC"):
            values = acc[part][method]
            assert values.shape == (1, 3) and np.all((values >= 0) & (values <= 100))
    # the easy set is solved by every method
    assert all(acc["test"][m][0, 0] >= 95 for m in acc["test"])
    with open(tmp_path / "drlsc_toy.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 18 and {r["paper"] for r in rows} >= {"100.0", "93.0"}
    text = (tmp_path / "drlsc_toy.md").read_text()
    assert "Table 5 (test accuracy, %)" in text and "| DRLSC |" in text
    png = (tmp_path / "drlsc_toy_fig1.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
