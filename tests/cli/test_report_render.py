"""The report ``sapwood demo --report`` writes, opened in headless Chromium: every image
decodes, and the page paints text, charts and the tree (not a blank or one-colour page).

Needs Debian's ``chromium`` (``make chromium`` installs it; ``make test`` tries to);
skipped without it.
"""

import re
import shutil
import subprocess

import numpy as np
import pytest

from sapwood.cli import main

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed "
                                "(make chromium, or apt-get install chromium)")

WIDTH, HEIGHT = 1200, 3000
# Colours the report paints: the verdict picture's bars of features relied on
# (#2b6cb0) and the warning box (#fff4d6).
BAR_BLUE = (43, 108, 176)
# Marks each <img> with what the browser decoded; added to a copy, the report itself
# has no scripts.
PROBE = ("<script>window.addEventListener('load', () => {"
         "for (const img of document.images) {"
         "img.setAttribute('data-decoded', img.naturalWidth + 'x' + img.naturalHeight"
         " + (img.complete ? ' complete' : ' pending'));}"
         "document.body.setAttribute('data-probed', 'yes');});</script>")


def chromium(*args, tmp_path):
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
               "--no-first-run", "--disable-background-networking",
               "--disable-component-update", "--disable-sync",
               f"--user-data-dir={tmp_path / 'chromium-profile'}", *args]
    result = subprocess.run(command, capture_output=True, text=True, timeout=90)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    path = tmp_path_factory.mktemp("render") / "report.html"
    assert main(["demo", "--n-samples", "600", "--quiet", "--report", str(path)]) == 0
    return path


def test_the_verdict_comes_first_and_the_details_fold(report):
    html = report.read_text(encoding="utf-8")
    assert html.index("<nav>") < html.index("id='verdict'") < html.index("id='warnings'") \
        < html.index("<details")
    assert html.count("<details id=") >= 5  # every measure, ranks, agreement, tree, trace


def test_every_image_decodes(report, tmp_path):
    html = report.read_text(encoding="utf-8")
    sources = re.findall(r"<img [^>]*src=\"([^\"]*)\"", html)
    assert len(sources) >= 3  # MDI chart, permutation chart (or note), tree drawing
    assert all(src.startswith("data:image/png;base64,") and len(src) > 1000
               for src in sources)
    probe = tmp_path / "probe.html"
    # The details open, as a reader who unfolds them sees them.
    probe.write_text(html.replace("<details ", "<details open ").replace(
        "</body>", PROBE + "</body>"), encoding="utf-8")
    dom = chromium("--dump-dom", probe.as_uri(), tmp_path=tmp_path)
    assert 'data-probed="yes"' in dom
    decoded = re.findall(r'data-decoded="(\d+)x(\d+) (\w+)"', dom)
    assert len(decoded) == len(sources)
    for width, height, state in decoded:
        assert state == "complete"
        assert int(width) > 200 and int(height) > 100
    # The whole document arrived: the last paragraph is there.
    assert "Written by sapwood." in dom


def test_screenshot_shows_the_report(report, tmp_path):
    from PIL import Image

    shot = tmp_path / "report.png"
    chromium(f"--screenshot={shot}", f"--window-size={WIDTH},{HEIGHT}", report.as_uri(),
             tmp_path=tmp_path)
    assert shot.stat().st_size > 50_000
    with Image.open(shot) as image:
        assert image.size == (WIDTH, HEIGHT)
        pixels = np.asarray(image.convert("RGB")).reshape(-1, 3)
    colours = np.unique(pixels, axis=0)
    assert len(colours) > 200  # text, charts, a coloured tree: not a blank page
    not_white = np.any(pixels < 245, axis=1).mean()
    assert 0.03 < not_white < 0.6
    # The bar charts were painted (their blue, scaled by the browser or not).
    blue = np.all(np.abs(pixels.astype(int) - BAR_BLUE) <= 12, axis=1).mean()
    assert blue > 0.001  # the verdict picture at the top; the other charts fold
