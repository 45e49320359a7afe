"""Held-out permutation importance equals scikit-learn's, on any model and on trees.

Every comparison is exact (``np.array_equal``): both evaluators reproduce scikit-learn's
random stream and call its scorers, and the tree-aware evaluator's predictions are
bit-identical to the model's own.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import IsolationForest, RandomForestClassifier, RandomForestRegressor
from sklearn.inspection import permutation_importance as sklearn_permutation_importance
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import get_scorer, make_scorer, r2_score, recall_score
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from sapwood.importance import ImportanceResult, permutation_importance
from sapwood.importance._engine._permutation_rows import AucScoreMixin
from tests.reference.naive_permutation import (
    as_format_model,
    as_opaque_model,
    naive_permutation_scores,
)


def _classification(n_classes=2):
    X, y = make_classification(n_samples=400, n_features=6, n_informative=3,
                               n_redundant=1, n_classes=n_classes, random_state=0)
    # Ties and a constant column: rounding makes many equal values.
    X[:, 4] = np.round(X[:, 4])
    X[:, 5] = 1.0
    return X[:200], y[:200], X[200:], y[200:]


def _regression():
    X, y = make_regression(n_samples=400, n_features=5, n_informative=3, noise=1.0,
                           random_state=0)
    X[:, 3] = np.round(X[:, 3] * 2)
    return X[:200], y[:200], X[200:], y[200:]


MODELS = {
    "tree-clf": lambda: DecisionTreeClassifier(max_depth=5, random_state=0),
    "forest-clf": lambda: RandomForestClassifier(n_estimators=12, min_samples_leaf=3,
                                                 random_state=0),
    # Pure leaves: probabilities 0 and 1, so the evaluator's exact-sum path.
    "forest-clf-pure": lambda: RandomForestClassifier(n_estimators=12, random_state=0),
    "tree-reg": lambda: DecisionTreeRegressor(min_samples_leaf=2, random_state=0),
    "forest-reg": lambda: RandomForestRegressor(n_estimators=10, max_depth=6, random_state=0),
}

OPTIONS = {
    "default": {},
    "max_samples": {"max_samples": 0.6},
    "max_samples-int": {"max_samples": 77},
    "weights": {"sample_weight": "random"},
    "scorer": {"scoring": "neg_log_loss|neg_mean_absolute_error"},
}


def _fit(name, frame):
    data = _regression() if name.endswith("reg") else _classification(3)
    X_train, y_train, X_test, y_test = data
    if frame:
        columns = [f"f{j}" for j in range(X_train.shape[1])]
        X_train = pd.DataFrame(X_train, columns=columns)
        X_test = pd.DataFrame(X_test, columns=columns)
    return MODELS[name]().fit(X_train, y_train), X_test, y_test


def _kwargs(option, name, n_rows):
    kwargs = dict(OPTIONS[option])
    if kwargs.get("sample_weight") == "random":
        kwargs["sample_weight"] = np.random.RandomState(1).uniform(0.1, 2.0, n_rows)
    if "scoring" in kwargs:
        kwargs["scoring"] = kwargs["scoring"].split("|")[name.endswith("reg")]
    return kwargs


@pytest.mark.parametrize("option", list(OPTIONS))
@pytest.mark.parametrize("frame", [False, True], ids=["ndarray", "DataFrame"])
@pytest.mark.parametrize("name", list(MODELS))
def test_equals_sklearn_on_both_evaluators(name, frame, option):
    model, X, y = _fit(name, frame)
    kwargs = _kwargs(option, name, X.shape[0])
    expected = sklearn_permutation_importance(model, X, y, n_repeats=4, random_state=7,
                                              **kwargs)
    generic = permutation_importance(as_opaque_model(model), X, y, n_repeats=4,
                                     random_state=7, **kwargs)
    fast = permutation_importance(as_format_model(model), X, y, n_repeats=4,
                                  random_state=7, **kwargs)
    # The model itself: tree-aware once sapwood's scikit-learn adapter reads it.
    direct = permutation_importance(model, X, y, n_repeats=4, random_state=7, **kwargs)
    assert generic.params["evaluator"] == "generic"
    assert fast.params["evaluator"] == "tree"
    for result in (generic, fast, direct):
        assert isinstance(result, ImportanceResult)
        assert result.method == "permutation"
        np.testing.assert_array_equal(result.importances, expected.importances)
        np.testing.assert_array_equal(result.importances_mean, expected.importances_mean)
        np.testing.assert_array_equal(result.importances_std, expected.importances_std)
    names = list(X.columns) if frame else [f"x{j}" for j in range(X.shape[1])]
    assert fast.feature_names == names == generic.feature_names


@pytest.mark.parametrize("estimator", [LogisticRegression(), Ridge()], ids=["logistic", "ridge"])
def test_any_estimator_equals_sklearn(estimator):
    data = _regression() if isinstance(estimator, Ridge) else _classification()
    X_train, y_train, X_test, y_test = data
    model = estimator.fit(X_train, y_train)
    for kwargs in ({}, {"max_samples": 0.5, "random_state": np.random.RandomState(3)}):
        expected = sklearn_permutation_importance(model, X_test, y_test, n_repeats=3,
                                                  **{**kwargs, **_fresh(kwargs)})
        result = permutation_importance(model, X_test, y_test, n_repeats=3,
                                        **{**kwargs, **_fresh(kwargs)})
        if "random_state" in kwargs:
            np.testing.assert_array_equal(result.importances, expected.importances)
        else:
            assert result.importances.shape == expected.importances.shape


def _fresh(kwargs):
    # A RandomState is consumed by the call, so each call gets its own copy.
    return {"random_state": np.random.RandomState(3)} if "random_state" in kwargs else {}


@pytest.mark.parametrize("format_model", [False, True], ids=["generic", "tree"])
def test_several_scorers_return_a_dict(format_model):
    model, X, y = _fit("forest-clf", frame=False)
    scoring = {"acc": "accuracy", "auc": "roc_auc_ovr", "ll": "neg_log_loss"}
    expected = sklearn_permutation_importance(model, X, y, scoring=scoring, n_repeats=3,
                                              random_state=0)
    subject = as_format_model(model) if format_model else as_opaque_model(model)
    result = permutation_importance(subject, X, y, scoring=scoring, n_repeats=3,
                                    random_state=0)
    assert list(result) == list(scoring)
    for name in scoring:
        np.testing.assert_array_equal(result[name].importances, expected[name].importances)
        assert result[name].params["scorer"] == name
    as_list = permutation_importance(subject, X, y, scoring=["accuracy", "neg_log_loss"],
                                     n_repeats=3, random_state=0)
    np.testing.assert_array_equal(as_list["accuracy"].importances, expected["acc"].importances)


@pytest.mark.parametrize("format_model", [False, True], ids=["generic", "tree"])
def test_per_class_and_per_output_breakdown(format_model):
    model, X, y = _fit("forest-clf", frame=False)
    per_class = make_scorer(recall_score, average=None)
    expected = sklearn_permutation_importance(model, X, y, scoring=per_class, n_repeats=3,
                                              random_state=0)
    subject = as_format_model(model) if format_model else as_opaque_model(model)
    result = permutation_importance(subject, X, y, scoring=per_class, n_repeats=3,
                                    random_state=0)
    np.testing.assert_array_equal(result.extra["importances_by_output"], expected.importances)
    np.testing.assert_array_equal(result.extra["importances_mean_by_output"],
                                  expected.importances_mean)
    assert result.extra["output_labels"] == list(model.classes_)
    np.testing.assert_allclose(result.importances_mean,
                               expected.importances_mean.mean(axis=1), rtol=1e-14)

    X_train, y_train, X_test, y_test = _regression()
    y2_train = np.column_stack([y_train, np.sin(X_train[:, 0])])
    y2_test = np.column_stack([y_test, np.sin(X_test[:, 0])])
    forest = RandomForestRegressor(8, max_depth=5, random_state=0).fit(X_train, y2_train)
    per_output = make_scorer(r2_score, multioutput="raw_values")
    expected = sklearn_permutation_importance(forest, X_test, y2_test, scoring=per_output,
                                              n_repeats=3, random_state=0)
    subject = as_format_model(forest) if format_model else as_opaque_model(forest)
    result = permutation_importance(subject, X_test, y2_test, scoring=per_output,
                                    n_repeats=3, random_state=0)
    assert result.params["evaluator"] == ("tree" if format_model else "generic")
    np.testing.assert_array_equal(result.extra["importances_by_output"], expected.importances)
    assert result.extra["output_labels"] == [0, 1]


@pytest.mark.parametrize("format_model", [False, True], ids=["generic", "tree"])
@pytest.mark.parametrize("max_samples", [1.0, 0.7])
def test_groups_equal_naive_reference(format_model, max_samples):
    model, X, y = _fit("forest-reg", frame=False)
    groups = {"pair": [0, 2], "one": [1], "all_but_one": [0, 1, 2, 4], "overlap": [2, 3]}
    scorer = make_scorer(r2_score)
    subject = as_format_model(model) if format_model else as_opaque_model(model)
    result = permutation_importance(subject, X, y, scoring=scorer, n_repeats=3,
                                    random_state=5, feature_groups=groups, max_samples=max_samples)
    m = int(max_samples * X.shape[0])
    baseline, scores = naive_permutation_scores(model, X, y, scorer, list(groups.values()),
                                                3, 5, max_samples=m)
    np.testing.assert_array_equal(result.importances, baseline - scores)
    assert result.feature_names == list(groups)
    single = permutation_importance(subject, X, y, scoring=scorer, n_repeats=3,
                                    random_state=5, max_samples=max_samples)
    np.testing.assert_array_equal(result.importances[1], single.importances[1])


def test_groups_by_dataframe_column_name():
    model, X, y = _fit("forest-clf", frame=True)
    by_name = permutation_importance(as_format_model(model), X, y, n_repeats=2,
                                     random_state=0,
                                     feature_groups={"a": ["f0", "f2"], "b": ["f1"]})
    by_position = permutation_importance(as_opaque_model(model), X, y, n_repeats=2,
                                         random_state=0,
                                         feature_groups={"a": [0, 2], "b": [1]})
    np.testing.assert_array_equal(by_name.importances, by_position.importances)
    assert by_name.params["feature_groups"] == {"a": ["f0", "f2"], "b": ["f1"]}


@pytest.mark.parametrize("format_model", [False, True], ids=["generic", "tree"])
def test_sequential_equals_parallel(format_model):
    model, X, y = _fit("forest-clf", frame=False)
    subject = as_format_model(model) if format_model else as_opaque_model(model)
    results = [permutation_importance(subject, X, y, n_repeats=3, random_state=0,
                                      scoring="neg_log_loss", n_jobs=n_jobs)
               for n_jobs in (1, 2, -1)]
    for result in results[1:]:
        np.testing.assert_array_equal(result.importances, results[0].importances)


def test_seed_003_loan_table():
    # Seed 003's loan table and tree; scikit-learn's tree converted to the format until
    # sapwood's DecisionTreeClassifier is the model here.
    frame = pd.DataFrame({"car": [0, 0, 1, 0, 0, 1, 1],
                          "income": [650, 200, 700, 500, 425, 900, 550],
                          "existloan": [1, 0, 3, 0, 1, 1, 0],
                          "loan": [1, 0, 0, 0, 0, 1, 1]})
    X, y = frame.iloc[:, :-1], frame.iloc[:, -1]
    tree = DecisionTreeClassifier(criterion="entropy", max_depth=3, random_state=0).fit(X, y)
    result = permutation_importance(as_format_model(tree), X, y, n_repeats=30, random_state=0)
    assert result.params["evaluator"] == "tree"
    lines = [f"{result.feature_names[i]}  {result.importances_mean[i]:.3f} +/- "
             f"{result.importances_std[i]:.3f}" for i in result.importances_mean.argsort()[::-1]]
    assert lines == ["income  0.462 +/- 0.180", "existloan  0.195 +/- 0.078",
                     "car  0.000 +/- 0.000"]
    table = result.to_frame()
    assert list(table["feature"]) == ["income", "existloan", "car"]


def test_missing_values_follow_the_trees_missing_direction():
    X_train, y_train, X_test, y_test = _classification()
    rng = np.random.RandomState(0)
    for X in (X_train, X_test):
        X[rng.rand(*X.shape) < 0.15] = np.nan
    model = RandomForestClassifier(8, max_depth=6, random_state=0).fit(X_train, y_train)
    expected = sklearn_permutation_importance(model, X_test, y_test, n_repeats=3,
                                              random_state=0, scoring="roc_auc")
    # The format model is checked against its own predictions, scikit-learn's forest
    # tree by tree (on rows with missing values: the evaluator's general path).
    for candidate in (as_format_model(model), model):
        result = permutation_importance(candidate, X_test, y_test, n_repeats=3,
                                        random_state=0, scoring="roc_auc")
        assert result.params["evaluator"] == "tree"
        np.testing.assert_array_equal(result.importances, expected.importances)


def test_mismatched_conversion_falls_back_to_generic():
    model, X, y = _fit("forest-clf", frame=False)
    other = RandomForestClassifier(12, random_state=1).fit(X, y)
    impostor = as_format_model(model)
    impostor.to_ensemble = as_format_model(other).to_ensemble
    with pytest.warns(UserWarning, match="does not reproduce its predictions"):
        result = permutation_importance(impostor, X, y, n_repeats=2, random_state=0)
    assert result.params["evaluator"] == "generic"
    expected = sklearn_permutation_importance(model, X, y, n_repeats=2, random_state=0)
    np.testing.assert_array_equal(result.importances, expected.importances)


@pytest.mark.parametrize("kind", ["forest-clf", "tree-reg"])
def test_scikit_learn_trees_are_checked_tree_by_tree(kind, monkeypatch):
    # A scikit-learn tree or forest of its own class is checked tree by tree against
    # ``tree_.predict``; a conversion that differs sends it to the generic evaluator.
    import sapwood.importance._engine._permutation_engine as tree_module

    model, X, y = _fit(kind, frame=False)
    other = MODELS[kind]().set_params(random_state=7).fit(X, y[::-1])
    converted = tree_module.as_ensemble
    monkeypatch.setattr(tree_module, "as_ensemble", lambda m: converted(other))
    with pytest.warns(UserWarning, match="tree 0 differs"):
        result = permutation_importance(model, X, y, n_repeats=2, random_state=0)
    assert result.params["evaluator"] == "generic"
    expected = sklearn_permutation_importance(model, X, y, n_repeats=2, random_state=0)
    np.testing.assert_array_equal(result.importances, expected.importances)


def test_scikit_learn_checks_the_feature_names_of_a_frame():
    model, X, y = _fit("forest-clf", frame=True)
    shuffled = X[X.columns[::-1]]
    with pytest.raises(ValueError, match="feature names"):
        sklearn_permutation_importance(model, shuffled, y, n_repeats=2, random_state=0)
    with pytest.raises(ValueError, match="feature names"):
        permutation_importance(model, shuffled, y, n_repeats=2, random_state=0)


def test_unused_features_score_exactly_zero_and_one_row():
    model, X, y = _fit("tree-clf", frame=False)
    used = np.unique(model.tree_.feature[model.tree_.feature >= 0])
    result = permutation_importance(as_format_model(model), X, y, n_repeats=3, random_state=0)
    unused = np.setdiff1d(np.arange(X.shape[1]), used)
    assert unused.size > 0
    assert np.all(result.importances[unused] == 0.0)
    one = permutation_importance(as_format_model(model), X, y, n_repeats=2, random_state=0,
                                 max_samples=1)
    expected = sklearn_permutation_importance(model, X, y, n_repeats=2, random_state=0,
                                              max_samples=1)
    np.testing.assert_array_equal(one.importances, expected.importances)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"n_repeats": 0}, "The 'n_repeats' parameter of permutation_importance must be an int "
                       "in the range [1, inf). Got 0 instead."),
    ({"max_samples": 500}, "max_samples must be <= n_samples"),
    ({"feature_groups": {"a": [9]}}, "feature_groups['a'] names column 9"),
    ({"feature_groups": {"a": []}}, "feature_groups['a'] must be a non-empty list"),
    ({"feature_groups": {"a": [1, 1]}}, "lists a column twice"),
    ({"scoring": "no-such-score"}, "The 'scoring' parameter of permutation_importance"),
])
def test_errors_name_the_parameter(kwargs, message):
    model, X, y = _fit("tree-clf", frame=False)
    with pytest.raises(ValueError) as error:
        permutation_importance(model, X, y, **kwargs)
    assert message in str(error.value)


def test_plots_bars_and_boxes():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sapwood.plotting import plot_importance

    model, X, y = _fit("forest-clf", frame=True)
    result = permutation_importance(as_format_model(model), X, y, n_repeats=4, random_state=0)
    for kind in ("bar", "box"):
        ax = plot_importance(result, kind=kind, max_features=4)
        labels = [t.get_text() for t in ax.get_yticklabels()]
        assert len(labels) == 4
        top = result.feature_names[int(np.argmax(result.importances_mean))]
        assert labels[-1] == top
        plt.close(ax.figure)
    with pytest.raises(ValueError, match="kind must be one of"):
        plot_importance(result, kind="pie")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, ax = plt.subplots()
        assert plot_importance(result, ax=ax, max_features=None) is ax
        plt.close(ax.figure)


@pytest.mark.parametrize("labels", ["int", "str"])
@pytest.mark.parametrize("scoring", [None, "accuracy", "balanced_accuracy"])
def test_default_score_shortcut_and_repeated_outputs_equal_sklearn(labels, scoring):
    # scoring=None counts correct rows incrementally, the named scorers reuse the
    # score of equal permuted predictions; both must give scikit-learn's numbers.
    X_train, y_train, X_test, y_test = _classification(3)
    if labels == "str":
        names = np.array(["ant", "bee", "cat"])
        y_train, y_test = names[y_train], names[y_test]
    for model in (RandomForestClassifier(n_estimators=15, random_state=0),
                  RandomForestClassifier(n_estimators=15, min_samples_leaf=4,
                                         random_state=0)):
        model.fit(X_train, y_train)
        expected = sklearn_permutation_importance(model, X_test, y_test, scoring=scoring,
                                                  n_repeats=6, random_state=3)
        result = permutation_importance(as_format_model(model), X_test, y_test,
                                        scoring=scoring, n_repeats=6, random_state=3)
        assert result.params["evaluator"] == "tree"
        np.testing.assert_array_equal(result.importances, expected.importances)


@pytest.mark.parametrize("labels", ["int", "str", "unseen"])
@pytest.mark.parametrize("min_samples_leaf", [1, 4])
def test_incremental_accuracy_equals_the_scorer_on_every_permutation(labels, min_samples_leaf,
                                                                     monkeypatch):
    # With every score checked against the scorer (not only the first two), the
    # shortcut must never differ from it: its class choice is the model's argmax, ties
    # included (few trees and three classes make ties between class votes common).
    from sapwood.importance import _permutation

    X_train, y_train, X_test, y_test = _classification(3)
    names = {"int": np.array([3, 5, 9]), "str": np.array(["ant", "bee", "cat"]),
             "unseen": np.array([3, 5, 9])}[labels]
    y_train, y_test = names[y_train], names[y_test]
    if labels == "unseen":
        y_test = np.where(np.arange(y_test.shape[0]) % 7 == 0, 4, y_test)  # no class 4
    model = RandomForestClassifier(n_estimators=6, min_samples_leaf=min_samples_leaf,
                                   random_state=0).fit(X_train, y_train)
    made, scored = [], []
    make, score = _permutation._IncrementalAccuracy.make, _permutation._score

    def make_checking_all(*args):
        accuracy = make(*args)
        if accuracy is not None:
            accuracy.checks_left = 10**9
        made.append(accuracy)
        return accuracy

    monkeypatch.setattr(_permutation._IncrementalAccuracy, "make",
                        staticmethod(make_checking_all))
    monkeypatch.setattr(_permutation, "_score", lambda *a: scored.append(1) or score(*a))
    calls = []
    incremental = _permutation._IncrementalAccuracy.score
    monkeypatch.setattr(_permutation._IncrementalAccuracy, "score",
                        lambda self, *a: calls.append(1) or incremental(self, *a))
    expected = sklearn_permutation_importance(model, X_test, y_test, n_repeats=8,
                                              random_state=1)
    result = permutation_importance(model, X_test, y_test, n_repeats=8, random_state=1)
    np.testing.assert_array_equal(result.importances, expected.importances)
    assert made and made[0] is not None
    assert len(calls) > 20
    # The baseline and one check per incremental score: no score ever fell back.
    assert len(scored) == len(calls) + 1


def test_rows_that_disagree_are_named():
    import sapwood as _sapwood
    from sapwood.importance import permutation_importance as _permutation

    X = np.random.default_rng(0).normal(size=(50, 3))
    y = (X[:, 0] > 0).astype(int)
    tree = _sapwood.DecisionTreeClassifier(max_depth=2).fit(X, y)
    with pytest.raises(ValueError, match="y has 5 entries but X has 50 rows"):
        _permutation(tree, X, y[:5])


class _AnomalyLike(AucScoreMixin, RegressorMixin, BaseEstimator):
    """A model scored as scikit-learn's roc_auc scorer scores an anomaly detector: by
    ROC AUC of its decision_function (here a classifier's probability of class 1)."""

    def __init__(self, classifier=None):
        self.classifier = classifier

    def decision_function(self, X):
        return self.classifier.predict_proba(X)[:, 1]

    def predict(self, X):
        return np.where(self.decision_function(X) > 0.5, 1, -1)


def test_an_auc_score_method_has_the_per_row_draws_of_roc_auc():
    X_train, y_train, X_test, y_test = _classification()
    classifier = LogisticRegression().fit(X_train, y_train)
    expected = permutation_importance(classifier, X_test, y_test, n_repeats=3,
                                      random_state=0, scoring="roc_auc")
    # Labels 1 inlier / -1 outlier: the greater is the positive one, as roc_auc_score
    # takes two labels.
    labels = np.where(y_test == 1, 1, -1)
    model = _AnomalyLike(classifier)
    assert model.score(X_test, labels) == get_scorer("roc_auc")(classifier, X_test, y_test)
    result = permutation_importance(model, X_test, labels, n_repeats=3, random_state=0)
    np.testing.assert_array_equal(result.importances, expected.importances)
    assert expected.rank_draws is not None
    np.testing.assert_array_equal(result.rank_draws, expected.rank_draws)
    assert result.extra["intervals"] == expected.extra["intervals"]
    # Weights: roc_auc_score's weighted AUC, and no per-row draws.
    weighted = permutation_importance(model, X_test, labels, n_repeats=3, random_state=0,
                                      sample_weight=np.linspace(1, 2, len(labels)))
    assert weighted.rank_draws is None


class _ScoredDetector(AucScoreMixin, BaseEstimator):
    """An anomaly detector behind AucScoreMixin's score (the roc_auc scorer's number)."""

    def __init__(self, detector=None):
        self.detector = detector

    def decision_function(self, X):
        return self.detector.decision_function(X)

    def predict(self, X):
        return self.detector.predict(X)


def test_an_anomaly_detector_scored_by_roc_auc_has_its_per_row_draws():
    # scikit-learn's own IsolationForest with scoring="roc_auc": the scorer reads its
    # decision_function, the greater label positive, as AucScoreMixin's score does, so
    # the per-row draws are the same.
    X_train, _, X_test, y_test = _classification()
    detector = IsolationForest(n_estimators=20, random_state=0).fit(X_train)
    labels = np.where(y_test == 1, 1, -1)
    wrapped = _ScoredDetector(detector)
    assert wrapped.score(X_test, labels) == get_scorer("roc_auc")(detector, X_test, labels)
    expected = permutation_importance(wrapped, X_test, labels, n_repeats=3, random_state=0)
    result = permutation_importance(detector, X_test, labels, n_repeats=3, random_state=0,
                                    scoring="roc_auc")
    np.testing.assert_array_equal(result.importances, expected.importances)
    assert result.rank_draws is not None
    np.testing.assert_array_equal(result.rank_draws, expected.rank_draws)
    assert result.extra["intervals"] == expected.extra["intervals"]
