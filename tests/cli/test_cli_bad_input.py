"""Every kind of bad input: one line on stderr naming the problem, exit code 2."""

import pandas as pd
import pytest

from sapwood.cli._data import load_table
from sapwood.cli._errors import InputError
from sapwood.report._data import detect_task, encode_features, prepare
from tests.cli._helpers import run_bad


@pytest.fixture
def good_csv(tmp_path):
    path = tmp_path / "good.csv"
    pd.DataFrame({"a": range(20), "b": [i % 3 for i in range(20)],
                  "y": [i % 2 for i in range(20)]}).to_csv(path, index=False)
    return path


def write(tmp_path, name, content):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


def test_missing_file(capsys, tmp_path):
    run_bad(capsys, ["explain", str(tmp_path / "nope.csv"), "--target", "y"],
            "data file not found", "nope.csv")


def test_directory_instead_of_file(capsys, tmp_path):
    run_bad(capsys, ["explain", str(tmp_path), "--target", "y"], "is a directory")


def test_unknown_target_column(capsys, good_csv):
    run_bad(capsys, ["explain", str(good_csv), "--target", "price"],
            "target column 'price' not found", "columns are: a, b, y")


def test_empty_file(capsys, tmp_path):
    path = write(tmp_path, "empty.csv", "")
    run_bad(capsys, ["explain", str(path), "--target", "y"], "data file is empty")


def test_header_only(capsys, tmp_path):
    path = write(tmp_path, "header.csv", "a,b,y\n")
    run_bad(capsys, ["explain", str(path), "--target", "y"], "no data rows")


def test_single_row(capsys, tmp_path):
    path = write(tmp_path, "one.csv", "a,b,y\n1,2,3\n")
    run_bad(capsys, ["explain", str(path), "--target", "y"], "at least 2 data rows", "got 1")


def test_constant_target(capsys, tmp_path):
    path = write(tmp_path, "const.csv", "a,y\n" + "".join(f"{i},7\n" for i in range(10)))
    run_bad(capsys, ["explain", str(path), "--target", "y"], "'y' is constant (7 in every row)")


def test_target_missing_in_all_rows_but_one(capsys, tmp_path):
    # Rows whose target is missing are left out (tests/cli/test_cli_files.py); with
    # fewer than 2 rows left, the table is refused.
    path = write(tmp_path, "nan.csv", "a,y\n1,0\n2,\n3,\n4,\n")
    run_bad(capsys, ["explain", str(path), "--target", "y"], "3 missing value",
            "1 row(s) with a value")


def test_malformed_csv(capsys, tmp_path):
    path = write(tmp_path, "bad.csv", "a,b,y\n1,2,3\n4,5,6,7,8\n")
    run_bad(capsys, ["explain", str(path), "--target", "y"], "malformed CSV")


def test_binary_garbage(capsys, tmp_path):
    garbage = bytes(range(256)) * 8 + b"\x89PNG\r\n\x1a\n"
    path = write(tmp_path, "garbage.csv", garbage)
    run_bad(capsys, ["explain", str(path), "--target", "y"], "binary content")


def test_binary_garbage_without_nul_bytes(capsys, tmp_path):
    path = write(tmp_path, "noise.bin", bytes((7 * i + 3) % 255 + 1 for i in range(300)))
    run_bad(capsys, ["tree", str(path), "--target", "y"], "binary content")


def test_only_the_target_column(capsys, tmp_path):
    path = write(tmp_path, "only.csv", "y\n1\n2\n")
    run_bad(capsys, ["explain", str(path), "--target", "y"], "no feature columns")


def test_text_target_for_regression(capsys, tmp_path):
    path = write(tmp_path, "text.csv", "a,y\n1,x\n2,z\n3,x\n")
    run_bad(capsys, ["explain", str(path), "--target", "y", "--task", "regression"],
            "not numeric")


def test_unknown_model_name(capsys, good_csv):
    run_bad(capsys, ["explain", str(good_csv), "--target", "y", "--model", "svm"],
            "--model 'svm'", "not one of tree, rf, et, gb")


def test_corrupted_model_file(capsys, good_csv, tmp_path):
    model = write(tmp_path, "model.json", "{not a model")
    line = run_bad(capsys, ["explain", str(good_csv), "--target", "y", "--model", str(model)])
    assert "model" in line


def test_unknown_method(capsys, good_csv):
    run_bad(capsys, ["explain", str(good_csv), "--target", "y", "--methods", "mdi,magic"],
            "unknown measure 'magic'")


@pytest.mark.parametrize("value", ["0", "1.5", "abc"])
def test_bad_test_size(capsys, good_csv, value):
    run_bad(capsys, ["explain", str(good_csv), "--target", "y", "--test-size", value],
            "--test-size")


def test_missing_target_option(capsys, good_csv):
    run_bad(capsys, ["explain", str(good_csv)], "--target")


def test_unknown_command(capsys):
    run_bad(capsys, ["frobnicate"], "invalid choice")


def test_report_directory_missing(capsys, good_csv, tmp_path):
    run_bad(capsys, ["explain", str(good_csv), "--target", "y",
                     "--report", str(tmp_path / "no" / "r.html")], "does not exist")


def test_tree_unknown_output_format(capsys, good_csv, tmp_path):
    run_bad(capsys, ["tree", str(good_csv), "--target", "y", "--out", str(tmp_path / "t.xls")],
            "unknown format '.xls'")


def test_parquet_without_engine_or_corrupt(capsys, tmp_path):
    path = write(tmp_path, "data.parquet", "this is not parquet")
    line = run_bad(capsys, ["explain", str(path), "--target", "y"])
    assert "Parquet" in line


# -- the checks themselves, without the command around them ----------------------------

def test_load_table_reads_latin1(tmp_path):
    path = write(tmp_path, "latin.csv", b"name,y\n" + "Zürich,1\n".encode("latin-1"))
    assert load_table(path)["name"].iloc[0] == "Zürich"


def test_detect_task():
    assert detect_task(pd.Series(["a", "b"])) == "classification"
    assert detect_task(pd.Series([0, 1, 1, 2])) == "classification"
    assert detect_task(pd.Series([0.0, 1.0, 1.0])) == "classification"
    assert detect_task(pd.Series(range(100))) == "regression"
    assert detect_task(pd.Series([0.5, 1.5, 2.0])) == "regression"


def test_encode_features_keeps_missing_and_sorts_categories():
    frame = pd.DataFrame({"city": ["b", None, "a", "b"], "n": [1.0, None, 3.0, 4.0],
                          "flag": [True, False, True, True]})
    encoded, encodings = encode_features(frame)
    assert encodings == {"city": ["a", "b"]}
    assert encoded["city"].tolist()[0] == 1.0 and pd.isna(encoded["city"].iloc[1])
    assert pd.isna(encoded["n"].iloc[1])
    assert encoded["flag"].tolist() == [1.0, 0.0, 1.0, 1.0]
    assert all(dtype == "float64" for dtype in encoded.dtypes)


def test_prepare_raises_input_error_for_constant_target():
    with pytest.raises(InputError, match="constant"):
        prepare(pd.DataFrame({"a": [1, 2], "y": ["k", "k"]}), "y")


def test_groups_and_order_by_name_a_column(capsys, tmp_path):
    path = tmp_path / "panel.csv"
    path.write_text("firm,year,x,y\n" + "".join(f"f{i % 4},{i},{i},{i % 3}\n"
                                                 for i in range(40)))
    run_bad(capsys, ["explain", str(path), "--target", "y", "--groups", "frim"],
            "--groups 'frim': no such column", "did you mean 'firm'")
    run_bad(capsys, ["explain", str(path), "--target", "y", "--order-by", "firm"],
            "order_by: needs dates, datetimes or numbers", "'f0'")
