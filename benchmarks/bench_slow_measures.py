"""B20 and MDI+ (issue 41, item 7): SAGE against the sage package, MDI+ before and after.

The table is ``sapwood.datasets.make_ground_truth`` (classification, 9 features); one
sapwood ``RandomForestClassifier(n_estimators=100, random_state=0)`` is fit on its
training rows (a NumPy array: the sage package's imputer predicts arrays).

- B20, SAGE: on 100 held-out rows of a 500-row table (400 training rows), with those
  100 rows as the background (marginal imputation), cross entropy, batches of 512, the
  sage package's stopping rule at ``thresh=0.05`` (its default 0.025 takes the package
  several minutes per run here). The sage package's ``PermutationEstimator(
  MarginalImputer(forest, background), "cross entropy", random_state=0)`` against
  ``sapwood.importance.sage(forest, X, y, background=background, thresh=0.05,
  random_state=0)``: the same random stream, so the same draws and stop; the values must
  agree to 1e-9. Both on one thread (the forest's ``n_jobs`` is None; sapwood's
  ``n_jobs=None``). Target: at most 0.2x the package's time.
- MDI+: ``sapwood.importance.mdi_plus`` (leave-one-out) on the training rows of a
  2,000-row table (1,600 rows) and of a 500-row one (400 rows), against the code of
  main 4e0c047 (before issue 41, item 7), loaded from git, with the BLAS threads numpy
  starts (the user's setting). Per-tree R^2 must agree to 1e-10. Target: at most 0.2x.

Runs take turns (peer, sapwood); sapwood's first call (compile or cache load) is
reported apart. SAGE: one run of the package (the same work every time), three of
sapwood; MDI+: three of each, interleaved. ``--quick``: 20 trees, one run each.
"""

from __future__ import annotations

import importlib.util
import statistics
import subprocess
import sys
import time
import warnings

import numpy as np

from sapwood.datasets import make_ground_truth
from sapwood.importance import mdi_plus, sage
from sapwood.learners import RandomForestClassifier

from ._timing import REPO, repeats_for

__all__ = ["run"]

SAGE_TARGET, MDI_PLUS_TARGET = 0.2, 0.2
# main before issue 41, item 7: MDI+ by one SVD of each tree's design.
MDI_PLUS_BEFORE = "4e0c047"


def _progress(message):
    print(message, file=sys.stderr, flush=True)


def _timed(function):
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def _forest(n_rows, n_trees, train_rows):
    X, y, _ = make_ground_truth(n_rows, "classification", random_state=0)
    X, y = X.to_numpy(dtype=np.float64), y.to_numpy()
    forest = RandomForestClassifier(n_estimators=n_trees, random_state=0)
    forest.fit(X[:train_rows], y[:train_rows])
    return forest, X, y


def mdi_plus_before():
    """``mdi_plus`` as of ``MDI_PLUS_BEFORE``, loaded from git into the package (its
    relative imports resolve there)."""
    source = subprocess.run(
        ["git", "show", f"{MDI_PLUS_BEFORE}:src/sapwood/importance/_mdi_plus.py"],
        cwd=REPO, check=True, capture_output=True, text=True).stdout
    name = "sapwood.importance._mdi_plus_before"
    spec = importlib.util.spec_from_loader(name, loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "sapwood.importance"
    exec(compile(source, f"{MDI_PLUS_BEFORE}:_mdi_plus.py", "exec"), module.__dict__)
    return module.mdi_plus


def _sage_row(quick):
    import sage as sage_package  # the peer: sage-importance, a test dependency

    n_trees = 20 if quick else 100
    forest, X, y = _forest(500, n_trees, 400)
    X, y = X[400:], y[400:]
    background = X
    thresh = 0.05

    def ours():
        return sage(forest, X, y, background=background, thresh=thresh, random_state=0)

    def theirs():
        estimator = sage_package.PermutationEstimator(
            sage_package.MarginalImputer(forest, background), "cross entropy",
            random_state=0)
        return estimator(X, y, thresh=thresh, batch_size=512, bar=False)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first, _ = _timed(ours)
        mine_s = []
        for r in range(repeats_for(quick)):
            seconds, mine = _timed(ours)
            mine_s.append(seconds)
            if r == 0:
                peer_s, peer = _timed(theirs)
    own_warnings = [w for w in caught if "sapwood" in w.filename]
    close = (np.allclose(mine.importances_mean, peer.values, rtol=0, atol=1e-9)
             and np.allclose(mine.extra["std_error"], peer.std, rtol=0, atol=1e-9))
    _progress(f"B20: sapwood {mine_s} ({mine.params['n_permutations']} draws, "
              f"{mine.extra['evaluator']}), sage package {peer_s:.1f} s, first call "
              f"{first:.2f} s")
    return {"id": "B20", "workload": f"SAGE, {n_trees}-tree forest, {X.shape[0]} held-out "
            f"rows = background, cross entropy, thresh {thresh}, "
            f"{mine.params['n_permutations']} draws", "peer": "sage-importance",
            "peer_s": peer_s, "sapwood_s": statistics.median(mine_s),
            "target": f"<= {SAGE_TARGET}",
            "check": ("equal to 1e-9" if close else "DIFFERENT")
            + ("" if not own_warnings else f", {len(own_warnings)} warnings"),
            "first_call_s": first, "met": None}


def _mdi_plus_rows(quick):
    before = mdi_plus_before()
    rows = []
    sizes = [(500, 400)] if quick else [(2_000, 1_600), (500, 400)]
    for n_rows, train_rows in sizes:
        forest, X, y = _forest(n_rows, 20 if quick else 100, train_rows)
        X, y = X[:train_rows], y[:train_rows]
        first, _ = _timed(lambda: mdi_plus(forest, X, y))  # noqa: B023
        old_s, new_s = [], []
        for _ in range(repeats_for(quick)):
            seconds, old = _timed(lambda: before(forest, X, y))  # noqa: B023
            old_s.append(seconds)
            seconds, new = _timed(lambda: mdi_plus(forest, X, y))  # noqa: B023
            new_s.append(seconds)
        close = np.allclose(new.importances, old.importances, rtol=0, atol=1e-10)
        _progress(f"MDI+ {train_rows} rows: after {new_s}, before {old_s}, first call "
                  f"{first:.2f} s")
        rows.append({"id": f"MDI+{train_rows}", "workload": f"mdi_plus (loo), "
                     f"{forest.n_estimators}-tree forest, {train_rows} training rows",
                     "peer": f"sapwood {MDI_PLUS_BEFORE}", "peer_s": statistics.median(old_s),
                     "sapwood_s": statistics.median(new_s),
                     "target": f"<= {MDI_PLUS_TARGET}",
                     "check": "equal to 1e-10" if close else "DIFFERENT",
                     "first_call_s": first, "met": None})
    return rows


def run(quick: bool = False) -> list[dict]:
    rows = [_sage_row(quick), *_mdi_plus_rows(quick)]
    for row in rows:
        target = SAGE_TARGET if row["id"] == "B20" else MDI_PLUS_TARGET
        row["met"] = row["sapwood_s"] / row["peer_s"] <= target
    return rows
