"""Tables cut into parts (`Table.split`) and read on their own: every row once, in key order,
parts within one row of each other; parts pickle and travel as JSON; a part keeps reading the
table it was cut from after its branch moved; bad descriptions raise `BadInputError`. Then the
engines: a real Dask `LocalCluster` of two worker processes reads a Dolt database through its
parts and gets what the single-process read gets; Ray Data when Ray is installed; the
`mapInArrow` generator Spark would run."""

import pickle
import shutil

import pyarrow as pa
import pytest

import prollystore
import prollystore.dolt as pd


def _concat(parts):
    tables = [p.to_arrow() for p in parts]
    return pa.concat_tables(tables).combine_chunks()


def test_parts_hold_every_row_once_in_order(vecdb):
    with pd.open(vecdb) as db:
        for at in ["main", "feature", "WORKING"]:
            for name in db.tables(at):
                t = db.table(name, at=at)
                whole = t.to_arrow().combine_chunks()
                for n in [1, 2, 3, 7, 64]:
                    parts = t.split(n)
                    assert [p.index for p in parts] == list(range(len(parts)))
                    assert parts[0].start == 0
                    assert all(a.end == b.start for a, b in zip(parts, parts[1:]))
                    sizes = [p.rows for p in parts]
                    assert max(sizes) - min(sizes) <= 1, sizes
                    assert _concat(parts).equals(whole), (at, name, n)
                    assert {p.table_hash for p in parts} == {t.hash}


def test_parts_pickle_and_travel_as_json(vecdb):
    with pd.open(vecdb) as db:
        parts = db.table("items", at="main").split(3, ["id", "name"])
    for p in parts:
        q = pickle.loads(pickle.dumps(p))
        assert q == p and hash(q) == hash(p)
        assert pd.Part.from_json(p.to_json()) == p
        assert q.columns == ["id", "name"] and q.at == "main" and q.commit
        assert q.database.startswith("file://")
    # A part reads with no open database in this process.
    r = parts[1].read(batch_rows=100)
    assert isinstance(r, pa.RecordBatchReader)
    assert r.schema.names == ["id", "name"]
    assert sum(b.num_rows for b in r) == parts[1].rows
    assert len(list(pd.part_batches(parts[2].to_json(), batch_rows=50))) >= 1


def test_columns_and_ranges(vecdb):
    with pd.open(vecdb) as db:
        t = db.table("items", at="main")
        whole = t.to_arrow()
        got = _concat(t.split(4, ["NAME", "id"]))
        assert got.schema.names == ["name", "id"]
        assert got.column("id").to_pylist() == whole.column("id").to_pylist()
        rng = pa.table(t.batches(100, 2000)).combine_chunks()
        parts = t.split(5, start=100, end=2000)
        assert _concat(parts).equals(rng)
        with pytest.raises(prollystore.NotFoundError, match='"nope"'):
            t.split(2, ["id", "nope"])
        with pytest.raises(prollystore.BadInputError, match="0 parts"):
            t.split(0)
        # More parts than rows: one row each; an empty range: one empty part with the schema.
        small = t.split(10, start=5, end=8)
        assert [p.rows for p in small] == [1, 1, 1]
        (empty,) = t.split(4, start=8, end=8)
        assert empty.rows == 0 and empty.to_arrow().num_rows == 0
        assert empty.to_arrow().schema.names == t.columns


def test_malformed_parts_raise_bad_input(vecdb):
    with pd.open(vecdb) as db:
        text = db.table("pairs", at="main").split(2)[0].to_json()
    for bad in ["", "{", "[]", "null", text[:-1], text.replace('"start":0', '"start":-1'),
                text.replace('"format":"prollystore.dolt.part/1"', '"format":"x"')]:
        with pytest.raises(prollystore.BadInputError, match="part"):
            pd.Part.from_json(bad)


def test_a_part_reads_what_it_was_cut_from(vecdb, tmp_path):
    db_dir = tmp_path / "db"
    shutil.copytree(vecdb, db_dir)
    with pd.open(db_dir) as db:
        t = db.table("items", at="main")
        before = t.to_arrow().combine_chunks()
        parts = [p.to_json() for p in t.split(3)]
        first = t.scan(limit=1).__next__()[0]
    with pd.Writer(db_dir) as w:
        w.delete("items", [first])
        w.commit("moved", "T", "t@example.com")
    parts = [pd.Part.from_json(p) for p in parts]
    assert _concat(parts).equals(before)
    with pd.open(db_dir) as db:
        assert db.table("items", at="main").count() == before.num_rows - 1
        moved = db.table("items", at="main").split(2)
    # A part of the moved table on the original database, which never held it.
    other = pd.Part.from_json(moved[0].to_json().replace(moved[0].database, vecdb.as_uri() + "/"))
    with pytest.raises(prollystore.BadInputError, match="another database"):
        other.read()


def test_dask_local_cluster_reads_through_parts(vecdb):
    dd = pytest.importorskip("dask.dataframe")
    distributed = pytest.importorskip("distributed")
    from prollystore.dask import read_dolt

    with pd.open(vecdb) as db:
        want = {name: db.table(name, at="main").to_arrow() for name in ["items", "pairs", "keyless_log"]}
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster):
        for name, whole in want.items():
            df = read_dolt(vecdb, name, npartitions=4, at="main")
            assert isinstance(df, dd.DataFrame) and df.npartitions == 4
            got = df.compute().reset_index(drop=True)
            # The same Arrow table back from the partitions (ArrowDtype columns).
            back = pa.Table.from_pandas(got, preserve_index=False)
            assert back.to_pylist() == whole.to_pylist(), name
            assert back.schema.types == whole.schema.types, name
        proj = read_dolt(vecdb, "items", npartitions=3, columns=["id"], at="main").compute()
        assert sorted(proj["id"].tolist()) == sorted(want["items"].column("id").to_pylist())


def test_ray_datasource_reads_through_parts(vecdb):
    ray = pytest.importorskip("ray")
    from prollystore.ray import read_dolt

    with pd.open(vecdb) as db:
        whole = db.table("items", at="main").to_arrow()
    ray.init(num_cpus=2, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    try:
        ds = read_dolt(vecdb, "items", at="main", columns=["id", "name"], parallelism=4)
        got = pa.concat_tables(pa.Table.from_pandas(df, preserve_index=False)
                               for df in [ds.to_pandas()])
        assert sorted(got.column("id").to_pylist()) == sorted(whole.column("id").to_pylist())
    finally:
        ray.shutdown()


def test_map_in_arrow_generator(vecdb):
    """What Spark's `mapInArrow` calls: batches of part JSON in, the parts' batches out."""
    with pd.open(vecdb) as db:
        t = db.table("pairs", at="main")
        whole = t.to_arrow().combine_chunks()
        parts = t.split(4)
    jobs = [pa.record_batch([pa.array([p.to_json() for p in parts[:2]])], names=["part"]),
            pa.record_batch([pa.array([p.to_json() for p in parts[2:]])], names=["part"])]
    got = pa.Table.from_batches(list(pd.parts_in_arrow(iter(jobs)))).combine_chunks()
    assert got.equals(whole)


@pytest.mark.skipif(not __import__("os").environ.get("PROLLY_DOLT"),
                    reason="set PROLLY_DOLT to a dolt binary to serve a remote")
def test_parts_of_a_remote_read_in_place(tmp_path):
    """A database read in place from `dolt sql-server --remotesapi-port`: its parts name the
    remote's URL, and each opens the remote on its own."""
    import subprocess

    from test_dolt_open_remote import DOLT, _serve, dolt_env

    env = dolt_env(tmp_path)
    src = tmp_path / "served" / "src"
    src.mkdir(parents=True)

    def dolt(*args):
        subprocess.run([DOLT, *args], cwd=src, env=env, check=True, capture_output=True)

    dolt("init")
    dolt("sql", "-q", "create table t (id int primary key, name varchar(40), v double)")
    dolt("sql", "-q", "insert into t values " + ",".join(f"({i}, 'n{i}', {i / 4})" for i in range(5000)))
    dolt("commit", "-Am", "rows")
    server, port = _serve(src.parent, env)
    try:
        url = f"http://127.0.0.1:{port}/src"
        parts = pd.open_remote(url).table("t", at="main").split(3, ["id", "v"])
        assert {p.database for p in parts} == {url}
        parts = [pickle.loads(pickle.dumps(p)) for p in parts]
        want = pd.open(src).table("t", at="main").to_arrow().select(["id", "v"]).combine_chunks()
        assert _concat(parts).equals(want)
    finally:
        server.kill()
        server.wait()


def test_diff_parts_give_the_whole_diff_in_order(vecdb):
    """A diff cut into parts: read on their own, one after the other, they give the whole
    diff's rows and columns; they pickle and travel as JSON; bad JSON raises."""
    with pd.open(vecdb) as db:
        for name in ["items", "pairs", "docs"]:
            whole = db.diff("main", "feature", name).to_arrow().combine_chunks()
            for n in [1, 2, 3, 8]:
                parts = db.split_diff("main", "feature", name, n)
                assert 1 <= len(parts) <= n
                assert [p.index for p in parts] == list(range(len(parts)))
                assert all(a.last_key == b.after_key for a, b in zip(parts, parts[1:]))
                assert parts[0].after_key is None and parts[-1].last_key is None
                parts = [pickle.loads(pickle.dumps(p)) for p in parts]
                assert _concat(parts).equals(whole), (name, n)
        (same,) = db.split_diff("main", "main", "items", 4)
        assert same.rows_compared == 0 and same.to_arrow().num_rows == 0
        with pytest.raises(prollystore.BadInputError, match="0 parts"):
            db.split_diff("main", "feature", "items", 0)
    parts = pd.split_diff(vecdb, "main", "feature", "items", 2)
    p = parts[0]
    assert (p.from_, p.to, p.table) == ("main", "feature", "items")
    assert p.database.startswith("file://") and p.from_table_hash and p.to_table_hash
    assert pd.DiffPart.from_json(p.to_json()) == p
    assert sum(b.num_rows for b in pd.part_batches(p.to_json(), batch_rows=10)) == p.to_arrow().num_rows
    for bad in ["", "{", "null", p.to_json().replace('"index":0', '"index":9'),
                db_part_json(vecdb)]:
        with pytest.raises(prollystore.BadInputError, match="diff part"):
            pd.DiffPart.from_json(bad)


def db_part_json(vecdb):
    with pd.open(vecdb) as db:
        return db.table("items", at="main").split(2)[0].to_json()


def test_dask_local_cluster_reads_a_diff_through_parts(vecdb):
    dd = pytest.importorskip("dask.dataframe")
    distributed = pytest.importorskip("distributed")
    from prollystore.dask import read_dolt_diff

    with pd.open(vecdb) as db:
        want = {name: db.diff("main", "feature", name).to_arrow() for name in ["items", "pairs"]}
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster):
        for name, whole in want.items():
            df = read_dolt_diff(vecdb, "main", "feature", name, npartitions=3)
            assert isinstance(df, dd.DataFrame) and 1 <= df.npartitions <= 3
            got = df.compute().reset_index(drop=True)
            back = pa.Table.from_pandas(got, preserve_index=False)
            assert back.to_pylist() == whole.to_pylist(), name
            assert back.schema.types == whole.schema.types, name
