"""The importance measures as the ``sapwood`` command offers them.

Every measure is a record in :data:`sapwood.importance.MEASURES` (names, function,
description, what it needs and reads, whether it applies, its null, p-values, what it
gives, label, kernel): ``--methods``, ``--help``, ``--cv``, the tables, ``--json``, the
report, the p-values, the rank agreement, the verdict, compile-ahead and the time
estimates read it there. This module holds only the command line's own choices (which
measures by default and in the demo, which p-values) and the text it writes.
"""

from __future__ import annotations

import importlib
import textwrap
from collections.abc import MutableMapping

from sapwood import importance
from sapwood.importance import Measure, MeasureInputs, register, unregister
from sapwood.importance._registry import (
    DEFAULT_MAX_ROWS,
    MIN_SHAP_ROWS,
    ROWS,
    SHAP_LEAF_ROWS,
    replace,
)

from .._errors import InputError

__all__ = ["DEFAULT_MAX_ROWS", "DEFAULT_METHODS", "DEMO_METHODS", "MEASURES", "MIN_SHAP_ROWS",
           "SHAP_LEAF_ROWS", "Inputs", "Measure", "PVALUE_METHODS", "compute",
           "cross_validated", "is_available", "janitza_measures", "methods_help",
           "parse_methods", "where"]

DEFAULT_METHODS = ("mdi", "permutation")
# The demo shows every measure that applies to the forest it fits, side by side.
DEMO_METHODS = ("mdi", "permutation", "oob", "ufi", "conditional", "air", "drop", "shap")
PVALUE_METHODS = ("janitza", "altmann")
DEFAULT_N_PERMUTATIONS = 99
# What a measure reads besides the model (the registry's record of it).
Inputs = MeasureInputs


class _Registry(MutableMapping):
    """:data:`sapwood.importance.MEASURES` as a mapping one may write to: setting an
    item registers the measure (or replaces the one of its name, in its place),
    deleting it unregisters it (so a test adds or swaps a measure for itself with
    ``monkeypatch.setitem``, and the order is as before when it undoes it)."""

    def __getitem__(self, name):
        return importance.MEASURES[name]

    def __iter__(self):
        return iter(importance.MEASURES)

    def __len__(self):
        return len(importance.MEASURES)

    def __setitem__(self, name, measure):
        if name != getattr(measure, "name", None):
            raise ValueError(f"a measure is registered under its own name; got {name!r} "
                             f"for {measure!r}")
        if name in importance.MEASURES:
            replace(measure)  # in its place, as a dict keeps a key's
        else:
            register(measure)

    def __delitem__(self, name):
        unregister(name)


MEASURES = _Registry()


def is_available(name: str) -> bool:
    """Whether measure ``name``'s public function exists: a name in
    ``sapwood.importance``, or ``module.name`` for a measure registered from elsewhere."""
    module, _, attribute = MEASURES[name].function.rpartition(".")
    if not module:
        return hasattr(importance, attribute)
    try:
        return hasattr(importlib.import_module(module), attribute)
    except ImportError:
        return False


def parse_methods(text: str, option: str = "--methods") -> list:
    """``"mdi,permutation"`` -> list of measure names (a long name such as ``tree_shap``
    reads as its measure's, ``shap``); unknown ones are bad input."""
    names = [part.strip().lower() for part in text.split(",") if part.strip()]
    if not names:
        raise InputError(f"{option} {text!r}: no measure given; choose from: "
                         + ", ".join(MEASURES))
    known = {alias: name for name, measure in MEASURES.items() for alias in measure.names}
    unknown = [name for name in names if name not in MEASURES and name not in known]
    if unknown:
        raise InputError(f"{option}: unknown measure {unknown[0]!r}; choose from: "
                         + ", ".join(MEASURES))
    return list(dict.fromkeys(name if name in MEASURES else known[name] for name in names))


def compute(name, model, inputs: MeasureInputs):
    """Run measure ``name`` on a fitted ``model``, with the options it has by name."""
    measure = MEASURES[name]
    return measure.run(model, inputs, **measure.options)


def where(name: str, held_out: bool = True) -> str:
    """Where measure ``name`` looks, for progress and verdict lines: "on the held-out
    rows" (with ``held_out`` False, a measure of held-out rows reads the training rows)."""
    measure = MEASURES[name]
    if measure.held_out and not held_out:
        return "on the training rows"
    return ROWS[measure.rows]


def cross_validated() -> list:
    """The measures that refit per fold under ``--cv`` / ``cv=`` (cross-fitting): those
    that refit and score held-out rows."""
    return [name for name, measure in MEASURES.items() if measure.rows == "refit"]


def janitza_measures() -> list:
    """The measures Janitza's p-values apply to: importances of irrelevant features
    scatter symmetrically around zero."""
    return [name for name, measure in MEASURES.items() if measure.null == "symmetric"]


def why_not(name: str, model, inputs: MeasureInputs) -> str | None:
    """Why measure ``name`` does not apply here (None: it does), in the command line's
    words: a measure that refits cannot refit a loaded model file."""
    measure = MEASURES[name]
    if measure.refits and inputs.estimator is None:
        return (f"{name} importance is computed {ROWS[measure.rows]}, so it needs a model "
                "sapwood trains (--model tree|rf|et|gb, or an unfitted estimator), not a "
                "fitted model")
    reads_training_rows = measure.rows == "oob" or measure.refits or (
        measure.rows == "train" and "y" in measure.needs)
    if reads_training_rows and inputs.X_train is not None and len(inputs.X_train) == 0:
        return (f"{name} reads the rows the model was trained on, which were not given "
                "(explain's X_train, y_train)")
    from ..importance._engine._ranking import why_not_for_ranker

    ranker = why_not_for_ranker(name, measure, model)
    if ranker is not None:
        return ranker
    try:
        return measure.why_not(model, inputs, **measure.options)
    except (TypeError, ValueError) as error:  # the trees it would read cannot be read
        return str(error).splitlines()[0]


def methods_help(default_methods=DEFAULT_METHODS) -> str:
    """The measures, one paragraph each, for ``explain --help`` and ``demo --help``."""
    lines = ["measures (--methods):"]
    for measure in MEASURES.values():
        lines += textwrap.wrap(f"{measure.name}: {measure.description}", width=86,
                               initial_indent="  ", subsequent_indent="      ")
    janitza = ", ".join(janitza_measures())
    altmann = ", ".join(m.name for m in MEASURES.values() if m.altmann is not False)
    lines += ["", "p-values (--pvalues):"]
    lines += textwrap.wrap(
        f"janitza: Janitza et al. (2018), from the negative and zero importances of the "
        f"same result; no refits; for measures whose importances of irrelevant features "
        f"scatter around zero ({janitza})", width=86, initial_indent="  ",
        subsequent_indent="      ")
    lines += textwrap.wrap(
        f"altmann: Altmann et al. (2010), refits the model on S permutations of the "
        f"target (--n-permutations, default {DEFAULT_N_PERMUTATIONS}) and recomputes the "
        f"measure each time; slow; for a model trained here ({altmann}; mdi is tested "
        "before normalisation)", width=86, initial_indent="  ", subsequent_indent="      ")
    optional = ", ".join(m.name for m in MEASURES.values() if m.optional)
    lines += [""] + textwrap.wrap(
        f"Default measures: {','.join(default_methods)}. Measures that apply to some models "
        f"only ({optional}) are skipped with a note where they do not.", width=88)
    return "\n".join(lines)
