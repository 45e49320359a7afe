"""The importance measures the CLI can run: one registry entry each.

Adding a measure to the command line is one :func:`_register` call below: its name, the
``sapwood.importance`` function it needs, one line saying what it measures, which rows
it reads and a ``run(model, inputs)`` that returns an ``ImportanceResult``. Everything
else (``--methods``, ``--help``, the tables, ``--json``, the report, p-values, rank
agreement) reads the registry.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["DEFAULT_MAX_ROWS", "DEFAULT_METHODS", "DEMO_METHODS", "MEASURES", "MIN_SHAP_ROWS",
           "SHAP_LEAF_ROWS", "Inputs", "Measure", "PVALUE_METHODS", "compute", "is_available",
           "methods_help", "parse_methods"]

N_REPEATS = 5
DEFAULT_METHODS = ("mdi", "permutation")
# The demo shows every measure that applies to the forest it fits, side by side.
DEMO_METHODS = ("mdi", "permutation", "oob", "ufi", "conditional", "air", "drop", "shap")
PVALUE_METHODS = ("janitza", "altmann")
DEFAULT_N_PERMUTATIONS = 99
# Path-dependent TreeSHAP walks every node of every tree for each row: measured here
# 160-350 ns per leaf and row on 2 cores, so a forest grown in full on 37,500
# regression rows (2.4 million leaves) costs 0.4-0.8 s a row. By default ("auto") the
# CLI explains a random sample of the held-out rows: at most DEFAULT_MAX_ROWS, and no
# more than SHAP_LEAF_ROWS / (the model's leaves), about 20 s, but at least
# MIN_SHAP_ROWS. The mean |SHAP| is then an estimate, and its 95% intervals (over the
# sampled rows) say how good. The count depends on the model only, never on the clock.
DEFAULT_MAX_ROWS = 1000
SHAP_LEAF_ROWS = 60_000_000
MIN_SHAP_ROWS = 20
# Condition on a feature only when associated at the 5% level (1 - p > 0.95), as
# permimp does (Debeer & Strobl 2020, doi:10.1186/s12859-020-03622-2). party's 0.2
# conditions on most independent features too, and on the fully grown trees the CLI
# fits their cuts leave cells of one row: every importance collapses to about zero.
CONDITIONAL_THRESHOLD = 0.95


@dataclass(frozen=True)
class Inputs:
    """What a measure may read besides the fitted model.

    ``estimator`` is an unfitted copy of the model (None for a loaded model file), for
    measures that refit. ``X_test``/``y_test`` are the held-out rows, unless
    ``held_out`` is False (a table too small to split: then they are the training
    rows). ``cv``: folds for refitting measures instead of the held-out rows.
    ``max_rows``: per-row measures (SHAP) explain a random sample of at most this many
    of the held-out rows (None: all of them; "auto": see :data:`SHAP_LEAF_ROWS`).
    """

    X_train: object
    y_train: object
    X_test: object
    y_test: object
    random_state: int
    estimator: object = None
    cv: int | None = None
    held_out: bool = True
    max_rows: int | str | None = "auto"
    progress: bool = False

    def with_training(self, X, y) -> Inputs:
        return dataclasses.replace(self, X_train=X, y_train=y)


@dataclass(frozen=True)
class Measure:
    """One importance measure as the CLI runs it.

    rows : "train" (computed from the fit on the training rows: impurity, gain),
        "held-out" (scores the model on rows it has not seen), "oob" (each tree's
        out-of-bag rows) or "refit" (refits the model without each feature).
    optional : applies to some models only; where it raises ValueError it is skipped
        with a note instead of failing the run.
    janitza : importances of irrelevant features scatter symmetrically around zero, so
        Janitza's p-values apply.
    altmann : how ``altmann_pvalues`` recomputes the measure on each refit: True for
        ``run`` itself, a name of altmann_pvalues' own measures, or False (not offered).
    where : how the progress line says where the measure looks, when ``rows`` does
        not say it well.
    abbreviation : the column header in narrow tables, when the name is long.
    progress : ``run`` passes ``inputs.progress`` on, so the measure draws a bar with
        its steps and the time left (the CLI then draws none of its own).
    """

    name: str
    function: str
    description: str
    run: Callable
    rows: str
    optional: bool = False
    janitza: bool = False
    altmann: bool | str = True
    label: str = ""
    where: str = ""
    abbreviation: str = ""
    progress: bool = False

    @property
    def title(self) -> str:
        return self.label or self.name

    @property
    def short(self) -> str:
        """A column header for narrow tables."""
        return self.abbreviation or self.name


MEASURES: dict = {}


def _register(measure: Measure):
    MEASURES[measure.name] = measure


def _mdi(model, inputs):
    from sapwood.importance import mdi

    return mdi(model, feature_names=list(inputs.X_test.columns))


def _gain(model, inputs):
    from sapwood.importance import native_importance

    return native_importance(model, "gain", feature_names=list(inputs.X_test.columns))


def _friedman(model, inputs):
    from sapwood.importance import friedman_importance

    return friedman_importance(model, feature_names=list(inputs.X_test.columns))


def _permutation(model, inputs):
    from sapwood.importance import permutation_importance

    return permutation_importance(model, inputs.X_test, inputs.y_test, n_repeats=N_REPEATS,
                                  random_state=inputs.random_state, progress=inputs.progress)


def _oob(model, inputs):
    from sapwood.importance import oob_permutation_importance

    return oob_permutation_importance(model, inputs.X_train, inputs.y_train,
                                      random_state=inputs.random_state,
                                      progress=inputs.progress)


def _ufi(model, inputs):
    from sapwood.importance import unbiased_mdi

    return unbiased_mdi(model, inputs.X_train, inputs.y_train)


def _drop(model, inputs):
    from sapwood.importance import drop_column_importance

    if inputs.estimator is None:
        raise ValueError("drop refits the model without each column, so it needs a model "
                         "sapwood trains (--model tree|rf|et|gb), not a loaded model file")
    if inputs.cv is not None:
        return drop_column_importance(inputs.estimator, inputs.X_train, inputs.y_train,
                                      cv=inputs.cv, progress=inputs.progress)
    return drop_column_importance(inputs.estimator, inputs.X_train, inputs.y_train,
                                  inputs.X_test, inputs.y_test, progress=inputs.progress)


_register(Measure(
    "mdi", "mdi", "mean decrease in impurity, on the training data", _mdi, rows="train",
    label="MDI",
    # Altmann et al. test the unnormalised impurity decrease; normalised shares would
    # pass the informative features' share to the noise features under the null.
    altmann="mdi"))
_register(Measure(
    "gain", "native_importance",
    "the library's own split-gain importance (XGBoost, LightGBM), on the training data",
    # Only a loaded XGBoost or LightGBM model has it, and a loaded model cannot be refit.
    _gain, rows="train", optional=True, label="split gain", altmann=False))
_register(Measure(
    "friedman", "friedman_importance",
    "Friedman's relative influence sqrt(mean over trees of the squared-error "
    "improvement), on the training data (gradient boosting: gb)",
    _friedman, rows="train", optional=True, label="Friedman's importance",
    abbreviation="fried"))
_register(Measure(
    "permutation", "permutation_importance",
    "drop in held-out score when the feature is shuffled", _permutation, rows="held-out",
    janitza=True, abbreviation="perm", progress=True))
_register(Measure(
    "drop", "drop_column_importance",
    "drop in held-out score (or cross-validated score with --cv) when the model is refit "
    "without the feature", _drop, rows="refit", optional=True, progress=True,
    # S refits of p + 1 refits each: not offered.
    altmann=False))
def _conditional(model, inputs):
    from sapwood.importance import conditional_permutation_importance

    # A bootstrapped forest is evaluated on each tree's out-of-bag rows of its training
    # data; any other model on the held-out rows.
    if getattr(model, "bootstrap", False):
        X, y = inputs.X_train, inputs.y_train
    else:
        X, y = inputs.X_test, inputs.y_test
    return conditional_permutation_importance(model, X, y, threshold=CONDITIONAL_THRESHOLD,
                                              n_repeats=N_REPEATS,
                                              random_state=inputs.random_state,
                                              progress=inputs.progress)


def _air(model, inputs):
    from sapwood.importance import impurity_corrected

    if inputs.estimator is None:
        raise ValueError("air grows a new forest with a shadow copy of each column, so it "
                         "needs a model sapwood trains (--model tree|rf|et|gb), not a loaded "
                         "model file")
    return impurity_corrected(inputs.estimator, inputs.X_train, inputs.y_train,
                              random_state=inputs.random_state, progress=inputs.progress)


_register(Measure(
    "conditional", "conditional_permutation_importance",
    "drop in score when the feature is shuffled only among rows alike in the features "
    "associated with it at the 5% level (Strobl et al. 2008); each tree's out-of-bag rows "
    "for a bootstrapped forest, else the held-out rows", _conditional, rows="held-out",
    optional=True, janitza=True, where="on the held-out or out-of-bag rows",
    abbreviation="cond", progress=True))
_register(Measure(
    "air", "impurity_corrected",
    "actual impurity reduction: impurity decrease minus that of a shuffled shadow copy "
    "of the feature, from a model refit with the shadows on the training data (AIR)",
    _air, rows="refit", optional=True, janitza=True, label="AIR", progress=True,
    where="by refitting with a shadow copy of each feature"))
_register(Measure(
    "oob", "oob_permutation_importance",
    "drop in each tree's out-of-bag accuracy (or rise in error) when the feature is "
    "shuffled (bagged forests: rf, et)", _oob, rows="oob", optional=True, janitza=True,
    progress=True))
_register(Measure(
    "ufi", "unbiased_mdi",
    "impurity decrease re-measured on each tree's out-of-bag rows (bagged forests)",
    _ufi, rows="oob", optional=True, label="UFI"))


def _shap(model, inputs):
    from sapwood.adapters import as_ensemble
    from sapwood.importance import tree_shap

    X = inputs.X_test
    n_available = len(X)
    limit = inputs.max_rows
    if limit == "auto":
        leaves = sum(int((tree.children_left < 0).sum())
                     for tree in as_ensemble(model).trees)
        limit = min(DEFAULT_MAX_ROWS, max(MIN_SHAP_ROWS, SHAP_LEAF_ROWS // max(leaves, 1)))
    if limit is not None and n_available > limit:
        X = X.sample(n=limit, random_state=inputs.random_state)
    result = tree_shap(model, X, progress=inputs.progress)
    result.params.update(n_rows=len(X), n_rows_available=n_available)
    return result


_register(Measure(
    "shap", "tree_shap",
    "mean |SHAP value| on the held-out rows: the feature's average share of each "
    "prediction (path-dependent TreeSHAP, as the shap package computes it)",
    _shap, rows="held-out", label="mean |SHAP|", progress=True,
    # |SHAP| is never negative, so Janitza's mirrored null does not apply; Altmann's
    # refits on permuted labels would work but cost S forests: not offered.
    altmann=False))


def is_available(name: str) -> bool:
    from sapwood import importance

    return hasattr(importance, MEASURES[name].function)


def parse_methods(text: str) -> list:
    """``"mdi,permutation"`` -> list of known names; unknown ones are bad input."""
    from ._data import InputError

    names = [part.strip().lower() for part in text.split(",") if part.strip()]
    if not names:
        raise InputError(f"--methods {text!r}: no measure given; choose from: "
                         + ", ".join(MEASURES))
    unknown = [name for name in names if name not in MEASURES]
    if unknown:
        raise InputError(f"--methods: unknown measure {unknown[0]!r}; choose from: "
                         + ", ".join(MEASURES))
    return list(dict.fromkeys(names))


def compute(name, model, inputs: Inputs):
    """Run measure ``name`` on a fitted ``model``."""
    return MEASURES[name].run(model, inputs)


def where(name: str) -> str:
    """Where measure ``name`` looks, for progress lines: "on the held-out rows"."""
    if MEASURES[name].where:
        return MEASURES[name].where
    return {"train": "from the fitted trees", "held-out": "on the held-out rows",
            "oob": "on the out-of-bag rows", "refit": "by refitting without each feature"
            }[MEASURES[name].rows]


def methods_help(default_methods=DEFAULT_METHODS) -> str:
    """The measures, one paragraph each, for ``explain --help`` and ``demo --help``."""
    import textwrap

    lines = ["measures (--methods):"]
    for measure in MEASURES.values():
        lines += textwrap.wrap(f"{measure.name}: {measure.description}", width=86,
                               initial_indent="  ", subsequent_indent="      ")
    janitza = ", ".join(m.name for m in MEASURES.values() if m.janitza)
    altmann = ", ".join(m.name for m in MEASURES.values() if m.altmann)
    lines += ["", "p-values (--pvalues):"]
    lines += textwrap.wrap(
        f"janitza: Janitza et al. (2018), from the negative and zero importances of the "
        f"same result; no refits; for measures whose importances of irrelevant features "
        f"scatter around zero ({janitza})", width=86, initial_indent="  ",
        subsequent_indent="      ")
    lines += textwrap.wrap(
        f"altmann: Altmann et al. (2010), refits the model on S permutations of the "
        f"target (--n-permutations, default {DEFAULT_N_PERMUTATIONS}) and recomputes the "
        f"measure each time; slow; for a model trained here ({altmann}; mdi is tested "
        "before normalisation)", width=86, initial_indent="  ", subsequent_indent="      ")
    optional = ", ".join(m.name for m in MEASURES.values() if m.optional)
    lines += [""] + textwrap.wrap(
        f"Default measures: {','.join(default_methods)}. Measures that apply to some models "
        f"only ({optional}) are skipped with a note where they do not.", width=88)
    return "\n".join(lines)
