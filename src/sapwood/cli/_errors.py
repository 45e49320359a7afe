"""The command line's error: the library's :class:`~sapwood._errors.InputError`."""

from .._errors import InputError

__all__ = ["InputError"]
