"""The coarse-to-fine search helper of the reproductions (structreg.experiments.search)."""

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.svm import SVC

from structreg.experiments.search import (
    Axis,
    coarse_to_fine,
    cv_evaluator,
    log2_axis,
    n_correct,
    stratified_folds,
    trivial_gaussian_widths,
    value_axis,
)


def _counting(score):
    calls = []

    def evaluate(batch):
        calls.extend(batch)
        return [score(c) for c in batch]

    return evaluate, calls


def test_finds_the_optimum_of_a_unimodal_function_with_few_evaluations():
    # peak at x = 2^3, y = 0.7: a 21 x 11 grid, 231 points
    def score(c):
        return -((np.log2(c["x"]) - 3) ** 2) - 10 * (c["y"] - 0.7) ** 2

    evaluate, calls = _counting(score)
    axes = [
        log2_axis("x", coarse_step=4),
        value_axis("y", np.round(np.linspace(0, 1, 11), 1), coarse_step=5),
    ]
    res = coarse_to_fine(evaluate, axes)
    assert res.best_params == {"x": 8.0, "y": 0.7}
    assert res.n_evaluated == len(calls) < 60
    assert len({tuple(sorted(c.items())) for c in calls}) == len(calls)  # nothing twice


def test_coarse_grid_only_and_fixed_parameters():
    evaluate, calls = _counting(lambda c: -abs(np.log2(c["x"]) - 3))
    res = coarse_to_fine(evaluate, [log2_axis("x", coarse_step=5)], fixed={"k": 10}, refine=False)
    assert sorted(np.log2([c["x"] for c in calls])) == [-10, -5, 0, 5, 10]
    assert all(c["k"] == 10 for c in calls)
    assert res.best_params == {"x": 2.0**5, "k": 10}


def test_exhaustive_axis_is_always_evaluated_in_full():
    evaluate, calls = _counting(lambda c: -abs(np.log2(c["s"]) - 1) - abs(np.log2(c["r"]) + 4))
    res = coarse_to_fine(evaluate, [log2_axis("s", coarse_step=4), log2_axis("r", exhaustive=True)])
    assert res.best_params == {"s": 2.0, "r": 2.0**-4}
    per_s = {}
    for c in calls:
        per_s.setdefault(c["s"], set()).add(c["r"])
    assert all(len(rs) == 21 for rs in per_s.values())


def test_ties_keep_the_first_point_and_nan_never_wins():
    evaluate, _ = _counting(lambda c: np.nan if c["x"] == 3 else float(c["x"] >= 1))
    res = coarse_to_fine(evaluate, [value_axis("x", (3, 2, 1, 0))])
    assert res.best_params == {"x": 2} and res.best_score == 1.0
    with pytest.raises(ValueError, match="no values"):
        Axis("x", ())


def test_neighbourhood_refinement_at_given_strides():
    evaluate, calls = _counting(lambda c: -abs(c["a"] - 13) - abs(c["b"] - 2))
    axes = [value_axis("a", range(21), coarse_step=4), value_axis("b", range(21), coarse_step=4)]
    res = coarse_to_fine(evaluate, axes, refine=[2, 1])
    assert res.best_params == {"a": 13, "b": 2} and res.best_score == 0
    # the coarse grid, then at most the 3 x 3 neighbourhood per stride, nothing twice
    assert res.n_evaluated == len(calls) <= 36 + 2 * 9
    assert len({(c["a"], c["b"]) for c in calls}) == len(calls)
    refined = [(c["a"], c["b"]) for c in calls[36:]]
    assert all(abs(a - 12) <= 2 and b <= 3 for a, b in refined)


def test_preferred_point_wins_ties_to_twelve_decimals():
    evaluate, _ = _counting(lambda c: 0.5 + 1e-15 * c["x"])
    axes = [value_axis("x", (1, 2, 3))]
    assert coarse_to_fine(evaluate, axes).best_params == {"x": 1}  # the first evaluated
    res = coarse_to_fine(evaluate, axes, prefer=lambda c: -c["x"])
    assert res.best_params == {"x": 3}
    evaluate, _ = _counting(lambda c: float(c["x"] == 2))  # a real difference still wins
    assert coarse_to_fine(evaluate, axes, prefer=lambda c: -c["x"]).best_params == {"x": 2}


def test_cv_evaluator_pools_or_averages_the_folds():
    folds = [(np.arange(2, 6), np.arange(2)), (np.arange(2), np.arange(2, 6))]
    hits = {2: 2.0, 4: 1.0}  # all of the first fold's 2 points, 1 of the second's 4

    def fold_eval(candidates, train, test):
        return [hits[len(test)]] * len(candidates)

    assert cv_evaluator(fold_eval, folds)([{}]) == [0.5]
    assert cv_evaluator(fold_eval, folds, average="folds")([{}]) == [0.625]
    with pytest.raises(ValueError, match="average"):
        cv_evaluator(fold_eval, folds, average="median")


def test_n_correct_reads_binary_and_multiclass_decisions():
    assert n_correct(np.array([0.3, -0.2, 0.0]), np.array([1, 0, 1])) == 2
    F = np.array([[0.1, 0.7, 0.2], [0.5, 0.1, 0.4]])
    assert n_correct(F, np.array([1, 2])) == 1


def test_descending_log2_axis():
    axis = log2_axis("s", -2, 1, descending=True)
    assert axis.values == (2.0, 1.0, 0.5, 0.25)
    assert axis.coarse_indices() == [0, 3] and Axis("a", (1, 2, 3), 2).coarse_indices() == [0, 2]


def test_stratified_folds_keep_small_classes_in_training():
    y = np.array([0] * 12 + [1] * 9 + [2] * 2)
    folds = stratified_folds(y, 3, seed=0, min_train_per_class=2)
    tested = np.concatenate([te for _, te in folds])
    assert len(tested) == len(set(tested)) == 21  # class 2 never held out, no point twice
    for train, test in folds:
        assert set(train) | set(test) == set(range(23)) and not set(train) & set(test)
        assert np.bincount(y[train]).min() >= 2
        assert abs(np.sum(y[test] == 0) - 4) <= 1  # stratified
    assert [t.tolist() for _, t in folds] == [
        t.tolist() for _, t in stratified_folds(y, 3, seed=0, min_train_per_class=2)
    ]


def test_coarse_to_fine_cv_matches_exhaustive_grid_search_on_iris():
    X, y = load_iris(return_X_y=True)
    folds = stratified_folds(y, 3, seed=1)
    axes = [log2_axis("C", -6, 6, coarse_step=3), log2_axis("gamma", -6, 2, coarse_step=4)]
    evaluate = cv_evaluator(
        lambda cands, tr, te: [
            np.sum(SVC(**c).fit(X[tr], y[tr]).predict(X[te]) == y[te]) for c in cands
        ],
        folds,
    )
    res = coarse_to_fine(evaluate, axes)
    grid = [{"C": c, "gamma": g} for c in axes[0].values for g in axes[1].values]
    assert res.best_score >= max(evaluate(grid)) - 0.02
    assert res.n_evaluated < len(grid) / 2


def test_trivial_gaussian_widths():
    X = np.random.default_rng(0).normal(size=(40, 3))
    sigmas = [2.0**e for e in range(-10, 11)]
    trivial = trivial_gaussian_widths(X, sigmas)
    assert 2.0**-10 in trivial and "identity" in trivial[2.0**-10]
    assert 1.0 not in trivial and 2.0**10 not in trivial
    assert "all ones" in trivial_gaussian_widths(X, [1e6])[1e6]
