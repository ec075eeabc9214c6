"""Every table of every Dolt database in the golden vectors, read from Python, equals the CSV
the `dolt` CLI exported (`<db>.expected/<branch>/<table>.csv`, the branch's working state).

The CSV is text; each field is compared with the Python value by the column's type: integers,
decimals, strings, JSON and dates by their exact text, doubles and floats by value (floats at
32-bit precision), datetimes and times by the instant they name, bytes by their raw bytes.
"""

import csv
import datetime
import decimal
import struct

import pytest

import prollystore.dolt

from conftest import dolt_databases


def _cases():
    for vs, db, expected in dolt_databases():
        for branch_dir in sorted(p for p in expected.iterdir() if p.is_dir()):
            yield pytest.param(db, branch_dir, id=f"{vs.name}/{db.name}/{branch_dir.name}")


def _time_micros(text: str) -> int:
    neg = text.startswith("-")
    h, m, s = text.lstrip("-").split(":")
    micros = (int(h) * 3600 + int(m) * 60) * 1_000_000 + round(decimal.Decimal(s) * 1_000_000)
    return -micros if neg else micros


def _same(field: str, value, sql_type: str) -> bool:
    t = sql_type.lower()
    if value is None:
        return field == ""
    if isinstance(value, bool):
        return field == str(int(value))
    if isinstance(value, int):
        return field == str(value)
    if isinstance(value, float):
        if t.startswith("float"):
            return struct.pack("<f", float(field)) == struct.pack("<f", value)
        return float(field) == value
    if isinstance(value, decimal.Decimal):
        return field == str(value)
    if isinstance(value, datetime.datetime):
        want = datetime.datetime.fromisoformat(field)
        return want == value.replace(tzinfo=None) if value.tzinfo else want == value
    if isinstance(value, datetime.date):
        return field == value.isoformat()
    if isinstance(value, datetime.timedelta):
        return _time_micros(field) == value // datetime.timedelta(microseconds=1)
    if isinstance(value, bytes):
        return field.encode("utf-8", "surrogateescape") == value
    if isinstance(value, str):
        return field == value
    raise AssertionError(f"unexpected Python type {type(value)}")


@pytest.mark.parametrize("db_dir, branch_dir", list(_cases()))
def test_tables_equal_dolt_csv(db_dir, branch_dir):
    branch = branch_dir.name
    with prollystore.dolt.open(db_dir) as db:
        at = f"{branch}@WORKING"
        tables = db.tables(at=at)
        checked = 0
        for name in tables:
            path = branch_dir / f"{name}.csv"
            if not path.exists():
                continue
            with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:
                rows = list(csv.reader(f))
            header, want = rows[0], rows[1:]
            table = db.table(name, at=at)
            assert table.columns == header, f"{name}: columns"
            types = [c["type"] for c in table.schema["columns"]]
            got = list(table.scan())
            if table.schema["keyless"]:
                # Dolt's CSV of a keyless table is ordered by all columns, NULLs first (binary
                # collation: code point order, which Python's str order is).
                got.sort(key=lambda r: tuple((v is not None, v if v is not None else 0) for v in r))
            assert len(got) == len(want), f"{name}: {len(got)} rows, Dolt has {len(want)}"
            for i, (g, w) in enumerate(zip(got, want)):
                for col, t, value, field in zip(header, types, g, w):
                    assert _same(field, value, t), (
                        f"{branch}/{name}.csv row {i + 1} column {col} ({t}): "
                        f"Dolt {field!r}, Python {value!r}"
                    )
            # Keyed reads agree with the scan.
            pk = table.schema["primary_key"]
            if pk:
                idx = [header.index(c) for c in pk]
                for row in got[:: max(1, len(got) // 25)]:
                    assert table.get(*[row[j] for j in idx]) == row
            checked += 1
        assert checked > 0, f"no table CSV checked in {branch_dir}"
