"""Shared measuring helpers of the benchmark scripts: wall time and peak traced memory of one
call, and semi-supervised labels with a fixed number of labeled points per class."""

from __future__ import annotations

import gc
import time
import tracemalloc

import numpy as np


def measure(fn, *args, **kwargs):
    """``(result, seconds, peak_bytes)`` of ``fn(*args, **kwargs)``.

    The peak is that of the Python and NumPy allocations made during the call (NumPy reports
    its buffers to :mod:`tracemalloc`), i.e. the extra memory the call needed on top of what
    was already allocated; tracing costs a few percent of time.
    """
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    t0 = time.perf_counter()
    try:
        out = fn(*args, **kwargs)
        seconds = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return out, seconds, peak


def semi_labels(y: np.ndarray, per_class: int, seed: int) -> np.ndarray:
    """A copy of ``y`` with all but ``per_class`` random samples of each class set to -1."""
    rng = np.random.default_rng(seed)
    y_semi = np.full_like(y, -1)
    for c in np.unique(y):
        idx = rng.choice(np.flatnonzero(y == c), per_class, replace=False)
        y_semi[idx] = c
    return y_semi


def gib(n_bytes: float) -> str:
    return f"{n_bytes / 2**30:.2f}"
