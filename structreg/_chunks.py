"""Row blocks: how structreg bounds the memory of n x p intermediates (kernel sections,
penalty products) by forming them a block of rows at a time."""

from __future__ import annotations

from collections.abc import Iterator

BLOCK_BYTES = 64 * 2**20
"""Largest float64 block formed at once (64 MiB)."""


def row_blocks(n_rows: int, n_cols: int, block_bytes: int | None = None) -> Iterator[slice]:
    """Slices of at most ``block_bytes / (8 n_cols)`` rows (default :data:`BLOCK_BYTES`)
    covering ``range(n_rows)``."""
    block_bytes = BLOCK_BYTES if block_bytes is None else block_bytes
    step = max(1, int(block_bytes // (8 * max(n_cols, 1))))
    for start in range(0, n_rows, step):
        yield slice(start, min(start + step, n_rows))
