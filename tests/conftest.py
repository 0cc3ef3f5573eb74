import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(0)


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
