"""What the degenerate-solution warning can see, on the defaults suite's draws.

For every draw of the defaults suite (``defaults_suite.py``'s sets, labels per class and
draws) and every estimator named, the signals the warning reads from the fit's training
scores (``structreg.models._degenerate.signals``: the share of the unlabeled points the top
class gets, its share of the labels, the median margins) are recorded beside the draw's
accuracy on the hidden points and its guessing level (``chance``), one JSON line per fit.
The warning's rule is chosen on these lines: it should fire on the draws below guessing and
stay quiet on the others.

    python benchmarks/degenerate_signals.py --methods GFHF,LapSVM --tier quick --out DIR

Resumable like the suite (``DIR/signals.jsonl``).
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from dataclasses import asdict
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

sys.path.insert(0, str(Path(__file__).resolve().parent))
import defaults_suite as suite  # noqa: E402

from structreg.models import _degenerate  # noqa: E402


def run(problem, per_class: int, seed: int, methods: list[str]) -> list[dict]:
    """One draw of the suite, fitted by each of ``methods``: per fit, the accuracy on the
    hidden points, the draw's guessing level, whether the warning fired, and the
    :class:`~structreg.models._degenerate.Signals` of the scores the warning was given
    (captured by wrapping the module's ``degenerate_reason`` for the fit)."""
    X, y, y_semi = suite.drawn(problem, per_class, seed)
    hidden = y_semi == -1
    guess = suite.chance(y, y_semi)
    original = _degenerate.degenerate_reason
    rows = []
    for method in methods:
        seen = {}

        def capture(scores, labeled, y_codes, classes, seen=seen):
            found = _degenerate.signals(scores, labeled, np.asarray(y_codes), len(classes))
            seen["signals"] = None if found is None else asdict(found)
            return original(scores, labeled, y_codes, classes)

        row = {"set": problem.name, "labels": per_class, "draw": seed, "method": method}
        _degenerate.degenerate_reason = capture  # our own module, for this measurement only
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                predicted = suite.predict_hidden(method, X, y_semi, seed)
        except Exception as exc:  # recorded, as in the suite
            rows.append({**row, "error": str(exc)[:200]})
            continue
        finally:
            _degenerate.degenerate_reason = original
        warned = any(issubclass(w.category, suite.DegenerateSolutionWarning) for w in caught)
        acc = float(np.mean(predicted == y[hidden]))
        rows.append(
            {**row, "acc": acc, "chance": guess, "warned": warned, "signals": seen.get("signals")}
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tier", choices=list(suite.TIERS), default="quick")
    parser.add_argument("--sets", default="")
    parser.add_argument("--labels", default="3,10,40")
    parser.add_argument("--draws", type=int, default=10)
    parser.add_argument("--methods", default="GFHF,PoissonLearning,LapSVM,LapRLSC")
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    store = out / "signals.jsonl"
    done = set()
    if store.exists():
        for line in store.read_text().splitlines():
            r = json.loads(line)
            done.add((r["set"], r["labels"], r["draw"], r["method"]))
    problems = [p for p in suite.problems() if suite.TIERS[p.tier] <= suite.TIERS[args.tier]]
    if args.sets:
        problems = [p for p in suite.problems() if p.name in args.sets.split(",")]
    methods = args.methods.split(",")
    jobs = []
    for p in problems:
        for per_class in map(int, args.labels.split(",")):
            for seed in range(min(args.draws, p.draws or args.draws)):
                todo = [m for m in methods if (p.name, per_class, seed, m) not in done]
                if todo:
                    jobs.append((p, per_class, seed, todo))
    print(f"{len(jobs)} draws to fit", file=sys.stderr)
    with store.open("a") as handle:
        runner = Parallel(n_jobs=args.n_jobs, return_as="generator_unordered")
        for rows in runner(delayed(run)(*job) for job in jobs):
            for r in rows:
                handle.write(json.dumps(r) + "\n")
            handle.flush()


if __name__ == "__main__":
    main()
