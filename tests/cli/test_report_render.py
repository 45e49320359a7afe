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


# Added before the page's own content: records every error (a script's, or a resource
# that did not load), then on load where the verdict landed in the window and which
# folded sections show content once opened.
CHECKS = """<script>
const sapwoodErrors = [];
window.addEventListener('error', (e) => sapwoodErrors.push(e.message
  || ('failed to load ' + (e.target.src || e.target.href))), true);
window.addEventListener('load', () => {
  const body = document.body;
  const card = document.getElementById('verdict');
  const heading = card.querySelector('strong');
  const first = heading.parentElement.nextElementSibling.querySelector('li');
  body.setAttribute('data-errors', sapwoodErrors.join(' | '));
  body.setAttribute('data-window', window.innerWidth + 'x' + window.innerHeight);
  body.setAttribute('data-verdict', [heading, first].map(
    (e) => Math.round(e.getBoundingClientRect().bottom)).join(','));
  const folded = [...document.querySelectorAll('details')];
  folded.forEach((d) => { d.open = true; });
  const shown = folded.filter((d) => [...d.children].some(
    (c) => c.tagName !== 'SUMMARY' && c.getBoundingClientRect().height > 0));
  body.setAttribute('data-opened', shown.length + '/' + folded.length);
  body.setAttribute('data-probed', 'yes');
});
</script>"""
VIEWPORT = (1280, 800)


def opened_in_a_browser(page, tmp_path) -> dict:
    """What the page did in headless Chromium at 1280x800: its console lines, the errors
    it raised, where the verdict's heading and first line end (pixels from the top),
    and how many folded sections show content when opened."""
    probe = tmp_path / "checked.html"
    html = page.read_text(encoding="utf-8")
    probe.write_text(html.replace("<head>", "<head>" + CHECKS, 1), encoding="utf-8")
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
               "--no-first-run", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--enable-logging=stderr",
               "--v=0", f"--user-data-dir={tmp_path / 'chromium-profile'}",
               f"--window-size={VIEWPORT[0]},{VIEWPORT[1]}", "--dump-dom", probe.as_uri()]
    result = subprocess.run(command, capture_output=True, text=True, timeout=90)
    assert result.returncode == 0, result.stderr[-2000:]
    dom = result.stdout
    assert 'data-probed="yes"' in dom

    def read(name):
        return re.search(rf'data-{name}="([^"]*)"', dom).group(1)

    opened, folded = read("opened").split("/")
    return {"console": [line for line in result.stderr.splitlines() if ":CONSOLE" in line],
            "errors": read("errors"), "window": read("window"),
            "verdict": [int(v) for v in read("verdict").split(",")],
            "opened": int(opened), "folded": int(folded)}


def _check_page(page, tmp_path):
    seen = opened_in_a_browser(page, tmp_path)
    assert seen["console"] == [] and seen["errors"] == ""
    # The page's viewport in a 1280x800 window (less its frame: stricter than 800).
    width, height = (int(v) for v in seen["window"].split("x"))
    assert width == VIEWPORT[0] and height <= VIEWPORT[1]
    heading, first_line = seen["verdict"]
    assert 0 < heading < first_line <= height  # the verdict and what it relies on
    assert seen["folded"] >= 5 and seen["opened"] == seen["folded"]


def test_the_report_renders_with_its_verdict_in_the_first_screen(report, tmp_path):
    _check_page(report, tmp_path)


def test_the_checks_see_errors(tmp_path):
    # The probe itself can fail: a broken image and a console error are seen.
    page = tmp_path / "broken.html"
    page.write_text("<!DOCTYPE html><html><head></head><body><div id='verdict'><p>"
                    "<strong>Verdict</strong></p><ul><li>x</li></ul></div>"
                    "<img src='missing.png'><script>console.error('boom')</script>"
                    "</body></html>", encoding="utf-8")
    seen = opened_in_a_browser(page, tmp_path)
    assert any("boom" in line for line in seen["console"])
    assert "missing.png" in seen["errors"]


@pytest.mark.slow
def test_a_1500_column_report_stays_under_a_megabyte(tmp_path):
    # About five minutes on a busy 2-core machine (the checks on 1,500 columns).
    import pandas as pd

    import sapwood

    rng = np.random.default_rng(0)
    n = 200
    latent = rng.normal(size=(n, 100))
    columns = {f"g{b}_{k}": latent[:, b] + 0.2 * rng.normal(size=n)
               for b in range(100) for k in range(5)}
    columns |= {f"n{j}": rng.normal(size=n) for j in range(1_000)}
    X = pd.DataFrame(columns)
    y = latent[:, :3].sum(axis=1) + rng.normal(size=n)
    report = sapwood.explain(X, y, model=sapwood.RandomForestRegressor(n_estimators=5),
                             methods="mdi,permutation")
    page = report.to_html(tmp_path / "wide.html")
    assert page.stat().st_size < 1_000_000
    _check_page(page, tmp_path)
