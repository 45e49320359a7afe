"""The R fixtures are what ``tests/reference/r/make_fixtures.R`` makes: where Rscript
with randomForest and ranger is installed, run the script again and compare every file.
Skipped without R (the tests that use the fixtures do not need it)."""

import shutil
import subprocess

import pytest

from tests.reference.r import FIXTURES, SCRIPT

RSCRIPT = shutil.which("Rscript")


def _r_has_packages():
    return RSCRIPT is not None and subprocess.run(
        [RSCRIPT, "-e", "library(randomForest); library(ranger)"],
        capture_output=True).returncode == 0


@pytest.mark.skipif(not _r_has_packages(),
                    reason="Rscript with the randomForest and ranger packages is not installed")
def test_fixtures_regenerate_identically(tmp_path):
    subprocess.run([RSCRIPT, str(SCRIPT), str(tmp_path)], check=True, capture_output=True,
                   cwd=FIXTURES)
    made = (tmp_path / "VERSIONS").read_text()
    kept = (FIXTURES / "VERSIONS").read_text()
    if made != kept:
        pytest.skip(f"the fixtures were made with {kept.strip()}; this host has "
                    f"{made.strip()}: their random streams may differ, regenerate them")
    names = sorted(path.name for path in FIXTURES.glob("*.csv"))
    assert names == sorted(path.name for path in tmp_path.glob("*.csv"))
    for name in names:
        assert (tmp_path / name).read_bytes() == (FIXTURES / name).read_bytes(), name
