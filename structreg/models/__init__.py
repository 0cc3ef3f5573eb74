"""Model layer: the estimators users import."""

from ._base import UNLABELED, StructuralClassifier, is_unlabeled, pm_one_targets
from .cv import DRLSCCV, DiscriminativeRLSCV, LapRLSCCV, StructuralClassifierCV
from .damr import DALapRLSC
from .discriminative import DRGV, DRLSC, DiscriminativeRLS
from .ellipsoid import EKM
from .grbfn import GRBFN
from .harmonic import GFHF
from .lssvm import LSSVM
from .manifold import LapRLSC, LapSVM
from .minimax import MPM
from .path import decision_path, decision_values, drop_label_work, fit_path
from .poisson import PoissonLearning
from .regression import LapRLSRegressor, StructuralRegressor
from .rlsc import RLSC
from .slmm import SLMM
from .sparse_representation import SRC
from .sparse_rlsc import SparseRLSC
from .srsvm import SRSVM
from .ssdr import SSDRWang, SSDRWu

__all__ = [
    "DALapRLSC",
    "SSDRWang",
    "SSDRWu",
    "DRGV",
    "DRLSC",
    "EKM",
    "MPM",
    "GRBFN",
    "LSSVM",
    "DiscriminativeRLS",
    "RLSC",
    "GFHF",
    "PoissonLearning",
    "SLMM",
    "SRC",
    "SRSVM",
    "SparseRLSC",
    "UNLABELED",
    "LapRLSC",
    "LapSVM",
    "StructuralClassifier",
    "LapRLSRegressor",
    "StructuralRegressor",
    "is_unlabeled",
    "pm_one_targets",
    "fit_path",
    "drop_label_work",
    "decision_path",
    "decision_values",
    "StructuralClassifierCV",
    "LapRLSCCV",
    "DiscriminativeRLSCV",
    "DRLSCCV",
]
