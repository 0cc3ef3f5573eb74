"""Row blocks under the one memory budget.

Every n x p intermediate that structreg forms piecewise -- kernel sections ``k(A[rows], B)``,
penalty products ``(M A)[rows]``, per-edge distances of a graph -- is formed a block at a time,
each block holding at most :func:`structreg._resources.block_bytes` of float64 (the
``working_memory`` option of :func:`structreg.set_config`, 64 MiB by default).  The budget is
read at call time, so changing it (or passing ``block_bytes``) changes every blocked loop at
once; results do not depend on it beyond rounding.
"""

from __future__ import annotations

from collections.abc import Iterator

from ._resources import block_bytes as _budget_bytes


def rows_per_block(n_cols: int, block_bytes: int | None = None) -> int:
    """Rows of an ``n_cols``-wide float64 block within ``block_bytes`` (default the memory
    budget, :func:`structreg._resources.block_bytes`): ``max(1, block_bytes // (8 n_cols))``."""
    block_bytes = _budget_bytes() if block_bytes is None else block_bytes
    return max(1, int(block_bytes // (8 * max(n_cols, 1))))


def row_blocks(
    n_rows: int, n_cols: int, block_bytes: int | None = None, *, rows: int | None = None
) -> Iterator[slice]:
    """Slices of at most :func:`rows_per_block` rows (exactly ``rows`` when given, at least
    one) covering ``range(n_rows)``."""
    step = rows_per_block(n_cols, block_bytes) if rows is None else max(1, int(rows))
    for start in range(0, n_rows, step):
        yield slice(start, min(start + step, n_rows))
