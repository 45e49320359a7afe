"""Bad input: the one error type of :func:`sapwood.explain` and the ``sapwood`` command.

A module of its own that imports nothing, so that ``sapwood`` can start its
compile-ahead process before it imports pandas (``cli._warmup.start_ahead``).
"""

__all__ = ["InputError"]


class InputError(ValueError):
    """Bad input to :func:`sapwood.explain` or the command line: the message is one line
    naming the problem (the command prints it and exits with code 2)."""
