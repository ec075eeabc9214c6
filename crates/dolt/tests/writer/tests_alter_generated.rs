//! `ALTER TABLE` on tables with generated columns, and the other gaps issue #32 left (unnamed
//! CHECKs, a new primary key on a foreign key's parent), each statement run by
//! [`DoltWriter::alter`](prollystore_dolt::write::DoltWriter) and by `dolt sql` on a copy of
//! the `basic/before` write scenario, committed with a pinned author and date. The hashes below
//! are the commits Dolt 2.3.1 (`/work/dolt-bin/dolt`, the vectors' build) made of the same
//! statements; with `PROLLY_DOLT` set the tests run Dolt and compare live.

use prollystore_sql::{FromSql, SqlWriter};

use super::helpers::DOLT_ENV;
use super::tests_alter::{before, dolt_commit_of, meta};
use prollystore_dolt::write::{RowMode, TableDef};

/// Runs `create` (CREATE TABLE texts), `insert` (INSERT texts, run by the writer's SQL
/// entry) and `alters` through the writer and commits; with `PROLLY_DOLT`, the same through
/// Dolt, and the commits compared; else ours compared with `want`.
pub(super) fn same_as_dolt(create: &[&str], insert: &[&str], alters: &[&str], want: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ours");
    before(&dir);
    let mut w = prollystore_sql::writer(&dir).unwrap();
    for t in create {
        w.create_table(&TableDef::from_sql(t).unwrap())
            .unwrap_or_else(|e| panic!("{t}: {e}"));
    }
    for q in insert {
        let (table, columns, rows) = parse_insert(q);
        let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
        let rows: Vec<Vec<Option<&str>>> = rows
            .iter()
            .map(|r| r.iter().map(|v| v.as_deref()).collect())
            .collect();
        w.apply_text(RowMode::Insert, &table, &columns, &rows)
            .unwrap_or_else(|e| panic!("{q}: {e}"));
    }
    for sql in alters {
        w.alter(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    let commit = w.commit(&meta()).unwrap().to_string();
    drop(w);
    if std::env::var_os(DOLT_ENV)
        .filter(|v| !v.is_empty())
        .is_none()
    {
        assert_eq!(commit, want, "the commit Dolt made");
        return;
    }
    let mut all: Vec<&str> = create.to_vec();
    all.extend(insert);
    all.extend(alters);
    let head = dolt_commit_of(&tmp.path().join("theirs"), &all);
    eprintln!("Dolt's commit: {head}");
    assert_eq!(commit, head, "Dolt's commit of the same statements");
}

const GEN_TABLE: &str = "CREATE TABLE g (id INT PRIMARY KEY, a INT, b INT AS (a * 2) STORED, \
    c INT AS (a + 1) VIRTUAL, s VARCHAR(20), KEY kb (b))";
const GEN_ROWS: &str = "INSERT INTO g (id, a, s) VALUES (1, 5, 'x'), (2, NULL, 'y'), (3, 7, NULL)";

/// ALTERs of a table with a STORED and a VIRTUAL generated column.
const GEN_ALTERS: [&str; 15] = [
    "ALTER TABLE g ADD COLUMN e INT",
    "ALTER TABLE g ADD COLUMN f INT DEFAULT 4 AFTER a",
    "ALTER TABLE g ADD COLUMN h VARCHAR(5) FIRST",
    "ALTER TABLE g MODIFY COLUMN s VARCHAR(40)",
    "ALTER TABLE g DROP COLUMN s",
    "ALTER TABLE g RENAME COLUMN e TO e2",
    "ALTER TABLE g ADD UNIQUE INDEX ub (b, id)",
    "ALTER TABLE g ADD COLUMN d INT AS (a * 3) STORED",
    "ALTER TABLE g COMMENT = 'gen'",
    "ALTER TABLE g ADD COLUMN v2 INT AS (a - 1) VIRTUAL AFTER id",
    "ALTER TABLE g ADD COLUMN n INT NOT NULL DEFAULT 0 FIRST, ADD COLUMN m INT AFTER b",
    "ALTER TABLE g ADD CONSTRAINT bpos CHECK (b >= 0)",
    "ALTER TABLE g ADD INDEX ci (c)",
    "ALTER TABLE g MODIFY COLUMN a BIGINT",
    "ALTER TABLE g RENAME COLUMN a TO a2",
];

/// Dolt 2.3.1's commit of GEN_TABLE, GEN_ROWS and GEN_ALTERS.
const DOLT_GEN_COMMIT: &str = "pb1ju5ni5lr3vk7irr6pvfupng2bttc5";

#[test]
fn alters_of_a_table_with_generated_columns_commit_as_dolt_commits_them() {
    same_as_dolt(&[GEN_TABLE], &[GEN_ROWS], &GEN_ALTERS, DOLT_GEN_COMMIT);
}

/// `INSERT INTO t (a, b) VALUES (1, 'x'), (NULL, 'y')` (numbers, NULL and quoted strings
/// without quotes or commas inside) as the table, its columns and the rows' texts.
#[allow(clippy::type_complexity)]
fn parse_insert(q: &str) -> (String, Vec<String>, Vec<Vec<Option<String>>>) {
    let rest = q.strip_prefix("INSERT INTO ").unwrap();
    let (table, rest) = rest.split_once(" (").unwrap();
    let (cols, rest) = rest.split_once(") VALUES ").unwrap();
    let columns = cols.split(',').map(|c| c.trim().to_string()).collect();
    let rows = rest
        .trim()
        .trim_start_matches('(')
        .trim_end_matches(')')
        .split("), (")
        .map(|r| {
            r.split(',')
                .map(|v| match v.trim() {
                    "NULL" => None,
                    v => Some(v.trim_matches('\'').to_string()),
                })
                .collect()
        })
        .collect();
    (table.to_string(), columns, rows)
}

const CHK_TABLES: [&str; 2] = [
    // Column and table checks without names, one expression twice (Dolt appends `_0`).
    "CREATE TABLE Tx (id INT PRIMARY KEY, a INT CHECK (a > 0), b INT, CHECK (b < 10), \
     CHECK (a > 0), CONSTRAINT named CHECK (b <> 1))",
    "CREATE TABLE u (id INT PRIMARY KEY, v INT)",
];
const CHK_ROWS: [&str; 1] = ["INSERT INTO Tx (id, a, b) VALUES (1, 5, 2), (2, 7, NULL)"];
const CHK_ALTERS: [&str; 4] = [
    "ALTER TABLE Tx ADD CHECK (b <> 5)",
    "ALTER TABLE Tx ADD CONSTRAINT CHECK (b <> 6)",
    "ALTER TABLE u ADD CHECK (v > 0), ADD CHECK (v > 0)",
    "ALTER TABLE tx ADD CHECK (id < 100)",
];

/// Dolt 2.3.1's commit of CHK_TABLES, CHK_ROWS and CHK_ALTERS: `Tx_chk_bjbllm91`,
/// `Tx_chk_oq1s9so2`, `Tx_chk_bjbllm91_0`, `Tx_chk_gl6r2as1`, `Tx_chk_qulfsbnn`, ….
const DOLT_CHK_COMMIT: &str = "tku9ckp37o9cuuaocjnjsdkrfh54b3gg";

#[test]
fn unnamed_checks_are_named_as_dolt_names_them() {
    same_as_dolt(&CHK_TABLES, &CHK_ROWS, &CHK_ALTERS, DOLT_CHK_COMMIT);
}
