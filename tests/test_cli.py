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
    monkeypatch.setenv("STRUCTREG_DATA", str(tmp_path))
    monkeypatch.delenv("STRUCTREG_DATA_URL", raising=False)
    assert main(["demo", "--repeats", "1", "--dataset", "iris"]) == 0
    assert "iris: skipped, data not available" in capsys.readouterr().out


def test_datasets_commands(capsys):
    assert main(["datasets", "list"]) == 0
    out = capsys.readouterr().out
    assert "usps" in out and "wdbc" in out
    assert main(["datasets", "info", "iris"]) == 0
    assert '"n_samples": 150' in capsys.readouterr().out
    assert main(["datasets", "info", "nope"]) == 2
    assert "unknown" in capsys.readouterr().err.lower()


def test_bad_subcommand_exits():
    with pytest.raises(SystemExit):
        main(["frobnicate"])
