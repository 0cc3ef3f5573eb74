"""Model layer: the estimators users import."""

from ._base import UNLABELED, StructuralClassifier, is_unlabeled
from .discriminative import DRGV, DRLSC, DiscriminativeRLS
from .ellipsoid import EKM
from .grbfn import GRBFN
from .lssvm import LSSVM
from .manifold import LapRLSC, LapSVM
from .minimax import MPM
from .rlsc import RLSC
from .slmm import SLMM
from .srsvm import SRSVM

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
    "is_unlabeled",
]
