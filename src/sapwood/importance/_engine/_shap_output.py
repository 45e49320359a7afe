"""What a :func:`~sapwood.importance.tree_shap` result's values are in, for the plots.

SHAP values are in the units of the output they add up to: a forest classifier's class
probability, boosting's margin (log-odds through the logistic link), a regression's
prediction, or the loss. A plot has to say which (a bar of 0.3 log-odds is not 0.3 of
a probability), and the plots sit above the importance layer and never read the model
again, so :func:`~sapwood.importance.tree_shap` records it with the rows explained.
"""

from __future__ import annotations

__all__ = ["SURVIVAL_OUTPUTS", "explanation_extra", "survival_output"]

#: What a survival model's SHAP values may explain besides its risk score ("raw"): its
#: survival function or cumulative hazard, one value per row, feature and time.
SURVIVAL_OUTPUTS = ("survival", "cumulative_hazard")

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


def survival_output(ensemble, model_output):
    """``(ensemble, model_output, explained)``: a survival model as the regression whose
    outputs the SHAP values explain (its risk score, or with ``model_output``
    "survival" / "cumulative_hazard" the function at each of its times: exact through
    the forest's vector leaves), the output to explain of that regression ("raw") and
    what to record in the result (``extra["output"]``, ``extra["times"]`` for the
    functions, ``params["model_output"]``); other models come back as they are, with
    an empty record."""
    if ensemble.task != "survival":
        if model_output in SURVIVAL_OUTPUTS:
            raise ValueError(f"model_output={model_output!r} needs a survival model; this "
                             f"model's task is {ensemble.task!r}")
        return ensemble, model_output, {}
    if model_output == "raw":
        output = ("log of the predicted time" if ensemble.link == "exp" else
                  "log hazard ratio" if ensemble.combine == "sum" else "risk score")
        return ensemble.risk_model(), "raw", {"output": output, "model_output": "raw"}
    if model_output not in SURVIVAL_OUTPUTS:
        raise ValueError(f"a survival model's SHAP values explain model_output 'raw' (its "
                         f"risk score), {' or '.join(map(repr, SURVIVAL_OUTPUTS))}; got "
                         f"{model_output!r}")
    output = "survival probability" if model_output == "survival" else "cumulative hazard"
    return ensemble.function_model(model_output), "raw", {
        "output": output, "times": ensemble.times, "model_output": model_output}
