"""Importing sapwood and compiling and running its kernels leaves Numba as it was: its
defaults, its built-in templates' options, its cache locators, its configuration and
the methods of its classes. Other Numba code in the same process must compile as it
would without sapwood.

In a new interpreter with an empty Numba cache: Numba's state is written down, sapwood
is imported, its kernels compile (one cached, one calling another, one calling Numba's
own implementations) and run, and the state is written down again."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_SCRIPT = r"""
import json
import sys
import types as pytypes

import numba
import numpy as np
from numba.core import caching, compiler, config, extending, target_extension
from numba.core.typing import templates


def _options(value):
    return repr(sorted(value.items())) if isinstance(value, dict) else repr(value)


def snapshot():
    state = {"overload defaults": _options(extending._overload_default_jit_options)}
    templates_registry = templates.builtin_registry
    for kind in ("functions", "attributes"):
        for template in getattr(templates_registry, kind):
            key = f"template {template.__module__}.{template.__qualname__}#{id(template)}"
            state[key] = _options(getattr(template, "_jit_options", None))
    for function, numba_type in templates_registry.globals:
        state[f"global {function!r}#{id(function)}"] = repr(numba_type)
    for cls in (caching.CacheImpl, caching.CompileResultCacheImpl,
                caching.CodeLibraryCacheImpl):
        state[f"locators of {cls.__name__}"] = repr(cls._locator_classes)
    flags = compiler.Flags()
    state["flag defaults"] = repr({name: getattr(flags, name) for name in flags.options})
    state["config"] = repr({name: getattr(config, name) for name in dir(config)
                            if name.isupper()})
    for name, mapping in (("targets", target_extension.target_registry),
                          ("jits", target_extension.jit_registry)):
        state[name] = repr(sorted((repr(k), id(v)) for k, v in mapping.items()))
    # Every method of every class in Numba's modules, by identity: none replaced.
    for module_name, module in list(sys.modules.items()):
        if not module_name.startswith("numba.") or module is None:
            continue
        for cls in list(vars(module).values()):
            if not isinstance(cls, type) or cls.__module__ != module_name:
                continue
            for name, value in vars(cls).items():
                if isinstance(value, (pytypes.FunctionType, classmethod, staticmethod,
                                      property)):
                    state[f"method {module_name}.{cls.__qualname__}.{name}"] = id(value)
    return state


before = snapshot()

import sapwood  # noqa: E402, F401
from sapwood._kernels._numba import kernel  # noqa: E402
from sapwood._kernels._traverse import node_depths  # noqa: E402


@kernel(cache=False)
def fills(n):
    # min() is defined by Numba on import, np.full on first use
    return np.full((n, n), min(n, np.int16(7)), dtype=np.int16)[0, 0]


@kernel(cache=False)
def deepest(children_left, children_right):
    return node_depths(children_left, children_right).max()  # a kernel calling a kernel


assert fills(np.int16(3)) == 3
left, right = np.array([1, -1, -1]), np.array([2, -1, -1])
assert list(node_depths(left, right)) == [0, 1, 1]  # cached, in sapwood's cache files
assert deepest(left, right) == 1

after = snapshot()
changed = sorted(key for key in before if after.get(key) != before[key])
print(json.dumps({"changed": changed, "compared": len(before),
                  "examples": {key: [before[key], after.get(key)] for key in changed[:5]}}))
"""


def test_sapwood_leaves_numba_as_it_found_it(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", _SCRIPT], cwd=ROOT, env=env, check=True,
                          capture_output=True, text=True)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["compared"] > 1000, report  # the snapshot saw Numba's state
    assert report["changed"] == [], report
