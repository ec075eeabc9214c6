//! The Dolt tour (`examples/dolt_tour.rs`, issue #35) run as a test, so CI runs it, and its
//! table checked against Dolt: the `scores` table the writer made has the table hash Dolt
//! gives the same `CREATE TABLE` and rows. With `PROLLY_DOLT` set, Dolt makes that table in a
//! second copy of the database and is asked for its hash (and reads the writer's commit);
//! without it, the hash recorded from such a run (Dolt 2.3.1) is the reference.

use std::path::Path;
use std::process::Command;

use prollystore_dolt::{Database, State};

#[path = "../examples/dolt_tour.rs"]
mod dolt_tour;

/// `dolt_hashof_table('scores')` after Dolt 2.3.1 ran the tour's CREATE TABLE and INSERT on
/// a copy of `dolt-db/vecdb` (printed by this test when `PROLLY_DOLT` is set).
const DOLT_SCORES_HASH: &str = "fnb7rtmhmlri9r54qjkm2ocq0hfi9b1h";

/// Runs `dolt args…` in `dir` with a throwaway HOME and `TZ=UTC`, if `PROLLY_DOLT` is set.
fn dolt(dir: &Path, home: &Path, args: &[&str]) -> Option<String> {
    let bin = std::env::var_os("PROLLY_DOLT").filter(|v| !v.is_empty())?;
    std::fs::create_dir_all(home.join(".dolt")).unwrap();
    let config = r#"{"user.name":"Ada","user.email":"ada@example.com","metrics.disabled":"true"}"#;
    std::fs::write(home.join(".dolt/config_global.json"), config).unwrap();
    let out = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .env("HOME", home)
        .env("TZ", "UTC")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "dolt {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).unwrap())
}

#[test]
fn dolt_tour_runs_and_its_table_is_dolts() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = prollystore_test_vectors::writable_copy("dolt-db/vecdb", tmp.path()).unwrap();
    dolt_tour::tour(&dir).expect("the Dolt tour");

    let db = Database::open(&dir).unwrap();
    let ours = db
        .table_at("main", State::Committed, "scores")
        .unwrap()
        .address;
    let home = tmp.path().join("home");
    let Some(log) = dolt(&dir, &home, &["log", "-n", "1", "--oneline"]) else {
        assert_eq!(
            ours.to_string(),
            DOLT_SCORES_HASH,
            "the scores table's hash"
        );
        return;
    };
    // Dolt reads the writer's commit, and makes the same table from the same statements.
    assert!(log.contains("Add scores"), "{log}");
    let copy = tmp.path().join("by-dolt");
    std::fs::create_dir_all(&copy).unwrap();
    let by_dolt = prollystore_test_vectors::writable_copy("dolt-db/vecdb", &copy).unwrap();
    let values: Vec<String> = (0..100).map(|i| format!("('user{i:03}', {i})")).collect();
    let sql = format!(
        "CREATE TABLE scores (name VARCHAR(40) PRIMARY KEY, score BIGINT); \
         INSERT INTO scores VALUES {}; SELECT dolt_hashof_table('scores');",
        values.join(", ")
    );
    let out = dolt(&by_dolt, &home, &["sql", "-r", "csv", "-q", &sql]).unwrap();
    let theirs = out.lines().last().unwrap().trim().to_string();
    println!("Dolt's scores table: {theirs}");
    assert_eq!(ours.to_string(), theirs, "the scores table's hash");
    assert_eq!(theirs, DOLT_SCORES_HASH, "the recorded hash");
}
