"""Writing Dolt databases from Python: tables from CREATE TABLE text, rows from tuples, dicts,
pyarrow, pandas and Polars, commits, branches, merges; read back through our reader and, when
PROLLY_DOLT names a Dolt binary, through `dolt sql -r csv`. Bad values raise naming the row
and column, and nothing is written."""

import csv
import datetime
import decimal
import io
import os
import shutil
import stat
import subprocess

import pytest

import prollystore.dolt as pd_
from conftest import VECTOR_SETS

UTC = datetime.timezone.utc
WHEN = datetime.datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
CREATE = (
    "CREATE TABLE items (id BIGINT NOT NULL PRIMARY KEY, name VARCHAR(30), price DECIMAL(10,2), "
    "added DATETIME(6), seen TIMESTAMP, score DOUBLE)"
)


def writable_copy(tmp_path):
    """A writable copy of a freshly initialised Dolt database (branch main) in tmp_path."""
    src = VECTOR_SETS[0] / "dolt-write" / "basic" / "before"
    dst = tmp_path / "db"
    shutil.copytree(src, dst)
    for root, dirs, files in os.walk(dst):
        for n in dirs + files:
            p = os.path.join(root, n)
            os.chmod(p, os.stat(p).st_mode | stat.S_IWUSR)
    return dst


@pytest.fixture
def db(tmp_path):
    """A writable copy of a freshly initialised Dolt database (branch main)."""
    return writable_copy(tmp_path)


def rows(n=3):
    return [
        (
            i,
            f"item {i}",
            decimal.Decimal(f"{i}.5{i % 10}"),
            datetime.datetime(2024, 1, i, 8, 30, 0, 250),
            datetime.datetime(2024, 2, i, 9, 0, tzinfo=UTC),
            i / 4,
        )
        for i in range(1, n + 1)
    ]


def dolt_csv(db, query):
    """`dolt sql -r csv -q query` in db as parsed rows, or None without PROLLY_DOLT."""
    dolt = os.environ.get("PROLLY_DOLT")
    if not dolt:
        return None
    home = db.parent / "home"
    (home / ".dolt").mkdir(parents=True, exist_ok=True)
    (home / ".dolt" / "config_global.json").write_text(
        '{"user.name": "Py", "user.email": "py@example.com", "metrics.disabled": "true"}'
    )
    out = subprocess.run(
        [dolt, "sql", "-r", "csv", "-q", query],
        cwd=db,
        env={**os.environ, "HOME": str(home), "TZ": "UTC", "NO_COLOR": "1"},
        check=True,
        capture_output=True,
        text=True,
    )
    return list(csv.reader(io.StringIO(out.stdout)))


def test_commit_rows_round_trip(db):
    with pd_.Writer(db) as w:
        assert w.branch == "main"
        w.create_table(CREATE)
        assert w.insert("items", rows()) == 3
        h = w.commit("add items", "Ada", "ada@example.com", WHEN)
    with pd_.open(db) as r:
        assert r.log()[0]["hash"] == h
        assert r.log()[0]["message"] == "add items"
        t = r.table("items", at="main")
        assert list(t.scan()) == rows()
        assert t.get(2) == rows()[1]
        assert t.get(2, as_dict=True) == dict(zip(t.columns, rows()[1]))
        assert t.get(99) is None
    got = dolt_csv(db, "select id, name, price, added, seen, score from items order by id")
    if got is not None:
        assert got[1:] == [
            ["1", "item 1", "1.51", "2024-01-01 08:30:00.000250", "2024-02-01 09:00:00", "0.25"],
            ["2", "item 2", "2.52", "2024-01-02 08:30:00.000250", "2024-02-02 09:00:00", "0.5"],
            ["3", "item 3", "3.53", "2024-01-03 08:30:00.000250", "2024-02-03 09:00:00", "0.75"],
        ]
        log = dolt_csv(db, "select message, committer from dolt_log limit 1")
        assert log[1] == ["add items", "Ada"]


def test_dataframes_upsert_delete(db):
    pa = pytest.importorskip("pyarrow")
    pandas = pytest.importorskip("pandas")
    with pd_.Writer(db) as w:
        w.create_table("CREATE TABLE t (id BIGINT PRIMARY KEY, name VARCHAR(20), v DOUBLE)")
        w.insert("t", pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"], "v": [0.5, 1.5, 2.5]}))
        w.upsert("t", pandas.DataFrame({"id": [3, 4], "name": ["C", "d"], "v": [3.0, 4.0]}))
        w.insert("t", [{"id": 5, "name": None, "v": 5.0}])
        w.delete("t", [1, (2,), 99])
        w.commit("frames", "Ada", "ada@example.com", 1_709_294_400)
    with pd_.open(db) as r:
        assert list(r.table("t").scan()) == [(3, "C", 3.0), (4, "d", 4.0), (5, None, 5.0)]
    got = dolt_csv(db, "select * from t order by id")
    if got is not None:
        assert got[1:] == [["3", "C", "3"], ["4", "d", "4"], ["5", "", "5"]]


def test_polars_insert(db):
    pl = pytest.importorskip("polars")
    with pd_.Writer(db) as w:
        w.create_table("CREATE TABLE p (id BIGINT PRIMARY KEY, name VARCHAR(20))")
        w.insert("p", pl.DataFrame({"id": [7, 8], "name": ["x", "y"]}))
        w.commit("polars", "Ada", "ada@example.com", WHEN)
    with pd_.open(db) as r:
        assert list(r.table("p").scan()) == [(7, "x"), (8, "y")]


@pytest.mark.parametrize(
    "bad, exc, words",
    [
        ((("1", "x", decimal.Decimal(1), None, None, 1.0)), TypeError, ["row 1", '"id"', "int"]),
        (((9, "x", decimal.Decimal("NaN"), None, None, 1.0)), ValueError, ["row 1", '"price"', "finite"]),
        (((9, "x", float("nan"), None, None, 1.0)), ValueError, ["row 1", '"price"', "finite"]),
        (
            ((9, "x", None, None, datetime.datetime(2024, 1, 1), 1.0)),
            ValueError,
            ["row 1", '"seen"', "naive"],
        ),
    ],
)
def test_bad_values_name_row_and_column_and_write_nothing(db, bad, exc, words):
    with pd_.Writer(db) as w:
        w.create_table(CREATE)
        w.insert("items", rows(1))
        with pytest.raises(exc) as e:
            w.insert("items", [rows(2)[1], bad])
        for word in words:
            assert word in str(e.value)
        w.commit("one row", "Ada", "ada@example.com", WHEN)
    with pd_.open(db) as r:
        assert [x[0] for x in r.table("items").scan()] == [1]


def test_branch_checkout_merge(db):
    with pd_.Writer(db) as w:
        w.create_table("CREATE TABLE t (id BIGINT PRIMARY KEY, v BIGINT)")
        w.insert("t", [(1, 10)])
        w.commit("base", "Ada", "ada@example.com", WHEN)
    pd_.create_branch(db, "feature")
    pd_.checkout(db, "feature")
    with pd_.Writer(db) as w:
        assert w.branch == "feature"
        w.insert("t", [(2, 20)])
        feature = w.commit("feature row", "Ada", "ada@example.com", WHEN + datetime.timedelta(1))
    pd_.checkout(db, "main")
    out = pd_.merge(db, "feature", "Ada", "ada@example.com", WHEN + datetime.timedelta(2))
    assert out["kind"] == "fast_forward" and out["commit"] == feature
    with pd_.open(db) as r:
        assert list(r.table("t", at="main").scan()) == [(1, 10), (2, 20)]
    got = dolt_csv(db, "select * from t order by id")
    if got is not None:
        assert got[1:] == [["1", "10"], ["2", "20"]]


def test_closed_writer_raises(db):
    import prollystore

    w = pd_.Writer(db)
    w.close()
    with pytest.raises(prollystore.ClosedError):
        w.tables()


def test_get_dates_text_and_decimals_after_many_gets(db):
    """Point gets keep a bounded per-table cache of date objects: dates that share a slot (days
    4096 slots apart), NULLs, and text and decimals beside them come back right in any order."""
    day0 = datetime.date(1990, 1, 1)
    want = {}
    for i in range(1, 601):
        # Consecutive days, then dates 11 to 44 years later (colliding slots), and NULLs.
        d = None if i % 50 == 0 else day0 + datetime.timedelta(days=(i % 7) * 4096 + i)
        want[i] = (i, d, f"näme {i}" if i % 3 else None, decimal.Decimal(f"-{i}.0{i % 10}"))
    with pd_.Writer(db) as w:
        w.create_table(
            "CREATE TABLE ev (id INT PRIMARY KEY, day DATE, name TEXT, amount DECIMAL(9,2))"
        )
        assert w.insert("ev", list(want.values())) == 600
        w.commit("dates", "Ada", "ada@example.com", WHEN)
    with pd_.open(db) as r:
        t = r.table("ev")
        for k in list(range(1, 601)) + list(range(600, 0, -7)) * 3:
            assert t.get(k) == want[k]
        assert t.get(7, as_dict=True) == dict(zip(t.columns, want[7]))


def test_alter_table(db):
    with pd_.Writer(db) as w:
        w.create_table(CREATE)
        w.insert("items", rows())
        w.alter("ALTER TABLE items ADD COLUMN note VARCHAR(10) DEFAULT 'x'")
        w.alter("ALTER TABLE items ADD INDEX idx_name (name)")
        with pytest.raises(Exception, match="nope"):
            w.alter("ALTER TABLE items DROP COLUMN nope")
        w.commit("alter items", "Ada", "ada@example.com", WHEN)
    with pd_.open(db) as r:
        t = r.table("items", at="main")
        assert t.columns[-1] == "note"
        assert [row[-1] for row in t.scan()] == ["x", "x", "x"]
    got = dolt_csv(db, "select note from items order by id")
    if got is not None:
        assert got[1:] == [["x"], ["x"], ["x"]]


def test_error_kinds(db):
    """Malformed SQL and invalid names are BadInputError, clauses Dolt takes but this library
    does not are UnsupportedError; every kind derives from prollystore.Error."""
    import prollystore

    for cls in ("BadInputError", "ConflictError", "EncodeError", "UnsupportedError"):
        assert issubclass(getattr(prollystore, cls), prollystore.Error)
    with pd_.Writer(db) as w:
        with pytest.raises(prollystore.BadInputError, match="cannot parse"):
            w.create_table("CREATE TABLE (nonsense")
        w.create_table(CREATE)
        with pytest.raises(prollystore.BadInputError, match="ALTER TABLE"):
            w.alter("ALTER TABLE items FROB")
        with pytest.raises(prollystore.UnsupportedError, match="FULLTEXT"):
            w.alter("ALTER TABLE items ADD FULLTEXT INDEX ft (name)")
    with pytest.raises(prollystore.BadInputError, match="a..b"):
        pd_.create_branch(db, "a..b")


def test_fractions_beyond_the_column_round_and_decimals_in_exponent_form(db):
    """A DATETIME keeps no fraction and a TIMESTAMP(2) two digits: more is rounded half up, as
    Dolt stores it (`dolt table import` of the same text makes the same table). Decimals whose
    text Python writes with an exponent (`Decimal("1E+3")`, `Decimal("0.0000001")` is
    `1E-7`) are read as Dolt reads `1e3`."""
    with pd_.Writer(db) as w:
        w.create_table(
            "CREATE TABLE r (id INT PRIMARY KEY, a DATETIME, b TIMESTAMP(2), d DECIMAL(10,2))"
        )
        w.insert(
            "r",
            [
                (
                    1,
                    datetime.datetime(2024, 1, 5, 12, 0, 0, 600000),
                    datetime.datetime(2024, 1, 5, 12, 0, 0, 125000, tzinfo=UTC),
                    decimal.Decimal("1E+3"),
                ),
                (
                    2,
                    datetime.datetime(1969, 12, 31, 23, 59, 59, 500000),
                    datetime.datetime(1999, 12, 31, 23, 59, 59, 995000, tzinfo=UTC),
                    decimal.Decimal("0.0000001"),
                ),
                (
                    3,
                    datetime.datetime(2024, 1, 5, 12, 0, 0, 499999),
                    datetime.datetime(2024, 1, 5, 12, 0, 0, 4999, tzinfo=UTC),
                    decimal.Decimal("-4.5E-3"),
                ),
            ],
        )
        w.commit("rounding", "Ada", "ada@example.com", WHEN)
    with pd_.open(db) as r:
        t = r.table("r")
        assert t.get(1) == (
            1,
            datetime.datetime(2024, 1, 5, 12, 0, 1),
            datetime.datetime(2024, 1, 5, 12, 0, 0, 130000, tzinfo=UTC),
            decimal.Decimal("1000.00"),
        )
        assert t.get(2) == (
            2,
            datetime.datetime(1970, 1, 1),
            datetime.datetime(2000, 1, 1, tzinfo=UTC),
            decimal.Decimal("0.00"),
        )
        assert t.get(3)[1:3] == (
            datetime.datetime(2024, 1, 5, 12, 0, 0),
            datetime.datetime(2024, 1, 5, 12, 0, 0, tzinfo=UTC),
        )
    got = dolt_csv(db, "select * from r order by id")
    if got is not None:
        assert got[1:] == [
            ["1", "2024-01-05 12:00:01", "2024-01-05 12:00:00.13", "1000.00"],
            ["2", "1970-01-01 00:00:00", "2000-01-01 00:00:00.00", "0.00"],
            ["3", "2024-01-05 12:00:00", "2024-01-05 12:00:00.00", "0.00"],
        ]


def test_arrow_data_is_written_as_its_rows_are(db):
    """A pyarrow Table goes to the writer as Arrow data (no Python object per value) and
    stores what the same rows given as tuples store; a Polars DataFrame too."""
    pa = pytest.importorskip("pyarrow")
    create = (
        "CREATE TABLE {} (id BIGINT PRIMARY KEY, name VARCHAR(30), price DECIMAL(10,2), "
        "day DATE, added DATETIME(6), seen TIMESTAMP, score DOUBLE, ok TINYINT, bin VARBINARY(8))"
    )
    tuples = [
        (
            i,
            None if i == 2 else f"item {i}",
            decimal.Decimal(f"{i}.5{i}"),
            datetime.date(2024, 1, i),
            datetime.datetime(2024, 1, i, 8, 30, 0, 250),
            datetime.datetime(2024, 2, i, 9, 0, tzinfo=UTC),
            i / 4,
            i % 2,
            bytes([0xFF, i]),
        )
        for i in range(1, 4)
    ]
    columns = list(zip(*tuples))
    table = pa.table(
        {
            "id": pa.array(columns[0], pa.int64()),
            "name": pa.array(columns[1], pa.string()),
            "price": pa.array(columns[2], pa.decimal128(10, 2)),
            "day": pa.array(columns[3], pa.date32()),
            "added": pa.array(columns[4], pa.timestamp("us")),
            "seen": pa.array(columns[5], pa.timestamp("us", tz="UTC")),
            "score": pa.array(columns[6], pa.float64()),
            "ok": pa.array([bool(x) for x in columns[7]], pa.bool_()),
            "bin": pa.array(columns[8], pa.binary()),
        }
    )
    with pd_.Writer(db) as w:
        w.create_table(create.format("by_rows"))
        w.create_table(create.format("by_arrow"))
        assert w.insert("by_rows", tuples) == 3
        assert w.insert("by_arrow", table) == 3
        # A naive timestamp for the TIMESTAMP column is refused, as a naive datetime is.
        with pytest.raises(ValueError, match="time zone"):
            w.insert("by_arrow", table.set_column(5, "seen", pa.array(columns[4], pa.timestamp("us"))))
        w.commit("arrow", "Ada", "ada@example.com", WHEN)
    with pd_.open(db) as r:
        assert list(r.table("by_arrow").scan()) == list(r.table("by_rows").scan()) == tuples
    query = "select id, name, price, day, added, seen, score, ok, hex(bin) from {} order by id"
    by_rows = dolt_csv(db, query.format("by_rows"))
    if by_rows is not None:
        assert dolt_csv(db, query.format("by_arrow")) == by_rows
        assert by_rows[2] == [
            "2", "", "2.52", "2024-01-02", "2024-01-02 08:30:00.000250", "2024-02-02 09:00:00",
            "0.5", "0", "FF02",
        ]
    pl = pytest.importorskip("polars")
    with pd_.Writer(db) as w:
        w.create_table("CREATE TABLE p (id BIGINT PRIMARY KEY, v DOUBLE, s VARCHAR(5))")
        w.insert("p", pl.DataFrame({"id": [1, 2], "v": [0.5, None], "s": ["x", None]}))
        with pytest.raises(ValueError, match='"s"'):
            w.insert("p", pl.DataFrame({"id": [3], "v": [1.0], "s": ["toolong"]}))
        w.commit("polars", "Ada", "ada@example.com", WHEN)
    with pd_.open(db) as r:
        assert list(r.table("p").scan()) == [(1, 0.5, "x"), (2, None, None)]
