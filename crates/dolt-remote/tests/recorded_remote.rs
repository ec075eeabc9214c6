//! Clone, fetch, pull and push against a `file://` remote recorded from Dolt 2.3.1
//! (`tests/data/file-remote/`, made by `dolt push` with `tests/data/make_file_remote.sh`, which
//! also recorded the commit hashes and the rows in `tests/data/file-remote.expected`). These
//! run without a dolt binary (CI cannot build Dolt): the branch heads and rows we read equal
//! what Dolt reported; a push to a copy of the remote moves its `main` to our commit, the
//! remote reads back with our reader (every chunk checked against its address), and a clone of
//! it has our commit and rows.

use std::path::Path;

use prollystore_dolt::chunks::DoltChunkSource;
use prollystore_dolt::csv_field::{write_csv_header, write_csv_row};
use prollystore_dolt::db::{Database, State};
use prollystore_dolt::write::{CommitMeta, DoltWriter, RowMode};
use prollystore_dolt_remote::{clone, fetch, pull, push, CloneOptions, PushOutcome, RemoteError};

mod common;
use common::{data, remote_copy};

/// The recorded heads (`main`, `feature`) and the rows of `t` as `dolt sql -r csv` printed them.
fn expected() -> (Vec<(String, String)>, String) {
    let text = std::fs::read_to_string(data().join("file-remote.expected")).unwrap();
    let (heads, rows) = text.split_once("rows\n").unwrap();
    let heads = heads
        .lines()
        .map(|l| {
            let (b, h) = l.split_once(' ').unwrap();
            (b.to_string(), h.to_string())
        })
        .collect();
    (heads, rows.to_string())
}

/// The rows of `t` on `branch` in `dir`, as `dolt sql -r csv` prints them.
fn rows(dir: &Path, branch: &str) -> String {
    let db = Database::open(dir.join(".dolt")).unwrap();
    let root = db.root_at(branch, State::Committed).unwrap();
    let table = db.table(&root, "t").unwrap();
    let reader = table.reader(&db).unwrap();
    let mut out = Vec::new();
    write_csv_header(reader.column_names(), &mut out);
    for row in table.rows(&db).unwrap() {
        write_csv_row(&row.unwrap(), &mut out);
    }
    String::from_utf8(out).unwrap()
}

/// A branch's head, or a remote-tracking branch's (`origin/B`).
fn head(dir: &Path, rev: &str) -> String {
    if let Some(branch) = rev.strip_prefix("origin/") {
        return prollystore_dolt::write::clone_target::tracking_refs(dir, "origin")
            .unwrap()
            .into_iter()
            .find(|(b, _)| b == branch)
            .map(|(_, a)| a.to_string())
            .unwrap_or_default();
    }
    Database::open(dir.join(".dolt"))
        .unwrap()
        .resolve(rev)
        .unwrap()
        .to_string()
}

#[test]
fn clone_fetch_pull_from_the_recorded_remote() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, url) = remote_copy(tmp.path());
    let ours = tmp.path().join("ours");
    let o = CloneOptions::default();
    clone(&url, &ours, &o).unwrap();
    let (heads, expected_rows) = expected();
    let db = Database::open(ours.join(".dolt")).unwrap();
    for (branch, hash) in &heads {
        assert_eq!(&head(&ours, &format!("origin/{branch}")), hash, "{branch}");
        // Remote-tracking branches resolve as `dolt log origin/B` resolves them.
        for spec in [
            format!("origin/{branch}"),
            format!("remotes/origin/{branch}"),
            format!("refs/remotes/origin/{branch}"),
        ] {
            assert_eq!(&db.resolve(&spec).unwrap().to_string(), hash, "{spec}");
        }
    }
    assert_eq!(head(&ours, "main"), heads[0].1);
    assert_eq!(rows(&ours, "main"), expected_rows);
    let r = fetch(&ours, "origin", &o).unwrap();
    assert_eq!((r.chunks, r.updated.len()), (0, 0), "{r:?}");
    let p = pull(&ours, "origin", None, &o).unwrap();
    assert_eq!(p.outcome, prollystore_dolt_remote::FastForward::UpToDate);
}

#[test]
fn push_to_a_copy_of_the_recorded_remote() {
    let tmp = tempfile::tempdir().unwrap();
    let (remote, url) = remote_copy(tmp.path());
    let ours = tmp.path().join("ours");
    let o = CloneOptions::default();
    clone(&url, &ours, &o).unwrap();
    let manifest_before = std::fs::read(remote.join("manifest")).unwrap();

    // Up to date: the remote untouched.
    let r = push(&ours, "origin", "main", &o).unwrap();
    assert_eq!(r.outcome, PushOutcome::UpToDate);
    assert_eq!(
        std::fs::read(remote.join("manifest")).unwrap(),
        manifest_before
    );

    // Our commit (fixed time: the same hash every run), pushed.
    let mut w = DoltWriter::open(&ours).unwrap();
    w.apply_text(
        RowMode::Upsert,
        "t",
        &["id", "name", "v"],
        &[
            vec![Some("5"), Some("ours-5"), Some("55")],
            vec![Some("1000"), Some("ours-1000"), Some("1")],
        ],
    )
    .unwrap();
    let commit = w
        .commit(&CommitMeta::at(
            "Push Bot",
            "push@example.com",
            "ours",
            1_767_312_000_000,
        ))
        .unwrap();
    drop(w);
    let (heads, _) = expected();
    let r = push(&ours, "origin", "main", &o).unwrap();
    assert_eq!(
        r.outcome,
        PushOutcome::Pushed {
            from: Some(heads[0].1.parse().unwrap()),
            to: commit
        }
    );
    assert!(r.chunks > 0 && r.chunks < 20, "{r:?}");
    assert_eq!(head(&ours, "origin/main"), commit.to_string());

    // The remote, read back with our reader (every chunk checked): main is our commit, the
    // feature branch unchanged, and one more table file in the manifest.
    let source = DoltChunkSource::open(&remote).unwrap();
    let manifest = prollystore_dolt::chunks::manifest::Manifest::parse(
        &std::fs::read(remote.join("manifest")).unwrap(),
        "m",
    )
    .unwrap();
    assert_eq!(manifest.root, source.root());
    let before =
        prollystore_dolt::chunks::manifest::Manifest::parse(&manifest_before, "m").unwrap();
    assert_eq!(manifest.specs.len(), before.specs.len() + 1);
    let check = tmp.path().join("check");
    clone(&url, &check, &o).unwrap();
    assert_eq!(head(&check, "main"), commit.to_string());
    assert_eq!(head(&check, "origin/feature"), heads[1].1);
    assert_eq!(rows(&check, "main"), rows(&ours, "main"));
    assert!(rows(&check, "main").contains("1000,ours-1000,1\n"));

    // A non-fast-forward push (the clone behind the remote, with a commit of its own) is
    // refused in one line and leaves the remote's manifest as it was.
    let mut w = DoltWriter::open(&check).unwrap();
    w.apply_text(
        RowMode::Upsert,
        "t",
        &["id", "name", "v"],
        &[vec![Some("7"), Some("x"), Some("7")]],
    )
    .unwrap();
    w.commit(&CommitMeta::at(
        "Other",
        "o@example.com",
        "other",
        1_767_312_060_000,
    ))
    .unwrap();
    drop(w);
    let mut w = DoltWriter::open(&ours).unwrap();
    w.apply_text(
        RowMode::Upsert,
        "t",
        &["id", "name", "v"],
        &[vec![Some("8"), Some("y"), Some("8")]],
    )
    .unwrap();
    w.commit(&CommitMeta::at(
        "Push Bot",
        "push@example.com",
        "again",
        1_767_312_120_000,
    ))
    .unwrap();
    drop(w);
    push(&ours, "origin", "main", &o).unwrap();
    let manifest_now = std::fs::read(remote.join("manifest")).unwrap();
    let e = push(&check, "origin", "main", &o).unwrap_err();
    assert!(matches!(e, RemoteError::Rejected { .. }), "{e}");
    assert!(
        e.to_string().contains("non-fast-forward") && !e.to_string().contains('\n'),
        "{e}"
    );
    assert_eq!(
        std::fs::read(remote.join("manifest")).unwrap(),
        manifest_now
    );

    // Bad input: an unknown remote; a remote that is a database's own journaled store.
    let e = push(&ours, "nosuch", "main", &o).unwrap_err();
    assert!(matches!(e, RemoteError::UnknownRemote { .. }), "{e}");
    prollystore_dolt_remote::remote_add(
        &ours,
        "live",
        &format!("file://{}", check.join(".dolt/noms").display()),
    )
    .unwrap();
    let live_manifest = std::fs::read(check.join(".dolt/noms/manifest")).unwrap();
    let e = push(&ours, "live", "main", &o).unwrap_err().to_string();
    assert!(e.contains("journal") && !e.contains('\n'), "{e}");
    assert_eq!(
        std::fs::read(check.join(".dolt/noms/manifest")).unwrap(),
        live_manifest
    );
}

/// A fetch queues chunks as it finds them, level by level from the remote's root (parents
/// first), and writes them in one batch; a kill can cut that write short, keeping whole
/// records without the root record. The batch is therefore written children first: every
/// chunk record it adds refers only to chunks the database held before or that the batch
/// wrote earlier, so no prefix of it holds a parent without its children (Dolt's pull skips
/// what is under a chunk it holds).
#[test]
fn a_fetch_writes_children_before_parents() {
    use prollystore_dolt::chunks::journal::scan_records;
    use prollystore_dolt::write::clone_target::chunk_refs;

    let tmp = tempfile::tempdir().unwrap();
    let (_, url) = remote_copy(tmp.path());
    let o = CloneOptions::default();
    let (ours, other) = (tmp.path().join("ours"), tmp.path().join("other"));
    clone(&url, &ours, &o).unwrap();
    clone(&url, &other, &o).unwrap();
    // Enough new rows for a tree of more than one level, pushed from the other clone.
    let mut w = DoltWriter::open(&other).unwrap();
    let ids: Vec<String> = (0..4000).map(|i| (20_000 + i).to_string()).collect();
    let rows: Vec<Vec<Option<&str>>> = ids
        .iter()
        .map(|id| vec![Some(id.as_str()), Some("fetched"), Some(id.as_str())])
        .collect();
    w.apply_text(RowMode::Upsert, "t", &["id", "name", "v"], &rows)
        .unwrap();
    w.commit(&CommitMeta::at(
        "Other",
        "o@example.com",
        "rows to fetch",
        1_767_312_060_000,
    ))
    .unwrap();
    drop(w);
    push(&other, "origin", "main", &o).unwrap();

    let journal = ours
        .join(".dolt/noms")
        .join("vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv");
    let before = std::fs::read(&journal).unwrap().len();
    let held_before = DoltChunkSource::open(ours.join(".dolt/noms")).unwrap();
    let r = fetch(&ours, "origin", &o).unwrap();
    assert!(
        r.chunks > 20,
        "a fetch of {} chunks is too small to tell",
        r.chunks
    );
    let bytes = std::fs::read(&journal).unwrap();
    let added = scan_records(&bytes[before..], before as u64, "added").unwrap();
    let after = DoltChunkSource::open(ours.join(".dolt/noms")).unwrap();
    let mut written = std::collections::HashSet::new();
    for (a, _) in &added.chunks {
        let chunk = after.chunk(a).unwrap();
        chunk_refs(*a, &chunk, &mut |r| {
            assert!(
                written.contains(&r) || held_before.contains(&r),
                "the fetch wrote chunk {a} before {r}, which it refers to"
            );
        })
        .unwrap();
        written.insert(*a);
    }
    // The fetched chunks, then the store root and dataset map of the tracking refs' update.
    assert!(written.len() as u64 > r.chunks, "{} records", written.len());
    assert_eq!(head(&ours, "origin/main"), head(&other, "main"));
}
