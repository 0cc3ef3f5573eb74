"""SemiSupervisedKFold, the labeled-only scorers and the semi-supervised grid search."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_moons
from sklearn.dummy import DummyClassifier
from sklearn.metrics import accuracy_score, f1_score
from sklearn.model_selection import GridSearchCV, KFold, cross_validate

from structreg import LapRLSC, LapSVM
from structreg.exceptions import UnlabeledScoringWarning
from structreg.model_selection import (
    SemiSupervisedKFold,
    labeled_accuracy_scorer,
    make_labeled_scorer,
    semi_supervised_grid_search,
)


def _semi_labels(rng, counts=(9, 6, 3), n_unlabeled=10):
    """Shuffled labels with ``counts[c]`` labeled samples of class c and -1 for the rest."""
    y = np.concatenate([np.full(k, c) for c, k in enumerate(counts)] + [np.full(n_unlabeled, -1)])
    return rng.permutation(y)


@pytest.fixture(scope="module")
def moons():
    """Two moons, 6 labeled points per class (chosen so that the graph helps), rest -1."""
    X, y = make_moons(200, noise=0.05, random_state=0)
    pick = np.random.default_rng(4)
    labeled = np.concatenate(
        [pick.choice(np.flatnonzero(y == c), 6, replace=False) for c in (0, 1)]
    )
    y_semi = np.full_like(y, -1)
    y_semi[labeled] = y[labeled]
    return X, y, y_semi


# -- the splitter ---------------------------------------------------------------------------
@pytest.mark.parametrize("stratify", [True, False])
@pytest.mark.parametrize("shuffle", [True, False])
def test_folds_train_on_all_unlabeled_and_test_on_labeled(rng, stratify, shuffle):
    y = _semi_labels(rng)
    X = np.zeros((y.size, 2))
    unlabeled = np.flatnonzero(y == -1)
    labeled = np.flatnonzero(y != -1)
    cv = SemiSupervisedKFold(
        3, stratify=stratify, shuffle=shuffle, random_state=0 if shuffle else None
    )
    splits = list(cv.split(X, y))
    assert len(splits) == cv.get_n_splits() == 3
    tests = []
    for train, test in splits:
        assert np.isin(unlabeled, train).all()
        assert np.all(y[test] != -1)
        assert np.intersect1d(train, test).size == 0
        # train + test cover everything: labeled training folds, all unlabeled, the test fold
        np.testing.assert_array_equal(np.sort(np.concatenate([train, test])), np.arange(y.size))
        assert np.all(np.diff(train) > 0) and np.all(np.diff(test) > 0)
        tests.append(test)
    all_tests = np.concatenate(tests)
    np.testing.assert_array_equal(np.sort(all_tests), labeled)  # a partition of the labeled


def test_stratification_keeps_class_proportions(rng):
    y = _semi_labels(rng, counts=(9, 6, 3), n_unlabeled=20)
    for seed in range(5):
        for _, test in SemiSupervisedKFold(3, random_state=seed).split(np.zeros(y.size), y):
            np.testing.assert_array_equal(np.bincount(y[test], minlength=3), [3, 2, 1])


def test_without_stratification_folds_may_miss_a_class():
    # classes in blocks and no shuffling: plain KFold's folds are class-pure
    y = np.array([0] * 4 + [1] * 4 + [-1] * 3)
    tests = [t for _, t in SemiSupervisedKFold(2, stratify=False, shuffle=False).split(y, y)]
    assert [np.unique(y[t]).tolist() for t in tests] == [[0], [1]]
    tests = [t for _, t in SemiSupervisedKFold(2, shuffle=False).split(y, y)]
    assert [np.unique(y[t]).tolist() for t in tests] == [[0, 1], [0, 1]]


def test_string_labels_with_none_as_unlabeled():
    y = np.array(["a", None, "b", "a", None, "b", "a", "b", None, "a", "b", None], dtype=object)
    unlabeled = np.flatnonzero([v is None for v in y])
    tests = []
    for train, test in SemiSupervisedKFold(2, random_state=0).split(np.zeros((12, 1)), y):
        assert np.isin(unlabeled, train).all()
        assert all(v is not None for v in y[test])
        assert sorted(set(y[test])) == ["a", "b"]
        tests.append(test)
    np.testing.assert_array_equal(
        np.sort(np.concatenate(tests)), np.setdiff1d(np.arange(12), unlabeled)
    )


def test_unlabeled_label_override():
    # -1 is a real class; 0 marks the unlabeled samples
    y = np.array([-1, 1, 0, -1, 1, 0, -1, 1, 0, 0])
    cv = SemiSupervisedKFold(3, random_state=0, unlabeled_label=0)
    for train, test in cv.split(y, y):
        assert np.isin(np.flatnonzero(y == 0), train).all()
        assert sorted(y[test].tolist()) == [-1, 1]
    # unlabeled_label=None: no numeric marker at all, every sample is labeled
    tests = [t for _, t in SemiSupervisedKFold(2, unlabeled_label=None, random_state=0).split(y, y)]
    np.testing.assert_array_equal(np.sort(np.concatenate(tests)), np.arange(y.size))
    # ... but None entries of object labels still mark unlabeled samples
    y_obj = np.array([-1, 1, None, -1, 1, None], dtype=object)
    for train, test in SemiSupervisedKFold(2, unlabeled_label=None, random_state=0).split(
        y_obj, y_obj
    ):
        assert {2, 5} <= set(train.tolist())
        assert sorted(y_obj[test].tolist()) == [-1, 1]


def test_reproducible_with_random_state(rng):
    y = _semi_labels(rng, counts=(20, 20), n_unlabeled=5)

    def folds(cv):
        return [t.tolist() for _, t in cv.split(y, y)]

    assert folds(SemiSupervisedKFold(4, random_state=3)) == folds(
        SemiSupervisedKFold(4, random_state=3)
    )
    assert folds(SemiSupervisedKFold(4, random_state=3)) != folds(
        SemiSupervisedKFold(4, random_state=4)
    )
    cv = SemiSupervisedKFold(4, shuffle=False)
    assert folds(cv) == folds(cv)


def test_accepts_lists_columns_and_ignores_groups(rng):
    y = _semi_labels(rng)
    ref = [t.tolist() for _, t in SemiSupervisedKFold(3, random_state=0).split(y, y)]
    cv = SemiSupervisedKFold(3, random_state=0)
    assert [t.tolist() for _, t in cv.split(y.tolist(), y.tolist())] == ref
    assert [t.tolist() for _, t in cv.split(y, y[:, None], groups=np.arange(y.size))] == ref


def test_get_n_splits():
    assert SemiSupervisedKFold().get_n_splits() == 5
    assert SemiSupervisedKFold(7).get_n_splits(np.zeros(3), np.zeros(3), None) == 7


def test_splitter_errors(rng):
    X = np.zeros((12, 1))
    with pytest.raises(ValueError, match="y=None"):
        next(SemiSupervisedKFold(2).split(X))
    y = np.array([0, 0, 0, 1, 1, 1, 1, 1, 2, 2, -1, -1])
    with pytest.raises(ValueError, match=r"class 2 has 2 labeled.*lower n_splits to at most 2"):
        next(SemiSupervisedKFold(3).split(X, y))
    with pytest.raises(ValueError, match="class 0 has 3, class 2 has 2"):
        next(SemiSupervisedKFold(4).split(X, y))
    assert len(list(SemiSupervisedKFold(3, stratify=False).split(X, y))) == 3
    with pytest.raises(ValueError, match="10 labeled sample.*n_splits=11"):
        next(SemiSupervisedKFold(11, stratify=False).split(X, y))
    with pytest.raises(ValueError, match="0 labeled"):
        next(SemiSupervisedKFold(2).split(X, np.full(12, -1)))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        next(SemiSupervisedKFold(2).split(np.zeros((5, 1)), y))
    with pytest.raises(ValueError, match="at least 2"):
        SemiSupervisedKFold(1)
    with pytest.raises(ValueError, match="integer"):
        SemiSupervisedKFold(2.5)
    with pytest.raises(ValueError, match="shuffle is False"):
        SemiSupervisedKFold(shuffle=False, random_state=0)


# -- the scorer ----------------------------------------------------------------------------
def test_scorer_ignores_unlabeled_samples():
    X = np.arange(8.0)[:, None]
    y = np.array([0, 0, 1, -1, -1, 0, 1, -1])
    clf = DummyClassifier(strategy="constant", constant=0).fit(X[y != -1], y[y != -1])
    lab = y != -1
    expected = accuracy_score(y[lab], clf.predict(X[lab]))
    assert expected == pytest.approx(3 / 5)
    assert accuracy_score(y, clf.predict(X)) != pytest.approx(expected)  # -1 would count
    assert labeled_accuracy_scorer(clf, X, y) == pytest.approx(expected)
    assert labeled_accuracy_scorer(clf, X.tolist(), y.tolist()) == pytest.approx(expected)
    w = np.array([1.0, 3.0, 2.0, 5.0, 5.0, 1.0, 2.0, 5.0])
    w_expected = accuracy_score(y[lab], clf.predict(X[lab]), sample_weight=w[lab])
    assert w_expected == pytest.approx(5 / 9)
    assert labeled_accuracy_scorer(clf, X, y, sample_weight=w) == pytest.approx(w_expected)


def test_scorer_on_a_fitted_semi_supervised_model(moons):
    X, y, y_semi = moons
    clf = LapRLSC(gamma=5.0, gamma_A=1e-4, gamma_I=0.0).fit(X, y_semi)
    y_eval = y.copy()
    y_eval[::3] = -1  # hide a third of the truths
    lab = y_eval != -1
    expected = accuracy_score(y[lab], clf.predict(X[lab]))
    assert accuracy_score(y_eval, clf.predict(X)) < expected - 0.3  # if -1 were a class
    assert labeled_accuracy_scorer(clf, X, y_eval) == pytest.approx(expected)
    with pytest.warns(UnlabeledScoringWarning, match="LapRLSC.score was given samples marked"):
        score = clf.score(X, y_eval)
    assert labeled_accuracy_scorer(clf, X, y_eval) == pytest.approx(score)


def test_scorer_string_labels_and_custom_metric():
    X = np.arange(6.0)[:, None]
    y = np.array(["a", "b", None, "a", None, "b"], dtype=object)
    clf = DummyClassifier(strategy="constant", constant="a").fit(X[[0, 1]], ["a", "b"])
    assert labeled_accuracy_scorer(clf, X, y) == pytest.approx(0.5)
    f1 = make_labeled_scorer(f1_score, pos_label="a")
    assert f1(clf, X, y) == pytest.approx(f1_score(["a", "b", "a", "b"], ["a"] * 4, pos_label="a"))
    neg = make_labeled_scorer(greater_is_better=False)
    assert neg(clf, X, y) == pytest.approx(-0.5)
    # -1 is a real class when unlabeled_label=None
    y_num = np.array([-1, -1, 1, 1])
    dummy = DummyClassifier(strategy="constant", constant=-1).fit(X[:4], y_num)
    assert make_labeled_scorer(unlabeled_label=None)(dummy, X[:4], y_num) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="none of the 2 samples is labeled"):
        labeled_accuracy_scorer(dummy, X[:2], y_num[:2])


def test_scorer_errors():
    X = np.zeros((3, 1))
    clf = DummyClassifier().fit(X, [0, 1, 1])
    with pytest.raises(ValueError, match="y=None"):
        labeled_accuracy_scorer(clf, X, None)
    with pytest.raises(ValueError, match="none of the 3 samples is labeled"):
        labeled_accuracy_scorer(clf, X, [-1, -1, -1])
    with pytest.raises(ValueError, match="1-dimensional"):
        labeled_accuracy_scorer(clf, X, np.zeros((3, 2)))


# -- grid search ---------------------------------------------------------------------------
def test_grid_search_uses_the_unlabeled_data(moons):
    X, y, y_semi = moons
    search = GridSearchCV(
        LapRLSC(gamma=5.0, gamma_A=1e-4),
        {"gamma_I": [0, 1e4]},
        cv=SemiSupervisedKFold(3, random_state=0),
        scoring=labeled_accuracy_scorer,
    ).fit(X, y_semi)
    assert np.isfinite(search.best_score_)
    scores = dict(
        zip(search.cv_results_["param_gamma_I"], search.cv_results_["mean_test_score"], strict=True)
    )
    # the graph over the unlabeled points makes the held-out labels predictable
    assert scores[1e4] == pytest.approx(1.0)
    assert scores[0] <= 11 / 12
    assert search.best_params_ == {"gamma_I": 1e4}
    # the refit model saw everything and labels the two moons
    assert search.best_estimator_.score(X, y) > 0.95


class _Recorder(LapRLSC):
    """LapRLSC that records how many unlabeled samples each fit saw."""

    seen: list = []

    def fit(self, X, y, unlabeled=None):
        type(self).seen.append(int(np.sum(np.asarray(y) == -1)))
        return super().fit(X, y, unlabeled=unlabeled)


def test_every_fit_sees_all_unlabeled_samples(moons):
    X, _, y_semi = moons
    n_unlabeled = int(np.sum(y_semi == -1))
    _Recorder.seen = []
    cross_validate(
        _Recorder(gamma=5.0, gamma_I=1.0), X, y_semi, cv=SemiSupervisedKFold(3, random_state=0)
    )
    assert _Recorder.seen == [n_unlabeled] * 3
    # plain KFold wastes the unlabeled points of each test fold (and scores them)
    _Recorder.seen = []
    with pytest.warns(UnlabeledScoringWarning) as record:  # at fit and in the scorer
        cross_validate(
            _Recorder(gamma=5.0, gamma_I=1.0),
            X,
            y_semi,
            cv=KFold(3, shuffle=True, random_state=0),
            scoring=labeled_accuracy_scorer,
        )
    assert len(_Recorder.seen) == 3 and max(_Recorder.seen) < n_unlabeled
    assert any("test part holds samples marked" in str(w.message) for w in record)


def test_semi_supervised_grid_search_end_to_end(moons):
    X, y, y_semi = moons
    search = semi_supervised_grid_search(
        LapSVM(gamma=5.0, gamma_A=1e-3),
        {"gamma_I": [0.0, 1e3]},
        n_splits=3,
        random_state=0,
        return_train_score=True,
    )
    assert isinstance(search, GridSearchCV)
    assert isinstance(search.cv, SemiSupervisedKFold) and search.cv.n_splits == 3
    assert search.refit is True
    assert not hasattr(search, "best_estimator_")
    clone(search)  # a proper estimator
    search.fit(X, y_semi)
    assert np.isfinite(search.best_score_)
    # training sets hold unlabeled samples; the scorer skips them
    assert np.all(np.isfinite(search.cv_results_["mean_train_score"]))
    assert search.best_params_ == {"gamma_I": 1e3}
    assert search.score(X, y_semi) == pytest.approx(1.0)  # labeled points only
    assert accuracy_score(y, search.predict(X)) > 0.95
    with pytest.raises(TypeError, match="cv"):
        semi_supervised_grid_search(LapSVM(), {}, cv=3)


def test_grid_search_with_a_custom_marker_and_fit_mask():
    # -1 is a real class: 0 marks unlabeled samples, and fit gets the matching mask
    X, y01 = make_moons(120, noise=0.05, random_state=1)
    y = np.where(y01 == 1, 1, -1)
    pick = np.random.default_rng(0)
    labeled = np.concatenate(
        [pick.choice(np.flatnonzero(y == c), 6, replace=False) for c in (-1, 1)]
    )
    y_semi = np.zeros_like(y)
    y_semi[labeled] = y[labeled]
    search = semi_supervised_grid_search(
        LapRLSC(gamma=5.0, gamma_A=1e-4),
        {"gamma_I": [1e4]},
        n_splits=3,
        random_state=0,
        unlabeled_label=0,
    )
    search.fit(X, y_semi, unlabeled=y_semi == 0)
    np.testing.assert_array_equal(search.best_estimator_.classes_, [-1, 1])
    assert np.isfinite(search.best_score_)
    assert accuracy_score(y, search.predict(X)) > 0.9
