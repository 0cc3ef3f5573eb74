"""Input types: pandas labels with missing values, feature names and pandas output of the
kernel maps, and precomputed kernels."""

import numpy as np
import pytest
from sklearn.datasets import make_moons

from structreg import GFHF, RLSC, LapRLSC, StructuralClassifier
from structreg.model_selection import SemiSupervisedKFold, labeled_accuracy_scorer
from structreg.models import is_unlabeled
from structreg.models._base import missing_as_unlabeled, missing_labels


@pytest.fixture(scope="module")
def semi():
    """Two moons with three labels per class: the -1 / None conventions and the labels."""
    X, y = make_moons(60, noise=0.05, random_state=0)
    labeled = np.r_[np.flatnonzero(y == 0)[:3], np.flatnonzero(y == 1)[:3]]
    y_int = np.full(60, -1)
    y_int[labeled] = y[labeled]
    y_obj = np.full(60, None, dtype=object)
    y_obj[labeled] = np.array(["a", "b"], dtype=object)[y[labeled]]
    return X, y_int, y_obj


def _pandas_labels(pd, y_int, y_obj):
    """The pandas forms of the same labels: (name, Series, the -1/None convention)."""
    nan_obj = [np.nan if v is None else v for v in y_obj]
    return [
        ("str with None", pd.Series(list(y_obj)), y_obj),
        ("object with NaN", pd.Series(nan_obj, dtype=object), y_obj),
        ("string with NA", pd.Series(list(y_obj), dtype="string"), y_obj),
        ("Int64 with NA", pd.Series([pd.NA if v < 0 else v for v in y_int], dtype="Int64"), y_int),
        ("float with NaN", pd.Series([np.nan if v < 0 else float(v) for v in y_int]), y_int),
    ]


@pytest.mark.parametrize("Estimator", [LapRLSC, GFHF])
def test_pandas_missing_labels_fit_as_unlabeled(semi, Estimator):
    pd = pytest.importorskip("pandas")
    X, y_int, y_obj = semi
    for name, series, reference in _pandas_labels(pd, y_int, y_obj):
        expected = Estimator().fit(X, reference)
        clf = Estimator().fit(X, series)
        np.testing.assert_array_equal(clf.classes_, expected.classes_, err_msg=name)
        np.testing.assert_array_equal(clf.predict(X), expected.predict(X), err_msg=name)
        np.testing.assert_array_equal(clf.transduction_, expected.transduction_, err_msg=name)
        assert clf.score(X, series) == expected.score(X, reference), name
    # a nullable integer Series keeps integer classes
    series = _pandas_labels(pd, y_int, y_obj)[3][1]
    assert Estimator().fit(X, series).classes_.dtype.kind == "i"


def test_missing_labels_and_markers():
    pd = pytest.importorskip("pandas")
    y = np.array(["a", None, np.nan, pd.NA, "b"], dtype=object)
    np.testing.assert_array_equal(missing_labels(y), [False, True, True, True, False])
    np.testing.assert_array_equal(is_unlabeled(np.array([0.0, np.nan, -1.0])), [0, 1, 1])
    np.testing.assert_array_equal(is_unlabeled(pd.Series([1, pd.NA], dtype="Int64")), [0, 1])
    filled = missing_as_unlabeled(pd.Series([1, pd.NA, 0], dtype="Int64"))
    assert filled.dtype == np.int64 and filled.tolist() == [1, -1, 0]
    plain = np.array([0, 1, -1])
    assert missing_as_unlabeled(plain) is plain  # nothing missing: y as given


def test_float_nan_is_unlabeled_like_minus_one(semi):
    X, y_int, _ = semi
    y_nan = np.where(y_int < 0, np.nan, y_int.astype(float))
    expected = LapRLSC().fit(X, y_int.astype(float))
    np.testing.assert_array_equal(LapRLSC().fit(X, y_nan).predict(X), expected.predict(X))


def test_missing_label_under_an_explicit_mask_is_refused(semi):
    X, y_int, y_obj = semi
    y = y_obj.copy()
    mask = is_unlabeled(y)
    y[np.flatnonzero(~mask)[0]] = None  # missing, yet the mask says labeled
    with pytest.raises(ValueError, match="missing label.*marks as labeled"):
        LapRLSC().fit(X, y, unlabeled=mask)
    # the mask alone decides otherwise: -1 is a real class here
    y_minus = np.where(y_int < 0, 7, y_int - 1)  # classes -1 and 0, unlabeled 7
    clf = LapRLSC().fit(X, y_minus, unlabeled=y_minus == 7)
    np.testing.assert_array_equal(clf.classes_, [-1, 0])


def test_supervised_estimators_refuse_missing_labels(semi):
    X, y_int, y_obj = semi
    for y in (np.where(y_int < 0, np.nan, y_int.astype(float)), y_obj):
        with pytest.raises(ValueError, match="RLSC is supervised.*missing label"):
            RLSC().fit(X, y)
    pd = pytest.importorskip("pandas")
    with pytest.raises(ValueError, match="RLSC is supervised.*missing label"):
        RLSC().fit(X, pd.Series(list(y_obj), dtype="string"))


def test_model_selection_masks_missing_labels(semi):
    pd = pytest.importorskip("pandas")
    X, y_int, y_obj = semi
    series = pd.Series(list(y_obj), dtype="string")
    cv = SemiSupervisedKFold(3, random_state=0)
    splits = list(cv.split(X, series))
    expected = list(cv.split(X, y_obj))
    for (train, test), (train_ref, test_ref) in zip(splits, expected, strict=True):
        np.testing.assert_array_equal(train, train_ref)
        np.testing.assert_array_equal(test, test_ref)
    clf = StructuralClassifier().fit(X, series)
    assert labeled_accuracy_scorer(clf, X, series) == clf.score(X, y_obj)
    assert not np.isin(np.concatenate([t for _, t in splits]), np.flatnonzero(y_int < 0)).any()


# -- feature names and pandas output of the kernel maps ------------------------------------


def _kernel_maps(X):
    from structreg.kernels import (
        EmpiricalKernelMap,
        KernelExpansion,
        KernelFeatureMap,
        LandmarkFeatureMap,
    )

    return [
        KernelFeatureMap(gamma=0.5),
        EmpiricalKernelMap(gamma=0.5),
        LandmarkFeatureMap(landmarks=X[:5], gamma=0.5),
        KernelExpansion(gamma=0.5),
    ]


def test_kernel_maps_name_their_output_columns(semi):
    X = semi[0]
    for feature_map in _kernel_maps(X):
        Z = feature_map.fit_transform(X)
        prefix = type(feature_map).__name__.lower()
        names = feature_map.get_feature_names_out()
        assert names.tolist() == [f"{prefix}{i}" for i in range(Z.shape[1])]
        assert Z.shape[1] == feature_map.n_components_


def test_kernel_maps_set_output_pandas_in_a_pipeline(semi):
    pd = pytest.importorskip("pandas")
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y_int, _ = semi
    frame = pd.DataFrame(X, columns=["u", "v"], index=np.arange(100, 160))
    y = (X[:, 0] > 0.5).astype(int)
    for feature_map in _kernel_maps(X):
        pipe = make_pipeline(StandardScaler(), feature_map, LogisticRegression())
        pipe.set_output(transform="pandas").fit(frame, y)
        out = pipe[:-1].transform(frame)
        assert isinstance(out, pd.DataFrame)
        assert out.columns.tolist() == feature_map.get_feature_names_out().tolist()
        np.testing.assert_array_equal(out.index, frame.index)
        plain = make_pipeline(StandardScaler(), feature_map).set_output(transform="default")
        np.testing.assert_allclose(out.to_numpy(), plain.fit(frame, y).transform(frame))


def test_models_keep_array_feature_maps_under_global_pandas_output(semi):
    pytest.importorskip("pandas")
    from sklearn import config_context

    from structreg import EKM, LSSVM, SSDRWang

    X, y_int, _ = semi
    y = (X[:, 0] > 0.5).astype(int)
    for model in (LapRLSC(), LSSVM(), SSDRWang(), EKM()):
        expected = model.fit(X, y).decision_function(X)
        with config_context(transform_output="pandas"):
            np.testing.assert_allclose(model.fit(X, y).decision_function(X), expected)
