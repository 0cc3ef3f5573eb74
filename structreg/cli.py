"""The ``structreg`` command line.

``structreg demo`` fits LapRLSC and RLSC on the two-moons toy and on a real data set with a
few labels per class and prints their accuracies on the unlabeled points.
``structreg reproduce drlsc|dr|srsvm|srlsc|damr`` runs a paper's reproduction (toy problems,
UCI tables, the USPS curve); see ``structreg reproduce --help``.
``structreg datasets list|info NAME|path`` inspects the data sets.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from sklearn.preprocessing import StandardScaler

from . import RLSC, LapRLSC
from .models import UNLABELED

# Fixed demo settings (not tuned per run): an RBF kernel, a heat-kernel 6-NN graph, and a
# graph weight much larger than the ambient one, as is usual with very few labels.
DEMO_MOONS = dict(gamma=5.0, gamma_A=1e-4, gamma_I=1e2)
DEMO_REAL = dict(gamma="scale", gamma_A=1e-3, gamma_I=1e2)


def _few_labels(y: np.ndarray, per_class: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of ``per_class`` random labeled points of every class."""
    return np.concatenate(
        [rng.choice(np.flatnonzero(y == c), per_class, replace=False) for c in np.unique(y)]
    )


def _compare(
    name: str, X: np.ndarray, y: np.ndarray, per_class: int, seed: int, repeats: int, params: dict
) -> dict[str, np.ndarray]:
    """Accuracy on the unlabeled points of LapRLSC (all points) and RLSC (labeled only)."""
    codes = np.unique(y, return_inverse=True)[1].ravel()
    rls_params = {k: v for k, v in params.items() if k != "gamma_I"}
    acc: dict[str, list] = {"LapRLSC": [], "RLSC": []}
    seconds = {"LapRLSC": 0.0, "RLSC": 0.0}
    for r in range(repeats):
        labeled = _few_labels(codes, per_class, np.random.default_rng(seed + r))
        y_semi = np.full(len(y), UNLABELED)
        y_semi[labeled] = codes[labeled]
        unl = y_semi == UNLABELED
        t0 = time.perf_counter()
        lap = LapRLSC(**params).fit(X, y_semi)
        seconds["LapRLSC"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        rls = RLSC(**rls_params).fit(X[labeled], codes[labeled])
        seconds["RLSC"] += time.perf_counter() - t0
        acc["LapRLSC"].append(np.mean(lap.transduction_[unl] == codes[unl]))
        acc["RLSC"].append(np.mean(rls.predict(X[unl]) == codes[unl]))
    print(
        f"\n{name}: n={len(y)}, d={X.shape[1]}, {per_class} labeled points per class, "
        f"{repeats} random draws of the labels"
    )
    print(f"  {'method':<8} {'accuracy on unlabeled (mean, min-max)':>38} {'fit time':>9}")
    for method, values in acc.items():
        v = np.asarray(values)
        print(
            f"  {method:<8} {v.mean():>17.1%}  ({v.min():.1%} - {v.max():.1%})"
            f"{seconds[method] / repeats:>14.2f}s"
        )
    return {k: np.asarray(v) for k, v in acc.items()}


def demo(args: argparse.Namespace) -> int:
    from .datasets import load_dataset, make_drlsc_moons

    print(
        "structreg demo: semi-supervised LapRLSC (labeled + unlabeled points) vs supervised "
        "RLSC (the same labeled points)"
    )
    X, y = make_drlsc_moons(level=args.moons_level, random_state=args.seed)
    _compare(
        f"two moons (DRLSC toy set, level {args.moons_level})",
        X,
        y,
        2,
        args.seed,
        args.repeats,
        DEMO_MOONS,
    )
    try:
        X, y = load_dataset(args.dataset, return_X_y=True)
    except (FileNotFoundError, OSError) as exc:
        print(f"\n{args.dataset}: skipped, data not available ({exc})")
        return 0
    X = StandardScaler().fit_transform(X)
    _compare(
        f"{args.dataset} (standardised)",
        X,
        np.asarray(y),
        args.per_class,
        args.seed,
        args.repeats,
        DEMO_REAL,
    )
    return 0


def datasets_command(args: argparse.Namespace) -> int:
    from .datasets import dataset_info, get_data_home, list_datasets

    if args.action == "list":
        for name in list_datasets():
            info = dataset_info(name)
            print(
                f"{name:<15} n={info['n_samples']:<6} d={info['n_features']:<4} "
                f"classes={info['n_classes']}"
            )
    elif args.action == "info":
        if not args.name:
            print("structreg datasets info: give a data set name", file=sys.stderr)
            return 2
        print(json.dumps(dataset_info(args.name), indent=2))
    else:
        print(get_data_home())
    return 0


REPRODUCTIONS = {
    "drlsc": {"toy": "Tables 4-5 and Fig. 1: RN, DRGV, DRLSC on the two-moons sets A, B, C"},
    "dr": {"fig2": "Fig. 2: GDR vs LDR decision boundaries on three two-moons sets"},
    "srsvm": {
        "xor": "Tables I-II and Figs. 5-6: SVM, SLMM, SRSVM on the XOR toy",
        "timing": "Tables V and VII: running times and Ward cluster counts on two-class UCI sets",
        "bound": "Fig. 10: eigenvalue generalization bounds of SVM, EKM, LapSVM, SRSVM",
    },
    "damr": {
        "tables": "Tables 3-5: LapRLSC, SSDR (Wang & Zhang), SSDR (Wu), DA_LapRLSC on UCI sets"
    },
    "srlsc": {
        "usps": "Fig. 7 and Table 4: S-RLSC, LapRLSC, GFHF, SRC, 1-NN on USPS vs labels per class"
    },
}


def reproduce(args: argparse.Namespace) -> int:
    from .experiments.srlsc import srlsc_usps
    from .experiments.srsvm import bound_figure, uci_timing, xor_toy
    from .experiments.toys import dr_toy, drlsc_toy

    tables = REPRODUCTIONS[args.paper]
    table = args.table or next(iter(tables))
    if table not in tables:
        available = ", ".join(f"{k} ({v})" for k, v in tables.items())
        print(
            f"structreg reproduce {args.paper}: table {table!r} is not available yet; "
            f"available: {available}",
            file=sys.stderr,
        )
        return 2
    out = args.out
    if (args.paper, table) == ("drlsc", "toy"):
        drlsc_toy(
            out, n_draws=2 if args.quick else args.draws or 10, quick=args.quick, n_jobs=args.n_jobs
        )
        print((Path(out) / "drlsc_toy.md").read_text())
        print(f"written: {out}/drlsc_toy.md, drlsc_toy.csv, drlsc_toy_fig1.png")
    elif args.paper == "dr":
        dr_toy(out)
        print((Path(out) / "dr_toy.md").read_text())
        print(f"written: {out}/dr_toy.md, dr_toy_fig2.png")
    elif table == "xor":
        fractions = (0.1, 0.5) if args.quick else (0.1, 0.2, 0.3, 0.4, 0.5)
        xor_toy(out, fractions=fractions, n_draws=2 if args.quick else args.draws or 10)
        print((Path(out) / "srsvm_xor.md").read_text())
        print(f"written: {out}/srsvm_xor.md, srsvm_xor.csv, srsvm_xor_fig56.png")
    elif args.paper == "damr":
        from .experiments.damr import damr_tables

        if args.quick:
            damr_tables(out, quick=True, n_jobs=args.n_jobs)
        else:
            damr_tables(out, n_repeats=args.draws or 20, n_jobs=args.n_jobs)
        print((Path(out) / "damr_tables.md").read_text())
        print(f"written: {out}/damr_tables.md, damr_tables.csv")
    elif args.paper == "srlsc":
        quick = dict(m_values=(5, 10, 40), n_draws=2, l1_mode="lasso", src_max_points=40)
        full = dict(n_draws=args.draws or 5, l1_mode=args.l1_mode)
        srlsc_usps(out, n_jobs=args.n_jobs, **(quick if args.quick else full))
        print((Path(out) / "srlsc_usps.md").read_text())
        print(f"written: {out}/srlsc_usps.md, srlsc_usps.csv, srlsc_usps_fig7.png")
    elif table == "bound":
        bound_figure(out)
        print((Path(out) / "srsvm_bounds.md").read_text())
        print(f"written: {out}/srsvm_bounds.md, srsvm_bounds_fig10.png")
    else:
        uci_timing(out, repeats=1 if args.quick else 3, with_socp=not args.quick)
        print((Path(out) / "srsvm_timing.md").read_text())
        print(f"written: {out}/srsvm_timing.md, srsvm_timing.csv")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="structreg", description="Structure-aware regularized classifiers."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("demo", help="LapRLSC vs RLSC on two moons and a real data set")
    p.add_argument("--dataset", default="wdbc", help="real data set (default: wdbc)")
    p.add_argument("--per-class", type=int, default=5, help="labels per class on the real set")
    p.add_argument("--moons-level", type=int, default=1, choices=(1, 2, 3))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeats", type=int, default=10, help="random draws of the labels")
    p.set_defaults(func=demo)
    p = sub.add_parser("reproduce", help="run a paper's experiment and write tables/figures")
    p.add_argument("paper", choices=sorted(REPRODUCTIONS))
    p.add_argument("--table", help="which table/figure (default: the first available)")
    p.add_argument("--quick", action="store_true", help="2 draws and a coarse grid")
    p.add_argument(
        "--draws",
        type=int,
        default=None,
        help="random draws / repetitions (default: 10; srlsc 5; damr 20 as in the paper)",
    )
    p.add_argument("--n-jobs", type=int, default=None)
    p.add_argument(
        "--l1-mode",
        choices=("exact", "lasso"),
        default="exact",
        help="srlsc: l1-graph solved exactly or by the fast lasso approximation",
    )
    p.add_argument("--out", default="results", help="output folder (default: results)")
    p.set_defaults(func=reproduce)
    p = sub.add_parser("datasets", help="list, describe or locate the data sets")
    p.add_argument("action", choices=("list", "info", "path"))
    p.add_argument("name", nargs="?")
    p.set_defaults(func=datasets_command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ValueError as exc:
        print(f"structreg: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
