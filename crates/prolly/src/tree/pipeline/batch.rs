//! Batches of completed nodes waiting for their addresses.

use std::ops::Range;

use prollystore_format::message::NodeWriter;
use prollystore_format::{Address, HashProfile};

use super::out::{Emit, NodeOut};
use crate::error::TreeError;
use crate::store::{LentSpace, StoreFastPaths};
use crate::tree::pending::PendingNode;
use crate::tree::schema::TreeSchema;

/// Completed nodes of one level waiting for their addresses, then stored and handed to the
/// level above in order: either hashed together on this thread (several chunks at once) or, for
/// the leaves of a pipelined build, on a worker thread while the builder goes on filling the
/// next batch. The tree is the same as when each node is hashed as it completes; only the
/// hashing moves.
#[derive(Debug, Default)]
pub(crate) struct NodeBatch {
    chunks: Vec<u8>,
    chunk_ends: Vec<usize>,
    keys: Vec<u8>,
    key_ends: Vec<usize>,
    counts: Vec<u64>,
    addresses: Vec<Address>,
    /// Leaves handed over unserialized (batches for the hash thread, which serializes them
    /// too): `raw[..raw_len]` are in use, the rest keep their buffers for reuse.
    raw: Vec<PendingNode>,
    raw_len: usize,
    /// Serializes `raw` leaves (on the thread that hashes).
    writer: NodeWriter,
    /// Serializing a raw leaf failed (reported by [`NodeBatch::store_and_emit`]).
    failed: Option<TreeError>,
    /// Store memory lent for the raw leaves ([`NodeBatch::lend`]): they are serialized
    /// straight into it, as many as fit, and the store adopts them there.
    space: Option<LentSpace<'static>>,
    /// Where the first `placed.len()` nodes are in `space`; the others are in `chunks`.
    placed: Vec<Range<usize>>,
    /// The `(address, place)` list handed to the store's `adopt` (kept for its buffer).
    adopted: Vec<(Address, Range<usize>)>,
}

impl NodeBatch {
    /// Queues `chunk`, which must be a node a `NodeWriter` serialized: it is put into the
    /// store as one (`StoreFastPaths::put_node_hashed`). Its callers, `NodeQueue::accept` and
    /// `accept_written`, pass what the level's writer just wrote.
    #[inline]
    pub(super) fn push(&mut self, chunk: &[u8], last_key: &[u8], count: u64) {
        self.chunks.extend_from_slice(chunk);
        self.chunk_ends.push(self.chunks.len());
        self.push_entry(last_key, count);
    }

    #[inline]
    fn push_entry(&mut self, last_key: &[u8], count: u64) {
        self.keys.extend_from_slice(last_key);
        self.key_ends.push(self.keys.len());
        self.counts.push(count);
    }

    /// Takes the finished leaf `leaf` (last key `last_key`, `count` rows) unserialized,
    /// giving it empty buffers in exchange (with the leading 0 offsets a fresh node has). A
    /// batch holds raw leaves or serialized chunks, not both.
    pub(super) fn push_raw(&mut self, leaf: &mut PendingNode, count: u64) {
        self.push_entry(leaf.last_key(), count);
        if self.raw.len() == self.raw_len {
            self.raw.push(PendingNode::default());
        }
        let Some(slot) = self.raw.get_mut(self.raw_len) else {
            return;
        };
        self.raw_len += 1;
        slot.key_items.clear();
        slot.key_offsets.clear();
        slot.value_items.clear();
        slot.value_offsets.clear();
        slot.address_offsets.clear();
        std::mem::swap(slot, leaf);
        leaf.key_offsets.push(0);
        leaf.value_offsets.push(0);
        // Room for a typical leaf, as `PendingNode::with_room` gives (no-ops once slots have
        // been round the pipeline).
        leaf.key_items.reserve(4096);
        leaf.value_items.reserve(4096);
        leaf.key_offsets.reserve(256);
        leaf.value_offsets.reserve(256);
    }

    /// Gives the batch's raw leaves store memory to be serialized into, on the thread that
    /// hashes them: the store then keeps them where they are instead of copying them out of
    /// `chunks` (on the calling thread). Asks for exactly the room they need.
    ///
    /// # Safety
    /// `space` must not be used after the borrow of the store that lent it ends: the batch
    /// must come back (or its thread end) and the space be adopted or dropped before that.
    pub(super) unsafe fn lend<S: StoreFastPaths + ?Sized>(&mut self, store: &S) {
        let want: usize = self.raw[..self.raw_len]
            .iter()
            .map(|leaf| NodeWriter::leaf_bound(&leaf.leaf_input()))
            .sum();
        if want > 0 {
            // SAFETY: the caller's promise.
            self.space = store.lend(want).map(|s| unsafe { s.detach() });
        }
    }

    /// Serializes the raw leaves in order: into the lent space while they fit, then into
    /// `chunks`.
    fn serialize_raw(&mut self) -> Result<(), TreeError> {
        let mut used = 0;
        for leaf in self.raw.iter().take(self.raw_len) {
            let input = leaf.leaf_input();
            if let Some(space) = self.space.as_mut().filter(|_| self.chunk_ends.is_empty()) {
                let end = used + NodeWriter::leaf_bound(&input);
                if let Some(dst) = space.bytes_mut().get_mut(used..end) {
                    let start = NodeWriter::write_leaf_into(&input, dst)?;
                    self.placed.push(used + start..end);
                    used = end;
                    continue;
                }
            }
            let chunk = self.writer.write_leaf(&input)?;
            self.chunks.extend_from_slice(chunk);
            self.chunk_ends.push(self.chunks.len());
        }
        self.raw_len = 0;
        Ok(())
    }

    /// Node `i`'s chunk.
    fn chunk(&self, i: usize) -> &[u8] {
        match self.placed.get(i) {
            Some(r) => self.space.as_ref().map_or(&[], |s| &s.bytes()[r.clone()]),
            None => Self::part(&self.chunks, &self.chunk_ends, i - self.placed.len()),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.counts.len()
    }

    pub(super) fn clear(&mut self) {
        self.space = None;
        self.placed.clear();
        self.chunks.clear();
        self.chunk_ends.clear();
        self.keys.clear();
        self.key_ends.clear();
        self.counts.clear();
        self.addresses.clear();
        self.raw_len = 0;
        self.failed = None;
    }

    /// Item `i` of a concatenation delimited by `ends`.
    fn part<'b>(bytes: &'b [u8], ends: &[usize], i: usize) -> &'b [u8] {
        let start = if i == 0 { 0 } else { ends[i - 1] };
        &bytes[start..ends[i]]
    }

    /// Serializes raw leaves, then computes every chunk's address, several at a time where the
    /// profile can.
    pub(crate) fn hash(&mut self, profile: HashProfile) {
        const GROUP: usize = 64;
        if self.raw_len > 0 {
            if let Err(e) = self.serialize_raw() {
                self.failed = Some(e);
                return;
            }
        }
        let mut addresses = std::mem::take(&mut self.addresses);
        addresses.clear();
        addresses.resize(self.len(), Address::ZERO);
        for (g, out) in addresses.chunks_mut(GROUP).enumerate() {
            let mut chunks: [&[u8]; GROUP] = [&[]; GROUP];
            for (j, c) in chunks.iter_mut().take(out.len()).enumerate() {
                *c = self.chunk(g * GROUP + j);
            }
            profile.addresses_of(&chunks[..out.len()], out);
        }
        self.addresses = addresses;
    }

    /// Stores the hashed nodes and hands each to `emit`, in order; then empties the batch.
    pub(crate) fn store_and_emit<S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized>(
        &mut self,
        out: &mut NodeOut<'_, S, T>,
        emit: &mut Emit<'_, S, T>,
    ) -> Result<(), TreeError> {
        if let Some(e) = self.failed.take() {
            self.clear();
            return Err(e);
        }
        let placed = self.placed.len();
        if let Some(space) = self.space.take() {
            self.adopted.clear();
            let places = self.placed.iter().cloned();
            self.adopted
                .extend(self.addresses.iter().copied().zip(places));
            // SAFETY: the hash thread serialized each placed node into the space with
            // `NodeWriter::write_leaf_into`, and nothing wrote there since.
            unsafe { out.store.adopt(space, &self.adopted) }?;
        }
        for (i, address) in self.addresses.iter().enumerate() {
            if i >= placed {
                let chunk = Self::part(&self.chunks, &self.chunk_ends, i - placed);
                // SAFETY: `chunks` holds only nodes a `NodeWriter` serialized (see `push`, and
                // `serialize_raw`).
                unsafe { out.store.put_node_hashed(*address, chunk) }?;
            }
            let key = Self::part(&self.keys, &self.key_ends, i);
            emit(out, key, *address, self.counts[i])?;
        }
        self.clear();
        Ok(())
    }
}

/// Leaves per batch an edit sends to the hash thread: about 256 KiB of chunks, a few thousand
/// rows; small enough that a 1,000-row edit (~1,000 leaves) keeps both threads busy.
pub(crate) const LEAF_BATCH: usize = 64;

/// Leaves per batch a build sends to the hash thread: about 1 MiB of chunks. Each hand-over
/// may wake the other thread (a futex call), so builds hand over fewer, larger batches than
/// edits (measured in `docs/PERF.md`, "Batch sizes").
pub(crate) const BUILD_LEAF_BATCH: usize = 256;

/// Nodes per batch hashed on the builder's own thread: enough to keep the lanes busy (four
/// SHA-512s, or eight BLAKE3 chunks of the ~64 these nodes hold) while chunks of different
/// sizes come and go, few enough that the chunks are still in cache.
pub(super) const HASH_BATCH: usize = 16;

/// True if queueing nodes to hash them together beats hashing each as it completes: for both
/// profiles ([`HashProfile::addresses_of`] hashes four SHA-512s at once, or the 1 KiB BLAKE3
/// chunks of every node eight at a time); a single edit (one node per level) pays a little for
/// the queue's copy of each node (`docs/PERF.md`, "Batched hashing").
pub(crate) fn batch_hashing_pays(profile: HashProfile) -> bool {
    matches!(profile, HashProfile::Dolt | HashProfile::Blake3)
}
