"""The importance wing's rooms: one module per measure, named as the measure, at most
20 modules at the top; the shared machinery in ``_engine``, which imports no measure;
measures that import no other measure (but split gain, which is MDI for scikit-learn's
trees)."""

import ast
from pathlib import Path

import pytest

import sapwood.importance as importance
from sapwood.importance import MEASURES

PACKAGE = Path(importance.__file__).parent
ENGINE = PACKAGE / "_engine"
# Not measures: the registry, the comparison of measures and the p-values of any.
SHARED_TOP = {"__init__", "_registry", "_compare", "_pvalues"}
# A measure may read another measure only where it is that measure for some models.
ALLOWED = {("_gain", "_mdi")}


def _imports(path):
    """The sibling modules (``._x``) and parent-package modules (``.._x``) a module
    imports, at any depth."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level in (1, 2) and node.module:
            found.add((node.level, node.module.split(".")[0]))
    return found


def test_at_most_twenty_modules_at_the_top_and_one_per_measure():
    top = sorted(p.stem for p in PACKAGE.glob("*.py"))
    assert len(top) <= 20, top
    measures = {p for p in top if p not in SHARED_TOP}
    assert measures == {f"_{m.name}" for m in MEASURES.values()}


def test_every_measure_lives_in_the_module_of_its_name():
    for measure in MEASURES.values():
        function = getattr(importance, measure.function)
        assert function.__module__ == f"sapwood.importance._{measure.name}", measure.name


def test_every_measure_function_is_named_by_the_measure():
    # One name: the function is the measure's name (or one of its long names, as
    # scikit-learn's permutation_importance), with or without "_importance".
    for measure in MEASURES.values():
        allowed = set(measure.names) | {f"{name}_importance" for name in measure.names}
        assert measure.function in allowed, (measure.name, measure.function)


def test_former_names_still_work_with_a_warning():
    for old, new in (("unbiased_mdi", "ufi"), ("impurity_corrected", "air")):
        with pytest.warns(FutureWarning, match=f"now sapwood.importance.{new}"):
            assert getattr(importance, old) is getattr(importance, new)


def test_the_engine_imports_no_measure():
    measures = {f"_{m.name}" for m in MEASURES.values()}
    for path in ENGINE.glob("*.py"):
        parent = {module for level, module in _imports(path) if level == 2}
        assert not parent & (measures | SHARED_TOP), (path.name, parent & measures)


def test_measures_import_no_other_measure():
    measures = {f"_{m.name}" for m in MEASURES.values()}
    for name in measures:
        siblings = {module for level, module in _imports(PACKAGE / f"{name}.py") if level == 1}
        others = {m for m in siblings & measures if m != name and (name, m) not in ALLOWED}
        assert not others, (name, others)


def test_measures_read_no_adapter_internals():
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level >= 2:
                parts = node.module.split(".")
                assert not (parts[0] == "adapters" and len(parts) > 1), (path.name, node.module)
