"""``sapwood warmup`` compiles what the commands need, so that the next run compiles
nothing (issue 20, item 3)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings

import pytest

from sapwood.cli import _warmup, main
from sapwood.cli._models import MODEL_NAMES
from sapwood.cli._warmup import MODELS, PHASES, TASKS

# A demo in a new process that reports every sapwood kernel Numba compiles in it.
DEMO_COMPILES = """
import json
from numba.core import event
from sapwood.cli import main
with event.install_recorder("numba:compile") as recorder:
    code = main(["demo", "--quiet"])
compiled = sorted({data["dispatcher"].py_func.__qualname__ for _, data in
                   ((ts, ev.data) for ts, ev in recorder.buffer)
                   if data["dispatcher"].py_func.__module__.startswith("sapwood")})
print(json.dumps({"code": code, "compiled": compiled}))
"""


def test_warmup_is_a_command(capsys):
    assert main(["warmup", "--help"]) == 0
    assert "parallel processes" in capsys.readouterr().out
    assert main(["warmup", "--jobs", "0"]) == 2


def test_the_pipeline_phase_runs_every_model_for_every_task():
    assert set(MODELS) == set(MODEL_NAMES)
    pipelines = {unit[1:] for unit in PHASES[-1] if unit[0] == "pipeline"}
    assert pipelines == {(task, model) for task in TASKS for model in MODELS}


def test_a_unit_that_fails_is_reported_and_the_others_still_run(monkeypatch, capsys):
    monkeypatch.setattr(_warmup, "PHASES", ([("nothing", "classification")],))
    assert main(["warmup", "--jobs", "1"]) == 1
    err = capsys.readouterr().err
    assert "sapwood warmup: nothing classification: ValueError" in err
    assert "1 part(s) failed" in err


@pytest.mark.slow
def test_after_warmup_the_demo_compiles_nothing(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    subprocess.run([sys.executable, "-m", "sapwood.cli", "warmup", "--jobs", "2"], env=env,
                   check=True, capture_output=True)
    done = subprocess.run([sys.executable, "-c", DEMO_COMPILES], env=env, check=True,
                          capture_output=True, text=True)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {"code": 0, "compiled": []}


@pytest.mark.parametrize("unit", [("measures", "classification"),
                                  ("pipeline", "regression", "rf")])
def test_a_unit_warns_nothing_to_the_user(unit):
    # make install runs it: its tiny data's warnings would bury the install's output.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _warmup.run_unit(unit)
    assert [str(w.message) for w in caught] == []
