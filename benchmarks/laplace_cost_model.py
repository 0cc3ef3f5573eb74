"""The evidence of the Laplace solves' cost model (``structreg.solvers.laplace.choose_method``):
for the harmonic and Poisson systems of graphs of the defaults suite and of larger synthetic
sets, the model's predicted CG iterations per column (``CG_ITERATIONS_PER_HOP`` times the hop
depth from the system's boundary), the iterations plain Jacobi-scaled CG needs to reach
``tol=1e-6``, and the time of CG against that of the method the model replaces it with
(CHOLMOD, a LU of bounded fill, or multigrid; ``method="auto"`` with CG ruled out).

A row is *right* when the model's choice is the faster of the two (within 10 %), or the
predicted and needed iteration counts fall on the same side of ``CG_MAX_ITERATIONS``.

    python benchmarks/laplace_cost_model.py [--out benchmarks/laplace_cost_model.json]
        [--cases usps,coil20,mixture_1e4,moons_1e4,moons_1e5]

Self-tuning weights, k = 7, labels drawn with a fixed seed; one run per row (the times are
those of one process on a possibly loaded machine: the load is printed beside them).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's structreg

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from _measure import semi_labels  # noqa: E402
from sklearn.datasets import make_blobs, make_moons  # noqa: E402

import structreg.solvers.laplace as laplace  # noqa: E402
from structreg.datasets import load_dataset  # noqa: E402
from structreg.structure.graphs import self_tuning_graph  # noqa: E402
from structreg.structure.labeled_graph import LabeledGraph  # noqa: E402


def _standardised(X):
    X = np.asarray(X, dtype=float)
    sd = X.std(axis=0)
    keep = sd > 0
    return (X[:, keep] - X[:, keep].mean(axis=0)) / sd[keep]


def cases(names):
    for name in names:
        if name in ("usps", "coil20"):
            X, y = load_dataset(name, return_X_y=True)
            X = _standardised(X)
        elif name == "mixture_1e4":
            X, blob = make_blobs(10_000, n_features=10, centers=8, random_state=0)
            y = blob % 4
        elif name.startswith("moons_"):
            X, y = make_moons(int(float(name.split("_")[1])), noise=0.1, random_state=0)
        else:
            raise ValueError(f"unknown case {name!r}")
        y = np.unique(np.asarray(y), return_inverse=True)[1]
        for per_class in (1, 3, 10):
            yield name, per_class, X, y


def systems(W, labeled, targets):
    """``(kind, M, C, singular)`` of the harmonic and the Poisson system of the graph."""
    graph = LabeledGraph.build(W, labeled, targets)
    free = ~labeled
    A = (sp.diags(graph.degree[free]) - graph.W[free][:, free]).tocsr()
    yield "harmonic", A, (graph.W[free][:, labeled] @ targets)[:, :-1], False
    L = (sp.diags(graph.degree) - graph.W).tocsr()
    b = np.zeros((graph.n, targets.shape[1]))
    b[labeled] = targets - targets.mean(axis=0)
    yield "poisson", L, b[:, :-1], True


def timed(fn, *args, **kwargs):
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="usps,coil20,mixture_1e4,moons_1e4,moons_1e5")
    parser.add_argument("--out", default=str(Path(__file__).with_suffix(".json")))
    args = parser.parse_args()
    rows = []
    print(
        f"{'case':14s} {'L':>2s} {'system':8s} {'m':>7s} {'depth':>5s} {'pred':>5s} "
        f"{'CG it':>6s} {'CG s':>6s} {'alt':6s} {'alt s':>6s} {'model':7s} right load"
    )
    for name, per_class, X, y in cases(args.cases.split(",")):
        W = self_tuning_graph(X, 7)[0]
        y_semi = semi_labels(y, per_class, 0)
        labeled = y_semi >= 0
        targets = np.eye(y.max() + 1)[y_semi[labeled]]
        for kind, M, C, singular in systems(W, labeled, targets):
            grounded = None
            if singular:
                grounded = np.zeros(M.shape[0], dtype=bool)
                grounded[0] = True  # the suite's graphs are connected
            chosen = laplace.choose_method(M, grounded=grounded)
            depth = laplace.hop_depth(M, grounded) / 2 if singular else None
            if not singular:
                excess = np.asarray(M.sum(axis=1)).ravel()
                depth = laplace.hop_depth(M, excess > 1e-12 * M.diagonal())
            predicted = laplace.CG_ITERATIONS_PER_HOP * depth
            (_, cg), cg_s = timed(
                laplace.solve_laplace_system, M, C, "cg", 1e-6, None, grounded=grounded
            )
            per_column = cg["n_iter"] / C.shape[1]
            saved = laplace.CG_MAX_ITERATIONS
            laplace.CG_MAX_ITERATIONS = -1  # the replacement, whatever the model says
            try:
                (_, alt), alt_s = timed(
                    laplace.solve_laplace_system, M, C, "auto", 1e-6, None, grounded=grounded
                )
            finally:
                laplace.CG_MAX_ITERATIONS = saved
            faster = "cg" if cg_s <= alt_s else "other"
            picked = "cg" if chosen == "cg" else "other"  # "direct" below the direct size
            same_side = (predicted <= saved) == (per_column <= saved)
            close = abs(cg_s - alt_s) <= 0.1 * min(cg_s, alt_s)
            right = picked == faster or same_side or close
            load = os.getloadavg()[0]
            row = dict(
                case=name,
                labels_per_class=per_class,
                system=kind,
                unknowns=int(M.shape[0]),
                depth=float(depth),
                predicted_iterations=float(predicted),
                cg_iterations_per_column=float(per_column),
                cg_seconds=cg_s,
                alternative=alt["method"],
                alternative_seconds=alt_s,
                chosen=chosen,
                right=bool(right),
                load=load,
            )
            rows.append(row)
            print(
                f"{name:14s} {per_class:2d} {kind:8s} {M.shape[0]:7d} {depth:5.1f} "
                f"{predicted:5.0f} {per_column:6.0f} {cg_s:6.2f} {alt['method']:6s} "
                f"{alt_s:6.2f} {chosen:7s} {'yes' if right else 'NO':5s} {load:.1f}",
                flush=True,
            )
    Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")
    wrong = sum(not r["right"] for r in rows)
    print(f"{len(rows) - wrong} of {len(rows)} choices right; results in {args.out}")


if __name__ == "__main__":
    main()
