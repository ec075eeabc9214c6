//! Dolt databases in an S3-compatible bucket, read in place through `s3://` ([`open_remote`]),
//! against a MinIO server started for the test (skipped with a loud message when there is no
//! MinIO binary, a failure under CI; see `crates/remote/tests/support`):
//!
//! * the recorded remote `tests/data/bucket-remote` (what `dolt push` wrote: an int key over
//!   10,000 rows, a `utf8mb4_0900_ai_ci` varchar key, a varbinary key of non-UTF-8 bytes,
//!   three branches; `make_bucket_remote.sh`) uploaded to the bucket: branch heads and row
//!   counts equal what Dolt reported, and every table's rows on every branch equal the local
//!   reader's rows of the same directory (`file://`); parts cut from the bucket's database
//!   name its `s3://` URL and read back every row once;
//! * with `PROLLY_DOLT=/path/to/dolt`, the same database pushed by Dolt itself to
//!   `s3://…?endpoint=…&path-style=true` (Dolt's own S3 remote writing to MinIO): every
//!   table's rows on every branch equal the local database's;
//! * bad buckets: no manifest, a manifest naming a file the bucket lacks, a chunk missing, a
//!   damaged chunk, a part from another database: each one error naming what, never a panic.

use std::path::{Path, PathBuf};

use prollystore_dolt::csv_export::export_csv;
use prollystore_dolt::parts::split;
use prollystore_dolt::{Database, State};
use prollystore_dolt_remote::{open_part_database, open_remote, FetchStats, OpenOptions};

#[path = "../../remote/tests/support/mod.rs"]
#[allow(unused_imports)]
mod support;
use support::{Minio, BUCKET};

mod common;

const TABLES: [&str; 3] = ["ints", "names", "bins"];
const BRANCHES: [&str; 3] = ["main", "feature", "other"];

fn recorded() -> PathBuf {
    common::data().join("bucket-remote")
}

/// The `s3://` URL of `prefix` in the test bucket, with the endpoint in Dolt's query form.
fn url(m: &Minio, prefix: &str) -> String {
    format!(
        "s3://{BUCKET}/{prefix}?endpoint=http://127.0.0.1:{}&region=us-east-1&path-style=true",
        m.port
    )
}

/// Options carrying the server's credentials (the URL never holds them).
fn options(m: &Minio) -> OpenOptions {
    OpenOptions {
        store_options: vec![
            ("aws_access_key_id".into(), m.user.clone()),
            ("aws_secret_access_key".into(), m.password.clone()),
        ],
        ..OpenOptions::default()
    }
}

/// The database at `prefix`, with what reading it fetches counted.
fn open_counted(m: &Minio, prefix: &str) -> (Database, std::sync::Arc<FetchStats>) {
    let stats = std::sync::Arc::new(FetchStats::default());
    let options = OpenOptions {
        stats: Some(stats.clone()),
        ..options(m)
    };
    (open_remote(&url(m, prefix), &options).unwrap(), stats)
}

/// Uploads the files of `dir` as objects under `prefix`.
fn upload(m: &Minio, dir: &Path, prefix: &str) {
    let remote = prollystore_remote::Remote::open_with(
        &format!("s3://{BUCKET}/{prefix}"),
        &m.options(m.port),
    )
    .unwrap();
    let (store, root) = remote.object_store();
    for f in std::fs::read_dir(dir).unwrap() {
        let f = f.unwrap();
        if !f.file_type().unwrap().is_file() {
            continue;
        }
        let bytes = std::fs::read(f.path()).unwrap();
        let path = root.clone().join(f.file_name().to_str().unwrap());
        remote
            .run(prollystore_remote::put_bytes(
                store.as_ref(),
                &path,
                bytes.into(),
            ))
            .unwrap();
    }
}

fn csv_of(db: &Database, branch: &str, table: &str) -> String {
    let t = db.table_at(branch, State::Committed, table).unwrap();
    let mut out = Vec::new();
    export_csv(db, &t, &mut out).unwrap();
    String::from_utf8_lossy(&out).into_owned()
}

fn rows(db: &Database, branch: &str, table: &str) -> u64 {
    let t = db.table_at(branch, State::Committed, table).unwrap();
    let reader = t.reader(db).unwrap();
    reader
        .scan(&prollystore_dolt::KeyRange::all())
        .unwrap()
        .count() as u64
}

/// Every table on every branch of `db` reads as in `local`.
fn assert_same_rows(db: &Database, local: &Database) {
    for branch in BRANCHES {
        assert_eq!(
            db.branch_head(branch).unwrap(),
            local.branch_head(branch).unwrap()
        );
        for table in TABLES {
            assert_eq!(
                csv_of(db, branch, table),
                csv_of(local, branch, table),
                "{branch} {table}"
            );
        }
    }
}

#[test]
fn recorded_remote_in_a_bucket_reads_as_dolt_wrote_it() {
    let Some(m) = Minio::start() else { return };
    upload(&m, &recorded(), "dbs/recorded");
    let (db, stats) = open_counted(&m, "dbs/recorded");
    let expected = std::fs::read_to_string(common::data().join("bucket-remote.expected")).unwrap();
    for line in expected.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        match fields[..] {
            [branch, head] => assert_eq!(db.branch_head(branch).unwrap().to_string(), head),
            [branch, table, count] => {
                assert_eq!(rows(&db, branch, table).to_string(), count, "{line}")
            }
            _ => panic!("bad expected line {line:?}"),
        }
    }
    let fetched = stats.counts();
    assert!(fetched.chunks > 0 && fetched.requests > 0, "{fetched:?}");
    // An export reads its leaves in batches: far fewer requests than chunks.
    let (fresh, stats) = open_counted(&m, "dbs/recorded");
    assert_eq!(csv_of(&fresh, "main", "ints").lines().count(), 10_002);
    let fetched = stats.counts();
    assert!(fetched.requests * 4 < fetched.chunks, "{fetched:?}");
    eprintln!("export of ints (10,001 rows) from the bucket: {fetched:?}");
    // The same directory read from disk by the local reader.
    let file = open_remote(
        &format!("file://{}", recorded().display()),
        &OpenOptions::default(),
    )
    .unwrap();
    assert_same_rows(&db, &file);

    // Parts cut from the bucket's database name its URL; each opens the bucket on its own.
    let whole = rows(&db, "main", "ints");
    let parts = split(&db, "main", "ints", 4, &Default::default()).unwrap();
    assert_eq!(parts.len(), 4);
    let mut read = 0;
    for p in &parts {
        assert_eq!(p.database, url(&m, "dbs/recorded"));
        let json = p.to_json();
        assert!(!json.contains(&m.password), "{json}");
        read += read_part(p, &options(&m));
    }
    assert_eq!(read, whole);
}

#[test]
fn bad_buckets_are_one_clear_error() {
    let Some(m) = Minio::start() else { return };
    let o = options(&m);
    let err = |u: &str| open_remote(u, &o).unwrap_err().to_string();

    // Nothing there.
    let e = err(&url(&m, "dbs/none"));
    eprintln!("error: {e}");
    assert!(
        e.contains("no Dolt database") && e.contains("manifest"),
        "{e}"
    );
    // Credentials in the URL are refused before anything is sent.
    let e = err(&format!("s3://key:secret@{BUCKET}/dbs/none"));
    eprintln!("error: {e}");
    assert!(e.contains("must not hold credentials"), "{e}");
    // Wrong credentials.
    let bad = OpenOptions {
        store_options: vec![
            ("aws_access_key_id".into(), "nobody".into()),
            ("aws_secret_access_key".into(), "wrong-secret".into()),
        ],
        ..OpenOptions::default()
    };
    upload(&m, &recorded(), "dbs/ok");
    let e = open_remote(&url(&m, "dbs/ok"), &bad)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("s3://"), "{e}");

    let tmp = tempfile::tempdir().unwrap();
    let manifest = std::fs::read_to_string(recorded().join("manifest")).unwrap();
    let archive = std::fs::read_dir(recorded())
        .unwrap()
        .map(|f| f.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "darc"))
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .unwrap();
    let archive_name = archive.file_stem().unwrap().to_str().unwrap().to_string();

    // The manifest lists a file the bucket lacks.
    let dir = tmp.path().join("lacks");
    copy_dir(&recorded(), &dir);
    std::fs::remove_file(dir.join(archive.file_name().unwrap())).unwrap();
    upload(&m, &dir, "dbs/lacks");
    let e = err(&url(&m, "dbs/lacks"));
    eprintln!("error: {e}");
    assert!(e.contains(&archive_name) && e.contains("neither"), "{e}");

    // The manifest does not list the file holding the rows: a missing chunk when read.
    let dir = tmp.path().join("missing");
    copy_dir(&recorded(), &dir);
    let fields: Vec<&str> = manifest.split(':').collect();
    let mut kept: Vec<String> = fields[..5].iter().map(|s| s.to_string()).collect();
    for pair in fields[5..].chunks(2) {
        if pair[0] != archive_name {
            kept.extend(pair.iter().map(|s| s.to_string()));
        }
    }
    std::fs::write(dir.join("manifest"), kept.join(":")).unwrap();
    upload(&m, &dir, "dbs/missing");
    let e = match open_remote(&url(&m, "dbs/missing"), &o) {
        Err(e) => e.to_string(),
        Ok(db) => read_all(&db).unwrap_err(),
    };
    eprintln!("error: {e}");
    assert!(e.contains("chunk"), "{e}");

    // A damaged chunk: the bytes no longer decode or hash to its address.
    let dir = tmp.path().join("damaged");
    copy_dir(&recorded(), &dir);
    let path = dir.join(archive.file_name().unwrap());
    let mut bytes = std::fs::read(&path).unwrap();
    for i in (1000..bytes.len() / 2).step_by(997) {
        bytes[i] ^= 0x5a;
    }
    std::fs::write(&path, bytes).unwrap();
    upload(&m, &dir, "dbs/damaged");
    let e = match open_remote(&url(&m, "dbs/damaged"), &o) {
        Err(e) => e.to_string(),
        Ok(db) => read_all(&db).unwrap_err(),
    };
    eprintln!("error: {e}");
    assert!(e.contains(&archive_name), "{e}");

    // A part from another database: the bucket does not hold its table chunk.
    let db = open_remote(&url(&m, "dbs/ok"), &o).unwrap();
    let mut part = split(&db, "main", "ints", 2, &Default::default())
        .unwrap()
        .remove(1);
    upload(&m, &common::data().join("file-remote"), "dbs/other");
    part.database = url(&m, "dbs/other");
    let other = open_part_database(&part, &o).unwrap();
    let e = part.table(&other).unwrap_err().to_string();
    assert!(
        e.contains("does not hold table chunk") && e.contains("dbs/other"),
        "{e}"
    );
}

/// Every row of every table on every branch, or the first error.
fn read_all(db: &Database) -> Result<(), String> {
    for branch in BRANCHES {
        let t = |table| db.table_at(branch, State::Committed, table);
        for table in TABLES {
            let t = t(table).map_err(|e| e.to_string())?;
            let mut out = Vec::new();
            export_csv(db, &t, &mut out).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for f in std::fs::read_dir(from).unwrap() {
        let f = f.unwrap();
        std::fs::copy(f.path(), to.join(f.file_name())).unwrap();
    }
}

/// What Dolt itself pushes to an `s3://` remote on MinIO reads as the local database.
#[test]
fn dolt_pushed_to_s3_reads_as_the_local_database() {
    let Some(bin) = common::dolt_bin() else {
        return;
    };
    let Some(m) = Minio::start() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    let status = std::process::Command::new("bash")
        .arg(common::data().join("make_bucket_remote.sh"))
        .env("DOLT", &bin)
        .env("OUT", tmp.path())
        .env("WORK", &work)
        .env("S3_URL", url(&m, "dbs/pushed"))
        .env("AWS_ACCESS_KEY_ID", &m.user)
        .env("AWS_SECRET_ACCESS_KEY", &m.password)
        .status()
        .unwrap();
    assert!(status.success());
    let local = Database::open(work.join("db")).unwrap();
    let db = open_remote(&url(&m, "dbs/pushed"), &options(&m)).unwrap();
    assert_same_rows(&db, &local);
    // And the file:// remote the same push wrote, copied into the bucket.
    upload(&m, &tmp.path().join("bucket-remote"), "dbs/copied");
    let copied = open_remote(&url(&m, "dbs/copied"), &options(&m)).unwrap();
    assert_same_rows(&copied, &local);
}

/// Parts cut from a `file://` remote read in place name its directory, and a worker opens
/// them as the remote they are (a manifest, no `.dolt`), not as a local database.
#[test]
fn parts_of_a_file_remote_open_as_that_remote() {
    let db = open_remote(
        &format!("file://{}", recorded().display()),
        &OpenOptions::default(),
    )
    .unwrap();
    let parts = split(&db, "main", "ints", 3, &Default::default()).unwrap();
    let read: u64 = parts
        .iter()
        .map(|p| read_part(p, &OpenOptions::default()))
        .sum();
    assert_eq!(read, rows(&db, "main", "ints"));
}

/// Opens `part`'s database as a worker would and counts the part's rows (checked against the
/// part's own count).
fn read_part(part: &prollystore_dolt::parts::Part, options: &OpenOptions) -> u64 {
    let worker = open_part_database(part, options).unwrap();
    let t = part.table(&worker).unwrap();
    let n = t
        .reader(&worker)
        .unwrap()
        .scan_ordinals(part.ordinals())
        .unwrap()
        .count() as u64;
    assert_eq!(n, part.rows());
    n
}
