"""Where the fit time of the graph models goes (issue 21): LapRLSC, LapSVM and GFHF with their
defaults on USPS (all 11,000 digits, 10 labels per class) and on the 10-d mixture of
``ssl_peers.py`` (1e5 points, 3 labels per blob), one fit each under :mod:`cProfile`.

Phases (cumulative times of the functions named, seconds):

* search -- the kNN search (``structure.graphs._knn_indices``);
* graph -- the rest of the graph (``knn_graph`` / ``self_tuning_graph``: edges, weights);
* features -- the Nystroem features (``kernels.NystroemFeatures.fit_transform``);
* solve -- everything else (assembly of the normal equations and their solution; GFHF's
  harmonic solve).

To compare two versions, run the script from each checkout (it imports the structreg of the
checkout it lies in, or of ``--src``)::

    python benchmarks/ssl_breakdown.py [--cases usps10,mixture] [--src PATH]
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import os
import pstats
import sys
import time
import warnings
from pathlib import Path

PHASES = {
    "search": ("graphs.py", "_knn_indices"),
    "graph": [("graphs.py", "knn_graph"), ("graphs.py", "self_tuning_graph")],
    "features": ("kernels.py", "fit_transform"),
}


def _cumulative(stats: pstats.Stats, file: str, name: str, largest: bool = False) -> float:
    """Summed (or, for methods that may call each other, the largest) cumulative time of the
    functions ``name`` in files ending with ``file``."""
    times = [
        ct
        for (path, _, func), (_, _, _, ct, _) in stats.stats.items()
        if func == name and path.endswith(file)
    ]
    return max(times, default=0.0) if largest else sum(times)


def breakdown(make, X, y_semi) -> tuple[dict[str, float], float]:
    profile = cProfile.Profile()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        profile.enable()
        model = make().fit(X, y_semi)
        profile.disable()
        total = time.perf_counter() - t0
    stats = pstats.Stats(profile)
    search = _cumulative(stats, *PHASES["search"])
    graph = sum(_cumulative(stats, *key) for key in PHASES["graph"]) - search
    features = _cumulative(stats, *PHASES["features"], largest=True)
    phases = {"search": search, "graph": graph, "features": features}
    phases["solve"] = total - sum(phases.values())
    return phases, model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="usps10,mixture")
    parser.add_argument("--src", default=str(Path(__file__).resolve().parents[1]))
    args = parser.parse_args()
    sys.path.insert(0, args.src)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import numpy as np

    structreg = importlib.import_module("structreg")  # before ssl_peers puts this checkout first
    peers = importlib.import_module("ssl_peers")

    print(f"# structreg from {Path(structreg.__file__).parent}, load {os.getloadavg()[0]:.1f}")
    data = {"usps10": lambda: peers.usps(10, 1), "mixture": lambda: peers.mixture(1)}
    print("| data | model | total (s) | search | graph | features | solve | accuracy (%) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for case in args.cases.split(","):
        X, y, (y_semi,) = data[case]()
        unlabeled = y_semi == -1
        for name in ("LapRLSC", "LapSVM", "GFHF"):
            phases, model = breakdown(getattr(structreg, name), X, y_semi)
            acc = 100 * np.mean(model.transduction_[unlabeled] == y[unlabeled])
            cells = " | ".join(f"{phases[p]:.2f}" for p in ("search", "graph", "features", "solve"))
            print(
                f"| {case} | {name} | {sum(phases.values()):.2f} | {cells} | {acc:.1f} |",
                flush=True,
            )
    print(f"# load at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
