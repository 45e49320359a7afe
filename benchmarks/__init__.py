"""sapwood's benchmark harness: ``python -m benchmarks [NAME ...|all] [--quick]``.

Every ``bench_*.py`` module in this package is one benchmark group; see README.md for
the protocol a group follows and BENCHMARKS.md (shared spec) for the workloads and
targets. Private helpers: :mod:`benchmarks._data` (data sets D1-D4) and
:mod:`benchmarks._timing` (medians, fresh processes, peak RSS, machine description).
"""
