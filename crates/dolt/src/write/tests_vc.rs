//! Branches, checkout, tags and merges against the `branches` scenario: its branch, checkout,
//! merge, tag and branch-deletion steps done by this writer's version-control operations (the
//! commits' root values copied from Dolt's `after/`, as row edits are another layer's), with
//! Dolt's hashes at every step; and, with `PROLLY_DOLT`, Dolt's own view of the result.

use std::path::Path;

use prollystore_format::Address;

use super::commit::{NewCommit, Person};
use super::merge::{ConflictChoice, MergeMeta, MergeOutcome};
use super::tests::{
    copy_db, copy_reachable, dolt, dolt_reads_like_expected, jsonl, millis, scenario, sql_meta,
    tag_millis, DOLT_ENV,
};
use super::writer::DoltWriter;
use crate::db::Database;
use crate::error::DoltError;

fn addr(v: &serde_json::Value) -> Address {
    Address::from_base32(v.as_str().unwrap()).unwrap()
}

fn text(v: &serde_json::Value) -> &str {
    v.as_str().unwrap()
}

/// Every file under `dir`, with its bytes, for "nothing changed" checks.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
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
fn open(dir: &Path) -> DoltWriter {
    for _ in 0..200 {
        match DoltWriter::open(dir) {
            Err(DoltError::Locked { .. }) => {
                std::thread::sleep(std::time::Duration::from_millis(10))
            }
            other => return other.unwrap(),
        }
    }
    DoltWriter::open(dir).unwrap()
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
    let refs: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(base.join("expected/refs.json")).unwrap())
            .unwrap();
    let db = Database::open(&dir).unwrap();
    let branches: Vec<(String, String)> = db
        .branches()
        .unwrap()
        .into_iter()
        .map(|(n, a)| (n, a.to_base32()))
        .collect();
    let want: Vec<(String, String)> = refs["branches"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(n, a)| (n.clone(), text(a).to_string()))
        .collect();
    assert_eq!(branches, want);
    assert_eq!(db.current_branch().unwrap(), text(&refs["current"]));
    for t in db.tags().unwrap() {
        assert_eq!(t.commit.to_base32(), text(&refs["tags"][&t.name]));
    }
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
    refused(w.create_branch("bad..name", "main", &meta).unwrap_err());
    refused(w.create_branch("HEAD", "main", &meta).unwrap_err());
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
        DoltWriter::open(&dir).unwrap_err(),
        DoltError::Locked { .. }
    ));
    drop(_w);
    assert!(
        snapshot(&dir) == before,
        "a refused operation changed a file"
    );
}
