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
        [--solvers dense,nystroem,cg] [--record PATH]

``--record docs/benchmarks/laprlsc_solvers.csv`` also writes this run as one row of the
benchmarks page's solver table (the sizes, each solver's fit times per size, a range over the
draws, the dense solver's peak memory at the largest size, and the Nystroem-minus-dense
accuracy gap on the unlabeled points) into that data file.
"""

from __future__ import annotations

import argparse

import numpy as np
from _measure import gib, measure, semi_labels
from _record import current_load, load_range, record
from sklearn.datasets import make_moons

from structreg import LapRLSC

PARAMS = dict(gamma=2.0, gamma_A=1e-4, gamma_I=10.0, n_neighbors=10)


def make_data(kind: str, n: int, seed: int):
    X, y = make_moons(n, noise=0.1, random_state=seed)
    if kind == "moons20":
        noise = np.random.default_rng(seed).normal(scale=0.3, size=(n, 18))
        X = np.hstack([X, noise])
    return X, y


PAGE_COLUMNS = ["data (kernel width)", "n", "dense", "CG (exact)", "Nystroem", "accuracy gap"]


def _seconds(values: list[float]) -> str:
    shown = [f"{v:.1f}" if v < 100 else f"{v:.0f}" for v in (min(values), max(values))]
    return shown[0] if shown[0] == shown[1] else f"{shown[0]}-{shown[1]}"


def page_row(args, solvers: list[str], seen: dict) -> dict:
    """This run as a row of the benchmarks page's solver table."""
    sizes = sorted({n for n, _ in seen})
    label = "two moons" if args.data == "moons" else "moons + 18 noise dims"
    shown_n = " / ".join(f"{n // 1000}k" if n % 1000 == 0 else str(n) for n in sizes)
    row = {
        "data (kernel width)": f"{label} ({args.gamma:g})",
        "n": shown_n + (f", {args.draws} draws" if args.draws > 1 else ""),
        "_key": f"{args.data} gamma={args.gamma:g}",
    }
    for solver, column in (("dense", "dense"), ("cg", "CG (exact)"), ("nystroem", "Nystroem")):
        if solver not in solvers:
            continue
        cell = " / ".join(_seconds([t for t, _, _ in seen[n, solver]]) for n in sizes) + " s"
        if solver == "dense":
            peak = max(p for _, p, _ in seen[sizes[-1], solver])
            cell += f", {gib(peak)} GiB at {row['n'].split(' / ')[-1].split(',')[0]}"
        if solver == "nystroem":
            cell += f" (m = {args.m})"
        row[column] = cell
    if "dense" in solvers and "nystroem" in solvers:
        gaps = [
            100 * (b[2] - a[2])
            for n in sizes
            for a, b in zip(seen[n, "dense"], seen[n, "nystroem"], strict=True)
        ]
        lo, hi = min(gaps), max(gaps)
        row["accuracy gap"] = "0 at every n" if lo == hi == 0 else f"{lo:+.1f} to {hi:+.1f} points"
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2000,5000,10000,20000")
    parser.add_argument("--data", default="moons", choices=("moons", "moons20"))
    parser.add_argument("--m", type=int, default=1000, help="Nystroem centres")
    parser.add_argument("--centers", default="uniform", choices=("uniform", "k-means++"))
    parser.add_argument("--gamma", type=float, default=PARAMS["gamma"], help="kernel width")
    parser.add_argument("--draws", type=int, default=1)
    parser.add_argument("--solvers", default="dense,nystroem,cg")
    parser.add_argument(
        "--record",
        default="",
        metavar="PATH",
        help="write this run as a row of this data file (docs/benchmarks/laprlsc_solvers.csv)",
    )
    args = parser.parse_args()
    solvers = args.solvers.split(",")
    params = {**PARAMS, "gamma": args.gamma}
    print(f"data={args.data} m={args.m} centers={args.centers} params={params}")
    header = (
        f"{'n':>7} {'solver':>9} {'fit s':>8} {'peak GiB':>9} {'unlab acc':>10} {'test acc':>9}"
    )
    print(header + f" {'gap unlab':>10} {'gap test':>9} {'iters':>6}")
    seen = {}  # (n, solver) -> [(seconds, peak bytes, unlabeled accuracy), ...]
    loads = [current_load()]
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
                seen.setdefault((n, solver), []).append((seconds, peak, acc_u))
        loads.append(current_load())
    if args.record:
        row = page_row(args, solvers, seen)
        record(args.record, PAGE_COLUMNS, [row], load=load_range(loads), merge_cells=True)


if __name__ == "__main__":
    main()
