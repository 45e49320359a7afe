"""Partial dependence of a scikit-learn Pipeline in its input columns.

For input columns S that form whole units of the pipeline's column map (no derived
column reads a column of S and one outside it) and steps that map each row by itself,
setting S to a grid point z in every row sets the derived block of S to one vector,
T_S(z), the same in every row, and leaves the other derived columns as they are. So the
pipeline's ICE_i(z) is its last step's ICE on the transformed rows at the derived point
T_S(z): the grid is drawn in the input columns (scikit-learn's rules, the user's
values), each point is written into a copy of one row and transformed, and the last
step's trees answer for every (point, row) pair through the engine, as for any tree
model. Equal to scikit-learn's brute ``partial_dependence`` on the pipeline.
"""

from __future__ import annotations

import numpy as np

from ..adapters import read_pipeline
from ..importance._engine._names import column_names
from ._engine import Rows, grid_responses, read_model, resolve_features, response_of

__all__ = ["pipeline_edges", "pipeline_grid_responses", "pipeline_units"]


def pipeline_grid_responses(model, X, features, grid, response_method, n_jobs, caller):
    """``(grid_values, n_rows, predictions)`` of ``model`` (a fitted Pipeline) on
    ``X``: ``grid(columns, names)`` (``features``' input positions and X's column names)
    gives the grid values and the points, as tuples of input values; ``predictions``
    holds per point the response on every row."""
    pipeline = read_pipeline(model)
    if not pipeline.row_wise:
        raise ValueError(f"{caller}: the pipeline step {pipeline.not_row_wise[0]} is not "
                         "known to map each row by itself, so a grid point cannot be "
                         "written into its output columns")
    names = column_names(X, model, pipeline.columns.n_inputs)
    columns = resolve_features(features, names, caller)
    units = [unit for unit in pipeline.columns.units() if set(unit) & set(columns)]
    together = sorted({i for unit in units for i in unit} - set(columns))
    if together:
        raise ValueError(f"{caller}: the pipeline reads {', '.join(names[i] for i in together)} "
                         f"together with {', '.join(names[j] for j in columns)} (in one derived "
                         "column); ask for them together")
    grid_values, given_points = grid(columns, names)
    block = pipeline.columns.derived(columns)
    if hasattr(X, "iloc"):
        frame = X.iloc[np.zeros(len(given_points), dtype=np.intp)].copy()
        for k, j in enumerate(columns):
            frame.isetitem(j, np.asarray([point[k] for point in given_points],
                                         dtype=X.iloc[:, j].dtype if not _labels(X.iloc[:, j])
                                         else object))
    else:
        frame = np.repeat(np.asarray(X)[:1], len(given_points), axis=0).astype(object)
        for k, j in enumerate(columns):
            frame[:, j] = [point[k] for point in given_points]
    derived = np.asarray(pipeline.transform(frame), dtype=np.float64)[:, block]
    derived_points = [tuple(point) for point in derived]
    ensemble = read_model(pipeline.final, caller)
    rows = Rows(ensemble, pipeline.transform(X), caller)
    points = rows.encode_points(list(block), derived_points)
    response = response_of(ensemble, pipeline.final, response_method, caller)
    predictions = grid_responses(ensemble, pipeline.final, rows, list(block), points,
                                 derived_points, response, n_jobs, caller)
    return grid_values, rows.n_rows, predictions


def pipeline_edges(model, X, feature, caller):
    """For the numeric ALE of a Pipeline: ``(pipeline, j, name, x, derived, block,
    transform_edges)``: the input column ``feature`` (position, name, values as floats),
    the transformed rows, the derived block of ``j`` and a function from edge values to
    that block's rows (each edge written into a copy of one row and transformed)."""
    pipeline = read_pipeline(model)
    if not pipeline.row_wise:
        raise ValueError(f"{caller}: the pipeline step {pipeline.not_row_wise[0]} is not "
                         "known to map each row by itself, so an edge cannot be written "
                         "into its output columns")
    names = column_names(X, model, pipeline.columns.n_inputs)
    columns = resolve_features(feature, names, caller, "feature")
    if len(columns) != 1:
        raise ValueError(f"{caller}: a Pipeline's ALE is computed for one numeric feature; "
                         f"got {len(columns)}")
    (j,) = columns
    unit = next(unit for unit in pipeline.columns.units() if j in unit)
    if len(unit) > 1:
        others = ", ".join(names[i] for i in unit if i != j)
        raise ValueError(f"{caller}: the pipeline reads {others} together with {names[j]} "
                         "(in one derived column), so the ALE of one of them is not defined "
                         "through it")
    column = X.iloc[:, j] if hasattr(X, "iloc") else np.asarray(X)[:, j]
    try:
        if hasattr(column, "iloc") and _labels(column):
            raise TypeError
        x = np.asarray(column, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{caller}: a Pipeline's ALE is computed for numeric features; "
                         f"{names[j]!r} is categorical") from None
    block = pipeline.columns.derived([j])

    def transform_edges(edges):
        if hasattr(X, "iloc"):
            frame = X.iloc[np.zeros(len(edges), dtype=np.intp)].copy()
            frame.isetitem(j, np.asarray(edges, dtype=np.float64))
        else:
            frame = np.repeat(np.asarray(X)[:1], len(edges), axis=0)
            frame[:, j] = edges
        return np.asarray(pipeline.transform(frame), dtype=np.float64)[:, block]

    derived = np.asarray(pipeline.transform(X), dtype=np.float64)
    return pipeline, j, names[j], x, derived, block, transform_edges


def pipeline_units(model, X, caller):
    """For the H-statistic of a Pipeline: ``(final, derived, names, blocks)``: its last
    step, the transformed rows, and per unit of input columns that the model reads its
    name and derived columns. A row's own values of a unit are its own derived block, so
    the statistic's grid of the rows' own values is the same in either."""
    pipeline = read_pipeline(model)
    if not pipeline.row_wise:
        raise ValueError(f"{caller}: the pipeline step {pipeline.not_row_wise[0]} is not "
                         "known to map each row by itself")
    names = column_names(X, model, pipeline.columns.n_inputs)
    unit_names, _, blocks = pipeline.columns.groups(names)
    kept = [k for k, block in enumerate(blocks) if block.size]
    return (pipeline.final, pipeline.transform(X), [unit_names[k] for k in kept],
            [list(blocks[k]) for k in kept])


def _labels(series):
    return series.dtype.name == "category" or series.dtype == object \
        or series.dtype.kind in "OUT" or str(series.dtype) == "str"
