"""Bad input raises TypeError/ValueError naming the column and row, library errors are
prollystore.Error subclasses with the library's message, and closed handles raise (never
crash)."""

import datetime
import decimal
import gc
import os
import shutil
import subprocess

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


def _dolt():
    for cand in (os.environ.get("DOLT"), shutil.which("dolt"), "/work/dolt-bin/dolt"):
        if cand and os.path.exists(cand):
            return cand
    return None


def test_timestamps_are_instants(tmp_path):
    """A TIMESTAMP comes back as an aware UTC datetime, and a naive datetime as a TIMESTAMP key
    raises ValueError naming the column (made with the real `dolt` CLI when it is installed)."""
    dolt = _dolt()
    if dolt is None:
        pytest.skip("no dolt CLI (set DOLT) to make a database with a TIMESTAMP key")
    env = dict(os.environ, DOLT_ROOT_PATH=str(tmp_path / "home"))
    run = lambda *a: subprocess.run([dolt, *a], cwd=tmp_path / "db", env=env, check=True, capture_output=True)
    (tmp_path / "db").mkdir()
    run("config", "--global", "--add", "user.name", "t")
    run("config", "--global", "--add", "user.email", "t@example.com")
    run("init")
    run("sql", "-q", "create table ev (at timestamp(6) primary key, n int); "
        "insert into ev values ('2024-05-01 12:00:00.5', 1), ('2024-05-02 00:00:00', 2)")
    with prollystore.dolt.open(tmp_path / "db") as db:
        t = db.table("ev")
        utc = datetime.timezone.utc
        first = datetime.datetime(2024, 5, 1, 12, 0, 0, 500000, tzinfo=utc)
        assert list(t.scan()) == [(first, 1), (datetime.datetime(2024, 5, 2, tzinfo=utc), 2)]
        assert t.get(first) == (first, 1)
        with pytest.raises(ValueError, match=r'table "ev", column "at": a naive datetime'):
            t.get(datetime.datetime(2024, 5, 1, 12, 0, 0, 500000))
        plus2 = datetime.timezone(datetime.timedelta(hours=2))
        assert t.get(datetime.datetime(2024, 5, 1, 14, 0, 0, 500000, tzinfo=plus2)) == (first, 1)


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
