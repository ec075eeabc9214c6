//! The commands: `prolly-sql` on its own, and `prolly dolt DB sql`, which runs it. The second
//! needs the `prolly` binary of the main workspace: `PROLLY_BIN` names it (CI sets it; the
//! test says so and stops without it).

use std::path::{Path, PathBuf};
use std::process::Command;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn expected(name: &str) -> Vec<u8> {
    std::fs::read(data().join("expected").join(name)).unwrap()
}

#[test]
fn prolly_sql_prints_dolts_output() {
    let db = data().join("sysdb");
    let out = Command::new(env!("CARGO_BIN_EXE_prolly-sql"))
        .args(["--db"])
        .arg(&db)
        .args(["-r", "csv", "-q", "select * from t"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.stdout, expected("01.csv"));
    // Another state, as `dolt --branch feat sql` reads it.
    let out = Command::new(env!("CARGO_BIN_EXE_prolly-sql"))
        .arg("--db")
        .arg(&db)
        .args(["-b", "feat", "-r", "csv", "select count(*) from t"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "count(*)\n4\n");
    // A bad query: one line on stderr, exit code 1, nothing on stdout.
    let out = Command::new(env!("CARGO_BIN_EXE_prolly-sql"))
        .arg("--db")
        .arg(&db)
        .arg("select * from nosuch")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("error: table \"nosuch\""), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn prolly_dolt_sql_runs_prolly_sql() {
    let Ok(prolly) = std::env::var("PROLLY_BIN") else {
        eprintln!("PROLLY_BIN not set: `prolly dolt DB sql` not tested");
        return;
    };
    let run = |args: &[&str]| {
        Command::new(&prolly)
            .arg("dolt")
            .arg(data().join("sysdb"))
            .arg("sql")
            .args(args)
            .env("PROLLY_SQL", env!("CARGO_BIN_EXE_prolly-sql"))
            .output()
            .unwrap()
    };
    let out = run(&["select * from t as of 'main~1'", "-r", "csv"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.stdout, expected("09.csv"));
    let out = run(&["select * from dolt_branches", "-r", "csv"]);
    assert_eq!(out.stdout, expected("34.csv"));
    let out = run(&["select * from nosuch"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("error: table \"nosuch\""), "{err}");
}
