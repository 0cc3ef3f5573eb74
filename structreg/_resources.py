"""The machine resources structreg uses: one memory budget and one thread limiter.

Memory
    Every intermediate that structreg forms piecewise -- kernel sections ``k(A[rows], B)``,
    penalty products ``(M A)[rows]``, per-edge distances of a graph, the float32 products of
    the exact neighbour search, the batches of the l1-graph's lasso mode -- is sized from one
    option, ``working_memory`` (MiB, default :data:`DEFAULT_WORKING_MEMORY`), in the spirit of
    scikit-learn's ``sklearn.set_config(working_memory=...)``.  Set it with
    :func:`set_config`, or for a block of code with :func:`config_context`; every size below
    is derived from it when it is used, so a change reaches every blocked loop at once.
    Results do not depend on it beyond rounding.

    ==========================  ======================================  ==============
    size                        derived as                              at the default
    ==========================  ======================================  ==============
    :func:`block_bytes`         ``working_memory`` MiB                  67,108,864 B
    :func:`kernel_store_bytes`  16 blocks                               1,073,741,824 B
    :func:`gemm_tile_columns`   a block / (8 x ``GEMM_QUERY_ROWS``)     16,384 points
    :func:`lasso_batch_floats`  62,500 floats per MiB                   4,000,000
    ==========================  ======================================  ==============

    The setting is one per process (the blocked loops also run on worker threads, which must
    see it); joblib worker processes start from the default, so callers size their batches
    in the parent process and pass them on.

    What cannot be formed piecewise -- the whole n x n Gram matrix that the exact dense
    solvers factor -- is not sized from the budget but checked against the machine:
    :func:`dense_gram_bytes` estimates it and :func:`check_dense_memory` refuses, before
    anything is allocated, a fit that needs more than :func:`available_memory` (an
    :class:`InsufficientMemoryError`, a ``MemoryError``, naming the size and the scalable
    solvers).

Threads
    One option, ``threads`` (default None: every CPU this process may run on), is the number
    of threads of structreg's hot loops: ``loop_threads`` gives it to every neighbour
    search (the float32 GEMM search's worker threads and their BLAS, the cell search, scipy's
    ``cKDTree(workers=)``, scikit-learn's ``NearestNeighbors(n_jobs=)`` and its OpenMP
    threads).  One :class:`threadpoolctl.ThreadpoolController` per process (scanning the
    loaded libraries costs more than a small fit's solve, so it is not repeated; measured in
    :doc:`/user_guide/scale`, "Memory and threads") holds the BLAS
    threads: :func:`blas_threads` limits them within a ``with`` block, and
    :func:`blas_threads_for` is the rule of the estimators' fits (one thread below
    :data:`SMALL_PROBLEM` samples).
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from numbers import Integral, Real

from threadpoolctl import ThreadpoolController

__all__ = [
    "DEFAULT_WORKING_MEMORY",
    "SMALL_PROBLEM",
    "InsufficientMemoryError",
    "available_cpus",
    "available_memory",
    "blas_threads",
    "blas_threads_for",
    "block_bytes",
    "check_dense_memory",
    "config_context",
    "dense_gram_bytes",
    "gemm_tile_columns",
    "get_config",
    "kernel_store_bytes",
    "lasso_batch_floats",
    "loop_threads",
    "set_config",
    "thread_controller",
    "threads_limit",
]

# --------------------------------------------------------------------------------------------
# the memory budget
# --------------------------------------------------------------------------------------------

DEFAULT_WORKING_MEMORY = 64
"""Default of ``working_memory``: 64 MiB per block."""

_MIB = 2**20
_DEFAULT_BLOCK_BYTES = DEFAULT_WORKING_MEMORY * _MIB

GEMM_QUERY_ROWS = 512
"""Query rows that one budget-sized block of the float32 neighbour search holds over all its
worker threads (see :func:`gemm_tile_columns`)."""

_LASSO_FLOATS_AT_DEFAULT = 4_000_000
"""Floats of one lasso batch at the default budget (32 MB, about half a block)."""

_CONFIG: dict[str, float | int | None] = {
    "working_memory": DEFAULT_WORKING_MEMORY,
    "threads": None,
}


class _Unchanged:
    """The default of ``threads`` in :func:`set_config`: keep the setting (None is a value
    of its own there, every CPU)."""

    def __repr__(self) -> str:
        return "<unchanged>"


_UNCHANGED = _Unchanged()


def get_config() -> dict[str, float | int | None]:
    """The current settings of structreg, as a new dict.

    Returns
    -------
    config : dict
        ``{"working_memory": MiB, "threads": int or None}``; see :func:`set_config`.
    """
    return dict(_CONFIG)


def set_config(
    working_memory: float | None = None, threads: int | None | _Unchanged = _UNCHANGED
) -> None:
    """Change structreg's settings for the whole process; an argument not given keeps its
    setting as it is.

    Parameters
    ----------
    working_memory : float or None, default=None
        Memory budget in MiB of every intermediate structreg forms a block at a time (default
        64).  Kernel sections, penalty products and pair distances come in blocks of at most
        this size; the exact neighbour search's tiles, the l1-graph's lasso batches and the
        largest kernel matrix a kernel operator stores (16 blocks) scale with it.  Results do
        not depend on it beyond rounding.  None keeps the budget.
    threads : int or None, optional
        Threads of structreg's hot loops, like scikit-learn's ``n_jobs`` (a positive int; None,
        the initial setting: every CPU this process may run on, ``os.sched_getaffinity``).
        Every neighbour search takes its threads from it (``loop_threads``): the
        float32 GEMM search's worker threads (each holding its BLAS to one thread; under
        ``threads=1`` the BLAS too runs one thread), the cell search's, scipy's
        ``cKDTree.query(workers=)``, scikit-learn's ``NearestNeighbors(n_jobs=)`` and, where
        set, its OpenMP threads.  Results do not depend on it.  Not given: kept as it is;
        ``threads=None`` sets it back to every CPU.

    Raises
    ------
    ValueError
        ``threads`` is not a positive int or None (or ``working_memory`` not a positive
        finite number; a TypeError where it is not a number).

    See Also
    --------
    config_context : the same, within a ``with`` block.
    get_config : the current settings.
    """
    if threads is not _UNCHANGED:
        threads = _check_threads(threads)
    if working_memory is not None:
        _CONFIG["working_memory"] = _check_working_memory(working_memory)
    if threads is not _UNCHANGED:
        _CONFIG["threads"] = threads


@contextlib.contextmanager
def config_context(
    *, working_memory: float | None = None, threads: int | None | _Unchanged = _UNCHANGED
) -> Iterator[None]:
    """Settings of :func:`set_config` within a ``with`` block, restored when it ends.

    Parameters
    ----------
    working_memory : float or None, default=None
        See :func:`set_config`; None keeps the current budget.
    threads : int or None, optional
        See :func:`set_config`; not given keeps the current setting, None is every CPU.

    Examples
    --------
    >>> import structreg
    >>> with structreg.config_context(working_memory=8):
    ...     structreg.get_config()["working_memory"]
    8
    >>> structreg.get_config()["working_memory"]
    64
    """
    saved = get_config()
    set_config(working_memory=working_memory, threads=threads)
    try:
        yield
    finally:
        _CONFIG.update(saved)


def _check_working_memory(value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"working_memory must be a number of MiB, got {value!r}")
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"working_memory must be a positive finite number of MiB, got {value!r}")
    return value


def _check_threads(value) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
        raise ValueError(f"threads must be a positive int or None, got {value!r}")
    return int(value)


def block_bytes() -> int:
    """Bytes of the largest block formed at once: ``working_memory`` MiB (at least one)."""
    return max(1, int(_CONFIG["working_memory"] * _MIB))


def kernel_store_bytes() -> int:
    """Largest kernel matrix (bytes of float64) that a kernel operator computes once and
    stores rather than recomputing in blocks: 16 blocks (1 GiB at the default)."""
    return 16 * block_bytes()


def gemm_tile_columns() -> int:
    """Points per tile of the float32 neighbour search (16,384 at the default).

    The search forms ``queries x tile`` products in blocks of about a budget's worth of
    entries per worker thread divided by 8 (``block_bytes() / (8 threads)``); a tile of
    ``block_bytes() / (8 GEMM_QUERY_ROWS)`` points makes those blocks ``GEMM_QUERY_ROWS /
    threads`` query rows tall, whatever the budget.
    """
    return max(1, block_bytes() // (8 * GEMM_QUERY_ROWS))


def lasso_batch_floats() -> int:
    """Floats of the arrays of one batch of points of the l1-graph's lasso mode: 4,000,000
    (32 MB) at the default budget, in proportion to it otherwise (at least one)."""
    return max(1, _LASSO_FLOATS_AT_DEFAULT * block_bytes() // _DEFAULT_BLOCK_BYTES)


# --------------------------------------------------------------------------------------------
# what a dense n x n solve needs, and what the machine has
# --------------------------------------------------------------------------------------------

_GIB = 2**30

DENSE_GRAM_ARRAYS = 2
"""n x n float64 arrays that an exact dense fit holds at once at the least: the Gram matrix
and the working copy its factorisation makes (LAPACK's ``?pstrf`` / ``?potrf`` / ``?syevd``
take their own Fortran-ordered copy; forming an RBF Gram matrix also holds two).  A kernel of
full rank adds the factor and the normal equations on top, so this is a lower bound of the
peak: what it refuses cannot fit, what it lets through may still run out."""


class InsufficientMemoryError(MemoryError):
    """A fit needs an n x n array larger than the memory available on this machine (see
    ``check_dense_memory``); raised before anything is allocated.  A ``MemoryError``, so
    code that already catches numpy's ``MemoryError`` catches it too."""


def dense_gram_bytes(n_rows: int, *, arrays: int = DENSE_GRAM_ARRAYS) -> int:
    """Bytes of ``arrays`` float64 matrices of ``n_rows x n_rows``: the estimate of what an
    exact dense fit on ``n_rows`` points holds at its peak (:data:`DENSE_GRAM_ARRAYS`; one
    fewer when the Gram matrix is given, ``kernel="precomputed"``).

    >>> round(dense_gram_bytes(50_000) / 2**30, 1)  # GiB
    37.3
    """
    n = int(n_rows)
    return int(arrays) * 8 * n * n


def _meminfo_available() -> int | None:
    """``MemAvailable`` of ``/proc/meminfo`` (Linux) in bytes, else None."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024  # kB
    except (OSError, ValueError, IndexError):
        pass
    return None


def _read_int(path: str) -> int | None:
    try:
        with open(path, encoding="ascii") as f:
            return int(f.read().strip())
    except (OSError, ValueError):  # absent, or "max" (no limit)
        return None


def _cgroup_available() -> int | None:
    """What the process's memory cgroup still allows (limit minus usage), in bytes, when a
    limit is set (cgroup v2 ``memory.max``, else v1 ``memory.limit_in_bytes``); else None."""
    for limit_file, usage_file in (
        ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
        (
            "/sys/fs/cgroup/memory/memory.limit_in_bytes",
            "/sys/fs/cgroup/memory/memory.usage_in_bytes",
        ),
    ):
        limit = _read_int(limit_file)
        if limit is None or limit >= 2**60:  # v1 writes "no limit" as a huge number
            continue
        usage = _read_int(usage_file) or 0
        return max(0, limit - usage)
    return None


def available_memory() -> int | None:
    """Bytes of physical memory this process can still allocate, or None where unknown.

    ``MemAvailable`` of ``/proc/meminfo`` (Linux: free memory plus what the kernel can
    reclaim), lowered to what a memory cgroup's limit leaves; elsewhere the free physical
    pages of ``os.sysconf`` (``SC_AVPHYS_PAGES``, which counts no reclaimable cache).  No
    swap is counted: a dense factorisation that swaps does not finish either.
    """
    available = _meminfo_available()
    if available is None:
        try:
            available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (AttributeError, ValueError, OSError):  # not POSIX, or no such name
            available = None
    cgroup = _cgroup_available()
    if cgroup is not None:
        available = cgroup if available is None else min(available, cgroup)
    return None if available is None or available <= 0 else int(available)


def check_dense_memory(needed: int, what: str, remedy: str | Callable[[], str]) -> None:
    """Refuse, before allocating, a fit that needs ``needed`` bytes at once when the machine
    has less available (:func:`available_memory`; nothing is refused where that is unknown,
    nor what fits in one block of the ``working_memory`` budget, which is not read for it).
    ``remedy``: what to do instead, or a function that says it (called only to refuse).

    Raises
    ------
    InsufficientMemoryError
        ``"{what} needs about X GiB ..., but only Y GiB is available ...; {remedy}"``.
    """
    if needed <= block_bytes():
        return
    available = available_memory()
    if available is None or needed <= available:
        return
    if callable(remedy):
        remedy = remedy()
    raise InsufficientMemoryError(
        f"{what} needs about {_gib(needed)} of memory at once, but only {_gib(available)} is "
        f"available on this machine; {remedy}"
    )


def _gib(n_bytes: int) -> str:
    """``n_bytes`` in GiB: one decimal, two significant digits below a tenth of a GiB."""
    value = n_bytes / _GIB
    return f"{value:.1f} GiB" if value >= 0.1 else f"{value:.2g} GiB"


# --------------------------------------------------------------------------------------------
# the thread limiter
# --------------------------------------------------------------------------------------------

SMALL_PROBLEM = 1000
"""Training-set size below which a fit uses a single BLAS thread (see
:func:`blas_threads_for`)."""

_CONTROLLER: list[ThreadpoolController] = []


def available_cpus() -> int:
    """CPUs this process may run on (``os.sched_getaffinity``; ``os.cpu_count`` elsewhere)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def loop_threads() -> int:
    """Threads of a hot loop: the ``threads`` setting (:func:`set_config`), or every CPU
    this process may run on (:func:`available_cpus`) where it is None."""
    threads = _CONFIG["threads"]
    return available_cpus() if threads is None else int(threads)


def threads_limit() -> int | None:
    """The ``threads`` setting where one is set (to limit a library's own thread pools, e.g.
    scikit-learn's OpenMP, with :func:`blas_threads`), None (leave them as they are)
    otherwise."""
    threads = _CONFIG["threads"]
    return None if threads is None else int(threads)


def thread_controller() -> ThreadpoolController:
    """The process's one :class:`~threadpoolctl.ThreadpoolController`, made at its first use
    (after structreg's imports have loaded numpy's BLAS and scikit-learn's OpenMP)."""
    if not _CONTROLLER:
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0]


def libraries_loaded() -> None:
    """Say that a thread-pool library may have been loaded since :func:`thread_controller`
    was made (an import that brings its own BLAS, e.g. faiss's): the next use scans
    afresh, so that the new library is limited too."""
    _CONTROLLER.clear()


def blas_threads(
    limit: int | None, *, user_api: str | None = "blas", rescan: bool = False
) -> AbstractContextManager[object]:
    """Context within which the BLAS libraries use at most ``limit`` threads.

    Parameters
    ----------
    limit : int or None
        Threads allowed; None leaves the libraries as they are.
    user_api : {"blas", "openmp"} or None, default="blas"
        The thread pools limited (threadpoolctl's ``user_api``); None: every pool
        threadpoolctl manages, BLAS and OpenMP.
    rescan : bool, default=False
        Scan the loaded libraries afresh (slower than a small fit's solve; measured in
        :doc:`/user_guide/scale`, "Memory and threads") instead of using the process's one
        controller, which knows only the libraries loaded when it was made: for a worker
        that runs arbitrary work (the experiment engine's cells), where a library may be
        loaded after the first call.
    """
    if limit is None:
        return contextlib.nullcontext()
    controller = ThreadpoolController() if rescan else thread_controller()
    return controller.limit(limits=limit, user_api=user_api)


def blas_threads_for(n_samples: int) -> AbstractContextManager[object]:
    """Context for the BLAS threads of a fit on ``n_samples`` points: one thread below
    :data:`SMALL_PROBLEM` (threaded BLAS made those small factorisations slower on 2 cores;
    measured in :doc:`/user_guide/scale`, "Memory and threads"), the library's default
    otherwise."""
    return blas_threads(1 if n_samples < SMALL_PROBLEM else None)
