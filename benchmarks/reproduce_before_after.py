"""A reproduction's wall time before and after a change, run side by side (issue 18).

Checks out ``--before`` (a git revision) into a temporary worktree and runs the same
``structreg reproduce PAPER --table T`` there and in this checkout, both at once (each with
``--n-jobs`` workers, so both see the same machine load), then prints each wall time, the sum
of the stored cells' own times, the ratio, and every line in which the written tables differ
(the ``*_params.csv`` files hold per-cell seconds and are compared without that column).

    python benchmarks/reproduce_before_after.py --before 458fa9f --paper drlsc --table 7
"""

from __future__ import annotations

import argparse
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _start(cwd: Path, out: Path, args) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "structreg.cli", "reproduce", args.paper, "--out", str(out)]
    cmd += ["--n-jobs", str(args.n_jobs), "--progress", "off"]
    if args.table:
        cmd += ["--table", args.table]
    if args.quick:
        cmd.append("--quick")
    if args.datasets:
        cmd += ["--datasets", args.datasets]
    log = open(out.parent / f"{out.name}.log", "w")  # noqa: SIM115 (closed by the caller)
    return subprocess.Popen(cmd, cwd=cwd, stdout=log, stderr=subprocess.STDOUT)


def _cell_seconds(store: Path) -> float:
    with sqlite3.connect(store) as db:
        return float(db.execute("SELECT COALESCE(SUM(seconds), 0) FROM cells").fetchone()[0])


def _lines(path: Path) -> list[str]:
    rows = path.read_text().splitlines()
    if path.name.endswith("_params.csv"):  # the last column is the cell's seconds
        rows = [r.rsplit(",", 1)[0] for r in rows]
    return rows


def _differences(before: Path, after: Path) -> list[str]:
    out = []
    for a in sorted(after.glob("*.csv")):
        b = before / a.name
        if not b.exists():
            out.append(f"{a.name}: only after")
            continue
        old, new = _lines(b), _lines(a)
        out += [f"{a.name}: - {x}" for x in old if x not in new]
        out += [f"{a.name}: + {x}" for x in new if x not in old]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="git revision of the 'before' code")
    parser.add_argument("--paper", default="drlsc")
    parser.add_argument("--table", default=None, help="one table (default: all of the paper's)")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--datasets", default=None, help="passed to reproduce (a subset)")
    parser.add_argument("--n-jobs", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="structreg-before-after-") as tmp:
        tmp = Path(tmp)
        tree = tmp / "before"
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(tree), args.before], cwd=REPO, check=True
        )
        try:
            runs = {"before": (tree, tmp / "out-before"), "after": (REPO, tmp / "out-after")}
            t0 = time.perf_counter()
            procs = {k: _start(cwd, out, args) for k, (cwd, out) in runs.items()}
            seconds = {}
            while len(seconds) < len(procs):
                for key, proc in procs.items():
                    if key not in seconds and proc.poll() is not None:
                        seconds[key] = time.perf_counter() - t0
                        if proc.returncode:
                            sys.exit(f"the {key} run failed; see {runs[key][1]}.log")
                time.sleep(1.0)
            cells = {k: _cell_seconds(out / "results.sqlite") for k, (_, out) in runs.items()}
            what = f"reproduce {args.paper}" + f" --table {args.table}" * bool(args.table)
            what += " --quick" * args.quick
            what += f" --datasets {args.datasets}" if args.datasets else ""
            print(f"{what}, --n-jobs {args.n_jobs} each, both at once")
            print("| run | wall s | sum of cell s |\n| --- | --- | --- |")
            for key in runs:
                print(f"| {key} | {seconds[key]:.0f} | {cells[key]:.0f} |")
            print(
                f"after / before: wall {seconds['after'] / seconds['before']:.2f}, "
                f"cells {cells['after'] / cells['before']:.2f}"
            )
            diff = _differences(runs["before"][1], runs["after"][1])
            print(f"table lines that differ: {len(diff)}")
            print("\n".join(diff))
        finally:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(tree)], cwd=REPO, check=False
            )


if __name__ == "__main__":
    main()
