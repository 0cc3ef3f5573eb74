"""Every estimator's outputs on fixed data, to compare a refactor against the recorded ones.

``python tests/recorded_outputs.py`` writes ``tests/data/recorded_outputs.npz`` from the code
that is checked out; ``test_recorded_outputs.py`` fits the same configurations again and
compares.  The file was recorded before the fit pipeline was reorganised around one grid
entry point per loss, so that test proves the reorganisation changed no answer (to 1e-10).
Outputs whose change was intended are re-recorded one configuration at a time and listed here:
PoissonLearning's two-class outputs, when its default ``class_prior`` became ``"auto"`` (the
class-size correction; with ``class_prior=None`` they equal the first recording exactly); and
GFHF's ``predict`` on points of graph components without labels, whose class prior is an exact
tie (0.5 / 0.5) that now goes to the nearest labeled point's class instead of the first class;
and LapSVM's default configurations (``LapSVM()``, with ``class_weight``, ``probability`` or a
precomputed kernel) when ``solver="auto"`` came to mean the primal squared hinge at every size
-- the earlier ``LapSVM()`` outputs (libsvm's hinge) are kept as ``LapSVM(solver='dense')``
(they matched exactly until the graph weight changed, see below; on the semi-supervised set
they still do), and so are the recorded LapSVM paths, now on ``solver="dense"``; SSDRWang's
recordings were renamed to say ``kernel='linear'`` when its default kernel became ``"rbf"``;
and every LapRLSC, SSDRWu and LapSVM configuration with ``gamma_I="auto"`` (the ones above
without an explicit ``gamma_I``; the recorded paths and cross-validation give it explicitly
and still match) when their "auto" became ``0.1 (n / l) f^T L f / vol(W)`` (LapRLSC, SSDRWu)
and ``1 (n / l) f^T L f / vol(W)`` (LapSVM) instead of ``10 f^T L f / vol(W)``: the
supervised (``multiclass``, ``precomputed``) outputs changed, and LapRLSC's and SSDRWu's
semi-supervised ones (on the semi-supervised set, 8 of 80 points labeled, LapSVM's weight is
``1 * 80 / 8 = 10`` as before, and its outputs there still match); and
``EmpiricalKernelMap``'s two ``transform`` outputs when each eigenvector's sign was fixed (its
largest entry positive): with numpy 2.4's LAPACK 25 and 27 of the 40 columns came out
negated, equal to the recording up to 7e-14 otherwise; and every LapSVM configuration
without explicit weights (the 21 outputs that changed; the recorded paths give ``gamma_A``
and ``gamma_I`` and still match) when its defaults became ``gamma_A=1e-2``, no bias for
the squared hinge (``fit_intercept=False``) and ``0.1 (n / l) f^T L f / vol(W)``, LapRLSC's
weights; nothing else changed then.

Configurations solved by conjugate gradients (``solver='cg'``) are compared to their solver's
tolerance (1e-6 relative) rather than 1e-10: the iterates depend on the rounding of the BLAS
build (4e-7 between numpy 2.3 and 2.4 builds for ``RLSC(solver='cg')``).

Under the oldest supported dependencies (the floors of ``.ci/floors.txt``) three outputs differ
by more than 1e-10 and are compared as ``test_recorded_outputs.OLDER_ROUNDING`` says; with
cvxpy >= 1.6.1 and numpy >= 2.0 they match like the rest.  Each is a rounding of the last bits
amplified, not a changed answer:

* ``SLMM()`` (cvxpy 1.4.0-1.6.0: 2.0e-6; cvxpy 1.6.1 reproduces the recording): cvxpy's
  canonicalisation changed in 1.6.1, so Clarabel starts from other problem data and stops at
  another point within its tolerance.  Solved with Clarabel's tolerances at 1e-13, both
  versions agree to 1e-7, and that optimum lies 2.8e-6 from the recording and 1.1e-6 from the
  floor's answer: compared to 1e-5 there.
* ``EKM()`` (numpy 1.23.5: 5.9e-4; numpy 1.25.2 reproduces it): the minimum-volume ellipsoid
  (to ``tol=1e-7``) comes out 4e-8 apart -- another sign of a basis vector, another rounding
  -- and libsvm (``SVC``, whose stopping tolerance is 1e-3) stops at another iterate on the
  remapped points; the predictions are equal.  Compared to 1e-3 there.
* ``KernelFeatureMap(kernel='precomputed')`` ``transform`` (numpy < 2.0: 0.77; numpy 2.0.2
  reproduces it): the test's own Gram matrix ``rbf_kernel(X, X)`` has a diagonal of 1 up to
  the last bit, which depends on the BLAS that numpy ships, so the pivoted Cholesky
  factorisation (LAPACK ``?pstrf``) breaks the tie for its first pivot otherwise and the
  coordinates come out rotated; their inner products, the kernel the map reproduces, equal
  the recorded ones to 4e-15, and are what is compared there.

Each configuration is fitted twice when recording; outputs that differ between the two fits
(random initialisations without a seed) are not recorded and are listed when recording.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.datasets import make_blobs, make_moons, make_regression
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.preprocessing import StandardScaler

sys.path.insert(0, str(Path(__file__).parent))

from test_estimator_checks import ESTIMATORS  # noqa: E402

from structreg import EKM, MPM, SLMM, StructuralClassifierCV  # noqa: E402
from structreg.models import decision_path, decision_values, fit_path  # noqa: E402

FILE = Path(__file__).parent / "data" / "recorded_outputs.npz"
OUTPUTS = ("predict", "decision_function", "predict_proba", "transform")
EXTRA = [EKM(), MPM(), SLMM()]


def data_sets() -> dict[str, tuple]:
    """(X_train, y_train, X_test) for supervised multi-class, semi-supervised binary and
    regression fits, and the precomputed Gram matrices of the first."""
    X, y = make_blobs(60, centers=3, n_features=4, cluster_std=2.0, random_state=0)
    X = StandardScaler().fit_transform(X)
    Xm, ym = make_moons(80, noise=0.1, random_state=1)
    Xm = StandardScaler().fit_transform(Xm)
    semi = np.full_like(ym, -1)
    rng = np.random.default_rng(2)
    for c in (0, 1):
        semi[rng.choice(np.flatnonzero(ym == c), 4, replace=False)] = c
    Xr, yr = make_regression(60, n_features=4, noise=5.0, random_state=3)
    Xr = StandardScaler().fit_transform(Xr)
    yr = (yr - yr.mean()) / yr.std()
    K = rbf_kernel(X[:40], X[:40], gamma=0.25)
    K_test = rbf_kernel(X[40:], X[:40], gamma=0.25)
    return {
        "multiclass": (X[:40], y[:40], X[40:]),
        "semi": (Xm, semi, Xm),
        "regression": (Xr[:40], yr[:40], Xr[40:]),
        "precomputed": (K, y[:40], K_test),
    }


def _sets_for(est) -> list[str]:
    if getattr(est, "kernel", None) == "precomputed":
        return ["precomputed"]
    if getattr(est, "_estimator_type", None) == "regressor" or "Regressor" in type(est).__name__:
        return ["regression"]
    if not hasattr(est, "predict"):  # a transformer
        return ["multiclass"]
    sets = ["multiclass"]
    model = est
    if hasattr(est, "_default_estimator"):
        model = est.estimator or est._default_estimator()
    if getattr(model, "_semi_supervised", False):
        sets.append("semi")
    return sets


def _outputs(est, X_train, y_train, X_test) -> dict[str, np.ndarray]:
    fitted = clone(est).fit(X_train, y_train)
    out = {}
    for name in OUTPUTS:
        if not hasattr(fitted, name):
            continue
        try:
            value = getattr(fitted, name)(X_test)
        except (AttributeError, NotImplementedError):
            continue
        value = np.asarray(value)
        if value.dtype.kind in "fiub":
            out[name] = value.astype(float)
        else:
            out[name] = np.unique(value, return_inverse=True)[1].astype(float)
    return out


def _path_outputs(sets: dict) -> dict[str, np.ndarray]:
    """fit_path / decision_path / StructuralClassifierCV over grids that share structure."""
    from structreg import DRLSC, LapRLSC, LapSVM

    out = {}
    X, y, X_test = sets["semi"]
    grids = {
        "laprlsc": (LapRLSC(), {"gamma_A": [1e-4, 1e-2, 1.0], "gamma_I": [0.0, 1.0, 100.0]}),
        "laprlsc_nystroem": (
            LapRLSC(solver="nystroem", n_components=20, random_state=0),
            {"gamma_A": [1e-3, 1e-1], "gamma_I": [0.0, 10.0]},
        ),
        "lapsvm": (LapSVM(solver="dense"), {"gamma_A": [1e-3, 1e-1], "gamma_I": [0.0, 1.0]}),
    }
    for key, (est, grid) in grids.items():
        fits = fit_path(est, X, y, grid)
        for i, value in enumerate(decision_values(fits, X_test)):
            out[f"path/{key}/{i}"] = np.asarray(value, dtype=float)
        for i, value in enumerate(decision_path(est, X, y, grid, X_test)):
            out[f"decision_path/{key}/{i}"] = np.asarray(value, dtype=float)
    Xs, ys, Xs_test = sets["multiclass"]
    fits = fit_path(DRLSC(n_neighbors=3), Xs, ys, {"eta": [0.0, 0.5, 1.0], "gamma": [0.1, 1.0]})
    for i, value in enumerate(decision_values(fits, Xs_test)):
        out[f"path/drlsc/{i}"] = np.asarray(value, dtype=float)
    cv = StructuralClassifierCV(
        LapRLSC(), {"gamma_A": [1e-3, 1e-1], "gamma_I": [0.0, 1.0]}, cv=2
    ).fit(X, y)
    out["cv/laprlsc/decision_function"] = cv.decision_function(X_test)
    out["cv/laprlsc/best_index"] = np.array([float(cv.best_index_)])
    return out


def compute() -> dict[str, np.ndarray]:
    sets = data_sets()
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for est in ESTIMATORS + EXTRA:
            for name in _sets_for(est):
                for output, value in _outputs(est, *sets[name]).items():
                    out[f"{est!r}/{name}/{output}"] = value
        out.update(_path_outputs(sets))
    return out


def main() -> None:
    first, second = compute(), compute()
    kept = {}
    for key, value in first.items():
        if value.shape == second[key].shape and np.array_equal(value, second[key]):
            kept[key] = value
        else:
            print(f"not deterministic, not recorded: {key}")
    FILE.parent.mkdir(exist_ok=True)
    np.savez_compressed(FILE, **kept)
    print(f"{len(kept)} outputs recorded in {FILE}")


if __name__ == "__main__":
    main()
