"""Coarse-to-fine cross-validated parameter search for the reproductions.

A search space is a list of :class:`Axis` objects (:func:`log2_axis`, :func:`value_axis`);
:func:`coarse_to_fine` evaluates a coarse grid, then refines around the best point by a
pattern search; :func:`cv_evaluator` scores candidates by pooled CV accuracy from a fold
evaluator.  The strategy in full: ``docs/reproducing/search.md``.
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


def coarse_to_fine(
    evaluate: Callable[[list[Candidate]], Sequence[float]],
    axes: Sequence[Axis],
    *,
    fixed: Mapping[str, Any] | None = None,
    refine: bool = True,
) -> SearchResult:
    """Coarse grid, then pattern-search refinement (docs/reproducing/search.md); the higher
    score is better.

    ``evaluate`` gets a list of candidate dicts (``fixed`` merged in) and returns one score
    per candidate (NaN: the candidate failed; it never wins).
    """
    fixed = dict(fixed or {})
    searched = [a for a in axes if not a.exhaustive]
    inner = [a for a in axes if a.exhaustive]
    inner_grid = [
        dict(zip([a.name for a in inner], vals, strict=True))
        for vals in product(*(a.values for a in inner))
    ]
    # searched point -> (its best score, candidate), in evaluation order
    seen: dict[tuple[int, ...], tuple[float, Candidate]] = {}

    def run(points: list[tuple[int, ...]]) -> None:
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
        per = len(inner_grid)
        blocks = np.where(np.isnan(scores), -np.inf, scores).reshape(len(points), per)
        for j, (p, block) in enumerate(zip(points, blocks, strict=True)):
            b = int(np.argmax(block))  # first maximum: the axis order breaks ties; NaN never wins
            seen[p] = (float(block[b]), batch[j * per + b])

    def best() -> tuple[int, ...]:
        top = max(score for score, _ in seen.values())
        return next(p for p, (score, _) in seen.items() if score == top)

    run(list(product(*(a.coarse_indices() for a in searched))))
    current = best()
    if refine and searched:
        step = max(a.coarse_step for a in searched)
        while step >= 1:
            moved = False
            for d, axis in enumerate(searched):
                s = min(step, axis.coarse_step)
                near = [i for i in (current[d] - s, current[d] + s) if 0 <= i < len(axis.values)]
                run([current[:d] + (i,) + current[d + 1 :] for i in near])
                candidate = best()
                if seen[candidate][0] > seen[current][0]:
                    current, moved = candidate, True
            if not moved:
                step //= 2
    score, params = seen[current]
    return SearchResult(dict(params), score, len(seen) * len(inner_grid))


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
) -> Callable[[list[Candidate]], list[float]]:
    """``evaluate(candidates)``: pooled CV accuracy from per-fold hit counts."""
    total = sum(len(test) for _, test in folds)

    def evaluate(candidates: list[Candidate]) -> list[float]:
        hits = np.zeros(len(candidates))
        for train, test in folds:
            hits += np.asarray(fold_eval(candidates, train, test), dtype=float)
        return (hits / total).tolist()

    return evaluate


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
