"""prollystore.dolt.open_remote(url): a Dolt database read on a remote in place, without cloning.

Always: the golden vectors' Dolt-made `vecdb` store taken as a file:// remote (a manifest and
table files, which is what a file:// remote holds) reads as the source does, nothing written.
With PROLLY_DOLT set: a database made by Dolt served by `dolt sql-server --remotesapi-port`
reads, point get, scan, Arrow and diff, as its own directory does."""

import os
import socket
import subprocess
import time

import pytest

import prollystore.dolt as pd

from conftest import VECTOR_SETS


def _files(d):
    return sorted((p, p.read_bytes()) for p in d.rglob("*") if p.is_file() and p.name != "LOCK")


def test_open_a_file_remote_in_place():
    vectors = VECTOR_SETS[0]
    noms = vectors / "dolt-db" / "vecdb" / ".dolt" / "noms"
    before = _files(noms)
    db = pd.open_remote(f"file://{noms}")
    src = pd.open(vectors / "dolt-db" / "vecdb")
    assert pd.default_branch(db) == "main"
    assert db.branches() == src.branches()
    for branch in db.branches():
        t, s = db.table("items", at=branch), src.table("items", at=branch)
        assert list(t.scan()) == list(s.scan())
        assert t.to_arrow() == s.to_arrow()
    db.close()
    assert _files(noms) == before


def test_bad_urls_raise_one_line():
    with pytest.raises(ValueError, match="unknown remote scheme"):
        pd.open_remote("gs://bucket/db")
    with pytest.raises(Exception, match="cannot connect") as e:
        pd.open_remote("http://127.0.0.1:1/db")
    assert "\n" not in str(e.value)


DOLT = os.environ.get("PROLLY_DOLT")


def _port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def dolt_env(tmp_path):
    """The environment to run dolt in: a throwaway HOME (under `tmp_path`) with a user set."""
    home = tmp_path / "home"
    (home / ".dolt").mkdir(parents=True)
    (home / ".dolt" / "config_global.json").write_text(
        '{"user.name":"Py Bot","user.email":"py@example.com","metrics.disabled":"true"}'
    )
    return dict(os.environ, HOME=str(home), TZ="UTC", NO_COLOR="1")


def _serve(served, env):
    """`dolt sql-server` serving the databases under `served` as remotes, once it listens: the
    process and its remotesapi port."""
    port = _port()
    server = subprocess.Popen(
        [DOLT, "sql-server", "--host", "127.0.0.1", "--port", str(_port()), "--remotesapi-port", str(port)],
        cwd=served, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server, port
        except OSError:
            if time.time() > deadline:
                server.kill()
                raise AssertionError("dolt sql-server did not start")
            time.sleep(0.1)


@pytest.mark.skipif(not DOLT, reason="set PROLLY_DOLT to a dolt binary to read a sql-server remote")
def test_read_a_sql_server_remote_in_place(tmp_path):
    env = dolt_env(tmp_path)
    src = tmp_path / "served" / "src"
    src.mkdir(parents=True)

    def dolt(*args, cwd=src):
        return subprocess.run([DOLT, *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout

    dolt("init")
    dolt("sql", "-q", "create table t (id int primary key, name varchar(40), v double)")
    dolt("sql", "-q", "insert into t values " + ",".join(f"({i}, 'n{i}', {i / 4})" for i in range(5000)))
    dolt("commit", "-Am", "rows")
    dolt("branch", "old")
    dolt("sql", "-q", "update t set v = -v where id % 100 = 0")
    dolt("commit", "-am", "negate")
    server, port = _serve(src.parent, env)
    try:
        db = pd.open_remote(f"http://127.0.0.1:{port}/src")
        local = pd.open(src)
        assert db.branches() == local.branches()
        for branch in ["main", "old"]:
            t, s = db.table("t", at=branch), local.table("t", at=branch)
            assert t.get(200) == s.get(200)
            assert t.to_arrow() == s.to_arrow()
        assert db.diff("old", "main", "t").changes() == local.diff("old", "main", "t").changes()
    finally:
        server.kill()
        server.wait()


@pytest.mark.skipif(not DOLT, reason="set PROLLY_DOLT to a dolt binary to serve a remote with users")
def test_credentials_for_a_password_protected_server(tmp_path, monkeypatch):
    env = dolt_env(tmp_path)
    served = tmp_path / "served"
    src = served / "src"
    src.mkdir(parents=True)

    def dolt(*args, cwd=src):
        return subprocess.run([DOLT, *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout

    dolt("init")
    dolt("sql", "-q", "create table t (id int primary key, v varchar(10)); insert into t values (1, 'a')")
    dolt("commit", "-Am", "rows")
    dolt("sql", "-q", "create user alice@'%' identified by 'secret'; grant all on *.* to alice@'%' "
         "with grant option; alter user root@localhost identified by 'rootpw'", cwd=served)
    server, port = _serve(served, env)
    try:
        url = f"http://127.0.0.1:{port}/src"
        pd.clone(url, tmp_path / "c1", user="alice", password="secret")
        assert list(pd.open(tmp_path / "c1").table("t").scan()) == [(1, "a")]
        monkeypatch.setenv("DOLT_REMOTE_PASSWORD", "secret")
        assert pd.open_remote(url, user="alice").table("t", at="main").get(1) == (1, "a")
        for kwargs in ({"user": "alice", "password": "wrong"}, {}):
            with pytest.raises(PermissionError, match="refused the credentials") as e:
                pd.clone(url, tmp_path / "refused", **kwargs)
            assert "\n" not in str(e.value)
            assert not (tmp_path / "refused").exists()
        with pytest.raises(ValueError, match="without a user"):
            pd.clone(url, tmp_path / "c2", password="secret")
    finally:
        server.kill()
        server.wait()
