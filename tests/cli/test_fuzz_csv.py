"""Fuzzing the command line's table input: any CSV text either reads and prepares or is
refused with an InputError (one line, exit 2), never another exception. Derandomised
in the suite; ``make fuzz`` runs many fresh cases. Each case runs under the address-space
and time limits of ``tests/_bounds.py``; what ``make fuzz`` finds is kept in
``fuzz_corpus/`` (``found-csv.csv``), and every file there is read on every run."""

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sapwood.cli._data import load_table
from sapwood.cli._errors import InputError
from sapwood.report._data import prepare

from .._bounds import bounded, corpus, keep_if_found

CORPUS = Path(__file__).parent / "fuzz_corpus"

CELLS = st.one_of(
    st.integers(-10**6, 10**6).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["", "nan", "inf", "-inf", "1e400", "NA", "x", '"a,b"', "true",
                     "2024-01-01", "3.4e39"]),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=6))


@settings(derandomize=not os.environ.get("SAPWOOD_FUZZ_RANDOM"),
          max_examples=int(os.environ.get("SAPWOOD_FUZZ_EXAMPLES", "60")), deadline=None,
          suppress_health_check=list(HealthCheck))
@given(header=st.lists(st.text(min_size=1, max_size=5), min_size=1, max_size=4),
       rows=st.lists(st.lists(CELLS, max_size=5), max_size=8))
def test_any_csv_reads_or_is_refused_with_a_reason(tmp_path_factory, header, rows):
    text = ",".join(name.replace("\n", " ") for name in header) + "\n" + "\n".join(
        ",".join(row) for row in rows)
    path = tmp_path_factory.mktemp("csv") / "data.csv"
    path.write_text(text, encoding="utf-8")
    _reads_or_refuses(path)


def _reads_or_refuses(path):
    try:
        with bounded():
            table = load_table(path)
            prepare(table, table.columns[0])
    except InputError as error:
        assert "\n" not in str(error)
    except BaseException:
        keep_if_found("csv", path.read_bytes(), ".csv")
        raise


@pytest.mark.parametrize("path", corpus(CORPUS), ids=lambda p: p.name)
def test_corpus(path):
    _reads_or_refuses(path)
