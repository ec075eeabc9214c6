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
