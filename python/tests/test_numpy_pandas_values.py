"""Values as NumPy and pandas hand them out (`df.iloc[0, 0]` is a `numpy.int64`, a datetime
column gives `pandas.Timestamp`s, a missing value is `pandas.NA` or `NaT`) are taken wherever
the package takes values: keys of `get`, rows written, native-map rows. And `batches()` is
iterable as a `pyarrow.RecordBatchReader` is."""

import datetime
import decimal

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import prollystore
import prollystore.dolt as pd_
from test_dolt_write import writable_copy

UTC = datetime.timezone.utc
WHEN = datetime.datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
CREATE = (
    "CREATE TABLE items (id BIGINT NOT NULL PRIMARY KEY, small INT, flag TINYINT, "
    "price DECIMAL(10,2), added DATETIME(6), day DATE, score DOUBLE, name VARCHAR(20))"
)


@pytest.fixture
def db(tmp_path):
    return writable_copy(tmp_path)


def test_numpy_and_pandas_values_are_written_and_read_back(db):
    df = pd.DataFrame(
        {
            "id": np.array([1, 2, 3], dtype=np.int64),
            "small": pd.array([7, None, 9], dtype="Int32"),
            "flag": np.array([True, False, True]),
            "price": [decimal.Decimal("1.50"), None, decimal.Decimal("3.25")],
            "added": pd.to_datetime(["2024-01-01 08:30:00.000250", None, "2024-01-03 00:00:00.000000"]),
            "day": [datetime.date(2024, 1, 1), None, datetime.date(2024, 1, 3)],
            "score": np.array([0.25, np.nan, 0.75], dtype=np.float32),
            "name": ["a", None, "c"],
        }
    )
    rows = [tuple(df.iloc[i, j] for j in range(df.shape[1])) for i in range(len(df))]
    # What pandas hands out: NumPy scalars, pandas.NA, pandas.Timestamp, NaT.
    assert type(rows[0][0]) is np.int64 and rows[1][1] is pd.NA
    assert isinstance(rows[0][4], pd.Timestamp) and rows[1][4] is pd.NaT
    rows[1] = rows[1][:6] + (np.float64(2.5),) + rows[1][7:]
    with pd_.Writer(db) as w:
        w.create_table(CREATE)
        assert w.insert("items", rows) == 3
        w.insert("items", [dict(zip(df.columns, (np.int32(4), np.int16(5), np.bool_(False),
                                                np.float64(1.5), np.datetime64("2024-05-06T07:08:09.123456"),
                                                None, np.float64(4.0), np.str_("d"))))])
        w.commit("numpy rows", "Ada", "ada@example.com", WHEN)
    with pd_.open(db) as r:
        t = r.table("items")
        got = list(t.scan())
    assert got[0] == (
        1, 7, 1, decimal.Decimal("1.50"), datetime.datetime(2024, 1, 1, 8, 30, 0, 250),
        datetime.date(2024, 1, 1), 0.25, "a",
    )
    assert got[1] == (2, None, 0, None, None, None, 2.5, None)
    assert got[3] == (
        4, 5, 0, decimal.Decimal("1.50"), datetime.datetime(2024, 5, 6, 7, 8, 9, 123456),
        None, 4.0, "d",
    )


def test_get_takes_numpy_and_pandas_keys(db):
    with pd_.Writer(db) as w:
        w.create_table("CREATE TABLE k (id INT PRIMARY KEY, at DATETIME, v VARCHAR(5))")
        w.insert("k", [(1, datetime.datetime(2024, 1, 1), "x"), (2, datetime.datetime(2024, 1, 2), "y")])
        w.commit("keys", "Ada", "ada@example.com", WHEN)
    with pd_.open(db) as r:
        t = r.table("k")
        df = t.to_pandas()
        assert type(df.iloc[0, 0]) is not int
        assert t.get(df.iloc[0, 0]) == (1, datetime.datetime(2024, 1, 1), "x")
        for key in (np.int32(2), np.int64(2), np.uint8(2)):
            assert t.get(key) == (2, datetime.datetime(2024, 1, 2), "y")
        assert t.get(np.int32(3)) is None
        with pytest.raises(TypeError):
            t.get(np.float64(1.0))


def test_batches_iterate_as_a_record_batch_reader(db):
    with pd_.Writer(db) as w:
        w.create_table("CREATE TABLE b (id BIGINT PRIMARY KEY, v VARCHAR(5))")
        w.insert("b", [(i, str(i)) for i in range(5)])
        w.commit("batches", "Ada", "ada@example.com", WHEN)
    with pd_.open(db) as r:
        t = r.table("b")
        batches = [b for b in t.batches(batch_rows=2)]
        assert len(batches) >= 2 and all(isinstance(b, pa.RecordBatch) for b in batches)
        assert pa.Table.from_batches(batches).column("id").to_pylist() == list(range(5))
        s = t.batches(batch_rows=2)
        first = s.read_next_batch()
        assert isinstance(first, pa.RecordBatch)
        rest = s.read_all()
        assert first.num_rows + rest.num_rows == 5
        with pytest.raises(StopIteration):
            s.read_next_batch()


def test_native_map_rows_and_keys_take_numpy_values():
    with prollystore.Store.memory() as s:
        m = s.build(
            [(np.int64(1), np.str_("a"), pd.NA), (np.int32(2), "b", np.float32(0.5))],
            key="id:bigint",
            value="name:text?,x:double?",
        )
        assert m.scan() == [(1, "a", None), (2, "b", 0.5)]
        assert m.get(np.int16(2)) == (2, "b", 0.5)


def test_ranges_and_index_prefixes_take_numpy_and_pandas_values(db):
    # Bounds and prefixes go through the same conversion as gets: NumPy ints as ints, a
    # pandas.Timestamp as a DATETIME, None / pandas.NA / NaT as the NULL key.
    days = [datetime.datetime(2024, 1, 1 + i) if i % 2 else None for i in range(6)]
    with pd_.Writer(db) as w:
        w.create_table("CREATE TABLE r (id INT PRIMARY KEY, at DATETIME, KEY by_at (at))")
        w.insert("r", list(zip(range(6), days)))
        w.commit("ranges", "Ada", "ada@example.com", WHEN)
    with pd_.open(db) as r:
        t = r.table("r")
        assert [row[0] for row in t.scan(np.int32(2), np.int64(4))] == [2, 3]
        assert [row[0] for row in t.scan(np.uint16(4))] == [4, 5]
        at = pd.Timestamp("2024-01-04")
        assert [row[0] for row in t.scan(prefix=(at,), index="by_at")] == [3]
        for null in (None, pd.NA, pd.NaT):
            assert sorted(row[0] for row in t.scan(prefix=(null,), index="by_at")) == [0, 2, 4]
        got = [b.num_rows for b in t.batches(start=np.int8(1), batch_rows=2)]
        assert sum(got) == 5
