//! Crash safety: a child process commits in a loop and is killed (SIGKILL) at random moments;
//! after every kill our reader opens the database, every commit the child reported as
//! returned is in the branch's log, and the next writer opens it and commits on. (The kill -9
//! loop through the CLI, checked with Dolt too, is `scripts/dolt_crash_loop.sh`.)

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use super::api::{CommitMeta, DoltWriter};
use super::tests::{copy_db, scenario};
use crate::db::Database;
use crate::sql_value::SqlValue;

/// Names the database directory the child writes to; set only in the child.
const CHILD_ENV: &str = "PROLLY_CRASH_CHILD_DB";
/// Kill trials in the quick test.
const TRIALS: u64 = 30;

/// The child's loop: insert a row, commit, report the commit on stdout, forever (until it
/// is killed). Run only as a child of [`killed_writers_leave_every_returned_commit`].
#[test]
#[ignore = "the child half of killed_writers_leave_every_returned_commit"]
fn crash_child_writer() {
    let Some(dir) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let trial: i64 = std::env::var("PROLLY_CRASH_TRIAL")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(0);
    let mut w = DoltWriter::open(Path::new(&dir)).expect("child: open");
    let mut out = std::io::stdout().lock();
    for i in 0.. {
        let id = 100_000 + trial * 10_000 + i;
        w.insert(
            "customers",
            &["id", "email", "name", "city"],
            &[vec![
                Some(SqlValue::Int(id)),
                Some(SqlValue::Text(format!("crash{id}@example.com"))),
                Some(SqlValue::Text("Crash".into())),
                Some(SqlValue::Text("Kill".into())),
            ]],
        )
        .expect("child: insert");
        let commit = w
            .commit(&CommitMeta {
                message: format!("crash trial row {id}"),
                author_name: "Crash".into(),
                author_email: "crash@example.com".into(),
                author_millis: 1_700_000_000_000 + i,
                committer: None,
                committer_millis: None,
            })
            .expect("child: commit");
        writeln!(out, "{commit}").expect("child: report");
        out.flush().expect("child: report");
    }
}

#[test]
fn killed_writers_leave_every_returned_commit() {
    let (_tmp, dir) = copy_db(&scenario("branches/after"));
    let exe = std::env::current_exe().unwrap();
    let mut returned: Vec<String> = Vec::new();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for trial in 0..TRIALS {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "write::crash_tests::crash_child_writer",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, &dir)
            .env("PROLLY_CRASH_TRIAL", trial.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Some kills land while the child opens the database, most between or inside commits.
        // On a loaded machine (a debug build beside other builds) opening alone can outlast
        // the delay: while no commit has returned, every five trials allow a longer one.
        let stretch = if returned.is_empty() {
            1 + trial / 5
        } else {
            1
        };
        std::thread::sleep(Duration::from_micros(seed % (60_000 * stretch)));
        if let Ok(Some(status)) = child.try_wait() {
            let mut err = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            panic!("trial {trial}: the child writer stopped by itself ({status}):\n{err}");
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let mut out = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        // Only complete lines were reported after their commit returned.
        let complete = out.rfind('\n').map_or("", |end| &out[..end]);
        returned.extend(
            complete
                .lines()
                .filter(|l| l.len() == 32 && l.bytes().all(|b| b.is_ascii_alphanumeric()))
                .map(str::to_string),
        );
        let db = Database::open(&dir)
            .unwrap_or_else(|e| panic!("trial {trial}: our reader cannot open it: {e}"));
        let head = db.branch_head("main").unwrap();
        let log: Vec<String> = db
            .log(head)
            .map(|c| c.unwrap().address.to_string())
            .collect();
        for c in &returned {
            assert!(
                log.contains(c),
                "trial {trial}: returned commit {c} is lost"
            );
        }
    }
    assert!(
        !returned.is_empty(),
        "no child commit returned before its kill: the delays are too short to test anything"
    );
    // A writer opens what the last kill left and commits on it.
    let mut w = DoltWriter::open(&dir).unwrap();
    w.delete("customers", &[vec![SqlValue::Int(1)]]).unwrap();
    w.commit(&CommitMeta {
        message: "after the kills".into(),
        author_name: "Crash".into(),
        author_email: "crash@example.com".into(),
        author_millis: 1_800_000_000_000,
        committer: None,
        committer_millis: None,
    })
    .unwrap();
}

/// The journal of the database in `dir`.
fn journal_of(dir: &Path) -> std::path::PathBuf {
    dir.join(".dolt/noms")
        .join(super::storage::journal_append::JOURNAL_FILE)
}

/// Inserts `rows` customers (enough for a tree of several levels) and commits, with a fixed
/// author and date, so that a rerun makes the same table and root value.
fn insert_and_commit(dir: &Path, rows: i64) {
    let mut w = DoltWriter::open(dir).unwrap();
    let batch: Vec<Vec<Option<SqlValue>>> = (0..rows)
        .map(|i| {
            let id = 500_000 + i;
            vec![
                Some(SqlValue::Int(id)),
                Some(SqlValue::Text(format!("cut{id}@example.com"))),
                Some(SqlValue::Text(format!("Cut {id}"))),
                Some(SqlValue::Text("Torn".into())),
            ]
        })
        .collect();
    w.insert("customers", &["id", "email", "name", "city"], &batch)
        .unwrap();
    w.commit(&CommitMeta {
        message: "cut".into(),
        author_name: "Crash".into(),
        author_email: "crash@example.com".into(),
        author_millis: 1_700_000_000_000,
        committer: None,
        committer_millis: None,
    })
    .unwrap();
}

/// Every chunk reachable from the store root of the database in `dir` (datasets: branches,
/// working sets, tags) is readable; returns how many were walked.
fn assert_all_reachable(dir: &Path, what: &str) -> usize {
    let db = Database::open(dir).unwrap_or_else(|e| panic!("{what}: open: {e}"));
    let mut seen = std::collections::HashSet::new();
    let mut todo = vec![db.source().root()];
    while let Some(a) = todo.pop() {
        if !seen.insert(a) {
            continue;
        }
        let chunk = db
            .source()
            .chunk(&a)
            .unwrap_or_else(|e| panic!("{what}: chunk {a} is reachable but unreadable: {e}"));
        super::storage::refs::for_each_ref(a, &chunk, &mut |r| todo.push(r)).unwrap();
    }
    seen.len()
}

/// A kill can cut a `write` of a commit's batch between pages: whole chunk records stay in
/// the journal without the root record that was to follow. The same write run again then
/// makes the same root value and table; before, it found their records in the journal, took
/// the whole subtree under them as stored and published a root reaching chunks that were
/// never written (the crash loop's seed 42, a working set whose schema was missing). Here the
/// batch is cut at many points, each followed by a torn record, and the write rerun to the
/// end: everything reachable is then readable, by us and by the writer that appends next.
#[test]
fn writes_cut_short_then_rerun_leave_nothing_missing() {
    use crate::chunks::journal::scan_records;
    let (_base_tmp, base) = copy_db(&scenario("branches/after"));
    let before = std::fs::metadata(journal_of(&base)).unwrap().len();
    let (_full_tmp, full) = copy_db(&base);
    insert_and_commit(&full, 3000);
    let bytes = std::fs::read(journal_of(&full)).unwrap();
    let added = &bytes[before as usize..];
    let scan = scan_records(added, before, "added").unwrap();
    let first_root = scan.roots.first().expect("the write's root record").offset;
    // The batch before the first root record, in write order: children before parents, so
    // that any prefix of it is closed under references.
    let base_db = Database::open(&base).unwrap();
    let mut written = std::collections::HashSet::new();
    let mut batch_chunks = 0;
    for (a, _) in scan
        .chunks
        .iter()
        .filter(|(_, l)| l.payload_offset < first_root)
    {
        let chunk = Database::open(&full).unwrap().source().chunk(a).unwrap();
        super::storage::refs::for_each_ref(*a, &chunk, &mut |r| {
            assert!(
                written.contains(&r) || base_db.source().contains(&r),
                "chunk {a} is written before {r}, which it refers to"
            );
        })
        .unwrap();
        written.insert(*a);
        batch_chunks += 1;
    }
    assert!(
        batch_chunks > 20,
        "a batch of {batch_chunks} chunks is too small to cut"
    );
    let span = first_root - before;
    for cut in 1..=24u64 {
        let at = (before + span * cut / 25) as usize;
        let (_tmp, dir) = copy_db(&base);
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(journal_of(&dir))
            .unwrap();
        // The records before `at` whole, the one it falls in torn: what a cut `write` leaves.
        f.write_all(&bytes[before as usize..at.min(bytes.len())])
            .unwrap();
        drop(f);
        insert_and_commit(&dir, 3000);
        let n = assert_all_reachable(&dir, &format!("cut at {at}"));
        assert!(n > batch_chunks, "cut at {at}: only {n} chunks reachable");
        // And the next writer appends on it.
        let mut w = DoltWriter::open(&dir).unwrap();
        w.delete("customers", &[vec![SqlValue::Int(500_001)]])
            .unwrap();
        drop(w);
    }
}
