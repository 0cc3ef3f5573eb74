"""Reproductions of the SRSVM paper (Xue, Chen & Yang, IEEE TNN 2011).

* :func:`xor_toy` -- Tables I-II and Figs. 5-6: the XOR mixture of four Gaussians (200 points
  each), 10 %..50 % of every Gaussian for training, the rest for testing; SVM, SLMM, SRSVM.
* :func:`uci_timing` -- Tables V and VII: training / testing times of SVM, EKM, SLMM, LapSVM
  and SRSVM and the numbers of Ward clusters on the two-class UCI sets that are available.

Choices the paper leaves open (printed with the results): an RBF kernel for every method;
for the XOR toy the parameters of SVM and SRSVM are chosen per draw by 3-fold CV on the
training part (``gamma`` in 2^-6..2^-2, ``C`` in {1, 10, 100}, SRSVM's ``lam`` in
{0.1, 1, 10}); SLMM, whose SOCP is far slower, reuses the SVM's ``gamma`` and ``C``.  The
timing table uses fixed parameters (``gamma="scale"``, ``C = 1``, ``lam = 1``, LapSVM
``gamma_I = 1``) and a random half of each class for training, 3 repetitions.
"""

from __future__ import annotations

import csv
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from ..datasets import load_dataset, make_xor_gaussians
from ..models import SRSVM, LapSVM

# Table II of the paper: training / testing accuracy (%) per training fraction.
TABLE2 = {
    10: {"SVM": (100.00, 92.78), "SLMM": (100.00, 96.39), "SRSVM": (100.00, 99.44)},
    20: {"SVM": (99.38, 96.09), "SLMM": (99.38, 97.50), "SRSVM": (99.38, 99.53)},
    30: {"SVM": (99.58, 99.11), "SLMM": (99.58, 99.46), "SRSVM": (99.58, 99.64)},
    40: {"SVM": (99.69, 99.17), "SLMM": (99.69, 99.38), "SRSVM": (99.69, 99.58)},
    50: {"SVM": (99.50, 99.50), "SLMM": (99.50, 99.75), "SRSVM": (99.50, 99.75)},
}
# Table V (training / testing seconds) and Table VII (cluster counts) of the paper.
TABLE5 = {
    "automobile": {"SVM": 0.47, "EKM": 5.83, "SLMM": 28.08, "LapSVM": 0.86, "SRSVM": 2.20},
    "bupa": {"SVM": 0.50, "EKM": 85.47, "SLMM": 417.05, "LapSVM": 1.58, "SRSVM": 5.12},
    "hepatitis": {"SVM": 0.42, "EKM": 4.69, "SLMM": 39.33, "LapSVM": 0.80, "SRSVM": 2.17},
    "ionosphere": {"SVM": 0.58, "EKM": 122.56, "SLMM": 198.03, "LapSVM": 1.20, "SRSVM": 4.06},
    "pima": {"SVM": 0.72, "EKM": 480.09, "SLMM": 620.86, "LapSVM": 3.90, "SRSVM": 10.97},
    "sonar": {"SVM": 0.50, "EKM": 17.47, "SLMM": 41.20, "LapSVM": 0.89, "SRSVM": 3.03},
    "water": {"SVM": 0.30, "EKM": 3.80, "SLMM": 13.09, "LapSVM": 2.73, "SRSVM": 2.50},
    "wdbc": {"SVM": 0.47, "EKM": 336.36, "SLMM": 454.21, "LapSVM": 3.62, "SRSVM": 12.73},
}
TABLE7 = {
    "automobile": (4, 3),
    "bupa": (6, 6),
    "hepatitis": (3, 5),
    "ionosphere": (10, 8),
    "pima": (11, 4),
    "sonar": (4, 7),
    "water": (4, 3),
    "wdbc": (8, 8),
}
TWO_CLASS_SETS = ("automobile", "bupa", "hepatitis", "ionosphere", "pima", "sonar", "water", "wdbc")


def _optional(name: str):
    """An estimator class from structreg.models, or None if it is not available."""
    from .. import models

    return getattr(models, name, None)


def _xor_split(fraction: float, seed: int):
    X, y, comp = make_xor_gaussians(200, random_state=seed, return_components=True)
    rng = np.random.default_rng(seed)
    train = np.zeros(len(y), bool)
    for c in np.unique(comp):
        idx = np.flatnonzero(comp == c)
        train[rng.choice(idx, int(round(fraction * len(idx))), replace=False)] = True
    return X[train], y[train], X[~train], y[~train]


def xor_toy(
    out_dir: str | Path,
    *,
    fractions=(0.1, 0.2, 0.3, 0.4, 0.5),
    n_draws: int = 10,
    random_state: int = 0,
    figure: bool = True,
    with_slmm: bool = True,
) -> dict:
    """Tables I-II and Figs. 5-6 of the SRSVM paper; returns ``acc[method][pct] = (n, 2)``
    arrays of training / testing accuracy (%), and writes ``srsvm_xor.md`` / ``.csv`` /
    ``srsvm_xor_fig56.png``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    SLMM = _optional("SLMM") if with_slmm else None
    methods = ["SVM", "SRSVM"] + (["SLMM"] if SLMM is not None else [])
    acc = {m: {} for m in methods}
    shown = {}
    gammas = [2.0**e for e in range(-6, -1)]
    for fraction in fractions:
        pct = int(round(100 * fraction))
        for m in methods:
            acc[m][pct] = np.zeros((n_draws, 2))
        for draw in range(n_draws):
            seed = random_state + 100 * pct + draw
            Xtr, ytr, Xte, yte = _xor_split(fraction, seed)
            cv = StratifiedKFold(3, shuffle=True, random_state=seed)
            svm = GridSearchCV(SVC(), {"gamma": gammas, "C": [1.0, 10.0, 100.0]}, cv=cv)
            svm.fit(Xtr, ytr)
            srsvm = GridSearchCV(
                SRSVM(kernel="rbf"),
                {"gamma": gammas, "C": [1.0, 10.0, 100.0], "lam": [0.1, 1.0, 10.0]},
                cv=cv,
            )
            srsvm.fit(Xtr, ytr)
            fitted = {"SVM": svm.best_estimator_, "SRSVM": srsvm.best_estimator_}
            if SLMM is not None:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    fitted["SLMM"] = SLMM(kernel="rbf", **svm.best_params_).fit(Xtr, ytr)
            for m, est in fitted.items():
                acc[m][pct][draw] = 100 * est.score(Xtr, ytr), 100 * est.score(Xte, yte)
            if draw == 0 and pct in (10, 50):
                shown[pct] = (fitted, Xtr, ytr, Xte, yte)
    _write_xor(out, acc, n_draws, SLMM is not None)
    if figure and shown:
        _xor_figure(out / "srsvm_xor_fig56.png", shown, methods)
    return acc


def _write_xor(out: Path, acc, n_draws: int, has_slmm: bool) -> None:
    lines = [
        "# SRSVM paper, Tables I-II: the XOR toy",
        "",
        f"Four Gaussians of 200 points (Table I); the given fraction of every Gaussian trains, "
        f"the rest tests; {n_draws} draws; RBF kernels; SVM and SRSVM parameters by 3-fold CV "
        "on the training part, SLMM with the SVM's parameters. Cells: reproduced mean "
        "train / test accuracy (%) | paper's train / test.",
        "",
    ]
    if not has_slmm:
        lines += ["SLMM: skipped (not available in this installation).", ""]
    methods = list(acc)
    lines += [
        "| % train | " + " | ".join(methods) + " |",
        "| --- | " + " | ".join("---" for _ in methods) + " |",
    ]
    rows = []
    for pct in acc["SVM"]:
        cells = []
        for m in methods:
            tr, te = acc[m][pct].mean(0)
            ref = TABLE2[pct][m] if pct in TABLE2 else (np.nan, np.nan)
            cells.append(f"{tr:.2f} / {te:.2f} \\| {ref[0]:.2f} / {ref[1]:.2f}")
            rows.append(
                [pct, m, f"{tr:.2f}", f"{te:.2f}", f"{acc[m][pct][:, 1].std():.2f}", ref[0], ref[1]]
            )
        lines.append(f"| {pct} | " + " | ".join(cells) + " |")
    (out / "srsvm_xor.md").write_text("\n".join(lines) + "\n")
    with open(out / "srsvm_xor.csv", "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(
            [
                "pct_train",
                "method",
                "train_mean",
                "test_mean",
                "test_std",
                "paper_train",
                "paper_test",
            ]
        )
        writer.writerows(rows)


def _xor_figure(path: Path, shown: dict, methods: list[str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(shown), 2, figsize=(9, 4.2 * len(shown)), squeeze=False)
    colors = {"SVM": "tab:green", "SLMM": "tab:purple", "SRSVM": "k"}
    for r, (pct, (fitted, Xtr, ytr, Xte, yte)) in enumerate(sorted(shown.items())):
        for c, (X_, y_, part) in enumerate(((Xtr, ytr, "training"), (Xte, yte, "testing"))):
            ax = axes[r, c]
            lo, hi = X_.min(0) - 1, X_.max(0) + 1
            gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], 200), np.linspace(lo[1], hi[1], 200))
            grid = np.c_[gx.ravel(), gy.ravel()]
            ax.scatter(X_[y_ == 0, 0], X_[y_ == 0, 1], s=6, c="tab:blue", marker="o")
            ax.scatter(X_[y_ == 1, 0], X_[y_ == 1, 1], s=10, c="tab:red", marker="+")
            for m in methods:
                F = fitted[m].decision_function(grid).reshape(gx.shape)
                ax.contour(gx, gy, F, levels=[0], colors=colors[m], linewidths=1.2)
                ax.plot([], [], color=colors[m], label=m)  # legend entry
            ax.set_title(f"{pct}% training: {part} set", fontsize=9)
            ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _load_two_class(name: str):
    X, y = load_dataset(name, return_X_y=True)
    return StandardScaler().fit_transform(X), np.asarray(y)


def uci_timing(
    out_dir: str | Path, *, repeats: int = 3, random_state: int = 0, with_socp: bool = True
) -> dict:
    """Tables V and VII: mean training / testing seconds per method and Ward cluster counts."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    EKM, SLMM = _optional("EKM"), _optional("SLMM")
    makers = {
        "SVM": lambda: SVC(C=1.0),
        "EKM": (lambda: EKM(kernel="rbf", C=1.0)) if EKM and with_socp else None,
        "SLMM": (lambda: SLMM(kernel="rbf", C=1.0)) if SLMM and with_socp else None,
        "LapSVM": lambda: LapSVM(gamma_A=1.0, gamma_I=1.0, graph="class-wise"),
        "SRSVM": lambda: SRSVM(kernel="rbf", C=1.0, lam=1.0),
    }
    results, skipped = {}, {}
    for name in TWO_CLASS_SETS:
        try:
            X, y = _load_two_class(name)
        except ValueError:
            skipped[name] = "not available: not among the benchmark data sets shipped here"
            continue
        except (FileNotFoundError, OSError):
            skipped[name] = "not available: file not found in the data home"
            continue
        if len(np.unique(y)) != 2:
            skipped[name] = f"{len(np.unique(y))} classes here; the paper used a 2-class version"
            continue
        rng = np.random.default_rng(random_state)
        times = {m: [] for m, f in makers.items() if f is not None}
        clusters = []
        for _ in range(repeats):
            train = np.zeros(len(y), bool)
            for c in np.unique(y):
                idx = np.flatnonzero(y == c)
                train[rng.choice(idx, len(idx) // 2, replace=False)] = True
            for m in times:
                est = makers[m]()
                if isinstance(est, LapSVM):
                    # LapSVM's C equals 1 / (2 gamma_A l): match the SVM's C = 1
                    est.set_params(gamma_A=1.0 / (2.0 * train.sum()))
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est.fit(X[train], y[train])
                t1 = time.perf_counter()
                est.predict(X[~train])
                t2 = time.perf_counter()
                times[m].append((t1 - t0, t2 - t1))
                if m == "SRSVM":
                    clusters.append(tuple(int(v) for v in est.n_clusters_))
        results[name] = {
            "times": {m: np.mean(v, axis=0) for m, v in times.items()},
            "clusters": clusters[0],
        }
    _write_timing(out, results, skipped)
    return {"results": results, "skipped": skipped}


def _write_timing(out: Path, results: dict, skipped: dict) -> None:
    methods = ["SVM", "EKM", "SLMM", "LapSVM", "SRSVM"]
    lines = [
        "# SRSVM paper, Tables V and VII: running times and Ward cluster counts",
        "",
        "Standardised features, a random half of each class for training, RBF kernels "
        "with gamma='scale', C = 1, lam = 1; mean of 3 repetitions on this machine. "
        "Cells: train / test seconds | paper's training seconds (other hardware).",
        "",
        "| data | " + " | ".join(methods) + " | SRSVM/SVM |",
        "| --- | " + " | ".join("---" for _ in methods) + " | --- |",
    ]
    rows = []
    for name, res in results.items():
        cells = []
        for m in methods:
            if m in res["times"]:
                tr, te = res["times"][m]
                cells.append(f"{tr:.3f} / {te:.3f} \\| {TABLE5[name][m]:.2f}")
                rows.append([name, m, f"{tr:.4f}", f"{te:.4f}", TABLE5[name][m]])
            else:
                cells.append("skipped")
        ratio = res["times"]["SRSVM"][0] / res["times"]["SVM"][0]
        paper_ratio = TABLE5[name]["SRSVM"] / TABLE5[name]["SVM"]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {ratio:.1f} \\| {paper_ratio:.1f} |")
    lines += [
        "",
        "## Table VII: clusters per class (reproduced | paper)",
        "",
        "| data | clusters | paper |",
        "| --- | --- | --- |",
    ]
    for name, res in results.items():
        lines.append(
            f"| {name} | {sum(res['clusters'])} {res['clusters']} | "
            f"{sum(TABLE7[name])} {TABLE7[name]} |"
        )
    if skipped:
        lines += ["", "## Skipped data sets", ""]
        lines += [f"- {name}: {why}" for name, why in skipped.items()]
    (out / "srsvm_timing.md").write_text("\n".join(lines) + "\n")
    with open(out / "srsvm_timing.csv", "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["data", "method", "train_s", "test_s", "paper_train_s"])
        writer.writerows(rows)


def bound_figure(
    out_dir: str | Path, *, datasets=("bupa", "ionosphere", "sonar", "wdbc"), random_state: int = 0
) -> dict:
    """Fig. 10 style: the eigenvalue generalization bound (:mod:`structreg.bounds`) of SVM,
    EKM, LapSVM and SRSVM trained on a random half of each two-class UCI set (RBF kernels,
    ``gamma="scale"``, ``C = 1``, ``lam = 1``, LapSVM with class-wise graphs and
    ``gamma_I = 1``).  SLMM is not an SVM in a kernel of its own and is left out."""
    from ..bounds import fitted_bound, plot_bounds
    from ..models import EKM

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results, skipped = {}, {}
    rng = np.random.default_rng(random_state)
    for name in datasets:
        try:
            X, y = _load_two_class(name)
        except (ValueError, FileNotFoundError, OSError):
            skipped[name] = "not available"
            continue
        train = np.zeros(len(y), bool)
        for c in np.unique(y):
            idx = np.flatnonzero(y == c)
            train[rng.choice(idx, len(idx) // 2, replace=False)] = True
        Xtr, ytr = X[train], y[train]
        makers = {
            "SVM": SVC(C=1.0),
            "EKM": EKM(kernel="rbf", C=1.0),
            "LapSVM": LapSVM(gamma_A=1.0 / (2.0 * len(ytr)), gamma_I=1.0, graph="class-wise"),
            "SRSVM": SRSVM(kernel="rbf", C=1.0, lam=1.0),
        }
        results[name] = {}
        for method, est in makers.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(Xtr, ytr)
            results[name][method] = fitted_bound(est, Xtr, ytr)["bound"]
    lines = [
        "# SRSVM paper, Fig. 10: eigenvalue bounds on the expected risk",
        "",
        "theta = 0.05; see structreg.bounds for what is computed.",
        "",
        "| data | " + " | ".join(["SVM", "EKM", "LapSVM", "SRSVM"]) + " |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, res in results.items():
        lines.append(f"| {name} | " + " | ".join(f"{res[m]:.3f}" for m in res) + " |")
    lines += [f"- {name}: skipped ({why})" for name, why in skipped.items()]
    (out / "srsvm_bounds.md").write_text("\n".join(lines) + "\n")
    if results:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        ax = plot_bounds(results)
        ax.figure.tight_layout()
        ax.figure.savefig(out / "srsvm_bounds_fig10.png", dpi=100)
        plt.close(ax.figure)
    return {"results": results, "skipped": skipped}
