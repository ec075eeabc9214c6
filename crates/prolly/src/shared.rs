//! Stores and maps that own a share of their store, so a program can keep maps in its own
//! structs and commit while they are alive.
//!
//! A [`Map`] borrows its store for as long as it lives, and [`FileStore::commit`] needs the
//! store exclusively (`&mut`): with borrowed maps, every map must be gone before a commit.
//! [`SharedStore`] is a cheaply cloned handle to one store behind a read-write lock, and
//! [`SharedMap`] is a map that holds such a handle instead of a borrow. A `SharedMap`
//! takes the lock only for the length of each call (or of a [`MapReader`] the caller keeps),
//! so commits can happen between calls, from this thread or another.
//!
//! The borrowed [`Map`] stays the fast path: a `SharedMap` call is a `Map` call plus one
//! uncontended lock, and everything `Map` offers is reachable through [`SharedMap::read`].
//!
//! ```
//! use prollystore::format::tuple::Value;
//! use prollystore::format::HashProfile;
//! use prollystore::rows::RowSchema;
//! use prollystore::shared::{SharedMap, SharedStore};
//! use prollystore::store::RootUpdate;
//! use prollystore::FileStore;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let store = SharedStore::new(FileStore::create(dir.path(), HashProfile::Dolt)?);
//! let schema = RowSchema::parse("id:bigint", "name:varchar(20)?")?;
//! let mut rows = Vec::new();
//! for i in 0..100i64 {
//!     let name = format!("n{i}");
//!     rows.push(schema.encode_row(&[Some(Value::Int64(i)), Some(Value::String(&name))])?);
//! }
//! let map = SharedMap::from_sorted(&store, schema.tuple_schema(), rows.iter().map(|(k, v)| (&k[..], &v[..])))?;
//!
//! // The map is alive, and the store commits.
//! store.commit(&[RootUpdate::new("items", None, Some(map.root()))])?;
//!
//! // Edit, commit again; both maps stay usable.
//! let key = schema.encode_key(&[Some(Value::Int64(7))])?;
//! let edited = map.apply([(&key[..], None)])?;
//! store.commit(&[RootUpdate::new("items", Some(map.root()), Some(edited.root()))])?;
//! assert_eq!(map.count()?, 100);
//! assert_eq!(edited.count()?, 99);
//! assert!(map.get(&key)?.is_some() && edited.get(&key)?.is_none());
//!
//! // Every `Map` call, through a read lock held as long as the reader lives.
//! let reader = edited.read();
//! let first_keys: Vec<Vec<u8>> = reader.map().iter()?.take(2).map(|r| r.map(|(k, _)| k.to_vec())).collect::<Result<_, _>>()?;
//! assert_eq!(first_keys.len(), 2);
//! drop(reader); // a commit waits for readers to end
//! store.commit(&[])?;
//! # Ok(())
//! # }
//! ```

use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use prollystore_format::Address;

use crate::error::TreeError;
use crate::map::Map;
use crate::store::{FileStore, RootUpdate, StoreError, StoreFastPaths};
use crate::tree::schema::TreeSchema;

/// A shared handle to one store: clones are cheap and refer to the same store. Reads (every
/// [`SharedMap`] call) share the lock; [`SharedStore::write`] and [`SharedStore::commit`]
/// wait until no read is in progress.
///
/// A thread that holds a [`MapReader`] (or a guard from [`SharedStore::read`]) must drop it
/// before it commits: the commit would wait for it forever.
pub struct SharedStore<S> {
    inner: Arc<RwLock<S>>,
}

impl<S> Clone for SharedStore<S> {
    fn clone(&self) -> Self {
        SharedStore {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<S> SharedStore<S> {
    /// Shares `store`.
    pub fn new(store: S) -> SharedStore<S> {
        SharedStore {
            inner: Arc::new(RwLock::new(store)),
        }
    }

    /// The store, for reading (and for puts, which stores take through `&self`). Waits while
    /// a writer holds the store.
    pub fn read(&self) -> RwLockReadGuard<'_, S> {
        // A panic elsewhere while holding the lock leaves the store as consistent as the
        // store's own methods leave it (they never panic midway by design): go on.
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The store, exclusively (for commits, garbage collection, refreshes). Waits until no
    /// read is in progress.
    pub fn write(&self) -> RwLockWriteGuard<'_, S> {
        self.inner.write().unwrap_or_else(|e| e.into_inner())
    }

    /// True if `self` and `other` are handles to the same store.
    pub fn same_store(&self, other: &SharedStore<S>) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// The store itself, if this is the last handle to it (no [`SharedMap`] holds it);
    /// otherwise the handle back.
    pub fn try_into_inner(self) -> Result<S, SharedStore<S>> {
        match Arc::try_unwrap(self.inner) {
            Ok(lock) => Ok(lock.into_inner().unwrap_or_else(|e| e.into_inner())),
            Err(inner) => Err(SharedStore { inner }),
        }
    }
}

impl SharedStore<FileStore> {
    /// [`FileStore::commit`] through the shared handle: waits for reads in progress, then
    /// makes the pending chunks and the root updates durable together.
    pub fn commit(&self, updates: &[RootUpdate<'_>]) -> Result<u64, StoreError> {
        self.write().commit(updates)
    }

    /// The address a named root holds ([`FileStore::root`]).
    pub fn root(&self, name: &str) -> Option<Address> {
        self.read().root(name)
    }
}

/// A prolly map that holds a share of its store ([`SharedStore`]) instead of borrowing it: it
/// can live in a struct, move to another thread (with a `Send + Sync` store such as
/// [`FileStore`]) and outlive commits. Values come back owned; [`SharedMap::read`] gives the
/// borrowed [`Map`] with all its calls.
pub struct SharedMap<S, T> {
    store: SharedStore<S>,
    root: Address,
    schema: T,
}

impl<S, T: Clone> Clone for SharedMap<S, T> {
    fn clone(&self) -> Self {
        SharedMap {
            store: self.store.clone(),
            root: self.root,
            schema: self.schema.clone(),
        }
    }
}

impl<S: StoreFastPaths, T: TreeSchema + Clone> SharedMap<S, T> {
    /// The map whose root node is at `root` in `store`.
    pub fn new(store: &SharedStore<S>, root: Address, schema: T) -> SharedMap<S, T> {
        SharedMap {
            store: store.clone(),
            root,
            schema,
        }
    }

    /// Builds a map from pairs in strictly increasing key order, as [`Map::from_sorted`].
    pub fn from_sorted<'k, I>(
        store: &SharedStore<S>,
        schema: T,
        items: I,
    ) -> Result<SharedMap<S, T>, TreeError>
    where
        I: IntoIterator<Item = (&'k [u8], &'k [u8])>,
    {
        let root = Map::from_sorted(&*store.read(), schema.clone(), items)?.root();
        Ok(SharedMap::new(store, root, schema))
    }

    /// The empty map (writes the empty leaf).
    pub fn empty(store: &SharedStore<S>, schema: T) -> Result<SharedMap<S, T>, TreeError> {
        let root = Map::empty(&*store.read(), schema.clone())?.root();
        Ok(SharedMap::new(store, root, schema))
    }

    /// Address of the root node.
    pub fn root(&self) -> Address {
        self.root
    }

    /// The key order and value layout.
    pub fn schema(&self) -> &T {
        &self.schema
    }

    /// The shared store the map reads from.
    pub fn store(&self) -> &SharedStore<S> {
        &self.store
    }

    /// The same store and schema at another root (for example a root read back from a
    /// commit).
    pub fn with_root(&self, root: Address) -> SharedMap<S, T> {
        SharedMap::new(&self.store, root, self.schema.clone())
    }

    /// The borrowed [`Map`] for as long as the returned reader lives (it holds a read lock:
    /// commits wait for it).
    pub fn read(&self) -> MapReader<'_, S, T> {
        MapReader {
            store: self.store.read(),
            root: self.root,
            schema: &self.schema,
        }
    }

    /// The value stored under `key`, copied out.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, TreeError> {
        Ok(self.read().map().get(key)?.map(<[u8]>::to_vec))
    }

    /// True if `key` is present.
    pub fn contains(&self, key: &[u8]) -> Result<bool, TreeError> {
        Ok(self.read().map().get(key)?.is_some())
    }

    /// Number of rows.
    pub fn count(&self) -> Result<u64, TreeError> {
        self.read().map().count()
    }

    /// Applies puts (`Some`) and deletes (`None`) as [`Map::apply`] does, returning the edited
    /// map (this one is unchanged).
    pub fn apply<'e>(
        &self,
        edits: impl IntoIterator<Item = (&'e [u8], Option<&'e [u8]>)>,
    ) -> Result<SharedMap<S, T>, TreeError> {
        let root = self.read().map().apply(edits)?.root();
        Ok(self.with_root(root))
    }
}

/// A [`SharedMap`] held for reading: [`MapReader::map`] is the borrowed [`Map`], valid while
/// the reader lives. Commits through the same store wait until it is dropped.
pub struct MapReader<'a, S, T> {
    store: RwLockReadGuard<'a, S>,
    root: Address,
    schema: &'a T,
}

impl<S: StoreFastPaths, T: TreeSchema + Clone> MapReader<'_, S, T> {
    /// The map, borrowing the locked store.
    pub fn map(&self) -> Map<'_, S, T> {
        Map::new(&*self.store, self.root, self.schema.clone())
    }

    /// The locked store.
    pub fn store(&self) -> &S {
        &self.store
    }
}

#[cfg(test)]
mod tests;
