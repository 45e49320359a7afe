"""The measures by name: one :class:`Measure` record each, read by everything that
offers a choice of measure (``compare``, ``altmann_pvalues``, ``boruta``, the selectors,
:func:`sapwood.explain` and the ``sapwood`` command's ``--methods``, ``--help``, tables,
``--json``, report, verdict, compile-ahead and time estimates).

A new measure is its own module (the function, with formula, paper and DOI; see
docs/measures.md) plus one :func:`register` call here, or from outside::

    from sapwood.importance import Measure, register

    def run(model, inputs, **options):
        return my_importance(model, inputs.X_test, inputs.y_test, **options)

    register(Measure("mine", "mypackage.my_importance", "what it measures, in one line",
                     run, needs={"held-out", "y"}))

``registered(measure)`` does the same for the length of a ``with`` block (tests).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

# Each measure's module (and the model adapters) is imported when the measure runs, not
# here: the command line reads the records before it imports pandas and scikit-learn.

__all__ = ["GIVES", "HELD_OUT_ROWS", "MEASURES", "NEEDS", "NULLS", "REFIT_ROWS", "ROWS",
           "Measure", "MeasureInputs", "by_api_name", "register", "registered", "replace",
           "unnormalised_mdi", "unregister"]

#: The kinds of rows a measure reads, and how a line says so ("computing X importance
#: ..."), nearest to new data first after the fitted trees (the verdict prefers them in
#: this order).
ROWS = MappingProxyType({
    "train": "from the fitted trees",            # the fit on the training rows itself
    "held-out": "on the held-out rows",          # scores the model on rows it has not seen
    "oob": "on the out-of-bag rows",             # each tree's out-of-bag training rows
    # Each tree's out-of-bag rows of a bagged forest, else the held-out rows.
    "oob-or-held-out": "on the out-of-bag or held-out rows",
    "refit": "by refitting without each feature",  # refits, scores the held-out rows
    "shadows": "by refitting with a shadow copy of each feature",  # on the training rows
})
#: The kinds of rows a measure reads as held-out rows: where none were held out, the
#: training rows stand in for them.
HELD_OUT_ROWS = frozenset({"held-out", "oob-or-held-out"})
#: The kinds of rows a measure reads by refitting the model: it needs an unfitted
#: estimator. Only "refit" scores held-out rows, and so takes cross-validation folds
#: (``MeasureInputs.cv``) instead.
REFIT_ROWS = frozenset({"refit", "shadows"})
#: What a measure may need besides a fitted model and its rows: the target, a bagged
#: model (each tree's in-bag rows), a boosted one.
NEEDS = frozenset({"y", "bagging", "boosting"})
#: How the importance of a feature the model does not use behaves.
NULLS = MappingProxyType({
    # Nothing ties it to zero: impurity, split gain, |SHAP| are above zero for any
    # feature the trees split on.
    "uncentred": "not centred on zero",
    "centred": "zero up to noise",
    # ... and scattered symmetrically around zero, so Janitza's p-values apply.
    "symmetric": "symmetric around zero",
})
#: What a measure's results give, and what a run of it gives besides.
GIVES = frozenset({
    "intervals",       # 95% intervals of the importances from its draws
    "rank_intervals",  # simultaneous 95% rank intervals
    "zscore",          # extra["zscore"]: importance / standard error (boruta ranks by it)
    "progress",        # run draws a bar with its steps when inputs.progress is set
    "new_rows",        # each draw (importances column) is new rows: a row, or a fold
    "verdict",         # the command line's verdict can rest on it
    # It reads a fitted scikit-learn Pipeline (a tree model its last step) in the
    # pipeline's input columns (docs/measures.md, section 'Pipelines in their input columns');
    # a measure without it is skipped for one, saying so.
    "input_columns",
})


@dataclass(frozen=True)
class MeasureInputs:
    """What a measure may read besides the fitted model.

    ``X_train``/``y_train``: the rows the model was fit on. ``X_test``/``y_test``: rows
    to score on, or None when there are none (measures that score then use the training
    rows, or cross-validation: see each). ``held_out`` False: ``X_test`` are the
    training rows again (a table too small to split). ``estimator``: an unfitted copy of
    the model for measures that refit (None: none can be made, e.g. a loaded model
    file). ``cv``: folds for refitting measures instead of ``X_test``. ``max_rows``:
    per-row measures (SHAP) explain a random sample of at most this many rows (None:
    all; "auto": see :data:`SHAP_LEAF_ROWS`). ``progress``: measures that report
    progress draw a bar. ``n_jobs``: threads, for measures that take them. ``scoring``:
    a scikit-learn scorer name for the measures that score (held-out permutation,
    drop-column); None: the model's own ``score``.
    """

    X_train: object
    y_train: object
    X_test: object = None
    y_test: object = None
    random_state: object = None
    estimator: object = None
    cv: int | None = None
    held_out: bool = True
    max_rows: int | str | None = "auto"
    progress: bool = False
    n_jobs: int | None = None
    scoring: str | None = None

    def with_training(self, X, y) -> MeasureInputs:
        return dataclasses.replace(self, X_train=X, y_train=y)


@dataclass(frozen=True)
class Measure:
    """One importance measure, as everything that offers a choice of measures sees it.

    Attributes
    ----------
    names : each name ``compare``, ``altmann_pvalues``, ``boruta``, the selectors,
        ``explain`` and ``--methods`` accept for it, with the keyword arguments for
        ``run`` it stands for. The first is the measure's one name (the command line's,
        the key in :data:`MEASURES`: :attr:`name`, its settings :attr:`options`); the
        others are long aliases, some with other settings (``conditional`` is permimp's
        threshold 0.95 with 5 repeats, ``conditional_permutation`` the function's own
        defaults). A string: that one name, without options.
    function : the name of its public function (formula, paper, DOI) in
        ``sapwood.importance``, or ``"module.name"`` for a measure defined elsewhere.
    description : one line saying what it measures (``--help``, table titles).
    run : ``run(model, inputs: MeasureInputs, **options) -> ImportanceResult``.
    needs : what it needs besides a fitted model: the kind of rows it reads (at most
        one of :data:`ROWS`; none: ``"train"``, the fitted trees, see :attr:`rows`), and
        any of :data:`NEEDS`. A kind of :data:`REFIT_ROWS` needs an unfitted estimator.
    applies : ``applies(model, inputs, **options) -> None``, or the reason (a clause)
        why it does not apply to this model and these inputs. Reasons the measure's
        function finds only once it runs (e.g. no bagging record) come as its
        ValueError.
    fallback : the measure to show instead where ``applies`` refuses (MDI -> split gain
        for XGBoost and LightGBM trees, which record no impurities).
    null : how the importance of a feature the model does not use behaves, one of
        :data:`NULLS`: ``"uncentred"``, ``"centred"`` (zero up to noise, so "above
        zero" means "used"), ``"symmetric"`` (centred, and the importances of irrelevant
        features scatter symmetrically around zero, so Janitza's p-values apply).
    altmann : Altmann's p-values: True recomputes the measure itself on each refit,
        a callable ``f(model, X, y, **kwargs)`` recomputes that instead (MDI: before
        normalisation), False: not offered.
    gives : a subset of :data:`GIVES`: ``"intervals"``, 95% intervals of the importances
        from its draws (trees, repeats, folds or rows; none where there is one draw: a
        single tree, drop-column without cross-validation); ``"rank_intervals"``,
        simultaneous 95% rank intervals (from the same draws, or from per-tree values
        that have no interval of their mean, as Friedman's); ``"zscore"``, its result
        carries ``extra["zscore"]`` (importance / standard error), which ``boruta`` ranks
        by, as R's Boruta does; ``"progress"``, ``run`` draws a bar with its steps and
        the time left when ``inputs.progress`` is set; ``"new_rows"``, each of its draws
        is other rows (a held-out row, or a cross-validation fold), so the interval over
        two or more covers new rows; ``"verdict"``, the command line's verdict can rest
        on it (it needs ``null`` centred and intervals over new rows);
        ``"input_columns"``, it reads a fitted scikit-learn Pipeline in the pipeline's
        input columns.
    label : its name in prose, when not :attr:`name` (``MDI``).
    kernel : ``"module.name"`` of the Numba kernel whose on-disk cache says the
        measure's kernels are compiled (its largest; they compile in the same calls),
        or ``""`` for a measure without one. The command line compiles the others ahead
        and runs the compiled ones first.
    """

    names: Mapping | str
    function: str
    description: str
    run: Callable
    needs: frozenset = frozenset()
    applies: Callable | None = None
    fallback: str = ""
    null: str = "uncentred"
    altmann: bool | Callable = True
    gives: frozenset = frozenset()
    label: str = ""
    kernel: str = ""

    def __post_init__(self):
        # A record is read-only all the way down (it is shared by every caller).
        names = {self.names: {}} if isinstance(self.names, str) else self.names
        object.__setattr__(self, "names", MappingProxyType(
            {name: MappingProxyType(dict(options)) for name, options in names.items()}))
        object.__setattr__(self, "needs", frozenset(self.needs))
        object.__setattr__(self, "gives", frozenset(self.gives))
        if not self.names:
            raise ValueError("The 'names' field of Measure must hold at least one name; "
                             "got none")
        kinds = sorted(self.needs & set(ROWS))
        unknown = sorted(self.needs - set(ROWS) - NEEDS)
        if unknown or len(kinds) > 1:
            raise ValueError(f"The 'needs' field of Measure must hold at most one of "
                             f"{list(ROWS)} and any of {sorted(NEEDS)}; got "
                             f"{sorted(unknown or kinds)}")
        if self.null not in NULLS:
            raise ValueError(f"The 'null' field of Measure must be one of {list(NULLS)}; "
                             f"got {self.null!r}")
        unknown = sorted(self.gives - GIVES)
        if unknown:
            raise ValueError(f"The 'gives' field of Measure must be a subset of "
                             f"{sorted(GIVES)}; got {unknown}")
        if self.kernel and "." not in self.kernel:
            raise ValueError(f"The 'kernel' field of Measure must be 'module.name' or ''; "
                             f"got {self.kernel!r}")

    @property
    def name(self) -> str:
        """Its one name: the first of :attr:`names`."""
        return next(iter(self.names))

    @property
    def options(self) -> Mapping:
        """The keyword arguments for ``run`` when asked for by :attr:`name`."""
        return self.names[self.name]

    @property
    def rows(self) -> str:
        """The kind of rows it reads, one of :data:`ROWS` (from ``needs``)."""
        return next(iter(self.needs & set(ROWS)), "train")

    @property
    def held_out(self) -> bool:
        """Whether it reads the rows it is given as held-out ones (``inputs.X_test``),
        for which the training rows stand in where none were held out."""
        return self.rows in HELD_OUT_ROWS

    @property
    def refits(self) -> bool:
        """Whether it refits the model (so it needs an unfitted estimator)."""
        return self.rows in REFIT_ROWS

    @property
    def optional(self) -> bool:
        """Whether it applies to some models only (where it does not, the command line
        skips it with a note instead of failing): it can refuse (``applies``, a refit,
        a bagged or boosted model needed) and has no ``fallback`` to show instead."""
        can_refuse = (self.applies is not None or self.refits
                      or bool(self.needs & {"bagging", "boosting"}))
        return can_refuse and not self.fallback

    @property
    def title(self) -> str:
        """Its name in prose."""
        return self.label or self.name

    @property
    def short(self) -> str:
        """A column header for narrow tables: the name, cut to its first four letters
        when longer than eight."""
        return self.name[:4] if len(self.name) > 8 else self.name

    def why_not(self, model, inputs: MeasureInputs, **options) -> str | None:
        """None if the measure applies to ``model`` with ``inputs``, else the reason."""
        if self.refits and inputs.estimator is None:
            return (f"{self.name} importance is computed {ROWS[self.rows]}, so it needs an "
                    "unfitted estimator, not only a fitted model")
        if "input_columns" not in self.gives and _is_pipeline(model):
            offered = ", ".join(name for name, measure in _MEASURES.items()
                                if "input_columns" in measure.gives)
            return (f"it does not read a Pipeline in its input columns yet (these do: "
                    f"{offered})")
        return None if self.applies is None else self.applies(model, inputs, **options)


_MEASURES: dict = {}
#: Every registered measure by name, in registration order (read-only; see
#: :func:`register`).
MEASURES = MappingProxyType(_MEASURES)


def register(measure: Measure) -> Measure:
    """Add ``measure`` to :data:`MEASURES`; its ``names`` must be new."""
    if not isinstance(measure, Measure):
        raise TypeError(f"register takes a Measure; got {type(measure).__name__}")
    if measure.name in _MEASURES:
        raise ValueError(f"a measure named {measure.name!r} is already registered")
    taken = [name for name in measure.names if by_api_name(name) is not None]
    if taken:
        raise ValueError(f"the name {taken[0]!r} of measure {measure.name!r} is already "
                         "taken by another measure")
    _MEASURES[measure.name] = measure
    return measure


def replace(measure: Measure) -> Measure:
    """Put ``measure`` in the place of the registered measure of its name (its other
    names must be new or that measure's); returns the one it replaced. The order of
    :data:`MEASURES` does not change."""
    if not isinstance(measure, Measure):
        raise TypeError(f"replace takes a Measure; got {type(measure).__name__}")
    if measure.name not in _MEASURES:
        raise ValueError(f"no measure named {measure.name!r} is registered; registered: "
                         + ", ".join(_MEASURES))
    taken = [name for name in measure.names
             if (found := by_api_name(name)) is not None and found[0].name != measure.name]
    if taken:
        raise ValueError(f"the name {taken[0]!r} of measure {measure.name!r} is already "
                         "taken by another measure")
    old = _MEASURES[measure.name]
    _MEASURES[measure.name] = measure
    return old


def unregister(name: str) -> Measure:
    """Remove the measure ``name`` from :data:`MEASURES` and return it."""
    if name not in _MEASURES:
        raise ValueError(f"no measure named {name!r} is registered; registered: "
                         + ", ".join(_MEASURES))
    return _MEASURES.pop(name)


@contextlib.contextmanager
def registered(measure: Measure):
    """``with registered(Measure(...)):`` the measure is in :data:`MEASURES` inside the
    block only (for tests and short-lived extensions)."""
    register(measure)
    try:
        yield measure
    finally:
        unregister(measure.name)


def _is_pipeline(model) -> bool:
    from ..adapters import is_pipeline

    return is_pipeline(model)


def _trees_of(model):
    """The model whose trees a measure reads: a Pipeline's last step, else itself."""
    if _is_pipeline(model):
        from ..adapters import read_pipeline

        return read_pipeline(model).final
    return model


def by_api_name(name: str):
    """``(measure, options)`` for a name ``compare`` and friends accept, or None."""
    for measure in _MEASURES.values():
        if name in measure.names:
            return measure, measure.names[name]
    return None


# -- the measures ------------------------------------------------------------------------

N_REPEATS = 5
# Condition on a feature only when associated at the 5% level (1 - p > 0.95), as
# permimp does (Debeer & Strobl 2020, doi:10.1186/s12859-020-03622-2). party's 0.2
# conditions on most independent features too, and on fully grown trees their cuts
# leave cells of one row: every importance collapses to about zero.
CONDITIONAL_THRESHOLD = 0.95
# Path-dependent TreeSHAP walks every node of every tree for each row, so on a forest
# grown in full on tens of thousands of rows (millions of leaves) each row is costly and
# every held-out row would take hours. With max_rows "auto" a random sample of the rows
# is explained: at most DEFAULT_MAX_ROWS, and no more than SHAP_LEAF_ROWS / (the
# model's leaves), a bounded amount of work, but at least MIN_SHAP_ROWS. The
# mean |SHAP| is then an estimate, and its 95% intervals (over the sampled rows) say
# how good. The count depends on the model only, never on the clock.
DEFAULT_MAX_ROWS = 1000
SHAP_LEAF_ROWS = 60_000_000
MIN_SHAP_ROWS = 20
_OUT_OF_SAMPLE = ("the model is not a bagged forest (bootstrap=True), so without "
                  "out-of-bag rows the measure needs out-of-sample rows: X_test / y_test")


def _names(X):
    return [str(c) for c in X.columns] if hasattr(X, "columns") else None


def _scored(inputs):
    """The rows to score on: the held-out ones, else the training ones."""
    if inputs.X_test is None:
        return inputs.X_train, inputs.y_train
    return inputs.X_test, inputs.y_test


def _bagged(model) -> bool:
    return bool(getattr(model, "bootstrap", False))


def unnormalised_mdi(model, X, y, **kwargs):
    """MDI before normalisation: (1/N) sum_t sum_{splits i on j} (w_i I_i - w_L I_L -
    w_R I_R) / w_root (randomForest's ``MeanDecreaseGini`` per root weight)."""
    from ..adapters import as_ensemble
    from ._mdi import mdi, tree_impurity_decrease

    if _is_pipeline(model):
        # Per derived column, then summed per input column as MDI itself is.
        from ._engine._pipelines import pipeline_view, regrouped

        view = pipeline_view(model, X)
        return regrouped(unnormalised_mdi(view.final, X, y, feature_names=view.derived_names),
                         view)
    result = mdi(model, **kwargs)
    per_tree = np.column_stack([tree_impurity_decrease(tree) / tree.weighted_n_node_samples[0]
                                for tree in as_ensemble(model).trees])
    return result.replace(importances_mean=per_tree.mean(axis=1),
                          importances_std=per_tree.std(axis=1), importances=per_tree,
                          params={**result.params, "normalized": False})


def _records_impurities(model, inputs, **options):
    from ..adapters import as_ensemble
    from ._mdi import _require_impurities

    ensemble = as_ensemble(_trees_of(model))
    try:
        _require_impurities(ensemble)
    except ValueError:
        if ensemble.kind.objective == "path_length":
            return ("an anomaly detector's trees split at random, not to reduce an "
                    "impurity, so it has no impurity decrease to measure")
        if ensemble.task == "survival" and ensemble.combine == "mean":
            return "a survival tree's log-rank split decreases no impurity"
        return ("this model records no node impurities (XGBoost and LightGBM trees keep "
                "split gains, not impurities)")
    return None


def _run_mdi_plus(model, inputs, **options):
    from ._mdi_plus import mdi_plus

    return mdi_plus(model, inputs.X_train, inputs.y_train, **options)


def _held_out(model, inputs, **options):
    if inputs.X_test is None or not inputs.held_out:
        return ("CPI tests on held-out rows, and there are none (a test set or a split "
                "of the table)")
    return None


def _run_cpi(model, inputs, **options):
    from ._cpi import cpi

    return cpi(model, inputs.X_test, inputs.y_test, random_state=inputs.random_state,
               **options)


def _run_sage(model, inputs, **options):
    from ._sage import sage

    X, y = _scored(inputs)
    return sage(model, X, y, random_state=inputs.random_state, **options)


def _records_gains(model, inputs, *, kind=None, **options):
    from ..adapters import as_ensemble

    # Only the split-gain kinds need gains; the library's default kind decides itself.
    trees = as_ensemble(_trees_of(model)).trees
    if kind not in ("gain", "total_gain") or any(tree.has_gain for tree in trees) \
            or all(tree.node_count == 1 for tree in trees):
        return None
    return ("this model records no split gains (the trees of XGBoost, LightGBM and "
            "scikit-learn's HistGradientBoosting do)")


def _run_mdi(model, inputs, **options):
    from ._mdi import mdi

    return mdi(model, feature_names=_names(inputs.X_train), **options)


def _run_native(model, inputs, **options):
    from ._gain import native_importance

    return native_importance(model, feature_names=_names(inputs.X_train), **options)


def _run_friedman(model, inputs, **options):
    from ._friedman import friedman_importance

    return friedman_importance(model, feature_names=_names(inputs.X_train), **options)


def _run_permutation(model, inputs, **options):
    from ._engine._ranking import Ranker, query_permutation_importance
    from ._permutation import permutation_importance

    X, y = _scored(inputs)
    if isinstance(model, Ranker):  # NDCG within queries: shuffled within queries
        return query_permutation_importance(model, X, y, random_state=inputs.random_state,
                                            **options)
    if inputs.scoring is not None:
        options = {"scoring": inputs.scoring, **options}
    return permutation_importance(model, X, y, random_state=inputs.random_state,
                                  n_jobs=inputs.n_jobs, progress=inputs.progress, **options)


def _run_drop(model, inputs, **options):
    from ._drop import drop_column_importance

    if inputs.scoring is not None:
        options = {"scoring": inputs.scoring, **options}
    if inputs.cv is not None:
        return drop_column_importance(inputs.estimator, inputs.X_train, inputs.y_train,
                                      cv=inputs.cv, progress=inputs.progress, **options)
    return drop_column_importance(inputs.estimator, inputs.X_train, inputs.y_train,
                                  inputs.X_test, inputs.y_test, progress=inputs.progress,
                                  **options)


def _bagged_or_scored(model, inputs, **options):
    if not _bagged(model) and inputs.X_test is None:
        return _OUT_OF_SAMPLE
    return None


def _run_conditional(model, inputs, **options):
    from ._conditional import conditional_permutation_importance

    # A bootstrapped forest is evaluated on each tree's out-of-bag rows of its training
    # data; any other model on the held-out rows.
    X, y = (inputs.X_train, inputs.y_train) if _bagged(model) else _scored(inputs)
    return conditional_permutation_importance(model, X, y, random_state=inputs.random_state,
                                              progress=inputs.progress, **options)


def _run_air(model, inputs, **options):
    from ._air import air

    return air(inputs.estimator, inputs.X_train, inputs.y_train,
               random_state=inputs.random_state, progress=inputs.progress, **options)


def _run_oob(model, inputs, **options):
    from ._oob import oob_permutation_importance

    return oob_permutation_importance(model, inputs.X_train, inputs.y_train,
                                      random_state=inputs.random_state, n_jobs=inputs.n_jobs,
                                      progress=inputs.progress, **options)


def _run_ufi(model, inputs, **options):
    """UFI on each tree's out-of-bag rows of a bagged forest, else on the held-out rows."""
    from ._ufi import ufi

    if _bagged(model):
        return ufi(model, inputs.X_train, inputs.y_train, **options)
    return ufi(model, inputs.X_test, inputs.y_test, held_out=True, **options)


def _run_shap(model, inputs, **options):
    from ..adapters import as_ensemble
    from ._shap import tree_shap

    X, _ = _scored(inputs)
    n_available = len(X)
    limit = inputs.max_rows
    if limit == "auto":
        try:
            trees = as_ensemble(_trees_of(model)).trees
        except ValueError:  # trees only their library reads (CatBoost's CTRs)
            trees = ()
        leaves = sum(int((tree.children_left < 0).sum()) for tree in trees)
        limit = min(DEFAULT_MAX_ROWS, max(MIN_SHAP_ROWS, SHAP_LEAF_ROWS // max(leaves, 1)))
    if limit is not None and n_available > limit:
        X = X.sample(n=limit, random_state=inputs.random_state)
    result = tree_shap(model, X, progress=inputs.progress, **options)
    result.params.update(n_rows=len(X), n_rows_available=n_available)
    if result.params.get("source") == "catboost ShapValues":
        import warnings

        warnings.warn("the values are CatBoost's own exact TreeSHAP values "
                      "(get_feature_importance(type='ShapValues')): the model's CTR splits "
                      "are outside sapwood's tree format", UserWarning, stacklevel=2)
    return result


register(Measure(
    "mdi", "mdi", "mean decrease in impurity, on the training data", _run_mdi,
    applies=_records_impurities, fallback="gain",
    gives={"intervals", "rank_intervals", "input_columns"},
    label="MDI",
    # Altmann et al. test the unnormalised impurity decrease; normalised shares would
    # pass the informative features' share to the noise features under the null.
    altmann=unnormalised_mdi))
register(Measure(
    # compare's "native": the library's default kind (scikit-learn's impurity, XGBoost's
    # gain, LightGBM's split count).
    {"gain": {"kind": "gain"}, "native": {}}, "native_importance",
    "the library's own split-gain importance (XGBoost, LightGBM), on the training data",
    # Only a loaded XGBoost or LightGBM model has it, and a loaded model cannot be refit.
    _run_native, applies=_records_gains, label="split-gain", altmann=False,
    gives={"input_columns"}))
register(Measure(
    "friedman", "friedman_importance",
    "Friedman's relative influence sqrt(mean over trees of the squared-error "
    "improvement), on the training data (gradient boosting: gb)",
    _run_friedman, needs={"boosting"}, gives={"rank_intervals"},
    label="Friedman's importance"))
register(Measure(
    {"permutation": {"n_repeats": N_REPEATS}}, "permutation_importance",
    "drop in held-out score when the feature is shuffled", _run_permutation,
    needs={"held-out", "y"}, null="symmetric",
    gives={"intervals", "rank_intervals", "progress", "verdict", "input_columns"},
    kernel="sapwood._kernels._permutation.reroute_packed"))
register(Measure(
    {"drop": {}, "drop_column": {}}, "drop_column_importance",
    "drop in held-out score (or cross-validated score with --cv) when the model is refit "
    "without the feature", _run_drop, needs={"refit", "y"}, null="centred",
    gives={"intervals", "rank_intervals", "progress", "new_rows", "verdict",
           "input_columns"},
    # S refits of p + 1 refits each: not offered.
    altmann=False))
register(Measure(
    # compare's name: the function's defaults (party's threshold 0.2, one repeat).
    {"conditional": {"threshold": CONDITIONAL_THRESHOLD, "n_repeats": N_REPEATS},
     "conditional_permutation": {}},
    "conditional_permutation_importance",
    "drop in score when the feature is shuffled only among rows alike in the features "
    "associated with it at the 5% level (Strobl et al. 2008); each tree's out-of-bag rows "
    "for a bootstrapped forest, else the held-out rows", _run_conditional,
    needs={"oob-or-held-out", "y"}, applies=_bagged_or_scored, null="symmetric",
    gives={"intervals", "rank_intervals", "progress", "verdict"},
    kernel="sapwood._kernels._conditional.conditional_tree_permutation"))
register(Measure(
    {"air": {}, "impurity_corrected": {}}, "air",
    "actual impurity reduction: impurity decrease minus that of a shuffled shadow copy "
    "of the feature, from a model refit with the shadows on the training data (AIR)",
    _run_air, needs={"shadows", "y"}, null="symmetric",
    gives={"intervals", "rank_intervals", "progress", "verdict"}, label="AIR"))
register(Measure(
    {"oob": {}, "oob_permutation": {}}, "oob_permutation_importance",
    "drop in each tree's out-of-bag accuracy (or rise in error) when the feature is "
    "shuffled (bagged forests: rf, et)", _run_oob, needs={"oob", "y", "bagging"},
    null="symmetric", gives={"intervals", "rank_intervals", "zscore", "progress", "verdict"},
    kernel="sapwood._kernels._oob.oob_tree_permutation_rows"))
register(Measure(
    {"ufi": {}, "unbiased_mdi": {}}, "ufi",
    "impurity decrease re-measured on rows the trees were not fit on: each tree's "
    "out-of-bag rows for a bootstrapped forest, else the held-out rows (UFI)",
    _run_ufi, needs={"oob-or-held-out", "y"}, applies=_bagged_or_scored,
    gives={"intervals", "rank_intervals"}, label="UFI",
    kernel="sapwood._kernels._traverse.decision_path_tree"))
register(Measure(
    {"shap": {}, "tree_shap": {}}, "tree_shap",
    "mean |SHAP value| on the held-out rows: the feature's average share of each "
    "prediction (path-dependent TreeSHAP, as the shap package computes it)",
    _run_shap, needs={"held-out"},
    gives={"intervals", "rank_intervals", "progress", "input_columns"},
    label="mean |SHAP|", kernel="sapwood._kernels._shap.shap_tables",
    # |SHAP| is never negative, so Janitza's mirrored null does not apply; Altmann's
    # refits on permuted labels would work but cost S forests: not offered.
    altmann=False))
register(Measure(
    "mdi_plus", "mdi_plus",
    "MDI+: R^2 of each feature's part of a ridge fit on every tree's decision stumps "
    "plus the raw feature, leave-one-out on the training data (Agarwal et al. 2024)",
    _run_mdi_plus, needs={"y"}, null="centred", gives={"intervals", "rank_intervals"},
    label="MDI+"))
register(Measure(
    "cpi", "cpi",
    "conditional predictive impact: rise in held-out loss when the feature is replaced "
    "by its Gaussian knockoff, with a one-sided t-test (Watson & Wright 2021)",
    _run_cpi, needs={"held-out", "y"}, applies=_held_out, null="centred",
    gives={"intervals", "rank_intervals", "new_rows"}, label="CPI",
    # CPI carries its own p-values (the t-test over rows); Altmann's refits add nothing.
    altmann=False))
register(Measure(
    "sage", "sage",
    "SAGE: the feature's Shapley share of the held-out loss the model saves, features "
    "left out drawn from a background sample (permutation sampling until the standard "
    "error is 2.5% of the values' range; Covert et al. 2020)",
    _run_sage, needs={"held-out", "y"}, null="centred",
    gives={"intervals", "rank_intervals"}, label="SAGE",
    kernel="sapwood._kernels._sage.coalition_totals",
    # Each refit would repeat the sampling: not offered.
    altmann=False))


def _survival_forest(model, inputs, **options):
    from ..adapters import as_ensemble

    try:
        ensemble = as_ensemble(model)
    except (TypeError, ValueError):
        return "it reads the trees of a random survival forest"
    if ensemble.task != "survival" or ensemble.combine != "mean" or \
            ensemble.bootstrap is None:
        return ("it is Ishwaran's importance of a bagged random survival forest (a time "
                "and an event; bootstrap=True)")
    return None


def _run_vimp(model, inputs, **options):
    from ._vimp import survival_vimp

    return survival_vimp(model, inputs.X_train, inputs.y_train,
                         random_state=inputs.random_state, **options)


register(Measure(
    {"vimp": {}, "survival_vimp": {}}, "survival_vimp",
    "Ishwaran's VIMP: rise in a random survival forest's out-of-bag error (1 - "
    "concordance) when the feature is permuted in each tree's out-of-bag rows "
    "(randomForestSRC)", _run_vimp, needs={"oob", "y", "bagging"},
    applies=_survival_forest, null="symmetric",
    # One permutation per tree, as randomForestSRC draws it: the rank intervals rest on
    # the per-row draws (the out-of-bag rows), there being no repeats to spread.
    gives={"rank_intervals"}, label="VIMP", altmann=False))
