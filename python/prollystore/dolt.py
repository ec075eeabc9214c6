"""Dolt databases, read-only: ``prollystore.dolt.open(path)``.

A :class:`Database` lists branches, tags and the log and gives tables at any state; a
:class:`Table` answers keyed reads (``get``), scans (``scan``) and becomes Arrow, pandas or
Polars data. Values come back as natural Python types (see the package README for the table
of SQL types).
"""

import os
from typing import Union

from ._native import Database, Diff, Rows, Table

__all__ = ["Database", "Diff", "Rows", "Table", "open"]


def open(path: Union[str, "os.PathLike[str]"], verify_hashes: bool = True) -> Database:  # noqa: A001
    """Opens the Dolt database directory ``path`` (the one holding ``.dolt``) for reading.

    Use it as a context manager (``with prollystore.dolt.open(p) as db:``) or call
    ``db.close()``; tables and scans made from a closed database raise ``ClosedError``.
    ``verify_hashes=False`` skips checking each chunk's SHA-512 against its address (CRCs are
    still checked): faster, for databases you trust.
    """
    return Database(os.fspath(path), verify_hashes)
