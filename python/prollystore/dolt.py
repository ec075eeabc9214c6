"""Dolt databases: read with ``prollystore.dolt.open(path)``, written with
``prollystore.dolt.Writer(path)`` (plus ``create_branch``, ``checkout``, ``merge``), cloned
from a Dolt remote with ``prollystore.dolt.clone(url, dir)`` (and ``remote_add``, ``fetch``,
``pull``, ``push`` on a database's remotes), or read on a remote in place, without cloning,
with ``prollystore.dolt.open_remote(url)``.

A :class:`Database` lists branches, tags and the log and gives tables at any state; a
:class:`Table` answers keyed reads (``get``), scans (``scan``) and becomes Arrow, pandas or
Polars data. Values come back as natural Python types (see the package README for the table
of SQL types).
"""

import os
from typing import Union

from typing import Any, Iterable, Iterator, List, Optional, Sequence, Tuple

from ._native import Database, Diff, DiffPart, Part, Rows, Table
from ._native import Writer as _NativeWriter
from ._native import checkout, clone, create_branch, default_branch, delete_branch, fetch, merge, open_remote, pull, push, remote_add

__all__ = [
    "Database",
    "Diff",
    "DiffPart",
    "Part",
    "Rows",
    "Table",
    "Writer",
    "checkout",
    "clone",
    "create_branch",
    "default_branch",
    "delete_branch",
    "fetch",
    "merge",
    "open",
    "open_remote",
    "part_batches",
    "parts_in_arrow",
    "pull",
    "push",
    "remote_add",
    "split",
    "split_diff",
]


def _arrow_native(data: Any, columns: Optional[Sequence[str]]) -> bool:
    """Whether ``data`` goes to the writer as Arrow data: pyarrow tables, batches and readers,
    Polars DataFrames and anything else with ``__arrow_c_stream__``, when no ``columns`` pick
    among them. Their values are written as ``dolt sql`` prints them and read back by the
    writer's one text reader, with no Python object per value. pandas DataFrames go row by row:
    there a float NaN is a value, which Arrow would turn into NULL."""
    mod = type(data).__module__.split(".")[0]
    return columns is None and mod != "pandas" and hasattr(data, "__arrow_c_stream__")


def _rows_of(data: Any, columns: Optional[Sequence[str]]) -> Tuple[Optional[List[str]], Iterable[Any]]:
    """Column names and rows of ``data``: a pyarrow Table or RecordBatch, a pandas or Polars
    DataFrame, any object with ``__arrow_c_stream__`` (through pyarrow), or an iterable of
    tuples, lists or dicts (returned as given)."""
    mod = type(data).__module__.split(".")[0]
    if mod == "pandas" and hasattr(data, "to_dict"):
        # Records of native Python values (numpy scalars boxed), NaN kept as given.
        return list(columns or [str(c) for c in data.columns]), data.to_dict("records")
    if mod == "polars" and hasattr(data, "to_dicts"):
        return list(columns or data.columns), data.to_dicts()
    if hasattr(data, "to_pylist") and hasattr(data, "schema"):
        return list(columns or data.schema.names), data.to_pylist()
    if hasattr(data, "__arrow_c_stream__"):
        import pyarrow

        t = pyarrow.table(data)
        return list(columns or t.schema.names), t.to_pylist()
    return (list(columns) if columns is not None else None), data


class Writer:
    """A Dolt database open for writing on its current branch (Dolt's writer lock held until
    ``close``; use it as a context manager). Changes stay in memory until :meth:`commit`
    (``dolt add -A`` + ``dolt commit``) or :meth:`save` (the working set, uncommitted).

    ``data`` for :meth:`insert`, :meth:`upsert` and :meth:`update`: a pyarrow Table, a pandas
    or Polars DataFrame, or an iterable of tuples (values for ``columns``, default every
    visible column) or dicts. Every value is checked before anything is applied: a wrong
    type raises ``TypeError``/``ValueError`` naming the table, row and column, and the
    writer is left unchanged.
    """

    def __init__(self, path: Union[str, "os.PathLike[str]"]) -> None:
        self._w = _NativeWriter(os.fspath(path))

    @property
    def branch(self) -> str:
        """The branch changes go to."""
        return self._w.branch

    def tables(self) -> List[str]:
        """The tables of the working root."""
        return self._w.tables()

    def columns(self, table: str) -> List[str]:
        """The visible column names of ``table``."""
        return self._w.columns(table)

    def create_table(self, sql: str) -> None:
        """Creates a table from ``CREATE TABLE`` text."""
        self._w.create_table(sql)

    def alter(self, sql: str) -> None:
        """Runs one ``ALTER TABLE …`` statement (or ``RENAME TABLE a TO b``) as Dolt runs it:
        the same schema, rows rewritten exactly when Dolt rewrites them, the same column tags.
        A clause Dolt refuses, or one not done yet, raises with nothing changed."""
        self._w.alter(sql)

    def drop_table(self, table: str) -> None:
        """Drops ``table``."""
        self._w.drop_table(table)

    def insert(self, table: str, data: Any, columns: Optional[Sequence[str]] = None) -> int:
        """Inserts the rows of ``data``; a duplicate key is an error. Returns the count."""
        if _arrow_native(data, columns):
            return self._w.insert(table, data, None)
        cols, rows = _rows_of(data, columns)
        return self._w.insert(table, rows, cols)

    def upsert(self, table: str, data: Any, columns: Optional[Sequence[str]] = None) -> int:
        """Inserts rows with new keys and updates the others. Returns the count."""
        if _arrow_native(data, columns):
            return self._w.upsert(table, data, None)
        cols, rows = _rows_of(data, columns)
        return self._w.upsert(table, rows, cols)

    def update(self, table: str, data: Any, columns: Optional[Sequence[str]] = None) -> int:
        """Updates rows by primary key (``columns`` include the key). Returns the count."""
        if _arrow_native(data, columns):
            return self._w.update(table, data, None)
        cols, rows = _rows_of(data, columns)
        return self._w.update(table, rows, cols)

    def delete(self, table: str, keys: Iterable[Any]) -> int:
        """Deletes rows by primary key (a tuple per row, or one value for a one-column key);
        absent keys are skipped."""
        return self._w.delete(table, keys)

    def save(self, author: str, email: str, date: Any = None) -> None:
        """Writes the changes as the branch's working set, uncommitted. ``date``: an aware
        datetime or Unix seconds (default now)."""
        self._w.save(author, email, date)

    def commit(self, message: str, author: str, email: str, date: Any = None) -> str:
        """Commits every change to the branch; returns the commit hash. ``date``: an aware
        datetime or Unix seconds (default now)."""
        return self._w.commit(message, author, email, date)

    def close(self) -> None:
        """Releases the writer lock, dropping uncommitted, unsaved changes."""
        self._w.close()

    def __enter__(self) -> "Writer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open(  # noqa: A001
    path: Union[str, "os.PathLike[str]"], verify_hashes: bool = True, keep_budget: Optional[int] = None
) -> Database:
    """Opens the Dolt database directory ``path`` (the one holding ``.dolt``) for reading.

    Use it as a context manager (``with prollystore.dolt.open(p) as db:``) or call
    ``db.close()``; tables and scans made from a closed database raise ``ClosedError``.
    ``verify_hashes=False`` skips checking each chunk's SHA-512 against its address (CRCs are
    still checked): faster, for databases you trust.

    ``keep_budget``: the most bytes of table leaves whole-table reads (Arrow, SQL) keep in
    memory so that the next read of the table is warm; past it, leaves are read from the
    files again each time. Kept leaves stay until the database is closed and dropped. ``None``:
    the ``PROLLY_KEEP_BUDGET`` environment variable (bytes, optional K/M/G suffix), else a
    quarter of the machine's memory; ``0`` keeps nothing (for a table read once).
    ``db.kept_bytes`` says how much is kept.
    """
    return Database(os.fspath(path), verify_hashes, keep_budget)


# The URL schemes of databases read in place (as `prollystore_dolt_remote::REMOTE_SCHEMES`).
_REMOTE_SCHEMES = ("http://", "https://", "s3://")


def split(
    path: Union[str, "os.PathLike[str]"],
    table: str,
    n: int,
    columns: Optional[Sequence[str]] = None,
    at: Optional[str] = None,
    **kwargs: Any,
) -> Tuple[List[Part], bool]:
    """Opens the database at ``path``, cuts ``table`` at ``at`` (default ``WORKING``) into ``n``
    parts (:meth:`Table.split`; ``kwargs``: ``start``, ``end``, ``prefix``, ``location``) and
    closes it again: the parts, and whether the table is keyless (its rows may repeat, so a
    part's ``rows`` counts distinct rows). What the Dask and Ray helpers start from.

    ``path`` may be a remote's URL (``http(s)://HOST:PORT/DB``, or
    ``s3://BUCKET/PATH?endpoint=URL&path-style=true`` with credentials in the standard AWS
    environment variables, which the workers need too): the database is read in place, ``at``
    defaults to the branch a clone would check out, and the parts name the URL, so each worker
    reads its rows from the remote."""
    if isinstance(path, str) and path.startswith(_REMOTE_SCHEMES):
        db = open_remote(path)
        at = at or default_branch(db)
    else:
        db = open(path)
    with db:
        t = db.table(table, at=at or "WORKING")
        parts = t.split(max(1, n), list(columns) if columns is not None else None, **kwargs)
        return parts, bool(t.schema["keyless"])


def split_diff(
    path: Union[str, "os.PathLike[str]"],
    from_: str,
    to: str,
    table: str,
    n: int,
    location: Optional[str] = None,
) -> List[DiffPart]:
    """Opens the database at ``path``, cuts the diff of ``table`` from state ``from_`` to
    state ``to`` into ``n`` parts of nearly equal work (:meth:`Database.split_diff`: the rows
    of the leaves the two states do not share, found from the trees' internal nodes) and
    closes it again. Each part's ``read()`` gives its rows of the diff (``dolt_diff``'s
    columns) in any process; the parts' rows, one after the other, are the whole diff's."""
    with open(path) as db:
        return db.split_diff(from_, to, table, max(1, n), location=location)


def part_batches(part: Union[Part, DiffPart, str], batch_rows: int = 65536) -> Iterator[Any]:
    """The ``pyarrow.RecordBatch``es of one part (a :class:`Part`, a :class:`DiffPart` or
    either one's JSON), read in this process: the per-part Arrow reader for any engine that
    runs Python on its workers."""
    if isinstance(part, str):
        part = DiffPart.from_json(part) if '"prollystore.dolt.diff-part/' in part else Part.from_json(part)
    yield from part.read(batch_rows)


def parts_in_arrow(batches: Iterable[Any], column: str = "part", batch_rows: int = 65536) -> Iterator[Any]:
    """For Spark's ``DataFrame.mapInArrow``: given the record batches of a DataFrame with a
    column of part JSON (``column``), yields the record batches of each part named there::

        parts = db.table("t", at="main").split(64)
        schema = parts[0].read().schema  # pyarrow schema; Spark: from_arrow_schema(schema)
        jobs = spark.createDataFrame([(p.to_json(),) for p in parts], "part string")
        df = jobs.repartition(len(parts)).mapInArrow(prollystore.dolt.parts_in_arrow, spark_schema)
    """
    for batch in batches:
        for text in batch.column(column).to_pylist():
            yield from part_batches(text, batch_rows)
