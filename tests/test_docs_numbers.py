"""One source for the documentation's measured numbers.

The benchmarks page's tables and the numbers the "Which estimator?" page quotes are drawn at
build time from the data files in ``docs/benchmarks/`` and from the defaults suite's table
(``docs/user_guide/defaults_suite_table.md``, printed from the published fits).  These tests
fail when a page types in a measured number of its own, when a page quotes a cell the data do
not hold, when a data file loses its columns, when the suite's table no longer matches its
fits, and when a sentence's counts or ranges no longer follow from the data.  They read the
files with their own small parsers, not with the Sphinx extension that renders them.
"""

from __future__ import annotations

import csv
import gzip
import json
import math
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
DATA = DOCS / "benchmarks"
SUITE_TABLE = DOCS / "user_guide" / "defaults_suite_table.md"
SUITE_STORE = ROOT / "benchmarks" / "defaults_suite_results.jsonl.gz"
SUITE_SCRIPT = ROOT / "benchmarks" / "defaults_suite.py"
BENCHMARKS = DOCS / "benchmarks.md"
WHICH = DOCS / "which_estimator.md"
CHART = DOCS / "_static" / "which_estimator.svg"

EXPECTED_COLUMNS = {
    "ssl_peers": [
        "data (draws)",
        "method",
        "accuracy",
        "fit time",
        "time / LabelSpreading converged",
    ],
    "scale_ssl": [
        "n",
        "method",
        "fit time",
        "peak memory",
        "accuracy",
        "solver, search, weights",
        "load",
    ],
    "scale_nystroem": ["problem", "LapRLSC", "DALapRLSC", "LapSVM (primal)"],
    "laprlsc_solvers": [
        "data (kernel width)",
        "n",
        "dense",
        "CG (exact)",
        "Nystroem",
        "accuracy gap",
    ],
    "cv_vs_gridsearch": ["case", "grid points", "speed-up (GridSearchCV time / structreg CV time)"],
    "src_fast": [
        "m per class",
        "atoms",
        "LARS (s)",
        "batched (s)",
        "ratio",
        "max code difference",
        "predictions",
    ],
    "knn_cells_kdtree": ["data (n, d)", "scikit-learn", "structreg", "structreg's search"],
    "knn_gemm": ["data", "scikit-learn", "structreg"],
    "knn_graph_exact_approximate": ["data (n, d)", "exact", "approximate", "recall"],
    "knn_indices_exact_approximate": ["data (n, d)", "exact", "approximate", "recall"],
    "defaults_suite_labels1": [
        "set",
        "n",
        "L",
        "chance",
        "RLSC",
        "LS",
        "GFHF",
        "PoissonLearning",
    ],
    "poisson_class_sizes": ["set", "L", "PoissonLearning", "PoissonLearning(class_prior=sizes)"],
}
HIDDEN = {"_key", "_measured", "_load", "_command", "_source", "_note"}
SOURCES = {"written by --record", "transcribed from the page"}

# a measured number: digits with a unit of time, memory, accuracy or speed-up
MEASURED = re.compile(
    r"(?<![\w.])\d+(?:\.\d+)?(?:\s*[-–]\s*\d+(?:\.\d+)?)?\s*(?:%|ms|s|GiB|MiB|minutes?|x)(?![\w])"
)
ROLE = re.compile(r"\{(bench|bench-cell|bench-range)\}`([^`]*)`")
NUMBER = re.compile(r"^\s*[<>]?\s*[-+]?\d+(?:\.\d+)?")


# -- the data, read here -----------------------------------------------------------------------


def read_csv(name: str) -> tuple[list[str], list[dict]]:
    with (DATA / f"{name}.csv").open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        return list(reader.fieldnames or []), list(reader)


def suite_rows() -> tuple[list[str], list[dict]]:
    """The accuracy table of the defaults suite's page: its header and rows."""
    header, rows = None, []
    for line in SUITE_TABLE.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            if header:
                break
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells if cells[:3] == ["set", "n", "L"] else None
            continue
        if not set(line) <= set("|- "):
            rows.append(dict(zip(header, cells, strict=True)))
    assert header, f"{SUITE_TABLE}: no table beginning '| set | n | L |'"
    return header, rows


def table_of(name: str) -> dict[str, dict]:
    """``{key: row}`` of a data file, or of the suite's table (keys ``"SET L"``)."""
    if name == "defaults_suite":
        return {f"{r['set']} {r['L']}": r for r in suite_rows()[1]}
    return {r["_key"]: r for r in read_csv(name)[1]}


def mean_of(cell: str) -> float:
    match = NUMBER.match(cell)
    assert match, f"no number in {cell!r}"
    return float(match.group().strip(" <>"))


def pages() -> list[Path]:
    return [p for p in DOCS.rglob("*.md") if "_build" not in p.parts and p.name != "README.md"]


def prose(text: str) -> str:
    """A page's text without what is not typed-in prose: fenced blocks (directives, code),
    roles with their targets, code spans and link targets."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    text = re.sub(r"\{[\w:-]+\}`[^`]*`", "", text)
    text = re.sub(r"`[^`]*`", "", text)
    return re.sub(r"\]\([^)]*\)", "]", text)


# -- the data files ----------------------------------------------------------------------------


def test_every_data_file_parses_with_its_columns():
    found = sorted(p.stem for p in DATA.glob("*.csv"))
    assert found == sorted(EXPECTED_COLUMNS), "a data file is missing or not known to this test"
    for name, expected in EXPECTED_COLUMNS.items():
        columns, rows = read_csv(name)
        shown = [c for c in columns if not c.startswith("_")]
        assert shown == expected, f"{name}.csv: columns {shown}, the page's are {expected}"
        assert set(columns) - set(shown) <= HIDDEN, f"{name}.csv: unknown hidden columns"
        assert "_key" in columns and "_source" in columns, f"{name}.csv: no _key or _source"
        assert rows, f"{name}.csv holds no rows"
        keys = [r["_key"] for r in rows]
        assert all(keys) and len(set(keys)) == len(keys), f"{name}.csv: keys missing or repeated"
        for r in rows:
            assert None not in r and all(v is not None for v in r.values()), (
                f"{name}.csv, row {r['_key']!r}: not as many cells as columns"
            )
            assert r["_source"] in SOURCES, f"{name}.csv, row {r['_key']!r}: _source?"


def test_every_data_file_is_shown_or_quoted_by_a_page():
    used = set()
    for page in pages():
        text = page.read_text(encoding="utf-8")
        used |= set(re.findall(r"^```\{benchmark-table\}\s+(\S+)", text, flags=re.M))
        used |= {target.split(":")[0] for _, target in ROLE.findall(text)}
    assert sorted(set(EXPECTED_COLUMNS) - used) == []
    assert used <= set(EXPECTED_COLUMNS) | {"defaults_suite"}, f"unknown tables {used}"


# -- the pages quote the data and type in no measurement ---------------------------------------


def test_the_benchmarks_page_types_in_no_table_of_measurements():
    text = BENCHMARKS.read_text(encoding="utf-8")
    for line in text.splitlines():
        if line.startswith("|"):
            found = MEASURED.findall(prose(line))
            assert not found, f"a typed-in table row with measured numbers {found}: {line[:100]}"
    tables = re.findall(r"^```\{benchmark-table\}\s+(\S+)", text, flags=re.M)
    assert len(tables) == 11, tables  # every table of measurements comes from the data


def test_the_which_estimator_page_types_in_no_measured_number():
    text = WHICH.read_text(encoding="utf-8")
    table = "\n".join(line for line in text.splitlines() if line.startswith("|"))
    assert len(table.splitlines()) > 10
    # settings, not measurements: the distributed row's worker memory limit
    left = prose(table).replace("limited to 1.2 GiB each", "")
    found = MEASURED.findall(left)
    assert not found, f"typed-in measured numbers on the Which-estimator page: {found}"
    assert not re.search(r"\bhalf\b|\btwice\b|\bthird\b", left), "a typed-in ratio in words"
    assert len(ROLE.findall(text)) >= 50


def test_the_chart_holds_no_measured_number():
    texts = re.findall(
        r"<(?:text|desc|title)[^>]*>(.*?)</(?:text|desc|title)>", CHART.read_text(), re.S
    )
    words = " ".join(re.sub(r"<[^>]+>", "", t) for t in texts)
    assert words, "the chart has no text"
    assert not MEASURED.findall(words), f"measured numbers in the chart: {MEASURED.findall(words)}"


@pytest.mark.parametrize("page", ["benchmarks.md", "which_estimator.md"])
def test_every_quoted_cell_is_in_the_data(page):
    roles = ROLE.findall((DOCS / page).read_text(encoding="utf-8"))
    for kind, target in roles:
        name, keys, columns = (part.strip() for part in target.split(":", 2))
        rows = table_of(name)
        for key in (k.strip() for k in keys.split(";")):
            assert key in rows, f"{page}: {{{kind}}}`{target}`: no row {key!r} in {name}"
            for column in (c.strip() for c in columns.split(";")):
                assert column in rows[key] and not column.startswith("_"), (
                    f"{page}: {{{kind}}}`{target}`: no column {column!r} in {name}"
                )
                if kind != "bench-cell":
                    assert NUMBER.match(rows[key][column]), f"{target}: no number"


# -- the defaults suite: its table, its fits, and the sentences drawn from them -----------------


def _regenerate(tmp_path, store: Path, *args: str) -> subprocess.CompletedProcess:
    out = tmp_path / "suite"
    out.mkdir()
    with gzip.open(store, "rb") as source, (out / "results.jsonl").open("wb") as target:
        shutil.copyfileobj(source, target)
    command = [sys.executable, str(SUITE_SCRIPT), "--out", str(out), "--table-only", *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def _from_header(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| set | n | L |"))
    return [line.rstrip() for line in lines[start:] if line.strip()]


def test_the_suite_table_is_what_the_published_fits_print(tmp_path):
    done = _regenerate(tmp_path, SUITE_STORE, "--labels", "3,10,40")
    page = _from_header(SUITE_TABLE.read_text(encoding="utf-8"))
    printed = _from_header(done.stdout)
    assert len(page) == len(printed), "the page's table and the fits' have different lengths"
    for ours, theirs in zip(page, printed, strict=True):
        assert ours == theirs, f"the page says\n{ours}\nthe published fits print\n{theirs}"


def test_the_one_label_cells_are_what_their_fits_print(tmp_path):
    sets = "coil20,usps,moons_1e3,moons_1e4,mixture_1e3,mixture_1e4"
    record = tmp_path / "labels1.csv"
    store = DATA / "defaults_suite_labels1.jsonl.gz"
    methods = "GFHF,PoissonLearning"
    args = ["--sets", sets, "--labels", "1", "--methods", methods, "--record", str(record)]
    _regenerate(tmp_path, store, *args)
    with record.open(newline="", encoding="utf-8") as handle:
        printed = {r["_key"]: r for r in csv.DictReader(handle)}
    stored = table_of("defaults_suite_labels1")
    assert sorted(printed) == sorted(stored)
    for key, row in stored.items():
        for column in EXPECTED_COLUMNS["defaults_suite_labels1"]:
            assert row[column] == printed[key][column], f"{key} / {column}"


def _fits() -> dict:
    accuracy = defaultdict(dict)
    with gzip.open(SUITE_STORE, "rt", encoding="utf-8") as handle:
        for line in handle:
            r = json.loads(line)
            accuracy[r["set"], r["labels"], r["method"]][r["draw"]] = r["acc"]
    return accuracy


def _ahead_behind(accuracy: dict, labels: int) -> tuple[list[str], list[str]]:
    """The sets where GFHF is significantly ahead of / behind PoissonLearning (one-sided paired
    t-tests over the draws, p < 0.05; a difference without spread decides by its sign)."""
    ahead, behind = [], []
    for name in sorted({k[0] for k in accuracy}):
        a, b = accuracy.get((name, labels, "GFHF")), accuracy.get((name, labels, "PoissonLearning"))
        if not a or not b:
            continue
        draws = sorted(set(a) & set(b))
        x, y = np.array([a[d] for d in draws]), np.array([b[d] for d in draws])
        diff = x - y
        if np.allclose(diff, diff[0]):
            ahead += [name] if diff[0] > 1e-12 else []
            behind += [name] if diff[0] < -1e-12 else []
            continue
        ahead += [name] if stats.ttest_rel(x, y, alternative="greater").pvalue < 0.05 else []
        behind += [name] if stats.ttest_rel(x, y, alternative="less").pvalue < 0.05 else []
    return ahead, behind


SET_NAMES = {
    "USPS": ["usps"],
    "COIL-20": ["coil20"],
    "ionosphere": ["ionosphere"],
    "horse colic": ["horse"],
    "two moons + 50 noise dimensions": ["moons_noise50"],
    "two sets of a compact small class inside a wide one": ["compact_3to1_44d", "compact_4to1_19d"],
    "dermatology": ["dermatology"],
    "ecoli": ["ecoli"],
    "new-thyroid": ["new_thyroid"],
    "yeast": ["yeast"],
}


def _named(listing: str) -> list[str]:
    names = re.split(r",\s*(?:and\s+)?|\s+and\s+", listing.split(":")[0])
    return sorted(s for name in names if name.strip() for s in SET_NAMES[name.strip()])


def test_the_counts_of_sets_where_gfhf_and_poisson_learning_differ():
    text = " ".join(WHICH.read_text(encoding="utf-8").split())
    claim = re.search(
        r"Over the suite's (\d+) sets at 3 labels per class GFHF is significantly ahead of "
        r"Poisson learning on (\d+) \(also ([^)]*)\) and behind on (\d+) \(([^)]*)\); at 10 and "
        r"40 labels per class ahead on (\d+) and (\d+), behind on (\d+)",
        text,
    )
    assert claim, "the sentence on GFHF against Poisson learning changed: update this test"
    n_sets, ahead3, also, behind3, behind_names, ahead10, ahead40, behind1040 = claim.groups()
    accuracy = _fits()
    assert int(n_sets) == len({k[0] for k in accuracy if k[1] == 3})
    ahead, behind = _ahead_behind(accuracy, 3)
    assert (int(ahead3), int(behind3)) == (len(ahead), len(behind)), (ahead, behind)
    assert set(_named(also)) <= set(ahead)
    assert _named(behind_names) == sorted(behind)
    for labels, claimed_ahead in ((10, ahead10), (40, ahead40)):
        ahead, behind = _ahead_behind(accuracy, labels)
        assert (int(claimed_ahead), int(behind1040)) == (len(ahead), len(behind)), labels


def _claimed_range(pattern: str, text: str) -> tuple[int, int]:
    match = re.search(pattern, " ".join(text.split()))
    assert match, f"the sentence matching {pattern!r} changed: update this test"
    return int(match.group(1)), int(match.group(2))


MIXED = ["australian 10", "australian 40", "german 10", "horse 10", "pima 10"]
IMAGES = ["usps 3", "usps 10", "coil20 3"]


def test_the_ranges_drawn_from_the_suite_table():
    rows = table_of("defaults_suite")
    kernel, graph = ("RLSC", "LapRLSC"), ("GFHF", "PoissonLearning")
    for key in MIXED:  # "within a point of each other"
        assert abs(mean_of(rows[key]["RLSC"]) - mean_of(rows[key]["LapRLSC"])) <= 1.0, key
    trail = [
        mean_of(rows[k][a]) - mean_of(rows[k][g]) for k in MIXED for a in kernel for g in graph
    ]
    gain = [
        mean_of(rows[k][g]) - mean_of(rows[k][a]) for k in IMAGES for a in kernel for g in graph
    ]
    which, benchmarks = WHICH.read_text("utf-8"), BENCHMARKS.read_text("utf-8")
    for claim in (
        _claimed_range(r"(\d+)-(\d+) points above GFHF and Poisson learning", which),
        _claimed_range(r"trail them by (\d+)-(\d+) points", benchmarks),
    ):
        assert claim == (round(min(trail)), round(max(trail))), (claim, trail)
    claim = _claimed_range(r"gain (\d+)-(\d+) points over both", benchmarks)
    assert claim == (round(min(gain)), round(max(gain))), (claim, gain)
    # "on the two moons ... GFHF() is ahead of every other method"
    assert "on the two moons, a low-dimensional manifold, `GFHF()` is ahead" in " ".join(
        benchmarks.split()
    )
    cells = rows["moons_1e4 3"].items()
    moons = {c: mean_of(v) for c, v in cells if v and c not in ("set", "n", "L", "chance")}
    assert max(moons, key=moons.get) == "GFHF", moons


def test_poisson_learning_with_class_sizes_uses_the_suite_draws():
    """The file's plain PoissonLearning column is the suite's own: the same sets and draws."""
    suite = table_of("defaults_suite")
    for key, row in table_of("poisson_class_sizes").items():
        assert mean_of(row["PoissonLearning"]) == mean_of(suite[key]["PoissonLearning"]), key


# -- the scale table's prose -------------------------------------------------------------------


def _brackets(cell: str) -> list[float]:
    return [float(v) for v in re.search(r"\(([^)]*)\)", cell).group(1).split(",")]


def test_the_scale_sentences_follow_from_the_scale_table():
    rows = table_of("scale_ssl")
    text = " ".join(BENCHMARKS.read_text("utf-8").split())
    growth = re.search(r"GFHF (\d\.\d\d) \(.*?\), Poisson learning (\d\.\d\d) \(", text)
    assert growth, "the sentence on the growth of fit time changed: update this test"
    for method, claimed in zip(("GFHF", "PoissonLearning"), growth.groups(), strict=True):
        slope = math.log(mean_of(rows[f"1e7 {method}"]["fit time"]) / mean_of(
            rows[f"1e5 {method}"]["fit time"])) / math.log(100)  # fmt: skip
        assert f"{slope:.2f}" == claimed, (method, slope)
    ratios = re.search(
        r"`GFHF\(\)` took ([\d.]+), ([\d.]+) and ([\d.]+) times converged LabelSpreading's time "
        r"in the three invocations, and `PoissonLearning\(\)` ([\d.]+), ([\d.]+) and ([\d.]+)",
        text,
    )
    assert ratios, "the sentence on the three invocations at 1e6 points changed"
    reference = _brackets(rows["1e6 LabelSpreading"]["fit time"])
    shown = [
        f"{t / r:.2f}"
        for method in ("GFHF", "PoissonLearning")
        for t, r in zip(_brackets(rows[f"1e6 {method}"]["fit time"]), reference, strict=True)
    ]
    assert shown == list(ratios.groups())
