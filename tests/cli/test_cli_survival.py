"""``sapwood explain --target TIME --event EVENT``: a survival table from the command
line, its JSON and report, and its bad input (one line, exit 2)."""

import json

import numpy as np
import pandas as pd
import pytest

from sapwood.cli import main

from ._helpers import run_bad


@pytest.fixture(scope="module")
def survival_csv(tmp_path_factory):
    """Exponential times falling with x0 and rising with x1, about half censored, and a
    status column written as words."""
    rng = np.random.default_rng(0)
    n = 300
    X = rng.normal(size=(n, 3))
    time = rng.exponential(np.exp(-(1.2 * X[:, 0] - 0.8 * X[:, 1])))
    censor = rng.exponential(1.0, n)
    frame = pd.DataFrame(X, columns=["x0", "x1", "noise"])
    frame["months"] = np.ceil(np.minimum(time, censor) * 24)
    frame["status"] = np.where(time <= censor, "dead", "alive")
    frame["event"] = (time <= censor).astype(int)
    path = tmp_path_factory.mktemp("survival") / "survival.csv"
    frame.to_csv(path, index=False)
    return path


def test_explain_a_survival_table_as_json(survival_csv, capsys):
    code = main(["explain", str(survival_csv), "--target", "months", "--event", "status",
                 "--event-value", "dead", "--drop", "event", "--model", "tree",
                 "--methods", "permutation", "--json", "--quiet"])
    out, err = capsys.readouterr()
    assert code == 0, err
    document = json.loads(out)
    assert document["data"]["task"] == "survival"
    assert document["data"]["time"] == "months" and document["data"]["event"] == "status"
    assert document["model"]["score_name"] == "concordance_index"
    assert document["model"]["baseline"]["model"].startswith("the Kaplan-Meier model")
    assert set(document["verdict"]["relies_on"]) >= {"x0", "x1"}
    curves = document["survival"]["curves"]
    assert [curve["feature"] for curve in curves][:2] == ["x0", "x1"]
    # x0 raises the hazard: survival is lower when it is high.
    assert np.mean(curves[0]["survival_high"]) < np.mean(curves[0]["survival_low"])


# The command line's own checks (the library's refusals: tests/report/
# test_survival_explain.py).
@pytest.mark.parametrize(("extra", "phrases"), [
    (["--event", "status"], ["event column 'status' holds", "--event-value"]),
    (["--event-value", "dead"], ["--event-value 'dead'", "give the column with --event"]),
])
def test_bad_survival_input_is_one_line(survival_csv, capsys, extra, phrases):
    run_bad(capsys, ["explain", str(survival_csv), "--target", "months", *extra],
            *phrases)

