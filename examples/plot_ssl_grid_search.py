"""
===========================================
Grid search for semi-supervised classifiers
===========================================

Cross-validating a semi-supervised model with scikit-learn's tools as they come goes wrong
in two ways. ``KFold`` cuts *all* samples into folds, so each training set loses the
unlabeled points of its test fold, and each test fold is mostly unlabeled points. A scorer
such as ``scoring="accuracy"`` then compares the predictions with the placeholder label
``-1`` of those points and counts every one of them as an error; and a test fold may hold
hardly any labeled point at all.

:class:`structreg.model_selection.SemiSupervisedKFold` cuts only the labeled points into
folds and keeps every unlabeled point in every training set, and
:data:`~structreg.model_selection.labeled_accuracy_scorer` scores only labeled points.
:class:`~structreg.LapRLSCCV` uses that splitter by default and solves a whole
``gamma_A`` x ``gamma_I`` grid from one factorisation per fold. The figure compares the CV
scores of the naive and the SSL-aware search with the accuracy that each grid point actually
reaches on the unlabeled points.
"""

# %%
# Data: 400 points, 10 labels per class
# -------------------------------------

import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_moons
from sklearn.model_selection import GridSearchCV, KFold

from structreg import UNLABELED, LapRLSC, LapRLSCCV
from structreg.model_selection import SemiSupervisedKFold

X, y = make_moons(400, noise=0.1, random_state=0)
rng = np.random.default_rng(0)
labeled = np.concatenate([rng.choice(np.flatnonzero(y == c), 10, replace=False) for c in (0, 1)])
y_semi = np.full_like(y, UNLABELED)
y_semi[labeled] = y[labeled]
unlabeled = y_semi == UNLABELED

# %%
# What the two splitters do
# -------------------------
# Count the labeled and unlabeled points in the training and test sets of each fold.

for name, splitter in [
    ("KFold", KFold(5, shuffle=True, random_state=0)),
    ("SemiSupervisedKFold", SemiSupervisedKFold(5, random_state=0)),
]:
    print(name)
    for train, test in splitter.split(X, y_semi):
        print(
            f"  train: {(~unlabeled[train]).sum():2d} labeled + {unlabeled[train].sum():3d} "
            f"unlabeled | test: {(~unlabeled[test]).sum():2d} labeled + "
            f"{unlabeled[test].sum():3d} unlabeled"
        )

# %%
# The two searches
# ----------------
# The same grid, with a fixed kernel width. The naive search is ``GridSearchCV`` with
# ``KFold`` and ``scoring="accuracy"``.

gamma_As = np.logspace(-6, 0, 7)
gamma_Is = np.r_[0.0, np.logspace(-2, 4, 7)]
grid = {"gamma_A": list(gamma_As), "gamma_I": list(gamma_Is)}
model = LapRLSC(gamma=5.0)

start = time.perf_counter()
naive = GridSearchCV(model, grid, cv=KFold(5, shuffle=True, random_state=0), scoring="accuracy")
naive.fit(X, y_semi)
naive_time = time.perf_counter() - start
start = time.perf_counter()
aware = LapRLSCCV(model, grid, cv=5).fit(X, y_semi)  # SemiSupervisedKFold(5, random_state=0)
aware_time = time.perf_counter() - start

# the accuracy each grid point reaches on the unlabeled points (not available in practice)
truth = np.array(
    [
        [
            LapRLSC(gamma=5.0, gamma_A=a, gamma_I=i)
            .fit(X, y_semi)
            .score(X[unlabeled], y[unlabeled])
            for i in gamma_Is
        ]
        for a in gamma_As
    ]
)

for name, search, seconds in [("naive", naive, naive_time), ("SSL-aware", aware, aware_time)]:
    best = search.best_params_
    print(
        f"{name:9s} search: {seconds:5.2f} s, best CV score {search.best_score_:.3f} at "
        f"gamma_A={best['gamma_A']:.0e}, gamma_I={best['gamma_I']:.0e}; refit accuracy on the "
        f"unlabeled points {search.score(X[unlabeled], y[unlabeled]):.3f}"
    )
print(f"best accuracy on the unlabeled points over the grid: {truth.max():.3f}")

# %%
# Heat maps
# ---------
# Rows are ``gamma_A``, columns ``gamma_I``; the white square marks each search's choice.
#
# * The naive CV scores are tiny, because the unlabeled test points count as errors, and here
#   they are the same at every grid point: the few labeled test points are classified
#   correctly everywhere. The search then keeps the first grid point, ``gamma_I = 0``, which
#   is plain RLSC. (With the estimator's own ``score``, which skips unlabeled points, the
#   fold without a labeled test point could not be scored at all.)
# * The SSL-aware scores rest on 4 labeled test points per fold, so they are coarse, but they
#   do favour a strong graph term, as the accuracy on the unlabeled points does; its choice
#   is better than the naive one on the unlabeled points, though not the best of the grid.

panels = [
    ("naive GridSearchCV (KFold, accuracy)", naive.cv_results_["mean_test_score"], naive),
    ("LapRLSCCV (SemiSupervisedKFold)", aware.cv_results_["mean_test_score"], aware),
    ("accuracy on the unlabeled points", truth.ravel(), None),
]
fig, axes = plt.subplots(1, 3, figsize=(15, 4.6), sharey=True)
for ax, (title, scores, search) in zip(axes, panels, strict=True):
    scores = np.asarray(scores).reshape(len(gamma_As), len(gamma_Is))
    image = ax.imshow(scores, origin="lower", cmap="viridis", aspect="auto")
    fig.colorbar(image, ax=ax)
    if search is not None:
        row = list(gamma_As).index(search.best_params_["gamma_A"])
        col = list(gamma_Is).index(search.best_params_["gamma_I"])
        ax.add_patch(plt.Rectangle((col - 0.5, row - 0.5), 1, 1, fill=False, ec="w", lw=2.5))
    ax.set_xticks(range(len(gamma_Is)), ["0"] + [f"1e{int(e)}" for e in np.log10(gamma_Is[1:])])
    ax.set_xlabel("gamma_I")
    ax.set_title(title)
axes[0].set_yticks(range(len(gamma_As)), [f"1e{int(e)}" for e in np.log10(gamma_As)])
axes[0].set_ylabel("gamma_A")
fig.tight_layout()

plt.show()
