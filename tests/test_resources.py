"""The one memory budget and the one thread limiter (structreg._resources)."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_info

import structreg
from structreg import _chunks, _resources
from structreg.kernels import KernelOperator, kernel_matrix
from structreg.structure import graphs, l1graph


def _blas_threads() -> list[int]:
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


# ----------------------------------------------------------------------------------------
# the memory budget


def test_the_defaults_give_the_sizes_of_before():
    """64 MiB blocks, 1 GiB stored kernels, 16,384-point GEMM tiles, 4e6-float lasso
    batches: the constants these sizes replaced."""
    assert structreg.get_config() == {"working_memory": 64}
    assert _resources.block_bytes() == 64 * 2**20
    assert _resources.kernel_store_bytes() == 2**30
    assert _resources.gemm_tile_columns() == 16_384
    assert _resources.lasso_batch_floats() == 4_000_000
    assert l1graph._lasso_batch(30, 256) == 256
    assert l1graph._lasso_batch(30, 1000) == 4_000_000 // (30 * 1030)


def test_every_size_follows_the_budget():
    with structreg.config_context(working_memory=1):
        assert structreg.get_config() == {"working_memory": 1}
        assert _resources.block_bytes() == 2**20
        assert _resources.kernel_store_bytes() == 16 * 2**20
        assert _resources.gemm_tile_columns() == 256
        assert _resources.lasso_batch_floats() == 62_500
        assert _chunks.rows_per_block(8) == 2**20 // 64
        assert [s.stop for s in _chunks.row_blocks(2**15, 8)] == [2**14, 2**15]
    assert structreg.get_config() == {"working_memory": 64}


def test_set_config_and_nested_contexts_restore():
    try:
        structreg.set_config(working_memory=128)
        with structreg.config_context(working_memory=2):
            with structreg.config_context():  # None keeps the setting
                assert structreg.get_config()["working_memory"] == 2
            with pytest.raises(RuntimeError), structreg.config_context(working_memory=0.5):
                raise RuntimeError
            assert structreg.get_config()["working_memory"] == 2
        assert structreg.get_config()["working_memory"] == 128
        structreg.set_config()  # nothing to change
        assert _resources.block_bytes() == 128 * 2**20
    finally:
        structreg.set_config(working_memory=_resources.DEFAULT_WORKING_MEMORY)


@pytest.mark.parametrize("value", [0, -1, float("nan"), float("inf")])
def test_a_budget_must_be_a_positive_number(value):
    with pytest.raises(ValueError, match="working_memory"):
        structreg.set_config(working_memory=value)
    assert structreg.get_config()["working_memory"] == 64


@pytest.mark.parametrize("value", ["64", True, [64]])
def test_a_budget_must_be_a_number(value):
    with pytest.raises(TypeError, match="working_memory"):
        structreg.set_config(working_memory=value)


def test_the_budget_reaches_every_derived_size(memory_budget):
    """A tiny budget (as the tests of the blocked loops set it) sizes the row blocks, the
    neighbour search's tiles and the lasso batches; the fixture restores the default."""
    memory_budget(5 * 9 * 8)
    assert _resources.block_bytes() == 360
    assert structreg.get_config()["working_memory"] == 360 / 2**20
    assert _chunks.rows_per_block(9) == 5
    assert _resources.gemm_tile_columns() == 1
    assert _resources.lasso_batch_floats() == 21


def test_a_kernel_operator_stores_up_to_sixteen_blocks():
    X = np.random.default_rng(0).normal(size=(64, 3))

    def fn(A, B):
        return kernel_matrix(A, B, kernel="rbf", gamma=0.5)

    assert KernelOperator(X, fn).stored
    with structreg.config_context(working_memory=64 * 64 * 8 / 16 / 2**20 / 2):
        op = KernelOperator(X, fn)  # 64 x 64 float64 is twice the 16 blocks
        assert not op.stored and op.block_size == 2  # 1 KiB blocks of 64-wide rows
        np.testing.assert_allclose(op @ np.eye(64), fn(X, X), rtol=1e-14, atol=1e-14)


def test_a_small_budget_changes_no_neighbour_search():
    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal(c, 1.0, size=(150, 64)) for c in (0.0, 4.0)])
    whole = graphs._gemm_indices(X, X, 6)
    with structreg.config_context(working_memory=200 * 8 * 512 / 2**20):  # 200-point tiles
        assert _resources.gemm_tile_columns() == 200
        np.testing.assert_array_equal(graphs._gemm_indices(X, X, 6), whole)


def test_a_small_budget_changes_no_lasso_code():
    X = np.random.default_rng(2).normal(size=(40, 6))
    reference = l1graph.l1_graph(X, mode="lasso", n_candidates=8)
    with structreg.config_context(working_memory=8 * 14 * 3 * 64 / 4_000_000):
        assert l1graph._lasso_batch(8, 6) == 2  # two points a batch
        small = l1graph.l1_graph(X, mode="lasso", n_candidates=8)
    assert (small != reference).nnz == 0


# ----------------------------------------------------------------------------------------
# the thread limiter


def test_one_controller_per_process():
    from structreg.models import _base

    assert _resources.thread_controller() is _resources.thread_controller()
    assert _base.blas_threads_for is _resources.blas_threads_for
    assert _base.SMALL_PROBLEM == _resources.SMALL_PROBLEM == 1000


@pytest.mark.parametrize("rescan", [False, True])
def test_blas_threads_limits_and_restores(rescan):
    before = _blas_threads()
    if not before:
        pytest.skip("no BLAS library seen by threadpoolctl")
    with _resources.blas_threads(1, rescan=rescan):
        assert _blas_threads() == [1] * len(before)
    assert _blas_threads() == before
    with _resources.blas_threads(None):
        assert _blas_threads() == before


def test_blas_threads_for_follows_the_small_problem_rule():
    from structreg.models._base import blas_threads_for

    before = _blas_threads()
    if not before:
        pytest.skip("no BLAS library seen by threadpoolctl")
    with blas_threads_for(_resources.SMALL_PROBLEM - 1):
        assert _blas_threads() == [1] * len(before)
    with blas_threads_for(_resources.SMALL_PROBLEM):
        assert _blas_threads() == before
    assert _blas_threads() == before
