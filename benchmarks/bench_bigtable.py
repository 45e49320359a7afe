"""B21: ``sapwood.explain`` on a 1,000,000 x 20 table, against its run on 125,000 rows.

A user with a 1,000,000 x 20 float32 table waited nine minutes for the fit of the
command line's default forest on 2 cores, and the forest held about 10 GB: 100 trees
grown in full, each with about one leaf per distinct row it drew. The default forest
now grows each tree on at most ``LARGE_TABLE_ROWS`` rows (sapwood.report._models); this
group times the whole ``sapwood.explain`` call with the default measures (mdi,
permutation), as a user waits for it, on the first 125,000 rows of the table and on all
of it, each in a new process so that each run's peak memory is its own. Targets (issue
44, item 4): the 1,000,000-row run takes at most 12 times the 125,000-row run, and its
peak memory is at most 4 GB.

The table: Friedman's regression #1 on 20 uniform float32 features (5 informative, 15
noise) with standard normal noise, generated with a fixed seed (nothing downloaded).

Each run reports the seconds of the fit, of each measure, of the steps around them
(``score``: the held-out score and the accuracy beside it; ``baseline``: the constant
model's comparison; ``warnings``: the checks for identifiers, leakage and correlated
features) and of the whole call (wall clock and the process's CPU time: the host is
shared, and CPU time moves less with its load), the peak resident memory of the process
and of the call alone, and the progress bars the call drew (each counted bar shows the
time left).

``python -m benchmarks.bench_bigtable --accuracy`` measures what the bound on the rows
per tree costs in held-out accuracy (R², accuracy): on the 1,000,000-row table against
the forest grown in full, and, as a stand-in at the same share of rows per tree, on
the benchmark tables D1-D4 and the 125,000-row table (:func:`accuracy`). It takes
about an hour on 2 cores and is not part of ``run``.

``python -m benchmarks.bench_bigtable --large`` runs the 1,000,000-row run alone (about
half the group's time) and prints its JSON.

``--quick``: 2,000 and 16,000 rows of a 16,000-row table.
"""

from __future__ import annotations

import io
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

from ._timing import REPO, peak_rss_mb, reset_peak_rss

__all__ = ["accuracy", "make_table", "run"]

FULL_ROWS = 1_000_000
SMALL_ROWS = 125_000
N_FEATURES = 20
TIME_RATIO_TARGET = 12.0
PEAK_TARGET_GB = 4.0
# Rows explain fits first, untimed, so that Numba's kernels are loaded from its cache.
WARM_ROWS = 2_000
# Lines of the progress bars kept in the report: the fit's trees and the measures' own.
_BAR = re.compile(r"^(Growing trees|permuted scores|held-out rows|Fitting|Computing|Scoring|✓)")


def make_table(n_rows: int, full_rows: int = FULL_ROWS, seed: int = 0):
    """``(X, y)``: the first ``n_rows`` rows of the ``full_rows``-row table, X a float32
    DataFrame of 20 features ``x0``..``x19``, y a float64 Series ``y``.

    Friedman #1: y = 10 sin(pi x0 x1) + 20 (x2 - 0.5)^2 + 10 x3 + 5 x4 + N(0, 1), every
    feature uniform on [0, 1). The first rows of the large table are the small one."""
    import pandas as pd

    if not 0 < n_rows <= full_rows:
        raise ValueError(f"n_rows must be in [1, full_rows={full_rows}]; got {n_rows}")
    rng = np.random.default_rng(seed)
    X = rng.random((full_rows, N_FEATURES), dtype=np.float32)[:n_rows]
    noise = rng.standard_normal(full_rows)[:n_rows]
    x = X.astype(np.float64)
    y = (10 * np.sin(np.pi * x[:, 0] * x[:, 1]) + 20 * (x[:, 2] - 0.5) ** 2
         + 10 * x[:, 3] + 5 * x[:, 4] + noise)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(N_FEATURES)], copy=True)
    return frame, pd.Series(y, name="y")


def _rss_mb() -> float | None:
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def child(n_rows: int, full_rows: int) -> dict:
    """One run, in its own process: the table, a small untimed run, then the timed
    ``sapwood.explain(X, y, n_jobs=-1, progress=True)`` with its steps timed and the
    peak memory of each (the fit, each measure, the rest of the call) read apart."""
    import sapwood
    from sapwood.report import _explain, _measures, _verdict

    X, y = make_table(n_rows, full_rows)
    sapwood.explain(X.iloc[:WARM_ROWS], y.iloc[:WARM_ROWS], n_jobs=-1)
    steps, peaks = {}, {}

    def close(label):
        """The peak since the last reset counts for ``label``; the count restarts."""
        peak = peak_rss_mb()
        if peak is not None:
            peaks[label] = max(peaks.get(label, 0.0), peak)
        reset_peak_rss()

    def timed(name, function):
        def call(*args, **kwargs):
            label = args[0] if name == "measure" else name
            close("rest")
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                steps[label] = steps.get(label, 0.0) + time.perf_counter() - started
                close(label)
        return call

    # The benchmark's own stopwatch on the fit, on each measure's run and on the steps
    # around them (explain's scores of the held-out rows, the baseline, the warnings).
    _explain._fit = timed("fit", _explain._fit)
    _measures.compute = timed("measure", _measures.compute)
    _explain.score_model = timed("score", _explain.score_model)
    _explain.baseline = timed("baseline", _explain.baseline)
    _verdict.find_warnings = timed("warnings", _verdict.find_warnings)
    before_mb, before_peak_mb = _rss_mb(), peak_rss_mb()
    bars = io.StringIO()
    stderr, sys.stderr = sys.stderr, bars  # the bars go to sys.stderr when drawn
    reset_peak_rss()
    cpu, started = _cpu_seconds(), time.perf_counter()
    try:
        report = sapwood.explain(X, y, n_jobs=-1, progress=True)
    finally:
        sys.stderr = stderr
    seconds, cpu = time.perf_counter() - started, _cpu_seconds() - cpu
    close("rest")
    shown = [line.rstrip() for line in bars.getvalue().splitlines() if _BAR.match(line)]
    return {"n_rows": n_rows, "seconds": seconds, "cpu_seconds": cpu, "steps": steps,
            "rss_before_mb": before_mb, "step_peaks_mb": peaks,
            "call_peak_mb": max(peaks.values()) if peaks else None,
            "process_peak_mb": max([before_peak_mb or 0.0, *peaks.values()]),
            "model": report.model_text, "n_train": report.n_train, "n_test": report.n_test,
            "params": {key: value for key, value in report.model.get_params().items()
                       if key in ("n_estimators", "max_depth", "max_samples")},
            "nodes": int(sum(tree.tree_.node_count for tree in report.model.estimators_)),
            "score": report.score, "bars": shown,
            "load": os.getloadavg()}


def _run_child(n_rows: int, full_rows: int) -> dict:
    """:func:`child` in a new interpreter; adds the process's peak RSS (``wait4``)."""
    code = (f"import json\nfrom benchmarks.bench_bigtable import child\n"
            f"print(json.dumps(child({n_rows}, {full_rows})))")
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen([sys.executable, "-c", code], stdout=out, stderr=err,
                                   cwd=REPO)
        _, status, usage = os.wait4(process.pid, 0)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        tail = stderr.strip().splitlines()[-1:] or [f"status {status}"]
        raise RuntimeError(f"explain on {n_rows:,} rows failed: {tail[0]}")
    result = json.loads(stdout.strip().splitlines()[-1])
    # The kernel's count restarts with each step's (reset_peak_rss), so the process's
    # peak is the highest of the child's own readings and the count at its exit.
    result["peak_mb"] = max(usage.ru_maxrss / 1024, result["process_peak_mb"])  # kB on Linux
    return result


def _steps_text(result: dict) -> str:
    steps = result["steps"]
    rest = result["seconds"] - sum(steps.values())
    shown = ", ".join(f"{name} {seconds:.1f}" for name, seconds in steps.items())
    return f"{shown}, the rest {rest:.1f}"


def _peaks_text(result: dict) -> str:
    return ", ".join(f"{name} {peak:,.0f}" for name, peak in result["step_peaks_mb"].items())


def run(quick: bool = False) -> list[dict]:
    """The harness protocol (benchmarks/README.md): a row per run and one for the
    ratios against the targets."""
    full_rows = 16_000 if quick else FULL_ROWS
    small_rows = 2_000 if quick else SMALL_ROWS
    results = {}
    for n_rows in (small_rows, full_rows):
        _progress(f"  explain on {n_rows:,} rows (load {os.getloadavg()[0]:.1f}) ...")
        results[n_rows] = result = _run_child(n_rows, full_rows)
        _progress(f"    {result['seconds']:.1f} s ({result['cpu_seconds']:.1f} s CPU), "
                  f"{_steps_text(result)}; peak {result['peak_mb']:,.0f} MB "
                  f"({_peaks_text(result)}); "
                  f"{result['model']}")
    rows = []
    for n_rows, result in results.items():
        rows.append({
            "id": "B21",
            "workload": f"sapwood.explain (mdi, permutation), default forest, {n_rows:,} x "
                        f"{N_FEATURES} float32 Friedman table, n_jobs=-1, new process",
            "peer": None, "peer_s": None, "sapwood_s": result["seconds"], "ratio": None,
            "check": (f"{result['model']} on {result['n_train']:,} rows, "
                      f"{result['nodes']:,} nodes, held-out R² {result['score']:.4f}; "
                      f"seconds: {_steps_text(result)}; CPU {result['cpu_seconds']:.0f} s; "
                      f"peak {result['peak_mb']:,.0f} MB ({result['rss_before_mb'] or 0:,.0f} "
                      f"MB before the call; the peak in each step, MB: "
                      f"{_peaks_text(result)})"),
            "sapwood_runs": [result["seconds"]], "raw": result})
    small, large = results[small_rows], results[full_rows]
    ratio = large["seconds"] / small["seconds"]
    cpu_ratio = large["cpu_seconds"] / small["cpu_seconds"]
    peak_gb = large["peak_mb"] / 1024
    bars = [line for line in large["bars"]
            if line.startswith(("Growing", "permuted", "held-out"))]
    rows.append({
        "id": "B21",
        "workload": f"the {full_rows:,}-row run over the {small_rows:,}-row run, and the "
                    f"{full_rows:,}-row run's peak memory",
        "peer": f"explain on {small_rows:,} rows", "peer_s": small["seconds"],
        "sapwood_s": large["seconds"], "ratio": ratio,
        "target": f"<= {TIME_RATIO_TARGET:g} and peak <= {PEAK_TARGET_GB:g} GB",
        "met": bool(ratio <= TIME_RATIO_TARGET and peak_gb <= PEAK_TARGET_GB),
        "check": (f"time ratio {ratio:.2f} (CPU {cpu_ratio:.2f}); peak {peak_gb:.2f} GB; "
                  f"bars with the time left: {'; '.join(bars) or 'none seen'}"),
        "raw": {"time_ratio": ratio, "cpu_ratio": cpu_ratio, "peak_gb": peak_gb}})
    return rows


def accuracy(quick: bool = False, n_jobs: int = 2) -> list[dict]:
    """What the large-table bound costs in held-out accuracy (R² for regression,
    accuracy for classification), each row a 100-tree sapwood forest with the bound
    against the same forest grown on as many draws as it has rows:

    - the 1,000,000-row table split as explain splits it (750,000 training rows): the
      default forest (``max_samples=LARGE_TABLE_ROWS``) against the forest in full,
      which is grown as ten forests of ten trees (seeds 0-9) whose predictions are
      averaged, so that no more than a tenth of its 10 GB is held at once;
    - D1-D4 (benchmarks/_data.py) and the 125,000-row table, random forest and extra
      trees: their training rows are below the bound, which leaves them alone, so each
      tree instead draws the share of rows that the bound leaves a tree on the
      750,000-row table (2 in 15), a pessimistic stand-in: a forest on fewer rows
      loses more by drawing fewer of them.
    """
    import sapwood
    from sapwood.report._models import LARGE_TABLE_ROWS

    from . import _data

    full_rows = 16_000 if quick else FULL_ROWS
    bound = 1_000 if quick else LARGE_TABLE_ROWS
    share = bound / round(0.75 * full_rows)
    rows = []

    def score(model, X, y):
        return float(model.score(X, y))

    tables = [(name, *_loaded(_data.load(name, quick))) for name in ("D1", "D2", "D3", "D4")]
    X, y = make_table(full_rows // 8, full_rows)
    tables.append(("Friedman 125k" if not quick else "Friedman small", "regression",
                   *_split(X.to_numpy(), y.to_numpy())))
    for name, task, X_train, X_test, y_train, y_test in tables:
        for kind in ("rf", "et"):
            cls = _forest_class(sapwood, kind, task)
            draws = max(1, round(share * len(X_train)))
            bounded = {"max_samples": draws, **({"bootstrap": True} if kind == "et" else {})}
            scores = {}
            for label, params in (("full", {}), ("bounded", bounded)):
                forest = cls(n_estimators=100, random_state=0, n_jobs=n_jobs, **params)
                scores[label] = score(forest.fit(X_train, y_train), X_test, y_test)
                del forest
            rows.append(_accuracy_row(name, kind, task, len(X_train), draws, scores))
            _progress(f"  {rows[-1]['workload']}: {rows[-1]['check']}")
    X, y = make_table(full_rows, full_rows)
    X_train, X_test, y_train, y_test = _split(X.to_numpy(), y.to_numpy())
    del X, y
    forest = sapwood.RandomForestRegressor(random_state=0, n_jobs=n_jobs,
                                           max_samples=bound).fit(X_train, y_train)
    scores = {"bounded": score(forest, X_test, y_test)}
    del forest
    total = np.zeros(len(y_test))
    for seed in range(10):
        part = sapwood.RandomForestRegressor(10, random_state=seed, n_jobs=n_jobs)
        total += part.fit(X_train, y_train).predict(X_test)
        del part
    from sklearn.metrics import r2_score

    scores["full"] = float(r2_score(y_test, total / 10))
    rows.append(_accuracy_row(f"Friedman {full_rows:,}", "rf", "regression", len(X_train),
                              bound, scores))
    _progress(f"  {rows[-1]['workload']}: {rows[-1]['check']}")
    return rows


def _loaded(dataset):
    return (dataset.task, dataset.X_train, dataset.X_test, dataset.y_train, dataset.y_test)


def _split(X, y):
    """explain's split: a quarter of the rows held out, seed 0."""
    from sklearn.model_selection import train_test_split

    return train_test_split(X, y, test_size=0.25, random_state=0)


def _forest_class(sapwood, kind, task):
    names = {"rf": ("RandomForestClassifier", "RandomForestRegressor"),
             "et": ("ExtraTreesClassifier", "ExtraTreesRegressor")}
    return getattr(sapwood, names[kind][task == "regression"])


def _accuracy_row(name, kind, task, n_train, draws, scores) -> dict:
    metric = "R²" if task == "regression" else "accuracy"
    loss = scores["full"] - scores["bounded"]
    return {"id": "B21-accuracy",
            "workload": f"{name} ({n_train:,} training rows), {kind}, {draws:,} draws per "
                        "tree against the forest in full",
            "check": f"held-out {metric} {scores['bounded']:.4f} against "
                     f"{scores['full']:.4f} (cost {loss:+.4f})",
            "raw": {"table": name, "kind": kind, "metric": metric, "n_train": n_train,
                    "draws": draws, **scores}}


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--large"]:
        result = _run_child(FULL_ROWS, FULL_ROWS)
        _progress(f"{result['seconds']:.1f} s ({result['cpu_seconds']:.1f} s CPU), "
                  f"{_steps_text(result)}; peak {result['peak_mb']:,.0f} MB")
        print(json.dumps(result))
        sys.exit(0)
    if sys.argv[1:2] != ["--accuracy"]:
        sys.exit("usage: python -m benchmarks.bench_bigtable --accuracy [--quick] | --large")
    for row in accuracy(quick="--quick" in sys.argv):
        print(json.dumps(row))
