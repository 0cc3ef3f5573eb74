"""SRSVM vs scikit-learn SVC training time on the two-class UCI sets, side by side.

Both run in this process on the same standardised training half (a random half of each
class), with the same kernel, gamma and C; SRSVM adds the Ward clustering per class, the knee
search, the cluster-scatter penalty and the deformed kernel.  Prints the median training time
of each over the repeats (SVC and SRSVM fits alternate, so a change of the machine's load
hits both) and their ratio, then the geometric-mean ratio per kernel (the SRSVM paper
reports about 10x: 5.35 s vs 0.50 s on average in its Table V).

Two breakdowns follow (``--no-breakdown`` skips them):

* SRSVM's time per phase (medians over separate, instrumented repeats): input validation,
  label encoding, kernel matrix, Ward clustering with the knee search, penalty, deformed
  kernel (Woodbury on K, or the explicit whitening of the linear path), the libsvm solve
  on the precomputed deformed Gram matrix (with its scikit-learn wrapper), and the rest.
* libsvm on a precomputed Gram matrix vs SVC's own kernel evaluation: the same SVM problem
  (lam = 0) solved by ``SVC(kernel=k)`` and by ``SVC(kernel="precomputed")`` on K, and the
  time to compute K.  libsvm evaluates named kernels lazily, row by row, into its cache; a
  precomputed kernel needs the full Gram matrix up front, after which every entry is a
  lookup.

    python benchmarks/srsvm_vs_svc.py [--repeats 7] [--clock wall|cpu] [--no-breakdown]
"""

from __future__ import annotations

import argparse
import collections
import functools
import time

import numpy as np
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

import structreg.clustering
import structreg.models._base as base_module
import structreg.models._losses as losses_module
import structreg.models.srsvm as srsvm_module
import structreg.structure.penalties as penalties_module
from structreg import SRSVM
from structreg.datasets import load_dataset
from structreg.kernels import kernel_matrix, resolve_gamma

SETS = ("bupa", "ionosphere", "pima", "sonar", "wdbc")
KERNELS = ("linear", "rbf")
PHASES = ("validate", "labels", "kernel", "ward", "penalty", "deform", "svm")
_INHERITED = object()


def _clock(name: str):
    return time.process_time if name == "cpu" else time.perf_counter


def _fit_time(make, X, y, clock) -> float:
    est = make()
    t0 = clock()
    est.fit(X, y)
    return clock() - t0


def _median_fit_times(cases, repeats, clock) -> list[float]:
    """Median fit time of every ``(make, X, y)`` case, the cases alternating repeat by repeat."""
    times = [[] for _ in cases]
    for make, X, y in cases:  # warm-up (imports, caches)
        make().fit(X, y)
    for _ in range(repeats):
        for (make, X, y), out in zip(cases, times, strict=True):
            out.append(_fit_time(make, X, y, clock))
    return [float(np.median(t)) for t in times]


class _PhaseTimer:
    """Accumulates the time spent in SRSVM's building blocks during one fit, by wrapping
    them where SRSVM looks them up (the benchmark process only)."""

    def __init__(self, clock):
        self.clock = clock
        self.acc: dict = collections.defaultdict(float)
        self._undo: list = []
        targets = [
            (srsvm_module.SRSVM, "_validate_params", "validate"),
            (base_module, "validate_data", "validate"),
            (srsvm_module.SRSVM, "_encode_labels", "labels"),
            (losses_module.TrainingGram, "labeled_gram", "kernel"),
            (structreg.clustering, "class_clusters", "ward"),
            (penalties_module.ClusterScatterPenalty, "build", "penalty"),
            (losses_module, "DeformedKernel", "deform"),
            (losses_module, "DeformedFeatures", "deform"),
            (losses_module.PrecomputedSVM, "fit", "svm"),
        ]
        for owner, name, phase in targets:
            self._wrap(owner, name, phase)

    def _wrap(self, owner, name, phase):
        original = vars(owner).get(name, _INHERITED)
        func = getattr(owner, name)

        @functools.wraps(func)
        def timed(*args, **kwargs):
            t0 = self.clock()
            try:
                return func(*args, **kwargs)
            finally:
                self.acc[phase] += self.clock() - t0

        setattr(owner, name, timed)
        self._undo.append((owner, name, original))

    def restore(self):
        for owner, name, original in reversed(self._undo):
            if original is _INHERITED:
                delattr(owner, name)
            else:
                setattr(owner, name, original)


def _phase_medians(kernel, X, y, repeats, clock) -> dict:
    timer = _PhaseTimer(clock)
    try:
        runs = []
        SRSVM(kernel=kernel, C=1.0, lam=1.0).fit(X, y)
        for _ in range(repeats):
            timer.acc.clear()
            total = _fit_time(lambda: SRSVM(kernel=kernel, C=1.0, lam=1.0), X, y, clock)
            runs.append({**timer.acc, "total": total})
    finally:
        timer.restore()
    med = {p: float(np.median([r.get(p, 0.0) for r in runs])) for p in (*PHASES, "total")}
    med["rest"] = med["total"] - sum(med[p] for p in PHASES)
    return med


def _training_halves():
    rng = np.random.default_rng(0)
    for name in SETS:
        X, y = load_dataset(name, return_X_y=True)
        X = StandardScaler().fit_transform(X)
        train = np.zeros(len(y), bool)
        for c in np.unique(y):
            idx = np.flatnonzero(y == c)
            train[rng.choice(idx, len(idx) // 2, replace=False)] = True
        yield name, X[train], np.asarray(y)[train]


def _gmean(values) -> float:
    return float(np.exp(np.mean(np.log(values))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="wall-clock time (default) or this process's CPU time (steadier on a busy machine)",
    )
    parser.add_argument("--no-breakdown", action="store_true", help="only the ratio table")
    args = parser.parse_args()
    clock = _clock(args.clock)
    data = list(_training_halves())

    print(f"training times ({args.clock} clock, median of {args.repeats} alternating repeats)")
    print(f"{'data':<11} {'n_train':>7} {'kernel':>7} {'SVC s':>9} {'SRSVM s':>9} {'ratio':>7}")
    ratios: dict = {k: [] for k in KERNELS}
    for name, X, y in data:
        for kernel in KERNELS:
            svc, srs = _median_fit_times(
                [
                    (lambda k=kernel: SVC(kernel=k, C=1.0), X, y),
                    (lambda k=kernel: SRSVM(kernel=k, C=1.0, lam=1.0), X, y),
                ],
                args.repeats,
                clock,
            )
            ratios[kernel].append(srs / svc)
            print(f"{name:<11} {len(y):>7} {kernel:>7} {svc:>9.4f} {srs:>9.4f} {srs / svc:>7.2f}")
    for kernel, r in ratios.items():
        print(f"geometric mean SRSVM/SVC ratio, {kernel} kernel: {_gmean(r):.2f}")
    if args.no_breakdown:
        return

    print(f"\nSRSVM per phase (ms, median of {args.repeats} instrumented fits)")
    print(f"{'data':<11} {'kernel':>7} " + " ".join(f"{p:>8}" for p in (*PHASES, "rest", "total")))
    for name, X, y in data:
        for kernel in KERNELS:
            med = _phase_medians(kernel, X, y, args.repeats, clock)
            cells = " ".join(f"{1e3 * med[p]:>8.2f}" for p in (*PHASES, "rest", "total"))
            print(f"{name:<11} {kernel:>7} {cells}")

    print("\nlibsvm on the same problem (lam = 0): SVC's own kernel vs a precomputed Gram matrix")
    print(f"{'data':<11} {'kernel':>7} {'SVC(k) ms':>10} {'SVC(pre) ms':>12} {'K ms':>8}")
    for name, X, y in data:
        for kernel in KERNELS:
            gamma = resolve_gamma(X, kernel, "scale")
            K = kernel_matrix(X, kernel=kernel, gamma=gamma)
            own, pre = _median_fit_times(
                [
                    (lambda k=kernel: SVC(kernel=k, C=1.0), X, y),
                    (lambda: SVC(kernel="precomputed", C=1.0), K, y),
                ],
                args.repeats,
                clock,
            )
            times = []
            for _ in range(args.repeats):
                t0 = clock()
                kernel_matrix(X, kernel=kernel, gamma=gamma)
                times.append(clock() - t0)
            print(
                f"{name:<11} {kernel:>7} {1e3 * own:>10.2f} {1e3 * pre:>12.2f} "
                f"{1e3 * float(np.median(times)):>8.2f}"
            )


if __name__ == "__main__":
    main()
