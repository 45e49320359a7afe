"""The version of sapwood, in a module that imports nothing (files record it)."""

__version__ = "0.1.0"
