"""prollystore.dolt.remote_add / push / fetch / pull on a database's Dolt remotes.

Always: a copy of the golden vectors' Dolt-made `vecdb` pushed to a new file:// remote, cloned
back, a commit made with the Writer and pushed, then fetched and pulled into the clone; the
tables read alike on both sides. A fetch with prune=True removes the tracking ref of a branch
the remote lost. With PROLLY_DOLT set, `dolt clone` of the remote shows the same head and
`dolt fsck` passes, and a commit `dolt push` adds is what our pull brings. Bad input raises one
line."""

import os
import shutil
import subprocess

import pytest

import prollystore.dolt as pd

from conftest import VECTOR_SETS


def test_push_fetch_pull(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(VECTOR_SETS[0] / "dolt-db" / "vecdb", src)
    url = f"file://{tmp_path / 'remote'}"
    assert pd.remote_add(src, "origin", url) == url
    r = pd.push(src, "origin", "main")
    assert r["pushed"] and r["chunks"] > 0
    assert pd.push(src)["pushed"] is False
    back = tmp_path / "back"
    pd.clone(url, back)
    assert pd.open(back).branches()["main"] == pd.open(src).branches()["main"]

    with pd.Writer(src) as w:
        w.insert("keyless_log", [("from python", 12)], columns=["msg", "n"])
        head = w.commit("py push", "Py Bot", "py@example.com")
    r = pd.push(src, "origin", "main")
    assert r["pushed"] and r["head"] == head
    f = pd.fetch(back)
    assert f["updated"] == ["main"] and f["chunks"] > 0
    p = pd.pull(back)
    assert p["moved"] and p["head"] == head
    assert pd.open(back).branches()["main"] == head
    assert sorted(pd.open(back).table("keyless_log").scan(), key=repr) == sorted(
        pd.open(src).table("keyless_log").scan(), key=repr
    )

    with pytest.raises(ValueError, match="unknown remote") as e:
        pd.push(src, "nosuch", "main")
    assert "\n" not in str(e.value)

    dolt = os.environ.get("PROLLY_DOLT")
    if dolt:
        home = tmp_path / "home"
        (home / ".dolt").mkdir(parents=True)
        (home / ".dolt" / "config_global.json").write_text(
            '{"user.name":"Py Bot","user.email":"py@example.com","metrics.disabled":"true"}'
        )
        env = dict(os.environ, HOME=str(home), TZ="UTC", NO_COLOR="1")
        theirs = tmp_path / "theirs"
        subprocess.run([dolt, "clone", url, str(theirs)], check=True, env=env, cwd=tmp_path)
        log = subprocess.run(
            [dolt, "log", "-n", "1", "--oneline"], check=True, env=env, cwd=theirs,
            capture_output=True, text=True,
        ).stdout
        assert log.split()[0] == head
        subprocess.run([dolt, "fsck"], check=True, env=env, cwd=theirs, capture_output=True)
        run = lambda *a: subprocess.run(
            [dolt, *a], check=True, env=env, cwd=theirs, capture_output=True
        )
        run("sql", "-q", "insert into keyless_log (msg, n) values ('from dolt', 13)")
        run("commit", "-am", "dolt push")
        run("push", "origin", "main")
        p = pd.pull(back)
        assert p["moved"]
        assert p["head"] == pd.open(theirs).branches()["main"]
        assert ("from dolt", 13) in [tuple(r) for r in pd.open(back).table("keyless_log").scan()]


def test_fetch_prune(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(VECTOR_SETS[0] / "dolt-db" / "vecdb", src)
    remote = tmp_path / "remote"
    url = f"file://{remote}"
    pd.remote_add(src, "origin", url)
    pd.push(src, "origin", "main")
    only_main = tmp_path / "only_main"
    shutil.copytree(remote, only_main)
    pd.create_branch(src, "short_lived")
    pd.push(src, "origin", "short_lived")
    back = tmp_path / "back"
    pd.clone(url, back)
    # The remote loses `short_lived` (its store as it was before that push).
    shutil.rmtree(remote)
    shutil.copytree(only_main, remote)
    assert pd.fetch(back)["pruned"] == []
    assert pd.fetch(back, prune=True)["pruned"] == ["short_lived"]
    assert pd.fetch(back, prune=True)["pruned"] == []
