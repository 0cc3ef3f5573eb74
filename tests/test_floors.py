"""The dependency floors: ``.ci/floors.txt`` (the exact versions that the CI step
``.ci/floors`` installs and tests) pins every dependency of pyproject.toml and of its test
extra at the floor that pyproject.toml declares, and every list that names a package declares
the same floor."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

try:
    import tomllib
except ImportError:  # Python 3.10: pytest brings tomli
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"
FLOORS = ROOT / ".ci" / "floors.txt"

REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*?)\s*$")


def _name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _release(version: str) -> tuple[int, ...]:
    """``"1.4"`` and ``"1.4.0"`` are the same release."""
    if not re.fullmatch(r"\d+(\.\d+)*", version):
        raise ValueError(f"not a plain release number: {version!r}")
    parts = [int(p) for p in version.split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def declared_floors(requirements: list[str]) -> dict[str, str | None]:
    """name -> the version after ``>=`` (None when a requirement has no floor)."""
    out: dict[str, str | None] = {}
    for requirement in requirements:
        name, _extras, spec = REQUIREMENT.match(requirement).groups()
        found = re.fullmatch(r">=\s*([0-9][0-9.]*)", spec)
        out[_name(name)] = found.group(1) if found else None
    return out


def pinned_floors(text: str) -> dict[str, str]:
    """name -> version of the ``name==version`` lines (comments and blank lines skipped)."""
    out = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        found = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([0-9][0-9.]*)", line)
        if found is None:
            raise ValueError(f"{FLOORS.name}: not an exact pin: {line!r}")
        out[_name(found.group(1))] = found.group(2)
    return out


def disagreements(pyproject: dict, floors_text: str) -> list[str]:
    """Every way in which the pins and pyproject.toml's floors disagree (empty: they agree)."""
    project = pyproject["project"]
    extras = project.get("optional-dependencies", {})
    wanted = {**declared_floors(project["dependencies"]), **declared_floors(extras["test"])}
    pins = pinned_floors(floors_text)
    problems = []
    for name, floor in sorted(wanted.items()):
        if floor is None:
            problems.append(f"{name}: pyproject.toml declares no '>=' floor")
        elif name not in pins:
            problems.append(f"{name}: no pin in {FLOORS.name} (floor {floor})")
        elif _release(pins[name]) != _release(floor):
            problems.append(f"{name}: pyproject.toml says >={floor}, {FLOORS.name} {pins[name]}")
    for name in sorted(set(pins) - set(wanted)):
        problems.append(f"{name}: pinned in {FLOORS.name} but not a dependency or test extra")
    # a package named in several lists has one floor
    for extra, requirements in extras.items():
        for name, floor in declared_floors(requirements).items():
            if name in wanted and wanted[name] is not None and floor is not None:
                if _release(floor) != _release(wanted[name]):
                    problems.append(f"{name}: extra {extra!r} says >={floor}, not {wanted[name]}")
    return problems


def test_floors_file_pins_pyproject_floors():
    if not (FLOORS.is_file() and PYPROJECT.is_file()):
        pytest.skip("not in a checkout: .ci/floors.txt or pyproject.toml is not beside the tests")
    problems = disagreements(tomllib.loads(PYPROJECT.read_text("utf-8")), FLOORS.read_text("utf-8"))
    assert not problems, "\n".join(problems)


def test_a_disagreement_is_found():
    pyproject = {
        "project": {
            "dependencies": ["numpy>=1.23.5", "scipy>=1.9", "tqdm"],
            "optional-dependencies": {
                "test": ["pytest>=7", "dask[distributed]>=2023.1"],
                "dev": ["pytest>=8"],
            },
        }
    }
    text = "numpy==1.23.5\nscipy==1.9.0  # same release as 1.9\npytest==7.0\nextra==1.0\n"
    problems = "\n".join(disagreements(pyproject, text))
    assert "numpy" not in problems and "scipy" not in problems
    assert "tqdm: pyproject.toml declares no '>=' floor" in problems
    assert "dask: no pin" in problems
    assert "extra: pinned" in problems
    assert "pytest: extra 'dev' says >=8" in problems
    off = disagreements(pyproject, text.replace("1.23.5", "1.23.4"))
    assert "numpy: pyproject.toml says >=1.23.5, floors.txt 1.23.4" in off
    with pytest.raises(ValueError, match="exact pin"):
        pinned_floors("numpy>=1.23")
