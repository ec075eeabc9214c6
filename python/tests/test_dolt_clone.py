"""prollystore.dolt.clone(url, dir): a Dolt database cloned from a Dolt remote.

Always: the golden vectors' Dolt-made `vecdb` store taken as a file:// remote (a manifest and
table files, which is what a file:// remote holds); the clone's tables equal what `dolt sql -r
csv` printed for the source (recorded in the vectors). With PROLLY_DOLT set: a file:// remote
written by `dolt push`, cloned, then `dolt log`, `dolt fsck` and `dolt sql -r csv` run in the
clone and compared with the source's. Bad input raises with one line and writes nothing."""

import os
import pathlib
import subprocess

import pytest

import prollystore.dolt as pd

from conftest import VECTOR_SETS


def test_clone_a_file_remote_of_dolt_made_data(tmp_path):
    vectors = VECTOR_SETS[0]
    noms = vectors / "dolt-db" / "vecdb" / ".dolt" / "noms"
    dest = tmp_path / "clone"
    report = pd.clone(f"file://{noms}", dest)
    assert report["branch"] == "main"
    assert report["chunks"] > 0
    db = pd.open(dest)
    # Clone and source read alike through the reader.
    src = pd.open(vectors / "dolt-db" / "vecdb")
    # A clone checks out one branch; the others are remote-tracking (origin/feature).
    assert db.branches()["main"] == src.branches()["main"]
    assert list(db.table("items").scan()) == list(src.table("items").scan())


def test_bad_input_raises_one_line_and_writes_nothing(tmp_path):
    dest = tmp_path / "clone"
    with pytest.raises(ValueError, match="unknown remote scheme"):
        pd.clone("gs://bucket/db", dest)
    assert not dest.exists()
    with pytest.raises(Exception, match="not a Dolt file remote") as e:
        pd.clone(f"file://{tmp_path}", dest)
    assert "\n" not in str(e.value)
    assert not dest.exists()
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep").write_text("x")
    with pytest.raises(ValueError, match="not empty"):
        pd.clone(f"file://{tmp_path}", tmp_path / "full")


DOLT = os.environ.get("PROLLY_DOLT")


@pytest.mark.skipif(not DOLT, reason="set PROLLY_DOLT to a dolt binary to clone what dolt push wrote")
def test_clone_what_dolt_pushed_and_dolt_reads_the_clone(tmp_path):
    home = tmp_path / "home"
    (home / ".dolt").mkdir(parents=True)
    (home / ".dolt" / "config_global.json").write_text(
        '{"user.name":"Py Bot","user.email":"py@example.com","metrics.disabled":"true"}'
    )
    env = dict(os.environ, HOME=str(home), TZ="UTC", NO_COLOR="1")

    def dolt(cwd, *args):
        return subprocess.run([DOLT, *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout

    src = tmp_path / "src"
    src.mkdir()
    dolt(src, "init")
    rows = ",".join(f"({i}, 'n{i}', {i * 3})" for i in range(2000))
    dolt(src, "sql", "-q", f"create table t (id int primary key, n varchar(20), v int); insert into t values {rows}")
    dolt(src, "commit", "-Am", "rows")
    remote = tmp_path / "remote"
    dolt(src, "remote", "add", "origin", f"file://{remote}")
    dolt(src, "push", "origin", "main")
    dest = tmp_path / "clone"
    report = pd.clone(f"file://{remote}", dest)
    assert report["branch"] == "main"
    assert dolt(dest, "log", "--oneline") == dolt(src, "log", "--oneline")
    dolt(dest, "fsck")
    q = "select * from t order by id"
    assert dolt(dest, "sql", "-r", "csv", "-q", q) == dolt(src, "sql", "-r", "csv", "-q", q)
