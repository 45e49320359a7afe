"""The R fixtures are what their R scripts make: where Rscript with randomForest and
ranger is installed, run each script again and compare every file it writes. Skipped
without R (the tests that use the fixtures do not need it)."""

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.reference.r import FIXTURES, SCRIPT

RSCRIPT = shutil.which("Rscript")
LOCALIMP = Path(__file__).parent / "fixtures" / "randomforest_localimp"


def _r_has_packages():
    return RSCRIPT is not None and subprocess.run(
        [RSCRIPT, "-e", "library(randomForest); library(ranger)"],
        capture_output=True).returncode == 0


@pytest.mark.skipif(not _r_has_packages(),
                    reason="Rscript with the randomForest and ranger packages is not installed")
@pytest.mark.parametrize("folder, script, arguments", [
    (FIXTURES, SCRIPT, True),  # tests/importance/test_r_randomforest.py, test_r_ranger.py
    (LOCALIMP, LOCALIMP / "make_fixture.R", False),  # test_oob_randomforest.py
], ids=["reference-r", "randomforest-localimp"])
def test_fixtures_regenerate_identically(folder, script, arguments, tmp_path):
    # make_fixtures.R takes the output folder; make_fixture.R writes where it runs.
    command = [RSCRIPT, str(script)] + ([str(tmp_path)] if arguments else [])
    subprocess.run(command, check=True, capture_output=True, cwd=tmp_path)
    made = (tmp_path / "VERSIONS").read_text()
    kept = (folder / "VERSIONS").read_text()
    if made != kept:
        pytest.skip(f"the fixtures were made with {kept.strip()}; this host has "
                    f"{made.strip()}: their random streams may differ, regenerate them")
    names = sorted(path.name for path in folder.glob("*.csv"))
    assert names == sorted(path.name for path in tmp_path.glob("*.csv"))
    for name in names:
        assert (tmp_path / name).read_bytes() == (folder / name).read_bytes(), name
