"""Every file the package reads from ``src/jalapeno/data`` is shipped by a non-editable install.

``[tool.setuptools.package-data]`` in pyproject.toml lists the data globs a wheel carries; a file
outside them loads from a checkout (or an editable install) but is missing from a wheel, so the
software-stack profiles (data/stacks.toml, data/stack_fits.toml) failed to load there.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_data_file_is_in_the_package_data_globs():
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["jalapeno"]
    pkg = ROOT / "src" / "jalapeno"
    shipped = {p for g in globs for p in pkg.glob(g) if p.is_file()}
    data = {p for p in (pkg / "data").rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    missing = sorted(p.relative_to(pkg).as_posix() for p in data - shipped)
    assert not missing, f"add these to [tool.setuptools.package-data] in pyproject.toml: {missing}"
