"""The user guide's glossary documents every parameter name that the code's glossary validates."""

import re
from pathlib import Path

from structreg._params import PARAMETER_CONSTRAINTS

GLOSSARY = Path(__file__).resolve().parents[1] / "docs" / "user_guide" / "glossary.md"


def test_every_parameter_name_is_in_the_glossary():
    documented = set()
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        if line.startswith("| `"):
            documented.update(re.findall(r"`([A-Za-z_]\w*)`", line.split("|")[1]))
    missing = sorted(set(PARAMETER_CONSTRAINTS) - documented)
    assert not missing, f"parameters missing from docs/user_guide/glossary.md: {missing}"
