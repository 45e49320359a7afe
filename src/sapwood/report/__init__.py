"""What a model relies on, concluded: :func:`explain` and the :class:`Report` it returns.

Modules: ``_explain`` (the path from a table to a report: split, fit, score, measures),
``_verdict`` (the warnings that depend on the measures run, and the verdict),
``_agreement`` and ``_intervals`` (what the verdict and agreement rest on), ``_data``
(checking and encoding a table), ``_models`` (which model, and models read from files),
``_report`` (the :class:`Report`), and its renderings: ``_terminal`` (one screen, or
every table; JSON), ``_html`` (the report file and the notebook display), ``_pictures``.
"""

from .._errors import InputError
from ._explain import explain
from ._report import Report

__all__ = ["InputError", "Report", "explain"]
