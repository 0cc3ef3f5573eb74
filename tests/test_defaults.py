"""Defaults are part of the API (issue 19, point 1): every estimator constructed with its
defaults gives a sensible fit, and the semi-supervised ones use the unlabeled points."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_digits, load_iris, load_wine, make_classification, make_moons
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.preprocessing import StandardScaler

import structreg
import structreg.structure

DATA = {
    "iris": load_iris(return_X_y=True),
    "wine": load_wine(return_X_y=True),
    "make_classification": make_classification(
        200, n_features=8, n_informative=4, n_classes=3, random_state=0
    ),
}
MARGIN = 0.08
"""Largest shortfall of a default estimator's 3-fold accuracy below RLSC's with the same kind
of kernel (RLSC() for kernel models, RLSC(kernel="linear", fit_intercept=True) for linear
ones), on every data set of :data:`DATA`."""

# SRC classifies by class-wise l1 reconstruction residuals, which separate classes only when
# the samples live in many more dimensions than a class spans (faces, digits); on 4-13
# standardised features every class reconstructs every point (iris: 70 % against RLSC's 95 %).
# It is held to the margin on such a problem instead (test_src_defaults_on_high_dimensional_data).
# PoissonLearning is built for a few labels per class (its sources are the labels minus their
# mean): with every training point labeled, as here, its scores are a potential of all the
# sources rather than a smoothed label, and it is 5-13 points below RLSC (GFHF, the method for
# higher label rates, is within the margin); its defaults are checked at low label rates in
# test_poisson.py.
EXCLUDED = {"SRC", "PoissonLearning"}
NAMES = [
    "RLSC",
    "LSSVM",
    "DRLSC",
    "DRGV",
    "DiscriminativeRLS",
    "SRSVM",
    "EKM",
    "GRBFN",
    "MPM",
    "SLMM",
    "LapRLSC",
    "LapSVM",
    "DALapRLSC",
    "SparseRLSC",
    "GFHF",
    "SSDRWu",
    "SSDRWang",
    "StructuralClassifier",
]


def _accuracy(estimator, X, y) -> float:
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(cross_val_score(estimator, X, y, cv=cv).mean())


@pytest.mark.parametrize("name", NAMES)
def test_defaults_are_within_a_margin_of_rlsc(name):
    for X, y in DATA.values():
        X = StandardScaler().fit_transform(X)
        estimator = getattr(structreg, name)()
        if "random_state" in estimator.get_params():
            estimator.set_params(random_state=0)
        linear = getattr(estimator, "kernel", "rbf") == "linear"
        reference = (
            structreg.RLSC(kernel="linear", fit_intercept=True) if linear else structreg.RLSC()
        )
        assert _accuracy(estimator, X, y) >= _accuracy(reference, X, y) - MARGIN


def test_src_defaults_on_high_dimensional_data():
    """SRC's own domain: 8x8 digits (64 features, 10 classes), 350 samples."""
    X, y = load_digits(return_X_y=True)
    X, y = StandardScaler().fit_transform(X[:350]), y[:350]
    assert _accuracy(structreg.SRC(), X, y) >= _accuracy(structreg.RLSC(), X, y) - MARGIN


def test_every_public_classifier_is_covered():
    from sklearn.base import is_classifier

    public = {
        n
        for n in structreg.__all__
        if isinstance(getattr(structreg, n), type)
        and is_classifier(getattr(structreg, n)())
        and not n.endswith("CV")
    }
    assert public == set(NAMES) | EXCLUDED


def _two_moons(seed: int):
    """Issue 19's problem: 400 points, noise 0.08, 2 labels per class."""
    X, y = make_moons(400, noise=0.08, random_state=seed)
    rng = np.random.default_rng(seed)
    y_semi = np.full_like(y, -1)
    for c in (0, 1):
        idx = rng.choice(np.flatnonzero(y == c), 2, replace=False)
        y_semi[idx] = c
    return X, y, y_semi


def _transductive_accuracy(model, draws=range(5)) -> float:
    accuracies = []
    for seed in draws:
        X, y, y_semi = _two_moons(seed)
        unlabeled = y_semi == -1
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted = model.fit(X, y_semi)
        accuracies.append(np.mean(fitted.transduction_[unlabeled] == y[unlabeled]))
    return float(np.mean(accuracies))


@pytest.mark.parametrize("name", ["LapRLSC", "LapSVM"])
def test_semi_supervised_defaults_use_the_unlabeled_points(name):
    """Before issue 19 LapRLSC's defaults scored 80 % here (RLSC on the 4 labels: 76 %)."""
    assert _transductive_accuracy(getattr(structreg, name)()) >= 0.95
    supervised = []
    for seed in range(5):
        X, y, y_semi = _two_moons(seed)
        labeled = y_semi != -1
        rlsc = structreg.RLSC().fit(X[labeled], y[labeled])
        supervised.append(np.mean(rlsc.predict(X[~labeled]) == y[~labeled]))
    assert np.mean(supervised) < 0.9  # the labels alone do not solve it


def test_dalaprlsc_defaults_on_two_moons():
    """The default fuzzy c-means cuts across the moons; reliability="auto" stops trusting
    the cut where it runs through the graph's dense parts (the paper's 1.0 trusts it)."""
    assert _transductive_accuracy(structreg.DALapRLSC(random_state=0)) >= 0.95
    assert _transductive_accuracy(structreg.DALapRLSC(reliability=1.0, random_state=0)) < 0.9


# ---------------------------------------------------------------- weights are per sample
@pytest.mark.parametrize(
    "make",
    [
        lambda: structreg.RLSC(),
        lambda: structreg.DiscriminativeRLS(),
        lambda: structreg.DiscriminativeRLS(margin="global", gamma_D=0.3),
        lambda: structreg.SSDRWang(),
        lambda: structreg.SSDRWang(kernel="rbf", lam=0.1, gamma_A=1.0),
    ],
)
def test_weights_mean_the_same_objective_when_every_sample_is_doubled(make):
    """Issue 19, point 0: with per-sample weights, fitting each sample twice is the same
    problem (a sum-form weight would double the loss against the penalties)."""
    X, y = make_moons(80, noise=0.2, random_state=0)
    y_semi = y.copy()
    if isinstance(make(), structreg.SSDRWang):
        y_semi[8:] = -1
    Xt = np.random.default_rng(1).normal(size=(20, 2))
    once = make().fit(X, y_semi).decision_function(Xt)
    twice = make().fit(np.r_[X, X], np.r_[y_semi, y_semi]).decision_function(Xt)
    np.testing.assert_allclose(twice, once, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("gamma_I", ["auto", 1.0])
def test_graph_weight_means_the_same_objective_on_the_doubled_graph(gamma_I):
    """``gamma_I / n^2 f^T L f`` (or the volume-scaled "auto"): the doubled data with the
    doubled graph ``[[W, W], [W, W]]`` is the same problem."""
    X, y = make_moons(80, noise=0.1, random_state=0)
    y_semi = np.full_like(y, -1)
    y_semi[:6] = y[:6]
    W = structreg.structure.knn_graph(X, 6, weights="heat")
    W2 = sp.bmat([[W, W], [W, W]]).tocsr()
    Xt = np.random.default_rng(1).normal(size=(20, 2))
    once = structreg.LapRLSC(graph=W, gamma_I=gamma_I).fit(X, y_semi).decision_function(Xt)
    twice = structreg.LapRLSC(graph=W2, gamma_I=gamma_I).fit(np.r_[X, X], np.r_[y_semi, y_semi])
    np.testing.assert_allclose(twice.decision_function(Xt), once, rtol=1e-8, atol=1e-10)
