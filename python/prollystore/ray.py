"""Dolt tables as Ray Data datasets, read in parallel by Ray's workers through table parts.

:class:`DoltDatasource` is a Ray Data ``Datasource``: ``get_read_tasks(parallelism)`` cuts the
table into that many parts of nearly equal row counts from the tree's internal counts (no scan;
see :meth:`prollystore.dolt.Table.split`) and makes one read task per part, which reads its
part as a ``pyarrow.Table`` in the worker, from the database it opens itself. Needs ``ray[data]``
(``pip install 'prollystore[ray]'``)::

    import ray
    from prollystore.ray import read_dolt

    ds = read_dolt("/data/mydb", "orders", columns=["id", "total"], at="main")
    print(ds.sum("total"))
"""

import os
from typing import Any, List, Optional, Sequence, Union

from . import dolt
from ._native import Part

try:
    from ray.data import Datasource, ReadTask
    from ray.data.block import BlockMetadata
except ImportError as e:  # pragma: no cover - exercised only without ray
    raise ImportError(
        f"prollystore.ray needs Ray Data ({e}); install it, e.g. `pip install 'prollystore[ray]'`"
    ) from e

__all__ = ["DoltDatasource", "read_dolt"]


def _read(part: Part) -> List[Any]:
    return [part.read().read_all()]


class DoltDatasource(Datasource):
    """Table ``table`` of the Dolt database at ``path`` (state ``at``, default ``WORKING``;
    ``columns``: the columns read; ``start``/``end``/``prefix``: a primary-key range; ``location``:
    where workers find the database, if not at ``path``)."""

    def __init__(
        self,
        path: Union[str, "os.PathLike[str]"],
        table: str,
        columns: Optional[Sequence[str]] = None,
        at: Optional[str] = None,
        *,
        start: Any = None,
        end: Any = None,
        prefix: Any = None,
        location: Optional[str] = None,
    ) -> None:
        self._path = os.fspath(path)
        self._table = table
        self._columns = list(columns) if columns is not None else None
        self._at = at
        self._range = {"start": start, "end": end, "prefix": prefix}
        self._location = location

    def estimate_inmemory_data_size(self) -> Optional[int]:
        return None

    def get_read_tasks(self, parallelism: int, per_task_row_limit: Optional[int] = None, data_context: Any = None) -> List[ReadTask]:
        tasks = []
        parts, keyless = dolt.split(
            self._path, self._table, parallelism, self._columns, self._at, location=self._location, **self._range
        )
        for part in parts:
            # Stored rows: exact for tables with a primary key (a keyless row may repeat).
            rows = None if keyless else part.rows
            meta = BlockMetadata(num_rows=rows, size_bytes=None, exec_stats=None, input_files=None)
            tasks.append(ReadTask(lambda p=part: _read(p), meta))
        return tasks


def read_dolt(
    path: Union[str, "os.PathLike[str]"],
    table: str,
    columns: Optional[Sequence[str]] = None,
    at: Optional[str] = None,
    *,
    parallelism: int = -1,
    **kwargs: Any,
) -> Any:
    """``ray.data.read_datasource(DoltDatasource(...))``: the table as a Ray Dataset."""
    import ray.data

    return ray.data.read_datasource(DoltDatasource(path, table, columns, at, **kwargs), parallelism=parallelism)
