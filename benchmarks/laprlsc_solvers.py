"""LapRLSC with the dense, Nystroem and CG solvers side by side (issue 8, benchmark a).

For each n, one semi-supervised problem (10 labeled points per class, a kNN graph with
k = 10) is solved three ways in this process: ``solver="dense"`` (exact Gram factor, direct
solve), ``solver="nystroem"`` (m centres) and ``solver="cg"`` (exact kernel, K-preconditioned
CG).  Printed: fit time, peak traced memory of the fit, accuracy on the unlabeled training
points and on a held-out test set, and the accuracy gaps to the dense solver.

Data: ``moons`` (two moons, noise 0.1, 2-D) or ``moons20`` (the same moons plus 18 noise
dimensions of standard deviation 0.3, whose kernel has a much higher numerical rank).

    python benchmarks/laprlsc_solvers.py [--sizes 2000,5000,10000,20000] [--data moons]
        [--m 1000] [--centers uniform|k-means++] [--gamma 2.0] [--draws 1]
        [--solvers dense,nystroem,cg]
"""

from __future__ import annotations

import argparse

import numpy as np
from _measure import gib, measure, semi_labels
from sklearn.datasets import make_moons

from structreg import LapRLSC

PARAMS = dict(gamma=2.0, gamma_A=1e-4, gamma_I=10.0, n_neighbors=10)


def make_data(kind: str, n: int, seed: int):
    X, y = make_moons(n, noise=0.1, random_state=seed)
    if kind == "moons20":
        noise = np.random.default_rng(seed).normal(scale=0.3, size=(n, 18))
        X = np.hstack([X, noise])
    return X, y


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2000,5000,10000,20000")
    parser.add_argument("--data", default="moons", choices=("moons", "moons20"))
    parser.add_argument("--m", type=int, default=1000, help="Nystroem centres")
    parser.add_argument("--centers", default="uniform", choices=("uniform", "k-means++"))
    parser.add_argument("--gamma", type=float, default=PARAMS["gamma"], help="kernel width")
    parser.add_argument("--draws", type=int, default=1)
    parser.add_argument("--solvers", default="dense,nystroem,cg")
    args = parser.parse_args()
    solvers = args.solvers.split(",")
    params = {**PARAMS, "gamma": args.gamma}
    print(f"data={args.data} m={args.m} centers={args.centers} params={params}")
    header = (
        f"{'n':>7} {'solver':>9} {'fit s':>8} {'peak GiB':>9} {'unlab acc':>10} {'test acc':>9}"
    )
    print(header + f" {'gap unlab':>10} {'gap test':>9} {'iters':>6}")
    for n in map(int, args.sizes.split(",")):
        for draw in range(args.draws):
            X, y = make_data(args.data, n, seed=draw)
            Xt, yt = make_data(args.data, 2000, seed=1000 + draw)
            y_semi = semi_labels(y, 10, seed=draw)
            unlabeled = y_semi == -1
            ref = None
            for solver in solvers:
                clf = LapRLSC(
                    solver=solver,
                    n_components=args.m,
                    centers=args.centers,
                    random_state=draw,
                    **params,
                )
                _, seconds, peak = measure(clf.fit, X, y_semi)
                acc_u = float(np.mean(clf.transduction_[unlabeled] == y[unlabeled]))
                acc_t = clf.score(Xt, yt)
                if ref is None and solver == "dense":
                    ref = (acc_u, acc_t)
                gaps = (
                    ("", "")
                    if ref is None
                    else (f"{acc_u - ref[0]:+.4f}", f"{acc_t - ref[1]:+.4f}")
                )
                print(
                    f"{n:>7} {solver:>9} {seconds:>8.2f} {gib(peak):>9} {acc_u:>10.4f} "
                    f"{acc_t:>9.4f} {gaps[0]:>10} {gaps[1]:>9} {clf.n_iter_:>6}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
