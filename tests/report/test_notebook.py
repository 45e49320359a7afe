"""The report in a real notebook (nbclient runs a kernel): each cell shows what a user
expects and nothing else. Then the HTML the notebook showed is rendered in headless
Chromium (skipped, with the reason shown, where Chromium is not installed:
``make chromium``)."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CELLS = {
    "explain": """\
import sapwood
from sapwood.datasets import make_ground_truth

X, y, _ = make_ground_truth(500, task="classification", random_state=0)
report = sapwood.explain(X, y, methods="mdi,permutation", effects=True, progress=True)
""",
    "plot": "report.plot()",
    "print": "print(report)",
    "to_text": "text = report.to_text()",
    "display": "report",
}


@pytest.fixture(scope="module")
def outputs():
    """Each cell's outputs, by the cell's name in CELLS."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in CELLS.values()]
    client = nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3")
    client.execute()
    return {name: cell.outputs for name, cell in zip(CELLS, notebook.cells, strict=True)}


@pytest.fixture(scope="module")
def displayed(outputs):
    """The text/html the notebook showed for the report."""
    [output] = [o for o in outputs["display"] if o.output_type == "execute_result"]
    return output.data["text/html"]


def _texts(cell_outputs):
    return "".join(o.get("text", "") for o in cell_outputs if o.output_type == "stream")


def test_progress_in_a_notebook_without_ipywidgets_is_plain_text(outputs):
    explain = outputs["explain"]
    assert [o.output_type for o in explain if o.output_type != "stream"] == []
    assert all(o.name == "stderr" for o in explain)
    text = _texts(explain)
    assert "ipywidgets" not in text and "install" not in text
    assert "\x1b" not in text  # no terminal codes: the notebook would show them
    # Each step, and the measures' counted bars, one line when it ends.
    # The checks: a counted bar (identifiers, associations, groups, and one per column).
    assert re.search(r"Checking for identifiers, leakage and correlated features .* "
                     r"12/12", text)
    assert re.search(r"permuted scores .* 45/45", text)


def test_plot_shows_its_picture(outputs):
    pictures = [o for o in outputs["plot"] if o.output_type == "display_data"
                and "image/png" in o.data]
    assert len(pictures) == 1


def test_print_prints_the_text_once_and_displays_nothing(outputs):
    [output] = outputs["print"]
    assert output.output_type == "stream" and output.name == "stdout"
    assert output.text.count("Verdict") == 1
    assert "The model clearly relies on" in output.text


def test_to_text_displays_nothing(outputs):
    assert outputs["to_text"] == []


def test_the_notebook_shows_the_verdict_card_first(displayed):
    card = displayed.index("class='card'")
    assert card < displayed.index("<svg") < displayed.index("<details")
    assert "The model clearly relies on:" in displayed
    assert "inf_1" in displayed
    # The warnings come before the collapsed details, each measure collapsed.
    assert displayed.index("Warning (") < displayed.index("<details")
    assert len(re.findall(r"<details>", displayed)) >= 2
    assert "<script" not in displayed


def test_the_notebook_shows_the_effects_folded(displayed):
    start = displayed.index("<summary>Effects and interactions</summary>")
    section = displayed[displayed.rindex("<details", 0, start):displayed.index("</details>",
                                                                                start)]
    assert section.count("<img") >= 2  # the curves and the interactions


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
