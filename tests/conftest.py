import numpy as np
import pytest


def pytest_addoption(parser):
    parser.addoption(
        "--slow",
        action="store_true",
        default=False,
        help="long randomised runs (the fuzz test's 40,000 examples instead of CI's bounded run)",
    )


@pytest.fixture
def memory_budget():
    """Sets the one memory budget (``structreg.set_config(working_memory=...)``) to a number
    of bytes for the test (tiny budgets make the blocked loops run many blocks); the budget
    is restored afterwards."""
    import structreg

    saved = structreg.get_config()

    def set_bytes(n_bytes: int) -> None:
        structreg.set_config(working_memory=n_bytes / 2**20)

    yield set_bytes
    structreg.set_config(**saved)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture
def knn_searches(monkeypatch):
    """The ``n_query`` of every exact neighbour search of :mod:`structreg.structure.graphs`,
    in order (the list fills as the test runs)."""
    import structreg.structure.graphs as graphs

    searches = []
    original = graphs._exact_indices

    def counting(X, queries, n_query, **kwargs):
        searches.append(n_query)
        return original(X, queries, n_query, **kwargs)

    monkeypatch.setattr(graphs, "_exact_indices", counting)
    return searches


@pytest.fixture(scope="session")
def dask_scheduler():
    """Address of a real dask ``LocalCluster`` on loopback (2 worker processes), shared by
    the tests; its workers can import the test helper modules (``engine_cells``)."""
    import os
    import sys
    from pathlib import Path

    distributed = pytest.importorskip("distributed")
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parent), *sys.path])
    try:
        with distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster:
            yield cluster.scheduler_address
    finally:
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved
