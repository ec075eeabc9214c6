"""The Dolt navigation API against what the `dolt` CLI printed for the vectors (branches.txt,
log_oneline.txt, tags.txt, head.csv), and states named every supported way."""

import csv
import pathlib

import pytest

import prollystore
import prollystore.dolt

from conftest import VECTOR_SETS


@pytest.fixture
def expected(vecdb):
    return vecdb.parent / "vecdb.expected"


def test_branches_log_head(vecdb, expected):
    with prollystore.dolt.open(vecdb) as db:
        lines = (expected / "branches.txt").read_text().splitlines()
        want = {l.split()[-2 if l.startswith("*") else 0].lstrip("* "): None for l in lines}
        branches = db.branches()
        for line in lines:
            parts = line.lstrip("* ").split()
            assert branches[parts[0]] == parts[1]
            if line.startswith("*"):
                assert db.current_branch == parts[0]
        assert set(branches) == set(want) or len(branches) == len(lines)
        for branch in branches:
            oneline = (expected / branch / "log_oneline.txt").read_text().splitlines()
            log = db.log(branch)
            assert [f"{c['hash']} {c['message']}" for c in log] == oneline
            assert db.log(branch, limit=1)[0]["hash"] == branches[branch]
            with open(expected / branch / "head.csv", newline="") as f:
                head = list(csv.DictReader(f))[0]
            assert db.resolve(branch) == head["head"]


def test_tags():
    for vs in VECTOR_SETS:
        exp = vs / "dolt-db" / "vecdb_journal.expected" / "tags.txt"
        if not exp.exists():
            continue
        with prollystore.dolt.open(vs / "dolt-db" / "vecdb_journal") as db:
            first = exp.read_text().splitlines()[0].split("\t")
            tags = {t["name"]: t for t in db.tags()}
            assert tags[first[0]]["commit"] == first[1]
            assert tags[first[0]]["tagger"] == "x"
            assert db.resolve(first[0]) == first[1]
        return
    pytest.skip("no tags.txt in the vectors")


def test_states(vecdb):
    with prollystore.dolt.open(vecdb) as db:
        head = db.resolve("main")
        parent = db.log("main")[1]["hash"]
        assert db.resolve("main~1") == db.resolve("HEAD^") == parent
        by_name = db.table("items", at="main")
        assert db.table("items", at="HEAD").hash == by_name.hash
        assert db.table("items", at=head).hash == by_name.hash
        assert db.table("items", at="main~1").hash == db.table("items", at=parent).hash
        # WORKING and STAGED of the current branch, and spelled with the branch.
        assert db.table("items").hash == db.table("items", at="WORKING").hash
        assert db.table("items", at="WORKING").hash == db.table("items", at="main@WORKING").hash
        assert db.table("items", at="STAGED").hash == db.table("items", at="main@STAGED").hash
        assert sorted(db.tables(at="main")) == sorted(db.tables(at="main~1")) or db.tables(at="main~1")
        with pytest.raises(prollystore.NotFoundError):
            db.resolve("no-such-ref")


def test_diff_matches_scans(vecdb):
    """db.diff(from, to, table) lists exactly the rows whose values differ between the two
    states' scans, keyed by primary key."""
    with prollystore.dolt.open(vecdb) as db:
        a = {r[0]: r for r in db.table("items", at="main~1").scan()}
        b = {r[0]: r for r in db.table("items", at="main").scan()}
        d = db.diff("main~1", "main", "items")
        got = {}
        for kind, old, new in d:
            key = (old or new)[0]
            got[key] = (kind, old, new)
        want = {}
        for k in a.keys() | b.keys():
            if k not in a:
                want[k] = ("added", None, b[k])
            elif k not in b:
                want[k] = ("removed", a[k], None)
            elif a[k] != b[k]:
                want[k] = ("modified", a[k], b[k])
        assert got == want
        assert len(want) > 0
        assert d.from_columns == d.to_columns == db.table("items").columns


def test_schema(vecdb):
    with prollystore.dolt.open(vecdb) as db:
        s = db.table("items").schema
        cols = {c["name"]: c for c in s["columns"]}
        assert cols["price"]["type"] == "decimal(12,4)" and cols["price"]["nullable"]
        assert cols["id"]["primary_key"] and not cols["id"]["nullable"]
        assert s["primary_key"] == ["id"]
        assert {i["name"]: i["columns"] for i in s["indexes"]} == {
            "idx_color_day": ["color", "day"],
            "idx_name": ["name"],
        }
        assert db.table("keyless_log").schema["keyless"]


NULL_KEYS = pathlib.Path(__file__).resolve().parents[2] / "crates/dolt/tests/data/null_keys"


def _expected_ids(name):
    with open(NULL_KEYS / "expected" / f"{name}.csv", newline="") as f:
        return [int(r["id"]) for r in csv.DictReader(f)]


@pytest.mark.parametrize(
    "name,index,prefix",
    [
        ("c_null", "ix_c", (None,)),
        ("sd_null", "ix_sd", (None,)),
        ("sd_a_null", "ix_sd", ("a", None)),
        ("cs_2_null", "ix_cs", (2, None)),
        ("s_empty", "ix_sd", ("",)),
    ],
)
def test_null_key_prefixes_match_dolt(name, index, prefix):
    """`IS NULL` lookups through a secondary index (None in a prefix is the NULL key): the rows
    and order `dolt sql -r csv` printed for the same lookup (crates/dolt/tests/data/null_keys)."""
    t = prollystore.dolt.open(str(NULL_KEYS / "db")).table("n")
    ids = [row[0] for row in t.scan(prefix=prefix, index=index)]
    assert ids == _expected_ids(name)
    streamed = t.batches(prefix=prefix, index=index).to_arrow().column("id").to_pylist()
    assert streamed == ids
    with pytest.raises(ValueError, match="prefix"):
        t.scan(start=(1,), prefix=prefix, index=index)
