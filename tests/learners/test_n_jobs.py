"""``n_jobs`` of the learners: an explicit value is honoured, ``None`` takes an enclosing
``joblib.parallel_config``'s and is one thread outside any (scikit-learn's convention).

The trees grown are counted by thread: joblib 1.6 resolves ``Parallel(n_jobs=None,
prefer="threads")`` under ``parallel_config(n_jobs=2)`` to one job, so a forest fit in
the command line's ``parallel_config`` grew every tree on one thread (issue 40, item 7).
"""

import joblib
import numpy as np
import pytest
from sklearn.datasets import make_classification

import sapwood.learners._forest as forest_module
from sapwood.learners import ExtraTreesRegressor, RandomForestClassifier
from sapwood.learners._parallel import resolve_n_jobs
from tests._threads import ThreadCounter


@pytest.fixture
def grown_by(monkeypatch):
    counter = ThreadCounter()
    monkeypatch.setattr(forest_module, "grow_tree", counter.wrap(forest_module.grow_tree))
    return counter


def _data():
    return make_classification(300, 6, n_informative=3, random_state=0)


@pytest.mark.parametrize(("config", "n_jobs", "threads"), [
    (None, None, 1),                      # scikit-learn: one thread outside any config
    ({"n_jobs": 2}, None, 2),             # the CLI's wrapping: one thread before the fix
    ({"n_jobs": -1}, None, 2),            # every core (the test host has at least 2)
    ({"backend": "threading", "n_jobs": 2}, None, 2),
    (None, 2, 2),                         # explicit n_jobs
    ({"n_jobs": 2}, 1, 1),                # explicit n_jobs wins over the configuration
])
def test_the_trees_are_grown_on_the_threads_asked_for(grown_by, config, n_jobs, threads):
    if threads > 1 and joblib.cpu_count() < 2 and config == {"n_jobs": -1}:
        pytest.skip("one core")
    X, y = _data()
    model = RandomForestClassifier(n_estimators=8, random_state=0, n_jobs=n_jobs)
    if config is None:
        model.fit(X, y)
    else:
        with joblib.parallel_config(**config):
            model.fit(X, y)
    assert len(grown_by) == threads


def test_the_forest_is_the_same_on_one_thread_and_on_two():
    X, y = _data()
    X[::7, 2] = np.nan
    one = ExtraTreesRegressor(n_estimators=12, random_state=3, bootstrap=True).fit(X, y)
    with joblib.parallel_config(n_jobs=2):
        two = ExtraTreesRegressor(n_estimators=12, random_state=3, bootstrap=True).fit(X, y)
        predicted_two = two.predict(X)
    for a, b in zip(one.estimators_, two.estimators_, strict=True):
        for name in ("children_left", "children_right", "feature", "threshold", "value"):
            np.testing.assert_array_equal(getattr(a.tree_, name), getattr(b.tree_, name))
    np.testing.assert_array_equal(one.predict(X), predicted_two)
    np.testing.assert_array_equal(one.feature_importances_, two.feature_importances_)


def test_resolve_n_jobs_follows_scikit_learn():
    assert resolve_n_jobs(None) == 1
    assert resolve_n_jobs(3) == 3
    assert resolve_n_jobs(-1) == joblib.cpu_count()
    with joblib.parallel_config(n_jobs=2):
        assert resolve_n_jobs(None) == 2
        assert resolve_n_jobs(1) == 1
    with joblib.parallel_backend("threading", n_jobs=3):
        assert resolve_n_jobs(None) == 3
    with pytest.raises(ValueError):
        resolve_n_jobs(0)
