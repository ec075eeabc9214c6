//! The Dolt tour: branches, the log, tables, typed rows, a key get and an index range of a
//! Dolt-made database (a copy of the repository's `dolt-db/vecdb`), then a table created,
//! filled and committed with the writer. Run by `cargo test` (`tests/tours.rs`).
use std::ops::Bound::{Excluded, Included};
use std::path::Path;

use prollystore_dolt::write::{CommitMeta, DoltWriter, TableDef};
use prollystore_dolt::{Database, KeyRange, SqlValue, State};
use prollystore_sql::FromSql;
use prollystore_test_vectors::writable_copy;

pub(crate) fn tour(dir: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let db = Database::open(dir)?;
    for (branch, head) in db.branches()? {
        println!("branch {branch} at {head}");
    }
    for commit in db.log(db.resolve("main")?).take(3) {
        let c = commit?;
        println!("{} {} <{}>: {}", c.address, c.name, c.email, c.message);
    }
    println!("tables: {:?}", db.tables()?);
    let items = db.table_at("main", State::Committed, "items")?;
    let reader = items.reader(&db)?;
    println!("columns: {:?}", reader.column_names());
    for row in reader.scan(&KeyRange::all())?.take(3) {
        println!("row: {:?}", row?);
    }
    let row = reader.get(&[SqlValue::Int(2)])?.expect("item 2");
    println!("get id=2: name {:?}", row[2]);
    let (a, b) = (SqlValue::from("a"), SqlValue::from("b"));
    let range = KeyRange::between(Included(vec![a]), Excluded(vec![b]));
    let names = reader.index_scan("idx_name", &range)?.count();
    println!("names from a to b: {names}");

    let mut w = DoltWriter::open(dir)?;
    let sql = "CREATE TABLE scores (name VARCHAR(40) PRIMARY KEY, score BIGINT)";
    w.create_table(&TableDef::from_sql(sql)?)?;
    let row = |i: i64| vec![SqlValue::from(format!("user{i:03}")), i.into()];
    let rows: Vec<_> = (0..100).map(row).collect();
    w.insert("scores", &["name", "score"], &rows)?;
    let commit = w.commit(&CommitMeta::now("Ada", "ada@example.com", "Add scores"))?;
    println!("committed {commit}");
    Ok(())
}

#[allow(dead_code)] // the test calls `tour` alone
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tmp = tempfile::tempdir()?;
    tour(&writable_copy("dolt-db/vecdb", tmp.path())?)
}
