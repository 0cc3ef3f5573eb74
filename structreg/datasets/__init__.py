"""Benchmark data sets and toy problems.

Real data sets are gzip-compressed CSV files that ship with the package, described by the
packaged manifest (see ``structreg.datasets._home`` for a user's data home, own manifest
entries, checksums and downloads):

- :func:`load_dataset` loads one data set as a :class:`~sklearn.utils.Bunch` or ``(X, y)``;
- :func:`list_datasets` and :func:`dataset_info` describe what is available;
- :func:`packaged_data_dir` is the folder of the shipped files, :func:`get_data_home` the
  user's folder that overrides and adds to them.

Toy problems from the papers:

- :func:`make_drlsc_moons`: the DRLSC paper's three two-moons sets;
- :func:`make_xor_gaussians`: the SRSVM paper's XOR mixture of four Gaussians;
- :func:`make_spiral_regression`: a target along a noisy spiral (the regressors' manifold toy).
"""

from ._base import load_dataset
from ._home import (
    DATA_ENV_VAR,
    URL_ENV_VAR,
    dataset_info,
    get_data_home,
    list_datasets,
    packaged_data_dir,
)
from ._toys import (
    DRLSC_MOONS_LEVELS,
    XOR_GAUSSIANS_TABLE_I,
    make_drlsc_moons,
    make_spiral_regression,
    make_xor_gaussians,
)

__all__ = [
    "DATA_ENV_VAR",
    "DRLSC_MOONS_LEVELS",
    "URL_ENV_VAR",
    "XOR_GAUSSIANS_TABLE_I",
    "dataset_info",
    "get_data_home",
    "list_datasets",
    "load_dataset",
    "make_drlsc_moons",
    "make_spiral_regression",
    "make_xor_gaussians",
    "packaged_data_dir",
]
