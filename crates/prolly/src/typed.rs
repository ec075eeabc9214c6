//! [`TypedMap`]: a [`Map`] with a row schema, read and written in rows of [`Datum`]s.
//!
//! A typed map is a byte-level [`Map`] plus its [`RowSchema`]: the same tree, the same chunks
//! and root address, with every call taking and giving whole rows (key columns first) instead
//! of tuples. Keys are given as the key columns' values alone. Text, bytes and JSON too large
//! for a row move into blob trees in the map's store, as Dolt stores them, and come back whole.
//!
//! ```
//! use prollystore::datum::Datum;
//! use prollystore::format::HashProfile;
//! use prollystore::rows::RowSchema;
//! use prollystore::typed::TypedMap;
//! use prollystore::MemoryStore;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let store = MemoryStore::new(HashProfile::Dolt);
//! let schema = RowSchema::parse("name:varchar(40)", "score:bigint, doc:json?")?;
//! // Rows in any order, key columns first.
//! let rows = (0..1000).rev().map(|i| vec![format!("user{i:04}").into(), Datum::Int(i), Datum::Null]);
//! let map = TypedMap::from_rows(&store, schema, rows)?;
//! assert_eq!(map.count()?, 1000);
//! let row = map.get(&["user0042".into()])?.expect("a row");
//! assert_eq!(row[1], Datum::Int(42));
//!
//! let edited = map.edit().put(vec!["zed".into(), 5.into(), Datum::json(r#"{"a": 1}"#)])?
//!     .delete(&["user0000".into()])?.finish()?;
//! assert_eq!(edited.get(&["zed".into()])?.unwrap()[2], Datum::json(r#"{"a":1}"#));
//! assert_eq!(map.diff(&edited)?.count(), 2);
//! # Ok(())
//! # }
//! ```

use std::fmt;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use prollystore_format::tuple::Value;
use prollystore_format::Address;
use thiserror::Error;

use crate::blob::{read_blob, StoreBlobs};
use crate::builder::{SortingBuilder, DEFAULT_MEMORY_BOUND};
use crate::catalog::{open_map, schema_root_name, write_schema, CatalogError, NamedRoots};
use crate::datum::Datum;
use crate::map::{Iter, Map};
use crate::rows::{quote_bounded, Column, RowEncoder, RowError, RowSchema};
use crate::store::{FileStore, RootUpdate, StoreError, StoreFastPaths};
use crate::tree::copy::copy_tree;
use crate::tree::diff::{Diff, DiffEntry};
use crate::tree::merge::Resolution;
use crate::tree::schema::TreeSchema;
use crate::tuples::TupleSchema;
use crate::TreeError;

/// A row of a typed map: one [`Datum`] per column, key columns first.
pub type TypedRow = Vec<Datum>;

/// What went wrong with a typed map call.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum TypedError {
    /// A value does not fit its column, or a stored value does not decode.
    #[error("column {column}: {why}")]
    Value {
        /// The column's name, quoted.
        column: String,
        /// Why.
        why: String,
    },
    /// A row or key has the wrong number of values, or the schema is wrong.
    #[error(transparent)]
    Row(#[from] RowError),
    /// The tree could not be read or written.
    #[error(transparent)]
    Tree(#[from] TreeError),
    /// A named map could not be found, read or named.
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// The store failed (a commit's root conflict, say).
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A stored (key, value) pair, borrowed from the store.
type StoredPair<'s> = (&'s [u8], &'s [u8]);

fn value_error(col: &Column, why: impl fmt::Display) -> TypedError {
    TypedError::Value {
        column: quote_bounded(&col.name),
        why: why.to_string(),
    }
}

/// A map whose rows have a schema: the byte-level [`Map`] underneath, plus its [`RowSchema`].
/// Cheap to clone (the schema is shared).
pub struct TypedMap<'s, S: StoreFastPaths + ?Sized> {
    map: Map<'s, S, TupleSchema>,
    schema: Arc<RowSchema>,
}

impl<S: StoreFastPaths + ?Sized> Clone for TypedMap<'_, S> {
    fn clone(&self) -> Self {
        TypedMap {
            map: self.map.clone(),
            schema: Arc::clone(&self.schema),
        }
    }
}

impl<S: StoreFastPaths + ?Sized> fmt::Debug for TypedMap<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TypedMap")
            .field("root", &self.map.root())
            .field("schema", &self.schema.describe())
            .finish()
    }
}

impl<'s, S: StoreFastPaths + ?Sized> TypedMap<'s, S> {
    /// The map of `schema`'s rows whose root node is at `root`.
    pub fn new(store: &'s S, root: Address, schema: RowSchema) -> Self {
        let ts = schema.tuple_schema();
        TypedMap {
            map: Map::new(store, root, ts),
            schema: Arc::new(schema),
        }
    }

    /// The typed view of a byte-level map (its tuples must be `schema`'s).
    pub fn from_map(map: Map<'s, S, TupleSchema>, schema: RowSchema) -> Self {
        TypedMap {
            map,
            schema: Arc::new(schema),
        }
    }

    /// The empty map.
    pub fn empty(store: &'s S, schema: RowSchema) -> Result<Self, TypedError> {
        let map = Map::empty(store, schema.tuple_schema())?;
        Ok(Self::from_map(map, schema))
    }

    /// Builds a map from rows in any order (key columns first), sorting them within
    /// [`DEFAULT_MEMORY_BOUND`] bytes of memory and through temporary files beyond that
    /// ([`SortingBuilder`]). Two rows with one key are an error, and nothing is built.
    ///
    /// ```
    /// # use prollystore::{datum::Datum, format::HashProfile, rows::RowSchema, typed::TypedMap, MemoryStore};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let store = MemoryStore::new(HashProfile::Dolt);
    /// let schema = RowSchema::parse("id:bigint", "name:text")?;
    /// let rows = [[Datum::Int(2), "two".into()], [Datum::Int(1), "one".into()]];
    /// let map = TypedMap::from_rows(&store, schema.clone(), rows.clone())?;
    /// // The same rows in key order give the same tree, and the byte API's root.
    /// let sorted = TypedMap::from_rows(&store, schema, [rows[1].clone(), rows[0].clone()])?;
    /// assert_eq!(map.root(), sorted.root());
    /// // Two rows with one key: refused.
    /// let dup = [[Datum::Int(1), "a".into()], [Datum::Int(1), "b".into()]];
    /// assert!(TypedMap::from_rows(&store, map.schema().clone(), dup).is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn from_rows<R: AsRef<[Datum]>>(
        store: &'s S,
        schema: RowSchema,
        rows: impl IntoIterator<Item = R>,
    ) -> Result<Self, TypedError> {
        Self::from_rows_within(store, schema, rows, DEFAULT_MEMORY_BOUND)
    }

    /// [`TypedMap::from_rows`] keeping about `memory_bound` bytes of rows in memory.
    pub fn from_rows_within<R: AsRef<[Datum]>>(
        store: &'s S,
        schema: RowSchema,
        rows: impl IntoIterator<Item = R>,
        memory_bound: usize,
    ) -> Result<Self, TypedError> {
        let mut sorter = SortingBuilder::new(schema.tuple_schema(), memory_bound);
        {
            let mut enc = RowEncoder::new(&schema);
            let mut blobs = StoreBlobs::new(store);
            for row in rows {
                let row = row.as_ref();
                let json = normalized_json(&schema, row)?;
                let values = to_values(&schema, row, &json)?;
                let (k, v) = enc.encode_with(&values, &mut blobs)?;
                sorter.add(k, v)?;
            }
        }
        let map = sorter.finish(store)?;
        Ok(Self::from_map(map, schema))
    }

    /// The named map `name` of `store`, with the schema it was saved with
    /// ([`TypedMap::save_as`]).
    pub fn open(store: &'s S, name: &str) -> Result<Self, TypedError>
    where
        S: NamedRoots,
    {
        let entry = open_map(store, name)?;
        Ok(Self::new(store, entry.root, entry.schema))
    }

    /// Address of the root node (what Dolt computes for the same rows).
    pub fn root(&self) -> Address {
        self.map.root()
    }

    /// The row schema.
    pub fn schema(&self) -> &RowSchema {
        &self.schema
    }

    /// The byte-level map underneath (the same tree).
    pub fn map(&self) -> &Map<'s, S, TupleSchema> {
        &self.map
    }

    /// The position of column `name` in rows (key columns first).
    ///
    /// ```
    /// # use prollystore::{datum::Datum, format::HashProfile, rows::RowSchema, typed::TypedMap, MemoryStore};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let store = MemoryStore::new(HashProfile::Dolt);
    /// let map = TypedMap::empty(&store, RowSchema::parse("id:int", "name:text, age:int?")?)?;
    /// assert_eq!((map.column("age"), map.column("nope")), (Some(2), None));
    /// # Ok(())
    /// # }
    /// ```
    pub fn column(&self, name: &str) -> Option<usize> {
        self.schema.columns().position(|c| c.name == name)
    }

    /// Number of rows.
    pub fn count(&self) -> Result<u64, TypedError> {
        Ok(self.map.count()?)
    }

    /// The row whose key columns hold `key`, if any.
    ///
    /// ```
    /// # use prollystore::{datum::Datum, format::HashProfile, rows::RowSchema, typed::TypedMap, MemoryStore};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let store = MemoryStore::new(HashProfile::Dolt);
    /// let schema = RowSchema::parse("region:varchar(8), id:int", "total:decimal(10,2)?")?;
    /// let map = TypedMap::from_rows(&store, schema, [
    ///     ["eu".into(), Datum::Int(1), Datum::decimal(-2, 1250)],
    ///     ["us".into(), Datum::Int(1), Datum::Null],
    /// ])?;
    /// let row = map.get(&["eu".into(), 1.into()])?.expect("eu/1");
    /// assert_eq!(row[2].to_string(), "12.50");
    /// assert_eq!(map.get(&["us".into(), 1.into()])?.unwrap()[2], Datum::Null);
    /// assert_eq!(map.get(&["us".into(), 2.into()])?, None);
    /// assert!(map.get(&["us".into()]).is_err()); // a key needs both columns
    /// # Ok(())
    /// # }
    /// ```
    pub fn get(&self, key: &[Datum]) -> Result<Option<TypedRow>, TypedError> {
        let k = self.encode_key(key)?;
        match self.map.get(&k)? {
            Some(v) => Ok(Some(self.decode(&k, v)?)),
            None => Ok(None),
        }
    }

    /// True if a row has this key.
    ///
    /// ```
    /// # use prollystore::{datum::Datum, format::HashProfile, rows::RowSchema, typed::TypedMap, MemoryStore};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let store = MemoryStore::new(HashProfile::Dolt);
    /// let map = TypedMap::from_rows(&store, RowSchema::parse("k:int", "")?, [[Datum::Int(7)]])?;
    /// assert!(map.contains(&[7.into()])? && !map.contains(&[8.into()])?);
    /// # Ok(())
    /// # }
    /// ```
    pub fn contains(&self, key: &[Datum]) -> Result<bool, TypedError> {
        let k = self.encode_key(key)?;
        Ok(self.map.get(&k)?.is_some())
    }

    /// Every row in key order.
    ///
    /// ```
    /// # use prollystore::{datum::Datum, format::HashProfile, rows::RowSchema, typed::TypedMap, MemoryStore};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let store = MemoryStore::new(HashProfile::Dolt);
    /// let schema = RowSchema::parse("id:int", "name:text")?;
    /// let map = TypedMap::from_rows(&store, schema, [[Datum::Int(2), "b".into()], [Datum::Int(1), "a".into()]])?;
    /// let names: Vec<String> = map.iter()?.map(|r| r.map(|r| r[1].to_string())).collect::<Result<_, _>>()?;
    /// assert_eq!(names, ["a", "b"]); // key order
    /// # Ok(())
    /// # }
    /// ```
    pub fn iter(&self) -> Result<TypedIter<'s, '_, S>, TypedError> {
        self.range::<[Datum; 0]>(..)
    }

    /// The rows whose keys lie in `range` (of key values: `[a]..[b]`, `[a]..`, `..=[b]`), in
    /// key order. A key of fewer values than the key has columns is a prefix: `..[p]` stops
    /// before the first key starting with `p`, `..=[p]` after the last.
    ///
    /// ```
    /// # use prollystore::{datum::Datum, format::HashProfile, rows::RowSchema, typed::TypedMap, MemoryStore};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let store = MemoryStore::new(HashProfile::Dolt);
    /// let schema = RowSchema::parse("id:int", "v:text?")?;
    /// let map = TypedMap::from_rows(&store, schema, (0..100).map(|i| [Datum::Int(i), Datum::Null]))?;
    /// let ids: Vec<Datum> = map
    ///     .range([Datum::Int(10)]..[Datum::Int(13)])?
    ///     .map(|row| row.map(|r| r[0].clone()))
    ///     .collect::<Result<_, _>>()?;
    /// assert_eq!(ids, [Datum::Int(10), Datum::Int(11), Datum::Int(12)]);
    /// assert_eq!(map.range([Datum::Int(95)]..)?.count(), 5);
    /// # Ok(())
    /// # }
    /// ```
    pub fn range<K: AsRef<[Datum]>>(
        &self,
        range: impl RangeBounds<K>,
    ) -> Result<TypedIter<'s, '_, S>, TypedError> {
        let encode = |b: Bound<&K>| -> Result<Bound<(Vec<u8>, usize)>, TypedError> {
            let enc = |k: &K| {
                Ok::<_, TypedError>((self.encode_key_prefix(k.as_ref())?, k.as_ref().len()))
            };
            Ok(match b {
                Bound::Included(k) => Bound::Included(enc(k)?),
                Bound::Excluded(k) => Bound::Excluded(enc(k)?),
                Bound::Unbounded => Bound::Unbounded,
            })
        };
        let (lo, hi) = (encode(range.start_bound())?, encode(range.end_bound())?);
        let lo = match &lo {
            Bound::Included((k, _)) => Bound::Included(&k[..]),
            Bound::Excluded((k, _)) => Bound::Excluded(&k[..]),
            Bound::Unbounded => Bound::Unbounded,
        };
        let inner = self.map.range(lo, Bound::Unbounded)?;
        Ok(TypedIter {
            inner,
            typed: self,
            hi,
            done: false,
            scratch: Vec::new(),
        })
    }

    /// A batch of puts and deletes, applied together by [`TypedEditor::finish`].
    ///
    /// ```
    /// # use prollystore::{datum::Datum, format::HashProfile, rows::RowSchema, typed::TypedMap, MemoryStore};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let store = MemoryStore::new(HashProfile::Dolt);
    /// let map = TypedMap::from_rows(&store, RowSchema::parse("id:int", "n:int")?, (0..10).map(|i| [Datum::Int(i), Datum::Int(i)]))?;
    /// let mut ed = map.edit();
    /// for i in 0..5 {
    ///     ed.insert([Datum::Int(i), Datum::Int(-i)])?; // replaces rows 0..5
    /// }
    /// ed.remove(&[9.into()])?;
    /// let edited = ed.finish()?;
    /// assert_eq!((map.count()?, edited.count()?), (10, 9));
    /// assert_eq!(edited.get(&[3.into()])?.unwrap()[1], Datum::Int(-3));
    /// // A value that does not fit its column is refused, naming the column.
    /// let err = map.edit().put([Datum::Int(1), "x".into()]).unwrap_err();
    /// assert!(err.to_string().contains("\"n\""));
    /// # Ok(())
    /// # }
    /// ```
    pub fn edit(&self) -> TypedEditor<'_, 's, S> {
        TypedEditor {
            map: self,
            edits: Vec::new(),
        }
    }

    /// The rows that differ from this map to `to` (same schema), in key order.
    ///
    /// ```
    /// # use prollystore::{datum::Datum, format::HashProfile, rows::RowSchema, typed::TypedMap, MemoryStore};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let store = MemoryStore::new(HashProfile::Dolt);
    /// use prollystore::typed::RowChange;
    /// let map = TypedMap::from_rows(&store, RowSchema::parse("id:int", "n:int")?, (0..10).map(|i| [Datum::Int(i), Datum::Int(i)]))?;
    /// let edited = map.edit().put([Datum::Int(3), Datum::Int(30)])?.delete(&[4.into()])?.finish()?;
    /// let changes: Vec<RowChange> = map.diff(&edited)?.collect::<Result<_, _>>()?;
    /// assert_eq!(changes[0].key, [Datum::Int(3)]);
    /// assert_eq!(changes[0].new.as_ref().unwrap()[1], Datum::Int(30));
    /// assert_eq!(changes[1].new, None); // row 4 removed
    /// # Ok(())
    /// # }
    /// ```
    pub fn diff<'m>(&'m self, to: &TypedMap<'s, S>) -> Result<TypedDiff<'s, 'm, S>, TypedError> {
        let inner = self.map.diff(&to.map)?;
        Ok(TypedDiff { inner, typed: self })
    }

    /// Three-way merge: this map is ours; the changes from `base` to `theirs` are merged into
    /// it. Rows both sides changed to different rows keep our row in [`Merged::map`] and are
    /// listed in [`Merged::conflicts`]; [`Merged::resolve`] settles them in one call.
    ///
    /// ```
    /// # use prollystore::{datum::Datum, format::HashProfile, rows::RowSchema, typed::TypedMap, MemoryStore};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let store = MemoryStore::new(HashProfile::Dolt);
    /// let schema = RowSchema::parse("id:int", "v:int")?;
    /// let base = TypedMap::from_rows(&store, schema, (0..10).map(|i| [Datum::Int(i), Datum::Int(0)]))?;
    /// let ours = base.edit().put(vec![1.into(), 10.into()])?.put(vec![2.into(), 20.into()])?.finish()?;
    /// let theirs = base.edit().put(vec![2.into(), 30.into()])?.put(vec![3.into(), 30.into()])?.finish()?;
    /// let merged = ours.merge(&base, &theirs)?;
    /// assert_eq!(merged.conflicts.len(), 1);
    /// let c = &merged.conflicts[0];
    /// assert_eq!((c.ours.as_ref().unwrap()[1].clone(), c.theirs.as_ref().unwrap()[1].clone()), (20.into(), 30.into()));
    /// let map = merged.resolve(|c| c.theirs.clone())?;
    /// assert_eq!(map.get(&[2.into()])?.unwrap()[1], Datum::Int(30));
    /// assert_eq!(map.get(&[3.into()])?.unwrap()[1], Datum::Int(30));
    /// # Ok(())
    /// # }
    /// ```
    pub fn merge(
        &self,
        base: &TypedMap<'s, S>,
        theirs: &TypedMap<'s, S>,
    ) -> Result<Merged<'s, S>, TypedError> {
        let (map, raw) = self
            .map
            .merge(&base.map, &theirs.map, |_, _, _, _| Resolution::Conflict)?;
        let typed = TypedMap {
            map,
            schema: Arc::clone(&self.schema),
        };
        let mut conflicts = Vec::with_capacity(raw.len());
        for c in raw {
            let row = |v: &Option<Vec<u8>>| -> Result<Option<TypedRow>, TypedError> {
                v.as_ref().map(|v| typed.decode(&c.key, v)).transpose()
            };
            let mut key = Vec::with_capacity(self.schema.key.len());
            typed.decode_key_into(&c.key, &mut key)?;
            conflicts.push(RowConflict {
                base: row(&c.base)?,
                ours: row(&c.left)?,
                theirs: row(&c.right)?,
                key,
                key_bytes: c.key,
            });
        }
        Ok(Merged {
            map: typed,
            conflicts,
        })
    }

    /// Copies the map's chunks (and the blobs its rows refer to) into `to`, sending only what
    /// `to` lacks, and returns the map there.
    ///
    /// ```
    /// # use prollystore::{datum::Datum, format::HashProfile, rows::RowSchema, typed::TypedMap, MemoryStore};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let store = MemoryStore::new(HashProfile::Dolt);
    /// let map = TypedMap::from_rows(&store, RowSchema::parse("id:int", "t:text")?, (0..5000).map(|i| [Datum::Int(i), "x".repeat(100).into()]))?;
    /// let other = MemoryStore::new(HashProfile::Dolt);
    /// let copy = map.copy_to(&other)?;
    /// assert_eq!((copy.root(), copy.count()?), (map.root(), 5000));
    /// # Ok(())
    /// # }
    /// ```
    pub fn copy_to<'t, S2: StoreFastPaths + ?Sized>(
        &self,
        to: &'t S2,
    ) -> Result<TypedMap<'t, S2>, TypedError> {
        copy_tree(self.map.store(), to, &self.map.root())?;
        Ok(TypedMap {
            map: Map::new(to, self.map.root(), self.map.schema().clone()),
            schema: Arc::clone(&self.schema),
        })
    }

    /// Writes the schema beside the map's chunks and returns the named map to commit
    /// ([`SavedMap::commit`]): the map `name` and its schema become two named roots
    /// (`docs/FORMAT.md`, "Named maps and their schemas"), so [`TypedMap::open`] needs only
    /// the name.
    ///
    /// ```
    /// # use prollystore::{datum::Datum, format::HashProfile, rows::RowSchema, typed::TypedMap, MemoryStore};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let store = MemoryStore::new(HashProfile::Dolt);
    /// use prollystore::FileStore;
    /// let dir = tempfile::tempdir()?;
    /// let mut store = FileStore::create(dir.path(), HashProfile::Dolt)?;
    /// let map = TypedMap::from_rows(&store, RowSchema::parse("id:int", "t:text?")?, [[Datum::Int(1), Datum::Null]])?;
    /// map.save_as("things")?.commit(&mut store)?;
    /// drop(store);
    /// let store = FileStore::open(dir.path())?;
    /// let things = TypedMap::open(&store, "things")?; // no schema needed
    /// assert_eq!(things.schema().describe(), "key=id:int32 value=t:string_adaptive?");
    /// assert_eq!(things.get(&[1.into()])?, Some(vec![Datum::Int(1), Datum::Null]));
    /// assert!(TypedMap::open(&store, "other").is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn save_as(&self, name: &str) -> Result<SavedMap, TypedError> {
        crate::catalog::check_map_name(name)?;
        let schema_address = write_schema(self.map.store(), &self.schema)?;
        Ok(SavedMap {
            name: name.to_string(),
            root: self.map.root(),
            schema_address,
        })
    }

    /// Encodes full key values.
    fn encode_key(&self, key: &[Datum]) -> Result<Vec<u8>, TypedError> {
        let cols = &self.schema.key;
        if key.len() != cols.len() {
            return Err(RowError::Arity {
                expected: cols.len(),
                got: key.len(),
            }
            .into());
        }
        self.encode_key_prefix(key)
    }

    /// Encodes the first `key.len()` key columns (a prefix, for range bounds).
    fn encode_key_prefix(&self, key: &[Datum]) -> Result<Vec<u8>, TypedError> {
        let cols = &self.schema.key;
        if key.len() > cols.len() {
            return Err(RowError::Arity {
                expected: cols.len(),
                got: key.len(),
            }
            .into());
        }
        let cols = &cols[..key.len()];
        let json = normalized_json_cols(cols, key)?;
        let values = values_for(cols, key, &json)?;
        if key.len() == self.schema.key.len() {
            return Ok(self.schema.encode_key(&values)?);
        }
        let prefix = RowSchema {
            key: cols.to_vec(),
            value: Vec::new(),
        };
        Ok(prefix.encode_key(&values)?)
    }

    /// Decodes a stored row.
    fn decode(&self, key: &[u8], value: &[u8]) -> Result<TypedRow, TypedError> {
        let mut out = Vec::new();
        self.decode_with(key, value, &mut Vec::new(), &mut out)?;
        Ok(out)
    }

    /// Decodes a stored row into `out` through `scratch` (both kept by callers that decode
    /// many rows: `out`'s text and byte buffers are reused).
    fn decode_with<'a>(
        &self,
        key: &'a [u8],
        value: &'a [u8],
        scratch: &mut Vec<Option<Value<'a>>>,
        out: &mut TypedRow,
    ) -> Result<(), TypedError> {
        let ts = self.map.schema();
        let schema = &*self.schema;
        scratch.clear();
        ts.key
            .values_into(key, scratch)
            .map_err(|e| stored_error(&schema.key, e))?;
        ts.value
            .values_into(value, scratch)
            .map_err(|e| stored_error(&schema.value, e))?;
        self.datums_into(scratch, schema.columns(), out)
    }

    fn decode_key_into(&self, key: &[u8], out: &mut TypedRow) -> Result<(), TypedError> {
        let mut scratch = Vec::with_capacity(self.schema.key.len());
        self.map
            .schema()
            .key
            .values_into(key, &mut scratch)
            .map_err(|e| stored_error(&self.schema.key, e))?;
        self.datums_into(&scratch, self.schema.key.iter(), out)
    }

    /// The datums of stored values, one per column (out-of-band values read from the store),
    /// as the whole of `out`, whose datums' buffers are reused.
    fn datums_into<'a, 'c>(
        &self,
        values: &[Option<Value<'a>>],
        cols: impl Iterator<Item = &'c Column>,
        out: &mut TypedRow,
    ) -> Result<(), TypedError> {
        let store = self.map.store();
        let mut payload = |len: u64, address: &Address, out: &mut Vec<u8>| {
            read_blob(store, address, out).map_err(|e| e.to_string())?;
            if out.len() as u64 != len {
                return Err(format!(
                    "blob {address} holds {} bytes, the field says {len}",
                    out.len()
                ));
            }
            Ok(())
        };
        out.resize_with(values.len(), || Datum::Null);
        for ((v, c), d) in values.iter().zip(cols).zip(out.iter_mut()) {
            d.set_from_value(*v, c.ty.enc, &mut payload)
                .map_err(|e| value_error(c, e))?;
        }
        Ok(())
    }
}

/// The error for a stored tuple that does not decode (naming the first column of its part).
#[cold]
fn stored_error(cols: &[Column], e: impl fmt::Display) -> TypedError {
    let col = cols.first().map_or("?", |c| c.name.as_str());
    TypedError::Value {
        column: quote_bounded(col),
        why: format!("stored tuple does not decode: {e}"),
    }
}

/// For each column of `cols`, the normalized JSON of its datum when it is a JSON column.
fn normalized_json_cols(
    cols: &[Column],
    row: &[Datum],
) -> Result<Vec<Option<Vec<u8>>>, TypedError> {
    cols.iter()
        .zip(row)
        .map(|(c, d)| d.normalized_json(c.ty.enc).map_err(|e| value_error(c, e)))
        .collect()
}

fn normalized_json(schema: &RowSchema, row: &[Datum]) -> Result<Vec<Option<Vec<u8>>>, TypedError> {
    check_arity(schema, row)?;
    let cols: Vec<Column> = schema.columns().cloned().collect();
    normalized_json_cols(&cols, row)
}

fn check_arity(schema: &RowSchema, row: &[Datum]) -> Result<(), TypedError> {
    let n = schema.key.len() + schema.value.len();
    if row.len() != n {
        return Err(RowError::Arity {
            expected: n,
            got: row.len(),
        }
        .into());
    }
    Ok(())
}

/// The stored values of `row` for `cols` (JSON from `json`).
fn values_for<'a>(
    cols: &[Column],
    row: &'a [Datum],
    json: &'a [Option<Vec<u8>>],
) -> Result<Vec<Option<Value<'a>>>, TypedError> {
    cols.iter()
        .zip(row)
        .zip(json)
        .map(|((c, d), j)| {
            d.to_value(c.ty.enc, j.as_deref())
                .map_err(|e| value_error(c, e))
        })
        .collect()
}

fn to_values<'a>(
    schema: &RowSchema,
    row: &'a [Datum],
    json: &'a [Option<Vec<u8>>],
) -> Result<Vec<Option<Value<'a>>>, TypedError> {
    check_arity(schema, row)?;
    let cols: Vec<Column> = schema.columns().cloned().collect();
    values_for(&cols, row, json)
}

/// Rows of a typed map in key order ([`TypedMap::iter`], [`TypedMap::range`]).
pub struct TypedIter<'s, 'b, S: StoreFastPaths + ?Sized> {
    inner: Iter<'s, 'b, S, TupleSchema>,
    typed: &'b TypedMap<'s, S>,
    /// The upper bound: an encoded key and how many key columns it gives.
    hi: Bound<(Vec<u8>, usize)>,
    done: bool,
    scratch: Vec<Option<Value<'s>>>,
}

impl<'s, S: StoreFastPaths + ?Sized> TypedIter<'s, '_, S> {
    /// The next row into `row` (its text and byte buffers reused), or `false` at the end:
    /// a scan through one row allocates only when a value outgrows the one before it, where
    /// [`Iterator::next`] allocates each row.
    ///
    /// ```
    /// # use prollystore::{datum::Datum, format::HashProfile, rows::RowSchema, typed::TypedMap, MemoryStore};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let store = MemoryStore::new(HashProfile::Dolt);
    /// let schema = RowSchema::parse("id:int", "name:text")?;
    /// let map = TypedMap::from_rows(&store, schema, (0..3).map(|i| [Datum::Int(i), format!("n{i}").into()]))?;
    /// let (mut rows, mut row) = (map.iter()?, Vec::new());
    /// let mut names = String::new();
    /// while rows.next_into(&mut row)? {
    ///     names += &row[1].to_string();
    /// }
    /// assert_eq!(names, "n0n1n2");
    /// # Ok(())
    /// # }
    /// ```
    pub fn next_into(&mut self, row: &mut TypedRow) -> Result<bool, TypedError> {
        let Some((k, v)) = self.next_stored()? else {
            return Ok(false);
        };
        self.typed.decode_with(k, v, &mut self.scratch, row)?;
        Ok(true)
    }

    /// The next stored (key, value) pair inside the range.
    fn next_stored(&mut self) -> Result<Option<StoredPair<'s>>, TypedError> {
        if self.done {
            return Ok(None);
        }
        let (k, v) = match self.inner.next() {
            None => return Ok(None),
            Some(Ok(kv)) => kv,
            Some(Err(e)) => {
                self.done = true;
                return Err(e.into());
            }
        };
        let keys = self.typed.map.schema();
        let full = self.typed.schema.key.len();
        let cmp = |h: &[u8], n: usize| {
            if n == full {
                keys.compare_keys(k, h)
            } else {
                keys.key.compare_prefix(k, h, n)
            }
        };
        let inside = match &self.hi {
            Bound::Unbounded => true,
            Bound::Included((h, n)) => cmp(h, *n).is_le(),
            Bound::Excluded((h, n)) => cmp(h, *n).is_lt(),
        };
        if !inside {
            self.done = true;
            return Ok(None);
        }
        Ok(Some((k, v)))
    }
}

impl<S: StoreFastPaths + ?Sized> Iterator for TypedIter<'_, '_, S> {
    type Item = Result<TypedRow, TypedError>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut row =
            Vec::with_capacity(self.typed.schema.key.len() + self.typed.schema.value.len());
        self.next_into(&mut row)
            .map(|more| more.then_some(row))
            .transpose()
    }
}

/// A batch of edits of a typed map ([`TypedMap::edit`]); nothing changes until
/// [`TypedEditor::finish`], which returns the edited map (the original stays as it was).
pub struct TypedEditor<'m, 's, S: StoreFastPaths + ?Sized> {
    map: &'m TypedMap<'s, S>,
    edits: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

impl<S: StoreFastPaths + ?Sized> fmt::Debug for TypedEditor<'_, '_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TypedEditor")
            .field("map", self.map)
            .field("edits", &self.edits.len())
            .finish()
    }
}

impl<'s, S: StoreFastPaths + ?Sized> TypedEditor<'_, 's, S> {
    /// Inserts or replaces a row (key columns first).
    pub fn put(mut self, row: impl AsRef<[Datum]>) -> Result<Self, TypedError> {
        self.insert(row)?;
        Ok(self)
    }

    /// Inserts or replaces a row, by reference (for loops).
    pub fn insert(&mut self, row: impl AsRef<[Datum]>) -> Result<(), TypedError> {
        let schema = &self.map.schema;
        let row = row.as_ref();
        let json = normalized_json(schema, row)?;
        let values = to_values(schema, row, &json)?;
        let mut enc = RowEncoder::new(schema);
        let mut blobs = StoreBlobs::new(self.map.map.store());
        let (k, v) = enc.encode_with(&values, &mut blobs)?;
        self.edits.push((k.to_vec(), Some(v.to_vec())));
        Ok(())
    }

    /// Deletes the row with this key (nothing if there is none).
    pub fn delete(mut self, key: &[Datum]) -> Result<Self, TypedError> {
        self.remove(key)?;
        Ok(self)
    }

    /// Deletes the row with this key, by reference (for loops).
    pub fn remove(&mut self, key: &[Datum]) -> Result<(), TypedError> {
        let k = self.map.encode_key(key)?;
        self.edits.push((k, None));
        Ok(())
    }

    /// Edits so far.
    pub fn len(&self) -> usize {
        self.edits.len()
    }

    /// True if there are no edits.
    pub fn is_empty(&self) -> bool {
        self.edits.is_empty()
    }

    /// Applies the edits (a later edit of a key wins) and returns the edited map.
    pub fn finish(self) -> Result<TypedMap<'s, S>, TypedError> {
        let map = self
            .map
            .map
            .apply(self.edits.iter().map(|(k, v)| (&k[..], v.as_deref())))?;
        Ok(TypedMap {
            map,
            schema: Arc::clone(&self.map.schema),
        })
    }
}

/// One row that differs between two typed maps.
#[derive(Clone, Debug, PartialEq)]
pub struct RowChange {
    /// The key columns' values.
    pub key: Vec<Datum>,
    /// The row in the `from` map (`None`: added).
    pub old: Option<TypedRow>,
    /// The row in the `to` map (`None`: removed).
    pub new: Option<TypedRow>,
}

/// The rows that differ between two typed maps ([`TypedMap::diff`]).
pub struct TypedDiff<'s, 'm, S: StoreFastPaths + ?Sized> {
    inner: Diff<'s, 'm, S, TupleSchema>,
    typed: &'m TypedMap<'s, S>,
}

impl<S: StoreFastPaths + ?Sized> Iterator for TypedDiff<'_, '_, S> {
    type Item = Result<RowChange, TypedError>;

    fn next(&mut self) -> Option<Self::Item> {
        let e = match self.inner.next()? {
            Ok(e) => e,
            Err(e) => return Some(Err(e.into())),
        };
        let t = self.typed;
        let change = || -> Result<RowChange, TypedError> {
            let k = e.key();
            let (old, new) = match e {
                DiffEntry::Added { to, .. } => (None, Some(to)),
                DiffEntry::Removed { from, .. } => (Some(from), None),
                DiffEntry::Modified { from, to, .. } => (Some(from), Some(to)),
            };
            let mut key = Vec::new();
            t.decode_key_into(k, &mut key)?;
            Ok(RowChange {
                key,
                old: old.map(|v| t.decode(k, v)).transpose()?,
                new: new.map(|v| t.decode(k, v)).transpose()?,
            })
        };
        Some(change())
    }
}

/// A row both sides of a merge changed differently.
#[derive(Clone, Debug, PartialEq)]
pub struct RowConflict {
    /// The key columns' values.
    pub key: Vec<Datum>,
    /// The row in the common ancestor (`None`: absent).
    pub base: Option<TypedRow>,
    /// Our row (the map merged into).
    pub ours: Option<TypedRow>,
    /// Their row.
    pub theirs: Option<TypedRow>,
    key_bytes: Vec<u8>,
}

impl fmt::Display for RowConflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let row = |r: &Option<TypedRow>| match r {
            None => "(absent)".to_string(),
            Some(r) => r
                .iter()
                .map(Datum::to_string)
                .collect::<Vec<_>>()
                .join(", "),
        };
        let key: Vec<String> = self.key.iter().map(Datum::to_string).collect();
        write!(
            f,
            "key ({}): base [{}], ours [{}], theirs [{}]",
            key.join(", "),
            row(&self.base),
            row(&self.ours),
            row(&self.theirs)
        )
    }
}

/// The outcome of [`TypedMap::merge`].
#[derive(Debug)]
pub struct Merged<'s, S: StoreFastPaths + ?Sized> {
    /// The merged map; conflicting rows hold our row.
    pub map: TypedMap<'s, S>,
    /// Rows both sides changed differently, in key order.
    pub conflicts: Vec<RowConflict>,
}

impl<'s, S: StoreFastPaths + ?Sized> Merged<'s, S> {
    /// Settles every conflict in one batch: `choose` gives the row to keep (`None` deletes
    /// the key; `c.ours.clone()`, `c.theirs.clone()` or a row of its own). The chosen row's
    /// key columns must be the conflict's key.
    pub fn resolve(
        self,
        mut choose: impl FnMut(&RowConflict) -> Option<TypedRow>,
    ) -> Result<TypedMap<'s, S>, TypedError> {
        let mut ed = self.map.edit();
        for c in &self.conflicts {
            match choose(c) {
                Some(row) => {
                    ed.insert(&row)?;
                    let (k, _) = ed.edits.last().expect("just pushed");
                    if *k != c.key_bytes {
                        return Err(RowError::Schema(format!(
                            "the row chosen for conflict {c} has another key"
                        ))
                        .into());
                    }
                }
                None => ed.edits.push((c.key_bytes.clone(), None)),
            }
        }
        ed.finish()
    }
}

/// A typed map whose schema is written to its store, ready to commit under its name
/// ([`TypedMap::save_as`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SavedMap {
    /// The map's name.
    pub name: String,
    /// Its root node.
    pub root: Address,
    /// Its schema blob.
    pub schema_address: Address,
}

impl SavedMap {
    /// Commits the map and its schema as named roots of `store` (one atomic commit; whatever
    /// the names held before is replaced). Returns the store's new generation.
    pub fn commit(&self, store: &mut FileStore) -> Result<u64, TypedError> {
        let schema_name = schema_root_name(&self.name);
        let updates = [
            RootUpdate::new(&self.name, store.root(&self.name), Some(self.root)),
            RootUpdate::new(
                &schema_name,
                store.root(&schema_name),
                Some(self.schema_address),
            ),
        ];
        Ok(store.commit(&updates)?)
    }
}

#[cfg(test)]
mod tests {
    use prollystore_format::HashProfile;

    use super::*;
    use crate::MemoryStore;

    fn store() -> MemoryStore {
        MemoryStore::new(HashProfile::Dolt)
    }

    #[test]
    fn typed_and_byte_level_builds_give_one_tree() {
        let s = store();
        let schema = RowSchema::parse("id:bigint", "name:varchar(20)?, n:int").unwrap();
        let typed = TypedMap::from_rows(
            &s,
            schema.clone(),
            (0..3000i64).rev().map(|i| {
                [
                    Datum::Int(i),
                    Datum::from(format!("n{i}")),
                    Datum::Int(i % 7),
                ]
            }),
        )
        .unwrap();
        let names: Vec<String> = (0..3000).map(|i| format!("n{i}")).collect();
        let rows: Vec<(Vec<u8>, Vec<u8>)> = (0..3000i64)
            .map(|i| {
                schema
                    .encode_row(&[
                        Some(Value::Int64(i)),
                        Some(Value::String(&names[i as usize])),
                        Some(Value::Int32((i % 7) as i32)),
                    ])
                    .unwrap()
            })
            .collect();
        let bytes = Map::from_sorted(
            &s,
            schema.tuple_schema(),
            rows.iter().map(|(k, v)| (&k[..], &v[..])),
        )
        .unwrap();
        assert_eq!(typed.root(), bytes.root());
    }

    #[test]
    fn large_text_and_json_round_trip_through_blobs() {
        let s = store();
        let schema = RowSchema::parse("id:int", "body:text, doc:json").unwrap();
        let body = "x".repeat(100_000);
        let doc = format!(r#"{{ "b": "{}", "a": 1 }}"#, "y".repeat(70_000));
        let map = TypedMap::from_rows(
            &s,
            schema,
            [[Datum::Int(1), Datum::from(body.as_str()), Datum::json(doc)]],
        )
        .unwrap();
        let row = map.get(&[Datum::Int(1)]).unwrap().unwrap();
        assert_eq!(row[1], Datum::Text(body));
        let Datum::Json(stored) = &row[2] else {
            panic!("{:?}", row[2])
        };
        // Normalized as Dolt stores JSON: members sorted, no spaces.
        assert!(
            stored.starts_with(r#"{"a":1,"b":"yyy"#),
            "{}",
            &stored[..20]
        );
        let copy_store = store();
        let copy = map.copy_to(&copy_store).unwrap();
        assert_eq!(copy.get(&[Datum::Int(1)]).unwrap().unwrap(), row);
    }

    #[test]
    fn prefix_ranges_of_a_composite_key() {
        let s = store();
        let schema = RowSchema::parse("a:int, b:int", "").unwrap();
        let rows = (0..10).flat_map(|a| (0..10).map(move |b| [Datum::Int(a), Datum::Int(b)]));
        let map = TypedMap::from_rows(&s, schema, rows).unwrap();
        fn count(it: TypedIter<'_, '_, MemoryStore>) -> usize {
            it.map(Result::unwrap).count()
        }
        assert_eq!(
            count(map.range([Datum::Int(3)]..=[Datum::Int(4)]).unwrap()),
            20
        );
        assert_eq!(
            count(map.range([Datum::Int(3)]..[Datum::Int(4)]).unwrap()),
            10
        );
        assert_eq!(
            count(
                map.range([Datum::Int(3), Datum::Int(5)]..[Datum::Int(4), Datum::Int(1)])
                    .unwrap()
            ),
            6
        );
        assert_eq!(count(map.range(..[Datum::Int(1)]).unwrap()), 10);
        assert!(map
            .range([Datum::Int(1), Datum::Int(1), Datum::Int(1)]..)
            .is_err());
    }

    #[test]
    fn bad_rows_are_refused_with_the_column_named() {
        let s = store();
        let schema = RowSchema::parse("id:tinyint", "name:varchar(5)").unwrap();
        let err =
            TypedMap::from_rows(&s, schema.clone(), [[Datum::Int(300), "a".into()]]).unwrap_err();
        assert!(err.to_string().contains("\"id\""), "{err}");
        let err = TypedMap::from_rows(&s, schema.clone(), [[Datum::Int(1)]]).unwrap_err();
        assert!(
            matches!(err, TypedError::Row(RowError::Arity { .. })),
            "{err}"
        );
        let err =
            TypedMap::from_rows(&s, schema.clone(), [[Datum::Int(1), Datum::Null]]).unwrap_err();
        assert!(err.to_string().contains("name"), "{err}");
        let json = RowSchema::parse("id:int", "doc:json").unwrap();
        let err =
            TypedMap::from_rows(&s, json, [[Datum::Int(1), Datum::json("{nope")]]).unwrap_err();
        assert!(err.to_string().contains("JSON"), "{err}");
        let map = TypedMap::from_rows(&s, schema, [[Datum::Int(1), "a".into()]]).unwrap();
        let root = map.root();
        assert!(map.edit().put([Datum::Int(2), Datum::Int(5)]).is_err());
        assert_eq!(map.root(), root);
    }

    #[test]
    fn resolving_keeps_keys_and_can_delete() {
        let s = store();
        let schema = RowSchema::parse("id:int", "v:int").unwrap();
        let base = TypedMap::from_rows(&s, schema, (0..5).map(|i| [Datum::Int(i), Datum::Int(0)]))
            .unwrap();
        let ours = base.edit().put([Datum::Int(1), Datum::Int(1)]).unwrap();
        let ours = ours.finish().unwrap();
        let theirs = base
            .edit()
            .delete(&[Datum::Int(1)])
            .unwrap()
            .finish()
            .unwrap();
        let merged = ours.merge(&base, &theirs).unwrap();
        assert_eq!(merged.conflicts.len(), 1);
        assert_eq!(merged.conflicts[0].theirs, None);
        let text = merged.conflicts[0].to_string();
        assert_eq!(text, "key (1): base [1, 0], ours [1, 1], theirs [(absent)]");
        let wrong = ours.merge(&base, &theirs).unwrap();
        assert!(wrong
            .resolve(|_| Some(vec![Datum::Int(2), Datum::Int(9)]))
            .is_err());
        let map = merged.resolve(|c| c.theirs.clone()).unwrap();
        assert_eq!(map.count().unwrap(), 4);
    }
}
