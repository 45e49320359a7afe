"""The R fixtures are what their R scripts make: where Rscript with the R packages a
script uses is installed, run it again and compare every file it writes. Skipped
without them (the tests that use the fixtures do not need R)."""

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.reference.r import FIXTURES, PARTY, SCRIPT

RSCRIPT = shutil.which("Rscript")
LOCALIMP = Path(__file__).parent / "fixtures" / "randomforest_localimp"


def _r_has(packages):
    return RSCRIPT is not None and subprocess.run(
        [RSCRIPT, "-e", "; ".join(f"library({name})" for name in packages)],
        capture_output=True).returncode == 0


@pytest.mark.parametrize("folder, script, arguments, packages", [
    # tests/importance/test_r_randomforest.py, test_r_ranger.py
    (FIXTURES, SCRIPT, True, ("randomForest", "ranger")),
    # test_oob_randomforest.py
    (LOCALIMP, LOCALIMP / "make_fixture.R", False, ("randomForest",)),
    (PARTY, PARTY / "make_fixtures.R", True, ("party",)),  # test_r_party.py
], ids=["reference-r", "randomforest-localimp", "party"])
def test_fixtures_regenerate_identically(folder, script, arguments, packages, tmp_path):
    if not _r_has(packages):
        pytest.skip(f"Rscript with the R packages {', '.join(packages)} is not installed")
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
