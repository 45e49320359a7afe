"""Drop-column importance (leave one covariate out, LOCO): refit without a column.

For an unfitted estimator E, a score s (higher is better) and a column (or group of
columns) G::

    importance_G = s(E fit on X, scored on the test data)
                   - s(E fit on X without G, scored on the test data without G)

with the same hyper-parameters and ``random_state`` for every refit
(``sklearn.base.clone``), scored on held-out data or, per fold, by cross-validation
(Parr, Turgutlu, Csiszar, Howard 2018, "Beware Default Random Forest Importances",
explained.ai, and their ``rfpimp.dropcol_importances``; Lei, G'Sell, Rinaldo,
Tibshirani, Wasserman 2018, doi:10.1080/01621459.2017.1307116).
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.metrics import get_scorer_names
from sklearn.model_selection import check_cv, cross_val_score
from sklearn.utils import check_array
from sklearn.utils.parallel import Parallel, delayed

from .._progress import progress_bar
from .._sklearn_compat import HasMethods, StrOptions, _safe_indexing, validate_params
from ..adapters import is_pipeline
from ..learners._parallel import resolve_n_jobs
from ._engine._groups import feature_groups_given, resolve_groups
from ._engine._pipelines import fit_steps, pipeline_view
from ._engine._result import ImportanceResult
from ._engine._scoring import scorer_for

__all__ = ["drop_column_importance"]


@validate_params(
    {
        "estimator": [HasMethods(["fit"])],
        "X": ["array-like"],
        "y": ["array-like"],
        "X_test": ["array-like", None],
        "y_test": ["array-like", None],
        "cv": ["cv_object"],
        "feature_groups": [dict, None],
        "scoring": [StrOptions(set(get_scorer_names())), callable, None],
        "n_jobs": [Integral, None],
        "progress": ["boolean"],
        "groups": [dict, None],
    },
    prefer_skip_nested_validation=True,
)
def drop_column_importance(estimator, X, y, X_test=None, y_test=None, *, cv=None,
                           feature_groups=None, scoring=None, n_jobs=None, progress=False,
                           groups=None):
    """Drop-column importance: the loss in score when the model is refit without a column.

    For every column (or group of columns) G [1]_ [2]_::

        importance_G = s(full model) - s(model refit without G)

    Every model is a ``sklearn.base.clone`` of ``estimator``: the same
    hyper-parameters and the same ``random_state`` (set one, or the refits differ by
    chance as well as by the dropped column). With ``X_test`` / ``y_test`` the models
    are fit on (X, y) and scored once on the test data; otherwise they are scored by
    cross-validation on (X, y) (``sklearn.model_selection.cross_val_score`` on folds
    drawn once, so every refit sees the same folds) and the importance is the mean
    over folds of the per-fold difference. Unlike permutation importance this needs
    no assumption that a column can be shuffled independently of the others, but a
    column whose information another column duplicates gets (near) zero importance:
    drop-column importance measures what only that column adds.

    Definition: docs/measures.md, section 'Drop-column importance'.

    Parameters
    ----------
    estimator : unfitted estimator
        Anything with ``fit`` that a scikit-learn scorer accepts once fitted. An
        unfitted scikit-learn ``Pipeline`` (with ``X_test``): its steps fitted once, its
        last step refit without each input column's derived columns (docs/measures.md,
        section 'Pipelines in their input columns').
    X : ndarray or DataFrame of shape (n_samples, n_features)
        Training data. Column names become the feature names.
    y : array-like of shape (n_samples,) or (n_samples, n_outputs)
    X_test, y_test : array-like, default=None
        Held-out data to score on (both or neither).
    cv : int, cross-validation generator or iterable, default=None
        Only without held-out data, as in ``sklearn.model_selection.check_cv``
        (None: 5-fold, stratified for classifiers). Pass an iterable of
        (train, test) index pairs for splitters that need sample groups.
    feature_groups : dict of str to list, default=None
        Named sets of columns (names for a DataFrame, else positions) dropped
        together; the result then has one entry per group, in order. (``groups``, the
        former name, still works with a FutureWarning.)
    scoring : str, callable or None, default=None
        A scikit-learn scorer name or ``scorer(model, X, y)``; None uses
        ``estimator.score``.
    n_jobs : int or None, default=None
        Refits run in parallel with joblib (threads preferred; tree learners release
        the GIL while fitting); None takes an enclosing ``joblib.parallel_config``'s
        ``n_jobs`` (one at a time outside any). The numbers do not depend on ``n_jobs``.
    progress : bool, default=False
        Show a bar on stderr counting the refits (one per column or group, and the
        full model's).
    groups : dict, default=None
        The former name of ``feature_groups`` (a FutureWarning): ``groups`` is
        scikit-learn's word for one label per row.

    Returns
    -------
    ImportanceResult
        ``method="drop_column"``; ``importances`` of shape (n_features, n_folds), or
        (n_features, 1) with held-out data; ``importances_mean`` and
        ``importances_std`` (ddof=0, zero with held-out data) over folds. ``extra``
        holds ``baseline_score`` (per fold) and ``scores`` (n_features, n_folds), the
        scores without each column.

    Raises
    ------
    ValueError
        If only one of ``X_test`` / ``y_test`` is given, both held-out data and ``cv``
        are, or a column / group would leave no column to fit on.

    References
    ----------
    .. [1] T. Parr, K. Turgutlu, C. Csiszar, J. Howard, "Beware Default Random Forest
       Importances", explained.ai, 2018 (the ``rfpimp`` package).
    .. [2] J. Lei, M. G'Sell, A. Rinaldo, R. J. Tibshirani, L. Wasserman,
       "Distribution-Free Predictive Inference for Regression", Journal of the
       American Statistical Association 113(523), 1094-1111, 2018.
       doi:10.1080/01621459.2017.1307116

    Examples
    --------
    >>> from sklearn.datasets import make_regression
    >>> from sklearn.linear_model import LinearRegression
    >>> X, y = make_regression(n_samples=100, n_features=3, random_state=0)
    >>> result = drop_column_importance(LinearRegression(), X, y, cv=3)
    >>> result.importances.shape
    (3, 3)
    """
    if (X_test is None) != (y_test is None):
        raise ValueError("drop_column_importance needs both X_test and y_test, or neither "
                         f"(got X_test {'None' if X_test is None else 'set'} and y_test "
                         f"{'None' if y_test is None else 'set'})")
    if X_test is not None and cv is not None:
        raise ValueError("drop_column_importance scores on X_test / y_test or by "
                         f"cross-validation, not both; got X_test and cv={cv!r}")
    if not hasattr(X, "iloc"):
        X = check_array(X, ensure_all_finite="allow-nan", dtype=None)
    if X_test is not None and not hasattr(X_test, "iloc"):
        X_test = check_array(X_test, ensure_all_finite="allow-nan", dtype=None)
    groups = feature_groups_given(feature_groups, groups, "drop_column_importance")
    if is_pipeline(estimator):
        if X_test is None:
            raise ValueError("drop_column_importance of a Pipeline scores on X_test / y_test "
                             "(with cross-validation each fold would refit its steps); got "
                             "cv")
        # Its steps fitted once, on every column; its last step refit without each input
        # column's derived block (docs/measures.md, section 'Drop-column importance').
        fitted, design, estimator = fit_steps(estimator, X, y)
        view = pipeline_view(fitted, X, groups)
        X, X_test = design, view.transform(X_test)
        names, columns = view.names, view.derived
    else:
        names, columns = resolve_groups(X, estimator, groups)
    n_features = X.shape[1]
    kept = []
    for name, dropped in zip(names, columns, strict=True):
        keep = np.setdiff1d(np.arange(n_features), dropped)
        if keep.shape[0] == 0:
            raise ValueError(f"dropping {name!r} leaves no column to fit on (X has "
                             f"{n_features} column{'s' if n_features > 1 else ''})")
        kept.append(keep)
    scorer = scorer_for(estimator, scoring, y)
    if X_test is None:
        splitter = check_cv(cv, y, classifier=is_classifier(estimator))
        folds = list(splitter.split(X, y))
    else:
        folds = None

    def score_without(keep):
        X_fit = X if keep is None else _safe_indexing(X, keep, axis=1)
        if folds is not None:
            return cross_val_score(clone(estimator), X_fit, y, scoring=scorer, cv=folds)
        X_eval = X_test if keep is None else _safe_indexing(X_test, keep, axis=1)
        model = clone(estimator).fit(X_fit, y)
        return np.array([scorer(model, X_eval, y_test)], dtype=np.float64)

    all_scores = []
    with progress_bar(len(kept) + 1, "drop-column refits", progress) as steps:
        for scores in Parallel(n_jobs=resolve_n_jobs(n_jobs), prefer="threads",
                                 return_as="generator")(
                delayed(score_without)(keep) for keep in [None, *kept]):
            all_scores.append(scores)
            steps.advance()
    baseline = np.asarray(all_scores[0], dtype=np.float64)
    scores = np.vstack(all_scores[1:]).astype(np.float64)
    importances = baseline[None, :] - scores
    params = {
        "scoring": scoring if scoring is None or isinstance(scoring, str) else repr(scoring),
        "cv": None if folds is None else (cv if cv is None or isinstance(cv, int)
                                          else repr(cv)),
        "n_folds": None if folds is None else len(folds),
        "held_out": folds is None,
        "feature_groups": None if groups is None else {k: list(v) for k, v in groups.items()},
        "n_jobs": n_jobs,
    }
    return ImportanceResult.from_draws(importances, feature_names=names,
                                       method="drop_column", params=params,
                                       extra={"baseline_score": baseline, "scores": scores})
