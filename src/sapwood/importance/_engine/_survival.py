"""What a measure that scores a class or a number says to a survival model."""

from __future__ import annotations

__all__ = ["refuse_survival"]


def refuse_survival(ensemble, measure):
    """Raise ValueError when ``ensemble`` is a survival model: ``measure`` scores a
    classification or regression target, which a time-to-event target is not."""
    if ensemble.task == "survival":
        raise ValueError(f"{measure} scores classification and regression models; this is "
                         f"a survival model ({ensemble.kind.model or 'task survival'}): use "
                         "tree_shap or permutation_importance")
