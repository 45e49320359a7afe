"""B-CHECKS (issue 52, item 4): the identifier, leakage and correlation checks' share of
``sapwood.explain`` on a 300,000 x 20 table, and the time estimates against the times.

On a 327,000-row table the checks took 42% of an explain run, most of it permutation
re-run once per correlated group. This group times the whole call with the default
measures (mdi, permutation) in a new process, as bench_bigtable does, and inside the
checks (``find_warnings``) each of them: identifiers, leakage, the association matrix
and the correlated groups' joint permutation importance. Target: the checks take at
most 20% of the call.

The table: 300,000 rows of 20 float32 columns: Friedman's regression #1 on x0..x9
(x0-x4 informative, x5-x9 noise) and x10..x19, each a noisy copy of x0..x9 (uniform
noise of 5% of the range): ten correlated pairs, so that the groups' joint
permutation runs. Generated with a fixed seed.

It also reads what the run's cost guess (report/_cost.py) said of the held-out
permutation importance before it ran, against its measured time (target: within 3x
either way, or no guess shown).

And (B-RANKS) the simultaneous rank intervals of 1,500 features, which the report's
tables and the agreement read.

``--quick``: 3,000 rows; rank intervals of 100 features.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from ._timing import REPO

__all__ = ["child", "make_table", "run"]

ROWS = 300_000
SHARE_TARGET = 0.20
ESTIMATE_FACTOR = 3.0
WARM_ROWS = 2_000


def make_table(n_rows: int, seed: int = 0):
    """``(X, y)``: X a float32 DataFrame x0..x19 (x10+j a noisy copy of xj), y Friedman
    #1 of x0..x4 with standard normal noise."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    base = rng.random((n_rows, 10))
    copies = base + 0.05 * rng.random((n_rows, 10))
    X = np.hstack([base, copies]).astype(np.float32)
    y = (10 * np.sin(np.pi * base[:, 0] * base[:, 1]) + 20 * (base[:, 2] - 0.5) ** 2
         + 10 * base[:, 3] + 5 * base[:, 4] + rng.standard_normal(n_rows))
    return (pd.DataFrame(X, columns=[f"x{j}" for j in range(20)]),
            pd.Series(y, name="y"))


def child(n_rows: int) -> dict:
    """One timed run in this process: the whole call, the checks and each of them, the
    measures, and the cost guess for permutation beside its time."""
    import sapwood
    from sapwood.report import _cost, _explain, _measures, _verdict

    X, y = make_table(n_rows)
    sapwood.explain(X.iloc[:WARM_ROWS], y.iloc[:WARM_ROWS])  # kernels from the cache
    seconds = {}
    guesses = {}

    def timed(name, function, key=None):
        def call(*args, **kwargs):
            label = key(args) if key else name
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                seconds[label] = seconds.get(label, 0.0) + time.perf_counter() - started
        return call

    _verdict.find_warnings = timed("checks", _verdict.find_warnings)
    _verdict.find_identifiers = timed("identifiers", _verdict.find_identifiers)
    _verdict.find_leakage = timed("leakage", _verdict.find_leakage)
    _verdict.find_correlated = timed("association", _verdict.find_correlated)
    _verdict.with_joint = timed("groups' joint permutation", _verdict.with_joint)
    _measures.compute = timed("measure", _measures.compute, key=lambda args: args[0])
    _explain._fit = timed("fit", _explain._fit)

    def guess(measure, inputs, timing, n_features, tree_model=True):
        found = _cost.expected_seconds(measure, inputs, timing, n_features, tree_model)
        if found is not None:
            guesses[measure.name] = found[0]
        return _cost.long_wait(measure, inputs, timing, n_features, tree_model)

    _explain.long_wait = guess
    bars = io.StringIO()
    stderr, sys.stderr = sys.stderr, bars
    started = time.perf_counter()
    try:
        report = sapwood.explain(X, y, progress=True)
    finally:
        sys.stderr = stderr
    total = time.perf_counter() - started
    return {"n_rows": n_rows, "seconds": total, "steps": seconds, "guesses": guesses,
            "groups": len(report.verdict.groups), "model": report.model_text,
            "score": report.score, "load": os.getloadavg()}


def _run_child(n_rows: int) -> dict:
    code = (f"import json\nfrom benchmarks.bench_checks import child\n"
            f"print(json.dumps(child({n_rows})))")
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.run([sys.executable, "-c", code], stdout=out, stderr=err,
                                 cwd=REPO, check=False)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if process.returncode != 0:
        tail = stderr.strip().splitlines()[-1:] or [f"status {process.returncode}"]
        raise RuntimeError(f"explain on {n_rows:,} rows failed: {tail[0]}")
    return json.loads(stdout.strip().splitlines()[-1])


def ranks(quick: bool = False) -> list[dict]:
    """B-RANKS: simultaneous rank intervals (the max-t simulation) of 1,500 features from
    100 draws (a 100-tree forest's MDI: the normal limit) and from 30 (studentised
    again), and of 300 features from 30; synthetic draws, one run each."""
    from sapwood.importance._engine._ranks import rank_intervals

    shapes = [(100, 100), (100, 30)] if quick else [(1_500, 100), (1_500, 30), (300, 30)]
    rows = []
    rng = np.random.default_rng(0)
    for p, n in shapes:
        draws = rng.normal(size=(p, n)) + np.linspace(0, 3, p)[:, None]
        started, cpu = time.perf_counter(), time.process_time()
        found = rank_intervals(draws)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        rows.append({"id": "B-RANKS", "workload": f"rank intervals, {p:,} features x {n} "
                     "draws", "peer": None, "peer_s": None, "sapwood_s": seconds,
                     "target": "a few seconds (<= 5 s)", "met": bool(seconds <= 5),
                     "check": f"critical value {found.critical_value:.3f}; CPU {cpu:.1f} s; load "
                              f"{os.getloadavg()[0]:.1f}"})
    return rows


def run(quick: bool = False) -> list[dict]:
    """The harness protocol (benchmarks/README.md): the checks' share, the guess, and
    the rank intervals of many features."""
    n_rows = 3_000 if quick else ROWS
    print(f"  explain on {n_rows:,} x 20 (load {os.getloadavg()[0]:.1f}) ...",
          file=sys.stderr)
    result = _run_child(n_rows)
    steps = result["steps"]
    share = steps.get("checks", 0.0) / result["seconds"]
    inside = ", ".join(f"{name} {steps[name]:.1f} s" for name in
                       ("identifiers", "leakage", "association", "groups' joint permutation")
                       if name in steps)
    measures = ", ".join(f"{name} {value:.1f} s" for name, value in steps.items()
                         if name not in ("checks", "identifiers", "leakage", "association",
                                         "groups' joint permutation"))
    rows = [{
        "id": "B-CHECKS",
        "workload": f"sapwood.explain (mdi, permutation), default forest, {n_rows:,} x 20 "
                    f"float32 (ten correlated pairs), new process: the checks' share",
        "peer": "the whole call", "peer_s": result["seconds"],
        "sapwood_s": steps.get("checks"), "ratio": share,
        "target": f"<= {SHARE_TARGET:.2f}", "met": bool(share <= SHARE_TARGET),
        "check": (f"checks {steps.get('checks', 0):.1f} s of {result['seconds']:.1f} s "
                  f"({inside}; {result['groups']} groups); {measures}; "
                  f"{result['model']}, held-out R² {result['score']:.3f}; load "
                  f"{result['load'][0]:.1f}"),
        "raw": result}]
    guess = result["guesses"].get("permutation")
    measured = steps.get("permutation")
    if guess is not None and measured:
        ratio = guess / measured
        rows.append({
            "id": "B-CHECKS-estimate",
            "workload": f"the cost guess for held-out permutation on {n_rows:,} x 20 "
                        "against its measured time",
            "peer": "measured", "peer_s": measured, "sapwood_s": guess, "ratio": ratio,
            "target": f"within {ESTIMATE_FACTOR:g}x",
            "met": bool(1 / ESTIMATE_FACTOR <= ratio <= ESTIMATE_FACTOR),
            "check": "report/_cost.py's expected_seconds (shown only above a minute)"})
    return rows + ranks(quick)
