"""
=========================================================================
GFHF and Poisson learning side by side with scikit-learn's LabelSpreading
=========================================================================

Graph-based semi-supervised learning with very few labels, three ways on the same data and
the same labeled points:

* structreg's :class:`~structreg.GFHF` (the harmonic solution of Zhu, Ghahramani & Lafferty)
  and :class:`~structreg.PoissonLearning` (Calder et al.), at their defaults;
* scikit-learn's :class:`~sklearn.semi_supervised.LabelSpreading` with the same kind of
  graph (``kernel="knn", n_neighbors=10``), once at its defaults and once run until it
  converges (``alpha=0.99, max_iter=1000``);
* graphlearning's Laplace and Poisson learning, when the ``graphlearning`` package is
  installed (``pip install "structreg[bench]"``); without it their rows are left out.

All of them label every training point (they are *transductive*); GFHF and Poisson
learning also predict new points through their graph's neighbours.  The result tables are
pandas DataFrames (``pip install "structreg[pandas]"``).  The benchmarks page has the same
comparison at 1e5-1e7 points.
"""

# %%
# Two moons with five labels per class
# ------------------------------------
# 2,000 points, five labeled in each moon; ``-1`` marks the unlabeled ones.

import time

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.datasets import make_moons
from sklearn.semi_supervised import LabelSpreading

from structreg import GFHF, UNLABELED, PoissonLearning
from structreg.datasets import load_dataset

try:
    import graphlearning as gl
except ImportError:  # an optional peer: its rows are skipped
    gl = None


def keep_labels(y, per_class, seed):
    """``y`` with all but ``per_class`` random labels of each class replaced by -1."""
    rng = np.random.default_rng(seed)
    keep = np.concatenate(
        [rng.choice(np.flatnonzero(y == c), per_class, replace=False) for c in np.unique(y)]
    )
    y_semi = np.full_like(y, UNLABELED)
    y_semi[keep] = y[keep]
    return y_semi


def graphlearning_labels(model, X, y_semi):
    train = np.flatnonzero(y_semi != UNLABELED)
    W = gl.weightmatrix.knn(X, 10)
    solver = gl.ssl.laplace(W) if model == "laplace" else gl.ssl.poisson(W)
    return solver.fit_predict(train, y_semi[train])


METHODS = {
    "GFHF()": lambda X, s: GFHF().fit(X, s).transduction_,
    "PoissonLearning()": lambda X, s: PoissonLearning().fit(X, s).transduction_,
    "LabelSpreading (defaults)": lambda X, s: (
        LabelSpreading(kernel="knn", n_neighbors=10).fit(X, s).transduction_
    ),
    "LabelSpreading (converged)": lambda X, s: (
        LabelSpreading(kernel="knn", n_neighbors=10, alpha=0.99, max_iter=1000)
        .fit(X, s)
        .transduction_
    ),
}
if gl is not None:
    METHODS["graphlearning Laplace"] = lambda X, s: graphlearning_labels("laplace", X, s)
    METHODS["graphlearning Poisson"] = lambda X, s: graphlearning_labels("poisson", X, s)
else:
    print("graphlearning is not installed: its rows are left out")


def compare(X, y, y_semi):
    """Each method's labels of all points, its accuracy on the unlabeled ones and its time."""
    unlabeled = y_semi == UNLABELED
    rows, labels = [], {}
    for name, fit in METHODS.items():
        start = time.perf_counter()
        labels[name] = fit(X, y_semi)
        seconds = time.perf_counter() - start
        accuracy = np.mean(labels[name][unlabeled] == y[unlabeled])
        rows.append({"method": name, "accuracy (%)": 100 * accuracy, "fit time (s)": seconds})
    return pd.DataFrame(rows).set_index("method").round(2), labels


X, y = make_moons(2000, noise=0.1, random_state=0)
y_semi = keep_labels(y, 5, seed=0)
moons_table, moons_labels = compare(X, y, y_semi)
print(moons_table.to_string())

# %%
# What each method makes of the moons
# -----------------------------------
# The labels each method gives the unlabeled points; the ten labeled points are the large
# black-edged markers.  At its defaults (``alpha=0.2``, 30 iterations) LabelSpreading stops
# long before the labels have spread along the moons.

shown = ["GFHF()", "PoissonLearning()", "LabelSpreading (defaults)", "LabelSpreading (converged)"]
fig, axes = plt.subplots(1, len(shown), figsize=(13, 3.4), sharex=True, sharey=True)
labeled = y_semi != UNLABELED
for ax, name in zip(axes, shown, strict=True):
    ax.scatter(X[:, 0], X[:, 1], c=moons_labels[name], cmap="coolwarm", s=4, vmin=0, vmax=1)
    ax.scatter(
        X[labeled, 0],
        X[labeled, 1],
        c=y[labeled],
        cmap="coolwarm",
        s=70,
        edgecolors="k",
        vmin=0,
        vmax=1,
    )
    ax.set_title(f"{name}\n{moons_table.loc[name, 'accuracy (%)']:.1f} % of unlabeled points")
    ax.set_xticks([])
    ax.set_yticks([])
fig.tight_layout()
plt.show()

# %%
# Handwritten digits: USPS with ten labels per digit
# --------------------------------------------------
# All 11,000 USPS digits (256 pixels each, packaged with structreg), ten labeled per class.
# This is the first row of the benchmarks page's peer table, on one draw.

X_usps, digits = load_dataset("usps", return_X_y=True)
y_usps = np.unique(np.asarray(digits), return_inverse=True)[1]  # digit labels as 0-9 codes
y_usps_semi = keep_labels(y_usps, 10, seed=0)
usps_table, _ = compare(X_usps, y_usps, y_usps_semi)
print(usps_table.to_string())

# %%
# Accuracy on the unlabeled digits
# --------------------------------

fig, ax = plt.subplots(figsize=(7, 0.45 * len(usps_table) + 1))
order = usps_table.sort_values("accuracy (%)")
ours = ("GFHF()", "PoissonLearning()")
colors = ["tab:blue" if name in ours else "tab:gray" for name in order.index]
ax.barh(order.index, order["accuracy (%)"], color=colors)
for i, (acc, sec) in enumerate(zip(order["accuracy (%)"], order["fit time (s)"], strict=True)):
    ax.text(acc + 0.5, i, f"{acc:.1f} %, {sec:.2f} s", va="center")
ax.set_xlim(0, 110)
ax.set_xlabel("accuracy on the unlabeled digits (%)")
ax.set_title("USPS, 10 labels per digit (structreg in blue)")
fig.tight_layout()
plt.show()
