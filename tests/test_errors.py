"""Bad input gets a clear error naming the problem."""

import numpy as np
import pytest
from sklearn.datasets import make_moons

from structreg import RLSC, LapRLSC, LapSVM, StructuralClassifier
from structreg.structure import LaplacianPenalty, PrecomputedPenalty

ALL = [RLSC, LapRLSC, LapSVM, StructuralClassifier]


@pytest.fixture
def moons():
    return make_moons(40, noise=0.1, random_state=0)


@pytest.mark.parametrize("Est", ALL)
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_X(Est, bad, moons):
    X, y = moons
    X = X.copy()
    X[3, 1] = bad
    with pytest.raises(ValueError, match="Input X contains (NaN|infinity)"):
        Est().fit(X, y)


@pytest.mark.parametrize("Est", ALL)
def test_single_class(Est, moons):
    X, y = moons
    with pytest.raises(ValueError, match="at least 2 classes; got 40 labeled sample\\(s\\) and 1"):
        Est().fit(X, np.zeros_like(y))


@pytest.mark.parametrize("Est", [LapRLSC, LapSVM, StructuralClassifier])
def test_fewer_labeled_points_than_classes(Est, moons):
    X, y = moons
    y_semi = np.full_like(y, -1)
    y_semi[0] = 1
    with pytest.raises(ValueError, match="got 1 labeled sample\\(s\\) and 1 class"):
        Est().fit(X, y_semi)


@pytest.mark.parametrize("Est", [LapRLSC, LapSVM])
def test_graph_with_more_neighbours_than_points(Est, moons):
    X, y = moons
    with pytest.raises(
        ValueError, match="n_neighbors=40 must be smaller than the number of points"
    ):
        Est(n_neighbors=40).fit(X, y)


def test_class_wise_graph_needs_enough_points_per_class(moons):
    X, y = moons
    y_semi = y.copy()
    y_semi[4:] = -1
    with pytest.raises(ValueError, match="class-wise graph: class .* fewer than n_neighbors"):
        LapRLSC(graph="class-wise").fit(X, y_semi)


@pytest.mark.parametrize("Est", ALL)
def test_predict_with_wrong_number_of_features(Est, moons):
    X, y = moons
    clf = Est().fit(X, y)
    with pytest.raises(ValueError, match="X has 3 features, but .* is expecting 2 features"):
        clf.predict(np.zeros((2, 3)))


@pytest.mark.parametrize("Est", ALL)
def test_mismatched_lengths(Est, moons):
    X, y = moons
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        Est().fit(X, y[:-1])


@pytest.mark.parametrize(
    "params, match",
    [
        (dict(gamma_A=-1.0), "gamma_A"),
        (dict(gamma_I=-1.0), "gamma_I"),
        (dict(n_neighbors=0), "n_neighbors"),
        (dict(kernel="sigmoidal"), "kernel"),
        (dict(weights="cosine"), "weights"),
        (dict(graph="full"), "graph"),
    ],
)
def test_impossible_parameters(params, match, moons):
    X, y = moons
    with pytest.raises(ValueError, match=match):
        LapRLSC(**params).fit(X, y)


def test_continuous_targets_are_refused(moons):
    X, _ = moons
    with pytest.raises(ValueError, match="Unknown label type"):
        LapRLSC().fit(X, np.linspace(0, 1, 40))


def test_unlabeled_mask_must_match(moons):
    X, y = moons
    with pytest.raises(ValueError, match="unlabeled must be a boolean mask of shape"):
        LapRLSC().fit(X, y, unlabeled=np.zeros(5, bool))


def test_precomputed_penalty_shape(moons):
    X, y = moons
    clf = StructuralClassifier(penalties=[(1.0, PrecomputedPenalty(np.eye(5)))])
    with pytest.raises(ValueError, match="precomputed penalty has shape \\(5, 5\\)"):
        clf.fit(X, y)


def test_hinge_needs_positive_gamma_A(moons):
    X, y = moons
    with pytest.raises(ValueError, match="gamma_A > 0"):
        StructuralClassifier(loss="hinge", gamma_A=0.0).fit(X, y)


def test_penalties_must_be_pairs(moons):
    X, y = moons
    with pytest.raises(ValueError, match="\\(weight, penalty\\) pair"):
        StructuralClassifier(penalties=[LaplacianPenalty()]).fit(X, y)
