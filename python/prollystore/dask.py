"""Dolt tables as Dask DataFrames, read in parallel by Dask's workers through table parts.

``read_dolt`` cuts the table into parts of nearly equal row counts from the tree's internal
counts (no scan; see :meth:`prollystore.dolt.Table.split`) and hands them to
``dask.dataframe.from_map``: each partition is one :class:`prollystore.dolt.Part`, which pickles
as a few hundred bytes of JSON and is read by the worker that runs it, from the database it
opens itself. Every part reads the table chunk it was cut from, so a branch that moves while
the graph runs changes nothing. Needs ``dask[dataframe]`` (``pip install 'prollystore[dask]'``).
"""

import os
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

from . import dolt
from ._native import DiffPart, Part

if TYPE_CHECKING:  # pragma: no cover
    import dask.dataframe

__all__ = ["read_dolt", "read_dolt_diff", "read_part"]


def read_part(part: Union[Part, DiffPart], dtype_backend: str = "pyarrow") -> Any:
    """One part's rows as a ``pandas.DataFrame`` (what each Dask partition runs), with
    ``pandas.ArrowDtype`` columns (``dtype_backend="pyarrow"``) or pyarrow's default
    conversion to NumPy types (``"numpy"``)."""
    return _to_pandas(part.read().read_all(), dtype_backend)


def _to_pandas(table: Any, dtype_backend: str) -> Any:
    if dtype_backend == "pyarrow":
        import pandas

        return table.to_pandas(types_mapper=pandas.ArrowDtype)
    if dtype_backend == "numpy":
        return table.to_pandas()
    raise ValueError(f'dtype_backend must be "pyarrow" or "numpy", not {dtype_backend!r}')


def read_dolt(
    path: Union[str, "os.PathLike[str]"],
    table: str,
    npartitions: Optional[int] = None,
    columns: Optional[Sequence[str]] = None,
    at: Optional[str] = None,
    *,
    start: Any = None,
    end: Any = None,
    prefix: Any = None,
    location: Optional[str] = None,
    dtype_backend: str = "pyarrow",
) -> "dask.dataframe.DataFrame":
    """Table ``table`` of the Dolt database at ``path`` as a Dask DataFrame of ``npartitions``
    partitions (default: the number of CPUs), each one part of the table in primary-key order.
    ``path`` may be a remote's URL read in place, such as a bucket Dolt pushed to
    (``s3://BUCKET/PATH?endpoint=URL&path-style=true``; credentials from the standard AWS
    environment variables, in the workers' environment too): see :func:`prollystore.dolt.split`.

    ``columns`` picks the columns read (the others are never decoded); ``at`` is the state
    (``WORKING`` by default, as :meth:`prollystore.dolt.Database.table` takes it: a branch,
    tag, commit, ``HEAD~N``, ``BRANCH@WORKING``); ``start``/``end``/``prefix`` read only that
    primary-key range. ``location`` is where the workers find the database when it is not at
    ``path`` for them (another mount point).

    Columns are ``pandas.ArrowDtype`` by default (``dtype_backend="pyarrow"``): every SQL type
    keeps its Arrow type, NULLs included, and Dask leaves them as they are. ``"numpy"`` gives
    pyarrow's NumPy conversion (integers with NULLs become floats; Dask's string conversion,
    ``dataframe.convert-string``, then fails on binary columns: turn it off for those).
    """
    dd = _dask(dtype_backend)
    n = npartitions if npartitions is not None else (os.cpu_count() or 1)
    parts, _ = dolt.split(path, table, n, columns, at, start=start, end=end, prefix=prefix, location=location)
    return _from_parts(dd, parts, dtype_backend, f"read-dolt-{table}")


def _dask(dtype_backend: str) -> Any:
    """``dask.dataframe``, once ``dtype_backend`` is known to be one we make."""
    if dtype_backend not in ("pyarrow", "numpy"):
        raise ValueError(f'dtype_backend must be "pyarrow" or "numpy", not {dtype_backend!r}')
    try:
        import dask.dataframe as dd
    except ImportError as e:  # pragma: no cover - exercised only without dask
        raise ImportError(
            f"prollystore.dask needs dask ({e}); install it, e.g. `pip install 'prollystore[dask]'`"
        ) from e
    return dd


def _from_parts(dd: Any, parts: Sequence[Union[Part, DiffPart]], dtype_backend: str, label: str) -> Any:
    """A Dask DataFrame of one partition per part."""
    # The columns and their pandas types, from the first part's schema (no row is read).
    meta = _to_pandas(parts[0].read().schema.empty_table(), dtype_backend)
    return dd.from_map(
        read_part,
        parts,
        dtype_backend=dtype_backend,
        meta=meta,
        label=label,
        enforce_metadata=False,
    )


def read_dolt_diff(
    path: Union[str, "os.PathLike[str]"],
    from_: str,
    to: str,
    table: str,
    npartitions: Optional[int] = None,
    *,
    location: Optional[str] = None,
    dtype_backend: str = "pyarrow",
) -> "dask.dataframe.DataFrame":
    """The diff of table ``table`` of the Dolt database at ``path`` from state ``from_`` to
    state ``to`` as a Dask DataFrame of at most ``npartitions`` partitions (default: the number
    of CPUs), each one :class:`prollystore.dolt.DiffPart`: a key range of the diff, cut from
    the trees' internal nodes so that each compares about as many rows (see
    :func:`prollystore.dolt.split_diff`). The columns are ``dolt_diff``'s (``to_<col>``…,
    ``to_commit``, ``to_commit_date``, ``from_<col>``…, ``from_commit``, ``from_commit_date``,
    ``diff_type``); the partitions, in order, hold the whole diff's rows in its order.
    ``location`` and ``dtype_backend`` as in :func:`read_dolt`.
    """
    dd = _dask(dtype_backend)
    n = npartitions if npartitions is not None else (os.cpu_count() or 1)
    parts = dolt.split_diff(path, from_, to, table, n, location=location)
    return _from_parts(dd, parts, dtype_backend, f"read-dolt-diff-{table}")
