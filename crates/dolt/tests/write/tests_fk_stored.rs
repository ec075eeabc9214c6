//! A foreign key stored with an action Dolt never writes, made by rewriting the root value's
//! key collection (the writer's internals): the writer must refuse to act on it.

use prollystore_format::message::objects::RootValueFields;
use prollystore_format::Address;

use super::api::DoltWriter;
use super::constraints::foreign_keys::{decode_collection, encode_collection};
use super::helpers::{column, meta, snapshot};
use super::history::branches::working_set_ref;
use super::tables::table_def::{ColumnDef, ForeignKeyAction, ForeignKeyDef, TableDef};
use super::tests::{copy_tree, dolt, scenario, sql_meta};
use crate::error::DoltError;
use crate::sql_value::SqlValue;

fn int_column(name: &str, nullable: bool, default: Option<&str>) -> ColumnDef {
    column(name, "int", nullable, default)
}

/// `CREATE TABLE p (id INT PRIMARY KEY)`, `CREATE TABLE c (id INT PRIMARY KEY, p INT DEFAULT
/// 2, CONSTRAINT k FOREIGN KEY (p) REFERENCES p(id) ON DELETE CASCADE)`, parents 1 and 2, child
/// (1, 1), committed on the basic scenario's database.
fn parent_and_child() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    copy_tree(&scenario("basic/before"), &dir);
    let mut w = DoltWriter::open(&dir).unwrap();
    w.create_table(&TableDef {
        name: "p".into(),
        columns: vec![int_column("id", false, None)],
        primary_key: vec!["id".into()],
        ..TableDef::default()
    })
    .unwrap();
    w.create_table(&TableDef {
        name: "c".into(),
        columns: vec![
            int_column("id", false, None),
            int_column("p", true, Some("2")),
        ],
        primary_key: vec!["id".into()],
        foreign_keys: vec![ForeignKeyDef {
            name: Some("k".into()),
            columns: vec!["p".into()],
            parent_table: "p".into(),
            parent_columns: vec!["id".into()],
            on_update: ForeignKeyAction::Default,
            on_delete: ForeignKeyAction::Cascade,
        }],
        ..TableDef::default()
    })
    .unwrap();
    let int = |v| Some(SqlValue::Int(v));
    w.insert("p", &["id"], &[vec![int(1)], vec![int(2)]])
        .unwrap();
    w.insert("c", &["id", "p"], &[vec![int(1), int(1)]])
        .unwrap();
    w.commit(&meta("actions")).unwrap();
    (tmp, dir)
}

/// A key stored with ON DELETE SET DEFAULT (code 5; Dolt's MySQL dialect never writes one,
/// so the collection is rewritten here): a delete it would act on is refused, naming the
/// key, and nothing is written (it is not taken for RESTRICT). Dolt 2.3.1, given the same
/// database, sets the child's column to its default.
#[test]
fn a_stored_set_default_key_is_refused() {
    let (_tmp, dir) = parent_and_child();
    store_on_delete(&dir, 5);
    // Dolt's engine does act on such a key: the child row takes the column's default.
    // Not done here (refused instead), so the difference is checked, not hidden.
    let theirs = _tmp.path().join("theirs");
    copy_tree(&dir, &theirs);
    if dolt(&theirs, &["sql", "-q", "DELETE FROM p WHERE id = 1"]).is_some() {
        let c = dolt(&theirs, &["sql", "-r", "csv", "-q", "SELECT * FROM c"]).unwrap();
        assert_eq!(c, "id,p\n1,2\n", "Dolt's rows after the delete");
    }
    let before = snapshot(&dir);
    let mut w = DoltWriter::open(&dir).unwrap();
    let e = w
        .delete("p", &[vec![SqlValue::Int(1)]])
        .unwrap_err()
        .to_string();
    assert!(e.contains("\"k\"") && e.contains("SET DEFAULT"), "{e}");
    drop(w);
    assert!(snapshot(&dir) == before, "a refused delete wrote something");
}

/// A key stored with an action code no Dolt writes is malformed data, not a missing feature.
#[test]
fn a_stored_unknown_action_code_is_malformed() {
    let (_tmp, dir) = parent_and_child();
    store_on_delete(&dir, 9);
    let before = snapshot(&dir);
    let mut w = DoltWriter::open(&dir).unwrap();
    let e = w.delete("p", &[vec![SqlValue::Int(1)]]).unwrap_err();
    assert!(
        matches!(&e, DoltError::Malformed { what, .. } if what.contains("\"k\"")),
        "{e:?}"
    );
    assert!(e.to_string().contains("code 9"), "{e}");
    drop(w);
    assert!(snapshot(&dir) == before, "a refused delete wrote something");
}

/// Rewrites the working set of `main` in `dir` with its first foreign key's ON DELETE action
/// stored as `code`.
fn store_on_delete(dir: &std::path::Path, code: u8) {
    let mut w = super::storage::writer::StoreWriter::open(dir).unwrap();
    let root = w.commit_root(w.head_of("main").unwrap()).unwrap();
    let chunk = w.chunk(&root).unwrap();
    let mut r = RootValueFields::decode(&chunk).unwrap();
    let at = Address(r.foreign_key_addr);
    let mut keys = decode_collection(&w.chunk(&at).unwrap(), at).unwrap();
    keys[0].on_delete = code;
    let fk = w.put(&encode_collection(&keys).unwrap()).unwrap();
    r.foreign_key_addr = fk.0;
    let new_root = w.put(&r.encode().unwrap()).unwrap();
    let ws = w
        .put_working_set(new_root, &sql_meta(1_710_000_000))
        .unwrap();
    w.update_datasets(&[(&working_set_ref("main"), Some(ws))], 1_710_000_000)
        .unwrap();
}
