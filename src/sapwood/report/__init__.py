"""What a model relies on, concluded: :func:`explain` and the :class:`Report` it returns.

Modules: ``_explain`` (the path from a table to a report: split, fit, score, measures),
``_verdict`` (the warnings that depend on the measures run, and the verdict),
``_agreement`` and ``_intervals`` (what the verdict and agreement rest on), ``_data``
(checking and encoding a table), ``_models`` (which model, and models read from files),
``_report`` (the :class:`Report`), and its renderings: ``_terminal`` (one screen, or
every table; JSON), ``_html`` (the report file and the notebook display), ``_pictures``.
"""

from typing import TYPE_CHECKING

from .._errors import InputError
from .._lazy import lazy_names

if TYPE_CHECKING:
    from ._explain import explain
    from ._report import Report

__all__ = ["InputError", "Report", "explain"]

# Loaded on first use: the command line reads ``_compiled`` (which kernels are cached)
# before it imports pandas, and importing this package must not import it.
__getattr__, __dir__ = lazy_names(__name__, globals(),
                                  {"explain": "._explain", "Report": "._report"})
