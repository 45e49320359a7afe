"""The permuted traversal: the leaf a row reaches when a group's columns read another row.

Every permutation measure (held-out, out-of-bag, conditional, grouped) asks the same
question many times: which leaf does row ``i`` reach from node ``top`` when the columns
of a group ``G`` read row ``source``'s values instead of its own? They all queue their
questions ("items") per tree and ask them here, through :func:`route_permuted`, on a
tree laid out by :func:`pack_tree` (or :func:`pack_nodes` for a whole forest). It
answers in one of two forms with one interface (``item_origin`` -> start node and row;
per item the permuted value or the source row; ``leaves`` out):

- :func:`route_lanes`, the fast form: one-column groups on finite data, nodes in
  :func:`make_fast`'s layout (categorical splits included). Twelve traversals
  ("lanes") advance one step per round, each step free of data-dependent branches, so
  the processor overlaps their memory reads. One traversal at a time, every step waits
  for the previous step's reads and the branch on a data-dependent comparison is
  mispredicted half of the time. The lanes' state lives in local scalars, which the
  compiler keeps in registers: with the state in small arrays, every step also paid
  loads and stores of it, and ran at about half the speed. At a categorical split a
  lane reads the split's categories 0 .. 63 as 64 bits (:func:`set_bits_of`, beside the
  records) and tests the value's bit, still without a branch; trees with a set
  reaching past category 63 (:func:`fast_layout`) take the general form.
- :func:`route_rows`, the general form: any group (the columns marked in
  ``in_group`` read the item's source row), missing values, ``<``, ``<=`` and
  categorical splits, nodes in :func:`pack_nodes`' layout.

Nodes are packed: one int32 record per node (left child, right child, feature, flags:
bit 0 the split is ``<``, bit 1 missing values go left, bit 2 the split is
categorical; global ids) and the float64 thresholds beside it (a categorical split's
offset into ``cat_bitsets``, as in :mod:`._traverse`). A visit reads 16 contiguous
bytes and one float64 instead of six arrays. :func:`make_fast` turns the records, in
place, into the fast layout, where every numeric split sends ``x <= threshold`` left
and a categorical one keeps only its flag (its set is read as in ``_traverse``). Indices
are unsigned so a read has no negative-index wrap-around. Helpers called from the hot
loops take scalars only (but for the category sets, read at categorical splits only):
Numba increments and decrements the reference count of every array passed to a
function, inlined or not (that was half the time of the held-out re-routing when done
once per re-routed row); the routes take their arrays once per queue.
"""

import numpy as np

from ._arrays import empty, zeros
from ._numba import kernel, leaf_kernel
from ._traverse import LEAF, OP_CAT, OP_LE, OP_LT, in_category_set

__all__ = ["apply_lanes", "apply_rows", "fast_layout", "lane_sets", "low_categories",
           "make_fast", "pack_nodes", "pack_tree", "route_lanes", "route_permuted",
           "route_rows", "row_offsets", "set_bits_of"]

_FOUR = np.uint64(4)
_TWO = np.uint64(2)
_FLAG_LT = 1
_FLAG_MISSING_LEFT = 2
_FLAG_CAT = 4


@kernel
def pack_nodes(children_left, children_right, feature, missing_go_to_left, operator):
    """The (n_nodes, 4) int32 records of the packed layout."""
    n_nodes = children_left.shape[0]
    nodes = empty((n_nodes, 4), np.int32)
    for k in range(n_nodes):
        nodes[k, 0] = children_left[k]
        nodes[k, 1] = children_right[k]
        nodes[k, 2] = feature[k]
        flags = 0
        if operator[k] == OP_LT:
            flags |= _FLAG_LT
        elif operator[k] == OP_CAT:
            flags |= _FLAG_CAT
        if missing_go_to_left[k] != 0:
            flags |= _FLAG_MISSING_LEFT
        nodes[k, 3] = flags
    return nodes


@kernel
def make_fast(nodes, thresholds, operator):
    """Turn the packed layout, in place, into the fast path's: ``x < t`` becomes
    ``x <= nextafter(t, -inf)`` (the same decision for every float64 ``x``), so every
    numeric split reads ``x <= threshold`` (flags cleared, ``operator`` ``OP_LE``); a
    categorical split keeps ``OP_CAT``, its set's offset as threshold and only the
    categorical flag. Leaves get feature 0 so a lane parked on a leaf reads a valid
    column. Only for finite data (the missing-value direction is dropped)."""
    for k in range(nodes.shape[0]):
        if nodes[k, 0] != LEAF and nodes[k, 3] & _FLAG_CAT:
            operator[k] = OP_CAT
            nodes[k, 3] = _FLAG_CAT
            continue
        operator[k] = OP_LE
        if nodes[k, 0] == LEAF:
            nodes[k, 2] = 0
        elif nodes[k, 3] & _FLAG_LT:
            thresholds[k] = np.nextafter(thresholds[k], -np.inf)
        nodes[k, 3] = 0


@kernel(inline="always", _nrt=False)
def low_categories(cat_bitsets, offset):
    """Categories ``0 .. 63`` of the set stored at ``offset`` (``_traverse``) as 64 bits,
    category ``c`` at bit ``c``."""
    n_words = cat_bitsets[offset]
    bits = np.uint64(0)
    if n_words > 0:
        bits = np.uint64(cat_bitsets[offset + 1])
    if n_words > 1:
        bits |= np.uint64(cat_bitsets[offset + 2]) << np.uint64(32)
    return bits


@kernel
def fast_layout(children_left, operator, threshold, cat_bitsets):
    """Whether the lanes can route these nodes: every categorical split's set lies in
    categories ``0 .. 63`` (its 64 bits, ``set_bits_of``, are the whole set)."""
    for k in range(children_left.shape[0]):
        if children_left[k] == LEAF or operator[k] != OP_CAT:
            continue
        offset = np.intp(threshold[k])
        for w in range(2, cat_bitsets[offset]):
            if cat_bitsets[offset + 1 + w] != 0:
                return False
    return True


@kernel
def set_bits_of(nodes, thresholds, cat_bitsets, first, end):
    """Per node of ``first .. end`` (packed records, any layout) the categories of its
    set as 64 bits (``low_categories``), 0 at numeric splits and leaves: what the lanes
    read at a categorical split. The other entries are left unset (never read)."""
    bits = empty(nodes.shape[0], np.uint64)
    for k in range(first, end):
        bits[k] = 0
        if nodes[k, 0] != LEAF and nodes[k, 3] & _FLAG_CAT:
            bits[k] = low_categories(cat_bitsets, np.intp(thresholds[k]))
    return bits


@kernel
def pack_tree(children_left, children_right, feature, threshold, missing_go_to_left,
              operator, cat_bitsets, fast):
    """One tree in the layout its permuted traversals read: the packed records, float64
    thresholds and operators (copies), in :func:`make_fast`'s layout when ``fast`` (only
    for finite data and trees of which :func:`fast_layout` holds), and the lanes'
    category bits (``set_bits_of``; empty unless ``fast`` and the tree has sets)."""
    nodes = pack_nodes(children_left, children_right, feature, missing_go_to_left, operator)
    thresholds = threshold.astype(np.float64)
    operators = operator.astype(np.uint8)
    set_bits = empty(0, np.uint64)
    if fast:
        make_fast(nodes, thresholds, operators)
        if cat_bitsets.shape[0] > 0:
            set_bits = set_bits_of(nodes, thresholds, cat_bitsets, 0, nodes.shape[0])
    return nodes, thresholds, operators, set_bits


@kernel
def row_offsets(rows, n_columns):
    """Where each of ``rows`` starts in the flat (C-order) data of ``n_columns`` columns:
    the ``start_base`` and ``item_source_base`` the routes read. (A loop, not
    ``rows * n_columns``: an array expression compiles a function of its own and Numba's
    broadcasting, a tenth of a second of a first run.)"""
    offsets = empty(rows.shape[0], np.intp)
    for k in range(rows.shape[0]):
        offsets[k] = rows[k] * n_columns
    return offsets


@kernel(inline="always")
def _goes_left(flags, threshold, value):
    """Whether ``value`` goes left at a packed split (``goes_left`` semantics)."""
    if flags & _FLAG_LT:
        left = value < threshold
    else:
        left = value <= threshold
    if not left and np.isnan(value):
        left = (flags & _FLAG_MISSING_LEFT) != 0
    return left


@leaf_kernel
def route_rows(n_items, item_origin, start_node, start_base, item_source_base, in_group,
               flat_X, flat_nodes, thresholds, cat_bitsets, leaves):
    """``leaves[k]``: the leaf reached from node ``start_node[o]`` by the row starting at
    ``flat_X[start_base[o]]``, where ``o = item_origin[k]``, reading the columns ``f``
    with ``in_group[f]`` set from the row starting at ``item_source_base[k]`` instead,
    for ``k < n_items``. Any packed layout (:func:`pack_nodes`, or :func:`make_fast`'s
    on finite data)."""
    for k in range(n_items):
        origin = item_origin[k]
        node = np.uint64(start_node[origin])
        base = np.uint64(start_base[origin])
        source = np.uint64(item_source_base[k])
        while True:
            at = _FOUR * node
            left = flat_nodes[at]
            if left == LEAF:
                break
            f = flat_nodes[at + _TWO]
            row = source if in_group[f] != 0 else base
            flags = flat_nodes[at + np.uint64(3)]
            value = flat_X[row + np.uint64(f)]
            if flags & _FLAG_CAT:
                if np.isnan(value):
                    go_left = (flags & _FLAG_MISSING_LEFT) != 0
                else:
                    go_left = in_category_set(value, cat_bitsets, np.intp(thresholds[node]))
            else:
                go_left = _goes_left(flags, thresholds[node], value)
            if go_left:
                node = np.uint64(left)
            else:
                node = np.uint64(flat_nodes[at + np.uint64(1)])
        leaves[k] = node


def lane_sets(cat_bitsets):
    """The ``sets`` argument of the kernels that route through :func:`route_permuted`
    for trees with these category sets: None when there are none (a first run then
    compiles only the lanes without the categorical test), else True."""
    return True if cat_bitsets.shape[0] > 0 else None


@leaf_kernel
def route_permuted(lanes, sets, n_items, item_origin, start_node, start_base, item_value,
                   item_source_base, in_group, column, flat_X, flat_nodes, thresholds,
                   cat_bitsets, set_bits, leaves):
    """The permuted traversal of a queue of items, by :func:`route_lanes` when ``lanes``
    (one column, ``column``, on finite data in the fast layout: reads ``item_value``)
    or :func:`route_rows` (reads ``item_source_base`` and ``in_group``). ``set_bits``:
    the lanes' category bits (``set_bits_of``), empty for trees without categorical
    splits, which take the lanes compiled without the categorical test. ``sets``: None
    when no tree of the caller has a category set: then only those lanes compile
    (Numba drops a branch on ``is None`` of a None argument at compile time); else
    True. ``start_node``: int32 (node ids, as in the packed records) for every caller,
    so that one version of each route compiles."""
    if not lanes:
        route_rows(n_items, item_origin, start_node, start_base, item_source_base, in_group,
                   flat_X, flat_nodes, thresholds, cat_bitsets, leaves)
    elif sets is None or set_bits.shape[0] == 0:
        route_lanes(n_items, item_origin, start_node, start_base, item_value, column,
                    flat_X, flat_nodes, thresholds, set_bits, False, leaves)
    else:
        route_lanes(n_items, item_origin, start_node, start_base, item_value, column,
                    flat_X, flat_nodes, thresholds, set_bits, True, leaves)


@leaf_kernel
def _step(node, base, permuted, column, flat_X, flat_nodes, thresholds, set_bits, sets):
    """The node after ``node`` (itself at a leaf) for the row starting at ``base`` of
    ``flat_X``, reading ``permuted`` instead of column ``column``. ``sets`` (a constant:
    each value compiles its own lanes): the tree may have categorical splits.

    A kernel of its own, which LLVM inlines into the lanes (no call is left in their
    machine code): Numba's own inlining copied and typed it, with :func:`_start`, at
    every call site, a large share of a first run's compiling."""
    f = flat_nodes[_FOUR * node + _TWO]
    read = flat_X[base + np.uint64(f)]
    # Both values read, then one picked: a select, not a branch.
    value = permuted if f == column else read
    right = np.uint64(value > thresholds[node])
    if sets:
        right = _set_step(node, value, right, flat_nodes, set_bits)
    child = flat_nodes[_FOUR * node + right]
    return node if child < 0 else np.uint64(child)


@leaf_kernel
def _set_step(node, value, right, flat_nodes, set_bits):
    """``right`` (1: goes right) at a numeric split; at a categorical one whether finite
    ``value`` goes right (``in_category_set``'s rule on a set within categories 0 .. 63,
    held as the 64 bits ``set_bits[node]``: a value outside ``[0, 64)`` is in no such
    set; finite values only, the lanes' data). In masks and integer arithmetic: written
    as selects and a clamp, the compiler turned them into branches on the data,
    mispredicted, and the lanes ran several times slower than on numeric splits.
    (Reading the set's words from ``cat_bitsets`` instead puts two more reads on every
    step's chain, which is slower too.)"""
    categorical = np.uint64(flat_nodes[_FOUR * node + np.uint64(3)]) >> _TWO  # 0 or 1
    inside = np.uint64(value >= 0.0) & np.uint64(value < 64.0)
    # Outside [0, 64) the category reads as 0 (a finite value times 0), masked off.
    code = np.int64(value * np.float64(inside))
    out = np.uint64(1) ^ ((set_bits[node] >> np.uint64(code)) & inside)
    return right ^ ((right ^ out) & (np.uint64(0) - categorical))


@leaf_kernel
def _start(k, item_origin, start_node, start_base):
    origin = item_origin[k]
    return np.uint64(start_node[origin]), np.uint64(start_base[origin])


@leaf_kernel
def route_lanes(n_items, item_origin, start_node, start_base, item_value, column, flat_X,
                flat_nodes, thresholds, set_bits, sets, leaves):
    """``leaves[k]``: the leaf reached from node ``start_node[o]`` by the row starting at
    ``flat_X[start_base[o]]``, where ``o = item_origin[k]``, reading ``item_value[k]``
    where a split reads column ``column`` (``-1``: no column is permuted), for
    ``k < n_items``. (Several items share an origin: one sample, several permuted
    values.) ``sets``: a constant, true when the trees may have categorical splits
    (then ``set_bits`` holds their sets, ``set_bits_of``).

    Twelve lanes advance one step per round until none moves (a lane on a leaf stays
    there); the last ``n_items % 12`` items go one at a time.
    """
    full = n_items - n_items % 12
    for k in range(0, full, 12):
        n0, b0 = _start(k, item_origin, start_node, start_base)
        n1, b1 = _start(k + 1, item_origin, start_node, start_base)
        n2, b2 = _start(k + 2, item_origin, start_node, start_base)
        n3, b3 = _start(k + 3, item_origin, start_node, start_base)
        n4, b4 = _start(k + 4, item_origin, start_node, start_base)
        n5, b5 = _start(k + 5, item_origin, start_node, start_base)
        n6, b6 = _start(k + 6, item_origin, start_node, start_base)
        n7, b7 = _start(k + 7, item_origin, start_node, start_base)
        n8, b8 = _start(k + 8, item_origin, start_node, start_base)
        n9, b9 = _start(k + 9, item_origin, start_node, start_base)
        n10, b10 = _start(k + 10, item_origin, start_node, start_base)
        n11, b11 = _start(k + 11, item_origin, start_node, start_base)
        v0, v1, v2, v3 = item_value[k], item_value[k + 1], item_value[k + 2], item_value[k + 3]
        v4, v5, v6, v7 = (item_value[k + 4], item_value[k + 5], item_value[k + 6],
                          item_value[k + 7])
        v8, v9, v10, v11 = (item_value[k + 8], item_value[k + 9], item_value[k + 10],
                            item_value[k + 11])
        moved = True
        while moved:
            m0 = _step(n0, b0, v0, column, flat_X, flat_nodes, thresholds, set_bits, sets)
            m1 = _step(n1, b1, v1, column, flat_X, flat_nodes, thresholds, set_bits, sets)
            m2 = _step(n2, b2, v2, column, flat_X, flat_nodes, thresholds, set_bits, sets)
            m3 = _step(n3, b3, v3, column, flat_X, flat_nodes, thresholds, set_bits, sets)
            m4 = _step(n4, b4, v4, column, flat_X, flat_nodes, thresholds, set_bits, sets)
            m5 = _step(n5, b5, v5, column, flat_X, flat_nodes, thresholds, set_bits, sets)
            m6 = _step(n6, b6, v6, column, flat_X, flat_nodes, thresholds, set_bits, sets)
            m7 = _step(n7, b7, v7, column, flat_X, flat_nodes, thresholds, set_bits, sets)
            m8 = _step(n8, b8, v8, column, flat_X, flat_nodes, thresholds, set_bits, sets)
            m9 = _step(n9, b9, v9, column, flat_X, flat_nodes, thresholds, set_bits, sets)
            m10 = _step(n10, b10, v10, column, flat_X, flat_nodes, thresholds, set_bits, sets)
            m11 = _step(n11, b11, v11, column, flat_X, flat_nodes, thresholds, set_bits, sets)
            moved = ((m0 != n0) | (m1 != n1) | (m2 != n2) | (m3 != n3) | (m4 != n4)
                     | (m5 != n5) | (m6 != n6) | (m7 != n7) | (m8 != n8) | (m9 != n9)
                     | (m10 != n10) | (m11 != n11))
            n0, n1, n2, n3, n4, n5 = m0, m1, m2, m3, m4, m5
            n6, n7, n8, n9, n10, n11 = m6, m7, m8, m9, m10, m11
        leaves[k], leaves[k + 1], leaves[k + 2], leaves[k + 3] = n0, n1, n2, n3
        leaves[k + 4], leaves[k + 5], leaves[k + 6], leaves[k + 7] = n4, n5, n6, n7
        leaves[k + 8], leaves[k + 9], leaves[k + 10], leaves[k + 11] = n8, n9, n10, n11
    for k in range(full, n_items):
        node, base = _start(k, item_origin, start_node, start_base)
        while True:
            after = _step(node, base, item_value[k], column, flat_X, flat_nodes, thresholds,
                          set_bits, sets)
            if after == node:
                break
            node = after
        leaves[k] = node


@kernel
def _every_row(n_samples, n_columns):
    """The item arrays that route every row once: item i is row i (its origin), its
    start node (filled per tree; int32 as the other routes' start nodes) and where its
    row starts in the flat data. Called, not inlined: inlined into :func:`apply_lanes`
    it made the lanes many times slower."""
    sample = empty(n_samples, np.uint32)
    root = empty(n_samples, np.int32)
    base = empty(n_samples, np.intp)
    for i in range(n_samples):
        sample[i] = i
        base[i] = i * n_columns
    return sample, root, base


@kernel
def apply_rows(X, nodes, thresholds, roots, cat_bitsets):
    """Global leaf ids, shape (n_trees, n_samples), on any packed layout
    (:func:`pack_nodes`', or :func:`make_fast`'s on finite data): every sample of ``X``
    (C-contiguous) routed from each root by :func:`route_rows`, missing values and
    category sets going where the splits send them. For data the lanes do not take:
    the packed records are all it reads, so the separate node arrays need not be kept
    to route more rows later."""
    n_trees = roots.shape[0]
    n_samples = X.shape[0]
    leaves = empty((n_trees, n_samples), np.intp)
    sample, root, base = _every_row(n_samples, X.shape[1])
    in_group = zeros(X.shape[1], np.uint8)  # no column read from another row
    flat_X = X.reshape(-1)
    flat_nodes = nodes.reshape(-1)
    for t in range(n_trees):
        for i in range(n_samples):
            root[i] = roots[t]
        route_rows(n_samples, sample, root, base, base, in_group, flat_X, flat_nodes,
                   thresholds, cat_bitsets, leaves[t])
    return leaves


@kernel
def apply_lanes(X, nodes, thresholds, roots, cat_bitsets=None):
    """Global leaf ids, shape (n_trees, n_samples), on ``make_fast``'s layout (finite
    ``X``, C-contiguous): every sample routed from each root by ``route_lanes``
    (``cat_bitsets``: the category sets of the trees' categorical splits, if any; then
    ``fast_layout`` must hold). Without them only the lanes without the categorical
    test compile (Numba drops the other branch for a None argument); one kernel, not
    one calling another, which would optimise all the lanes' code again."""
    n_trees = roots.shape[0]
    n_samples = X.shape[0]
    leaves = empty((n_trees, n_samples), np.intp)
    sample, root, base = _every_row(n_samples, X.shape[1])
    unused = zeros(n_samples, np.float64)
    flat_X = X.reshape(-1)
    flat_nodes = nodes.reshape(-1)
    if cat_bitsets is None:
        no_sets = empty(0, np.uint64)
        for t in range(n_trees):
            for i in range(n_samples):
                root[i] = roots[t]
            route_lanes(n_samples, sample, root, base, unused, -1, flat_X, flat_nodes,
                        thresholds, no_sets, False, leaves[t])
    else:
        set_bits = set_bits_of(nodes, thresholds, cat_bitsets, roots[0], nodes.shape[0])
        for t in range(n_trees):
            for i in range(n_samples):
                root[i] = roots[t]
            route_lanes(n_samples, sample, root, base, unused, -1, flat_X, flat_nodes,
                        thresholds, set_bits, True, leaves[t])
    return leaves
