"""LapRLSC against scikit-learn's LabelSpreading on USPS, 10 labels per class (issue 8,
benchmark d).

All 11,000 USPS digits (256 pixels, scaled to [0, 1] per feature as read) are the training
set; 10 random digits of each class are labeled, the rest unlabeled.  Both methods run side by
side in this process on the same draws and the same kNN graph size (k = 10).  Printed per
method: mean +- std accuracy on the unlabeled points over the draws, and the median fit time.

* LapRLSC: RBF kernel (gamma = 1 / (d * var), scikit-learn's "scale"), heat-kernel kNN graph,
  ``solver="dense"`` (exact) and ``solver="nystroem"`` (m = 2000 centres).
* LabelSpreading: ``kernel="knn"`` (sparse graph, k = 10) and ``kernel="rbf"`` (dense n x n,
  the same gamma), alpha = 0.2 (scikit-learn's default), transductive labels ``transduction_``.

    python benchmarks/usps_label_spreading.py [--draws 5] [--record PATH]

``--record docs/benchmarks/laprlsc_solvers.csv`` also writes LapRLSC's dense and Nystroem
results as the USPS row of the benchmarks page's solver table into that data file.
"""

from __future__ import annotations

import argparse

import numpy as np
from _measure import measure, semi_labels
from _record import current_load, load_range, record
from sklearn.preprocessing import MinMaxScaler
from sklearn.semi_supervised import LabelSpreading

from structreg import LapRLSC
from structreg.datasets import load_dataset


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=5)
    parser.add_argument("--methods", default="LapRLSC-dense,LapRLSC-nystroem,LS-knn,LS-rbf")
    parser.add_argument(
        "--record",
        default="",
        metavar="PATH",
        help="write the USPS row of this data file (docs/benchmarks/laprlsc_solvers.csv)",
    )
    args = parser.parse_args()
    X, y = load_dataset("usps", return_X_y=True)
    X = MinMaxScaler().fit_transform(X)
    y = np.asarray(y).astype(int)
    gamma = 1.0 / (X.shape[1] * X.var())
    lap = dict(gamma=gamma, gamma_A=1e-6, gamma_I=1e-2, n_neighbors=10, random_state=0)
    makers = {
        "LapRLSC-dense": lambda: LapRLSC(solver="dense", **lap),
        "LapRLSC-nystroem": lambda: LapRLSC(solver="nystroem", n_components=2000, **lap),
        "LS-knn": lambda: LabelSpreading(kernel="knn", n_neighbors=10, max_iter=100),
        "LS-rbf": lambda: LabelSpreading(kernel="rbf", gamma=gamma, max_iter=100),
    }
    methods = args.methods.split(",")
    acc = {m: [] for m in methods}
    secs = {m: [] for m in methods}
    print(f"USPS n={len(y)} d={X.shape[1]} 10 labels/class, {args.draws} draws, gamma={gamma:.4g}")
    loads = [current_load()]
    for draw in range(args.draws):
        y_semi = semi_labels(y, 10, seed=draw)
        unl = y_semi == -1
        for m in methods:
            est = makers[m]()
            _, seconds, _ = measure(est.fit, X, y_semi)
            acc[m].append(float(np.mean(est.transduction_[unl] == y[unl])))
            secs[m].append(seconds)
            print(f"  draw {draw} {m:<17} acc {acc[m][-1]:.4f} fit {seconds:7.1f} s", flush=True)
        loads.append(current_load())
    print(f"{'method':<17} {'unlabeled acc':>16} {'median fit s':>13}")
    for m in methods:
        a = np.array(acc[m])
        print(f"{m:<17} {a.mean():>9.4f} +- {a.std():.4f} {np.median(secs[m]):>13.1f}")
    if args.record:
        row = page_row(len(y), X.shape[1], args.draws, acc, secs)
        record(args.record, PAGE_COLUMNS, [row], load=load_range(loads), merge_cells=True)


PAGE_COLUMNS = ["data (kernel width)", "n", "dense", "CG (exact)", "Nystroem", "accuracy gap"]


def page_row(n: int, d: int, draws: int, acc: dict, secs: dict) -> dict:
    """LapRLSC's results as the USPS row of the benchmarks page's solver table."""
    row = {
        "data (kernel width)": f"USPS, n = {n}, {d}-d (`usps_label_spreading.py`, {draws} draws)",
        "n": f"{round(n / 1000)}k",
        "_key": "usps",
    }
    for method, column, extra in (
        ("LapRLSC-dense", "dense", ""),
        ("LapRLSC-nystroem", "Nystroem", " (m = 2000)"),
    ):
        if method in acc:
            a, t = np.array(acc[method]), float(np.median(secs[method]))
            seconds = f"{t:.0f}" if t >= 10 else f"{t:.1f}"
            row[column] = f"{seconds} s, acc {a.mean():.3f} ± {a.std():.3f}{extra}"
    if "LapRLSC-dense" in acc and "LapRLSC-nystroem" in acc:
        gap = 100 * (np.array(acc["LapRLSC-nystroem"]) - np.array(acc["LapRLSC-dense"]))
        row["accuracy gap"] = (
            f"{gap.min():+.1f} to {gap.max():+.1f} points (mean {gap.mean():+.2f})"
        )
    return row


if __name__ == "__main__":
    main()
