"""Eigenvalue-based generalization bound of large-margin classifiers (SRSVM paper, Sec. V).

Xue, Chen & Yang (2011, Theorem 1, eqs. 33-34), after Schoelkopf, Shawe-Taylor, Smola &
Williamson (1999), bound the expected risk of a hypothesis ``h(x) = <w, phi(x)> + b`` with
``||w|| <= c``, ``|b| <= B`` by

    R(h) <= R_s^gamma(h) + sqrt( (m ln 2 + ln( ceil(c) * ceil(8 B / gamma) / (theta gamma) ))
                                 / (2 n) )

with probability at least ``1 - theta``, simultaneously for every margin ``gamma`` in
``(8 Upsilon(m), 1]``, where ``R_s^gamma`` is the fraction of training points with
``y_i h(x_i) < gamma`` and::

    Upsilon(m) = min_{j = 1..m-1} 6 * 2^{-(j-1)/k_j} * (lambda_1 ... lambda_{k_j})^{1/(2 k_j)}
                 * min(1, 1.86 sqrt(log2(n / (m - j) + 1) / (m - j))),
    k_j = k(2^{j-1}),  k(l) = min{k : lambda_{k+1} <= (lambda_1 ... lambda_k / l^2)^{1/k}}.

What this module computes, exactly (the paper leaves these choices open):

* ``lambda`` are the eigenvalues of ``K / n`` (the empirical estimates of the kernel integral
  operator's eigenvalues, as in Schoelkopf et al.), of the Gram matrix *the classifier
  actually uses* (the deformed kernel for LapSVM / SRSVM, the remapped data for EKM);
* the hypothesis is normalised to ``||w|| = 1`` (so ``c = 1``, ``B = |b| / ||w||``, and the
  margins ``y_i h(x_i) / ||w||`` are geometric margins), which makes classifiers comparable;
* for each ``gamma`` on a grid in ``(0, 1]``, ``m`` is the smallest integer >= 2 with
  ``8 Upsilon(m) < gamma`` (the smallest covering-number exponent the theorem allows);
  ``gamma`` values with no such ``m`` (up to ``max_m``) are skipped, and the bound reported is
  the minimum over the grid, with its ``gamma`` and ``m``;
* the printed formula ``ln(ceil(c)/theta gamma) ceil(8B/gamma)`` is read as
  ``ln(ceil(c) ceil(8B/gamma) / (theta gamma))`` (the logarithm of the covering of the bias and
  scale grid), which is the form of Schoelkopf et al.; ``theta = 0.05`` by default.
"""

from __future__ import annotations

import math

import numpy as np


def _k_of_l(log_lam: np.ndarray, log_l: float) -> int:
    """``k(l)``: first k with ``lambda_{k+1} <= (lambda_1...lambda_k / l^2)^{1/k}`` (logs)."""
    n = len(log_lam)
    csum = np.cumsum(log_lam)
    for k in range(1, n):
        if log_lam[k] <= (csum[k - 1] - 2 * log_l) / k:
            return k
    return n


def upsilon_curve(eigenvalues: np.ndarray, n: int, max_m: int = 400) -> np.ndarray:
    """``Upsilon(m)`` of eq. (34) for ``m = 0..max_m`` (entries 0 and 1 are ``inf``)."""
    lam = np.sort(np.asarray(eigenvalues, dtype=float))[::-1]
    lam = lam[lam > 0]
    out = np.full(max_m + 1, np.inf)
    if lam.size == 0:
        out[2:] = 0.0
        return out
    log_lam = np.log(lam)
    csum = np.cumsum(log_lam)
    j = np.arange(1, max_m)
    k = np.array([_k_of_l(log_lam, (jj - 1) * math.log(2.0)) for jj in j])
    # a_j = 6 * 2^{-(j-1)/k_j} * (lambda_1 ... lambda_{k_j})^{1/(2 k_j)}
    a = 6.0 * np.exp(-(j - 1) / k * math.log(2.0) + 0.5 * csum[k - 1] / k)
    for m in range(2, max_m + 1):
        jm = j[: m - 1]
        r = m - jm
        c = np.minimum(1.0, 1.86 * np.sqrt(np.log2(n / r + 1.0) / r))
        out[m] = float(np.min(a[: m - 1] * c))
    return out


def upsilon(eigenvalues: np.ndarray, m: int, n: int) -> float:
    """``Upsilon(m)`` of eq. (34) for one ``m >= 2``."""
    return float(upsilon_curve(eigenvalues, n, m)[m])


def covering_exponent(eigenvalues: np.ndarray, gamma: float, n: int, max_m: int = 400) -> int:
    """Smallest ``m >= 2`` with ``8 Upsilon(m) < gamma``, or -1 if none up to ``max_m``."""
    ok = np.flatnonzero(8.0 * upsilon_curve(eigenvalues, n, max_m) < gamma)
    return int(ok[0]) if ok.size else -1


def generalization_bound(
    eigenvalues: np.ndarray,
    margins: np.ndarray,
    *,
    bias: float,
    theta: float = 0.05,
    gammas: np.ndarray | None = None,
    max_m: int = 400,
) -> dict:
    """Theorem 1 of the SRSVM paper for a classifier normalised to ``||w|| = 1``.

    Parameters
    ----------
    eigenvalues : ndarray of shape (n,)
        Eigenvalues of ``K / n`` of the classifier's Gram matrix on the training set.
    margins : ndarray of shape (n,)
        Geometric margins ``y_i h(x_i) / ||w||``.
    bias : float
        ``|b| / ||w||`` (the theorem's ``B``).
    theta : float, default=0.05
        Confidence: the bound holds with probability ``1 - theta``.
    gammas : ndarray, optional
        Margin grid in (0, 1]; default 100 geometric values from 1e-3 to 1.
    max_m : int, default=400
        Largest covering exponent tried.

    Returns
    -------
    dict with ``bound``, ``gamma``, ``m``, ``empirical_risk`` (R_s^gamma) and ``complexity``
    (the square-root term) at the minimising gamma; ``bound`` is ``inf`` if no gamma qualifies.
    """
    margins = np.asarray(margins, dtype=float)
    n = margins.shape[0]
    if not 0 < theta < 1:
        raise ValueError(f"theta must be in (0, 1), got {theta}")
    gammas = np.geomspace(1e-3, 1.0, 100) if gammas is None else np.asarray(gammas, float)
    best = {"bound": math.inf, "gamma": None, "m": None, "empirical_risk": None, "complexity": None}
    curve = 8.0 * upsilon_curve(eigenvalues, n, max_m)
    for gamma in gammas:
        ok = np.flatnonzero(curve < gamma)
        if ok.size == 0:
            continue
        m = int(ok[0])
        risk = float(np.mean(margins < gamma))
        # ceil(c) = 1 after normalisation; the bias grid has at least one cell
        log_term = math.log(max(1, math.ceil(8.0 * abs(bias) / gamma)) / (theta * gamma))
        complexity = math.sqrt(max(m * math.log(2.0) + log_term, 0.0) / (2.0 * n))
        if risk + complexity < best["bound"]:
            best = {
                "bound": risk + complexity,
                "gamma": float(gamma),
                "m": m,
                "empirical_risk": risk,
                "complexity": complexity,
            }
    return best


def classifier_bound(
    gram: np.ndarray,
    dual_coef: np.ndarray,
    support: np.ndarray,
    intercept: float,
    y_pm: np.ndarray,
    *,
    theta: float = 0.05,
) -> dict:
    """The bound for a fitted binary kernel SVM given its training Gram matrix.

    ``h(x_i) = sum_s dual_coef_s gram[s, i] + intercept`` (libsvm's ``dual_coef_`` =
    ``alpha_s y_s``); ``||w||^2 = dual_coef gram[S, S] dual_coef^T``; ``y_pm`` in {-1, +1}.
    """
    gram = np.asarray(gram, dtype=float)
    dual = np.ravel(dual_coef)
    h = dual @ gram[support] + intercept
    norm = math.sqrt(max(float(dual @ gram[np.ix_(support, support)] @ dual), 1e-300))
    eig = np.linalg.eigvalsh(0.5 * (gram + gram.T)) / gram.shape[0]
    return generalization_bound(eig, y_pm * h / norm, bias=abs(intercept) / norm, theta=theta)


def linear_bound(
    features: np.ndarray,
    coef: np.ndarray,
    intercept: float,
    y_pm: np.ndarray,
    *,
    theta: float = 0.05,
) -> dict:
    """The bound for a fitted binary linear classifier ``h(x) = <w, v(x)> + b`` on explicit
    training features ``V`` (rows ``v(x_i)``; the Gram matrix is ``V V^T``).

    ``coef`` is ``w``, ``intercept`` is ``b`` and ``y_pm`` in {-1, +1}; the margins are
    ``y_i h(x_i) / ||w||``.
    """
    V, w = np.asarray(features, dtype=float), np.ravel(coef)
    norm = max(float(np.linalg.norm(w)), 1e-300)
    eig = np.linalg.eigvalsh(V @ V.T) / V.shape[0]
    margins = y_pm * (V @ w + intercept) / norm
    return generalization_bound(eig, margins, bias=abs(intercept) / norm, theta=theta)


def plot_bounds(results: dict[str, dict[str, float]], ax=None):
    """Bar chart of bounds, ``results[dataset][classifier] = bound`` (Fig. 10 style)."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(1.8 + 1.6 * len(results), 3.2))
    datasets = list(results)
    methods = sorted({m for r in results.values() for m in r})
    width = 0.8 / max(len(methods), 1)
    for k, method in enumerate(methods):
        values = [results[d].get(method, np.nan) for d in datasets]
        ax.bar(np.arange(len(datasets)) + k * width, values, width, label=method)
    ax.set_xticks(np.arange(len(datasets)) + 0.4 - width / 2)
    ax.set_xticklabels(datasets)
    ax.set_ylabel("bound on the expected risk")
    ax.legend(fontsize=8)
    return ax


def fitted_bound(clf, X, y, *, theta: float = 0.05) -> dict:
    """:func:`classifier_bound` of a fitted *binary* kernel SVM on its training data.

    Supports structreg's hinge-loss models (``LapSVM``, ``SRSVM``, ``StructuralClassifier(
    loss="hinge")``: the Gram matrix is their deformed kernel; fit on fully labeled data),
    ``EKM`` (the linear kernel of the remapped points), scikit-learn's ``SVC`` and ``SLMM``
    (:func:`linear_bound` of its linear model on its kernel features, or on ``X`` for the
    linear kernel).  MPM is not covered.
    """
    from sklearn.metrics.pairwise import pairwise_kernels
    from sklearn.svm import SVC

    from .models import SLMM

    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    classes = clf.classes_
    if len(classes) != 2:
        raise ValueError("the bound is defined for binary classifiers")
    y_pm = np.where(y == classes[1], 1.0, -1.0)
    if isinstance(clf, SVC):
        svc = clf
        if clf.kernel == "precomputed":
            raise ValueError("pass an SVC with a named kernel (the Gram matrix is recomputed)")
        params = {"gamma": _svc_gamma(clf, X), "degree": clf.degree, "coef0": clf.coef0}
        keep = {"rbf": ["gamma"], "poly": ["gamma", "degree", "coef0"], "linear": []}
        gram = pairwise_kernels(X, metric=clf.kernel, **{k: params[k] for k in keep[clf.kernel]})
    elif hasattr(clf, "remap") and isinstance(getattr(clf, "svc_", None), SVC):  # EKM
        svc = clf.svc_
        R = clf.remap(X)
        gram = R @ R.T
    elif hasattr(clf, "svm_") and hasattr(clf, "deformed_gram"):
        svc = clf.svm_.svms_[0]
        gram = clf.deformed_gram()
    elif isinstance(clf, SLMM):
        V = X if clf.feature_map_ is None else clf.feature_map_.transform(X)
        return linear_bound(V, clf.coef_[0], float(clf.intercept_[0]), y_pm, theta=theta)
    else:
        raise TypeError(f"no bound for {type(clf).__name__}: need an SVC or a hinge-loss model")
    return classifier_bound(
        gram, svc.dual_coef_, svc.support_, float(svc.intercept_[0]), y_pm, theta=theta
    )


def _svc_gamma(svc, X: np.ndarray) -> float:
    """The kernel width of an ``SVC`` fitted on ``X`` (``gamma="scale"`` / ``"auto"`` resolved
    as scikit-learn resolves them)."""
    if svc.gamma == "scale":
        var = float(X.var())
        return 1.0 / (X.shape[1] * var) if var != 0 else 1.0
    return 1.0 / X.shape[1] if svc.gamma == "auto" else float(svc.gamma)
