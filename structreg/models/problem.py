"""The fit problem: what every loss solves, for one setting of the weights or for a grid.

A structural model's objective is

    sum_i c_i loss(y_i, f(x_i)) + ridge ||f||^2 + sum_k w_k f^T M_k f,

and everything in it but the numbers ``ridge`` and ``w_k`` is fixed by the data and the
model's *structure* parameters (kernel, graph, clusters): the design ``Z`` (or the kernel),
the targets, the loss weights ``c_i`` and the **unweighted** penalty matrices ``M_k``.  A
:class:`Problem` holds exactly that, built once by the model
(:meth:`~structreg.models._base.StructuralEstimator._problem`).  A loss
(:mod:`structreg.models._losses`) then fits any number of models that share the problem and
differ only in their weights (``Loss.fit_grid``): ``fit`` is a grid of one model,
:func:`~structreg.models.fit_path` and the CV estimators pass a group of grid points.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..solvers import SquareLossPath
from ..solvers.solution import leave_one_out_outputs
from ..structure.penalties import checked_terms, combine, weighted_psd


@dataclass(frozen=True)
class Setting:
    """The numbers of one grid point: the ridge and the penalty weights (one per penalty of
    the problem, in its order)."""

    ridge: float
    weights: tuple[float, ...]

    @property
    def penalised(self) -> bool:
        """Whether any penalty has a nonzero weight."""
        return any(w != 0 for w in self.weights)


@dataclass
class Problem:
    """Design, targets, loss weights and unweighted penalties of one structure.

    Attributes
    ----------
    X : ndarray or sparse matrix of shape (n, d)
        The validated inputs (the kernel expansion and the bordered systems read them).
    Z : ndarray of shape (n, p) or None
        The design (the feature map's output); None when the kernel is not factored (the
        iterative exact-kernel path, a kernel expansion).
    y_codes : ndarray of shape (n,)
        Class codes (-1 where unlabeled; all -1 for a regressor).
    labeled : ndarray of bool, shape (n,)
    loss_weights : ndarray of shape (n,)
        ``c_i`` (0 where unlabeled).
    Y : ndarray of shape (n, n_outputs)
        Targets of the square losses (zero rows where unlabeled).
    penalties : list
        The built, unweighted ``M_k`` (sparse, dense or LinearOperator).
    psd : list of bool
        Whether each ``M_k`` is positive semi-definite by construction.
    terms : list of Penalty
        Every penalty object of the structure (their classes say what a weight multiplies).
    built : list of int
        The terms whose matrices are in ``penalties`` (all of them for a grid; a single fit
        builds only those with a nonzero weight).
    fit_intercept : bool
    loo_rows : ndarray of int or None
        A single fit's request for the exact leave-one-out outputs of these labeled samples:
        the loss sets ``loo`` (or says in ``loo_missing`` why its solver has none).
    design_cache : dict
        What depends on the design alone, shared by the problems on one ``Z`` (kept by
        :func:`~structreg.models.fit_path` across structure groups).
    unexplained : float or None
        The share of the kernel's trace the Nystroem centres miss (None: exact kernel).
    strict_kinds : bool
        Whether a model fitted on this problem must have the same penalty parameters, not
        only the same penalty classes (the builder had a weight given as a string).
    builder : estimator or None
        The model that built the problem (``fit``'s own model; a grid group's template).
    builder_setting : Setting or None
        The builder's ridge and weights, read from the same ``_penalty_terms`` call whose
        penalties the problem built: :meth:`setting` returns it for the builder, so that a
        fit reads its penalty terms once.
    """

    X: Any
    Z: np.ndarray | None
    y_codes: np.ndarray
    labeled: np.ndarray
    loss_weights: np.ndarray
    Y: np.ndarray
    penalties: list = field(default_factory=list)
    psd: list = field(default_factory=list)
    terms: list = field(default_factory=list)
    built: list = field(default_factory=list)
    fit_intercept: bool = False
    loo_rows: np.ndarray | None = None
    design_cache: dict = field(default_factory=dict)
    unexplained: float | None = None
    strict_kinds: bool = False
    builder: Any = field(default=None, repr=False)
    builder_setting: Setting | None = None
    loo: np.ndarray | None = None
    loo_missing: str = ""
    _path: SquareLossPath | None = field(default=None, repr=False)

    @property
    def n_samples(self) -> int:
        return len(self.labeled)

    def setting(self, model) -> Setting:
        """``model``'s ridge and penalty weights for this problem.

        The model must have the problem's structure: the same penalty classes in the same
        order (and, when a weight parameter is a string such as ``"auto"``, which can change
        a penalty itself, the same penalty parameters); a term the problem did not build
        (a single fit builds only the terms with a nonzero weight) must weigh 0.  The model
        that built the problem gets the setting read when it was built
        (``builder_setting``), without calling its ``_penalty_terms`` again.
        """
        if model is self.builder and self.builder_setting is not None:
            return self.builder_setting
        terms = checked_terms(model._penalty_terms(self.n_samples, int(self.labeled.sum())))
        same = [type(p) for _, p in terms] == [type(p) for p in self.terms]
        if same and (self.strict_kinds or string_weights(model)):
            same = [penalty_kind(p) for _, p in terms] == [penalty_kind(p) for p in self.terms]
        built = set(self.built)
        if not same or any(w != 0 for k, (w, _) in enumerate(terms) if k not in built):
            raise ValueError(
                f"{type(model).__name__}._path_params changes the penalties themselves, "
                "not only their weights"
            )
        return setting_of(model, terms, self.built)

    def combined(self, setting: Setting):
        """``sum_k w_k M_k`` (None when no weight is nonzero)."""
        pairs = list(zip(setting.weights, self.penalties, strict=True))
        return combine(pairs, self.n_samples)

    def is_psd(self, setting: Setting) -> bool:
        """Whether the setting's combined penalty is PSD by construction."""
        return weighted_psd(setting.weights, self.psd)

    def square_path(self) -> SquareLossPath:
        """The normal equations of the square loss on ``Z``, assembled on the first call
        (:class:`~structreg.solvers.SquareLossPath`); every setting is solved from it."""
        if self._path is None:
            self._path = SquareLossPath(
                self.Z,
                self.Y,
                self.loss_weights,
                self.penalties,
                fit_intercept=self.fit_intercept,
                design_cache=self.design_cache,
                psd=self.psd,
            )
        return self._path

    def set_loo(self, fitted: np.ndarray | None, leverages: np.ndarray | None, why: str) -> None:
        """``loo`` from the outputs at the training samples and the leverages of
        ``loo_rows`` (:func:`~structreg.solvers.solution.leave_one_out_outputs`), or
        ``loo_missing = why`` when the solver gave no leverages."""
        if self.loo_rows is None:
            return
        if leverages is None or fitted is None:
            self.loo_missing = why
            return
        rows = self.loo_rows
        F = np.asarray(fitted, dtype=float).reshape(len(self.labeled), -1)[rows]
        self.loo = leave_one_out_outputs(F, self.Y[rows], leverages)


def setting_of(model, terms: list, built: list) -> Setting:
    """The :class:`Setting` of ``model`` whose penalty ``terms`` (its ``_penalty_terms``,
    checked) were given, for the ``built`` ones of them: ``model._ridge()`` (``gamma_A``
    for most models) and the terms' weights (``gamma_I / n^2`` for LapRLSC)."""
    return Setting(float(model._ridge()), tuple(terms[k][0] for k in built))


def penalty_kind(penalty) -> tuple:
    """What must agree between a problem's penalty and a model's: the penalty's class and its
    plain-valued parameters (arrays, e.g. cluster ids, are the structure's own)."""
    params = penalty.get_params(deep=False) if hasattr(penalty, "get_params") else {}
    plain = (bool, int, float, str, type(None))
    return (type(penalty), tuple(sorted((k, v) for k, v in params.items() if isinstance(v, plain))))


def string_weights(model) -> bool:
    """Whether a weight parameter of ``model`` is a string (e.g. ``"auto"``, which may change
    the penalty matrix itself, not only its weight)."""
    return any(isinstance(getattr(model, k, None), str) for k in model._path_params)
