"""Extra fit time of the leave-one-out calibration of ``predict_proba`` (issue 19, point 2).

Every square-loss fit computes the exact leave-one-out outputs of its labeled samples (the
leverages of the factored normal equations, :mod:`structreg.models._proba`) and fits the
probability scale on them.  This times default fits with and without that step (the latter
by switching ``StructuralClassifier._loo_rows`` off), alternating the two and keeping the
best of ``--repeats`` runs of each, so that other load on the machine inflates neither.
Printed: wall time and this process's CPU time (``time.process_time``: all its threads; the
steadier measure of the work on a shared machine).  One BLAS thread
(``OPENBLAS_NUM_THREADS=1``) gives the steadiest ratios.

    python benchmarks/proba_overhead.py [--repeats 5] [--skip-large]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from _measure import semi_labels
from sklearn.datasets import make_classification, make_moons

from structreg import DRLSC, LSSVM, RLSC, LapRLSC
from structreg.datasets import load_dataset
from structreg.models import StructuralClassifier


def cases(skip_large: bool):
    X, y = make_moons(400, noise=0.08, random_state=0)
    yield "LapRLSC() two moons n=400, l=4", LapRLSC(), X, semi_labels(y, 2, seed=0)
    X, y = make_classification(2000, n_features=20, random_state=0)
    yield "RLSC() dense supervised n=2000", RLSC(), X, y
    yield "LSSVM() dense supervised n=2000", LSSVM(), X, y
    sonar = load_dataset("sonar")
    yield "DRLSC(kernel='rbf') sonar n=208", DRLSC(kernel="rbf"), sonar.data, sonar.target
    if not skip_large:
        X, y = make_moons(20000, noise=0.08, random_state=0)
        model = LapRLSC(solver="nystroem", random_state=0)
        yield "LapRLSC(solver='nystroem') n=20000, l=100", model, X, semi_labels(y, 50, seed=0)


def fit_times(model, X, y, calibrate: bool) -> np.ndarray:
    """``(wall, cpu)`` seconds of one fit, with or without the leave-one-out calibration."""
    original = StructuralClassifier._loo_rows
    if not calibrate:
        StructuralClassifier._loo_rows = lambda self, y_codes, labeled: None
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        model.fit(X, y)
        return np.array([time.perf_counter() - wall, time.process_time() - cpu])
    finally:
        StructuralClassifier._loo_rows = original


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--skip-large", action="store_true")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    print(f"{'fit (best of runs)':<44} {'wall s: without':>15} {'with':>8} {'extra':>7}", end="")
    print(f" {'cpu s: without':>15} {'with':>8} {'extra':>7}")
    for name, model, X, y in cases(args.skip_large):
        model.fit(X, y)  # warm-up (imports, caches)
        without, with_ = np.full(2, np.inf), np.full(2, np.inf)
        for _ in range(args.repeats):  # alternate, so that load drifts hit both alike
            without = np.minimum(without, fit_times(model, X, y, calibrate=False))
            with_ = np.minimum(with_, fit_times(model, X, y, calibrate=True))
        extra = 100 * (with_ - without) / without
        print(f"{name:<44} {without[0]:>15.4f} {with_[0]:>8.4f} {extra[0]:>6.1f}%", end="")
        print(f" {without[1]:>15.4f} {with_[1]:>8.4f} {extra[1]:>6.1f}%")


if __name__ == "__main__":
    main()
