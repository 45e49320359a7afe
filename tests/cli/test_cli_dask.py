"""`sapwood explain --dask`: CSV files by a pattern and a directory of Parquet files read
block by block, the numbers those of `sapwood.explain` on the same Dask table; what
--dask does not offer is one line and exit code 2."""

import warnings

import numpy as np
import pandas as pd
import pytest

import sapwood
from tests.cli._helpers import run_bad
from tests.cli.test_cli_measures import run_json

dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("pyarrow")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    rng = np.random.default_rng(5)
    n = 900
    frame = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n),
                          "noise": rng.uniform(size=n), "id": np.arange(n)})
    frame["y"] = np.where(frame["a"] + 0.5 * frame["b"] + 0.3 * rng.normal(size=n) > 0,
                          "yes", "no")
    root = tmp_path_factory.mktemp("dask")
    (root / "pq").mkdir()
    for number, rows in enumerate(np.array_split(np.arange(n), 3)):
        frame.iloc[rows].to_csv(root / f"part{number}.csv", index=False)
        frame.iloc[rows].to_parquet(root / "pq" / f"part{number}.parquet")
    return root


def test_csv_pattern_and_parquet_directory_give_the_library_numbers(files):
    options = ["--target", "y", "--dask", "--drop", "id", "--methods", "mdi,permutation",
               "--max-depth", "5", "--json"]
    table = dd.read_csv(str(files / "part*.csv")).drop(columns=["id"])
    expected = sapwood.explain(table, "y", methods=["mdi", "permutation"],
                               model=sapwood.RandomForestClassifier(max_depth=5,
                                                                    random_state=0),
                               random_state=0)
    for data in (files / "part*.csv", files / "pq"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            document, _ = run_json(["explain", str(data), *options])
        # Dask's warning about converting the text labels is not the user's concern.
        assert not [w for w in caught if "extension dtypes" in str(w.message)]
        assert "Dask DataFrame of 900 rows in 3 partitions" in " ".join(document["notes"])
        assert document["model"]["score_name"] == "neg_brier_score"
        np.testing.assert_allclose(document["model"]["score"], expected.score, rtol=1e-12)
        got = {row["feature"]: row["importance"]
               for row in document["measures"]["permutation"]}
        want = dict(zip(expected.results["permutation"].feature_names,
                        expected.results["permutation"].importances_mean, strict=True))
        assert got.keys() == want.keys()
        for name in got:
            np.testing.assert_allclose(got[name], want[name], rtol=0, atol=1e-12)


def test_what_dask_does_not_offer_is_named(files, capsys):
    run_bad(capsys, ["explain", str(files / "part*.csv"), "--target", "y", "--dask",
                     "--row", "3"], "--row 3", "not offered with --dask")
    run_bad(capsys, ["explain", str(files / "nothing*.csv"), "--target", "y", "--dask"],
            "data file not found")
    run_bad(capsys, ["explain", str(files / "pq"), "--target", "Y", "--dask"],
            "--target 'Y': no such column", "did you mean 'y'")
    run_bad(capsys, ["explain", str(files / "pq"), "--target", "y", "--dask", "--sep",
                     ";"], "--sep", "is for CSV files only")
    run_bad(capsys, ["explain", str(files / "pq"), "--target", "y"],
            "a directory", "--dask")
