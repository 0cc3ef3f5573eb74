"""Bad-input battery (issue 20, point 4): every public estimator x every bad-input case is a
correct fit or a clear error (the cases and what "correct" means: ``battery_cases.py``)."""

import pytest
from battery_cases import CASES, ESTIMATORS, FAIL, NA, run_cell

CELLS = [(case, name) for case in CASES for name in ESTIMATORS]


@pytest.mark.parametrize("case, name", CELLS, ids=[f"{c}-{n}" for c, n in CELLS])
def test_bad_input(case, name):
    outcome, detail = run_cell(case, name)
    if outcome == NA:
        pytest.skip(f"not applicable: {detail}")
    assert outcome != FAIL, detail
