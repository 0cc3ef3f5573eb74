"""Every fit reads its model's penalty terms (``_penalty_terms``: the structure penalties
and their weights) once: the problem built from them keeps the model's
:class:`~structreg.models.problem.Setting`, which the loss reads, and no loss writes
attributes onto the model to hand data to another step.

Counted on subclasses of the presets whose ``_penalty_terms`` counts its calls.  The Dask
fit is counted in ``tests/test_distributed_fit.py``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import make_moons

from structreg import LapRLSC, LapSVM, StructuralClassifier
from structreg.models import LapRLSCCV, fit_path
from structreg.structure import LaplacianPenalty


def counting(base):
    """``base`` with a ``_penalty_terms`` that counts its calls (``calls``, per class)."""

    class Counting(base):
        calls = 0

        def _penalty_terms(self, n_samples, n_labeled):
            type(self).calls += 1
            return super()._penalty_terms(n_samples, n_labeled)

    Counting.__name__ = Counting.__qualname__ = f"Counting{base.__name__}"
    return Counting


@pytest.fixture(scope="module")
def moons():
    X, y = make_moons(60, noise=0.1, random_state=0)
    y_semi = np.full_like(y, -1)
    y_semi[[0, 1, 2, 3, 5, 7]] = y[[0, 1, 2, 3, 5, 7]]
    return X, y_semi


@pytest.mark.parametrize(
    "base, params",
    [
        (LapRLSC, {"gamma": 2.0}),  # square loss, exact factor
        (LapRLSC, {"gamma": 2.0, "solver": "nystroem", "n_components": 20, "random_state": 0}),
        (LapRLSC, {"gamma": 2.0, "solver": "cg"}),  # kernel CG
        (LapSVM, {"gamma": 2.0, "solver": "dense"}),  # hinge loss: libsvm, deformed kernel
        (LapSVM, {"gamma": 2.0, "solver": "primal"}),  # squared hinge in the primal
    ],
)
def test_a_fit_reads_its_penalty_terms_once(moons, base, params):
    X, y = moons
    model = counting(base)(**params)
    model.fit(X, y)
    assert type(model).calls == 1
    model.fit(X, y)  # a refit reads them once more
    assert type(model).calls == 2


def test_a_hinge_fit_takes_gamma_A_from_the_setting(moons):
    """The hinge loss's libsvm C is ``1 / (2 gamma_A l)`` of the model's ``_ridge()``: the
    ridge of the problem's Setting, the same number ``gamma_A`` gives."""
    X, y = moons
    model = StructuralClassifier(
        loss="hinge", gamma=2.0, gamma_A=0.05, penalties=[(1e-3, LaplacianPenalty())]
    ).fit(X, y)
    n_labeled = int((y != -1).sum())
    assert model.solver_info_["C"] == 1.0 / (2.0 * 0.05 * n_labeled)


def _private_writes(source: str) -> list[str]:
    """``name._attr = ...`` statements of ``source`` that write a private attribute onto an
    object other than ``self`` (plain, augmented and annotated assignments, and setattr)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "setattr"
        ):
            found.append(ast.unparse(node))
        for t in targets:
            for sub in ast.walk(t):
                if (
                    isinstance(sub, ast.Attribute)
                    and sub.attr.startswith("_")
                    and not (isinstance(sub.value, ast.Name) and sub.value.id == "self")
                ):
                    found.append(ast.unparse(sub))
    return found


def test_no_loss_writes_private_attributes_onto_the_model():
    """The losses hand data to prediction only through the fitted attributes they document
    (``svm_``, ``deformation_``, ``deformed_kernel_``, ...), never through a private one."""
    import structreg.models._losses as losses

    assert _private_writes(Path(losses.__file__).read_text()) == []


def test_the_private_write_finder_finds_them():
    planted = "model._deformed = Z\nm._x += 1\nsetattr(model, '_y', 1)\nself._ok = 1\n"
    assert _private_writes(planted) == ["model._deformed", "m._x", "setattr(model, '_y', 1)"]


def test_a_hinge_fit_on_explicit_features_keeps_its_basis_in_the_deformation(moons):
    """The labeled points' deformed features are the deformation's ``basis_``: the deformed
    Gram matrix of the training points is their inner products."""
    X, y = moons
    model = StructuralClassifier(
        loss="hinge", kernel="linear", penalties=[(1e-3, LaplacianPenalty())]
    ).fit(X, y)
    labeled = y != -1
    basis = model.deformation_.transform(model.feature_map_.transform(X[labeled]))
    np.testing.assert_allclose(model.deformation_.basis_, basis, atol=1e-12)
    np.testing.assert_allclose(model.deformed_gram(), basis @ basis.T, atol=1e-12)


def test_a_grid_reads_them_once_per_point_and_once_per_structure(moons):
    """:func:`fit_path`: each grid point's model reads its weights once, and each structure
    group's template once more to build the penalty matrices it shares."""
    X, y = moons
    Counting = counting(LapRLSC)
    grid = {"gamma_A": [1e-3, 1e-2], "gamma_I": [0.0, 1.0]}
    fits = fit_path(Counting(gamma=2.0), X, y, grid)
    assert len(fits) == 4 and Counting.calls == 4 + 1
    Counting.calls = 0
    fit_path(Counting(gamma=2.0), X, y, {**grid, "gamma": [1.0, 2.0]})  # two structures
    assert Counting.calls == 8 + 2
    Counting = counting(LapSVM)
    fit_path(Counting(gamma=2.0, solver="dense"), X, y, grid)
    assert Counting.calls == 4 + 1


def test_a_cross_validated_fit_reads_them_once_per_fit(moons):
    """LapRLSCCV: the folds' grids as :func:`fit_path`, then one read for the refit."""
    X, y = moons
    Counting = counting(LapRLSC)
    grid = {"gamma_A": [1e-3, 1e-2], "gamma_I": [0.0, 1.0]}
    cv = LapRLSCCV(estimator=Counting(gamma=2.0), param_grid=grid, cv=2).fit(X, y)
    assert cv.best_estimator_ is not None
    assert Counting.calls == 2 * (4 + 1) + 1
