"""Native stores of typed maps (see :class:`Store` and :class:`Map`)."""

from ._native import CONFLICT, Map, Store

__all__ = ["CONFLICT", "Map", "Store"]
