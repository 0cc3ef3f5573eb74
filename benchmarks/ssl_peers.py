"""Semi-supervised learning against the peers (issue 21): structreg's graph models with their
default parameters against graphlearning's Laplace and Poisson learning and scikit-learn's
LabelSpreading, side by side in one process.

Cases (accuracy on the unlabeled points, mean +- sd over random draws of the labeled points;
fit time: median over the draws, every method run once per draw, in an order that rotates
from draw to draw):

* ``usps10`` / ``usps40``: all 11,000 USPS digits (256 pixels as read), 10 / 40 labels per
  class, 5 draws.
* ``moons``: two moons, 1e5 points, noise 0.1, 5 labels per class, 3 draws.
* ``mixture``: 12 unit Gaussian blobs in 10-d (centres N(0, 4^2 I)), 1e5 points, class =
  blob mod 4, 3 labels in every blob, 3 draws.
* ``moons1e6``: two moons, 1e6 points, noise 0.1, 5 labels per class, 1 draw (not in the
  default ``--cases``: several minutes).

Methods: structreg ``GFHF()``, ``PoissonLearning()`` and ``LapRLSC()`` (defaults: their own
kNN graphs, k = 7); graphlearning (k = 10, its defaults: ``weightmatrix.knn`` with annoy
above 5 dimensions, ``ssl.laplace`` / ``ssl.poisson``), timed from the data to the labels;
``LabelSpreading(kernel="knn", n_neighbors=10)`` at its defaults (alpha = 0.2, at most 30
iterations, tol 1e-3: on the moons it stops after 5 iterations with the labels at chance) and
with ``alpha=0.99, max_iter=1000`` (the issue's alpha, run until its own tolerance: its
converged answer).  The time ratios divide a method's median fit time by that of
graphlearning's Laplace and Poisson learning and of the two LabelSpreading runs.
"Solve only" rows time the label solve on a graph built beforehand: structreg's harmonic
solve and graphlearning's Laplace solve on the *same* graph (graphlearning's, then
structreg's self-tuning graph); their ratio column is against the graphlearning solve on
that graph.

graphlearning is an optional benchmark dependency (``pip install "structreg[bench]"``, or
into a separate environment: ``pip install graphlearning annoy``); without it its rows are
skipped with a message.

    python benchmarks/ssl_peers.py [--cases usps10,usps40,moons,mixture] [--draws N]
                                   [--without graphlearning] [--record PATH]

Each case's table is printed as soon as that case is measured.  ``--record
docs/benchmarks/ssl_peers.csv`` also writes the rows of the benchmarks page's peer table
(accuracy, median fit time and its ratio to the converged LabelSpreading's) into that data
file, replacing the rows of the cases run.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import warnings
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's structreg

import numpy as np  # noqa: E402
from _measure import semi_labels  # noqa: E402
from _record import current_load, load_range, record  # noqa: E402
from sklearn.datasets import make_moons  # noqa: E402
from sklearn.semi_supervised import LabelSpreading  # noqa: E402

import structreg  # noqa: E402
from structreg.datasets import load_dataset  # noqa: E402
from structreg.models.harmonic import harmonic_function  # noqa: E402
from structreg.structure.graphs import self_tuning_graph  # noqa: E402

try:
    import graphlearning as gl
except ImportError:  # optional: pip install "structreg[bench]"
    gl = None

GL_K = 10
LS = "sklearn LabelSpreading(knn, k=10)"
LS_CONVERGED = "sklearn LabelSpreading(knn, k=10, alpha=0.99, max_iter=1000)"


def usps(per_class: int, draws: int):
    X, y = load_dataset("usps", return_X_y=True)
    X = np.asarray(X, dtype=float)
    y = np.unique(np.asarray(y), return_inverse=True)[1]
    return X, y, [semi_labels(y, per_class, seed) for seed in range(draws)]


def moons(draws: int, n: int = 100_000):
    X, y = make_moons(n, noise=0.1, random_state=0)
    return X, y, [semi_labels(y, 5, seed) for seed in range(draws)]


def mixture(draws: int):
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(12, 10)) * 4
    blob = rng.integers(0, 12, 100_000)
    X = centres[blob] + rng.normal(size=(100_000, 10))
    y = blob % 4
    out = []
    for seed in range(draws):  # 3 labels in every blob
        semi = np.full_like(y, -1)
        pick = semi_labels(blob, 3, seed) != -1
        semi[pick] = y[pick]
        out.append(semi)
    return X, y, out


CASES = {
    "usps10": ("USPS, 10 labels/class", lambda d: usps(10, d), 5),
    "usps40": ("USPS, 40 labels/class", lambda d: usps(40, d), 5),
    "moons": ("two moons 1e5, 5 labels/class", moons, 3),
    "mixture": ("10-d mixture 1e5, 12 blobs, 3 labels/blob", mixture, 3),
    "moons1e6": ("two moons 1e6, 5 labels/class", lambda d: moons(d, 1_000_000), 1),
}


def _gl_labels(model_name: str, X, y_semi):
    train = np.flatnonzero(y_semi != -1)
    W = gl.weightmatrix.knn(X, GL_K)
    model = gl.ssl.laplace(W) if model_name == "laplace" else gl.ssl.poisson(W)
    return model.fit_predict(train, y_semi[train])


def methods():
    """``{name: fit(X, y_semi) -> labels of all points}``, timed end to end."""
    out = {
        "structreg GFHF()": lambda X, s: structreg.GFHF().fit(X, s).transduction_,
        "structreg PoissonLearning()": lambda X, s: (
            structreg.PoissonLearning().fit(X, s).transduction_
        ),
        "structreg LapRLSC()": lambda X, s: structreg.LapRLSC().fit(X, s).transduction_,
        LS: lambda X, s: LabelSpreading(kernel="knn", n_neighbors=GL_K).fit(X, s).transduction_,
        LS_CONVERGED: lambda X, s: (
            LabelSpreading(kernel="knn", n_neighbors=GL_K, alpha=0.99, max_iter=1000)
            .fit(X, s)
            .transduction_
        ),
    }
    if gl is not None:
        out["graphlearning Laplace (k=10)"] = lambda X, s: _gl_labels("laplace", X, s)
        out["graphlearning Poisson (k=10)"] = lambda X, s: _gl_labels("poisson", X, s)
    return out


def _harmonic_labels(W, y_semi):
    labeled = y_semi != -1
    F, _ = harmonic_function(W, labeled, np.eye(y_semi.max() + 1)[y_semi[labeled]])
    return F.argmax(axis=1)


def _gl_laplace_labels(W, y_semi):
    train = np.flatnonzero(y_semi != -1)
    return gl.ssl.laplace(W).fit_predict(train, y_semi[train])


def run_case(key: str, draws: int | None, without: list[str]):
    title, make, default_draws = CASES[key]
    X, y, semis = make(draws or default_draws)
    fits = {m: f for m, f in methods().items() if not any(w in m for w in without)}
    names = list(fits)
    acc = {m: [] for m in names}
    secs = {m: [] for m in names}
    solve = {}
    graphs = {}
    if gl is not None and not any(w in "graphlearning" for w in without):
        graphs["graphlearning's graph"] = gl.weightmatrix.knn(X, GL_K)
        graphs["structreg's self-tuning graph"] = self_tuning_graph(X, 7)[0]
        for g in graphs:
            for who in ("structreg harmonic_function", "graphlearning laplace"):
                solve[f"solve only, {g}: {who}"] = (g, who)
    for m in solve:
        acc[m], secs[m] = [], []
    for draw, y_semi in enumerate(semis):
        unl = y_semi == -1
        order = names[draw % len(names) :] + names[: draw % len(names)]
        for m in order:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t0 = time.perf_counter()
                labels = fits[m](X, y_semi)
                secs[m].append(time.perf_counter() - t0)
            acc[m].append(100 * np.mean(labels[unl] == y[unl]))
        for m, (g, who) in solve.items():
            solver = _harmonic_labels if who.startswith("structreg") else _gl_laplace_labels
            t0 = time.perf_counter()
            labels = solver(graphs[g], y_semi)
            secs[m].append(time.perf_counter() - t0)
            acc[m].append(100 * np.mean(labels[unl] == y[unl]))
        print(
            f"  {key}: draw {draw + 1}/{len(semis)} done, load {os.getloadavg()[0]:.1f}", flush=True
        )
    return title, len(semis), acc, secs, solve


def ratio(a: float, b: float | None) -> str:
    return "-" if b is None else f"{a / b:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="usps10,usps40,moons,mixture")
    parser.add_argument("--draws", type=int, default=None, help="override the draws per case")
    parser.add_argument(
        "--without",
        default="",
        help="comma-separated parts of method names to leave out (e.g. graphlearning: its "
        "Laplace CG needs many minutes on the 1e6 moons)",
    )
    parser.add_argument(
        "--record",
        default="",
        metavar="PATH",
        help="write the page's rows into this data file (docs/benchmarks/ssl_peers.csv)",
    )
    args = parser.parse_args()
    without = [w for w in args.without.split(",") if w]
    print(
        f"# {platform.node()}: {os.cpu_count()} CPUs, python {platform.python_version()}, "
        f"structreg {structreg.__version__}, "
        f"graphlearning {'not installed' if gl is None else metadata.version('graphlearning')}"
    )
    if gl is None:
        print(
            "# graphlearning is not installed: its rows are skipped "
            '(pip install "structreg[bench]", or graphlearning and annoy)'
        )
    print(f"# load average at start: {os.getloadavg()}")
    for key in args.cases.split(","):  # each case's table as soon as it is measured
        loads = [current_load()]
        row = run_case(key, args.draws, without)
        loads.append(current_load())
        print_table(row)
        print(f"# load average now: {os.getloadavg()}", flush=True)
        if args.record:  # after every case, so a later case's failure keeps it
            rows = page_rows(key, row)
            record(args.record, PAGE_COLUMNS, rows, load=load_range(loads), replace_groups=True)


def print_table(row) -> None:
    title, n_draws, acc, secs, solve = row
    print()
    print(
        "| data | method | accuracy (%) | fit time (s) | / gl Laplace | / gl Poisson "
        "| / LabelSpreading | / LabelSpreading(alpha=0.99) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    med = {m: float(np.median(t)) for m, t in secs.items()}
    peers = [
        med.get(m)
        for m in ("graphlearning Laplace (k=10)", "graphlearning Poisson (k=10)", LS, LS_CONVERGED)
    ]
    first = True
    for m in acc:
        if m in solve:
            g, _ = solve[m]
            ref = med[f"solve only, {g}: graphlearning laplace"]
            cells = [ratio(med[m], ref), "-", "-", "-"]
        else:
            cells = [ratio(med[m], peer) for peer in peers]
        label = f"{title} ({n_draws} draws)" if first else ""
        first = False
        print(
            f"| {label} | {m} | {np.mean(acc[m]):.1f} ± {np.std(acc[m]):.1f} "
            f"| {med[m]:.2f} | " + " | ".join(cells) + " |",
            flush=True,
        )


PAGE_COLUMNS = ["data (draws)", "method", "accuracy", "fit time", "time / LabelSpreading converged"]
PAGE_CASES = {
    "usps10": "USPS, 10 labels per class",
    "usps40": "USPS, 40 labels per class",
    "moons": "two moons, 1e5 points, 5 labels per class",
    "mixture": "10-d Gaussian mixture, 1e5 points, 12 blobs, 3 labels per blob",
    "moons1e6": "two moons, 1e6 points, 5 labels per class",
}
PAGE_METHODS = {  # the benchmark's name -> (the page's name, the row's key)
    "structreg GFHF()": ("`GFHF()`", "GFHF"),
    "structreg PoissonLearning()": ("`PoissonLearning()`", "PoissonLearning"),
    "structreg LapRLSC()": ("`LapRLSC()`", "LapRLSC"),
    LS: ("LabelSpreading (defaults)", "LS"),
    LS_CONVERGED: ("LabelSpreading (converged)", "LS-converged"),
    "graphlearning Laplace (k=10)": ("graphlearning Laplace", "gl-Laplace"),
    "graphlearning Poisson (k=10)": ("graphlearning Poisson", "gl-Poisson"),
}


def page_rows(key: str, row) -> list[dict]:
    """The peer table's rows of one case (the benchmarks page): accuracy (mean ± sd over the
    draws for GFHF, the mean for the others), median fit time, and its ratio to the converged
    LabelSpreading's; a method left out is a row "not run"; the solve-only rows are not on the
    page."""
    _, n_draws, acc, secs, solve = row
    reference = float(np.median(secs[LS_CONVERGED])) if LS_CONVERGED in secs else None
    data = f"{PAGE_CASES.get(key, key)} ({n_draws})"
    out = []
    for method, (shown, name) in PAGE_METHODS.items():
        if method not in acc:  # left out (--without) or not installed: said so
            out.append({"data (draws)": data, "method": shown, "accuracy": "not run"})
            out[-1]["_key"] = f"{key} {name}"
            continue
        mean, med = float(np.mean(acc[method])), float(np.median(secs[method]))
        spread = f" ± {np.std(acc[method]):.1f}" if name == "GFHF" and n_draws > 1 else ""
        out.append(
            {
                "data (draws)": data,
                "method": shown,
                "accuracy": f"{mean:.1f}{spread} %",
                "fit time": f"{med:.2f} s",
                "time / LabelSpreading converged": ratio(med, reference),
                "_key": f"{key} {name}",
            }
        )
    return out


if __name__ == "__main__":
    main()
