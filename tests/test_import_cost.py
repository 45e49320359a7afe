"""`import sapwood` stays light (issue 20, item 3): every public name loads on first use.

The check is on the modules a fresh interpreter holds after the import, not on a
timing (which a loaded test machine would make flaky): the packages below cost a user
seconds at every start-up and none of them is needed to import the package.
"""

from __future__ import annotations

import json
import subprocess
import sys

# Optional extras, plotting, and the heavy required packages the public names load.
NOT_ON_IMPORT = ("matplotlib", "rich", "xgboost", "lightgbm", "catboost", "shap", "dask",
                 "pyarrow", "cvxpy", "pandas", "sklearn", "scipy", "numba")


def _modules_after(statement: str) -> set[str]:
    code = f"import json, sys; {statement}; print(json.dumps(sorted(sys.modules)))"
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout
    return {name.partition(".")[0] for name in json.loads(output)}


def test_import_sapwood_loads_no_heavy_or_optional_package():
    loaded = _modules_after("import sapwood")
    assert "sapwood" in loaded
    assert sorted(loaded & set(NOT_ON_IMPORT)) == []


def test_public_names_still_resolve_on_first_use():
    loaded = _modules_after("import sapwood; sapwood.RandomForestClassifier; "
                            "sapwood.TreeEnsemble")
    assert {"sklearn", "numba"} <= loaded  # the names were really loaded
    import sapwood

    for name in sapwood.__all__:
        assert getattr(sapwood, name) is not None
    assert set(sapwood.__all__) <= set(dir(sapwood))


def test_the_command_line_starts_its_compile_ahead_process_before_pandas():
    """``sapwood demo`` on an empty cache starts a second process that compiles the
    measures (``cli._warmup.start_ahead``) before it builds its parser: the package it
    runs from imports Numba (to read the cache) but not pandas, half a second more."""
    loaded = _modules_after("import sapwood.cli")
    assert "numba" in loaded
    assert sorted(loaded & {"pandas", "sklearn", "matplotlib", "rich"}) == []
