"""The first call of a public function compiles only the kernels it needs (issue 20,
item 3).

Each case runs in a new interpreter with an empty Numba cache and lists the sapwood
kernels Numba compiled (``tests/kernels/compile_record.py``): reading a model compiles
no learner and no measure, a measure compiles no learner and no other measure, and a
fit compiles the code of its own criterion only. A first call is what a new user waits
for, and every kernel compiled that the call does not run is time lost.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sapwood._kernels._criteria import GINI, SQUARED_ERROR

ROOT = Path(__file__).resolve().parents[1]
RECORDER = ROOT / "tests" / "kernels" / "compile_record.py"

FOREST = """
import numpy as np
from sklearn.ensemble import RandomForestRegressor
import sapwood
X = np.random.default_rng(0).normal(size=(200, 4))
y = X[:, 0] + X[:, 1]
forest = RandomForestRegressor(n_estimators=3, max_depth=4, random_state=0).fit(X, y)
"""

# Kernel modules of the learners (growing trees) and of each measure.
LEARNERS = {"_grow", "_split", "_criteria", "_sort", "_random", "_losses", "_prune"}
READING = {"_traverse"}  # a model read into the tree format is checked (node depths)
PERMUTATION = READING | {"_tree_index", "_permutation", "_permuted_traversal",
                         "_permuted_sums"}
SHAP = READING | {"_shap"}

# Kernels only some criteria call: entropy and Poisson (logarithms), Poisson (its
# deviance), absolute error (medians by Fenwick trees).
ENTROPY_OR_POISSON = {"log2"}
POISSON_ONLY = {"xlogy", "_poisson_loss"}
ABSOLUTE_ERROR_ONLY = {"move_weight", "mae_proxy", "_mae_precompute", "_absolute_errors",
                       "_fenwick_add", "_fenwick_search"}
# The kernels made per criterion (closures over its code) and per splitter.
PER_CRITERION = {"split", "scan", "depth_first", "best_first"}


def _compiled(statements: str, tmp_path: Path) -> list[tuple[str, str, list]]:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")}
    done = subprocess.run([sys.executable, str(RECORDER), statements], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=True)
    return [tuple(entry) for entry in json.loads(done.stdout.splitlines()[-1])]


def _modules(compiled) -> set[str]:
    return {module for module, _, _ in compiled}


def test_reading_a_model_compiles_only_its_checks(tmp_path):
    compiled = _compiled(FOREST + "sapwood.from_model(forest)", tmp_path)
    assert compiled  # the recorder sees compiles: the check below is not vacuous
    assert _modules(compiled) <= READING


def test_permutation_importance_compiles_no_learner_and_no_other_measure(tmp_path):
    compiled = _compiled(FOREST + """
from sapwood.importance import permutation_importance
permutation_importance(forest, X, y, n_repeats=2, random_state=0)
""", tmp_path)
    assert {"_permutation", "_permuted_traversal"} <= _modules(compiled)
    assert _modules(compiled) <= PERMUTATION


@pytest.mark.slow
def test_tree_shap_compiles_no_learner_and_no_other_measure(tmp_path):
    compiled = _compiled(FOREST + """
from sapwood.importance import tree_shap
tree_shap(forest, X[:20])
""", tmp_path)
    assert "_shap" in _modules(compiled)
    assert _modules(compiled) <= SHAP


@pytest.mark.slow
@pytest.mark.parametrize("learner, code", [("DecisionTreeClassifier", GINI),
                                           ("DecisionTreeRegressor", SQUARED_ERROR)])
def test_a_fit_compiles_its_own_criterion_only(tmp_path, learner, code):
    compiled = _compiled(f"""
import numpy as np
from sapwood.learners import {learner}
X = np.random.default_rng(0).normal(size=(200, 4))
{learner}(random_state=0).fit(X, (X[:, 0] > 0).astype(int))
""", tmp_path)
    names = {name for _, name, _ in compiled}
    assert {"split", "scan", "depth_first"} <= names
    assert _modules(compiled) <= LEARNERS | READING
    assert not names & (ENTROPY_OR_POISSON | POISSON_ONLY | ABSOLUTE_ERROR_ONLY)
    # one criterion's and one splitter's versions of the per-criterion kernels
    for _, name, constants in compiled:
        if name in PER_CRITERION:
            assert constants[0] == code, (name, constants)
            if len(constants) > 1:
                assert constants[1] is False, (name, constants)  # the best splitter
