"""
===================================================
The l1-graph of S-RLSC on a few hundred USPS digits
===================================================

Sparse-representation RLSC (:class:`~structreg.SparseRLSC`, Fan, Gu, Qiao & Zhang 2011)
replaces the k-nearest-neighbour graph of Laplacian RLSC by an *l1-graph*: every sample
(scaled to unit norm) is written as a sparse combination of the other samples plus a sparse
error,

.. math::

    \\min_{a, e} \\|a\\|_1 + \\|e\\|_1 \\quad \\text{s.t.} \\quad
    x_i = \\sum_{j \\ne i} a_j x_j + e ,

and the classifier then asks each output to be reconstructed by the same coefficients,
with the penalty :math:`f^\\top (I - A)^\\top (I - A) f`. Nobody chooses a neighbourhood size:
the l1 norm picks how many samples, and which, take part in each code.

This example computes the l1-graph of 300 USPS digits with
:func:`structreg.structure.l1graph.l1_graph` and shows, for a few query digits, the digits
with the largest coefficients in their codes.
"""

# %%
# The digits
# ----------
# 30 random digits of each class, grey levels scaled to [0, 1].

import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.neighbors import NearestNeighbors

from structreg.datasets import load_dataset
from structreg.structure.l1graph import l1_graph

X, y = load_dataset("usps", return_X_y=True)
rng = np.random.default_rng(0)
keep = np.concatenate([rng.choice(np.flatnonzero(y == c), 30, replace=False) for c in np.unique(y)])
X, y = X[np.sort(keep)] / 255.0, y[np.sort(keep)]
print(f"{X.shape[0]} digits of {X.shape[1]} pixels")

# %%
# Exact and fast l1-graphs
# ------------------------
# ``mode="exact"`` solves the linear program above for every point (certified optimum over
# all other points); ``mode="lasso"`` is the fast approximation: a lasso over the
# ``n_candidates`` nearest points only. We compare both with the plain kNN graph by how
# often the strongest neighbours of a digit show the same digit.

graphs = {}
for mode in ("exact", "lasso"):
    start = time.perf_counter()
    graphs[mode] = l1_graph(X, mode=mode, n_jobs=2)
    elapsed = time.perf_counter() - start
    A = graphs[mode]
    print(
        f"l1-graph ({mode}): {elapsed:.1f} s, {A.nnz / len(y):.1f} nonzero coefficients per digit"
    )


def same_class_rate(order, k, valid=None):
    """Share of the (up to) k first neighbours in ``order`` (one row per digit) that show the
    same digit; ``valid`` masks out entries of ``order`` that are not neighbours at all."""
    same = y[order[:, :k]] == y[:, None]
    if valid is None:
        return same.mean()
    return same[valid[:, :k]].mean()


unit = X / np.linalg.norm(X, axis=1, keepdims=True)
knn_order = NearestNeighbors(n_neighbors=6).fit(unit).kneighbors(unit, return_distance=False)[:, 1:]
print("share of neighbours showing the same digit:  top-1   top-5")
for mode, A in graphs.items():
    weights = np.abs(A.toarray())
    order = np.argsort(-weights, axis=1)
    nonzero = np.take_along_axis(weights, order, axis=1) > 0  # a code may have < 5 terms
    print(
        f"  l1-graph ({mode:5s}), largest |a_j|:       {same_class_rate(order, 1, nonzero):.3f}   "
        f"{same_class_rate(order, 5, nonzero):.3f}"
    )
print(
    f"  kNN (cosine), nearest:                {same_class_rate(knn_order, 1):.3f}   "
    f"{same_class_rate(knn_order, 5):.3f}"
)

# %%
# On these 300 digits the strongest l1 neighbour shows the same digit a little less often
# than the nearest neighbour does, and further down the code the l1-graph mixes classes more
# than the kNN graph: a sparse code also recruits digits of other classes that share strokes
# with the query. The exact codes' strongest neighbour is right more often than the fast
# lasso codes' one.
#
# A few codes
# -----------
# Each row shows a query digit, then the six digits with the largest coefficients
# :math:`|a_j|` in its exact code (green frame: same digit, red: another one; a code with
# fewer nonzero coefficients leaves the rest of its row empty). Coefficients can be
# negative: the code subtracts strokes as well as adding them.

A = graphs["exact"].toarray()
queries = [int(np.flatnonzero(y == digit)[0]) for digit in ("0", "3", "4", "8", "9")]
fig, axes = plt.subplots(len(queries), 7, figsize=(9, 7))
for row, query in enumerate(queries):
    order = np.argsort(-np.abs(A[query]))[:6]
    order = order[A[query, order] != 0]  # some codes use fewer than six digits
    for ax in axes[row, 1 + len(order) :]:
        ax.set_axis_off()
    axes[row, 0].imshow(X[query].reshape(16, 16), cmap="gray_r")
    axes[row, 0].set_title(f"query '{y[query]}'", fontsize=9)
    for col, j in enumerate(order, start=1):
        ax = axes[row, col]
        ax.imshow(X[j].reshape(16, 16), cmap="gray_r")
        ax.set_title(f"a = {A[query, j]:+.2f}", fontsize=9)
        colour = "tab:green" if y[j] == y[query] else "tab:red"
        for spine in ax.spines.values():
            spine.set_edgecolor(colour)
            spine.set_linewidth(3)
for ax in axes.ravel():
    ax.set_xticks([])
    ax.set_yticks([])
fig.suptitle("Exact l1-graph: each query digit and its six largest reconstruction weights")
fig.tight_layout()

plt.show()
