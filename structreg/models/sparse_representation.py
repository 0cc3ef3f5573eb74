"""Sparse-representation-based classification (SRC; Wright, Yang, Ganesh, Sastry & Ma 2009).

A test sample is coded as a sparse combination of *all* training samples (the dictionary),
by noisy basis pursuit, and assigned to the class whose atoms reconstruct it best.  The S-RLSC
paper (Fan et al. 2011) uses SRC, with the tolerance ``epsilon = 0.05`` of Wright et al., as a
supervised baseline.

The l1 problem is solved exactly by the lasso homotopy (:func:`noisy_basis_pursuit`): the
constrained minimiser lies on the lasso path, so the path is followed (scikit-learn's LARS-lasso
on a Gram matrix shared by all test points) to the segment where the residual norm falls to
``epsilon``, and the crossing is found in closed form on that segment.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import lars_path_gram
from sklearn.utils import gen_even_slices
from sklearn.utils.validation import check_is_fitted, validate_data

from .._params import constraints_for
from ._base import check_supervised_classes, validated_training_data

__all__ = ["SRC", "noisy_basis_pursuit", "unit_rows"]

FIRST_KNOTS = 64
"""Knots of the lasso path computed at first (doubled until the crossing is reached)."""


def unit_rows(X: np.ndarray) -> np.ndarray:
    """``X`` with every row scaled to unit l2 norm (all-zero rows stay zero)."""
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    return X / np.where(norms > 0, norms, 1.0)


def _padded_gram(dictionary: np.ndarray) -> np.ndarray:
    """Gram matrix of the atoms plus one all-zero atom.

    scikit-learn's LARS stops as soon as every atom is active, at the knot where the last one
    entered, which for a dictionary with linearly independent atoms is before the end of the
    lasso path.  An extra zero atom never enters (its correlation stays 0) and lets the path run
    on to ``lambda = 0``, i.e. the least-squares solution, so no part of the path is missing.
    """
    n_atoms = dictionary.shape[0]
    gram = np.zeros((n_atoms + 1, n_atoms + 1))
    gram[:n_atoms, :n_atoms] = dictionary @ dictionary.T
    return gram


def _residual(dictionary, target, x):
    nz = np.flatnonzero(x)
    return target - x[nz] @ dictionary[nz]


def _lasso_path(gram, xy, max_iter):
    with warnings.catch_warnings():
        # Degenerate (duplicate or dependent) atoms make LARS skip them with a warning; the
        # path it returns is still a lasso path, which is all that is used here.
        warnings.simplefilter("ignore", ConvergenceWarning)
        _, _, path, n_iter = lars_path_gram(
            Xy=xy,
            Gram=gram,
            n_samples=1,
            max_iter=max_iter,
            method="lasso",
            return_n_iter=True,
        )
    return path, n_iter


def _code_one(dictionary, gram, target, epsilon, first_knots):
    """The minimiser of ``||x||_1`` s.t. ``||target - x @ dictionary||_2 <= epsilon``."""
    n_atoms = dictionary.shape[0]
    xy = np.zeros(n_atoms + 1)
    xy[:n_atoms] = dictionary @ target
    # The path's knots get costlier as it goes (and its tail, once the active atoms span the
    # targets' space, is the costliest), so compute it only up to a number of knots that is
    # doubled until the residual has fallen to epsilon or the path is complete.
    max_iter = first_knots
    while True:
        path, n_iter = _lasso_path(gram, xy, max_iter)
        done = n_iter < max_iter  # LARS stopped on its own: lambda = 0 reached
        last = path[:n_atoms, -1]
        if done or np.linalg.norm(_residual(dictionary, target, last)) <= epsilon:
            break
        max_iter *= 2
    path = path[:n_atoms]  # drop the zero atom; columns are the knots, lambda decreasing
    n_knots = path.shape[1]

    def norm_at(k):
        return np.linalg.norm(_residual(dictionary, target, path[:, k]))

    # The residual norm is non-increasing along the lasso path: bisect for the first knot
    # whose residual is within epsilon.
    if norm_at(n_knots - 1) > epsilon:
        return path[:, -1]  # infeasible: the end of the path is the least-squares fit
    lo, hi = -1, n_knots - 1  # norm_at(lo) > epsilon (lo = -1: before the path), norm_at(hi) ok
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if norm_at(mid) > epsilon:
            lo = mid
        else:
            hi = mid
    if hi == 0:
        return path[:, 0]  # ||target|| <= epsilon: x = 0
    # On the segment x(s) = x_lo + s (x_hi - x_lo) the residual is affine in s; solve
    # ||r_lo + s (r_hi - r_lo)||^2 = epsilon^2 for the crossing s in (0, 1].
    x_lo, x_hi = path[:, lo], path[:, hi]
    r_lo = _residual(dictionary, target, x_lo)
    delta = _residual(dictionary, target, x_hi) - r_lo
    a, b, c = delta @ delta, r_lo @ delta, r_lo @ r_lo - epsilon**2
    denom = -b + np.sqrt(max(b * b - a * c, 0.0))  # stable form of the smaller root
    s = min(c / denom, 1.0) if denom > 0 else 1.0
    return x_lo + s * (x_hi - x_lo)


def _code_chunk(dictionary, gram, targets, epsilon):
    codes = np.zeros((targets.shape[0], dictionary.shape[0]))
    first_knots = max(1, min(FIRST_KNOTS, *dictionary.shape))
    for i, target in enumerate(targets):
        codes[i] = _code_one(dictionary, gram, target, epsilon, first_knots)
    return sp.csr_matrix(codes)


def noisy_basis_pursuit(
    dictionary: np.ndarray,
    targets: np.ndarray,
    epsilon: float = 0.05,
    *,
    n_jobs: int | None = None,
) -> sp.csr_matrix:
    """Sparse codes by noisy basis pursuit, exactly, through the lasso homotopy.

    For each row ``y`` of ``targets`` solves

        min ||x||_1   subject to   ||y - D x||_2 <= epsilon,   D = dictionary.T

    For ``||y|| > epsilon`` the minimiser is the lasso solution
    ``argmin 1/2 ||y - D x||^2 + lambda ||x||_1`` whose residual norm is exactly ``epsilon``
    (Lagrange duality), so the lasso path is followed (LARS-lasso, the Gram matrix ``D^T D``
    computed once for all targets) to the first knot with residual ``<= epsilon`` and the
    crossing is solved in closed form inside that segment, where the coefficients are affine
    and the squared residual quadratic.  ``||y|| <= epsilon`` gives ``x = 0``.

    When no point of the path reaches ``epsilon`` (more features than linearly independent
    atoms, so the problem is infeasible) the end of the path is returned: the least-squares
    fit (the smallest-l1 one when it is not unique), i.e. the code with the smallest residual.
    ``epsilon = 0`` therefore gives the basis-pursuit solution ``min ||x||_1 s.t. D x = y``
    when ``y`` lies in the span of the atoms, up to rounding.

    Parameters
    ----------
    dictionary : ndarray of shape (n_atoms, n_features)
        The atoms, one per row.
    targets : ndarray of shape (n_targets, n_features)
        The signals to code.
    epsilon : float, default=0.05
        Tolerance on the l2 norm of the reconstruction error.
    n_jobs : int or None, default=None
        Number of joblib workers over chunks of targets (None: one, -1: all cores).

    Returns
    -------
    codes : scipy.sparse.csr_matrix of shape (n_targets, n_atoms)

    Examples
    --------
    >>> import numpy as np
    >>> D = np.eye(3)
    >>> noisy_basis_pursuit(D, np.array([[0.6, 0.8, 0.0]]), epsilon=0.1).toarray().round(2)
    array([[0.53, 0.73, 0.  ]])
    """
    dictionary = np.asarray(dictionary, dtype=float)
    targets = np.atleast_2d(np.asarray(targets, dtype=float))
    if epsilon < 0:
        raise ValueError(f"epsilon must be non-negative, got {epsilon!r}")
    if targets.shape[1] != dictionary.shape[1]:
        raise ValueError(
            f"targets have {targets.shape[1]} features but the dictionary's atoms have "
            f"{dictionary.shape[1]}"
        )
    gram = _padded_gram(dictionary)
    n_targets = targets.shape[0]
    workers = min(effective_n_jobs(n_jobs), max(n_targets, 1))
    if workers == 1:
        return _code_chunk(dictionary, gram, targets, epsilon)
    chunks = Parallel(n_jobs=workers)(
        delayed(_code_chunk)(dictionary, gram, targets[s], epsilon)
        for s in gen_even_slices(n_targets, workers)
    )
    return sp.vstack(chunks, format="csr")


class SRC(ClassifierMixin, BaseEstimator):
    """Sparse-representation-based classification (Wright et al. 2009).

    Training samples, scaled to unit l2 norm, are the columns of a dictionary ``D``.  A test
    sample ``y`` (also unit norm) is coded by noisy basis pursuit

        x = argmin ||x||_1  s.t.  ||D x - y||_2 <= epsilon,

    (see :func:`noisy_basis_pursuit`: exact, by the lasso homotopy) and assigned to the class
    with the smallest residual ``r_c(y) = ||y - D delta_c(x)||_2``, where ``delta_c`` keeps
    the coefficients of class ``c``.  When the problem is infeasible (more features than
    linearly independent training samples) the least-squares code is used instead.

    Parameters
    ----------
    epsilon : float, default=0.05
        Reconstruction tolerance (0.05 as in Wright et al. and the S-RLSC experiments);
        ``epsilon=0`` asks for exact reconstruction (basis pursuit).
    n_jobs : int or None, default=None
        joblib workers over chunks of test samples at prediction time.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    dictionary_ : ndarray of shape (n_samples, n_features)
        The unit-norm training samples (the atoms, one per row).
    atom_classes_ : ndarray of shape (n_samples,)
        Class index (into ``classes_``) of each atom.

    References
    ----------
    J. Wright, A. Y. Yang, A. Ganesh, S. S. Sastry and Y. Ma, "Robust face recognition via
    sparse representation", IEEE TPAMI 31(2), 2009, pp. 210-227.

    Examples
    --------
    >>> import numpy as np
    >>> from structreg.models.sparse_representation import SRC
    >>> rng = np.random.default_rng(0)
    >>> bases = [np.linalg.qr(rng.normal(size=(20, 3)))[0] for _ in range(2)]
    >>> X = np.vstack([(B @ rng.normal(size=(3, 10))).T for B in bases])
    >>> y = np.repeat([0, 1], 10)
    >>> clf = SRC().fit(X, y)
    >>> clf.predict((bases[1] @ rng.normal(size=3))[None, :])
    array([1])
    >>> clf.sparse_codes(X[:1]).shape
    (1, 20)
    """

    def __init__(self, epsilon=0.05, n_jobs=None):
        self.epsilon = epsilon
        self.n_jobs = n_jobs

    def fit(self, X, y) -> SRC:
        """Store the unit-norm training samples as the dictionary.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        self._validate_params()
        X, y = validated_training_data(self, X, y)
        self.classes_, self.atom_classes_ = check_supervised_classes(self, y)
        self.dictionary_ = unit_rows(X)
        return self

    def sparse_codes(self, X) -> sp.csr_matrix:
        """Sparse codes of the unit-norm rows of X over the dictionary.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        codes : scipy.sparse.csr_matrix of shape (n_samples, n_atoms)
            Row i solves ``min ||x||_1 s.t. ||x @ dictionary_ - x_i / ||x_i|| ||_2 <= epsilon``.
        """
        return self._codes(self._unit_inputs(X))

    def _unit_inputs(self, X) -> np.ndarray:
        check_is_fitted(self)
        return unit_rows(validate_data(self, X, dtype=float, reset=False))

    def _codes(self, Y: np.ndarray) -> sp.csr_matrix:
        return noisy_basis_pursuit(self.dictionary_, Y, self.epsilon, n_jobs=self.n_jobs)

    def class_residuals(self, X) -> np.ndarray:
        """Residuals ``r_c(x) = ||x - D delta_c(code(x))||_2`` of the unit-norm rows of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        Y = self._unit_inputs(X)
        codes = self._codes(Y)
        residuals = np.empty((Y.shape[0], len(self.classes_)))
        for c in range(len(self.classes_)):
            atoms = np.flatnonzero(self.atom_classes_ == c)
            recon = codes[:, atoms] @ self.dictionary_[atoms]
            residuals[:, c] = np.linalg.norm(Y - recon, axis=1)
        return residuals

    def decision_function(self, X) -> np.ndarray:
        """Minus the class residuals, so that the largest value is the predicted class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes), or (n_samples,) for two classes
            ``-r_c(x)``; for two classes scikit-learn's convention ``r_0(x) - r_1(x)``
            (positive means ``classes_[1]``).
        """
        residuals = self.class_residuals(X)
        if len(self.classes_) == 2:
            return residuals[:, 0] - residuals[:, 1]
        return -residuals

    def predict(self, X) -> np.ndarray:
        """Class with the smallest residual (the first such class on ties).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        residuals = self.class_residuals(X)
        return self.classes_[np.argmin(residuals, axis=1)]


SRC._parameter_constraints = constraints_for(SRC)
