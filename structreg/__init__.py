"""structreg: structure-aware regularized classifiers with a scikit-learn API."""

from .models import (
    DRGV,
    DRLSC,
    EKM,
    GRBFN,
    LSSVM,
    MPM,
    RLSC,
    SLMM,
    SRSVM,
    UNLABELED,
    DiscriminativeRLS,
    LapRLSC,
    LapSVM,
    StructuralClassifier,
)

__version__ = "0.1.0.dev0"

__all__ = [
    "DRGV",
    "DRLSC",
    "EKM",
    "MPM",
    "GRBFN",
    "LSSVM",
    "DiscriminativeRLS",
    "RLSC",
    "SLMM",
    "SRSVM",
    "UNLABELED",
    "LapRLSC",
    "LapSVM",
    "StructuralClassifier",
    "__version__",
]
