"""l1-graph: exact basis pursuit vs the restricted-lasso approximation, side by side.

Both modes run in this process on the same USPS subset (``--per-class`` random digits of
each class, fixed seed; 2,500 x 256 by default) with the same ``n_jobs``.  Prints the wall
time of each (and the CPU time of the process and its workers, which the machine's load
affects less), their ratio, the time per point, the mean number of nonzeros per row, the
share of the coefficients' l1 mass on points of the same class, the relative Frobenius
difference ``||A_exact - A_lasso||_F / ||A_exact||_F`` and the share of
the exact codes' l1 mass on points that the lasso codes also use.  Finally the exact codes
of ``--check`` random points are compared with one full LP per point (``scipy.optimize.linprog``
on the primal with all other points; the relative objective gap is printed).

The acceptance target: exact within 10 minutes on 2 cores, lasso at least 10x faster.

    python benchmarks/l1_graph_modes.py [--per-class 250] [--n-jobs 2] [--seed 0] [--check 10]
"""

from __future__ import annotations

import argparse
import os
import resource
import time

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from structreg.datasets import load_dataset
from structreg.structure.l1graph import l1_graph


def usps_subset(per_class: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``per_class`` random USPS digits of every class (rows sorted by class)."""
    X, y = load_dataset("usps", return_X_y=True)
    rng = np.random.default_rng(seed)
    idx = np.concatenate(
        [rng.choice(np.flatnonzero(y == c), per_class, replace=False) for c in np.unique(y)]
    )
    return np.asarray(X[idx], dtype=float), np.asarray(y)[idx]


def full_lp_gap(X: np.ndarray, A, points: np.ndarray) -> float:
    """Largest relative gap between the codes in ``A`` and one full LP per point."""
    Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
    d = X.shape[1]
    worst = 0.0
    for i in points:
        D = np.delete(Xn, i, axis=0).T
        B = sp.hstack([D, -D, sp.identity(d), -sp.identity(d)], format="csc")
        res = linprog(np.ones(B.shape[1]), A_eq=B, b_eq=Xn[i], bounds=(0, None), method="highs")
        a = np.delete(A[[i]].toarray().ravel(), i)
        ours = np.abs(a).sum() + np.abs(Xn[i] - D @ a).sum()
        worst = max(worst, abs(ours - res.fun) / res.fun)
    return worst


def _cpu_seconds() -> float:
    """CPU seconds of this process and of its live children (the joblib workers).

    Reads ``/proc`` (Linux); NaN elsewhere.
    """
    own = resource.getrusage(resource.RUSAGE_SELF)
    total = own.ru_utime + own.ru_stime
    try:
        ticks = os.sysconf("SC_CLK_TCK")
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:  # exited meanwhile
                continue
            if int(fields[1]) == os.getpid():  # fields[1] is the parent id
                total += (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
    except OSError:
        return float("nan")
    return total


def _timed(X: np.ndarray, **kw):
    """Wall and CPU seconds of one l1_graph call (the workers are started before)."""
    l1_graph(X[:100], **kw)  # start the joblib workers (and their imports) first
    cpu0, t0 = _cpu_seconds(), time.perf_counter()
    A = l1_graph(X, **kw)
    return A, time.perf_counter() - t0, _cpu_seconds() - cpu0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-class", type=int, default=250)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--n-candidates", type=int, default=30)
    parser.add_argument("--alpha", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--check", type=int, default=10, help="points checked against a full LP")
    args = parser.parse_args()

    X, y = usps_subset(args.per_class, args.seed)
    n = X.shape[0]
    print(f"USPS subset: {n} x {X.shape[1]} ({args.per_class} per class), n_jobs={args.n_jobs}")
    common = dict(n_candidates=args.n_candidates, n_jobs=args.n_jobs)
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    A_lasso, t_lasso, cpu_lasso = _timed(X, mode="lasso", alpha=args.alpha, **common)
    A_exact, t_exact, cpu_exact = _timed(X, mode="exact", **common)
    print(f"load average after: {os.getloadavg()[0]:.2f}")

    rows = []
    for name, A, t, cpu in (
        ("exact", A_exact, t_exact, cpu_exact),
        ("lasso", A_lasso, t_lasso, cpu_lasso),
    ):
        nnz = np.diff(A.indptr)
        r, c = A.nonzero()
        same = np.abs(A[r, c]).A1 @ (y[r] == y[c]) / np.abs(A).sum()  # share of the l1 mass
        rows.append((name, t, 1e3 * t / n, cpu, 1e3 * cpu / n, nnz.mean(), same))
    print(
        f"{'mode':<6} {'wall s':>8} {'ms/point':>9} {'CPU s':>8} {'CPU ms/pt':>10} "
        f"{'nnz/row':>8} {'same-class':>11}"
    )
    for name, t, per, cpu, cpu_per, nnz, same in rows:
        print(f"{name:<6} {t:8.2f} {per:9.2f} {cpu:8.2f} {cpu_per:10.2f} {nnz:8.1f} {same:11.3f}")
    print(f"ratio exact / lasso: {t_exact / t_lasso:.1f}x")
    diff = np.sqrt(((A_exact - A_lasso).power(2)).sum() / A_exact.power(2).sum())
    print(f"relative difference ||A_exact - A_lasso||_F / ||A_exact||_F: {diff:.3f}")
    mass = abs(A_exact).multiply(A_lasso != 0).sum() / abs(A_exact).sum()
    print(f"share of the exact codes' l1 mass on points the lasso codes use: {mass:.3f}")
    if args.check:
        points = np.random.default_rng(args.seed).choice(n, min(args.check, n), replace=False)
        gap = full_lp_gap(X, A_exact, points)
        print(f"exact vs one full LP per point, {len(points)} points: max relative gap {gap:.1e}")


if __name__ == "__main__":
    main()
