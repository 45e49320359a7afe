"""A fitted scikit-learn Pipeline read as its last step's trees and a map of its columns.

A ``Pipeline([..transformers.., tree model])`` is how most tabular models are kept: its
trees split on the columns the transformers make (one-hot indicators, scaled numbers,
target encodings), while its user thinks in the table's own columns. This adapter gives
a measure the three things it needs to answer in the table's columns:

- ``final``: the last step, a tree model sapwood reads (nested pipelines flattened);
- ``transform(X)``: the table through every earlier step, once (as the pipeline's own
  ``predict`` transforms it; imbalanced-learn's samplers are skipped, as there);
- ``columns``: a :class:`ColumnMap`, for each derived column the set of input columns it
  reads, traced through the steps from what each transformer records
  (``ColumnTransformer``'s column lists and output slices, ``OneHotEncoder``'s
  categories, ``PolynomialFeatures``' powers, ``SimpleImputer``'s kept columns and
  indicators, a selector's support). A step it does not know is read as every output
  reading every input: never split by a guess.

The map groups the input columns into *units*: input columns joined by a derived column
that reads several of them (a polynomial term, a step it does not know) form one unit,
named by its members joined with " & ". A unit's importance is its derived columns'
together: SHAP values and MDI summed over them, permutation shuffling them with one row
permutation (``row_wise``: every step maps each row by itself, so shuffling the derived
block equals shuffling the input column and transforming again, bit for bit).
"""

from __future__ import annotations

import dataclasses
import numbers

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.compose import ColumnTransformer
from sklearn.feature_selection import SelectorMixin
from sklearn.impute import MissingIndicator, SimpleImputer
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.preprocessing import (
    Binarizer,
    FunctionTransformer,
    KBinsDiscretizer,
    MaxAbsScaler,
    MinMaxScaler,
    OneHotEncoder,
    OrdinalEncoder,
    PolynomialFeatures,
    PowerTransformer,
    QuantileTransformer,
    RobustScaler,
    StandardScaler,
    TargetEncoder,
)

__all__ = ["CodesToLabels", "ColumnMap", "PipelineModel", "SplitUnit", "is_pipeline",
           "read_pipeline"]

#: Transformers that map each column by itself, row by row: output j reads input j.
_PER_COLUMN = (StandardScaler, MinMaxScaler, MaxAbsScaler, RobustScaler, QuantileTransformer,
               PowerTransformer, OrdinalEncoder, Binarizer)

JOINED = " & "  # between the names of the input columns of one unit


class SplitUnit(ValueError):
    """A feature group takes some of the input columns a derived column reads together."""


def is_pipeline(model) -> bool:
    """Whether ``model`` is a scikit-learn (or imbalanced-learn) ``Pipeline``."""
    return isinstance(model, Pipeline)


class CodesToLabels(TransformerMixin, BaseEstimator):
    """Turns ordinal codes back into the labels they stand for, column by column.

    ``sapwood.explain`` reads a table's text and categorical columns as codes
    (``labels[column][code]``); a pipeline fitted on the table itself needs the labels.
    Put in front of such a pipeline, it gives it the table as the user has it. Stateless;
    other columns pass unchanged; a missing code stays missing.
    """

    def __init__(self, labels=None):
        self.labels = labels

    def fit(self, X, y=None):
        self.n_features_in_ = X.shape[1]
        if hasattr(X, "columns"):
            self.feature_names_in_ = np.asarray([str(c) for c in X.columns], dtype=object)
        return self

    def transform(self, X):
        decoded = X.copy()
        for name, labels in (self.labels or {}).items():
            if name not in decoded.columns:
                continue
            codes = decoded[name].to_numpy(dtype=np.float64)
            known = ~np.isnan(codes)
            values = np.full(codes.shape[0], np.nan, dtype=object)
            values[known] = np.asarray(labels, dtype=object)[codes[known].astype(np.intp)]
            decoded[name] = values
        return decoded

    def get_feature_names_out(self, input_features=None):
        return np.asarray(getattr(self, "feature_names_in_", input_features), dtype=object)


@dataclasses.dataclass(frozen=True)
class ColumnMap:
    """Which input columns each derived column reads (``reads[k]``: input positions)."""

    n_inputs: int
    derived_names: tuple
    reads: tuple

    def units(self):
        """The input columns in units: lists of input positions, each unit the input
        columns joined (transitively) by derived columns that read several, in the order
        of their first column; an input column no derived column reads is a unit of its
        own (its derived block is empty)."""
        parent = list(range(self.n_inputs))

        def root(i):
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        for read in self.reads:
            members = sorted(read)
            for other in members[1:]:
                parent[root(other)] = root(members[0])
        units = {}
        for i in range(self.n_inputs):
            units.setdefault(root(i), []).append(i)
        return sorted(units.values(), key=lambda unit: unit[0])

    def derived(self, inputs) -> np.ndarray:
        """Positions of the derived columns that read any of the input positions."""
        inputs = set(inputs)
        return np.array([k for k, read in enumerate(self.reads) if read & inputs],
                        dtype=np.intp)

    def groups(self, input_names, feature_groups=None):
        """``(names, inputs, derived)``: the reported features and, for each, the
        positions of its input columns and of its derived columns (possibly none: an
        input column the model never reads).

        Without ``feature_groups`` one feature per unit (:meth:`units`), named by its
        input columns. ``feature_groups`` (name -> input columns, by name or position)
        gives one feature per group instead, in order; a group must take whole units, as
        a derived column reading columns of two features could be given to neither."""
        names = [str(name) for name in input_names]
        if feature_groups is None:
            units = self.units()
            return ([JOINED.join(names[i] for i in unit) for unit in units],
                    [np.array(unit, dtype=np.intp) for unit in units],
                    [self.derived(unit) for unit in units])
        unit_of = {i: tuple(unit) for unit in self.units() for i in unit}
        out_names, out_inputs, out_derived = [], [], []
        for name, members in feature_groups.items():
            if isinstance(members, str | numbers.Integral) or len(members) == 0:
                raise ValueError(f"feature_groups[{name!r}] must be a non-empty list of "
                                 f"columns; got {members!r}")
            positions = set()
            for member in members:
                if member in names:
                    positions.add(names.index(member))
                elif isinstance(member, numbers.Integral) and 0 <= member < len(names):
                    positions.add(int(member))
                else:
                    raise ValueError(f"feature_groups[{name!r}] names column {member!r}, "
                                     f"which the pipeline does not read (its input columns: "
                                     f"{', '.join(names[:8])}{', ...' if len(names) > 8 else ''})")
            for i in sorted(positions):
                missing = [names[j] for j in unit_of[i] if j not in positions]
                if missing:
                    raise SplitUnit(
                        f"feature_groups[{name!r}] takes {names[i]!r} without "
                        f"{', '.join(map(repr, missing))}, which the pipeline reads together "
                        "with it (in one derived column); put them in the same group")
            out_names.append(str(name))
            out_inputs.append(np.array(sorted(positions), dtype=np.intp))
            out_derived.append(self.derived(positions))
        return out_names, out_inputs, out_derived


@dataclasses.dataclass(frozen=True)
class PipelineModel:
    """A fitted pipeline as its last step (``final``), its earlier steps (``steps``) and
    the map of the last step's columns back to the input columns (``columns``).
    ``not_row_wise``: the names of the steps not known to map each row by itself (empty:
    shuffling derived blocks is exact)."""

    pipeline: object
    final: object
    steps: tuple
    columns: ColumnMap
    not_row_wise: tuple

    @property
    def row_wise(self) -> bool:
        return not self.not_row_wise

    def transform(self, X):
        """``X`` through every step before the last, as the pipeline's ``predict`` does
        it; a sparse result made dense (the tree readers take dense rows)."""
        for _, step in self.steps:
            X = step.transform(X)
        if hasattr(X, "toarray"):
            X = X.toarray()
        return X


def read_pipeline(pipeline) -> PipelineModel:
    """The :class:`PipelineModel` of a fitted ``pipeline`` (see the module's docstring).

    Raises
    ------
    TypeError
        ``pipeline`` is not a Pipeline, or its last step is not an estimator.
    """
    if not is_pipeline(pipeline):
        raise TypeError(f"expected a scikit-learn Pipeline; got {type(pipeline).__name__}")
    steps = []
    final = pipeline
    while is_pipeline(final):
        for name, step in final.steps[:-1]:
            if step is None or step == "passthrough" or hasattr(step, "fit_resample"):
                continue  # a sampler resamples the training rows only, as in predict
            steps.append((name, step))
        final = final.steps[-1][1]
    if final is None or final == "passthrough" or not hasattr(final, "predict"):
        raise TypeError("the pipeline's last step must be a fitted model with predict; got "
                        f"{final!r}")
    n_inputs = _n_inputs(pipeline, steps, final)
    reads = [frozenset({j}) for j in range(n_inputs)]
    not_row_wise = []
    for k, (name, step) in enumerate(steps):
        n_out = getattr(steps[k + 1][1] if k + 1 < len(steps) else final, "n_features_in_",
                        None)
        reads = _trace(step, reads, n_out, name, not_row_wise)
    n_final = getattr(final, "n_features_in_", None)
    if n_final is not None and n_final != len(reads):
        raise ValueError(f"the pipeline's steps make {len(reads)} columns; its last step "
                         f"reads {n_final}")
    derived = _derived_names(pipeline, steps, final, len(reads))
    return PipelineModel(pipeline=pipeline, final=final, steps=tuple(steps),
                         columns=ColumnMap(n_inputs, tuple(derived), tuple(reads)),
                         not_row_wise=tuple(not_row_wise))


def _n_inputs(pipeline, steps, final) -> int:
    first = steps[0][1] if steps else final
    n = getattr(pipeline, "n_features_in_", None) or getattr(first, "n_features_in_", None)
    if n is None:
        raise TypeError("cannot read an unfitted pipeline: fit it first")
    return int(n)


def _derived_names(pipeline, steps, final, n_derived):
    """The last step's column names: its own, else the steps' output names, else x0..."""
    names = getattr(final, "feature_names_in_", None)
    if names is None and steps:
        try:
            names = Pipeline(list(steps)).get_feature_names_out()
        except (AttributeError, ValueError, TypeError):
            names = None
    if names is None or len(names) != n_derived:
        names = [f"x{k}" for k in range(n_derived)]
    return [str(name) for name in names]


def _trace(step, reads, n_out, name, not_row_wise):
    """The input columns each output column of ``step`` reads, given those of its
    inputs (``reads``); ``n_out`` its output count when known. Appends ``name`` to
    ``not_row_wise`` for a step not known to map each row by itself."""
    if step is None or step == "passthrough":
        return list(reads)
    if step == "drop":
        return []
    if is_pipeline(step):
        for k, (inner, part) in enumerate(step.steps):
            if part is None or part == "passthrough" or hasattr(part, "fit_resample"):
                continue
            later = [s for _, s in step.steps[k + 1:] if s not in (None, "passthrough")]
            n_next = getattr(later[0], "n_features_in_", None) if later else n_out
            reads = _trace(part, reads, n_next, f"{name}/{inner}", not_row_wise)
        return reads
    if isinstance(step, ColumnTransformer):
        return _column_transformer(step, reads, name, not_row_wise)
    if isinstance(step, FeatureUnion):
        out = []
        for inner, part in step.transformer_list:
            if part == "drop" or part is None:
                continue
            out += _trace(part, reads, None, f"{name}/{inner}", not_row_wise)
        return out
    known = _known(step, reads)
    if known is not None:
        return known
    # A step sapwood does not know: every output may read every input, and rows may be
    # mixed (a Normalizer, a FunctionTransformer's own function, PCA, ...).
    not_row_wise.append(f"{name} ({type(step).__name__})")
    if isinstance(step, FunctionTransformer) and step.feature_names_out == "one-to-one":
        return list(reads)  # its user declares output j to be input j's
    n = n_out if n_out is not None else _n_outputs(step, name)
    everything = frozenset().union(*reads) if reads else frozenset()
    return [everything] * n


def _n_outputs(step, name) -> int:
    try:
        return len(step.get_feature_names_out())
    except (AttributeError, ValueError, TypeError):
        raise TypeError(f"cannot tell how many columns the pipeline step {name!r} "
                        f"({type(step).__name__}) makes: it has no get_feature_names_out"
                        ) from None


def _known(step, reads):
    """The output map of a transformer whose map is known (None: not known)."""
    if isinstance(step, FunctionTransformer) and step.func is None:
        return list(reads)  # the identity (a ColumnTransformer's passthrough)
    if isinstance(step, CodesToLabels):
        return list(reads)
    if isinstance(step, _PER_COLUMN):
        return list(reads)
    if isinstance(step, KBinsDiscretizer):
        if step.encode == "ordinal":
            return list(reads)
        return _per_input(reads, [int(n) for n in step.n_bins_])
    if isinstance(step, OneHotEncoder):
        counts = _one_hot_counts(step)
        if counts is None or sum(counts) != len(step.get_feature_names_out()):
            return None
        return _per_input(reads, counts)
    if isinstance(step, TargetEncoder):
        per = len(step.classes_) if step.target_type_ == "multiclass" else 1
        return _per_input(reads, [per] * len(reads))
    if isinstance(step, PolynomialFeatures):
        return [frozenset().union(*(reads[i] for i in np.flatnonzero(powers)))
                for powers in step.powers_]
    if isinstance(step, MissingIndicator):
        return [reads[i] for i in step.features_]
    if isinstance(step, SimpleImputer):
        kept = (np.arange(len(reads)) if step.keep_empty_features
                else np.flatnonzero(~_is_nan(step.statistics_)))
        out = [reads[i] for i in kept]
        if step.add_indicator:
            out += [reads[i] for i in step.indicator_.features_]
        return out
    if isinstance(step, SelectorMixin):
        return [reads[i] for i in np.flatnonzero(step.get_support())]
    return None


def _is_nan(values):
    values = np.asarray(values)
    if values.dtype.kind == "f":
        return np.isnan(values)
    return np.array([value is None or (isinstance(value, float) and np.isnan(value))
                     for value in values], dtype=bool)


def _one_hot_counts(encoder):
    """Output columns per input column of a fitted OneHotEncoder: its categories, less
    the dropped one, with the infrequent ones in one column."""
    counts = []
    infrequent = getattr(encoder, "infrequent_categories_", None)
    for i, categories in enumerate(encoder.categories_):
        n = len(categories)
        if infrequent is not None and infrequent[i] is not None:
            n -= len(infrequent[i]) - 1
        if encoder.drop_idx_ is not None and encoder.drop_idx_[i] is not None:
            n -= 1
        counts.append(n)
    return counts


def _per_input(reads, counts):
    return [read for read, count in zip(reads, counts, strict=True) for _ in range(count)]


def _column_transformer(transformer, reads, name, not_row_wise):
    names = getattr(transformer, "feature_names_in_", None)
    n_out = sum(piece.stop - piece.start for piece in transformer.output_indices_.values())
    out = [frozenset()] * n_out
    for inner, part, columns in transformer.transformers_:
        piece = transformer.output_indices_.get(inner)
        if part == "drop" or piece is None or piece.stop == piece.start:
            continue
        positions = _positions(columns, names, len(reads))
        made = _trace(part, [reads[i] for i in positions], piece.stop - piece.start,
                      f"{name}/{inner}", not_row_wise)
        if len(made) != piece.stop - piece.start:
            raise ValueError(f"the pipeline step {name}/{inner} makes "
                             f"{piece.stop - piece.start} columns; sapwood traced "
                             f"{len(made)}")
        out[piece] = made
    return out


def _positions(columns, names, n_columns):
    """Positions of a ColumnTransformer's column selection among its input columns."""
    if isinstance(columns, slice):
        if isinstance(columns.start, str) or isinstance(columns.stop, str):
            labels = list(names)
            start = None if columns.start is None else labels.index(columns.start)
            stop = None if columns.stop is None else labels.index(columns.stop) + 1
            return list(range(n_columns))[start:stop]
        return list(range(n_columns))[columns]
    if isinstance(columns, str | numbers.Integral):
        columns = [columns]
    columns = list(columns)
    if columns and isinstance(columns[0], bool | np.bool_):
        return [j for j, keep in enumerate(columns) if keep]
    labels = None if names is None else [str(label) for label in names]
    return [labels.index(str(column)) if isinstance(column, str) else int(column)
            for column in columns]
