"""The README's glossary documents every parameter name that the code's glossary validates."""

import re
from pathlib import Path

from structreg._params import PARAMETER_CONSTRAINTS

README = Path(__file__).resolve().parents[1] / "README.md"


def test_every_parameter_name_is_in_the_readme_glossary():
    text = README.read_text()
    section = text.split("## Glossary of parameter names", 1)[1].split("\n## ", 1)[0]
    documented = set()
    for line in section.splitlines():
        if line.startswith("| `"):
            documented.update(re.findall(r"`([A-Za-z_]\w*)`", line.split("|")[1]))
    missing = sorted(set(PARAMETER_CONSTRAINTS) - documented)
    assert not missing, f"parameters missing from the README glossary: {missing}"
