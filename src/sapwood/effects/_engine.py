"""The model's responses on a data set whose columns are set to each value of a grid.

Every effect of this package asks one question many times: what does the model predict
for row ``i`` when the columns ``S`` read the grid point ``g`` instead of the row's own
values? :func:`grid_responses` answers it for every (grid point, row) pair at once:
the raw outputs come from :func:`sapwood._kernels._effects.grid_sums` (each tree walked
once with blocks of rows and grid points, the sums in the model's own order and
precision, so equal bit for bit to predicting the modified data), and the link is
applied as the source library applies it (:mod:`sapwood._prediction`), per grid point,
to arrays shaped as the library's own ``predict_proba`` / ``decision_function`` /
``predict`` returns them.
"""

from __future__ import annotations

import warnings
from concurrent.futures import ThreadPoolExecutor
from numbers import Integral

import numpy as np
from joblib import effective_n_jobs

from .. import _prediction
from .._kernels._effects import grid_sums
from ..adapters import as_ensemble, is_pipeline
from ..importance._mdi import feature_names_of

__all__ = ["Rows", "RESPONSE_METHODS", "grid_responses", "read_model", "resolve_features"]

RESPONSE_METHODS = ("auto", "predict_proba", "decision_function", "predict")
# Rows on which the converted model's responses are checked against the model's own.
_CHECK_ROWS = 256


def read_model(model, caller):
    """``model`` in the tree format; a TypeError naming ``caller`` if sapwood cannot read
    it."""
    if is_pipeline(model):
        raise TypeError(f"{caller}: does not read a Pipeline in its input columns yet "
                        "(partial_dependence and a numeric feature's ale do; its trees "
                        "split on the columns its steps "
                        "make): for the effects in those columns, pass "
                        "sapwood.from_model(pipeline) and the rows its steps transform "
                        "(sapwood.adapters.read_pipeline(pipeline).transform(X))")
    try:
        return as_ensemble(model)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{caller}: the model must be a tree model sapwood reads "
                        f"(scikit-learn, XGBoost, LightGBM, CatBoost or sapwood's own); "
                        f"{error}") from error


class Rows:
    """The rows given (``given``: as the caller gave them) and as the trees read them
    (``values``: the ensemble's input dtype, C order; pandas categories as the model's
    codes), with the features' names."""

    def __init__(self, ensemble, X, caller):
        if not hasattr(X, "shape") or len(X.shape) != 2:
            X = np.asarray(X)
        if X.ndim != 2 or X.shape[0] < 1:
            raise ValueError(f"{caller}: X must be 2-dimensional with at least one row; "
                             f"got shape {X.shape}")
        if X.shape[1] != ensemble.n_features:
            raise ValueError(f"{caller}: X has {X.shape[1]} columns; the model has "
                             f"{ensemble.n_features} features")
        self.given = X
        self.values = np.ascontiguousarray(ensemble.encode(X))
        self.names = feature_names_of(ensemble, X=X)
        self.ensemble = ensemble

    @property
    def n_rows(self):
        return self.values.shape[0]

    def column(self, j):
        """Column ``j`` as given (a Series for a DataFrame, else an array)."""
        if hasattr(self.given, "iloc"):
            return self.given.iloc[:, j]
        return np.asarray(self.given)[:, j]

    def encode_points(self, columns, points):
        """Grid ``points`` (n_points, len(columns)), given as the column's own values
        (category labels for a categorical DataFrame column), as the trees read them:
        what the model reads after the points are written into a copy of the data."""
        n_points = len(points)
        if hasattr(self.given, "iloc"):
            frame = self.given.iloc[np.zeros(n_points, dtype=np.intp)].copy()
            for k, j in enumerate(columns):
                column = [point[k] for point in points]
                if _labels(frame.iloc[:, j]):
                    frame.iloc[:, j] = np.asarray(column, dtype=object)
                else:
                    # An integer column takes the grid's values as they are.
                    frame[frame.columns[j]] = np.asarray(column, dtype=np.float64)
            encoded = self.ensemble.encode(frame)
        else:
            given = np.asarray(self.given)
            frame = np.repeat(given[:1], n_points, axis=0)
            if frame.dtype.kind in "iub":
                frame = frame.astype(np.float64)
            for k, j in enumerate(columns):
                frame[:, j] = [point[k] for point in points]
            encoded = self.ensemble.encode(frame)
        return np.ascontiguousarray(np.asarray(encoded)[:, columns])

    def copy_with(self, columns, point):
        """A copy of the rows as given, ``columns`` set to ``point`` (for the model's own
        methods)."""
        if hasattr(self.given, "iloc"):
            frame = self.given.copy()
            for k, j in enumerate(columns):
                frame.iloc[:, j] = point[k]
            return frame
        frame = np.array(self.given, copy=True)
        for k, j in enumerate(columns):
            frame[:, j] = point[k]
        return frame


def _labels(series):
    return series.dtype.name == "category" or series.dtype == object


def resolve_features(features, names, caller, parameter="features"):
    """Column indices of ``features``: an int, a name, or a sequence of them."""
    if isinstance(features, (str, Integral)):
        features = [features]
    try:
        features = list(features)
    except TypeError:
        raise TypeError(f"{caller}: {parameter} must be a column index, a column name or "
                        f"a sequence of them; got {features!r}") from None
    if not features:
        raise ValueError(f"{caller}: {parameter} must name at least one column; got []")
    indices = []
    for feature in features:
        if isinstance(feature, (bool, np.bool_)):
            raise TypeError(f"{caller}: {parameter} must hold column indices or names; "
                            f"got {feature!r}")
        if isinstance(feature, Integral):
            if not 0 <= int(feature) < len(names):
                raise ValueError(f"{caller}: {parameter} must be column indices in "
                                 f"[0, {len(names) - 1}]; got {int(feature)}")
            indices.append(int(feature))
        elif isinstance(feature, str):
            if feature not in names:
                raise ValueError(f"{caller}: {parameter} must be column names of X "
                                 f"({_shown(names)}); got {feature!r}")
            indices.append(names.index(feature))
        else:
            raise TypeError(f"{caller}: {parameter} must hold column indices or names; "
                            f"got {feature!r}")
    if len(set(indices)) != len(indices):
        raise ValueError(f"{caller}: {parameter} must not repeat a column; got {features!r}")
    return indices


def _shown(names, limit=8):
    head = ", ".join(repr(n) for n in names[:limit])
    return head + (", ..." if len(names) > limit else "")


def response_of(ensemble, model, response_method, caller):
    """The response ``response_method`` stands for on this model, as scikit-learn's
    ``partial_dependence`` picks it: ``predict`` for a regression, ``predict_proba`` (or,
    without class probabilities, ``decision_function``) for a classifier."""
    if response_method not in RESPONSE_METHODS:
        raise ValueError(f"{caller}: response_method must be one of "
                         f"{list(RESPONSE_METHODS)}; got {response_method!r}")
    classifier = ensemble.task == "classification"
    if not classifier:
        if response_method not in ("auto", "predict"):
            raise ValueError(f"{caller}: response_method must be 'auto' or 'predict' for a "
                             f"regression model; got {response_method!r}")
        return "predict"
    if ensemble.combine == "mean" and ensemble.trees[0].n_outputs != 1:
        raise ValueError(f"{caller}: multi-output classifiers are not supported")
    if response_method == "auto":
        return "predict_proba"
    if response_method == "predict":
        raise ValueError(f"{caller}: response_method='predict' is for regression models; "
                         "a classifier's effects are on 'predict_proba' or "
                         "'decision_function'")
    if response_method == "decision_function" and ensemble.combine == "mean":
        raise ValueError(f"{caller}: response_method='decision_function' needs a boosted "
                         f"classifier; {ensemble.kind.model or 'this model'} averages class "
                         "probabilities and has no decision function")
    return response_method


def respond(ensemble, raw, response):
    """The model's ``response`` for raw outputs ``raw`` (as ``raw_predict(native=True)``
    gives them), shaped as scikit-learn's ``_get_response_values`` returns it: a binary
    classifier's positive class only, one regression output as a vector."""
    stand_in = _prediction.RawOutputs(ensemble, raw)
    if response == "predict":
        return _prediction.predict(stand_in, None)
    if response == "predict_proba":
        if ensemble.combine == "mean":
            # A forest's probabilities are its trees' mean, as scikit-learn's forests
            # give them (sapwood's ``predict_proba`` divides by their sum again).
            proba = raw[:, 0, :_n_classes(ensemble, raw.shape[2])]
        else:
            proba = _prediction.predict_proba(stand_in, None)
        return proba[:, 1] if proba.shape[1] == 2 else proba
    return _prediction.predict_raw(stand_in, None)


def _n_classes(ensemble, width):
    return width if ensemble.classes is None else len(ensemble.classes)


def model_response(model, X, response):
    """``model``'s own ``response`` on ``X`` shaped as :func:`respond`'s, or None when the
    model has no such method (a booster, a tree ensemble)."""
    method = getattr(model, response, None)
    if method is None or not hasattr(model, "fit"):
        return None
    values = np.asarray(method(X))
    if response == "predict_proba" and values.ndim == 2 and values.shape[1] == 2:
        return values[:, 1]
    return values


def conversion_mismatch(ensemble, model, rows, response):
    """None when the converted model's ``response`` on the first rows equals the
    model's own (to rounding: libraries computing in float32 differ in the last bits),
    else why not."""
    k = min(_CHECK_ROWS, rows.n_rows)
    head = rows.given.iloc[:k] if hasattr(rows.given, "iloc") else np.asarray(rows.given)[:k]
    theirs = model_response(model, head, response)
    if theirs is None:
        return None
    ours = respond(ensemble, ensemble.raw_predict(rows.values[:k], native=True), response)
    if theirs.shape != ours.shape:
        return f"output shape {theirs.shape} != {ours.shape}"
    if not np.allclose(ours, theirs.astype(np.float64), rtol=1e-5, atol=1e-6):
        return f"largest difference {np.max(np.abs(ours - theirs)):.3g}"
    return None


def grid_raw(ensemble, values, columns, points, n_jobs=None):
    """Raw outputs (as ``raw_predict(native=True)``) of every row of ``values`` with
    ``columns`` set to each grid point of ``points`` (n_points, len(columns), as the
    trees read them): shape (n_points,) + the raw output's shape for the rows."""
    n_rows, n_features = values.shape
    points = np.ascontiguousarray(points, dtype=values.dtype)
    grid_column = np.full(n_features, -1, dtype=np.intp)
    grid_column[np.asarray(columns, dtype=np.intp)] = np.arange(len(columns))
    *routing, roots = ensemble.packed()
    node_values, tree_column, initial = ensemble.node_outputs(native=True)
    dtype = ensemble.accumulation_dtype
    node_values = np.ascontiguousarray(node_values.astype(dtype, copy=False))
    start = np.zeros(initial.shape[0], dtype=dtype)
    if ensemble.combine == "sum" and not ensemble.base_last:
        start += ensemble.base_score.astype(dtype)
    total = np.empty((points.shape[0], n_rows, start.shape[0]), dtype=dtype)
    total[...] = start
    depth = max(tree.max_depth for tree in ensemble.trees)
    n_jobs = max(1, min(int(effective_n_jobs(n_jobs)), n_rows))
    bounds = np.linspace(0, n_rows, 2 * n_jobs + 1 if n_jobs > 1 else 2).astype(np.intp)

    def run(lo, hi):
        grid_sums(values, lo, hi, points, grid_column, *routing, roots, depth, node_values,
                  tree_column.astype(np.intp), total)

    ranges = [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]
    if n_jobs == 1:
        for lo, hi in ranges:
            run(lo, hi)
    else:
        with ThreadPoolExecutor(max_workers=n_jobs) as pool:
            for future in [pool.submit(run, lo, hi) for lo, hi in ranges]:
                future.result()
    if ensemble.combine == "mean":
        first = ensemble.trees[0]
        raw = total / ensemble.n_trees + ensemble.base_score[0]
        return raw.reshape(points.shape[0], n_rows, first.n_outputs, first.max_n_classes)
    if ensemble.base_last:
        total = total + ensemble.base_score
    return total.astype(np.float64, copy=False)


def grid_responses(ensemble, model, rows, columns, points, given_points, response,
                   n_jobs=None, caller=""):
    """The model's ``response`` for every grid point and row: a list, one array per
    point, each shaped as the model's own method returns it for the rows.

    ``points`` as the trees read them, ``given_points`` as the caller gave them. When the
    converted model does not reproduce the model's own responses, the model itself
    predicts each modified data set (with a warning), as scikit-learn's brute method does.
    """
    mismatch = conversion_mismatch(ensemble, model, rows, response)
    if mismatch is not None:
        warnings.warn(f"{caller}: the model's tree-format conversion does not reproduce its "
                      f"{response} ({mismatch}); predicting with the model itself.",
                      stacklevel=3)
        return [model_response(model, rows.copy_with(columns, point), response)
                for point in given_points]
    raw = grid_raw(ensemble, rows.values, columns, points, n_jobs)
    return [respond(ensemble, raw[g], response) for g in range(raw.shape[0])]
