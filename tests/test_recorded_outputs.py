"""Predictions and decision values equal the ones recorded before the fit pipeline was
reorganised (``recorded_outputs.py`` explains the file and how it was made)."""

import numpy as np
import pytest
from recorded_outputs import FILE, compute

RECORDED = dict(np.load(FILE))


@pytest.fixture(scope="module")
def current():
    return compute()


def test_every_recorded_output_is_computed(current):
    missing = sorted(set(RECORDED) - set(current))
    assert not missing, f"{len(missing)} recorded outputs are no longer computed: {missing[:5]}"
    assert len(RECORDED) > 250


@pytest.mark.parametrize("key", sorted(RECORDED))
def test_output_equals_the_recorded_one(current, key):
    old, new = RECORDED[key], current[key]
    assert new.shape == old.shape, f"{key}: shape {new.shape} != recorded {old.shape}"
    scale = max(1.0, float(np.max(np.abs(old), initial=0.0)))
    err = float(np.max(np.abs(new - old), initial=0.0))
    # an iterative solve is as exact as its tolerance, and its rounding depends on the BLAS
    tol = 1e-6 if "solver='cg'" in key else 1e-10
    assert err <= tol * scale, f"{key}: differs from the recorded output by {err:.3g}"
