"""Model layer: the estimators users import."""

from ._base import UNLABELED, StructuralClassifier, is_unlabeled
from .manifold import LapRLSC, LapSVM
from .rlsc import RLSC

__all__ = ["UNLABELED", "LapRLSC", "LapSVM", "RLSC", "StructuralClassifier", "is_unlabeled"]
