"""The warnings against the classic semi-supervised cross-validation mistake (a splitter that
takes the unlabeled mark -1 for a class) fire where it happens and stay silent on the normal
semi-supervised paths."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_moons
from sklearn.model_selection import (
    GridSearchCV,
    KFold,
    StratifiedKFold,
    cross_val_predict,
    cross_val_score,
    cross_validate,
)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from structreg import GFHF, RLSC, LapRLSC, LapRLSCCV
from structreg.exceptions import UnlabeledScoringWarning
from structreg.model_selection import (
    SemiSupervisedKFold,
    labeled_accuracy_scorer,
    semi_supervised_grid_search,
)


@pytest.fixture(scope="module")
def data():
    X, y = make_moons(90, noise=0.1, random_state=0)
    y_semi = y.copy()
    y_semi[np.random.RandomState(0).rand(y.size) < 0.6] = -1
    return X, y, y_semi


def _messages(record) -> list[str]:
    return [str(w.message) for w in record if issubclass(w.category, UnlabeledScoringWarning)]


@pytest.fixture
def silent():
    """Any UnlabeledScoringWarning is an error inside."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnlabeledScoringWarning)
        yield


GRID = {"laprlsc__gamma_I": [1e-3, 1e-1]}


def test_grid_search_with_a_plain_splitter_warns_at_fit_and_score(data):
    X, _, y_semi = data
    pipe = make_pipeline(StandardScaler(), LapRLSC())
    with pytest.warns(UnlabeledScoringWarning) as record:
        GridSearchCV(pipe, GRID, cv=3).fit(X, y_semi)
    messages = _messages(record)
    assert any("LapRLSC is fitted on a cross-validation split" in m for m in messages)
    assert any("LapRLSC.score was given samples marked unlabeled" in m for m in messages)
    assert all("SemiSupervisedKFold" in m for m in messages)  # each gives the fix


@pytest.mark.parametrize("splitter", [StratifiedKFold(3), KFold(3)])
def test_sklearn_scorer_and_cross_val_predict_warn_at_fit(data, splitter):
    """The model's ``score`` is not called with scoring="accuracy": the fit sees the split."""
    X, _, y_semi = data
    with pytest.warns(UnlabeledScoringWarning, match="GFHF is fitted on a cross-validation"):
        cross_val_score(GFHF(), X, y_semi, cv=splitter, scoring="accuracy")
    with pytest.warns(UnlabeledScoringWarning, match="test part holds samples marked"):
        cross_val_predict(GFHF(), X, y_semi, cv=splitter)


def test_direct_score_with_marked_labels_warns(data):
    X, _, y_semi = data
    clf = LapRLSC().fit(X, y_semi)
    with pytest.warns(UnlabeledScoringWarning, match="LapRLSC.score was given samples marked"):
        score = clf.score(X, y_semi)
    keep = y_semi != -1
    assert score == pytest.approx(np.mean(clf.predict(X[keep]) == y_semi[keep]))


def test_labeled_scorer_on_a_test_fold_with_marks_warns(data):
    X, _, y_semi = data
    with pytest.warns(UnlabeledScoringWarning) as record:
        cross_val_score(GFHF(), X, y_semi, cv=StratifiedKFold(3), scoring=labeled_accuracy_scorer)
    assert any("labeled scorer was given a test fold" in m for m in _messages(record))


def test_cv_estimator_with_a_plain_splitter_warns(data):
    X, _, y_semi = data
    search = LapRLSCCV(param_grid={"gamma_I": [1e-3, 1e-1]}, cv=StratifiedKFold(3))
    with pytest.warns(UnlabeledScoringWarning, match="LapRLSCCV is fitted on a cross-valid"):
        search.fit(X, y_semi)


# -- the normal paths stay silent ------------------------------------------------------------


def test_semi_supervised_kfold_paths_are_silent(data, silent):
    X, _, y_semi = data
    pipe = make_pipeline(StandardScaler(), LapRLSC())
    cv = SemiSupervisedKFold(3, random_state=0)
    # training folds hold the marks: their scores (labeled scorer and model's score) are fine
    GridSearchCV(pipe, GRID, cv=cv, scoring=labeled_accuracy_scorer, return_train_score=True).fit(
        X, y_semi
    )
    GridSearchCV(pipe, GRID, cv=cv, return_train_score=True).fit(X, y_semi)
    cross_validate(GFHF(), X, y_semi, cv=cv, return_train_score=True)
    semi_supervised_grid_search(pipe, GRID, n_splits=3, random_state=0).fit(X, y_semi)
    LapRLSCCV(param_grid={"gamma_I": [1e-3, 1e-1]}).fit(X, y_semi)


def test_plain_fits_and_labeled_scores_are_silent(data, silent):
    X, y, y_semi = data
    clf = LapRLSC().fit(X, y_semi)
    clf.score(X, y)  # every sample labeled
    labeled_accuracy_scorer(clf, X, y_semi)  # dropping marks outside a CV is its job
    # fully labeled data under a plain splitter: nothing is marked
    cross_val_score(LapRLSC(), X, y, cv=StratifiedKFold(3), scoring="accuracy")
    # a supervised model learns -1 as a class: no semi-supervised advice
    cross_val_score(RLSC(), X, np.where(y == 0, -1, 1), cv=StratifiedKFold(3))
    # -1 a real class, the unlabeled samples given by the mask
    mask = y_semi == -1
    GFHF().fit(X, np.where(y == 0, -1, 1), unlabeled=mask)
