""":func:`explain`: split, fit (or read) a model, score it, run the measures, conclude.

The one path from a table to a :class:`~sapwood.report.Report`, for a notebook and for
the ``sapwood`` command alike (the command parses its arguments, reads the file, calls
:func:`explain` and renders what it returns).
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import time
import warnings
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import _splits
from .._errors import InputError
from .._format import category_codes
from .._progress import counted
from ..importance._engine._dask import is_dask_collection
from . import _agreement, _measures, _verdict, _wrapped
from ._baseline import baseline
from ._categoricals import categorical_trees, judged_as_fitted
from ._columns import match_columns
from ._compiled import compiled_first
from ._cost import Timing, long_wait
from ._data import Prepared, check_enough_rows, did_you_mean, prepare_xy
from ._models import (
    MODEL_NAMES,
    PROBABILITY_SCORES,
    KeptPredictions,
    LoadedModel,
    build_model,
    default_model,
    default_scoring,
    describe_model,
    large_table_note,
    load_model,
    score_model,
)
from ._ranking import (
    Ranker,
    as_ranker,
    query_labels,
    ranking_baseline,
    ranking_objective,
    split_queries,
)
from ._report import Report
from ._steps import NoStep, Steps
from ._survival import (
    SURVIVAL_SCORES,
    SurvivalScorer,
    check_survival_scoring,
    is_survival_form,
    is_survival_model,
    prepare_survival,
    structured,
    survival_columns,
    survival_frame,
)

__all__ = ["Options", "align_to_model", "explain", "run_pipeline", "split_rows",
           ]

DEFAULT_TEST_SIZE = 0.25
# ranger's importance_pvalues(method = "janitza") warns below this many negative values.
JANITZA_MIN_NEGATIVE = 100
# From this many features on, the rank intervals get a progress bar of their own.
MANY_FEATURES = 100


@dataclass(frozen=True)
class Options:
    """How :func:`run_pipeline` runs the measures (the settings of :func:`explain`)."""

    methods: tuple = _measures.DEFAULT_METHODS
    test_size: float = DEFAULT_TEST_SIZE
    seed: int = 0
    pvalues: str | None = None
    n_permutations: int = _measures.DEFAULT_N_PERMUTATIONS
    cv: int | None = None
    top_k: int | None = None
    max_rows: int | str | None = "auto"
    n_jobs: int | None = None
    scoring: str | None = None
    plan: _splits.RowPlan | None = None  # groups and time order of the rows (_splits)
    refits: int = 0  # extra seeds whose refits say how stable each status is


def explain(X, y, *, model=None, methods="auto", X_train=None, y_train=None, test_size=None,
            scoring=None, random_state=0, n_jobs=-1, progress=False, task="auto",
            pvalues=None, n_permutations=None, cv=None, top_k=None, max_rows="auto",
            rows=(), select=None, fdr=None, effects=False, source=None, groups=None,
            order_by=None, refits=0, adjust="holm",
            event_value=None) -> Report:
    """Which features a tree model relies on, concluded on held-out rows.

    The library's form of ``sapwood explain``: fit (or read) the model, score it on rows
    it was not trained on, run the importance measures there, compare them, check for
    identifiers, leakage and correlated groups, and give a verdict resting on intervals
    over new rows (docs/measures.md, "The verdict").

    Parameters
    ----------
    X : DataFrame or 2-D array of features. Text and categorical columns are encoded as
        ordinal codes (categories in sorted order, or a categorical's own order),
        booleans as 0/1, dates as seconds since 1970; missing values stay missing; a
        text column of numbers, but for a few cells that say "missing" (``?``, ``n/a``,
        ``-``, ...), is read as numbers, with a note (docs/getting-started.md). Or a
        Dask DataFrame of numbers (docs/getting-started.md, "Tables larger than memory").
    y : the target: a Series or 1-D array, or the name of a column of X (then the
        features are X's other columns); for a Dask X, a Dask Series or X's column name.
        A survival target (task ``"survival"``): scikit-survival's structured array
        (``Surv.from_arrays(event, time)``), a pair of X's column names, time first
        (``("time", "status")``), or a DataFrame of two columns, time then event
        (docs/getting-started.md, "Survival targets").
    model : None or ``"rf"``, ``"et"``, ``"gb"``, ``"tree"``: train that sapwood model (None:
        a random forest; for a survival target its survival learners, ``RandomSurvivalForest``
        and so on, without ``"gb"``) on a split of X, y; a forest on more than 100,000 training rows
        grows each tree on 100,000 of them (``max_samples``, shown in the Model line;
        docs/getting-started.md, "Large tables"). An unfitted estimator: fitted on the
        split, as it is. A scikit-learn ``Pipeline`` ending in a tree model (fitted or
        not) is explained in its input columns, fed the table's labels (docs/measures.md,
        section 'Pipelines in their input columns').
        A fitted model (scikit-learn, XGBoost, LightGBM, CatBoost, sapwood, or a
        :class:`~sapwood.TreeEnsemble` from :func:`sapwood.load` / :func:`sapwood.from_model`):
        judged on X, y as held-out rows. One fitted on pandas ``category`` columns
        (LightGBM, XGBoost, HistGradientBoosting, CatBoost) predicts from the frame as
        it was fitted while the measures read the codes; a CatBoost model with CTRs is
        judged through its predictions (docs/getting-started.md, "Other libraries'
        models").
    methods : ``"auto"`` (mdi, permutation), or measure names (a list, or one string
        ``"mdi,permutation"``) from :data:`sapwood.importance.MEASURES`; the long names
        (``tree_shap``, ``drop_column``, ``oob_permutation``, ...) are aliases.
    X_train, y_train : the rows a fitted model was trained on, for the measures that read
        them (those skip with a reason in :attr:`Report.notes` when not given); with a
        model to train, it is trained on them and X, y are the held-out rows.
    test_size : the share of rows held out when the model is trained here (default
        0.25; 0: none, the model is scored and permuted on its training rows). For a
        fitted model, None (default) holds out all of X, y; a share holds out that share
        and reads the rest as its training rows (a table that may hold them).
    scoring : a scikit-learn scorer name (``"roc_auc"``, ``"neg_log_loss"``,
        ``"accuracy"``, ``"balanced_accuracy"``, ``"r2"``, ``"neg_mean_absolute_error"``,
        ...) for the model's score, held-out permutation, drop-column and the baseline.
        None: the Brier score (``"neg_brier_score"``) for a classifier, R² for a
        regressor (docs/measures.md, "The score": a proper score that a constant model
        cannot win and that sees a rare class, where accuracy hides it; the held-out
        accuracy is shown beside it). A survival target: ``"concordance_index"``
        (Harrell's, the default), ``"concordance_index_ipcw"`` (Uno's) or
        ``"neg_integrated_brier_score"`` (docs/measures.md, section 'Survival scores'). The
        verdict's intervals over new rows need a score that is a mean over rows, binary
        ROC AUC or a concordance index (accuracy, Brier score, log loss, R², squared or
        absolute error, roc_auc, the survival scores); with another, it says it cannot
        decide.
    random_state : int, seeds the split, the model and the measures.
    n_jobs : threads for the fit and every measure: -1 (default) every core, as the
        command line; 1 one thread; None joblib's setting (one thread unless a
        ``joblib.parallel_config`` says otherwise).
    progress : True shows a bar per step on stderr (a rich Console: there).
    task : ``"auto"``, ``"classification"``, ``"regression"`` or ``"survival"`` (auto:
        survival for a survival target, classification for a non-numeric target or one
        with at most 20 distinct integer values).
    pvalues : None, ``"janitza"`` or ``"altmann"``; ``n_permutations`` for altmann.
    cv : K: cross-fitting. K models, each trained without one fold and judged on it,
        so that every row is held out once (by groups: GroupKFold; in time order:
        forward-chaining folds, every row after the first block); every measure is
        computed per fold and pooled, and its intervals include the refits
        (docs/measures.md, "Cross-fitting"). Drop-column importance then refits per
        fold, its draws the K folds. Needs a model trained here; ``test_size`` is not
        used (the folds are the held-out rows).
    groups : None, a column name of X (then not a feature) or one label per row: rows
        that belong together (a person, a firm, a patient). The split, the folds, the
        intervals over rows and a sapwood forest's bootstraps keep each group whole
        (docs/measures.md, "Splits").
    order_by : None, a column name of X (then not a feature) or one value per row:
        dates, datetimes or numbers. The model trains on the earliest rows and is
        judged on the latest ``test_size`` of them; cross-fitting chains forward.
    refits : without ``cv``, refit on this many other seeds (a new split and model
        seed each) and say how often each feature's status holds (0: not done; with
        ``cv`` the folds say it).
    adjust : the multiplicity adjustment of the p-values shown: ``"holm"`` (default;
        the family-wise error rate), ``"bh"`` (Benjamini-Hochberg, the false
        discovery rate) or None (raw).
    top_k : how many top features the rank agreement compares (default 5).
    max_rows : per-row measures (shap) explain at most this many held-out rows
        (``"auto"``, an int, or None for all).
    rows : positions of X (0 = its first row) whose predictions to explain with TreeSHAP.
    select : None or ``"knockoffs"`` (model-X knockoff selection at ``fdr``, default 0.1).
    effects : also compute how the top features matter (partial dependence with ICE, ALE)
        and their strongest interactions (Friedman's H, mean absolute SHAP interaction
        value), on the held-out rows (:attr:`Report.effects`).
    source : how the report names the data (a file name), if at all.
    groups : each row's group, one label per row of X or the name of a column of X (then
        not a feature). A fitted ranker (``XGBRanker``, ``LGBMRanker``, an XGBoost or
        LightGBM model with a ranking objective) needs them as its queries: it is scored
        by NDCG@10 within queries (docs/measures.md, "Ranking score"), permuted within
        queries, and a split keeps each query's rows together.
    event_value : for a survival target whose event column holds two values other than
        1/0 or true/false, the one that marks an event (``"dead"``).

    Returns
    -------
    :class:`~sapwood.report.Report`

    Raises
    ------
    :class:`~sapwood._errors.InputError` (a ``ValueError``) for input it cannot use, with
    one line naming the problem.
    """
    from joblib import parallel_config

    _check_scoring(scoring)
    steps = Steps(progress)
    names = _methods(methods)
    if pvalues not in (None, "janitza", "altmann"):
        raise InputError(f"pvalues must be None, 'janitza' or 'altmann'; got {pvalues!r}")
    if n_permutations is not None and pvalues != "altmann":
        raise InputError(f"n_permutations={n_permutations}: only pvalues='altmann' permutes "
                         f"the target; got pvalues={pvalues!r}")
    if adjust not in (None, "holm", "bh"):
        raise InputError(f"adjust must be 'holm', 'bh' or None; got {adjust!r}")
    if isinstance(refits, bool) or not isinstance(refits, int) or refits < 0:
        raise InputError(f"refits must be a whole number of at least 0; got {refits!r}")
    if select not in (None, "knockoffs"):
        raise InputError(f"select must be None or 'knockoffs'; got {select!r}")
    if fdr is not None and select is None:
        raise InputError(f"fdr={fdr:g}: only select='knockoffs' has a false discovery rate")
    fitted, model = _resolved_model(model)
    if select is not None and fitted:
        raise InputError(f"select={select!r} refits the model with a knockoff copy of each "
                         "feature, so it needs a model trained here (a name or an unfitted "
                         "estimator), not a fitted one")
    if select is not None and type(model).__name__ == "Pipeline":
        raise InputError(f"select={select!r} refits the model with a knockoff copy of each "
                         "feature beside it, which a Pipeline's column lists would not read")
    if (X_train is None) != (y_train is None):
        raise InputError("X_train and y_train go together: give both or neither")
    if test_size is not None and not (isinstance(test_size, int | float)
                                      and 0 <= test_size < 1):
        raise InputError(f"test_size must be a number in [0, 1); got {test_size!r}")
    if test_size is not None and X_train is not None and test_size > 0:
        raise InputError(f"test_size={test_size:g} with X_train given: the rows are split "
                         "already (X, y are the held-out rows); leave test_size=None")
    if fitted and task not in ("auto", _task(model)):
        raise InputError(f"task={task!r}: the model is a {_task(model)} model")
    if cv is not None and fitted:
        raise InputError(f"cv={cv} refits the model per fold, so it needs a model trained "
                         "here (a name or an unfitted estimator), not a fitted one")
    if cv is not None and (is_dask_collection(X) or is_dask_collection(y)):
        raise InputError(f"cv={cv} refits the model per fold on a table in memory; a Dask "
                         "table is split once (leave cv out)")
    if isinstance(y, str) and isinstance(X, pd.DataFrame):
        X, y = _target_column(X, y)
    elif isinstance(y, tuple) and isinstance(X, pd.DataFrame) and is_survival_form(y):
        X, y = survival_columns(X, y)
    if event_value is not None and not (task == "survival" or is_survival_form(y)):
        raise InputError(f"event_value={event_value!r} names the event of a survival target "
                         "(y: a time and an event); this target is not one")
    queries = training_queries = None
    if ranking_objective(model) is not None:
        # A ranker's groups are its queries, which its own split keeps together.
        X, X_train, queries, training_queries = query_labels(X, X_train, groups)
        groups = None
    plan = None
    if groups is not None or order_by is not None:
        if X_train is not None or is_dask_collection(X):
            raise InputError("groups and order_by split the rows of one table in memory; "
                             "with X_train given (or a Dask table) leave them out")
        X, plan = _splits.plan_from(_frame(X, "X"), groups, order_by)
    held_back = None  # a Dask table's held-out rows, scored block by block after the run
    if (is_dask_collection(X) or is_dask_collection(y)) and (
            task == "survival" or is_survival_form(y)):
        raise InputError("a survival target is not offered for a Dask table: read it into "
                         "memory (its .compute())")
    if is_dask_collection(X) or is_dask_collection(y):
        from ._dask import in_memory  # Dask is optional: imported for Dask input only

        held_back, X, y, X_train, y_train, scoring = in_memory(
            X, y, X_train, y_train, model=model, fitted=fitted, test_size=test_size,
            scoring=scoring, task=task, random_state=random_state, rows=rows, steps=steps)
    rows = _checked_rows(rows, len(X))
    data, n_train = _prepared(X, y, X_train, y_train, _task(model) if fitted or
                              ranking_objective(model) else task,
                              event_value)
    if not getattr(model, "anomaly", False):
        _check_scoring_task(scoring, data)
    # Where each row asked for is in the data: rows whose target is missing were left out.
    places = [(_kept_place(data.kept, n_train + row, row), row) for row in rows]
    if data.kept is not None:
        n_train = int(np.searchsorted(data.kept, n_train))
        if plan is not None:
            plan = plan.subset(data.kept)
    if fitted:
        model, data = align_to_model(model, data)
        held_out = test_size is None or test_size > 0
        share = 0.0 if test_size is None else test_size
        model, data = as_ranker(model, data, queries, n_train, scoring,
                                training_labels=training_queries)
        if isinstance(model, Ranker) and share > 0:  # a query's rows on one side
            data, n_train, places = split_queries(data, model, share, random_state, places)
    else:
        held_out = not (test_size == 0)
        share = DEFAULT_TEST_SIZE if test_size is None else test_size
        if model is None:
            model = default_model(data.task)
        if isinstance(model, str):
            # On a large table a forest draws fewer rows per tree than it has (notes say).
            fit_rows = _training_rows(len(data.y), n_train, held_out, share)
            note = large_table_note(model, fit_rows)
            model = build_model(model, data.task, random_state=random_state,
                                n_train=fit_rows)
            if note is not None:
                data = dataclasses.replace(data, notes=[*data.notes, note])
        else:
            from sklearn.base import clone

            model = clone(model)
            model, data = as_ranker(model, data, queries, n_train, scoring, fitted=False,
                                    training_labels=training_queries)
            if isinstance(model, Ranker) and held_out and not n_train:
                data, n_train, places = split_queries(data, model, share, random_state,
                                                      places)
    if type(model).__name__ == "Pipeline":
        from ._pipelines import for_explain

        model, data = for_explain(model, data, fitted)
    options = Options(methods=tuple(names), test_size=share, seed=random_state,
                      pvalues=pvalues, top_k=top_k, max_rows=max_rows, cv=cv, n_jobs=n_jobs,
                      scoring=scoring, plan=plan, refits=refits,
                      n_permutations=n_permutations or _measures.DEFAULT_N_PERMUTATIONS)
    with parallel_config(n_jobs=n_jobs) if n_jobs is not None else nullcontext():
        if cv is not None:
            from ._crossfit import cross_fit

            report = cross_fit(data, model, options, run=run_pipeline, steps=steps,
                               source=source)
        else:
            report = run_pipeline(data, model, options, steps=steps, source=source,
                                  fitted=fitted, held_out=held_out, n_train=n_train)
        from ._stability import said_out_loud

        said_out_loud(report, options, steps=steps, adjust=adjust,
                      fitted=fitted, held_out=held_out, n_train=n_train)
        if held_back is not None:
            held_back.complete(report, steps)
        # A wrapper whose trees do not give its predictions has no rows or effects of
        # one tree ensemble to show: said in a note.
        whole_only = _wrapped.whole_only(report.model) if rows or effects else None
        if whole_only is not None:
            report.notes.extend(f"{what} not computed: {whole_only}" for what, asked in (
                ("the rows' TreeSHAP explanations", rows),
                ("effects and interactions", effects)) if asked)
            rows = effects = False
        if data.task == "survival":
            from ._survival_curves import survival_summary

            with steps.step("Survival curves of the top features"
                            + (" and their importance over time" if effects else "")):
                report.survival = survival_summary(report, importance=effects)
        if rows:
            from ._rows import explain_rows

            with steps.step(f"Explaining {len(rows)} row(s) with TreeSHAP"):
                report.rows = explain_rows(report, places)
        if effects:
            from ._effects import effects as compute_effects

            with steps.step("Computing the top features' effects and interactions"):
                try:
                    report.effects = compute_effects(report)
                except TypeError as error:  # trees only their library reads (CTRs)
                    raise InputError(_first_line(error)) from None
        if select is not None:
            from ._selection import DEFAULT_FDR
            from ._selection import select as knockoffs

            if n_train:
                X_fit, y_fit = data.X.iloc[:n_train], data.y.iloc[:n_train]
            elif held_out and not fitted:
                X_fit, _, y_fit, _ = split_rows(data, share, random_state, plan)
            else:
                X_fit, y_fit = data.X, data.y
            if data.task == "survival":
                y_fit = structured(y_fit)
            report.selection = knockoffs(X_fit, y_fit, model,
                                         DEFAULT_FDR if fdr is None else fdr,
                                         seed=random_state, steps=steps, notes=report.notes)
    return report


def _training_rows(n_rows: int, n_train: int, held_out: bool, share: float) -> int:
    """How many rows :func:`run_pipeline` will fit the model on: the given training
    rows, all rows, or what ``train_test_split`` leaves beside its held-out share."""
    if n_train:
        return n_train
    if not held_out:
        return n_rows
    return n_rows - math.ceil(share * n_rows)


def _methods(methods) -> list:
    """The measure names of ``methods`` (``"auto"``, ``"a,b"`` or a list; aliases read
    as the measure's name)."""
    if isinstance(methods, str):
        if methods == "auto":
            return list(_measures.DEFAULT_METHODS)
        return _measures.parse_methods(methods, option="methods")
    try:
        given = [str(name) for name in methods]
    except TypeError:
        raise InputError(f"methods must be 'auto', a measure name or a list of them; got "
                         f"{methods!r}") from None
    return _measures.parse_methods(",".join(given), option="methods")


def _resolved_model(model):
    """(fitted, model): a name or None (trained here), an unfitted estimator (trained
    here), or a fitted model of any library sapwood reads (as a :class:`LoadedModel`
    unless it is an estimator with its own ``score``)."""
    if model is None:
        return False, None
    if isinstance(model, str):
        if model not in MODEL_NAMES:
            raise InputError(f"model={model!r}: not one of {', '.join(MODEL_NAMES)}; pass "
                             "an estimator or a fitted model for anything else")
        return False, model
    if isinstance(model, LoadedModel):
        return True, model
    from .._format import TreeEnsemble

    if isinstance(model, TreeEnsemble):
        return True, load_model(model, None)
    if hasattr(model, "fit") and not _is_fitted(model):
        return False, model
    if _wrapped.unwrapped(model) is not None:
        return True, model  # read whole: its predictions, and its trees with a note
    from ..adapters import as_ensemble, is_pipeline

    if is_pipeline(model):
        from ._pipelines import check_pipeline

        try:
            return True, check_pipeline(model)
        except (TypeError, ValueError) as error:
            raise InputError(f"model: cannot read {type(model).__name__}: "
                             f"{_first_line(error)}") from None

    try:
        ensemble = as_ensemble(model)
    except (TypeError, ValueError) as error:
        if categorical_trees(model)[1] is not None:  # CatBoost CTRs: model-agnostic
            return True, model
        raise InputError(f"model: cannot read {type(model).__name__} as a tree model: "
                         f"{_first_line(error)}") from None
    if hasattr(model, "score") and hasattr(model, "predict") and (
            ensemble.task != "survival" or is_survival_model(model)):
        return True, model  # scored as its library scores it; the measures read its trees
    from ..adapters import stopped_early

    return True, load_model(ensemble, None, stopped_early(model))


def _is_fitted(model) -> bool:
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    try:
        check_is_fitted(model)
    except NotFittedError:
        return False
    except TypeError:  # not a scikit-learn estimator: a Booster and such are fitted
        return True
    return True


def _task(model) -> str:
    """A fitted model's task."""
    if isinstance(model, LoadedModel):
        return model.task
    if is_survival_model(model):
        return "survival"
    from sklearn.base import is_classifier

    return "classification" if is_classifier(model) else "regression"


def _prepared(X, y, X_train, y_train, task, event_value=None):
    """(Prepared, n_train): X_train above X when given (one encoding for both), the
    target checked and the task settled."""
    survival = task == "survival" or is_survival_form(y)
    X = _frame(X, "X")
    y = survival_frame(y, len(X)) if survival else _series(y, "y", X)
    n_train = 0
    if X_train is not None:
        X_train = _frame(X_train, "X_train")
        y_train = survival_frame(y_train, len(X_train)) if survival else _series(
            y_train, "y_train", X_train)
        if list(X_train.columns) != list(X.columns):
            raise InputError("X_train must have the columns of X, in the same order")
        n_train = len(X_train)
        X = pd.concat([X_train, X], ignore_index=True)
        y = pd.concat([y_train.set_axis(list(y.columns), axis=1) if survival
                       else y_train.rename(y.name), y], ignore_index=True)
    if survival:
        return prepare_survival(X, y, event_value), n_train
    return prepare_xy(X, y, task), n_train


def _frame(X, name) -> pd.DataFrame:
    if isinstance(X, pd.DataFrame):
        return X
    try:
        array = np.asarray(X)
    except Exception:
        raise TypeError(f"{name} must be a DataFrame or a 2-D array; got "
                        f"{type(X).__name__}") from None
    if array.ndim != 2:
        raise InputError(f"{name} must be 2-D (rows by features); got {array.ndim} "
                         "dimension(s)")
    return pd.DataFrame(array, columns=[f"x{j}" for j in range(array.shape[1])])


def _series(y, name, X) -> pd.Series:
    if isinstance(y, pd.DataFrame):
        if y.shape[1] != 1:
            raise InputError(f"{name} must be one column; got {y.shape[1]}")
        y = y.iloc[:, 0]
    if not isinstance(y, pd.Series):
        array = np.asarray(y)
        if array.ndim != 1:
            raise InputError(f"{name} must be 1-D; got shape {array.shape}")
        y = pd.Series(array, name="y")
    if len(y) != len(X):
        raise InputError(f"{name} has {len(y)} rows and its features {len(X)}")
    return y.set_axis(X.index).rename("y" if y.name is None else str(y.name))


def _check_scoring(scoring):
    """None, a scikit-learn scorer name or a survival score's."""
    if scoring is None or scoring in SURVIVAL_SCORES:
        return
    from sklearn.metrics import get_scorer_names

    if not isinstance(scoring, str) or scoring not in get_scorer_names():
        import difflib

        close = difflib.get_close_matches(str(scoring), get_scorer_names(), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise InputError(f"scoring must be None or a scikit-learn scorer name such as "
                         f"'roc_auc', 'neg_log_loss', 'r2'{hint}; got {scoring!r}")


# Scorer names (prefixes) that score numbers, not classes.
_REGRESSION_SCORERS = ("r2", "explained_variance", "max_error", "neg_max_error", "neg_mean_",
                       "neg_root_mean_", "neg_median_", "d2_absolute", "d2_pinball",
                       "d2_tweedie")


def _check_scoring_task(scoring, data):
    """A scorer of classes for a regression target, or of numbers for classes, is named
    before the fit rather than failing inside scikit-learn after it."""
    check_survival_scoring(scoring, data.task, data.target)
    if scoring is None or data.task == "survival":
        return
    numeric = scoring.startswith(_REGRESSION_SCORERS)
    if data.task == "regression" and not numeric:
        raise InputError(f"scoring {scoring!r} scores classes, and the target "
                         f"{data.target!r} is a regression target; use a regression scorer "
                         "such as 'r2' or 'neg_mean_absolute_error' (or task="
                         "'classification', --task classification, for classes)")
    if data.task == "classification" and numeric:
        raise InputError(f"scoring {scoring!r} scores numbers, and the target "
                         f"{data.target!r} holds classes; use a classification scorer such "
                         "as 'neg_brier_score', 'roc_auc' or 'accuracy'")


def _kept_place(kept, position: int, row: int) -> int:
    """Where the row given at ``position`` is in the data once the rows whose target is
    missing were left out (``kept``: the positions kept, None for all)."""
    if kept is None:
        return position
    place = int(np.searchsorted(kept, position))
    if place == len(kept) or kept[place] != position:
        raise InputError(f"row {row}: its target is missing, so it was left out")
    return place


def _checked_rows(rows, n_rows: int) -> list:
    """The distinct row positions in the order given; one outside X is bad input."""
    rows = [rows] if isinstance(rows, int | np.integer) else list(rows)
    for position in rows:
        if not 0 <= position < n_rows:
            raise InputError(f"row {position}: the data has {n_rows} rows, at positions "
                             f"0 to {n_rows - 1} (0 is the first row)")
    return list(dict.fromkeys(int(row) for row in rows))


def split_rows(data: Prepared, test_size: float, seed: int, plan=None):
    """(X_train, X_test, y_train, y_test): the split every measure of a run reads
    (:func:`sapwood._splits.holdout`: at random, by groups or in time order)."""
    train, test = _holdout(data, test_size, seed, plan)
    return data.X.iloc[train], data.X.iloc[test], data.y.iloc[train], data.y.iloc[test]


def _holdout(data: Prepared, test_size: float, seed: int, plan=None):
    # Stratified by class, or by a survival target's event: both sides then get events
    # in proportion, which a concordance needs (at 90% censoring).
    strata = data.y if data.task == "classification" else \
        data.y.iloc[:, 1] if data.task == "survival" else None
    return _splits.holdout(len(data.y), test_size, seed, plan=plan, y=strata)



def run_pipeline(data: Prepared, model, options: Options, *, steps: Steps, source: str,
                 fitted=False, held_out=True, n_train=0) -> Report:
    """Split ``data`` (its first ``n_train`` rows are the training rows when given), fit
    ``model`` on the training rows (unless it is ``fitted``), score it on the held-out
    rows and run each available measure there.

    ``held_out=False``: no rows held out; the model is fit, scored and permuted on all
    rows (a note says so)."""
    from sklearn.base import clone

    notes = list(data.notes)
    n_features = data.X.shape[1]
    top_k = _settle_top_k(options.top_k, n_features)
    train = test = None  # positions, where this run splits the rows itself
    if n_train:
        train, test = np.arange(n_train), np.arange(n_train, len(data.y))
        X_train, X_test = data.X.iloc[:n_train], data.X.iloc[n_train:]
        y_train, y_test = data.y.iloc[:n_train], data.y.iloc[n_train:]
    elif not held_out:
        X_train = X_test = data.X
        y_train = y_test = data.y
        notes.append("no rows were held out (test_size=0): the model is fit, scored and "
                     "permuted on the same rows, so the numbers describe the fit, not new rows")
    elif fitted and options.test_size == 0:
        X_train = y_train = None
        X_test, y_test = data.X, data.y
    else:
        check_enough_rows(data, options.test_size)
        train, test = _holdout(data, options.test_size, options.seed, options.plan)
        X_train, X_test = data.X.iloc[train], data.X.iloc[test]
        y_train, y_test = data.y.iloc[train], data.y.iloc[test]
    survival = data.task == "survival"
    if survival:  # scikit-survival's structured target, as the models and scores take it
        y_train, y_test = structured(y_train), structured(y_test)
    fit_seconds = bagged_by = None
    if fitted:
        _check_loaded(model, data)
        if X_train is not None and not n_train:
            notes.append(f"the model was not trained here: it is scored and permuted on the "
                         f"held-out {len(X_test)} of {len(data.y)} rows (test_size "
                         f"{options.test_size:g}, seed {options.seed}), which is only honest "
                         "if it was not trained on them")
    else:
        # A forest trained here under groups draws each tree's bootstrap by group, so
        # that its out-of-bag rows are whole groups.
        bagged_by = _splits.bootstrap_groups(model, options.plan, train)
        fit_seconds = _fit(model, X_train, y_train, steps, groups=bagged_by)
    # A wrapper (a search, a calibrated classifier, ...): scored through the model that
    # predicts as it does; each measure reads what _wrapped says.
    reading = _wrapped.reading(model)
    if reading.wrapped is not None and reading.wrapped.note:
        notes.append(reading.wrapped.note)
    model_text = describe_model(model)
    model = reading.estimator
    options = dataclasses.replace(options, scoring=options.scoring
                                  or _wrapped.default_scoring(reading, data.task)
                                  or default_scoring(model, data.task))
    # A survival score reads the training rows' censoring (Uno's, the Brier score).
    scoring = SurvivalScorer(options.scoring, y_train=y_train) if survival else \
        options.scoring
    rows = "held-out" if held_out else "training"
    label = f"Scoring on {len(X_test)} {rows} rows"
    # The held-out rows are predicted once, for the score, the accuracy, the baseline
    # and the leakage check alike; on a large table under a bar with the time left.
    kept = KeptPredictions(model, X_test, progress=steps.shown, rows=f"{rows} rows")
    with (steps.step(label) if not kept.counted else steps.line(label)), kept:
        try:
            started = time.perf_counter()
            score = score_model(model, X_test, y_test, data.task, scoring)
            timing = Timing(fit=fit_seconds, score=time.perf_counter() - started)
            # Beside a probability score, the accuracy everyone reads.
            accuracy = (score_model(model, X_test, y_test, data.task)
                        if options.scoring in PROBABILITY_SCORES else None)
        except (ValueError, TypeError) as error:
            raise InputError(f"cannot score the model on this data: "
                             f"{str(error).splitlines()[0]}") from None
    # A later first prediction runs under another step's bar: rich shows one at a time.
    kept.counted = False
    if not math.isfinite(score):
        notes.append(f"the model's {rows} score is not a finite number ({score}); the JSON "
                     "shows it as null")
    given = X_train is not None
    if not given:  # a fitted model without its training rows: only their columns
        X_train, y_train = X_test.iloc[:0], y_test[:0] if survival else y_test.iloc[:0]
    inputs = _measures.Inputs(X_train=X_train, y_train=y_train, X_test=X_test, y_test=y_test,
                              random_state=options.seed, cv=options.cv, held_out=held_out,
                              max_rows=options.max_rows, n_jobs=options.n_jobs,
                              scoring=scoring,
                              estimator=None if fitted else clone(model))
    results = _compute_all(reading, options.methods, inputs, steps, notes, fitted, timing)
    split, test_groups = _splits.of_run(options.plan, train, test, len(data.y), held_out)
    if test_groups is not None:  # intervals over rows resample whole groups
        results = {name: _splits.regroup(result, test_groups)
                   for name, result in results.items()}
        notes += [f"{name}: out-of-bag rows are drawn row by row, not by group, so a "
                  "group's other rows sit in the bag of the trees that leave one out: under "
                  "groups it overstates what the model does on new groups; read the "
                  "held-out measures" for name in results
                  if (_measures.MEASURES[name].rows == "oob" or (
                      _measures.MEASURES[name].rows == "oob-or-held-out"
                      and getattr(model, "bootstrap", False))) and bagged_by is None]
    if options.pvalues:
        results = {name: _with_pvalues(name, result, options, inputs, steps, notes)
                   for name, result in results.items()}
    if n_features >= MANY_FEATURES:
        # Their pairs grow as the square of the features: seconds on a wide table.
        with steps.counted("Computing each measure's rank intervals", len(results)) as bar:
            for result in counted(results.values(), bar):
                result.rank_intervals()
    pairs = _agreement.agreement(results, top_k) if n_features > 1 else []
    report = Report(source=source, data=data, model=model, model_text=model_text,
                    n_train=0 if fitted else len(X_train), n_test=len(X_test),
                    score_name=options.scoring or getattr(model, "score_name", None)
                    or ("accuracy" if data.task == "classification" else "R²"),
                    score=score, accuracy=accuracy, results=results, notes=notes,
                    fitted_here=not fitted, agreement=pairs, top_k=top_k,
                    pvalues=options.pvalues, held_out=held_out, seed=options.seed,
                    held_out_index=X_test.index if held_out else None,
                    n_permutations=options.n_permutations if options.pvalues == "altmann"
                    else None, split=split)
    train_score = None
    if not fitted and held_out:
        # Compared with the held-out score the report shows first (the accuracy beside
        # a probability score) to see overfitting; made only if a warning reads it.
        train_score = _verdict.TrainingScore(model, X_train, y_train, data.task,
                                             None if accuracy is not None
                                             else options.scoring, seed=options.seed)
    with kept:
        report.baseline = None if not held_out else ranking_baseline(
            model, X_test, y_test) if isinstance(model, Ranker) else baseline(
            model, y_train if given else None, X_test, y_test, data.task,
            report.score_name, score, scoring, groups=test_groups)
    with steps.counted("Checking for identifiers, leakage and correlated features",
                       _verdict.CHECK_UNITS + X_test.shape[1]) as bar:
        report.warnings = _verdict.find_warnings(
            report, X_train=X_train if given else X_test,
            y_train=y_train if given else y_test, X_test=X_test, y_test=y_test,
            encodings=data.encodings, model=model, train_score=train_score, split=given,
            predictions=kept, steps=bar)
    report.verdict = _verdict.verdict(report, report.warnings)
    return report


def _fit(model, X, y, steps: Steps, groups=None):
    """Fit ``model``: tree by tree with the time left where the learner counts its trees
    (forests, boosting: ``fit(..., progress=True)``), else under one pulsing bar.
    Returns the seconds it took."""
    label = f"Fitting {describe_model(model)} on {len(X)} rows"
    counts_trees = "progress" in inspect.signature(model.fit).parameters
    started = time.perf_counter()
    by = {} if groups is None else {"groups": groups}
    try:
        if counts_trees and steps.shown:
            with steps.line(label):
                model.fit(X, y, progress=True, **by)
        else:
            with steps.step(label):
                model.fit(X, y, **by)
    except ValueError as error:
        raise InputError(f"cannot fit the model: {str(error).splitlines()[0]}") from None
    return time.perf_counter() - started


def _settle_top_k(top_k, n_features: int) -> int:
    if top_k is None:
        return _agreement.default_top_k(n_features)
    if top_k >= n_features:
        raise InputError(f"--top-k {top_k}: must be less than the number of features "
                         f"({n_features}; the top {n_features} of {n_features} always "
                         "overlap)")
    return top_k


def _target_column(X, name: str):
    """``explain(table, "y")``: the features and the target column of one table."""
    columns = [str(column) for column in X.columns]
    if name not in columns:
        raise InputError(f"y={name!r}: not a column of X{did_you_mean(name, columns)}; y is "
                         "the target: a Series, an array, or the name of a column of X")
    position = columns.index(name)
    return X.drop(columns=X.columns[position]), X.iloc[:, position]


def _compute_all(reading, methods, inputs, steps, notes, fitted, timing=None) -> dict:
    """The result of each measure of ``methods`` that applies, and a note (added to
    ``notes``) for each that does not, in the order of ``methods``. ``reading`` gives
    each measure its model (:class:`~sapwood.report._wrapped.Reading`: the model
    itself, or for a wrapper its predictions or the trees it holds).

    Two steps: the choice (which measures apply here, a fallback in the place of one
    that does not) and the runs, in the order :func:`compiled_first` gives (on a first
    run of the command line, the measures whose kernels are compiled go first while a
    second process compiles the others); the results keep the order of ``methods``."""
    place = {name: position for position, name in enumerate(methods)}
    told = []  # (place, note)
    chosen = _choose(methods, reading, inputs, steps, place, told)
    results = {}
    for name in compiled_first(chosen):
        measure = _measures.MEASURES[name]
        model = reading.model_for(name)
        wait = long_wait(measure, inputs, timing, inputs.X_test.shape[1],
                         tree_model=_is_tree_model(model))
        label = _label(name, inputs)
        counted = "progress" in measure.gives and steps.shown
        # A measure that draws its own bar (steps, time left) has its line above it.
        with steps.line(wait) if wait is not None else NoStep(), \
                steps.step(label) if not counted else steps.line(label) as step, \
                warnings.catch_warnings(record=True) as caught:
            # What a measure warns of becomes a note under its name, not a line of
            # Python's warning machinery amid the report.
            warnings.simplefilter("always", UserWarning)
            try:
                results[name] = _measures.compute(
                    name, model, dataclasses.replace(inputs, progress=counted))
            except (ValueError, TypeError) as error:
                # Optional measures apply to some kinds of model only; what their
                # function finds out only as it runs (no bagging record, not boosted)
                # skips them with its message.
                if not fitted and not measure.optional:
                    raise
                step.skipped()
                told.append((place[name], f"{name} importance skipped: "
                                           f"{_first_line(error)}"))
        for warning in _distinct(caught):
            if issubclass(warning.category, UserWarning):
                told.append((place[name], f"{name}: {_first_line(warning.message)}"))
            else:  # a deprecation and the like is for the programmer: passed on
                warnings.warn_explicit(warning.message, warning.category, warning.filename,
                                       warning.lineno)
    told = [text for _, text in sorted(told, key=lambda item: item[0])]
    notes.extend(told)
    if not results:
        raise InputError("none of the requested importance measures could be computed: "
                         + ", ".join(methods) + (f" ({told[-1]})" if told else ""))
    return dict(sorted(results.items(), key=lambda item: place[item[0]]))


def _distinct(caught) -> list:
    """Each warning once (a measure may warn alike for every tree or repeat)."""
    seen, distinct = set(), []
    for warning in caught:
        key = (warning.category, str(warning.message))
        if key not in seen:
            seen.add(key)
            distinct.append(warning)
    return distinct


def _choose(methods, reading, inputs, steps, place, told) -> list:
    """The measures of ``methods`` that apply to the model (as ``reading`` gives it to
    each, :class:`~sapwood.report._wrapped.Reading`) and ``inputs``, each one that
    does not replaced by its fallback where that applies (XGBoost and LightGBM record
    no node impurities for MDI: their split gain), with a note for each left out."""
    chosen = []
    for name in methods:
        measure = _measures.MEASURES[name]
        if not _measures.is_available(name):
            told.append((place[name], f"{name} importance is not available in this "
                                      f"version of sapwood yet (sapwood.importance."
                                      f"{measure.function}); skipped"))
            continue
        reason = reading.why_not(name, inputs)
        if reason is None:
            chosen.append(name)
            continue
        with steps.step(_label(name, inputs)) as step:
            step.skipped()
        fallback = measure.fallback
        if fallback and reading.why_not(fallback, inputs) is None:
            instead = _measures.MEASURES[fallback]
            told.append((place[name], f"{measure.title} skipped: {reason}; showing "
                                       f"its {instead.title} importance instead"))
            if fallback not in methods and fallback not in chosen:
                place[fallback] = place[name]
                chosen.append(fallback)
        else:
            told.append((place[name], f"{name} importance skipped: {reason}"))
    return chosen


def _label(name, inputs) -> str:
    return f"Computing {name} importance {_measures.where(name, inputs.held_out)}"


def _is_tree_model(model) -> bool:
    from sapwood.adapters import as_ensemble

    try:
        as_ensemble(model)
    except (TypeError, ValueError):
        return False
    return True


def _first_line(error) -> str:
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def _with_pvalues(name, result, options: Options, inputs, steps, notes):
    """``result`` with the p-values ``options.pvalues`` asks for, or unchanged with a
    note saying why they do not apply."""
    from sapwood import importance

    measure = _measures.MEASURES[name]
    if options.pvalues == "janitza":
        if measure.null != "symmetric":
            applies = ", ".join(_measures.janitza_measures())
            notes.append(f"janitza p-values not computed for {name}: they need importances "
                         "that scatter around zero for irrelevant features "
                         f"({applies})")
            return result
        try:
            tested = importance.janitza_pvalues(result)
        except ValueError as error:
            notes.append(f"janitza p-values not computed for {name}: {_first_line(error)} "
                         "(on the command line: --pvalues altmann)")
            return result
        n_negative = int((result.importances_mean < 0).sum())
        if n_negative < JANITZA_MIN_NEGATIVE:
            notes.append(f"janitza p-values for {name} rest on {n_negative} negative "
                         "importance(s) and their mirror images; the test is meant for "
                         "data with many irrelevant features (ranger warns below "
                         f"{JANITZA_MIN_NEGATIVE} negative values): read them as rough")
        return tested
    if inputs.estimator is None:
        notes.append(f"altmann p-values not computed for {name}: they refit the model, and "
                     "a loaded model file cannot be refit")
        return result
    if not measure.altmann:
        why = (f": each of the {options.n_permutations} permutations would refit the model "
               "once per feature" if measure.rows == "refit" else "")
        notes.append(f"altmann p-values not offered for {name}{why}")
        return result
    how = measure.altmann
    if how is True:
        def how(fitted, X, y):
            return _measures.compute(name, fitted, inputs.with_training(X, y))
    with steps.step(f"Altmann p-values for {name}: {options.n_permutations} refits on a "
                 "permuted target"):
        tested = importance.altmann_pvalues(inputs.estimator, inputs.X_train, inputs.y_train,
                                            measure=how,
                                            n_permutations=options.n_permutations,
                                            random_state=options.seed)
    params = {**result.params, "pvalues": "altmann",
              "n_permutations": options.n_permutations}
    return result.replace(pvalues=tested.pvalues, params=params)


def _check_loaded(model, data: Prepared):
    """The data must have as many features as the loaded model (matched by name in
    :func:`align_to_model` when the model names them) and, for a classifier, labels
    among its classes."""
    expected = getattr(model, "n_features_in_", None)
    if expected is not None and expected != data.X.shape[1]:
        raise InputError(f"the model expects {expected} features; the data has "
                         f"{data.X.shape[1]} besides the target {data.target!r}")
    classes = getattr(model, "classes_", None)
    if data.task == "classification" and classes is not None:
        known = {str(label) for label in classes}
        unknown = sorted({str(label) for label in data.y.unique()} - known)
        if unknown:
            raise InputError(f"target {data.target!r} has values the model does not "
                             f"predict ({', '.join(unknown[:5])}); the model's classes are "
                             f"{', '.join(sorted(known)[:10])}")


def align_to_model(model, data: Prepared):
    """``(model, data)`` with the data's columns matched to the loaded model's features
    (:func:`~sapwood.cli._columns.match_columns`, which refuses missing and ambiguous
    ones): in the model's order, the columns it does not use left out with a note. A
    model whose library respelled the names (LightGBM's ``unit_price`` for ``unit
    price``) is relabelled with the data's, so that every measure names a feature as
    the data does."""
    names = getattr(model, "feature_names_in_", None)
    if not isinstance(model, LoadedModel):  # a fitted estimator: its columns, its order
        if names is None or list(names) == list(data.X.columns):
            return _with_categories(model, data)
        missing = [str(name) for name in names if name not in data.X.columns]
        if missing:
            raise InputError(f"the model was trained on columns X does not have: "
                             f"{', '.join(missing[:5])}")
        X = data.X[list(names)]
        encodings = {name: values for name, values in data.encodings.items() if name in X}
        return _with_categories(model, dataclasses.replace(data, X=X, encodings=encodings))
    if names is None:
        X, encodings = recode_categories(model.ensemble, data.X, data.encodings)
        return model, dataclasses.replace(data, X=X, encodings=encodings)
    matching = match_columns(model.ensemble.kind.library, names, data.X.columns,
                             target=data.target)
    if matching.respelled:
        ensemble = dataclasses.replace(model.ensemble, feature_names=tuple(matching.columns))
        model = load_model(ensemble, model.path)
    X = data.X if matching.columns == list(data.X.columns) else data.X[matching.columns]
    encodings = {name: values for name, values in data.encodings.items() if name in X}
    X, encodings = recode_categories(model.ensemble, X, encodings)
    return model, dataclasses.replace(data, X=X, encodings=encodings,
                                      notes=data.notes + matching.notes(),
                                      n_missing=int(X.isna().sum().sum()))


def _with_categories(model, data: Prepared):
    """``(model, data)``: a fitted estimator with categorical features judged on the
    frame as it was fitted (:mod:`._categoricals`), the data's codes the trees' own;
    any other as it is."""
    ensemble, reason = categorical_trees(model)
    if ensemble is None and reason is None:
        return model, data
    X, encodings = (data.X, data.encodings) if ensemble is None else \
        recode_categories(ensemble, data.X, data.encodings)
    model, X, encodings = judged_as_fitted(model, ensemble, reason, X, encodings)
    return model, dataclasses.replace(data, X=X, encodings=encodings)


def recode_categories(ensemble, X: pd.DataFrame, encodings):
    """``X`` with every text column the CLI encoded (sorted codes, ``encodings``) re-coded
    to the loaded model's own category codes where the model records its category
    labels (LightGBM's pandas categories): a label the model does not know becomes
    missing, as in the library's own pandas input, and the column's encoding is then
    the model's labels in the model's order. Other columns are left alone.
    Returns the recoded ``X`` and the encodings of its columns.

    A CatBoost model (:attr:`~sapwood.TreeEnsemble.hashed_categories`) keeps only its
    categories' hashes: its features' columns, numbers too (CatBoost reads 3 as "3"),
    are recoded by the hash of their labels, and the encodings then list per model code
    the data's label, then the data's labels the model does not know, as codes past
    the model's: every one-hot split sends them where it sends an unknown category, and
    tables show them as they are, not as missing."""
    categories = ensemble.categories
    if categories is None:
        return X, encodings
    hashed = ensemble.hashed_categories
    recoded, encodings = X.copy(), dict(encodings)
    for j, name in enumerate(X.columns):
        if j >= len(categories) or categories[j] is None:
            continue
        labels = categories[j]
        if name in encodings:
            values = X[name].to_numpy(dtype=np.float64)
            codes = np.where(np.isnan(values), -1, values).astype(np.intp)
            values = texts = encodings[name]
        elif hashed:
            column = pd.Categorical(X[name])  # numbers: 3.0 is hashed as "3"
            codes, values = column.codes, list(column.categories)
            texts = [f"{value:.17g}" for value in values]
        else:
            continue
        if not hashed:
            # The column now holds the model's codes: its labels name them, in the
            # model's order (not the data's sorted one).
            recoded[name] = category_codes(codes, values, labels)
            encodings[name] = [str(label) for label in labels]
            continue
        # The model's code of each of the data's labels; the unknown ones next.
        lookup = category_codes(np.arange(len(values)), values, labels, True)
        unknown = np.flatnonzero(np.isnan(lookup))
        lookup[unknown] = len(labels) + np.arange(unknown.size)
        recoded[name] = np.where(codes < 0, np.nan, lookup[np.clip(codes, 0, None)]) \
            if lookup.size else np.full(len(codes), np.nan)
        shown = [str(label) for label in labels] + [texts[i] for i in unknown]
        for i, code in enumerate(lookup):
            shown[int(code)] = texts[i]
        encodings[name] = shown
    return recoded, encodings
