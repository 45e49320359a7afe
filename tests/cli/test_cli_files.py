"""The files people have (issue 41, item 5): semicolon and tab separated CSVs with
decimal commas, --sep, --drop, Excel workbooks, date columns, targets with missing
values, misspelt columns, integer targets that are quantities. Every file is built
here; no binary is shipped."""

import io
import json
import sys
import zipfile

import numpy as np
import pandas as pd
import pytest

from sapwood.cli import main
from sapwood.cli._data import decimal_commas, load_table, sniff_delimiter
from sapwood.cli._errors import InputError
from tests.cli._helpers import run_bad

FAST = ["--model", "tree", "--methods", "mdi", "--json"]


def _frame(n=120, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    return pd.DataFrame({"Sales": 3 * x + rng.normal(scale=0.1, size=n),
                         "CompPrice": x, "Income": rng.uniform(10, 100, size=n),
                         "Shelf": rng.choice(["Bad", "Good", "Medium"], size=n)})


def _run(capsys, argv):
    assert main(argv) == 0, capsys.readouterr().err
    out, err = capsys.readouterr()
    return json.loads(out), err


def _features(document):
    return sorted(entry["feature"] for entry in document["measures"]["mdi"])


# -- delimiters --------------------------------------------------------------------------

def test_semicolon_file_with_decimal_commas(capsys, tmp_path):
    path = tmp_path / "carseats.csv"
    _frame().to_csv(path, sep=";", decimal=",", index=False)
    assert "," in path.read_text().splitlines()[1]  # decimal commas in the file
    table = load_table(path)
    assert list(table.columns) == ["Sales", "CompPrice", "Income", "Shelf"]
    assert all(pd.api.types.is_float_dtype(table[c]) for c in ("Sales", "CompPrice", "Income"))
    document, _ = _run(capsys, ["explain", str(path), "--target", "Sales", *FAST])
    assert document["data"]["task"] == "regression"
    assert document["data"]["encoded"] == {"Shelf": ["Bad", "Good", "Medium"]}
    assert _features(document) == ["CompPrice", "Income", "Shelf"]


def test_decimal_comma_values():
    text = "a;b;c;d;y\n3,5;1.234,5;-0,25;x,1;1\n2;7;1e3;y;0\n"
    table = decimal_commas(pd.read_csv(io.StringIO(text), sep=";"))
    assert table["a"].tolist() == [3.5, 2.0]
    assert table["b"].tolist() == [1234.5, 7.0]
    assert table["c"].tolist() == [-0.25, 1000.0]
    assert table["d"].tolist() == ["x,1", "y"]  # not numbers: left as text


def test_semicolon_file_with_decimal_points_stays_numeric(tmp_path):
    path = tmp_path / "points.csv"
    path.write_text("a;b;y\n" + "".join(f"{i}.5;{i % 3};{i % 2}\n" for i in range(12)))
    table = load_table(path)
    assert table["a"].tolist()[:2] == [0.5, 1.5]


def test_comma_file_with_decimal_commas_in_quotes_is_not_converted(tmp_path):
    path = tmp_path / "quoted.csv"
    path.write_text('a,b,y\n"3,5",1,0\n"4,5",2,1\n"5,5",3,0\n')
    table = load_table(path)
    assert list(table.columns) == ["a", "b", "y"]
    assert table["a"].tolist() == ["3,5", "4,5", "5,5"]  # only ';' files have them


def test_tab_file_is_sniffed(tmp_path):
    path = tmp_path / "data.tsv"
    _frame().to_csv(path, sep="\t", index=False)
    assert list(load_table(path).columns) == ["Sales", "CompPrice", "Income", "Shelf"]


@pytest.mark.parametrize("text, expected", [
    ("a,b,c\n1,2,3\n", ","),
    ("a;b;c\n1,5;2,5;3\n", ";"),
    ("a\tb\n1,5\t2\n", "\t"),
    ('name,note\n"x; y; z",1\n"u; v",2\n', ","),
    ('a;b\n"1;2";3\n', ";"),
    ("single\n1\n2\n", ","),
    ("a;b;c\n1;2;3\n4;5;6\n7;8", ";"),
])
def test_sniff_delimiter(text, expected):
    assert sniff_delimiter(text.encode()) == expected


def test_sniff_ignores_a_cut_last_line():
    head = b"a;b;c\n1;2;3\n4;5;6\n7,8"
    assert sniff_delimiter(head, truncated=True) == ";"


def test_sep_forces_the_delimiter(tmp_path):
    path = tmp_path / "pipes.csv"
    path.write_text("a|b|y\n" + "".join(f"{i}|{i % 3}|{i % 2}\n" for i in range(12)))
    assert list(load_table(path, sep="|").columns) == ["a", "b", "y"]
    tabbed = tmp_path / "tabbed.csv"
    tabbed.write_text("a\tb\ty\n1\t2\t3\n")
    for sep in ("tab", "\\t", "\t"):
        assert list(load_table(tabbed, sep=sep).columns) == ["a", "b", "y"]


def test_bad_sep_is_refused(capsys, tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("a,y\n1,2\n")
    run_bad(capsys, ["explain", str(path), "--target", "y", "--sep", ";;"],
            "--sep ';;'", "one character")


def test_wrong_sep_names_the_delimiter(capsys, tmp_path):
    path = tmp_path / "carseats.csv"
    _frame().to_csv(path, sep=";", decimal=",", index=False)
    run_bad(capsys, ["explain", str(path), "--target", "Sales", "--sep", ","],
            "target column 'Sales' not found", "separated by ';'", "--sep ';'")


# -- --drop ------------------------------------------------------------------------------

def test_drop_leaves_columns_out(capsys, tmp_path):
    path = tmp_path / "exported.csv"
    _frame().assign(ID=range(120)).to_csv(path)  # with the row index, header ""
    document, _ = _run(capsys, ["explain", str(path), "--target", "Sales", "--drop",
                                "Unnamed: 0", "--drop", "ID", *FAST])
    assert _features(document) == ["CompPrice", "Income", "Shelf"]


def test_drop_unknown_column_suggests(capsys, tmp_path):
    path = tmp_path / "data.csv"
    _frame().to_csv(path, index=False)
    line = run_bad(capsys, ["explain", str(path), "--target", "Sales", "--drop", "Incme"],
                   "--drop 'Incme': no such column", "did you mean 'Income'?",
                   "columns are: Sales, CompPrice, Income, Shelf")
    assert line.count("did you mean") == 1


def test_drop_the_target_is_refused(capsys, tmp_path):
    path = tmp_path / "data.csv"
    _frame().to_csv(path, index=False)
    run_bad(capsys, ["explain", str(path), "--target", "Sales", "--drop", "Sales"],
            "--drop 'Sales' is the target column")


def test_tree_takes_sep_and_drop(capsys, tmp_path):
    path = tmp_path / "carseats.csv"
    _frame().assign(ID=range(120)).to_csv(path, sep=";", decimal=",", index=False)
    assert main(["tree", str(path), "--target", "Sales", "--drop", "ID", "--sep", ";",
                 "--max-depth", "2"]) == 0
    out = capsys.readouterr().out
    assert "CompPrice" in out and "ID" not in out


# -- Excel -------------------------------------------------------------------------------

def test_excel_workbook(capsys, tmp_path):
    pytest.importorskip("openpyxl")
    path = tmp_path / "carseats.xlsx"
    frame = _frame().assign(Day=pd.date_range("2024-01-01", periods=120, freq="D"))
    with pd.ExcelWriter(path, engine="openpyxl") as writer:
        frame.to_excel(writer, sheet_name="data", index=False)
        pd.DataFrame({"other": [1, 2]}).to_excel(writer, sheet_name="notes", index=False)
    document, err = _run(capsys, ["explain", str(path), "--target", "Sales", *FAST])
    assert _features(document) == ["CompPrice", "Day", "Income", "Shelf"]
    assert "note: date column 'Day' read as seconds since 1970-01-01" in err


def test_excel_without_openpyxl(capsys, tmp_path, monkeypatch):
    path = tmp_path / "book.xlsx"
    path.write_bytes(b"PK\x03\x04 not really")
    monkeypatch.setitem(sys.modules, "openpyxl", None)
    run_bad(capsys, ["explain", str(path), "--target", "y"],
            "reading Excel needs openpyxl", "pip install 'sapwood[excel]'")


def test_corrupt_excel(capsys, tmp_path):
    pytest.importorskip("openpyxl")
    path = tmp_path / "book.xlsx"
    path.write_bytes(b"this is no workbook")
    run_bad(capsys, ["explain", str(path), "--target", "y"], "not a readable Excel file")


def test_old_excel_is_refused(capsys, tmp_path):
    path = tmp_path / "book.xls"
    path.write_bytes(b"\xd0\xcf\x11\xe0 old")
    run_bad(capsys, ["explain", str(path), "--target", "y"], ".xls", "save it as .xlsx")


def test_workbook_named_csv(capsys, tmp_path):
    path = tmp_path / "book.csv"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("xl/workbook.xml", "<workbook/>")
    run_bad(capsys, ["explain", str(path), "--target", "y"], "zip archive", ".xlsx")


def test_sep_with_excel_is_refused(capsys, tmp_path):
    path = tmp_path / "book.xlsx"
    path.write_bytes(b"PK\x03\x04")
    run_bad(capsys, ["explain", str(path), "--target", "y", "--sep", ";"],
            "--sep is for CSV files only")


# -- dates, missing targets, misspellings, integer targets -------------------------------

def test_date_columns_in_a_csv(capsys, tmp_path):
    frame = _frame()
    frame["Day"] = pd.date_range("2024-01-01", periods=120, freq="D").strftime("%Y-%m-%d")
    frame["Stamp"] = pd.date_range("2024-03-01 12:00", periods=120, freq="h").astype(str)
    frame["Code"] = [f"A{i % 7}" for i in range(120)]
    path = tmp_path / "dated.csv"
    frame.to_csv(path, index=False)
    document, err = _run(capsys, ["explain", str(path), "--target", "Sales", *FAST])
    assert "note: date columns 'Day', 'Stamp' read as seconds since 1970-01-01" in err
    assert set(document["data"]["encoded"]) == {"Shelf", "Code"}  # never categories


def test_missing_target_rows_left_out(capsys, tmp_path):
    frame = _frame()
    frame.loc[[3, 10, 50], "Sales"] = np.nan
    path = tmp_path / "gaps.csv"
    frame.to_csv(path, index=False)
    document, err = _run(capsys, ["explain", str(path), "--target", "Sales", *FAST])
    assert "note: 3 row(s) whose target 'Sales' is missing left out; 117 rows remain" in err
    assert document["data"]["n_rows"] == 117


def test_misspelt_target(capsys, tmp_path):
    path = tmp_path / "data.csv"
    _frame().to_csv(path, index=False)
    run_bad(capsys, ["explain", str(path), "--target", "sales"],
            "target column 'sales' not found (did you mean 'Sales'?)", "columns are:")
    run_bad(capsys, ["explain", str(path), "--target", "CmpPrice"], "did you mean 'CompPrice'?")
    line = run_bad(capsys, ["explain", str(path), "--target", "zzz"], "not found")
    assert "did you mean" not in line


def test_integer_target_with_a_class_of_one_row_hints_regression(capsys, tmp_path):
    rng = np.random.default_rng(1)
    y = np.r_[np.repeat(np.arange(8), 5), [8]]  # 9 integer values, the last in 1 row
    path = tmp_path / "counts.csv"
    pd.DataFrame({"x": rng.normal(size=len(y)), "y": y}).to_csv(path, index=False)
    run_bad(capsys, ["explain", str(path), "--target", "y", "--model", "tree"],
            "class '8' of target 'y' has 1 row", "9 integer values taken as classes",
            "--task regression")
    assert main(["explain", str(path), "--target", "y", "--task", "regression",
                 *FAST]) == 0


def test_two_classes_get_no_regression_hint(capsys, tmp_path):
    path = tmp_path / "binary.csv"
    path.write_text("x,y\n" + "".join(f"{i},0\n" for i in range(12)) + "99,1\n")
    line = run_bad(capsys, ["explain", str(path), "--target", "y", "--model", "tree"],
                   "class '1'")
    assert "--task regression" not in line


def test_load_table_errors_are_input_errors(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(InputError, match="no such column"):
        load_table(path, drop=["c"])
