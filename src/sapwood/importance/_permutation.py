"""Permutation importance on held-out data, identical to scikit-learn's and fast on trees.

For a fitted model f, data (X, y), a score s (higher is better) and a group G of columns
(one column by default)::

    importance_G = (1/K) sum_k [ s(f, X, y) - s(f, X^(G, k), y) ]

where ``X^(G, k)`` is X with the columns of G permuted by the k-th row permutation
(Breiman 2001, doi:10.1023/A:1010933404324; scikit-learn
``sklearn.inspection.permutation_importance``). The random stream is scikit-learn's, so
the numbers are scikit-learn's for the same arguments:

1. ``seed = check_random_state(random_state).randint(2**31)`` (one draw);
2. the baseline score uses the full X even when ``max_samples < n_samples``;
3. every group starts from a fresh ``RandomState(seed)``, so all groups see the same
   row subset and the same permutations;
4. with ``max_samples = m < n`` the rows are ``sample_without_replacement(n, m, rng)``;
5. ``idx = arange(m)``; each repeat shuffles ``idx`` in place and applies it to the
   already permuted columns (the shuffles compose).

This module is the measure (arguments, the random stream, the scores); the outputs of a
tree model under every permutation come from the permutation engine, whose map is in
:mod:`._permutation_engine`.
"""

from __future__ import annotations

import numbers
import warnings
from numbers import Integral

import numpy as np
import pandas as pd
from sklearn.base import ClassifierMixin, RegressorMixin, is_classifier, is_outlier_detector
from sklearn.metrics import get_scorer_names, r2_score
from sklearn.utils import check_array, check_random_state
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.random import sample_without_replacement

from .._kernels._permuted_sums import accuracy_change
from .._progress import counted, progress_bar
from .._sklearn_compat import (
    HasMethods,
    Interval,
    RealNotInt,
    StrOptions,
    _safe_indexing,
    is_passthrough_scorer,
    uses_estimator_score,
    validate_params,
)
from ..adapters import SplitUnit
from ..learners._inputs import check_rows
from ..learners._parallel import resolve_n_jobs
from ._engine._dask import is_dask_collection
from ._engine._groups import feature_groups_given, resolve_groups
from ._engine._permutation_dask import dask_scores
from ._engine._permutation_engine import DEFAULT_MAX_MEMORY, memory_budget, tree_evaluator
from ._engine._permutation_rows import Recorder, RowDraws, interval_notes, read_response, row_loss
from ._engine._pipelines import pipeline_view
from ._engine._ranks import row_blocks
from ._engine._result import ImportanceResult
from ._engine._scoring import scorer_for
from ._engine._survival_scores import SURVIVAL_SCORES

__all__ = ["permutation_importance"]


@validate_params(
    {
        "model": [HasMethods(["predict"])],
        "X": ["array-like"],
        "y": ["array-like", None],
        "scoring": [StrOptions(set(get_scorer_names()) | set(SURVIVAL_SCORES)), callable, list,
                    tuple, dict, None],
        "n_repeats": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "sample_weight": ["array-like", None],
        "max_samples": [Interval(Integral, 1, None, closed="left"),
                        Interval(RealNotInt, 0, 1, closed="right")],
        "feature_groups": [dict, None],
        "progress": ["boolean"],
        "max_memory": [Interval(Integral, 1, None, closed="left"), str, None],
        "groups": [dict, None],
    },
    prefer_skip_nested_validation=True,
)
def permutation_importance(model, X, y, *, scoring=None, n_repeats=5, n_jobs=None,
                           random_state=None, sample_weight=None, max_samples=1.0,
                           feature_groups=None, progress=False, max_memory=DEFAULT_MAX_MEMORY,
                           transformed=False, groups=None):
    """Permutation importance of each feature (or group of features) on held-out data.

    The drop in score when a column's values are shuffled among the rows, averaged over
    ``n_repeats`` shuffles [1]_::

        importance_j = s(f, X, y) - (1/K) sum_k s(f, X^(j, k), y)

    For any fitted scikit-learn-compatible model the numbers equal
    ``sklearn.inspection.permutation_importance`` with the same arguments (same random
    stream, same scorers). For models in sapwood's tree format (anything
    :func:`sapwood.adapters.as_ensemble` accepts that also predicts) a tree-aware
    evaluator gives the same numbers much faster: it re-routes only the samples whose
    path meets a split on the permuted column, from the first such split, and never
    re-predicts; its permuted predictions are bit-identical to the model's own and are
    handed to the same scikit-learn scorer. Models it does not cover (a non-identity
    link such as boosted classifiers, a ``decision_function``, multi-output
    classification, a ``score`` method other than scikit-learn's) take the generic
    evaluator; so does, with a warning, a model whose tree-format conversion does not
    reproduce its own predictions on the first rows (probabilities bit for bit,
    regression outputs to 1e-12).

    Definition: docs/measures.md, section 'Held-out permutation importance'.

    Parameters
    ----------
    model : fitted estimator
        Anything a scikit-learn scorer accepts. A fitted scikit-learn ``Pipeline`` whose
        last step is a tree model: X is transformed once and each input column's block
        of derived columns permuted jointly in the last step (the numbers of scikit-learn
        on the whole pipeline when every step maps each row by itself; otherwise the
        whole pipeline runs per shuffle, with a warning naming the step; docs/measures.md,
        section 'Pipelines in their input columns').
    X : ndarray or DataFrame of shape (n_samples, n_features), or a Dask DataFrame or array
        Held-out data. Column names become the feature names. A Dask collection (rows
        that need not fit in memory) is scored block by block on Dask's workers, with
        the same permutations as in memory (each permuted column gathered across the
        partitions): only scorers that add up over blocks are accepted (``accuracy``,
        ``balanced_accuracy``, ``r2``, ``neg_mean_squared_error``,
        ``neg_root_mean_squared_error``, ``neg_mean_absolute_error``, or None for
        scikit-learn's accuracy / R^2 ``score``), ``max_samples`` must be 1.0, and y and
        ``sample_weight`` may be Dask or in memory, and ``n_jobs`` is not used (the
        workers are the parallelism). Counts (accuracy, balanced accuracy) give the
        in-memory numbers bit for bit; sums of floats up to summation order.
    y : array-like of shape (n_samples,) or (n_samples, n_outputs), or None
    scoring : str, callable, list, tuple, dict or None, default=None
        As in scikit-learn: None uses ``model.score``; a string or a scorer
        ``scorer(model, X, y)`` gives one result; a list / tuple of names, a dict of
        scorers, or a callable returning a dict give a dict of results. A scorer that
        returns an array (for instance ``make_scorer(recall_score, average=None)`` for
        per-class accuracy, or ``make_scorer(r2_score, multioutput="raw_values")``)
        gives a per-class / per-output breakdown (see Returns). An anomaly detector
        (scikit-learn's ``IsolationForest``) has no ``score``: pass a scorer, such as
        ``"roc_auc"`` with y its ``predict`` labels (1 inlier, -1 outlier).
    n_repeats : int, default=5
        Number of shuffles per feature.
    n_jobs : int or None, default=None
        Threads. The tree-aware evaluator splits the trees among them; the generic one
        evaluates features in parallel (joblib, threads preferred). The numbers do not
        depend on ``n_jobs``.
    random_state : int, RandomState instance or None, default=None
    sample_weight : array-like of shape (n_samples,), default=None
        Passed to the scorer.
    max_samples : int or float, default=1.0
        Rows drawn (without replacement) to evaluate the permuted scores: a count or a
        fraction of ``n_samples``. The baseline always uses every row.
    feature_groups : dict of str to list, default=None
        Named sets of columns (names for a DataFrame, else positions) permuted jointly
        with one row permutation; the result then has one entry per group, in order.
        A one-column group gives exactly that column's ungrouped importance. For a
        Pipeline, the columns are its input columns.
    progress : bool, default=False
        A bar on stderr counting the permuted scores (columns or groups times repeats)
        as they are computed, with the time left. The numbers do not depend on it.
    max_memory : int, str or None, default="128MB"
        The tree-aware evaluator's budget for its working memory on the evaluated rows:
        a number of bytes, or a string such as ``"512MB"`` or ``"2GiB"`` (units B, kB,
        MB, GB, TB, KiB, MiB, GiB, TiB), or None for no limit. When the rows' index and
        buffers do not fit it, the rows are indexed and re-routed a window at a time,
        and the (column, repeat) shuffles go in batches that each pass over the windows,
        collecting every changed row: the numbers are those of the one-piece
        computation, bit for bit (a row's output depends only on its own values and the
        values the shuffle brings it, and the shuffles are drawn for all the rows at
        once, as above). A smaller budget costs time: every batch indexes the windows
        again, and routes their rows again when every row's leaves (4 bytes a row and
        tree) do not fit a quarter of the budget. Held whatever the budget: the trees'
        own index (about 32 bytes a node, and 8 per output value: per class of a
        classifier), and per evaluated row the baseline outputs, the shuffles (8 bytes a
        row and repeat) and, where the rank intervals rest on per-row draws, 8 bytes a
        row and column or group. The generic evaluator and Dask input do not use it.
    transformed : bool, default=False
        For a Pipeline: permute the columns its last step reads (the derived columns,
        each by itself) instead of its input columns.
    groups : dict, default=None
        The former name of ``feature_groups`` (a FutureWarning): ``groups`` is
        scikit-learn's word for one label per row.

    Returns
    -------
    ImportanceResult or dict of str to ImportanceResult
        One result per scorer (a dict when ``scoring`` names several). Each has
        ``importances`` of shape (n_features, n_repeats) (baseline minus permuted
        score), ``importances_mean`` and ``importances_std`` (ddof=0) over repeats,
        ``method="permutation"`` and ``params`` (including ``evaluator``: "tree" or
        "generic"). ``extra`` holds ``baseline_score`` and the permuted ``scores``.
        For an array-valued scorer (K entries) ``extra`` also holds
        ``importances_by_output`` (n_features, n_repeats, K), its mean and std over
        repeats (``importances_mean_by_output``, ``importances_std_by_output``) and
        ``output_labels`` (the classes when K equals their number, else 0..K-1); the
        headline ``importances`` are then averaged over the K entries (the macro
        average, e.g. the balanced-accuracy importance for per-class recall).
        Where the score is a mean over rows of a loss (the default scores, accuracy,
        R², mean squared or absolute error; no weights, all rows),
        ``rank_draws`` holds one draw per row whose mean is the importance; the rank
        intervals rest on it and so cover the choice of held-out rows, not only the
        shuffles (docs/measures.md, 'Rank intervals').

    References
    ----------
    .. [1] L. Breiman, "Random Forests", Machine Learning 45(1), 5-32, 2001.
       doi:10.1023/A:1010933404324

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.linear_model import LogisticRegression
    >>> X, y = make_classification(n_samples=200, n_features=4, random_state=0)
    >>> model = LogisticRegression().fit(X, y)
    >>> result = permutation_importance(model, X, y, n_repeats=3, random_state=0)
    >>> result.importances.shape
    (4, 3)
    """
    budget = memory_budget(max_memory)
    feature_groups = feature_groups_given(feature_groups, groups, "permutation_importance")
    if is_dask_collection(X):
        return _dask_permutation_importance(model, X, y, scoring, n_repeats, random_state,
                                            sample_weight, max_samples, feature_groups,
                                            progress)
    check_rows(X, y, sample_weight)
    if not hasattr(X, "iloc"):
        X = check_array(X, ensure_all_finite="allow-nan", dtype=None)
    n_samples = X.shape[0]
    seed = check_random_state(random_state).randint(np.iinfo(np.int32).max + 1)
    if not isinstance(max_samples, numbers.Integral):
        max_samples = int(max_samples * n_samples)
    elif max_samples > n_samples:
        raise ValueError("max_samples must be <= n_samples")
    if max_samples < 1:
        raise ValueError(f"max_samples selects no rows of the {n_samples} samples")
    names, columns, model, X, columns_read = _units(model, X, feature_groups, transformed)
    rows, sources = _random_stream(seed, n_samples, max_samples, n_repeats)
    if scoring is None and is_outlier_detector(model):
        # An anomaly detector has no score method and no one reading of y: labels may
        # mark anomalies with 1 or with -1, and a default would silently invert one.
        raise ValueError(
            f"permutation_importance needs the 'scoring' parameter for the anomaly "
            f"detector {type(model).__name__}, which has no score method: for example "
            "scoring='roc_auc' with y holding the labels its predict uses (1 inlier, -1 "
            "outlier), which scores decision_function; got scoring=None")
    scorer = scorer_for(model, scoring, y)
    n_jobs = resolve_n_jobs(n_jobs)

    # A score of the survival function reads more than the trees' sums: the model's own.
    evaluator = None if getattr(scorer, "name", None) == "neg_integrated_brier_score" else \
        tree_evaluator(model, X, n_jobs, uses_estimator_score(scorer), budget)
    # Per-row draws for the rank intervals, where the score is a (weighted) mean over the
    # evaluated rows of a loss, or binary ROC AUC (see _permutation_rows).
    loss = row_loss(model, scoring, *_subset(rows, y),
                    is_classifier(model) if evaluator is None else evaluator.is_classifier,
                    *_subset(rows, sample_weight))
    with progress_bar(len(columns) * n_repeats, "permuted scores", progress) as steps:
        if evaluator is not None:
            try:
                baseline, scores, by_row = _tree_scores(
                    evaluator, X, y, sample_weight, scorer, rows, sources, columns, steps,
                    loss)
            finally:
                evaluator.close()
        else:
            baseline, scores, by_row = _generic_scores(
                model, X, y, sample_weight, scorer, rows, sources, columns, n_jobs, steps,
                loss)
    params = _params(scoring, n_repeats, random_state, seed, max_samples, feature_groups,
                     "generic" if evaluator is None else "tree")
    if columns_read is not None:
        params["columns"] = columns_read
    return _results(baseline, scores, names, params, getattr(model, "classes_", None),
                    by_row)


def _dask_permutation_importance(model, X, y, scoring, n_repeats, random_state,
                                 sample_weight, max_samples, feature_groups, progress):
    """The measure on a Dask DataFrame or array: the same random stream and the same
    permuted rows, scored block by block on Dask's workers (:mod:`._permutation_dask`)."""
    if isinstance(max_samples, numbers.Integral) or max_samples != 1.0:
        raise ValueError(f"max_samples must be 1.0 for Dask input (a row subset would "
                         f"reorder the table); got {max_samples!r}")
    seed = check_random_state(random_state).randint(np.iinfo(np.int32).max + 1)
    names, columns = resolve_groups(X, model, feature_groups)
    with progress_bar(len(columns) * n_repeats, "permuted scores", progress) as steps:
        baseline, scores = dask_scores(model, X, y, sample_weight, scoring, seed,
                                       n_repeats, columns, steps)
    params = _params(scoring, n_repeats, random_state, seed, max_samples, feature_groups,
                     "dask")
    return _results(baseline, scores, names, params, getattr(model, "classes_", None))


def _units(model, X, feature_groups, transformed):
    """``(names, columns, model, X, columns_read)``: the features reported, the
    positions of the columns permuted for each, and the model and rows they are permuted
    in. A Pipeline is transformed once and its last step permuted in the derived
    columns, each input column's block with one row permutation (``columns_read``
    "input"; with ``transformed``, each derived column by itself: "derived"); which is
    exact when every step maps each row by itself. Otherwise the whole pipeline runs on
    every shuffle of the input columns ("input, whole pipeline"), with a warning; so it
    does, without one, for feature groups that take part of the input columns a derived
    column reads together (its block cannot be shuffled for them alone)."""
    try:
        view = pipeline_view(model, X, None if transformed else feature_groups)
    except SplitUnit:
        names, columns = resolve_groups(X, model, feature_groups)
        return names, columns, model, X, "input, whole pipeline"
    if view is None:
        return (*resolve_groups(X, model, feature_groups), model, X, None)
    if transformed:
        derived = view.transform(X)
        labels = pd.DataFrame(np.empty((0, len(view.derived_names))),
                              columns=view.derived_names)
        return (*resolve_groups(labels, view.final, feature_groups), view.final, derived,
                "derived")
    if view.not_row_wise:
        warnings.warn(f"the pipeline step {view.not_row_wise[0]} is not known to map each "
                      "row by itself, so each shuffle runs the whole pipeline (exact, "
                      "slower than shuffling its output columns)", UserWarning,
                      stacklevel=4)
        return view.names, view.inputs, model, X, "input, whole pipeline"
    return view.names, view.derived, view.final, view.transform(X), "input"


def _params(scoring, n_repeats, random_state, seed, max_samples, groups, evaluator):
    return {
        "scoring": scoring if scoring is None or isinstance(scoring, str) else repr(scoring),
        "n_repeats": n_repeats,
        "random_state": random_state if isinstance(random_state, numbers.Integral) else None,
        "seed": int(seed),
        "max_samples": max_samples,
        "feature_groups": None if groups is None else {k: list(v) for k, v in groups.items()},
        "evaluator": evaluator,
    }


def _results(baseline, scores, names, params, labels, by_row=None):
    """One result, or one per scorer when the scores are dicts; ``by_row``: the per-row
    draws of the rank intervals (None: the repeats are the draws)."""
    if isinstance(baseline, dict):
        return {name: _result(baseline[name], [[s[name] for s in group] for group in scores],
                              names, {**params, "scorer": name}, labels)
                for name in baseline}
    return _result(baseline, scores, names, params, labels, by_row)


def _random_stream(seed, n_samples, max_samples, n_repeats):
    """scikit-learn's evaluation rows and, per repeat, the source row of every row.

    Row ``i`` of the k-th permuted column holds the original row ``sources[k, i]`` of
    the evaluation rows (the composition of the first k shuffles).
    """
    rng = np.random.RandomState(seed)
    rows = None
    if max_samples < n_samples:
        rows = sample_without_replacement(n_samples, max_samples, random_state=rng)
    shuffling = np.arange(max_samples)
    current = np.arange(max_samples)
    sources = np.empty((n_repeats, max_samples), dtype=np.intp)
    for k in range(n_repeats):
        rng.shuffle(shuffling)
        current = current[shuffling]
        sources[k] = current
    return rows, sources


def _score(scorer, model, X, y, sample_weight):
    if sample_weight is not None:
        return scorer(model, X, y, sample_weight=sample_weight)
    return scorer(model, X, y)


def _subset(rows, *arrays):
    if rows is None:
        return arrays
    return tuple(None if a is None else _safe_indexing(a, rows, axis=0) for a in arrays)


def _generic_scores(model, X, y, sample_weight, scorer, rows, sources, columns, n_jobs,
                    steps, loss=None):
    """As :func:`_tree_scores`, by the model's own predictions (the per-row draws from
    the predictions the scores make, recorded)."""
    recorder = None if loss is None else Recorder(model)
    baseline = _score(scorer, recorder or model, X, y, sample_weight)
    X_eval, y_eval, w_eval = _subset(rows, X, y, sample_weight)
    by_row = None
    if recorder is not None and read_response(loss, recorder) is not None:
        by_row = RowDraws(loss, _subset(rows, read_response(loss, recorder))[0], y_eval,
                          sources, len(columns), offset=rows is not None)
    scores = Parallel(n_jobs=n_jobs, prefer="threads")(
        delayed(_group_scores)(model, X_eval, y_eval, w_eval, scorer, group, sources, steps,
                               by_row, g)
        for g, group in enumerate(columns))
    return baseline, scores, by_row


def _group_scores(model, X, y, sample_weight, scorer, group, sources, steps, by_row=None,
                  g=0):
    """Scores with the columns of ``group`` permuted by each row of ``sources``
    (``steps``: a progress bar's, advanced once per score), adding to ``by_row`` (the
    per-row draws' row ``g``) when given."""
    if by_row is not None:
        model = Recorder(model)
        every_row = np.arange(sources.shape[1])
    X_permuted = X.copy()
    scores = []
    for k, source in enumerate(sources):
        if hasattr(X, "iloc"):
            for j in group:
                column = X.iloc[source, j]
                column.index = X_permuted.index
                X_permuted.isetitem(j, column)
        else:
            X_permuted[:, group] = X[np.ix_(source, group)]
        scores.append(_score(scorer, model, X_permuted, y, sample_weight))
        if by_row is not None:
            by_row.add(g, k, every_row, read_response(by_row.loss, model))
        steps.advance()
    return scores


def _tree_scores(evaluator, X, y, sample_weight, scorer, rows, sources, columns, steps,
                 loss=None):
    """The baseline, the permuted scores (groups x repeats) and, given a per-row
    ``loss``, the per-row draws (:class:`RowDraws`; else None)."""
    # First: given the sources, a boosted model's evaluator takes the baseline sums in
    # its first pass of permuted sums instead of routing the rows once more for them.
    # A group of no columns (an input column a pipeline's model never reads) changes no
    # row: it keeps the unpermuted score, and the evaluator sees the others only.
    present = [g for g, group in enumerate(columns) if len(group)]
    evaluator.prepare(rows, [columns[g] for g in present], sources)
    reference = evaluator.responses(evaluator.baseline_raw)
    baseline = _score(scorer, reference, X, y, sample_weight)
    X_eval, y_eval, w_eval = _subset(rows, X, y, sample_weight)
    unchanged = baseline  # on every row the unpermuted score is the baseline itself
    if rows is not None:
        reference = evaluator.responses(evaluator.baseline_eval)
        unchanged = _score(scorer, reference, X_eval, y_eval, w_eval)
    read = sorted(reference.responses_used)
    scores = [[unchanged] * sources.shape[0] for _ in columns]
    by_row = None if loss is None else RowDraws(
        loss, read_response(loss, evaluator.responses(evaluator.baseline_eval)), y_eval,
        sources, len(columns), offset=rows is not None)
    accuracy = _IncrementalAccuracy.make(scorer, evaluator, reference, y_eval, w_eval,
                                         unchanged)
    if accuracy is not None:
        # The score reads the predicted classes only: rows whose class cannot change
        # need not be re-routed.
        evaluator.only_class_changes()
    batched = None if accuracy is not None else _BatchedR2.make(
        scorer, evaluator, reference, X_eval, y_eval, w_eval, scores)
    # A scorer sees only the outputs it reads, y and the weights: two permuted data sets
    # whose read outputs are equal have equal scores.
    known = {}
    for g, k, changed_rows, changed_totals in counted(evaluator.permuted_changes(sources),
                                                      steps):
        g = present[g]
        if changed_rows.shape[0] == 0:
            continue
        changed_raw = None
        if by_row is not None:
            changed_raw = evaluator.finalize(changed_totals)
            by_row.add(g, k, changed_rows,
                       read_response(by_row.loss, evaluator.responses(changed_raw)))
        if accuracy is not None:
            value = accuracy.score(changed_rows, changed_totals)
            if accuracy.checks_left > 0:
                # The first few against the scorer itself; any difference ends the
                # shortcut (none is expected: see _IncrementalAccuracy).
                raw = evaluator.baseline_eval.copy()
                raw[changed_rows] = evaluator.finalize(changed_totals)
                real = _score(scorer, evaluator.responses(raw), X_eval, y_eval, w_eval)
                accuracy.checks_left -= 1
                if not (isinstance(real, float) and real == value):
                    accuracy, value = None, real
            scores[g][k] = value
            continue
        if changed_raw is None:
            changed_raw = evaluator.finalize(changed_totals)
        if batched is not None:
            raw = evaluator.baseline_eval.copy()
            raw[changed_rows] = changed_raw
            batched.add(g, k, raw)
            continue
        key = _outputs_key(evaluator, read, changed_rows, changed_raw) if read else None
        if key == ():
            continue  # no output the scorer reads changed (a class vote that did not flip)
        if key is not None and key in known:
            scores[g][k] = known[key]
            continue
        raw = evaluator.baseline_eval.copy()
        raw[changed_rows] = changed_raw
        scores[g][k] = _score(scorer, evaluator.responses(raw), X_eval, y_eval, w_eval)
        if key is not None:
            known[key] = scores[g][k]
    if batched is not None:
        batched.flush()
    steps.complete()  # permutations that changed no row were never yielded
    return baseline, scores, by_row


class _BatchedR2:
    """scikit-learn's default regressor score (``RegressorMixin.score``: ``r2_score``
    of one output, unweighted) of many permuted predictions in one ``r2_score`` call.

    ``r2_score`` sums each output's squared errors (and squared deviations of y) over
    axis 0; with the predictions and y stored column by column (Fortran order) each
    column's sum runs over contiguous memory, as a single output's does, so column j of
    ``r2_score(Y, P, multioutput="raw_values")`` is ``r2_score(y, P[:, j])`` bit for
    bit (tests compare them) while the input checks of a call are paid once, not
    once per permuted data set. The first two scores are checked against the scorer
    itself; any difference scores the rest with the scorer instead.
    """

    # Prediction values scored per call: a call's temporaries (2 MB each in float64)
    # stay in cache, and no more than this many are held (20,000 rows x 100 columns in
    # one call take as long as one call per column).
    _BUDGET = 2**18

    def __init__(self, scorer, evaluator, y, X, scores):
        self.scorer = scorer
        self.evaluator = evaluator
        self.y = y
        self.X = X
        self.scores = scores  # written as scores[g][k]
        self.per_call = max(1, self._BUDGET // max(1, y.shape[0]))
        self.checks = 2  # scores still to compare with the scorer's
        self.batched = True  # False once a batched score differed from the scorer's
        self.slots, self.raws = [], []

    @classmethod
    def make(cls, scorer, evaluator, reference, X, y, sample_weight, scores):
        """The batched scores for ``scores`` (groups x repeats), or None when the scorer
        is not the default R^2 on one output, unweighted."""
        if not (not evaluator.is_classifier and sample_weight is None
                and is_passthrough_scorer(scorer)
                and getattr(type(evaluator.model), "score", None) is RegressorMixin.score
                and isinstance(y, np.ndarray) and y.ndim == 1 and y.dtype.kind in "fiu"):
            return None
        predicted = reference.predict(None)
        if not (isinstance(predicted, np.ndarray) and predicted.shape == y.shape
                and predicted.dtype.kind == "f"):
            return None
        return cls(scorer, evaluator, y, X, scores)

    def add(self, g, k, raw):
        """Score (group ``g``, repeat ``k``) on the raw outputs ``raw`` (now or later)."""
        self.slots.append((g, k))
        self.raws.append(raw)
        if len(self.slots) == self.per_call:
            self.flush()

    def flush(self):
        """Score the slots added since the last call."""
        if self.slots:
            self._score(self.slots, self.raws)
        self.slots, self.raws = [], []

    def _score(self, slots, raws):
        outputs = [self.evaluator.responses(raw) for raw in raws]
        if self.batched:
            columns = [output.predict(None) for output in outputs]
            predicted = np.empty((self.y.shape[0], len(columns)), order="F",
                                 dtype=np.result_type(*columns))
            for j, column in enumerate(columns):
                predicted[:, j] = column
            truth = np.asfortranarray(np.broadcast_to(self.y[:, None], predicted.shape))
            values = r2_score(truth, predicted, multioutput="raw_values").tolist()
            checked = outputs[:self.checks]
            self.checks -= len(checked)
            real = [_score(self.scorer, output, self.X, self.y, None) for output in checked]
            if all(isinstance(r, float) and r == v for r, v in zip(real, values, strict=False)):
                for (g, k), value in zip(slots, values, strict=True):
                    self.scores[g][k] = value
                return
            self.batched = False  # a difference: the scorer scores the rest
        for (g, k), output in zip(slots, outputs, strict=True):
            self.scores[g][k] = _score(self.scorer, output, self.X, self.y, None)


class _IncrementalAccuracy:
    """scikit-learn's default classifier score (``ClassifierMixin.score``, unweighted
    accuracy) updated from the rows whose prediction changed.

    ``accuracy_score`` returns ``float(np.average(y_true == y_pred))``: a mean of 0/1
    values, whose float64 sum is the exact count of correct rows, divided by the row
    count. So the score is ``correct / n`` with ``correct`` counted incrementally, the
    same bits. The changed rows' classes are picked from their sums by a kernel
    (``accuracy_change``) as the model's ``predict`` picks them from its probabilities.
    It is used only when the scorer is that score, there are no weights, y is one label
    per row, the model averages its trees, and it reproduces the unpermuted score; the
    first permuted scores are still checked against the scorer.
    """

    def __init__(self, evaluator, correct, y_code):
        self.evaluator = evaluator
        self.correct = correct
        self.n_correct = int(np.count_nonzero(correct))
        self.y_code = y_code
        # finalize() of a mean-combined model: sums / n_trees + the base score.
        self.offset = np.ascontiguousarray(
            np.broadcast_to(evaluator.ensemble.base_score[0], (evaluator.n_classes,)),
            dtype=np.float64)
        self.checks_left = 2

    @classmethod
    def make(cls, scorer, evaluator, reference, y, sample_weight, unchanged):
        if not (evaluator.is_classifier and sample_weight is None
                and evaluator.ensemble.combine == "mean"
                and is_passthrough_scorer(scorer)
                and getattr(type(evaluator.model), "score", None) is ClassifierMixin.score
                and isinstance(unchanged, float)):
            return None
        try:
            y = np.asarray(y)
            predicted = np.asarray(reference.predict(None))
            classes = np.asarray(evaluator.model.classes_)
            if y.ndim != 1 or y.shape != predicted.shape or y.dtype == object \
                    or predicted.dtype == object or classes.ndim != 1 \
                    or classes.shape[0] != evaluator.n_classes:
                return None
            correct = np.asarray(y == predicted, dtype=bool)
            # Each label's class index (-1: none): y == classes[c] exactly when
            # y_code == c, as the classes are distinct.
            y_code = np.full(y.shape[0], -1, dtype=np.intp)
            for c, label in enumerate(classes):
                y_code[np.asarray(y == label, dtype=bool)] = c
        except (TypeError, ValueError):
            return None
        if correct.shape != y.shape:
            return None
        accuracy = cls(evaluator, correct.astype(np.uint8), y_code)
        return accuracy if accuracy._value(accuracy.n_correct) == unchanged else None

    def _value(self, n_correct):
        return float(np.float64(n_correct) / self.y_code.shape[0])

    def score(self, rows, totals):
        """The score when ``rows`` have the sums ``totals`` and the others their own."""
        change = accuracy_change(rows, totals, self.evaluator.n_trees, self.offset,
                                 self.y_code, self.correct)
        return self._value(self.n_correct + change)


def _outputs_key(evaluator, read, changed_rows, changed_raw):
    """A tuple of bytes that identifies the permuted outputs in ``read`` (empty when they
    equal the unpermuted ones; None when they cannot serve as a key), from the rows
    whose raw output changed."""
    permuted = evaluator.responses(changed_raw)
    reference = evaluator.responses(evaluator.baseline_eval[changed_rows])
    outputs = [(np.asarray(getattr(permuted, name)(None)),
                np.asarray(getattr(reference, name)(None))) for name in read]
    differs = np.zeros(changed_rows.shape[0], dtype=bool)
    for new, old in outputs:
        if new.dtype == object or new.shape != old.shape:
            return None
        differs |= (new != old).reshape(new.shape[0], -1).any(axis=1)
    if not differs.any():
        return ()
    return (changed_rows[differs].tobytes(),
            *(np.ascontiguousarray(new[differs]).tobytes() for new, _ in outputs))


def _result(baseline, scores, names, params, labels, by_row=None):
    baseline = np.asarray(baseline, dtype=np.float64)
    scores = np.array(scores, dtype=np.float64)
    importances = baseline - scores
    extra = {"baseline_score": baseline, "scores": scores,
             "intervals": interval_notes(importances.shape[1], by_row is not None)}
    if importances.ndim == 3:
        n_outputs = importances.shape[2]
        extra["importances_by_output"] = importances
        extra["importances_mean_by_output"] = np.mean(importances, axis=1)
        extra["importances_std_by_output"] = np.std(importances, axis=1)
        extra["output_labels"] = (list(labels) if labels is not None
                                  and len(labels) == n_outputs else list(range(n_outputs)))
        importances = importances.mean(axis=2)
    return ImportanceResult.from_draws(
        importances, feature_names=names, method="permutation", params=params, extra=extra,
        rank_draws=None if by_row is None else row_blocks(by_row.draws(importances.mean(axis=1))))
