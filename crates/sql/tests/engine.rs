//! The seam between the storage crate and this one: a database or writer opened with the
//! engine computes what Dolt computes; one opened without it refuses, naming the table and
//! column (or check), and writes nothing.

use std::path::{Path, PathBuf};
use std::process::Command;

// The Dolt crate's test helpers (public API only).
#[allow(dead_code)]
#[path = "../../dolt/tests/write/helpers.rs"]
mod helpers;

use helpers::{copy_db, copy_tree, scenario, snapshot};

use prollystore_dolt::csv_export::export_csv;
use prollystore_dolt::write::{CommitMeta, DoltWriter, TableDef};
use prollystore_dolt::{Database, SqlValue, State};
use prollystore_sql::FromSql;

const CREATE: &str = "CREATE TABLE g (id INT PRIMARY KEY, n INT, \
    v BIGINT AS (n * 2 + id) VIRTUAL, s VARCHAR(20) AS (concat('n=', n)) STORED, \
    d DECIMAL(6,2) DEFAULT (n / 4), KEY kv (v))";
// A CHECK in a table of its own: Dolt 2.3.1 neither enforces nor prints the CHECKs of a table
// with a VIRTUAL column (this writer enforces them).
const CREATE_CHECKED: &str =
    "CREATE TABLE k (id INT PRIMARY KEY, n INT, CONSTRAINT pos CHECK (n > 0))";
const INSERT: &str = "INSERT INTO g (id, n) VALUES (1, 3), (2, 10), (3, 7); \
    INSERT INTO k VALUES (1, 1)";

/// A writable copy of the basic scenario's first database.
fn fresh_db() -> (tempfile::TempDir, PathBuf) {
    copy_db(&scenario("basic/before"))
}

fn meta() -> CommitMeta {
    CommitMeta {
        message: "g".into(),
        author_name: "T".into(),
        author_email: "t@example.com".into(),
        author_millis: 1_704_067_200_000,
        committer: None,
        committer_millis: None,
    }
}

/// Our writer, with the engine: the table and its rows, committed.
fn write_ours(dir: &Path) -> prollystore_format::Address {
    let mut w = prollystore_sql::writer(dir).unwrap();
    w.create_table(&TableDef::from_sql(CREATE).unwrap())
        .unwrap();
    w.create_table(&TableDef::from_sql(CREATE_CHECKED).unwrap())
        .unwrap();
    let int = |v| Some(SqlValue::Int(v));
    w.insert(
        "g",
        &["id", "n"],
        &[
            vec![int(1), int(3)],
            vec![int(2), int(10)],
            vec![int(3), int(7)],
        ],
    )
    .unwrap();
    w.insert("k", &["id", "n"], &[vec![int(1), int(1)]])
        .unwrap();
    w.commit(&meta()).unwrap()
}

fn csv(db: &Database) -> prollystore_dolt::Result<String> {
    let t = db.table_at("main", State::Committed, "g")?;
    let mut out = Vec::new();
    export_csv(db, &t, &mut out)?;
    Ok(String::from_utf8(out).unwrap())
}

#[test]
fn with_the_engine_rows_are_computed_and_without_it_reads_name_the_column() {
    let (_tmp, dir) = fresh_db();
    write_ours(&dir);
    let text = csv(&prollystore_sql::open(&dir).unwrap()).unwrap();
    assert_eq!(
        text,
        "id,n,v,s,d\n1,3,7,n=3,0.75\n2,10,22,n=10,2.50\n3,7,17,n=7,1.75\n"
    );
    // Without an engine: the VIRTUAL column is refused by name, never read as NULL.
    let err = csv(&Database::open(&dir).unwrap()).unwrap_err().to_string();
    assert!(
        err.contains("\"v\"") && err.contains("\"g\"") && err.contains("prollystore_sql::open"),
        "{err}"
    );
}

#[test]
fn without_the_engine_writes_that_need_one_are_refused_and_write_nothing() {
    let (_tmp, dir) = fresh_db();
    write_ours(&dir);
    let before = snapshot(&dir);
    let mut w = DoltWriter::open(&dir).unwrap();
    let err = w
        .insert(
            "k",
            &["id", "n"],
            &[vec![Some(SqlValue::Int(4)), Some(SqlValue::Int(1))]],
        )
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("\"pos\"") && err.contains("\"k\"") && err.contains("with_expressions"),
        "{err}"
    );
    // A table without expressions needs no engine.
    let plain = TableDef::from_sql("CREATE TABLE p (id INT PRIMARY KEY, t TEXT)").unwrap();
    w.create_table(&plain).unwrap();
    w.insert("p", &["id", "t"], &[vec![Some(SqlValue::Int(1)), None]])
        .unwrap();
    drop(w);
    assert!(snapshot(&dir) == before, "a refused write changed a file");
    // The same with the engine: the check runs (and fails for n = 0, as in MySQL).
    let mut w = prollystore_sql::writer(&dir).unwrap();
    let err = w
        .insert(
            "k",
            &["id", "n"],
            &[vec![Some(SqlValue::Int(4)), Some(SqlValue::Int(0))]],
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("\"pos\"") && err.contains("violated"), "{err}");
}

/// Runs `dolt args…` in `dir` with a throwaway HOME, if `PROLLY_DOLT` is set.
fn dolt(dir: &Path, args: &[&str]) -> Option<String> {
    let bin = std::env::var_os("PROLLY_DOLT").filter(|v| !v.is_empty())?;
    let home = dir.parent().unwrap().join("home");
    std::fs::create_dir_all(home.join(".dolt")).unwrap();
    std::fs::write(
        home.join(".dolt/config_global.json"),
        r#"{"user.name":"T","user.email":"t@example.com","metrics.disabled":"true"}"#,
    )
    .unwrap();
    let date = "2024-01-01T00:00:00";
    let out = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .env("HOME", &home)
        .env("TZ", "UTC")
        .env("NO_COLOR", "1")
        .env("DOLT_AUTHOR_DATE", date)
        .env("DOLT_COMMITTER_DATE", date)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "dolt {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).unwrap())
}

/// Dolt makes the same table from the same SQL and inserts the same rows: its commit is ours,
/// it shows the rows we compute, and we read what it computed as it shows them.
#[test]
fn dolt_computes_and_commits_what_we_do() {
    let (tmp, ours) = fresh_db();
    let theirs = tmp.path().join("theirs");
    copy_tree(&ours, &theirs);
    if dolt(
        &theirs,
        &[
            "sql",
            "-q",
            &format!("{CREATE}; {CREATE_CHECKED}; {INSERT}"),
        ],
    )
    .is_none()
    {
        eprintln!("PROLLY_DOLT not set: the engine not checked against Dolt");
        return;
    }
    dolt(&theirs, &["add", "-A"]).unwrap();
    dolt(
        &theirs,
        &[
            "commit",
            "-m",
            "g",
            "--author",
            "T <t@example.com>",
            "--date",
            "2024-01-01T00:00:00",
        ],
    )
    .unwrap();
    let commit = write_ours(&ours);
    let db = prollystore_sql::open(&theirs).unwrap();
    assert_eq!(db.branch_head("main").unwrap(), commit, "commit hash");
    let shown = dolt(
        &theirs,
        &["sql", "-r", "csv", "-q", "SELECT * FROM g ORDER BY id"],
    )
    .unwrap();
    assert_eq!(csv(&db).unwrap(), shown);
    assert_eq!(csv(&prollystore_sql::open(&ours).unwrap()).unwrap(), shown);
    // The CREATE TABLE text as `dolt schema show` prints it.
    let root = db.root_at("main", State::Committed).unwrap();
    for name in ["g", "k"] {
        let t = db.table(&root, name).unwrap();
        let ours_text = prollystore_sql::show_create_table(&db, &root, &t).unwrap();
        let shown = dolt(&theirs, &["schema", "show", name]).unwrap();
        assert!(
            shown.contains(&format!("{ours_text};")),
            "ours:\n{ours_text}\nDolt:\n{shown}"
        );
    }
}
