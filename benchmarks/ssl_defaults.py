"""Semi-supervised defaults (issue 19, point 1): accuracy on the unlabeled points with default
parameters, on two moons and on three UCI sets.

Two moons: 400 points, noise 0.08, 2 labels per class, 10 draws.  UCI (sonar, ionosphere,
wine; standardised): 5 labels per class, 5 draws.  ``RLSC()`` sees the labeled points only.
Extra columns compare a parameter's values, e.g. ``--model DALapRLSC --param reliability
--values auto,1.0``.

    python benchmarks/ssl_defaults.py [--models RLSC,LapRLSC] [--param P --values a,b]
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's structreg

import numpy as np  # noqa: E402
from _measure import semi_labels  # noqa: E402
from sklearn.datasets import make_moons  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

import structreg  # noqa: E402
from structreg.datasets import load_dataset  # noqa: E402


def problems():
    """``(name, [(X, y, y_semi), ...])`` per problem."""
    moons = []
    for seed in range(10):
        X, y = make_moons(400, noise=0.08, random_state=seed)
        moons.append((X, y, semi_labels(y, 2, seed)))
    yield "two moons", moons
    for name in ("sonar", "ionosphere", "wine"):
        X, y = load_dataset(name, return_X_y=True)
        y = np.unique(np.asarray(y), return_inverse=True)[1]
        X = StandardScaler().fit_transform(X)
        yield name, [(X, y, semi_labels(y, 5, seed)) for seed in range(5)]


def accuracy(model, draws) -> float:
    scores = []
    for X, y, y_semi in draws:
        unlabeled = y_semi == -1
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if isinstance(model, structreg.RLSC):
                predicted = model.fit(X[~unlabeled], y[~unlabeled]).predict(X[unlabeled])
            else:
                predicted = model.fit(X, y_semi).transduction_[unlabeled]
        scores.append(np.mean(predicted == y[unlabeled]))
    return 100 * float(np.mean(scores))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="RLSC,LapRLSC,LapSVM,DALapRLSC")
    parser.add_argument("--param", default=None)
    parser.add_argument("--values", default="")
    args = parser.parse_args()
    rows = []
    for name in args.models.split(","):
        rows.append((f"{name}()", getattr(structreg, name)()))
        if args.param in getattr(structreg, name)().get_params():
            for raw in args.values.split(","):
                try:
                    value = float(raw)
                except ValueError:
                    value = raw
                rows.append(
                    (
                        f"{name}({args.param}={value!r})",
                        getattr(structreg, name)(**{args.param: value}),
                    )
                )
    data = list(problems())
    print("| model | " + " | ".join(name for name, _ in data) + " |")
    print("| --- |" + " --- |" * len(data))
    for label, model in rows:
        cells = [f"{accuracy(model, draws):.1f}" for _, draws in data]
        print(f"| {label} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
