"""B14: sapwood's forests against ranger, the fastest random-forest code in R.

Two workloads on D1 (classification) and D2 (regression), 80,000 training rows x 20:
a forest fit, and out-of-bag permutation importance (ranger's ``importance =
"permutation"``, which permutes each tree's out-of-bag rows, as sapwood's
``oob_permutation_importance`` does). Both sides grow the same kind of forest, as in
BENCHMARKS.md's wave-2 figures: 50 trees, mtry = floor(sqrt(20)) = 4 for classification
and all 20 features for regression, trees grown until a node holds one row or one
target value (ranger's ``min.node.size = 1``; ranger 0.14 splits a node only when it
holds more than min.node.size draws, which is scikit-learn's ``min_samples_split = 2``),
the bootstrap with replacement, 2 threads.

ranger's times are taken inside R (``system.time`` around the call), so R's start-up
and reading the data are not in them: its fit time is ``ranger(...)`` without
importance and without the out-of-bag error (``oob.error = FALSE``, as sapwood's fit
computes none), its importance time is ``ranger(..., importance = "permutation")``
(which needs the out-of-bag predictions) minus that fit, both with the same seed so they
grow the same forest. sapwood is warmed up on a small forest first, so its times hold
no Numba compilation. The two sides take turns, 3 rounds; each time is the median.

Each time is measured twice: wall clock, and CPU time (R's ``user + system`` from
``system.time``, Python's ``time.process_time``; both count every thread of the
process). On a loaded host the wall clock of the subtraction above can even come out
negative (ranger's importance costs a tenth of its fit, less than the fit's swings),
while the CPU time of the same deterministic work hardly moves: the rows give CPU
seconds (``peer_s``, ``sapwood_s``, ``ratio``) with the wall-clock medians beside them
(``peer_wall_s``, ``sapwood_wall_s``, ``wall_ratio``).
The check column compares the forests' test scores (computed outside the timings) and
the two importance vectors (Spearman correlation).

ranger runs through ``Rscript``; where R or its ranger package is not installed the
group is skipped with a note (the harness reports the ImportError below), so the rest
of the benchmarks still run.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ._data import load

if shutil.which("Rscript") is None:
    raise ImportError("Rscript not found: R and its ranger package are not installed "
                      "here (apt-get install r-cran-ranger); the ranger comparison is "
                      "skipped")
if subprocess.run(["Rscript", "-e", "library(ranger)"], capture_output=True).returncode:
    raise ImportError("R is installed but its ranger package is not (install.packages"
                      "('ranger') or apt-get install r-cran-ranger); skipped")

__all__ = ["run"]

N_TREES = 50
MIN_NODE_SIZE = 1
# One round of ranger: fit, fit with importance, then (untimed) the test score.
R_SCRIPT = r"""
args <- commandArgs(trailingOnly = TRUE)
suppressMessages(library(ranger))
train <- read.csv(args[1]); test <- read.csv(args[2])
classification <- args[3] == "classification"
if (classification) { train$y <- factor(train$y); test$y <- factor(test$y) }
mtry <- as.integer(args[4]); node <- as.integer(args[5]); trees <- as.integer(args[6])
grow <- function(importance, oob) ranger(
  dependent.variable.name = "y", data = train, num.trees = trees, mtry = mtry,
  min.node.size = node, replace = TRUE, num.threads = 2, seed = 1,
  importance = importance, oob.error = oob)
gc()
cpu <- function(time) time[["user.self"]] + time[["sys.self"]]
fit_time <- system.time(fit <- grow("none", FALSE))
rm(fit); gc()
both_time <- system.time(both <- grow("permutation", TRUE))
predicted <- predict(both, data = test, num.threads = 2)$predictions
score <- if (classification) mean(predicted == test$y) else
  1 - mean((test$y - predicted)^2) / mean((test$y - mean(test$y))^2)
cat(sprintf(paste0('{"fit": %.6f, "fit_and_importance": %.6f, "fit_cpu": %.6f, ',
                   '"fit_and_importance_cpu": %.6f, "score": %.10f, "importance": [%s]}\n'),
            fit_time[["elapsed"]], both_time[["elapsed"]], cpu(fit_time), cpu(both_time), score,
            paste(sprintf("%.10g", both$variable.importance), collapse = ", ")))
"""


def _spearman(a, b) -> float:
    ranks = [np.argsort(np.argsort(v)) for v in (a, b)]
    return float(np.corrcoef(*ranks)[0, 1])


def _write_csv(path: Path, X, y) -> None:
    header = ",".join([f"x{j}" for j in range(X.shape[1])] + ["y"])
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", header=header, comments="",
               fmt="%.17g")


def _timed(function, *args, **kwargs):
    """(result, wall seconds, CPU seconds of every thread of this process)."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - wall, time.process_time() - cpu


def run(quick: bool = False, rounds: dict | None = None) -> list[dict]:
    """``rounds``: {data set: rounds}, default 3 each (1 with ``quick``)."""
    import sapwood
    from sapwood.importance import oob_permutation_importance

    rows = []
    rounds = rounds or {"D1": 1 if quick else 3, "D2": 1 if quick else 3}
    for name in rounds:
        data = load(name, quick=quick)
        task = data.task
        n_features = data.X_train.shape[1]
        mtry = int(np.floor(np.sqrt(n_features))) if task == "classification" \
            else n_features
        n_trees = 10 if quick else N_TREES
        cls = sapwood.RandomForestClassifier if task == "classification" \
            else sapwood.RandomForestRegressor
        params = {"n_estimators": n_trees, "max_features": mtry, "n_jobs": 2,
                  "random_state": 0, "min_samples_split": MIN_NODE_SIZE + 1}
        # Compile (or load) the kernels before timing anything.
        warm = cls(**{**params, "n_estimators": 2}).fit(data.X_train[:500],
                                                        data.y_train[:500])
        oob_permutation_importance(warm, data.X_train[:500], data.y_train[:500],
                                   random_state=0, n_jobs=2)
        with tempfile.TemporaryDirectory() as folder:
            train, test = Path(folder) / "train.csv", Path(folder) / "test.csv"
            script = Path(folder) / "ranger.R"
            script.write_text(R_SCRIPT)
            _write_csv(train, data.X_train, data.y_train)
            _write_csv(test, data.X_test, data.y_test)
            times = {key: [] for key in ("fit", "oob", "r_fit", "r_oob")}
            walls = {key: [] for key in times}
            for _ in range(rounds[name]):
                forest, wall, cpu = _timed(cls(**params).fit, data.X_train, data.y_train)
                times["fit"].append(cpu)
                walls["fit"].append(wall)
                result, wall, cpu = _timed(oob_permutation_importance, forest, data.X_train,
                                           data.y_train, random_state=0, n_jobs=2)
                times["oob"].append(cpu)
                walls["oob"].append(wall)
                score = forest.score(data.X_test, data.y_test)
                done = subprocess.run(["Rscript", str(script), str(train), str(test), task,
                                       str(mtry), str(MIN_NODE_SIZE), str(n_trees)],
                                      capture_output=True, text=True, check=True)
                report = json.loads(done.stdout.strip().splitlines()[-1])
                times["r_fit"].append(report["fit_cpu"])
                times["r_oob"].append(report["fit_and_importance_cpu"] - report["fit_cpu"])
                walls["r_fit"].append(report["fit"])
                walls["r_oob"].append(report["fit_and_importance"] - report["fit"])
                print(f"  {name} (CPU s, wall s in brackets): fit {times['fit'][-1]:.2f} "
                      f"[{walls['fit'][-1]:.2f}], ranger {times['r_fit'][-1]:.2f} "
                      f"[{walls['r_fit'][-1]:.2f}]; OOB importance {times['oob'][-1]:.2f} "
                      f"[{walls['oob'][-1]:.2f}], ranger {times['r_oob'][-1]:.2f} "
                      f"[{walls['r_oob'][-1]:.2f}]; load {os.getloadavg()[0]:.1f}",
                      file=sys.stderr, flush=True)
        measure = "accuracy" if task == "classification" else "R²"
        fit_check = f"test {measure}: sapwood {score:.4f}, ranger {report['score']:.4f}"
        oob_check = (f"Spearman correlation of the importances "
                     f"{_spearman(result.importances_mean, report['importance']):.3f}")
        for label, key, check in (("forest fit", "fit", fit_check),
                                  ("OOB permutation importance", "oob", oob_check)):
            ours, theirs = times[key], times[f"r_{key}"]
            median = statistics.median
            wall_ratio = median(walls[key]) / median(walls[f"r_{key}"])
            check = (f"{check}; wall clock: sapwood {median(walls[key]):.1f} s, ranger "
                     f"{median(walls[f'r_{key}']):.1f} s, ratio {wall_ratio:.3f}")
            rows.append({
                "id": "B14", "peer": "ranger 0.14 (Rscript, 2 threads, timed inside R; CPU s)",
                "workload": f"{label}, {name} {task} ({data.X_train.shape[0]:,} x "
                            f"{n_features}), {n_trees} trees, "
                            f"mtry {mtry}, min node size {MIN_NODE_SIZE}",
                "peer_s": median(theirs), "sapwood_s": median(ours),
                "ratio": median(ours) / median(theirs),
                "target": "<= 0.3" if label == "forest fit" else "<= 0.2",
                "met": median(ours) / median(theirs) <= (0.3 if label == "forest fit" else 0.2),
                "check": check, "sapwood_runs": ours, "peer_runs": theirs,
                "clock": "CPU seconds, all threads",
                "sapwood_wall_s": median(walls[key]), "peer_wall_s": median(walls[f"r_{key}"]),
                "wall_ratio": wall_ratio,
                "sapwood_wall_runs": walls[key], "peer_wall_runs": walls[f"r_{key}"],
            })
    return rows
