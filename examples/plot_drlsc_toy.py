"""
=================================================
DRLSC, DRGV and RN on the DRLSC paper's two moons
=================================================

The DRLSC paper (Xue, Chen & Yang 2009) adds a *discriminative* regularizer to least-squares
classification. DRLSC builds a k-nearest-neighbour graph on the training points and splits
its edges into within-class edges (Laplacian :math:`L_w`) and between-class edges
(:math:`L_b`); it then asks the outputs to be similar along within-class edges and different
along between-class edges:

.. math::

    \\min_f \\; \\frac12 \\sum_i \\|y_i - f(x_i)\\|^2
    + \\frac12 \\left[\\eta\\, f^\\top L_w f - (1 - \\eta)\\, f^\\top L_b f\\right].

DRGV (:class:`~structreg.DRGV`) replaces the two graphs by the generalized within- and
between-class variances, and the paper's baseline RN (regularization network) is plain kernel
regularized least squares, :class:`~structreg.RLSC`. The paper compares them on three
two-moons sets A, B, C that get closer until they overlap;
:func:`structreg.datasets.make_drlsc_moons` generates them (the generating parameters are
structreg's choice, the paper gives none).

The figure shows the decision boundaries of the three methods (columns) on the three sets
(rows), each with its parameters chosen by 5-fold cross-validation on the training half.
"""

# %%
# Setting up
# ----------
# As in the paper: 100 points per class, a stratified half for training and the other half
# for testing, a Gaussian kernel ``exp(-gamma ||x - z||^2)`` and DRLSC's ``k = 10``. The
# widths and weights below are a small grid of our choice (the paper searches a much larger
# one; ``structreg reproduce drlsc --table 4-5`` runs that protocol).

import time
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import train_test_split

from structreg import DRGV, DRLSC, DRLSCCV, RLSC, StructuralClassifierCV
from structreg.datasets import make_drlsc_moons
from structreg.solvers import NonConvexObjectiveWarning

GAMMAS = [1 / (2 * sigma**2) for sigma in (0.25, 0.5, 1.0, 2.0, 4.0)]
ETAS = [0.0, 0.25, 0.5, 0.75, 0.9, 1.0]


def fit_three(X_train, y_train):
    """RN, DRGV and DRLSC, each with its parameters chosen by 5-fold CV."""
    rn = StructuralClassifierCV(
        RLSC(), {"gamma": GAMMAS, "gamma_A": [1e-4, 1e-3, 1e-2, 1e-1, 1.0]}, cv=5
    )
    drgv = StructuralClassifierCV(DRGV(kernel="rbf"), {"gamma": GAMMAS, "eta": ETAS}, cv=5)
    drlsc = DRLSCCV(DRLSC(kernel="rbf", n_neighbors=10), {"gamma": GAMMAS, "eta": ETAS}, cv=5)
    # For eta < 1 the DRLSC / DRGV objectives subtract a separability term and are often not
    # convex; the closed form then returns a stationary point, as in the paper, and structreg
    # says so with a NonConvexObjectiveWarning. That is expected here, so we silence it.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonConvexObjectiveWarning)
        return {
            "RN": rn.fit(X_train, y_train),
            "DRGV": drgv.fit(X_train, y_train),
            "DRLSC": drlsc.fit(X_train, y_train),
        }


# %%
# One draw of each set, with the decision boundaries
# --------------------------------------------------

start = time.perf_counter()
xx, yy = np.meshgrid(np.linspace(-1.6, 2.6, 150), np.linspace(-1.6, 1.6, 120))
grid = np.c_[xx.ravel(), yy.ravel()]
fig, axes = plt.subplots(3, 3, figsize=(11, 9.5), sharex=True, sharey=True)
for row, level in enumerate("ABC"):
    X, y = make_drlsc_moons(level, random_state=0)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.5, stratify=y, random_state=0
    )
    models = fit_three(X_train, y_train)
    for col, (name, search) in enumerate(models.items()):
        ax = axes[row, col]
        f = search.decision_function(grid).reshape(xx.shape)
        ax.contourf(xx, yy, f > 0, levels=[-0.5, 0.5, 1.5], colors=["#c6dbef", "#fcbba1"])
        ax.contour(xx, yy, f, levels=[0.0], colors="k", linewidths=1.5)
        ax.scatter(*X_train.T, c=y_train, cmap="coolwarm", s=14, edgecolors="k", linewidths=0.3)
        ax.scatter(*X_test.T, c=y_test, cmap="coolwarm", s=14, marker="x", linewidths=0.8)
        params = ", ".join(f"{k}={v:.3g}" for k, v in search.best_params_.items())
        ax.set_title(f"set {level}, {name}: test {search.score(X_test, y_test):.0%}\n{params}")
        ax.tick_params(labelsize=8)
for ax in axes[:, 0]:
    ax.set_ylabel("$x_2$")
for ax in axes[-1]:
    ax.set_xlabel("$x_1$")
fig.tight_layout()
print(f"draw 0 fitted in {time.perf_counter() - start:.1f} s")

# %%
# Test accuracy over five draws
# -----------------------------
# One draw of 100 test points moves the accuracy in steps of 1 %, so we average five.

start = time.perf_counter()
accuracy = {level: {name: [] for name in ("RN", "DRGV", "DRLSC")} for level in "ABC"}
for level in "ABC":
    for seed in range(5):
        X, y = make_drlsc_moons(level, random_state=seed)
        X_train, X_test, y_train, y_test = train_test_split(
            X, y, test_size=0.5, stratify=y, random_state=seed
        )
        for name, search in fit_three(X_train, y_train).items():
            accuracy[level][name].append(search.score(X_test, y_test))
print("set   RN     DRGV   DRLSC  (mean test accuracy, 5 draws)")
for level in "ABC":
    print(f"{level}   " + " ".join(f"{np.mean(v):6.3f}" for v in accuracy[level].values()))
print(f"five draws fitted in {time.perf_counter() - start:.1f} s")

# %%
# All three separate set A perfectly. On the harder sets the differences are a few test
# points, and in this run RN is at least as accurate as DRLSC on every set. The paper
# reports DRLSC ahead on set C; structreg's full reproduction does not find that either (see
# the README's "What reproduces and what does not").

plt.show()
