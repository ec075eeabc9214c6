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
    let mut defs = Vec::new();
    for t in create {
        let def = TableDef::from_sql(t).unwrap();
        w.create_table(&def).unwrap_or_else(|e| panic!("{t}: {e}"));
        defs.push(def);
    }
    for q in insert {
        let (table, mut columns, rows) = parse_insert(q);
        if columns.is_empty() {
            let def = defs.iter().find(|d| d.name == table).unwrap();
            columns = def.columns.iter().map(|c| c.name.clone()).collect();
        }
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
    if head == commit {
        return;
    }
    // Dolt 2.3.1 does not always make the same commit of the same statements: the
    // parent-key sequences give `2odjs81p…` or `i5igqavo…` (with rows) and `ho0b87ks…` or
    // `dul27bmm…` (without), the second of each in about one run in three (seen in this
    // test, session 25). Ours must be one that Dolt makes.
    let mut seen = vec![head];
    for run in 1..=6 {
        let again = dolt_commit_of(&tmp.path().join(format!("theirs-{run}")), &all);
        if again == commit {
            eprintln!("Dolt's commits of the same statements vary ({seen:?}, then {again}); ours is one of them");
            return;
        }
        seen.push(again);
    }
    panic!("ours {commit}, Dolt's commits of the same statements: {seen:?}");
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

/// `INSERT INTO t [(a, b)] VALUES (1, 'x'), (NULL, 'y')` (numbers, NULL and quoted strings
/// without quotes or commas inside) as the table, its columns and the rows' texts.
#[allow(clippy::type_complexity)]
fn parse_insert(q: &str) -> (String, Vec<String>, Vec<Vec<Option<String>>>) {
    let rest = q.strip_prefix("INSERT INTO ").unwrap();
    let (table, columns, rest) = match rest.split_once(" VALUES ") {
        // No column list: every column, in order.
        Some((table, rest)) if !table.contains('(') => (table, Vec::new(), rest),
        _ => {
            let (table, rest) = rest.split_once(" (").unwrap();
            let (cols, rest) = rest.split_once(") VALUES ").unwrap();
            let columns = cols.split(',').map(|c| c.trim().to_string()).collect();
            (table, columns, rest)
        }
    };
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

/// New primary keys on a foreign key's parent table (Dolt moves a key that referenced the
/// primary key to the index `backupFkcIndexesForPkDrop` picks), with and without rows.
const PARENT_PK_ALTERS: [&str; 8] = [
    "ALTER TABLE c ADD FOREIGN KEY (pid) REFERENCES p(id)",
    "ALTER TABLE c ADD CONSTRAINT fk2 FOREIGN KEY (pcode) REFERENCES p(code)",
    "ALTER TABLE p ADD UNIQUE INDEX uid (id, v), DROP PRIMARY KEY",
    "ALTER TABLE p ADD PRIMARY KEY (v, id)",
    "ALTER TABLE c ADD COLUMN pv INT, ADD CONSTRAINT fk3 FOREIGN KEY (pv, pid) REFERENCES p(v, id)",
    // Exactly the key's columns first wins over longer; then unique; then the name.
    "ALTER TABLE p ADD INDEX vi3 (v, id, code), ADD INDEX zz (id, v), ADD INDEX aa (v, id), \
     DROP PRIMARY KEY",
    "ALTER TABLE p ADD PRIMARY KEY (id)",
    // An index over the same columns as another: the keys that used the other use it (Dolt
    // moves them for a user's index too).
    "ALTER TABLE p ADD INDEX zz2 (id, v)",
];

/// Dolt 2.3.1's commits of FK_TABLES and PARENT_PK_ALTERS: with FK_ROWS, and without rows.
const DOLT_PARENT_PK_COMMITS: [&str; 2] = [
    "2odjs81pi5fjbaabq5lkrl63df2ts2mn",
    "ho0b87ksmht9m7knbonufp5eenkes4vh",
];

#[test]
fn parent_primary_key_changes_commit_as_dolt_commits_them() {
    use super::tests_alter::{FK_ROWS, FK_TABLES};
    let alters = &PARENT_PK_ALTERS[..];
    same_as_dolt(&FK_TABLES, &FK_ROWS, alters, DOLT_PARENT_PK_COMMITS[0]);
    same_as_dolt(&FK_TABLES, &[], alters, DOLT_PARENT_PK_COMMITS[1]);
}

/// A user's index over the columns of an index Dolt added for a foreign key replaces it (the
/// key moves to the new index), on a child table with rows.
const REPLACE_ALTERS: [&str; 2] = [
    "ALTER TABLE c ADD FOREIGN KEY (pid) REFERENCES p(id)",
    "ALTER TABLE c ADD INDEX pidx (pid)",
];

/// Dolt 2.3.1's commit of FK_TABLES, FK_ROWS and REPLACE_ALTERS.
const DOLT_REPLACE_COMMIT: &str = "fi0km411eo8v03msghkmdlekkgqdii97";

#[test]
fn an_index_replaces_the_one_dolt_added_for_a_key_as_dolt_replaces_it() {
    use super::tests_alter::{FK_ROWS, FK_TABLES};
    same_as_dolt(&FK_TABLES, &FK_ROWS, &REPLACE_ALTERS, DOLT_REPLACE_COMMIT);
}

/// The same on tables without rows.
#[test]
fn an_index_replaces_the_one_dolt_added_for_a_key_on_an_empty_table() {
    use super::tests_alter::FK_TABLES;
    same_as_dolt(
        &FK_TABLES,
        &[],
        &REPLACE_ALTERS,
        "jcu4mepi06vr360k1vogrf9mpgqk8tkr",
    );
}

/// PARENT_PK_ALTERS then `ADD INDEX pidx (pid)` on the child, without rows, gives another
/// commit than Dolt's `q3b3qae438m1sao3qbm3dqtrrbv0po1r` (with rows it is Dolt's
/// `3d1a7vncaq9rsk8lmpmch8a9qe12eihr`); not found yet why.
#[test]
#[ignore = "open: a replaced foreign-key index after parent key changes, tables without rows"]
fn replaced_key_index_after_parent_key_changes_without_rows() {
    use super::tests_alter::FK_TABLES;
    let mut alters = PARENT_PK_ALTERS.to_vec();
    alters.push("ALTER TABLE c ADD INDEX pidx (pid)");
    same_as_dolt(&FK_TABLES, &[], &alters, "q3b3qae438m1sao3qbm3dqtrrbv0po1r");
}

/// A row both sides changed, whose STORED generated column the merge computes again to a new
/// value, is refused when an index covers that column, with nothing written: Dolt 2.3.1 builds
/// that index's entry from the row before computing it (checked by hand: after such a merge
/// `SELECT id FROM t WHERE total = <new>` finds nothing and `… = <old>` finds the row). The
/// same merge without such an index is in the Dolt-made scenario `gmerge` (conformance
/// crate's `tests/data/dolt-write`), replayed to Dolt's hashes.
#[test]
fn merged_generated_value_under_an_index_is_refused() {
    use prollystore_dolt::write::vc::{self, MergeOptions, Signature};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ours");
    before(&dir);
    let table = "CREATE TABLE items (id INT PRIMARY KEY, a INT, b INT, \
        total INT GENERATED ALWAYS AS (a + b) STORED, KEY idx_total (total))";
    let write = |rows: &[&[Option<&str>]], columns: &[&str], mode: RowMode| {
        let rows: Vec<Vec<Option<&str>>> = rows.iter().map(|r| r.to_vec()).collect();
        let mut w = prollystore_sql::writer(&dir).unwrap();
        w.apply_text(mode, "items", columns, &rows).unwrap();
        w.commit(&meta()).unwrap();
    };
    let mut w = prollystore_sql::writer(&dir).unwrap();
    w.create_table(&TableDef::from_sql(table).unwrap()).unwrap();
    w.commit(&meta()).unwrap();
    drop(w);
    write(
        &[
            &[Some("1"), Some("1"), Some("10")],
            &[Some("2"), Some("2"), Some("20")],
        ],
        &["id", "a", "b"],
        RowMode::Insert,
    );
    vc::create_branch(&dir, "side", "main").unwrap();
    vc::checkout(&dir, "side").unwrap();
    write(&[&[Some("1"), Some("100")]], &["id", "a"], RowMode::Update);
    vc::checkout(&dir, "main").unwrap();
    write(&[&[Some("1"), Some("1000")]], &["id", "b"], RowMode::Update);
    let snapshot = super::helpers::snapshot(&dir);
    let mut options = MergeOptions::new(Signature::new("T", "t@example.com", 0));
    options.expressions = Some(prollystore_sql::engine());
    let err = vc::merge(&dir, "side", &options).unwrap_err().to_string();
    assert!(
        err.contains("\"total\"") && err.contains("idx_total") && err.contains("items"),
        "{err}"
    );
    assert!(
        super::helpers::snapshot(&dir) == snapshot,
        "a refused merge wrote something"
    );
}

/// A table whose primary key is not in column order, with indexes over several columns.
const OUT_OF_ORDER: &str = "CREATE TABLE o (k VARCHAR(8), j INT, v INT, u VARCHAR(20), \
    w INT, PRIMARY KEY (j, k), KEY iv (v), KEY iu (u, j), KEY iwv (w, v), UNIQUE KEY uvk (v, k))";
const OUT_OF_ORDER_ROWS: &str = "INSERT INTO o VALUES ('Straße', 1, 1, 'b', 1), \
    ('b', 1, 2, 'B', 2), ('c', 0, 3, 'Straße', NULL), ('a', 0, 4, NULL, 4), ('zz', 2, NULL, 'd', 5)";

/// Collation changes (Dolt rewrites the table: the indexes, or with a key column the primary
/// index too, take the new order), a dropped column (every index over it goes, its map stays
/// stale), then changes in place (Dolt writes the schema with the indexes' trailing key columns
/// in column order), the last ones last so that the schema Dolt committed is the in-place one.
const OUT_OF_ORDER_ALTERS: [&str; 7] = [
    "ALTER TABLE o MODIFY COLUMN u VARCHAR(20) COLLATE utf8mb4_0900_ai_ci",
    "ALTER TABLE o MODIFY COLUMN k VARCHAR(8) COLLATE utf8mb4_0900_ai_ci",
    "ALTER TABLE o DROP COLUMN w",
    "ALTER TABLE o MODIFY COLUMN v INT UNIQUE",
    "ALTER TABLE o RENAME COLUMN v TO v2",
    "ALTER TABLE o ALTER COLUMN u SET DEFAULT 'q'",
    "ALTER TABLE o MODIFY COLUMN v2 INT COMMENT 'in place', CHANGE COLUMN u U VARCHAR(30) COLLATE utf8mb4_0900_ai_ci",
];

/// Dolt 2.3.1's commit of OUT_OF_ORDER, OUT_OF_ORDER_ROWS and OUT_OF_ORDER_ALTERS.
const DOLT_OUT_OF_ORDER_COMMIT: &str = "hnp7hjtai04j6du5tbcmgfenh22rcu6m";

#[test]
fn collation_drop_and_in_place_alters_of_an_out_of_order_key_commit_as_dolt_commits_them() {
    same_as_dolt(
        &[OUT_OF_ORDER],
        &[OUT_OF_ORDER_ROWS],
        &OUT_OF_ORDER_ALTERS,
        DOLT_OUT_OF_ORDER_COMMIT,
    );
}

const KEYLESS_T: &str = "CREATE TABLE kl (a INT, b VARCHAR(20), c TINYINT NOT NULL DEFAULT 1, \
    d DECIMAL(6,2), KEY ia (a), KEY ibc (b, c))";
const KEYLESS_T_ROWS: &str = "INSERT INTO kl VALUES (1, 'Straße', 2, 1.5), (2, 'b', 3, NULL), \
    (3, NULL, 4, 2.25), (4, 'd', 5, 0), (4, 'd', 5, 0), (5, 'B', 6, 9.99)";

/// ALTERs that rewrite a keyless table: its rows are keyed by the hash of their values, so
/// every row moves (and a row stored twice keeps its count).
const KEYLESS_ALTERS: [&str; 8] = [
    "ALTER TABLE kl ADD COLUMN e INT NOT NULL",
    "ALTER TABLE kl ADD COLUMN f VARCHAR(5) DEFAULT 'z'",
    "ALTER TABLE kl DROP COLUMN d",
    "ALTER TABLE kl MODIFY COLUMN b VARCHAR(20) COLLATE utf8mb4_0900_ai_ci",
    "ALTER TABLE kl MODIFY COLUMN a BIGINT",
    "ALTER TABLE kl ADD COLUMN g DATE NOT NULL AFTER a",
    "ALTER TABLE kl ADD COLUMN u INT UNIQUE, ADD COLUMN w INT CHECK (w <> 0)",
    // Numbered in stored (row hash) order, as Dolt numbers them; the counter goes on from 7.
    "ALTER TABLE kl ADD COLUMN id INT PRIMARY KEY AUTO_INCREMENT FIRST",
];

/// Dolt 2.3.1's commit of KEYLESS_T, KEYLESS_T_ROWS and KEYLESS_ALTERS.
const DOLT_KEYLESS_COMMIT: &str = "33c01df4h9qdkkjanketc1k9v1kp5abj";

#[test]
fn rewrites_of_a_keyless_table_commit_as_dolt_commits_them() {
    same_as_dolt(
        &[KEYLESS_T],
        &[KEYLESS_T_ROWS],
        &KEYLESS_ALTERS,
        DOLT_KEYLESS_COMMIT,
    );
}

/// Runs `create` and `insert` (as [`same_as_dolt`] reads them) and commits; then each
/// statement of `cases` must be refused with an error containing its text, the files as they
/// were.
fn refused_after(create: &str, insert: &str, cases: &[(&str, &str)]) -> std::path::PathBuf {
    let tmp = tempfile::tempdir().unwrap().keep();
    let dir = tmp.join("db");
    before(&dir);
    {
        let mut w = prollystore_sql::writer(&dir).unwrap();
        let def = TableDef::from_sql(create).unwrap();
        w.create_table(&def).unwrap();
        let (table, _, rows) = parse_insert(insert);
        let rows: Vec<Vec<Option<&str>>> = rows
            .iter()
            .map(|r| r.iter().map(|v| v.as_deref()).collect())
            .collect();
        let columns: Vec<&str> = def.columns.iter().map(|c| c.name.as_str()).collect();
        w.apply_text(RowMode::Insert, &table, &columns, &rows)
            .unwrap();
        w.commit(&meta()).unwrap();
    }
    let files = super::api_tests::snapshot(&dir);
    for (sql, named) in cases {
        let mut w = prollystore_sql::writer(&dir).unwrap();
        let err = w
            .alter(sql)
            .err()
            .unwrap_or_else(|| panic!("{sql} was accepted"));
        let text = err.to_string();
        assert!(text.contains(named), "{sql}: {text}");
        drop(w);
        assert!(
            super::api_tests::snapshot(&dir) == files,
            "{sql} changed the files"
        );
    }
    dir
}

/// A keyless table's row stored twice breaks a new UNIQUE index over values that are not
/// NULL (Dolt: `duplicate unique key given: [4]`): refused by the index's name, nothing
/// written. A row stored twice with NULL in the index's column does not break it (as Dolt
/// adds it, same hashes checked by hand with `dolt sql`).
#[test]
fn a_unique_index_over_a_row_stored_twice_is_refused() {
    let dir = refused_after(
        KEYLESS_T,
        KEYLESS_T_ROWS,
        &[
            (
                "ALTER TABLE kl ADD UNIQUE INDEX ua (a)",
                "stored twice breaks unique index \"ua\"",
            ),
            (
                "ALTER TABLE kl ADD UNIQUE INDEX ubd (b, d)",
                "stored twice breaks unique index \"ubd\"",
            ),
        ],
    );
    let mut w = prollystore_sql::writer(&dir).unwrap();
    w.create_table(&TableDef::from_sql("CREATE TABLE kn (a INT, b VARCHAR(5))").unwrap())
        .unwrap();
    let twice = [
        vec![None, Some("x")],
        vec![None, Some("x")],
        vec![Some("1"), Some("y")],
    ];
    w.apply_text(RowMode::Insert, "kn", &["a", "b"], &twice)
        .unwrap();
    w.alter("ALTER TABLE kn ADD UNIQUE INDEX ua (a)").unwrap();
    drop(w);
    std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
}

/// Values equal under the column's collation (`'b'` and `'B'` under `_ai_ci`) break a new
/// UNIQUE index, as Dolt refuses it (`duplicate unique key given: [B,3]`); a `_bin` column of
/// the same table keeps them apart.
#[test]
fn a_unique_index_over_values_equal_under_the_collation_is_refused() {
    let dir = refused_after(
        "CREATE TABLE cu (id INT PRIMARY KEY, b VARCHAR(10), c VARCHAR(10) COLLATE \
         utf8mb4_0900_bin) COLLATE utf8mb4_0900_ai_ci",
        "INSERT INTO cu VALUES (1, 'b', 'b'), (2, 'x', 'x'), (3, 'B', 'B'), (4, 'Straße', 'ss')",
        &[(
            "ALTER TABLE cu ADD UNIQUE INDEX ub (b)",
            "unique index \"ub\"",
        )],
    );
    let mut w = prollystore_sql::writer(&dir).unwrap();
    w.alter("ALTER TABLE cu ADD UNIQUE INDEX uc (c)").unwrap();
    drop(w);
    std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
}

/// A nullable column added FIRST or AFTER another to a keyless table: Dolt 2.3.1 leaves the
/// stored rows in the old layout, and then cannot read the table (`panic: byte slice is not
/// of expected size`). We rewrite the rows (their keys are hashes of their values, so they
/// move); Dolt reads the result, row for row.
#[test]
fn a_column_added_first_to_a_keyless_table_leaves_it_readable() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    before(&dir);
    let mut w = prollystore_sql::writer(&dir).unwrap();
    w.create_table(&TableDef::from_sql(KEYLESS_T).unwrap())
        .unwrap();
    let (table, _, rows) = parse_insert(KEYLESS_T_ROWS);
    let rows: Vec<Vec<Option<&str>>> = rows
        .iter()
        .map(|r| r.iter().map(|v| v.as_deref()).collect())
        .collect();
    w.apply_text(RowMode::Insert, &table, &["a", "b", "c", "d"], &rows)
        .unwrap();
    w.alter("ALTER TABLE kl ADD COLUMN e INT FIRST, ADD COLUMN f INT AFTER a")
        .unwrap();
    w.commit(&meta()).unwrap();
    drop(w);
    let db = prollystore_dolt::Database::open(&dir).unwrap();
    let t = db
        .table_at("main", prollystore_dolt::State::Committed, "kl")
        .unwrap();
    let names: Vec<&str> = t
        .schema
        .columns
        .iter()
        .filter(|c| !c.hidden)
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(names, ["e", "a", "f", "b", "c", "d"]);
    let read = t
        .reader(&db)
        .unwrap()
        .scan(&prollystore_dolt::KeyRange::all())
        .unwrap();
    let mut n = 0;
    for row in read {
        let row = row.unwrap();
        assert!(row[0].is_none() && row[2].is_none(), "{row:?}");
        n += 1;
    }
    assert_eq!(n, 6);
    if let Some(out) = super::helpers::dolt(
        &dir,
        &["sql", "-r", "csv", "-q", "select * from kl order by a, b"],
    ) {
        assert_eq!(
            out,
            "e,a,f,b,c,d\n,1,,Straße,2,1.50\n,2,,b,3,\n,3,,,4,2.25\n,4,,d,5,0.00\n,4,,d,5,0.00\n,5,,B,6,9.99\n"
        );
        super::helpers::dolt(&dir, &["fsck"]);
    }
}
