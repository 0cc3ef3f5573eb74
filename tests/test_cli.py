import json

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
