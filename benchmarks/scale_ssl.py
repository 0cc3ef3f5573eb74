"""Graph-based semi-supervised learning from 1e5 to 1e7 points: time, peak memory and accuracy
of structreg's defaults against the peers, one fit per fresh process.

Data: two moons (``make_moons(n, noise=0.1, random_state=0)``), 5 labels per class (draw 0 of
``semi_labels``), accuracy on the unlabeled points.  Methods:

* ``GFHF()``, ``PoissonLearning()``: structreg's defaults (their solver and neighbour search
  are printed: ``solver_``, ``knn_algorithm_``);
* ``LabelSpreading`` (scikit-learn, ``kernel="knn", n_neighbors=10, alpha=0.99,
  max_iter=1000``: run to its own tolerance, its converged answer);
* graphlearning's Laplace and Poisson learning (k = 10; optional: ``pip install
  "structreg[bench]"``), where installed.

Every fit runs in a process of its own (``--worker``), so that its peak resident memory
(``ru_maxrss``, data included) is its own; the sizes run in increasing order and the methods
in an order that rotates from size to size.  A method that exceeds ``--timeout`` seconds at a
size is stopped and not run at larger sizes.  The last lines give each method's growth
exponent of fit time (slope of log time against log n between the smallest and the largest
size it finished) and its time ratio against the peers at every size.

    python benchmarks/scale_ssl.py [--sizes 1e5,1e6,1e7] [--methods GFHF,PoissonLearning,...]
                                   [--timeout 900] [--record PATH]

Prints the machine and the load average beside every row; the machine is shared and noisy.
``--record docs/benchmarks/scale_ssl.csv`` also writes the rows in the format of the
benchmarks page's scale table into that data file (after every fit), replacing the rows of
the same size and method.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's structreg

import numpy as np  # noqa: E402
from _measure import semi_labels  # noqa: E402
from _record import record  # noqa: E402
from sklearn.datasets import make_moons  # noqa: E402

METHODS = ("GFHF", "PoissonLearning", "LabelSpreading", "gl-Laplace", "gl-Poisson")
PEERS = ("LabelSpreading", "gl-Laplace", "gl-Poisson")


def _fit(method: str, X: np.ndarray, y_semi: np.ndarray) -> tuple[np.ndarray, dict]:
    """The labels of all points by ``method``, and what it reports of itself."""
    if method in ("GFHF", "PoissonLearning"):
        import structreg

        clf = getattr(structreg, method)().fit(X, y_semi)
        return clf.transduction_, {
            "solver": clf.solver_,
            "n_iter": int(clf.n_iter_),
            "knn": clf.knn_algorithm_,
            "weights": clf.weights_,
        }
    if method == "LabelSpreading":
        from sklearn.semi_supervised import LabelSpreading

        clf = LabelSpreading(kernel="knn", n_neighbors=10, alpha=0.99, max_iter=1000)
        return clf.fit(X, y_semi).transduction_, {"n_iter": int(clf.n_iter_)}
    import graphlearning as gl

    train = np.flatnonzero(y_semi != -1)
    W = gl.weightmatrix.knn(X, 10)
    model = gl.ssl.laplace(W) if method == "gl-Laplace" else gl.ssl.poisson(W)
    return model.fit_predict(train, y_semi[train]), {}


def worker(method: str, n: int) -> None:
    """One fit; prints one JSON line."""
    X, y = make_moons(n, noise=0.1, random_state=0)
    y_semi = semi_labels(y, 5, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        labels, info = _fit(method, X, y_semi)
        seconds = time.perf_counter() - t0
    unlabeled = y_semi == -1
    out = {
        "seconds": seconds,
        "peak_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
        "accuracy": 100 * float(np.mean(labels[unlabeled] == y[unlabeled])),
        **info,
    }
    print("RESULT " + json.dumps(out), flush=True)


def _available(method: str) -> bool:
    if not method.startswith("gl-"):
        return True
    try:
        import graphlearning  # noqa: F401
    except ImportError:
        return False
    return True


def run(method: str, n: int, timeout: float) -> dict:
    command = [sys.executable, __file__, "--worker", method, str(n)]
    load = os.getloadavg()[0]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"> {timeout:.0f} s", "load": load}
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            return {**json.loads(line[7:]), "load": load}
    tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
    return {"error": tail[0][:80], "load": load}


def _row(method: str, n: int, r: dict) -> str:
    if "error" in r:
        return f"| {n:.0e} | {method} | {r['error']} | | | | load {r['load']:.1f} |"
    extra = ", ".join(f"{k} {r[k]}" for k in ("solver", "n_iter", "knn", "weights") if k in r)
    return (
        f"| {n:.0e} | {method} | {r['seconds']:.1f} s | {r['peak_gib']:.2f} GiB "
        f"| {r['accuracy']:.2f} % | {extra} | load {r['load']:.1f} |"
    )


PAGE_COLUMNS = [
    "n",
    "method",
    "fit time",
    "peak memory",
    "accuracy",
    "solver, search, weights",
    "load",
]
PAGE_METHODS = {
    "GFHF": "`GFHF()`",
    "PoissonLearning": "`PoissonLearning()`",
    "LabelSpreading": "LabelSpreading (converged)",
    "gl-Laplace": "graphlearning Laplace",
    "gl-Poisson": "graphlearning Poisson",
}


def _size(n: int) -> str:
    """``1e6`` for 10**6, ``2e5`` for 200000."""
    mantissa, exponent = f"{n:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def page_row(method: str, n: int, r: dict) -> dict:
    """One row of the benchmarks page's scale table."""
    row = {"n": _size(n), "method": PAGE_METHODS[method], "load": f"{r['load']:.1f}"}
    row["_key"] = f"{_size(n)} {method}"
    if "error" in r:  # stopped at the timeout, or failed
        stopped = r["error"].startswith(">")
        return {
            **row,
            "fit time": r["error"] if stopped else "",
            "solver, search, weights": ("stopped" if stopped else f"failed: {r['error']}"),
        }
    if "solver" in r:
        solver = r["solver"]
        if r.get("n_iter") and solver == "multigrid":
            solver += f" ({r['n_iter']} iterations)"
        details = f"{solver}, {r['knn']}, {r['weights']}"
    elif "n_iter" in r:
        details = f"{r['n_iter']} iterations"
    else:
        details = ""
    return {
        **row,
        "fit time": f"{r['seconds']:.1f} s",
        "peak memory": f"{r['peak_gib']:.2f} GiB",
        "accuracy": f"{r['accuracy']:.2f} %",
        "solver, search, weights": details,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e5,1e6,1e7")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per fit")
    parser.add_argument("--worker", nargs=2, metavar=("METHOD", "N"), help=argparse.SUPPRESS)
    parser.add_argument(
        "--record",
        default="",
        metavar="PATH",
        help="write the rows into this data file (docs/benchmarks/scale_ssl.csv)",
    )
    args = parser.parse_args()
    if args.worker:
        worker(args.worker[0], int(float(args.worker[1])))
        return
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    methods = [m for m in args.methods.split(",") if m]
    unknown = sorted(set(methods) - set(METHODS))
    if unknown:
        parser.error(f"unknown methods {unknown}; choose from {', '.join(METHODS)}")
    skipped = [m for m in methods if not _available(m)]
    methods = [m for m in methods if m not in skipped]
    machine = f"{platform.platform()}, {os.cpu_count()} cores"
    print(f"machine: {machine}, Python {platform.python_version()}")
    if skipped:
        print(f"not installed, skipped: {', '.join(skipped)} (pip install 'structreg[bench]')")
    print("\n| n | method | fit time | peak memory | accuracy | reported | load |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    results: dict[tuple[str, int], dict] = {}
    stopped: set[str] = set()
    for i, n in enumerate(sizes):
        order = methods[i % len(methods) :] + methods[: i % len(methods)]
        for method in order:
            if method in stopped:
                skipped_here = "not run (stopped at a smaller size)"
                results[method, n] = {"error": skipped_here, "load": 0.0}
            else:
                results[method, n] = run(method, n, args.timeout)
                if "error" in results[method, n]:
                    stopped.add(method)
            print(_row(method, n, results[method, n]), flush=True)
            if args.record and not results[method, n].get("error", "").startswith("not run"):
                record(args.record, PAGE_COLUMNS, [page_row(method, n, results[method, n])])
    print("\nGrowth exponent of fit time (log time / log n, smallest to largest size finished):")
    for method in methods:
        done = [n for n in sizes if "seconds" in results[method, n]]
        if len(done) >= 2:
            a, b = done[0], done[-1]
            slope = math.log(results[method, b]["seconds"] / results[method, a]["seconds"])
            print(f"  {method}: {slope / math.log(b / a):.2f} ({a:.0e} -> {b:.0e})")
    print("\nTime ratios (structreg / peer; below 1: structreg faster):")
    for n in sizes:
        for method in ("GFHF", "PoissonLearning"):
            if method not in methods or "seconds" not in results[method, n]:
                continue
            ratios = [
                f"{peer} {results[method, n]['seconds'] / results[peer, n]['seconds']:.2f}"
                for peer in PEERS
                if peer in methods and "seconds" in results[peer, n]
            ]
            print(f"  n={n:.0e} {method}: {', '.join(ratios) or 'no peer finished'}")


if __name__ == "__main__":
    main()
