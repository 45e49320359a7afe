"""sapwood's modules import downward only, and no two modules import each other.

Every module of ``src/sapwood`` is parsed with :mod:`ast`; every import at any depth
counts (module level, inside functions, under ``if TYPE_CHECKING``), so an import moved
into a function to dodge a circle is still seen. A name imported from a package's
``__init__`` is followed to the submodule that ``__init__`` takes it from. Layers, from
the bottom (a module may import its own layer and the layers below)::

    0  _kernels (Numba, arrays in and out) and helpers that import nothing of sapwood
    1  the format: _format, _persist and the small modules they rest on
    2  adapters, learners
    3  importance
    4  selection, export, plotting, diagnostics, datasets, report (the conclusions)
    5  cli and the package root (``sapwood/__init__.py``, which re-exports)

The format routes rows with the traversal kernels (``_format`` imports
``_kernels._traverse``), so the kernels sit below it. ``plotting`` draws importance
results and trees (with export's node labels), so it sits above both; nothing below
draws.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = "sapwood"
ROOT = Path(__file__).resolve().parents[1] / "src" / PACKAGE

# Module-name prefix -> layer; the longest matching prefix decides.
LAYERS = {
    "sapwood._kernels": 0,
    "sapwood._files": 0,
    "sapwood._text": 0,
    "sapwood._errors": 0,
    "sapwood._progress": 0,
    "sapwood._version": 0,
    "sapwood._lazy": 0,
    "sapwood._cityhash": 0,
    "sapwood._sklearn_compat": 0,
    "sapwood._splits": 0,
    "sapwood._format": 1,
    "sapwood._bootstrap": 1,
    "sapwood._impurity": 1,
    "sapwood._prediction": 1,
    "sapwood._persist": 1,
    "sapwood.adapters": 2,
    "sapwood.learners": 2,
    "sapwood.importance": 3,
    "sapwood.effects": 3,
    "sapwood.selection": 4,
    "sapwood.export": 4,
    "sapwood.plotting": 4,
    "sapwood.diagnostics": 4,
    "sapwood.datasets": 4,
    "sapwood.report": 4,
    "sapwood.cli": 5,
}
ROOT_LAYER = 5  # sapwood/__init__.py itself


def _modules(root=ROOT):
    """Module name -> path for every .py file of the package."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _absolute(module, path, node):
    """The module an ``ImportFrom`` names, relative imports resolved."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if path.name != "__init__.py":
        base.pop()  # a module's package; a package's __init__ is its own package
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(modules):
    """Module -> the set of sapwood modules it imports anywhere in its text."""
    trees = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in
             modules.items()}
    # What each package __init__ re-exports: name -> the submodule it comes from.
    reexports = {}
    for name, path in modules.items():
        if path.name == "__init__.py":
            reexports[name] = {
                alias.asname or alias.name: _absolute(name, path, node)
                for node in ast.walk(trees[name]) if isinstance(node, ast.ImportFrom)
                for alias in node.names}

    def owner(target):
        # "sapwood.x.y.name" -> the longest prefix that is a module.
        while target and target not in modules:
            target = target.rpartition(".")[0]
        return target

    graph = {}
    for name, tree in trees.items():
        targets = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names
                            if alias.name.partition(".")[0] == PACKAGE}
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(name, modules[name], node)
                if base.partition(".")[0] != PACKAGE:
                    continue
                for alias in node.names:
                    submodule = f"{base}.{alias.name}"
                    if submodule in modules:
                        targets.add(submodule)
                    else:
                        targets.add(reexports.get(base, {}).get(alias.name) or base)
        graph[name] = {owner(t) for t in targets} - {name, ""}
    return graph


def _circles(graph):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _layer(module):
    if module == PACKAGE:
        return ROOT_LAYER
    prefixes = [p for p in LAYERS if module == p or module.startswith(p + ".")]
    return LAYERS[max(prefixes, key=len)] if prefixes else None


def test_the_graph_sees_imports_inside_functions_and_through_reexports(tmp_path):
    package = tmp_path / PACKAGE
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def f():\n    from .sub import g\n")
    (package / "sub" / "__init__.py").write_text("from ._b import g\n")
    (package / "sub" / "_b.py").write_text("from .. import a\nimport sapwood.a\n")
    graph = _imports(_modules(package))
    assert graph["sapwood.a"] == {"sapwood.sub._b"}
    assert graph["sapwood.sub._b"] == {"sapwood.a"}
    assert _circles(graph) == [["sapwood.a", "sapwood.sub._b"]]


def test_no_import_circles():
    circles = _circles(_imports(_modules()))
    assert not circles, "import circles:\n" + "\n".join(" <-> ".join(c) for c in circles)


def test_every_module_has_a_layer_and_imports_only_downward():
    graph = _imports(_modules())
    unplaced = sorted(m for m in graph if _layer(m) is None)
    assert not unplaced, f"modules without a layer (add them to LAYERS): {unplaced}"
    upward = sorted(f"{m} (layer {_layer(m)}) imports {t} (layer {_layer(t)})"
                    for m, targets in graph.items() for t in targets
                    if _layer(t) > _layer(m))
    assert not upward, "imports of a higher layer:\n" + "\n".join(upward)
