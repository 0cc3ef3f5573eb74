"""LapRLSC and DA_LapRLSC with the Nystroem solver at 10^5 and 10^6 points (issue 8, benchmark b).

Synthetic data with 10 labeled points per class: ``moons`` (two moons, noise 0.1) and
``mixture`` (4 classes, each a mixture of 3 Gaussian blobs in 10-D).  Each fit builds the kNN
graph (k = 10; ``algorithm="auto"``: exact k-d tree for the 2-D moons, NN-descent for the
10-D mixture from 2e5 points, see :mod:`structreg.structure.graphs`), draws
m uniform centres and solves the m x m system.  Printed: fit time, peak traced memory, the
process's peak RSS so far, and the accuracy on all points.  Targets of the issue: n = 100k
in <= 60 s and <= 4 GiB on 2 cores; n = 1M in <= 15 minutes.

    python benchmarks/scale_nystroem.py [--sizes 100000,1000000] [--m 1000]
        [--models LapRLSC,DALapRLSC,LapSVM] [--data moons,mixture]
"""

from __future__ import annotations

import argparse
import resource

import numpy as np
from _measure import gib, measure, semi_labels
from sklearn.datasets import make_blobs, make_moons

from structreg import DALapRLSC, LapRLSC, LapSVM


def make_data(kind: str, n: int, seed: int = 0):
    if kind == "moons":
        return make_moons(n, noise=0.1, random_state=seed)
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=4.0, size=(12, 10))
    X, blob = make_blobs(n, centers=centers, random_state=seed)
    return X, blob % 4  # 4 classes of 3 blobs each


def make_model(name: str, data: str, m: int):
    width = 2.0 if data == "moons" else 0.05
    common = dict(gamma=width, gamma_A=1e-4, n_neighbors=10, n_components=m, random_state=0)
    if name == "LapRLSC":
        return LapRLSC(solver="nystroem", gamma_I=10.0, **common)
    if name == "DALapRLSC":
        return DALapRLSC(solver="nystroem", gamma_D=10.0, reliability=1.0, **common)
    if name == "LapSVM":
        return LapSVM(solver="nystroem", gamma_I=10.0, **common)
    raise ValueError(name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--m", type=int, default=1000)
    parser.add_argument("--models", default="LapRLSC,DALapRLSC")
    parser.add_argument("--data", default="moons,mixture")
    args = parser.parse_args()
    head = f"{'n':>8} {'data':>8} {'model':>10} {'fit s':>8} {'peak GiB':>9} {'RSS GiB':>8}"
    print(head + f" {'acc':>7}")
    for n in map(int, args.sizes.split(",")):
        for data in args.data.split(","):
            X, y = make_data(data, n)
            y_semi = semi_labels(y, 10, seed=0)
            for name in args.models.split(","):
                clf = make_model(name, data, args.m)
                _, seconds, peak = measure(clf.fit, X, y_semi)
                acc = float(np.mean(clf.transduction_ == y))
                rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
                print(
                    f"{n:>8} {data:>8} {name:>10} {seconds:>8.1f} {gib(peak):>9} "
                    f"{gib(rss):>8} {acc:>7.4f}",
                    flush=True,
                )
                del clf


if __name__ == "__main__":
    main()
