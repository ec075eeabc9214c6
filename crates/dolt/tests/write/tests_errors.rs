//! Error kinds the SQL-free writer and reader give: a malformed stored schema, a stale
//! branch head (a conflict). The SQL statements' kinds, beside Dolt's verdicts, are in the
//! integration tests (`tests/writer/tests_errors.rs`).

use super::helpers::{copy_db, scenario, snapshot};
use super::history::commit::{NewCommit, Person};
use super::storage::writer::StoreWriter;
use super::tests::sql_meta;
use crate::db::Database;
use crate::error::DoltError;

/// A stored collation no collation has: the stored schema is malformed. (A text column whose
/// type names no collation is `utf8mb4_0900_bin`, whatever the table's.)
#[test]
fn unknown_stored_collation_is_malformed() {
    let db = Database::open(scenario("basic/after")).unwrap();
    let head = db.resolve("main").unwrap();
    let root = db.root_value(db.commit(head).unwrap().root).unwrap();
    let name = root.tables.first().unwrap().0.clone();
    let table = db.table(&root, &name).unwrap();
    let mut schema = table.schema.clone();
    let col = schema
        .columns
        .iter()
        .find(|c| matches!(c.sql_type, crate::schema::SqlType::Text { .. }))
        .cloned();
    let Some(mut col) = col else {
        panic!("basic/after has no text column")
    };
    schema.collation = 9999;
    if let crate::schema::SqlType::Text { collation, .. } = &mut col.sql_type {
        *collation = None;
    }
    let bin = schema.column_collation(&col).unwrap().unwrap();
    assert_eq!(bin.name(), "utf8mb4_0900_bin");
    if let crate::schema::SqlType::Text { collation, .. } = &mut col.sql_type {
        *collation = Some("utf8mb4_no_such_ci".into());
    }
    let e = schema.column_collation(&col).unwrap_err();
    assert!(matches!(e, DoltError::Malformed { .. }), "{e:?}");
    assert!(std::error::Error::source(&e).is_some(), "{e:?}");
    assert!(e.to_string().contains("utf8mb4_no_such_ci"), "{e}");
}

/// A commit whose first parent is not the branch head (the head moved since it was read) is
/// a conflict, and nothing is written.
#[test]
fn stale_head_is_a_conflict() {
    let (_tmp, dir) = copy_db(&scenario("basic/after"));
    let files = snapshot(&dir);
    let mut w = StoreWriter::open(&dir).unwrap();
    let head = w.database().branch_head("main").unwrap();
    let c = w.database().commit(head).unwrap();
    let Some(&stale) = c.parents.first() else {
        panic!("basic/after's head has no parent")
    };
    let commit = NewCommit {
        root: c.root,
        parents: vec![stale],
        author: Person {
            name: "T",
            email: "t@example.com",
        },
        committer: None,
        message: "stale",
        author_millis: 1_700_000_000_000,
        committer_millis: 1_700_000_000_000,
    };
    let e = w
        .commit_to_branch("main", &commit, &sql_meta(1_700_000_000), 1_700_000_000)
        .unwrap_err();
    assert!(
        matches!(&e, DoltError::Conflict { what, .. } if what.contains("main")),
        "{e:?}"
    );
    drop(w);
    assert!(snapshot(&dir) == files, "a conflict changed the files");
}
