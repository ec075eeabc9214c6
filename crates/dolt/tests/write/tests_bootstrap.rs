//! Writing stores that have no chunk journal (table files or archives only, as `dolt gc`
//! leaves them): the first commit gives them one as Dolt does, every intermediate crash state
//! still opens at the old root, and (with `PROLLY_DOLT`) Dolt reads and extends the result.

use std::path::Path;

use super::api::DoltWriter;
use super::helpers::column;
use super::helpers::{dolt_user as dolt, meta, snapshot};
use super::storage::journal_append::JOURNAL_FILE;
use super::tables::table_def::TableDef;
use super::tests::copy_db;
use crate::chunks::journal_record::root_record;
use crate::chunks::manifest::Manifest;
use crate::db::{Database, State};
use crate::sql_value::SqlValue;

/// The golden databases Dolt left without a journal: table files, and zstd archives.
const NO_JOURNAL: [&str; 2] = ["vecdb_tablefiles", "vecdb_zstd"];

fn golden(name: &str) -> std::path::PathBuf {
    prollystore_test_vectors::require("dolt-db").join(name)
}

fn manifest(dir: &Path) -> Manifest {
    let bytes = std::fs::read(dir.join(".dolt/noms/manifest")).unwrap();
    Manifest::parse(&bytes, "manifest").unwrap()
}

/// Creates a table, inserts rows and commits through the public writer.
fn write_and_commit(dir: &Path, message: &str, first_id: i64) -> prollystore_format::Address {
    let mut w = DoltWriter::open(dir).unwrap();
    if !w.tables().unwrap().iter().any(|t| t == "added") {
        // CREATE TABLE added (id bigint primary key, note varchar(20))
        w.create_table(&TableDef {
            name: "added".into(),
            columns: vec![
                column("id", "bigint", false, None),
                column("note", "varchar(20)", true, None),
            ],
            primary_key: vec!["id".into()],
            ..TableDef::default()
        })
        .unwrap();
    }
    let rows: Vec<_> = (first_id..first_id + 3)
        .map(|i| {
            vec![
                Some(SqlValue::Int(i)),
                Some(SqlValue::Text(format!("n{i}"))),
            ]
        })
        .collect();
    w.insert("added", &["id", "note"], &rows).unwrap();
    w.commit(&meta(message)).unwrap()
}

/// Rows per table Dolt wrote (not the one these tests add), on `main`.
fn row_counts(dir: &Path) -> Vec<(String, usize)> {
    let tables = DoltWriter::open(dir).unwrap().tables().unwrap();
    let db = Database::open(dir).unwrap();
    tables
        .into_iter()
        .filter(|t| t != "added")
        .map(|t| {
            let table = db.table_at("main", State::Committed, &t).unwrap();
            let n = table.rows(&db).unwrap().count();
            (t, n)
        })
        .collect()
}

#[test]
fn a_store_without_a_journal_gets_one_on_its_first_commit() {
    for name in NO_JOURNAL {
        let (_tmp, dir) = copy_db(&golden(name));
        let noms = dir.join(".dolt/noms");
        assert!(!noms.join(JOURNAL_FILE).exists(), "{name}");
        let old = manifest(&dir);
        let old_head = Database::open(&dir).unwrap().branch_head("main").unwrap();
        let counts = row_counts(&dir);
        assert!(!counts.is_empty(), "{name}");

        // Opening, and a rejected change, touch nothing.
        let before = snapshot(&dir);
        {
            let mut w = DoltWriter::open(&dir).unwrap();
            let err = w.insert("no_such_table", &["id"], &[vec![Some(SqlValue::Int(1))]]);
            assert!(err.is_err(), "{name}");
        }
        assert_eq!(snapshot(&dir), before, "{name}: a rejected change wrote");

        let first = write_and_commit(&dir, "first on a gc'd store", 1);
        let m = manifest(&dir);
        assert!(noms.join(JOURNAL_FILE).is_file(), "{name}");
        // The old files stay named in their order, the journal is added last, the root is
        // unchanged in the manifest (readers take the journal's), and the lock is fresh.
        assert_eq!(&m.specs[..old.specs.len()], &old.specs[..], "{name}");
        assert_eq!(m.specs.len(), old.specs.len() + 1, "{name}");
        assert!(m.specs.last().unwrap().is_journal(), "{name}");
        assert_eq!(m.root, old.root, "{name}");
        assert_ne!(m.lock, old.lock, "{name}");
        assert_eq!(m.lock, m.fresh_lock().unwrap(), "{name}");

        // A second writer session appends to the journal without touching the manifest.
        let second = write_and_commit(&dir, "second", 10);
        assert_eq!(manifest(&dir), m, "{name}");

        let db = Database::open(&dir).unwrap();
        assert_eq!(db.branch_head("main").unwrap(), second, "{name}");
        let c = db.commit(second).unwrap();
        assert_eq!(c.parents, vec![first], "{name}");
        assert_eq!(db.commit(first).unwrap().parents, vec![old_head], "{name}");
        let t = db.table_at("main", State::Committed, "added").unwrap();
        let r = t.reader(&db).unwrap();
        for id in [1, 2, 3, 10, 11, 12] {
            let row = r.get(&[SqlValue::Int(id)]).unwrap().unwrap();
            assert_eq!(row[1], Some(SqlValue::Text(format!("n{id}"))), "{name}");
        }
        // The tables Dolt wrote are still there.
        assert_eq!(row_counts(&dir), counts, "{name}");

        if let Some(log) = dolt(&dir, &["log", "--oneline"]) {
            assert!(
                log.contains("second") && log.contains("first on a gc'd store"),
                "{log}"
            );
            let count = dolt(
                &dir,
                &["sql", "-r", "csv", "-q", "select count(*) from added"],
            );
            assert_eq!(count.unwrap(), "count(*)\n6\n", "{name}");
            dolt(
                &dir,
                &["sql", "-q", "insert into added values (99, 'dolt')"],
            )
            .unwrap();
            dolt(&dir, &["commit", "-am", "dolt on top"]).unwrap();
            let db = Database::open(&dir).unwrap();
            let t = db.table_at("main", State::Committed, "added").unwrap();
            let row = t.reader(&db).unwrap().get(&[SqlValue::Int(99)]).unwrap();
            assert_eq!(
                row.unwrap()[1],
                Some(SqlValue::Text("dolt".into())),
                "{name}"
            );
        }
    }
}

/// The states a crash can leave between the steps of the first commit all open at the old
/// root, for our reader and for the writer, which then finishes the job.
#[test]
fn every_crash_point_of_the_first_commit_opens_at_the_old_root() {
    let (_tmp, dir) = copy_db(&golden("vecdb_tablefiles"));
    let noms = dir.join(".dolt/noms");
    let old_head = Database::open(&dir).unwrap().branch_head("main").unwrap();
    let old = manifest(&dir);

    // Crash 1: the journal exists with only the old root, and the manifest does not name it.
    std::fs::write(
        noms.join(JOURNAL_FILE),
        root_record(old.root, 1_700_000_000),
    )
    .unwrap();
    assert_eq!(
        Database::open(&dir).unwrap().branch_head("main").unwrap(),
        old_head
    );
    // Crash 2: the same, plus a leftover temporary manifest.
    std::fs::write(noms.join("manifest.prolly-tmp"), b"5:garbage").unwrap();
    assert_eq!(
        Database::open(&dir).unwrap().branch_head("main").unwrap(),
        old_head
    );
    // The next writer names the journal and commits on top of the old head.
    let head = write_and_commit(&dir, "after a crash", 1);
    let db = Database::open(&dir).unwrap();
    assert_eq!(db.branch_head("main").unwrap(), head);
    assert_eq!(db.commit(head).unwrap().parents, vec![old_head]);
    assert!(manifest(&dir).specs.last().unwrap().is_journal());

    // A journal the manifest does not name, at another root than the manifest's, is refused.
    let (_tmp2, dir2) = copy_db(&golden("vecdb_tablefiles"));
    let other = prollystore_format::Address::from_slice(&[7u8; 20]).unwrap();
    std::fs::write(
        dir2.join(".dolt/noms").join(JOURNAL_FILE),
        root_record(other, 1),
    )
    .unwrap();
    let before = snapshot(&dir2);
    let err = DoltWriter::open(&dir2).expect_err("refused").to_string();
    assert!(err.contains("does not name"), "{err}");
    assert_eq!(snapshot(&dir2), before);
}
