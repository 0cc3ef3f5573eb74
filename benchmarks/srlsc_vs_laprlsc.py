"""S-RLSC vs LapRLSC on the S-RLSC paper's USPS protocol, with more draws than the full table.

Runs only the S-RLSC and LapRLSC cells of ``structreg reproduce srlsc``: the same cells,
protocol, fixed parameters and l1-graph cache, but without SRC, which takes hours. It prints,
for every m, the mean (std) accuracy of both methods on the unlabeled points of X1 and on the
held-out points, their paired difference with a two-sided paired t-test p-value, and the
number of draws S-RLSC wins.

    python benchmarks/srlsc_vs_laprlsc.py [--draws 20] [--m 10 40] [--l1-mode exact|lasso]
        [--n-jobs 2] [--out DIR]

On 2 cores the exact l1-graph takes about 2 minutes once (it is then cached), and each
cell takes 2-4 s.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from scipy import stats

from structreg.experiments import srlsc
from structreg.experiments.engine import Options, run_cells
from structreg.experiments.store import ResultsStore

METHODS = ("S-RLSC", "LapRLSC")
PARTS = ("unlabeled", "out_of_sample")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=20)
    parser.add_argument("--m", type=int, nargs="+", default=[10, 40])
    parser.add_argument("--l1-mode", choices=("exact", "lasso"), default="exact")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--out", default="srlsc_vs_laprlsc", help="folder of the results store")
    args = parser.parse_args()

    options = Options(
        draws=args.draws,
        n_jobs=args.n_jobs,
        extra={"m_values": tuple(args.m), "l1_mode": args.l1_mode},
    )
    plan = srlsc.TABLES[0].plan(options)  # Fig. 7: every m
    if not plan.cells:
        raise SystemExit(f"nothing to run: {plan.skipped}")
    cells = [c for c in plan.cells if c.key.method in METHODS]
    Path(args.out).mkdir(parents=True, exist_ok=True)
    store = ResultsStore(Path(args.out) / "results.sqlite")
    results, _ = run_cells(cells, store, n_jobs=args.n_jobs)

    print(f"USPS, {args.draws} draws, {args.l1_mode} l1-graph; accuracy % mean (std)")
    for part in PARTS:
        # the srlsc report's own grouping: {"m = ..": {method: [accuracy per draw, in order]}}
        for m_label, by_method in srlsc._collect(plan, results, part).items():
            a, b = (np.array(by_method[method]) for method in METHODS)
            diff = a - b
            p = stats.ttest_rel(a, b).pvalue if len(a) > 1 else float("nan")
            print(
                f"{m_label:<7} {part:<13} S-RLSC {a.mean():6.2f} ({a.std(ddof=1):.2f})  "
                f"LapRLSC {b.mean():6.2f} ({b.std(ddof=1):.2f})  "
                f"difference {diff.mean():+.2f} (paired p = {p:.3g}), "
                f"S-RLSC higher in {int((diff > 0).sum())}/{len(diff)} draws"
            )


if __name__ == "__main__":
    main()
