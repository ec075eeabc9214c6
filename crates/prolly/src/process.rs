//! Process-wide state: everything the library keeps beyond a single call, in one list, with
//! the calls that bound or release it. None of it changes a result; it only trades memory and
//! threads for speed, and every default is safe to keep.
//!
//! | state | kept by | bounded or released by |
//! |---|---|---|
//! | memory of dropped [`MemoryStore`]s (chunk blocks, slot pages), reused by the next ones | the process | [`set_spare_memory_limit`] (default 128 MiB), [`release_spare_memory`] |
//! | the background-hashing switch | the process | [`set_background_hashing`], the environment variable [`BACKGROUND_HASHING_VAR`] (read once) |
//! | a hash thread for edits (started by the first large edit), its batches, the edit's level builder and lists | each calling thread | [`release_thread_caches`], or the thread's end |
//! | up to four node writers grown to node size | each calling thread | [`release_thread_caches`], or the thread's end |
//!
//! A `TreeBuilder`'s hash thread ([`TreeBuilder::with_hash_thread`]) and a `FileStore`'s
//! files belong to those objects and end with them.
//!
//! [`MemoryStore`]: crate::MemoryStore
//! [`TreeBuilder::with_hash_thread`]: crate::tree::build::TreeBuilder::with_hash_thread

pub use crate::tree::pipeline::hash_thread::{
    background_hashing, set_background_hashing, BACKGROUND_HASHING_VAR,
};

/// Gives back to the system the memory that dropped memory stores left for the stores made
/// after them; returns how many bytes that was. Stores that are alive keep everything they
/// hold. Worth calling when a program is done with memory stores for a while: until then the
/// kept memory counts in its resident size, although on Linux the kernel may reclaim it under
/// memory pressure (it is marked `MADV_FREE`).
pub fn release_spare_memory() -> usize {
    crate::store::release_spare_memory()
}

/// Sets how much memory of dropped memory stores is kept for the next ones: `bytes` of chunk
/// blocks and a sixteenth of that in pages of per-chunk records (default 128 MiB). Applies to
/// what is kept from now on; [`release_spare_memory`] gives back what is kept already. `0`
/// keeps nothing: every store then maps and faults in fresh memory.
pub fn set_spare_memory_limit(bytes: usize) {
    crate::store::set_spare_memory_limit(bytes);
}

/// Drops what the calling thread keeps between builds and edits: its edits' hash thread
/// (waiting for it to end), level builder and lists, and its node writers. The next build or
/// edit on the thread makes them again.
pub fn release_thread_caches() {
    crate::tree::mutate::release_thread_scratch();
    crate::tree::pipeline::release_thread_writers();
}
