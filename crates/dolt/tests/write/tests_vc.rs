//! Branches, checkout, tags and merges against the `branches` scenario: its branch, checkout,
//! merge, tag and branch-deletion steps done by this writer's version-control operations (the
//! commits' root values copied from Dolt's `after/`, as row edits are another layer's), with
//! Dolt's hashes at every step; and, with `PROLLY_DOLT`, Dolt's own view of the result.

use std::path::Path;

use prollystore_format::Address;

use super::history::commit::{NewCommit, Person};
use super::merges::merge::{MergeMeta, MergeOutcome};
use super::merges::row_merge::ConflictChoice;
use super::storage::writer::StoreWriter;
use super::tests::{
    copy_db, copy_reachable, dolt, dolt_reads_like_expected, jsonl, millis, scenario, sql_meta,
    tag_millis, DOLT_ENV,
};
use crate::db::Database;
use crate::error::DoltError;

fn addr(v: &serde_json::Value) -> Address {
    Address::from_base32(v.as_str().unwrap()).unwrap()
}

fn text(v: &serde_json::Value) -> &str {
    v.as_str().unwrap()
}

/// Every file under `dir`, with its bytes, for "nothing changed" checks.
pub(super) fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                todo.push(e.path());
            } else {
                out.push((
                    e.path().display().to_string(),
                    std::fs::read(e.path()).unwrap(),
                ));
            }
        }
    }
    out.sort();
    out
}

/// Opens for writing, waiting out a lock a `dolt` child of a parallel test may briefly hold
/// (a child shares our lock file's descriptor between its fork and its exec).
pub(super) fn open(dir: &Path) -> StoreWriter {
    for _ in 0..200 {
        match StoreWriter::open(dir) {
            Err(DoltError::Locked { .. }) => {
                std::thread::sleep(std::time::Duration::from_millis(10))
            }
            other => return other.unwrap(),
        }
    }
    StoreWriter::open(dir).unwrap()
}

/// Replays the `branches` scenario with the version-control operations; returns the database.
fn replay_branches() -> (tempfile::TempDir, std::path::PathBuf) {
    let base = scenario("branches");
    let after = Database::open(&base.join("after")).unwrap();
    let (tmp, dir) = copy_db(&base.join("before"));
    let ops = jsonl(&base.join("ops.jsonl"));
    let steps = jsonl(&base.join("expected/steps.jsonl"));
    for (i, op) in ops.iter().enumerate() {
        let step = steps.iter().find(|s| s["step"].as_u64() == Some(i as u64));
        let mut w = open(&dir);
        let meta = sql_meta(1_700_000_000 + i as u64);
        match text(&op["op"]) {
            "branch" => {
                let head = w
                    .create_branch(text(&op["name"]), text(&op["from"]), &meta)
                    .unwrap();
                assert_eq!(head, w.resolve_commit(text(&op["from"])).unwrap());
            }
            "checkout" => {
                w.checkout(text(&op["branch"]), &meta).unwrap();
                assert_eq!(w.current_branch().unwrap(), text(&op["branch"]));
            }
            "delete_branch" => {
                let force = op["force"].as_bool().unwrap_or(false);
                w.delete_branch(text(&op["name"]), force, 1_700_000_000)
                    .unwrap();
            }
            "commit" => {
                let step = step.unwrap();
                let root = addr(&step["root"]);
                copy_reachable(&after, &mut w, root);
                let branch = w.current_branch().unwrap();
                let date = millis(text(&op["date"]));
                let commit = NewCommit {
                    root,
                    parents: vec![w.head_of(&branch).unwrap()],
                    author: Person {
                        name: text(&op["author_name"]),
                        email: text(&op["author_email"]),
                    },
                    committer: None,
                    message: text(&op["message"]),
                    author_millis: date,
                    committer_millis: date as u64,
                };
                let secs = (date / 1000) as u64;
                let written = w
                    .commit_to_branch(&branch, &commit, &sql_meta(secs), secs)
                    .unwrap();
                assert_eq!(written, addr(&step["commit"]), "step {i}");
            }
            "merge" => {
                let step = step.unwrap();
                let date = millis(text(&op["date"]));
                let meta_m = MergeMeta {
                    author: Person {
                        name: text(&op["author_name"]),
                        email: text(&op["author_email"]),
                    },
                    committer: None,
                    message: text(&op["message"]),
                    author_millis: date,
                    committer_millis: date as u64,
                };
                let outcome = w
                    .merge(text(&op["branch"]), &meta_m, ConflictChoice::Stop, &meta)
                    .unwrap();
                let expected = addr(&step["commit"]);
                if step["fast_forward"] == true {
                    assert_eq!(
                        outcome,
                        MergeOutcome::FastForward { commit: expected },
                        "step {i}"
                    );
                } else {
                    assert_eq!(
                        outcome,
                        MergeOutcome::Merged {
                            commit: expected,
                            root: addr(&step["root"])
                        },
                        "step {i}: a three-way merge with Dolt's root value and commit"
                    );
                }
                let branch = w.current_branch().unwrap();
                assert_eq!(w.head_of(&branch).unwrap(), expected);
                assert_eq!(
                    w.working_roots(&branch).unwrap().working,
                    addr(&step["root"])
                );
            }
            "tag" => {
                let step = step.unwrap();
                // Dolt stamps tags with the wall clock; the vectors give that time.
                let when = tag_millis(text(&step["nondeterministic"]["tag_date"]));
                let tag = w
                    .tag(
                        text(&op["name"]),
                        text(&op["ref"]),
                        text(&op["message"]),
                        Person {
                            name: text(&step["tagger"]),
                            email: text(&step["tagger_email"]),
                        },
                        when,
                    )
                    .unwrap();
                let theirs = after.tags().unwrap();
                assert!(
                    theirs
                        .iter()
                        .any(|t| t.name == text(&op["name"]) && t.address == tag),
                    "tag {} differs from Dolt's",
                    text(&op["name"])
                );
            }
            _ => {}
        }
    }
    super::tests::assert_refs_as_expected("branches", &dir);
    assert_eq!(
        Database::open(&dir).unwrap().current_branch().as_deref(),
        Some("main")
    );
    (tmp, dir)
}

#[test]
fn branches_scenario_branch_merge_tag_steps_hash_as_dolts() {
    let (_tmp, dir) = replay_branches();
    if !dolt_reads_like_expected("branches", &dir) {
        eprintln!("{DOLT_ENV} not set: Dolt's reading of the replayed database not checked");
        return;
    }
    let base = scenario("branches");
    let branch_v = dolt(&dir, &["branch", "-v"]).unwrap();
    assert_eq!(
        super::tests::strip_ansi(&branch_v),
        std::fs::read_to_string(base.join("expected/branch_v.txt")).unwrap()
    );
    let tag_v = dolt(&dir, &["tag", "-v"]).unwrap();
    assert_eq!(
        super::tests::strip_ansi(&tag_v),
        std::fs::read_to_string(base.join("expected/tag_v.txt")).unwrap()
    );
}

#[test]
fn refused_operations_change_nothing() {
    let (_tmp, dir) = replay_branches();
    let before = snapshot(&dir);
    let mut w = open(&dir);
    let meta = sql_meta(1_800_000_000);
    let refused = |e: DoltError| assert!(matches!(e, DoltError::Refused(_)), "{e}");
    refused(w.create_branch("feature", "main", &meta).unwrap_err());
    // Invalid names are bad input, not a refusal because of the database's state.
    let bad_input = |e: DoltError| assert!(matches!(e, DoltError::BadInput { .. }), "{e}");
    bad_input(w.create_branch("bad..name", "main", &meta).unwrap_err());
    bad_input(w.create_branch("HEAD", "main", &meta).unwrap_err());
    assert!(matches!(
        w.create_branch("new", "no-such-branch", &meta).unwrap_err(),
        DoltError::NotFound(_)
    ));
    // `feature` has a commit `main` lacks.
    refused(w.delete_branch("feature", false, 1).unwrap_err());
    refused(w.delete_branch("main", true, 1).unwrap_err());
    refused(
        w.tag(
            "v1.0",
            "HEAD",
            "again",
            Person {
                name: "a",
                email: "b",
            },
            0,
        )
        .unwrap_err(),
    );
    assert!(matches!(
        w.checkout("nope", &meta).unwrap_err(),
        DoltError::NotFound(_)
    ));
    // Merging what main already has.
    let m = MergeMeta {
        author: Person {
            name: "a",
            email: "b",
        },
        committer: None,
        message: "m",
        author_millis: 0,
        committer_millis: 0,
    };
    assert_eq!(
        w.merge("v0.9", &m, ConflictChoice::Stop, &meta).unwrap(),
        MergeOutcome::UpToDate
    );
    drop(w);
    // A second writer is refused too.
    let _w = open(&dir);
    assert!(matches!(
        StoreWriter::open(&dir).unwrap_err(),
        DoltError::Locked { .. }
    ));
    drop(_w);
    assert!(
        snapshot(&dir) == before,
        "a refused operation changed a file"
    );
}

/// The `dolt` binary `PROLLY_DOLT` names and an empty scratch folder for a database, or `None`
/// (saying that `what` was not checked against Dolt).
pub(super) fn scratch(
    what: &str,
) -> Option<(std::ffi::OsString, tempfile::TempDir, std::path::PathBuf)> {
    let Some(bin) = std::env::var_os(DOLT_ENV).filter(|v| !v.is_empty()) else {
        eprintln!("{DOLT_ENV} not set: {what} not checked against Dolt");
        return None;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    std::fs::create_dir_all(&dir).unwrap();
    Some((bin, tmp, dir))
}

/// Runs `dolt args…` in `dir` with pinned dates and a throwaway HOME; returns (ok, stdout).
pub(super) fn dolt_at(
    bin: &std::ffi::OsStr,
    dir: &Path,
    date: &str,
    args: &[&str],
) -> (bool, String) {
    let home = dir.parent().unwrap().join("home");
    std::fs::create_dir_all(home.join(".dolt")).unwrap();
    std::fs::write(
        home.join(".dolt/config_global.json"),
        r#"{"user.name":"Merge Bot","user.email":"merge@example.com","metrics.disabled":"true"}"#,
    )
    .unwrap();
    let out = std::process::Command::new(bin)
        .args(args)
        .current_dir(dir)
        .env("HOME", &home)
        .env("TZ", "UTC")
        .env("NO_COLOR", "1")
        .env("DOLT_AUTHOR_DATE", date)
        .env("DOLT_COMMITTER_DATE", date)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

/// The merge tests' commit metadata ("Merge Bot", "merge side") and working-set metadata at
/// `date`.
fn bot_merge(
    date: &str,
) -> (
    MergeMeta<'static>,
    super::storage::writer::WorkingSetMeta<'static>,
) {
    let when = millis(date);
    let meta = MergeMeta {
        author: Person {
            name: "Merge Bot",
            email: "merge@example.com",
        },
        committer: None,
        message: "merge side",
        author_millis: when,
        committer_millis: when as u64,
    };
    (meta, sql_meta((when / 1000) as u64))
}

/// Three-way merges checked against Dolt's own: a row changed in different columns on the two
/// sides merges cell-wise (with the unique and secondary indexes following) into Dolt's exact
/// merge commit; a column changed differently on both sides is a conflict reported by key with
/// nothing written; choosing `theirs` gives the root value Dolt gives after
/// `dolt conflicts resolve --theirs`.
#[test]
fn three_way_merges_match_dolts() {
    let Some((bin, tmp, dir)) = scratch("three-way merges") else {
        return;
    };
    let d0 = "2024-03-01T00:00:00Z";
    let run = |date: &str, args: &[&str]| {
        let (ok, out) = dolt_at(&bin, &dir, date, args);
        assert!(ok, "dolt {args:?}: {out}");
    };
    run(d0, &["init", "--initial-branch", "main"]);
    run(d0, &["sql", "-q", "CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(20), c VARCHAR(20), UNIQUE KEY ub (b), KEY ka (a, c)); INSERT INTO t VALUES (1,1,'one','x'),(2,2,'two','y'),(3,3,'three','z'),(4,4,'four','w')"]);
    run(d0, &["add", "-A"]);
    run(d0, &["commit", "-m", "base", "--date", d0]);
    run(d0, &["branch", "side"]);
    run(d0, &["branch", "clash"]);
    run(d0, &["checkout", "side"]);
    run(d0, &["sql", "-q", "UPDATE t SET a = 100 WHERE id = 1; DELETE FROM t WHERE id = 3; INSERT INTO t VALUES (5,5,'five','v')"]);
    run(d0, &["add", "-A"]);
    run(
        "2024-03-02T00:00:00Z",
        &["commit", "-m", "side", "--date", "2024-03-02T00:00:00Z"],
    );
    run(d0, &["checkout", "clash"]);
    run(
        d0,
        &[
            "sql",
            "-q",
            "UPDATE t SET c = 'clash' WHERE id = 2; UPDATE t SET c = 'mine' WHERE id = 4",
        ],
    );
    run(d0, &["add", "-A"]);
    run(
        "2024-03-02T06:00:00Z",
        &["commit", "-m", "clash", "--date", "2024-03-02T06:00:00Z"],
    );
    run(d0, &["checkout", "main"]);
    run(d0, &["sql", "-q", "UPDATE t SET b = 'uno' WHERE id = 1; UPDATE t SET c = 'main' WHERE id = 2; INSERT INTO t VALUES (6,6,'six','u')"]);
    run(d0, &["add", "-A"]);
    run(
        "2024-03-03T00:00:00Z",
        &["commit", "-m", "main", "--date", "2024-03-03T00:00:00Z"],
    );
    // Our copy, before Dolt merges.
    let ours_dir = tmp.path().join("ours");
    super::tests::copy_tree(&dir, &ours_dir);
    let merge_date = "2024-03-04T00:00:00Z";
    run(merge_date, &["merge", "-m", "merge side", "side"]);
    let head = Database::open(&dir).unwrap().branch_head("main").unwrap();
    let theirs_root = Database::open(&dir).unwrap().commit(head).unwrap().root;

    let mut w = open(&ours_dir);
    let (meta, ws) = bot_merge(merge_date);
    let outcome = w.merge("side", &meta, ConflictChoice::Stop, &ws).unwrap();
    assert_eq!(
        outcome,
        MergeOutcome::Merged {
            commit: head,
            root: theirs_root
        },
        "cell-wise merge with indexes: Dolt's commit and root value"
    );
    drop(w);
    let (ok, log) = dolt_at(
        &bin,
        &ours_dir,
        merge_date,
        &["log", "--oneline", "-n", "1"],
    );
    assert!(ok && log.contains("merge side"), "{log}");

    // A real conflict: nothing written, every key reported.
    let before = snapshot(&ours_dir);
    let mut w = open(&ours_dir);
    let outcome = w.merge("clash", &meta, ConflictChoice::Stop, &ws).unwrap();
    let MergeOutcome::Conflicts(conflicts) = outcome else {
        panic!("expected conflicts, got {outcome:?}");
    };
    assert_eq!(conflicts.len(), 1, "{conflicts:?}");
    assert_eq!(conflicts[0].table, "t");
    assert!(conflicts[0].key[0].contains('2'), "{conflicts:?}");
    drop(w);
    assert!(
        snapshot(&ours_dir) == before,
        "a conflicting merge changed a file"
    );

    // Choosing theirs gives the root Dolt gives after resolving every conflict with --theirs.
    let mut w = open(&ours_dir);
    let MergeOutcome::Merged { root, .. } = w
        .merge("clash", &meta, ConflictChoice::Theirs, &ws)
        .unwrap()
    else {
        panic!("expected a merge");
    };
    drop(w);
    let (ok, out) = dolt_at(
        &bin,
        &dir,
        merge_date,
        &["merge", "-m", "merge clash", "clash"],
    );
    assert!(!ok || out.contains("CONFLICT"), "{out}");
    run(merge_date, &["conflicts", "resolve", "--theirs", "t"]);
    run(merge_date, &["add", "-A"]);
    run(
        merge_date,
        &["commit", "-m", "merge clash", "--date", merge_date],
    );
    let db = Database::open(&dir).unwrap();
    let dolt_root = db.commit(db.branch_head("main").unwrap()).unwrap().root;
    assert_eq!(root, dolt_root, "resolved with theirs");
    let (ok, status) = dolt_at(&bin, &ours_dir, merge_date, &["status"]);
    assert!(ok && status.contains("nothing to commit"), "{status}");
}

/// `status` lists what `dolt status` lists (compared as sorted lines: Dolt prints each section
/// in Go map order).
#[test]
fn status_lists_what_dolt_status_lists() {
    let Some((bin, _tmp, dir)) = scratch("status") else {
        return;
    };
    let d = "2024-03-01T00:00:00Z";
    let run = |args: &[&str]| {
        let (ok, out) = dolt_at(&bin, &dir, d, args);
        assert!(ok, "dolt {args:?}: {out}");
        out
    };
    run(&["init"]);
    let clean = super::history::status::status(&Database::open(&dir).unwrap()).unwrap();
    assert!(clean.is_clean());
    assert_eq!(clean.dolt_text(), run(&["status"]));
    run(&["sql", "-q", "create table a (id int primary key); create table b (id int primary key); create table c (id int primary key)"]);
    run(&["add", "-A"]);
    run(&["commit", "-m", "x", "--date", d]);
    run(&[
        "sql",
        "-q",
        "insert into a values (1); drop table b; create table n (id int primary key)",
    ]);
    run(&["add", "a", "n"]);
    run(&["sql", "-q", "insert into a values (2); insert into c values (1); create table u (id int primary key); drop table n"]);
    let ours = super::history::status::status(&Database::open(&dir).unwrap()).unwrap();
    assert_eq!(ours.staged.len(), 2);
    assert_eq!(ours.untracked, vec!["u".to_string()]);
    let sorted = |s: &str| {
        let mut l: Vec<String> = s.lines().map(str::to_string).collect();
        l.sort();
        l
    };
    assert_eq!(sorted(&ours.dolt_text()), sorted(&run(&["status"])));
}

/// Keyless three-way merges checked against Dolt's own: rows (row hashes) added, deleted or
/// repeated on one side only merge into Dolt's exact merge commit, with the secondary index
/// following; a row both sides changed — even in the same way — is a conflict, as Dolt counts
/// it, and nothing is written; choosing `theirs` gives Dolt's root after
/// `dolt conflicts resolve --theirs`.
#[test]
fn keyless_three_way_merges_match_dolts() {
    let Some((bin, tmp, dir)) = scratch("keyless three-way merges") else {
        return;
    };
    let d0 = "2024-03-01T00:00:00Z";
    let run = |date: &str, args: &[&str]| {
        let (ok, out) = dolt_at(&bin, &dir, date, args);
        assert!(ok, "dolt {args:?}: {out}");
    };
    let commit = |date: &str, msg: &str| {
        run(d0, &["add", "-A"]);
        run(date, &["commit", "-m", msg, "--date", date]);
    };
    run(d0, &["init", "--initial-branch", "main"]);
    run(d0, &["sql", "-q", "CREATE TABLE k (a INT, b VARCHAR(20), KEY ia (a)); INSERT INTO k VALUES (1,'one'),(2,'two'),(2,'two'),(3,'three'),(4,'four')"]);
    commit(d0, "base");
    run(d0, &["branch", "side"]);
    run(d0, &["branch", "clash"]);
    run(d0, &["checkout", "side"]);
    run(
        d0,
        &[
            "sql",
            "-q",
            "INSERT INTO k VALUES (5,'five'),(1,'one'); DELETE FROM k WHERE a = 3",
        ],
    );
    commit("2024-03-02T00:00:00Z", "side");
    run(d0, &["checkout", "clash"]);
    run(
        d0,
        &[
            "sql",
            "-q",
            "INSERT INTO k VALUES (7,'seven'); DELETE FROM k WHERE a = 4",
        ],
    );
    commit("2024-03-02T06:00:00Z", "clash");
    run(d0, &["checkout", "main"]);
    run(d0, &["sql", "-q", "INSERT INTO k VALUES (6,'six'),(7,'seven'); DELETE FROM k WHERE a = 2 LIMIT 1; DELETE FROM k WHERE a = 4"]);
    commit("2024-03-03T00:00:00Z", "main");
    let ours_dir = tmp.path().join("ours");
    super::tests::copy_tree(&dir, &ours_dir);
    let merge_date = "2024-03-04T00:00:00Z";
    run(merge_date, &["merge", "-m", "merge side", "side"]);
    let db = Database::open(&dir).unwrap();
    let head = db.branch_head("main").unwrap();
    let dolt_root = db.commit(head).unwrap().root;

    let (meta, ws) = bot_merge(merge_date);
    let mut w = open(&ours_dir);
    let outcome = w.merge("side", &meta, ConflictChoice::Stop, &ws).unwrap();
    assert_eq!(
        outcome,
        MergeOutcome::Merged {
            commit: head,
            root: dolt_root
        },
        "keyless merge with an index: Dolt's commit and root value"
    );
    drop(w);

    // Both sides added (7,'seven') and deleted (4,'four'): Dolt counts both rows as conflicts.
    let before = snapshot(&ours_dir);
    let mut w = open(&ours_dir);
    let outcome = w.merge("clash", &meta, ConflictChoice::Stop, &ws).unwrap();
    let MergeOutcome::Conflicts(conflicts) = outcome else {
        panic!("expected conflicts, got {outcome:?}");
    };
    assert_eq!(conflicts.len(), 2, "{conflicts:?}");
    assert!(conflicts.iter().all(|c| c.table == "k"), "{conflicts:?}");
    drop(w);
    assert!(
        snapshot(&ours_dir) == before,
        "a conflicting merge changed a file"
    );

    // Choosing a side: both conflicts are the same change on both sides, so either side's
    // rows are the current ones. (Dolt's own `dolt conflicts resolve --theirs` panics on these
    // keyless conflicts — "malformed tuple" in its secondary-index key builder — so its root
    // cannot be compared here.)
    let rows_of = |dir: &Path| -> Vec<String> {
        let db = Database::open(dir).unwrap();
        let t = db
            .table_at("main", crate::db::State::Committed, "k")
            .unwrap();
        let mut rows: Vec<String> = t
            .rows(&db)
            .unwrap()
            .map(|r| format!("{:?}", r.unwrap()))
            .collect();
        rows.sort();
        rows
    };
    let before_rows = rows_of(&ours_dir);
    assert_eq!(before_rows.len(), 6, "{before_rows:?}");
    let mut w = open(&ours_dir);
    let MergeOutcome::Merged { .. } = w
        .merge("clash", &meta, ConflictChoice::Theirs, &ws)
        .unwrap()
    else {
        panic!("expected a merge");
    };
    drop(w);
    assert_eq!(rows_of(&ours_dir), before_rows);
}

/// `checkout` with uncommitted changes, against Dolt's `dolt checkout`: working and staged
/// changes move to the branch checked out (same root values as Dolt's), the branch left is
/// reset to its head, and a table both changed stops the checkout with nothing written.
#[test]
fn checkout_carries_uncommitted_changes_as_dolt_does() {
    let Some((bin, tmp, dir)) = scratch("checkout carrying changes") else {
        return;
    };
    let d0 = "2024-03-01T00:00:00Z";
    let run = |dir: &Path, args: &[&str]| {
        let (ok, out) = dolt_at(&bin, dir, d0, args);
        assert!(ok, "dolt {args:?}: {out}");
        out
    };
    run(&dir, &["init", "--initial-branch", "main"]);
    run(&dir, &["sql", "-q", "CREATE TABLE a (id INT PRIMARY KEY, v INT); CREATE TABLE b (id INT PRIMARY KEY); CREATE TABLE c (id INT PRIMARY KEY); CREATE TABLE gone (id INT PRIMARY KEY); INSERT INTO a VALUES (1,1)"]);
    run(&dir, &["add", "-A"]);
    run(&dir, &["commit", "-m", "base", "--date", d0]);
    run(&dir, &["checkout", "-b", "other"]);
    run(
        &dir,
        &["sql", "-q", "INSERT INTO b VALUES (7); DROP TABLE gone"],
    );
    run(&dir, &["add", "-A"]);
    run(&dir, &["commit", "-m", "other", "--date", d0]);
    run(&dir, &["checkout", "main"]);
    // Staged: a new table and a row in a; unstaged on top: another row in a, a row in c.
    run(
        &dir,
        &[
            "sql",
            "-q",
            "CREATE TABLE n (id INT PRIMARY KEY); INSERT INTO a VALUES (2,2)",
        ],
    );
    run(&dir, &["add", "n", "a"]);
    run(
        &dir,
        &[
            "sql",
            "-q",
            "INSERT INTO a VALUES (3,3); INSERT INTO c VALUES (9)",
        ],
    );
    let ours = tmp.path().join("ours");
    super::tests::copy_tree(&dir, &ours);
    let clash = tmp.path().join("clash");
    super::tests::copy_tree(&dir, &clash);

    run(&dir, &["checkout", "other"]);
    let roots = |d: &Path| {
        let db = Database::open(d).unwrap();
        let r = |b: &str, s| db.root_at(b, s).unwrap().address;
        (
            r("other", crate::db::State::Working),
            r("other", crate::db::State::Staged),
            r("main", crate::db::State::Working),
            r("main", crate::db::State::Staged),
            db.root_at("main", crate::db::State::Committed)
                .unwrap()
                .address,
        )
    };
    let dolt_roots = roots(&dir);
    let mut w = open(&ours);
    w.checkout("other", &sql_meta(1_709_251_200)).unwrap();
    drop(w);
    let our_roots = roots(&ours);
    assert_eq!(
        our_roots, dolt_roots,
        "(other working, other staged, main working, main staged, main head)"
    );
    assert_eq!(our_roots.2, our_roots.4, "main is reset to its head");
    let (ok, status) = dolt_at(&bin, &ours, d0, &["status"]);
    let (_, dolt_status) = dolt_at(&bin, &dir, d0, &["status"]);
    assert!(ok, "{status}");
    // Dolt lists a section's tables in no fixed order (two runs on one database differ).
    assert_eq!(sections_sorted(&status), sections_sorted(&dolt_status));

    // A table the target branch changed too: Dolt refuses, and so do we, writing nothing.
    run(&clash, &["sql", "-q", "INSERT INTO b VALUES (8)"]);
    let (ok, out) = dolt_at(&bin, &clash, d0, &["checkout", "other"]);
    assert!(!ok && out.contains("would be overwritten"), "{out}");
    let before = snapshot(&clash);
    let mut w = open(&clash);
    let err = w
        .checkout("other", &sql_meta(1_709_251_200))
        .unwrap_err()
        .to_string();
    assert!(err.contains("would be overwritten by checkout: b"), "{err}");
    drop(w);
    assert!(
        snapshot(&clash) == before,
        "a refused checkout changed a file"
    );
}

/// `dolt status` text with the lines of each blank-line separated section sorted.
fn sections_sorted(status: &str) -> Vec<Vec<&str>> {
    status
        .split("\n\n")
        .map(|section| {
            let mut lines: Vec<&str> = section.lines().collect();
            lines.sort_unstable();
            lines
        })
        .collect()
}
