"""Before a measure that will take more than about a minute, the run says so."""

import io

import numpy as np
import pandas as pd
import pytest
from rich.console import Console

import sapwood
from sapwood.report import _cost
from sapwood.report._cost import Timing, expected_seconds, long_wait
from sapwood.report._measures import MEASURES, Inputs


def _inputs(n_train=750, n_test=250, n_features=20, cv=None):
    X = pd.DataFrame(np.zeros((n_train + n_test, n_features)))
    return Inputs(X_train=X.iloc[:n_train], y_train=None, X_test=X.iloc[n_train:],
                  y_test=None, cv=cv)


def test_drop_counts_its_refits():
    seconds, what = expected_seconds(MEASURES["drop"], _inputs(), Timing(fit=10, score=1), 20)
    assert seconds == 21 * 10 and "21 times" in what
    seconds, _ = expected_seconds(MEASURES["drop"], _inputs(cv=5), Timing(fit=10, score=1), 20)
    assert seconds == 21 * 5 * 10


def test_shuffles_count_features_and_repeats():
    timing = Timing(fit=1, score=2.0)
    seconds, what = expected_seconds(MEASURES["permutation"], _inputs(), timing, 20)
    assert seconds == pytest.approx(5 * 20 * 2.0 * _cost.REROUTED) and "100 shuffles" in what
    generic, _ = expected_seconds(MEASURES["permutation"], _inputs(), timing, 20,
                                  tree_model=False)
    assert generic == pytest.approx(5 * 20 * 2.0)
    # Out-of-bag: a third of the three times more training rows.
    oob, _ = expected_seconds(MEASURES["oob"], _inputs(), timing, 20)
    assert oob > 0
    assert expected_seconds(MEASURES["shap"], _inputs(), timing, 20) is None


def test_many_features_share_the_trees():
    # A wide table's shuffles each re-route fewer nodes: 1,500 features cost about what
    # SPREAD do (B-CHECKS-estimate); a model without trees scores every shuffle whole.
    timing = Timing(fit=1, score=2.0)
    wide = _inputs(n_features=1_500)
    seconds, what = expected_seconds(MEASURES["permutation"], wide, timing, 1_500)
    assert seconds == pytest.approx(5 * _cost.SPREAD * 2.0 * _cost.REROUTED)
    assert "7,500 shuffles" in what
    generic, _ = expected_seconds(MEASURES["permutation"], wide, timing, 1_500,
                                  tree_model=False)
    assert generic == pytest.approx(5 * 1_500 * 2.0)


def test_the_sentence_comes_only_past_a_minute():
    assert long_wait(MEASURES["drop"], _inputs(), Timing(fit=1, score=1), 20) is None
    text = long_wait(MEASURES["drop"], _inputs(), Timing(fit=30, score=1), 20)
    assert text.startswith("drop importance will take about 10 minutes")
    assert long_wait(MEASURES["drop"], _inputs(), Timing(fit=None, score=1), 20) is None
    assert long_wait(MEASURES["drop"], _inputs(), None, 20) is None


def test_explain_says_it_before_the_measure_starts(monkeypatch):
    monkeypatch.setattr(_cost, "LONG", 0.0)  # every guessed measure is "long"
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(200, 3)), columns=list("abc"))
    y = X["a"] + rng.normal(size=200)
    out = io.StringIO()
    console = Console(file=out, width=200, force_terminal=False)
    sapwood.explain(X, y, methods="mdi,drop", progress=console,
                    model=sapwood.DecisionTreeRegressor(max_depth=3))
    text = out.getvalue()
    assert "drop importance will take about" in text
    assert "mdi importance will take" not in text
    assert text.index("drop importance will take") < text.index("Computing drop importance")
