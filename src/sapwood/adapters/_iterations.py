"""Which boosting iterations a model's library predicts with, when early stopping chose
fewer than the model holds.

:func:`sapwood.from_model` reads, by default, the trees the library's own prediction
uses: XGBoost's scikit-learn wrappers (and, in sapwood, a saved XGBoost model or a
Booster) predict with the iterations up to ``best_iteration``; LightGBM's ``predict``
with those up to its ``best_iteration`` (a saved LightGBM model holds only those).
:func:`stopped_early` says so, for the report's Model line.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = ["EarlyStopping", "stopped_early"]


@dataclass(frozen=True)
class EarlyStopping:
    """``read`` of the model's ``total`` boosting iterations are read: those up to the
    best one early stopping recorded (``library`` names it)."""

    read: int
    total: int
    library: str

    def __str__(self) -> str:
        return (f"{self.read} of {self.total} iterations, to early stopping's "
                f"best_iteration {self.read - 1}, as {self.library} predicts")


def stopped_early(model) -> EarlyStopping | None:
    """The iterations :func:`sapwood.from_model` reads of ``model`` by default when early
    stopping recorded a best one before the last: an XGBoost or LightGBM model (a
    scikit-learn wrapper or a Booster) or the path of a saved XGBoost model; None for
    anything else."""
    if isinstance(model, str | os.PathLike):
        return _from_file(model)
    package = type(model).__module__.partition(".")[0]
    if package == "xgboost":
        from sklearn.exceptions import NotFittedError

        try:  # an unfitted wrapper has no booster yet, so nothing stopped early
            booster = model.get_booster() if hasattr(model, "get_booster") else model
        except NotFittedError:
            return None
        try:
            best = int(booster.attr("best_iteration")) + 1
            total = int(booster.num_boosted_rounds())
        except (TypeError, ValueError, AttributeError):
            return None
        return EarlyStopping(best, total, "XGBoost") if best < total else None
    if package == "lightgbm":
        booster = getattr(model, "booster_", model)
        try:
            best = int(booster.best_iteration)
            total = int(booster.current_iteration())
        except (TypeError, ValueError, AttributeError):
            return None
        return EarlyStopping(best, total, "LightGBM") if 0 < best < total else None
    return None


def _from_file(path) -> EarlyStopping | None:
    """A saved XGBoost model's best iteration (LightGBM saves only the best ones)."""
    import json

    from .._format import FormatError
    from ._ubjson import loads
    from ._xgboost import best_iterations

    try:
        with open(path, "rb") as stream:
            data = stream.read()
        stripped = data.lstrip()
        if stripped[:1] != b"{":
            return None
        if stripped[1:2] in b' \t\r\n"}':
            document = json.loads(data)
        else:
            document = loads(data)
        if not isinstance(document, dict) or "learner" not in document:
            return None
        found = best_iterations(document)
    except (OSError, ValueError, FormatError, KeyError, TypeError, RecursionError):
        return None
    return None if found is None else EarlyStopping(found[0], found[1], "XGBoost")
