"""sapwood against R's party on party's own forests (fixtures from
``tests/reference/r/party/make_fixtures.R``; R is not needed to run these tests).

docs/measures.md says ``conditional_permutation_importance`` is party's
``varimp(conditional = TRUE)`` (Strobl et al. 2008) and that the out-of-bag permutation
importance permutes the values of a feature among a tree's out-of-bag rows, which is
party's ``varimp(pre1.0_0 = TRUE)``. party grows conditional inference trees, which
sapwood cannot grow, so the check is made on party's forest: its trees and in-bag
weights are read into sapwood's tree format, and party's permutations of every tree's
out-of-bag rows are handed to sapwood in place of its own draws. sapwood then chooses
the conditioning sets, cuts the cells and scores the trees itself; the numbers must be
party's.

party's default unconditional ``varimp`` (since party 1.0-0) sends rows at splits on the
feature left or right at random (Hapfelmeier et al. 2014, doi:10.1007/s11222-012-9349-1)
and ``varimpAUC`` lives in the varImp package: sapwood computes neither, so neither is
checked here.
"""

import types

import numpy as np
import pandas as pd
import pytest

from sapwood.importance import (
    _conditional,
    _oob,
    conditional_permutation_importance,
    oob_permutation_importance,
)
from sapwood.importance._conditional import association_test
from tests.reference.r import PARTY, party_forest, read

CASES = [("party_regression", False), ("party_classification", True)]
THRESHOLD = 0.2  # party's default, the one make_fixtures.R used
N_REPEATS = 2  # varimp(conditional = TRUE, nperm = 2)


class _ReplayedPermutations:
    """Stands in for ``np.random.RandomState``: tree t's generator (known by its seed)
    hands out party's permutations of its out-of-bag rows in the order sapwood's
    documented stream asks for them, repeat by repeat and, within one, feature by
    feature in column order. A feature the tree does not split on gets the identity:
    party draws none for it and it changes no prediction. ``cells[seed][j]`` is
    party's cell of every out-of-bag row for feature j (None where unused)."""

    def __init__(self, ensemble, draws, n_repeats):
        seeds = np.random.RandomState(0).randint(np.iinfo(np.int32).max,
                                                 size=ensemble.n_trees)
        self.orders, self.cells = {}, {}
        for t, seed in enumerate(seeds.tolist()):
            m = int(np.count_nonzero(ensemble.bootstrap.counts(t) == 0))
            own = draws[draws["tree"] == t + 1]
            drawn = {(r, j): _drawn(own, j, r, m) for r in range(1, n_repeats + 1)
                     for j in range(ensemble.n_features)}
            self.orders[seed] = [None if drawn[r, j] is None else drawn[r, j][0]
                                 for r in range(1, n_repeats + 1)
                                 for j in range(ensemble.n_features)]
            self.cells[seed] = [None if drawn[1, j] is None else drawn[1, j][1]
                                for j in range(ensemble.n_features)]
        self.handed_out = dict.fromkeys(self.orders, 0)

    def __call__(self, seed):
        replay, seed = self, int(seed)

        class Tree:
            def permutation(self, m):
                order = replay.orders[seed][replay.handed_out[seed]]
                replay.handed_out[seed] += 1
                return np.arange(m) if order is None else order
        return Tree()


def _drawn(draws, j, r, m):
    """(pi, cells) of feature x{j+1} in repeat r, or None if party drew nothing.

    Party's k-th out-of-bag row reads the value of the out-of-bag row at position
    sources[k], always one of its own cell. sapwood gives every cell's rows, in row
    order, the values of the cell's rows in the order pi lists them; so pi lists party's
    cells one after the other, the last-starting cell first, each cell's sources in
    the order of the rows reading them. With sapwood's cells equal to party's this is
    party's permutation; with cells that merge two of party's, rows would read from
    the wrong cell (the order of the cells in pi is not the rows' order)."""
    row = draws[(draws["feature"] == f"x{j + 1}") & (draws["repeat"] == r)]
    if row.empty:
        return None
    (sources,), (cells,) = row["sources"], row["cells"]
    sources = np.array(sources.split(), dtype=np.intp)
    cells = np.array(cells.split(), dtype=np.intp)
    assert np.array_equal(np.sort(sources), np.arange(m))
    assert np.array_equal(cells[sources], cells)  # party permutes within cells
    pi = np.concatenate([sources[cells == c] for c in np.unique(cells)[::-1]])
    return pi, cells


def _replay_case(monkeypatch, module, ensemble, name, kind, n_repeats):
    draws = read(f"{name}_permutations.csv", PARTY)
    replay = _ReplayedPermutations(ensemble, draws[draws["kind"] == kind], n_repeats)
    random = types.SimpleNamespace(**{**vars(np.random), "RandomState": replay})
    monkeypatch.setattr(module, "np", types.SimpleNamespace(**{**vars(np), "random": random}))
    return replay


@pytest.mark.parametrize("name, classification", CASES)
def test_association_test_and_conditioning_sets_are_partys(name, classification):
    ensemble, X, y = party_forest(name, classification)
    party = read(f"{name}_association.csv", PARTY)
    names = [f"x{j + 1}" for j in range(X.shape[1])]
    _, criterion = association_test(X)
    position = {feature: j for j, feature in enumerate(names)}
    ours = criterion[party["feature"].map(position), party["other"].map(position)]
    # ctree's 1 - p from its own linear statistic, sapwood's from (n - 1) r^2.
    np.testing.assert_allclose(ours, party["criterion"], rtol=1e-12, atol=1e-14)
    chosen = {feature: sorted(group["other"][group["conditioned"]])
              for feature, group in party.groupby("feature")}
    assert any(chosen.values()) and not all(len(v) == len(names) - 1 for v in chosen.values())
    result = conditional_permutation_importance(ensemble, pd.DataFrame(X, columns=names), y,
                                                threshold=THRESHOLD, random_state=0,
                                                n_jobs=1)
    assert result.extra["conditioning"] == chosen


@pytest.mark.parametrize("name, classification", CASES)
def test_conditional_permutation_equals_party_varimp_conditional(name, classification,
                                                                 monkeypatch):
    ensemble, X, y = party_forest(name, classification)
    replay = _replay_case(monkeypatch, _conditional, ensemble, name, "conditional",
                          N_REPEATS)
    result = conditional_permutation_importance(ensemble, X, y, threshold=THRESHOLD,
                                                n_repeats=N_REPEATS, random_state=0,
                                                n_jobs=1)
    # Every tree drew one permutation per repeat and feature, party's where it had one.
    assert replay.handed_out == {seed: N_REPEATS * X.shape[1] for seed in replay.orders}
    # As many cells as party's for every tree and feature it splits on (0: unused).
    party_cells = np.array([[0 if cells is None else len(np.unique(cells))
                             for cells in replay.cells[seed]] for seed in replay.cells]).T
    np.testing.assert_array_equal(result.extra["n_cells"], party_cells)
    assert (party_cells > 1).sum() > party_cells.size / 4  # the conditioning is exercised
    expected = read(f"{name}_importance.csv", PARTY)
    np.testing.assert_allclose(result.importances_mean, expected["conditional"],
                               rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(result.importances, _per_tree(name, "conditional", ensemble),
                               rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name, classification", CASES)
def test_oob_permutation_equals_party_varimp_pre1(name, classification, monkeypatch):
    """``varimp(pre1.0_0 = TRUE)``: Breiman's permutation of the values among each tree's
    out-of-bag rows, the out-of-bag permutation importance; the conditional importance
    with threshold 1 (which conditions on nothing) is the same."""
    ensemble, X, y = party_forest(name, classification)
    expected = read(f"{name}_importance.csv", PARTY)["unconditional"]
    replay = _replay_case(monkeypatch, _oob, ensemble, name, "unconditional", 1)
    result = oob_permutation_importance(ensemble, X, y, random_state=0, n_jobs=1)
    assert replay.handed_out == {seed: X.shape[1] for seed in replay.orders}
    np.testing.assert_allclose(result.importances_mean, expected, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(result.importances, _per_tree(name, "unconditional", ensemble),
                               rtol=1e-12, atol=1e-15)
    replay = _replay_case(monkeypatch, _conditional, ensemble, name, "unconditional", 1)
    result = conditional_permutation_importance(ensemble, X, y, threshold=1.0,
                                                random_state=0, n_jobs=1)
    np.testing.assert_allclose(result.importances_mean, expected, rtol=1e-12, atol=1e-15)



def _per_tree(name, kind, ensemble):
    """Party's increase in each tree's error, averaged over the repeats, shape
    (n_features, n_trees); 0 for a feature the tree does not split on (varimp's 0)."""
    draws = read(f"{name}_permutations.csv", PARTY)
    draws = draws[draws["kind"] == kind]
    mean = draws.groupby(["feature", "tree"])["increase"].mean()
    return np.array([[mean.get((f"x{j + 1}", t + 1), 0.0) for t in range(ensemble.n_trees)]
                     for j in range(ensemble.n_features)])
