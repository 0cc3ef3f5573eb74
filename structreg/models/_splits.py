"""The splitter that keeps unlabeled samples in every training fold.

:class:`SemiSupervisedKFold` is public in :mod:`structreg.model_selection` (with the scorers
and the grid search wired with it); it lives here, in the model layer, because the
cross-validated estimators of :mod:`structreg.models.cv` use it as their default folds and
imports only go down the layers.
"""

from __future__ import annotations

from collections.abc import Iterator
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.model_selection import BaseCrossValidator, KFold, StratifiedKFold
from sklearn.utils.validation import check_consistent_length

from .._compat import label_array
from ._base import UNLABELED, is_unlabeled, missing_labels

__all__ = ["SemiSupervisedKFold"]


def _as_label_array(y: Any) -> np.ndarray:
    y = label_array(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"y must be 1-dimensional, got an array of shape {y.shape}")
    return y


def _unlabeled_mask(y: np.ndarray, unlabeled_label: Any = UNLABELED) -> np.ndarray:
    """Entries of ``y`` that mark unlabeled samples: ``unlabeled_label``, or a missing value
    (NaN, None, ``pd.NA``; :func:`~structreg.models._base.missing_labels`)."""
    if type(unlabeled_label) is int and unlabeled_label == UNLABELED:
        return is_unlabeled(y)  # the estimators' own rule
    missing = missing_labels(y)
    if unlabeled_label is None or isinstance(unlabeled_label, (bool, np.bool_)):
        return missing
    if y.dtype.kind == "O":
        marked = [
            not m and type(v) is not bool and v == unlabeled_label
            for v, m in zip(y, missing, strict=True)
        ]
        return missing | np.array(marked, dtype=bool)
    numeric_y, numeric_label = y.dtype.kind in "iuf", isinstance(unlabeled_label, Real)
    if numeric_y == numeric_label:
        return missing | np.asarray(y == unlabeled_label, dtype=bool)
    return missing


class SemiSupervisedKFold(BaseCrossValidator):
    """K-fold over the labeled samples; every unlabeled sample is in every training set.

    The labeled samples are cut into ``n_splits`` folds (stratified by class with
    :class:`~sklearn.model_selection.StratifiedKFold` when ``stratify``, else
    :class:`~sklearn.model_selection.KFold`).  Split ``k`` yields

    - ``train``: the labeled samples of the other folds **plus all unlabeled samples**;
    - ``test``: the labeled samples of fold ``k`` (never an unlabeled one).

    So the test folds partition the labeled samples, no unlabeled point is wasted, and no
    unlabeled point is scored.  Pair it with :data:`labeled_accuracy_scorer` (or the
    estimators' own ``score``, which ignores unlabeled markers) so that training-set scores
    are also computed on labeled samples only.

    Parameters
    ----------
    n_splits : int, default=5
        Number of folds; at least 2.
    stratify : bool, default=True
        Preserve the class proportions of the labeled samples in each fold.  Every class
        then needs at least ``n_splits`` labeled samples.
    shuffle : bool, default=True
        Shuffle the labeled samples before cutting them into folds (within each class when
        ``stratify``).  Note that the default differs from scikit-learn's ``KFold``: labeled
        samples are often ordered by class or by acquisition.
    random_state : int, RandomState instance or None, default=None
        Seeds the shuffling; only allowed with ``shuffle=True``.  Pass an int for
        reproducible folds.
    unlabeled_label : object, default=-1
        The label value that marks an unlabeled sample.  Missing values (``None``, NaN,
        ``pd.NA``, e.g. from a pandas label Series) always mark unlabeled samples as well;
        with ``unlabeled_label=None`` they are the only marker, so that -1 can be a real
        class.
        The structreg estimators themselves only recognise -1 / missing values: with another
        marker, also give them the mask, e.g. ``search.fit(X, y, unlabeled=(y == marker))``
        (``GridSearchCV`` slices such per-sample fit parameters per split).

    Notes
    -----
    The estimator must treat the markers in its training labels as unlabeled samples:
    :class:`~structreg.LapRLSC`, :class:`~structreg.LapSVM` and
    :class:`~structreg.StructuralClassifier` do, whereas the fully supervised
    :class:`~structreg.RLSC` and most scikit-learn classifiers would learn -1 as a class
    (use e.g. ``LapRLSC(gamma_I=0)`` as the supervised baseline).  ``groups`` is accepted by
    :meth:`split` for API compatibility and ignored.

    Examples
    --------
    >>> import numpy as np
    >>> from structreg.model_selection import SemiSupervisedKFold
    >>> y = np.array([0, 0, 1, 1, -1, -1, 0, 1])
    >>> cv = SemiSupervisedKFold(2, random_state=0)
    >>> for train, test in cv.split(np.zeros((8, 1)), y):
    ...     print("test:", test.tolist(), "| unlabeled 4, 5 in train:", {4, 5} <= set(train))
    test: [1, 3, 6] | unlabeled 4, 5 in train: True
    test: [0, 2, 7] | unlabeled 4, 5 in train: True
    """

    def __init__(
        self,
        n_splits: int = 5,
        *,
        stratify: bool = True,
        shuffle: bool = True,
        random_state: int | np.random.RandomState | None = None,
        unlabeled_label: Any = UNLABELED,
    ) -> None:
        if not isinstance(n_splits, Integral) or isinstance(n_splits, bool):
            raise ValueError(f"n_splits must be an integer, got {n_splits!r}")
        if n_splits < 2:
            raise ValueError(f"n_splits must be at least 2, got {n_splits}")
        if not isinstance(shuffle, (bool, np.bool_)):
            raise TypeError(f"shuffle must be True or False, got {shuffle!r}")
        if not shuffle and random_state is not None:
            raise ValueError(
                "setting a random_state has no effect since shuffle is False; leave "
                "random_state=None or set shuffle=True"
            )
        self.n_splits = int(n_splits)
        self.stratify = stratify
        self.shuffle = shuffle
        self.random_state = random_state
        self.unlabeled_label = unlabeled_label

    def get_n_splits(self, X: Any = None, y: Any = None, groups: Any = None) -> int:
        """Number of splits, ``n_splits`` (the arguments are ignored).

        Parameters
        ----------
        X, y, groups : object
            Ignored; present for API compatibility.

        Returns
        -------
        n_splits : int
        """
        return self.n_splits

    def split(
        self, X: Any, y: Any = None, groups: Any = None
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Generate ``(train, test)`` index arrays.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Only its number of samples is used.
        y : array-like of shape (n_samples,)
            Labels, unlabeled samples marked by ``unlabeled_label`` (or None).  Required.
        groups : object, default=None
            Ignored.

        Yields
        ------
        train : ndarray of int
            Sorted indices of the labeled training folds and of all unlabeled samples.
        test : ndarray of int
            Sorted indices of the held-out labeled fold.

        Raises
        ------
        ValueError
            If ``y`` is None, if there are fewer labeled samples than ``n_splits``, or, with
            ``stratify``, if some class has fewer labeled samples than ``n_splits``.
        """
        if y is None:
            raise ValueError(
                "SemiSupervisedKFold needs the labels y to tell labeled from unlabeled "
                "samples; got y=None"
            )
        y = _as_label_array(y)
        check_consistent_length(X, y)
        unlabeled = _unlabeled_mask(y, self.unlabeled_label)
        labeled_idx = np.flatnonzero(~unlabeled)
        unlabeled_idx = np.flatnonzero(unlabeled)
        n_labeled = labeled_idx.size
        if n_labeled < self.n_splits:
            raise ValueError(
                f"cannot split {n_labeled} labeled sample(s) into n_splits={self.n_splits} "
                f"folds; lower n_splits to at most {n_labeled} or label more samples"
            )
        # integer class codes: StratifiedKFold rejects e.g. object arrays of numbers
        classes, codes, counts = np.unique(y[labeled_idx], return_inverse=True, return_counts=True)
        random_state = self.random_state if self.shuffle else None
        if self.stratify:
            too_few = counts < self.n_splits
            if too_few.any():
                details = ", ".join(
                    f"class {c!r} has {k}"
                    for c, k in zip(classes[too_few].tolist(), counts[too_few], strict=True)
                )
                raise ValueError(
                    f"stratified SemiSupervisedKFold needs at least n_splits={self.n_splits} "
                    f"labeled samples per class, but {details} labeled sample(s); lower "
                    f"n_splits to at most {counts.min()} or use stratify=False"
                )
            splitter: BaseCrossValidator = StratifiedKFold(
                self.n_splits, shuffle=self.shuffle, random_state=random_state
            )
        else:
            splitter = KFold(self.n_splits, shuffle=self.shuffle, random_state=random_state)
        for train_lab, test_lab in splitter.split(np.zeros((n_labeled, 1)), codes.ravel()):
            train = np.sort(np.concatenate([labeled_idx[train_lab], unlabeled_idx]))
            test = np.sort(labeled_idx[test_lab])
            yield train, test
