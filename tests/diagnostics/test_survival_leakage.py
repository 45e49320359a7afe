"""The survival leakage rule: a column recorded at the end of follow-up (the status,
the length of follow-up) is reported; honest columns, however strong, are not."""

import numpy as np
import pandas as pd
import pytest

from sapwood.diagnostics import find_survival_leakage

Surv = pytest.importorskip("sksurv.util").Surv


def table(n, seed):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"age": rng.normal(size=n), "dose": rng.normal(size=n),
                      "site": rng.choice(["a", "b", "c"], size=n)})
    time = rng.exponential(np.exp(-(1.5 * X["age"] - X["dose"]).to_numpy()))
    censor = rng.exponential(1.0, n)
    y = Surv.from_arrays(time <= censor, np.minimum(time, censor))
    return X, y


def split(X, y, at):
    return X.iloc[:at], y[:at], X.iloc[at:], y[at:]


@pytest.mark.parametrize("seed", range(5))
def test_honest_columns_are_not_reported(seed):
    X, y = table(600, seed)
    assert find_survival_leakage(*split(X, y, 450), categorical=("site",),
                                 random_state=seed) == []


def test_a_status_and_a_follow_up_length_are_reported():
    X, y = table(600, 0)
    rng = np.random.default_rng(1)
    X = X.assign(status=np.where(y["event"], "dead", "alive"),
                 followed=y["time"] * rng.uniform(0.99, 1.01, 600))
    found = find_survival_leakage(*split(X, y, 450), categorical=("site", "status"))
    by_column = {finding.features[0]: finding for finding in found}
    assert set(by_column) == {"status", "followed"}
    assert by_column["status"].details["part"] == "event"
    assert by_column["followed"].details["part"] == "time"
    message = by_column["status"].message
    assert "whether the event was seen on the held-out rows" in message
    assert "recorded at or after the end of follow-up" in message
