"""What a :func:`~sapwood.importance.tree_shap` result's values are in, for the plots.

SHAP values are in the units of the output they add up to: a forest classifier's class
probability, boosting's margin (log-odds through the logistic link), a regression's
prediction, or the loss. A plot has to say which (a bar of 0.3 log-odds is not 0.3 of
a probability), and the plots sit above the importance layer and never read the model
again, so :func:`~sapwood.importance.tree_shap` records it with the rows explained.
"""

from __future__ import annotations

__all__ = ["explanation_extra"]

# The raw output of each (combine, link): what it is called on an axis.
_RAW_OUTPUT = {("sum", "identity"): "prediction", ("sum", "logistic"): "log-odds",
               ("sum", "softmax"): "softmax margin", ("sum", "exp"): "log of the prediction"}
# The shap package's transforms of the raw output (``model_output``).
_TRANSFORMED = {"logistic": "probability", "logistic_nlogloss": "log loss",
                "squared_loss": "squared error"}


def explanation_extra(ensemble, X, n_columns, transform="identity") -> dict:
    """The entries of ``extra`` that say what the values explain: ``"data"`` (``X`` as
    given: a DataFrame keeps its names and categories, a Dask collection stays lazy),
    ``"output"`` (the quantity the values add up to, e.g. ``"log-odds"``) and
    ``"output_names"`` (the class each of the ``n_columns`` output columns belongs to,
    or None)."""
    if transform in _TRANSFORMED:
        output = _TRANSFORMED[transform]
    elif ensemble.combine == "mean":
        output = "probability" if ensemble.task == "classification" else "prediction"
    else:
        output = _RAW_OUTPUT.get((ensemble.combine, ensemble.link), "raw output")
    classes = ensemble.classes
    names = None
    if ensemble.task == "classification" and classes is not None and all(
            isinstance(label, str | int | float | bool) or hasattr(label, "item")
            for label in classes):
        if len(classes) == n_columns:
            names = [_plain(label) for label in classes]
        elif n_columns == 1 and len(classes) == 2 and transform != "logistic_nlogloss":
            # Binary boosting: one margin, the positive (second) class's.
            names = [_plain(classes[1])]
    return {"data": X, "output": output, "output_names": names}


def _plain(label):
    """A class label as the user wrote it: 3, not np.int64(3)."""
    return label.item() if hasattr(label, "item") else label
