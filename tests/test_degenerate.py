"""A degenerate semi-supervised answer is reported: a collapse onto one class, or class scores
that are flat away from the labeled points."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_moons

import structreg
from structreg.exceptions import DegenerateSolutionWarning
from structreg.models._degenerate import degenerate_reason


def _degenerate_warnings(model, X, y) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X, y)
    return [str(w.message) for w in caught if issubclass(w.category, DegenerateSolutionWarning)]


def test_flat_harmonic_solution_warns():
    """Laplace learning with one label per class among 3000 points in 10 dimensions: the
    harmonic scores are flat away from the labels and nearly all points fall in one class."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(3000, 10))
    y = np.full(3000, -1)
    y[:2] = [0, 1]
    messages = _degenerate_warnings(structreg.GFHF(), X, y)
    assert len(messages) == 1
    assert "degenerate" in messages[0] and "PoissonLearning" in messages[0]


@pytest.mark.parametrize(
    "model",
    [structreg.GFHF(), structreg.PoissonLearning(), structreg.LapRLSC(), structreg.LapSVM()],
    ids=lambda m: type(m).__name__,
)
def test_a_good_fit_does_not_warn(model):
    X, y_true = make_moons(600, noise=0.1, random_state=0)
    y = np.full_like(y_true, -1)
    for c in (0, 1):
        y[np.flatnonzero(y_true == c)[:5]] = c
    assert _degenerate_warnings(model, X, y) == []
    assert np.mean(model.transduction_ == y_true) > 0.9


def test_collapse_onto_one_class_is_named():
    labeled = np.zeros(100, dtype=bool)
    labeled[:10] = True
    y_codes = np.r_[np.zeros(5, int), np.ones(5, int), np.full(90, -1)]
    scores = np.zeros((100, 2))
    scores[:, 1] = 1.0  # every point scores class 1 highest
    scores[:5] = [1.0, 0.0]
    reason = degenerate_reason(scores, labeled, y_codes, np.array(["a", "b"]))
    assert reason is not None and "100 % of the unlabeled points get class 'b'" in reason
    # the same shares are no collapse when the labels say class b is the big one
    y_codes[:5] = 1
    assert degenerate_reason(scores, labeled, y_codes, np.array(["a", "b"])) is None


def test_flat_scores_are_named_and_contrast_is_not():
    labeled = np.zeros(100, dtype=bool)
    labeled[:10] = True
    y_codes = np.r_[np.zeros(5, int), np.ones(5, int), np.full(90, -1)]
    decision = np.r_[-np.ones(5), np.ones(5), 1e-6 * np.linspace(-1, 1, 90)]
    reason = degenerate_reason(decision, labeled, y_codes, np.array([0, 1]))
    assert reason is not None and "nearly constant" in reason
    decision[10:] = np.linspace(-1, 1, 90)
    assert degenerate_reason(decision, labeled, y_codes, np.array([0, 1])) is None


def test_too_few_unlabeled_points_are_not_judged():
    labeled = np.r_[np.ones(4, bool), np.zeros(5, bool)]
    y_codes = np.r_[0, 0, 1, 1, np.full(5, -1)]
    scores = np.column_stack([np.zeros(9), np.ones(9)])
    assert degenerate_reason(scores, labeled, y_codes, np.array([0, 1])) is None
