//! The native tour: 100,000 rows of `name -> score, doc` in random order; a get, a range, an
//! edit batch, a diff, a three-way merge with a conflict, a copy to a memory store, a named
//! map committed and reopened. Run by `cargo test` (`tests/tours.rs`).
use prollystore::{format::HashProfile, rows::RowSchema};
use prollystore::{Datum, FileStore, MemoryStore, TypedMap};
use serde_json::json;

pub(crate) fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let mut store = FileStore::create(dir.path(), HashProfile::Dolt)?;
    let schema = RowSchema::parse("name:varchar(40)", "score:bigint, doc:json?")?;
    let rows = (0..100_000i64).map(|i| i * 7919 % 100_000).map(|n| {
        let (name, doc) = (format!("user{n:06}"), json!({"n": n, "tags": ["a", "b"]}));
        [Datum::from(name), Datum::Int(n % 1000), doc.into()]
    });
    let map = TypedMap::from_rows(&store, schema, rows)?; // any order
    println!("{} rows, root {}", map.count()?, map.root());

    let row = map.get(&["user000042".into()])?.expect("user000042");
    println!("get: {} {} {}", row[0], row[1], row[2]);
    for row in map.range([Datum::from("user000100")]..[Datum::from("user000103")])? {
        println!("range: {:?}", row?);
    }

    let row = |name: &str, score: i64| [Datum::from(name), Datum::Int(score), Datum::Null];
    let mut edit = map.edit();
    for i in 0..100 {
        edit.insert(row(&format!("new{i:03}"), i))?;
    }
    edit.remove(&["user000000".into()])?;
    let edited = edit.finish()?;
    println!("diff: {} changed rows", map.diff(&edited)?.count());

    let ours = map.edit().put(row("user000001", 1))?.finish()?;
    let theirs = map.edit().put(row("user000001", 2))?;
    let theirs = theirs.put(row("user000002", 3))?.finish()?;
    let merged = ours.merge(&map, &theirs)?;
    for conflict in &merged.conflicts {
        println!("conflict: {conflict}"); // base, ours and theirs as rows
    }
    let merged = merged.resolve(|c| c.theirs.clone())?;

    let memory = MemoryStore::new(HashProfile::Dolt);
    let copy = merged.copy_to(&memory)?;
    assert_eq!((copy.root(), copy.count()?), (merged.root(), 100_000));

    let (root, saved) = (merged.root(), merged.save_as("scores")?);
    saved.commit(&mut store)?;
    drop(store);
    let store = FileStore::open(dir.path())?;
    let reopened = TypedMap::open(&store, "scores")?; // the schema comes with the name
    assert_eq!(reopened.root(), root);
    println!("reopened: {}", reopened.schema());
    Ok(())
}
