"""The measures that run per-tree work in parallel take ``n_jobs`` as the learners do:
an explicit value is honoured, ``None`` takes an enclosing ``joblib.parallel_config``'s
and is one thread outside any (issue 40, item 7). Counted by the threads that ran each
measure's per-tree (or per-refit) work; the numbers are the same on one thread and two.
"""

import joblib
import numpy as np
import pytest
from sklearn.datasets import make_classification

import sapwood.importance._conditional as conditional_module
import sapwood.importance._drop as drop_column_module
import sapwood.importance._engine._tree_evaluator as evaluator_module
import sapwood.importance._oob as oob_module
import sapwood.importance._shap as shap_module
from sapwood.importance import (
    conditional_permutation_importance,
    drop_column_importance,
    oob_permutation_importance,
    permutation_importance,
    tree_shap,
)
from sapwood.learners import RandomForestClassifier
from tests._threads import ThreadCounter


@pytest.fixture(scope="module")
def fitted():
    X, y = make_classification(300, 5, n_informative=3, random_state=1)
    forest = RandomForestClassifier(n_estimators=16, max_depth=6, random_state=1).fit(X, y)
    return forest, X, y


def _wrap_evaluator_tasks(monkeypatch, counter):
    """Count the threads of the tree-aware permutation evaluator's kernel calls (every
    one goes through its ``_parallel``)."""
    evaluator = evaluator_module.TreeEvaluator
    parallel = evaluator._parallel

    def wrapped(task):
        function, args, kwargs = task
        return counter.wrap(function), args, kwargs

    monkeypatch.setattr(evaluator, "_parallel",
                        lambda self, tasks, meanwhile=None: parallel(
                            self, [wrapped(t) for t in tasks], meanwhile))


def _run(name, forest, X, y, n_jobs, monkeypatch, counter):
    if name == "oob":
        monkeypatch.setattr(oob_module, "oob_tree_permutation_rows",
                            counter.wrap(oob_module.oob_tree_permutation_rows))
        return oob_permutation_importance(forest, X, y, random_state=0, n_jobs=n_jobs)
    if name == "conditional":
        monkeypatch.setattr(conditional_module, "conditional_tree_permutation",
                            counter.wrap(conditional_module.conditional_tree_permutation))
        return conditional_permutation_importance(forest, X, y, random_state=0,
                                                  n_jobs=n_jobs)
    if name == "shap":
        monkeypatch.setattr(shap_module, "_piece_values", counter.wrap(shap_module._piece_values))
        return tree_shap(forest, X[:120], n_jobs=n_jobs)
    if name == "permutation":
        _wrap_evaluator_tasks(monkeypatch, counter)
        return permutation_importance(forest, X, y, n_repeats=3, random_state=0, n_jobs=n_jobs)
    if name == "drop_column":
        # Each refit clones the estimator on the thread that refits it.
        monkeypatch.setattr(drop_column_module, "clone", counter.wrap(drop_column_module.clone))
        model = RandomForestClassifier(n_estimators=3, max_depth=4, random_state=0)
        return drop_column_importance(model, X[:200], y[:200], X[200:], y[200:], n_jobs=n_jobs)
    raise AssertionError(name)


MEASURES = ["oob", "conditional", "shap", "permutation", "drop_column"]


@pytest.mark.parametrize("name", MEASURES)
@pytest.mark.parametrize(("config", "n_jobs", "threads"), [
    (None, None, 1),
    ({"n_jobs": 2}, None, 2),    # oob, conditional and drop-column ran on one before
    (None, 2, 2),
    ({"n_jobs": 2}, 1, 1),
])
def test_the_measure_runs_on_the_threads_asked_for(fitted, monkeypatch, name, config, n_jobs,
                                                   threads):
    forest, X, y = fitted
    counter = ThreadCounter()
    if config is None:
        _run(name, forest, X, y, n_jobs, monkeypatch, counter)
    else:
        with joblib.parallel_config(**config):
            _run(name, forest, X, y, n_jobs, monkeypatch, counter)
    assert len(counter) == threads


@pytest.mark.parametrize("name", MEASURES)
def test_the_numbers_are_the_same_on_one_thread_and_on_two(fitted, monkeypatch, name):
    forest, X, y = fitted
    one = _run(name, forest, X, y, None, monkeypatch, ThreadCounter(patience=0))
    with joblib.parallel_config(n_jobs=2):
        two = _run(name, forest, X, y, None, monkeypatch, ThreadCounter(patience=0))
    np.testing.assert_array_equal(one.importances_mean, two.importances_mean)
    np.testing.assert_array_equal(one.importances, two.importances)
