//! `remote add|remove|list`, `fetch` and `pull` against the real Dolt, from a `file://` remote
//! `dolt push` writes and from a `dolt sql-server --remotesapi-port`: we clone, Dolt commits
//! more on the source (and pushes, for the file remote), we fetch and pull; then `dolt log`,
//! `dolt branch -a`, `dolt fsck`, `dolt sql -r csv` in our directory equal the source's, a
//! second fetch moves no chunk, and `repo_state.json` after `remote add` equals the bytes
//! `dolt remote add` writes. Refusals (unknown remote, dirty working set, diverged branch)
//! change nothing locally.
//!
//! Needs `PROLLY_DOLT=/path/to/dolt`; without it the tests print why and pass.

use std::path::Path;

use prollystore_dolt_remote::{
    clone, fetch, pull, remote_add, remote_list, remote_remove, CloneOptions, FastForward,
    RemoteError,
};

mod common;
use common::{dolt, dolt_bin, home, snapshot, Server};

fn make_source(bin: &Path, home: &Path, dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let d = |args: &[&str]| dolt(bin, home, dir, args);
    d(&["init"]);
    d(&[
        "sql",
        "-q",
        "create table t (id int primary key, name varchar(60), v int, key by_v (v))",
    ]);
    add_rows(bin, home, dir, 0, 20_000);
    d(&["add", "-A"]);
    d(&["commit", "-m", "first"]);
    d(&["branch", "feature"]);
}

/// Inserts rows `from..to` through `dolt table import` (CSV).
fn add_rows(bin: &Path, home: &Path, dir: &Path, from: usize, to: usize) {
    let csv = dir.parent().unwrap().join(format!("rows-{from}.csv"));
    let mut text = String::from("id,name,v\n");
    for i in from..to {
        text.push_str(&format!("{i},name-{i:06},{}\n", (i * 7919) % 1000));
    }
    std::fs::write(&csv, text).unwrap();
    dolt(
        bin,
        home,
        dir,
        &["table", "import", "-u", "t", csv.to_str().unwrap()],
    );
}

/// What must be equal between our pulled copy and the source.
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

/// The scenario, on a remote at `url` that `commit_more` advances (as Dolt does it).
fn fetch_and_pull(
    bin: &Path,
    home: &Path,
    root: &Path,
    src: &Path,
    url: &str,
    commit_more: &dyn Fn(&str),
    tag: &dyn Fn(&str),
) {
    let ours = root.join("ours");
    let cloned = clone(url, &ours, &CloneOptions::default()).unwrap();
    let o = CloneOptions::default();

    // Nothing new: no chunk moves, no ref moves.
    let r = fetch(&ours, "origin", &o).unwrap();
    assert_eq!((r.chunks, r.updated.len()), (0, 0), "{r:?}");

    commit_more("update t set v = v + 1 where id between 5000 and 5040");
    tag("v1");
    let before = snapshot(&ours);
    let r = fetch(&ours, "origin", &o).unwrap();
    // Tags follow, as `dolt fetch` makes them follow.
    assert_eq!(r.tags.len(), 1, "{r:?}");
    assert_eq!(
        dolt(bin, home, &ours, &["tag", "-v"]),
        dolt(bin, home, src, &["tag", "-v"])
    );
    eprintln!("fetch: {} chunks, {} bytes", r.chunks, r.bytes);
    assert_eq!(r.updated.len(), 1, "{r:?}");
    eprintln!("clone: {} chunks", cloned.chunks);
    assert!(
        r.chunks > 0 && r.chunks * 4 < cloned.chunks,
        "only the changed chunks: {r:?}"
    );
    assert!(snapshot(&ours) != before);
    // The local branch did not move; the remote-tracking one did.
    assert_eq!(
        dolt(bin, home, &ours, &["log", "--oneline", "origin/main"]),
        dolt(bin, home, src, &["log", "--oneline", "main"])
    );
    assert_ne!(
        dolt(bin, home, &ours, &["log", "--oneline"]),
        dolt(bin, home, src, &["log", "--oneline", "main"])
    );
    dolt(bin, home, &ours, &["fsck"]);
    let r = fetch(&ours, "origin", &o).unwrap();
    assert_eq!((r.chunks, r.updated.len()), (0, 0), "{r:?}");

    // Pull fast-forwards.
    let p = pull(&ours, "origin", None, &o).unwrap();
    assert!(matches!(p.outcome, FastForward::Moved { .. }), "{p:?}");
    assert_eq!(views(bin, home, &ours), views(bin, home, src));
    assert_eq!(
        dolt(bin, home, &ours, &["status"]),
        "On branch main\nYour branch is up to date with 'origin/main'.\nnothing to commit, working tree clean\n"
    );
    dolt(bin, home, &ours, &["fsck"]);
    let p = pull(&ours, "origin", None, &o).unwrap();
    assert_eq!(p.outcome, FastForward::UpToDate);

    // Dirty working set: refused, the branch and working set unchanged.
    commit_more("delete from t where id < 100");
    dolt(
        bin,
        home,
        &ours,
        &["sql", "-q", "insert into t values (-5, 'dirty', 1)"],
    );
    let log = dolt(bin, home, &ours, &["log", "--oneline"]);
    let e = pull(&ours, "origin", None, &o).unwrap_err().to_string();
    assert!(e.contains("uncommitted changes"), "{e}");
    assert!(!e.contains('\n'), "{e}");
    assert_eq!(dolt(bin, home, &ours, &["log", "--oneline"]), log);
    assert!(dolt(bin, home, &ours, &["status"]).contains("modified:"));

    // Diverged: refused.
    dolt(bin, home, &ours, &["commit", "-am", "local"]);
    let log = dolt(bin, home, &ours, &["log", "--oneline"]);
    let e = pull(&ours, "origin", None, &o).unwrap_err().to_string();
    assert!(e.contains("fast-forward"), "{e}");
    assert_eq!(dolt(bin, home, &ours, &["log", "--oneline"]), log);
    dolt(bin, home, &ours, &["fsck"]);

    // Unknown remote: one line, nothing changed.
    let before = snapshot(&ours);
    let e = fetch(&ours, "nosuch", &o).unwrap_err();
    assert!(matches!(e, RemoteError::UnknownRemote { .. }), "{e}");
    assert_eq!(
        e.to_string(),
        "unknown remote \"nosuch\": this database's remotes are origin"
    );
    assert!(pull(&ours, "nosuch", None, &o).is_err());
    assert!(snapshot(&ours) == before);
}

#[test]
fn fetch_and_pull_from_a_file_remote_dolt_pushes_to() {
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
    dolt(&bin, &home, &src, &["push", "origin", "feature"]);
    let commit_more = |sql: &str| {
        dolt(&bin, &home, &src, &["sql", "-q", sql]);
        dolt(&bin, &home, &src, &["commit", "-am", sql]);
        dolt(&bin, &home, &src, &["push", "origin", "main"]);
    };
    let tag = |name: &str| {
        dolt(&bin, &home, &src, &["tag", name, "main", "-m", "a tag"]);
        dolt(&bin, &home, &src, &["push", "origin", name]);
    };
    fetch_and_pull(&bin, &home, root, &src, &url, &commit_more, &tag);
}

#[test]
fn fetch_and_pull_from_dolt_sql_server() {
    let Some(bin) = dolt_bin() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let home = home(root);
    let served = root.join("served");
    let src = served.join("src");
    make_source(&bin, &home, &src);
    let server = Server::start(&bin, &home, &served);
    let url = server.url("src");
    // With the server running, `dolt` in the source directory goes through it.
    let commit_more = |sql: &str| {
        dolt(&bin, &home, &src, &["sql", "-q", sql]);
        dolt(&bin, &home, &src, &["commit", "-am", sql]);
    };
    let tag = |name: &str| {
        dolt(&bin, &home, &src, &["tag", name, "main", "-m", "a tag"]);
    };
    fetch_and_pull(&bin, &home, root, &src, &url, &commit_more, &tag);
    drop(server);
}

#[test]
fn remotes_are_recorded_as_dolt_records_them() {
    let Some(bin) = dolt_bin() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let home = home(root);
    let ours = root.join("ours");
    let theirs = root.join("theirs");
    for d in [&ours, &theirs] {
        std::fs::create_dir_all(d).unwrap();
        dolt(&bin, &home, d, &["init"]);
    }
    let adds = [
        ("origin", "file:///tmp/some/remote/"),
        ("second", "http://127.0.0.1:1234/db"),
        ("hub", "dolthub/repo"),
        ("amp", "http://h:1/a?x=1&y=<2>"),
    ];
    for (name, url) in adds {
        remote_add(&ours, name, url).unwrap();
        dolt(&bin, &home, &theirs, &["remote", "add", name, url]);
        assert_eq!(
            std::fs::read(ours.join(".dolt/repo_state.json")).unwrap(),
            std::fs::read(theirs.join(".dolt/repo_state.json")).unwrap(),
            "after remote add {name} {url}"
        );
    }
    // (`dolt remote -v` lists in Go's map order, which varies from run to run.)
    let names: Vec<String> = remote_list(&ours)
        .unwrap()
        .into_iter()
        .map(|r| r.name)
        .collect();
    assert_eq!(names, ["amp", "hub", "origin", "second"]);
    let before = std::fs::read(ours.join(".dolt/repo_state.json")).unwrap();
    let e = remote_add(&ours, "origin", "file:///x").unwrap_err();
    assert_eq!(e.to_string(), "remote \"origin\" already exists");
    let e = remote_remove(&ours, "nosuch").unwrap_err();
    assert!(matches!(e, RemoteError::UnknownRemote { .. }), "{e}");
    assert_eq!(
        std::fs::read(ours.join(".dolt/repo_state.json")).unwrap(),
        before
    );
    for name in ["second", "amp"] {
        remote_remove(&ours, name).unwrap();
        dolt(&bin, &home, &theirs, &["remote", "remove", name]);
        assert_eq!(
            std::fs::read(ours.join(".dolt/repo_state.json")).unwrap(),
            std::fs::read(theirs.join(".dolt/repo_state.json")).unwrap(),
            "after remote remove {name}"
        );
    }
}

/// `fetch` with `prune` against `dolt fetch --prune`: a branch deleted on the remote (`dolt
/// push origin :feature`) keeps its tracking ref through a plain fetch on both sides and loses
/// it through a pruning one; `dolt branch -a` reads alike in our directory and Dolt's.
#[test]
fn fetch_prune_as_dolt_prunes() {
    let Some(bin) = dolt_bin() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let home = home(root);
    let src = root.join("src");
    make_source(&bin, &home, &src);
    dolt(&bin, &home, &src, &["branch", "other"]);
    let remote = root.join("remote");
    let url = format!("file://{}", remote.display());
    dolt(&bin, &home, &src, &["remote", "add", "origin", &url]);
    for b in ["main", "feature", "other"] {
        dolt(&bin, &home, &src, &["push", "origin", b]);
    }
    let ours = root.join("ours");
    let theirs = root.join("theirs");
    clone(&url, &ours, &CloneOptions::default()).unwrap();
    dolt(
        &bin,
        &home,
        root,
        &["clone", &url, theirs.to_str().unwrap()],
    );
    let branches = |dir: &Path| dolt(&bin, &home, dir, &["branch", "-a"]);
    assert_eq!(branches(&ours), branches(&theirs));
    assert!(branches(&ours).contains("remotes/origin/feature"));

    dolt(&bin, &home, &src, &["push", "origin", ":feature"]);
    let plain = fetch(&ours, "origin", &CloneOptions::default()).unwrap();
    assert!(plain.pruned.is_empty(), "{plain:?}");
    dolt(&bin, &home, &theirs, &["fetch"]);
    assert_eq!(branches(&ours), branches(&theirs));
    assert!(branches(&ours).contains("remotes/origin/feature"));

    let prune = CloneOptions {
        prune: true,
        ..Default::default()
    };
    let r = fetch(&ours, "origin", &prune).unwrap();
    assert_eq!(r.pruned, ["feature"], "{r:?}");
    dolt(&bin, &home, &theirs, &["fetch", "--prune"]);
    assert_eq!(branches(&ours), branches(&theirs));
    assert!(!branches(&ours).contains("remotes/origin/feature"));
    assert!(branches(&ours).contains("remotes/origin/other"));
    dolt(&bin, &home, &ours, &["fsck"]);
    // Nothing left to prune.
    assert!(fetch(&ours, "origin", &prune).unwrap().pruned.is_empty());
}
