"""structreg: structure-aware regularized classifiers with a scikit-learn API."""

from .models import (
    DRGV,
    DRLSC,
    GRBFN,
    LSSVM,
    RLSC,
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
    "GRBFN",
    "LSSVM",
    "DiscriminativeRLS",
    "RLSC",
    "UNLABELED",
    "LapRLSC",
    "LapSVM",
    "StructuralClassifier",
    "__version__",
]
