"""What the degenerate-solution warning can see, on the defaults suite's draws.

For every draw of the defaults suite (``defaults_suite.py``'s sets, labels per class and
draws) and every estimator named, the default fit's training scores -- what
``structreg.models._degenerate.degenerate_reason`` is given -- are summarised in a few numbers
beside the draw's accuracy on the hidden points and its guessing level (``chance``), one JSON
line per fit.  The warning's rule is chosen on these lines: it should fire on the draws below
guessing and stay quiet on the others.

    python benchmarks/degenerate_signals.py --methods GFHF,LapSVM --tier quick --out DIR

Resumable like the suite (``DIR/signals.jsonl``).
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

sys.path.insert(0, str(Path(__file__).resolve().parent))
import defaults_suite as suite  # noqa: E402

from structreg.models import _degenerate  # noqa: E402


def neighbour_agreement(X, predicted_all, labeled, y_codes, n_classes: int, k: int = 7):
    """Per class, the mean share of a labeled point's ``k`` nearest unlabeled points that are
    given its class (a collapse leaves the losing class's labeled points as islands)."""
    from sklearn.neighbors import NearestNeighbors

    unlabeled = np.flatnonzero(~labeled)
    k = min(k, unlabeled.size)
    index = NearestNeighbors(n_neighbors=k).fit(X[unlabeled])
    near = unlabeled[index.kneighbors(X[labeled], return_distance=False)]
    agree = (predicted_all[near] == y_codes[labeled][:, None]).mean(axis=1)
    codes = y_codes[labeled]
    return [
        float(agree[codes == c].mean()) if np.any(codes == c) else None for c in range(n_classes)
    ]


def summarise(scores, labeled, y_codes, n_classes: int, X=None) -> dict:
    """The numbers a rule may use: predicted shares of the unlabeled points, the labels'
    shares, and how far the unlabeled scores' decisions rest on a common level."""
    scores = np.asarray(scores, dtype=float).reshape(len(labeled), -1)
    if scores.shape[1] == 1:
        scores = np.column_stack([-scores[:, 0], scores[:, 0]])
    unlabeled = ~labeled
    predicted = np.argmax(scores[unlabeled], axis=1)
    shares = np.bincount(predicted, minlength=n_classes) / max(predicted.size, 1)
    label_shares = np.bincount(y_codes[labeled], minlength=n_classes) / labeled.sum()
    ordered = np.sort(scores, axis=1)
    margin = ordered[:, -1] - ordered[:, -2]
    # centred scores: each class's score minus its median over the unlabeled points
    centred = scores - np.median(scores[unlabeled], axis=0)
    recentred = np.argmax(centred[unlabeled], axis=1)
    spread = np.median(np.abs(scores[unlabeled] - np.median(scores[unlabeled], axis=0)), axis=0)
    level = np.abs(np.median(scores[unlabeled], axis=0) - np.median(scores[unlabeled]))
    labeled_pred = np.argmax(scores[labeled], axis=1)
    return {
        "shares": shares.round(4).tolist(),
        "label_shares": label_shares.round(4).tolist(),
        "margin_unlabeled": float(np.median(margin[unlabeled])),
        "margin_labeled": float(np.median(margin[labeled])),
        "changed_by_centring": float(np.mean(recentred != predicted)),
        "spread": spread.round(6).tolist(),
        "level": level.round(6).tolist(),
        "labeled_fit": float(np.mean(labeled_pred == y_codes[labeled])),
        "finite": bool(np.all(np.isfinite(scores))),
        "agreement": (
            neighbour_agreement(X, np.argmax(scores, axis=1), labeled, y_codes, n_classes)
            if X is not None and np.all(np.isfinite(scores))
            else None
        ),
    }


def run(problem, per_class: int, seed: int, methods: list[str]) -> list[dict]:
    X, y = problem.make()
    keep = np.isin(y, np.flatnonzero(np.bincount(y) >= 4))
    X, y = X[keep], np.unique(y[keep], return_inverse=True)[1]
    y_semi = suite.draw_labels(y, per_class, seed)
    hidden = y_semi == -1
    guess = suite.chance(y, y_semi)
    rows = []
    original = _degenerate.degenerate_reason
    for method in methods:
        seen = {}

        def capture(scores, labeled, y_codes, classes, seen=seen):
            seen["summary"] = summarise(scores, labeled, np.asarray(y_codes), len(classes), X=X)
            return original(scores, labeled, y_codes, classes)

        _degenerate.degenerate_reason = capture  # our own module, for this measurement only
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                acc = float(np.mean(suite.predict_hidden(method, X, y_semi, seed) == y[hidden]))
        except Exception as exc:
            rows.append(
                {
                    "set": problem.name,
                    "labels": per_class,
                    "draw": seed,
                    "method": method,
                    "error": str(exc)[:200],
                }
            )
            continue
        finally:
            _degenerate.degenerate_reason = original
        warned = any(issubclass(w.category, suite.DegenerateSolutionWarning) for w in caught)
        rows.append(
            {
                "set": problem.name,
                "labels": per_class,
                "draw": seed,
                "method": method,
                "acc": acc,
                "chance": guess,
                "warned": warned,
                **seen.get("summary", {}),
            }
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
