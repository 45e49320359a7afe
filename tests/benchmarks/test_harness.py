"""Smoke test of the benchmark harness: it runs, finds its groups, prints the rows.

Timing figures are not checked (they mean nothing at --quick scale); the table's
shape, the identical-tree check and the command line's error handling are.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(*args):
    return subprocess.run([sys.executable, "-m", "benchmarks", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_quick_tree_run_prints_every_row(tmp_path):
    report_path = tmp_path / "report.json"
    result = _run("tree", "--quick", "--json", str(report_path))
    assert result.returncode == 0, result.stderr
    table = [line for line in result.stdout.splitlines() if line.startswith("| ")]
    assert table[0].startswith("| id | workload | peer |")
    body = table[2:]
    assert [line.split(" | ")[0] for line in body] == [
        "| B6", "| B6", "| compile", "| compile", "| B11"]
    assert "DecisionTreeClassifier fit, D1" in body[0]
    assert "DecisionTreeRegressor fit, D2" in body[1]
    assert "Machine: nproc" in result.stdout

    report = json.loads(report_path.read_text())
    assert report["quick"] is True
    assert report["machine"]["versions"]["scikit-learn"].startswith("1.9")
    fits = [row for row in report["rows"] if row["id"] == "B6"]
    for row in fits:
        assert row["check"].startswith("identical trees"), row["check"]
        assert "test predictions equal" in row["check"]
        assert row["ratio"] == pytest.approx(row["sapwood_s"] / row["peer_s"])


def test_unknown_benchmark_is_one_line_and_exit_code_2():
    result = _run("no-such-group")
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "unknown benchmark 'no-such-group'" in result.stderr


def test_a_group_that_fails_to_import_or_breaks_the_protocol_is_skipped(tmp_path,
                                                                         monkeypatch):
    package = tmp_path / "fakebench"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "bench_ok.py").write_text("def run(quick=False):\n    return [{'id': 'X'}]\n")
    (package / "bench_broken.py").write_text("import no_such_module_anywhere\n")
    (package / "bench_old.py").write_text("def run(name, quick, runs):\n    return []\n")
    (package / "helper.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(ROOT))
    from benchmarks.__main__ import group_names, load_groups

    names = group_names("fakebench")
    assert names == ["broken", "ok", "old"]
    modules, skipped = load_groups(names, "fakebench")
    assert list(modules) == ["ok"]
    assert skipped["broken"].startswith("import failed: ModuleNotFoundError")
    assert "protocol" in skipped["old"]
