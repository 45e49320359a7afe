"""Reference numbers from R (randomForest, ranger, party) and readers that turn R's
forests into sapwood's tree format. ``make_fixtures.R`` in this folder (and
``party/make_fixtures.R`` for party) writes the CSV files; the tests read them without
R (see the scripts' headers for what each file holds and why).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from sapwood._bootstrap import Bootstrap
from sapwood._format import ModelKind, TreeArrays, TreeEnsemble

FIXTURES = Path(__file__).parent
SCRIPT = FIXTURES / "make_fixtures.R"
PARTY = FIXTURES / "party"

# R's unif_rand() from the Mersenne-Twister: a 32-bit draw times 2^-32, kept off 0 and 1
# (RNG.c, fixup).
_TO_UNIT = 2.3283064365386963e-10
_HALF_STEP = 0.5 * 2.328306437080797e-10


def read(name: str, folder: Path = FIXTURES) -> pd.DataFrame:
    return pd.read_csv(folder / name)


def r_uniforms(state):
    """R's unif_rand() stream from a ``.Random.seed`` (kind, position, 624 words)."""
    generator = np.random.MT19937()
    words = np.asarray(state[2:], dtype=np.int64).astype(np.uint32)
    generator.state = {"bit_generator": "MT19937",
                       "state": {"key": words, "pos": int(state[1])}}
    while True:
        u = int(generator.random_raw()) * _TO_UNIT
        yield _HALF_STEP if u <= 0 else (1 - _HALF_STEP if 1 - u <= 0 else u)


def randomforest_permutation(uniforms, m: int) -> np.ndarray:
    """The order randomForest's ``permuteOOB`` (rfutils.c) gives the m out-of-bag values
    of a variable: k = (int) last * unif_rand(); swap positions last - 1 and k; last--.
    The k-th out-of-bag row (in row order) then reads the value of row ``order[k]``."""
    order = np.arange(m)
    last = m
    for _ in range(m):
        k = int(last * next(uniforms))
        order[last - 1], order[k] = order[k], order[last - 1]
        last -= 1
    return order


class InbagCounts(Bootstrap):
    """R's in-bag counts (``keep.inbag = TRUE``) as sapwood's bootstrap record: R draws
    its bootstrap with its own generator, so the counts are given, not regenerated."""

    def __init__(self, counts):
        counts = np.asarray(counts, dtype=np.intp)  # (n_samples, n_trees)
        super().__init__(seeds=np.zeros(counts.shape[1], dtype=np.int64),
                         n_samples=counts.shape[0], n_draws=int(counts[:, 0].sum()))
        object.__setattr__(self, "matrix", counts)

    def counts(self, t) -> np.ndarray:
        return self.matrix[:, t].copy()

    def indices(self, t) -> np.ndarray:
        return np.repeat(np.arange(self.n_samples), self.matrix[:, t])


def _node_statistics(left, right, feature, threshold, X, y, counts, n_classes):
    """In-bag weight, row count, impurity and class fractions (or mean) of every node,
    from the rows each node receives (x <= threshold goes left) weighted by how often
    the bootstrap drew them: what R's node statistics were computed from."""
    n_nodes = len(left)
    weight = np.zeros(n_nodes)
    rows = np.zeros(n_nodes, dtype=np.intp)
    impurity = np.zeros(n_nodes)
    value = np.zeros((n_nodes, 1, max(n_classes, 1)))
    stack = [(0, np.flatnonzero(counts > 0))]
    while stack:
        node, members = stack.pop()
        w = counts[members].astype(np.float64)
        weight[node], rows[node] = w.sum(), len(members)
        if n_classes:
            fractions = np.bincount(y[members].astype(np.intp), weights=w,
                                    minlength=n_classes) / w.sum()
            impurity[node] = 1.0 - np.sum(fractions**2)
            value[node, 0] = fractions
        else:
            mean = np.sum(w * y[members]) / w.sum()
            impurity[node] = np.sum(w * (y[members] - mean) ** 2) / w.sum()
            value[node, 0, 0] = mean
        if left[node] >= 0:
            goes_left = X[members, feature[node]] <= threshold[node]
            stack.append((left[node], members[goes_left]))
            stack.append((right[node], members[~goes_left]))
    return weight, rows, impurity, value


def _tree(left, right, feature, threshold, prediction, X, y, counts, n_classes):
    """One R tree as sapwood's TreeArrays. Leaves predict what R's leaves predict (R
    breaks ties of class counts at random, so its class is taken, one-hot)."""
    leaf = left < 0
    left = np.where(leaf, -1, left)
    right = np.where(leaf, -1, right)
    feature = np.where(leaf, -2, feature)
    threshold = np.where(leaf, -2.0, threshold)
    weight, rows, impurity, value = _node_statistics(left, right, feature, threshold, X, y,
                                                     counts, n_classes)
    if n_classes:
        value[leaf] = np.eye(n_classes)[prediction[leaf].astype(np.intp)][:, None, :]
    else:
        value[leaf, 0, 0] = prediction[leaf]
    n_nodes = len(left)
    return TreeArrays(children_left=left, children_right=right, feature=feature,
                      threshold=threshold, impurity=impurity, n_node_samples=rows,
                      weighted_n_node_samples=weight, value=value,
                      missing_go_to_left=np.zeros(n_nodes), operator=np.zeros(n_nodes),
                      n_features=X.shape[1])


def _data(name, folder=FIXTURES):
    data = read(f"{name}_data.csv", folder)
    y = data.pop("y").to_numpy()
    return np.ascontiguousarray(data.to_numpy(dtype=np.float64)), y


def _ensemble(trees, X, y, inbag, library, model, classification):
    classes = tuple(np.unique(y).tolist()) if classification else None
    return TreeEnsemble(trees=trees, task="classification" if classification else "regression",
                        n_features=X.shape[1], classes=classes,
                        input_dtype=np.float64,
                        kind=ModelKind(library=library, model=model, family="forest",
                                       bagged=True),
                        bootstrap=InbagCounts(inbag))


def _forest_files(name, classification):
    """An R forest's fixtures: X, y, the in-bag counts, the trees' table, the number of
    classes (0: regression) and y as sapwood's codes (R's class codes 1..K less one)."""
    X, y = _data(name)
    inbag = read(f"{name}_inbag.csv").to_numpy()
    table = read(f"{name}_trees.csv")
    n_classes = int(y.max()) if classification else 0
    code = y - 1 if classification else y.astype(np.float64)
    return X, y, inbag, table, n_classes, code


def randomforest_forest(name, classification):
    """(ensemble, X, y) from randomForest's getTree() tables and in-bag counts; y holds
    R's class codes 1..K (classification)."""
    X, y, inbag, table, n_classes, code = _forest_files(name, classification)
    trees = []
    for t, tree in table.groupby("tree", sort=True):
        terminal = tree["status"].to_numpy() == -1
        prediction = tree["prediction"].to_numpy(dtype=np.float64)
        trees.append(_tree(
            np.where(terminal, -1, tree["left daughter"].to_numpy() - 1),
            np.where(terminal, -1, tree["right daughter"].to_numpy() - 1),
            np.where(terminal, -2, tree["split var"].to_numpy() - 1),
            tree["split point"].to_numpy(dtype=np.float64),
            prediction - 1 if classification else prediction,
            X, code, inbag[:, t - 1], n_classes))
    return _ensemble(trees, X, y, inbag, "randomForest", "randomForest", classification), X, y


def ranger_forest(name, classification):
    """(ensemble, X, y) from ranger's treeInfo() tables and in-bag counts."""
    X, y, inbag, table, n_classes, code = _forest_files(name, classification)
    trees = []
    for t, tree in table.groupby("tree", sort=True):
        tree = tree.sort_values("nodeID")
        terminal = tree["terminal"].to_numpy(dtype=bool)
        prediction = tree["prediction"].to_numpy(dtype=np.float64)
        trees.append(_tree(
            np.where(terminal, -1, tree["leftChild"].fillna(-1).to_numpy(dtype=np.intp)),
            np.where(terminal, -1, tree["rightChild"].fillna(-1).to_numpy(dtype=np.intp)),
            np.where(terminal, -2, tree["splitvarID"].fillna(-2).to_numpy(dtype=np.intp)),
            tree["splitval"].fillna(-2.0).to_numpy(dtype=np.float64),
            prediction - 1 if classification else prediction,
            X, code, inbag[:, t - 1], n_classes))
    return _ensemble(trees, X, y, inbag, "ranger", "ranger", classification), X, y


def party_forest(name, classification):
    """(ensemble, X, y) from a party cforest's trees (preorder tables: x <= threshold
    goes left) and in-bag weights; y holds R's class codes 1..K (classification).

    Every node predicts what party's node predicts: its class probabilities (a tree's
    class is the first largest, as varimp's ``which.max``) or its mean. The node
    statistics come from routing the in-bag rows, as for randomForest and ranger."""
    X, y = _data(name, PARTY)
    inbag = read(f"{name}_weights.csv", PARTY).to_numpy()
    table = read(f"{name}_trees.csv", PARTY)
    n_classes = int(y.max()) if classification else 0
    code = y - 1 if classification else y.astype(np.float64)
    values = [column for column in table.columns if column.startswith("value")]
    trees = []
    for t, tree in table.groupby("tree", sort=True):
        tree = tree.sort_values("node")
        leaf = tree["feature"].to_numpy() < 0
        left = tree["left"].to_numpy(dtype=np.intp)
        right = tree["right"].to_numpy(dtype=np.intp)
        feature = np.where(leaf, -2, tree["feature"].to_numpy(dtype=np.intp))
        threshold = np.where(leaf, -2.0, tree["threshold"].to_numpy(dtype=np.float64))
        weight, rows, impurity, _ = _node_statistics(left, right, feature, threshold, X,
                                                     code, inbag[:, t - 1], n_classes)
        value = tree[values].to_numpy(dtype=np.float64)[:, None, :]
        trees.append(TreeArrays(children_left=left, children_right=right, feature=feature,
                                threshold=threshold, impurity=impurity,
                                n_node_samples=rows, weighted_n_node_samples=weight,
                                value=value, missing_go_to_left=np.zeros(len(left)),
                                operator=np.zeros(len(left)), n_features=X.shape[1]))
    return _ensemble(trees, X, y, inbag, "party", "cforest", classification), X, y
