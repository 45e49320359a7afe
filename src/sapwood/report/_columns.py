"""Which column of the user's data is which feature of a loaded model.

A model file names its features as the library that wrote it stores them, which is
not always as the training data named them. Checked by experiment (LightGBM 4.7,
XGBoost 3.2, CatBoost 1.2):

- LightGBM writes every space as an underscore (``unit price`` is stored as
  ``unit_price``; it warns "Found whitespace in feature_names, replace with
  underlines") and changes nothing else: tabs, ``<``, ``=``, ``$``, accents and control
  characters stay. It refuses names with JSON's special characters (``"`` ``,`` ``:``
  ``[`` ``]`` ``{`` ``}``) and names that become equal once respelled (``a b`` beside
  ``a_b``), so no data column with those can have trained it.
- XGBoost keeps names as given (it refuses ``[``, ``]`` and ``<``); CatBoost and sapwood
  keep them too.

So a feature is matched by its exact name or, for LightGBM, by the respelled name of a
column. ``unit_price`` in a LightGBM model cannot tell a column ``unit price`` from a
column ``unit_price``: when the data has both, the match is ambiguous and refused
rather than guessed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from .._errors import InputError
from .._text import quoted, shorten

__all__ = ["Matching", "match_columns"]

# How a library respells a column's name in the model it writes, and how to say so.
# A library not listed keeps names as given.
_SPELLINGS = {
    "lightgbm": (lambda name: name.replace(" ", "_"),
                 "LightGBM stores a space in a name as an underscore"),
}
# Names listed in one message at most (the rest are counted).
_LISTED = 8


@dataclass(frozen=True)
class Matching:
    """``columns``: the data column for each of the model's features, in the model's
    order; ``unused``: the data's other columns; ``respelled``: the (column, feature)
    pairs matched by the library's spelling rather than by the exact name; ``rule``:
    that spelling, in words ("" for a library that keeps names)."""

    columns: list
    unused: list
    respelled: list
    rule: str = ""

    def notes(self) -> list:
        """What the CLI tells the user about the match: columns matched by the library's
        spelling, columns left out."""
        notes = []
        if self.respelled:
            pairs = [f"{quoted(column)} as {quoted(feature)}"
                     for column, feature in self.respelled]
            notes.append(f"column(s) matched to the model's features by name as "
                         f"{self.rule}: {_few(pairs, escape=False)}")
        if self.unused:
            notes.append(f"column(s) the model does not use, left out: {_few(self.unused)}")
        return notes


def match_columns(library: str, features, columns, *, target: str) -> Matching:
    """Match the data's ``columns`` (without the target ``target``) to the ``features``
    of a model written by ``library`` (:attr:`~sapwood.ModelKind.library`).

    A feature matches the column of the same name or, if the library respells names
    (LightGBM), a column whose respelled name it is. A feature no column matches, or
    several columns match (``unit price`` and ``unit_price`` for LightGBM's
    ``unit_price``), is an :class:`InputError` naming them."""
    spell, rule = _SPELLINGS.get(library, (None, ""))
    features = [str(name) for name in features]
    columns = [str(name) for name in columns]
    twice = [name for name, n in Counter(features).items() if n > 1]
    if twice:
        raise InputError(f"the model names its feature(s) {_few(twice)} more than once, so "
                         "they cannot be matched to the data's columns by name")
    respelled_as = {}
    if spell is not None:
        for column in columns:
            respelled_as.setdefault(spell(column), []).append(column)
    present = set(columns)
    chosen, missing, ambiguous, claimed = [], [], [], set()
    for feature in features:
        candidates = [feature] if feature in present else []
        candidates += [c for c in respelled_as.get(feature, ()) if c != feature]
        claimed.update(candidates)
        if len(candidates) == 1:
            chosen.append(candidates[0])
        elif candidates:
            ambiguous.append(f"{shorten(feature)} ({_few(candidates)})")
        else:
            missing.append(feature)
    unused = [column for column in columns if column not in claimed]
    problems = []
    if missing:
        problems.append(f"lacks the model's feature(s) {_few(missing)}")
    if ambiguous:
        problems.append("has more than one column for the model's feature(s) "
                        + "; ".join(ambiguous[:_LISTED])
                        + (f"; ... ({len(ambiguous)} in all)" if len(ambiguous) > _LISTED
                           else ""))
    if problems:
        if missing and unused:
            problems.append(f"its column(s) {_few(unused)} match no feature")
        if rule:
            problems.append(rule)
        raise InputError(f"the data (without the target {quoted(target)}) "
                         + "; ".join(problems) + f"; the model's features are "
                         f"{_few(features)}")
    respelled = [(column, feature) for column, feature in zip(chosen, features, strict=True)
                 if column != feature]
    return Matching(columns=chosen, unused=unused, respelled=respelled, rule=rule)


def _few(names, escape=True) -> str:
    """Up to :data:`_LISTED` names, each as :func:`~sapwood._text.shorten` shows it
    (``escape=False``: texts already made to be shown)."""
    shown = ", ".join(shorten(name) if escape else name for name in names[:_LISTED])
    return shown + (f", ... ({len(names)} in all)" if len(names) > _LISTED else "")
