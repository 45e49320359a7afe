"""What a model relies on, concluded: :func:`explain` and the :class:`Report` it returns."""
