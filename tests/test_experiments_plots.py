"""The shared boundary figure of the reproductions."""

import numpy as np
import pytest
from sklearn.datasets import make_moons
from sklearn.svm import SVC

pytest.importorskip("matplotlib")

from structreg.experiments.plots import boundary_figure  # noqa: E402


def test_boundary_figure_draws_stored_decision_values_like_the_classifier(tmp_path):
    X, y = make_moons(40, noise=0.1, random_state=0)
    clf = SVC(gamma=2.0).fit(X, y)
    lo, hi = X.min(0) - 0.3, X.max(0) + 0.3  # the figure's own grid for a classifier
    gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], 150), np.linspace(lo[1], hi[1], 150))
    F = clf.decision_function(np.c_[gx.ravel(), gy.ravel()]).reshape(gx.shape)
    stored = {"lo": lo.tolist(), "hi": hi.tolist(), "values": F.tolist()}
    paths = []
    for name, source in (
        ("fitted", clf),
        ("stored", stored),
        ("flipped", {**stored, "values": (-F).tolist()}),
    ):
        paths.append(tmp_path / f"{name}.png")
        boundary_figure(
            paths[-1],
            {("SVM", 0): (source, X, y, None, None)},
            rows=["set"],
            cols=["SVM"],
            title="t",
        )
    fitted, same, flipped = (p.read_bytes() for p in paths)
    assert same == fitted and flipped != fitted
