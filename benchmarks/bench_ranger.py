"""B-RANGER: sapwood's forests against ranger, the fastest random-forest code in R.

Two workloads on D1 (classification) and D2 (regression), 80,000 training rows x 20:
a forest fit, and out-of-bag permutation importance (ranger's ``importance =
"permutation"``, which permutes each tree's out-of-bag rows, as sapwood's
``oob_permutation_importance`` does). Both sides grow the same forest: 100 trees,
mtry = floor(sqrt(20)) = 4 for classification and 20 / 3 = 6 for regression,
minimum node size 1 (classification) and 5 (regression) as ranger's defaults, the
bootstrap with replacement, both cores. ranger's fit time is the forest without
importance; its importance time is the forest grown with importance minus that fit.
Each side's time is the median of 3 runs, taking turns.

ranger runs through ``Rscript``; where R or its ranger package is not installed the
group is skipped with a note (the harness reports the ImportError below), so the rest
of the benchmarks still run.
"""

from __future__ import annotations

import json
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

N_TREES = 100
R_SCRIPT = r"""
args <- commandArgs(trailingOnly = TRUE)
suppressMessages(library(ranger))
data <- read.csv(args[1])
classification <- args[2] == "classification"
if (classification) data$y <- factor(data$y)
mtry <- as.integer(args[3]); node <- as.integer(args[4]); trees <- as.integer(args[5])
fit <- system.time(ranger(y ~ ., data = data, num.trees = trees, mtry = mtry,
                          min.node.size = node, num.threads = 2, seed = 0))[["elapsed"]]
both <- system.time(ranger(y ~ ., data = data, num.trees = trees, mtry = mtry,
                           min.node.size = node, num.threads = 2, seed = 0,
                           importance = "permutation"))[["elapsed"]]
cat(sprintf('{"fit": %f, "fit_and_importance": %f}\n', fit, both))
"""


def run(quick: bool = False) -> list[dict]:
    import sapwood
    from sapwood.importance import oob_permutation_importance

    rows = []
    for name in ("D1", "D2"):
        data = load(name, quick=quick)
        task = data.task
        n_features = data.X_train.shape[1]
        mtry = int(np.floor(np.sqrt(n_features))) if task == "classification" \
            else max(n_features // 3, 1)
        node = 1 if task == "classification" else 5
        n_trees = 10 if quick else N_TREES
        cls = sapwood.RandomForestClassifier if task == "classification" \
            else sapwood.RandomForestRegressor
        # ranger's min.node.size is the smallest node it still splits (ranger >= 0.14),
        # scikit-learn's min_samples_split (which is at least 2).
        params = {"n_estimators": n_trees, "max_features": mtry, "n_jobs": 2,
                  "random_state": 0, "min_samples_split": max(node, 2)}
        with tempfile.TemporaryDirectory() as folder:
            csv = Path(folder) / "train.csv"
            script = Path(folder) / "ranger.R"
            script.write_text(R_SCRIPT)
            table = np.column_stack([data.X_train, data.y_train])
            header = ",".join([f"x{j}" for j in range(n_features)] + ["y"])
            np.savetxt(csv, table, delimiter=",", header=header, comments="")
            fits, oobs, r_fits, r_oobs = [], [], [], []
            for _ in range(1 if quick else 3):
                start = time.perf_counter()
                forest = cls(**params).fit(data.X_train, data.y_train)
                fits.append(time.perf_counter() - start)
                start = time.perf_counter()
                oob_permutation_importance(forest, data.X_train, data.y_train,
                                           random_state=0, n_jobs=2)
                oobs.append(time.perf_counter() - start)
                done = subprocess.run(["Rscript", str(script), str(csv), task, str(mtry),
                                       str(node), str(n_trees)], capture_output=True,
                                      text=True, check=True)
                report = json.loads(done.stdout.strip().splitlines()[-1])
                r_fits.append(report["fit"])
                r_oobs.append(report["fit_and_importance"] - report["fit"])
        for label, ours, theirs in (("forest fit", fits, r_fits),
                                    ("OOB permutation importance", oobs, r_oobs)):
            rows.append({
                "id": "B-RANGER", "peer": "ranger (Rscript, 2 threads)",
                "workload": f"{label}, {name} {task}, {n_trees} trees, mtry {mtry}, "
                            f"min node size {node}",
                "peer_s": statistics.median(theirs), "sapwood_s": statistics.median(ours),
                "target": "< 1", "met": statistics.median(ours) < statistics.median(theirs),
                "sapwood_runs": ours, "peer_runs": theirs,
            })
        print(f"  {name}: fit {fits}, ranger {r_fits}; oob {oobs}, ranger {r_oobs}",
              file=sys.stderr, flush=True)
    return rows
