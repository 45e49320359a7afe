"""Per-row draws of permutation importance under the Brier score and log loss, and the
Brier score of a binary target whose labels are text (which scikit-learn's scorer
refuses by name)."""

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.inspection import permutation_importance as sklearn_permutation_importance
from sklearn.metrics import brier_score_loss

import sapwood
from sapwood.importance import permutation_importance
from sapwood.importance._engine._permutation_rows import ProbabilityLoss
from sapwood.importance._engine._scoring import scorer_for


def _data(n_classes, labels=None):
    X, y = make_classification(n_samples=300, n_features=5, n_informative=3,
                               n_redundant=0, n_classes=n_classes, random_state=1)
    if labels is not None:
        y = np.asarray(labels)[y]
    return X[:150], y[:150], X[150:], y[150:]


@pytest.mark.parametrize("scoring", ["neg_brier_score", "neg_log_loss"])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("learner", ["sklearn", "sapwood"])
def test_probability_scores_have_per_row_draws_whose_mean_is_the_importance(
        scoring, n_classes, learner):
    X_train, y_train, X_test, y_test = _data(n_classes)
    forest = (RandomForestClassifier if learner == "sklearn" else
              sapwood.RandomForestClassifier)(n_estimators=15, random_state=0)
    model = forest.fit(X_train, y_train)
    expected = sklearn_permutation_importance(model, X_test, y_test, scoring=scoring,
                                              n_repeats=4, random_state=0)
    result = permutation_importance(model, X_test, y_test, scoring=scoring, n_repeats=4,
                                    random_state=0)
    np.testing.assert_allclose(result.importances, expected.importances, rtol=1e-12,
                               atol=1e-12)
    draws = np.concatenate(result.rank_draws, axis=1) if isinstance(
        result.rank_draws, list | tuple) else np.asarray(result.rank_draws)
    assert draws.shape[-1] == len(y_test)
    np.testing.assert_allclose(draws.mean(axis=-1), result.importances_mean, atol=1e-10)
    assert "one draw per row" in result.extra["intervals"]["rank"]


@pytest.mark.parametrize("n_classes", [2, 3])
def test_the_per_row_loss_averages_to_the_score(n_classes):
    X_train, y_train, X_test, y_test = _data(n_classes)
    model = RandomForestClassifier(10, random_state=0).fit(X_train, y_train)
    proba = model.predict_proba(X_test)
    rows = np.arange(len(y_test))
    weights = np.random.default_rng(0).uniform(0.5, 2.0, len(y_test))
    for scoring in ProbabilityLoss.KINDS:
        for weight in (None, weights):
            loss = ProbabilityLoss.make(model, scoring, y_test, True, weight)
            score = scorer_for(model, scoring)(model, X_test, y_test, sample_weight=weight)
            assert np.mean(loss(proba, y_test, rows)) == pytest.approx(-score, rel=1e-12)


def test_brier_score_of_text_labels_reads_the_second_class():
    X_train, y_train, X_test, y_test = _data(2, labels=["no", "yes"])
    model = RandomForestClassifier(10, random_state=0).fit(X_train, y_train)
    score = scorer_for(model, "neg_brier_score")(model, X_test, y_test)
    positive = model.predict_proba(X_test)[:, 1]
    assert score == pytest.approx(-brier_score_loss(y_test == "yes", positive))
    # Unfitted: the labels of y decide.
    unfitted = scorer_for(RandomForestClassifier(), "neg_brier_score", y_train)
    assert unfitted(model, X_test, y_test) == score
    result = permutation_importance(model, X_test, y_test, scoring="neg_brier_score",
                                    n_repeats=3, random_state=0)
    assert result.importances_mean[0] > 0
