"""A measure of a scikit-learn Pipeline, in the pipeline's input columns.

The measures compute on the pipeline's last step (a tree model) in the columns it reads,
the derived columns (:func:`sapwood.adapters.read_pipeline` gives the step, the
transform and the map back to the input columns); this module re-expresses a result
per input column (or per unit of input columns that a derived column joins, or per
named feature group): an additive measure (MDI, split gains, split counts, SHAP values
row by row) is summed over a feature's derived columns; a per-split average (XGBoost's
gain and cover) is the feature's total over its splits' count. ``transformed=True``
keeps the derived columns instead.
"""

from __future__ import annotations

import numpy as np

from ...adapters import is_pipeline, read_pipeline
from ._names import column_names
from ._result import ImportanceResult

__all__ = ["GroupView", "PipelineView", "fit_steps", "group_view", "pipeline_view",
           "regrouped"]


class PipelineView:
    """A pipeline as a measure reads it: ``final`` (the tree model), ``transform``, and
    the reported features ``names`` with their derived columns ``derived``."""

    def __init__(self, model, input_names, feature_groups=None):
        self.model = read_pipeline(model)
        self.final = self.model.final
        self.names, self.inputs, self.derived = self.model.columns.groups(input_names,
                                                                          feature_groups)
        self.derived_names = list(self.model.columns.derived_names)
        self.params = {"columns": "input", "derived_columns": self.derived_names}

    def transform(self, X):
        return self.model.transform(X)

    @property
    def not_row_wise(self):
        return self.model.not_row_wise


def pipeline_view(model, X=None, feature_groups=None, feature_names=None):
    """A :class:`PipelineView` of ``model`` when it is a Pipeline, else None; the input
    columns named by ``feature_names``, else X's columns, else the pipeline's own.

    Raises :class:`~sapwood.adapters._pipeline.SplitUnit` (a ValueError) when a feature
    group takes part of a unit."""
    if not is_pipeline(model):
        return None
    n_inputs = read_pipeline(model).columns.n_inputs
    if feature_names is not None:
        names = [str(name) for name in feature_names]
    else:
        names = column_names(X, model, n_inputs)
    if len(names) != n_inputs:
        raise ValueError(f"the pipeline reads {n_inputs} columns; got {len(names)} names")
    return PipelineView(model, names, feature_groups)


def fit_steps(pipeline, X, y):
    """An unfitted ``pipeline``'s steps fitted on (X, y) once, and its last step unfitted:
    ``(fitted, design, final)``, ``fitted`` the pipeline with its steps fitted and a fit
    of the last step on ``design``, the training rows as the steps make them
    (``fit_transform``, as the pipeline's own ``fit`` makes them: a TargetEncoder's
    cross-fitted encodings). For measures that refit the last step alone."""
    from sklearn.base import clone
    from sklearn.pipeline import Pipeline

    steps, final = [], pipeline
    while is_pipeline(final):
        for name, step in final.steps[:-1]:
            if hasattr(step, "fit_resample"):
                raise ValueError(f"the pipeline step {name!r} resamples the training rows, "
                                 "which refitting its last step alone would not repeat")
            if step is not None and step != "passthrough":
                steps.append((name, clone(step)))
        final = final.steps[-1][1]
    transformer = Pipeline(steps) if steps else None
    design = X if transformer is None else transformer.fit_transform(X, y)
    if hasattr(design, "toarray"):
        design = design.toarray()
    final = clone(final)
    fitted = Pipeline([*steps, ("model", clone(final).fit(design, y))])
    return fitted, design, final


class GroupView:
    """Named groups of a model's own columns (``feature_groups``), read as
    :func:`regrouped` reads a pipeline's input columns: ``names``, each group's column
    positions ``derived`` (the model's columns here), and the columns' names."""

    def __init__(self, names, columns, column_names, feature_groups):
        self.names, self.derived, self.derived_names = names, columns, column_names
        self.params = {"feature_groups": {str(k): list(v) for k, v in feature_groups.items()}}


def group_view(X, model, feature_groups) -> GroupView:
    """The :class:`GroupView` of ``feature_groups`` over X's columns."""
    from ._groups import resolve_groups

    names, columns = resolve_groups(X, model, feature_groups)
    return GroupView(names, columns, column_names(X, model, X.shape[1]), feature_groups)


def regrouped(result: ImportanceResult, view) -> ImportanceResult:
    """``result`` (over the derived columns) per reported feature of ``view``: draws
    summed over each feature's derived columns, and for TreeSHAP the signed values too
    (row by row, so they still add up to the prediction); per-split averages (XGBoost's
    gain and cover) recomputed from the trace."""
    params = {**result.params, **view.params}
    average = result.method in ("native_gain", "native_cover") \
        and result.params.get("library") != "lightgbm"
    if average:
        values = _split_average(result, view)
        return ImportanceResult(values, np.zeros(len(view.names)), view.names,
                                method=result.method, params=params, trace=None)
    draws = result.importances
    if result.method == "tree_shap":
        return _regrouped_shap(result, view, params)
    if draws is None or draws.shape[1] == 0:
        values = _summed(result.importances_mean[:, None], view)[:, 0]
        return ImportanceResult(values, np.zeros(len(view.names)), view.names,
                                method=result.method, params=params, trace=None)
    grouped = ImportanceResult.from_draws(_summed(draws, view), feature_names=view.names,
                                          method=result.method, params=params, trace=None)
    if result.ci_low is None:
        grouped = grouped.replace(ci_low=None, ci_high=None)
    # The mean of the summed draws equals the summed means only up to rounding; the
    # measure's own headline numbers are kept exactly summed.
    return grouped.replace(importances_mean=_summed(result.importances_mean[:, None],
                                                    view)[:, 0])


def _summed(values, view):
    """Rows of ``values`` (one per derived column) summed per feature of ``view``."""
    out = np.zeros((len(view.derived),) + values.shape[1:], dtype=np.float64)
    for g, columns in enumerate(view.derived):
        if columns.size:
            out[g] = values[columns].sum(axis=0)
    return out


def _regrouped_shap(result, view, params):
    phi = result.extra["shap_values"]  # (rows, derived[, outputs])
    grouped = np.zeros((phi.shape[0], len(view.derived)) + phi.shape[2:])
    for g, columns in enumerate(view.derived):
        if columns.size:
            grouped[:, g] = phi[:, columns].sum(axis=1)
    magnitude = np.abs(grouped).reshape(grouped.shape[0], grouped.shape[1], -1).mean(axis=2).T
    extra = {**result.extra, "shap_values": grouped}
    pairs = result.extra.get("interaction_values")
    if pairs is not None:
        # phi_GH = sum over i in G, j in H of phi_ij: the pairs' values summed both ways,
        # so that each row's values still add up to phi_G.
        once = np.zeros((pairs.shape[0], len(view.derived)) + pairs.shape[2:])
        for g, columns in enumerate(view.derived):
            if columns.size:
                once[:, g] = pairs[:, columns].sum(axis=1)
        twice = np.zeros((pairs.shape[0], len(view.derived), len(view.derived))
                         + pairs.shape[3:])
        for h, columns in enumerate(view.derived):
            if columns.size:
                twice[:, :, h] = once[:, :, columns].sum(axis=2)
        extra["interaction_values"] = twice
    return ImportanceResult.from_draws(magnitude, feature_names=view.names,
                                       method=result.method, params=params, extra=extra)


def _split_average(result, view):
    """Per feature: the total of the splits' gain (or cover) over their count."""
    trace = result.trace
    column = "cover" if result.method == "native_cover" else "gain"
    position = {name: k for k, name in enumerate(view.derived_names)}
    derived = trace["feature"].map(position).to_numpy()
    values = np.zeros(len(view.names))
    for g, columns in enumerate(view.derived):
        mine = np.isin(derived, columns)
        if mine.any():
            values[g] = trace[column].to_numpy()[mine].sum() / mine.sum()
    if result.params.get("normalize") and values.sum() > 0:
        values = values / values.sum()
    return values
