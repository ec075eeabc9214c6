//! `ALTER TABLE` through [`DoltWriter::alter`] beside Dolt's own: the same statements run by
//! `dolt sql` on a copy of the `basic/before` write scenario (a database right after `dolt
//! init`), committed with a pinned author and date, give the same commit. The hash below is
//! the one Dolt 2.3.1 (`/work/dolt-bin/dolt`, the vectors' build) made; with `PROLLY_DOLT` set
//! the test runs Dolt and compares live. Bad statements are refused with the name they got
//! wrong and leave the database's files as they were.

use prollystore_sql::{FromSql, SqlWriter};
use std::path::Path;

use super::api_tests::{dolt_dated, snapshot};
use super::helpers::{copy_tree, dolt, scenario, DOLT_ENV};
use prollystore_dolt::write::TableDef;
use prollystore_dolt::write::{CommitMeta, RowMode};

const DATE: &str = "2024-01-01T00:00:00";

const CREATE: &str = "CREATE TABLE t (id INT PRIMARY KEY, code VARBINARY(8), \
    name VARCHAR(20) COLLATE utf8mb4_0900_ai_ci, qty INT, note TEXT, KEY kq (qty))";
const ROWS: &str = "INSERT INTO t (id, name, qty, note) VALUES (1, 'Straße', 5, NULL), \
    (2, 'alpha', 7, 'n2'), (3, 'Beta', NULL, 'n3')";
const KEYLESS: &str = "CREATE TABLE k (a INT, b VARCHAR(10))";
const KEYLESS_ROWS: &str = "INSERT INTO k VALUES (1, 'x'), (2, 'y')";

/// The statements, each run by `DoltWriter::alter` and by `dolt sql -q`.
const ALTERS: [&str; 11] = [
    "ALTER TABLE t ADD COLUMN extra INT",
    "ALTER TABLE t ADD COLUMN flag TINYINT NOT NULL DEFAULT 1 AFTER code",
    "ALTER TABLE t MODIFY COLUMN name VARCHAR(40) COLLATE utf8mb4_0900_ai_ci",
    "ALTER TABLE t MODIFY COLUMN qty BIGINT",
    "ALTER TABLE t ADD UNIQUE INDEX ucode (code)",
    "ALTER TABLE t ADD INDEX kname (name, qty)",
    "ALTER TABLE t DROP COLUMN note",
    "ALTER TABLE t RENAME COLUMN extra TO more",
    "ALTER TABLE t COMMENT = 'altered'",
    "ALTER TABLE k ADD PRIMARY KEY (a)",
    "ALTER TABLE k RENAME TO k2",
];

/// Dolt 2.3.1's commit of CREATE, ROWS, KEYLESS, KEYLESS_ROWS and ALTERS, then DROP TABLE k2.
const DOLT_COMMIT: &str = "l8d6otnoihe41gpfb7oi4q5s5kv2ukpp";

fn meta() -> CommitMeta {
    CommitMeta {
        message: "alter".into(),
        author_name: "T".into(),
        author_email: "t@example.com".into(),
        author_millis: 1_704_067_200_000,
        committer: None,
        committer_millis: None,
    }
}

fn before(dir: &Path) {
    copy_tree(&scenario("basic/before"), dir);
}

fn ours(dir: &Path) -> String {
    before(dir);
    let mut w = prollystore_sql::writer(dir).unwrap();
    w.create_table(&TableDef::from_sql(CREATE).unwrap())
        .unwrap();
    w.create_table(&TableDef::from_sql(KEYLESS).unwrap())
        .unwrap();
    w.apply_text(
        RowMode::Insert,
        "t",
        &["id", "name", "qty", "note"],
        &[
            vec![Some("1"), Some("Straße"), Some("5"), None],
            vec![Some("2"), Some("alpha"), Some("7"), Some("n2")],
            vec![Some("3"), Some("Beta"), None, Some("n3")],
        ],
    )
    .unwrap();
    w.apply_text(
        RowMode::Insert,
        "k",
        &["a", "b"],
        &[vec![Some("1"), Some("x")], vec![Some("2"), Some("y")]],
    )
    .unwrap();
    for sql in ALTERS {
        w.alter(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    w.drop_table("k2").unwrap();
    w.commit(&meta()).unwrap().to_string()
}

#[test]
fn alter_statements_commit_as_dolt_commits_them() {
    let tmp = tempfile::tempdir().unwrap();
    let commit = ours(&tmp.path().join("ours"));
    if std::env::var_os(DOLT_ENV)
        .filter(|v| !v.is_empty())
        .is_none()
    {
        assert_eq!(commit, DOLT_COMMIT, "the commit Dolt made");
        return;
    }
    let theirs = tmp.path().join("theirs");
    before(&theirs);
    // Codes stay NULL: UNIQUE ucode over the binary column lets NULLs repeat.
    let mut all = vec![CREATE, KEYLESS, ROWS, KEYLESS_ROWS];
    all.extend(ALTERS);
    all.push("DROP TABLE k2");
    for q in all {
        dolt(&theirs, &["sql", "-q", q]).unwrap();
    }
    dolt(&theirs, &["add", "-A"]).unwrap();
    dolt_dated(
        &theirs,
        &[
            "commit",
            "-m",
            "alter",
            "--author",
            "T <t@example.com>",
            "--date",
            DATE,
        ],
        DATE,
    );
    let db = prollystore_sql::open(&theirs).unwrap();
    let head = db.branch_head("main").unwrap().to_string();
    assert_eq!(commit, head, "Dolt's commit of the same statements");
}

/// Bad statements: each refused naming what it got wrong, the files as they were.
#[test]
fn bad_alter_statements_change_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    before(&dir);
    {
        let mut w = prollystore_sql::writer(&dir).unwrap();
        w.create_table(&TableDef::from_sql(CREATE).unwrap())
            .unwrap();
        w.apply_text(
            RowMode::Insert,
            "t",
            &["id", "code", "name"],
            &[
                vec![Some("1"), Some("a"), Some("x")],
                vec![Some("2"), Some("a"), Some("y")],
            ],
        )
        .unwrap();
        w.commit(&meta()).unwrap();
    }
    let files = snapshot(&dir);
    let cases = [
        ("ALTER TABLE t ADD COLUMN", "ALTER TABLE"),
        ("ALTER TABLE nope ADD COLUMN c INT", "nope"),
        ("ALTER TABLE t DROP COLUMN nope", "nope"),
        ("ALTER TABLE t RENAME COLUMN nope TO other", "nope"),
        ("ALTER TABLE t DROP INDEX nope", "nope"),
        ("ALTER TABLE t RENAME INDEX nope TO other", "nope"),
        ("ALTER TABLE t ADD COLUMN name INT", "name"),
        (
            "ALTER TABLE t ADD UNIQUE INDEX ucode (code)",
            "Duplicate entry",
        ),
        ("ALTER TABLE t MODIFY COLUMN name VARCHAR(0)", "name"),
        ("ALTER TABLE t MODIFY COLUMN code INT NOT NULL", "code"),
        (
            "ALTER TABLE t ADD CONSTRAINT fk FOREIGN KEY (qty) REFERENCES t(id)",
            "FOREIGN KEY",
        ),
    ];
    for (sql, named) in cases {
        let mut w = prollystore_sql::writer(&dir).unwrap();
        let err = w
            .alter(sql)
            .err()
            .unwrap_or_else(|| panic!("{sql} was accepted"));
        let text = err.to_string();
        assert!(text.contains(named), "{sql}: {text}");
        drop(w);
        assert!(snapshot(&dir) == files, "{sql} changed the files");
    }
}
