"""The measures by name: one :class:`Measure` record each, read by everything that
offers a choice of measure (``compare``, ``altmann_pvalues``, ``boruta`` and the
``sapwood`` command's ``--methods``, ``--help``, tables, ``--json`` and report).

A new measure is its own module (the function, with formula, paper and DOI; see
docs/measures.md) plus one :func:`register` call here, or from outside::

    from sapwood.importance import Measure, register

    def run(model, inputs, **options):
        return my_importance(model, inputs.X_test, inputs.y_test, **options)

    register(Measure("mine", "mypackage.my_importance", "what it measures, in one line",
                     run, rows="held-out", needs={"y"}))

``registered(measure)`` does the same for the length of a ``with`` block (tests).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from ..adapters import as_ensemble
from ._air import impurity_corrected
from ._conditional import conditional_permutation_importance
from ._cpi import cpi
from ._drop_column import drop_column_importance
from ._friedman import friedman_importance
from ._mdi import _require_impurities, mdi, tree_impurity_decrease
from ._mdi_plus import mdi_plus
from ._native import native_importance
from ._oob import oob_permutation_importance
from ._permutation import permutation_importance
from ._sage import sage
from ._shap import tree_shap
from ._ufi import unbiased_mdi

__all__ = ["MEASURES", "NEEDS", "ROWS", "Measure", "MeasureInputs", "by_api_name",
           "register", "registered", "replace", "unnormalised_mdi", "unregister"]

#: The rows a measure reads, and how to say so ("computing X importance ...").
ROWS = MappingProxyType({
    "train": "from the fitted trees",            # the fit on the training rows itself
    "held-out": "on the held-out rows",          # scores the model on rows it has not seen
    "oob": "on the out-of-bag rows",             # each tree's out-of-bag training rows
    "refit": "by refitting without each feature",  # refits the model
})
#: What a measure may need besides a fitted model: the target, an unfitted estimator
#: to refit, a bagged model (each tree's in-bag rows).
NEEDS = frozenset({"y", "estimator", "bagging"})


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
    name : the name on the command line (``--methods``) and the key in :data:`MEASURES`.
    function : the name of its public function (formula, paper, DOI) in
        ``sapwood.importance``, or ``"module.name"`` for a measure defined elsewhere.
    description : one line saying what it measures (``--help``, table titles).
    run : ``run(model, inputs: MeasureInputs, **options) -> ImportanceResult``.
    rows : which rows it reads, one of :data:`ROWS`.
    needs : a subset of :data:`NEEDS`.
    applies : ``applies(model, inputs, **options) -> None``, or the reason (a clause)
        why it does not apply to this model and these inputs. Reasons the measure's
        function finds only once it runs (e.g. no bagging record) come as its
        ValueError.
    optional : applies to some models only (where it does not, the command line skips
        it with a note instead of failing).
    fallback : the measure to show instead where ``applies`` refuses (MDI -> split gain
        for XGBoost and LightGBM trees, which record no impurities).
    options : keyword arguments for ``run`` when asked for by ``name``.
    api_names : the names ``compare``, ``altmann_pvalues`` and ``boruta`` accept, each
        with the ``run`` options it stands for; None: ``{name: options}``. (Measures that
        were in the library before the command line had long names there, and some
        settings differ: ``conditional`` is permimp's threshold 0.95 with 5 repeats,
        ``conditional_permutation`` the function's own defaults.)
    refits : for measures that need an estimator, what they refit (a verb phrase).
    centred : zero, up to noise, for a feature the model does not use.
    janitza : importances of irrelevant features scatter symmetrically around zero, so
        Janitza's p-values apply (implies ``centred``).
    altmann : Altmann's p-values: True recomputes the measure itself on each refit,
        a callable ``f(model, X, y, **kwargs)`` recomputes that instead (MDI: before
        normalisation), False: not offered.
    intervals : gives 95% intervals of the importances, from its draws (trees, repeats,
        folds or rows; none where there is one draw: a single tree, drop-column
        without cross-validation).
    rank_intervals : gives simultaneous 95% rank intervals (from the same draws, or
        from per-tree values that have no interval of their mean, as Friedman's).
    zscore : its result carries ``extra["zscore"]`` (importance / standard error), which
        ``boruta`` ranks by, as R's Boruta does.
    progress : ``run`` draws a bar with its steps and the time left when
        ``inputs.progress`` is set.
    label : its name in prose, when not ``name`` (``MDI``).
    where : how a progress line says where it looks, when ``rows`` does not say it well.
    abbreviation : a column header for narrow tables, when ``name`` is long.
    """

    name: str
    function: str
    description: str
    run: Callable
    rows: str
    needs: frozenset = frozenset()
    applies: Callable | None = None
    optional: bool = False
    fallback: str = ""
    options: Mapping = field(default_factory=dict)
    api_names: Mapping | None = None
    refits: str = ""
    centred: bool = False
    janitza: bool = False
    altmann: bool | Callable = True
    intervals: bool = False
    rank_intervals: bool = False
    zscore: bool = False
    progress: bool = False
    label: str = ""
    where: str = ""
    abbreviation: str = ""

    def __post_init__(self):
        # A record is read-only all the way down (it is shared by every caller).
        object.__setattr__(self, "needs", frozenset(self.needs))
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))
        if self.api_names is not None:
            object.__setattr__(self, "api_names", MappingProxyType(
                {name: MappingProxyType(dict(options))
                 for name, options in self.api_names.items()}))
        if self.rows not in ROWS:
            raise ValueError(f"The 'rows' field of Measure must be one of {list(ROWS)}; "
                             f"got {self.rows!r}")
        unknown = set(self.needs) - NEEDS
        if unknown:
            raise ValueError(f"The 'needs' field of Measure must be a subset of "
                             f"{sorted(NEEDS)}; got {sorted(unknown)}")

    @property
    def title(self) -> str:
        """Its name in prose."""
        return self.label or self.name

    @property
    def short(self) -> str:
        """A column header for narrow tables."""
        return self.abbreviation or self.name

    @property
    def names(self) -> Mapping:
        """The names ``compare``, ``altmann_pvalues``, ``boruta`` and ``explain`` accept
        for it, each with its options: ``name`` itself (the command line's settings) and
        every one of ``api_names`` (one measure, one name everywhere; the long names stay
        as aliases)."""
        return {self.name: self.options, **(self.api_names or {})}

    def why_not(self, model, inputs: MeasureInputs, **options) -> str | None:
        """None if the measure applies to ``model`` with ``inputs``, else the reason."""
        if "estimator" in self.needs and inputs.estimator is None:
            return (f"{self.name} {self.refits or 'refits the model'}, so it needs an "
                    "unfitted estimator, not only a fitted model")
        return None if self.applies is None else self.applies(model, inputs, **options)


_MEASURES: dict = {}
#: Every registered measure by name, in registration order (read-only; see
#: :func:`register`).
MEASURES = MappingProxyType(_MEASURES)


def register(measure: Measure) -> Measure:
    """Add ``measure`` to :data:`MEASURES`; its ``name`` and ``api_names`` must be new."""
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
    result = mdi(model, **kwargs)
    per_tree = np.column_stack([tree_impurity_decrease(tree) / tree.weighted_n_node_samples[0]
                                for tree in as_ensemble(model).trees])
    return result.replace(importances_mean=per_tree.mean(axis=1),
                          importances_std=per_tree.std(axis=1), importances=per_tree,
                          params={**result.params, "normalized": False})


def _records_impurities(model, inputs, **options):
    ensemble = as_ensemble(model)
    try:
        _require_impurities(ensemble)
    except ValueError:
        if ensemble.kind.objective == "path_length":
            return ("an anomaly detector's trees split at random, not to reduce an "
                    "impurity, so it has no impurity decrease to measure")
        return ("this model records no node impurities (XGBoost and LightGBM trees keep "
                "split gains, not impurities)")
    return None


def _run_mdi_plus(model, inputs, **options):
    return mdi_plus(model, inputs.X_train, inputs.y_train, **options)


def _held_out(model, inputs, **options):
    if inputs.X_test is None or not inputs.held_out:
        return ("CPI tests on held-out rows, and there are none (a test set or a split "
                "of the table)")
    return None


def _run_cpi(model, inputs, **options):
    return cpi(model, inputs.X_test, inputs.y_test, random_state=inputs.random_state,
               **options)


def _run_sage(model, inputs, **options):
    X, y = _scored(inputs)
    return sage(model, X, y, random_state=inputs.random_state, **options)


def _records_gains(model, inputs, *, kind=None, **options):
    # Only the split-gain kinds need gains; the library's default kind decides itself.
    trees = as_ensemble(model).trees
    if kind not in ("gain", "total_gain") or any(tree.has_gain for tree in trees) \
            or all(tree.node_count == 1 for tree in trees):
        return None
    return ("this model records no split gains (the trees of XGBoost, LightGBM and "
            "scikit-learn's HistGradientBoosting do)")


def _run_mdi(model, inputs, **options):
    return mdi(model, feature_names=_names(inputs.X_train), **options)


def _run_native(model, inputs, **options):
    return native_importance(model, feature_names=_names(inputs.X_train), **options)


def _run_friedman(model, inputs, **options):
    return friedman_importance(model, feature_names=_names(inputs.X_train), **options)


def _run_permutation(model, inputs, **options):
    X, y = _scored(inputs)
    if inputs.scoring is not None:
        options = {"scoring": inputs.scoring, **options}
    return permutation_importance(model, X, y, random_state=inputs.random_state,
                                  n_jobs=inputs.n_jobs, progress=inputs.progress, **options)


def _run_drop(model, inputs, **options):
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
    # A bootstrapped forest is evaluated on each tree's out-of-bag rows of its training
    # data; any other model on the held-out rows.
    X, y = (inputs.X_train, inputs.y_train) if _bagged(model) else _scored(inputs)
    return conditional_permutation_importance(model, X, y, random_state=inputs.random_state,
                                              progress=inputs.progress, **options)


def _run_air(model, inputs, **options):
    return impurity_corrected(inputs.estimator, inputs.X_train, inputs.y_train,
                              random_state=inputs.random_state, progress=inputs.progress,
                              **options)


def _run_oob(model, inputs, **options):
    return oob_permutation_importance(model, inputs.X_train, inputs.y_train,
                                      random_state=inputs.random_state, n_jobs=inputs.n_jobs,
                                      progress=inputs.progress, **options)


def _ufi_rows(model, inputs, *, held_out_rows=False):
    if held_out_rows and not _bagged(model) and inputs.X_test is None:
        return _OUT_OF_SAMPLE
    return None


def _run_ufi(model, inputs, *, held_out_rows=False):
    """UFI on the training rows (out-of-bag for a bagged forest); with
    ``held_out_rows``, on ``X_test`` for a model that is not bagged."""
    if held_out_rows and not _bagged(model):
        return unbiased_mdi(model, inputs.X_test, inputs.y_test, held_out=True)
    return unbiased_mdi(model, inputs.X_train, inputs.y_train)


def _run_shap(model, inputs, **options):
    X, _ = _scored(inputs)
    n_available = len(X)
    limit = inputs.max_rows
    if limit == "auto":
        leaves = sum(int((tree.children_left < 0).sum()) for tree in as_ensemble(model).trees)
        limit = min(DEFAULT_MAX_ROWS, max(MIN_SHAP_ROWS, SHAP_LEAF_ROWS // max(leaves, 1)))
    if limit is not None and n_available > limit:
        X = X.sample(n=limit, random_state=inputs.random_state)
    result = tree_shap(model, X, progress=inputs.progress, **options)
    result.params.update(n_rows=len(X), n_rows_available=n_available)
    return result


register(Measure(
    "mdi", "mdi", "mean decrease in impurity, on the training data", _run_mdi, rows="train",
    applies=_records_impurities, fallback="gain", label="MDI", intervals=True, rank_intervals=True,
    # Altmann et al. test the unnormalised impurity decrease; normalised shares would
    # pass the informative features' share to the noise features under the null.
    altmann=unnormalised_mdi))
register(Measure(
    "gain", "native_importance",
    "the library's own split-gain importance (XGBoost, LightGBM), on the training data",
    # Only a loaded XGBoost or LightGBM model has it, and a loaded model cannot be refit.
    _run_native, rows="train", applies=_records_gains, optional=True, label="split-gain",
    altmann=False,
    options={"kind": "gain"},
    # compare's "native": the library's default kind (scikit-learn's impurity, XGBoost's
    # gain, LightGBM's split count).
    api_names={"gain": {"kind": "gain"}, "native": {}}))
register(Measure(
    "friedman", "friedman_importance",
    "Friedman's relative influence sqrt(mean over trees of the squared-error "
    "improvement), on the training data (gradient boosting: gb)",
    _run_friedman, rows="train", optional=True, rank_intervals=True,
    label="Friedman's importance", abbreviation="fried"))
register(Measure(
    "permutation", "permutation_importance",
    "drop in held-out score when the feature is shuffled", _run_permutation,
    rows="held-out", needs=frozenset({"y"}), options={"n_repeats": N_REPEATS},
    centred=True, janitza=True, intervals=True, rank_intervals=True, abbreviation="perm",
    progress=True))
register(Measure(
    "drop", "drop_column_importance",
    "drop in held-out score (or cross-validated score with --cv) when the model is refit "
    "without the feature", _run_drop, rows="refit", needs=frozenset({"y", "estimator"}),
    refits="refits the model without each column", optional=True, centred=True,
    intervals=True, rank_intervals=True, progress=True, api_names={"drop_column": {}},
    # S refits of p + 1 refits each: not offered.
    altmann=False))
register(Measure(
    "conditional", "conditional_permutation_importance",
    "drop in score when the feature is shuffled only among rows alike in the features "
    "associated with it at the 5% level (Strobl et al. 2008); each tree's out-of-bag rows "
    "for a bootstrapped forest, else the held-out rows", _run_conditional, rows="held-out",
    needs=frozenset({"y"}), applies=_bagged_or_scored, optional=True, centred=True,
    janitza=True, intervals=True, rank_intervals=True, where="on the held-out or out-of-bag rows",
    abbreviation="cond", progress=True,
    options={"threshold": CONDITIONAL_THRESHOLD, "n_repeats": N_REPEATS},
    # compare's name: the function's defaults (party's threshold 0.2, one repeat).
    api_names={"conditional_permutation": {}}))
register(Measure(
    "air", "impurity_corrected",
    "actual impurity reduction: impurity decrease minus that of a shuffled shadow copy "
    "of the feature, from a model refit with the shadows on the training data (AIR)",
    _run_air, rows="refit", needs=frozenset({"y", "estimator"}),
    refits="grows a new forest with a shadow copy of each column", optional=True,
    centred=True, janitza=True, intervals=True, rank_intervals=True, label="AIR", progress=True,
    where="by refitting with a shadow copy of each feature",
    api_names={"impurity_corrected": {}}))
register(Measure(
    "oob", "oob_permutation_importance",
    "drop in each tree's out-of-bag accuracy (or rise in error) when the feature is "
    "shuffled (bagged forests: rf, et)", _run_oob, rows="oob",
    needs=frozenset({"y", "bagging"}), optional=True, centred=True, janitza=True,
    intervals=True, rank_intervals=True, zscore=True, progress=True,
    api_names={"oob_permutation": {}}))
register(Measure(
    "ufi", "unbiased_mdi",
    "impurity decrease re-measured on each tree's out-of-bag rows (bagged forests)",
    # A model that is not bagged has no out-of-bag rows: unbiased_mdi then reads the
    # rows it is given as held-out ones.
    _run_ufi, rows="oob", needs=frozenset({"y"}), applies=_ufi_rows,
    optional=True, intervals=True, rank_intervals=True, label="UFI",
    # compare's name: a model that is not bagged is measured on X_test.
    api_names={"unbiased_mdi": {"held_out_rows": True}}))
register(Measure(
    "shap", "tree_shap",
    "mean |SHAP value| on the held-out rows: the feature's average share of each "
    "prediction (path-dependent TreeSHAP, as the shap package computes it)",
    _run_shap, rows="held-out", intervals=True, rank_intervals=True, label="mean |SHAP|",
    progress=True,
    api_names={"tree_shap": {}},
    # |SHAP| is never negative, so Janitza's mirrored null does not apply; Altmann's
    # refits on permuted labels would work but cost S forests: not offered.
    altmann=False))
register(Measure(
    "mdi_plus", "mdi_plus",
    "MDI+: R^2 of each feature's part of a ridge fit on every tree's decision stumps "
    "plus the raw feature, leave-one-out on the training data (Agarwal et al. 2024)",
    _run_mdi_plus, rows="train", needs=frozenset({"y"}), centred=True, intervals=True,
    rank_intervals=True, label="MDI+", abbreviation="mdi+"))
register(Measure(
    "cpi", "cpi",
    "conditional predictive impact: rise in held-out loss when the feature is replaced "
    "by its Gaussian knockoff, with a one-sided t-test (Watson & Wright 2021)",
    _run_cpi, rows="held-out", needs=frozenset({"y"}), applies=_held_out, optional=True,
    centred=True, intervals=True, rank_intervals=True, label="CPI",
    # CPI carries its own p-values (the t-test over rows); Altmann's refits add nothing.
    altmann=False))
register(Measure(
    "sage", "sage",
    "SAGE: the feature's Shapley share of the held-out loss the model saves, features "
    "left out drawn from a background sample (permutation sampling until the standard "
    "error is 2.5% of the values' range; Covert et al. 2020)",
    _run_sage, rows="held-out", needs=frozenset({"y"}), centred=True, intervals=True,
    rank_intervals=True, label="SAGE",
    # Each refit would repeat the sampling: not offered.
    altmann=False))
