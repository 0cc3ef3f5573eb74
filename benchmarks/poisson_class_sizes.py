"""PoissonLearning on classes of unequal sizes: its default class-size estimate
(``class_prior="auto"``) against the true class sizes given as ``class_prior``.

The defaults suite's sets of unequal classes with the same number of labels in every class
(``benchmarks/defaults_suite.py``: the same sets, the same draws and the same standardisation,
10 draws per cell), accuracy (%) on the hidden points, mean ± sd over the draws:

* ``PoissonLearning()``: the suite's own column (the default ``class_prior="auto"``);
* ``PoissonLearning(class_prior=sizes)``: the class sizes of the whole set (the shares of its
  points) passed as ``class_prior``.

    python benchmarks/poisson_class_sizes.py [--cells weak_2to1_9d:3,weak_3to1_3d:10,...]
                                             [--draws 10] [--record PATH]

Takes a few seconds.  ``--record`` writes the table as a data file of the documentation
(``docs/benchmarks/poisson_class_sizes.csv``).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from _record import current_load, load_range, record  # noqa: E402
from defaults_suite import drawn, problems  # noqa: E402

import structreg  # noqa: E402

CELLS = "weak_2to1_9d:3,weak_3to1_3d:10,weak_4to1_20d:10"
COLUMNS = ["set", "L", "PoissonLearning", "PoissonLearning(class_prior=sizes)"]


def accuracy(problem, per_class: int, seed: int, sizes: bool) -> float:
    X, y, y_semi = drawn(problem, per_class, seed)
    prior = np.bincount(y) / len(y) if sizes else "auto"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = structreg.PoissonLearning(class_prior=prior)
        if "random_state" in model.get_params():  # as the suite sets it
            model.set_params(random_state=seed)
        labels = model.fit(X, y_semi).transduction_
    hidden = y_semi == -1
    return float(np.mean(labels[hidden] == y[hidden]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", default=CELLS, help="set:labels per class, comma-separated")
    parser.add_argument("--draws", type=int, default=10)
    parser.add_argument("--record", default="", metavar="PATH", help="write the table as CSV")
    args = parser.parse_args()
    by_name = {p.name: p for p in problems()}
    loads = [current_load()]
    print("| " + " | ".join(COLUMNS) + " |")
    print("|" + " --- |" * len(COLUMNS))
    rows = []
    for item in args.cells.split(","):
        name, per_class = item.split(":")
        problem, per_class = by_name[name], int(per_class)
        cells = [name, str(per_class)]
        for sizes in (False, True):
            acc = np.array([accuracy(problem, per_class, s, sizes) for s in range(args.draws)])
            cells.append(f"{100 * acc.mean():.1f} ± {100 * acc.std():.1f}")  # as the suite
        print("| " + " | ".join(cells) + " |", flush=True)
        rows.append({**dict(zip(COLUMNS, cells, strict=True)), "_key": f"{name} {per_class}"})
        loads.append(current_load())
    if args.record:
        record(args.record, COLUMNS, rows, load=load_range(loads))


if __name__ == "__main__":
    main()
