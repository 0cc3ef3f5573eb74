"""SparseRLSC (S-RLSC): closed form, direct minimisation, reductions, errors."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.preprocessing import normalize

from structreg import RLSC, SparseRLSC
from structreg.structure.l1graph import l1_graph


def _data(n_per_class=12, d=6, n_classes=3, seed=0):
    rng = np.random.default_rng(seed)
    centers = 3 * rng.standard_normal((n_classes, d))
    X = np.vstack([c + rng.standard_normal((n_per_class, d)) for c in centers])
    y = np.repeat(np.arange(n_classes), n_per_class)
    y_semi = y.copy()
    y_semi[rng.random(len(y)) < 0.5] = -1
    for c in range(n_classes):  # keep two labels per class
        y_semi[np.flatnonzero(y == c)[:2]] = c
    return normalize(X), y, y_semi


def _paper_closed_form(X, y_semi, A, C_A, C_I, gamma):
    """Eq. (17) of Fan et al. written out: B = Y (K J + C_A I + C_I K (I-A)^T (I-A))^{-1}."""
    n = len(y_semi)
    classes = np.unique(y_semi[y_semi >= 0])
    labeled = y_semi >= 0
    Y = np.zeros((len(classes), n))
    Y[np.searchsorted(classes, y_semi[labeled]), np.flatnonzero(labeled)] = 1.0
    K = rbf_kernel(X, gamma=gamma)
    J = np.diag(labeled.astype(float))
    IA = np.eye(n) - A.toarray()
    B = np.linalg.solve((K @ J + C_A * np.eye(n) + C_I * K @ IA.T @ IA).T, Y.T).T
    return B, K


def _paper_weights(C_A, C_I, y_semi):
    """The paper's experiment weights as SparseRLSC's: gamma_A = C_A / l, gamma_I = C_I n^2 / l."""
    n, n_lab = len(y_semi), int((y_semi >= 0).sum())
    return {"gamma_A": C_A / n_lab, "gamma_I": C_I * n**2 / n_lab}


def test_decision_values_equal_paper_closed_form():
    X, _, y_semi = _data()
    C_A, C_I, gamma = 0.05, 0.5, 2.0
    clf = SparseRLSC(**_paper_weights(C_A, C_I, y_semi), gamma=gamma).fit(X, y_semi)
    B, K = _paper_closed_form(X, y_semi, l1_graph(X), C_A, C_I, gamma)
    F_paper = (B @ K).T  # 0/1 targets; structreg codes +-1 -> same up to a common shift
    F = clf.decision_function(X)
    # +-1 targets = 2 * (0/1 targets) - 1: the class-independent shift leaves argmax unchanged
    shift = F - 2 * F_paper
    np.testing.assert_allclose(shift, shift[:, :1] * np.ones((1, F.shape[1])), atol=1e-7)
    np.testing.assert_array_equal(clf.transduction_, np.argmax(F_paper, axis=1))


def test_solution_minimises_stated_objective():
    X, _, y_semi = _data(n_per_class=6, d=4, n_classes=2)
    gamma_A, gamma_I, gamma = 0.01, 50.0, 1.5
    clf = SparseRLSC(gamma_A=gamma_A, gamma_I=gamma_I, gamma=gamma).fit(X, y_semi)
    A = l1_graph(X).toarray()
    K = rbf_kernel(X, gamma=gamma)
    n = len(X)
    labeled = y_semi >= 0
    target = np.where(y_semi[labeled] == 1, 1.0, -1.0)
    M = (np.eye(n) - A).T @ (np.eye(n) - A)

    n_lab, w_I = labeled.sum(), gamma_I / n**2

    def objective(alpha):  # (1/l) sum e^2 + gamma_A ||f||^2 + gamma_I / n^2 f^T M f
        f = K @ alpha
        return (
            np.sum((target - f[labeled]) ** 2) / n_lab
            + gamma_A * alpha @ K @ alpha
            + w_I * f @ M @ f
        )

    def gradient(alpha):
        f = K @ alpha
        r = np.zeros(n)
        r[labeled] = f[labeled] - target
        return 2 * K @ r / n_lab + 2 * gamma_A * K @ alpha + 2 * w_I * K @ (M @ f)

    res = minimize(objective, np.zeros(n), jac=gradient, method="BFGS", options={"gtol": 1e-10})
    f_direct = K @ res.x
    np.testing.assert_allclose(clf.decision_function(X), f_direct, atol=1e-5)


def test_no_graph_weight_is_rlsc_on_labeled_points():
    X, _, y_semi = _data()
    labeled = y_semi >= 0
    sparse = SparseRLSC(gamma_A=0.01, gamma_I=0.0, gamma=2.0).fit(X, y_semi)
    rls = RLSC(gamma=2.0, gamma_A=0.01).fit(X[labeled], y_semi[labeled])
    np.testing.assert_allclose(sparse.decision_function(X), rls.decision_function(X), atol=1e-8)


def test_precomputed_graph_equals_built_graph():
    X, _, y_semi = _data()
    built = SparseRLSC(gamma_I=100.0).fit(X, y_semi)
    given = SparseRLSC(gamma_I=100.0, graph=l1_graph(X)).fit(X, y_semi)
    np.testing.assert_allclose(built.decision_function(X), given.decision_function(X))
    assert sp.issparse(built.penalty_matrix(X, y_semi))


def test_lasso_mode_fits_and_separates():
    X, y, y_semi = _data(n_per_class=20)
    clf = SparseRLSC(l1_mode="lasso", n_candidates=10, gamma=4.0).fit(X, y_semi)
    assert np.mean(clf.transduction_ == y) > 0.9


@pytest.mark.parametrize(
    "graph, message",
    [
        (sp.eye(5), "shape"),
        ("diag", "diagonal"),
        ("nan", "NaN"),
    ],
)
def test_bad_precomputed_graph(graph, message):
    X, _, y_semi = _data()
    n = len(X)
    if isinstance(graph, str) and graph == "diag":
        graph = sp.eye(n, format="csr")
    elif isinstance(graph, str) and graph == "nan":
        graph = sp.csr_matrix(([np.nan], ([0], [1])), shape=(n, n))
    with pytest.raises(ValueError, match=message):
        SparseRLSC(graph=graph).fit(X, y_semi)


def test_bad_parameters():
    X, _, y_semi = _data()
    with pytest.raises(ValueError, match="l1_mode"):
        SparseRLSC(l1_mode="omp").fit(X, y_semi)
    with pytest.raises(ValueError, match="gamma_A"):
        SparseRLSC(gamma_A=-1.0).fit(X, y_semi)


def test_auto_weight_is_the_mean_reconstruction_error():
    """gamma_I="auto" = f^T M f / trace(M): the same fit as the number gamma_I whose
    gamma_I / n^2 equals 1 / trace(M), M = (I - A)^T (I - A)."""
    X, _, y_semi = _data()
    A = l1_graph(X)
    IA = np.eye(len(X)) - A.toarray()
    trace = np.trace(IA.T @ IA)
    auto = SparseRLSC(graph=A, gamma=2.0).fit(X, y_semi)
    assert auto.get_params()["gamma_I"] == "auto"
    number = SparseRLSC(graph=A, gamma=2.0, gamma_I=len(X) ** 2 / trace).fit(X, y_semi)
    np.testing.assert_allclose(auto.decision_function(X), number.decision_function(X), atol=1e-10)
    built = SparseRLSC(gamma=2.0).fit(X, y_semi)  # the l1-graph built inside, scaled alike
    np.testing.assert_allclose(built.decision_function(X), auto.decision_function(X), atol=1e-8)
    one = SparseRLSC(graph=A, gamma=2.0, gamma_I=1.0).fit(X, y_semi)
    assert not np.allclose(one.decision_function(X), auto.decision_function(X), atol=1e-4)
