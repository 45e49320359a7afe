"""The tree-aware kernels against naive "permute the columns, predict everything"."""

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

from sapwood import TreeArrays, TreeEnsemble
from sapwood._format import LEAF
from sapwood._kernels._permuted_traversal import make_fast
from sapwood._kernels._tree_index import entry_nodes, preorder_spans
from sapwood.importance._engine._tree_evaluator import TreeEvaluator
from tests.reference.naive_permutation import as_format_model


def _data(n=150, n_features=5, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, n_features))
    X[:, 1] = rng.randint(0, 3, n)          # heavy ties
    X[rng.rand(n, n_features) < 0.1] = np.nan
    y = (np.nan_to_num(X[:, 0]) + X[:, 1] > 0.5).astype(int)
    return X, y


def _naive_entry_nodes(tree, columns):
    found = []

    def walk(node, seen):
        if tree.children_left[node] == LEAF:
            return
        here = tree.feature[node] in columns
        if here and not seen:
            found.append(node)
        walk(tree.children_left[node], seen or here)
        walk(tree.children_right[node], seen or here)

    walk(0, False)
    return sorted(found)


def test_entry_nodes_and_spans_match_a_recursive_walk():
    X, y = _data()
    forest = RandomForestClassifier(4, max_depth=6, random_state=0).fit(X, y)
    ensemble = as_format_model(forest).to_ensemble()
    left, right, feature, *_, roots = ensemble.packed()
    groups = [[0], [1], [2, 3], [0, 4], [3]]
    membership = [[g for g, cols in enumerate(groups) if f in cols] for f in range(5)]
    ptr = np.concatenate([[0], np.cumsum([len(m) for m in membership])]).astype(np.intp)
    flat = np.array([g for m in membership for g in m], dtype=np.intp)
    entry_ptr, entry = entry_nodes(left, right, feature, roots, ptr, flat, len(groups))
    rank, span_end = preorder_spans(left, right, roots)
    for t, tree in enumerate(ensemble.trees):
        for g, columns in enumerate(groups):
            key = t * len(groups) + g
            got = sorted(entry[entry_ptr[key]:entry_ptr[key + 1]] - roots[t])
            assert got == _naive_entry_nodes(tree, columns)
        local = rank[roots[t]:roots[t] + tree.node_count]
        assert sorted(local) == list(range(tree.node_count))
        # Each node's span covers exactly its descendants.
        for node in range(tree.node_count):
            below = {node}
            stack = [node]
            while stack:
                n = stack.pop()
                if tree.children_left[n] != LEAF:
                    below |= {tree.children_left[n], tree.children_right[n]}
                    stack += [tree.children_left[n], tree.children_right[n]]
            in_span = {k for k in range(tree.node_count)
                       if local[node] <= local[k] < span_end[roots[t] + node]}
            assert in_span == below


def _lt_ensemble(ensemble):
    """The same trees with every split as ``x < threshold`` (XGBoost's operator)."""
    trees = []
    for tree in ensemble.trees:
        fields = tree.to_dict()
        fields["operator"] = np.ones(tree.node_count, dtype=np.uint8)
        trees.append(TreeArrays(**fields))
    return TreeEnsemble(trees=trees, task=ensemble.task, n_features=ensemble.n_features,
                        combine=ensemble.combine, classes=ensemble.classes)


@pytest.mark.parametrize("operator", ["le", "lt"])
@pytest.mark.parametrize("task", ["classification", "regression"])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_permuted_outputs_equal_predicting_the_permuted_data(task, n_jobs, operator):
    X, y = _data()
    if task == "regression":
        forest = RandomForestRegressor(6, min_samples_leaf=2, random_state=0)
        forest.fit(X, y + np.nan_to_num(X[:, 2]))
    else:
        forest = RandomForestClassifier(6, min_samples_leaf=2, random_state=0).fit(X, y)
    ensemble = as_format_model(forest).to_ensemble()
    if operator == "lt":
        ensemble = _lt_ensemble(ensemble)
        # Permuted values exactly at thresholds exercise the strict comparison.
        X[::7, 2] = ensemble.trees[0].threshold[0]
    evaluator = TreeEvaluator(forest, ensemble, X.astype(np.float32), n_jobs)
    assert np.array_equal(evaluator.baseline_raw.reshape(len(X), -1),
                          ensemble.raw_predict(X).reshape(len(X), -1))
    groups = [np.array([0]), np.array([1]), np.array([2, 3]), np.array([4]), np.array([0, 4])]
    rows = np.random.RandomState(1).choice(len(X), 90, replace=False)
    evaluator.prepare(rows, groups)
    rng = np.random.RandomState(2)
    sources = np.array([rng.permutation(90) for _ in range(3)])
    seen = set()
    for g, k, raw in evaluator.permuted_outputs(sources):
        X_eval = X[rows].copy()
        X_eval[:, groups[g]] = X[rows][sources[k]][:, groups[g]]
        expected = ensemble.raw_predict(X_eval).reshape(90, -1)
        got = evaluator.baseline_eval if raw is None else raw
        assert np.array_equal(got, expected), (g, k)
        seen.add((g, k))
    assert seen == {(g, k) for g in np.flatnonzero(evaluator.group_used) for k in range(3)}


@pytest.mark.parametrize("min_samples_leaf", [1, 3])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_exact_and_general_sums_equal_predicting_the_permuted_data(min_samples_leaf, n_jobs):
    # Pure leaves (0/1 probabilities) take the exact-difference path, mixed leaves the
    # in-order resum; both must reproduce the model's predictions bit for bit.
    X, y = _data(n=300)
    y = y + (np.nan_to_num(X[:, 3]) > 0.7)          # three classes
    forest = RandomForestClassifier(9, min_samples_leaf=min_samples_leaf,
                                    random_state=0).fit(X, y)
    ensemble = as_format_model(forest).to_ensemble()
    evaluator = TreeEvaluator(forest, ensemble, X, n_jobs)
    assert evaluator.exact == (min_samples_leaf == 1)
    groups = [np.array([j]) for j in range(5)] + [np.array([1, 2])]
    evaluator.prepare(None, groups)
    rng = np.random.RandomState(5)
    sources = np.array([rng.permutation(300) for _ in range(4)])
    n_seen = 0
    for g, k, raw in evaluator.permuted_outputs(sources):
        X_permuted = X.copy()
        X_permuted[:, groups[g]] = X[sources[k]][:, groups[g]]
        expected = forest.predict_proba(X_permuted)
        got = evaluator.baseline_eval if raw is None else raw
        assert np.array_equal(got, expected), (g, k)
        n_seen += 1
    assert n_seen == 4 * int(evaluator.group_used.sum())


@pytest.mark.parametrize("operator", ["le", "lt"])
@pytest.mark.parametrize("task", ["classification", "regression"])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_fast_path_equals_general_path_and_predicting(task, n_jobs, operator):
    # Finite data takes the fast path (splits read as x <= threshold, traversals run
    # side by side); it must give the general path's outputs and the model's own.
    X, y = _data(n=240, n_features=6)
    X = np.nan_to_num(X)
    if task == "regression":
        forest = RandomForestRegressor(7, random_state=0).fit(X, y + X[:, 2])
    else:
        forest = RandomForestClassifier(7, random_state=0).fit(X, y)
    ensemble = as_format_model(forest).to_ensemble()
    if operator == "lt":
        ensemble = _lt_ensemble(ensemble)
    # Values exactly at thresholds exercise the strict / non-strict comparisons.
    X[::5, 2] = ensemble.trees[0].threshold[0]
    X[1::7, 0] = ensemble.trees[1].threshold[0]
    groups = [np.array([j]) for j in range(6)] + [np.array([0, 2])]
    rng = np.random.RandomState(3)
    sources = np.array([rng.permutation(240) for _ in range(4)])
    outputs = {}
    for fast in (True, False):
        evaluator = TreeEvaluator(forest, ensemble, X.astype(np.float32), n_jobs,
                                  fast=None if fast else False)
        assert evaluator.fast == fast
        evaluator.prepare(None, groups)
        outputs[fast] = {(g, k): (evaluator.baseline_eval if raw is None else raw).copy()
                         for g, k, raw in evaluator.permuted_outputs(sources)}
        evaluator.close()
    assert outputs[True].keys() == outputs[False].keys()
    for (g, k), got in outputs[True].items():
        assert np.array_equal(got, outputs[False][g, k]), (g, k)
        X_permuted = X.astype(np.float32)
        X_permuted[:, groups[g]] = X_permuted[sources[k]][:, groups[g]]
        expected = ensemble.raw_predict(X_permuted).reshape(240, -1)
        assert np.array_equal(got, expected), (g, k)


def test_fast_layout_reads_every_split_as_less_or_equal():
    for operator, expected in ((0, 0.5), (1, np.nextafter(0.5, -np.inf))):
        nodes = np.array([[1, 2, 3, operator], [LEAF, LEAF, -2, 0], [LEAF, LEAF, -2, 0]],
                         dtype=np.int32)
        thresholds = np.array([0.5, -2.0, -2.0])
        operators = np.array([operator, 0, 0], np.uint8)
        make_fast(nodes, thresholds, operators)
        assert thresholds[0] == expected and np.all(operators == 0)
        assert nodes[:, 3].tolist() == [0, 0, 0] and nodes[1:, 2].tolist() == [0, 0]
        assert nodes[0, :3].tolist() == [1, 2, 3] and nodes[1:, :2].tolist() == [[LEAF] * 2] * 2


@pytest.mark.parametrize("task", ["regression", "multi-output", "classification"])
@pytest.mark.parametrize("missing", [False, True])
def test_chunked_evaluator_equals_the_whole_forest_bit_for_bit(monkeypatch, task, missing):
    """A large forest is read a few trees at a time (ChunkedTreeEvaluator); its baseline
    and permuted outputs, and the importances, equal the whole-forest evaluator's and
    scikit-learn's bit for bit, whatever the piece size and thread count."""
    from sklearn.inspection import permutation_importance as sklearn_permutation_importance

    from sapwood.adapters import as_ensemble
    from sapwood.importance import permutation_importance
    from sapwood.importance._engine import _chunked_evaluator
    from sapwood.importance._engine._chunked_evaluator import (
        ChunkedTreeEvaluator,
        forest_part,
        large_forest,
    )

    X, y = _data(n=300, n_features=6, seed=1)
    if not missing:
        X = np.nan_to_num(X)
    if task == "classification":
        forest = RandomForestClassifier(9, random_state=0).fit(X, y + (X[:, 2] > 0))
    else:
        target = np.nan_to_num(X[:, 0]) + y
        if task == "multi-output":
            target = np.c_[target, np.nan_to_num(X[:, 3]) - y]
        forest = RandomForestRegressor(9, random_state=0).fit(X, target)
    groups = [np.array([j]) for j in range(6)] + [np.array([0, 2])]
    rng = np.random.RandomState(3)
    sources = np.array([rng.permutation(300) for _ in range(3)])
    X32 = X.astype(np.float32)
    whole = TreeEvaluator(forest, as_format_model(forest).to_ensemble(), X32, 2)
    whole.prepare(None, groups)
    expected = {(g, k): raw for g, k, raw in whole.permuted_outputs(sources)}
    whole.close()
    monkeypatch.setattr(_chunked_evaluator, "_CHUNK_NODES", 0)
    estimators = large_forest(forest)
    assert estimators is not None
    first = as_ensemble(forest_part(forest, estimators[:1]))
    for piece_trees in (1, 2, 4, 9):
        for n_jobs in (1, 2):
            chunked = ChunkedTreeEvaluator(forest, estimators, first, X32, n_jobs,
                                           piece_trees=piece_trees)
            assert chunked.fast != missing
            assert np.array_equal(chunked.baseline_raw, whole.baseline_raw)
            chunked.prepare(None, groups)
            got = {(g, k): raw for g, k, raw in chunked.permuted_outputs(sources)}
            chunked.close()
            assert got.keys() == expected.keys()
            for key, raw in got.items():
                assert (raw is None) == (expected[key] is None), key
                assert raw is None or np.array_equal(raw, expected[key]), key
    ours = permutation_importance(forest, X, y if task == "classification" else target,
                                  n_repeats=3, random_state=0, n_jobs=2, max_samples=0.7)
    theirs = sklearn_permutation_importance(
        forest, X, y if task == "classification" else target, n_repeats=3, random_state=0,
        max_samples=0.7)
    assert ours.params["evaluator"] == "tree"
    assert np.array_equal(ours.importances, theirs.importances)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("min_samples_leaf", [1, 3])  # exact sums, then rounded ones
def test_rows_left_out_for_a_class_only_consumer_keep_their_class(n_classes, n_jobs,
                                                                 min_samples_leaf):
    # only_class_changes may leave a (group, row) out only if no value of the group's
    # columns can change the row's predicted class: try every value the permutations
    # can bring (the column's values in the data) against the model's own predict.
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=160, n_features=8, n_informative=3,
                               n_redundant=0, n_classes=n_classes, random_state=1)
    X[:, 4] = np.round(X[:, 4])
    forest = RandomForestClassifier(25, min_samples_leaf=min_samples_leaf,
                                    random_state=0).fit(X[:80], y[:80])
    X_eval = X[80:]
    groups = [np.array([j]) for j in range(8)] + [np.array([0, 2]), np.array([4, 5, 7])]
    evaluator = TreeEvaluator(forest, as_format_model(forest).to_ensemble(), X_eval, n_jobs)
    evaluator.prepare(None, groups)
    assert evaluator.exact == (min_samples_leaf == 1)
    assert evaluator.skip.shape == (0, 0)
    evaluator.only_class_changes()
    assert evaluator.skip.shape == (len(groups), X_eval.shape[0])
    assert 0.05 < evaluator.skip.mean() < 1.0  # leaves out many pairs, not all
    predicted = forest.predict(X_eval)
    for g, columns in enumerate(groups):
        rows = np.flatnonzero(evaluator.skip[g])
        if rows.shape[0] == 0:
            continue
        for source in range(X_eval.shape[0]):
            X_new = X_eval[rows].copy()
            X_new[:, columns] = X_eval[source, columns]
            np.testing.assert_array_equal(forest.predict(X_new), predicted[rows])


def test_only_class_changes_leaves_regression_alone():
    X, y = _data()
    X = np.nan_to_num(X)
    forest = RandomForestRegressor(10, random_state=0).fit(X, y)
    evaluator = TreeEvaluator(forest, as_format_model(forest).to_ensemble(), X, 1)
    evaluator.prepare(None, [np.array([j]) for j in range(X.shape[1])])
    evaluator.only_class_changes()
    assert evaluator.skip.shape == (0, 0)
