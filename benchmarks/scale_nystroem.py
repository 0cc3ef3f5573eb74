"""LapRLSC and DA_LapRLSC with the Nystroem solver at 10^5 and 10^6 points (issue 8, benchmark b).

Synthetic data with 10 labeled points per class: ``moons`` (two moons, noise 0.1) and
``mixture`` (4 classes, each a mixture of 3 Gaussian blobs in 10-D).  Each fit builds the kNN
graph (k = 10; ``algorithm="auto"``: exact k-d tree for the 2-D moons, NN-descent for the
10-D mixture from 2e5 points, see :mod:`structreg.structure.graphs`), draws
m uniform centres and solves the m x m system.  Printed: fit time, peak traced memory, the
process's peak RSS so far, and the accuracy on all points.  Targets of the issue: n = 100k
in <= 60 s and <= 4 GiB on 2 cores; n = 1M in <= 15 minutes.

    python benchmarks/scale_nystroem.py [--sizes 100000,1000000] [--m 1000]
        [--models LapRLSC,DALapRLSC,LapSVM] [--data moons,mixture] [--record PATH]

``--record docs/benchmarks/scale_nystroem.csv`` also writes the benchmarks page's rows (one
per data set, size and m; a cell per model: fit time, peak traced memory, and LapRLSC's
accuracy) into that data file; a model not run keeps its cell there.
"""

from __future__ import annotations

import argparse
import resource

import numpy as np
from _measure import gib, measure, semi_labels
from _record import current_load, load_range, record
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


PAGE_MODELS = {"LapRLSC": "LapRLSC", "DALapRLSC": "DALapRLSC", "LapSVM": "LapSVM (primal)"}
PAGE_COLUMNS = ["problem", *PAGE_MODELS.values()]


def _size(n: int) -> str:
    mantissa, exponent = f"{n:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def problem_label(data: str, n: int, m: int) -> str:
    """The benchmarks page's name of a problem."""
    name = "two moons" if data == "moons" else "10-d Gaussian mixture, 4 classes"
    return f"{name}, n = {_size(n)}" + (f", m = {m}" if m != 1000 else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--m", type=int, default=1000)
    parser.add_argument("--models", default="LapRLSC,DALapRLSC")
    parser.add_argument("--data", default="moons,mixture")
    parser.add_argument(
        "--record",
        default="",
        metavar="PATH",
        help="write the rows into this data file (docs/benchmarks/scale_nystroem.csv)",
    )
    args = parser.parse_args()
    head = f"{'n':>8} {'data':>8} {'model':>10} {'fit s':>8} {'peak GiB':>9} {'RSS GiB':>8}"
    print(head + f" {'acc':>7}")
    for n in map(int, args.sizes.split(",")):
        for data in args.data.split(","):
            X, y = make_data(data, n)
            y_semi = semi_labels(y, 10, seed=0)
            row, loads = {"problem": problem_label(data, n, args.m)}, [current_load()]
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
                row[PAGE_MODELS[name]] = f"{seconds:.1f} s, {gib(peak)} GiB" + (
                    f", acc {acc:.3f}" if name == "LapRLSC" else ""
                )
                loads.append(current_load())
                del clf
            if args.record:
                row["_key"] = f"{data} {_size(n)} m{args.m}"
                record(args.record, PAGE_COLUMNS, [row], load=load_range(loads), merge_cells=True)


if __name__ == "__main__":
    main()
