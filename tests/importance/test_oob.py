"""Out-of-bag permutation importance against a naive per-tree implementation, the
randomForest summary formulas by hand, and seed 002's toy out-of-bag example."""

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import BaggingClassifier, GradientBoostingClassifier
from sklearn.ensemble import ExtraTreesClassifier as SkExtraTreesClassifier
from sklearn.ensemble import ExtraTreesRegressor as SkExtraTreesRegressor
from sklearn.ensemble import RandomForestClassifier as SkRandomForestClassifier
from sklearn.ensemble import RandomForestRegressor as SkRandomForestRegressor
from sklearn.tree import DecisionTreeClassifier as SkDecisionTreeClassifier

import sapwood
from sapwood import TreeArrays
from sapwood._kernels._oob import oob_tree_permutation, oob_tree_permutation_fast
from sapwood.importance import ImportanceResult, oob_permutation_importance
from sapwood.importance._engine._bagging import inbag_counter, randomforest_summary
from tests.reference.naive_oob import naive_oob_importance

FORESTS = {
    "sapwood-rf": (sapwood.RandomForestClassifier, sapwood.RandomForestRegressor),
    "sapwood-et": (sapwood.ExtraTreesClassifier, sapwood.ExtraTreesRegressor),
    "sklearn-rf": (SkRandomForestClassifier, SkRandomForestRegressor),
    "sklearn-et": (SkExtraTreesClassifier, SkExtraTreesRegressor),
}


def _data(task, n=300, seed=0):
    if task == "classification":
        X, y = make_classification(n, 6, n_informative=3, n_classes=3, n_clusters_per_class=1,
                                   random_state=seed)
    else:
        X, y = make_regression(n, 6, n_informative=3, noise=5.0, random_state=seed)
    X[::7, 1] = np.nan
    X[3::11, 4] = np.nan
    X[:, 5] = np.round(X[:, 5])  # ties
    return X, y


def _fit(kind, task, X, y, **params):
    cls = FORESTS[kind][task == "regression"]
    params = {"n_estimators": 7, "max_depth": 6, "random_state": 3, **params}
    if kind.endswith("-et"):
        params["bootstrap"] = True
    return cls(**params).fit(X, y)


def _assert_matches_naive(result, forest, X, y, n_repeats, random_state):
    per_tree, per_class, casewise, n_oob_trees = naive_oob_importance(
        forest, X, y, n_repeats=n_repeats, random_state=random_state)
    # Sums of squared errors cancel differently: compare at the scale of the errors.
    scale = 1.0 if per_class is not None else float(np.var(y))
    np.testing.assert_allclose(result.importances, per_tree, rtol=1e-12, atol=1e-12 * scale)
    mean, std, zscore = randomforest_summary(per_tree)
    np.testing.assert_allclose(result.importances_mean, mean, rtol=1e-12, atol=1e-12 * scale)
    np.testing.assert_allclose(result.importances_std, std, rtol=1e-9, atol=1e-12 * scale)
    np.testing.assert_array_equal(result.extra["n_oob_trees"], n_oob_trees)
    np.testing.assert_allclose(result.extra["casewise"], casewise, rtol=1e-12,
                               atol=1e-12 * scale)
    if per_class is not None:
        np.testing.assert_allclose(result.extra["per_class"].to_numpy(), per_class.mean(-1),
                                   rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(result.extra["per_class_std"].to_numpy(),
                                   randomforest_summary(per_class)[1], rtol=1e-9, atol=1e-15)
    else:
        assert "per_class" not in result.extra


@pytest.mark.parametrize("kind", list(FORESTS))
@pytest.mark.parametrize("task", ["classification", "regression"])
@pytest.mark.parametrize("n_repeats", [1, 2])
def test_equals_naive_per_tree_implementation(kind, task, n_repeats):
    X, y = _data(task)
    forest = _fit(kind, task, X, y)
    result = oob_permutation_importance(forest, X, y, n_repeats=n_repeats, random_state=11)
    assert isinstance(result, ImportanceResult)
    assert result.method == "oob_permutation"
    assert result.importances.shape == (X.shape[1], 7)
    assert result.extra["casewise"].shape == X.shape
    assert result.params["n_repeats"] == n_repeats
    _assert_matches_naive(result, forest, X, y, n_repeats, 11)


@pytest.mark.parametrize("kind", ["sapwood-rf", "sklearn-rf"])
def test_weighted_and_subsampled_bootstrap_rows(kind):
    """Bootstrap rows drawn with class weights (``choice`` with probabilities) and
    ``max_samples``: the in-bag counts are the forest's own ``estimators_samples_``."""
    X, y = _data("classification")
    forest = _fit(kind, "classification", X, y, class_weight="balanced", max_samples=0.6)
    counts = inbag_counter(forest)
    for t, drawn in enumerate(forest.estimators_samples_):
        np.testing.assert_array_equal(counts(t), np.bincount(drawn, minlength=len(y)))
    result = oob_permutation_importance(forest, X, y, random_state=0)
    _assert_matches_naive(result, forest, X, y, 1, 0)


def test_sapwood_and_sklearn_forests_agree():
    """sapwood grows scikit-learn's forest tree by tree, so the importances coincide."""
    X, y = _data("classification")
    ours = oob_permutation_importance(_fit("sapwood-rf", "classification", X, y), X, y,
                                      random_state=4)
    theirs = oob_permutation_importance(_fit("sklearn-rf", "classification", X, y), X, y,
                                        random_state=4)
    np.testing.assert_array_equal(ours.importances, theirs.importances)


def test_unused_feature_contributes_zero_and_still_counts():
    X, y = _data("classification")
    X[:, 3] = 1.0  # constant: no tree can split on it
    forest = _fit("sapwood-rf", "classification", X, y, max_depth=2)
    result = oob_permutation_importance(forest, X, y, random_state=0)
    assert (result.importances[3] == 0.0).all()
    assert result.importances_mean[3] == 0.0 and result.importances_std[3] == 0.0
    assert result.extra["zscore"][3] == 0.0
    assert (result.extra["casewise"][:, 3][result.extra["n_oob_trees"] > 0] == 0.0).all()
    # Trees that do not split on a feature give exactly 0 for it, and N is all trees.
    checked = 0
    for t, tree in enumerate(forest.estimators_):
        unused = np.setdiff1d(np.arange(X.shape[1]), tree.tree_.feature[tree.tree_.feature >= 0])
        assert (result.importances[unused, t] == 0.0).all()
        checked += len(unused)
    assert checked > len(forest.estimators_)
    np.testing.assert_allclose(result.importances_mean, result.importances.sum(axis=1) / 7,
                               rtol=1e-15)


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_sequential_equals_parallel(task):
    X, y = _data(task)
    forest = _fit("sapwood-rf", task, X, y)
    one = oob_permutation_importance(forest, X, y, n_repeats=2, random_state=7, n_jobs=1)
    two = oob_permutation_importance(forest, X, y, n_repeats=2, random_state=7, n_jobs=2)
    np.testing.assert_array_equal(one.importances, two.importances)
    np.testing.assert_array_equal(one.importances_std, two.importances_std)
    np.testing.assert_array_equal(one.extra["casewise"], two.extra["casewise"])


def test_random_state_reproducible():
    X, y = _data("classification")
    forest = _fit("sapwood-rf", "classification", X, y)
    first = oob_permutation_importance(forest, X, y, random_state=5)
    again = oob_permutation_importance(forest, X, y, random_state=np.random.RandomState(5))
    other = oob_permutation_importance(forest, X, y, random_state=6)
    np.testing.assert_array_equal(first.importances, again.importances)
    np.testing.assert_array_equal(first.extra["casewise"], again.extra["casewise"])
    assert not np.array_equal(first.importances, other.importances)


def test_dataframe_feature_names_and_labels():
    X, y = _data("classification")
    frame = pd.DataFrame(np.nan_to_num(X), columns=[f"c{j}" for j in range(6)])
    labels = np.array(["ant", "bee", "cat"])[y]
    forest = _fit("sapwood-rf", "classification", frame, labels)
    result = oob_permutation_importance(forest, frame, labels, random_state=0)
    assert result.feature_names == list(frame.columns)
    assert list(result.extra["per_class"].columns) == ["ant", "bee", "cat"]
    assert list(result.extra["per_class"].index) == list(frame.columns)
    _assert_matches_naive(result, forest, frame.to_numpy(), labels, 1, 0)


def test_randomforest_summary_by_hand():
    per_tree = np.array([[0.1, 0.3, 0.2],
                         [0.0, 0.0, 0.0],
                         [0.5, -0.5, 0.0],
                         [0.25, 0.25, 0.25]])
    mean, std, zscore = randomforest_summary(per_tree)
    # Row 0: mean 0.2, mean of squares 0.14 / 3, SD = sqrt((0.14/3 - 0.04) / 3).
    sd0 = np.sqrt((0.14 / 3 - 0.04) / 3)
    sd2 = np.sqrt((0.5 / 3 - 0.0) / 3)
    np.testing.assert_allclose(mean, [0.2, 0.0, 0.0, 0.25], rtol=1e-15, atol=1e-17)
    np.testing.assert_allclose(std, [sd0, 0.0, sd2, 0.0], rtol=1e-12)
    # SD below machine epsilon is replaced by 1 in the z-score.
    np.testing.assert_allclose(zscore, [0.2 / sd0, 0.0, 0.0, 0.25], rtol=1e-12, atol=1e-17)


def test_result_summary_is_the_randomforest_formula():
    X, y = _data("regression")
    forest = _fit("sklearn-rf", "regression", X, y)
    result = oob_permutation_importance(forest, X, y, random_state=2)
    pi_t = result.importances
    n = pi_t.shape[1]
    pi = pi_t.sum(axis=1) / n
    sd = np.sqrt(np.maximum((pi_t**2).sum(axis=1) / n - pi**2, 0) / n)
    np.testing.assert_allclose(result.importances_mean, pi, rtol=1e-12)
    np.testing.assert_allclose(result.importances_std, sd, rtol=1e-9)
    np.testing.assert_allclose(result.extra["zscore"], pi / np.where(sd < 2.2e-16, 1, sd),
                               rtol=1e-9)


def test_seed002_toy_out_of_bag_example():
    """Seed 002: 10 instances, tree 1 drawn as 10 9 7 8 1 3 9 10 10 7 has OOB rows
    2, 4, 5, 6; X2 on them is 2, 3, 5, 7 and is permuted to 5, 7, 2, 3; the tree
    predicts P P N P before and N P N P after, so accuracy drops 0.75 -> 0.5."""
    y = np.array(list("NPPNNPNNNP"))
    target = (y == "P").astype(np.float64)  # class codes: N = 0, P = 1
    X = np.zeros((10, 4), dtype=np.float32)
    X[:, 0] = np.arange(10)
    X[[1, 3, 4, 5], 0] = [1, 2, 3, 4]
    X[[1, 3, 4, 5], 1] = [2, 3, 5, 7]
    X[:, 2] = 10 + X[:, 0]
    X[:, 3] = 100 + X[:, 0]
    # A tree giving the seed's predictions (node: test -> left, right):
    # 0: X1 <= 2.5 -> 1, 2;  1: X2 <= 4 -> leaf 3 (P), 5;  2: X1 <= 3.5 -> leaf 4 (N), leaf 6 (P)
    # 5: X2 <= 6 -> leaf 7 (N), leaf 8 (P)
    left = [1, 3, 4, -1, -1, 7, -1, -1, -1]
    right = [2, 5, 6, -1, -1, 8, -1, -1, -1]
    feature = [0, 1, 0, -2, -2, 1, -2, -2, -2]
    threshold = [2.5, 4.0, 3.5, -2, -2, 6.0, -2, -2, -2]
    leaf_class = np.array([0, 0, 0, 1, 0, 0, 1, 0, 1], dtype=np.float64)
    value = np.zeros((9, 1, 2))
    value[np.arange(9), 0, leaf_class.astype(int)] = 1.0
    tree = TreeArrays(children_left=left, children_right=right, feature=feature,
                      threshold=threshold, impurity=np.zeros(9), n_node_samples=np.ones(9),
                      weighted_n_node_samples=np.ones(9), value=value,
                      missing_go_to_left=np.zeros(9), operator=np.zeros(9), n_features=4)
    drawn = np.array([10, 9, 7, 8, 1, 3, 9, 10, 10, 7]) - 1
    oob = np.flatnonzero(np.bincount(drawn, minlength=10) == 0)
    assert (oob + 1).tolist() == [2, 4, 5, 6]
    identity = np.arange(4)
    permutations = np.stack([identity, [2, 3, 0, 1], identity, identity])[None]
    base_loss, increase, by_class, casewise = oob_tree_permutation(
        X, oob, target[oob], target[oob].astype(np.intp), 2, True, tree.children_left,
        tree.children_right, tree.feature, tree.threshold, tree.missing_go_to_left,
        tree.operator, tree.cat_bitsets, leaf_class, permutations)
    assert 1 - base_loss.mean() == 0.75  # predictions P P N P against P N N P
    assert increase[1] / 4 == 0.25  # 0.75 - 0.5
    assert increase[[0, 2, 3]].tolist() == [0.0, 0.0, 0.0]  # identity / unused features
    # Row 2 becomes wrong (+1); row 4 is wrong both times (0); rows 5, 6 stay right.
    assert casewise[:, 1].tolist() == [1.0, 0.0, 0.0, 0.0]
    assert by_class[1].tolist() == [0.0, 1.0]  # the lost case is a P


@pytest.mark.parametrize("operator", [0, 1])
def test_kernel_on_ties_operators_and_missing_directions(operator):
    """The kernel on trees whose thresholds are data values (ties at every split), with
    ``<=`` or ``<`` and random missing-value directions, against routing every
    permuted copy of the OOB rows from the root with ``TreeArrays.apply``."""
    X, y = _data("regression", n=200)
    X = np.round(X, 1).astype(np.float32)
    forest = _fit("sapwood-rf", "regression", X, y, n_estimators=3)
    rng = np.random.RandomState(0)
    for grown in forest.estimators_:
        fields = grown.tree_.to_dict()
        split = fields["children_left"] >= 0
        threshold = fields["threshold"].copy()
        picked = X[rng.randint(0, len(X), split.sum()), fields["feature"][split]]
        threshold[split] = np.where(np.isnan(picked), threshold[split], picked)
        tree = TreeArrays(**{**fields, "threshold": threshold,
                             "operator": np.full(len(threshold), operator),
                             "missing_go_to_left": rng.randint(0, 2, len(threshold))})
        oob = np.sort(rng.choice(len(X), 80, replace=False))
        permutations = np.stack([[rng.permutation(80) for _ in range(6)] for _ in range(2)])
        prediction = tree.value[:, 0, 0]
        base_loss, increase, _, casewise = oob_tree_permutation(
            X, oob, y[oob], np.zeros(80, dtype=np.intp), 1, False, tree.children_left,
            tree.children_right, tree.feature, tree.threshold, tree.missing_go_to_left,
            tree.operator, tree.cat_bitsets, prediction, permutations)
        error = (y[oob] - prediction[tree.apply(X[oob])]) ** 2
        np.testing.assert_array_equal(base_loss, error)
        expected = np.zeros((80, 6))
        for r in range(2):
            for j in range(6):
                X_permuted = X[oob].copy()
                X_permuted[:, j] = X[oob][permutations[r, j], j]
                expected[:, j] += (y[oob] - prediction[tree.apply(X_permuted)]) ** 2 - error
        np.testing.assert_allclose(casewise, expected, rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(increase, expected.sum(axis=0), rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("model, match", [
    (sapwood.RandomForestClassifier(n_estimators=3, bootstrap=False), "bootstrap=False"),
    (sapwood.ExtraTreesClassifier(n_estimators=3), "bootstrap=False"),
    (SkExtraTreesClassifier(n_estimators=3), "bootstrap=False"),
    (GradientBoostingClassifier(n_estimators=3), "no bootstrap record"),
    (SkDecisionTreeClassifier(), "no bootstrap record"),
    (BaggingClassifier(n_estimators=3), "no bootstrap record"),
])
def test_models_without_bagging_are_refused(model, match):
    X, y = _data("classification", n=60)
    X = np.nan_to_num(X)
    model.fit(X, y)
    with pytest.raises(ValueError, match=match):
        oob_permutation_importance(model, X, y)


def test_bad_arguments():
    X, y = _data("classification", n=80)
    forest = _fit("sapwood-rf", "classification", X, y)
    with pytest.raises(ValueError, match="training data"):
        oob_permutation_importance(forest, X[:50], y[:50])
    with pytest.raises(ValueError, match="n_repeats"):
        oob_permutation_importance(forest, X, y, n_repeats=0)
    with pytest.raises(ValueError, match="labels the forest was not fit on"):
        oob_permutation_importance(forest, X, np.where(y == 0, 9, y))
    with pytest.raises(ValueError, match="features"):
        oob_permutation_importance(forest, X[:, :4], y)
    two_outputs = np.column_stack([y, y]).astype(float)
    regressor = _fit("sapwood-rf", "regression", X, two_outputs)
    with pytest.raises(ValueError, match="single-output"):
        oob_permutation_importance(regressor, X, two_outputs)


@pytest.mark.parametrize("operator", [0, 1])
@pytest.mark.parametrize("task", ["classification", "regression"])
def test_fast_kernel_equals_general_kernel_on_finite_data(operator, task):
    """``oob_tree_permutation_fast`` (finite data) gives ``oob_tree_permutation``'s outputs
    bit for bit, with ``<=`` or ``<`` splits and permuted values at thresholds."""
    X, y = _data(task, n=240)
    X = np.round(np.nan_to_num(X), 1).astype(np.float32)
    forest = _fit("sapwood-rf", task, X, y, n_estimators=3, max_depth=None)
    rng = np.random.RandomState(1)
    for grown in forest.estimators_:
        fields = grown.tree_.to_dict()
        split = fields["children_left"] >= 0
        threshold = fields["threshold"].copy()
        threshold[split] = X[rng.randint(0, len(X), split.sum()), fields["feature"][split]]
        tree = TreeArrays(**{**fields, "threshold": threshold,
                             "operator": np.full(len(threshold), operator)})
        oob = np.sort(rng.choice(len(X), 100, replace=False))
        permutations = np.stack([[rng.permutation(100) for _ in range(6)] for _ in range(3)])
        values = tree.value[:, 0, :]
        classification = task == "classification"
        prediction = (np.argmax(values, axis=1).astype(np.float64) if classification
                      else np.ascontiguousarray(values[:, 0]))
        codes = (y[oob] if classification else np.zeros(100)).astype(np.intp)
        args = (X, oob, (codes if classification else y[oob]).astype(np.float64), codes,
                3 if classification else 1, classification, tree.children_left,
                tree.children_right, tree.feature, tree.threshold, tree.missing_go_to_left,
                tree.operator, tree.cat_bitsets, prediction, permutations)
        for fast, general in zip(oob_tree_permutation_fast(*args), oob_tree_permutation(*args),
                                 strict=True):
            np.testing.assert_array_equal(fast, general)


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_finite_data_equals_naive_per_tree_implementation(task):
    X, y = _data(task)
    X = np.nan_to_num(X)
    forest = _fit("sklearn-rf", task, X, y)
    result = oob_permutation_importance(forest, X, y, n_repeats=2, random_state=4)
    _assert_matches_naive(result, forest, X, y, 2, 4)
