"""SRSVM vs scikit-learn SVC training time on the two-class UCI sets, side by side.

Both run in this process on the same standardised training half (a random half of each
class), with the same kernel, gamma and C; SRSVM adds the Ward clustering per class, the knee
search, the cluster-scatter penalty and the deformed kernel.  Prints the median training time
of each over the repeats and their ratio (the SRSVM paper reports about 10x: 5.35 s vs 0.50 s
on average in its Table V).

    python benchmarks/srsvm_vs_svc.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from structreg import SRSVM
from structreg.datasets import load_dataset

SETS = ("bupa", "ionosphere", "pima", "sonar", "wdbc")


def _median_fit_time(make, X, y, repeats):
    times = []
    for _ in range(repeats):
        est = make()
        t0 = time.perf_counter()
        est.fit(X, y)
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'data':<11} {'n_train':>7} {'kernel':>7} {'SVC s':>9} {'SRSVM s':>9} {'ratio':>7}")
    ratios = {"linear": [], "rbf": []}
    for name in SETS:
        X, y = load_dataset(name, return_X_y=True)
        X = StandardScaler().fit_transform(X)
        train = np.zeros(len(y), bool)
        for c in np.unique(y):
            idx = np.flatnonzero(y == c)
            train[rng.choice(idx, len(idx) // 2, replace=False)] = True
        Xtr, ytr = X[train], np.asarray(y)[train]
        for kernel in ("linear", "rbf"):
            svc = _median_fit_time(lambda k=kernel: SVC(kernel=k, C=1.0), Xtr, ytr, args.repeats)
            srs = _median_fit_time(
                lambda k=kernel: SRSVM(kernel=k, C=1.0, lam=1.0), Xtr, ytr, args.repeats
            )
            ratios[kernel].append(srs / svc)
            print(f"{name:<11} {len(ytr):>7} {kernel:>7} {svc:>9.4f} {srs:>9.4f} {srs / svc:>7.1f}")
    for kernel, r in ratios.items():
        print(f"geometric mean SRSVM/SVC ratio, {kernel} kernel: {np.exp(np.mean(np.log(r))):.1f}")


if __name__ == "__main__":
    main()
