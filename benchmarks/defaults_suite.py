"""Defaults suite: every semi-supervised estimator at its default parameters, on every data set
the package ships and on synthetic families, against LabelSpreading, supervised RLSC and chance.

Protocol.  Each data set is standardised (zero mean, unit variance per column; constant columns
dropped).  A *draw* labels ``L`` random points of every class (``L`` = 3, 10, 40; at most half
of a class, classes of fewer than 4 points are dropped) and hides the rest; the score is the
accuracy on the hidden points.  Columns:

- ``chance``: guessing with the labeled points' class proportions (its expected accuracy);
- ``RLSC``: ``RLSC()`` trained on the labeled points only;
- ``LS``: scikit-learn's ``LabelSpreading(kernel="knn")`` at its defaults;
- one column per estimator at its defaults (``random_state`` = the draw).

Every method sees the same draws, so the comparisons are paired: a cell is marked ``v`` when
the estimator is significantly below LabelSpreading (one-sided paired t-test over the draws,
p < 0.05), ``x`` when it is significantly below chance, and ``g`` when more than one draw in
ten is below guessing where LabelSpreading has none (a default that gives most points to the
wrong class now and then is as bad as one that is wrong on average).  Each cell shows ``(k)``
when ``k`` of its draws are below guessing, and each fit records whether the
degenerate-solution warning fired (``warned``); the report gives the warning's rate on the
draws below guessing and on the others.

Results go to ``<out>/results.jsonl`` one fit per line; a rerun skips what is there (resumable)
and prints the table (``<out>/defaults_suite.md``).

Choosing a default by leave-one-dataset-out: ``--choose "LapSVM:gamma_A=1e-4,1e-2,1"`` adds
one column per candidate value and prints, for every data set, the value picked on *the other
sets* (the fewest cells marked v or x there, then the largest mean accuracy gain over
LabelSpreading) and how that pick does on the set left out.

A method is a class name with optional parameters, ``"LapSVM(gamma_A=1e-2;gamma=graph)"``
(``;`` or ``,`` between parameters; in ``--methods``, whose items are separated by commas,
use ``;``).  Two suite-only parameters set what ``gamma_I="auto"`` means for the manifold
models (LapRLSC, LapSVM, SSDRWu): ``graph_weight=w`` for ``w f^T L f / vol(W)`` and
``graph_weight_per_point=w`` for ``w (n / l) f^T L f / vol(W)``.  The graph weights of the
defaults were chosen with them, e.g.

    python benchmarks/defaults_suite.py --tier quick --choose \
        "LapSVM(graph_weight=10),LapSVM(graph_weight_per_point=1),LapSVM(gamma_A=1e-2;graph_weight_per_point=0.1)"

(``--choose`` also takes such a list of one estimator's candidate methods).

    python benchmarks/defaults_suite.py [--tier quick|standard|full] [--sets iris,moons_1e3]
        [--labels 3,10,40] [--draws 10] [--methods GFHF,LapSVM] [--n-jobs 2] [--out DIR]
        [--choose "Estimator:param=v1,v2,..."]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's structreg

import numpy as np  # noqa: E402
from joblib import Parallel, delayed  # noqa: E402
from scipy import stats  # noqa: E402
from sklearn.datasets import make_blobs, make_classification, make_moons  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.semi_supervised import LabelSpreading  # noqa: E402

import structreg  # noqa: E402
from structreg.datasets import list_datasets, load_dataset  # noqa: E402
from structreg.exceptions import DegenerateSolutionWarning  # noqa: E402

ESTIMATORS = [
    "LapRLSC",
    "LapSVM",
    "DALapRLSC",
    "SparseRLSC",
    "GFHF",
    "PoissonLearning",
    "SSDRWu",
    "SSDRWang",
    "LapRLSCCV",
]
"""The semi-supervised estimators of ``structreg.__all__`` (``-1`` marks unlabeled points)."""

REFERENCES = ["chance", "RLSC", "LS"]
ALPHA = 0.05
SLOW_ON_LARGE = {"LapRLSCCV": 2000, "SparseRLSC": 5_000, "SSDRWang": 20_000, "SSDRWu": 20_000}
"""Estimators skipped on sets of more points than this (their default cost grows too fast for
a suite run; the scale guide covers them)."""


# -- data sets ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    name: str
    tier: str  # the smallest tier that runs it
    make: object  # () -> (X, y)
    draws: int | None = None  # fewer draws for very large sets


def _standardised(X: np.ndarray) -> np.ndarray:
    X = np.asarray(X, dtype=float)
    X = X[:, np.ptp(X, axis=0) > 0]
    return StandardScaler().fit_transform(X)


def _packaged(name: str):
    def make():
        X, y = load_dataset(name, return_X_y=True)
        y = np.unique(np.asarray(y).astype(str), return_inverse=True)[1]
        return _standardised(X), y

    return make


def _moons(n: int, noise: float = 0.1, ratio: int = 1, extra_dims: int = 0):
    def make():
        rng = np.random.default_rng(0)
        per_moon = n * ratio // (ratio + 1)
        X, y = make_moons(2 * per_moon, noise=noise, random_state=0)
        if ratio > 1:  # keep every point of moon 0 and one in `ratio` of moon 1
            one = np.flatnonzero(y == 1)
            keep = np.r_[np.flatnonzero(y == 0), one[: len(one) // ratio]]
            X, y = X[keep], y[keep]
        if extra_dims:
            X = np.column_stack([X, 0.3 * rng.normal(size=(len(X), extra_dims))])
        return _standardised(X), y

    return make


def _mixture(n: int, ratio: int = 1, d: int = 10, blobs: int = 8, classes: int = 4):
    """Gaussian blobs, several per class (a class is not one cluster); with ``ratio`` > 1 the
    first class has ``ratio`` times the points of each other class."""

    def make():
        rng = np.random.default_rng(1)
        centres = rng.normal(size=(blobs, d)) * 3.0
        owner = np.arange(blobs) % classes
        weights = np.where(owner == 0, float(ratio), 1.0)
        counts = rng.multinomial(n, weights / weights.sum())
        X, blob = make_blobs(counts.tolist(), centers=centres, random_state=1)
        return _standardised(X), owner[blob]

    return make


def _weak_features(n: int, shares: tuple, features: int, informative: int, separation: float = 1.0):
    """scikit-learn's ``make_classification``: classes of unequal ``shares``, a few
    ``informative`` features (two clusters per class) among ``features`` that are mostly noise,
    2 % of the labels flipped -- the unequal classes *and* weak features where a default can
    give the small class most points."""

    def make():
        X, y = make_classification(
            n_samples=n,
            n_features=features,
            n_informative=informative,
            n_redundant=min(2, features - informative),
            n_classes=len(shares),
            n_clusters_per_class=2 if len(shares) * 2 <= 2**informative else 1,
            weights=list(shares),
            flip_y=0.02,
            class_sep=separation,
            random_state=2,
        )
        return _standardised(X), y

    return make


def _compact_minority(n: int, share: float, d: int, spread: float = 1.3, shift: float = 0.6):
    """A compact small class inside a wider large one in ``d`` dimensions (``spread`` times
    the small class's standard deviation, centres ``shift`` apart per coordinate): in many
    dimensions the small class's points are the nearest neighbours of most points (hubs), so
    a kNN graph ties the large class to the small one and a model that trusts the graph too
    much gives the small class most points."""

    def make():
        rng = np.random.default_rng(3)
        small = int(round(n * share))
        X = np.r_[rng.normal(size=(n - small, d)) * spread + shift, rng.normal(size=(small, d))]
        y = np.r_[np.zeros(n - small, dtype=int), np.ones(small, dtype=int)]
        return _standardised(X), y

    return make


def problems() -> list[Problem]:
    out = []
    for name in list_datasets():
        size = {"usps": "standard", "coil20": "standard"}.get(name, "quick")
        out.append(Problem(name, size, _packaged(name), draws=5 if name == "usps" else None))
    out += [
        Problem("moons_1e3", "quick", _moons(1_000)),
        Problem("moons_1e4", "standard", _moons(10_000)),
        Problem("moons_1e5", "full", _moons(100_000), draws=3),
        Problem("moons_1e6", "full", _moons(1_000_000), draws=3),
        Problem("moons_1to3", "quick", _moons(1_000, ratio=3)),
        Problem("moons_1to9", "quick", _moons(2_000, ratio=9)),
        Problem("moons_noise50", "quick", _moons(1_000, extra_dims=50)),
        Problem("mixture_1e3", "quick", _mixture(1_000)),
        Problem("mixture_1e4", "standard", _mixture(10_000)),
        Problem("mixture_1to3", "quick", _mixture(1_500, ratio=3)),
        Problem("mixture_1to9", "quick", _mixture(3_000, ratio=9)),
        Problem("mixture_100d", "quick", _mixture(1_000, d=100)),
        Problem("weak_3to1_40d", "quick", _weak_features(300, (0.75, 0.25), 40, 4)),
        Problem("weak_4to1_20d", "quick", _weak_features(200, (0.8, 0.2), 20, 3)),
        Problem("weak_3to1_3d", "quick", _weak_features(300, (0.75, 0.25), 3, 2, 0.5)),
        Problem("weak_2to1_9d", "quick", _weak_features(700, (0.66, 0.34), 9, 5, 2.0)),
        Problem("weak_3class_3to1", "quick", _weak_features(600, (0.6, 0.2, 0.2), 40, 4)),
        Problem(
            "weak_4class_4to1", "quick", _weak_features(700, (4 / 7, 1 / 7, 1 / 7, 1 / 7), 30, 5)
        ),
        Problem("compact_3to1_44d", "quick", _compact_minority(270, 0.27, 44)),
        Problem("compact_4to1_19d", "quick", _compact_minority(160, 0.2, 19, 1.2, 0.5)),
    ]
    return out


TIERS = {"quick": 0, "standard": 1, "full": 2}


# -- one draw -------------------------------------------------------------------------------------


def draw_labels(y: np.ndarray, per_class: int, seed: int) -> np.ndarray:
    """``y`` with all but ``min(per_class, n_c // 2)`` random points of each class set to -1."""
    rng = np.random.default_rng(seed)
    y_semi = np.full_like(y, -1)
    for c in np.unique(y):
        members = np.flatnonzero(y == c)
        take = rng.choice(members, min(per_class, len(members) // 2), replace=False)
        y_semi[take] = c
    return y_semi


def chance(y: np.ndarray, y_semi: np.ndarray) -> float:
    """Expected accuracy on the hidden points of guessing with the labeled proportions."""
    hidden = y[y_semi == -1]
    classes = np.unique(y)
    labeled = np.array([np.mean(y_semi[y_semi != -1] == c) for c in classes])
    truth = np.array([np.mean(hidden == c) for c in classes])
    return float(labeled @ truth)


def parse_method(method: str):
    """``"Name"`` or ``"Name(p=v,...)"`` (or ``;`` between parameters) -> (class name,
    {p: v})."""
    if "(" not in method:
        return method, {}
    name, args = method[:-1].split("(", 1)
    params = {}
    for item in filter(None, args.replace(";", ",").split(",")):
        key, raw = item.split("=")
        params[key] = _value(raw)
    return name, params


GRAPH_WEIGHT_RULES = {"graph_weight": False, "graph_weight_per_point": True}
"""Suite-only parameters: what ``gamma_I="auto"`` means for a manifold model, ``w f^T L f /
vol(W)`` or, per point, ``w (n / l) f^T L f / vol(W)`` (``structreg.models.manifold``)."""


def make_model(method: str):
    """The estimator a method names, with any suite-only graph-weight rule applied."""
    name, params = parse_method(method)
    rules = {k: params.pop(k) for k in list(params) if k in GRAPH_WEIGHT_RULES}
    model = getattr(structreg, name)(**params)
    if len(rules) > 1:
        raise ValueError(f"{method}: give one of {sorted(GRAPH_WEIGHT_RULES)}, not both")
    for key, weight in rules.items():
        if not hasattr(model, "_auto_graph_weight"):
            raise ValueError(f"{method}: {key} applies to LapRLSC, LapSVM and SSDRWu only")
        # the private knobs behind gamma_I="auto"; a candidate rule, never a public option
        model._auto_graph_weight = float(weight)
        model._auto_per_point = GRAPH_WEIGHT_RULES[key]
    return model


def _value(raw: str):
    for cast in (int, float):
        try:
            return cast(raw)
        except ValueError:
            pass
    return {"None": None, "True": True, "False": False}.get(raw, raw.strip("'\""))


def predict_hidden(method: str, X: np.ndarray, y_semi: np.ndarray, seed: int) -> np.ndarray:
    """Labels of the hidden points given by ``method``."""
    hidden = y_semi == -1
    if method == "LS":
        return LabelSpreading(kernel="knn").fit(X, y_semi).transduction_[hidden]
    name, params = parse_method(method)
    model = make_model(method)
    if "random_state" in model.get_params() and "random_state" not in params:
        model.set_params(random_state=seed)
    if name == "RLSC":
        return model.fit(X[~hidden], y_semi[~hidden]).predict(X[hidden])
    model.fit(X, y_semi)
    fitted = getattr(model, "transduction_", None)
    return fitted[hidden] if fitted is not None else model.predict(X[hidden])


def drawn(problem: Problem, per_class: int, seed: int):
    """``(X, y, y_semi)`` of one draw: the set without classes of fewer than 4 points, its
    classes coded 0..c-1, and ``y`` with all but the drawn labeled points set to -1."""
    X, y = problem.make()
    keep = np.isin(y, np.flatnonzero(np.bincount(y) >= 4))
    X, y = X[keep], np.unique(y[keep], return_inverse=True)[1]
    return X, y, draw_labels(y, per_class, seed)


def run_cell(problem: Problem, per_class: int, seed: int, methods: list[str]) -> list[dict]:
    X, y, y_semi = drawn(problem, per_class, seed)
    truth = y[y_semi == -1]
    base = {"set": problem.name, "labels": per_class, "draw": seed, "n": len(y)}
    rows = []
    for method in methods:
        t0 = time.perf_counter()
        limit = SLOW_ON_LARGE.get(parse_method(method)[0])
        if limit is not None and len(y) > limit:
            rows.append({**base, "method": method, "acc": None, "seconds": 0.0, "error": None})
            continue
        warned = None
        if method == "chance":
            acc, error = chance(y, y_semi), None
        else:
            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    acc, error = (
                        float(np.mean(predict_hidden(method, X, y_semi, seed) == truth)),
                        None,
                    )
                warned = any(issubclass(w.category, DegenerateSolutionWarning) for w in caught)
            except Exception as exc:  # recorded, shown in the table as an error
                acc, error = float("nan"), f"{type(exc).__name__}: {exc}"[:300]
        rows.append(
            {
                **base,
                "method": method,
                "acc": acc,
                "seconds": time.perf_counter() - t0,
                "error": error,
                "warned": warned,
            }
        )
    return rows


# -- the store ------------------------------------------------------------------------------------


def load_results(path: Path) -> dict:
    out = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                out[(r["set"], r["labels"], r["draw"], r["method"])] = r
    return out


# -- the table ------------------------------------------------------------------------------------


def paired_below(a: np.ndarray, b: np.ndarray) -> tuple[bool, float]:
    """Whether ``a`` is significantly below ``b`` (one-sided paired t-test), and the p value."""
    diff = a - b
    if len(diff) < 2:
        return False, float("nan")
    if np.allclose(diff, diff[0]):  # no spread: the sign decides
        return bool(diff[0] < -1e-12), 0.0 if diff[0] < -1e-12 else 1.0
    p = float(stats.ttest_rel(a, b, alternative="less").pvalue)
    return p < ALPHA, p


def below_guessing(results: dict, cell: tuple, method: str, draws: list[int]) -> int:
    """How many of the cell's draws ``method`` scores below guessing (the draw's ``chance``)."""
    count = 0
    for d in draws:
        acc = results.get((*cell, d, method), {}).get("acc")
        guess = results.get((*cell, d, "chance"), {}).get("acc")
        if acc is not None and guess is not None and acc < guess - 1e-12:
            count += 1
    return count


def too_often_below(count: int, draws: int, reference: int) -> bool:
    """The per-draw rule: more than one draw in ten below guessing where the reference
    (LabelSpreading) has none."""
    return reference == 0 and count >= 2 and count > draws / 10


def cell_stats(results: dict, cell: tuple, method: str, draws: list[int]):
    values = [results.get((*cell, d, method), {}).get("acc") for d in draws]
    if any(v is None for v in values):
        return None
    return np.array(values, dtype=float)


def table(
    results: dict, cells: list[tuple], methods: list[str], draws_of: dict
) -> tuple[str, dict]:
    """The markdown table and, per method, the cells' verdicts."""
    columns = REFERENCES + [m for m in methods if m not in REFERENCES]
    head = "| set | n | L | " + " | ".join(columns) + " |"
    lines = [head, "|" + " --- |" * (len(columns) + 3)]
    verdicts = defaultdict(list)
    for cell in cells:  # the draws stored so far (a run may have been cut short)
        draws = [d for d in draws_of[cell] if (*cell, d, "chance") in results]
        ls = cell_stats(results, cell, "LS", draws)
        ch = cell_stats(results, cell, "chance", draws)
        n = next(
            (results[(*cell, d, "chance")]["n"] for d in draws if (*cell, d, "chance") in results),
            "",
        )
        row = [cell[0], str(n), str(cell[1])]
        for method in columns:
            acc = cell_stats(results, cell, method, draws)
            if acc is None:
                row.append("")
                continue
            if np.any(np.isnan(acc)):
                row.append("error")
                verdicts[method].append((cell, "error", float("nan"), float("nan")))
                continue
            mark = ""
            low = below_guessing(results, cell, method, draws) if method != "chance" else 0
            if method not in ("chance", "LS") and ls is not None:
                below_ls, _ = paired_below(acc, ls)
                below_chance, _ = paired_below(acc, ch) if ch is not None else (False, 1.0)
                often = too_often_below(low, len(draws), below_guessing(results, cell, "LS", draws))
                mark = ("v" if below_ls else "") + ("x" if below_chance else "")
                mark += "g" if often else ""
                gap = 100 * float(np.mean(acc - ls))
                verdicts[method].append(
                    (cell, mark or "ok", gap, 100 * float(np.mean(acc)), low, len(draws))
                )
            elif method == "LS":
                verdicts[method].append(
                    (cell, "ok", 0.0, 100 * float(np.mean(acc)), low, len(draws))
                )
            sd = f" ± {100 * np.std(acc):.1f}" if len(acc) > 1 and method != "chance" else ""
            drawn = f" ({low})" if low else ""
            row.append(f"{100 * np.mean(acc):.1f}{sd}{drawn}{' ' + mark if mark else ''}")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines), verdicts


def summary(verdicts: dict) -> str:
    lines = [
        "| method | cells | >= LS | not sig. below LS | sig. below LS (v) | below chance (x) "
        "| draws below guessing | too often (g) | errors | worst gap to LS |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for method, rows in verdicts.items():
        gaps = [(r[2], r[0]) for r in rows if np.isfinite(r[2]) and method != "LS"]
        worst = min(gaps) if gaps else (float("nan"), ("", ""))
        marks = [r[1] for r in rows if r[1] != "error"]
        low = sum(r[4] for r in rows if len(r) > 4)
        drawn = sum(r[5] for r in rows if len(r) > 4)
        lines.append(
            f"| {method} | {len(rows)} | {sum(g >= 0 for g, _ in gaps)} "
            f"| {sum(m == 'ok' for m in marks)} "
            f"| {sum('v' in m for m in marks)} "
            f"| {sum('x' in m for m in marks)} "
            f"| {low} of {drawn} ({100 * low / max(drawn, 1):.1f} %) "
            f"| {sum('g' in m for m in marks)} "
            f"| {sum(r[1] == 'error' for r in rows)} "
            f"| {worst[0]:+.1f} ({worst[1][0]}, L={worst[1][1]}) |"
        )
    return "\n".join(lines)


FAR_BELOW = 0.1
"""A draw *far* below guessing: more than 10 points below it (a collapse, not noise)."""


def warning_rates(results: dict) -> str:
    """How often the degenerate-solution warning fired, per method, on the draws below
    guessing (and on those far below it) and on the others (fits recorded with the
    ``warned`` field only)."""
    # warned below, below, warned far below, far below, warned other, other
    counts = defaultdict(lambda: [0] * 6)
    for (name, labels, draw, method), r in results.items():
        guess = results.get((name, labels, draw, "chance"), {}).get("acc")
        if r.get("warned") is None or guess is None or r.get("acc") is None:
            continue
        below = r["acc"] < guess - 1e-12
        far = r["acc"] < guess - FAR_BELOW
        c = counts[method]
        c[0 if below else 4] += bool(r["warned"])
        c[1 if below else 5] += 1
        c[2] += bool(r["warned"]) and far
        c[3] += far
    lines = [
        "| method | draws below guessing | warned there | more than 10 points below | warned "
        "there | other draws | warned there |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    total = [0] * 6
    for method, c in sorted(counts.items()):
        if method in REFERENCES:
            continue
        total = [a + b for a, b in zip(total, c, strict=True)]
        lines.append(_rates_row(method, c))
    lines.append(_rates_row("all", total))
    return "\n".join(lines)


def _rates_row(method: str, c: list[int]) -> str:
    return (
        f"| {method} | {c[1]} | {_rate(c[0], c[1])} | {c[3]} | {_rate(c[2], c[3])} "
        f"| {c[5]} | {_rate(c[4], c[5])} |"
    )


def _rate(k: int, n: int) -> str:
    return f"{k} ({100 * k / n:.1f} %)" if n else "-"


def leave_one_dataset_out(verdicts: dict, candidates: list[str]) -> str:
    """For each set: the candidate picked on the *other* sets, and how it does on the set
    left out.  The rule for a default has two parts, and the pick follows both in turn: the
    fewest cells marked significantly below LS or chance on the other sets, then the largest
    mean gain over LS there."""
    gains = defaultdict(dict)  # set -> candidate -> mean gap over the set's label counts
    for cand in candidates:
        per_set = defaultdict(list)
        marks = defaultdict(list)
        for (name, _), mark, gap, *_ in verdicts.get(cand, []):
            per_set[name].append(gap)
            marks[name].append(mark)
        for name, gaps in per_set.items():
            gains[name][cand] = (float(np.mean(gaps)), marks[name])
    sets = sorted(s for s in gains if all(c in gains[s] for c in candidates))
    lines = [
        "| left out | picked on the others | its gap to LS there | its marks | best there |",
        "| --- | --- | --- | --- | --- |",
    ]
    picks = defaultdict(int)
    for held in sets:
        others = [s for s in sets if s != held]
        marked = {c: sum(m != "ok" for s in others for m in gains[s][c][1]) for c in candidates}
        score = {c: np.mean([gains[s][c][0] for s in others]) for c in candidates}
        pick = max(candidates, key=lambda c: (-marked[c], score[c]))
        picks[pick] += 1
        best = max(candidates, key=lambda c: gains[held][c][0])
        lines.append(
            f"| {held} | {pick} | {gains[held][pick][0]:+.1f} | "
            f"{','.join(m for m in gains[held][pick][1])} | {best} ({gains[held][best][0]:+.1f}) |"
        )
    overall = {c: np.mean([gains[s][c][0] for s in sets]) for c in candidates} if sets else {}
    lines.append("")
    lines.append("Picks over the folds: " + ", ".join(f"{c}: {k}" for c, k in picks.items()))
    lines.append(
        "Mean gap to LS over all sets: "
        + ", ".join(f"{c}: {v:+.2f}" for c, v in sorted(overall.items(), key=lambda kv: -kv[1]))
    )
    return "\n".join(lines)


def choose_candidates(spec: str) -> list[str]:
    """``--choose``'s candidates: ``"Est:param=v1,v2"`` gives ``Est(param=v1)``,
    ``Est(param=v2)``; a comma-separated list of methods (``"Est(p=a;q=b),Est(p=c)"``, one
    estimator) is taken as it is."""
    if "(" in spec:
        candidates = [c for c in spec.split(",") if c]
        if len({parse_method(c)[0] for c in candidates}) != 1:
            raise SystemExit(f"--choose: candidates of one estimator, got {spec!r}")
        return candidates
    name, values_spec = spec.split(":", 1)
    param, values = values_spec.split("=", 1)
    return [f"{name}({param}={v})" for v in values.split(",")]


# -- main -----------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tier", choices=list(TIERS), default="standard")
    parser.add_argument(
        "--sets", default="", help="comma-separated set names (default: the tier's)"
    )
    parser.add_argument("--labels", default="3,10,40")
    parser.add_argument("--draws", type=int, default=10)
    parser.add_argument("--methods", default=",".join(ESTIMATORS))
    parser.add_argument(
        "--choose",
        default="",
        help='"Estimator:param=v1,v2,..." or candidate methods "Est(p=a;q=b),Est(p=c),..."',
    )
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "defaults_suite"))
    parser.add_argument(
        "--table-only", action="store_true", help="print what is stored; fit nothing"
    )
    parser.add_argument(
        "--forget", default="", help="comma-separated methods whose stored fits are dropped first"
    )
    parser.add_argument(
        "--record",
        default="",
        metavar="PATH",
        help="also write the accuracy table as a CSV data file (e.g. docs/benchmarks/NAME.csv)",
    )
    args = parser.parse_args()

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    store = out / "results.jsonl"
    methods = [m for m in args.methods.split(",") if m]
    candidates = choose_candidates(args.choose) if args.choose else []
    if candidates:
        name = parse_method(candidates[0])[0]
        methods = [m for m in methods if m != name] + candidates
    methods = REFERENCES + methods
    chosen = [p for p in problems() if TIERS[p.tier] <= TIERS[args.tier]]
    if args.sets:
        wanted = args.sets.split(",")
        chosen = [p for p in problems() if p.name in wanted]
    labels = [int(v) for v in args.labels.split(",")]

    results = load_results(store)
    forget = set(filter(None, args.forget.split(",")))
    if forget:
        results = {k: r for k, r in results.items() if k[3] not in forget}
        store.write_text("".join(json.dumps(r) + "\n" for r in results.values()))
    jobs, cells, draws_of = [], [], {}
    for problem in chosen:
        for per_class in labels:
            cell = (problem.name, per_class)
            draws = list(range(min(args.draws, problem.draws or args.draws)))
            cells.append(cell)
            draws_of[cell] = draws
            for seed in draws:
                todo = [m for m in methods if (*cell, seed, m) not in results]
                if todo and not args.table_only:
                    jobs.append((problem, per_class, seed, todo))
    load = os.getloadavg()[0]
    print(f"{len(jobs)} draws to fit; load {load:.1f}", file=sys.stderr)
    if jobs:
        started = time.perf_counter()
        runner = Parallel(n_jobs=args.n_jobs, return_as="generator_unordered")
        with store.open("a") as handle:
            for k, rows in enumerate(runner(delayed(run_cell)(*job) for job in jobs), 1):
                for r in rows:
                    handle.write(json.dumps(r) + "\n")
                    results[(r["set"], r["labels"], r["draw"], r["method"])] = r
                handle.flush()
                print(
                    f"  [{k}/{len(jobs)}] {rows[0]['set']} L={rows[0]['labels']} draw "
                    f"{rows[0]['draw']} ({time.perf_counter() - started:.0f} s)",
                    file=sys.stderr,
                )
    text, verdicts = table(results, cells, methods, draws_of)
    report = [
        f"Defaults suite: tier {args.tier}, labels per class {labels}, up to {args.draws} draws; "
        f"load {load:.1f} at the start.",
        "",
        "Accuracy (%) on the hidden points, mean ± sd over draws; (k): k draws below guessing. "
        "v: significantly below LS, x: significantly below chance (one-sided paired t-test, "
        "p < 0.05), g: more than one draw in ten below guessing where LS has none.",
        "",
        text,
        "",
        summary(verdicts),
        "",
        "The degenerate-solution warning, on the draws below guessing and on the others:",
        "",
        warning_rates(
            {k: r for k, r in results.items() if (k[0], k[1]) in set(cells) and k[3] in methods}
        ),
    ]
    if candidates:
        report += ["", "Leave one data set out:", "", leave_one_dataset_out(verdicts, candidates)]
    errors = sorted({r["error"] for r in results.values() if r.get("error")})
    if errors:
        report += ["", "Errors:"] + [f"- {e}" for e in errors]
    (out / "defaults_suite.md").write_text("\n".join(report) + "\n")
    if args.record:
        record_table(args.record, text, fitted=bool(jobs), load=load)
    print("\n".join(report))


def record_table(path: str, text: str, fitted: bool, load: float) -> None:
    """The accuracy table (``text``, Markdown) as a CSV data file, one row per set and labels
    per class (``_key`` "set L"), the cells as the table shows them.  Its date is today's when
    this run fitted something, else left empty (the stored fits carry no date)."""
    from _record import record

    lines = text.splitlines()
    header = [c.strip() for c in lines[0].strip().strip("|").split("|")]
    rows = []
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        rows.append({**dict(zip(header, cells, strict=True)), "_key": f"{cells[0]} {cells[2]}"})
    if fitted:
        record(path, header, rows, load=f"{load:.1f} at the start")
    else:
        record(path, header, rows, measured="")


if __name__ == "__main__":
    main()
