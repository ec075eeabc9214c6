//! Helpers of the writer's tests that use only the public API: the scenarios' databases,
//! copies of them, `dolt` runs (when `PROLLY_DOLT` names a binary), snapshots of a database's
//! files, commit metadata. Shared by the crate's internal tests (`src/write/mod.rs`) and the
//! integration tests of `tests/writer/`, which both name this crate `prollystore_dolt`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use prollystore_dolt::write::{ColumnDef, CommitMeta};

/// Environment variable naming a `dolt` binary to check our output with.
pub(crate) const DOLT_ENV: &str = "PROLLY_DOLT";

pub(crate) fn scenario(name: &str) -> PathBuf {
    prollystore_test_vectors::require("dolt-write").join(name)
}

/// Copies a directory tree, making the copies writable (the vectors are read-only).
pub(crate) fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::write(&target, std::fs::read(entry.path()).unwrap()).unwrap();
        }
    }
}

/// A writable copy of a vector database in a fresh temporary directory.
pub(crate) fn copy_db(db: &Path) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    copy_tree(db, &dir);
    (tmp, dir)
}

/// Runs `dolt args…` in `dir` with a throwaway HOME, if `PROLLY_DOLT` is set; returns stdout.
pub(crate) fn dolt(dir: &Path, args: &[&str]) -> Option<String> {
    dolt_as(dir, args, "Vector Bot", "bot@example.com").map(|out| String::from_utf8(out).unwrap())
}

/// Runs `dolt args…` in `dir` with a throwaway HOME whose global config names `user` and
/// `email`, if `PROLLY_DOLT` is set; returns stdout as bytes (binary columns print raw).
pub(crate) fn dolt_as(dir: &Path, args: &[&str], user: &str, email: &str) -> Option<Vec<u8>> {
    let out = dolt_output(dir, args, user, email)?;
    assert!(
        out.status.success(),
        "dolt {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Some(out.stdout)
}

/// [`dolt_as`] whether or not Dolt succeeds: its whole output, if `PROLLY_DOLT` is set.
pub(crate) fn dolt_output(
    dir: &Path,
    args: &[&str],
    user: &str,
    email: &str,
) -> Option<std::process::Output> {
    let bin = std::env::var_os(DOLT_ENV).filter(|v| !v.is_empty())?;
    let home = dir.parent().unwrap().join("home");
    std::fs::create_dir_all(home.join(".dolt")).unwrap();
    let config = serde_json::json!({
        "user.name": user,
        "user.email": email,
        "metrics.disabled": "true",
    });
    std::fs::write(home.join(".dolt/config_global.json"), config.to_string()).unwrap();
    Some(
        Command::new(bin)
            .args(args)
            .current_dir(dir)
            .env("HOME", &home)
            .env("TZ", "UTC")
            .env("NO_COLOR", "1")
            .output()
            .unwrap(),
    )
}

/// `2024-01-02T09:30:00Z` → Unix milliseconds.
pub(crate) fn millis(date: &str) -> i64 {
    let n = |r: std::ops::Range<usize>| date[r].parse::<i64>().unwrap();
    let (y, m, d) = (n(0..4), n(5..7), n(8..10));
    // Days from civil (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    ((days * 24 + n(11..13)) * 60 + n(14..16)) * 60_000 + n(17..19) * 1000
}

/// Every file under `dir` with its bytes.
pub(crate) fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

pub(crate) fn meta(message: &str) -> CommitMeta {
    CommitMeta {
        message: message.into(),
        author_name: "Test Writer".into(),
        author_email: "writer@example.com".into(),
        author_millis: 1_710_000_000_000,
        committer: None,
        committer_millis: None,
    }
}

/// Runs `dolt args…` in `dir` with a throwaway HOME (user `Dolt User`), if `PROLLY_DOLT` is
/// set.
pub(crate) fn dolt_user(dir: &Path, args: &[&str]) -> Option<String> {
    dolt_bytes(dir, args).map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// [`dolt_user`]'s standard output as bytes (binary columns print raw).
pub(crate) fn dolt_bytes(dir: &Path, args: &[&str]) -> Option<Vec<u8>> {
    dolt_as(dir, args, "Dolt User", "dolt@example.com")
}

/// A column as `CREATE TABLE` declares it: its type text (as `dolt schema show` prints it),
/// whether it may be NULL, and its default as Dolt stores it.
pub(crate) fn column(
    name: &str,
    sql_type: &str,
    nullable: bool,
    default: Option<&str>,
) -> ColumnDef {
    ColumnDef {
        name: name.into(),
        sql_type: sql_type.into(),
        nullable,
        default: default.map(str::to_string),
        auto_increment: false,
        comment: None,
        tag: None,
        generated: None,
    }
}
