//! # prollystore
//!
//! Prolly trees over Dolt-compatible chunks: build, read, edit, diff, merge. The same rows give
//! Dolt's chunks and Dolt's root address (with [`format::HashProfile::Dolt`]); the chunk and
//! tuple formats themselves are [`format`](mod@format) (the `prollystore-format` crate,
//! re-exported).
//!
//! Stores:
//! * [`store`]: where chunks live: the store contract [`ChunkStore`] and its optional fast
//!   paths [`StoreFastPaths`], [`MemoryStore`], [`FileStore`] (memory-mapped chunk files,
//!   crash-safe commits of named roots), and [`BuiltinStore`] over both.
//! * [`shared`]: [`shared::SharedStore`] and [`shared::SharedMap`], maps that own a share of
//!   their store, so a program can commit while they are alive.
//! * [`process`]: the state kept beyond a single call (spare memory, the background-hashing
//!   switch, per-thread caches), with the calls that bound or release it.
//!
//! Trees:
//! * [`tree`]: Dolt's chunk boundaries, building ([`tree::build`]), two-way diff
//!   ([`tree::diff`]), three-way merge ([`tree::merge`]), copying between stores
//!   ([`tree::copy`]), and what trees need to know of their tuples: key order and where
//!   values hold chunk addresses ([`tree::schema`]). Cursors and batch edits are internal,
//!   used through [`Map`].
//! * [`blob`]: blob trees for large values.
//! * [`error`]: [`TreeError`], what a tree operation can fail with.
//!
//! Maps and rows:
//! * [`map`]: [`Map`], the read/edit view of a tree: point and ordinal lookups, ranges in both
//!   directions, prefix scans, cursors ([`map::Cursor`]), leaf-at-a-time walks
//!   ([`map::Leaves`]), batch edits ([`Map::apply`], [`map::MapEditor`]), diffs.
//! * [`builder`]: rows one at a time: [`builder::MapBuilder`] for sorted input,
//!   [`builder::SortingBuilder`] for any order within a memory bound (sorted runs on disk).
//! * [`sort`]: sorting many keys fast (exact sort words, bucketed), for that builder and for
//!   Dolt's bulk imports and index builds.
//! * [`tuples`]: [`tuples::TupleSchema`] (Dolt tuple order and value addresses) and field access
//!   that follows out-of-band values.
//! * [`rows`]: typed rows: named columns with SQL type names ([`rows::RowSchema`]), rows of
//!   values encoded into and decoded from key and value tuples.
//! * [`catalog`]: named maps that remember their row schema (the map's root and its schema
//!   blob as two named roots of a store), as the CLI, C and Python keep them.
//!
//! * [`typed`]: [`TypedMap`], a map with a row schema, read and written in rows of [`Datum`]s
//!   ([`datum`]): gets, ranges, edit batches, diffs, three-way merges whose conflicts are rows,
//!   copies between stores, named maps that keep their schema. The same trees as [`Map`].
//!
//! A first program: rows in any order, a get, a range, an edit, a diff.
//!
//! ```
//! use prollystore::format::HashProfile;
//! use prollystore::rows::RowSchema;
//! use prollystore::{Datum, MemoryStore, TypedMap};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let store = MemoryStore::new(HashProfile::Dolt);
//! let schema = RowSchema::parse("id:bigint", "name:varchar(40)?, score:double")?;
//! let rows = (0..1000i64).rev().map(|i| [Datum::Int(i), format!("row {i}").into(), (i as f64 / 2.0).into()]);
//! let map = TypedMap::from_rows(&store, schema, rows)?;
//! assert_eq!(map.count()?, 1000);
//! let row = map.get(&[500.into()])?.expect("row 500");
//! println!("{} {} {}", row[0], row[1], row[2]); // 500 row 500 250
//! for row in map.range([Datum::Int(10)]..[Datum::Int(13)])? {
//!     println!("{:?}", row?);
//! }
//! let edited = map.edit().put([7.into(), Datum::Null, 0.5.into()])?.delete(&[8.into()])?.finish()?;
//! assert_eq!(map.diff(&edited)?.count(), 2);
//! println!("root {}", edited.root()); // the address Dolt computes for the same rows
//! # Ok(())
//! # }
//! ```
//!
//! The same map through the byte-level API, tuples built by hand:
//!
//! ```
//! use prollystore::format::tuple::{TupleBuilder, TupleDesc, Type};
//! use prollystore::format::{Encoding, HashProfile};
//! use prollystore::{tuples::TupleSchema, Map, MemoryStore};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let store = MemoryStore::new(HashProfile::Dolt);
//! let schema = TupleSchema::new(
//!     TupleDesc::new(vec![Type::not_null(Encoding::Int64)]),
//!     TupleDesc::new(vec![Type::nullable(Encoding::String)]),
//! );
//! let mut kb = TupleBuilder::new(schema.key.clone());
//! let mut vb = TupleBuilder::new(schema.value.clone());
//! let mut rows = Vec::new();
//! for i in 0..1000 {
//!     kb.put_int64(0, i)?;
//!     vb.put_string(0, &format!("row {i}"))?;
//!     rows.push((kb.build()?.as_bytes().to_vec(), vb.build()?.as_bytes().to_vec()));
//! }
//! let map = Map::from_sorted(&store, schema, rows.iter().map(|(k, v)| (&k[..], &v[..])))?;
//! assert_eq!(map.count()?, 1000);
//! let (key, _) = &rows[500];
//! assert!(map.get(key)?.is_some());
//! # Ok(())
//! # }
//! ```

pub use prollystore_format as format;

pub mod blob;
pub mod builder;
pub mod catalog;
pub mod datum;
pub mod error;
pub mod map;
pub mod process;
pub mod rows;
pub mod shared;
pub mod sort;
pub mod store;
pub mod tree;
pub mod tuples;
pub mod typed;

pub use datum::Datum;
pub use error::TreeError;
pub use map::Map;
pub use store::{BuiltinStore, ChunkStore, FileStore, MemoryStore, StoreError, StoreFastPaths};
pub use tree::diff::{ChangedLeaf, ChangedLeaves, Diff, DiffEntry};
pub use tree::schema::{BytesSchema, TreeSchema};
pub use typed::{TypedError, TypedMap};
