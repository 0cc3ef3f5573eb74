"""The default ``LapRLSC()`` against the tuned Nystroem configuration at 1e5 and 1e6 points.

Two moons (``make_moons(n, noise=0.1)``), 5 labels per class, the rest ``y = -1``.  Each fit
runs in a fresh process (so that its peak RSS, ``getrusage(RUSAGE_SELF).ru_maxrss``, is its
own), the two configurations interleaved, ``--repeats`` times each; printed: the median fit
time (``time.perf_counter`` around ``fit``), the median CPU time of the fit (``time.
process_time``: every thread of the process, so a machine busy with other work inflates it
less than the wall time), the median peak RSS of the process, the accuracy on the unlabeled
points, the number of Nystroem features, and the ratios default / tuned, with the load average
before and after each size and the machine.

* default: ``LapRLSC(random_state=0)`` (every parameter at its default but the seed of the
  centre draw, for runs that compare): ``gamma="graph"``, ``gamma_A=1e-2``,
  ``gamma_I="auto"``, 6 neighbours, 1000 uniform centres.
* tuned: the configuration of ``scale_nystroem.py``, ``LapRLSC(solver="nystroem", gamma=2,
  gamma_A=1e-4, gamma_I=10, n_neighbors=10, n_components=1000, random_state=0)``.

    python benchmarks/laprlsc_scale.py [--sizes 100000,1000000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time

import numpy as np

CONFIGS = ("default", "tuned")


def make_model(config: str):
    from structreg import LapRLSC

    if config == "default":
        return LapRLSC(random_state=0)
    return LapRLSC(
        solver="nystroem",
        gamma=2.0,
        gamma_A=1e-4,
        gamma_I=10.0,
        n_neighbors=10,
        n_components=1000,
        random_state=0,
    )


def worker(config: str, n: int) -> None:
    """One fit in this process; prints its measurements as JSON."""
    from _measure import semi_labels
    from sklearn.datasets import make_moons

    X, y = make_moons(n, noise=0.1, random_state=0)
    y_semi = semi_labels(y, 5, seed=0)
    clf = make_model(config)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    t0, c0 = time.perf_counter(), time.process_time()
    clf.fit(X, y_semi)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    unlabeled = y_semi == -1
    acc = float(np.mean(clf.transduction_[unlabeled] == y[unlabeled]))
    out = {"seconds": seconds, "cpu": cpu, "peak": peak, "before": before, "acc": acc}
    out["features"] = int(clf.feature_map_.n_components_)
    print(json.dumps(out))


def run_one(config: str, n: int) -> dict:
    here = os.path.dirname(os.path.abspath(__file__))
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", config, str(n)]
    done = subprocess.run(cmd, cwd=here, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def load() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--worker", nargs=2, metavar=("CONFIG", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker[0], int(args.worker[1]))
        return
    machine = platform.processor() or platform.machine()
    print(f"machine: {platform.platform()}, {machine}, {os.cpu_count()} cores")
    print(
        f"{'n':>8} {'config':>8} {'fit s':>7} {'cpu s':>7} {'peak GiB':>9} {'acc':>7} {'m':>5}  "
        f"{'runs (s)':<24} load before / after"
    )
    for n in map(int, args.sizes.split(",")):
        start_load = load()
        runs: dict[str, list[dict]] = {c: [] for c in CONFIGS}
        for r in range(args.repeats):  # interleaved, the order alternating
            for config in CONFIGS if r % 2 == 0 else CONFIGS[::-1]:
                runs[config].append(run_one(config, n))
        med = {}
        for config in CONFIGS:
            rs = runs[config]
            med[config] = {
                k: float(np.median([r[k] for r in rs])) for k in ("seconds", "cpu", "peak")
            }
            times = ", ".join(f"{r['seconds']:.1f}" for r in rs)
            print(
                f"{n:>8} {config:>8} {med[config]['seconds']:>7.1f} {med[config]['cpu']:>7.1f} "
                f"{med[config]['peak'] / 2**30:>9.2f} {rs[0]['acc']:>7.4f} "
                f"{rs[0]['features']:>5}  {times:<24} {start_load} / {load()}",
                flush=True,
            )
        ratio = {k: med["default"][k] / med["tuned"][k] for k in ("seconds", "cpu", "peak")}
        print(
            f"{n:>8} default/tuned: time {ratio['seconds']:.2f}x, CPU time {ratio['cpu']:.2f}x, "
            f"peak RSS {ratio['peak']:.2f}x",
            flush=True,
        )


if __name__ == "__main__":
    main()
