"""The loss objects the structural classifier composes (structreg.models._losses)."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_blobs, make_moons
from sklearn.multiclass import OneVsOneClassifier
from sklearn.svm import SVC

from structreg import DRGV, DRLSC, LSSVM, RLSC, SRSVM, LapRLSC, LapSVM, StructuralClassifier
from structreg.models import fit_path
from structreg.models._losses import (
    BorderedSquareLoss,
    HingeLoss,
    SquaredHingeLoss,
    SquareLoss,
    TrainingGram,
    loss_for,
)
from structreg.structure import ClassScatterPenalty, ClusterScatterPenalty, LaplacianPenalty

PRESETS = [LSSVM, SRSVM, DRLSC, DRGV, RLSC, LapRLSC, LapSVM]


@pytest.mark.parametrize("cls", PRESETS, ids=lambda c: c.__name__)
def test_presets_do_not_override_fit_or_decision(cls):
    for klass in cls.__mro__[: cls.__mro__.index(StructuralClassifier)]:
        for name in ("fit", "_fit", "decision_function", "deformed_gram", "_solve_square"):
            assert name not in vars(klass), f"{klass.__name__} defines {name}"


def test_declared_acceptance():
    assert not SquareLoss.psd_only and SquareLoss.bias == "optional"
    assert HingeLoss.psd_only and SquaredHingeLoss.psd_only and HingeLoss.bias == "always"
    assert BorderedSquareLoss.bias == "always" and "cg" not in BorderedSquareLoss.solvers
    assert "cg" in SquareLoss.solvers and "cg" not in HingeLoss.solvers
    assert SquaredHingeLoss.multi_class == ("ovr",)
    assert HingeLoss().for_solver("primal").name == "squared_hinge"
    assert HingeLoss().for_solver("dense").name == "hinge"
    assert not HingeLoss.linear and SquaredHingeLoss.linear and SquareLoss.linear


@pytest.mark.parametrize(
    "estimator, loss",
    [
        (RLSC(), SquareLoss),
        (DRLSC(n_neighbors=3), SquareLoss),
        (DRLSC(n_neighbors=3, formulation="bordered"), BorderedSquareLoss),
        (LSSVM(), BorderedSquareLoss),
        (SRSVM(), HingeLoss),
        (SRSVM(kernel="rbf"), HingeLoss),
        (LapSVM(solver="dense"), HingeLoss),
        (LapSVM(), SquaredHingeLoss),
        (LapSVM(solver="primal"), SquaredHingeLoss),
        (StructuralClassifier(loss="hinge", solver="nystroem", n_components=10), SquaredHingeLoss),
    ],
)
def test_the_base_composes_the_declared_loss(estimator, loss):
    X, y = make_blobs(40, centers=2, random_state=0)
    assert type(estimator.fit(X, y).loss_) is loss


def test_hinge_refuses_an_indefinite_penalty_by_name():
    X, y = make_blobs(40, centers=2, random_state=0)
    between = [(1e-2, ClassScatterPenalty(kind="between")), (-1e-2, LaplacianPenalty())]
    for solver in ("dense", "primal"):
        clf = StructuralClassifier(loss="hinge", penalties=between, solver=solver)
        with pytest.raises(ValueError, match="hinge loss needs positive semi-definite.*square"):
            clf.fit(X, y)
    StructuralClassifier(loss="square", penalties=between).fit(X, y)  # the square loss takes it


def test_losses_refuse_solvers_they_do_not_support():
    X, y = make_blobs(40, centers=2, random_state=0)
    with pytest.raises(ValueError, match=r"loss='hinge' accepts solver in .*got 'cg'"):
        StructuralClassifier(loss="hinge", solver="cg").fit(X, y)
    with pytest.raises(ValueError, match=r"loss='square' accepts solver in .*got 'primal'"):
        StructuralClassifier(loss="square", solver="primal").fit(X, y)
    with pytest.raises(ValueError, match="bordered system is solved directly"):
        DRLSC(n_neighbors=3, formulation="bordered", solver="cg").fit(X, y)
    with pytest.raises(ValueError, match="unknown loss 'cubic'"):
        loss_for(type("Cubic", (), {"_loss": lambda self: "cubic"})(), "dense")


def test_squared_hinge_refuses_one_vs_one():
    X, y = make_blobs(60, centers=3, random_state=0)
    with pytest.raises(ValueError, match="one-vs-rest"):
        LapSVM(solver="primal", multi_class="ovo", gamma_I=0.0).fit(X, y)
    LapSVM(solver="dense", multi_class="ovo", gamma_I=0.0).fit(X, y)  # libsvm's hinge does


def test_bordered_square_fits_labeled_samples_only():
    X, y = make_blobs(40, centers=2, random_state=0)
    mask = np.zeros(40, dtype=bool)
    mask[:5] = True
    with pytest.raises(ValueError, match="labeled samples only"):
        LSSVM().fit(X, y, unlabeled=mask)


def test_lssvm_is_rlsc_with_bias_and_its_ovo_is_pairwise():
    X, y = make_blobs(60, centers=3, cluster_std=2.0, random_state=1)
    a = LSSVM(gamma=0.5, C=4.0).fit(X, y)
    b = RLSC(gamma=0.5, gamma_A=1 / (60 * 4.0), fit_intercept=True).fit(X, y)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-8)
    assert a.X_fit_ is not None and a.dual_coef_.shape == (60, 3)
    ovo = LSSVM(gamma=0.5, C=4.0, multi_class="ovo").fit(X, y)
    ref = OneVsOneClassifier(LSSVM(gamma=0.5, C=4.0)).fit(X, y)
    np.testing.assert_array_equal(ovo.decision_function(X), ref.decision_function(X))


def test_fit_path_solves_lssvm_c_grid_from_one_factorisation():
    """LS-SVM's C only scales the loss: the bordered loss solves the grid from one
    eigendecomposition of K, equal to the point-by-point fits (Cholesky and the Schur
    complement); with class weights (a reg per sample) it solves point by point."""
    X, y = make_moons(40, noise=0.1, random_state=0)
    grid = [0.1, 10.0, 1e4]
    fits = fit_path(LSSVM(gamma=1.0), X, y, {"C": grid})
    for f, C in zip(fits, grid, strict=True):
        ref = LSSVM(gamma=1.0, C=C).fit(X, y)
        assert f.solver_info_["factorization"] == "eigh-path+schur"
        np.testing.assert_allclose(f.decision_function(X), ref.decision_function(X), atol=1e-9)
    weighted = LSSVM(gamma=1.0, class_weight={0: 2.0})
    fits = fit_path(weighted, X, y, {"C": grid})
    for f, C in zip(fits, grid, strict=True):
        ref = clone(weighted).set_params(C=C).fit(X, y)
        assert f.solver_info_["factorization"] == ref.solver_info_["factorization"]
        np.testing.assert_array_equal(f.decision_function(X), ref.decision_function(X))


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_srsvm_lam_zero_is_svc(kernel):
    X, y = make_moons(50, noise=0.2, random_state=2)
    a = SRSVM(kernel=kernel, gamma=0.5, C=2.0, lam=0.0, tol=1e-10).fit(X, y)
    b = SVC(kernel=kernel, gamma=0.5, C=2.0, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-6)
    np.testing.assert_array_equal(a.support_, np.sort(b.support_))


def test_hinge_gram_form_equals_its_feature_form():
    """SRSVM's Woodbury deformed kernel on the unfactored Gram matrix (TrainingGram and the
    cluster-scatter root) is the hinge loss on explicit deformed features of the same
    problem: StructuralClassifier with the same clusters, ridge and penalty weight."""
    X, y = make_blobs(60, centers=[[0, 0], [3, 2]], cluster_std=1.5, random_state=3)
    C, lam, n = 2.0, 1.5, 60
    sr = SRSVM(kernel="rbf", gamma=0.3, C=C, lam=lam, tol=1e-10).fit(X, y)
    assert isinstance(sr.feature_map_, TrainingGram) and sr.deformed_kernel_ is not None
    sc = StructuralClassifier(
        loss="hinge",
        kernel="rbf",
        gamma=0.3,
        gamma_A=1 / (2 * C * n),
        penalties=[(lam / (2 * C * n), ClusterScatterPenalty(sr.cluster_ids_))],
        tol=1e-10,
    ).fit(X, y)
    assert sc.deformed_kernel_ is None and sc.solver_info_["deformation"] == "features"
    Xt = np.random.default_rng(0).normal(size=(15, 2)) * 3
    np.testing.assert_allclose(sr.deformed_gram(), sc.deformed_gram(), atol=1e-8)
    np.testing.assert_allclose(sr.deformed_gram(Xt), sc.deformed_gram(Xt), atol=1e-8)
    np.testing.assert_allclose(sr.decision_function(Xt), sc.decision_function(Xt), atol=1e-6)


def test_hinge_on_an_unfactored_kernel_needs_a_penalty_root():
    class NoRoot(StructuralClassifier):
        def _make_feature_map(self, X, memo=None):
            return TrainingGram(kernel=self.kernel, gamma=self.gamma)

    X, y = make_blobs(30, centers=2, random_state=0)
    clf = NoRoot(loss="hinge", penalties=[(1e-3, LaplacianPenalty(n_neighbors=4))])
    with pytest.raises(ValueError, match="needs a penalty given as a root"):
        clf.fit(X, y)
    NoRoot(loss="hinge").fit(X, y)  # no penalty: the plain kernel


def _badly_scaled_gram():
    """A linear Gram matrix whose first feature direction is 1e5 times longer than the
    others, with labels it does not separate: its single-precision copy (libsvm's kernel
    cache) is indefinite and libsvm's SMO, left uncapped, needs ~2e8 iterations here."""
    Z = np.random.default_rng(0).normal(size=(6, 4)) * [1e5, 1.0, 1.0, 1.0]
    return Z @ Z.T, np.array([0, 1, 1, 1, 0, 1])


def test_libsvm_refuses_a_fit_it_cannot_finish():
    from structreg.solvers.hinge import PrecomputedSVM

    G, y = _badly_scaled_gram()
    with pytest.raises(ValueError, match=r"did not converge in 10000000 iterations.*standardize"):
        PrecomputedSVM(C=1.0).fit(G, y, n_classes=2)
    # the cap is what stops it: a larger one lets libsvm finish with the SVM's solution
    exact = PrecomputedSVM(C=1.0, max_iter=400_000_000).fit(G, y, n_classes=2)
    reference = SVC(kernel="precomputed", C=1.0).fit(G, y)
    np.testing.assert_allclose(exact.decision_function(G), reference.decision_function(G))
    # the same matrix at a condition libsvm handles converges under the default cap
    Z = np.random.default_rng(0).normal(size=(6, 4)) * [1e2, 1.0, 1.0, 1.0]
    PrecomputedSVM(C=1.0).fit(Z @ Z.T, y, n_classes=2)


def test_srsvm_refuses_features_libsvm_cannot_solve():
    """The fuzz found SRSVM running without end in libsvm on points whose deformed features
    had one direction ~1e7 times longer than the others; with ``lam=0`` the features are
    the inputs, so the same happens on the badly scaled points of the Gram test above."""
    Z = np.random.default_rng(0).normal(size=(6, 4)) * [1e5, 1.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="did not converge.*standardize"):
        SRSVM(lam=0.0).fit(Z, [0, 1, 1, 1, 0, 1])


def test_cluster_scatter_root_squares_to_the_penalty_and_restricts_to_rows():
    """``S S = Psi`` for the symmetric root, and the root over a set of rows is the root of
    ``Psi`` restricted to them when every clustered point is among them; a clustered point
    outside them is refused (its part of the penalty would be lost)."""
    ids = np.array([0, 0, 1, -1, 1, 1, 2, -1, 0])
    n = len(ids)
    penalty = ClusterScatterPenalty(ids)
    Psi = penalty.build(np.zeros((n, 1)), None, ids >= 0)
    Psi = Psi @ np.eye(n)
    S = penalty.root(n) @ np.eye(n)
    np.testing.assert_allclose(S, S.T, atol=1e-14)
    np.testing.assert_allclose(S @ S, Psi, atol=1e-14)
    rows = ids >= 0
    rows[3] = True  # an unclustered point may be kept
    S_rows = penalty.root(n, rows=rows) @ np.eye(rows.sum())
    np.testing.assert_allclose(S_rows @ S_rows, Psi[np.ix_(rows, rows)], atol=1e-14)
    with pytest.raises(ValueError, match="clustered points lie outside"):
        penalty.root(n, rows=np.arange(n) < 5)


def test_srsvm_kernel_path_with_unlabeled_samples_equals_the_fit_without_them():
    """``fit(..., unlabeled=mask)`` of the supervised SRSVM ignores the marked samples: on
    the kernel path (the root of the labeled points' cluster scatter) its fit equals the fit
    on the labeled samples alone."""
    X, y = make_blobs(60, centers=[[0, 0], [3, 2]], cluster_std=1.5, random_state=3)
    mask = np.zeros(60, dtype=bool)
    mask[::4] = True
    a = SRSVM(kernel="rbf", gamma=0.3, lam=2.0, tol=1e-10).fit(X, y, unlabeled=mask)
    b = SRSVM(kernel="rbf", gamma=0.3, lam=2.0, tol=1e-10).fit(X[~mask], y[~mask])
    assert isinstance(a.feature_map_, TrainingGram) and a.deformed_kernel_.root is not None
    np.testing.assert_array_equal(a.cluster_ids_[mask], -1)
    Xt = np.random.default_rng(1).normal(size=(10, 2)) * 3
    np.testing.assert_allclose(a.decision_function(Xt), b.decision_function(Xt), atol=1e-6)
