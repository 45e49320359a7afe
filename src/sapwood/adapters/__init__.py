"""Bring any supported model into sapwood's tree format."""

from ._resolve import as_ensemble

__all__ = ["as_ensemble"]
