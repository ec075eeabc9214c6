"""Arrow out of Dolt tables, diffs and maps through the PyCapsule protocol: pyarrow, pandas,
Polars and DuckDB read them directly, and agree with the row API."""

import datetime
import decimal

import pyarrow as pa
import pytest

import prollystore
import prollystore.dolt

from conftest import dolt_databases


def _tables():
    for vs, db, _ in dolt_databases():
        yield pytest.param(db, id=f"{vs.name}/{db.name}")


@pytest.mark.parametrize("db_dir", list(_tables()))
def test_arrow_equals_rows(db_dir):
    """Every table of every branch: pyarrow.table(t) has the rows `scan` yields (geometry
    apart: rows give Dolt's stored SRID+WKB bytes, Arrow plain WKB)."""
    with prollystore.dolt.open(db_dir) as db:
        for branch in db.branches():
            at = f"{branch}@WORKING"
            for name in db.tables(at=at):
                t = db.table(name, at=at)
                arrow = pa.table(t)
                assert arrow.column_names == t.columns
                rows = list(t.scan(as_dict=True))
                got = arrow.to_pylist()
                assert len(got) == len(rows)
                geo = {c["name"] for c in t.schema["columns"] if c["type"] in ("point", "geometry", "linestring", "polygon")}
                for r, a in zip(rows, got):
                    for k in r:
                        if k in geo and r[k] is not None:
                            assert r[k][4:] == a[k]
                        else:
                            assert r[k] == a[k], (name, k)


def test_arrow_types(vecdb):
    with prollystore.dolt.open(vecdb) as db:
        schema = pa.table(db.table("items")).schema
        assert schema.field("id").type == pa.int32()
        assert schema.field("u").type == pa.uint64()
        assert schema.field("price").type == pa.decimal128(12, 4)
        assert schema.field("day").type == pa.date32()
        assert pa.types.is_timestamp(schema.field("created").type)
        assert schema.field("payload").type in (pa.binary(), pa.large_binary())


def test_ranges_and_index_batches(vecdb):
    with prollystore.dolt.open(vecdb) as db:
        t = db.table("items")
        part = pa.table(t.batches(start=10, end=20, batch_rows=3))
        assert part.column("id").to_pylist() == list(range(10, 20))
        assert part.to_pylist() == list(t.scan(start=10, end=20, as_dict=True))
        rev = t.batches(reverse=True, limit=5).to_arrow()
        assert rev.column("id").to_pylist() == [r[0] for r in t.scan(reverse=True, limit=5)]
        by_name = t.batches(index="idx_name", limit=50).to_arrow()
        names = by_name.column("name").to_pylist()
        assert names == sorted(names)
        assert by_name.to_pylist() == list(t.scan(index="idx_name", limit=50, as_dict=True))
        s = t.batches()
        pa.table(s)
        with pytest.raises(prollystore.Error, match="already read"):
            pa.table(s)


def test_pandas_and_polars(vecdb):
    pl = pytest.importorskip("polars")
    with prollystore.dolt.open(vecdb) as db:
        t = db.table("items")
        df = t.to_pandas()
        assert list(df.columns) == t.columns
        assert len(df) == t.count()
        assert df["id"].iloc[0] == 1
        pdf = t.to_polars()
        assert isinstance(pdf, pl.DataFrame)
        assert pdf.height == t.count()
        assert pl.DataFrame(t).height == t.count()
        assert pl.from_arrow(pa.table(t)).columns == t.columns


def test_duckdb_queries_a_dolt_table(vecdb):
    duckdb = pytest.importorskip("duckdb")
    with prollystore.dolt.open(vecdb) as db:
        items = db.table("items")  # noqa: F841 - DuckDB finds it by name
        ((n, total),) = duckdb.sql("select count(*), sum(id) from items").fetchall()
        ids = [r[0] for r in items.scan()]
        assert n == len(ids) and total == sum(ids)
        top = duckdb.sql(
            "select color, count(*) from items where color is not null group by color order by color"
        ).fetchall()
        want = {}
        for r in items.scan(as_dict=True):
            if r["color"] is not None:
                want[r["color"]] = want.get(r["color"], 0) + 1
        assert top == sorted(want.items())


def test_diff_arrow(vecdb):
    with prollystore.dolt.open(vecdb) as db:
        d = db.diff("main~1", "main", "items")
        arrow = pa.table(d)
        assert arrow.num_rows == len(d)
        assert "diff_type" in arrow.column_names
        kinds = sorted(arrow.column("diff_type").to_pylist())
        assert kinds == sorted(k for k, _, _ in d)


def test_map_arrow_and_pandas_round_trip():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(
        {
            "id": [3, 1, 2],
            "name": ["c", "a", None],
            "price": [decimal.Decimal("1.50"), decimal.Decimal("-2.25"), None],
            "day": [datetime.date(2024, 1, 3), datetime.date(2024, 1, 1), None],
            "score": [0.5, 1.5, float("nan")],
        }
    )
    with prollystore.Store.memory() as store:
        m = store.build(
            df,
            key="id:bigint",
            value="name:varchar(20)?, price:decimal(10,2)?, day:date?, score:double?",
        )
        assert m.count() == 3
        assert m.get(1) == (1, "a", decimal.Decimal("-2.25"), datetime.date(2024, 1, 1), 1.5)
        back = m.to_pandas()
        assert back["id"].tolist() == [1, 2, 3]
        assert back["name"].tolist()[0] == "a"
        # pandas -> map -> pandas keeps the rows (sorted by key).
        # (A map's schema keeps no DECIMAL precision, so prollystore-arrow gives decimals
        # of maps as their text.)
        assert [None if p is None or p != p else decimal.Decimal(p) for p in back["price"]] == [
            decimal.Decimal("-2.25"), None, decimal.Decimal("1.50")]
        assert back["day"].tolist()[0] == datetime.date(2024, 1, 1)
        assert [None if pd.isna(n) else n for n in back["name"]] == ["a", None, "c"]
        assert pa.table(m).num_rows == 3
        # Types inferred from Arrow when only the key is named.
        m2 = store.from_arrow(pa.table({"k": [2, 1], "v": ["x", "y"]}), key="k")
        assert list(m2) == [(1, "y"), (2, "x")]
        pl = pytest.importorskip("polars")
        m3 = store.from_arrow(pl.DataFrame({"k": [5, 4], "v": [1.0, 2.0]}), key=["k"])
        assert m3.to_polars()["k"].to_list() == [4, 5]


def test_map_stream_is_lazy():
    # Batches are made as the consumer asks (65,536 rows each); the store stays usable between
    # them, and a stream of a closed store stops with an error instead of crashing.
    n = 70_000
    with prollystore.Store.memory() as store:
        m = store.from_arrow(pa.table({"k": list(range(n)), "v": [i * 2 for i in range(n)]}), key="k")
        reader = pa.RecordBatchReader.from_stream(m)
        first = reader.read_next_batch()
        assert first.num_rows == 65_536
        assert m.get(5) == (5, 10)  # the store is back between batches
        second = reader.read_next_batch()
        assert second.num_rows == n - 65_536
        assert second.column(0)[0].as_py() == 65_536
        with pytest.raises(StopIteration):
            reader.read_next_batch()
        again = pa.RecordBatchReader.from_stream(m)
    with pytest.raises(Exception, match="closed"):
        again.read_all()
