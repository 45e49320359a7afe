"""The one type every check returns."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Finding"]


@dataclass(frozen=True)
class Finding:
    """One warning: its ``kind`` (``"identifier"``, ``"leakage"``, ...), the features it
    is about, a plain sentence with the evidence, and the evidence as numbers."""

    kind: str
    features: tuple
    message: str
    details: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-ready: plain Python values only."""
        return {"kind": self.kind, "features": [str(f) for f in self.features],
                "message": self.message, "details": _plain(self.details)}


def _plain(value):
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value
