"""
=============================================
Composing your own StructuralClassifier
=============================================

Most classifiers in structreg are presets of one general estimator,
:class:`~structreg.StructuralClassifier`, which minimises

.. math::

    \\frac1l \\sum_{i \\le l} \\mathrm{loss}(y_i, f(x_i)) + \\gamma_A \\|f\\|_K^2
    + \\sum_k w_k \\, f^\\top M_k f

over a kernel expansion, with any list of weighted structure penalties ``(w_k, M_k)``
from :mod:`structreg.structure`: graph Laplacians (:class:`~structreg.structure.LaplacianPenalty`),
class scatters (:class:`~structreg.structure.ClassScatterPenalty`), cluster scatters and
precomputed matrices. This example

1. rebuilds :class:`~structreg.LapRLSC` (one kNN-graph Laplacian, weight
   :math:`\\gamma_I / n^2`) and the global-margin :class:`~structreg.DiscriminativeRLS`
   (within-class scatter minus between-class scatter, weight :math:`\\gamma_D / l`) from
   penalties and checks that the predictions are the same;
2. combines the two into a model that neither preset offers -- a semi-supervised graph term
   plus the discriminative scatter term -- and draws the three boundaries.
"""

# %%
# Data: noisy moons, 10 labels per class
# --------------------------------------

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_moons

from structreg import UNLABELED, DiscriminativeRLS, LapRLSC, StructuralClassifier
from structreg.structure import ClassScatterPenalty, LaplacianPenalty


def draw(seed):
    X, y = make_moons(400, noise=0.2, random_state=seed)
    rng = np.random.default_rng(seed)
    labeled = np.concatenate(
        [rng.choice(np.flatnonzero(y == c), 10, replace=False) for c in (0, 1)]
    )
    y_semi = np.full_like(y, UNLABELED)
    y_semi[labeled] = y[labeled]
    return X, y, y_semi, labeled


X, y, y_semi, labeled = draw(seed=0)
n, n_labeled = len(y), len(labeled)
unlabeled = y_semi == UNLABELED
kernel = {"kernel": "rbf", "gamma": 5.0, "gamma_A": 1e-3}
gamma_I, gamma_D = 100.0, 0.5

# %%
# The presets, rebuilt from penalties
# -----------------------------------
# LapRLSC's numeric ``gamma_I`` weighs :math:`f^\top L f` by :math:`\gamma_I / n^2`, with the
# same kNN graph (6 neighbours, heat weights) that ``LaplacianPenalty()`` builds by default.
# DiscriminativeRLS's global margin weighs :math:`L_W - L_B` by :math:`\gamma_D / l`; it is
# supervised, so both are fitted on the labeled points only.

laplacian = LaplacianPenalty(n_neighbors=6)
within, between = ClassScatterPenalty("within"), ClassScatterPenalty("between")

lap = LapRLSC(gamma_I=gamma_I, **kernel).fit(X, y_semi)
lap_own = StructuralClassifier(penalties=[(gamma_I / n**2, laplacian)], **kernel).fit(X, y_semi)

gdr = DiscriminativeRLS(margin="global", gamma_D=gamma_D, **kernel).fit(X[labeled], y[labeled])
scatter = [(gamma_D / n_labeled, within), (-gamma_D / n_labeled, between)]
gdr_own = StructuralClassifier(penalties=scatter, **kernel).fit(X[labeled], y[labeled])

for name, preset, own in [("LapRLSC", lap, lap_own), ("GDR", gdr, gdr_own)]:
    gap = np.abs(preset.decision_function(X) - own.decision_function(X)).max()
    print(f"{name:8s}: largest difference of the decision values {gap:.1e}")

# %%
# A new combination
# -----------------
# The graph term uses the unlabeled points; the scatter terms act on the labeled ones. A
# negative weight is allowed with the square loss: the solver reports whether the whole
# objective stayed convex (``solver_info_["convex"]``).

both = StructuralClassifier(penalties=[(gamma_I / n**2, laplacian), *scatter], **kernel)
both.fit(X, y_semi)
print(f"combined model convex: {both.solver_info_['convex']}")

models = {"GDR (labeled points only)": gdr, "LapRLSC": lap, "Laplacian + GDR scatter": both}
xx, yy = np.meshgrid(np.linspace(-1.8, 2.8, 180), np.linspace(-1.4, 1.8, 130))
grid = np.c_[xx.ravel(), yy.ravel()]
fig, axes = plt.subplots(1, 3, figsize=(15, 4.4), sharey=True)
for ax, (name, model) in zip(axes, models.items(), strict=True):
    f = model.decision_function(grid).reshape(xx.shape)
    ax.contourf(xx, yy, f > 0, levels=[-0.5, 0.5, 1.5], colors=["#c6dbef", "#fcbba1"])
    ax.contour(xx, yy, f, levels=[0.0], colors="k", linewidths=1.5)
    ax.scatter(*X[unlabeled].T, c=y[unlabeled], cmap="coolwarm", s=6, edgecolors="none")
    ax.scatter(*X[labeled].T, c=y[labeled], cmap="coolwarm", s=110, marker="*", ec="k")
    acc = model.score(X[unlabeled], y[unlabeled])
    ax.set_title(f"{name}\naccuracy on the unlabeled points {acc:.1%}")
    ax.set_xlabel("$x_1$")
axes[0].set_ylabel("$x_2$")
fig.tight_layout()

# %%
# Over eight draws
# ----------------

scores = []
for seed in range(8):
    X, y, y_semi, labeled = draw(seed)
    unlabeled = y_semi == UNLABELED
    fits = [
        DiscriminativeRLS(margin="global", gamma_D=gamma_D, **kernel).fit(X[labeled], y[labeled]),
        LapRLSC(gamma_I=gamma_I, **kernel).fit(X, y_semi),
        StructuralClassifier(penalties=[(gamma_I / n**2, laplacian), *scatter], **kernel).fit(
            X, y_semi
        ),
    ]
    scores.append([model.score(X[unlabeled], y[unlabeled]) for model in fits])
for name, column in zip(models, np.array(scores).T, strict=True):
    print(f"{name:26s} mean accuracy on the unlabeled points {column.mean():.3f}")

# %%
# The graph term is what helps here: with 20 labeled points the scatter terms move the
# semi-supervised solution very little, and the combination ends up level with LapRLSC.
# Composing penalties is cheap to try; whether a combination pays off depends on the data.

plt.show()
