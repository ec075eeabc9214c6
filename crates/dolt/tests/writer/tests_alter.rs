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
use prollystore_dolt::write::{CommitMeta, DoltWriter, RowMode};

pub(super) const DATE: &str = "2024-01-01T00:00:00";

const CREATE: &str = "CREATE TABLE t (id INT PRIMARY KEY, code VARBINARY(8), \
    name VARCHAR(20) COLLATE utf8mb4_0900_ai_ci, qty INT, note TEXT, KEY kq (qty))";
const ROWS: &str = "INSERT INTO t (id, name, qty, note) VALUES (1, 'Straße', 5, NULL), \
    (2, 'alpha', 7, 'n2'), (3, 'Beta', NULL, 'n3')";
const KEYLESS: &str = "CREATE TABLE k (a INT, b VARCHAR(10))";
const KEYLESS_ROWS: &str = "INSERT INTO k VALUES (1, 'x'), (2, 'y')";

/// The statements, each run by `DoltWriter::alter` and by `dolt sql -q`.
const ALTERS: [&str; 12] = [
    "ALTER TABLE t ADD COLUMN extra INT",
    // NOT NULL without a default: the stored rows take the type's implicit value.
    "ALTER TABLE t ADD COLUMN z INT NOT NULL, ADD COLUMN zs VARCHAR(3) NOT NULL, \
     ADD COLUMN zd DATETIME NOT NULL",
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
const DOLT_COMMIT: &str = "rviahrpgh6ourh3nqrfb95sfcnn04j0s";

pub(super) fn meta() -> CommitMeta {
    CommitMeta {
        message: "alter".into(),
        author_name: "T".into(),
        author_email: "t@example.com".into(),
        author_millis: 1_704_067_200_000,
        committer: None,
        committer_millis: None,
    }
}

pub(super) fn before(dir: &Path) {
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
    // Through the SQL entry point, as `dolt sql` runs it.
    w.alter("DROP TABLE k2").unwrap();
    w.alter("DROP TABLE IF EXISTS k2").unwrap();
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
    // Codes stay NULL: UNIQUE ucode over the binary column lets NULLs repeat.
    let mut all = vec![CREATE, KEYLESS, ROWS, KEYLESS_ROWS];
    all.extend(ALTERS);
    all.push("DROP TABLE k2");
    let head = dolt_commit_of(&tmp.path().join("theirs"), &all);
    assert_eq!(commit, head, "Dolt's commit of the same statements");
}

/// Dolt's commit (pinned author and date) of `statements` run by `dolt sql` on a copy of
/// the `basic/before` scenario at `theirs`.
pub(super) fn dolt_commit_of(theirs: &Path, statements: &[&str]) -> String {
    before(theirs);
    for q in statements {
        dolt(theirs, &["sql", "-q", q]).unwrap();
    }
    dolt(theirs, &["add", "-A"]).unwrap();
    dolt_dated(
        theirs,
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
    let db = prollystore_sql::open(theirs).unwrap();
    db.branch_head("main").unwrap().to_string()
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
        // An inline key on a renamed column: go-mysql-server looks it up by the old name.
        (
            "ALTER TABLE t CHANGE COLUMN name nm VARCHAR(20) UNIQUE",
            "'nm' doesn't exist",
        ),
        // Not done yet, named.
        (
            "ALTER TABLE t MODIFY COLUMN id INT PRIMARY KEY",
            "inline PRIMARY KEY",
        ),
        // A column renamed to its own name, in any case (Dolt: `Column "Name" already exists`).
        ("ALTER TABLE t RENAME COLUMN name TO Name", "already exists"),
        (
            "ALTER TABLE t ADD UNIQUE INDEX ucode (code)",
            "Duplicate entry",
        ),
        ("ALTER TABLE t MODIFY COLUMN name VARCHAR(0)", "name"),
        ("ALTER TABLE t MODIFY COLUMN code INT NOT NULL", "code"),
        (
            "ALTER TABLE t ADD CONSTRAINT fk FOREIGN KEY (qty) REFERENCES t(nope)",
            "nope",
        ),
        ("DROP TABLE nope", "nope"),
        ("DROP TABLE t, t", "several tables"),
        // A check the stored rows break (Dolt: `Check constraint "ck" violated`).
        ("ALTER TABLE t ADD CONSTRAINT ck CHECK (id > 1)", "\"ck\""),
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

pub(super) const FK_TABLES: [&str; 2] = [
    "CREATE TABLE p (id INT PRIMARY KEY, code VARCHAR(10), v INT, UNIQUE KEY uc (code))",
    "CREATE TABLE c (id INT PRIMARY KEY, pid INT, pcode VARCHAR(10), n VARCHAR(10), big INT)",
];
pub(super) const FK_ROWS: [&str; 2] = [
    "INSERT INTO p VALUES (1, 'a', 1), (2, 'b', 2), (3, 'c', 3)",
    "INSERT INTO c VALUES (1, 1, 'a', 'hello', 5), (2, 2, 'b', 'x', 300), (3, NULL, 'c', NULL, NULL)",
];

/// ALTERs of tables that foreign keys join, each run by `DoltWriter::alter` and by `dolt sql`.
const FK_ALTERS: [&str; 22] = [
    // Unnamed: `c_ibfk_1`, with Dolt's index `pid`; named: the index takes the key's name.
    "ALTER TABLE c ADD FOREIGN KEY (pid) REFERENCES p(id)",
    "ALTER TABLE c ADD CONSTRAINT fk2 FOREIGN KEY (pcode) REFERENCES p(code) ON DELETE SET NULL",
    // Two columns, no index serves them: Dolt's index is named after the first (`pcode`).
    // (Referenced through `uc` extended by the key, Dolt 2.3.1 adds the key but stores no
    // referenced index and then refuses to commit: "referenced table `p` is missing the
    // index ``".)
    "ALTER TABLE p ADD UNIQUE INDEX uci (code, id)",
    "ALTER TABLE c ADD FOREIGN KEY (pcode, pid) REFERENCES p(code, id)",
    "ALTER TABLE c DROP FOREIGN KEY fk2",
    "ALTER TABLE c RENAME COLUMN pid TO parent_id",
    "ALTER TABLE p RENAME COLUMN id TO pid",
    "ALTER TABLE c MODIFY COLUMN pcode VARCHAR(20)",
    "ALTER TABLE c ADD COLUMN z INT, ADD INDEX zi (z)",
    "ALTER TABLE p ADD COLUMN w INT DEFAULT 3",
    "ALTER TABLE c DROP COLUMN big",
    "ALTER TABLE p RENAME TO pp",
    "RENAME TABLE c TO cc",
    "ALTER TABLE cc DROP INDEX fk2",
    // The referenced index goes for another that serves: the key takes the other.
    "ALTER TABLE pp ADD INDEX vi (v)",
    "ALTER TABLE cc ADD CONSTRAINT fk5 FOREIGN KEY (z) REFERENCES pp(v)",
    "ALTER TABLE pp ADD INDEX vw (v, w)",
    "ALTER TABLE pp DROP INDEX vi",
    "ALTER TABLE cc ADD CONSTRAINT fk3 FOREIGN KEY (z) REFERENCES cc(id) ON DELETE CASCADE",
    "ALTER TABLE cc DROP CONSTRAINT fk3",
    // Narrowed where every stored value fits: converted, as Dolt converts them.
    "ALTER TABLE cc MODIFY COLUMN n VARCHAR(5)",
    "ALTER TABLE pp MODIFY COLUMN w TINYINT",
];

/// Dolt 2.3.1's commit of FK_TABLES, FK_ROWS and FK_ALTERS.
const DOLT_FK_COMMIT: &str = "he1iodbl6cohljpoo4mg5a36ekkl669e";

fn ours_fk(dir: &Path) -> String {
    before(dir);
    let mut w = prollystore_sql::writer(dir).unwrap();
    fk_tables(&mut w);
    for sql in FK_ALTERS {
        w.alter(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    w.commit(&meta()).unwrap().to_string()
}

#[test]
fn foreign_key_alters_commit_as_dolt_commits_them() {
    let tmp = tempfile::tempdir().unwrap();
    let commit = ours_fk(&tmp.path().join("ours"));
    if std::env::var_os(DOLT_ENV)
        .filter(|v| !v.is_empty())
        .is_none()
    {
        assert_eq!(commit, DOLT_FK_COMMIT, "the commit Dolt made");
        return;
    }
    let mut all: Vec<&str> = FK_TABLES.to_vec();
    all.extend(FK_ROWS);
    all.extend(FK_ALTERS);
    let head = dolt_commit_of(&tmp.path().join("theirs"), &all);
    assert_eq!(commit, head, "Dolt's commit of the same statements");
}

/// What Dolt refuses on tables that foreign keys join, and type changes that would lose data:
/// each refused naming what it got wrong (with Dolt's meaning), the files as they were.
#[test]
fn bad_foreign_key_and_narrowing_alters_change_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    ours_fk_base(&dir);
    let files = snapshot(&dir);
    let cases = [
        // Dolt: "cannot add or update a child row - Foreign key violation …"
        (
            "ALTER TABLE c ADD CONSTRAINT orphan FOREIGN KEY (big) REFERENCES p(id)",
            "has no parent",
        ),
        (
            "ALTER TABLE c ADD FOREIGN KEY (pid) REFERENCES p(nope)",
            "nope",
        ),
        (
            "ALTER TABLE c ADD FOREIGN KEY (pid) REFERENCES nope(id)",
            "nope",
        ),
        (
            "ALTER TABLE c DROP COLUMN pid",
            "used in foreign key `c_ibfk_1`",
        ),
        ("ALTER TABLE p DROP COLUMN id", "used in foreign key"),
        (
            "ALTER TABLE c MODIFY COLUMN pid BIGINT",
            "unable to change type of column `pid`",
        ),
        (
            "ALTER TABLE p MODIFY COLUMN code VARCHAR(5)",
            "unable to change type of column `code`",
        ),
        (
            "ALTER TABLE c DROP INDEX pid",
            "cannot drop index: `pid` is used by foreign key",
        ),
        (
            "ALTER TABLE p DROP INDEX uc",
            "cannot drop index: `uc` is used by foreign key",
        ),
        ("ALTER TABLE c DROP FOREIGN KEY nope", "nope"),
        // Dolt: "can't drop index 'PRIMARY': needed in foreign key constraint c_ibfk_1"
        (
            "ALTER TABLE p DROP PRIMARY KEY",
            "ALTER TABLE p: can't drop index 'PRIMARY': needed in foreign key constraint c_ibfk_1",
        ),
        (
            "ALTER TABLE p ADD COLUMN w INT, DROP PRIMARY KEY, ADD PRIMARY KEY (id, v)",
            "needed in foreign key constraint c_ibfk_1",
        ),
        // Dolt: "string '[104 101 108 108 111]' is too large for column 'varchar(3)'"
        ("ALTER TABLE c MODIFY COLUMN n VARCHAR(3)", "n"),
        // Dolt: "300 out of range for tinyint"
        ("ALTER TABLE c MODIFY COLUMN big TINYINT", "big"),
        ("ALTER TABLE c MODIFY COLUMN big TINYINT UNSIGNED", "big"),
        // Dolt: "error: 'int' is not a valid value for 'hello'"
        ("ALTER TABLE c MODIFY COLUMN n INT", "n"),
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

/// FK_TABLES and FK_ROWS with the key `c_ibfk_1` (c.pid → p.id), committed.
fn ours_fk_base(dir: &Path) {
    before(dir);
    let mut w = prollystore_sql::writer(dir).unwrap();
    fk_tables(&mut w);
    w.alter("ALTER TABLE c ADD FOREIGN KEY (pid) REFERENCES p(id)")
        .unwrap();
    w.alter("ALTER TABLE c ADD CONSTRAINT fk2 FOREIGN KEY (pcode) REFERENCES p(code)")
        .unwrap();
    w.commit(&meta()).unwrap();
}

/// FK_TABLES with FK_ROWS, through the writer.
fn fk_tables(w: &mut DoltWriter) {
    for t in FK_TABLES {
        w.create_table(&TableDef::from_sql(t).unwrap()).unwrap();
    }
    w.apply_text(
        RowMode::Insert,
        "p",
        &["id", "code", "v"],
        &[
            vec![Some("1"), Some("a"), Some("1")],
            vec![Some("2"), Some("b"), Some("2")],
            vec![Some("3"), Some("c"), Some("3")],
        ],
    )
    .unwrap();
    w.apply_text(
        RowMode::Insert,
        "c",
        &["id", "pid", "pcode", "n", "big"],
        &[
            vec![Some("1"), Some("1"), Some("a"), Some("hello"), Some("5")],
            vec![Some("2"), Some("2"), Some("b"), Some("x"), Some("300")],
            vec![Some("3"), None, Some("c"), None, None],
        ],
    )
    .unwrap();
}

/// New primary keys on a table that is a foreign key's child (Dolt allows them when another
/// index serves each key's columns), with and without rows, each run by the writer and by
/// `dolt sql`: the table turned keyless, keyed again on other columns, rekeyed in one
/// statement, and rekeyed on a column added by the same statement.
const FK_PK_ALTERS: [&str; 6] = [
    "ALTER TABLE c ADD FOREIGN KEY (pid) REFERENCES p(id)",
    "ALTER TABLE c ADD CONSTRAINT fk2 FOREIGN KEY (pcode) REFERENCES p(code)",
    "ALTER TABLE c DROP PRIMARY KEY",
    "ALTER TABLE c ADD PRIMARY KEY (pcode, id)",
    "ALTER TABLE c DROP PRIMARY KEY, ADD PRIMARY KEY (id)",
    "ALTER TABLE c ADD COLUMN k INT NOT NULL DEFAULT 7, DROP PRIMARY KEY, ADD PRIMARY KEY (k, id)",
];

/// Dolt 2.3.1's commits of FK_TABLES and FK_PK_ALTERS: with FK_ROWS, and without rows.
const DOLT_FK_PK_COMMITS: [&str; 2] = [
    "j895caqk966407uh0e7k4af1inedpk2b",
    "43dlmht3ie33bv5jfn8ibn7fj2vv9uli",
];

#[test]
fn child_primary_key_changes_commit_as_dolt_commits_them() {
    for (with_rows, want) in [
        (true, DOLT_FK_PK_COMMITS[0]),
        (false, DOLT_FK_PK_COMMITS[1]),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("ours");
        before(&dir);
        let mut w = prollystore_sql::writer(&dir).unwrap();
        if with_rows {
            fk_tables(&mut w);
        } else {
            for t in FK_TABLES {
                w.create_table(&TableDef::from_sql(t).unwrap()).unwrap();
            }
        }
        for sql in FK_PK_ALTERS {
            w.alter(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
        if with_rows {
            // The child is still checked against its parent under its new key.
            let err = w
                .apply_text(
                    RowMode::Insert,
                    "c",
                    &["id", "pid", "pcode"],
                    &[vec![Some("9"), Some("99"), Some("a")]],
                )
                .expect_err("a child row without a parent was accepted");
            assert!(err.to_string().contains("c_ibfk_1"), "{err}");
        }
        let commit = w.commit(&meta()).unwrap().to_string();
        drop(w);
        if std::env::var_os(DOLT_ENV)
            .filter(|v| !v.is_empty())
            .is_none()
        {
            assert_eq!(commit, want, "the commit Dolt made (rows: {with_rows})");
            continue;
        }
        let mut all: Vec<&str> = FK_TABLES.to_vec();
        if with_rows {
            all.extend(FK_ROWS);
        }
        all.extend(FK_PK_ALTERS);
        let head = dolt_commit_of(&tmp.path().join("theirs"), &all);
        assert_eq!(
            commit, head,
            "Dolt's commit of the same statements (rows: {with_rows})"
        );
    }
}

/// ADD INDEX on a table large enough that its rows are read in parts on several threads (they
/// lie in the database's files, the writer reopened: only the root node, carried in the table
/// chunk, is in the session) makes the commit the one-thread read makes (the rows still in the
/// writer's memory, the same statements in one session). One index has a text field (sorted
/// by whole keys), the other only integers (sorted by its own field, ties in row order).
#[test]
fn a_large_index_built_from_the_files_equals_one_built_in_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let rows: Vec<Vec<String>> = (0..150_000)
        .map(|i: i64| {
            vec![
                i.to_string(),
                ((i * 7919) % 1000).to_string(),
                format!("b{}", i % 37),
            ]
        })
        .collect();
    let rows: Vec<Vec<Option<&str>>> = rows
        .iter()
        .map(|r| r.iter().map(|v| Some(v.as_str())).collect())
        .collect();
    let create = "CREATE TABLE big (id INT PRIMARY KEY, a INT, b VARCHAR(20))";
    let indexes = [
        "ALTER TABLE big ADD INDEX iab (a, b)",
        "ALTER TABLE big ADD INDEX ia (a)",
    ];
    let load = |dir: &Path, reopen: bool| -> String {
        before(dir);
        let mut w = prollystore_sql::writer(dir).unwrap();
        w.create_table(&TableDef::from_sql(create).unwrap())
            .unwrap();
        w.apply_text(RowMode::Insert, "big", &["id", "a", "b"], &rows)
            .unwrap();
        if reopen {
            w.save(("T", "t@example.com"), 1_704_067_200).unwrap();
            drop(w);
            w = prollystore_sql::writer(dir).unwrap();
        }
        for index in indexes {
            w.alter(index).unwrap();
        }
        w.commit(&meta()).unwrap().to_string()
    };
    let in_memory = load(&tmp.path().join("memory"), false);
    let from_files = load(&tmp.path().join("files"), true);
    assert_eq!(from_files, in_memory);
}
