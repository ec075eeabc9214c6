"""The keep budget of a database handle: whole-table reads keep their leaves for later reads
only up to ``keep_budget`` bytes, and read the same rows whatever the budget."""

import os
import subprocess
import sys

import pyarrow as pa
import pytest

import prollystore.dolt as pd_
from test_dolt_write import writable_copy

ROWS = 20_000


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """A database whose table ``t`` spans many leaves."""
    dst = writable_copy(tmp_path_factory.mktemp("keep"))
    with pd_.Writer(dst) as w:
        w.create_table("CREATE TABLE t (id BIGINT PRIMARY KEY, body VARCHAR(80))")
        w.insert("t", [(i, f"{i:0>60}") for i in range(ROWS)])
        w.commit("rows", "Ada", "ada@example.com", 1_709_294_400)
    return dst


def read(db):
    """The whole table through the bulk path (more than one batch of rows)."""
    return pa.table(db.table("t").batches(batch_rows=1000))


def test_a_budget_bounds_what_reads_keep(big):
    with pd_.open(big, keep_budget=0) as db:
        assert db.keep_budget == 0
        want = read(db)
        assert want.num_rows == ROWS
        assert db.kept_bytes == 0

    with pd_.open(big) as db:
        assert db.keep_budget > 0
        assert read(db).equals(want)
        everything = db.kept_bytes
        assert everything > 0
        assert read(db).equals(want)
        assert db.kept_bytes == everything

    budget = everything // 4
    with pd_.open(big, keep_budget=budget) as db:
        assert db.keep_budget == budget
        assert read(db).equals(want)
        kept = db.kept_bytes
        assert budget <= kept < everything
        assert read(db).equals(want)
        assert db.kept_bytes == kept

    with pytest.raises(OverflowError):
        pd_.open(big, keep_budget=-1)


def _open_with(path, value):
    code = "import sys, prollystore.dolt as d; print(d.open(sys.argv[1]).keep_budget)"
    env = dict(os.environ, PROLLY_KEEP_BUDGET=value)
    # Run in the database's directory: `-c` puts the working directory first on the path, and
    # a source checkout's `prollystore` there has no native module.
    return subprocess.run(
        [sys.executable, "-c", code, str(path)], env=env, cwd=path, capture_output=True, text=True
    )


def test_the_environment_sets_the_default(big):
    out = _open_with(big, "64K")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(64 << 10)
    bad = _open_with(big, "12X")
    assert bad.returncode != 0
    assert 'PROLLY_KEEP_BUDGET="12X"' in bad.stderr, bad.stderr
