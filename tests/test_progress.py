"""Progress bars of the long library calls: on stderr when asked, silent otherwise, and
never a change in the numbers."""

import numpy as np
import pytest
from sklearn.datasets import make_classification

from sapwood import (
    DecisionTreeClassifier,
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    RandomForestClassifier,
)
from sapwood.importance import (
    air,
    altmann_pvalues,
    conditional_permutation_importance,
    drop_column_importance,
    oob_permutation_importance,
    permutation_importance,
    tree_shap,
)
from sapwood.selection import boruta


def _data():
    return make_classification(n_samples=120, n_features=4, n_informative=2,
                               n_redundant=0, random_state=0)


def _calls():
    X, y = _data()
    tree = DecisionTreeClassifier(max_depth=3, random_state=0)
    return {
        "drop_column": (lambda progress: drop_column_importance(
            tree, X, y, cv=3, progress=progress).importances, "drop-column refits", "5/5"),
        "altmann": (lambda progress: altmann_pvalues(
            tree, X, y, measure="mdi", n_permutations=6, random_state=0,
            progress=progress).pvalues, "refits on permuted y", "6/6"),
        "conditional": (lambda progress: conditional_permutation_importance(
            RandomForestClassifier(n_estimators=7, random_state=0).fit(X, y), X, y,
            random_state=0, n_jobs=2, progress=progress).importances,
            "conditional permutation, trees", "7/7"),
        "forest": (lambda progress: RandomForestClassifier(
            n_estimators=9, random_state=0, n_jobs=2).fit(X, y, progress=progress)
            .predict_proba(X), "Growing trees", "9/9"),
        "extra_trees": (lambda progress: ExtraTreesRegressor(
            n_estimators=5, random_state=0).fit(X, y.astype(float), None, progress)
            .predict(X), "Growing trees", "5/5"),
        "boosting": (lambda progress: GradientBoostingClassifier(
            n_estimators=8, random_state=0).fit(X, y, progress=progress)
            .decision_function(X), "Boosting stages", "8/8"),
        "permutation": (lambda progress: permutation_importance(
            RandomForestClassifier(n_estimators=7, random_state=0).fit(X, y), X, y,
            n_repeats=3, random_state=0, progress=progress).importances,
            "permuted scores", "12/12"),
        "permutation_generic": (lambda progress: permutation_importance(
            GradientBoostingClassifier(n_estimators=5, random_state=0).fit(X, y), X, y,
            n_repeats=2, random_state=0, n_jobs=2, progress=progress).importances,
            "permuted scores", "8/8"),
        "tree_shap": (lambda progress: tree_shap(
            RandomForestClassifier(n_estimators=6, random_state=0).fit(X, y), X,
            n_jobs=2, progress=progress).importances, "TreeSHAP", "6/6"),
        "oob": (lambda progress: oob_permutation_importance(
            RandomForestClassifier(n_estimators=7, random_state=0).fit(X, y), X, y,
            random_state=0, n_jobs=2, progress=progress).importances,
            "OOB permutation, trees", "7/7"),
        "air": (lambda progress: air(
            RandomForestClassifier(n_estimators=6, random_state=0), X, y, random_state=0,
            progress=progress).importances, "Growing trees", "6/6"),
        "boruta": (lambda progress: boruta(
            X, y, estimator=RandomForestClassifier(n_estimators=10), importance="mdi",
            max_rounds=4, random_state=0, progress=progress).hits, "Boruta", "4/4"),
    }


@pytest.mark.parametrize("name", ["drop_column", "altmann", "conditional", "forest",
                                  "extra_trees", "boosting", "permutation",
                                  "permutation_generic", "tree_shap", "oob", "air",
                                  "boruta"])
def test_a_bar_counts_the_steps_on_stderr_only_when_asked(name, capsys):
    call, label, count = _calls()[name]
    quiet = call(False)
    out, err = capsys.readouterr()
    assert out == "" and err == ""
    shown = call(True)
    out, err = capsys.readouterr()
    assert out == ""
    assert label in err and count in err
    np.testing.assert_array_equal(quiet, shown)


def test_boruta_that_decides_early_ends_a_full_bar(capsys):
    X, y = make_classification(n_samples=300, n_features=5, n_informative=3,
                               n_redundant=0, random_state=0)
    result = boruta(X, y, estimator=RandomForestClassifier(n_estimators=20),
                    importance="mdi", max_rounds=60, alpha=0.2, random_state=0,
                    progress=True)
    err = capsys.readouterr().err
    assert result.n_rounds < 60
    assert f"every feature decided after {result.n_rounds} rounds" in err
    assert f"{result.n_rounds}/{result.n_rounds}" in err


@pytest.mark.parametrize("call", [
    lambda X, y: drop_column_importance(DecisionTreeClassifier(), X, y, progress="yes"),
    lambda X, y: altmann_pvalues(DecisionTreeClassifier(), X, y, measure="mdi",
                                 progress=1),
    lambda X, y: boruta(X, y, progress=None),
    lambda X, y: conditional_permutation_importance(
        RandomForestClassifier(n_estimators=2).fit(X, y), X, y, progress=0),
])
def test_progress_must_be_a_bool(call):
    X, y = _data()
    with pytest.raises(ValueError, match="'progress' parameter"):
        call(X, y)


def test_boosting_that_stops_early_ends_a_full_bar(capsys):
    X, y = _data()
    model = GradientBoostingClassifier(n_estimators=500, n_iter_no_change=2,
                                       random_state=0).fit(X, y, progress=True)
    err = capsys.readouterr().err
    assert model.n_estimators_ < 500
    assert f"stopped after {model.n_estimators_}" in err


@pytest.mark.parametrize("bad", [1, "yes", None])
def test_a_fit_progress_that_is_not_a_bool_is_refused(bad):
    X, y = _data()
    with pytest.raises(TypeError, match="'progress' parameter must be True or False"):
        RandomForestClassifier(n_estimators=2).fit(X, y, progress=bad)
    with pytest.raises(TypeError, match="'progress' parameter must be True or False"):
        GradientBoostingClassifier(n_estimators=2).fit(X, y, progress=bad)
