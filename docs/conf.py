"""Sphinx configuration of sapwood's documentation site (``make docs``).

The stack is the one NumPy, SciPy, scikit-learn and pandas use, so the site reads like
the references sapwood's users already know: Sphinx, the PyData theme, numpydoc for the
API reference from the docstrings (they are written in numpydoc format), MyST for the
Markdown pages (docs/measures.md and docs/model-format.md are read on GitHub too), and
sphinx-gallery, which runs every example at build time so the numbers on the pages are
computed by the sapwood being documented. Nothing is fetched from the network.

The examples are sized (small tables, at most 100 trees) so that the whole site builds
fast: 11 s on the 2-core development host with Numba's cache warm, the examples
included (minutes under heavy load or with a cold cache). ``make test`` builds it with
warnings as errors, so a broken example or a broken cross-reference fails CI.
"""

import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import sapwood  # noqa: E402

project = "sapwood"
author = "the sapwood authors"
copyright = "the sapwood authors"
version = release = sapwood.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "examples/README.txt", "auto_examples/*.ipynb",
                    "auto_examples/*.py", "auto_examples/*.zip", "auto_examples/*.md5",
                    "auto_examples/*.json"]

# MyST: headings get anchors, so README-style links such as
# model-format.md#what-a-file-may-cost resolve on the site too.
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath"]

# numpydoc renders the Parameters / Returns sections; no autosummary stub pages.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks = set()
# numpydoc reports a section it cannot read as a Python warning, not a Sphinx one.
warnings.filterwarnings("error", category=UserWarning, module="numpydoc.docscrape")
# scikit-learn's metadata-routing setters are generated on every estimator class; their
# docstrings point into scikit-learn's own site.
_ROUTING = [f"set_{method}_request" for method in (
    "fit", "score", "predict", "predict_proba", "transform", "partial_fit", "split")]
autodoc_default_options = {"members": True, "undoc-members": False,
                           "exclude-members": ", ".join(_ROUTING)}
autodoc_typehints = "none"

sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r".*\.py$",  # run every example, not only plot_*.py
    "abort_on_example_error": True,
    "download_all_examples": False,
    "remove_config_comments": True,
    "reset_modules": ("matplotlib",),
    "within_subsection_order": "FileNameSortKey",
}

html_theme = "pydata_sphinx_theme"
html_title = f"sapwood {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
html_static_path = []
html_show_sourcelink = False
