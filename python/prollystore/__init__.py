"""prollystore: Dolt databases and native prolly-tree stores from Python.

* :mod:`prollystore.dolt` -- read Dolt databases: branches, tags, log, tables at any state,
  keyed reads, scans, diffs, and tables as Arrow / pandas / Polars data.
* :class:`Store` -- native stores (a directory or memory) of typed maps: build, get, scan,
  edit, diff, merge, copy, verify.

Errors derive from :class:`Error`.
"""

from ._native import (
    BadInputError,
    ClosedError,
    ConflictError,
    CorruptError,
    EncodeError,
    Error,
    LockedError,
    NotFoundError,
    UnsupportedError,
)
from . import dolt
from .store import CONFLICT, Map, Store

__all__ = [
    "BadInputError",
    "CONFLICT",
    "ClosedError",
    "ConflictError",
    "CorruptError",
    "EncodeError",
    "Error",
    "LockedError",
    "Map",
    "NotFoundError",
    "Store",
    "UnsupportedError",
    "dolt",
]
