"""``python -m benchmarks [NAME ...|all] [--quick] [--json PATH]``: run, print Markdown.

NAME is a group: the part after ``bench_`` of a module in this package (``tree`` for
``bench_tree.py``). A group that fails to import is reported as skipped and the others
still run; a group that fails while running makes the exit code 1.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import pkgutil
import sys
import traceback
from pathlib import Path

from ._timing import machine

PREFIX = "bench_"
COLUMNS = ("id", "workload", "peer", "peer (s)", "sapwood (s)", "ratio", "target", "met",
           "check")


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        # One line and exit code 2, never a usage dump or traceback.
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        sys.exit(2)


def group_names(package: str = "benchmarks") -> list[str]:
    """Names of the benchmark groups (``bench_*.py``) in ``package``, sorted."""
    path = importlib.import_module(package).__path__
    return sorted(info.name[len(PREFIX):] for info in pkgutil.iter_modules(path)
                  if info.name.startswith(PREFIX))


def load_groups(names, package: str = "benchmarks"):
    """Import each group; returns ({name: module}, {name: one-line reason it was skipped})."""
    modules, skipped = {}, {}
    for name in names:
        try:
            module = importlib.import_module(f"{package}.{PREFIX}{name}")
        except Exception as error:  # any import failure skips just this group
            skipped[name] = f"import failed: {type(error).__name__}: {error}"
            continue
        try:
            inspect.signature(module.run).bind(quick=True)
        except (AttributeError, TypeError, ValueError):
            skipped[name] = "does not follow the protocol: no run(quick: bool) -> list[dict]"
            continue
        modules[name] = module
    return modules, skipped


def _cell(row: dict, column: str) -> str:
    key = {"peer (s)": "peer_s", "sapwood (s)": "sapwood_s"}.get(column, column)
    value = row.get(key)
    if value is None:
        return ""
    if column == "ratio":
        return f"{value:.3f}"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value).replace("|", "\\|")


def markdown(rows: list[dict], info: dict, skipped: dict[str, str], quick: bool) -> str:
    """The report: machine, one table row per measurement, skipped groups."""
    versions = ", ".join(f"{name} {version}" for name, version in info["versions"].items())
    lines = [
        f"Date: {info['date']}" + ("  (--quick: smoke run, figures mean nothing)" if quick
                                   else ""),
        f"Machine: nproc {info['nproc']}, {info['cpu']}, {info['memory_gb']} GB RAM, "
        f"Python {info['python']}, {info['platform']}",
        f"Versions: {versions}; sapwood git {info['git']}",
        "Load average at the end (1, 5, 15 min): "
        + ", ".join(f"{load:.2f}" for load in info["load_average"] or ()),
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "| " + " | ".join("---" for _ in COLUMNS) + " |",
    ]
    for row in rows:
        lines.append("| " + " | ".join(_cell(row, column) for column in COLUMNS) + " |")
    for name, reason in skipped.items():
        lines.append(f"\nSkipped {PREFIX}{name}: {reason}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    available = group_names()
    parser = _Parser(prog="python -m benchmarks",
                     description="Run sapwood's benchmarks and print a Markdown table.")
    parser.add_argument("names", nargs="*", default=["all"], metavar="NAME",
                        help=f"groups to run: all (default) or any of {', '.join(available)}")
    parser.add_argument("--quick", action="store_true",
                        help="tiny data, one run each: checks the harness, not speed")
    parser.add_argument("--json", type=Path, metavar="PATH",
                        help="also write the machine and every row (with raw runs) as JSON")
    args = parser.parse_args(argv)
    names = available if "all" in args.names else list(dict.fromkeys(args.names))
    unknown = [name for name in names if name not in available]
    if unknown:
        parser.error(f"unknown benchmark {unknown[0]!r}; choose from all, "
                     + ", ".join(available))

    info = machine()  # date of the start; the load average is read again at the end
    modules, skipped = load_groups(names)
    rows, status = [], 0
    for name, module in modules.items():
        print(f"running {PREFIX}{name}{' (quick)' if args.quick else ''} ...", file=sys.stderr)
        try:
            group_rows = list(module.run(quick=args.quick))
        except Exception as error:
            traceback.print_exc()
            skipped[name] = f"run failed: {type(error).__name__}: {error}"
            status = 1
            continue
        for row in group_rows:
            if row.get("ratio") is None and row.get("peer_s") and row.get("sapwood_s"):
                row["ratio"] = row["sapwood_s"] / row["peer_s"]
            row.setdefault("group", name)
        rows.extend(group_rows)

    info["load_average"] = machine()["load_average"]
    print(markdown(rows, info, skipped, args.quick))
    if args.json:
        report = {"machine": info, "quick": args.quick, "rows": rows, "skipped": skipped}
        args.json.write_text(json.dumps(report, indent=2, default=str))
    return status


if __name__ == "__main__":
    sys.exit(main())
