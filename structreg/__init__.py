"""structreg: structure-aware regularized classifiers with a scikit-learn API."""

from .models import RLSC, UNLABELED, LapRLSC, LapSVM, StructuralClassifier

__version__ = "0.1.0.dev0"

__all__ = ["UNLABELED", "LapRLSC", "LapSVM", "RLSC", "StructuralClassifier", "__version__"]
