"""Public names a package loads on first use, for its ``__init__``.

sapwood's packages re-export names from modules that import heavy libraries (pandas,
scikit-learn, Numba); imported eagerly, ``import sapwood`` took seconds. A package
instead lists its names and where each comes from, and :func:`lazy_names` gives the
module-level ``__getattr__`` and ``__dir__`` (PEP 562) that import a name's module when
the name is first read and keep the value in the package's namespace.
"""

import importlib
import warnings

__all__ = ["lazy_names"]


def lazy_names(package: str, namespace: dict, table: dict, renamed: dict | None = None):
    """``(__getattr__, __dir__)`` for the package ``package`` (its ``__name__``) whose
    globals are ``namespace``.

    ``table`` maps each public name to the module it comes from, relative to the package:
    ``"._module"`` (the attribute of the same name), or ``("._module", attribute)`` with
    ``attribute`` None for the module itself. ``renamed`` maps former names to current
    ones: reading a former name warns (FutureWarning) and gives the current one."""
    renamed = renamed or {}

    def __getattr__(name):
        if name in renamed:
            warnings.warn(f"{package}.{name} is now {package}.{renamed[name]}; the old "
                          "name will be removed in the next release", FutureWarning,
                          stacklevel=2)
            return __getattr__(renamed[name])
        if name not in table:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        entry = table[name]
        module_name, attribute = entry if isinstance(entry, tuple) else (entry, name)
        module = importlib.import_module(module_name, package)
        value = module if attribute is None else getattr(module, attribute)
        namespace[name] = value
        return value

    def __dir__():
        return sorted(set(namespace) | set(table))

    return __getattr__, __dir__
