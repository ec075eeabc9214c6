"""Native stores: build, get, scans, edits, diffs, merges with a callback, copies, verify,
and file stores that reopen."""

import datetime
import decimal

import pytest

import prollystore

KEY, VALUE = "id:bigint", "name:text?, n:int"


def rows(n):
    return [(i, f"row {i}", i * 10) for i in range(n)]


@pytest.fixture
def store():
    with prollystore.Store.memory() as s:
        yield s


def test_build_get_scan(store):
    m = store.build(reversed(rows(1000)), key=KEY, value=VALUE)
    assert len(m) == 1000
    assert m.get(7) == (7, "row 7", 70)
    assert m.get(7, as_dict=True) == {"id": 7, "name": "row 7", "n": 70}
    assert m.get(5000) is None
    assert 7 in m and 5000 not in m
    assert m.scan(10, 13) == [rows(20)[i] for i in (10, 11, 12)]
    assert [r[0] for r in m.scan(reverse=True, limit=3)] == [999, 998, 997]
    assert [r[0] for r in m] == list(range(1000))
    assert m.columns == ["id", "name", "n"] and m.key_columns == ["id"]


def test_same_rows_same_root(store):
    a = store.build(rows(500), key=KEY, value=VALUE)
    b = store.build(reversed(rows(500)), key=KEY, value=VALUE)
    assert a.root == b.root and a == b


def test_edit_and_diff(store):
    m = store.build(rows(100), key=KEY, value=VALUE)
    e = m.edit(puts=[(5, "five", 5), (1000, None, 1)], deletes=[7])
    assert len(m) == 100 and len(e) == 100
    assert e.get(5) == (5, "five", 5) and e.get(7) is None and e.get(1000) == (1000, None, 1)
    d = m.diff(e)
    assert d == [
        ("modified", (5,), (5, "row 5", 50), (5, "five", 5)),
        ("removed", (7,), (7, "row 7", 70), None),
        ("added", (1000,), None, (1000, None, 1)),
    ]
    assert m.diff(m) == []


def test_merge_with_callback(store):
    base = store.build(rows(50), key=KEY, value=VALUE)
    left = base.edit(puts=[(1, "left", 1), (2, "left", 2)])
    right = base.edit(puts=[(2, "right", 2), (3, "right", 3)])
    merged, conflicts = left.merge(base, right)
    assert [c[0] for c in conflicts] == [(2,)]
    assert merged.get(1)[1] == "left" and merged.get(3)[1] == "right"
    assert merged.get(2)[1] == "left"  # kept as on the left

    seen = []

    def resolve(key, b, l, r):
        seen.append((key, b, l, r))
        return (key[0], l[1] + "+" + r[1], l[2] + r[2])

    merged, conflicts = left.merge(base, right, resolve)
    assert conflicts == []
    assert seen == [((2,), (2, "row 2", 20), (2, "left", 2), (2, "right", 2))]
    assert merged.get(2) == (2, "left+right", 4)
    merged, conflicts = left.merge(base, right, lambda *a: None)
    assert merged.get(2) is None
    merged, conflicts = left.merge(base, right, lambda *a: prollystore.CONFLICT)
    assert len(conflicts) == 1

    def boom(*a):
        raise KeyError("from the callback")

    with pytest.raises(KeyError, match="from the callback"):
        left.merge(base, right, boom)


def test_file_store_save_reopen_copy_verify(tmp_path):
    path = tmp_path / "store"
    with prollystore.Store.create(path) as s:
        m = s.build(rows(2000), key=KEY, value=VALUE)
        s.save("things", m)
        big = s.build([(1, "x" * 100_000, 1)], key=KEY, value=VALUE)  # out-of-band text
        s.save("big", big)
        root = m.root
    with prollystore.Store.open(path, write=False) as s:
        assert sorted(s.maps()) == ["big", "things"]
        m = s.map("things")
        assert m.root == root and m.get(1999) == (1999, "row 1999", 19990)
        assert s.map("big").get(1)[1] == "x" * 100_000
        report = s.verify()
        assert report["chunks"] > 0
        with prollystore.Store.memory() as mem:
            c = mem.copy(m)
            assert c.root == m.root and c.get(5) == m.get(5)
        with pytest.raises(prollystore.NotFoundError):
            s.map("nope")


def test_types_round_trip(store):
    schema_key = "k:int"
    schema_value = (
        "i8:tinyint?, u64:bigint unsigned?, f:float?, d:double?, dec:decimal(20,6)?, "
        "y:year?, day:date?, t:time?, dt:datetime(6)?, s:varchar(10)?, b:varbinary(10)?, "
        "j:json?, big:blob?"
    )
    row = (
        1, -5, 2**64 - 1, 1.5, 2.25, decimal.Decimal("-12345.678901"), 2024,
        datetime.date(2024, 2, 29), datetime.timedelta(hours=-838, seconds=1),
        datetime.datetime(2024, 2, 29, 23, 59, 59, 123456), "héllo", b"\x00\xff", '{"a":1}',
        bytes(range(256)) * 200,
    )
    m = store.build([row, (2,) + (None,) * 13], key=schema_key, value=schema_value)
    assert m.get(1) == row
    assert m.get(2) == (2,) + (None,) * 13
