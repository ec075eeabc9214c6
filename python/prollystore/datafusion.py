"""Dolt tables in a DataFusion Python ``SessionContext`` (``pip install datafusion``).

``session_context(path)`` registers each table of one state as an in-memory DataFusion table,
read through the Arrow C stream and cut into parts of nearly equal row counts
(:meth:`prollystore.dolt.Table.split`), one DataFusion partition each, so a query uses every
core::

    ctx = prollystore.datafusion.session_context("mydb", tables=["t"])
    ctx.sql("SELECT day, sum(qty), count(*) FROM t GROUP BY day").to_pandas()

The tables are read when registered and held in memory: DataFusion's Python package takes our
rows through the Arrow stream, not through a table provider of ours (its provider interface is
tied to one DataFusion version; ours is in the Rust crate ``prollystore-query``). Which Python
route to use:

* **DuckDB** (recommended, documented in the README): ``duckdb.sql("… FROM t")`` over
  ``db.table("t")`` streams the rows without holding the table and runs the query on every
  core.
* **This module**, for code already written against DataFusion's Python API, or several
  queries over the same small-to-medium tables.
* **The Rust crate** ``prollystore-query`` or the ``prolly dolt DB sql`` command for key-range
  and column pushdown (a point query reads one leaf), ``AS OF`` and Dolt's system tables.
"""

import os
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

from . import dolt

if TYPE_CHECKING:  # pragma: no cover
    import datafusion

__all__ = ["register", "session_context"]


def register(
    ctx: "datafusion.SessionContext",
    db: "dolt.Database",
    tables: Optional[Sequence[str]] = None,
    at: str = "WORKING",
    partitions: Optional[int] = None,
) -> None:
    """Registers ``tables`` (default: every table) of state ``at`` of the open database ``db``
    in ``ctx`` under their own names, each as ``partitions`` in-memory partitions (default:
    one per core)."""
    n = partitions or os.cpu_count() or 1
    for name in tables if tables is not None else db.tables(at=at):
        parts = db.table(name, at=at).split(max(1, n))
        batches = [list(p.read()) for p in parts]
        schema = parts[0].read().schema
        batches = [b for b in batches if b] or [[]]
        if batches == [[]]:
            import pyarrow

            batches = [[pyarrow.RecordBatch.from_pylist([], schema=schema)]]
        ctx.register_record_batches(name, batches)


def session_context(
    path: Union[str, "os.PathLike[str]"],
    tables: Optional[Sequence[str]] = None,
    at: str = "WORKING",
    partitions: Optional[int] = None,
) -> "datafusion.SessionContext":
    """A new ``datafusion.SessionContext`` with ``tables`` of state ``at`` of the Dolt database
    at ``path`` registered (:func:`register`)."""
    import datafusion

    ctx = datafusion.SessionContext()
    with dolt.open(path) as db:
        register(ctx, db, tables, at, partitions)
    return ctx
