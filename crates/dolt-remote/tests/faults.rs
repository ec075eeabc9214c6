//! Faults on the way from and to a Dolt remote (issue #33): a corrupted table file in a
//! `file://` remote (clone and fetch: a one-line error naming the remote and the chunk or file;
//! no clone directory left, the fetching database byte-for-byte unchanged, and the fetch
//! succeeding once the file is repaired); connections to a `dolt sql-server` cut after N bytes
//! (several N) and the server killed mid-clone and mid-push (the same for clone; the pushed-to
//! remote still readable by `dolt clone` at its old root, and the push succeeding when rerun).
//!
//! The `file://` cases run always (the recorded remote of `tests/data`); the server cases need
//! `PROLLY_DOLT=/path/to/dolt` and print why they skip without it.

use std::path::{Path, PathBuf};

use prollystore_dolt::db::Database;
use prollystore_dolt::write::{CommitMeta, DoltWriter, RowMode};
use prollystore_dolt_remote::{clone, fetch, push, CloneOptions, PushOutcome, RemoteError};
use prollystore_format::Address;

mod common;
use common::{dolt, dolt_bin, home, remote_copy, snapshot, CutProxy, Server};

/// Flips one byte of `file` at `offset`.
fn flip(file: &Path, offset: usize) {
    let mut bytes = std::fs::read(file).unwrap();
    bytes[offset] ^= 0x5a;
    std::fs::write(file, bytes).unwrap();
}

/// The files of a `file://` remote's directory (table files and archives).
fn table_files(remote: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(remote)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && !p.ends_with("manifest") && !p.ends_with("LOCK"))
        .collect();
    out.sort();
    out
}

/// Upserts rows `(id, "pushed-ID", id % 13)` into `t` of the database at `dir` for each id of
/// `ids` and commits them at a fixed time (the same hash every run).
fn commit_rows(dir: &Path, ids: impl Iterator<Item = usize>, message: &str) -> Address {
    let rows: Vec<[String; 3]> = ids
        .map(|i| [i.to_string(), format!("pushed-{i}"), (i % 13).to_string()])
        .collect();
    let rows: Vec<Vec<Option<&str>>> = rows
        .iter()
        .map(|r| r.iter().map(|v| Some(v.as_str())).collect())
        .collect();
    let mut w = DoltWriter::open(dir).unwrap();
    w.apply_text(RowMode::Upsert, "t", &["id", "name", "v"], &rows)
        .unwrap();
    w.commit(&CommitMeta::at(
        "Fault Bot",
        "fault@example.com",
        message,
        1_767_312_000_000,
    ))
    .unwrap()
}

/// A one-line error that names the remote, and the chunk or file.
fn check_error(e: &RemoteError, url: &str) {
    let text = e.to_string();
    assert!(!text.contains('\n'), "{text}");
    assert!(text.contains(url), "names the remote: {text}");
    assert!(
        text.contains("chunk") || text.contains(".darc") || text.contains("file"),
        "names the chunk or file: {text}"
    );
}

#[test]
fn a_corrupted_archive_fails_the_clone_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (remote, url) = remote_copy(tmp.path());
    let darc = table_files(&remote)
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "darc"))
        .unwrap();
    let len = std::fs::metadata(&darc).unwrap().len() as usize;
    let good = std::fs::read(&darc).unwrap();
    let mut failures = 0;
    for offset in [0, 40, 200, len / 4, len / 2, len - 100, len - 1] {
        std::fs::write(&darc, &good).unwrap();
        flip(&darc, offset);
        let dir = tmp.path().join(format!("clone-{offset}"));
        match clone(&url, &dir, &CloneOptions::default()) {
            Err(e) => {
                eprintln!("flipped byte {offset} of {len}: {e}");
                check_error(&e, &url);
                failures += 1;
                assert!(!dir.exists(), "a failed clone leaves no directory");
            }
            // A byte no chunk of the clone reads (padding, an unused dictionary byte): the
            // clone must then be whole.
            Ok(_) => eprintln!("flipped byte {offset} of {len}: not read by the clone"),
        }
    }
    assert!(failures >= 5, "{failures} of 7 flips failed the clone");
    std::fs::write(&darc, &good).unwrap();
    clone(&url, tmp.path().join("whole"), &CloneOptions::default()).unwrap();
}

#[test]
fn a_corrupted_table_file_fails_the_fetch_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (remote, url) = remote_copy(tmp.path());
    let o = CloneOptions::default();
    let ours = tmp.path().join("ours");
    let other = tmp.path().join("other");
    clone(&url, &ours, &o).unwrap();
    clone(&url, &other, &o).unwrap();
    let before_files = table_files(&remote);
    // A commit from the other clone, pushed: one new table file on the remote.
    let commit = commit_rows(&other, 1000..1400, "more rows");
    push(&other, "origin", "main", &o).unwrap();
    let new_file = table_files(&remote)
        .into_iter()
        .find(|p| !before_files.contains(p))
        .expect("the push wrote a table file");
    let good = std::fs::read(&new_file).unwrap();

    for offset in [10, good.len() / 3, good.len() / 2] {
        std::fs::write(&new_file, &good).unwrap();
        flip(&new_file, offset);
        let before = snapshot(&ours);
        let e = fetch(&ours, "origin", &o).unwrap_err();
        eprintln!("flipped byte {offset} of {}: {e}", good.len());
        check_error(&e, &url);
        assert!(
            snapshot(&ours) == before,
            "the failed fetch changed the database"
        );
    }
    // Repaired: the fetch completes.
    std::fs::write(&new_file, &good).unwrap();
    let r = fetch(&ours, "origin", &o).unwrap();
    assert_eq!(r.updated.len(), 1, "{r:?}");
    let tracking = prollystore_dolt::write::clone_target::tracking_refs(&ours, "origin").unwrap();
    assert!(
        tracking.contains(&("main".to_string(), commit)),
        "{tracking:?}"
    );
}

/// A source database with `rows` rows in `t`, served by a `dolt sql-server` from its parent.
fn served_source(bin: &Path, home: &Path, root: &Path, rows: usize) -> (PathBuf, Server) {
    let served = root.join("served");
    let src = served.join("src");
    std::fs::create_dir_all(&src).unwrap();
    dolt(bin, home, &src, &["init"]);
    dolt(
        bin,
        home,
        &src,
        &[
            "sql",
            "-q",
            "create table t (id int primary key, name varchar(60), v int)",
        ],
    );
    let csv = root.join("rows.csv");
    let mut text = String::from("id,name,v\n");
    for i in 0..rows {
        text.push_str(&format!("{i},name-{i:08},{}\n", (i * 7919) % 1000));
    }
    std::fs::write(&csv, text).unwrap();
    dolt(
        bin,
        home,
        &src,
        &["table", "import", "-u", "t", csv.to_str().unwrap()],
    );
    dolt(bin, home, &src, &["add", "-A"]);
    dolt(bin, home, &src, &["commit", "-m", "rows"]);
    let server = Server::start(bin, home, &served);
    (src, server)
}

#[test]
fn clone_through_cut_connections_and_a_killed_server() {
    let Some(bin) = dolt_bin() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let home = home(root);
    let (src, mut server) = served_source(&bin, &home, root, 50_000);
    let o = CloneOptions::default();

    // The whole gRPC conversation of one clone, through an uncut proxy.
    let proxy = CutProxy::start(server.port, u64::MAX);
    let whole = root.join("whole");
    clone(&proxy.url("src"), &whole, &o).unwrap();
    let total = proxy.bytes();
    eprintln!("one clone: {total} gRPC bytes through the proxy");
    drop(proxy);

    for n in [1, 100, 700, total / 3, total / 2, total * 9 / 10] {
        let proxy = CutProxy::start(server.port, n);
        let url = proxy.url("src");
        let dir = root.join(format!("cut-{n}"));
        let e = clone(&url, &dir, &o).unwrap_err();
        eprintln!("cut after {n} bytes: {e}");
        assert!(!e.to_string().contains('\n'), "{e}");
        assert!(e.to_string().contains(&url), "names the remote: {e}");
        assert!(!dir.exists(), "a failed clone leaves no directory");
    }

    // The server killed mid-clone (after a third of the conversation; what it had sent past
    // that is lost with it).
    let proxy = CutProxy::stalling(server.port, total / 3);
    let url = proxy.url("src");
    let dir = root.join("killed");
    let cloning = {
        let (url, dir) = (url.clone(), dir.clone());
        std::thread::spawn(move || clone(&url, &dir, &CloneOptions::default()))
    };
    while proxy.bytes() < total / 3 && !cloning.is_finished() {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    server.kill();
    drop(proxy);
    let result = cloning.join().unwrap();
    match result {
        Err(e) => {
            eprintln!("server killed mid-clone: {e}");
            assert!(!e.to_string().contains('\n'), "{e}");
            assert!(!dir.exists(), "a failed clone leaves no directory");
        }
        Ok(_) => panic!("the clone finished before the server was killed; grow the table"),
    }

    // The clone made before the faults is whole.
    dolt(&bin, &home, &whole, &["fsck"]);
    assert_eq!(
        dolt(&bin, &home, &whole, &["log", "--oneline"]),
        dolt(&bin, &home, &src, &["log", "--oneline"])
    );
}

#[test]
fn push_through_cut_connections_and_a_killed_server() {
    let Some(bin) = dolt_bin() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let home = home(root);
    let (src, server) = served_source(&bin, &home, root, 20_000);
    let served = src.parent().unwrap().to_path_buf();
    let o = CloneOptions::default();
    let ours = root.join("ours");
    clone(&server.url("src"), &ours, &o).unwrap();
    let old_head = Database::open(&ours).unwrap().resolve("main").unwrap();

    // 2,000 changed rows (every tenth id), committed locally.
    let commit = commit_rows(&ours, (0..2000).map(|i| i * 10), "changed rows");

    // What the remote's main is, read by Dolt in a fresh clone.
    let dolt_head = |url: &str, tag: &str| {
        let dir = root.join(format!("check-{tag}"));
        dolt(&bin, &home, root, &["clone", url, dir.to_str().unwrap()]);
        dolt(&bin, &home, &dir, &["fsck"]);
        dolt(&bin, &home, &dir, &["log", "-n", "1", "--oneline"])
            .split_whitespace()
            .next()
            .unwrap()
            .to_string()
    };

    // Cut at several points of the push's gRPC conversation: refused, the remote still at its
    // old root and whole.
    for n in [1, 300, 2_000, 20_000] {
        let proxy = CutProxy::start(server.port, n);
        let url = proxy.url("src");
        prollystore_dolt_remote::remote_add(&ours, &format!("cut{n}"), &url).unwrap();
        let e = push(&ours, &format!("cut{n}"), "main", &o).unwrap_err();
        eprintln!("push cut after {n} bytes: {e}");
        assert!(!e.to_string().contains('\n'), "{e}");
        assert_eq!(
            dolt_head(&server.url("src"), &format!("cut{n}")),
            old_head.to_string()
        );
    }
    // The server killed during the push (mid-upload: the table file's PUT is past 20,000
    // bytes; what was in flight is lost with it), restarted: the remote reads at its old root;
    // the push, rerun, succeeds.
    let mut server = server;
    let proxy = CutProxy::stalling(server.port, 20_000);
    prollystore_dolt_remote::remote_add(&ours, "killed", &proxy.url("src")).unwrap();
    let pushing = {
        let ours = ours.clone();
        std::thread::spawn(move || push(&ours, "killed", "main", &CloneOptions::default()))
    };
    while proxy.bytes() < 20_000 && !pushing.is_finished() {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    server.kill();
    drop(proxy);
    let result = pushing.join().unwrap();
    eprintln!("server killed mid-push: {result:?}");
    assert!(result.is_err(), "the push finished before the kill");
    let server = Server::start(&bin, &home, &served);
    let url = server.url("src");
    assert_eq!(dolt_head(&url, "after-kill"), old_head.to_string());
    prollystore_dolt_remote::remote_add(&ours, "again", &url).unwrap();
    let r = push(&ours, "again", "main", &o).unwrap();
    assert_eq!(
        r.outcome,
        PushOutcome::Pushed {
            from: Some(old_head),
            to: commit
        }
    );
    assert_eq!(dolt_head(&url, "after-push"), commit.to_string());
}
