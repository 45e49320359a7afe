"""Draw the README's SHAP pictures and capture the command-line output shown beside them.

    PYTHONPATH=src python docs/pictures.py

Writes docs/images/explain.txt and docs/images/explain-notebook.png (``sapwood.explain``:
what ``print(report)`` shows, and the display of that call executed in a notebook
kernel as headless Chromium paints it, when Chromium is installed),
docs/images/beeswarm.png, docs/images/dependence.png (the library, on the tour's
boosting model), docs/images/explain-row.png (the waterfall of the report
written by ``sapwood explain --row``) and docs/images/explain-row.txt (what that
command printed for the row). Everything is computed here, from the tour's own data
and seeds, so the README shows real output.
"""

from __future__ import annotations

import base64
import contextlib
import io
import os
import re
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

import sapwood  # noqa: E402
from sapwood import plotting  # noqa: E402
from sapwood.cli import main  # noqa: E402
from sapwood.datasets import make_ground_truth  # noqa: E402
from sapwood.importance import tree_shap  # noqa: E402

IMAGES = Path(__file__).resolve().parent / "images"
ROW = 6  # a held-out row of the command's split (--seed 0)


def library_pictures():
    """The tour's boosting model, explained in probability against 200 background rows."""
    X, y, _ = make_ground_truth(n_samples=2000, random_state=0)
    X_train, X_test, y_train, _ = train_test_split(X, y, random_state=0)
    booster = sapwood.GradientBoostingClassifier(random_state=0).fit(X_train, y_train)
    explained = tree_shap(booster, X_test, data=X_train[:200], model_output="probability")
    for name, draw in (("beeswarm", lambda ax: plotting.beeswarm(explained, ax=ax)),
                       ("dependence", lambda ax: plotting.dependence(explained, "inf_1",
                                                                     ax=ax))):
        figure, ax = plt.subplots(figsize=(7.5, 4.8))
        draw(ax)
        figure.savefig(IMAGES / f"{name}.png", dpi=90, bbox_inches="tight")
        plt.close(figure)


def command_line_pictures():
    """``sapwood explain ground_truth.csv --target y --methods shap --row 6``, run in a
    scratch folder so that the printed path is the short one a user would type."""
    X, y, _ = make_ground_truth(n_samples=2000, random_state=0)
    with tempfile.TemporaryDirectory() as folder:
        here = Path.cwd()
        os.chdir(folder)
        try:
            X.assign(y=y).to_csv("ground_truth.csv", index=False)
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                code = main(["explain", "ground_truth.csv", "--target", "y", "--methods",
                             "shap", "--row", str(ROW), "--report", "report.html"])
            assert code == 0, code
            report = Path("report.html").read_text(encoding="utf-8")
        finally:
            os.chdir(here)
    text = printed.getvalue()
    shown = text[text.index(f"Row {ROW} of "):text.index("Report written to")]
    (IMAGES / "explain-row.txt").write_text(shown, encoding="utf-8")
    waterfall = re.search(r"<img alt='waterfall' src=\"data:image/png;base64,([^\"]+)\"",
                          report)
    (IMAGES / "explain-row.png").write_bytes(base64.b64decode(waterfall[1]))


# The README's call, as a notebook cell: the picture is what a notebook displays.
NOTEBOOK_CELL = """\
import sapwood
from sapwood.datasets import make_ground_truth

X, y, _ = make_ground_truth(2000, task="classification", random_state=0)
report = sapwood.explain(X, y, methods="mdi,permutation,shap")
report
"""


def report_pictures():
    """The tour's first example: ``sapwood.explain`` on the ground-truth table; the
    notebook picture from the display of that call executed in a real notebook kernel
    (nbclient), as headless Chromium paints it."""
    import shutil
    import subprocess

    import nbclient
    import nbformat

    X, y, _ = make_ground_truth(2000, task="classification", random_state=0)
    report = sapwood.explain(X, y, methods="mdi,permutation,shap")
    (IMAGES / "explain.txt").write_text(report.to_text(width=88), encoding="utf-8")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("chromium is not installed: docs/images/explain-notebook.png not redrawn")
        return
    notebook = nbformat.v4.new_notebook()
    notebook.cells.append(nbformat.v4.new_code_cell(NOTEBOOK_CELL))
    nbclient.NotebookClient(notebook, timeout=900, kernel_name="python3").execute()
    [shown] = [output.data["text/html"] for output in notebook.cells[0].outputs
               if output.output_type == "execute_result"]
    with tempfile.TemporaryDirectory() as folder:
        page = Path(folder) / "display.html"
        page.write_text("<!DOCTYPE html><html><head><meta charset='utf-8'><style>body "
                        "{font-family: sans-serif; max-width: 46em; margin: 1em;}</style>"
                        f"</head><body>{shown}</body></html>",
                        encoding="utf-8")
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                        "--hide-scrollbars", f"--user-data-dir={Path(folder) / 'profile'}",
                        f"--screenshot={IMAGES / 'explain-notebook.png'}",
                        "--window-size=820,1180", page.as_uri()],
                       check=True, capture_output=True, timeout=120)


if __name__ == "__main__":
    IMAGES.mkdir(exist_ok=True)
    report_pictures()
    library_pictures()
    command_line_pictures()
    print(f"written to {IMAGES}")
