"""Boruta: the decision rule against a naive replay, hand-made rounds, ground truth."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.ensemble import GradientBoostingRegressor as SkGradientBoosting

from sapwood import RandomForestClassifier, RandomForestRegressor
from sapwood.datasets import make_ground_truth
from sapwood.importance import ImportanceResult
from sapwood.selection import BorutaResult, boruta
from tests.reference.naive_boruta import naive_boruta_decisions


class ScriptedImportance:
    """Importance callable playing back a script: ``script(round, feature) -> value``
    for real columns, 0.0 for every shadow; records the columns it was shown."""

    def __init__(self, features, script):
        self.features = set(features)
        self.script = script
        self.columns = []

    def __call__(self, model, X, y):
        self.columns.append(list(X.columns))
        n = len(self.columns)
        return np.array([self.script(n, name) if name in self.features else 0.0
                         for name in X.columns])


def _data(n_features, n_samples=20, seed=0):
    rng = np.random.default_rng(seed)
    names = [f"f{j}" for j in range(n_features)]
    return pd.DataFrame(rng.normal(size=(n_samples, n_features)), columns=names), \
        rng.normal(size=n_samples)


def _first_round_below(tail, m, alpha, max_n=100):
    """Earliest n with min(1, m * tail(n)) < alpha."""
    return next(n for n in range(1, max_n) if min(1.0, m * tail(n)) < alpha)


def test_hand_made_rounds_decide_at_the_earliest_significant_round():
    X, y = _data(8)
    always, never, tie, coin = ["f0", "f1", "f2"], ["f3", "f4"], ["f5", "f6"], ["f7"]

    def script(n, name):
        if name in always:
            return 1.0
        if name in never:
            return -1.0
        if name in tie:
            return 0.0  # equal to the shadow maximum: a hit needs ">"
        return 1.0 if n % 2 else -1.0

    importance = ScriptedImportance(X.columns, script)
    result = boruta(X, y, estimator=DummyRegressor(), importance=importance, max_rounds=14,
                    random_state=0)
    # Eight features: Bonferroni factor 8 (every feature counts, as in R).
    confirm_at = _first_round_below(lambda n: binom.sf(n - 1, n, 0.5), 8, 0.01)
    reject_at = _first_round_below(lambda n: binom.cdf(0, n, 0.5), 8, 0.01)
    assert confirm_at == reject_at == 10  # 8 / 2**10 < 0.01 <= 8 / 2**9
    assert min(1.0, 8 * binom.sf(8, 9, 0.5)) >= 0.01
    frame = result.to_frame().set_index("feature")
    assert result.confirmed == always
    assert result.rejected == never + tie
    assert result.tentative == coin
    assert (frame.loc[always + never + tie, "decided_round"] == confirm_at).all()
    assert pd.isna(frame.loc["f7", "decided_round"])
    assert result.n_rounds == 14
    np.testing.assert_array_equal(result.hits, [14, 14, 14, 0, 0, 0, 0, 7])
    # Rounds 1-10: 8 features, 8 shadows. Then rejected features leave, confirmed stay,
    # and the one undecided feature is doubled to 8 shadows (R: cbind(xSha, xSha)).
    for n, columns in enumerate(importance.columns, start=1):
        real = [c for c in columns if not c.startswith("shadow_")]
        shadows = [c for c in columns if c.startswith("shadow_")]
        assert real == (list(X.columns) if n <= 10 else always + coin)
        assert len(shadows) == 8 and columns == real + shadows
    assert len(importance.columns) == 14


def test_one_undecided_feature_gets_at_least_five_shadows():
    X, y = _data(1)
    importance = ScriptedImportance(X.columns, lambda n, name: 1.0 if n % 2 else -1.0)
    result = boruta(X, y, estimator=DummyRegressor(), importance=importance, max_rounds=3)
    assert [len(c) for c in importance.columns] == [1 + 8] * 3
    assert set(result.history["n_shadows"]) == {8}
    assert result.tentative == ["f0"]


@pytest.mark.parametrize("seed", range(6))
def test_decisions_match_naive_replay(seed):
    rng = np.random.default_rng(seed)
    n_features, max_rounds = 7, 40
    # Per-feature hit rates from never to always, so features settle at different
    # rounds (the Bonferroni factor stays the number of features, as in R).
    rates = rng.choice([0.0, 0.05, 0.3, 0.5, 0.7, 0.95, 1.0], size=n_features)
    hit_rounds = rng.uniform(size=(max_rounds, n_features)) < rates
    X, y = _data(n_features, seed=seed)
    position = {name: j for j, name in enumerate(X.columns)}
    importance = ScriptedImportance(
        X.columns, lambda n, name: 1.0 if hit_rounds[n - 1, position[name]] else -1.0)
    alpha = [0.01, 0.05, 0.2][seed % 3]
    result = boruta(X, y, estimator=DummyRegressor(), importance=importance,
                    max_rounds=max_rounds, alpha=alpha)
    decisions, decided_round, n_rounds = naive_boruta_decisions(hit_rounds.tolist(), alpha)
    assert list(result.decision) == decisions
    assert list(result.decided_round) == decided_round
    assert result.n_rounds == n_rounds
    assert len(set(decisions)) > 1  # the draw exercises more than one outcome


@pytest.mark.parametrize("seed", [0, 1])
def test_ground_truth_regression(seed):
    X, y, truth = make_ground_truth(n_samples=400, task="regression", random_state=seed)
    result = boruta(X, y, estimator=RandomForestRegressor(n_estimators=40), max_rounds=20,
                    random_state=seed)
    assert result.feature_names == list(X.columns)
    informative = [name for name, role in truth.items() if role == "informative"]
    noise = [name for name, role in truth.items() if role == "noise"]
    assert set(informative) <= set(result.confirmed)
    assert not set(noise) & set(result.confirmed)
    assert set(result.rejected) & set(noise)  # rejection happens, not only tentatives


@pytest.mark.parametrize("seed", [1, 2])
def test_ground_truth_classification_default_forest_type(seed):
    X, y, truth = make_ground_truth(n_samples=1000, random_state=seed)
    result = boruta(X, y, estimator=RandomForestClassifier(n_estimators=50), max_rounds=20,
                    random_state=seed)
    informative = [name for name, role in truth.items() if role == "informative"]
    noise = [name for name, role in truth.items() if role == "noise"]
    # In 20 rounds, with R's Bonferroni over all nine features, the weakest informative
    # column (inf_3's U-shaped effect) may still be tentative; none is ever rejected.
    assert len(set(informative) & set(result.confirmed)) >= 4
    assert not set(informative) & set(result.rejected)
    assert not set(noise) & set(result.confirmed)


def test_default_estimator_and_mdi_on_arrays():
    X, y, _ = make_ground_truth(n_samples=200, task="regression", random_state=3)
    result = boruta(X.to_numpy(), y.to_numpy(), importance="mdi", max_rounds=3,
                    random_state=0, n_jobs=2)
    assert result.feature_names == [f"x{j}" for j in range(9)]
    assert result.n_rounds == 3
    assert "RandomForestRegressor(n_jobs=2)" in result.params["estimator"]
    history = result.history
    assert list(history.columns) == ["round", "feature", "importance", "shadow_max",
                                     "n_shadows", "hit"]
    np.testing.assert_array_equal(history["hit"],
                                  history["importance"] > history["shadow_max"])


def test_out_of_bag_measures_run_on_a_bagged_forest_only():
    # UFI reads a bagged forest's out-of-bag rows, another model's held-out rows, which
    # Boruta does not have: a clear error, not the training rows taken as held out.
    X, y, _ = make_ground_truth(n_samples=200, task="regression", random_state=3)
    forest = RandomForestRegressor(n_estimators=20)
    result = boruta(X, y, estimator=forest, importance="ufi", max_rounds=3, random_state=0)
    assert result.n_rounds == 3
    assert result.history["importance"].notna().all()
    with pytest.raises(ValueError, match="'ufi' does not apply: the model is not a bagged"):
        boruta(X, y, estimator=SkGradientBoosting(n_estimators=5), importance="ufi",
               max_rounds=3, random_state=0)


def test_same_random_state_same_result_for_any_n_jobs():
    X, y, _ = make_ground_truth(n_samples=300, random_state=4)
    runs = [boruta(X, y, estimator=RandomForestClassifier(n_estimators=20, n_jobs=n_jobs),
                   max_rounds=6, random_state=7, n_jobs=n_jobs) for n_jobs in (1, 2, 1)]
    for other in runs[1:]:
        pd.testing.assert_frame_equal(runs[0].history, other.history)
        np.testing.assert_array_equal(runs[0].decision, other.decision)
    different = boruta(X, y, estimator=RandomForestClassifier(n_estimators=20),
                       max_rounds=6, random_state=8)
    assert not np.array_equal(runs[0].history["importance"],
                              different.history["importance"])


def test_seed_drives_shadows_and_estimator():
    X, y = _data(3, n_samples=30)
    y = (y > 0).astype(int)
    shown = []

    def importance(model, X_round, y_round):
        shown.append((X_round.to_numpy().copy(), model.random_state))
        return ImportanceResult(np.zeros(X_round.shape[1]), np.zeros(X_round.shape[1]),
                                list(X_round.columns), "scripted")

    for _ in range(2):
        boruta(X, y, estimator=DummyClassifier(random_state=123), importance=importance,
               max_rounds=2, random_state=np.random.RandomState(5))
    first, second = shown[:2], shown[2:]
    for (a, seed_a), (b, seed_b) in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)
        assert seed_a == seed_b != 123
    # Shadows are shuffled copies: same values, other order (5 shadows for 3 features).
    X_round = first[0][0]
    assert X_round.shape[1] == 3 + 6
    np.testing.assert_array_equal(np.sort(X_round[:, 3]), np.sort(X.to_numpy()[:, 0]))
    assert not np.array_equal(X_round[:, 3], X.to_numpy()[:, 0])
    assert not np.array_equal(X_round[:, 3], X_round[:, 6])  # each copy shuffled anew


def test_dataframe_names_and_shadow_prefix_never_collide():
    X, y = _data(2)
    X.columns = ["shadow_1", 7]
    importance = ScriptedImportance(["shadow_1", "7"], lambda n, name: 1.0)
    result = boruta(X, y, estimator=DummyRegressor(), importance=importance, max_rounds=2)
    assert result.feature_names == ["shadow_1", "7"]
    assert importance.columns[0][:2] == ["shadow_1", "7"]
    assert all(c.startswith("_shadow_") for c in importance.columns[0][2:])
    assert isinstance(result, BorutaResult)
    assert "2 tentative after 2 rounds" in repr(result)


def test_nan_importance_counts_as_zero_with_warning():
    X, y = _data(2)
    importance = ScriptedImportance(X.columns, lambda n, name: np.nan)
    with pytest.warns(RuntimeWarning, match="NaN"):
        result = boruta(X, y, estimator=DummyRegressor(), importance=importance,
                        max_rounds=1)
    assert (result.history["importance"] == 0).all()


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"alpha": 0}, ValueError, r"'alpha' parameter of boruta must be a float in the "
                               r"range \(0.0, 1.0\). Got 0 instead"),
    ({"alpha": 1.5}, ValueError, r"'alpha' .* Got 1.5 instead"),
    ({"max_rounds": 0}, ValueError, r"'max_rounds' parameter of boruta must be an int in "
                                    r"the range \[1, inf\). Got 0 instead"),
    ({"importance": "gini"}, ValueError, r"'importance' parameter of boruta must be a str "
                                         r"among .*'mdi'.*Got 'gini' instead"),
    ({"estimator": "forest"}, TypeError, r"'estimator' parameter of boruta"),
])
def test_bad_arguments_name_the_parameter(kwargs, error, match):
    X, y = _data(3)
    with pytest.raises(error, match=match):
        boruta(X, y, **kwargs)


def test_bad_inputs_say_why():
    X, y = _data(3)
    with pytest.raises(ValueError, match="same number of rows; got X with 20 and y with 19"):
        boruta(X, y[:19])
    with pytest.raises(ValueError, match=r"array of shape \(9,\).*got shape \(2,\)"):
        boruta(X, y, estimator=DummyRegressor(), importance=lambda m, X, y: [0.0, 1.0])
    with pytest.raises(ValueError, match="default estimator.*'continuous-multioutput'"):
        boruta(X, np.column_stack([y, y]))
    with pytest.raises(ValueError, match="distinct column names"):
        boruta(X.set_axis(["a", "b", "a"], axis=1), y)
    with pytest.raises(ValueError, match="bootstrap=False"):
        boruta(X, y, estimator=RandomForestRegressor(n_estimators=3, bootstrap=False))
    with pytest.raises(ValueError, match="out-of-bag|bagg"):
        boruta(X, y, estimator=SkGradientBoosting(n_estimators=3))
