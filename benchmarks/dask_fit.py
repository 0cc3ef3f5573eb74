"""Poisson learning / GFHF on a Dask LocalCluster whose workers may each hold less memory than
the in-memory fit needs, beside the in-memory fit of the same data.

    .venv/bin/python benchmarks/dask_fit.py [--n 1000000] [--worker-memory 1.2GiB]
        [--estimator gfhf|poisson] [--label-rate 0.01]

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
BLOCKS = 4


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


def estimator(name: str):
    from structreg.models import GFHF, PoissonLearning

    return PoissonLearning() if name == "poisson" else GFHF(weights="self-tuning")


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def current_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def in_memory(n: int, name: str, labels: int, out) -> None:
    """The in-memory fit, in a process of its own: its time, peak memory and labels."""
    model = estimator(name)
    parts = [block(b, s) for b, s in enumerate(sizes(n))]
    X = np.vstack([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    y_semi = semi_labels(y, labels)
    before = current_mib()
    start = time.perf_counter()
    model.fit(X, y_semi)
    seconds = time.perf_counter() - start
    out.send((seconds, peak_mib(), before, model.transduction_, model.solver_, model.n_iter_))


def on_cluster(n: int, name: str, labels: int, memory: str):
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
        model = estimator(name).fit(X, y_semi)
        seconds = time.perf_counter() - start
        peaks = client.run(peak_mib)
        same_workers = set(client.scheduler_info()["workers"]) == workers
        parts = breakdown(X)
        return seconds, peaks, same_workers, model, y, peak_mib() - client_before, parts


def breakdown(X) -> dict:
    """Where the cluster fit's time goes: the graph built again, and one CG product."""
    from structreg.structure.distributed_graphs import partitioned_knn_graph

    start = time.perf_counter()
    graph = partitioned_knn_graph(X, 7).weighted("self-tuning")
    built = time.perf_counter() - start
    v = np.ones(graph.n)
    start = time.perf_counter()
    for _ in range(10):
        graph.product(v)
    return {"graph": built, "product": (time.perf_counter() - start) / 10}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--worker-memory", default="1.2GiB")
    parser.add_argument("--estimator", choices=("gfhf", "poisson"), default="gfhf")
    parser.add_argument(
        "--label-rate",
        type=float,
        default=0.01,
        help="share of labeled points (GFHF's CG needs a few hundred iterations at 1 %%; "
        "Poisson learning at a few labels per class needs thousands on two moons)",
    )
    args = parser.parse_args()
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
        target=in_memory, args=(args.n, args.estimator, args.labels, send)
    )
    child.start()
    seconds_mem, peak_mem, base_mem, labels_mem, solver, n_iter = receive.recv()
    child.join()

    seconds, peaks, same_workers, model, y, client_growth, parts = on_cluster(
        args.n, args.estimator, args.labels, args.worker_memory
    )
    unlabeled = model.labeled_ == 0
    accuracy_cluster = float(np.mean(model.transduction_[unlabeled] == y[unlabeled]))
    accuracy_memory = float(np.mean(labels_mem[unlabeled] == y[unlabeled]))
    agree = float(np.mean(model.transduction_ == labels_mem))
    print(
        f"in memory : {seconds_mem:7.1f} s, peak RSS {peak_mem:7.0f} MiB (of which "
        f"{peak_mem - base_mem:.0f} MiB above the process before fit), accuracy "
        f"{accuracy_memory:.4f}, solver {solver}, {n_iter} CG iterations"
    )
    print(
        f"on cluster: {seconds:7.1f} s, peak RSS per worker "
        + ", ".join(f"{v:.0f}" for v in peaks.values())
        + f" MiB (limit {args.worker_memory}), workers never restarted: {same_workers}, "
        f"accuracy {accuracy_cluster:.4f}, {model.n_iter_} CG iterations; the client grew by "
        f"{client_growth:.0f} MiB (X_ and the vectors)"
    )
    print(f"labels equal between the two fits: {agree:.5f}")
    print(
        f"the cluster fit's time, measured again: the weighted graph {parts['graph']:.1f} s, one "
        f"CG product {1000 * parts['product']:.0f} ms (x {model.n_iter_} iterations = "
        f"{parts['product'] * model.n_iter_:.1f} s)"
    )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
