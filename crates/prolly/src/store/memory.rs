//! An in-memory [`ChunkStore`]: reads borrow from `&self` while puts go through `&self` too.
//!
//! Layout, chosen for lookups: an index from address to slot number (a compact hash table of
//! 24-byte buckets), and the slots in fixed pages that never move, each holding its chunk and
//! the node layout found on first read. Slots of consecutive chunks sit next to each other, so
//! the per-lookup metadata stays within few memory pages; the chunk bytes are copied into an
//! append-only arena of large blocks (on huge pages if asked: [`MemoryStore::with_huge_pages`]).
//! An internal node's slot also lists, from the first descent through it on, the slots of its
//! children with their node views once read ([`ChunkStore::get_child`]): a descent then goes
//! from node to child without hashing an address, probing the index or reading the child's own
//! slot at every level. The last address found in the index is remembered, so the descents
//! that start from the same root skip the index too.

use std::cell::{Cell, OnceCell, RefCell};
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use elsa::FrozenVec;
use prollystore_format::message::{Node, NodeLayout};
use prollystore_format::{Address, HashProfile};

use super::arena::{self, Arena};
use super::{
    copy_lent, lent_ranges_end, ChunkStore, LentSpace, NodeHint, StoreError, StoreFastPaths,
};

/// Slots per page.
const PAGE: usize = 1024;

/// One stored chunk with its node layout, computed on first `get_node`.
///
/// Aligned to 128 bytes: a slot (about 120 bytes) is then exactly one pair of cache lines,
/// which the processor fetches together, instead of straddling three.
#[derive(Default)]
#[repr(align(128))]
struct Slot {
    /// The chunk's bytes, in the store's arena (see [`MemoryStore::insert_slot`] for the
    /// lifetime).
    chunk: OnceCell<&'static [u8]>,
    layout: OnceCell<NodeLayout>,
    /// Put by [`ChunkStore::put_node`]: a node this process wrote, read back without checks.
    trusted: Cell<bool>,
    /// For an internal node, its children, listed on the first [`ChunkStore::get_child`]
    /// through it: later descents skip the index and the children's slots.
    children: OnceCell<Box<[Child]>>,
}

/// A child in its parent's [`Slot::children`].
///
/// Aligned to 32 bytes: an entry (96 bytes on 64-bit targets) then always spans two cache
/// lines, never three.
#[repr(align(32))]
struct Child {
    /// The child's slot ([`NO_SLOT`] if it was not stored when the list was made).
    slot: u32,
    /// The child's view (its chunk and layout, copied from its slot once its layout is known),
    /// so that a descent reads the list entry and then the child's bytes, and never the
    /// child's slot: one dependent cache miss fewer per level (the leaves' slots do not stay
    /// in cache on a big tree).
    node: OnceCell<Node<'static>>,
}

/// A child that was not stored when its parent's [`Slot::children`] were listed.
const NO_SLOT: u32 = u32::MAX;

/// Hashes an [`Address`] by taking 8 of its bytes: addresses are already uniformly random.
#[derive(Default)]
pub struct AddressHasher(u64);

impl Hasher for AddressHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        // `Address` hashes as its 20-byte array (the length prefix goes to `write_usize`).
        if let Some(w) = bytes.get(..8).and_then(|b| <[u8; 8]>::try_from(b).ok()) {
            self.0 ^= u64::from_le_bytes(w);
        } else {
            for &b in bytes {
                self.0 = self.0.rotate_left(8) ^ u64::from(b);
            }
        }
    }
    #[inline]
    fn write_usize(&mut self, _: usize) {}
}

type Index = HashMap<Address, u32, BuildHasherDefault<AddressHasher>>;

/// Chunks kept in memory: for tests, benchmarks, scratch work, and loading vector files.
///
/// Not `Sync` (interior mutability without locks); share it by reference within a thread.
pub struct MemoryStore {
    profile: HashProfile,
    index: RefCell<Index>,
    /// The address last found in `index` and its slot: descents from one root look the root up
    /// again and again (the C ABI passes a bare address), and this skips hashing and probing.
    /// Slots never change address or chunk, so the pair stays true for the store's life.
    last: Cell<Option<(Address, u32)>>,
    pages: FrozenVec<Box<[Slot]>>,
    /// The next page of slots, made on a short-lived thread while the current one fills
    /// ([`MemoryStore::next_page`]).
    next_page: RefCell<Option<std::thread::JoinHandle<Box<[Slot]>>>>,
    /// Holds every chunk's bytes.
    arena: Arena,
    /// This store's identity in the spaces it lends ([`ChunkStore::lend`]).
    id: u64,
}

/// The identity of the next memory store made.
static NEXT_STORE_ID: AtomicU64 = AtomicU64::new(1);

impl Default for MemoryStore {
    fn default() -> Self {
        MemoryStore::new(HashProfile::default())
    }
}

impl MemoryStore {
    /// An empty store whose addresses are made with `profile`.
    ///
    /// Chunk memory of dropped stores (up to 128 MiB per process) is reused by the stores made
    /// after them; until then the kernel may take it back under memory pressure (Linux), and
    /// [`crate::process::release_spare_memory`] gives it back at once. A
    /// store that grows past a few 8 MiB blocks of chunks has its next block faulted in on a
    /// short-lived thread while it fills the current one. The per-chunk records (128 bytes
    /// each, in pages of 1,024) are kept and prepared the same way: up to 8 MiB of them from
    /// dropped stores, and the next page on a short-lived thread once a store has 2,048 chunks.
    pub fn new(profile: HashProfile) -> MemoryStore {
        MemoryStore::with_arena(profile, Arena::new(false))
    }

    /// An empty store that keeps its chunks in `arena`.
    fn with_arena(profile: HashProfile, arena: Arena) -> MemoryStore {
        MemoryStore {
            profile,
            index: RefCell::new(Index::default()),
            last: Cell::new(None),
            pages: FrozenVec::new(),
            next_page: RefCell::new(None),
            arena,
            id: NEXT_STORE_ID.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// An empty store whose chunk memory asks for transparent huge pages (Linux; elsewhere
    /// the same as [`MemoryStore::new`]). For big, read-mostly trees: gets on a large map run
    /// faster, because cold leaves no longer also miss the TLB. Not the default: the first
    /// write into each 2 MiB page can stall while the kernel assembles the page, which slows
    /// single edits (`docs/PERF.md`, "Huge pages").
    pub fn with_huge_pages(profile: HashProfile) -> MemoryStore {
        MemoryStore::with_arena(profile, Arena::new(true))
    }

    /// Number of chunks stored.
    pub fn len(&self) -> usize {
        self.index.borrow().len()
    }

    /// True if nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every stored address, in no particular order.
    pub fn addresses(&self) -> Vec<Address> {
        self.index.borrow().keys().copied().collect()
    }

    #[inline]
    fn slot(&self, address: &Address) -> Option<(&Slot, u32)> {
        let n = match self.last.get() {
            Some((a, n)) if a == *address => n,
            _ => {
                let n = *self.index.borrow().get(address)?;
                self.last.set(Some((*address, n)));
                n
            }
        };
        Some((self.slot_at(n)?, n))
    }

    #[inline]
    fn slot_at(&self, n: u32) -> Option<&Slot> {
        let n = n as usize;
        self.pages.get(n / PAGE)?.get(n % PAGE)
    }

    /// The children of `parent` (an internal node): their slots ([`NO_SLOT`] for absent ones),
    /// and their views where already known.
    #[cold]
    fn list_children(&self, parent: &Node<'_>) -> Box<[Child]> {
        let index = self.index.borrow();
        (0..parent.count())
            .map(|j| {
                let slot = index.get(&parent.child(j)).copied().unwrap_or(NO_SLOT);
                let node = OnceCell::new();
                if let Some(known) = self.known_node(slot) {
                    let _ = node.set(known);
                }
                Child { slot, node }
            })
            .collect()
    }

    /// Child `i` of `parent` found by its address: [`ChunkStore::get_child`] without a usable
    /// hint (kept out of line, so that the hinted path inlines into cursor steps).
    #[inline(never)]
    fn get_child_by_address(
        &self,
        parent: &Node<'_>,
        i: usize,
    ) -> Result<(Node<'_>, NodeHint), StoreError> {
        self.get_node_hinted(&parent.child(i))
    }

    /// The node in slot `n` if its layout is known (it was read before).
    #[inline]
    fn known_node(&self, n: u32) -> Option<Node<'static>> {
        let slot = self.slot_at(n)?;
        let chunk = slot.chunk.get()?;
        let layout = slot.layout.get()?;
        // SAFETY: a slot's layout is set only by `verify_into`, from a view of the slot's
        // chunk, whose bytes never change once placed.
        Some(unsafe { Node::from_verified(chunk, *layout) })
    }

    /// Child `i` of `parent`, which this store handed out with `hint`, from the list of children
    /// in `parent`'s slot (made now if this is the first descent through it), with the child's
    /// slot; `None` if the hint is not `parent`'s slot, or the child is absent or was never
    /// read (the caller then goes by address).
    #[inline]
    fn listed_child(
        &self,
        parent: &Node<'_>,
        hint: NodeHint,
        i: usize,
    ) -> Option<(&Node<'static>, u32)> {
        // The hint must name the slot holding `parent` itself (same bytes), else it is ignored.
        let slot = self.slot_at(hint.get()?)?;
        if parent.is_leaf() || !std::ptr::eq(slot.chunk.get()?.as_ptr(), parent.chunk().as_ptr()) {
            return None;
        }
        let child = slot
            .children
            .get_or_init(|| self.list_children(parent))
            .get(i)?;
        let node = match child.node.get() {
            Some(node) => node,
            // Read since the list was made: keep its view in the list.
            None => {
                let node = self.known_node(child.slot)?;
                child.node.get_or_init(|| node)
            }
        };
        Some((node, child.slot))
    }

    fn insert(&self, address: Address, chunk: &[u8]) {
        self.insert_slot(address, chunk, false);
    }

    /// Stores `chunk` unless present; `trusted` marks a node this process serialized.
    fn insert_slot(&self, address: Address, chunk: &[u8], trusted: bool) {
        self.insert_with(address, trusted, || {
            let copy = self.arena.copy(chunk);
            // SAFETY: the copy lives in `self.arena`, which keeps it unchanged until the
            // store drops, and slots hand it out only as borrows of `&self` (see `get`,
            // `get_node_hinted`, `get_child`; `known_node`'s `Node<'static>` goes only into
            // the store's own lists of children), so no reference to it outlives the store.
            unsafe { &*std::ptr::from_ref(copy) }
        });
    }

    /// Files the chunk `place` gives (called only if `address` is new) under `address`.
    fn insert_with(&self, address: Address, trusted: bool, place: impl FnOnce() -> &'static [u8]) {
        let n = {
            let mut index = self.index.borrow_mut();
            let n = index.len();
            let Entry::Vacant(entry) = index.entry(address) else {
                return;
            };
            // Entered before the chunk is copied: the write into the index's (often cold)
            // bucket then completes while the copy runs. Nothing reads the store in between.
            entry.insert(n as u32);
            n
        };
        if n / PAGE >= self.pages.len() {
            self.pages.push(self.next_page());
        }
        let Some(slot) = self.pages.get(n / PAGE).and_then(|p| p.get(n % PAGE)) else {
            return;
        };
        let _ = slot.chunk.set(place());
        slot.trusted.set(trusted);
    }

    /// A fresh page of slots: an emptied page of a dropped store if one is kept, else the
    /// one made in the background, else one made now. A page is 128 KiB; fresh memory,
    /// faulted in page by page on first write, costs the thread that stores chunks time on
    /// every chunk (`docs/PERF.md`, "Growing stores"). So once a store has two pages (2,048
    /// chunks: a growing store) and no spare page is kept, the page after them is made on a
    /// short-lived thread. Under Miri, never on a thread.
    fn next_page(&self) -> Box<[Slot]> {
        if let Some(page) = SPARE_PAGES.lock().ok().and_then(|mut s| s.pop()) {
            return page;
        }
        let made = self
            .next_page
            .borrow_mut()
            .take()
            .and_then(|t| t.join().ok());
        let page = made.unwrap_or_else(new_page);
        if !cfg!(miri) && !self.pages.is_empty() {
            *self.next_page.borrow_mut() = std::thread::Builder::new()
                .name("prolly-slots".into())
                .spawn(new_page)
                .ok();
        }
        page
    }
}

/// A page of empty slots.
fn new_page() -> Box<[Slot]> {
    (0..PAGE).map(|_| Slot::default()).collect()
}

/// Pages of slots of dropped stores, emptied, for the stores made next (as the arena keeps
/// its blocks): a program that fills one store after another (builds, scratch stores,
/// tests, benchmarks) then fills slots in memory it already faulted in.
static SPARE_PAGES: Mutex<Vec<Box<[Slot]>>> = Mutex::new(Vec::new());

/// The most pages [`SPARE_PAGES`] keeps: a sixteenth of the arena's spare limit
/// ([`crate::process::set_spare_memory_limit`]); by default 8 MiB, the slots of 65,536 chunks
/// (a tree of several million rows).
fn spare_page_limit() -> usize {
    arena::spare_limit() / 16 / (PAGE * std::mem::size_of::<Slot>())
}

/// Gives back the spare memory of dropped stores (see [`crate::process::release_spare_memory`]).
pub(crate) fn release_spare_memory() -> usize {
    let pages = SPARE_PAGES
        .lock()
        .map(|mut s| std::mem::take(&mut *s))
        .unwrap_or_default();
    let page_bytes: usize = pages.iter().map(|p| std::mem::size_of_val(&**p)).sum();
    arena::release_spares() + page_bytes
}

impl Drop for MemoryStore {
    fn drop(&mut self) {
        let used = self.index.get_mut().len();
        let mut pages = std::mem::take(self.pages.as_mut());
        let room = SPARE_PAGES
            .lock()
            .map_or(0, |s| spare_page_limit().saturating_sub(s.len()));
        pages.truncate(room);
        for (p, page) in pages.iter_mut().enumerate() {
            let filled = used.saturating_sub(p * PAGE).min(PAGE);
            for slot in page.iter_mut().take(filled) {
                *slot = Slot::default();
            }
        }
        if let Ok(mut spare) = SPARE_PAGES.lock() {
            spare.extend(pages);
            spare.truncate(spare_page_limit());
        }
    }
}

impl MemoryStore {
    /// [`ChunkStore::descend`] where the parent's list of children does not have the child.
    #[cold]
    #[inline(never)]
    fn descend_by_address<'a>(
        &'a self,
        node: &mut Node<'a>,
        hint: &mut NodeHint,
        i: usize,
    ) -> Result<(), StoreError> {
        (*node, *hint) = self.get_node_hinted(&node.child(i))?;
        Ok(())
    }
}

/// First read of a node: verify it and keep its layout (kept out of line: the cached path is hot).
#[inline(never)]
fn verify_into<'a>(
    slot: &Slot,
    chunk: &'a [u8],
    address: &Address,
) -> Result<Node<'a>, StoreError> {
    let node = if slot.trusted.get() {
        // SAFETY: `trusted` is set only by `put_node`, `put_node_hashed` and `adopt`, whose
        // callers promise a node this process's `NodeWriter` wrote.
        unsafe { Node::from_own_writer(chunk) }
    } else {
        Node::verify(chunk)
    }
    .map_err(|source| StoreError::BadMessage {
        address: *address,
        source,
    })?;
    let _ = slot.layout.set(node.layout());
    Ok(node)
}

impl std::fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryStore")
            .field("profile", &self.profile)
            .field("chunks", &self.len())
            .finish_non_exhaustive()
    }
}

impl ChunkStore for MemoryStore {
    fn profile(&self) -> HashProfile {
        self.profile
    }

    #[inline]
    fn get(&self, address: &Address) -> Result<Option<&[u8]>, StoreError> {
        Ok(self.slot(address).and_then(|(s, _)| s.chunk.get().copied()))
    }

    #[inline]
    fn get_node(&self, address: &Address) -> Result<Node<'_>, StoreError> {
        self.get_node_hinted(address).map(|(node, _)| node)
    }

    fn has(&self, address: &Address) -> Result<bool, StoreError> {
        Ok(self.index.borrow().contains_key(address))
    }

    fn put(&self, chunk: &[u8]) -> Result<Address, StoreError> {
        let address = self.profile.address_of(chunk);
        self.insert(address, chunk);
        Ok(address)
    }
}

impl StoreFastPaths for MemoryStore {
    #[inline]
    fn get_node_hinted(&self, address: &Address) -> Result<(Node<'_>, NodeHint), StoreError> {
        // `let else`, not `ok_or`: an eagerly built error is dropped on every successful read
        // (measured at ~100 instructions per lookup).
        let Some((slot, n)) = self.slot(address) else {
            return Err(StoreError::Missing(*address));
        };
        let Some(chunk) = slot.chunk.get() else {
            return Err(StoreError::Missing(*address));
        };
        if let Some(layout) = slot.layout.get() {
            // SAFETY: as in `known_node`: the layout is of a view of these bytes.
            let node = unsafe { Node::from_verified(chunk, *layout) };
            return Ok((node, NodeHint::new(n)));
        }
        Ok((verify_into(slot, chunk, address)?, NodeHint::new(n)))
    }

    #[inline(always)]
    fn get_child(
        &self,
        parent: &Node<'_>,
        hint: NodeHint,
        i: usize,
    ) -> Result<(Node<'_>, NodeHint), StoreError> {
        if let Some((node, n)) = self.listed_child(parent, hint, i) {
            return Ok((*node, NodeHint::new(n)));
        }
        // No hint, a child never read or stored since the list was made: by address (the
        // next descent finds it in the list).
        self.get_child_by_address(parent, i)
    }

    #[inline]
    fn descend<'a>(
        &'a self,
        node: &mut Node<'a>,
        hint: &mut NodeHint,
        i: usize,
    ) -> Result<(), StoreError> {
        if let Some((child, n)) = self.listed_child(node, *hint, i) {
            (*node, *hint) = (*child, NodeHint::new(n));
            return Ok(());
        }
        self.descend_by_address(node, hint, i)
    }

    unsafe fn put_node(&self, chunk: &[u8]) -> Result<Address, StoreError> {
        let address = self.profile.address_of(chunk);
        self.insert_slot(address, chunk, true);
        Ok(address)
    }

    unsafe fn put_node_hashed(&self, address: Address, chunk: &[u8]) -> Result<(), StoreError> {
        debug_assert_eq!(address, self.profile.address_of(chunk));
        self.insert_slot(address, chunk, true);
        Ok(())
    }

    /// Lends space in the arena: `want` bytes, or what is left of the current block if that
    /// is less but still 64 KiB or more.
    fn lend(&self, want: usize) -> Option<LentSpace<'_>> {
        let (start, len) = self.arena.reserve(want);
        // SAFETY: `reserve` sets the bytes aside for this space alone (no copy or other
        // reservation gets them) in arena memory, which is initialized and stays valid until
        // the store drops; the space borrows the store.
        Some(unsafe { LentSpace::new(start, len, self.id) })
    }

    unsafe fn adopt(
        &self,
        space: LentSpace<'_>,
        chunks: &[(Address, Range<usize>)],
    ) -> Result<(), StoreError> {
        let used = lent_ranges_end(chunks, space.len())?;
        let (start, lender) = space.parts();
        if lender != self.id {
            // SAFETY: the caller's promise for the ranges is `copy_lent`'s.
            return unsafe { copy_lent(self, &space, chunks) };
        }
        let bytes = space.bytes();
        for (address, range) in chunks {
            debug_assert_eq!(*address, self.profile.address_of(&bytes[range.clone()]));
            self.insert_with(*address, true, || {
                // SAFETY: the space is this store's own: its bytes are in `self.arena`, which
                // keeps them until the store drops and never hands them to another copy or
                // space, and this space is given up here, so nothing writes them any more.
                // Slots lend chunks only as borrows of `&self` (see `insert_slot`).
                unsafe { &*std::ptr::from_ref(&bytes[range.clone()]) }
            });
        }
        self.arena.trim(start, space.len(), used);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stores made one after another reuse the pages of slots (and arena blocks) of the ones
    /// dropped before them, emptied: every chunk reads back as put, none as a dropped store's.
    #[test]
    fn stores_made_after_dropped_ones_read_back_their_own_chunks() {
        // Past two pages, so that the next page is also made on a thread (not under Miri,
        // where a second page and fewer rounds keep the run short).
        let (chunks, rounds) = if cfg!(miri) {
            (PAGE + 10, 2u32)
        } else {
            (2 * PAGE + 100, 3)
        };
        for round in 0..rounds {
            let store = MemoryStore::new(HashProfile::Blake3);
            let made: Vec<(Address, Vec<u8>)> = (0..chunks as u32)
                .map(|i| {
                    let chunk = [i.to_le_bytes(), round.to_le_bytes()].concat();
                    (store.put(&chunk).unwrap(), chunk)
                })
                .collect();
            for (address, chunk) in &made {
                assert_eq!(store.get(address).unwrap(), Some(&chunk[..]));
            }
            let other = [u32::MAX.to_le_bytes(), round.to_le_bytes()].concat();
            let absent = HashProfile::Blake3.address_of(&other);
            assert_eq!(store.get(&absent).unwrap(), None);
        }
    }
    /// Two small leaves as the node writer takes them.
    fn leaf_input(tag: &'static [u8; 2]) -> prollystore_format::message::LeafInput<'static> {
        prollystore_format::message::LeafInput {
            key_items: tag,
            key_offsets: &[0, 1, 2],
            value_items: b"vw",
            value_offsets: &[0, 1, 2],
            value_address_offsets: &[],
        }
    }

    /// A space filled on another thread (as the hash thread fills an edit's) is adopted where
    /// it is: the chunks read back from the lent bytes themselves, and what the space did not
    /// use goes to the next copy.
    #[test]
    fn lent_space_filled_on_another_thread_is_adopted_in_place() {
        use prollystore_format::message::NodeWriter;
        let store = MemoryStore::new(HashProfile::Blake3);
        let inputs = [leaf_input(b"ab"), leaf_input(b"cd")];
        let bound = NodeWriter::leaf_bound(&inputs[0]);
        let mut space = store.lend(3 * bound).unwrap();
        assert_eq!(space.len(), 3 * bound);
        let places = std::thread::scope(|s| {
            let space = &mut space;
            let inputs = &inputs;
            s.spawn(move || {
                let mut used = 0;
                let mut places = Vec::new();
                for input in inputs {
                    let dst = &mut space.bytes_mut()[used..used + bound];
                    let start = NodeWriter::write_leaf_into(input, dst).unwrap();
                    places.push(used + start..used + bound);
                    used += bound;
                }
                places
            })
            .join()
            .unwrap()
        });
        let chunks: Vec<(Address, Range<usize>)> = places
            .iter()
            .map(|r| {
                (
                    store.profile.address_of(&space.bytes()[r.clone()]),
                    r.clone(),
                )
            })
            .collect();
        let lent = space.bytes().as_ptr();
        let expected: Vec<Vec<u8>> = places
            .iter()
            .map(|r| space.bytes()[r.clone()].to_vec())
            .collect();
        // SAFETY: the thread above wrote each range with `NodeWriter::write_leaf_into`.
        unsafe { store.adopt(space, &chunks) }.unwrap();
        for ((address, range), want) in chunks.iter().zip(&expected) {
            let got = store.get(address).unwrap().unwrap();
            assert_eq!(got, &want[..]);
            assert_eq!(
                got.as_ptr(),
                lent.wrapping_add(range.start),
                "kept in place"
            );
            assert_eq!(store.get_node(address).unwrap().count(), 2);
        }
        // The unused third of the space is given back: the next chunk is copied right after
        // the last adopted one, and overwrites none of them.
        let other = store.put(b"another chunk").unwrap();
        let copy = store.get(&other).unwrap().unwrap();
        assert_eq!(copy.as_ptr(), lent.wrapping_add(2 * bound));
        for ((address, _), want) in chunks.iter().zip(&expected) {
            assert_eq!(store.get(address).unwrap().unwrap(), &want[..]);
        }
    }

    /// A store given another store's space copies the chunks; ranges outside the space are
    /// refused.
    #[test]
    fn adopting_another_stores_space_copies() {
        use prollystore_format::message::NodeWriter;
        let (lender, other) = (MemoryStore::default(), MemoryStore::default());
        let input = leaf_input(b"ef");
        let bound = NodeWriter::leaf_bound(&input);
        let mut space = lender.lend(bound).unwrap();
        let start = NodeWriter::write_leaf_into(&input, space.bytes_mut()).unwrap();
        let chunk = space.bytes()[start..].to_vec();
        let address = other.profile.address_of(&chunk);
        let outside = [(address, start..bound + 1)];
        // SAFETY: refused before any range is read (it runs past the space).
        let err = unsafe { other.adopt(lender.lend(bound).unwrap(), &outside) }.unwrap_err();
        assert!(matches!(err, StoreError::InvalidArgument(_)), "{err}");
        // SAFETY: `write_leaf_into` wrote the node at `start..bound`.
        unsafe { other.adopt(space, &[(address, start..bound)]) }.unwrap();
        assert_eq!(other.get(&address).unwrap().unwrap(), &chunk[..]);
        assert!(!lender.has(&address).unwrap());
    }
}
