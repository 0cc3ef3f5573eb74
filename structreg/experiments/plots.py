"""Figures shared by the reproductions: decision boundaries of classifiers on 2-D data.

:func:`boundary_figure` draws the decision regions of fitted classifiers (or their stored
decision values) on 2-D data: the DRLSC two-moons toy (table ``4-5`` of
:mod:`structreg.experiments.drlsc`), Zhang et al.'s Fig. 2 (:mod:`structreg.experiments.dr`)
and the SRSVM XOR toy (Figs. 5-6, :mod:`structreg.experiments.srsvm`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .report import pyplot, save_figure


def decision_grid(clf, X: np.ndarray, margin: float, n: int) -> dict:
    """``clf``'s decision values on an ``n`` x ``n`` grid spanning ``X`` plus ``margin``, in
    the stored form :func:`boundary_figure` draws (``values`` an array here)."""
    lo, hi = X.min(axis=0) - margin, X.max(axis=0) + margin
    gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], n), np.linspace(lo[1], hi[1], n))
    F = clf.decision_function(np.c_[gx.ravel(), gy.ravel()]).reshape(gx.shape)
    return {"lo": lo.tolist(), "hi": hi.tolist(), "values": F}


def boundary_figure(
    path: Path, fitted: dict, *, rows: list[str], cols: list[str], title: str
) -> None:
    """Decision regions and boundaries in a ``rows`` x ``cols`` grid of panels, saved to ``path``.

    ``fitted[(col, row index)]`` is ``(clf, X_train, y_train, X_test, y_test)`` (test points
    may be None; classes 0 and 1): ``clf`` a fitted classifier, or its decision values stored
    as ``{"lo": [x, y], "hi": [x, y], "values": rows of the grid}`` (``y`` ascending by rows).
    """
    plt = pyplot()
    fig, axes = plt.subplots(
        len(rows), len(cols), figsize=(3.2 * len(cols), 3.0 * len(rows)), squeeze=False
    )
    for (name, s), (clf, Xtr, ytr, Xte, yte) in fitted.items():
        ax = axes[s, cols.index(name)]
        if not isinstance(clf, dict):  # a fitted classifier: its decision values on a grid
            clf = decision_grid(clf, Xtr if Xte is None else np.vstack([Xtr, Xte]), 0.3, 150)
        F, lo, hi = np.asarray(clf["values"]), clf["lo"], clf["hi"]
        gx, gy = np.meshgrid(
            np.linspace(lo[0], hi[0], F.shape[1]), np.linspace(lo[1], hi[1], F.shape[0])
        )
        ax.contourf(gx, gy, F > 0, levels=[-0.5, 0.5, 1.5], colors=["#dde8f5", "#f7e1d7"])
        ax.contour(gx, gy, F, levels=[0], colors="k", linewidths=1.2)
        for X_, y_, marker in ((Xtr, ytr, "."), (Xte, yte, "+")):
            if X_ is None:
                continue
            ax.scatter(X_[y_ == 0, 0], X_[y_ == 0, 1], marker=marker, s=18, c="tab:blue")
            ax.scatter(X_[y_ == 1, 0], X_[y_ == 1, 1], marker=marker, s=18, c="tab:red")
        ax.set_title(f"{name}, {rows[s]}", fontsize=9)
        ax.set(xticks=[], yticks=[])
    for (r, c), ax in np.ndenumerate(axes):
        ax.set_visible((cols[c], r) in fitted)  # panels without a fit stay blank
    fig.suptitle(title, fontsize=10)
    save_figure(fig, path, dpi=110)
