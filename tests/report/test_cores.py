"""explain and the command line use the cores they are given: the forest's trees are
grown on as many threads as n_jobs says (the default of both: every core)."""

import joblib
import pytest

import sapwood
import sapwood.learners._forest as forest_module
from sapwood.cli import main
from sapwood.datasets import make_ground_truth
from tests._threads import ThreadCounter

pytestmark = pytest.mark.skipif(joblib.cpu_count() < 2, reason="one core")


@pytest.fixture
def grown_by(monkeypatch):
    counter = ThreadCounter()
    monkeypatch.setattr(forest_module, "grow_tree", counter.wrap(forest_module.grow_tree))
    return counter


@pytest.fixture(scope="module")
def table():
    X, y, _ = make_ground_truth(300, task="classification", random_state=0)
    return X, y


def test_explain_grows_the_forest_on_the_threads_asked_for(grown_by, table):
    X, y = table
    sapwood.explain(X, y, model=sapwood.RandomForestClassifier(n_estimators=8), n_jobs=2,
                    methods="permutation")
    assert len(grown_by) == 2


def test_explain_uses_every_core_by_default(grown_by, table):
    X, y = table
    sapwood.explain(X, y, model=sapwood.RandomForestClassifier(n_estimators=8),
                    methods="permutation")
    assert len(grown_by) == 2


def test_explain_stays_on_one_thread_when_asked(grown_by, table):
    X, y = table
    sapwood.explain(X, y, model=sapwood.RandomForestClassifier(n_estimators=8),
                    methods="permutation", n_jobs=1)
    assert len(grown_by) == 1


def test_the_command_uses_every_core_by_default(grown_by, table, tmp_path, capsys):
    X, y = table
    path = tmp_path / "data.csv"
    X.assign(y=y).to_csv(path, index=False)
    assert main(["explain", str(path), "--target", "y", "--methods", "permutation",
                 "--quiet"]) == 0
    assert len(grown_by) == 2
