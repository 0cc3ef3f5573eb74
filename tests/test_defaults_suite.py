"""The defaults suite's own logic: its paired test, its leave-one-dataset-out pick, and a
small run from the command line (the full suite is a benchmark, not a test)."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

SUITE = Path(__file__).resolve().parents[1] / "benchmarks" / "defaults_suite.py"
sys.path.insert(0, str(SUITE.parent))

import defaults_suite  # noqa: E402


def test_paired_test_marks_a_consistent_loss_and_not_noise():
    rng = np.random.default_rng(0)
    ls = rng.uniform(0.7, 0.9, 10)
    below, p = defaults_suite.paired_below(ls - 0.05 + rng.normal(0, 0.005, 10), ls)
    assert below and p < 0.01
    above, _ = defaults_suite.paired_below(ls + 0.05, ls)
    assert not above
    noisy, _ = defaults_suite.paired_below(ls + rng.normal(0, 0.05, 10), ls)
    assert not noisy
    # no spread: the sign decides; a single draw decides nothing
    assert defaults_suite.paired_below(ls - 0.01, ls)[0]
    assert not defaults_suite.paired_below(ls[:1] - 0.5, ls[:1])[0]


def test_chance_is_the_expected_accuracy_of_guessing_with_the_labeled_shares():
    y = np.r_[np.zeros(75, int), np.ones(25, int)]
    y_semi = np.full(100, -1)
    y_semi[:5], y_semi[75:80] = 0, 1  # balanced labels
    # hidden: 70 of class 0, 20 of class 1; guesses 50/50
    assert defaults_suite.chance(y, y_semi) == pytest.approx(0.5 * 70 / 90 + 0.5 * 20 / 90)


def test_leave_one_dataset_out_judges_a_value_on_the_other_sets():
    """Value "a" gains a little on two sets and loses badly on the third.  Left out, s1 and s2
    are judged by the pick of the other two (which include s3: "b"); s3 by the pick of s1
    and s2 ("a"), whose loss there is what the fold reports."""
    gaps = {"s1": {"a": 2.0, "b": 0.0}, "s2": {"a": 2.0, "b": 0.0}, "s3": {"a": -20.0, "b": 0.0}}
    verdicts = {c: [((s, 10), "ok", gaps[s][c], 0.0) for s in gaps] for c in ("a", "b")}
    text = defaults_suite.leave_one_dataset_out(verdicts, ["a", "b"])
    rows = {line.split("|")[1].strip(): line for line in text.splitlines() if "| s" in line}
    assert rows["s1"].startswith("| s1 | b | +0.0 |")
    assert rows["s2"].startswith("| s2 | b | +0.0 |")
    assert rows["s3"].startswith("| s3 | a | -20.0 |")
    assert "Picks over the folds: b: 2, a: 1" in text or "Picks over the folds: a: 1, b: 2" in text


def test_a_small_run_writes_the_table_and_resumes(tmp_path):
    args = [sys.executable, str(SUITE), "--sets", "iris", "--labels", "3", "--draws", "2"]
    args += ["--methods", "GFHF", "--out", str(tmp_path)]
    first = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    table = (tmp_path / "defaults_suite.md").read_text()
    assert "| iris | 150 | 3 | 33.3 |" in table and "| GFHF |" in table
    stored = (tmp_path / "results.jsonl").read_text().splitlines()
    assert len(stored) == 2 * 4  # chance, RLSC, LS, GFHF on two draws
    again = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert "0 draws to fit" in again.stderr
    assert (tmp_path / "results.jsonl").read_text().splitlines() == stored


def test_methods_with_several_parameters_and_graph_weight_rules():
    """``;`` separates parameters; the suite-only rules set what ``gamma_I="auto"`` means: on
    120 points of which 10 are labeled, the per-point rule at 0.1 is the constant 1.2 (and is
    LapRLSC's default), and a constant 10 is another model."""
    from sklearn.datasets import make_moons

    assert defaults_suite.parse_method("LapSVM(gamma_A=1e-2;graph_weight_per_point=0.1)") == (
        "LapSVM",
        {"gamma_A": 0.01, "graph_weight_per_point": 0.1},
    )
    X, y = make_moons(120, noise=0.1, random_state=0)
    y_semi = np.where(np.arange(120) < 10, y, -1)

    def scores(method):
        return defaults_suite.make_model(method).fit(X, y_semi).decision_function(X)

    default = scores("LapRLSC")
    np.testing.assert_allclose(scores("LapRLSC(graph_weight_per_point=0.1)"), default)
    np.testing.assert_allclose(scores("LapRLSC(graph_weight=1.2)"), default, rtol=1e-8)
    assert not np.allclose(scores("LapRLSC(graph_weight=10)"), default)
    with pytest.raises(ValueError, match="LapRLSC, LapSVM and SSDRWu only"):
        defaults_suite.make_model("GFHF(graph_weight=1)")
    assert defaults_suite.choose_candidates("LapSVM(graph_weight=10),LapSVM(gamma_A=1e-2)") == [
        "LapSVM(graph_weight=10)",
        "LapSVM(gamma_A=1e-2)",
    ]
    assert defaults_suite.choose_candidates("GFHF:weights=heat,auto") == [
        "GFHF(weights=heat)",
        "GFHF(weights=auto)",
    ]


def test_leave_one_dataset_out_puts_the_fewest_significant_losses_first():
    """ "a" gains more on average but is significantly below LS on two sets; "b" never is.
    Every fold picks "b", although "a"'s mean gain on the other sets is the larger."""
    gaps = {"s1": (5.0, "v"), "s2": (5.0, "v"), "s3": (5.0, "ok"), "s4": (-1.0, "ok")}
    verdicts = {
        "a": [((s, 10), mark, gap, 0.0) for s, (gap, mark) in gaps.items()],
        "b": [((s, 10), "ok", 0.5, 0.0) for s in gaps],
    }
    text = defaults_suite.leave_one_dataset_out(verdicts, ["a", "b"])
    assert "Picks over the folds: b: 4" in text


def _store(cell_accs: dict, guess: float = 0.5) -> dict:
    """A results store: ``{method: [acc per draw]}`` for one cell, with its chance column."""
    results = {}
    draws = range(len(next(iter(cell_accs.values()))))
    for d in draws:
        results[("s", 3, d, "chance")] = {"acc": guess, "n": 100}
        for method, accs in cell_accs.items():
            results[("s", 3, d, method)] = {"acc": accs[d], "n": 100, "warned": accs[d] < 0.3}
    return results


def test_draws_below_guessing_are_counted_and_marked_where_label_spreading_has_none():
    """Two draws in ten below guessing, LabelSpreading none: ``g``; the same where
    LabelSpreading is below guessing once: no mark; one draw in ten: no mark."""
    good = [0.8] * 10
    twice = [0.2, 0.45] + [0.9] * 8  # mean 0.785: not significantly below anything
    once = [0.2] + [0.9] * 9
    results = _store({"LS": good, "A": twice, "B": once})
    draws = list(range(10))
    assert defaults_suite.below_guessing(results, ("s", 3), "A", draws) == 2
    assert defaults_suite.below_guessing(results, ("s", 3), "LS", draws) == 0
    text, verdicts = defaults_suite.table(results, [("s", 3)], ["A", "B"], {("s", 3): draws})
    marks = {m: rows[0][1] for m, rows in verdicts.items()}
    assert marks["A"] == "g" and marks["B"] == "ok"
    assert "(2) g |" in text and "(1) |" in text
    results = _store({"LS": [0.4] + [0.8] * 9, "A": twice})
    _, verdicts = defaults_suite.table(results, [("s", 3)], ["A"], {("s", 3): draws})
    assert verdicts["A"][0][1] == "ok"


def test_warning_rates_split_the_draws_below_guessing_from_the_others():
    results = _store({"LS": [0.8] * 10, "A": [0.2, 0.25, 0.45] + [0.9] * 7})
    text = defaults_suite.warning_rates(results)
    row = next(line for line in text.splitlines() if line.startswith("| A |"))
    # three draws below guessing, two of them warned (acc < 0.3) and far below (more than 10
    # points under 50 %); seven others, none warned
    assert row == "| A | 3 | 2 (66.7 %) | 2 | 2 (100.0 %) | 7 | 0 (0.0 %) |"
