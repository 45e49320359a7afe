"""``explain --select knockoffs --fdr Q``: model-X knockoff selection on the training
rows, with the model the command trains (refit on the features and their knockoffs)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ..selection import knockoffs

__all__ = ["SELECTORS", "selection_frame", "selection_lines", "select"]

SELECTORS = ("knockoffs",)
DEFAULT_FDR = 0.1


def select(X_train, y_train, model, fdr: float, *, seed, steps, notes):
    """The :class:`~sapwood.selection.KnockoffResult` of ``model`` (unfitted copy) on
    the training rows; the knockoffs' warnings become ``notes``. Where knockoffs cannot
    be drawn for these rows (missing values, text columns), None and a note saying why:
    the rest of the report stands, as for a measure that does not apply."""
    from sklearn.base import clone

    with steps.step(f"Selecting features with model-X knockoffs (FDR {fdr:g}) on "
                 f"{len(X_train)} training rows"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = knockoffs(X_train, y_train, fdr=fdr, estimator=clone(model),
                               random_state=seed)
        except ValueError as error:
            notes.append(f"select knockoffs skipped: {str(error).splitlines()[0]}")
            return None
    for warning in caught:
        if issubclass(warning.category, UserWarning):
            notes.append(f"knockoffs: {warning.message}")
    return result


def selection_lines(result) -> list:
    """What was selected, at which threshold: the lines the terminal prints."""
    threshold = float(result.threshold[0])
    rule = "knockoff+" if result.params["offset"] == 1 else "knockoff"
    chosen = ", ".join(result.selected) if result.selected else "(none)"
    t_text = f"{threshold:.4g}" if np.isfinite(threshold) else "inf (no threshold qualifies)"
    return [f"Selected at FDR {result.params['fdr']:g} ({len(result.selected)} of "
            f"{len(result.feature_names)}): {chosen}",
            f"Threshold T = {t_text} ({rule}: W >= T is selected; statistic "
            f"{result.params['statistic']})"] + (
        [f"Why none: {result.reason}"] if getattr(result, "reason", None) else [])


def selection_frame(result) -> pd.DataFrame:
    """One row per feature, largest W first: feature, W, Z of the feature and of its
    knockoff, selected."""
    p = len(result.feature_names)
    frame = pd.DataFrame({"feature": result.feature_names, "W": result.W[0],
                          "Z": result.Z[0, :p], "Z knockoff": result.Z[0, p:],
                          "selected": np.where(result.support, "yes", "")})
    return frame.sort_values("W", ascending=False, kind="stable").reset_index(drop=True)
