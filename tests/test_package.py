"""Release metadata agrees with itself: version, typing marker, citation, changelog."""

from __future__ import annotations

import re
from importlib import metadata, resources
from pathlib import Path

import pytest

import structreg

ROOT = Path(__file__).resolve().parents[1]


def test_installed_version_is_the_package_version():
    assert re.fullmatch(r"\d+\.\d+\.\d+", structreg.__version__)
    assert metadata.version("structreg") == structreg.__version__


def test_package_is_typed():
    assert resources.files("structreg").joinpath("py.typed").is_file()


@pytest.mark.parametrize(
    ("name", "pattern"),
    [
        ("CITATION.cff", r"(?m)^version: {version}$"),
        ("CHANGELOG.md", r"(?m)^## \[{version}\] - \d{{4}}-\d{{2}}-\d{{2}}$"),
    ],
)
def test_release_files_name_the_version(name, pattern):
    path = ROOT / name
    if not path.is_file():
        pytest.skip(f"{name} is not beside the tests (an installed copy of the tests)")
    version = re.escape(structreg.__version__)
    assert re.search(pattern.format(version=version), path.read_text(encoding="utf-8"))


def test_license_matches_the_project_metadata():
    assert metadata.metadata("structreg")["License-Expression"] == "BSD-3-Clause"
    path = ROOT / "LICENSE"
    if path.is_file():
        assert path.read_text(encoding="utf-8").startswith("BSD 3-Clause License")
