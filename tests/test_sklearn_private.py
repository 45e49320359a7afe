"""Private scikit-learn names are imported in one place, sapwood._sklearn_compat.

A private name (a module or a name with a leading underscore) can change in any
scikit-learn release; the compatibility module lists each with its reason, and this
scan keeps every other module on the public API.
"""

import ast
from pathlib import Path

import pytest
import sklearn
from sklearn.ensemble._forest import BaseForest
from sklearn.utils import all_estimators

import sapwood
from sapwood import _sklearn_compat

SOURCE = Path(sapwood.__file__).parent
COMPAT = SOURCE / "_sklearn_compat.py"


def _private(dotted):
    # A leading underscore marks a private name; dunders (__version__) are public.
    return any(part.startswith("_") and not part.endswith("__") for part in dotted.split("."))


def private_sklearn_imports(source):
    """(line, text) of each import of a private scikit-learn module or name in ``source``,
    and of each ``sklearn.<...>._name`` attribute (an import by another route)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.split(".")[0] == "sklearn":
            names = [a.name for a in node.names]
            if _private(node.module) or any(_private(n) for n in names):
                found.append((node.lineno, f"from {node.module} import {', '.join(names)}"))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, f"import {a.name}") for a in node.names
                      if a.name.split(".")[0] == "sklearn" and _private(a.name)]
        elif isinstance(node, ast.Attribute) and _private(node.attr):
            chain, value = [node.attr], node.value
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id == "sklearn":
                found.append((node.lineno, ".".join(["sklearn", *reversed(chain)])))
    return found


@pytest.mark.parametrize("source, expected", [
    ("from sklearn.utils._param_validation import Interval", 1),
    ("from sklearn.utils import _safe_indexing, check_array", 1),
    ("import sklearn.metrics._scorer", 1),
    ("import sklearn\nx = sklearn.utils._param_validation.Interval", 1),
    ("from sklearn.utils import check_array\nimport sklearn.ensemble", 0),
    ("from ._forest import _private_helper", 0),   # sapwood's own, relative
    ("from numpy.linalg import _umath_linalg", 0),  # not scikit-learn
])
def test_the_scan_finds_private_imports(source, expected):
    assert len(private_sklearn_imports(source)) == expected


def test_only_the_compat_module_imports_private_sklearn():
    offenders = [f"{path.relative_to(SOURCE)}:{line}: {text}"
                 for path in sorted(SOURCE.rglob("*.py")) if path != COMPAT
                 for line, text in private_sklearn_imports(path.read_text())]
    assert not offenders, ("private scikit-learn imports outside sapwood/_sklearn_compat.py "
                           "(import them from there, with the reason):\n" + "\n".join(offenders))


def test_the_compat_module_imports_nothing_from_sapwood():
    tree = ast.parse(COMPAT.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0 and node.module.split(".")[0] == "sklearn", node.module
        elif isinstance(node, ast.Import):
            assert all(a.name.split(".")[0] == "sklearn" for a in node.names)


def test_sklearn_forests_are_every_public_forest():
    public = {cls for _, cls in all_estimators() if issubclass(cls, BaseForest)}
    assert set(_sklearn_compat.SKLEARN_FORESTS) == public, sklearn.__version__


def test_the_scorer_kinds():
    from sklearn.datasets import make_classification
    from sklearn.metrics import check_scoring
    from sklearn.tree import DecisionTreeClassifier

    X, y = make_classification(n_samples=30, random_state=0)
    model = DecisionTreeClassifier(random_state=0).fit(X, y)
    own = check_scoring(model, scoring=None)
    accuracy = check_scoring(model, scoring="accuracy")
    assert _sklearn_compat.is_passthrough_scorer(own)
    assert not _sklearn_compat.is_passthrough_scorer(accuracy)
    assert _sklearn_compat.uses_estimator_score(own)
    assert not _sklearn_compat.uses_estimator_score(accuracy)
    assert not _sklearn_compat.uses_estimator_score(
        check_scoring(model, scoring=["accuracy", "balanced_accuracy"]))
    assert _sklearn_compat.uses_estimator_score(
        check_scoring(model, scoring={"own": own, "accuracy": "accuracy"}))
