"""The one memory budget of structreg.

Every n x p intermediate that structreg forms piecewise -- kernel sections ``k(A[rows], B)``,
penalty products ``(M A)[rows]``, per-edge distances of a graph -- is formed a block at a time,
each block holding at most :data:`BLOCK_BYTES` of float64.  The constant is read at call time,
so setting ``structreg._chunks.BLOCK_BYTES`` (or passing ``block_bytes``) changes every blocked
loop at once; results do not depend on it beyond rounding.
"""

from __future__ import annotations

from collections.abc import Iterator

BLOCK_BYTES = 64 * 2**20
"""Largest float64 block formed at once (64 MiB)."""


def rows_per_block(n_cols: int, block_bytes: int | None = None) -> int:
    """Rows of an ``n_cols``-wide float64 block within ``block_bytes`` (default
    :data:`BLOCK_BYTES`): ``max(1, block_bytes // (8 n_cols))``."""
    block_bytes = BLOCK_BYTES if block_bytes is None else block_bytes
    return max(1, int(block_bytes // (8 * max(n_cols, 1))))


def row_blocks(
    n_rows: int, n_cols: int, block_bytes: int | None = None, *, rows: int | None = None
) -> Iterator[slice]:
    """Slices of at most :func:`rows_per_block` rows (exactly ``rows`` when given, at least
    one) covering ``range(n_rows)``."""
    step = rows_per_block(n_cols, block_bytes) if rows is None else max(1, int(rows))
    for start in range(0, n_rows, step):
        yield slice(start, min(start + step, n_rows))
