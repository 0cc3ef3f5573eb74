"""Poisson learning / GFHF / LapRLSC on a Dask LocalCluster whose workers may each hold less
memory than the in-memory fit needs, beside the in-memory fit of the same data.

    .venv/bin/python benchmarks/dask_fit.py [--n 1000000] [--worker-memory 1.2GiB]
        [--estimator gfhf|poisson|laprlsc] [--label-rate 0.01] [--n-components 500]
        [--blocks 4]

LapRLSC fits Nystroem features on ``--n-components`` centres (``solver="nystroem"``, what
``"auto"`` picks at this size in memory): its n x m design alone (8 n m bytes) is more than a
worker's limit, while each block's share is not.

The data (two moons with noise 0.1, a ``--label-rate`` share of them labeled, the same number
in each class) are generated block
by block on the workers, so neither the data nor the graph ever sits whole in one process;
the in-memory fit runs in a child process of its own on the concatenated blocks, so its peak
memory is measured alone.  Printed: time, peak resident memory (the in-memory process; each
worker; the client's growth), accuracy on the unlabeled points, and the share of training
labels on which the two fits agree; the machine and its load average.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import resource
import time

import numpy as np
from sklearn.datasets import make_moons

NOISE = 0.1
BLOCKS = 4  # --blocks


def block(b: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Block ``b`` of the data: ``size`` points of two moons (seeded by ``b``)."""
    X, y = make_moons(size, noise=NOISE, random_state=b)
    return X, y


def sizes(n: int) -> list[int]:
    return [n // BLOCKS + (b < n % BLOCKS) for b in range(BLOCKS)]


def semi_labels(y: np.ndarray, per_class: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    out = np.full_like(y, -1)
    for k in np.unique(y):
        out[rng.choice(np.flatnonzero(y == k), per_class, replace=False)] = k
    return out


def estimator(name: str, n_components: int = 500):
    from structreg.models import GFHF, LapRLSC, PoissonLearning

    if name == "laprlsc":
        return LapRLSC(solver="nystroem", n_components=n_components, random_state=0)
    return PoissonLearning() if name == "poisson" else GFHF(weights="self-tuning")


def test_points() -> np.ndarray:
    """Points at which both fits' decision values are compared."""
    X, _ = make_moons(2000, noise=NOISE, random_state=12345)
    return X


def outputs(model) -> np.ndarray | None:
    """Decision values at :func:`test_points` (LapRLSC), else None."""
    return model.decision_function(test_points()) if hasattr(model, "coef_") else None


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def current_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def in_memory(n: int, name: str, labels: int, m: int, out) -> None:
    """The in-memory fit, in a process of its own: its time, peak memory and labels."""
    model = estimator(name, m)
    parts = [block(b, s) for b, s in enumerate(sizes(n))]
    X = np.vstack([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    y_semi = semi_labels(y, labels)
    before = current_mib()
    start = time.perf_counter()
    model.fit(X, y_semi)
    seconds = time.perf_counter() - start
    out.send(
        (
            seconds,
            peak_mib(),
            before,
            model.transduction_,
            model.solver_,
            model.n_iter_,
            outputs(model),
        )
    )


def on_cluster(n: int, name: str, labels: int, memory: str, m: int):
    import dask
    import dask.array as da
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            memory_limit=memory,
            dashboard_address=None,
        ) as cluster,
        Client(cluster) as client,
    ):
        delayed = [dask.delayed(block)(b, s) for b, s in enumerate(sizes(n))]
        X = da.concatenate(
            [da.from_delayed(d[0], (s, 2), float) for d, s in zip(delayed, sizes(n), strict=True)]
        )
        y = da.concatenate(
            [da.from_delayed(d[1], (s,), int) for d, s in zip(delayed, sizes(n), strict=True)]
        ).compute()
        y_semi = semi_labels(y, labels)
        workers = set(client.scheduler_info()["workers"])
        client_before = current_mib()
        start = time.perf_counter()
        model = estimator(name, m).fit(X, y_semi)
        seconds = time.perf_counter() - start
        peaks = client.run(peak_mib)
        same_workers = set(client.scheduler_info()["workers"]) == workers
        parts = breakdown(X, name, model)
        return seconds, peaks, same_workers, model, y_semi, y, peak_mib() - client_before, parts


def breakdown(X, name: str, model) -> dict:
    """Where the cluster fit's time goes: the graph built again, and one CG product (GFHF,
    Poisson) or the projection ``Phi^T L Phi`` of the fitted features (LapRLSC)."""
    from structreg.models.distributed import _Features
    from structreg.structure.distributed_graphs import partitioned_knn_graph

    start = time.perf_counter()
    laprlsc = name == "laprlsc"
    k, weights = (6, "heat") if laprlsc else (7, "self-tuning")
    graph = partitioned_knn_graph(X, k, keep_blocks=laprlsc).weighted(weights)
    built = time.perf_counter() - start
    if laprlsc:
        degree = graph.degree()
        start = time.perf_counter()
        graph.laplacian_gram(_Features(model.feature_map_), degree, volume=float(degree.sum()))
        return {"graph": built, "projection": time.perf_counter() - start}
    v = np.ones(graph.n)
    start = time.perf_counter()
    for _ in range(10):
        graph.product(v)
    return {"graph": built, "product": (time.perf_counter() - start) / 10}


def _child(blocks: int, *args) -> None:
    """:func:`in_memory` in a spawned process, with the ``--blocks`` of the parent."""
    global BLOCKS
    BLOCKS = blocks
    in_memory(*args)


def main() -> None:
    global BLOCKS
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--worker-memory", default="1.2GiB")
    parser.add_argument("--estimator", choices=("gfhf", "poisson", "laprlsc"), default="gfhf")
    parser.add_argument("--n-components", type=int, default=500, help="LapRLSC's centres")
    parser.add_argument("--blocks", type=int, default=BLOCKS, help="partitions of X")
    parser.add_argument(
        "--label-rate",
        type=float,
        default=0.01,
        help="share of labeled points (GFHF's CG needs a few hundred iterations at 1 %%; "
        "Poisson learning at a few labels per class needs thousands on two moons)",
    )
    args = parser.parse_args()
    BLOCKS = args.blocks  # (read by sizes(), also in the in-memory child: passed there)
    args.labels = max(1, int(args.label_rate * args.n / 2))
    print(
        f"machine: {platform.node()} {platform.machine()}, {os.cpu_count()} CPUs, "
        f"load average before {os.getloadavg()}"
    )
    print(
        f"{args.estimator}, two moons, n = {args.n:,} in {BLOCKS} blocks, {args.labels} labels "
        f"per class; LocalCluster: 2 worker processes, 1 thread each, memory_limit "
        f"{args.worker_memory} each"
    )

    receive, send = multiprocessing.get_context("spawn").Pipe(duplex=False)
    child = multiprocessing.get_context("spawn").Process(
        target=_child,
        args=(args.blocks, args.n, args.estimator, args.labels, args.n_components, send),
    )
    child.start()
    seconds_mem, peak_mem, base_mem, labels_mem, solver, n_iter, out_mem = receive.recv()
    child.join()

    seconds, peaks, same_workers, model, y_semi, y, client_growth, parts = on_cluster(
        args.n, args.estimator, args.labels, args.worker_memory, args.n_components
    )
    unlabeled = y_semi == -1
    accuracy_cluster = float(np.mean(model.transduction_[unlabeled] == y[unlabeled]))
    accuracy_memory = float(np.mean(labels_mem[unlabeled] == y[unlabeled]))
    agree = float(np.mean(model.transduction_ == labels_mem))
    print(
        f"in memory : {seconds_mem:7.1f} s, peak RSS {peak_mem:7.0f} MiB (of which "
        f"{peak_mem - base_mem:.0f} MiB above the process before fit), accuracy "
        f"{accuracy_memory:.4f}, solver {solver}, {n_iter} iterations"
    )
    print(
        f"on cluster: {seconds:7.1f} s, peak RSS per worker "
        + ", ".join(f"{v:.0f}" for v in peaks.values())
        + f" MiB (limit {args.worker_memory}), workers never restarted: {same_workers}, "
        f"accuracy {accuracy_cluster:.4f}, {model.n_iter_} iterations; the client grew by "
        f"{client_growth:.0f} MiB (the vectors of length n; GFHF and Poisson: X_ too)"
    )
    print(f"labels equal between the two fits: {agree:.5f}")
    if out_mem is not None:
        gap = float(np.max(np.abs(outputs(model) - out_mem)))
        design = 8 * args.n * args.n_components / 2**30
        print(
            f"decision values at {len(test_points())} new points: largest difference {gap:.2e} "
            f"(largest value {np.max(np.abs(out_mem)):.2f}); the n x m design alone would be "
            f"{design:.2f} GiB"
        )
        print(
            f"the cluster fit's time, measured again: the weighted graph {parts['graph']:.1f} s, "
            f"Phi^T L Phi {parts['projection']:.1f} s"
        )
        print(f"load average after: {os.getloadavg()}")
        return
    print(
        f"the cluster fit's time, measured again: the weighted graph {parts['graph']:.1f} s, one "
        f"CG product {1000 * parts['product']:.0f} ms (x {model.n_iter_} iterations = "
        f"{parts['product'] * model.n_iter_:.1f} s)"
    )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
