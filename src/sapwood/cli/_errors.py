"""The command line's own error: a module of its own, so that ``sapwood`` can start its
compile-ahead process before it imports pandas (``_warmup.start_ahead``)."""

__all__ = ["InputError"]


class InputError(Exception):
    """Bad input to the command line: the message is one line naming the problem."""
