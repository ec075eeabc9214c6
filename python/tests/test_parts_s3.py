"""A Dolt database in an S3-compatible bucket (a MinIO server started here), read in place
through ``s3://`` and through its parts by a real Dask ``LocalCluster`` of two worker
processes: the same rows as the single-process read and as the local reader's read of the
same files. The database is the remote Dolt pushed (``crates/dolt-remote/tests/data/
bucket-remote``, made by ``make_bucket_remote.sh``: an int key over 10,000 rows, a
``utf8mb4_0900_ai_ci`` varchar key, a varbinary key of non-UTF-8 bytes, three branches),
uploaded as Dolt's ``s3://`` remotes lay it out. Credentials reach this process and the
workers through the standard AWS environment variables, as they would in production.

Without a MinIO binary (``PROLLY_MINIO``, else ``~/.cache/prollystore/minio-bin/minio``) the
tests skip with a loud message; under CI they fail instead (``.ci/run`` builds MinIO)."""

import os
import pathlib
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request

import pyarrow as pa
import pytest

import prollystore
import prollystore.dolt as pd
from conftest import REPO

RECORDED = REPO / "crates" / "dolt-remote" / "tests" / "data" / "bucket-remote"
BUCKET = "prolly"
TABLES = ["ints", "names", "bins"]
BRANCHES = ["main", "feature", "other"]


def _minio_binary():
    env = os.environ.get("PROLLY_MINIO")
    if env:
        return pathlib.Path(env) if pathlib.Path(env).exists() else None
    p = pathlib.Path.home() / ".cache" / "prollystore" / "minio-bin" / "minio"
    return p if p.exists() else None


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Minio:
    def __init__(self, binary):
        self.data = pathlib.Path(tempfile.mkdtemp(prefix="prolly-minio-"))
        (self.data / BUCKET).mkdir()  # a top-level directory of the drive is a bucket
        self.port = _free_port()
        self.user = "u" + secrets.token_hex(6)
        self.password = "p" + secrets.token_hex(12)
        env = dict(os.environ, MINIO_ROOT_USER=self.user, MINIO_ROOT_PASSWORD=self.password,
                   MINIO_BROWSER="off", MINIO_UPDATE="off")
        self.proc = subprocess.Popen(
            [str(binary), "server", str(self.data), "--address", f"127.0.0.1:{self.port}",
             "--console-address", f"127.0.0.1:{_free_port()}", "--quiet"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/minio/health/ready", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.1)
        self.close()
        raise RuntimeError(f"MinIO did not become ready on port {self.port}")

    def url(self, prefix):
        return f"s3://{BUCKET}/{prefix}?endpoint=http://127.0.0.1:{self.port}&region=us-east-1&path-style=true"

    def upload(self, directory, prefix):
        from pyarrow import fs

        s3 = fs.S3FileSystem(access_key=self.user, secret_key=self.password, region="us-east-1",
                             endpoint_override=f"127.0.0.1:{self.port}", scheme="http")
        for f in sorted(pathlib.Path(directory).iterdir()):
            if f.is_file():
                with s3.open_output_stream(f"{BUCKET}/{prefix}/{f.name}") as out:
                    out.write(f.read_bytes())

    def close(self):
        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.data, ignore_errors=True)


@pytest.fixture(scope="module")
def minio():
    binary = _minio_binary()
    if binary is None:
        if os.environ.get("CI", "") not in ("", "0", "false"):
            pytest.fail("CI is set but there is no MinIO binary: set PROLLY_MINIO (see .ci/run)")
        print("\n\n*** SKIPPING the s3:// parts tests: no MinIO binary (set PROLLY_MINIO, or see .ci/run) ***\n")
        pytest.skip("no MinIO binary (set PROLLY_MINIO)")
    m = _Minio(binary)
    # The standard AWS variables: read by this process and inherited by the Dask workers.
    saved = {k: os.environ.get(k) for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
    os.environ["AWS_ACCESS_KEY_ID"] = m.user
    os.environ["AWS_SECRET_ACCESS_KEY"] = m.password
    try:
        m.upload(RECORDED, "dbs/recorded")
        yield m
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        m.close()


def test_a_bucket_reads_as_the_same_files_on_disk(minio):
    url = minio.url("dbs/recorded")
    with pd.open_remote(url) as db, pd.open_remote(RECORDED.as_uri()) as disk:
        assert pd.default_branch(db) == "main"
        for at in BRANCHES:
            for name in TABLES:
                got = db.table(name, at=at).to_arrow()
                assert got.num_rows > 0
                assert got.equals(disk.table(name, at=at).to_arrow()), (at, name)


def test_dask_local_cluster_reads_a_bucket_through_parts(minio):
    dd = pytest.importorskip("dask.dataframe")
    distributed = pytest.importorskip("distributed")
    from prollystore.dask import read_dolt

    url = minio.url("dbs/recorded")
    with pd.open_remote(url) as db:
        want = {(at, name): db.table(name, at=at).to_arrow() for at in ["main", "feature"] for name in TABLES}
        parts, _ = pd.split(url, "ints", 4, at="main")
    assert {p.database for p in parts} == {url}
    assert all(minio.password not in p.to_json() for p in parts)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        pids = set(client.run(os.getpid).values())
        assert len(pids) == 2 and os.getpid() not in pids
        for (at, name), whole in want.items():
            df = read_dolt(url, name, npartitions=4, at=at)
            assert isinstance(df, dd.DataFrame) and df.npartitions == 4
            got = pa.Table.from_pandas(df.compute().reset_index(drop=True), preserve_index=False)
            assert got.num_rows == whole.num_rows, (at, name)
            assert got.to_pylist() == whole.to_pylist(), (at, name)
            assert got.schema.types == whole.schema.types, (at, name)
        # Without `at`: the branch a clone would check out.
        ids = read_dolt(url, "ints", npartitions=3, columns=["id"]).compute()["id"].tolist()
        assert ids == want[("main", "ints")].column("id").to_pylist()


def test_bad_buckets_and_parts_raise_one_clear_error(minio):
    with pytest.raises(prollystore.Error, match="no Dolt database there"):
        pd.open_remote(minio.url("dbs/nothing"))
    with pytest.raises(ValueError, match="must not hold credentials"):
        pd.open_remote(f"s3://key:secret@{BUCKET}/dbs/recorded")
    url = minio.url("dbs/recorded")
    with pd.open_remote(url) as db:
        part = db.table("ints", at="main").split(2)[1]
    # The same part pointed at another Dolt database in the bucket.
    minio.upload(REPO / "crates" / "dolt-remote" / "tests" / "data" / "file-remote", "dbs/other")
    other = pd.Part.from_json(part.to_json().replace(url, minio.url("dbs/other")))
    with pytest.raises(prollystore.BadInputError, match="another database"):
        other.read()
