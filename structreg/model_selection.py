"""Cross-validation and scoring for semi-supervised estimators.

scikit-learn's splitters know nothing about unlabeled samples: with ``GridSearchCV`` and
``KFold`` the unlabeled points that fall in a test fold are dropped from that fold's training
set (wasting them), and the test folds contain unlabeled points that must not be scored.

This module provides

- :class:`SemiSupervisedKFold`, a splitter that cuts only the *labeled* samples into folds
  and puts *every* unlabeled sample in every training set; test sets are labeled only;
- :func:`make_labeled_scorer` and :data:`labeled_accuracy_scorer`, scorers that score only
  the labeled samples of ``(X, y)``, so that they are safe with any splitter (including the
  training-set scores of ``return_train_score=True``);
- :func:`semi_supervised_grid_search`, a ``GridSearchCV`` wired with both.

Unlabeled samples are marked as in :mod:`structreg.models`: ``-1`` in numeric label arrays,
``None`` in object (e.g. string) label arrays, and missing values (NaN, None, ``pd.NA``: a
pandas label Series with missing entries) in any (see
:func:`structreg.models._base.is_unlabeled`).

Examples
--------
>>> import numpy as np
>>> from sklearn.datasets import make_moons
>>> from structreg import LapRLSC
>>> from structreg.model_selection import semi_supervised_grid_search
>>> X, y = make_moons(200, noise=0.05, random_state=0)
>>> y_semi = np.full_like(y, -1)
>>> labeled = np.r_[np.flatnonzero(y == 0)[:6], np.flatnonzero(y == 1)[:6]]
>>> y_semi[labeled] = y[labeled]
>>> search = semi_supervised_grid_search(
...     LapRLSC(gamma=5.0, gamma_A=1e-4), {"gamma_I": [0.0, 1e4]}, n_splits=3, random_state=0
... )
>>> search.fit(X, y_semi).best_params_
{'gamma_I': 10000.0}
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.metrics import accuracy_score, make_scorer
from sklearn.model_selection import BaseCrossValidator, GridSearchCV, KFold, StratifiedKFold
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import check_consistent_length

from .models._base import UNLABELED, is_unlabeled, missing_labels

__all__ = [
    "SemiSupervisedKFold",
    "labeled_accuracy_scorer",
    "make_labeled_scorer",
    "semi_supervised_grid_search",
]


def _as_label_array(y: Any) -> np.ndarray:
    y = np.asarray(y)
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


class _LabeledScorer:
    """Scorer ``scorer(estimator, X, y)`` that evaluates a wrapped scorer on labeled samples."""

    def __init__(self, scorer: Callable, unlabeled_label: Any = UNLABELED) -> None:
        self._scorer = scorer
        self._unlabeled_label = unlabeled_label

    def __call__(
        self, estimator: Any, X: Any, y: Any, sample_weight: Any = None, **kwargs: Any
    ) -> float:
        if y is None:
            raise ValueError("a labeled scorer needs the true labels y; got y=None")
        y = _as_label_array(y)
        keep = ~_unlabeled_mask(y, self._unlabeled_label)
        if not keep.any():
            raise ValueError(
                f"cannot score: none of the {y.shape[0]} samples is labeled (all are marked "
                f"{self._unlabeled_label!r} or missing); with a plain splitter, use "
                "SemiSupervisedKFold so that test folds hold labeled samples"
            )
        X = _safe_indexing(X, keep)
        if sample_weight is not None:
            kwargs["sample_weight"] = _safe_indexing(sample_weight, keep)
        return self._scorer(estimator, X, y[keep], **kwargs)

    def __repr__(self) -> str:
        return f"make_labeled_scorer({self._scorer!r}, unlabeled_label={self._unlabeled_label!r})"


def make_labeled_scorer(
    score_func: Callable = accuracy_score,
    *,
    unlabeled_label: Any = UNLABELED,
    response_method: str | Sequence[str] = "predict",
    greater_is_better: bool = True,
    **kwargs: Any,
) -> Callable[..., float]:
    """Make a scorer that scores only the labeled samples of ``(X, y)``.

    The returned callable has the scorer signature ``scorer(estimator, X, y)``
    (plus optional ``sample_weight``), so it can be passed as ``scoring=`` to
    ``GridSearchCV``, ``cross_validate``, ... .  It drops the samples whose label marks them
    unlabeled (``unlabeled_label``, default -1, or a missing value: None, NaN, ``pd.NA``) and
    applies ``sklearn.metrics.make_scorer(score_func, ...)`` to the rest, which makes it safe
    with any splitter, and for training-set scores (``return_train_score=True``).

    Parameters
    ----------
    score_func : callable, default=accuracy_score
        Metric ``score_func(y_true, y_pred, **kwargs)``.
    unlabeled_label : object, default=-1
        The label that marks an unlabeled sample (missing values -- ``None``, NaN,
        ``pd.NA`` -- always do).  ``None``: only missing values, so that -1 can be a real
        class.
    response_method : str or list of str, default="predict"
        Estimator method whose output is passed to ``score_func`` (see ``make_scorer``).
    greater_is_better : bool, default=True
        False negates the score, as in ``make_scorer``.
    **kwargs
        Extra keyword arguments of ``score_func``.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y, sample_weight=None)``; raises ValueError when ``y`` is
        None or has no labeled sample.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.metrics import f1_score
    >>> from structreg import LapRLSC
    >>> from structreg.model_selection import make_labeled_scorer
    >>> X = np.array([[0.0], [0.1], [1.0], [1.1], [0.5]])
    >>> y = np.array([0, 0, 1, 1, -1])
    >>> clf = LapRLSC(gamma_I=0.0, fit_intercept=True).fit(X, y)
    >>> make_labeled_scorer(f1_score)(clf, X, y)
    1.0
    """
    scorer = make_scorer(
        score_func,
        response_method=response_method,
        greater_is_better=greater_is_better,
        **kwargs,
    )
    return _LabeledScorer(scorer, unlabeled_label)


labeled_accuracy_scorer = make_labeled_scorer()
"""Accuracy on the labeled samples only (-1 and missing entries of ``y`` are ignored)."""


def semi_supervised_grid_search(
    estimator: Any,
    param_grid: Mapping[str, Sequence] | Sequence[Mapping[str, Sequence]],
    *,
    n_splits: int = 5,
    stratify: bool = True,
    random_state: int | np.random.RandomState | None = None,
    n_jobs: int | None = None,
    unlabeled_label: Any = UNLABELED,
    **kwargs: Any,
) -> GridSearchCV:
    """``GridSearchCV`` with :class:`SemiSupervisedKFold` and a labeled-only scorer.

    Every candidate is trained on the labeled training folds plus all unlabeled samples and
    scored on held-out labeled samples only; the best candidate is refit on all of ``(X, y)``
    (labeled and unlabeled).

    Parameters
    ----------
    estimator : estimator
        A semi-supervised classifier such as :class:`structreg.LapRLSC`.
    param_grid : dict or list of dicts
        As in ``GridSearchCV``.
    n_splits : int, default=5
        Folds of the labeled samples.
    stratify : bool, default=True
        Stratify the folds by class (see :class:`SemiSupervisedKFold`).
    random_state : int, RandomState instance or None, default=None
        Seeds the (shuffled) folds.
    n_jobs : int or None, default=None
        As in ``GridSearchCV``.
    unlabeled_label : object, default=-1
        Marker of unlabeled samples for the splitter and the default scorer.
    **kwargs
        Other ``GridSearchCV`` arguments (``scoring``, ``refit``, ``verbose``,
        ``return_train_score``, ...).  ``scoring`` defaults to
        ``make_labeled_scorer(unlabeled_label=unlabeled_label)`` (accuracy) and ``refit`` to
        True; ``cv`` cannot be given (use ``GridSearchCV`` directly for that).

    Returns
    -------
    search : GridSearchCV
        Unfitted; call ``search.fit(X, y)``.

    Examples
    --------
    >>> from structreg import LapRLSC
    >>> from structreg.model_selection import semi_supervised_grid_search
    >>> search = semi_supervised_grid_search(LapRLSC(), {"gamma_I": [0.0, 1.0]}, n_splits=3)
    >>> search.cv.get_n_splits(), search.refit
    (3, True)
    """
    if "cv" in kwargs:
        raise TypeError(
            "semi_supervised_grid_search sets cv itself; use GridSearchCV(..., cv=...) to "
            "choose another splitter"
        )
    kwargs.setdefault("scoring", make_labeled_scorer(unlabeled_label=unlabeled_label))
    kwargs.setdefault("refit", True)
    cv = SemiSupervisedKFold(
        n_splits,
        stratify=stratify,
        random_state=random_state,
        unlabeled_label=unlabeled_label,
    )
    return GridSearchCV(estimator, param_grid, cv=cv, n_jobs=n_jobs, **kwargs)
