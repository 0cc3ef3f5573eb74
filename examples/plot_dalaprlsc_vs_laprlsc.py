"""
=============================================
DALapRLSC vs LapRLSC on two overlapping blobs
=============================================

Laplacian RLSC smooths its decision function along every edge of a kNN graph, including the
edges that cross from one class to the other where the classes touch. Discrimination-aware
LapRLSC (:class:`~structreg.DALapRLSC`, Wang et al.) first clusters all points (fuzzy
c-means, one cluster per class) and turns some of those crossing edges into *signed* edges
that push the two outputs apart instead of together:

.. math::

    f^\\top L_D f = \\frac12 \\sum_{ij} W_{ij} (f_i - S_{ij} f_j)^2 ,
    \\qquad S_{ij} \\in \\{+1, -1\\},

with :math:`S_{ij} = -1` for an edge whose ends are in different clusters (or carry
different labels) and are both reliable enough. With ``reliability="auto"`` an unlabeled
point's reliability is the share of its edge weight that stays inside its own cluster, so
only edges across a fairly clean cluster boundary get signed.

The data here are two overlapping Gaussian blobs, one per class, with two labeled points per
class: the clusters match the classes, but the kNN graph links the classes through the
overlap. The figure shows the clusters and the signed edges, then both decision boundaries.
"""

# %%
# Data and fits
# -------------
# Both models use their default parameters; DALapRLSC's fuzzy c-means is seeded with
# ``random_state`` so that the example is deterministic. The draw shown (seed 4) is one where
# the difference is clear; the ten-draw summary at the end is the fair comparison.

import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_blobs

from structreg import UNLABELED, DALapRLSC, LapRLSC


def draw(seed):
    X, y = make_blobs(300, centers=[[0.0, 0.0], [2.5, 0.0]], cluster_std=1.0, random_state=seed)
    rng = np.random.default_rng(seed)
    labeled = np.concatenate([rng.choice(np.flatnonzero(y == c), 2, replace=False) for c in (0, 1)])
    y_semi = np.full_like(y, UNLABELED)
    y_semi[labeled] = y[labeled]
    return X, y, y_semi


X, y, y_semi = draw(seed=4)
unlabeled = y_semi == UNLABELED
start = time.perf_counter()
lap = LapRLSC().fit(X, y_semi)
lap_time = time.perf_counter() - start
start = time.perf_counter()
dalap = DALapRLSC(random_state=0).fit(X, y_semi)
dalap_time = time.perf_counter() - start
lap_acc = lap.score(X[unlabeled], y[unlabeled])
dalap_acc = dalap.score(X[unlabeled], y[unlabeled])
print(f"LapRLSC   accuracy on the unlabeled points {lap_acc:.3f} (fit {lap_time * 1e3:.0f} ms)")
print(f"DALapRLSC accuracy on the unlabeled points {dalap_acc:.3f} (fit {dalap_time * 1e3:.0f} ms)")

# %%
# The signed edges
# ----------------
# ``penalty_matrix`` rebuilds the fitted penalty :math:`\gamma_D / n^2 \, L_D`. Its
# off-diagonal entries are :math:`-W_{ij} S_{ij}`, so the positive ones are the signed edges.

M = dalap.penalty_matrix(X, y_semi).tocoo()
signed = (M.row < M.col) & (M.data > 0)
print(f"signed edges: {int(signed.sum())} of {int(((M.row < M.col) & (M.data != 0)).sum())}")

xx, yy = np.meshgrid(np.linspace(-3.5, 6.0, 190), np.linspace(-3.5, 3.5, 140))
grid = np.c_[xx.ravel(), yy.ravel()]
fig, axes = plt.subplots(1, 3, figsize=(15, 4.6), sharex=True, sharey=True)
ax = axes[0]
for i, j in zip(M.row[signed], M.col[signed], strict=True):
    ax.plot(*X[[i, j]].T, color="k", lw=0.8)
ax.scatter(*X.T, c=dalap.cluster_labels_, cmap="PiYG", s=12, edgecolors="none")
ax.set_title("fuzzy c-means clusters and the signed edges (black)")
for ax, model, name, acc in [
    (axes[1], lap, "LapRLSC", lap_acc),
    (axes[2], dalap, "DALapRLSC", dalap_acc),
]:
    f = model.decision_function(grid).reshape(xx.shape)
    ax.contourf(xx, yy, f > 0, levels=[-0.5, 0.5, 1.5], colors=["#c6dbef", "#fcbba1"])
    ax.contour(xx, yy, f, levels=[0.0], colors="k", linewidths=1.5)
    ax.scatter(*X[unlabeled].T, c=y[unlabeled], cmap="coolwarm", s=8, edgecolors="none")
    ax.set_title(f"{name}: {acc:.1%} of the unlabeled points")
for ax in axes:
    ax.scatter(*X[~unlabeled].T, c=y[~unlabeled], cmap="coolwarm", s=150, marker="*", ec="k")
    ax.set_xlabel("$x_1$")
axes[0].set_ylabel("$x_2$")
fig.tight_layout()

# %%
# Over ten draws
# --------------
# The gain depends on the draw and is a couple of points on average here: DALapRLSC was
# ahead on 9 of the 10 draws when this example was written. Where clusters do not follow the
# classes (two moons, for instance) the clustering can mislead it instead; see the user
# guide's page on defaults.

scores = []
for seed in range(10):
    X, y, y_semi = draw(seed)
    unlabeled = y_semi == UNLABELED
    scores.append(
        [
            LapRLSC().fit(X, y_semi).score(X[unlabeled], y[unlabeled]),
            DALapRLSC(random_state=0).fit(X, y_semi).score(X[unlabeled], y[unlabeled]),
        ]
    )
scores = np.array(scores)
print(
    f"mean accuracy over 10 draws: LapRLSC {scores[:, 0].mean():.3f}, "
    f"DALapRLSC {scores[:, 1].mean():.3f}"
)
print(
    f"DALapRLSC ahead on {int((scores[:, 1] > scores[:, 0]).sum())}, "
    f"tied on {int((scores[:, 1] == scores[:, 0]).sum())}, "
    f"behind on {int((scores[:, 1] < scores[:, 0]).sum())} of 10 draws"
)

plt.show()
