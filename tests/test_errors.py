"""Bad input gets a clear error naming the problem."""

import numpy as np
import pytest
from sklearn.datasets import make_moons

from structreg import RLSC, LapRLSC, LapSVM, StructuralClassifier
from structreg.structure import LaplacianPenalty, PrecomputedPenalty

# inputs built to overflow: the refusals are checked, not numpy's warnings
pytestmark = [
    pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning"),
]

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


# -- issue 20: real-valued parameters, missing labels, degenerate data ---------------------------


def test_glossary_real_parameters_reject_nan_and_inf():
    """Every glossary parameter that accepts a real number refuses NaN and +-inf."""
    from structreg._compat import make_constraint
    from structreg._params import NONNEGATIVE_OR_AUTO, PARAMETER_CONSTRAINTS

    checked = []
    for name, options in {**PARAMETER_CONSTRAINTS, "auto weight": NONNEGATIVE_OR_AUTO}.items():
        constraints = [make_constraint(c) for c in options]
        if not any(c.is_satisfied_by(v) for c in constraints for v in (0.5, 1.5, -0.5)):
            continue  # takes no real number
        checked.append(name)
        for bad in (np.nan, np.inf, -np.inf):
            assert not any(c.is_satisfied_by(bad) for c in constraints), (name, bad)
    assert {"coef0", "gamma", "gamma_A", "C", "t", "eta", "auto weight"} <= set(checked)


@pytest.mark.parametrize(
    "constraint",
    ["bare Real", "closed at infinity"],
)
def test_constraints_that_let_nan_or_inf_through_are_refused(constraint):
    from numbers import Real

    from structreg._compat import Interval
    from structreg._params import check_finite_reals

    c = Real if constraint == "bare Real" else Interval(Real, 0, None, closed="both")
    with pytest.raises(TypeError, match="'x' accepts NaN or infinite values"):
        check_finite_reals({"x": [c]})


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_poly_coef0_must_be_finite(value, moons):
    """LSSVM(kernel="poly", coef0=nan) predicted one class from all-NaN decisions."""
    from structreg import LSSVM

    X, y = moons
    with pytest.raises(ValueError, match="'coef0' parameter of LSSVM must be a float"):
        LSSVM(kernel="poly", coef0=value).fit(X, y)


def _supervised():
    from structreg import DRLSC, EKM, MPM, SLMM, SRC, DiscriminativeRLSCV

    return [RLSC, DRLSC, EKM, MPM, SLMM, SRC, DiscriminativeRLSCV]


@pytest.mark.parametrize("Est", _supervised())
@pytest.mark.parametrize("kind", ["strings with None", "floats with NaN"])
def test_supervised_estimators_say_missing_labels_mark_unlabeled_points(Est, kind, moons):
    """String labels with None crashed inside np.unique ("'<' not supported between
    'NoneType' and 'str'") in EKM, MPM, SLMM, SRC and the CV estimators."""
    X, y = moons
    if kind == "strings with None":
        y = np.array(["a", "b"], dtype=object)[y]
        y[[3, 7]] = None
    else:
        y = y.astype(float)
        y[[3, 7]] = np.nan
    message = (
        f"labels None/NaN mark unlabeled points; {Est.__name__} is supervised and needs a "
        "label for every sample, but y has 2 missing"
    )
    with pytest.raises(ValueError, match=message):
        Est().fit(X, y)


@pytest.mark.parametrize("Est", [RLSC, LapRLSC, StructuralClassifier])
def test_all_zero_X_with_more_features_than_samples(Est):
    """All-zero X with n <= d and the linear kernel crashed with "Found array with 0
    sample(s)" from scikit-learn's pairwise checks."""
    with pytest.raises(ValueError, match="X has zero variance: all 5 samples are all zero"):
        Est(kernel="linear").fit(np.zeros((5, 8)), [0, 1, 0, 1, 0])


def test_one_point_repeated_is_refused():
    from structreg import EKM

    X = np.tile([[1.0, -2.0]], (6, 1))
    with pytest.raises(ValueError, match="EKM: X has zero variance: all 6 samples are the same"):
        EKM().fit(X, [0, 1, 0, 1, 0, 1])


def test_kernel_maps_accept_zero_variance():
    """A kernel map of all-zero X is exact (rank 0 for the linear kernel): no error."""
    from structreg.kernels import KernelFeatureMap

    assert KernelFeatureMap(kernel="linear").fit_transform(np.zeros((5, 3))).shape == (5, 0)


# -- issue 20: scale -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["RLSC", "LapRLSC", "EKM", "GFHF", "KernelFeatureMap"])
@pytest.mark.parametrize(
    "factor, match", [(1e300, "squared distances .* overflow float64"), (1e-300, "underflows")]
)
def test_X_beyond_float64_squares_is_refused(name, factor, match, moons):
    """X * 1e300 and X * 1e-300 predicted one class silently, or crashed deep inside the
    graph builder / scipy."""
    import structreg
    from structreg import kernels

    X, y = moons
    est = getattr(structreg, name, None) or getattr(kernels, name)
    with pytest.raises(ValueError, match=f"{name}: X's largest absolute value is .*{match}"):
        est().fit(X * factor, y)


def test_gamma_scale_is_exact_at_the_largest_accepted_scale():
    """X.var() of 1000 values near 2^509 overflows (gamma='scale' became 0 and the RBF kernel
    all ones); on X divided by a power of two it is exact."""
    from structreg.kernels import resolve_gamma

    X = np.random.default_rng(0).normal(size=(1000, 1))
    assert (
        resolve_gamma(X * 2.0**509, "rbf", "scale") == resolve_gamma(X, "rbf", "scale") / 2.0**1018
    )


@pytest.mark.parametrize("factor", [2.0**509, 2.0**-509])
def test_rlsc_predictions_do_not_depend_on_the_scale(factor):
    X = np.random.default_rng(0).normal(size=(1000, 1))
    y = (X[:, 0] > 0.3).astype(int)
    ref = RLSC().fit(X[:200], y[:200]).predict(X[200:])
    np.testing.assert_array_equal(
        RLSC().fit(X[:200] * factor, y[:200]).predict(X[200:] * factor), ref
    )


@pytest.mark.parametrize("name", ["DRLSC", "DRGV"])
def test_drlsc_at_small_scale_is_not_singular(name, moons):
    """DRLSC() / DRGV() on X * 1e-8 predicted one class (the bias column dwarfed the
    features in the rank test); only solver_info_["singular"] showed it."""
    import structreg

    X, y = moons
    ref = getattr(structreg, name)().fit(X, y)
    est = getattr(structreg, name)().fit(X * 1e-8, y)
    assert est.solver_info_["singular"] is False
    np.testing.assert_allclose(est.coef_ * 1e-8, ref.coef_, rtol=1e-6)
    np.testing.assert_array_equal(est.predict(X * 1e-8), ref.predict(X))


def test_square_loss_path_keeps_the_original_coordinates():
    """A design far from unit scale is solved on Z / 2^k; the path's system, right-hand side
    and solutions stay in the original coordinates."""
    from structreg.solvers import SquareLossPath

    rng = np.random.default_rng(0)
    Z, Y = rng.normal(size=(30, 4)), rng.normal(size=(30, 1))
    c = np.full(30, 1 / 30)
    ref = SquareLossPath(Z, Y, c, fit_intercept=True).solve(0.1)
    path = SquareLossPath(Z * 2.0**-40, Y, c, fit_intercept=True)
    sol = path.solve(0.1 * 2.0**-80)
    np.testing.assert_allclose(sol.coef * 2.0**-40, ref.coef, rtol=1e-10)
    np.testing.assert_allclose(sol.intercept, ref.intercept, rtol=1e-10)
    x = np.vstack([sol.coef, sol.intercept[None, :]])
    H, r = path.system(0.1 * 2.0**-80), path.rhs_
    np.testing.assert_allclose(H @ x, r, rtol=1e-8, atol=1e-12 * np.abs(r).max())


def test_slmm_at_small_scale(moons):
    """SLMM's cone program was not solved at X * 1e-150 (absolute solver tolerances)."""
    from structreg import SLMM

    X, y = moons
    ref = SLMM().fit(X, y)
    est = SLMM().fit(X * 2.0**-500, y)
    np.testing.assert_allclose(est.coef_ * 2.0**-500, ref.coef_, rtol=1e-6)
    np.testing.assert_array_equal(est.predict(X * 2.0**-500), ref.predict(X))


@pytest.mark.parametrize("e", [1000, -1000])
def test_graphs_and_clusters_do_not_depend_on_the_scale(e):
    """Data at 2^+-1000, whose squared distances over- / underflow: the same kNN graphs
    (heat weights, a given width, cosine), Ward clusters and fuzzy c-means as at unit scale
    (the graph builder crashed with "cannot reshape array", Ward with scipy's "condensed
    distance matrix must contain only finite values")."""
    from structreg.clustering import FuzzyCMeans, class_clusters
    from structreg.structure.graphs import knn_graph, unit_rows

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 3)), np.arange(40) % 2
    s = 2.0**e
    for kw in (dict(weights="heat"), dict(weights="heat", metric="cosine")):
        assert abs(knn_graph(X * s, 5, **kw) - knn_graph(X, 5, **kw)).max() == 0
    np.testing.assert_array_equal(unit_rows(X * s), unit_rows(X))
    np.testing.assert_array_equal(class_clusters(X * s, y)[0], class_clusters(X, y)[0])
    fcm, ref = FuzzyCMeans(3, random_state=0).fit(X * s), FuzzyCMeans(3, random_state=0).fit(X)
    np.testing.assert_allclose(fcm.cluster_centers_, ref.cluster_centers_ * s, rtol=1e-12)
    np.testing.assert_array_equal(fcm.predict(X * s), ref.predict(X))


def test_heat_width_is_read_in_the_data_units():
    from structreg.structure.graphs import knn_graph, neighbor_scale

    X = np.random.default_rng(0).normal(size=(40, 3))
    s = 2.0**600
    graph = knn_graph(X * s, 5, weights="heat", t=2.0 * s)  # t / s^2 = 2 / s
    assert abs(graph - knn_graph(X, 5, weights="heat", t=2.0 / s)).max() == 0
    assert neighbor_scale(X * 2.0**500) == neighbor_scale(X) * 2.0**1000
    with pytest.raises(ValueError, match="mean squared neighbour distance .* not representable"):
        neighbor_scale(X * 2.0**1000)


# -- issue 20: non-finite kernel values, coefficients and decision values -------------------------


def test_poly_kernel_with_gamma_scale_on_low_variance_data(moons):
    """gamma="scale" on data of variance ~1e-220 gives gamma ~ 1e220: the decision values
    on points of unit scale were NaN while predict returned a class."""
    X, y = moons
    clf = RLSC(kernel="poly").fit(X * 1e-110, y)
    np.testing.assert_array_equal(clf.predict(X * 1e-110), RLSC(kernel="poly").fit(X, y).predict(X))
    message = (
        r"kernel values are not finite .*kernel='poly' with gamma=.*e\+21\d.*gamma='scale' "
        r"gave gamma=.* for training data of variance .*e-22\d"
    )
    for method in (clf.decision_function, clf.predict):
        with pytest.raises(ValueError, match=message):
            method(X)


def test_kernel_callable_returning_nan_is_named(moons):
    from structreg.kernels import kernel_matrix

    X, _ = moons

    def broken(A, B):
        return np.full((len(A), len(B)), np.nan)

    with pytest.raises(ValueError, match="the kernel callable 'broken' returned them"):
        kernel_matrix(X, kernel=broken)


def test_non_finite_decision_values_are_refused():
    """Outputs that overflow are an error, never a class read off NaN / inf."""
    from structreg import StructuralRegressor

    X = np.random.default_rng(0).normal(size=(30, 2))
    reg = StructuralRegressor(kernel="linear").fit(X, X[:, 0] * 1e200)
    with pytest.raises(ValueError, match="StructuralRegressor's decision values are not finite"):
        reg.predict(X * 1e150)


def test_non_finite_coefficients_are_refused(moons, monkeypatch):
    """A solver that returns NaN coefficients is caught where the solution is stored."""
    from structreg.models._losses import SquareLoss

    original = SquareLoss.solve_grid

    def nan_solver(*args, **kwargs):
        sols = original(*args, **kwargs)
        for sol in sols:
            sol.coef[:] = np.nan
        return sols

    monkeypatch.setattr(SquareLoss, "solve_grid", nan_solver)
    X, y = moons
    with pytest.raises(ValueError, match="RLSC's fitted coefficients are not finite"):
        RLSC().fit(X, y)


def test_kernel_too_large_for_libsvm_is_named(moons):
    """Gram values beyond float32 overflow libsvm's kernel cache ("The dual coefficients or
    intercepts are not finite" from inside scikit-learn's SVC)."""
    X, y = moons
    clf = StructuralClassifier(loss="hinge", kernel="poly", gamma=1e30)
    with pytest.raises(ValueError, match="Gram matrix handed to libsvm has values up to .*e\\+"):
        clf.fit(X, y)


def test_deformed_kernel_broken_by_rounding_says_why(moons):
    from structreg import SRSVM

    X, y = moons
    with pytest.raises(ValueError, match="rounding errors of a kernel of values this large"):
        SRSVM(kernel="poly", gamma=1e30).fit(X, y)
