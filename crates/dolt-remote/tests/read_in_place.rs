//! Reading a remote in place ([`open_remote`]), checked against what Dolt itself reports:
//!
//! * without a dolt binary, the `file://` remote recorded from `dolt push`
//!   (`tests/data/file-remote`): branch heads and rows equal what Dolt printed;
//! * with `PROLLY_DOLT=/path/to/dolt`, a database made by Dolt (several column types, a
//!   secondary index, three branches, 30,000 rows: several tree levels) served by `dolt
//!   sql-server --remotesapi-port`: every branch's rows equal `dolt sql -r csv`, a diff equals
//!   `dolt_diff(...)`'s, a point get equals the local reader's and fetches a small fraction of
//!   what a full scan fetches; bad URLs fail with one line.

use std::path::Path;

use prollystore_dolt::csv_export::export_csv;
use prollystore_dolt::table_diff::TableDiff;
use prollystore_dolt::{Database, SqlValue, State};
use prollystore_dolt_remote::{default_branch, open_remote, FetchStats, OpenOptions};

mod common;
use common::{data, dolt, dolt_bin, home, remote_copy, Server};

fn csv_of(db: &Database, branch: &str, table: &str) -> String {
    let t = db.table_at(branch, State::Committed, table).unwrap();
    let mut out = Vec::new();
    export_csv(db, &t, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn file_remote_read_in_place_equals_what_dolt_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, url) = remote_copy(tmp.path());
    let before = common::snapshot(&dir);
    let text = std::fs::read_to_string(data().join("file-remote.expected")).unwrap();
    let (heads, rows) = text.split_once("rows\n").unwrap();
    let db = open_remote(&url, &OpenOptions::default()).unwrap();
    assert_eq!(default_branch(&db).unwrap().as_deref(), Some("main"));
    for line in heads.lines() {
        let (branch, hash) = line.split_once(' ').unwrap();
        assert_eq!(
            db.branch_head(branch).unwrap().to_string(),
            hash,
            "{branch}"
        );
    }
    assert_eq!(csv_of(&db, "main", "t"), rows);
    // A point get through the tree.
    let t = db.table_at("main", State::Committed, "t").unwrap();
    let row = t.reader(&db).unwrap().get(&[SqlValue::from(3)]).unwrap();
    assert_eq!(
        row.map(|r| format!("{r:?}")),
        Some(format!(
            "{:?}",
            vec![
                Some(SqlValue::from(3)),
                Some(SqlValue::from("name-3")),
                Some(SqlValue::from(103))
            ]
        ))
    );
    drop(db);
    assert!(
        common::snapshot(&dir) == before,
        "reading wrote to the remote"
    );
}

#[test]
fn bad_urls_fail_with_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = format!("file://{}", tmp.path().join("nothing").display());
    let not_remote = format!("file://{}", tmp.path().display());
    for (url, want) in [
        ("ftp://h/db", "scheme"),
        ("http://127.0.0.1:1/db", "cannot connect"),
        (missing.as_str(), "no such database"),
        (not_remote.as_str(), "no manifest"),
    ] {
        let e = open_remote(url, &OpenOptions::default())
            .unwrap_err()
            .to_string();
        assert!(!e.contains('\n') && e.contains(want), "{url}: {e:?}");
    }
}

/// A database made by Dolt alone: `w` with several types and a secondary index, on three
/// branches (`main`, `feature` with updates and deletes, `old` at the first commit).
fn make_typed_source(bin: &Path, home: &Path, dir: &Path, rows: usize) {
    std::fs::create_dir_all(dir).unwrap();
    let d = |args: &[&str]| dolt(bin, home, dir, args);
    d(&["init"]);
    let mut sql = String::from(
        "create table w (id bigint primary key, name varchar(60), at datetime(6), doc json, \
         amount decimal(14,3), ratio double, day date, kind enum('a','b','c'), flag tinyint, \
         note text, key by_kind (kind, name));\n",
    );
    for chunk in (0..rows).collect::<Vec<_>>().chunks(2000) {
        sql.push_str("insert into w values ");
        let values: Vec<String> = chunk
            .iter()
            .map(|&i| {
                format!(
                    "({i}, 'name-{:08x}', '2024-{:02}-{:02} {:02}:{:02}:{:02}.{:06}', \
                     '{{\"i\": {i}, \"tag\": \"t{}\"}}', {}.{:03}, {}, '20{:02}-0{}-1{}', '{}', {}, {})",
                    (i as u64).wrapping_mul(2654435761) % (1 << 32),
                    i % 12 + 1,
                    i % 28 + 1,
                    i % 24,
                    i % 60,
                    (i / 60) % 60,
                    i % 1_000_000,
                    i % 17,
                    i * 3,
                    i % 1000,
                    i as f64 / 7.0,
                    i % 30,
                    i % 9 + 1,
                    i % 10,
                    ["a", "b", "c"][i % 3],
                    i % 2,
                    if i % 11 == 0 {
                        "NULL".to_string()
                    } else {
                        format!("'note {i}'")
                    },
                )
            })
            .collect();
        sql.push_str(&values.join(","));
        sql.push_str(";\n");
    }
    let file = dir.parent().unwrap().join("w.sql");
    std::fs::write(&file, sql).unwrap();
    d(&["sql", "--file", file.to_str().unwrap()]);
    d(&["add", "-A"]);
    d(&["commit", "-m", "w"]);
    d(&["branch", "old"]);
    d(&["branch", "feature"]);
    d(&["checkout", "feature"]);
    d(&[
        "sql",
        "-q",
        "update w set amount = amount + 1, kind = 'c' where id % 97 = 0; delete from w where id % 1001 = 5",
    ]);
    d(&["commit", "-am", "feature: changes"]);
    d(&["checkout", "main"]);
    d(&[
        "sql",
        "-q",
        "insert into w (id, name) values (-1, 'minus'), (1000000, 'big')",
    ]);
    d(&["commit", "-am", "main: two more"]);
}

#[test]
fn sql_server_read_in_place_equals_dolt() {
    let Some(bin) = dolt_bin() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let home = home(root);
    let served = root.join("served");
    let src = served.join("src");
    make_typed_source(&bin, &home, &src, 30_000);
    let server = Server::start(&bin, &home, &served);
    let url = server.url("src");
    let local = Database::open(&src).unwrap();

    // A point get: a few chunks, not the table.
    let get_stats = std::sync::Arc::new(FetchStats::default());
    let db = open_remote(
        &url,
        &OpenOptions {
            stats: Some(get_stats.clone()),
            ..OpenOptions::default()
        },
    )
    .unwrap();
    let key = [SqlValue::from(12_345i64)];
    let t = db.table_at("main", State::Committed, "w").unwrap();
    let got = t.reader(&db).unwrap().get(&key).unwrap();
    let lt = local.table_at("main", State::Committed, "w").unwrap();
    let want = lt.reader(&local).unwrap().get(&key).unwrap();
    assert!(got.is_some());
    assert_eq!(format!("{got:?}"), format!("{want:?}"));
    let point = get_stats.counts();
    drop(db);

    // Every branch's rows, as Dolt prints them.
    let scan_stats = std::sync::Arc::new(FetchStats::default());
    let db = open_remote(
        &url,
        &OpenOptions {
            stats: Some(scan_stats.clone()),
            ..OpenOptions::default()
        },
    )
    .unwrap();
    assert_eq!(db.branches().unwrap(), local.branches().unwrap());
    assert_eq!(default_branch(&db).unwrap().as_deref(), Some("main"));
    let before = scan_stats.counts();
    let main_rows = csv_of(&db, "main", "w");
    let scan = scan_stats.counts();
    for branch in ["main", "feature", "old"] {
        let q = format!("select * from w as of '{branch}' order by id");
        let theirs = dolt(&bin, &home, &src, &["sql", "-r", "csv", "-q", &q]);
        let ours = if branch == "main" {
            main_rows.clone()
        } else {
            csv_of(&db, branch, "w")
        };
        assert_eq!(ours.lines().count(), theirs.lines().count(), "{branch}");
        assert!(ours == theirs, "{branch}: rows differ from dolt's");
    }
    eprintln!(
        "point get: {point:?}; scan of main ({} rows): {:?}",
        main_rows.lines().count() - 1,
        FetchCountsDelta(before, scan)
    );
    assert!(point.chunks <= 16, "{point:?}");
    assert!(
        point.bytes * 20 < scan.bytes - before.bytes,
        "a point get fetched {point:?}, the scan {scan:?}"
    );
    // A scan asks for its leaves in batches, not one at a time.
    assert!(
        (scan.requests - before.requests) * 4 < scan.chunks - before.chunks,
        "{scan:?}"
    );

    // A diff, as dolt_diff prints it, and as the local reader reads it.
    let mut ours = Vec::new();
    TableDiff::new(&db, "main", "feature", "w")
        .unwrap()
        .write_csv(&mut ours)
        .unwrap();
    let mut local_diff = Vec::new();
    TableDiff::new(&local, "main", "feature", "w")
        .unwrap()
        .write_csv(&mut local_diff)
        .unwrap();
    assert!(
        ours == local_diff,
        "the diff differs from the local reader's"
    );
    let theirs = dolt(
        &bin,
        &home,
        &src,
        &[
            "sql",
            "-r",
            "csv",
            "-q",
            "select * from dolt_diff('main', 'feature', 'w')",
        ],
    );
    let sorted = |t: &str| {
        let mut l: Vec<&str> = t.lines().collect();
        l.sort_unstable();
        l.join("\n")
    };
    assert_eq!(
        sorted(&String::from_utf8(ours).unwrap()),
        sorted(&theirs),
        "dolt_diff"
    );

    // Bad input: a database the server does not have.
    let e = open_remote(&server.url("nope"), &OpenOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("no such database") && !e.contains('\n'), "{e}");
    drop(server);
}

/// The counts between two snapshots, for the log.
struct FetchCountsDelta(
    prollystore_dolt_remote::FetchCounts,
    prollystore_dolt_remote::FetchCounts,
);

impl std::fmt::Debug for FetchCountsDelta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (a, b) = (self.0, self.1);
        write!(
            f,
            "{} chunks, {} bytes, {} requests, {} location calls",
            b.chunks - a.chunks,
            b.bytes - a.bytes,
            b.requests - a.requests,
            b.location_calls - a.location_calls
        )
    }
}
