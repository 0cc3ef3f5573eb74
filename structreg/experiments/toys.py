"""Toy-problem reproductions of the discriminative-regularization papers.

* :func:`drlsc_toy` -- DRLSC paper (Xue, Chen & Yang 2009), Sec. 6.1: three two-moons sets
  A, B, C (100 points per class), k = 10, training and test accuracy of RN, DRGV and DRLSC
  (its Tables 4-5) and the decision boundaries (its Fig. 1).
* :func:`dr_toy` -- Zhang et al. 2008, Fig. 2: GDR and LDR decision boundaries on three
  increasingly overlapping two-moons sets, Gaussian kernel of width 0.1, both regularisation
  weights 0.1.

What the papers leave open, and what is done here (printed with the results):

* the moons' generating parameters: :func:`structreg.datasets.make_drlsc_moons` levels 1-3;
* the DRLSC split: half of each class for training, half for testing, 10 random draws
  (the paper shows one draw; its whole-number percentages fit 100 test points);
* the DRLSC toy parameters: chosen per draw by 5-fold cross-validation on the training half,
  over a Gaussian width grid and (RN) the ridge or (DRGV, DRLSC) eta in [0, 1];
* the Gaussian "width 0.1" of Zhang et al.: ``exp(-||x - z||^2 / (2 * 0.1^2))``.
"""

from __future__ import annotations

import csv
import warnings
from pathlib import Path

import numpy as np
from sklearn.model_selection import GridSearchCV, StratifiedKFold, train_test_split

from ..datasets import make_drlsc_moons
from ..models import DRGV, DRLSC, RLSC, DiscriminativeRLS
from ..solvers import NonConvexObjectiveWarning

# Tables 4 and 5 of the DRLSC paper: reference values (training / test accuracy, %).
DRLSC_TABLE4_TRAIN = {
    "RN": (99.0, 95.0, 90.0),
    "DRGV": (100.0, 100.0, 98.0),
    "DRLSC": (100.0, 100.0, 99.0),
}
DRLSC_TABLE5_TEST = {
    "RN": (100.0, 98.0, 93.0),
    "DRGV": (100.0, 100.0, 93.0),
    "DRLSC": (100.0, 100.0, 98.0),
}
SETS = ("A", "B", "C")


def _grids(quick: bool) -> dict[str, tuple[object, dict]]:
    widths = [0.5, 2.0] if quick else [0.25, 0.5, 1.0, 2.0, 4.0, 8.0]
    gammas = [1.0 / (2.0 * s**2) for s in widths]  # sigma -> rbf gamma
    etas = [0.5, 0.9] if quick else [0.0, 0.2, 0.4, 0.6, 0.8, 0.9, 1.0]
    ridges = [2.0**-8, 2.0**-2] if quick else [2.0**e for e in range(-10, 1, 2)]
    return {
        "RN": (RLSC(kernel="rbf"), {"gamma": gammas, "gamma_A": ridges}),
        "DRGV": (DRGV(kernel="rbf"), {"gamma": gammas, "eta": etas}),
        "DRLSC": (DRLSC(kernel="rbf", n_neighbors=10), {"gamma": gammas, "eta": etas}),
    }


def drlsc_toy(
    out_dir: str | Path,
    *,
    n_draws: int = 10,
    quick: bool = False,
    random_state: int = 0,
    n_jobs: int | None = None,
    figure: bool = True,
) -> dict[str, dict[str, np.ndarray]]:
    """Reproduce the DRLSC toy experiment; write a Markdown and a CSV table (and a PNG).

    Returns ``{"train"|"test": {method: array (n_draws, 3 sets)}}`` of accuracies in %.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    grids = _grids(quick)
    acc = {part: {m: np.zeros((n_draws, 3)) for m in grids} for part in ("train", "test")}
    best_params: dict[tuple[str, int], dict] = {}
    fitted_first = {}
    for s, level in enumerate((1, 2, 3)):
        for draw in range(n_draws):
            seed = random_state + 1000 * s + draw
            X, y = make_drlsc_moons(level=level, random_state=seed)
            Xtr, Xte, ytr, yte = train_test_split(
                X, y, test_size=0.5, stratify=y, random_state=seed
            )
            cv = StratifiedKFold(5, shuffle=True, random_state=seed)
            for method, (est, grid) in grids.items():
                search = GridSearchCV(est, grid, cv=cv, n_jobs=n_jobs)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", NonConvexObjectiveWarning)
                    search.fit(Xtr, ytr)
                acc["train"][method][draw, s] = 100 * search.score(Xtr, ytr)
                acc["test"][method][draw, s] = 100 * search.score(Xte, yte)
                if draw == 0:
                    best_params[(method, s)] = search.best_params_
                    fitted_first[(method, s)] = (search.best_estimator_, Xtr, ytr, Xte, yte)
    _write_drlsc_tables(out, acc, best_params, n_draws, quick)
    if figure:
        _boundary_figure(
            out / "drlsc_toy_fig1.png",
            {key: val for key, val in fitted_first.items()},
            rows=[f"set {name}" for name in SETS],
            cols=list(grids),
            title="DRLSC toy (draw 0): RN, DRGV, DRLSC; '.' train, '+' test",
        )
    return acc


def _write_drlsc_tables(out: Path, acc, best_params, n_draws: int, quick: bool) -> None:
    refs = {"train": DRLSC_TABLE4_TRAIN, "test": DRLSC_TABLE5_TEST}
    lines = [
        "# DRLSC toy problem (Xue, Chen & Yang 2009, Sec. 6.1, Tables 4-5)",
        "",
        f"Two-moons sets A, B, C (structreg levels 1-3), 100 points per class, half of each "
        f"class for training; {n_draws} random draws; k = 10; parameters by 5-fold CV on the "
        f"training half{' (quick grid)' if quick else ''}. Cells: reproduced mean (std) | "
        "paper's single-draw value.",
        "",
    ]
    rows = []
    for part, table in (
        ("train", "Table 4 (training accuracy, %)"),
        ("test", "Table 5 (test accuracy, %)"),
    ):
        lines += [f"## {table}", "", "| method | A | B | C |", "| --- | --- | --- | --- |"]
        for method, values in acc[part].items():
            cells = []
            for s in range(3):
                mean, std = values[:, s].mean(), values[:, s].std()
                ref = refs[part][method][s]
                cells.append(f"{mean:.1f} ({std:.1f}) \\| {ref:.1f}")
                rows.append([part, method, SETS[s], f"{mean:.2f}", f"{std:.2f}", f"{ref:.1f}"])
            lines.append(f"| {method} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["## Parameters chosen on draw 0", ""]
    for (method, s), params in best_params.items():
        shown = ", ".join(f"{k}={v:.4g}" for k, v in sorted(params.items()))
        lines.append(f"- {method}, set {SETS[s]}: {shown}")
    (out / "drlsc_toy.md").write_text("\n".join(lines) + "\n")
    with open(out / "drlsc_toy.csv", "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["part", "method", "set", "mean", "std", "paper"])
        writer.writerows(rows)


def dr_toy(
    out_dir: str | Path,
    *,
    n_samples_per_class: int = 100,
    random_state: int = 0,
    n_neighbors: int = 5,
) -> dict[str, dict[str, object]]:
    """GDR vs LDR decision boundaries on three overlapping two-moons sets (Zhang et al. Fig. 2).

    Gaussian width 0.1 (``gamma = 1 / (2 * 0.1^2) = 50``), lambda = gamma = 0.1 as in the
    paper; xi = zeta = ``n_neighbors`` (not given by the paper).  With the paper's objective
    (loss scaled by 1/n, no scaling of the discriminality term) gamma = 0.1 is far beyond the
    convexity limit (about 1/n for the global margin, whose L_D has eigenvalue -1 exactly along
    the centred labels): the closed form then returns a saddle point, which for GDR even
    reverses the labels.  The figure therefore shows the paper's weights next to a convex
    setting, gamma_D = 0.1 / n.  Writes ``dr_toy_fig2.png`` and ``dr_toy.md``; returns, per
    panel, the training accuracy and whether the objective was convex.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fitted, summary = {}, {}
    n = 2 * n_samples_per_class
    settings = {"paper": 0.1, "0.1/n": 0.1 / n}
    cols = [f"{name} ({label})" for label in settings for name in ("GDR", "LDR")]
    for s, level in enumerate((1, 2, 3)):
        X, y = make_drlsc_moons(
            level=level, n_samples_per_class=n_samples_per_class, random_state=random_state + s
        )
        for label, gamma_D in settings.items():
            for margin, name in (("global", "GDR"), ("local", "LDR")):
                clf = DiscriminativeRLS(
                    margin=margin,
                    kernel="rbf",
                    gamma=50.0,
                    gamma_A=0.1,
                    gamma_D=gamma_D,
                    n_neighbors=n_neighbors,
                    n_neighbors_other=n_neighbors,
                )
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", NonConvexObjectiveWarning)
                    clf.fit(X, y)
                col = f"{name} ({label})"
                fitted[(col, s)] = (clf, X, y, None, None)
                summary[f"{col}, set {s + 1}"] = {
                    "train_accuracy": 100 * clf.score(X, y),
                    "convex": clf.solver_info_["convex"],
                }
    path = out / "dr_toy_fig2.png"
    _boundary_figure(
        path,
        fitted,
        rows=["set I", "set II", "set III"],
        cols=cols,
        title="GDR / LDR, Gaussian width 0.1, lambda = 0.1; discriminality "
        "weight 0.1 (paper) and 0.1/n",
    )
    lines = [
        "# GDR vs LDR on overlapping two moons (Zhang et al. 2008, Fig. 2)",
        "",
        "| panel | training accuracy (%) | convex objective |",
        "| --- | --- | --- |",
    ]
    lines += [f"| {k} | {v['train_accuracy']:.1f} | {v['convex']} |" for k, v in summary.items()]
    lines += ["", dr_toy.__doc__.split("\n\n")[0].strip()]
    (out / "dr_toy.md").write_text("\n".join(lines) + "\n")
    return summary


def _boundary_figure(
    path: Path, fitted: dict, *, rows: list[str], cols: list[str], title: str
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(
        len(rows), len(cols), figsize=(3.2 * len(cols), 3.0 * len(rows)), squeeze=False
    )
    for (name, s), (clf, Xtr, ytr, Xte, yte) in fitted.items():
        ax = axes[s, cols.index(name)]
        pts = Xtr if Xte is None else np.vstack([Xtr, Xte])
        lo, hi = pts.min(0) - 0.3, pts.max(0) + 0.3
        gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], 150), np.linspace(lo[1], hi[1], 150))
        F = clf.decision_function(np.c_[gx.ravel(), gy.ravel()]).reshape(gx.shape)
        ax.contourf(gx, gy, F > 0, levels=[-0.5, 0.5, 1.5], colors=["#dde8f5", "#f7e1d7"])
        ax.contour(gx, gy, F, levels=[0], colors="k", linewidths=1.2)
        for X_, y_, marker in ((Xtr, ytr, "."), (Xte, yte, "+")):
            if X_ is None:
                continue
            ax.scatter(X_[y_ == 0, 0], X_[y_ == 0, 1], marker=marker, s=18, c="tab:blue")
            ax.scatter(X_[y_ == 1, 0], X_[y_ == 1, 1], marker=marker, s=18, c="tab:red")
        ax.set_title(f"{name}, {rows[s]}", fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
