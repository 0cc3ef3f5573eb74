"""The cross-validated estimators against GridSearchCV over the plain estimator (issue 18).

Side by side in this process, on the same grid and the same folds: ``LapRLSCCV`` vs
``GridSearchCV(LapRLSC())`` and ``DRLSCCV`` vs ``GridSearchCV(DRLSC())``.  Each pair runs
``--repeats`` times, alternating which goes first; printed per case: the median wall time of
each, their ratio, whether ``best_params_`` and every mean CV score agree (to 1e-8), and the
1-minute load average before and after the case (the ratio moves with the machine's load:
GridSearchCV's many small kNN searches suffer most from OpenMP threads competing for cores).
The structreg measured is this checkout's (its root goes first on ``sys.path``), not the one an
editable install may point to.

Cases (features standardised; 5-fold CV):

* LapRLSC on USPS (2,000 random digits, 10 labeled per class, the rest unlabeled;
  ``SemiSupervisedKFold``) and on three UCI sets (sonar, ionosphere, wine; 30 % of the points
  labeled): ``gamma_A`` 1e-6..10 (8 values) x ``gamma_I`` {0, 1e-2..1e4} (8 values) = 64 points
  at the default kernel width and graph; on USPS also two kernel widths (128 points);
* DRLSC (linear and RBF kernel) on the same UCI sets, fully supervised: ``eta`` in
  0, 0.1, ..., 1 x ``n_neighbors`` in {3, 5, 8} (33 points); RBF also x 2 widths (66).

    python benchmarks/cv_vs_gridsearch.py [--repeats 3] [--cases usps,uci-lap,uci-drlsc]
                                          [--record PATH]

``--record docs/benchmarks/cv_vs_gridsearch.csv`` also writes the speed-ups as the rows of the
benchmarks page's grid-search table into that data file (the rows of the cases run).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's structreg

import numpy as np  # noqa: E402
from _measure import semi_labels  # noqa: E402
from _record import current_load, load_range, record  # noqa: E402
from sklearn.model_selection import GridSearchCV, StratifiedKFold  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

import structreg  # noqa: E402
from structreg import DRLSC, LapRLSC  # noqa: E402
from structreg.datasets import load_dataset  # noqa: E402
from structreg.model_selection import SemiSupervisedKFold  # noqa: E402
from structreg.models import DRLSCCV, LapRLSCCV  # noqa: E402

LAP_GRID = {
    "gamma_A": list(np.logspace(-6, 1, 8)),
    "gamma_I": [0.0, *np.logspace(-2, 4, 7)],
}
DRLSC_GRID = {"eta": list(np.round(np.linspace(0, 1, 11), 10)), "n_neighbors": [3, 5, 8]}
MEASURED: dict[str, dict] = {}
"""Each case's label -> its times, speed-up and grid size (what ``--record`` writes)."""


def _data(name: str, n: int | None = None, seed: int = 0):
    X, y = load_dataset(name, return_X_y=True)
    y = np.unique(np.asarray(y), return_inverse=True)[1]
    if n is not None:
        idx = np.random.default_rng(seed).choice(len(y), n, replace=False)
        X, y = X[idx], y[idx]
    return StandardScaler().fit_transform(X), y


def _timed(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        out = fn()
        return out, time.perf_counter() - t0


def compare(label: str, ours, theirs, X, y, repeats: int) -> float:
    load_before = os.getloadavg()[0]
    times = {"ours": [], "grid": []}
    results = {}
    for r in range(repeats):
        order = [("ours", ours), ("grid", theirs)]
        for key, make in order if r % 2 == 0 else order[::-1]:
            results[key], seconds = _timed(lambda make=make: make().fit(X, y))
            times[key].append(seconds)
    a, b = results["ours"], results["grid"]
    same_params = a.best_params_ == b.best_params_
    gap = float(np.max(np.abs(a.cv_results_["mean_test_score"] - b.cv_results_["mean_test_score"])))
    t_ours, t_grid = np.median(times["ours"]), np.median(times["grid"])
    n_points = len(a.cv_results_["params"])
    MEASURED[label] = {"grid": t_grid, "ours": t_ours, "points": n_points}
    MEASURED[label]["loads"] = [load_before, os.getloadavg()[0]]
    print(
        f"| {label} | {n_points} | {t_grid:.2f} | {t_ours:.2f} | {t_grid / t_ours:.1f}x | "
        f"{'yes' if same_params else 'NO'} | {gap:.1e} | {load_before:.1f} / "
        f"{os.getloadavg()[0]:.1f} |",
        flush=True,
    )
    return t_grid / t_ours


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cases", default="usps,uci-lap,uci-drlsc")
    parser.add_argument(
        "--usps-widths", type=int, default=2, help="1: only the default width on USPS (64 points)"
    )
    parser.add_argument(
        "--record",
        default="",
        metavar="PATH",
        help="write the page's rows into this data file (docs/benchmarks/cv_vs_gridsearch.csv)",
    )
    args = parser.parse_args()
    cases = set(args.cases.split(","))
    print(f"structreg from {Path(structreg.__file__).parent}, {os.cpu_count()} cores\n")
    print(
        "| case | grid points | GridSearchCV s | structreg CV s | speed-up | same best_params_ "
        "| max mean-score gap | load before / after |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    ratios = []
    if "usps" in cases:
        X, y = _data("usps", n=2000)
        y_semi = semi_labels(y, 10, seed=0)
        cv = SemiSupervisedKFold(5, random_state=0)
        for widths in ([None], [0.5, 2.0])[: args.usps_widths]:
            grid = dict(LAP_GRID)
            base = LapRLSC(n_neighbors=10)
            if widths != [None]:
                scale = 1.0 / (X.shape[1] * X.var())
                grid["gamma"] = [w * scale for w in widths]
            ratios.append(
                compare(
                    f"LapRLSC, USPS 2000 (100 labeled){'' if len(widths) == 1 else ', 2 widths'}",
                    lambda grid=grid, base=base: LapRLSCCV(base, grid, cv=cv),
                    lambda grid=grid, base=base: GridSearchCV(base, grid, cv=cv),
                    X,
                    y_semi,
                    args.repeats,
                )
            )
    for name in ("sonar", "ionosphere", "wine"):
        X, y = _data(name)
        if "uci-lap" in cases:
            per_class = int(0.3 * np.bincount(y).min())
            y_semi = semi_labels(y, per_class, seed=0)
            cv = SemiSupervisedKFold(5, random_state=0)
            ratios.append(
                compare(
                    f"LapRLSC, {name} ({per_class} labeled per class)",
                    lambda cv=cv: LapRLSCCV(LapRLSC(), LAP_GRID, cv=cv),
                    lambda cv=cv: GridSearchCV(LapRLSC(), LAP_GRID, cv=cv),
                    X,
                    y_semi,
                    args.repeats,
                )
            )
        if "uci-drlsc" in cases:
            cv = StratifiedKFold(5, shuffle=True, random_state=0)
            for kernel in ("linear", "rbf"):
                grid = dict(DRLSC_GRID)
                if kernel == "rbf":
                    grid["gamma"] = [0.5 / X.shape[1], 2.0 / X.shape[1]]
                ratios.append(
                    compare(
                        f"DRLSC {kernel}, {name}",
                        lambda grid=grid, k=kernel, cv=cv: DRLSCCV(DRLSC(kernel=k), grid, cv=cv),
                        lambda grid=grid, k=kernel, cv=cv: GridSearchCV(
                            DRLSC(kernel=k), grid, cv=cv
                        ),
                        X,
                        y,
                        args.repeats,
                    )
                )
    print(f"\ngeometric mean speed-up: {np.exp(np.mean(np.log(ratios))):.1f}x")
    if args.record:
        rows = page_rows()
        loads = [x for m in MEASURED.values() for x in m["loads"]]
        record(args.record, PAGE_COLUMNS, rows, load=load_range(loads or [current_load()]))


SPEED_UP = "speed-up (GridSearchCV time / structreg CV time)"
PAGE_COLUMNS = ["case", "grid points", SPEED_UP]
UCI = ("sonar", "ionosphere", "wine")
# key, the page's case, its cases' labels here (in the cell's order; "(" ends a prefix)
PAGE_ROWS = [
    (
        "uci-lap",
        "LapRLSC (8 gamma_A x 8 gamma_I), sonar / ionosphere / wine, 30 % labeled",
        [f"LapRLSC, {name} (" for name in UCI],
    ),
    (
        "uci-drlsc-linear",
        "DRLSC linear (11 eta x 3 k), sonar / ionosphere / wine",
        [f"DRLSC linear, {name}" for name in UCI],
    ),
    (
        "uci-drlsc-rbf",
        "DRLSC RBF (11 eta x 3 k x 2 widths), sonar / ionosphere / wine",
        [f"DRLSC rbf, {name}" for name in UCI],
    ),
    (
        "usps",
        "LapRLSC, USPS 2,000 digits (100 labeled, 1,980 training points per fold)",
        ["LapRLSC, USPS 2000 (100 labeled)"],
    ),
    ("usps-2widths", "the same x 2 kernel widths", ["LapRLSC, USPS 2000 (100 labeled), 2 widths"]),
]


def page_rows() -> list[dict]:
    """The grid-search table's rows of the cases measured: the speed-ups of the three UCI sets
    side by side, USPS's with both times."""
    rows = []
    for key, case, labels in PAGE_ROWS:
        found = [
            next(
                (
                    m
                    for lab, m in MEASURED.items()
                    if lab == p or p.endswith("(") and lab.startswith(p)
                ),
                None,
            )
            for p in labels
        ]
        if any(m is None for m in found):
            continue
        speed = [m["grid"] / m["ours"] for m in found]
        cell = " / ".join(f"{r:.1f}x" for r in speed)
        if len(found) == 1:
            cell += f" ({found[0]['grid']:.1f} s / {found[0]['ours']:.1f} s)"
        points = found[0]["points"]
        rows.append({"case": case, "grid points": str(points), SPEED_UP: cell, "_key": key})
    return rows


if __name__ == "__main__":
    main()
