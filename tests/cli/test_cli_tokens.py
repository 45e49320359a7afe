"""The command line's reading of number columns with stray tokens, --na-values,
duplicate header names and compressed CSV files (issue 51, item 7). Every file is built
here."""

import gzip
import json
import zipfile

import numpy as np
import pandas as pd
import pytest

from sapwood.cli import main
from sapwood.cli._data import load_table
from sapwood.cli._errors import InputError
from tests.cli._helpers import run_bad

FAST = ["--model", "tree", "--methods", "mdi", "--json"]


def _table(n=300, seed=0):
    """A file sorted by its signal column 'a' (the file's order carries the target)."""
    rng = np.random.default_rng(seed)
    a = np.sort(rng.normal(size=n)).round(6)  # distinct: as text codes, a key
    return pd.DataFrame({"a": a, "b": rng.normal(size=n).round(3),
                         "y": (a + rng.normal(scale=0.3, size=n)).round(3)})


def _run(capsys, argv):
    assert main(argv) == 0, capsys.readouterr().err
    out, err = capsys.readouterr()
    return json.loads(out), err


def test_a_stray_question_mark_keeps_a_number_column_numeric(capsys, tmp_path):
    # Issue 51: one "?" made the true signal text codes in file order, which read as
    # "a key: the rows' order" and "row order leaks".
    frame = _table().astype({"a": object})
    frame.loc[150, "a"] = "?"
    path = tmp_path / "signal.csv"
    frame.to_csv(path, index=False)
    document, err = _run(capsys, ["explain", str(path), "--target", "y", "--model", "tree",
                                  "--methods", "mdi,permutation", "--json"])
    assert "read as numbers, not text: 'a' (1 of 300 cells '?' read as missing)" in err
    assert document["notes"][0].startswith("read as numbers")
    assert document["data"]["encoded"] == {}
    assert document["verdict"]["relies_on"] == ["a"]
    # Read as text codes (before issue 51): "a (a key: the rows' order)", "row order
    # leaks".
    assert "identifier" not in [w["kind"] for w in document["warnings"]]


def test_a_text_column_with_numbers_in_some_cells_stays_text(capsys, tmp_path):
    frame = _table()
    frame["grade"] = np.where(np.arange(300) % 3 == 0, "12", "high")
    path = tmp_path / "graded.csv"
    frame.to_csv(path, index=False)
    document, err = _run(capsys, ["explain", str(path), "--target", "y", *FAST])
    assert "read as numbers" not in err
    assert document["data"]["encoded"] == {"grade": ["12", "high"]}


def test_na_values_adds_tokens(capsys, tmp_path):
    frame = _table().astype({"a": object})
    frame.loc[::10, "a"] = "unknown"  # 10%: more than a stray token
    path = tmp_path / "unknown.csv"
    frame.to_csv(path, index=False)
    assert not pd.api.types.is_numeric_dtype(load_table(path)["a"])  # text without it
    assert load_table(path, na_values=["unknown"])["a"].isna().sum() == 30
    document, _ = _run(capsys, ["explain", str(path), "--target", "y", *FAST,
                                "--na-values", "unknown"])
    assert document["data"]["encoded"] == {} and document["data"]["n_missing"] == 30


def test_duplicate_header_names_get_a_note(capsys, tmp_path):
    path = tmp_path / "twice.csv"
    path.write_text("x,x,y\n" + "".join(f"{i},{i % 7},{i % 2}\n" for i in range(60)))
    notes = []
    table = load_table(path, notes=notes)
    assert list(table.columns) == ["x", "x.1", "y"]
    assert notes == ["the header names 'x' 2 times: the columns are read as 'x', 'x.1', in "
                     "that order (rename them in the file to say which is which)"]
    document, err = _run(capsys, ["explain", str(path), "--target", "y", *FAST])
    assert "the header names 'x' 2 times" in err and document["notes"][0] == notes[0]
    load_table(tmp_path / "twice.csv", notes=notes)  # no note for distinct names:
    plain = tmp_path / "plain.csv"
    plain.write_text("x,z,y\n1,2,3\n")
    quiet = []
    load_table(plain, notes=quiet)
    assert quiet == []


def test_gzip_and_zip_of_one_csv_are_read(capsys, tmp_path):
    frame = _table()
    text = frame.to_csv(index=False, sep=";")
    gz = tmp_path / "table.csv.gz"
    gz.write_bytes(gzip.compress(text.encode()))
    packed = tmp_path / "table.zip"
    with zipfile.ZipFile(packed, "w") as archive:
        archive.writestr("inner/table.csv", text)
    for path in (gz, packed):
        pd.testing.assert_frame_equal(load_table(path), frame)  # the ';' sniffed inside
    document, _ = _run(capsys, ["explain", str(packed), "--target", "y", *FAST])
    assert document["data"]["n_rows"] == 300


def test_a_zip_of_two_files_or_a_broken_gzip_is_one_line(capsys, tmp_path):
    two = tmp_path / "two.zip"
    with zipfile.ZipFile(two, "w") as archive:
        archive.writestr("a.csv", "x,y\n1,2\n")
        archive.writestr("b.csv", "x,y\n1,2\n")
    run_bad(capsys, ["explain", str(two), "--target", "y"], "a zip archive of 2 files",
            "one CSV file")
    broken = tmp_path / "broken.csv.gz"
    broken.write_bytes(b"not gzip at all")
    with pytest.raises(InputError, match="not a readable gzip file"):
        load_table(broken)
