//! An append-only byte arena for [`super::MemoryStore`]'s chunks: copies go into large blocks
//! that never move or shrink until the arena is dropped (a bump copy instead of one heap
//! allocation per chunk).
//!
//! Blocks of 2 MiB and more are anonymous mappings aligned to huge pages. On request
//! ([`super::MemoryStore::with_huge_pages`]) they are advised to use transparent huge pages
//! (`madvise(MADV_HUGEPAGE)`, Linux): a million-row tree then spans a few dozen 2 MiB pages
//! instead of ~11 k small ones, and a get on a cold leaf no longer also misses the TLB. It is
//! not the default because the first write into each huge page can stall while the kernel
//! assembles one (both measured in `docs/PERF.md`, "Huge pages").
//!
//! Once an arena is filling full-size blocks, the next one is mapped and faulted in on a
//! short-lived thread while the current one fills ([`Arena::prepare_next`]).
//!
//! Space can also be set aside ([`Arena::reserve`]) for chunks written in place elsewhere: an
//! edit's hash thread serializes new leaves straight into it, and the store keeps them there
//! (`ChunkStore::lend` and `ChunkStore::adopt`), which saves the calling thread a copy of
//! every leaf into cold memory.
//!
//! When an arena drops, its mapped blocks (up to 128 MiB in all, process-wide) are kept for the
//! next arena instead of being unmapped, so that filling one memory store after another does
//! not fault in fresh memory every time; the kernel may reclaim their pages under memory
//! pressure (`MADV_FREE`).

use std::cell::{Cell, RefCell};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The first block's size; each next block doubles, up to [`MAX_BLOCK`].
const FIRST_BLOCK: usize = 64 << 10;
/// The largest block: 8 MiB, four huge pages.
const MAX_BLOCK: usize = 8 << 20;
/// The least room [`Arena::reserve`] lends from the current block before it starts a new one.
const MIN_LOAN: usize = 64 << 10;
/// Blocks at least this big are mapped and advised to use huge pages.
const MAPPED_BLOCK: usize = 2 << 20;
/// The huge page size blocks are aligned to.
#[cfg_attr(miri, allow(dead_code))]
const HUGE_PAGE: usize = 2 << 20;

/// Memory the arena copies bytes into.
enum Backing {
    /// A heap block, owned through the raw pointer it was leaked to (freed on drop).
    Heap(*mut [u8]),
    /// An anonymous mapping, kept only to be unmapped on drop (never touched through the
    /// map after the base pointer was taken).
    #[cfg_attr(miri, allow(dead_code))]
    Mapped { _map: memmap2::MmapMut },
}

/// One block: `len` usable bytes from `base`, of which `used` are written and handed out.
struct Block {
    base: *mut u8,
    len: usize,
    used: Cell<usize>,
    /// Mapped with the huge-page advice.
    huge: bool,
    _backing: Backing,
}

// SAFETY: a block owns its memory outright, as a `Box<[u8]>` would (the pointers are only its
// own base and backing), so moving it to another thread is sound. It is not `Sync`: `used` is
// a `Cell`.
unsafe impl Send for Block {}

impl Drop for Block {
    fn drop(&mut self) {
        if let Backing::Heap(raw) = self._backing {
            // SAFETY: `raw` came from `Box::into_raw` in `Block::heap` and is freed only here,
            // once. Slices handed out borrow the arena, so none outlives this drop.
            drop(unsafe { Box::from_raw(raw) });
        }
    }
}

impl Block {
    /// A heap block of `len` bytes.
    fn heap(len: usize) -> Block {
        let raw = Box::into_raw(vec![0u8; len].into_boxed_slice());
        Block {
            base: raw.cast::<u8>(),
            len,
            used: Cell::new(0),
            huge: false,
            _backing: Backing::Heap(raw),
        }
    }

    /// A mapped block of `len` bytes starting on a huge-page boundary, advised to use huge
    /// pages if `huge`; a heap block if mapping fails (or under Miri, which cannot map).
    fn mapped(len: usize, huge: bool) -> Block {
        #[cfg(not(miri))]
        if let Ok(mut map) = memmap2::MmapMut::map_anon(len + HUGE_PAGE) {
            let skip = map.as_ptr().align_offset(HUGE_PAGE).min(HUGE_PAGE);
            #[cfg(target_os = "linux")]
            if huge {
                // Only advice: if the kernel refuses, the block works with small pages.
                let _ = map.advise_range(memmap2::Advice::HugePage, skip, len);
            }
            // Fault the block's pages in now, in one call: page by page, on first write, a
            // fault costs more than the copy of the chunk that takes it (an edit that writes
            // four 4 KiB nodes took four faults). Only advice, like the one above.
            #[cfg(target_os = "linux")]
            let _ = map.advise_range(memmap2::Advice::PopulateWrite, skip, len);
            #[cfg(not(target_os = "linux"))]
            let _ = huge;
            // Taken once, here; the map is not touched again until it is dropped.
            let base = map[skip..].as_mut_ptr();
            return Block {
                base,
                len,
                used: Cell::new(0),
                huge,
                _backing: Backing::Mapped { _map: map },
            };
        }
        Block::heap(len)
    }

    /// Copies `bytes` into the block and returns the copy, or `None` if it does not fit.
    fn try_copy(&self, bytes: &[u8]) -> Option<&[u8]> {
        let at = self.used.get();
        if self.len - at < bytes.len() {
            return None;
        }
        self.used.set(at + bytes.len());
        // SAFETY: `base..base + len` is this block's memory, alive until the block drops, and
        // `at + bytes.len() <= len`. The range `at..at + bytes.len()` was never handed out
        // (`used` only grows, and was just moved past it), so nothing else reads or writes
        // it while it is filled; afterwards it is only ever read, through the returned
        // slice, whose lifetime is a borrow of the block.
        unsafe {
            let dst = self.base.add(at);
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst, bytes.len());
            Some(std::slice::from_raw_parts(dst, bytes.len()))
        }
    }

    /// Bytes not yet handed out.
    fn room(&self) -> usize {
        self.len - self.used.get()
    }

    /// Sets the next `len` bytes aside (the caller checked that they fit); returns where they
    /// start.
    fn take(&self, len: usize) -> NonNull<u8> {
        let at = self.used.get();
        debug_assert!(len <= self.len - at);
        self.used.set(at + len);
        // SAFETY: `at <= self.len`, so the pointer is inside the block or one past its end,
        // and `base` is not null.
        unsafe { NonNull::new_unchecked(self.base.add(at)) }
    }
}

/// Append-only storage for byte strings: `copy` returns a slice that stays valid, unchanged,
/// for as long as the arena lives.
pub(crate) struct Arena {
    blocks: RefCell<Vec<Block>>,
    /// Whether mapped blocks ask for transparent huge pages.
    huge_pages: bool,
    /// The next full-size block, mapped and faulted in on a thread of its own while the
    /// current one fills (see [`Arena::prepare_next`]).
    next: RefCell<Option<std::thread::JoinHandle<Block>>>,
}

impl Arena {
    /// An empty arena (allocates nothing until the first copy); `huge_pages` asks for
    /// transparent huge pages for its big blocks.
    pub(crate) fn new(huge_pages: bool) -> Arena {
        Arena {
            blocks: RefCell::new(Vec::new()),
            huge_pages,
            next: RefCell::new(None),
        }
    }

    /// Copies `bytes` into the arena.
    pub(crate) fn copy(&self, bytes: &[u8]) -> &[u8] {
        let mut blocks = self.blocks.borrow_mut();
        if let Some(copy) = blocks.last().and_then(|b| b.try_copy(bytes)) {
            // SAFETY: the copy lives in a block's memory, which stays where it is until the
            // arena drops (blocks are never removed, and a `Block` moving inside the `Vec`
            // does not move its memory), so it may borrow the arena rather than the `RefCell`
            // guard.
            return unsafe { &*std::ptr::from_ref(copy) };
        }
        self.push_block(&mut blocks, bytes.len());
        let copy = blocks.last().and_then(|b| b.try_copy(bytes));
        // SAFETY: as above. The new block is at least `bytes.len()` long, so the copy fits.
        copy.map(|c| unsafe { &*std::ptr::from_ref(c) })
            .unwrap_or_default()
    }

    /// Sets aside `want` bytes that no copy will use (or, if the current block has fewer but
    /// at least [`MIN_LOAN`] left, all of those): memory for chunks that are written in
    /// place, possibly on another thread, and then kept (the memory store's loans, see
    /// `ChunkStore::lend`). Returns where they start and how many there are. They stay
    /// valid, and are never handed out again, until the arena drops; [`Arena::trim`] gives
    /// back what was not used.
    pub(crate) fn reserve(&self, want: usize) -> (NonNull<u8>, usize) {
        let mut blocks = self.blocks.borrow_mut();
        let room = blocks.last().map_or(0, Block::room);
        if room >= want.min(MIN_LOAN) {
            let len = room.min(want);
            if let Some(b) = blocks.last() {
                return (b.take(len), len);
            }
        }
        self.push_block(&mut blocks, want);
        match blocks.last() {
            Some(b) => (b.take(want), want),
            None => (NonNull::dangling(), 0),
        }
    }

    /// Gives back the bytes after the first `used` of the reservation of `len` bytes at
    /// `start` ([`Arena::reserve`]), if nothing was set aside or copied after it since.
    pub(crate) fn trim(&self, start: NonNull<u8>, len: usize, used: usize) {
        let blocks = self.blocks.borrow();
        let Some(b) = blocks.last() else {
            return;
        };
        let end = b.used.get();
        let start = start.as_ptr() as usize;
        let base = b.base as usize;
        // Ending exactly at `end` (which is at most the block's length) puts the reservation
        // inside the last block: blocks never overlap, so one in an older block cannot pass.
        if used <= len && start >= base && start - base + len == end {
            b.used.set(start - base + used);
        }
    }

    /// Adds a block with room for at least `len` bytes: the next size up, made or taken
    /// from the spares (see [`Arena::prepare_next`]).
    fn push_block(&self, blocks: &mut Vec<Block>, len: usize) {
        let next = blocks
            .last()
            .map_or(FIRST_BLOCK, |b| (2 * b.len).min(MAX_BLOCK));
        let len = next.max(len);
        let block = if len >= MAPPED_BLOCK {
            take_spare(len, self.huge_pages)
                .or_else(|| self.take_prepared(len))
                .unwrap_or_else(|| Block::mapped(len, self.huge_pages))
        } else {
            Block::heap(len)
        };
        blocks.push(block);
        if len == MAX_BLOCK {
            self.prepare_next();
        }
    }
}

/// An arena (the memory store's block allocator) several threads copy into: byte strings
/// kept, unchanged and in place, for as long as it lives, in large blocks instead of one heap
/// allocation each (used by the Dolt chunk source for the chunks its readers keep). One small
/// allocation per chunk from reader threads went through glibc's per-thread heaps, which grow
/// a few pages at a time (an `mprotect` per chunk) and fault each page in on first write: most
/// of what the first read of a table into Arrow did beyond a warm read (`docs/PERF.md`, "First
/// read in a fresh process").
pub struct SharedArena {
    inner: Mutex<Arena>,
}

impl std::fmt::Debug for SharedArena {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedArena").finish_non_exhaustive()
    }
}

impl Default for SharedArena {
    fn default() -> Self {
        SharedArena::new()
    }
}

impl SharedArena {
    /// An empty arena (allocates nothing until the first copy). Its blocks come from, and on
    /// drop go back to, the same process-wide spares as the memory stores' blocks.
    pub fn new() -> SharedArena {
        SharedArena {
            inner: Mutex::new(Arena::new(false)),
        }
    }

    /// Copies `bytes` into the arena; the copy stays valid and unchanged until the arena drops.
    pub fn copy(&self, bytes: &[u8]) -> &[u8] {
        // A panic while the lock was held left the arena whole: a copy only ever moves a
        // block's fill mark past bytes that are then written and handed out.
        let arena = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let copy = arena.copy(bytes);
        // SAFETY: the copy lives in a block of `self.inner`'s arena, which stays where it is,
        // never written again, until the arena drops with `self` (see `Arena::copy`): it may
        // borrow `self` rather than the lock guard.
        unsafe { &*std::ptr::from_ref(copy) }
    }
}

impl Arena {
    /// Starts mapping and faulting in the next full-size block on a thread of its own, unless
    /// one is under way or a spare is waiting: a growing store then finds its next block ready
    /// instead of stalling while the kernel clears 8 MiB of pages, a stall paid by the one edit
    /// that crosses into a new block (`docs/PERF.md`, "Growing stores"). Under Miri, which
    /// cannot map memory, nothing is prepared.
    fn prepare_next(&self) {
        if cfg!(miri) || self.next.borrow().is_some() || spare_available(MAX_BLOCK, self.huge_pages)
        {
            return;
        }
        let huge = self.huge_pages;
        let thread = std::thread::Builder::new()
            .name("prolly-arena".into())
            .spawn(move || Block::mapped(MAX_BLOCK, huge));
        *self.next.borrow_mut() = thread.ok();
    }

    /// The block [`Arena::prepare_next`] made, if it is of `len` bytes (waiting for it if need
    /// be).
    fn take_prepared(&self, len: usize) -> Option<Block> {
        if len != MAX_BLOCK {
            return None;
        }
        self.next.borrow_mut().take()?.join().ok()
    }
}

/// True if [`SPARE`] holds a block of `len` bytes with this huge-page advice.
fn spare_available(len: usize, huge: bool) -> bool {
    SPARE
        .lock()
        .is_ok_and(|s| s.iter().any(|b| b.len == len && b.huge == huge))
}

/// Mapped blocks of dropped arenas, kept for the arenas made next. A program that fills and
/// drops memory stores one after another (scratch stores, merges, tests, benchmarks) would
/// otherwise map, fault in and zero fresh memory for every store (`docs/PERF.md`, "Spare
/// memory").
static SPARE: Mutex<Vec<Block>> = Mutex::new(Vec::new());

/// The most bytes [`SPARE`] keeps ([`crate::process::set_spare_memory_limit`]). The default
/// holds a million-row tree's chunks (48 MiB) and the chunks of the edits made on a scratch
/// copy of it (64 MiB in `benches/tree.rs`), so that a program that copies a tree into a
/// scratch store, edits it and drops it, again and again, does not fault in fresh memory for
/// every copy (`docs/PERF.md`, "Spare memory").
static SPARE_LIMIT: AtomicUsize = AtomicUsize::new(DEFAULT_SPARE_LIMIT);

/// [`SPARE_LIMIT`]'s default: 128 MiB.
pub(crate) const DEFAULT_SPARE_LIMIT: usize = 128 << 20;

/// The most bytes of blocks kept for later arenas.
pub(crate) fn spare_limit() -> usize {
    SPARE_LIMIT.load(Ordering::Relaxed)
}

/// Sets the most bytes of blocks kept for later arenas (blocks kept already stay).
pub(crate) fn set_spare_limit(bytes: usize) {
    SPARE_LIMIT.store(bytes, Ordering::Relaxed);
}

/// Unmaps every kept spare block; returns how many bytes that gave back.
pub(crate) fn release_spares() -> usize {
    let blocks = SPARE
        .lock()
        .map(|mut s| std::mem::take(&mut *s))
        .unwrap_or_default();
    blocks.iter().map(|b| b.len).sum()
}

/// A spare block of `len` bytes with the same huge-page advice, empty.
fn take_spare(len: usize, huge: bool) -> Option<Block> {
    let mut spare = SPARE.lock().ok()?;
    let i = spare.iter().position(|b| b.len == len && b.huge == huge)?;
    let block = spare.swap_remove(i);
    block.used.set(0);
    Some(block)
}

/// Keeps `blocks`' mapped blocks as spares, up to [`SPARE_LIMIT`]; frees the rest.
///
/// A kept block's pages are marked free-on-pressure (`MADV_FREE`, Linux): they stay mapped and
/// need no fault when written again, but under memory pressure the kernel may take them back
/// (a later write then faults in a zeroed page), so the memory kept costs the system nothing
/// when it needs it (its cost is in `docs/PERF.md`, "Spare memory").
fn keep_spares(blocks: Vec<Block>) {
    let Ok(mut spare) = SPARE.lock() else {
        return;
    };
    let limit = SPARE_LIMIT.load(Ordering::Relaxed);
    let mut kept: usize = spare.iter().map(|b| b.len).sum();
    for block in blocks {
        let Backing::Mapped { _map: map } = &block._backing else {
            continue;
        };
        if kept + block.len > limit {
            continue;
        }
        #[cfg(target_os = "linux")]
        // SAFETY: nothing borrows the block's memory any more: every slice `Arena::copy`
        // handed out borrowed the arena, which is being dropped. Its next arena writes each
        // byte before handing it out, so the kernel may zero any page meanwhile.
        let _ = unsafe { map.unchecked_advise(memmap2::UncheckedAdvice::Free) };
        #[cfg(not(target_os = "linux"))]
        let _ = map;
        kept += block.len;
        spare.push(block);
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        let mut blocks = std::mem::take(self.blocks.get_mut());
        // A prepared block joins the spares if it is ready; otherwise its thread is left to
        // finish alone (the block is unmapped when the thread ends) rather than waited for.
        if let Some(thread) = self.next.get_mut().take() {
            if thread.is_finished() {
                blocks.extend(thread.join().ok());
            }
        }
        keep_spares(blocks);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_stay_valid_while_blocks_grow() {
        let arena = Arena::new(false);
        let mut kept = Vec::new();
        for i in 0..if cfg!(miri) { 40 } else { 300usize } {
            let bytes: Vec<u8> = (0..(i * 37) % 9000).map(|j| (i ^ j) as u8).collect();
            kept.push((arena.copy(&bytes), bytes));
        }
        // A copy bigger than any block so far gets a block of its own.
        let big = vec![7u8; 3 * FIRST_BLOCK];
        let big_copy = arena.copy(&big);
        for (copy, want) in &kept {
            assert_eq!(*copy, &want[..]);
        }
        assert_eq!(big_copy, &big[..]);
        assert!(arena.copy(&[]).is_empty());
    }

    #[test]
    fn shared_copies_from_several_threads_stay_valid() {
        let arena = SharedArena::new();
        let per_thread = if cfg!(miri) { 20 } else { 2000usize };
        let copies: Vec<Vec<(&[u8], Vec<u8>)>> = std::thread::scope(|s| {
            let threads: Vec<_> = (0..3usize)
                .map(|t| {
                    let arena = &arena;
                    s.spawn(move || {
                        (0..per_thread)
                            .map(|i| {
                                let bytes: Vec<u8> = (0..(i * 53 + t) % 5000)
                                    .map(|j| (i ^ j ^ t) as u8)
                                    .collect();
                                (arena.copy(&bytes), bytes)
                            })
                            .collect()
                    })
                })
                .collect();
            threads.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (copy, want) in copies.iter().flatten() {
            assert_eq!(*copy, &want[..]);
        }
    }

    #[test]
    fn spare_blocks_serve_the_next_arena() {
        let chunk: Vec<u8> = (0..4096u32).map(|i| (i * 7) as u8).collect();
        let count = if cfg!(miri) { 40 } else { 1500 };
        let first = Arena::new(false);
        for _ in 0..count {
            first.copy(&chunk);
        }
        drop(first);
        // The next arena gets the dropped one's blocks (or fresh ones, if another test took
        // them meanwhile): either way every copy reads back as written.
        let second = Arena::new(false);
        let other: Vec<u8> = chunk.iter().map(|b| !b).collect();
        let copies: Vec<&[u8]> = (0..count).map(|_| second.copy(&other)).collect();
        assert!(copies.iter().all(|c| *c == &other[..]));
        let kept: usize = SPARE.lock().map_or(0, |s| s.iter().map(|b| b.len).sum());
        assert!(kept <= DEFAULT_SPARE_LIMIT);
    }

    #[test]
    fn prepared_blocks_take_the_copies_that_follow() {
        // Past several full-size blocks, each prepared while the one before filled.
        let chunk: Vec<u8> = (0..16384u32).map(|i| (i * 13) as u8).collect();
        let count = if cfg!(miri) { 8 } else { 2400 };
        let arena = Arena::new(false);
        let copies: Vec<&[u8]> = (0..count).map(|_| arena.copy(&chunk)).collect();
        assert!(copies.iter().all(|c| *c == &chunk[..]));
        let full = arena
            .blocks
            .borrow()
            .iter()
            .filter(|b| b.len == MAX_BLOCK)
            .count();
        assert!(cfg!(miri) || full >= 3, "{full} full-size blocks");
    }

    #[test]
    fn grows_into_mapped_blocks() {
        let arena = Arena::new(true);
        let chunk: Vec<u8> = (0..4096u32).map(|i| (i * 31) as u8).collect();
        // Past the first mapped block (under Miri, which is slow, just past the first blocks).
        let count = if cfg!(miri) { 40 } else { 2000 };
        let copies: Vec<&[u8]> = (0..count).map(|_| arena.copy(&chunk)).collect();
        assert!(copies.iter().all(|c| *c == &chunk[..]));
        assert!(cfg!(miri) || arena.blocks.borrow().iter().any(|b| b.len >= MAPPED_BLOCK));
    }
}
