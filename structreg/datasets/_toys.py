"""Synthetic two-dimensional problems from the papers' toy experiments.

- :func:`make_drlsc_moons`: the three two-moons problems (A, B, C) of increasing difficulty used for
  the toy figure of the DRLSC paper (Xue, Chen & Yang 2009, Sec. 6.1, Fig. 1, Tables 4-5).
- :func:`make_xor_gaussians`: the XOR mixture of four Gaussians of the SRSVM paper (Xue, Chen &
  Yang 2011, Sec. VI-A, Table I).
- :func:`make_spiral_regression`: a regression target along a noisy spiral (not from the papers:
  the manifold problem of the regressors' tests and example).
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

__all__ = [
    "DRLSC_MOONS_LEVELS",
    "XOR_GAUSSIANS_TABLE_I",
    "make_drlsc_moons",
    "make_spiral_regression",
    "make_xor_gaussians",
]

#: Our parameters for the three DRLSC two-moons problems (the paper gives none; see
#: :func:`make_drlsc_moons`).  ``offset`` is the height of the lower moon's centre (scikit-learn's
#: ``make_moons`` uses 0.5), ``noise`` the standard deviation of the Gaussian noise.
DRLSC_MOONS_LEVELS: dict[int, dict[str, float]] = {
    1: {"offset": 0.0, "noise": 0.05},
    2: {"offset": 0.6, "noise": 0.10},
    3: {"offset": 0.7, "noise": 0.13},
}

#: The SRSVM paper's Table I: (class label, mean, diagonal of the covariance) of the four
#: Gaussians, in the order I1, I2 (class I -> label 0), II1, II2 (class II -> label 1).
XOR_GAUSSIANS_TABLE_I: tuple[tuple[int, tuple[float, float], tuple[float, float]], ...] = (
    (0, (2.0, 5.0), (0.75, 5.0)),
    (0, (1.0, -5.0), (6.0, 0.75)),
    (1, (-5.0, 0.0), (0.75, 6.0)),
    (1, (8.0, 0.0), (5.0, 0.75)),
)

_LEVEL_ALIASES = {"a": 1, "b": 2, "c": 3}


def _check_count(value: int, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def make_drlsc_moons(
    level: int | str = 1,
    n_samples_per_class: int = 100,
    *,
    noise: float | None = None,
    offset: float | None = None,
    shuffle: bool = True,
    random_state: int | np.random.RandomState | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Two interleaving half circles with the DRLSC paper's three levels of difficulty.

    The DRLSC paper (Xue, Chen & Yang 2009, Sec. 6.1, Fig. 1) compares classifiers on three
    two-moons sets A, B and C with 100 samples per class, in which the classes are "far from each
    other" (A) and then "get nearer" (B, C) until they overlap (C).  The paper gives no generating
    parameters, so the values below are **our choice**.  They were picked so that the Bayes
    accuracy (estimated with a large sample) is about 100 %, 99.8 % and 98.2 %, in line with the
    best test accuracies the paper reports (its Table 5: 100, 100 and 98 %).

    ===== ====== ====== =========================================================
    level offset noise  classes
    ===== ====== ====== =========================================================
    1 (A) 0.0    0.05   well apart: the lower moon is pulled down, no overlap
    2 (B) 0.6    0.10   interlocked (slightly closer than ``make_moons``), touching
    3 (C) 0.7    0.13   interlocked and overlapping
    ===== ====== ====== =========================================================

    Class 0 is the upper moon ``(cos t, sin t)``, class 1 the lower moon
    ``(1 - cos t, offset - sin t)``, with angles ``t`` drawn uniformly from ``[0, pi]`` and
    isotropic Gaussian noise of standard deviation ``noise`` added to both coordinates.

    Parameters
    ----------
    level : {1, 2, 3} or {"A", "B", "C"}, default=1
        Difficulty level (the paper's data sets A, B, C).
    n_samples_per_class : int, default=100
        Points per moon (the paper uses 100).
    noise : float, optional
        Override the level's noise standard deviation.
    offset : float, optional
        Override the level's height of the lower moon's centre (larger values interlock the moons
        more; ``sklearn.datasets.make_moons`` corresponds to 0.5).
    shuffle : bool, default=True
        Shuffle the samples; otherwise class 0 comes first.
    random_state : int, RandomState instance or None, default=None
        Seed or generator, passed through :func:`sklearn.utils.check_random_state`.

    Returns
    -------
    X : ndarray of shape (2 * n_samples_per_class, 2)
        The points.
    y : ndarray of shape (2 * n_samples_per_class,)
        Integer labels 0 (upper moon) and 1 (lower moon).

    Examples
    --------
    >>> from structreg.datasets import make_drlsc_moons
    >>> X, y = make_drlsc_moons(level=3, random_state=0)
    >>> X.shape, sorted(set(y.tolist()))
    ((200, 2), [0, 1])
    """
    key = _LEVEL_ALIASES.get(level.lower(), level) if isinstance(level, str) else level
    if key not in DRLSC_MOONS_LEVELS:
        raise ValueError(f"level must be 1, 2, 3 (or 'A', 'B', 'C'), got {level!r}")
    n = _check_count(n_samples_per_class, "n_samples_per_class")
    params = DRLSC_MOONS_LEVELS[key]
    noise = params["noise"] if noise is None else float(noise)
    offset = params["offset"] if offset is None else float(offset)
    if noise < 0:
        raise ValueError(f"noise must be non-negative, got {noise}")
    rng = check_random_state(random_state)

    t_upper = rng.uniform(0.0, np.pi, size=n)
    t_lower = rng.uniform(0.0, np.pi, size=n)
    upper = np.column_stack([np.cos(t_upper), np.sin(t_upper)])
    lower = np.column_stack([1.0 - np.cos(t_lower), offset - np.sin(t_lower)])
    X = np.vstack([upper, lower]) + noise * rng.standard_normal((2 * n, 2))
    y = np.repeat(np.array([0, 1]), n)
    if shuffle:
        order = rng.permutation(2 * n)
        X, y = X[order], y[order]
    return X, y


def make_xor_gaussians(
    n_samples_per_component: int = 200,
    *,
    shuffle: bool = True,
    random_state: int | np.random.RandomState | None = None,
    return_components: bool = False,
) -> tuple[np.ndarray, np.ndarray] | tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The XOR mixture of four Gaussians of the SRSVM paper's toy experiment.

    Table I of Xue, Chen & Yang, "Structural regularized support vector machine", IEEE TNN 22
    (2011) gives two classes of two axis-aligned Gaussians each, with 200 points per Gaussian
    (mixing weight 1/2 within each class):

    ========= ========= ========== ====================
    class     component mean       covariance
    ========= ========= ========== ====================
    I  (0)    I1        (2, 5)     diag(0.75, 5)
    I  (0)    I2        (1, -5)    diag(6, 0.75)
    II (1)    II1       (-5, 0)    diag(0.75, 6)
    II (1)    II2       (8, 0)     diag(5, 0.75)
    ========= ========= ========== ====================

    Class I sits above and below the centre, class II left and right of it, so both class means are
    about (1.5, 0) and no line separates the classes (an XOR pattern along the diagonals).  The
    number of points per component is fixed (not drawn from the mixing weights).

    Parameters
    ----------
    n_samples_per_component : int, default=200
        Points drawn from each of the four Gaussians (the paper uses 200, i.e. 400 per class and
        800 in all).
    shuffle : bool, default=True
        Shuffle the samples; otherwise they come in the component order I1, I2, II1, II2.
    random_state : int, RandomState instance or None, default=None
        Seed or generator, passed through :func:`sklearn.utils.check_random_state`.
    return_components : bool, default=False
        Also return the index 0..3 of the Gaussian each point came from (I1, I2, II1, II2).

    Returns
    -------
    X : ndarray of shape (4 * n_samples_per_component, 2)
        The points.
    y : ndarray of shape (4 * n_samples_per_component,)
        Integer labels: 0 for class I, 1 for class II.
    components : ndarray of shape (4 * n_samples_per_component,)
        Only if ``return_components`` is True.

    Examples
    --------
    >>> from structreg.datasets import make_xor_gaussians
    >>> X, y = make_xor_gaussians(random_state=0)
    >>> X.shape, [int((y == c).sum()) for c in (0, 1)]
    ((800, 2), [400, 400])
    """
    n = _check_count(n_samples_per_component, "n_samples_per_component")
    rng = check_random_state(random_state)
    points, labels, components = [], [], []
    for index, (label, mean, variances) in enumerate(XOR_GAUSSIANS_TABLE_I):
        scale = np.sqrt(np.asarray(variances))
        points.append(np.asarray(mean) + scale * rng.standard_normal((n, 2)))
        labels.append(np.full(n, label))
        components.append(np.full(n, index))
    X = np.vstack(points)
    y = np.concatenate(labels)
    comp = np.concatenate(components)
    if shuffle:
        order = rng.permutation(X.shape[0])
        X, y, comp = X[order], y[order], comp[order]
    if return_components:
        return X, y, comp
    return X, y


def make_spiral_regression(
    n_samples: int = 600,
    *,
    turns: float = 4.0,
    frequency: float = 2.0,
    noise: float = 0.02,
    random_state: int | np.random.RandomState | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """A smooth target along a noisy spiral: a one-dimensional manifold in the plane.

    The Archimedean spiral of ``turns`` turns from radius 0.1 to 1 is sampled uniformly in
    arc length; isotropic Gaussian noise of standard deviation ``noise`` is added to the
    points, and the target is ``sin(2 pi frequency u)`` with ``u`` in [0, 1] the normalised
    arc length.  Neighbouring arms are closer in the plane (``0.9 / turns``) than far-apart
    points along the curve, and carry different values: a kernel on the plane mixes them,
    a kNN graph on dense samples follows the curve.

    Parameters
    ----------
    n_samples : int, default=600
    turns : float, default=4.0
    frequency : float, default=2.0
        Periods of the target along the whole curve.
    noise : float, default=0.02
        Standard deviation of the noise on the points (the target is noiseless).
    random_state : int, RandomState instance or None, default=None
        Seed or generator, passed through :func:`sklearn.utils.check_random_state`.

    Returns
    -------
    X : ndarray of shape (n_samples, 2)
        The points, ordered along the curve (from the centre outwards).
    y : ndarray of shape (n_samples,)
        The target.

    Examples
    --------
    >>> from structreg.datasets import make_spiral_regression
    >>> X, y = make_spiral_regression(100, random_state=0)
    >>> X.shape, bool(abs(y).max() <= 1)
    ((100, 2), True)
    """
    n = _check_count(n_samples, "n_samples")
    if not turns > 0 or noise < 0:
        raise ValueError(f"turns must be positive and noise non-negative, got {turns}, {noise}")
    rng = check_random_state(random_state)
    theta = np.linspace(0.0, 2 * np.pi * turns, 20001)
    radius = 0.1 + 0.9 * theta / theta[-1]
    curve = np.column_stack([radius * np.cos(theta), radius * np.sin(theta)])
    arc = np.r_[0.0, np.cumsum(np.linalg.norm(np.diff(curve, axis=0), axis=1))]
    s = np.sort(rng.uniform(0.0, arc[-1], size=n))
    angle = np.interp(s, arc, theta)
    r = 0.1 + 0.9 * angle / theta[-1]
    X = np.column_stack([r * np.cos(angle), r * np.sin(angle)])
    X += noise * rng.standard_normal((n, 2))
    return X, np.sin(2 * np.pi * frequency * s / arc[-1])
