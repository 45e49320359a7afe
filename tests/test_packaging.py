"""The wheel's extras are the ones the README lists, and the build backend can read the
project table.

Building a wheel needs a build environment from the package index (``make wheel``);
``SAPWOOD_WHEEL=dist/sapwood-...whl`` makes the last test read a built wheel's metadata
too (``make wheel`` sets it).
"""

import os
import re
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def readme_extras():
    """The extras named in the first column of the README's install table."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("### Install with pip", 1)[1].split("\n## ", 1)[0]
    return {m.group(1) for m in re.finditer(r"^\| `([a-z0-9-]+)` \|", section, re.M)}


def test_the_readme_lists_every_extra_and_no_other():
    assert readme_extras() == set(PROJECT["project"]["optional-dependencies"])


def test_all_installs_every_runtime_extra():
    extras = PROJECT["project"]["optional-dependencies"]
    (everything,) = extras["all"]
    named = set(re.fullmatch(r"sapwood\[(.*)\]", everything).group(1).split(","))
    assert named == set(extras) - {"all", "docs", "test"}


def test_the_build_backend_reads_the_license_string():
    # An SPDX string in project.license (PEP 639) needs setuptools 77 or later; an older
    # one refuses the whole project table.
    (requirement,) = PROJECT["build-system"]["requires"]
    minimum = re.fullmatch(r"setuptools>=(\d+)", requirement)
    assert isinstance(PROJECT["project"]["license"], str) and minimum
    assert int(minimum.group(1)) >= 77


def test_a_built_wheel_declares_the_readme_extras():
    path = os.environ.get("SAPWOOD_WHEEL")
    if not path:
        pytest.skip("SAPWOOD_WHEEL names no built wheel (make wheel runs this test)")
    with zipfile.ZipFile(path) as wheel:
        (metadata,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
        text = wheel.read(metadata).decode("utf-8")
        assert any(n.startswith("sapwood/_kernels/") for n in wheel.namelist())
    declared = set(re.findall(r"^Provides-Extra: (\S+)$", text, re.M))
    assert declared == readme_extras()
    assert re.search(r"^Version: 0\.1\.0$", text, re.M)
