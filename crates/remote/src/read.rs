//! Reading a remote store in place: [`RemoteStore`], a read-only [`ChunkStore`] over a
//! remote, so that `Map` reads (get, scan, diff) work on it unchanged.
//!
//! Opening reads the manifest (one round trip), every chunk file's index with range reads of
//! its header and tail (one more, all files in parallel) and the root node of every named root
//! (one more, all in parallel). A chunk is then one range read: a cold point get costs one
//! round trip per tree level below the root (2 for a 1M-row map of three levels: internal
//! node, leaf). Along a scan, when a leaf after a leaf of the same parent (or the
//! first child of the next parent) misses, the next [`PREFETCH`] siblings are fetched in the
//! same round trip (neighbouring ranges coalesced into one request) and kept in a
//! byte-bounded LRU cache until read.
//!
//! The chunk-store contract lends chunk bytes for as long as the store is borrowed, so chunks
//! that were read stay in memory until [`RemoteStore::release`] (which needs `&mut`); only
//! chunks fetched ahead and not yet read are bounded by the cache budget.

use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasherDefault;
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;
use elsa::sync::FrozenMap;
use prollystore::format::message::{Node, NodeLayout};
use prollystore::format::{Address, HashProfile};
use prollystore::store::file::layout::{file_name, Manifest};
use prollystore::store::AddressHasher;
use prollystore::{ChunkStore, StoreError, StoreFastPaths};

use crate::cache::ChunkLru;
use crate::remote::ChunkAt;
use crate::{Remote, RemoteError, RemoteStats};

/// Siblings fetched ahead when a scan is detected.
pub const PREFETCH: usize = 64;
/// Default budget of the prefetch cache.
pub const DEFAULT_CACHE_BYTES: usize = 64 << 20;

type AddressMap<V> = HashMap<Address, V, BuildHasherDefault<AddressHasher>>;

/// A chunk read from the remote, with its node layout once verified.
struct Pinned {
    bytes: Bytes,
    layout: OnceLock<NodeLayout>,
}

/// A read-only chunk store over a remote (see the [module](self)).
pub struct RemoteStore {
    remote: Remote,
    manifest: Manifest,
    locations: AddressMap<ChunkAt>,
    pinned: FrozenMap<Address, Box<Pinned>>,
    cache_bytes: usize,
    prefetched: Mutex<ChunkLru>,
    /// For each child of an internal node read so far: its parent and position.
    parents: Mutex<AddressMap<(Address, u32)>>,
    /// The last chunk fetched on a miss, by (parent, position).
    last_miss: Mutex<Option<(Address, u32)>>,
}

impl std::fmt::Debug for RemoteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteStore")
            .field("remote", &self.remote)
            .field("chunks", &self.locations.len())
            .finish()
    }
}

impl RemoteStore {
    /// Opens the store at `url` (credentials from the environment).
    pub fn open(url: &str) -> Result<RemoteStore, RemoteError> {
        RemoteStore::from_remote(Remote::open(url)?, DEFAULT_CACHE_BYTES)
    }

    /// Opens the store on `remote`, with a prefetch cache of `cache_bytes`.
    pub fn from_remote(remote: Remote, cache_bytes: usize) -> Result<RemoteStore, RemoteError> {
        let current = remote.read_manifest()?;
        let manifest = current.manifest.ok_or_else(|| {
            RemoteError::Invalid(format!("remote {} holds no store yet", remote.url()))
        })?;
        let indexes = remote.indexes(manifest.profile, &manifest.files)?;
        let mut locations = AddressMap::default();
        for (record, index) in manifest.files.iter().zip(indexes) {
            let object: Arc<str> = Arc::from(file_name(record.seq));
            for entry in index.iter() {
                locations.entry(entry.address).or_insert(ChunkAt {
                    object: object.clone(),
                    entry: *entry,
                });
            }
        }
        let store = RemoteStore {
            remote,
            manifest,
            locations,
            pinned: FrozenMap::new(),
            cache_bytes,
            prefetched: Mutex::new(ChunkLru::new(cache_bytes)),
            parents: Mutex::new(AddressMap::default()),
            last_miss: Mutex::new(None),
        };
        store.fetch_roots()?;
        Ok(store)
    }

    /// Fetches the root node of every named root in one round trip, so that a cold point get
    /// costs one round trip per level below the root.
    fn fetch_roots(&self) -> Result<(), RemoteError> {
        let wanted: Vec<ChunkAt> = self
            .manifest
            .roots
            .values()
            .filter_map(|a| self.locations.get(a).cloned())
            .collect();
        if wanted.is_empty() {
            return Ok(());
        }
        let n = wanted.len() as u64;
        let fetched = self
            .remote
            .wait(n, self.remote.fetch_chunks(self.manifest.profile, wanted))?;
        let mut cache = self.prefetched.lock().expect("cache poisoned");
        for (a, b) in fetched {
            cache.insert(a, b);
        }
        Ok(())
    }

    /// The root named `name` (a map), if the remote has it.
    pub fn root(&self, name: &str) -> Option<Address> {
        self.manifest.roots.get(name).copied()
    }

    /// Every named root on the remote.
    pub fn roots(&self) -> &BTreeMap<String, Address> {
        &self.manifest.roots
    }

    /// Traffic so far (round trips include those of opening).
    pub fn stats(&self) -> RemoteStats {
        self.remote.stats()
    }

    /// Number of chunks on the remote.
    pub fn chunk_count(&self) -> usize {
        self.locations.len()
    }

    /// Bytes of chunks fetched ahead and not yet read (bounded by the cache budget).
    pub fn prefetched_bytes(&self) -> usize {
        self.prefetched.lock().expect("cache poisoned").bytes()
    }

    /// Drops every chunk held in memory (read or prefetched); later reads fetch again.
    pub fn release(&mut self) {
        self.pinned = FrozenMap::new();
        self.prefetched = Mutex::new(ChunkLru::new(self.cache_bytes));
        self.parents = Mutex::new(AddressMap::default());
    }

    fn pinned(&self, address: &Address) -> Result<Option<&Pinned>, StoreError> {
        if let Some(p) = self.pinned.get(address) {
            return Ok(Some(p));
        }
        let ahead = self
            .prefetched
            .lock()
            .expect("cache poisoned")
            .take(address);
        let bytes = match ahead {
            Some(b) => b,
            None => {
                let Some(at) = self.locations.get(address) else {
                    return Ok(None);
                };
                let mut wanted = vec![at.clone()];
                wanted.extend(self.prefetch_plan(address));
                let n = wanted.len() as u64;
                let fetched = self
                    .remote
                    .wait(n, self.remote.fetch_chunks(self.manifest.profile, wanted))
                    .map_err(RemoteError::into_store_error)?;
                let mut target = None;
                let mut cache = self.prefetched.lock().expect("cache poisoned");
                for (a, b) in fetched {
                    if a == *address {
                        target = Some(b);
                    } else {
                        cache.insert(a, b);
                    }
                }
                target.ok_or(StoreError::Missing(*address))?
            }
        };
        Ok(Some(self.pinned.insert(
            *address,
            Box::new(Pinned {
                bytes,
                layout: OnceLock::new(),
            }),
        )))
    }

    /// The siblings to fetch with `address` if reads look like a scan.
    fn prefetch_plan(&self, address: &Address) -> Vec<ChunkAt> {
        let Some((parent, i)) = self
            .parents
            .lock()
            .expect("parents poisoned")
            .get(address)
            .copied()
        else {
            return Vec::new();
        };
        let mut last = self.last_miss.lock().expect("last miss poisoned");
        let scanning =
            matches!(*last, Some((p, j)) if (p == parent && j < i) || (p != parent && i == 0));
        *last = Some((parent, i));
        drop(last);
        let Some(parent) = self
            .pinned
            .get(&parent)
            .and_then(|p| p.layout.get().map(|l| Node::from_verified(&p.bytes, *l)))
        else {
            return Vec::new();
        };
        if !scanning {
            return Vec::new();
        }
        let cache = self.prefetched.lock().expect("cache poisoned");
        let first = i as usize + 1;
        (first..parent.count().min(first + PREFETCH))
            .map(|k| parent.child(k))
            .filter(|a| self.pinned.get(a).is_none() && !cache.contains(a))
            .filter_map(|a| self.locations.get(&a).cloned())
            .collect()
    }
}

impl ChunkStore for RemoteStore {
    fn profile(&self) -> HashProfile {
        self.manifest.profile
    }

    fn get(&self, address: &Address) -> Result<Option<&[u8]>, StoreError> {
        Ok(self.pinned(address)?.map(|p| &p.bytes[..]))
    }

    fn get_node(&self, address: &Address) -> Result<Node<'_>, StoreError> {
        let p = self.pinned(address)?.ok_or(StoreError::Missing(*address))?;
        if let Some(layout) = p.layout.get() {
            return Ok(Node::from_verified(&p.bytes, *layout));
        }
        let node = Node::verify(&p.bytes).map_err(|source| StoreError::BadMessage {
            address: *address,
            source,
        })?;
        if !node.is_leaf() {
            let mut parents = self.parents.lock().expect("parents poisoned");
            for i in 0..node.count() {
                parents.insert(node.child(i), (*address, i as u32));
            }
        }
        let _ = p.layout.set(node.layout());
        Ok(node)
    }

    fn has(&self, address: &Address) -> Result<bool, StoreError> {
        Ok(self.locations.contains_key(address))
    }

    fn put(&self, _chunk: &[u8]) -> Result<Address, StoreError> {
        Err(StoreError::ReadOnly {
            path: self.remote.url().to_string(),
        })
    }
}

impl StoreFastPaths for RemoteStore {}
