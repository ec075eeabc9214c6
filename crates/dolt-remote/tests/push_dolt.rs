//! `push` against the real Dolt, to a `file://` remote `dolt push` made and to a
//! `dolt sql-server --remotesapi-port`: we clone, commit with our writer and push; then
//! `dolt clone` of the remote shows our commit (same hash, `dolt log` equal), `dolt fsck` is
//! clean and `dolt sql -r csv` rows equal ours; Dolt commits and pushes on top of what we
//! pushed, and we pull that; a non-fast-forward push is refused with one line and leaves the
//! remote at its root; a second push of the same head moves nothing.
//!
//! Needs `PROLLY_DOLT=/path/to/dolt`; without it the tests print why and pass.

use std::path::Path;

use prollystore_dolt::write::{CommitMeta, DoltWriter, RowMode};
use prollystore_dolt_remote::{clone, pull, push, CloneOptions, PushOutcome, RemoteError};

mod common;
use common::{dolt, dolt_bin, dolt_cmd, home, Server};

const ROWS: usize = 5_000;

fn make_source(bin: &Path, home: &Path, dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let d = |args: &[&str]| dolt(bin, home, dir, args);
    d(&["init"]);
    d(&[
        "sql",
        "-q",
        "create table t (id int primary key, name varchar(60), v int, key by_v (v))",
    ]);
    let csv = dir.parent().unwrap().join("rows.csv");
    let mut text = String::from("id,name,v\n");
    for i in 0..ROWS {
        text.push_str(&format!("{i},name-{i:06},{}\n", (i * 7919) % 1000));
    }
    std::fs::write(&csv, text).unwrap();
    d(&["table", "import", "-u", "t", csv.to_str().unwrap()]);
    d(&["add", "-A"]);
    d(&["commit", "-m", "first"]);
}

/// Upserts rows `from..to` (v = `v`) with our writer and commits; returns the commit.
fn our_commit(dir: &Path, from: usize, to: usize, v: i64, message: &str) -> String {
    let texts: Vec<[String; 3]> = (from..to)
        .map(|i| [i.to_string(), format!("ours-{i:06}"), v.to_string()])
        .collect();
    let rows: Vec<Vec<Option<&str>>> = texts
        .iter()
        .map(|r| r.iter().map(|s| Some(s.as_str())).collect())
        .collect();
    let mut w = DoltWriter::open(dir).unwrap();
    w.apply_text(RowMode::Upsert, "t", &["id", "name", "v"], &rows)
        .unwrap();
    let c = w
        .commit(&CommitMeta::now("Push Bot", "push@example.com", message))
        .unwrap();
    c.to_string()
}

/// What must be equal on both sides.
fn views(bin: &Path, home: &Path, dir: &Path) -> Vec<String> {
    [
        vec!["log", "--oneline"],
        vec!["sql", "-r", "csv", "-q", "select * from t order by id"],
        vec![
            "sql",
            "-r",
            "csv",
            "-q",
            "select v, count(*) from t use index (by_v) group by v order by v",
        ],
    ]
    .iter()
    .map(|args| dolt(bin, home, dir, args))
    .collect()
}

fn head_of(bin: &Path, home: &Path, dir: &Path, rev: &str) -> String {
    dolt(bin, home, dir, &["log", "-n", "1", "--oneline", rev])
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

/// `dolt push` from `dir` (with `--user root` and an empty password for a gRPC remote).
fn dolt_push(bin: &Path, home: &Path, dir: &Path, grpc: bool) {
    let mut args = vec!["push"];
    if grpc {
        args.extend(["--user", "root"]);
    }
    args.extend(["origin", "main"]);
    let out = dolt_cmd(bin, home, dir, &args)
        .env("DOLT_REMOTE_PASSWORD", "")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "dolt push: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn push_scenario(bin: &Path, home: &Path, root: &Path, url: &str, grpc: bool) {
    let o = CloneOptions::default();
    let ours = root.join("ours");
    let cloned = clone(url, &ours, &o).unwrap();

    // Up to date: nothing moves.
    let r = push(&ours, "origin", "main", &o).unwrap();
    assert_eq!((r.outcome, r.chunks), (PushOutcome::UpToDate, 0), "{r:?}");

    // Our commit, pushed: only the changed chunks move.
    let ours_head = our_commit(&ours, 1000, 2000, 7, "ours: 1000 rows");
    let r = push(&ours, "origin", "main", &o).unwrap();
    eprintln!(
        "push: {} chunks, {} bytes (clone: {} chunks)",
        r.chunks, r.bytes, cloned.chunks
    );
    assert!(
        matches!(r.outcome, PushOutcome::Pushed { to, .. } if to.to_string() == ours_head),
        "{r:?}"
    );
    assert!(r.chunks > 0 && r.chunks < cloned.chunks, "{r:?}");
    // The remote-tracking ref moved as Dolt moves it.
    assert_eq!(head_of(bin, home, &ours, "origin/main"), ours_head);
    assert_eq!(
        dolt(bin, home, &ours, &["status"]),
        "On branch main\nYour branch is up to date with 'origin/main'.\nnothing to commit, working tree clean\n"
    );
    let r = push(&ours, "origin", "main", &o).unwrap();
    assert_eq!(r.outcome, PushOutcome::UpToDate);

    // Dolt clones what we pushed: our commit, our rows, fsck clean.
    let theirs = root.join("theirs");
    dolt(bin, home, root, &["clone", url, theirs.to_str().unwrap()]);
    assert_eq!(head_of(bin, home, &theirs, "main"), ours_head);
    assert_eq!(views(bin, home, &theirs), views(bin, home, &ours));
    dolt(bin, home, &theirs, &["fsck"]);

    // Dolt pushes on top of ours; we pull it.
    dolt(
        bin,
        home,
        &theirs,
        &[
            "sql",
            "-q",
            "update t set v = v + 1 where id between 1500 and 1540",
        ],
    );
    dolt(bin, home, &theirs, &["commit", "-am", "theirs on top"]);
    dolt_push(bin, home, &theirs, grpc);
    pull(&ours, "origin", None, &o).unwrap();
    assert_eq!(views(bin, home, &ours), views(bin, home, &theirs));
    dolt(bin, home, &ours, &["fsck"]);

    // We push again on top of Dolt's; Dolt pulls it.
    let second = our_commit(&ours, 0, 10, 99, "ours: second");
    push(&ours, "origin", "main", &o).unwrap();
    dolt(bin, home, &theirs, &["pull", "origin", "main"]);
    assert_eq!(head_of(bin, home, &theirs, "main"), second);
    assert_eq!(views(bin, home, &theirs), views(bin, home, &ours));
    dolt(bin, home, &theirs, &["fsck"]);

    // Non-fast-forward: Dolt pushes, we commit without pulling; refused in one line, the
    // remote unchanged (Dolt's clone of it shows Dolt's commit).
    dolt(
        bin,
        home,
        &theirs,
        &["sql", "-q", "delete from t where id < 5"],
    );
    dolt(bin, home, &theirs, &["commit", "-am", "theirs again"]);
    dolt_push(bin, home, &theirs, grpc);
    let theirs_head = head_of(bin, home, &theirs, "main");
    our_commit(&ours, 3000, 3001, 1, "ours: diverged");
    let tracking = head_of(bin, home, &ours, "origin/main");
    let e = push(&ours, "origin", "main", &o).unwrap_err();
    assert!(matches!(e, RemoteError::Rejected { .. }), "{e}");
    let text = e.to_string();
    assert!(
        text.contains("non-fast-forward") && !text.contains('\n'),
        "{text}"
    );
    assert_eq!(head_of(bin, home, &ours, "origin/main"), tracking);
    let check = root.join("check");
    dolt(bin, home, root, &["clone", url, check.to_str().unwrap()]);
    assert_eq!(head_of(bin, home, &check, "main"), theirs_head);
    dolt(bin, home, &check, &["fsck"]);

    // Unknown remote: one line.
    let e = push(&ours, "nosuch", "main", &o).unwrap_err();
    assert!(matches!(e, RemoteError::UnknownRemote { .. }), "{e}");
}

#[test]
fn push_to_a_file_remote_dolt_clones_and_pulls() {
    let Some(bin) = dolt_bin() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let home = home(root);
    let src = root.join("src");
    make_source(&bin, &home, &src);
    let remote = root.join("remote");
    let url = format!("file://{}", remote.display());
    dolt(&bin, &home, &src, &["remote", "add", "origin", &url]);
    dolt(&bin, &home, &src, &["push", "origin", "main"]);
    push_scenario(&bin, &home, root, &url, false);
}

#[test]
fn push_to_dolt_sql_server() {
    let Some(bin) = dolt_bin() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let home = home(root);
    let served = root.join("served");
    let src = served.join("src");
    make_source(&bin, &home, &src);
    let server = Server::start(&bin, &home, &served);
    push_scenario(&bin, &home, root, &server.url("src"), true);
    drop(server);
}

#[test]
fn push_to_a_new_file_remote() {
    let Some(bin) = dolt_bin() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let home = home(root);
    let src = root.join("src");
    make_source(&bin, &home, &src);
    let remote = root.join("fresh");
    let url = format!("file://{}", remote.display());
    prollystore_dolt_remote::remote_add(&src, "origin", &url).unwrap();
    let r = push(&src, "origin", "main", &CloneOptions::default()).unwrap();
    assert!(
        matches!(r.outcome, PushOutcome::Pushed { from: None, .. }),
        "{r:?}"
    );
    let theirs = root.join("theirs");
    dolt(
        &bin,
        &home,
        root,
        &["clone", &url, theirs.to_str().unwrap()],
    );
    assert_eq!(views(&bin, &home, &theirs), views(&bin, &home, &src));
    dolt(&bin, &home, &theirs, &["fsck"]);
}
