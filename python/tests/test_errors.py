"""Bad input raises TypeError/ValueError naming the column and row, library errors are
prollystore.Error subclasses with the library's message, and closed handles raise (never
crash)."""

import datetime
import decimal
import gc

import pytest

import prollystore
import prollystore.dolt


def test_bad_values_name_column_and_row():
    with prollystore.Store.memory() as s:
        with pytest.raises(TypeError, match=r'row 1, column "id".*expected an int, got str'):
            s.build([(1, 1.0), ("2", 2.0)], key="id:bigint", value="x:double")
        with pytest.raises(ValueError, match=r'row 0, column "p".*not a finite number'):
            s.build([(1, decimal.Decimal("NaN"))], key="id:bigint", value="p:decimal(10,2)")
        with pytest.raises(ValueError, match=r'row 0, column "p".*not a finite number'):
            s.build([(1, float("nan"))], key="id:bigint", value="p:decimal(10,2)")
        with pytest.raises(ValueError, match=r'row 0, column "x".*out of range for int8'):
            s.build([(1, 300)], key="id:bigint", value="x:tinyint")
        with pytest.raises(ValueError, match=r"row 0: 1 values; the schema has 2 columns"):
            s.build([(1,)], key="id:bigint", value="x:int")
        with pytest.raises(TypeError, match=r'column "d".*datetime.date'):
            s.build([(1, "2024-01-01")], key="id:bigint", value="d:date")
        with pytest.raises(ValueError, match="bad column"):
            s.build([], key="id:nosuchtype")
        m = s.build([(1, 1)], key="id:bigint", value="x:int")
        with pytest.raises(TypeError, match='key column "id"'):
            m.get("1")
        # Nothing changed on error.
        with pytest.raises(TypeError):
            m.edit(puts=[(2, 2), (3, "x")])
        assert len(m) == 1


def test_dolt_errors(vecdb):
    with pytest.raises(prollystore.Error):
        prollystore.dolt.open(vecdb.parent / "no-such-db")
    with prollystore.dolt.open(vecdb) as db:
        with pytest.raises(prollystore.NotFoundError, match="nope"):
            db.table("nope")
        with pytest.raises(prollystore.NotFoundError):
            db.table("items", at="no-such-branch")
        t = db.table("items")
        with pytest.raises(TypeError, match=r'table "items", column "id": expected an int, got str'):
            t.get("1")
        with pytest.raises(TypeError, match="get needs 1 primary-key values, 2 given"):
            t.get(1, 2)
        with pytest.raises(TypeError, match=r'column "day": expected a datetime.date'):
            t.scan(index="idx_color_day", start=("red", "2020-01-01"))
        with pytest.raises(prollystore.NotFoundError, match="index"):
            t.scan(index="nope")


def test_naive_datetime_for_timestamp_key_is_refused(vecdb):
    """A TIMESTAMP is an instant: a naive datetime as its key value raises ValueError."""
    from conftest import dolt_databases

    for _, db_dir, _ in dolt_databases():
        with prollystore.dolt.open(db_dir) as db:
            for name in db.tables():
                t = db.table(name)
                cols = {c["name"]: c["type"] for c in t.schema["columns"]}
                for ix in t.schema["indexes"]:
                    first = ix["columns"][0]
                    if cols[first].startswith("timestamp"):
                        naive = datetime.datetime(2024, 1, 1)
                        with pytest.raises(ValueError, match=f'column "{first}".*naive datetime'):
                            list(t.scan(index=ix["name"], start=naive))
                        aware = naive.replace(tzinfo=datetime.timezone.utc)
                        list(t.scan(index=ix["name"], start=aware, limit=1))
                        return
    # The timestamp column's values come back aware either way.
    pytest.skip("no index on a TIMESTAMP column in the vectors")


def test_closed_handles_raise(vecdb):
    db = prollystore.dolt.open(vecdb)
    t = db.table("items")
    rows = t.scan()
    next(rows)
    stream = t.batches()
    db.close()
    assert db.closed
    for call in (lambda: db.table("items"), lambda: t.get(1), lambda: next(rows), db.branches,
                 lambda: t.scan(), lambda: t.to_arrow()):
        with pytest.raises(prollystore.ClosedError):
            call()
    import pyarrow as pa

    with pytest.raises(Exception, match="closed"):
        pa.table(stream)
    db.close()  # twice is fine

    s = prollystore.Store.memory()
    m = s.build([(1, 1)], key="id:bigint", value="x:int")
    s.close()
    with pytest.raises(prollystore.ClosedError):
        m.get(1)
    with pytest.raises(prollystore.ClosedError):
        s.build([], key="id:bigint")


def test_garbage_collection_closes(vecdb, tmp_path):
    for _ in range(3):
        db = prollystore.dolt.open(vecdb)
        t = db.table("items")
        del db
        gc.collect()
        assert t.get(1) is not None  # the table keeps what it reads alive
        del t
        gc.collect()
    # A file store's writer lock is released when the store is collected.
    s = prollystore.Store.create(tmp_path / "s")
    del s
    gc.collect()
    with prollystore.Store.open(tmp_path / "s") as s2:
        assert s2.maps() == []
    with prollystore.Store.open(tmp_path / "s") as s3:
        with pytest.raises(prollystore.LockedError):
            prollystore.Store.open(tmp_path / "s")
        s3.close()
