"""The seed documents' worked examples, checked against scikit-learn now and against
sapwood's own learners once they land (the ``sapwood`` parametrisations skip
until then).

Where a seed's hand arithmetic is wrong the test says so and checks both the
seed's own arithmetic (so the error is pinned down) and the correct value.
Seed numbers are printed to 4 decimals, hence ``abs=5e-5``.
"""

import numpy as np
import pytest
from sklearn.model_selection import train_test_split

from sapwood.datasets import load_loan
from sapwood.export import export_graphviz, export_text
from sapwood.importance import mdi

SEED = pytest.approx  # for numbers copied from a seed document
FOUR_DECIMALS = 5e-5


def entropy(counts):
    """Shannon entropy in bits of class counts or fractions (0 log 0 = 0)."""
    p = np.asarray(counts, dtype=float)
    p = p[p > 0] / p.sum()
    return float(-(p * np.log2(p)).sum())


def gini(counts):
    p = np.asarray(counts, dtype=float) / np.sum(counts)
    return float(1 - (p**2).sum())


def seed000_importances(trees):
    """Seed 000's loop, verbatim in spirit: per tree, for each split node add
    (n_t/n)(I_t - n_tl/n_t I_tl - n_tr/n_t I_tr) to its feature, normalise, then
    average over trees. It reads only sklearn ``tree_`` field names, which the tree
    format shares."""
    total = np.zeros(trees[0].n_features)
    for tree in trees:
        fi = np.zeros(tree.n_features)
        n = tree.weighted_n_node_samples[0]
        for idx, feat in enumerate(tree.feature):
            if feat < 0:
                continue
            left, right = tree.children_left[idx], tree.children_right[idx]
            nt = tree.weighted_n_node_samples[idx]
            ntl, ntr = tree.weighted_n_node_samples[left], tree.weighted_n_node_samples[right]
            fi[feat] += (nt / n) * (tree.impurity[idx] - ntl / nt * tree.impurity[left]
                                    - ntr / nt * tree.impurity[right])
        total += fi / fi.sum()
    return total / len(trees)


# -- seed 003: entropy, information gain, the loan tables --------------------------

def test_seed003_entropy_and_information_gain_by_hand():
    # 10 balls, 6 red and 4 green.
    assert entropy([6, 4]) == SEED(0.9710, abs=FOUR_DECIMALS)
    # The seed averages the two regions' entropies with equal weights 1/2 (its
    # formula has 1/m); for the vertical split (6 balls left, 4 right) CART's
    # size-weighted average would be 0.7145 instead.
    vertical = (entropy([5, 1]) + entropy([1, 3])) / 2
    horizontal = (entropy([4, 1]) + entropy([2, 3])) / 2
    assert vertical == SEED(0.7307, abs=FOUR_DECIMALS)
    assert horizontal == SEED(0.8464, abs=FOUR_DECIMALS)
    assert entropy([6, 4]) - vertical == SEED(0.2403, abs=FOUR_DECIMALS)
    # The seed subtracts its rounded entropies (0.9710 - 0.8464); unrounded: 0.12451.
    assert round(entropy([6, 4]), 4) - round(horizontal, 4) == SEED(0.1246, abs=1e-12)
    assert entropy([6, 4]) - horizontal == SEED(0.12451, abs=1e-5)
    assert 0.6 * entropy([5, 1]) + 0.4 * entropy([1, 3]) == SEED(0.7145, abs=FOUR_DECIMALS)
    # The loan tables' root entropies.
    assert entropy([4, 2]) == SEED(0.9183, abs=FOUR_DECIMALS)
    assert entropy([4, 3]) == SEED(0.9852, abs=FOUR_DECIMALS)
    assert entropy([1, 3]) == SEED(0.8113, abs=FOUR_DECIMALS)


def _candidate_splits(frame):
    """Every ``column <= v`` split of the 6-row table with its class counts
    (False group first, as the seed's groupby orders them)."""
    for column in ["car", "income", "existloan"]:
        for v in sorted(frame[column].unique())[:-1]:
            goes_left = frame[column] <= v
            groups = [np.bincount(frame.loc[mask, "loan"], minlength=2)
                      for mask in (~goes_left, goes_left)]
            yield column, v, groups


def test_seed003_candidate_table_weights_by_class_not_by_group():
    """The seed's candidate table (MaxIG income <= 700: 0.677653) weights each
    group's entropy by the share of a *class* (``counts.sum(0)``) instead of the
    share of the *group*. That reproduces every number it prints; weighting by group
    size, as CART does, picks income between 500 and 650 (scikit-learn: 575)."""
    frame = load_loan(6).frame
    base = entropy(frame["loan"].value_counts())
    class_share = np.bincount(frame["loan"]) / len(frame)
    seed_gain, cart_gain = {}, {}
    for column, v, groups in _candidate_splits(frame):
        entropies = np.array([entropy(g) for g in groups])
        sizes = np.array([g.sum() for g in groups]) / len(frame)
        seed_gain[column, v] = base - (class_share * entropies).sum()
        cart_gain[column, v] = base - (sizes * entropies).sum()
    printed = {("car", 0): -0.0188, ("income", 200): 0.2710, ("income", 425): 0.2516,
               ("income", 500): 0.3061, ("income", 650): -0.0188, ("income", 700): 0.6777,
               ("existloan", 0): 0.2516, ("existloan", 1): 0.5946}
    assert seed_gain == {key: SEED(value, abs=FOUR_DECIMALS) for key, value in printed.items()}
    assert seed_gain["income", 700] == SEED(0.677653, abs=5e-7)
    assert max(cart_gain, key=cart_gain.get) == ("income", 500)
    assert cart_gain["income", 500] == SEED(entropy([4, 2]) / 2)


def test_seed003_six_rows_split_income_575(make_tree, in_tree_format):
    X, y = load_loan(6, return_X_y=True)
    model = make_tree(criterion="entropy", max_depth=3, random_state=0).fit(X, y)
    tree = in_tree_format(model).trees[0]
    assert (tree.feature[0], tree.threshold[0]) == (1, 575.0)
    assert (tree.feature[2], tree.threshold[2]) == (2, 2.0)
    np.testing.assert_allclose(model.feature_importances_, [0.0, 0.5, 0.5])
    # Root gain, CART-weighted: half the root entropy (see the test above).
    trace = mdi(model).trace
    assert trace["decrease"].iloc[0] == pytest.approx(entropy([4, 2]) / 2, rel=1e-12)


@pytest.mark.parametrize("random_state", [0, 1, 42])
def test_seed003_seven_rows_importances_and_node_table(make_tree, random_state):
    X, y = load_loan(7, return_X_y=True)
    model = make_tree(criterion="entropy", max_depth=3, random_state=random_state).fit(X, y)
    np.testing.assert_allclose(model.feature_importances_, [0, 0.5295, 0.4705],
                               atol=FOUR_DECIMALS)
    result = mdi(model, feature_names=["car", "income", "existloan"])
    np.testing.assert_allclose(result.importances_mean, model.feature_importances_,
                               rtol=1e-12)
    trace = result.trace.set_index("node")
    # The seed's table: IG_income = 7/7 * 0.9852 - 3/7 * 0 - 4/7 * 0.8113 = 0.5216,
    # IG_existloan = 4/7 * 0.8113 - 1/4 * 0 - 3/4 * 0 = 0.4636.
    root, right = trace.loc[0], trace.loc[2]
    assert (root["feature"], root["threshold"]) == ("income", 525.0)
    assert (right["feature"], right["threshold"]) == ("existloan", 2.0)
    assert [root[c] for c in ("w", "w_left", "w_right")] == [7, 3, 4]
    assert [right[c] for c in ("w", "w_left", "w_right")] == [4, 3, 1]
    assert root["impurity"] == SEED(0.9852, abs=FOUR_DECIMALS)
    assert root["impurity_right"] == right["impurity"] == SEED(0.8113, abs=FOUR_DECIMALS)
    assert root["impurity_left"] == right["impurity_left"] == right["impurity_right"] == 0
    assert root["decrease"] == SEED(0.5216, abs=FOUR_DECIMALS)
    assert right["decrease"] == SEED(0.4636, abs=FOUR_DECIMALS)
    assert root["decrease"] == pytest.approx(entropy([4, 3]) - 4 / 7 * entropy([1, 3]))


def test_seed003_seven_row_tree_exported(make_tree, in_tree_format):
    """The seed draws this tree with export_graphviz(feature_names, class_names,
    filled, rounded, special_characters); sapwood writes the same DOT and text."""
    from sklearn.tree import DecisionTreeClassifier
    from sklearn.tree import export_graphviz as sklearn_export_graphviz

    X, y = load_loan(7, return_X_y=True)
    model = make_tree(criterion="entropy", max_depth=3, random_state=0).fit(X, y)
    names, classes = ["car", "income", "existloan"], ["대출 불가능", "대출 가능"]
    reference = DecisionTreeClassifier(criterion="entropy", max_depth=3,
                                       random_state=0).fit(X, y)
    options = dict(feature_names=names, class_names=classes, filled=True, rounded=True,
                   special_characters=True)
    expected = sklearn_export_graphviz(reference, **options)
    tree = in_tree_format(model).trees[0]
    assert export_graphviz(tree, criterion="entropy", **options) == expected
    assert export_text(tree, feature_names=names, class_names=classes) == (
        "|--- income <= 525.00\n"
        "|   |--- class: 대출 불가능\n"
        "|--- income >  525.00\n"
        "|   |--- existloan <= 2.00\n"
        "|   |   |--- class: 대출 가능\n"
        "|   |--- existloan >  2.00\n"
        "|   |   |--- class: 대출 불가능\n")


# -- seed 001: Gini impurity and node importance ------------------------------------

def test_seed001_node_importance_arithmetic():
    """I(C) = w G(C) - w_left G(C_left) - w_right G(C_right) with the seed's own
    numbers gives its 0.25. Its child Ginis are miscomputed, though:
    1 - (150/200)^2 - (50/200)^2 = 0.375, not 0.25 (next test)."""
    assert gini([200, 200]) == 0.5
    assert 1 * 0.5 - 200 / 400 * 0.25 - 200 / 400 * 0.25 == 0.25
    assert gini([150, 50]) == 0.375


def test_seed001_gini_example_on_a_fitted_tree(make_tree):
    """Seed 001's node: 400 samples, 200/200, split into 150/50 and 50/150. Fitted
    for real, the node decrease is 0.125 (the seed's 0.25 comes from its child Gini
    slip); as the only split, its feature gets all the importance."""
    x = np.repeat([0.0, 1.0], 200)
    y = np.concatenate([np.repeat([0, 1], [150, 50]), np.repeat([0, 1], [50, 150])])
    X = np.column_stack([x, np.zeros(400)])
    model = make_tree(criterion="gini", max_depth=1, random_state=0).fit(X, y)
    row = mdi(model).trace.iloc[0]
    assert row["impurity"] == 0.5
    assert row["impurity_left"] == row["impurity_right"] == 0.375
    assert (row["w"], row["w_left"], row["w_right"]) == (400, 200, 200)
    assert row["decrease"] == 0.125
    np.testing.assert_array_equal(model.feature_importances_, [1.0, 0.0])


# -- seed 000: MDI recomputed from the tree arrays ---------------------------------

@pytest.fixture(scope="module")
def diabetes_split():
    # Seed 000 uses the Boston housing data, no longer shipped by scikit-learn; the
    # diabetes data (also bundled, also regression) takes its place.
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    return train_test_split(X, y, test_size=0.2, random_state=42)


def test_seed000_tree_importances_from_arrays(make_regressor, in_tree_format,
                                             diabetes_split):
    X_train, _, y_train, _ = diabetes_split
    model = make_regressor(max_leaf_nodes=10, random_state=42).fit(X_train, y_train)
    ensemble = in_tree_format(model)
    tree = ensemble.trees[0]
    assert tree.n_leaves == 10
    by_hand = seed000_importances(ensemble.trees)
    np.testing.assert_allclose(by_hand, model.feature_importances_, rtol=1e-12)
    result = mdi(ensemble)
    np.testing.assert_array_equal(result.importances_mean, model.feature_importances_)
    # Each trace row is seed 000's dI for that node.
    n = tree.weighted_n_node_samples[0]
    for row in result.trace.itertuples():
        nt = row.w
        dI = nt / n * (row.impurity - row.w_left / nt * row.impurity_left
                       - row.w_right / nt * row.impurity_right)
        assert row.decrease == pytest.approx(dI, rel=1e-9, abs=1e-12)


def test_seed000_forest_importances_from_arrays(learner, in_tree_format, diabetes_split):
    X_train, _, y_train, _ = diabetes_split
    forest = learner("RandomForestRegressor")(n_estimators=10, random_state=42)
    forest.fit(X_train, y_train)
    ensemble = in_tree_format(forest)
    np.testing.assert_allclose(seed000_importances(ensemble.trees),
                               forest.feature_importances_, rtol=1e-12)
    np.testing.assert_allclose(mdi(ensemble).importances_mean, forest.feature_importances_,
                               rtol=1e-12)


# -- seed 002: the forest's MDI on iris, out-of-bag samples ------------------------

def test_seed002_iris_forest_mdi(learner, in_tree_format):
    """FI_j = (1/N) sum_t FI_j^(t) with FI_j^(t) = sum_{i splits on j} RI_i / sum_i RI_i,
    RI_i = w_i I_i - w_L I_L - w_R I_R."""
    from sapwood.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    forest = learner("RandomForestClassifier")(n_estimators=10, random_state=0).fit(X, y)
    ensemble = in_tree_format(forest)
    per_tree = []
    for tree in ensemble.trees:
        split = tree.children_left >= 0
        left, right = tree.children_left[split], tree.children_right[split]
        w, imp = tree.weighted_n_node_samples, tree.impurity
        ri = w[split] * imp[split] - w[left] * imp[left] - w[right] * imp[right]
        per_tree.append(np.bincount(tree.feature[split], weights=ri, minlength=4) / ri.sum())
    np.testing.assert_allclose(np.mean(per_tree, axis=0), forest.feature_importances_,
                               rtol=1e-12)
    np.testing.assert_allclose(mdi(ensemble).importances_mean, forest.feature_importances_,
                               rtol=1e-12)
    assert mdi(ensemble).importances_mean.argmax() in (2, 3)  # a petal measurement


def test_seed002_out_of_bag_rows_and_accuracy_drop():
    bootstrap = {1: [10, 9, 7, 8, 1, 3, 9, 10, 10, 7], 2: [4, 8, 5, 8, 3, 9, 2, 6, 1, 6],
                 3: [6, 2, 6, 10, 2, 10, 3, 6, 5, 1], 4: [6, 7, 8, 10, 6, 10, 9, 10, 8, 2],
                 5: [5, 8, 1, 8, 5, 7, 10, 1, 10, 9]}
    printed = {1: [2, 4, 5, 6], 2: [7, 10], 3: [4, 7, 8, 9], 4: [1, 3, 4, 5], 5: [2, 3, 4, 6]}
    for t, rows in bootstrap.items():
        # Out-of-bag rows are those drawn zero times (docs/measures.md, section 'Notation').
        counts = np.bincount(rows, minlength=11)[1:]
        assert (np.flatnonzero(counts == 0) + 1).tolist() == printed[t]
    y = np.array(list("PNNP"))
    before, after = np.array(list("PPNP")), np.array(list("NPNP"))
    accuracy_before, accuracy_after = (before == y).mean(), (after == y).mean()
    assert (accuracy_before, accuracy_after) == (0.75, 0.5)
    assert accuracy_before - accuracy_after == 0.25


# -- seed 004: Friedman's importance and gradient boosting --------------------------

def test_seed004_boosting_importance(learner, in_tree_format, diabetes_split):
    """Friedman's i_t^2 = w_L w_R / (w_L + w_R) (mean_L - mean_R)^2 is the squared-error
    node decrease w I - w_L I_L - w_R I_R; scikit-learn 1.9 averages the trees'
    unnormalised sums and normalises once (the seed quotes an older version that
    averaged normalised per-tree vectors)."""
    X_train, _, y_train, _ = diabetes_split
    model = learner("GradientBoostingRegressor")(n_estimators=15, max_depth=3,
                                                 random_state=0).fit(X_train, y_train)
    ensemble = in_tree_format(model)
    assert ensemble.combine == "sum"
    for tree in ensemble.trees[:5]:
        split = np.flatnonzero(tree.children_left >= 0)
        left, right = tree.children_left[split], tree.children_right[split]
        w, imp, mean = tree.weighted_n_node_samples, tree.impurity, tree.value[:, 0, 0]
        friedman = w[left] * w[right] / (w[left] + w[right]) * (mean[left] - mean[right]) ** 2
        decrease = w[split] * imp[split] - w[left] * imp[left] - w[right] * imp[right]
        np.testing.assert_allclose(friedman, decrease, rtol=1e-8)
    np.testing.assert_allclose(mdi(ensemble).importances_mean, model.feature_importances_,
                               rtol=1e-12)
