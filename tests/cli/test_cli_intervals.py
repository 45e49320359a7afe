"""The command line says what each measure's intervals cover: the 95% CI column is the
t interval of the measure's draws (shuffles, trees), which is no interval over new rows;
the rank intervals of most measures are (docs/measures.md, 'Confidence intervals of the
importances')."""

import contextlib
import io
import json

import numpy as np
import pandas as pd
import pytest

from sapwood.cli import main


@pytest.fixture(scope="module")
def csv(tmp_path_factory):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=300), "b": rng.normal(size=300),
                          "c": rng.normal(size=300)})
    frame["y"] = (frame["a"] + 0.5 * frame["b"] + rng.normal(size=300) > 0).astype(int)
    path = tmp_path_factory.mktemp("intervals") / "data.csv"
    frame.to_csv(path, index=False)
    return path


def run(argv):
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(io.StringIO()):
        assert main(argv) == 0
    return stdout.getvalue()


def test_the_tables_and_json_say_what_the_intervals_cover(csv):
    argv = ["explain", str(csv), "--target", "y", "--methods", "permutation,oob"]
    document = json.loads(run(argv + ["--json"]))
    permutation = document["intervals"]["permutation"]
    assert "shuffles only" in permutation["ci"]
    assert "held-out rows" in permutation["rank"]
    assert "trees only" in document["intervals"]["oob"]["ci"]
    text = " ".join(run(argv + ["--details"]).split())
    assert "95% CI covers the spread of the 5 shuffles only" in text
    assert "rank (95%) covers the held-out rows and the shuffles" in text


def test_the_verdict_says_what_its_intervals_cover(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=2000), "b": rng.normal(size=2000),
                          "c": rng.normal(size=2000)})
    frame["y"] = (frame["a"] + 0.5 * frame["b"] + rng.normal(size=2000) > 0).astype(int)
    csv = tmp_path / "data.csv"
    frame.to_csv(csv, index=False)
    document = json.loads(run(["explain", str(csv), "--target", "y", "--json"]))
    assert "over the held-out rows and the shuffles" in document["verdict"]["lines"][0]
    assert {"a", "b"} <= set(document["verdict"]["relies_on"])
    # A saved model file: scored by scikit-learn's own accuracy, so its permutation
    # importances have per-row draws too, and the verdict rests on them.
    import sapwood
    from sapwood.adapters import as_ensemble
    from sapwood.learners import RandomForestClassifier

    model = RandomForestClassifier(n_estimators=20, random_state=0).fit(
        frame[["a", "b", "c"]], frame["y"])
    path = tmp_path / "model.sapwood"
    sapwood.save(as_ensemble(model), path)
    loaded = json.loads(run(["explain", str(csv), "--target", "y", "--model", str(path),
                             "--json"]))
    assert "held-out rows" in loaded["intervals"]["permutation"]["rank"]
    assert "over the held-out rows and the shuffles" in loaded["verdict"]["lines"][0]
    assert {"a", "b"} <= set(loaded["verdict"]["relies_on"])
