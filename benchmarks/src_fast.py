"""SRC's fast exact noisy basis pursuit against the LARS homotopy it replaces, on the S-RLSC
paper's Fig. 7 setting (USPS, rows of unit norm, m labeled points per class as the dictionary,
epsilon = 0.05, 200 unlabeled + 200 out-of-sample points scored per cell).

    python benchmarks/src_fast.py                  # m = 5, 40, 160, draw 0, 1 repeat
    python benchmarks/src_fast.py --m 10 100 --repeats 3
    python benchmarks/src_fast.py --stored         # recompute the 25 stored Fig. 7 SRC cells
    python benchmarks/src_fast.py --m 5 10 40 160 --record docs/benchmarks/src_fast.csv

Both solvers run in this one process, interleaved (LARS, fast, LARS, fast, ...); the median
seconds of each, their ratio, the machine's load beside it, the largest absolute difference of
the codes and whether the predictions agree are printed per cell.  ``--stored`` recomputes the
SRC cells kept in ``docs/reproducing/results/srlsc/results.sqlite`` (read only) with the
experiment's own cell function and compares the accuracies with the stored ones.
``--record`` writes the side-by-side rows into the benchmarks page's data file (replacing the
rows of the same m).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sqlite3
import statistics
import time
from pathlib import Path

import numpy as np
from _record import load_range, record

from structreg.experiments import srlsc
from structreg.models import sparse_representation as srm

STORED = Path(__file__).resolve().parents[1] / "docs/reproducing/results/srlsc/results.sqlite"


def cell_data(m: int, draw: int, per_class: int = srlsc.PER_CLASS, max_points: int = 200):
    """The dictionary (labeled X1 points), its labels and the scored points of one Fig. 7
    cell, chosen as ``srlsc._usps_cell`` chooses them for SRC."""
    X1, y1, X_out, y_out = srlsc.usps_subset(per_class)
    labeled = srlsc.labeled_points(y1, m, draw)
    unl = np.setdiff1d(np.arange(len(y1)), labeled)
    out = np.arange(len(y_out))
    rng = np.random.default_rng([srlsc.DRAW_SEED, draw, m])
    if len(unl) > max_points:
        unl = np.sort(rng.choice(unl, max_points, replace=False))
    if len(out) > max_points:
        out = np.sort(rng.choice(out, max_points, replace=False))
    return X1[labeled], y1[labeled], np.vstack([X1[unl], X_out[out]])


def timed_predict(clf, X, solver):
    """SRC's predictions with ``solver`` as its noisy basis pursuit, the codes it computed,
    and the seconds of ``predict``."""
    original, seen = srm.noisy_basis_pursuit, []

    def recording(*args, **kwargs):
        seen.append(solver(*args, **kwargs))
        return seen[-1]

    srm.noisy_basis_pursuit = recording
    try:
        t0 = time.perf_counter()
        pred = clf.predict(X)
        seconds = time.perf_counter() - t0
    finally:
        srm.noisy_basis_pursuit = original
    return pred, seen[-1].toarray(), seconds


PAGE_COLUMNS = [
    "m per class",
    "atoms",
    "LARS (s)",
    "batched (s)",
    "ratio",
    "max code difference",
    "predictions",
]


def side_by_side(m_values, repeats: int, draw: int) -> tuple[list[dict], list[float]]:
    """Prints the cells side by side; returns them as the page's rows, and the loads seen."""
    rows, loads = [], []
    print(
        f"{'m':>4} {'atoms':>5} {'lars s':>8} {'fast s':>8} {'ratio':>7} {'load1':>6} "
        f"{'max|dx|':>9} same-pred"
    )
    for m in m_values:
        D, y, X = cell_data(m, draw)
        clf = srm.SRC(epsilon=srlsc.SRC_EPSILON).fit(D, y)
        times = {"lars": [], "fast": []}
        for _ in range(repeats):
            pred_l, codes_l, t = timed_predict(clf, X, srm._noisy_basis_pursuit_lars)
            times["lars"].append(t)
            pred_f, codes_f, t = timed_predict(clf, X, srm.noisy_basis_pursuit)
            times["fast"].append(t)
        lars, fast = statistics.median(times["lars"]), statistics.median(times["fast"])
        diff = float(np.abs(codes_l - codes_f).max())
        same = bool(np.array_equal(pred_l, pred_f))
        loads.append(os.getloadavg()[0])
        print(
            f"{m:>4} {len(D):>5} {lars:>8.2f} {fast:>8.3f} {lars / fast:>7.1f} "
            f"{loads[-1]:>6.2f} {diff:>9.2e} {same}",
            flush=True,
        )
        batched = f"{fast:.3f}" if fast < 1 else f"{fast:.2f}"
        cells = [str(m), str(len(D)), f"{lars:.2f}", batched, f"{lars / fast:.0f}x"]
        cells += [f"{diff:.1e}", "identical" if same else "different"]
        rows.append({**dict(zip(PAGE_COLUMNS, cells, strict=True)), "_key": f"m{m}"})
    return rows, loads


def stored_cells() -> None:
    """Recompute the stored Fig. 7 SRC cells with the fast SRC and compare the accuracies."""
    # immutable: read only, and no -wal/-shm files left beside the database
    with contextlib.closing(sqlite3.connect(f"file:{STORED}?mode=ro&immutable=1", uri=True)) as db:
        rows = db.execute(
            "SELECT dataset, split, params, result FROM cells WHERE paper = 'srlsc' "
            "AND method = 'SRC' ORDER BY json_extract(params, '$.m'), split"
        ).fetchall()
    identical = 0
    for dataset, split, params, result in rows:
        params, result = json.loads(params), json.loads(result)
        new = srlsc._usps_cell(dataset=dataset, method="SRC", split=split, **params)
        keys = ("unlabeled", "out_of_sample")
        same = all(new[k] == result[k] for k in keys)
        identical += same
        print(
            f"m={params['m']:>3} draw={split}  stored {result['unlabeled']:.1f}/"
            f"{result['out_of_sample']:.1f} in {result['seconds']:.0f}s  now "
            f"{new['unlabeled']:.1f}/{new['out_of_sample']:.1f} in {new['seconds']:.1f}s  "
            f"{'identical' if same else 'DIFFERENT'}",
            flush=True,
        )
    print(f"{identical} of {len(rows)} stored SRC cells identical")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--m",
        type=int,
        nargs="+",
        default=[5, 40, 160],
        help="labeled points per class of the cells (default: 5 40 160)",
    )
    parser.add_argument("--repeats", type=int, default=1, help="timings per solver (median)")
    parser.add_argument("--draw", type=int, default=0, help="the labeled draw (default 0)")
    parser.add_argument(
        "--stored", action="store_true", help="recompute the stored Fig. 7 SRC cells instead"
    )
    parser.add_argument(
        "--record",
        default="",
        metavar="PATH",
        help="write the rows into this data file (docs/benchmarks/src_fast.csv)",
    )
    args = parser.parse_args(argv)
    if args.stored:
        stored_cells()
    else:
        rows, loads = side_by_side(args.m, args.repeats, args.draw)
        if args.record:
            record(args.record, PAGE_COLUMNS, rows, load=load_range(loads))


if __name__ == "__main__":
    main()
