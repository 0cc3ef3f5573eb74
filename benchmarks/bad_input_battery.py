"""The bad-input battery (issue 20) as a Markdown table: cases x estimators, each cell a
correct fit (``pass``), a clear error (``error``), ``n/a`` or ``FAIL``.

The cases, the estimators and what "correct" means per case live in
``tests/battery_cases.py`` (run by ``tests/test_bad_input_battery.py``); this prints them
(and every failure's reason below the table).

    python benchmarks/bad_input_battery.py [--cases SUBSTRING] [--estimators A,B]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's structreg
sys.path.insert(0, str(ROOT / "tests"))

import battery_cases  # noqa: E402

SYMBOL = {
    battery_cases.PASS: "pass",
    battery_cases.ERROR: "error",
    battery_cases.NA: "n/a",
    battery_cases.FAIL: "**FAIL**",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="", help="only cases whose name contains this")
    parser.add_argument("--estimators", default="", help="comma-separated estimator names")
    args = parser.parse_args(argv)
    names = list(battery_cases.ESTIMATORS)
    if args.estimators:
        names = [n for n in args.estimators.split(",") if n]
    cases = [c for c in battery_cases.CASES if args.cases in c]
    t0 = time.perf_counter()
    failures, counts = [], {}
    rows = []
    for case in cases:
        cells = []
        for name in names:
            outcome, detail = battery_cases.run_cell(case, name)
            counts[outcome] = counts.get(outcome, 0) + 1
            if outcome == battery_cases.FAIL:
                failures.append(f"- {case} x {name}: {detail}")
            cells.append(SYMBOL[outcome])
        rows.append(f"| {case} | " + " | ".join(cells) + " |")
    print("| case | " + " | ".join(names) + " |")
    print("| --- | " + " | ".join("---" for _ in names) + " |")
    print("\n".join(rows))
    print()
    summary = ", ".join(f"{SYMBOL[k]}: {v}" for k, v in sorted(counts.items()))
    seconds = time.perf_counter() - t0
    print(f"{len(cases)} cases x {len(names)} estimators ({summary}); {seconds:.0f} s")
    if failures:
        print("\nFailures:\n" + "\n".join(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
