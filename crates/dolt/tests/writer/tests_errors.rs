//! Each kind of [`DoltError`] provoked through the writer's and reader's API, beside Dolt's
//! own verdict on the same input: what we call bad input Dolt refuses too, and what we call
//! unsupported Dolt does (so it is a feature we lack, not an error of the caller's). The
//! verdicts below were recorded from Dolt 2.3.1 (`/work/dolt-bin/dolt`, the vectors' build:
//! `dolt sql -q <statement>` on a database holding `TABLE_T`, `dolt branch <name>`); with
//! `PROLLY_DOLT` set the test runs Dolt and checks them live.

use std::path::Path;

use prollystore_dolt::write::vc::create_branch;
use prollystore_dolt::write::{DoltWriter, TableDef};
use prollystore_dolt::DoltError;
use prollystore_sql::{FromSql, SqlWriter};

use super::helpers::{copy_tree, dolt_output, scenario, snapshot};

const TABLE_T: &str = "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20), g POINT NOT NULL)";

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    BadInput,
    BadValue,
    Unsupported,
}

/// A statement, the kind of error we give for it, and whether Dolt 2.3.1 runs it.
const STATEMENTS: [(&str, Kind, bool); 11] = [
    ("CREATE TABLE (nonsense", Kind::BadInput, false),
    (
        "CREATE TABLE u (id INT PRIMARY KEY, x FROBNICATE)",
        Kind::BadInput,
        false,
    ),
    (
        "CREATE TABLE u (id INT PRIMARY KEY, id INT)",
        Kind::BadInput,
        false,
    ),
    (
        "CREATE TABLE u (a VARCHAR(20), PRIMARY KEY (a(10)))",
        Kind::BadInput,
        false,
    ),
    (
        "CREATE TABLE u (id INT PRIMARY KEY, g POINT SRID 5)",
        Kind::BadInput,
        false,
    ),
    (
        "CREATE TABLE u (id INT PRIMARY KEY, FOREIGN KEY (id) REFERENCES t (id) \
         ON DELETE SET DEFAULT)",
        Kind::BadInput,
        false,
    ),
    ("ALTER TABLE t FROB", Kind::BadInput, false),
    ("ALTER TABLE t DROP COLUMN nope", Kind::BadValue, false),
    ("CREATE TABLE u LIKE t", Kind::Unsupported, true),
    (
        "ALTER TABLE t ADD SPATIAL INDEX sp (g)",
        Kind::Unsupported,
        true,
    ),
    (
        "ALTER TABLE t ADD FULLTEXT INDEX ft (name)",
        Kind::Unsupported,
        true,
    ),
];

/// Branch names Dolt refuses (`dolt branch` exits 1: "… is an invalid branch name").
const BAD_BRANCHES: [&str; 3] = ["a..b", "HEAD", "x.lock"];

fn kind(e: &DoltError) -> Option<Kind> {
    match e {
        DoltError::BadInput { .. } => Some(Kind::BadInput),
        DoltError::BadValue { .. } => Some(Kind::BadValue),
        DoltError::Unsupported(_) => Some(Kind::Unsupported),
        _ => None,
    }
}

fn run(w: &mut DoltWriter, sql: &str) -> Result<(), DoltError> {
    if sql.starts_with("CREATE") {
        w.create_table(&TableDef::from_sql(sql)?)
    } else {
        w.alter(sql)
    }
}

/// Whether `dolt args…` succeeds in `dir`, if `PROLLY_DOLT` is set.
fn dolt_ok(dir: &Path, args: &[&str]) -> Option<bool> {
    dolt_output(dir, args, "T", "t@example.com").map(|o| o.status.success())
}

#[test]
fn bad_sql_is_bad_input_and_unsupported_is_what_dolt_does() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    copy_tree(&scenario("basic/before"), &dir);
    let files = snapshot(&dir);
    let mut w = prollystore_sql::writer(&dir).unwrap();
    w.create_table(&TableDef::from_sql(TABLE_T).unwrap())
        .unwrap();
    for (sql, want, _) in STATEMENTS {
        let e = run(&mut w, sql).expect_err(sql);
        assert_eq!(kind(&e), Some(want), "{sql}: {e:?}");
        if want != Kind::Unsupported {
            assert!(!e.to_string().contains("unsupported"), "{sql}: {e}");
        }
        if want == Kind::BadInput && sql.contains("nonsense") {
            // The parser's own error is kept as the source.
            assert!(std::error::Error::source(&e).is_some(), "{e:?}");
        }
    }
    drop(w);
    assert!(
        snapshot(&dir) == files,
        "a refused statement changed the files"
    );
    for name in BAD_BRANCHES {
        let e = create_branch(&dir, name, "main").expect_err(name);
        assert!(
            matches!(&e, DoltError::BadInput { what, .. } if what.contains(name)),
            "{name}: {e:?}"
        );
    }
    assert!(
        snapshot(&dir) == files,
        "a refused branch name changed the files"
    );

    // Dolt's verdicts on the same input, live.
    let live = tmp.path().join("live");
    copy_tree(&scenario("basic/before"), &live);
    if dolt_ok(&live, &["sql", "-q", TABLE_T]).is_none() {
        return;
    }
    assert_eq!(dolt_ok(&live, &["add", "-A"]), Some(true));
    assert_eq!(dolt_ok(&live, &["commit", "-m", "t"]), Some(true));
    for (sql, _, dolt_runs) in STATEMENTS {
        assert_eq!(
            dolt_ok(&live, &["sql", "-q", sql]),
            Some(dolt_runs),
            "dolt: {sql}"
        );
        assert_eq!(dolt_ok(&live, &["reset", "--hard"]), Some(true));
    }
    for name in BAD_BRANCHES {
        assert_eq!(
            dolt_ok(&live, &["branch", name]),
            Some(false),
            "dolt branch {name}"
        );
    }
}
