import gzip
import json
from pathlib import Path

import pytest

from structreg.cli import DEMO_MOONS, _compare, main
from structreg.datasets import make_drlsc_moons


def test_demo_two_moons_acceptance():
    """2 labels per class: LapRLSC >= 95% on the unlabeled points, RLSC below that."""
    X, y = make_drlsc_moons(level=1, random_state=0)
    acc = _compare("moons", X, y, 2, 0, 10, DEMO_MOONS)
    assert acc["LapRLSC"].mean() >= 0.95
    assert acc["RLSC"].mean() < acc["LapRLSC"].mean()


def test_demo_command_prints_both_tables(capsys):
    assert main(["demo", "--repeats", "1", "--per-class", "3"]) == 0
    out = capsys.readouterr().out
    assert "two moons" in out and "wdbc" in out
    assert out.count("LapRLSC") >= 3 and out.count("RLSC") >= 5


def test_demo_with_unavailable_dataset_says_skipped(capsys, monkeypatch, tmp_path):
    """A set the data home's manifest names but nobody provides is reported, not a crash."""
    entry = {"name": "mine", "file": "mine.csv.gz"}
    (tmp_path / "MANIFEST.json").write_text(json.dumps([entry]))
    monkeypatch.setenv("STRUCTREG_DATA", str(tmp_path))
    monkeypatch.delenv("STRUCTREG_DATA_URL", raising=False)
    assert main(["demo", "--repeats", "1", "--dataset", "mine"]) == 0
    assert "mine: skipped, data not available" in capsys.readouterr().out


def test_datasets_commands(capsys):
    assert main(["datasets", "list"]) == 0
    out = capsys.readouterr().out
    assert "usps" in out and "wdbc" in out
    assert main(["datasets", "info", "iris"]) == 0
    assert '"n_samples": 150' in capsys.readouterr().out
    assert main(["datasets", "info", "nope"]) == 2
    assert "unknown" in capsys.readouterr().err.lower()


def test_datasets_path_names_the_packaged_copy_and_the_data_home(capsys, monkeypatch, tmp_path):
    from structreg.datasets import packaged_data_dir

    monkeypatch.setenv("STRUCTREG_DATA", str(tmp_path))
    assert main(["datasets", "path"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [f"data home: {tmp_path}", f"packaged:  {packaged_data_dir()}"]


def test_bad_subcommand_exits():
    with pytest.raises(SystemExit):
        main(["frobnicate"])


def test_reproduce_lists_tables_and_rejects_unknown_ones(capsys):
    assert main(["reproduce", "drlsc", "--list-tables"]) == 0
    out = capsys.readouterr().out
    for name in ("4-5", "6", "7", "9", "10", "12"):
        assert f"\n{name} " in "\n" + out
    assert main(["reproduce", "srsvm", "--table", "nope"]) == 2
    err = capsys.readouterr().err
    assert "no table 'nope'" in err and "II" in err


TINY = ["reproduce", "damr", "--table", "3", "--quick", "--draws", "2", "--datasets", "sonar"]


def test_reproduce_end_to_end_resumes(tmp_path, capsys):
    """A tiny quick reproduction through the command; the second run reuses every cell."""
    assert main([*TINY, "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "damr table 3: 2 cells computed, 0 reused" in out
    text = (tmp_path / "damr_3.md").read_text()
    assert "| Sonar |" in text and "47.75" in text  # the paper's value beside ours
    assert "skipped" in text  # sets structreg does not have are listed
    assert (tmp_path / "results.sqlite").exists() and (tmp_path / "damr_3.csv").exists()
    assert main([*TINY, "--out", str(tmp_path)]) == 0
    assert "0 cells computed, 2 reused" in capsys.readouterr().out
    assert (tmp_path / "damr_3.md").read_text() == text


def test_reproduce_through_a_dask_local_cluster(tmp_path, capsys, dask_scheduler):
    """The same tiny reproduction on a real LocalCluster (loopback) gives the same table."""
    assert main([*TINY, "--out", str(tmp_path / "dask"), "--scheduler", dask_scheduler]) == 0
    assert "2 cells computed" in capsys.readouterr().out
    assert main([*TINY, "--out", str(tmp_path / "local")]) == 0
    assert (tmp_path / "dask" / "damr_3.md").read_text() == (
        tmp_path / "local" / "damr_3.md"
    ).read_text()


@pytest.mark.parametrize(
    "args, option, problem",
    [
        (["reproduce", "damr", "--n-jobs", "0"], "--n-jobs", "a non-zero integer"),
        (["reproduce", "damr", "--n-jobs", "two"], "--n-jobs", "a non-zero integer"),
        (["reproduce", "damr", "--draws", "0"], "--draws", "a positive integer"),
        (["reproduce", "srsvm", "--draws", "-1"], "--draws", "a positive integer"),
        (["reproduce", "damr", "--datasets", " , "], "--datasets", "at least one name"),
        (["reproduce", "damr", "--out", __file__], "--out", "is a file, not a folder"),
        (["reproduce", "damr", "--out", f"{__file__}/sub"], "--out", "is a file, not a folder"),
        (["demo", "--per-class", "0"], "--per-class", "a positive integer"),
        (["demo", "--repeats", "0"], "--repeats", "a positive integer"),
        (["demo", "--seed", "-1"], "--seed", "from 0 to 2**32 - 1"),
        (["demo", "--moons-level", "4"], "--moons-level", "invalid choice"),
    ],
)
def test_bad_numbers_and_folders_are_argparse_errors(args, option, problem, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(args)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and f"argument {option}: " in err and problem in err


def test_demo_per_class_must_leave_unlabeled_points(capsys):
    assert main(["demo", "--repeats", "1", "--dataset", "iris", "--per-class", "50"]) == 2
    err = capsys.readouterr().err
    assert "--per-class 50: iris (standardised) has 50 points in its smallest class" in err


@pytest.mark.parametrize("table", ["", "  ", "\t"])
def test_reproduce_refuses_an_empty_table_name_and_lists_the_tables(table, tmp_path, capsys):
    """``--table ""`` used to run every table; now it is refused before any file is made."""
    out = tmp_path / "out"
    assert main(["reproduce", "damr", "--table", table, "--quick", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"structreg: error: --table {table!r}: give a table name; damr's tables: 3, 4, 5 "
        "(leave --table out to run them all)\n"
    )
    assert main(["reproduce", "drlsc", "--table", table, "--out", str(out)]) == 2
    assert "drlsc's tables: 4-5 (4/5/toy/fig1), 6, 7," in capsys.readouterr().err
    assert main(["reproduce", "damr", "--table", "9", "--out", str(out)]) == 2
    assert "no table '9'; available: 3, 4, 5" in capsys.readouterr().err
    assert not out.exists()


def test_help_documents_the_exit_codes(capsys):
    for args in (["--help"], ["reproduce", "--help"]):
        with pytest.raises(SystemExit) as exit_:
            main(args)
        assert exit_.value.code == 0
        text = " ".join(capsys.readouterr().out.split())
        for code in ("0 done", "1 failed", "2 usage error", "130 interrupted"):
            assert code in text


@pytest.fixture
def fresh_damr_sets():
    """damr's Table-2 sets as this test's data folder gives them: damr keeps the sets it loaded
    for the rest of the process, whatever ``STRUCTREG_DATA`` says later."""
    from structreg.experiments import damr

    damr.load_table2_dataset.cache_clear()
    yield
    damr.load_table2_dataset.cache_clear()


PACKAGED_MANIFEST = Path(__file__).parents[1] / "structreg" / "datasets" / "MANIFEST.json"


def test_reproduce_accepts_a_copy_of_the_packaged_manifest(
    tmp_path, monkeypatch, capsys, fresh_damr_sets
):
    """The packaged manifest's wdbc entry has no file; a data folder holding a copy of it
    used to be refused (entry 20) after an empty results.sqlite had been made."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "MANIFEST.json").write_text(PACKAGED_MANIFEST.read_text(encoding="utf-8"))
    monkeypatch.setenv("STRUCTREG_DATA", str(data))
    assert main([*TINY, "--out", str(tmp_path / "out"), "--progress", "off"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and "damr table 3: 2 cells computed, 0 reused" in captured.out
    assert "Wdbc: not run: not requested" in captured.out  # listed, as without the copy


@pytest.mark.parametrize(
    "manifest, message",
    [
        ('[{"name": "x", "file": 3}]', "entry 'x': 'file' must be a file name or null, got 3"),
        ('[{"file": "x.csv.gz"}]', "entry 0 must be an object with a string field 'name'"),
        ("{not json", "cannot read the data home manifest"),
    ],
)
def test_a_malformed_data_folder_is_refused_before_any_file_is_made(
    tmp_path, monkeypatch, capsys, manifest, message
):
    data, out = tmp_path / "data", tmp_path / "out"
    data.mkdir()
    (data / "MANIFEST.json").write_text(manifest)
    monkeypatch.setenv("STRUCTREG_DATA", str(data))
    assert main([*TINY, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("structreg: error: ") and str(data / "MANIFEST.json") in err
    assert message in err
    assert len(err.splitlines()) == 1 and not out.exists()
    monkeypatch.setenv("STRUCTREG_DATA", str(data / "MANIFEST.json"))  # a file, not a folder
    assert main([*TINY, "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"structreg: error: the data home {data / 'MANIFEST.json'} (STRUCTREG_DATA) is a file, "
        "not a folder\n"
    )
    assert not out.exists()


def test_a_data_file_that_is_not_gzip_is_named_with_the_reason(
    tmp_path, monkeypatch, capsys, fresh_damr_sets
):
    """A plain-text sonar.csv.gz and a truncated pima.csv.gz in the data folder: a warning line
    each (path and reason), the tables skip the sets with the same words, the rest runs."""
    data, out = tmp_path / "data", tmp_path / "out"
    data.mkdir()
    (data / "sonar.csv.gz").write_text("attribute_1,label\n0.02,Rock\n")
    whole = gzip.compress(b"attribute_1,label\n" + b"0.02,Rock\n" * 2000)
    (data / "pima.csv.gz").write_bytes(whole[: len(whole) // 2])
    monkeypatch.setenv("STRUCTREG_DATA", str(data))
    args = [*TINY[:-1], "sonar,bupa", "--out", str(out), "--progress", "off"]
    assert main(args) == 0
    captured = capsys.readouterr()
    sonar = f"{data / 'sonar.csv.gz'} is not a valid gzip file: Not a gzipped file"
    pima = f"{data / 'pima.csv.gz'} is not a valid gzip file: it is truncated"
    assert captured.err.splitlines() == [
        f"structreg: warning: data set 'pima' is skipped: {pima} (the compressed data ends early)",
        f"structreg: warning: data set 'sonar' is skipped: {sonar} (b'at')",
    ]
    assert f"- Sonar: skipped: 'sonar' could not be loaded ({sonar}" in captured.out
    assert f"- Pima: skipped: 'pima' could not be loaded ({pima}" in captured.out
    assert "| Bupa |" in captured.out and "damr table 3: 2 cells computed" in captured.out


@pytest.fixture
def two_papers(monkeypatch):
    """``reproduce all`` over two of the papers only (damr and srlsc), to keep the test short."""
    from structreg import cli
    from structreg.experiments import registry

    subset = {k: v for k, v in registry.PAPERS.items() if k in ("damr", "srlsc")}
    monkeypatch.setattr(registry, "PAPERS", subset)
    monkeypatch.setattr(cli, "PAPERS", subset)


ALL_TINY = ["reproduce", "all", "--quick", "--draws", "2", "--datasets", "sonar"]


def test_reproduce_all_one_store_per_paper_an_index_and_one_not_run_list(
    tmp_path, capsys, two_papers
):
    assert main([*ALL_TINY, "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    for paper in ("damr", "srlsc"):
        assert (tmp_path / paper / "results.sqlite").exists()
    assert (tmp_path / "damr" / "damr_3.md").exists() and (tmp_path / "srlsc").is_dir()
    # the skipped sets are printed once for the run, naming the tables that skipped them
    assert out.count("Not run") == 1 and out.count("Biomed") == 1
    assert "Biomed, Ethn, Isolet: skipped: not among structreg's data sets (damr 3, damr 4" in out
    index = (tmp_path / "index.md").read_text()
    tables = ("damr | 3", "damr | 4", "damr | 5", "srlsc | fig7", "srlsc | 4")
    assert all(f"| {t} |" in index for t in tables)
    assert "| damr | 3 | " in index and "2 (2 new)" in index and "`damr/damr_3.md`" in index
    assert "DA_LapRLSC >= LapRLSC at 10 labels" in index  # the status table's verdict row
    assert "reduced protocol" in index
    # the same command again resumes: nothing is computed
    assert main([*ALL_TINY, "--out", str(tmp_path)]) == 0
    assert "2 (0 new)" in (tmp_path / "index.md").read_text()
    assert "damr table 3: 0 cells computed, 2 reused" in capsys.readouterr().out


def test_reproduce_all_refuses_a_table_name_and_lists_every_papers_tables(capsys):
    assert main(["reproduce", "all", "--table", "3"]) == 2
    assert "give the paper instead of 'all'" in capsys.readouterr().err
    assert main(["reproduce", "all", "--list-tables"]) == 0
    out = capsys.readouterr().out
    assert "damr   3 " in out and "srlsc  fig7 " in out and "drlsc  4-5 " in out


def test_every_status_row_rests_on_a_report_of_a_known_paper():
    """The index copies a status row beside a table by the report file the row names."""
    from structreg.experiments.index import status_verdicts
    from structreg.experiments.registry import PAPERS

    rows = status_verdicts()
    assert len(rows) >= 15
    for row in rows:
        assert row.files(), row.claim
        assert all(name.split("_")[0] in PAPERS for name in row.files()), row.claim
        assert row.verdict and row.ours
    named = set().union(*(row.files() for row in rows))
    assert {"damr_3", "damr_4", "srlsc_fig7", "srlsc_4", "drlsc_4-5"} <= named


def test_reproduce_all_quick_every_paper(tmp_path, capsys, request):
    """The reviewer's one command, every paper's reduced protocol (about 90 s on 2 cores, so
    only with ``pytest --slow``, to keep CI's suite short; the two-paper test above runs the
    same code path): every table gets a report, a row in the index and a results store."""
    if not request.config.getoption("--slow", default=False):
        pytest.skip("every paper's --quick protocol (~90 s): run with --slow")
    from structreg.experiments import paper_tables
    from structreg.experiments.registry import PAPERS

    assert main(["reproduce", "all", "--quick", "--n-jobs", "2", "--out", str(tmp_path)]) == 0
    assert capsys.readouterr().out.count("Not run (") == 1
    index = (tmp_path / "index.md").read_text()
    for paper in PAPERS:
        assert (tmp_path / paper / "results.sqlite").exists()
        for table in paper_tables(paper):
            assert f"| {paper} | {table.name} |" in index
