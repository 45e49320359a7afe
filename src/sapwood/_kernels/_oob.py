"""Out-of-bag permutation importance of one tree (Breiman 2001; randomForest type 1).

One call handles one tree and all its OOB rows, every feature and every repeat, so
Numba's per-call reference counting of the array arguments is paid once per tree.

Permuting column j among the OOB rows changes the tree's answer only for rows whose
path meets a split on j. Each OOB row is routed once and the first node of its path
splitting on each feature is recorded; for feature j only the rows with such a node
are re-routed, starting there and reading the permuted row's value only at splits on
j (ranger ``Tree::dropDownSamplePermuted``). Features the tree never splits on are
skipped. Every leaf carries the open interval of j values that take its path's
decisions at all splits on j; a permuted value inside the row's own leaf interval
lands in the same leaf without a traversal. Rows whose leaf does not change
contribute nothing, so only changed rows add to the sums. The re-routings of one
feature and repeat are queued and run by the one permuted traversal
(:mod:`._permuted_traversal`): side by side on finite data, one at a time otherwise.
"""

import numpy as np

from ._arrays import empty, zeros
from ._numba import kernel
from ._permuted_traversal import fast_layout, pack_tree, route_permuted, row_offsets
from ._traverse import first_splits
from ._tree_index import keeps_leaf, leaf_intervals


@kernel
def _loss(classification, target, prediction):
    if classification:
        return 0.0 if prediction == target else 1.0
    return (target - prediction) * (target - prediction)


@kernel
def _case_change(classification, target, old_prediction, new_prediction, loss_change):
    """One tree's step of a row's casewise importance, as randomForest's ``localImp``
    (``rf.c``, ``classRF``: when the permuted prediction differs from the tree's own,
    minus one if it is the true class, else plus one, so a wrong class turned into
    another wrong class counts plus one; ``regrf.c``: the change in squared error)."""
    if not classification:
        return loss_change
    if new_prediction == old_prediction:
        return 0.0
    return -1.0 if new_prediction == target else 1.0


@kernel
def oob_tree_permutation(X, rows, target, target_class, n_classes, classification,
                         children_left, children_right, feature, threshold,
                         missing_go_to_left, operator, cat_bitsets, node_prediction,
                         permutations):
    """Per-feature loss increase of one tree on its OOB rows, summed over repeats.

    Parameters
    ----------
    X : float32 or float64 array (n_samples, n_features), C-contiguous
    rows : intp array (m,)
        The tree's OOB rows.
    target : float64 array (m,)
        Their targets: class codes (classification) or values (regression).
    target_class : intp array (m,)
        Class code of each OOB row (all zeros for regression, ``n_classes = 1``).
    classification : bool
        Loss is 0/1 error if true, squared error otherwise.
    cat_bitsets : uint32 array
        The tree's category sets (``sapwood._kernels._traverse``).
    node_prediction : float64 array (n_nodes,)
        The tree's prediction at every node (class code or value); read at leaves.
    permutations : intp array (n_repeats, n_features, m)
        In repeat r, OOB row k reads feature j from OOB row ``permutations[r, j, k]``.

    Returns
    -------
    base_loss : float64 array (m,)
        Loss of the tree's own prediction on every OOB row.
    increase : float64 array (n_features,)
        Sum over repeats and OOB rows of (permuted loss - loss).
    increase_by_class : float64 array (n_features, n_classes)
        The same sum restricted to the OOB rows of each class.
    casewise : float64 array (m, n_features)
        The same sum per OOB row (over repeats).
    """
    out = oob_tree_permutation_rows(X, rows, target, target_class, n_classes,
                                    classification, children_left, children_right, feature,
                                    threshold, missing_go_to_left, operator, cat_bitsets,
                                    node_prediction, permutations, False, True)
    return out[0], out[1], out[2], out[3]


@kernel
def oob_tree_permutation_fast(X, rows, target, target_class, n_classes, classification,
                              children_left, children_right, feature, threshold,
                              missing_go_to_left, operator, cat_bitsets, node_prediction,
                              permutations):
    """``oob_tree_permutation`` for data without missing or infinite values: the same
    outputs, bit for bit, faster: every numeric split is read as ``x <= threshold``
    and the queued re-routings run side by side (``route_lanes``)."""
    out = oob_tree_permutation_rows(X, rows, target, target_class, n_classes,
                                    classification, children_left, children_right, feature,
                                    threshold, missing_go_to_left, operator, cat_bitsets,
                                    node_prediction, permutations, True, True)
    return out[0], out[1], out[2], out[3]


@kernel
def oob_tree_permutation_rows(X, rows, target, target_class, n_classes, classification,
                              children_left, children_right, feature, threshold,
                              missing_go_to_left, operator, cat_bitsets, node_prediction,
                              permutations, fast, sets=True):
    """``oob_tree_permutation`` (``fast``: ``oob_tree_permutation_fast``) and a fifth
    output, ``by_row`` : float64 array (m, n_features): every loss change counted at
    both OOB rows it involves, the row that read the permuted value and the row it
    came from (summed over repeats; ``by_row.sum(axis=0) == 2 * increase`` up to
    rounding). The per-row draws of the rank intervals
    (:func:`sapwood.importance.oob_permutation_importance`). ``sets``: None when the
    tree has no category set (only the lanes without the categorical test compile,
    see ``route_permuted``)."""
    # (The two kernels above call this one, not one kernel under all three: every
    # kernel calling another optimises all the code below it again on a first run.)
    m = rows.shape[0]
    n_features = X.shape[1]
    n_repeats = permutations.shape[0]
    n_nodes = children_left.shape[0]
    used, first, leaf = first_splits(X, rows, children_left, children_right, feature,
                                     threshold, missing_go_to_left, operator, cat_bitsets)
    base_loss = empty(m, np.float64)
    for k in range(m):
        base_loss[k] = _loss(classification, target[k], node_prediction[leaf[k]])
    increase = zeros(n_features, np.float64)
    increase_by_class = zeros((n_features, n_classes), np.float64)
    casewise = zeros((m, n_features), np.float64)
    # A set past category 63 has no place in the lanes' layout: such trees take the
    # general route.
    fast = fast and fast_layout(children_left, operator, threshold, cat_bitsets)
    nodes, thresholds, operators, set_bits = pack_tree(
        children_left, children_right, feature, threshold, missing_go_to_left, operator,
        cat_bitsets, fast)
    lower = empty(n_nodes, np.float64)
    upper = empty(n_nodes, np.float64)
    codes = empty(n_nodes, np.uint64)
    stack = empty(n_nodes + 1, np.intp)
    # The queue of one feature and repeat: per item (a row whose value leaves its leaf's
    # interval) its OOB position, permuted value and source row's offset in flat_X. One
    # spare entry: the queue writes an item before deciding whether to keep it.
    item_row = empty(m + 1, np.uint32)
    item_value = empty(m + 1, np.float64)
    item_source = empty(m + 1, np.intp)
    item_leaf = empty(m + 1, np.intp)
    row_base = row_offsets(rows, n_features)
    in_group = zeros(n_features, np.uint8)
    column = empty(m, np.float64)
    by_row = zeros((m, n_features), np.float64)
    flat_X = X.reshape(-1)
    flat_nodes = nodes.reshape(-1)
    for j in range(n_features):
        if used[j] == 0:
            continue
        leaf_intervals(0, j, 0, nodes[:, 0], nodes[:, 1], nodes[:, 2], thresholds, operators,
                       cat_bitsets, lower, upper, codes, stack)
        in_group[j] = 1
        # Column j of the OOB rows, contiguous: the permuted reads stay in cache.
        for k in range(m):
            column[k] = X[rows[k], j]
        for r in range(n_repeats):
            n_items = 0
            for k in range(m):
                if first[j, k] < 0:
                    continue
                source = permutations[r, j, k]
                value = column[source]
                item_row[n_items] = k
                item_value[n_items] = value
                if not fast:  # the lanes read the value; the general route, the row
                    item_source[n_items] = row_base[source]
                n_items += not keeps_leaf(value, lower[leaf[k]], upper[leaf[k]], codes[leaf[k]])
            route_permuted(fast, sets, n_items, item_row, first[j], row_base, item_value,
                           item_source, in_group, j, flat_X, flat_nodes, thresholds,
                           cat_bitsets, set_bits, item_leaf)
            for q in range(n_items):
                k = item_row[q]
                node = item_leaf[q]
                if node == leaf[k]:
                    continue  # a missing value may keep its leaf
                change = _loss(classification, target[k], node_prediction[node]) - base_loss[k]
                if change != 0.0:
                    increase[j] += change
                    increase_by_class[j, target_class[k]] += change
                    by_row[k, j] += change
                    by_row[permutations[r, j, k], j] += change
                casewise[k, j] += _case_change(classification, target[k],
                                               node_prediction[leaf[k]],
                                               node_prediction[node], change)
        in_group[j] = 0
    return base_loss, increase, increase_by_class, casewise, by_row
