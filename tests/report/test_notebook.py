"""The notebook display of a Report: executed in a real notebook (nbclient), then the
HTML it put in the cell's output rendered in headless Chromium (skipped, with the
reason shown, where Chromium is not installed: ``make chromium``)."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CELL = """\
import sapwood
from sapwood.datasets import make_ground_truth

X, y, _ = make_ground_truth(500, task="classification", random_state=0)
report = sapwood.explain(X, y, methods="mdi,permutation")
report
"""


@pytest.fixture(scope="module")
def displayed(tmp_path_factory):
    """The text/html the notebook showed for the report."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells.append(nbformat.v4.new_code_cell(CELL))
    client = nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3")
    client.execute()
    [output] = [o for o in notebook.cells[0].outputs if o.output_type == "execute_result"]
    return output.data["text/html"]


def test_the_notebook_shows_the_verdict_card_first(displayed):
    card = displayed.index("class='card'")
    assert card < displayed.index("<svg") < displayed.index("<details")
    assert "The model clearly relies on:" in displayed
    assert "inf_1" in displayed
    # The warnings come before the collapsed details, each measure collapsed.
    assert displayed.index("Warning (") < displayed.index("<details")
    assert len(re.findall(r"<details>", displayed)) >= 2
    assert "<script" not in displayed


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make chromium, "
                    "or apt-get install chromium): the notebook display is not rendered")
def test_the_display_renders_in_a_browser(displayed, tmp_path):
    from PIL import Image

    page = tmp_path / "display.html"
    page.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>"
                    f"{displayed}</body></html>", encoding="utf-8")
    shot = tmp_path / "display.png"
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               "--disable-background-networking", "--disable-component-update",
               f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}",
               "--window-size=900,1400", page.as_uri()]
    result = subprocess.run(command, capture_output=True, text=True, timeout=90)
    assert result.returncode == 0, result.stderr[-2000:]
    with Image.open(shot) as image:
        pixels = np.asarray(image.convert("RGB"))
    # The picture's bars (relied on: #2b6cb0) are painted, below the card's text.
    blue = np.all(np.abs(pixels.astype(int) - (43, 108, 176)) <= 6, axis=2)
    assert blue.sum() > 500
    rows = np.flatnonzero(blue.any(axis=1))
    text = np.flatnonzero((pixels < 100).all(axis=2).any(axis=1))
    assert text.min() < rows.min()  # the card's text comes first
