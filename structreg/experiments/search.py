"""Coarse-to-fine cross-validated parameter search for the reproductions.

A search space is a list of :class:`Axis` objects (:func:`log2_axis`, :func:`value_axis`);
:func:`coarse_to_fine` evaluates a coarse grid, then refines around the best point by a
pattern search or by neighbourhoods at given strides; :func:`cv_evaluator` scores candidates
by CV accuracy from a fold evaluator.  Every paper's search goes through these.  The strategy
in full: ``docs/reproducing/search.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from typing import Any

import numpy as np

__all__ = [
    "Axis",
    "SearchResult",
    "coarse_to_fine",
    "cv_evaluator",
    "log2_axis",
    "n_correct",
    "stratified_folds",
    "trivial_gaussian_widths",
    "value_axis",
]

Candidate = dict[str, Any]
Folds = Sequence[tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class Axis:
    """One searched parameter ``name``: its ``values`` in search order (neighbours in the tuple
    are neighbours in the refinement), the index stride ``coarse_step`` of the coarse grid
    (1: every value), and whether every value is tried with every searched point
    (``exhaustive``; docs/reproducing/search.md)."""

    name: str
    values: tuple
    coarse_step: int = 1
    exhaustive: bool = False

    def __post_init__(self) -> None:
        if not self.values:
            raise ValueError(f"axis {self.name!r} has no values")
        if self.coarse_step < 1:
            raise ValueError(f"coarse_step must be >= 1, got {self.coarse_step}")

    def coarse_indices(self) -> list[int]:
        """Every ``coarse_step``-th index, the last one included."""
        idx = list(range(0, len(self.values), self.coarse_step))
        if idx[-1] != len(self.values) - 1:
            idx.append(len(self.values) - 1)
        return idx


def log2_axis(
    name: str,
    low: int = -10,
    high: int = 10,
    *,
    coarse_step: int = 4,
    exhaustive: bool = False,
    descending: bool = False,
) -> Axis:
    """Axis over ``2^low, ..., 2^high`` (values are the powers); ``descending``: search order
    from ``2^high`` down (ties then prefer larger values)."""
    values = tuple(2.0**e for e in range(low, high + 1))
    return Axis(name, values[::-1] if descending else values, coarse_step, exhaustive)


def value_axis(name: str, values: Iterable[Any], *, coarse_step: int = 1) -> Axis:
    """Axis over a plain list of values (kept in the given order)."""
    return Axis(name, tuple(values), coarse_step)


@dataclass
class SearchResult:
    """Outcome of a search: best parameters, their CV score, and how many candidates were
    evaluated."""

    best_params: Candidate
    best_score: float
    n_evaluated: int


SCORE_DECIMALS = 12
"""Scores equal to this many decimals tie (a mean of fold accuracies may differ from an
equal one in its last bit, depending on which folds the hits fall in)."""


def coarse_to_fine(
    evaluate: Callable[[list[Candidate]], Sequence[float]],
    axes: Sequence[Axis],
    *,
    fixed: Mapping[str, Any] | None = None,
    refine: bool | Sequence[int] = True,
    prefer: Callable[[Candidate], Any] | None = None,
) -> SearchResult:
    """Coarse grid, then refinement around the best point (docs/reproducing/search.md); the
    higher score is better.

    Parameters
    ----------
    evaluate : callable
        Gets a list of candidate dicts (``fixed`` merged in) and returns one score per
        candidate (NaN: the candidate failed; it never wins).
    axes : sequence of Axis
        The searched parameters; an ``exhaustive`` axis is tried in full with every point.
    fixed : mapping, optional
        Parameters every candidate has, not searched.
    refine : bool or sequence of int, default=True
        True: the pattern search (from the best point, its neighbours along one axis at a
        time, moving while a neighbour is better, the step halved otherwise, down to 1).
        A sequence of strides (index steps, e.g. ``(2, 1)``): at each stride in turn, every
        point of the ``3^p`` neighbourhood of the best point so far.  False: the coarse grid
        only.
    prefer : callable, optional
        Among points whose scores tie (to ``SCORE_DECIMALS`` = 12 decimals), the one with the
        smallest ``prefer(candidate)`` wins.  None: the point evaluated first (the coarse grid
        in axis order, then the refinement; inside an exhaustive axis its first value).

    Returns
    -------
    SearchResult
    """
    fixed = dict(fixed or {})
    searched = [a for a in axes if not a.exhaustive]
    inner = [a for a in axes if a.exhaustive]
    inner_names = [a.name for a in inner]
    inner_grid = [
        dict(zip(inner_names, values, strict=True))
        for values in product(*(a.values for a in inner))
    ]

    def rank(score: float, candidate: Candidate, order: int) -> tuple:
        """Smaller is better: the higher score, then the preferred candidate, then the earlier."""
        preference = () if prefer is None else prefer(candidate)
        return (-round(score, SCORE_DECIMALS), preference, order)

    # searched point -> (its best score, that candidate, its rank), in evaluation order
    seen: dict[tuple[int, ...], tuple[float, Candidate, tuple]] = {}

    def run(points: list[tuple[int, ...]]) -> None:
        """Evaluate the points not seen yet (each with the whole inner grid) in one batch."""
        points = [p for p in dict.fromkeys(points) if p not in seen]
        if not points:
            return
        batch = []
        for p in points:
            outer = {a.name: a.values[i] for a, i in zip(searched, p, strict=True)}
            batch += [{**fixed, **outer, **q} for q in inner_grid]
        scores = np.asarray(evaluate(batch), dtype=float)
        if scores.shape != (len(batch),):
            raise ValueError(f"evaluate returned {scores.shape} scores for {len(batch)} candidates")
        scores = np.where(np.isnan(scores), -np.inf, scores)  # NaN never wins
        per_point = len(inner_grid)
        for j, p in enumerate(points):
            block = range(j * per_point, (j + 1) * per_point)
            top = min(block, key=lambda i: rank(float(scores[i]), batch[i], i))
            score, candidate = float(scores[top]), batch[top]
            seen[p] = (score, candidate, rank(score, candidate, len(seen)))

    def best() -> tuple[int, ...]:
        """The best point seen so far."""
        return min(seen, key=lambda p: seen[p][2])

    run(list(product(*(a.coarse_indices() for a in searched))))
    if not searched:
        pass  # the inner grid only: nothing to refine
    elif isinstance(refine, (bool, np.bool_)):
        if refine:
            _pattern_search(run, best, searched)
    else:
        for stride in refine:
            _neighbourhood(run, best(), searched, int(stride))
    score, params, _ = seen[best()]
    return SearchResult(dict(params), score, len(seen) * len(inner_grid))


def _pattern_search(
    run: Callable[[list[tuple[int, ...]]], None],
    best: Callable[[], tuple[int, ...]],
    searched: Sequence[Axis],
) -> None:
    """From the best point: its neighbours at the current step along one axis at a time (an
    axis's step at most its coarse step), moving to a better point while there is one, else
    halving the step, down to 1."""
    current = best()
    step = max(a.coarse_step for a in searched)
    while step >= 1:
        moved = False
        for d, axis in enumerate(searched):
            s = min(step, axis.coarse_step)
            near = [i for i in (current[d] - s, current[d] + s) if 0 <= i < len(axis.values)]
            run([current[:d] + (i,) + current[d + 1 :] for i in near])
            candidate = best()
            if candidate != current:
                current = candidate
                moved = True
        if not moved:
            step //= 2


def _neighbourhood(
    run: Callable[[list[tuple[int, ...]]], None],
    center: tuple[int, ...],
    searched: Sequence[Axis],
    stride: int,
) -> None:
    """Every point of the ``3^p`` neighbourhood of ``center`` at index distance ``stride``
    along each axis (within the axes)."""
    near = [
        [i for i in (c - stride, c, c + stride) if 0 <= i < len(axis.values)]
        for c, axis in zip(center, searched, strict=True)
    ]
    run(list(product(*near)))


def stratified_folds(
    y: np.ndarray, n_folds: int, seed: int, *, min_train_per_class: int = 3
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Seeded stratified ``n_folds``-fold split; a class whose training folds would keep fewer
    than ``min_train_per_class`` points stays in every training fold and is never scored;
    ``n_folds`` is lowered to the largest class size if needed (docs/reproducing/search.md)."""
    y = np.asarray(y)
    rng = np.random.default_rng(seed)
    classes, codes = np.unique(y, return_inverse=True)
    counts = np.bincount(codes)
    n_folds = int(max(2, min(n_folds, counts.max())))
    fold_of = np.full(len(y), -1)
    offset = 0
    for c in range(len(classes)):
        members = np.flatnonzero(codes == c)
        n_c = len(members)
        if n_c - -(-n_c // n_folds) < min_train_per_class:
            continue
        perm = rng.permutation(members)
        # continue the round-robin across classes so that fold sizes stay balanced
        fold_of[perm] = (offset + np.arange(n_c)) % n_folds
        offset = (offset + n_c) % n_folds
    tested = [f for f in range(n_folds) if np.any(fold_of == f)]
    folds = [(np.flatnonzero(fold_of != f), np.flatnonzero(fold_of == f)) for f in tested]
    if not folds:
        raise ValueError(
            f"no class is large enough for {n_folds}-fold CV with {min_train_per_class} "
            "training points per class"
        )
    return folds


def cv_evaluator(
    fold_eval: Callable[[list[Candidate], np.ndarray, np.ndarray], Sequence[float]],
    folds: Folds,
    *,
    average: str = "pooled",
) -> Callable[[list[Candidate]], list[float]]:
    """``evaluate(candidates)``: the CV accuracy of every candidate from per-fold hit counts.

    Parameters
    ----------
    fold_eval : callable
        ``fold_eval(candidates, train, test)``: the number of correctly classified test
        points of every candidate, fitted on ``train``.
    folds : sequence of (train, test) index arrays
    average : {"pooled", "folds"}, default="pooled"
        ``"pooled"``: the hits of all folds over all their test points; ``"folds"``: the mean
        of the folds' accuracies.
    """
    if average not in ("pooled", "folds"):
        raise ValueError(f"average must be 'pooled' or 'folds', got {average!r}")
    total = sum(len(test) for _, test in folds)

    def pooled(candidates: list[Candidate]) -> list[float]:
        hits = np.zeros(len(candidates))
        for train, test in folds:
            hits += np.asarray(fold_eval(candidates, train, test), dtype=float)
        return (hits / total).tolist()

    def fold_mean(candidates: list[Candidate]) -> list[float]:
        accuracies = []  # per fold, per candidate
        for train, test in folds:
            hits = np.asarray(fold_eval(candidates, train, test), dtype=float)
            accuracies.append(hits / len(test))
        return [float(np.mean([fold[i] for fold in accuracies])) for i in range(len(candidates))]

    return pooled if average == "pooled" else fold_mean


def n_correct(decision: np.ndarray, y: np.ndarray) -> int:
    """How many of the class codes ``y`` (``0..c-1``) the decision values get right: the sign
    of a binary decision of shape (n,) (positive: class 1), else the largest of the ``c``
    columns."""
    decision = np.asarray(decision)
    if decision.ndim == 1:
        predicted = (decision > 0).astype(int)
    else:
        predicted = np.argmax(decision, axis=1)
    return int(np.sum(predicted == y))


def trivial_gaussian_widths(
    X: np.ndarray, sigmas: Iterable[float], *, tol: float = 1e-8
) -> dict[float, str]:
    """``{sigma: reason}`` of the Gaussian widths whose Gram matrix on ``X`` is numerically
    the identity or all ones (the tests and why: docs/reproducing/search.md)."""
    X = np.asarray(X, dtype=float)
    sq = np.sum(X**2, axis=1)
    D = np.maximum(sq[:, None] + sq[None, :] - 2.0 * X @ X.T, 0.0)
    np.fill_diagonal(D, np.inf)
    D[D <= 1e-12 * max(float(np.max(D[np.isfinite(D)], initial=0.0)), 1e-300)] = np.inf
    nearest = np.min(D, axis=1)
    nearest = nearest[np.isfinite(nearest)]
    np.fill_diagonal(D, 0.0)
    far = float(np.max(D[np.isfinite(D)], initial=0.0))
    out = {}
    for s in sigmas:
        two_s2 = 2.0 * float(s) ** 2
        if nearest.size and np.all(np.exp(-nearest / two_s2) < tol):
            out[s] = f"Gram matrix is the identity to {tol:g} (nearest-neighbour k < {tol:g})"
        elif np.exp(-far / two_s2) > 1.0 - tol:
            out[s] = f"Gram matrix is all ones to {tol:g} (farthest-pair k > 1 - {tol:g})"
    return out
