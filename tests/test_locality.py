"""Locality orderings (structreg._locality): a permutation that puts graph neighbours near each
other, and the solvers that compute in it give the answer they give without it."""

import numpy as np
import pytest
import scipy.sparse as sp

from structreg import _locality
from structreg._locality import locality_order, unpermute
from structreg.models.harmonic import harmonic_function
from structreg.models.poisson import poisson_function
from structreg.solvers.design import design_penalty_diagonal, design_penalty_gram
from structreg.structure.graphs import knn_graph


def _bandwidth(M) -> int:
    M = sp.coo_matrix(M)
    return int(np.max(np.abs(M.row - M.col)))


def _shuffled_grid(side: int, seed: int = 0):
    """A side x side grid graph with its vertices numbered at random."""
    path = sp.diags([1.0, 1.0], [-1, 1], shape=(side, side))
    eye = sp.eye(side)
    G = sp.kron(path, eye) + sp.kron(eye, path)
    p = np.random.default_rng(seed).permutation(side * side)
    return sp.csr_matrix(G)[p][:, p]


@pytest.fixture
def always(monkeypatch):
    """Order every matrix, however small."""
    monkeypatch.setattr(_locality, "LOCALITY_MIN_ROWS", 1)


@pytest.fixture
def never(monkeypatch):
    monkeypatch.setattr(_locality, "LOCALITY_MIN_ROWS", 10**12)


def test_order_is_a_permutation_that_narrows_the_band():
    G = _shuffled_grid(40)
    assert locality_order(G) is None  # 1600 rows: below the default threshold
    p = locality_order(G, min_rows=1)
    assert np.array_equal(np.sort(p), np.arange(G.shape[0]))
    # a shuffled 40 x 40 grid has neighbours up to ~1600 apart; ordered, a grid's band is
    # about its side
    assert _bandwidth(G) > 1000
    assert _bandwidth(G[p][:, p]) <= 2 * 40
    X = np.arange(G.shape[0] * 2.0).reshape(-1, 2)
    assert np.array_equal(unpermute(p, X[p]), X)


def test_order_of_non_square_or_dense_is_none():
    assert locality_order(np.eye(3), min_rows=1) is None
    assert locality_order(sp.random(5, 4, density=0.5, format="csr"), min_rows=1) is None


def _labels(n, seed=1):
    rng = np.random.default_rng(seed)
    labeled = np.zeros(n, dtype=bool)
    labeled[rng.choice(n, 12, replace=False)] = True
    targets = np.eye(3)[np.arange(12) % 3]
    return labeled, targets


@pytest.mark.parametrize("method", ["direct", "cg"])
def test_harmonic_and_poisson_solutions_do_not_depend_on_the_order(method, monkeypatch):
    W = _shuffled_grid(30)
    labeled, targets = _labels(W.shape[0])
    out = {}
    for threshold in (1, 10**12):
        monkeypatch.setattr(_locality, "LOCALITY_MIN_ROWS", threshold)
        out[threshold] = (
            harmonic_function(W, labeled, targets, method=method, tol=1e-12)[0],
            poisson_function(W, labeled, targets, method=method, tol=1e-12)[0],
        )
    for ordered, plain in zip(out[1], out[10**12], strict=True):
        np.testing.assert_allclose(ordered, plain, atol=1e-8)
    # and the harmonic solution is harmonic: clamped labels, mean of neighbours elsewhere
    F = out[1][0]
    np.testing.assert_allclose(F[labeled], targets)
    d = np.asarray(W.sum(axis=1)).ravel()
    np.testing.assert_allclose((W @ F)[~labeled] / d[~labeled, None], F[~labeled], atol=1e-8)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_penalty_gram_in_blocks_of_ordered_rows(fit_intercept, always):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(900, 2))
    L = sp.csgraph.laplacian(knn_graph(X, n_neighbors=5))
    Z = rng.normal(size=(900, 7))
    A = np.hstack([Z, np.ones((900, 1))]) if fit_intercept else Z
    expected = A.T @ (L @ A)
    # blocks of 50 rows: 18 blocks, each a set of rows scattered in the original numbering
    G = design_penalty_gram(Z, L, fit_intercept=fit_intercept, block_elements=50 * A.shape[1])
    np.testing.assert_allclose(G, expected, atol=1e-10)
    d = design_penalty_diagonal(Z, L, fit_intercept=fit_intercept, block_elements=50 * A.shape[1])
    np.testing.assert_allclose(d, np.diag(expected), atol=1e-10)
