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
//! # The bounded cache
//!
//! The chunk-store contract lends chunk bytes for as long as the store is borrowed (a `Node`
//! or a row borrows the store), so a chunk that was read cannot be freed while the store is
//! borrowed. The store therefore holds chunks in two places, together within the budget the
//! user sets ([`RemoteStore::from_remote`]):
//!
//! * *lent* chunks, read during the current borrow: never evicted until a safe point;
//! * an LRU cache of chunks nobody holds (prefetched ahead, or lent before the last safe
//!   point): shrunk whenever lent chunks grow, so that lent + cached stays within the budget
//!   unless the lent chunks alone exceed it.
//!
//! A safe point is any moment the caller has the store mutably ([`RemoteStore::trim`]): every
//! lent chunk moves to the cache, and the least recently used ones are evicted down to the
//! budget, so hot upper nodes stay and a later get of an evicted chunk fetches it again.
//! One operation through the generic `Map` API can still lend more than the budget (a full
//! scan lends every leaf it reads); [`RemoteStore::scan`] is a scan that stays within the
//! budget by pausing at safe points and resuming after the last row.

use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasherDefault;
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;
use elsa::sync::FrozenMap;
use prollystore::format::message::{Node, NodeLayout};
use prollystore::format::{Address, HashProfile};
use prollystore::store::file::layout::{file_name, Manifest};
use prollystore::store::AddressHasher;
use prollystore::{ChunkStore, Map, StoreError, StoreFastPaths, TreeError, TreeSchema};

use crate::cache::ChunkLru;
use crate::remote::ChunkAt;
use crate::{Remote, RemoteError, RemoteStats};

/// Siblings fetched ahead when a scan is detected (fewer when the budget has no room).
pub const PREFETCH: usize = 64;
/// Default cache budget.
pub const DEFAULT_CACHE_BYTES: usize = 64 << 20;
/// [`RemoteStore::scan`] pauses when fewer than this many of the largest chunks still fit in
/// the budget: a step of a scan lends at most one chunk per tree level, and trees this
/// deep hold far more than anyone scans from a remote.
const SCAN_RESERVE_CHUNKS: usize = 8;

type AddressMap<V> = HashMap<Address, V, BuildHasherDefault<AddressHasher>>;

/// A chunk lent out, with its node layout once verified and its last use.
struct Pinned {
    bytes: Bytes,
    layout: OnceLock<NodeLayout>,
    last_use: AtomicU64,
}

/// A read-only chunk store over a remote (see the [module](self)).
pub struct RemoteStore {
    remote: Remote,
    manifest: Manifest,
    locations: AddressMap<ChunkAt>,
    /// The longest chunk on the remote.
    largest: usize,
    /// Chunks lent since the last safe point.
    pinned: FrozenMap<Address, Box<Pinned>>,
    /// Bytes of `pinned`.
    lent: AtomicUsize,
    budget: usize,
    /// Chunks nobody holds, within `budget - lent`.
    cache: Mutex<ChunkLru>,
    /// Most bytes held (lent + cached) at once since opening or [`RemoteStore::reset_peak`].
    peak: AtomicUsize,
    /// Use counter: orders chunks by last use.
    clock: AtomicU64,
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
            .field("budget", &self.budget)
            .finish()
    }
}

impl RemoteStore {
    /// Opens the store at `url` (credentials from the environment), with a cache budget of
    /// [`DEFAULT_CACHE_BYTES`].
    pub fn open(url: &str) -> Result<RemoteStore, RemoteError> {
        RemoteStore::from_remote(Remote::open(url)?, DEFAULT_CACHE_BYTES)
    }

    /// Opens the store on `remote`, holding at most `cache_bytes` of chunks in memory at safe
    /// points and during [`RemoteStore::scan`] (see the [module](self)).
    pub fn from_remote(remote: Remote, cache_bytes: usize) -> Result<RemoteStore, RemoteError> {
        let current = remote.read_manifest()?;
        let manifest = current.manifest.ok_or_else(|| {
            RemoteError::Invalid(format!("remote {} holds no store yet", remote.url()))
        })?;
        let indexes = remote.indexes(manifest.profile, &manifest.files)?;
        let mut locations = AddressMap::default();
        let mut largest = 0;
        for (record, index) in manifest.files.iter().zip(indexes) {
            let object: Arc<str> = Arc::from(file_name(record.seq));
            for entry in index.iter() {
                largest = largest.max(entry.len as usize);
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
            largest,
            pinned: FrozenMap::new(),
            lent: AtomicUsize::new(0),
            budget: cache_bytes,
            cache: Mutex::new(ChunkLru::default()),
            peak: AtomicUsize::new(0),
            clock: AtomicU64::new(0),
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
        self.keep(fetched);
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

    /// The cache budget in bytes.
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// Bytes of chunks held in memory now: lent since the last safe point, and cached.
    pub fn held_bytes(&self) -> usize {
        self.lent.load(Ordering::Relaxed) + self.cache.lock().expect("cache poisoned").bytes()
    }

    /// The most bytes of chunks held at once since opening or the last
    /// [`RemoteStore::reset_peak`].
    pub fn peak_bytes(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }

    /// Starts measuring [`RemoteStore::peak_bytes`] from the bytes held now.
    pub fn reset_peak(&self) {
        self.peak.store(self.held_bytes(), Ordering::Relaxed);
    }

    /// A safe point: nothing borrows the store, so every lent chunk moves to the cache and the
    /// least recently used chunks are evicted until the budget holds. Later reads of an
    /// evicted chunk fetch it again.
    pub fn trim(&mut self) {
        let mut lent = std::mem::take(&mut self.pinned).into_tuple_vec();
        lent.sort_unstable_by_key(|(_, p)| p.last_use.load(Ordering::Relaxed));
        *self.lent.get_mut() = 0;
        let cache = self.cache.get_mut().unwrap_or_else(|e| e.into_inner());
        for (address, p) in lent {
            let tick = p.last_use.into_inner();
            cache.insert(address, p.bytes, p.layout.into_inner(), tick, usize::MAX);
        }
        cache.shrink_to(self.budget);
        // Scan detection needs the parents only of nodes still held.
        let cache = &*cache;
        self.parents
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|_, (parent, _)| cache.contains(parent));
    }

    /// Drops every chunk held in memory (lent or cached); later reads fetch again.
    pub fn release(&mut self) {
        self.pinned = FrozenMap::new();
        *self.lent.get_mut() = 0;
        *self.cache.get_mut().unwrap_or_else(|e| e.into_inner()) = ChunkLru::default();
        self.parents
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// Visits the rows of the map at `root` with keys within `lo` and `hi`, in key order,
    /// until `visit` returns false, holding at most the budget in memory (given a budget of a
    /// few dozen chunks): when lent chunks near the budget, the scan drops its borrow, makes a
    /// safe point ([`RemoteStore::trim`]) and resumes after the last row visited. Returns the
    /// rows visited. `visit` gets the store too, for reads of its own (out-of-band values).
    pub fn scan<T: TreeSchema + Clone>(
        &mut self,
        root: Address,
        schema: T,
        lo: Bound<&[u8]>,
        hi: Bound<&[u8]>,
        mut visit: impl FnMut(&RemoteStore, &[u8], &[u8]) -> bool,
    ) -> Result<u64, TreeError> {
        let reserve = self.largest.saturating_mul(SCAN_RESERVE_CHUNKS);
        let mut visited = 0u64;
        let mut after: Option<Vec<u8>> = None;
        loop {
            let paused = {
                let this = &*self;
                let map = Map::new(this, root, schema.clone());
                let from = match &after {
                    Some(k) => Bound::Excluded(&k[..]),
                    None => lo,
                };
                let mut paused = None;
                for row in map.range(from, hi)? {
                    let (k, v) = row?;
                    visited += 1;
                    if !visit(this, k, v) {
                        return Ok(visited);
                    }
                    if this.lent.load(Ordering::Relaxed) + reserve > this.budget {
                        paused = Some(k.to_vec());
                        break;
                    }
                }
                paused
            };
            match paused {
                Some(k) => {
                    after = Some(k);
                    self.trim();
                }
                None => return Ok(visited),
            }
        }
    }

    /// A fresh use tick.
    fn tick(&self) -> u64 {
        self.clock.fetch_add(1, Ordering::Relaxed)
    }

    /// Caches fetched chunks nobody asked for yet, within what lent chunks leave of the budget.
    fn keep(&self, fetched: impl IntoIterator<Item = (Address, Bytes)>) {
        let limit = self
            .budget
            .saturating_sub(self.lent.load(Ordering::Relaxed));
        let mut cache = self.cache.lock().expect("cache poisoned");
        for (a, b) in fetched {
            cache.insert(a, b, None, self.tick(), limit);
        }
        cache.shrink_to(limit);
        self.note_peak(self.lent.load(Ordering::Relaxed) + cache.bytes());
    }

    fn note_peak(&self, held: usize) {
        self.peak.fetch_max(held, Ordering::Relaxed);
    }

    fn pinned(&self, address: &Address) -> Result<Option<&Pinned>, StoreError> {
        if let Some(p) = self.pinned.get(address) {
            p.last_use.store(self.tick(), Ordering::Relaxed);
            return Ok(Some(p));
        }
        let cached = self.cache.lock().expect("cache poisoned").take(address);
        let (bytes, layout) = match cached {
            Some(c) => c,
            None => {
                let Some(at) = self.locations.get(address) else {
                    return Ok(None);
                };
                let len = at.entry.len as usize;
                let mut wanted = vec![at.clone()];
                wanted.extend(self.prefetch_plan(address, len));
                let n = wanted.len() as u64;
                let fetched = self
                    .remote
                    .wait(n, self.remote.fetch_chunks(self.manifest.profile, wanted))
                    .map_err(RemoteError::into_store_error)?;
                let mut target = None;
                let mut rest = Vec::with_capacity(fetched.len());
                for (a, b) in fetched {
                    if a == *address {
                        target = Some(b);
                    } else {
                        rest.push((a, b));
                    }
                }
                let target = target.ok_or(StoreError::Missing(*address))?;
                // Counted as lent before the siblings are cached, so they fit beside it.
                self.lent.fetch_add(target.len(), Ordering::Relaxed);
                self.keep(rest);
                self.lent.fetch_sub(target.len(), Ordering::Relaxed);
                (target, None)
            }
        };
        let ptr = bytes.as_ptr();
        let len = bytes.len();
        let lent = self.lent.fetch_add(len, Ordering::Relaxed) + len;
        let p = self.pinned.insert(
            *address,
            Box::new(Pinned {
                bytes,
                layout: layout.map(OnceLock::from).unwrap_or_default(),
                last_use: AtomicU64::new(self.tick()),
            }),
        );
        if p.bytes.as_ptr() != ptr {
            // Another thread lent the same chunk first; ours was dropped.
            self.lent.fetch_sub(len, Ordering::Relaxed);
        }
        let mut cache = self.cache.lock().expect("cache poisoned");
        cache.shrink_to(self.budget.saturating_sub(lent));
        self.note_peak(lent + cache.bytes());
        Ok(Some(p))
    }

    /// The siblings to fetch with `address` (of `len` bytes) if reads look like a scan, as
    /// many as fit in the budget beside the lent chunks.
    fn prefetch_plan(&self, address: &Address, len: usize) -> Vec<ChunkAt> {
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
        let Some(parent) = self.pinned.get(&parent).and_then(|p| {
            p.layout.get().map(|l| {
                // SAFETY: a chunk's layout is set only by `get_node`, from the verified
                // view of its bytes, and travels with them (pinned or cached); the bytes
                // never change.
                unsafe { Node::from_verified(&p.bytes, *l) }
            })
        }) else {
            return Vec::new();
        };
        if !scanning {
            return Vec::new();
        }
        let reserve = self.largest.saturating_mul(SCAN_RESERVE_CHUNKS);
        let mut room = self
            .budget
            .saturating_sub(self.lent.load(Ordering::Relaxed) + len + reserve);
        let cache = self.cache.lock().expect("cache poisoned");
        let first = i as usize + 1;
        let mut plan = Vec::new();
        for k in first..parent.count().min(first + PREFETCH) {
            let a = parent.child(k);
            if self.pinned.get(&a).is_some() || cache.contains(&a) {
                continue;
            }
            let Some(at) = self.locations.get(&a) else {
                continue;
            };
            let Some(left) = room.checked_sub(at.entry.len as usize) else {
                break;
            };
            room = left;
            plan.push(at.clone());
        }
        plan
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
            // SAFETY: set below from the verified view of these bytes (kept with them through
            // the cache), which never change.
            return Ok(unsafe { Node::from_verified(&p.bytes, *layout) });
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
