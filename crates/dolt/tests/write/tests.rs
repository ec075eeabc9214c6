//! The write layers against data Dolt made, and (when `PROLLY_DOLT` names a `dolt` binary)
//! against Dolt itself reading what we wrote.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use prollystore_format::Address;

use super::history::commit::{NewCommit, Person};
use super::storage::journal_append::{JournalAppender, JOURNAL_FILE};
use super::storage::refs::for_each_ref;
use super::storage::writer::{StoreWriter, WorkingSetMeta};
use crate::chunks::journal::scan_records;
use crate::chunks::journal_record::{chunk_record, root_record};
use crate::db::Database;
use crate::error::DoltError;

pub(super) use super::helpers::{copy_db, copy_tree, dolt, millis, scenario, DOLT_ENV};

#[test]
fn root_and_chunk_records_are_framed_as_dolt_frames_them() {
    let journal = std::fs::read(scenario("basic/after/.dolt/noms").join(JOURNAL_FILE)).unwrap();
    let scan = scan_records(&journal, 0, "journal").unwrap();
    assert!(scan.roots.len() > 3);
    for r in &scan.roots {
        let at = r.offset as usize;
        let ours = root_record(r.root, r.timestamp.unwrap());
        assert_eq!(
            &journal[at..at + ours.len()],
            &ours[..],
            "root record at {at}"
        );
    }
    // Chunk records: the same framing and CRCs; the snappy bytes are golang/snappy's in Dolt's
    // and the `snap` crate's in ours, which the test counts rather than requires to agree.
    let db = Database::open(scenario("basic/after")).unwrap();
    let (mut same, mut total) = (0, 0);
    for (address, loc) in &scan.chunks {
        let chunk = db.source().chunk(address).unwrap();
        let mut ours = Vec::new();
        chunk_record(*address, &chunk, &mut ours).unwrap();
        let start = loc.payload_offset as usize - 28;
        let len = u32::from_be_bytes(journal[start..start + 4].try_into().unwrap()) as usize;
        let theirs = &journal[start..start + len];
        assert_eq!(&ours[4..28], &theirs[4..28], "header of {address}");
        let reread = scan_records(&ours, 0, "ours").unwrap();
        assert_eq!(reread.chunks.len(), 1);
        same += usize::from(ours == theirs);
        total += 1;
    }
    eprintln!("chunk records byte-identical to Dolt's: {same} of {total}");
}

/// Copies every chunk reachable from `from_root` in `source` that `w` lacks.
pub(super) fn copy_reachable(source: &Database, w: &mut StoreWriter, from_root: Address) {
    let mut seen = HashSet::new();
    let mut todo = vec![from_root];
    while let Some(a) = todo.pop() {
        if !seen.insert(a) {
            continue;
        }
        let chunk = source.source().chunk(&a).unwrap();
        for_each_ref(a, &chunk, &mut |r| todo.push(r)).unwrap();
        w.put(&chunk).unwrap();
    }
}

/// Working-set metadata as a `dolt sql` transaction of the vectors' user records it.
pub(super) fn sql_meta(timestamp_secs: u64) -> WorkingSetMeta<'static> {
    WorkingSetMeta {
        name: "Vector Bot",
        email: "bot@example.com",
        description: "sql transaction",
        timestamp_secs,
    }
}

#[test]
fn dates_convert_like_dolt_prints_them() {
    assert_eq!(millis("1970-01-01T00:00:00Z"), 0);
    assert_eq!(millis("2024-01-01T00:00:00Z"), 1_704_067_200_000);
    assert_eq!(millis("2024-02-29T12:34:56Z"), 1_709_210_096_000);
}

/// `2026-11-26 17:28:25.302` (UTC, as the vectors record tag dates) → Unix milliseconds.
pub(super) fn tag_millis(date: &str) -> i64 {
    let (secs, frac) = date.split_once('.').unwrap_or((date, "0"));
    let iso = format!("{}T{}Z", &secs[..10], &secs[11..19]);
    millis(&iso) + format!("{frac:0<3}")[..3].parse::<i64>().unwrap()
}

pub(super) fn jsonl(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Replays a scenario's recorded steps onto a copy of its `before/` with the root values Dolt
/// made (copied from `after/`): branches, commits, merge commits, fast-forwards, tags and
/// branch deletions. Every commit hash equals Dolt's; returns the replayed database.
fn replay(name: &str) -> (tempfile::TempDir, PathBuf) {
    let base = scenario(name);
    let after = Database::open(base.join("after")).unwrap();
    let (tmp, dir) = copy_db(&base.join("before"));
    let ops = jsonl(&base.join("ops.jsonl"));
    let steps = jsonl(&base.join("expected/steps.jsonl"));
    let addr = |v: &serde_json::Value| Address::from_base32(v.as_str().unwrap()).unwrap();
    let text = |v: &serde_json::Value| v.as_str().unwrap().to_string();
    let meta_of = sql_meta;
    for (i, op) in ops.iter().enumerate() {
        let step = steps.iter().find(|s| s["step"].as_u64() == Some(i as u64));
        let mut w = StoreWriter::open(&dir).unwrap();
        let head = |w: &StoreWriter, b: &str| {
            w.datasets()
                .unwrap()
                .into_iter()
                .find(|(k, _)| k.as_slice() == format!("refs/heads/{b}").as_bytes())
                .map(|(_, a)| a)
        };
        match op["op"].as_str().unwrap() {
            "branch" => {
                let from = head(&w, op["from"].as_str().unwrap()).expect("from is a branch");
                let name = format!("refs/heads/{}", text(&op["name"]));
                w.update_datasets(&[(&name, Some(from))], 1).unwrap();
            }
            "delete_branch" => {
                let heads = format!("refs/heads/{}", text(&op["name"]));
                let ws = format!("workingSets/heads/{}", text(&op["name"]));
                w.update_datasets(&[(&heads, None), (&ws, None)], 1)
                    .unwrap();
            }
            "commit" | "merge" => {
                let step = step.unwrap();
                let branch = text(&step["branch"]);
                let expected = addr(&step["commit"]);
                let root = addr(&step["root"]);
                if step["fast_forward"] == true {
                    let ws = w.put_working_set(root, &meta_of(1)).unwrap();
                    let heads = format!("refs/heads/{branch}");
                    let wsr = format!("workingSets/heads/{branch}");
                    w.update_datasets(&[(&heads, Some(expected)), (&wsr, Some(ws))], 1)
                        .unwrap();
                    continue;
                }
                copy_reachable(&after, &mut w, root);
                let date = millis(op["date"].as_str().unwrap());
                let commit = NewCommit {
                    root,
                    parents: step["parents"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(addr)
                        .collect(),
                    author: Person {
                        name: op["author_name"].as_str().unwrap(),
                        email: op["author_email"].as_str().unwrap(),
                    },
                    committer: None,
                    message: op["message"].as_str().unwrap(),
                    author_millis: date,
                    committer_millis: date as u64,
                };
                let secs = (date / 1000) as u64;
                let written = w
                    .commit_to_branch(&branch, &commit, &meta_of(secs), secs)
                    .unwrap();
                assert_eq!(written, expected, "{name} step {i}");
                drop(w);
                let db = Database::open(&dir).unwrap();
                assert_eq!(db.branch_head(&branch).unwrap(), written);
                let c = db.commit(written).unwrap();
                assert_eq!(c.root, root);
                assert_eq!(c.height, step["height"].as_u64().unwrap());
                assert_eq!(db.working_set(&branch).unwrap().unwrap().working_root, root);
            }
            "tag" => {
                let step = step.unwrap();
                let when = tag_millis(step["nondeterministic"]["tag_date"].as_str().unwrap());
                let tag = prollystore_format::message::objects::TagFields {
                    commit_addr: addr(&step["commit"]).0,
                    name: step["tagger"].as_str().unwrap(),
                    email: step["tagger_email"].as_str().unwrap(),
                    desc: step["message"].as_str().unwrap(),
                    timestamp_millis: when as u64,
                    user_timestamp_millis: when,
                }
                .encode()
                .unwrap();
                let tag = w.put(&tag).unwrap();
                // Dolt stamps tags with the wall clock; the vectors give that time to the
                // millisecond, which is all Dolt stores, so the tag object can match too.
                let theirs = after.tags().unwrap();
                let same = theirs
                    .iter()
                    .any(|t| t.name == text(&step["tag"]) && t.address == tag);
                assert!(
                    same,
                    "{name} tag {} differs from Dolt's",
                    text(&step["tag"])
                );
                let name = format!("refs/tags/{}", text(&step["tag"]));
                w.update_datasets(&[(&name, Some(tag))], 1).unwrap();
            }
            _ => {}
        }
    }
    assert_refs_as_expected(name, &dir);
    (tmp, dir)
}

/// The branch heads and tag targets of the database in `dir` are the scenario's
/// `expected/refs.json`.
pub(super) fn assert_refs_as_expected(name: &str, dir: &Path) {
    let base = scenario(name);
    let text = |v: &serde_json::Value| v.as_str().unwrap().to_string();
    let refs: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(base.join("expected/refs.json")).unwrap())
            .unwrap();
    let db = Database::open(dir).unwrap();
    let branches: Vec<(String, String)> = db
        .branches()
        .unwrap()
        .into_iter()
        .map(|(n, a)| (n, a.to_base32()))
        .collect();
    let expected: Vec<(String, String)> = refs["branches"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(n, a)| (n.clone(), text(a)))
        .collect();
    assert_eq!(branches, expected, "{name} branches");
    for t in db.tags().unwrap() {
        assert_eq!(
            t.commit.to_base32(),
            text(&refs["tags"][&t.name]),
            "{name} tag {}",
            t.name
        );
    }
}

/// What Dolt prints for every branch of a replayed scenario equals what it printed for its own
/// run: logs, `SHOW TABLES`, every table's rows and schema.
pub(super) fn dolt_reads_like_expected(name: &str, dir: &Path) -> bool {
    let base = scenario(name);
    let expected = base.join("expected/branch");
    for entry in std::fs::read_dir(&expected).unwrap() {
        let branch = entry.unwrap().file_name().into_string().unwrap();
        let want = |f: &str| std::fs::read_to_string(expected.join(&branch).join(f)).unwrap();
        let Some(log) = dolt(dir, &["log", &branch]) else {
            return false;
        };
        assert_eq!(
            strip_ansi(&log),
            want("log.plain.txt"),
            "{name} {branch} log"
        );
        let tables = dolt(
            dir,
            &["--branch", &branch, "sql", "-r", "csv", "-q", "SHOW TABLES"],
        )
        .unwrap();
        let listed: Vec<&str> = tables.lines().skip(1).collect();
        assert_eq!(
            listed.join("\n").trim(),
            want("tables.txt").trim(),
            "{name} {branch}"
        );
        for table in listed {
            let schema = dolt(dir, &["schema", "show", &branch, table]).unwrap();
            let want_schema = want(&format!("{table}.schema.txt"));
            assert!(
                schema.contains(want_schema.trim()),
                "{name} {branch} {table} schema:\n{schema}"
            );
        }
    }
    let status = dolt(dir, &["status"]).unwrap();
    assert!(
        status.contains("nothing to commit, working tree clean"),
        "{status}"
    );
    true
}

#[test]
fn commits_merges_and_branches_of_every_scenario_hash_as_dolts() {
    for name in ["basic", "branches", "types"] {
        let (_tmp, dir) = replay(name);
        if !dolt_reads_like_expected(name, &dir) {
            eprintln!("{DOLT_ENV} not set: Dolt's own reading of {name} was not checked");
            continue;
        }
        if name == "basic" {
            let csv = dolt(
                &dir,
                &["sql", "-r", "csv", "-q", "SELECT * FROM items ORDER BY id"],
            )
            .unwrap();
            let base = scenario(name);
            let want =
                std::fs::read_to_string(base.join("expected/branch/main/items.csv")).unwrap();
            assert_eq!(csv, want);
            // Dolt builds on our commits, and we read what it wrote.
            let head = Database::open(&dir).unwrap().branch_head("main").unwrap();
            dolt(
                &dir,
                &[
                    "sql",
                    "-q",
                    "INSERT INTO items (id, name) VALUES (9999, 'from dolt')",
                ],
            )
            .unwrap();
            dolt(&dir, &["commit", "-am", "dolt on top of ours"]).unwrap();
            let db = Database::open(&dir).unwrap();
            let top = db.commit(db.branch_head("main").unwrap()).unwrap();
            assert_eq!(top.parents, vec![head]);
            assert_eq!(top.message, "dolt on top of ours");
        }
    }
}

/// Removes ANSI SGR sequences.
pub(super) fn strip_ansi(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A branch added by appending a store root: Dolt and our reader see it; every cut of the
/// appended bytes opens at the old root or the new one, never an error.
#[test]
fn appended_root_is_read_and_every_torn_append_opens_old_or_new() {
    let (_tmp, dir) = copy_db(&scenario("basic/after"));
    let journal_path = dir.join(".dolt/noms").join(JOURNAL_FILE);
    let before = std::fs::read(&journal_path).unwrap();
    let manifest = std::fs::read(dir.join(".dolt/noms/manifest")).unwrap();
    let (old_root, head) = {
        let db = Database::open(&dir).unwrap();
        (db.source().root(), db.branch_head("main").unwrap())
    };
    let new_root = {
        let mut w = StoreWriter::open(&dir).unwrap();
        let root = w
            .update_datasets(&[("refs/heads/copy", Some(head))], 1_800_000_000)
            .unwrap();
        assert_eq!(w.root(), root);
        root
    };
    let after = std::fs::read(&journal_path).unwrap();
    assert_eq!(
        &after[..before.len()],
        &before[..],
        "existing bytes are untouched"
    );
    assert_eq!(
        std::fs::read(dir.join(".dolt/noms/manifest")).unwrap(),
        manifest
    );
    let db = Database::open(&dir).unwrap();
    assert_eq!(db.source().root(), new_root);
    assert_eq!(db.branch_head("copy").unwrap(), head);
    if let Some(branches) = dolt(&dir, &["branch"]) {
        assert!(branches.contains("copy"), "{branches}");
        let log = dolt(&dir, &["log", "--oneline", "copy"]).unwrap();
        assert_eq!(log.lines().count(), 4, "{log}");
        // Dolt "trues up" the manifest root to the journal's last root when it opens the store.
        let text = std::fs::read_to_string(dir.join(".dolt/noms/manifest")).unwrap();
        assert_eq!(
            text.split(':').nth(3),
            Some(new_root.to_base32().as_str()),
            "{text}"
        );
    }
    assert_every_cut_opens_old_or_new(&dir, &before, &after, &manifest, old_root, new_root);
}

/// Writes every prefix of `after` (a journal that was `before` plus an appended update) as the
/// journal of a copy of `dir`'s store with `manifest`, and checks that our reader opens each at
/// `old_root`, or at `new_root` for the whole file, never failing.
fn assert_every_cut_opens_old_or_new(
    dir: &Path,
    before: &[u8],
    after: &[u8],
    manifest: &[u8],
    old_root: Address,
    new_root: Address,
) {
    let torn = tempfile::tempdir().unwrap();
    let noms = torn.path().join("noms");
    copy_tree(&dir.join(".dolt/noms"), &noms);
    // The manifest as it was before the append (Dolt may have trued it up since).
    std::fs::write(noms.join("manifest"), manifest).unwrap();
    for cut in before.len()..=after.len() {
        std::fs::write(noms.join(JOURNAL_FILE), &after[..cut]).unwrap();
        let src =
            crate::DoltChunkSource::open(&noms).unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
        let root = src.root();
        assert_eq!(
            root == new_root,
            cut == after.len(),
            "cut at {cut}: root {root}"
        );
        assert!(
            root == old_root || root == new_root,
            "cut at {cut}: root {root}"
        );
        src.chunk(&root).unwrap();
    }
}

/// A crash anywhere in a commit's append leaves the old branch head or the new one.
#[test]
fn every_torn_commit_opens_old_or_new() {
    let (_tmp, dir) = copy_db(&scenario("basic/after"));
    let journal_path = dir.join(".dolt/noms").join(JOURNAL_FILE);
    let before = std::fs::read(&journal_path).unwrap();
    let manifest = std::fs::read(dir.join(".dolt/noms/manifest")).unwrap();
    let mut w = StoreWriter::open(&dir).unwrap();
    let old_root = w.root();
    let head = w.database().branch_head("main").unwrap();
    let root = w.database().commit(head).unwrap().root;
    let commit = NewCommit {
        root,
        parents: vec![head],
        author: Person {
            name: "Crash Test",
            email: "crash@example.com",
        },
        committer: Some(Person {
            name: "Someone Else",
            email: "crash@example.com",
        }),
        message: "torn?",
        author_millis: 1_700_000_000_000,
        committer_millis: 1_700_000_000_500,
    };
    let meta = sql_meta(1_700_000_000);
    let written = w
        .commit_to_branch("main", &commit, &meta, 1_700_000_000)
        .unwrap();
    let new_root = w.root();
    drop(w);
    let after = std::fs::read(&journal_path).unwrap();
    let db = Database::open(&dir).unwrap();
    let c = db.commit(written).unwrap();
    assert_eq!(c.committer_name.as_deref(), Some("Someone Else"));
    assert_eq!(
        c.committer_email, None,
        "an equal committer email is left out, as Dolt does"
    );
    assert_every_cut_opens_old_or_new(&dir, &before, &after, &manifest, old_root, new_root);
}

/// A running `dolt sql-server` keeps writers out; once it is gone (even killed, leaving its
/// `sql-server.info` behind), the database opens for writing.
#[test]
fn a_running_dolt_sql_server_is_refused() {
    let Some(bin) = std::env::var_os(DOLT_ENV).filter(|v| !v.is_empty()) else {
        eprintln!("{DOLT_ENV} not set: not checked against a real dolt sql-server");
        return;
    };
    let (_tmp, dir) = copy_db(&scenario("basic/before"));
    let home = dir.parent().unwrap().join("home");
    std::fs::create_dir_all(home.join(".dolt")).unwrap();
    let port = 20000 + (std::process::id() % 20000);
    let mut server = Command::new(bin)
        .args(["sql-server", "--port", &port.to_string()])
        .current_dir(&dir)
        .env("HOME", &home)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let info = dir.join(".dolt/sql-server.info");
    let started = std::time::Instant::now();
    while !info.exists() && started.elapsed() < std::time::Duration::from_secs(30) {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let refused = StoreWriter::open(&dir);
    server.kill().unwrap();
    server.wait().unwrap();
    let err = refused.expect_err("a running sql-server must keep writers out");
    assert!(matches!(err, DoltError::Locked { .. }), "{err}");
    StoreWriter::open(&dir).unwrap();
}

#[test]
fn a_second_writer_is_refused_and_nothing_changes() {
    let (_tmp, dir) = copy_db(&scenario("basic/before"));
    let journal_path = dir.join(".dolt/noms").join(JOURNAL_FILE);
    let bytes = std::fs::read(&journal_path).unwrap();
    let first = StoreWriter::open(&dir).unwrap();
    let err = StoreWriter::open(&dir).unwrap_err();
    assert!(matches!(err, DoltError::Locked { .. }), "{err}");
    assert!(err.to_string().contains("LOCK"), "{err}");
    drop(first);
    assert_eq!(std::fs::read(&journal_path).unwrap(), bytes);
    // Opening and dropping without a commit writes nothing either.
    drop(JournalAppender::open(&dir.join(".dolt/noms")).unwrap());
    assert_eq!(std::fs::read(&journal_path).unwrap(), bytes);
}

#[test]
fn a_torn_tail_is_cut_like_dolt_cuts_it_and_appends_follow_the_last_record() {
    let (_tmp, dir) = copy_db(&scenario("basic/before"));
    let journal_path = dir.join(".dolt/noms").join(JOURNAL_FILE);
    let mut bytes = std::fs::read(&journal_path).unwrap();
    let good = bytes.len();
    bytes.extend_from_slice(&[0, 0, 0, 90, 1, 2, 3]);
    std::fs::write(&journal_path, &bytes).unwrap();
    let mut w = StoreWriter::open(&dir).unwrap();
    let head = w.database().branch_head("main").unwrap();
    w.update_datasets(&[("refs/heads/other", Some(head))], 1)
        .unwrap();
    drop(w);
    let after = std::fs::read(&journal_path).unwrap();
    assert_eq!(&after[..good], &bytes[..good]);
    let db = Database::open(&dir).unwrap();
    assert_eq!(db.branch_head("other").unwrap(), head);
}

/// The `basic` scenario's first commit built from its operations alone (`CREATE TABLE` fields
/// and 200 inserted rows; column tags derived as Dolt derives them): the schema, table and root value hash as
/// Dolt's, and committing them on a copy of `before/` gives Dolt's commit, with no chunk copied
/// from Dolt's result.
#[test]
fn a_new_table_from_rows_hashes_as_dolts() {
    use super::new_table::{
        primary_index, root_with_tables, schema_fields, store_chunks, stored_types, table_chunk,
        ColumnSpec,
    };
    let base = scenario("basic");
    let ops = jsonl(&base.join("ops.jsonl"));
    let steps = jsonl(&base.join("expected/steps.jsonl"));
    let (create, insert, commit_op) = (&ops[1], &ops[2], &ops[3]);
    let step = steps.iter().find(|s| s["step"] == 3).unwrap();
    let addr = |v: &serde_json::Value| Address::from_base32(v.as_str().unwrap()).unwrap();

    let declared = create["columns"].as_array().unwrap();
    // Tags as Dolt derives them (a fresh database: no tag used yet).
    let kinds: Vec<(&str, super::tables::column_tags::NomsKind)> = declared
        .iter()
        .map(|c| {
            let name = c["name"].as_str().unwrap();
            (
                name,
                super::tables::column_tags::kind_of(&crate::schema::SqlType::parse(
                    c["type"].as_str().unwrap(),
                ))
                .unwrap(),
            )
        })
        .collect();
    let tags = super::tables::column_tags::tags_for_new_table(&mut HashSet::new(), "items", &kinds);
    let columns: Vec<ColumnSpec<'_>> = declared
        .iter()
        .zip(tags)
        .map(|(c, tag)| ColumnSpec {
            name: c["name"].as_str().unwrap(),
            sql_type: c["type"].as_str().unwrap(),
            nullable: c["nullable"].as_bool().unwrap(),
            tag,
        })
        .collect();
    let stored = stored_types(&columns).unwrap();
    let pk: Vec<&str> = create["primary_key"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    // utf8mb4_0900_bin, the table default recorded in the op.
    assert_eq!(create["collation"], "utf8mb4_0900_bin");
    let schema_chunk = schema_fields(&columns, &stored, &pk, 309)
        .unwrap()
        .encode()
        .unwrap();
    let schema_address = prollystore_format::HashProfile::Dolt.address_of(&schema_chunk);
    let schema = crate::schema::Schema::decode(&schema_chunk, schema_address).unwrap();

    let names: Vec<&str> = insert["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let rows: Vec<Vec<Option<&str>>> = insert["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            columns
                .iter()
                .map(|c| {
                    let at = names.iter().position(|n| *n == c.name).unwrap();
                    r[at].as_str()
                })
                .collect()
        })
        .collect();
    let (store, tree_root) = primary_index(&schema, &rows).unwrap();
    let root_node = {
        use prollystore::store::ChunkStore;
        store.get(&tree_root).unwrap().unwrap().to_vec()
    };
    // Finer checks first, against Dolt's table message.
    let after = Database::open(base.join("after")).unwrap();
    let theirs = after
        .source()
        .chunk(&addr(&step["tables"]["items"]))
        .unwrap();
    let theirs = prollystore_format::message::objects::TableFields::decode(&theirs).unwrap();
    assert_eq!(schema_address, Address(theirs.schema), "schema hash");
    assert_eq!(
        prollystore_format::HashProfile::Dolt.address_of(&root_node),
        prollystore_format::HashProfile::Dolt.address_of(theirs.primary_index),
        "primary index root"
    );
    let table = table_chunk(schema_address, &root_node).unwrap();
    let table_address = prollystore_format::HashProfile::Dolt.address_of(&table);
    assert_eq!(table_address, addr(&step["tables"]["items"]), "table hash");

    // Root value: the parent's, with the table listed.
    let (_tmp, dir) = copy_db(&base.join("before"));
    let mut w = StoreWriter::open(&dir).unwrap();
    let parent = addr(&steps[0]["commit"]);
    let parent_root = w.database().commit(parent).unwrap().root;
    let base_root = w.chunk(&parent_root).unwrap();
    let root = root_with_tables(&mut w, &base_root, &[(b"items".to_vec(), table_address)]).unwrap();
    let root_address = prollystore_format::HashProfile::Dolt.address_of(&root);
    assert_eq!(root_address, addr(&step["root"]), "root value hash");

    for chunk in store_chunks(&store).unwrap() {
        w.put(&chunk).unwrap();
    }
    w.put(&schema_chunk).unwrap();
    w.put(&table).unwrap();
    w.put(&root).unwrap();
    let date = millis(commit_op["date"].as_str().unwrap());
    let commit = NewCommit {
        root: root_address,
        parents: vec![parent],
        author: Person {
            name: commit_op["author_name"].as_str().unwrap(),
            email: commit_op["author_email"].as_str().unwrap(),
        },
        committer: None,
        message: commit_op["message"].as_str().unwrap(),
        author_millis: date,
        committer_millis: date as u64,
    };
    let meta = sql_meta((date / 1000) as u64);
    let written = w
        .commit_to_branch("main", &commit, &meta, (date / 1000) as u64)
        .unwrap();
    assert_eq!(written, addr(&step["commit"]));
    drop(w);
    if let Some(csv) = dolt(
        &dir,
        &[
            "sql",
            "-r",
            "csv",
            "-q",
            "SELECT COUNT(*), SUM(qty) FROM items",
        ],
    ) {
        assert!(csv.starts_with("COUNT(*),SUM(qty)\n200,"), "{csv}");
        let schema = dolt(&dir, &["schema", "show", "items"]).unwrap();
        assert!(
            schema.contains(create["schema_show"].as_str().unwrap().trim()),
            "{schema}"
        );
    }
}

/// Latency of one commit in process (commit, working set, store root, one fsync) on the
/// `basic` database; run with `--ignored --nocapture` (set `TMPDIR` to a disk-backed folder).
#[test]
#[ignore]
fn measure_commit_latency() {
    let (_tmp, dir) = copy_db(&scenario("basic/after"));
    let mut w = StoreWriter::open(&dir).unwrap();
    let head = w.database().branch_head("main").unwrap();
    let root = w.database().commit(head).unwrap().root;
    let mut parent = head;
    let mut times = Vec::new();
    for i in 0..200 {
        let message = format!("commit {i}");
        let commit = NewCommit {
            root,
            parents: vec![parent],
            author: Person {
                name: "Bench",
                email: "bench@example.com",
            },
            committer: None,
            message: &message,
            author_millis: 1_700_000_000_000 + i,
            committer_millis: 1_700_000_000_000 + i as u64,
        };
        let meta = sql_meta(1_700_000_000);
        let t = std::time::Instant::now();
        parent = w
            .commit_to_branch("main", &commit, &meta, 1_700_000_000)
            .unwrap();
        times.push(t.elapsed());
    }
    times.sort();
    eprintln!(
        "{} commits: median {:?}, p90 {:?}, max {:?}",
        times.len(),
        times[times.len() / 2],
        times[times.len() * 9 / 10],
        times[times.len() - 1]
    );
}

/// One-row update + commit in process on the 1M-row table `t` of the database that
/// `scripts/dolt_bench_db.sh` makes (copied first; `PROLLY_DOLT_WRITE_DB=DIR`), journal
/// fsync'd each time: `TMPDIR=<disk folder> PROLLY_DOLT_WRITE_DB=DIR cargo test --release -p
/// prollystore-dolt --lib measure_update_commit_1m -- --ignored --nocapture`. The criterion
/// bench `dolt_write` measures the same loop.
#[test]
#[ignore = "a measurement: needs the 1M-row bench database"]
fn measure_update_commit_1m() {
    let Some(db) = std::env::var_os("PROLLY_DOLT_WRITE_DB") else {
        eprintln!("set PROLLY_DOLT_WRITE_DB to the database scripts/dolt_bench_db.sh made");
        return;
    };
    let (_tmp, dir) = copy_db(Path::new(&db));
    let mut w = super::api::DoltWriter::open(&dir).unwrap();
    let mut times = Vec::new();
    let mut sync_free = Vec::new();
    for n in 1..=300i64 {
        let id = (n * 7919 % 1_000_000) * 7 + 3;
        let t = std::time::Instant::now();
        w.update(
            "t",
            &["id", "qty"],
            &[vec![
                Some(crate::SqlValue::Int(id)),
                Some(crate::SqlValue::Int(n)),
            ]],
        )
        .unwrap();
        let edited = t.elapsed();
        w.commit(&super::api::CommitMeta {
            message: format!("update {n}"),
            author_name: "Bench".into(),
            author_email: "bench@example.com".into(),
            author_millis: 1_700_000_000_000 + n,
            committer: None,
            committer_millis: None,
        })
        .unwrap();
        times.push(t.elapsed());
        sync_free.push(edited);
    }
    times.sort();
    sync_free.sort();
    eprintln!(
        "{} update+commit: median {:?}, p90 {:?}, max {:?}; the update alone: median {:?}",
        times.len(),
        times[times.len() / 2],
        times[times.len() * 9 / 10],
        times[times.len() - 1],
        sync_free[sync_free.len() / 2],
    );
}
