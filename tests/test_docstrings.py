"""Every example in a docstring runs and prints what it says (the docs stay true)."""

import doctest
import importlib
import pkgutil

import matplotlib
import pytest

import sapwood

matplotlib.use("Agg")


def _modules():
    for info in pkgutil.walk_packages(sapwood.__path__, "sapwood."):
        if "._kernels" in info.name or info.name.endswith("__main__"):
            continue  # Numba kernels carry no examples; __main__ runs the command
        yield importlib.import_module(info.name)


def _examples():
    finder = doctest.DocTestFinder(exclude_empty=True)
    seen = set()
    for module in _modules():
        for test in finder.find(module):
            # A name exported from a package is found twice; run it once.
            key = (test.filename, test.lineno)
            if test.examples and key not in seen:
                seen.add(key)
                yield pytest.param(test, id=test.name)


@pytest.mark.parametrize("test", list(_examples()))
def test_docstring_example(test):
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test, out=lambda text: pytest.fail(text, pytrace=False))
    assert runner.failures == 0
