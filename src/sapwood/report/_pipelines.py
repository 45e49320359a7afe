"""A scikit-learn Pipeline in ``explain``: fed the table as its user has it.

``explain`` reads text and categorical columns as ordinal codes (the measures, the
warnings and the tables share one numeric frame), while a pipeline fitted on the table
itself expects the labels (its OneHotEncoder knows "red", not 2.0). The pipeline is
therefore put behind :class:`~sapwood.adapters.CodesToLabels`, which turns the codes
back into the labels row by row and column by column: every measure, score and row
explanation then sees the pipeline's own predictions, and the map of its columns still
runs from the table's columns (the measures read the wrapper as one more, known step).
"""

from __future__ import annotations

import dataclasses

from sklearn.pipeline import Pipeline

from ..adapters import CodesToLabels, is_pipeline, read_pipeline

__all__ = ["check_pipeline", "describe_pipeline", "for_explain",
           "reading_labels", "users_pipeline"]

_LABELS = "sapwood_labels"  # the wrapper's step name


#: What a report on a pipeline says of its columns.
NOTE = ("the pipeline is explained in its input columns: each one's SHAP values and MDI "
        "are the sums over the columns its steps make from it, permutation shuffles those "
        "together and drop-column refits its last step without them (docs/measures.md, "
        "section 'Pipelines in their input columns')")



def for_explain(model, data, fitted: bool):
    """``(model, data)`` for explain: the pipeline fed labels (:func:`reading_labels`),
    and a note saying how its columns are read."""
    model = reading_labels(model, data.X, data.encodings, fitted)
    return model, dataclasses.replace(data, notes=[*data.notes, NOTE])


def reading_labels(model, X, encodings, fitted: bool):
    """``model`` as explain runs it on the encoded frame ``X``: a pipeline behind
    :class:`CodesToLabels` when some columns are codes (``encodings``), else as it is."""
    if not is_pipeline(model) or not encodings:
        return model
    labels = CodesToLabels({name: list(values) for name, values in encodings.items()})
    wrapped = Pipeline([(_LABELS, labels), ("pipeline", model)])
    if fitted:
        labels.fit(X)  # stateless: records the columns it is given
    return wrapped


def users_pipeline(model):
    """The user's pipeline: ``model`` without the label wrapper explain put in front."""
    if is_pipeline(model) and model.steps[0][0] == _LABELS:
        return model.steps[-1][1]
    return model


def check_pipeline(model):
    """A fitted pipeline sapwood reads (its map of columns traced, its last step a
    tree model), or the reason as a ValueError / TypeError."""
    from ..adapters import from_model

    pipeline = read_pipeline(model)
    try:
        from_model(pipeline.final)
    except (TypeError, ValueError) as error:
        raise TypeError(f"its last step, {type(pipeline.final).__name__}, is not a tree "
                        f"model sapwood reads ({str(error).splitlines()[0]})") from None
    return model


def describe_pipeline(model, describe_model) -> str:
    """``Pipeline(ColumnTransformer, RandomForestClassifier)``: its steps' kinds, the
    last one as ``describe_model`` gives it (sapwood's own label wrapper left out)."""
    steps, final = [], model
    while is_pipeline(final):
        steps += [type(step).__name__ for name, step in final.steps[:-1]
                  if name != _LABELS and step not in (None, "passthrough")]
        final = final.steps[-1][1]
    return f"Pipeline({', '.join([*steps, describe_model(final)])})"

