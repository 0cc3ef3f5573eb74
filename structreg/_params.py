"""The parameter glossary in code: one validation rule per parameter name, library-wide.

Every estimator validates its ``__init__`` parameters against this table (see
:func:`constraints_for`), so a name means the same thing wherever it appears.  The user
guide's glossary (``docs/user_guide/glossary.md``) documents the same names.
"""

from __future__ import annotations

import inspect
from numbers import Integral, Real

from ._compat import HasMethods, Interval, StrOptions

FINITE_REAL = Interval(Real, None, None, closed="neither")
"""Any finite real number.  A bare ``Real`` type constraint accepts NaN and +-inf;
scikit-learn's :class:`~sklearn.utils._param_validation.Interval` refuses NaN always and an
infinite value at an open end (``closed="neither"`` with ``None`` bounds: both), so every
real-valued parameter of the glossary is an interval, open where it is unbounded (checked by
:func:`check_finite_reals`)."""

GRAPH_CHOICES = ("knn", "class-wise", "other-class", "within-class", "between-class")

PARAMETER_CONSTRAINTS: dict[str, list] = {
    # "precomputed": fit(K_train, y), predict(K_test_train); estimators that cannot work
    # from a Gram matrix refuse it in fit
    "kernel": [StrOptions({"linear", "rbf", "poly", "precomputed"}), callable],
    "gamma": [Interval(Real, 0, None, closed="neither"), StrOptions({"scale"}), None],
    "degree": [Interval(Integral, 1, None, closed="left")],
    "coef0": [FINITE_REAL],
    "method": [StrOptions({"cholesky", "eigh"})],
    "rtol": [Interval(Real, 0, None, closed="neither"), None],
    "landmarks": ["array-like", None],
    "loss": [StrOptions({"square", "hinge"})],
    "penalties": [list, tuple, None],
    "gamma_A": [Interval(Real, 0, None, closed="left")],
    "gamma_I": [Interval(Real, 0, None, closed="left")],
    "n_neighbors": [Interval(Integral, 1, None, closed="left")],
    # "l1": the sparse-reconstruction graph of SparseRLSC (not a Laplacian graph)
    "graph": [StrOptions(set(GRAPH_CHOICES) | {"l1"}), "sparse matrix", "array-like"],
    "weights": [StrOptions({"connectivity", "heat", "dot"})],
    "t": [Interval(Real, 0, None, closed="neither"), None],
    "normalized": ["boolean"],
    "metric": [StrOptions({"euclidean", "cosine"})],
    "fit_intercept": ["boolean", None],
    "multi_class": [StrOptions({"ovr", "ovo"})],
    # hinge loss: calibrate predict_proba by internal cross-validation during fit
    "probability": ["boolean"],
    "tol": [Interval(Real, 0, None, closed="neither")],
    "C": [Interval(Real, 0, None, closed="neither")],
    "gamma_D": [Interval(Real, 0, None, closed="left")],
    "margin": [StrOptions({"global", "local"})],
    "n_neighbors_other": [Interval(Integral, 1, None, closed="left")],
    "max_iter": [Interval(Integral, 1, None, closed="left"), None],
    "n_clusters": [Interval(Integral, 1, None, closed="left")],
    "lam": [Interval(Real, 0, None, closed="left")],
    "reg": [Interval(Real, 0, None, closed="left")],
    "rho": [Interval(Real, 0, None, closed="left"), None],
    "n_rho": [Interval(Integral, 0, None, closed="left")],
    "cov_reg": [Interval(Real, 0, None, closed="neither")],
    "max_clusters": [Interval(Integral, 1, None, closed="left"), None],
    "n_centers": [Interval(Integral, 1, None, closed="left")],
    "m": [Interval(Real, 1, None, closed="neither")],
    "init": [StrOptions({"k-means++", "random"}), "array-like"],
    "random_state": ["random_state"],
    "eta": [Interval(Real, 0, 1, closed="both")],
    # numerical method; each estimator accepts the subset its docstring lists
    "solver": [StrOptions({"auto", "dense", "nystroem", "cg", "primal"})],
    # DRLSC/DRGV: the paper's bordered dual system, or the primal normal equations
    "formulation": [StrOptions({"bordered", "primal"})],
    # Nystroem path: number of centres and how they are chosen
    "n_components": [Interval(Integral, 1, None, closed="left")],
    "centers": [StrOptions({"uniform", "k-means++"})],
    # kNN search: exact (trees / chunked brute force) or approximate (faiss / pynndescent)
    "algorithm": [StrOptions({"auto", "exact", "approximate"})],
    "l1_mode": [StrOptions({"exact", "lasso"})],
    "n_candidates": [Interval(Integral, 1, None, closed="left")],
    "alpha": [Interval(Real, 0, None, closed="neither")],
    "epsilon": [Interval(Real, 0, None, closed="left")],
    "n_jobs": [Integral, None],
    # DALapRLSC: weight of unlabeled points (DAMR's gamma) and the pluggable clusterer
    "reliability": [Interval(Real, 0, 1, closed="both"), StrOptions({"auto"})],
    "clusterer": [HasMethods(["fit_predict"]), None],
    # SSDRWu: form of the between-class term
    "separation": [StrOptions({"signed", "subtract", "add"})],
    # per-class weights of the labeled samples' loss (scikit-learn's meaning)
    "class_weight": [dict, StrOptions({"balanced"}), None],
    # GFHF: class mass normalisation of the harmonic solution and its class priors
    "class_mass_normalization": ["boolean"],
    "class_prior": ["array-like", None],
}


NONNEGATIVE_OR_AUTO = [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})]
"""A weight that a model may also choose itself (``"auto"``), for ``_constraint_overrides``."""


def check_finite_reals(constraints: dict[str, list]) -> dict[str, list]:
    """``constraints``, after checking that none of them lets NaN or +-inf through as a real
    number: a bare ``Real`` type, or an :class:`Interval` over the reals closed at an
    unbounded end, is a TypeError naming the parameter (use :data:`FINITE_REAL` or an interval
    open at its unbounded ends)."""
    for name, options in constraints.items():
        for c in options:
            bare = c is Real
            closed_at_infinity = (
                isinstance(c, Interval)
                and c.type is Real
                and (
                    (c.left is None and c.closed in ("left", "both"))
                    or (c.right is None and c.closed in ("right", "both"))
                )
            )
            if bare or closed_at_infinity:
                raise TypeError(
                    f"the constraint of {name!r} accepts NaN or infinite values ({c!r}); "
                    "use FINITE_REAL or an Interval open at its unbounded ends"
                )
    return constraints


def constraints_for(cls: type) -> dict[str, list]:
    """The glossary's constraints for the parameters of ``cls.__init__``."""
    names = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    missing = [n for n in names if n not in PARAMETER_CONSTRAINTS]
    if missing:
        raise TypeError(f"{cls.__name__}: parameters {missing} are not in the glossary")
    return {n: PARAMETER_CONSTRAINTS[n] for n in names}


check_finite_reals(PARAMETER_CONSTRAINTS)
check_finite_reals({"NONNEGATIVE_OR_AUTO": NONNEGATIVE_OR_AUTO})
