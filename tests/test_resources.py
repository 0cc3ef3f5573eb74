"""The one memory budget and the one thread limiter (structreg._resources)."""

from __future__ import annotations

import re

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
    assert structreg.get_config() == {"working_memory": 64, "threads": None}
    assert _resources.block_bytes() == 64 * 2**20
    assert _resources.kernel_store_bytes() == 2**30
    assert _resources.gemm_tile_columns() == 16_384
    assert _resources.lasso_batch_floats() == 4_000_000
    assert l1graph._lasso_batch(30, 256) == 256
    assert l1graph._lasso_batch(30, 1000) == 4_000_000 // (30 * 1030)


def test_every_size_follows_the_budget():
    with structreg.config_context(working_memory=1):
        assert structreg.get_config() == {"working_memory": 1, "threads": None}
        assert _resources.block_bytes() == 2**20
        assert _resources.kernel_store_bytes() == 16 * 2**20
        assert _resources.gemm_tile_columns() == 256
        assert _resources.lasso_batch_floats() == 62_500
        assert _chunks.rows_per_block(8) == 2**20 // 64
        assert [s.stop for s in _chunks.row_blocks(2**15, 8)] == [2**14, 2**15]
    assert structreg.get_config() == {"working_memory": 64, "threads": None}


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


def test_threads_setting_reaches_loop_threads_and_is_restored(monkeypatch):
    monkeypatch.setattr(_resources, "available_cpus", lambda: 7)
    assert structreg.get_config()["threads"] is None
    assert _resources.loop_threads() == 7  # None: every CPU the process may use
    assert _resources.threads_limit() is None
    try:
        structreg.set_config(threads=3)
        assert _resources.loop_threads() == 3
        assert _resources.threads_limit() == 3
        with structreg.config_context(threads=1):
            assert _resources.loop_threads() == 1
            with structreg.config_context(working_memory=2):  # threads not given: kept
                assert _resources.loop_threads() == 1
            with structreg.config_context(threads=None):  # None: every CPU again
                assert _resources.loop_threads() == 7
            assert _resources.loop_threads() == 1
        assert structreg.get_config()["threads"] == 3
        structreg.set_config(working_memory=64)  # threads not given: kept
        assert _resources.loop_threads() == 3
        structreg.set_config(threads=None)
        assert _resources.loop_threads() == 7
    finally:
        structreg.set_config(threads=None)
    assert structreg.get_config() == {"working_memory": 64, "threads": None}


@pytest.mark.parametrize("value", [0, -1, 1.5, 2.0, "2", True])
def test_threads_must_be_a_positive_int_or_none(value):
    with pytest.raises(ValueError, match="threads must be a positive int or None"):
        structreg.set_config(threads=value)
    with pytest.raises(ValueError, match="threads"), structreg.config_context(threads=value):
        pass
    with pytest.raises(ValueError):  # nothing is set when one setting is invalid
        structreg.set_config(working_memory=8, threads=value)
    assert structreg.get_config() == {"working_memory": 64, "threads": None}
    structreg.set_config(threads=np.int64(2))  # numpy integers are ints
    assert _resources.loop_threads() == 2
    structreg.set_config(threads=None)


# ----------------------------------------------------------------------------------------
# the memory of the dense n x n paths (nothing here allocates one)

GIB = 2**30


def test_dense_gram_bytes_counts_the_gram_matrix_and_its_factorisation_copy():
    assert _resources.DENSE_GRAM_ARRAYS == 2
    assert _resources.dense_gram_bytes(50_000) == 2 * 8 * 50_000**2
    assert round(_resources.dense_gram_bytes(50_000) / GIB, 1) == 37.3
    assert _resources.dense_gram_bytes(50_000, arrays=1) / GIB == pytest.approx(18.63, abs=0.01)
    assert _resources.dense_gram_bytes(0) == 0


def test_available_memory_is_the_least_the_machine_and_its_cgroup_allow(monkeypatch):
    available = _resources.available_memory()
    assert available is None or (isinstance(available, int) and available > 0)
    monkeypatch.setattr(_resources, "_meminfo_available", lambda: 8 * GIB)
    monkeypatch.setattr(_resources, "_cgroup_available", lambda: None)
    assert _resources.available_memory() == 8 * GIB
    monkeypatch.setattr(_resources, "_cgroup_available", lambda: 2 * GIB)
    assert _resources.available_memory() == 2 * GIB
    monkeypatch.setattr(_resources, "_cgroup_available", lambda: 0)
    assert _resources.available_memory() is None  # nothing left to tell: no refusal


def test_cgroup_limits_are_read_with_their_usage(monkeypatch):
    files = {"memory.max": "max\n", "memory.current": "100\n"}

    def fake_read(path):
        name = path.rsplit("/", 1)[-1]
        try:
            return int(files.get(name, "").strip())
        except ValueError:
            return None

    monkeypatch.setattr(_resources, "_read_int", fake_read)
    assert _resources._cgroup_available() is None  # "max": no limit
    files["memory.max"] = str(4 * GIB)
    assert _resources._cgroup_available() == 4 * GIB - 100
    files.update({"memory.max": "max", "memory.limit_in_bytes": str(2**63 - 4096)})
    assert _resources._cgroup_available() is None  # v1's "no limit"


def test_check_dense_memory_refuses_with_the_size_and_what_to_use(monkeypatch):
    monkeypatch.setattr(_resources, "available_memory", lambda: 16 * GIB)
    needed = _resources.dense_gram_bytes(50_000)
    with pytest.raises(_resources.InsufficientMemoryError) as info:
        _resources.check_dense_memory(needed, "the fit", "use solver='nystroem'")
    assert isinstance(info.value, MemoryError)
    assert str(info.value) == (
        "the fit needs about 37.3 GiB of memory at once, but only 16.0 GiB is available on "
        "this machine; use solver='nystroem'"
    )
    _resources.check_dense_memory(16 * GIB, "the fit", "")  # fits exactly
    monkeypatch.setattr(_resources, "available_memory", lambda: None)
    _resources.check_dense_memory(needed, "the fit", "")  # unknown: not refused

    def unread():
        raise AssertionError("the machine was asked about one block's worth")

    monkeypatch.setattr(_resources, "available_memory", unread)
    _resources.check_dense_memory(_resources.block_bytes(), "the fit", "")


@pytest.fixture
def no_dense_gram(monkeypatch):
    """Forming an exact kernel factor or a libsvm Gram matrix fails the test at once, so a
    missing refusal cannot allocate 18.6 GiB."""
    from structreg.kernels import KernelFeatureMap
    from structreg.models import _losses

    def refuse(*args, **kwargs):
        raise AssertionError("a dense n x n matrix was formed")

    monkeypatch.setattr(KernelFeatureMap, "fit_transform", refuse)
    monkeypatch.setattr(_losses.HingeLoss, "_deform", staticmethod(refuse))
    monkeypatch.setattr(_losses.TrainingGram, "labeled_gram", refuse)


def test_dense_fits_on_50000_points_are_refused_before_allocating(monkeypatch, no_dense_gram):
    """LapRLSC(solver="dense") on 50,000 points ran until numpy's MemoryError for 18.6 GiB;
    every estimator with a dense n x n path is refused up front, naming the size and the
    scalable solvers, whatever the kind of label."""
    from sklearn.datasets import make_moons

    from structreg import LSSVM, SRSVM, DALapRLSC, LapRLSC, LapSVM

    monkeypatch.setattr(_resources, "available_memory", lambda: 16 * GIB)
    X, y = make_moons(50_000, noise=0.1, random_state=0)
    y_semi = np.where(np.arange(50_000) < 100, y, -1)
    square = "use solver='nystroem' \\(n_components centres, O\\(n m\\) memory\\) or solver='cg'"
    cases = [
        (LapRLSC(solver="dense", gamma=1.0), y_semi, "LapRLSC with solver='dense'", square),
        (DALapRLSC(solver="dense", gamma=1.0), y_semi, "DALapRLSC with solver='dense'", square),
        (
            LapSVM(solver="dense", gamma=1.0),
            y_semi,
            "LapSVM with solver='dense'",
            "use solver='nystroem'",
        ),
        (
            LapSVM(solver="primal", gamma=1.0),
            y_semi,
            "LapSVM with solver='primal'",
            "use solver='nystroem'",
        ),
        (LSSVM(gamma=1.0), y, "LSSVM", "LSSVM has no solver that avoids it"),
    ]
    for clf, labels, who, remedy in cases:
        with pytest.raises(_resources.InsufficientMemoryError) as info:
            clf.fit(X, labels)
        message = str(info.value)
        assert message.startswith(
            f"{who} forms the 50,000 x 50,000 kernel matrix of its training samples: this "
            "needs about 37.3 GiB of memory at once, but only 16.0 GiB is available"
        ), message
        assert re.search(remedy, message), message
    # libsvm's Gram matrix of the labeled samples, even on the inputs (SRSVM's linear kernel)
    with pytest.raises(_resources.InsufficientMemoryError, match="50,000 x 50,000 deformed kernel"):
        SRSVM().fit(X, y)


def test_the_refusal_follows_the_solver_and_the_machine(monkeypatch):
    """Small data, a tiny machine: the exact dense paths are refused (the estimate is read
    only beyond one block of the budget), the scalable ones and the linear primal path fit."""
    from sklearn.datasets import make_moons

    from structreg import LapRLSC, LapSVM
    from structreg.exceptions import GroupFallbackWarning
    from structreg.models import LapRLSCCV

    X, y = make_moons(200, noise=0.1, random_state=0)
    y_semi = np.where(np.arange(200) < 20, y, -1)
    monkeypatch.setattr(_resources, "available_memory", lambda: 2**16)  # 64 KiB
    LapRLSC(solver="dense").fit(X, y_semi)  # 625 KiB fits in one 64 MiB block: not checked
    with structreg.config_context(working_memory=2**-10):  # 1 KiB blocks
        for clf in (LapRLSC(solver="dense"), LapRLSC(), LapSVM()):  # "auto": dense here
            tiny = r"200 x 200 kernel matrix.*about 0\.0006 GiB .* only 6\.1e-05 GiB"
            with pytest.raises(MemoryError, match=tiny):
                clf.fit(X, y_semi)
        with pytest.raises(MemoryError, match="solver='auto' \\(which chose 'dense'\\)"):
            LapRLSC().fit(X, y_semi)
        K = np.exp(-((X[:, None] - X) ** 2).sum(-1))
        with pytest.raises(MemoryError, match="a precomputed kernel is solved on its own"):
            LapRLSC(kernel="precomputed").fit(K, y_semi)
        LapRLSC(solver="nystroem", n_components=20).fit(X, y_semi)
        LapRLSC(solver="cg").fit(X, y_semi)
        LapRLSC(kernel="linear", solver="dense").fit(X, y_semi)  # (d+1) x (d+1) primal
        LapSVM(solver="nystroem", n_components=20).fit(X, y_semi)
        fallback = pytest.warns(GroupFallbackWarning, match="InsufficientMemoryError")
        with fallback, pytest.raises(ValueError, match="all 2 fits failed.*Insufficient"):
            LapRLSCCV(param_grid={"gamma_A": [1e-2]}, cv=2).fit(X, y_semi)
