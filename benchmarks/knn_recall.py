"""Approximate against exact kNN search: recall and time, side by side.

    python benchmarks/knn_recall.py [--data mixture64,latent8,usps] [--sizes 1e5,1e6]
                                    [--k 10] [--repeats 3] [--queries 2000] [--full-exact 2e5]
                                    [--record PATH]

For each data set and size: ``knn_indices(X, k, algorithm="approximate")`` (faiss' calibrated
inverted file when faiss imports, else NN-descent) and the exact search, interleaved over
``--repeats`` runs, medians reported.  Recall is measured on ``--queries`` random points
against the exact search of those points (float64, ties counted as found); the exact search
of all points is timed up to ``--full-exact`` points, above it its time is the time of the
exact search of the sampled queries times ``n / queries`` (marked "est."; the exact search
costs the same per query).  The load average (1 min) is printed beside every timing.

Data (12 unit Gaussian blobs, centres N(0, 4^2 I), unless said):

* ``mixture64``: the blobs in 64-d, full rank: the hardest case (high intrinsic dimension);
* ``latent8``: the blobs in 8-d, mapped into 64-d by a random orthonormal map, plus
  N(0, 0.05^2) noise in all 64 coordinates (low intrinsic dimension);
* ``usps``: USPS digits (11,000 x 256, grey levels 0-255) replicated: each copy shifted by up
  to one pixel each way, blended with a random digit of its class (weight U(0, 0.3)) and
  N(0, 8^2) noise added;
* ``mixture10``, ``mixture32``: the blobs in 10-d, 32-d (the exact search by cells);
* ``moons``: two moons in 2-d, noise 0.1 (the k-d tree regime).

``--record PATH`` also writes the rows, in the columns of the scale guide's recall table, into
the CSV data file ``PATH`` (``docs/benchmarks/knn_recall.csv``), replacing the rows of the same
data and size.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _record import record  # noqa: E402

from structreg.structure import graphs  # noqa: E402


def _load() -> float:
    return os.getloadavg()[0]


def _blobs(rng, n: int, d: int) -> np.ndarray:
    centres = rng.normal(size=(12, d)) * 4.0
    X = rng.normal(size=(n, d))
    X += centres[rng.integers(0, 12, n)]
    return X


def make(name: str, n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if name == "mixture64":
        return _blobs(rng, n, 64)
    if name in ("mixture10", "mixture32"):
        return _blobs(rng, n, int(name[7:]))
    if name == "latent8":
        Z = _blobs(rng, n, 8)
        basis = np.linalg.qr(rng.normal(size=(64, 8)))[0]  # orthonormal columns
        X = Z @ basis.T
        X += rng.normal(scale=0.05, size=X.shape)
        return X
    if name == "moons":
        from sklearn.datasets import make_moons

        return make_moons(n, noise=0.1, random_state=seed)[0]
    if name == "usps":
        from structreg.datasets import load_dataset

        usps = load_dataset("usps")
        images, labels = usps.data.reshape(-1, 16, 16), np.asarray(usps.target)
        X = np.empty((n, 256))
        by_class = {c: np.flatnonzero(labels == c) for c in np.unique(labels)}
        for start in range(0, n, 50_000):
            rows = np.arange(start, min(n, start + 50_000))
            src = rows % len(images)  # every digit once before any is repeated
            mate = np.array([rng.choice(by_class[labels[i]]) for i in src])
            a = rng.uniform(0, 0.3, size=(rows.size, 1, 1))
            img = (1 - a) * images[src] + a * images[mate]
            dy, dx = rng.integers(-1, 2, size=(2, rows.size))
            for sy in (-1, 0, 1):
                for sx in (-1, 0, 1):
                    pick = (dy == sy) & (dx == sx)
                    img[pick] = np.roll(img[pick], (sy, sx), axis=(1, 2))
            X[rows] = img.reshape(rows.size, 256) + rng.normal(scale=8.0, size=(rows.size, 256))
        return X
    raise ValueError(f"unknown data {name!r}")


def _timed(func):
    load = _load()
    t = time.perf_counter()
    out = func()
    return out, time.perf_counter() - t, max(load, _load())


def run(name: str, n: int, k: int, repeats: int, queries: int, full_exact: int) -> dict:
    X = make(name, n)
    sample = np.sort(np.random.default_rng(1).choice(n, min(n, queries), replace=False))
    ref = graphs._exact_indices(X, X[sample], k + 1)
    ref = graphs._drop_self(ref, sample, k)
    diff = X[ref] - X[sample][:, None, :]
    ref_dist = np.sqrt(np.einsum("ijk,ijk->ij", diff, diff))
    times = {"approximate": [], "exact": []}
    loads = {"approximate": [], "exact": []}
    full = n <= full_exact
    recall = strict = None
    info: dict = {}
    for _ in range(repeats):  # interleaved
        ind, t, load = _timed(lambda: graphs.knn_indices(X, k, algorithm="approximate"))
        times["approximate"].append(t)
        loads["approximate"].append(load)
        info = dict(graphs.IVF_LAST)
        recall = float(graphs._sample_recall(X, X[sample], ind[sample], ref_dist).mean())
        pairs = zip(ind[sample], ref, strict=True)
        strict = float(np.mean([len(set(a) & set(b)) / k for a, b in pairs]))
        del ind
        if full:
            _, t, load = _timed(lambda: graphs.knn_indices(X, k, algorithm="exact"))
        else:
            _, t, load = _timed(lambda: graphs._exact_indices(X, X[sample], k + 1))
            t *= n / sample.size
        times["exact"].append(t)
        loads["exact"].append(load)
    approx, exact = np.median(times["approximate"]), np.median(times["exact"])
    return dict(
        data=name,
        n=n,
        d=X.shape[1],
        recall=recall,
        strict=strict,
        approx_s=approx,
        exact_s=exact,
        exact_est=not full,
        ratio=exact / approx,
        load_approx=max(loads["approximate"]),
        load_exact=max(loads["exact"]),
        auto=graphs.resolve_algorithm(X, "auto"),
        **info,
    )


PAGE_COLUMNS = [
    "data (n, d)",
    "recall",
    "approximate",
    "exact",
    "ratio",
    "load (approx / exact)",
    "probes / cells",
]
PAGE_DATA = {
    "mixture64": "12 full-rank Gaussian blobs, {n} x 64",
    "latent8": "8-d latent blobs in 64-d, {n}",
    "usps": "USPS replicated (shift, blend, noise), {n} x 256",
    "mixture10": "12 Gaussian blobs, {n} x 10 (exact: cells)",
    "mixture32": "12 Gaussian blobs, {n} x 32 (exact: cells)",
    "moons": "two moons, {n} x 2",
}


def _seconds(t: float) -> str:
    return f"{t:.1f} s" if t < 100 else f"{t:,.0f} s"


def page_row(r: dict) -> dict:
    """One row in the columns of the scale guide's recall table."""
    mantissa, exponent = f"{r['n']:.0e}".split("e")
    size = f"{mantissa}e{int(exponent)}"
    return {
        "data (n, d)": PAGE_DATA[r["data"]].format(n=size),
        "recall": f"{r['recall']:.4f}",
        "approximate": _seconds(r["approx_s"]),
        "exact": _seconds(r["exact_s"]) + (" est." if r["exact_est"] else ""),
        "ratio": f"{r['ratio']:.2g}",
        "load (approx / exact)": f"{r['load_approx']:.1f} / {r['load_exact']:.1f}",
        "probes / cells": f"{r['nprobe']} / {r['nlist']}" if "nprobe" in r else "-",
        "_key": f"{r['data']} {size}",
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="mixture64,latent8,usps")
    parser.add_argument("--sizes", default="1e5,1e6")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--full-exact", type=float, default=2e5)
    parser.add_argument(
        "--record", default="", metavar="PATH", help="write the rows into this CSV data file"
    )
    args = parser.parse_args(argv)
    engine = graphs._approximate_engine()
    print(f"approximate engine: {engine}; recall target {graphs.IVF_RECALL}; k = {args.k}")
    header = (
        f"{'data':<10} {'n':>8} {'d':>4} {'recall':>7} {'strict':>7} {'approx s':>9} "
        f"{'exact s':>12} {'ratio':>6} {'load a/e':>10} {'auto':>11} nprobe/nlist"
    )
    print(header, flush=True)
    for size in args.sizes.split(","):
        for name in args.data.split(","):
            r = run(name, int(float(size)), args.k, args.repeats, args.queries, args.full_exact)
            exact = f"{r['exact_s']:.1f}" + (" est." if r["exact_est"] else "")
            probe = f"{r['nprobe']}/{r['nlist']}" if "nprobe" in r else "-"
            print(
                f"{r['data']:<10} {r['n']:>8} {r['d']:>4} {r['recall']:>7.4f} "
                f"{r['strict']:>7.4f} {r['approx_s']:>9.1f} {exact:>12} {r['ratio']:>6.2f} "
                f"{r['load_approx']:>4.1f}/{r['load_exact']:<4.1f} {r['auto']:>11} {probe}",
                flush=True,
            )
            if args.record:
                record(args.record, PAGE_COLUMNS, [page_row(r)])


if __name__ == "__main__":
    main()
