"""Compare a sapwood tree with scikit-learn's, field by field."""

import numpy as np

STRUCTURE = ("children_left", "children_right", "feature", "threshold", "n_node_samples")
NUMBERS = ("impurity", "weighted_n_node_samples", "value")


def tree_differences(ours, theirs):
    """Names of the fields where two trees differ (empty when they are the same tree).

    Structure must match exactly. Impurities, weights and values must be bit-identical;
    a difference only in the last bits is reported with a ``~`` so a failure says
    whether the trees differ or only their rounding.
    """
    if ours.node_count != theirs.node_count:
        return [f"node_count {ours.node_count} != {theirs.node_count}"]
    different = [name for name in STRUCTURE
                 if not np.array_equal(getattr(ours, name), getattr(theirs, name))]
    for name in NUMBERS:
        a, b = getattr(ours, name), getattr(theirs, name)
        if not np.array_equal(a, b):
            close = np.allclose(a, b, rtol=1e-12, atol=1e-15)
            different.append(name + ("~" if close else ""))
    split = theirs.children_left != -1
    if not np.array_equal(ours.missing_go_to_left[split], theirs.missing_go_to_left[split]):
        different.append("missing_go_to_left")
    return different
