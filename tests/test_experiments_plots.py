"""The shared boundary figure of the reproductions."""

import numpy as np
import pytest
from sklearn.datasets import make_moons
from sklearn.svm import SVC

pytest.importorskip("matplotlib")

from structreg.experiments.plots import boundary_figure, decision_grid  # noqa: E402


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


def test_decision_grid_spans_the_points_plus_the_margin():
    X, y = make_moons(40, noise=0.1, random_state=0)
    clf = SVC(gamma=2.0).fit(X, y)
    grid = decision_grid(clf, X, 0.5, 7)
    lo, hi = X.min(0) - 0.5, X.max(0) + 0.5
    assert grid["lo"] == lo.tolist() and grid["hi"] == hi.tolist()
    assert grid["values"].shape == (7, 7)
    # row i is the i-th of 7 steps from lo to hi in the second coordinate, column j in the first
    point = [np.linspace(lo[0], hi[0], 7)[3], np.linspace(lo[1], hi[1], 7)[5]]
    np.testing.assert_allclose(grid["values"][5, 3], clf.decision_function([point])[0])
