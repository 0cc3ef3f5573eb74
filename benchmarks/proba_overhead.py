"""Extra fit time of the leave-one-out calibration of ``predict_proba`` (issue 19, point 2).

Every square-loss fit computes the exact leave-one-out outputs of (at most 256 of) its labeled
samples from the leverages of its own factorisation (:mod:`structreg.models._proba`) and fits
the probability scale on them.  Two measures, each the best of ``--repeats`` runs (a run: 0.2 s
of back-to-back fits, at least one):

* ``without`` / ``with``: CPU time of this process (``time.process_time``, all its threads) of
  default fits without that step (``StructuralClassifier._loo_rows`` switched off) and with
  it, the two alternated so that load drifts hit both alike;
* ``in fit``: the time spent inside the calibrated fits in the step itself (the leverages,
  the leave-one-out outputs, the temperature fit), and its ``share`` of the best calibrated
  fit: the steadier measure on a shared machine, where the difference of two totals is
  noisy.  The bordered system (LSSVM) computes its leverages inside ``solve_bordered``: only
  the first measure there.

One BLAS thread (``OPENBLAS_NUM_THREADS=1``) gives the steadiest numbers.

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
from structreg.models import StructuralClassifier, _proba
from structreg.models.problem import Problem
from structreg.solvers.path import SquareLossPath

STEPS = [(SquareLossPath, "_leverages"), (Problem, "set_loo"), (_proba, "calibrate")]
"""The leave-one-out step of a square-loss fit (the leverages come from the solve's factor)."""


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


class _StepClock:
    """Wraps :data:`STEPS` and adds up the CPU time spent in them."""

    def __enter__(self):
        self.seconds, self._saved = 0.0, []
        for owner, name in STEPS:
            original = getattr(owner, name)
            self._saved.append((owner, name, original))
            setattr(owner, name, self._timed(original))
        return self

    def _timed(self, function):
        def timed(*args, **kwargs):
            t0 = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds += time.process_time() - t0

        return timed

    def __exit__(self, *exc):
        for owner, name, original in self._saved:
            setattr(owner, name, original)


def fit_times(model, X, y, calibrate: bool, loops: int) -> np.ndarray:
    """``(cpu seconds of one fit, of which in the leave-one-out step)``, the mean of ``loops``
    back-to-back fits, with or without the leave-one-out calibration."""
    original = StructuralClassifier._loo_rows
    if not calibrate:
        StructuralClassifier._loo_rows = lambda self, y_codes, labeled: None
    try:
        with _StepClock() as clock:
            cpu = time.process_time()
            for _ in range(loops):
                model.fit(X, y)
            cpu = time.process_time() - cpu
        return np.array([cpu, clock.seconds]) / loops
    finally:
        StructuralClassifier._loo_rows = original


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--skip-large", action="store_true")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    print(f"{'CPU s per fit (best of runs)':<44} {'without':>8} {'with':>8} {'extra':>7}", end="")
    print(f" {'in fit':>8} {'share':>6}")
    for name, model, X, y in cases(args.skip_large):
        first = fit_times(model, X, y, True, 1)[0]  # warm-up (imports, caches)
        loops = max(1, int(0.2 / first))
        without, with_, step = np.inf, np.inf, np.inf
        for _ in range(args.repeats):  # alternate, so that load drifts hit both alike
            without = min(without, fit_times(model, X, y, False, loops)[0])
            fit, in_step = fit_times(model, X, y, True, loops)
            with_, step = min(with_, fit), min(step, in_step)
        extra = 100 * (with_ - without) / without
        print(f"{name:<44} {without:>8.4f} {with_:>8.4f} {extra:>6.1f}%", end="")
        print(f" {step:>8.4f} {100 * step / with_:>5.1f}%")


if __name__ == "__main__":
    main()
