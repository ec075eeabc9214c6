//! Building trees from items in key order: one level builder per level, each closing nodes
//! where the splitter says, handing `(last key, address, count)` of every node to the level
//! above (Dolt's `chunker`).
//!
//! Where nodes end depends only on keys and item sizes, never on the child addresses an
//! internal node holds, so a level can queue its completed nodes and hash them later, several
//! at once ([`HashProfile::addresses_of`]: four SHA-512s side by side for the Dolt profile, the
//! 1 KiB BLAKE3 chunks of all of them eight at a time for blake3), as
//! long as each node's entry reaches the level above, in order, before that level's node is
//! serialized. Builds do that for the leaves, edits for every level they rewrite
//! (`NodeBatch`).

use std::ops::Range;

use prollystore_format::message::{InternalInput, LeafInput, Node, NodeWriter};

use prollystore_format::{Address, HashProfile, ADDRESS_LEN};

use super::hash_thread::HashThread;
use super::schema::TreeSchema;
use super::split::{Splitter, MAX_LEVELS, MAX_NODE_DATA};
use crate::error::TreeError;
use crate::store::{ChunkStore, LentSpace};

/// The nodes being filled at one level, with the splitter state.
#[derive(Debug, Default)]
pub(crate) struct LevelBuilder {
    level: u8,
    key_items: Vec<u8>,
    key_offsets: Vec<u16>,
    value_items: Vec<u8>,
    value_offsets: Vec<u16>,
    address_offsets: Vec<u16>,
    counts: Vec<u64>,
    splitter: Splitter,
    tree_count: u64,
    /// Set once any item was appended: at the top of a build, "a parent exists".
    used: bool,
    /// Items of the node this level wrote last (0 before any).
    last_written: usize,
    /// Completed nodes go here, serialized but not yet hashed, instead of to the store and the
    /// level above (see [`NodeBatch`]).
    deferred: Option<NodeBatch>,
    /// With `deferred`: when the batch holds [`HASH_BATCH`] nodes, [`LevelBuilder::boundary`]
    /// hashes it and hands its nodes on; false: the owner takes full batches (the hash thread).
    hash_batches: bool,
    /// Without `hash_batches`: nodes per batch the owner takes.
    thread_batch: usize,
}

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
    raw: Vec<RawLeaf>,
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

/// A completed leaf as its level builder filled it. The buffers change owners (the builder
/// takes the ones this held), so handing a leaf to the hash thread copies nothing.
#[derive(Debug, Default)]
struct RawLeaf {
    key_items: Vec<u8>,
    key_offsets: Vec<u16>,
    value_items: Vec<u8>,
    value_offsets: Vec<u16>,
    address_offsets: Vec<u16>,
}

impl RawLeaf {
    /// The leaf as the node writer takes it.
    fn input(&self) -> LeafInput<'_> {
        LeafInput {
            key_items: &self.key_items,
            key_offsets: &self.key_offsets,
            value_items: &self.value_items,
            value_offsets: &self.value_offsets,
            value_address_offsets: &self.address_offsets,
        }
    }
}

impl NodeBatch {
    fn push(&mut self, chunk: &[u8], last_key: &[u8], count: u64) {
        self.chunks.extend_from_slice(chunk);
        self.chunk_ends.push(self.chunks.len());
        self.push_entry(last_key, count);
    }

    fn push_entry(&mut self, last_key: &[u8], count: u64) {
        self.keys.extend_from_slice(last_key);
        self.key_ends.push(self.keys.len());
        self.counts.push(count);
    }

    /// Takes `leaf`'s pending node (a leaf) unserialized, giving it empty buffers in exchange
    /// (with the leading 0 offsets a fresh node has). A batch holds raw leaves or serialized
    /// chunks, not both.
    fn push_raw(&mut self, leaf: &mut LevelBuilder) {
        self.push_entry(leaf.last_key(), leaf.tree_count);
        if self.raw.len() == self.raw_len {
            self.raw.push(RawLeaf::default());
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
        std::mem::swap(&mut slot.key_items, &mut leaf.key_items);
        std::mem::swap(&mut slot.key_offsets, &mut leaf.key_offsets);
        std::mem::swap(&mut slot.value_items, &mut leaf.value_items);
        std::mem::swap(&mut slot.value_offsets, &mut leaf.value_offsets);
        std::mem::swap(&mut slot.address_offsets, &mut leaf.address_offsets);
        leaf.key_offsets.push(0);
        leaf.value_offsets.push(0);
        // Room for a typical leaf, as `LevelBuilder::new` gives (no-ops once slots have been
        // round the pipeline).
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
    pub(crate) unsafe fn lend<S: ChunkStore + ?Sized>(&mut self, store: &S) {
        let want: usize = self.raw[..self.raw_len]
            .iter()
            .map(|leaf| NodeWriter::leaf_bound(&leaf.input()))
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
            let input = leaf.input();
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

    fn clear(&mut self) {
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
    pub(crate) fn store_and_emit<S: ChunkStore + ?Sized, T: TreeSchema + ?Sized>(
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
            out.store.adopt(space, &self.adopted)?;
        }
        for (i, address) in self.addresses.iter().enumerate() {
            if i >= placed {
                let chunk = Self::part(&self.chunks, &self.chunk_ends, i - placed);
                out.store.put_node_hashed(*address, chunk)?;
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
/// wakes the other thread (a futex call, ~8% of a build's main thread at 64 leaves); a
/// 1M-row build ran 1.1-1.2x faster with 256 than with 64 (`tree_workload build1t`).
pub(crate) const BUILD_LEAF_BATCH: usize = 256;

/// Nodes per batch hashed on the builder's own thread: enough to keep the lanes busy (four
/// SHA-512s, or eight BLAKE3 chunks of the ~64 these nodes hold) while chunks of different
/// sizes come and go, few enough that the chunks are still in cache.
const HASH_BATCH: usize = 16;

/// True if queueing nodes to hash them together beats hashing each as it completes: for both
/// profiles ([`HashProfile::addresses_of`] hashes four SHA-512s at once, or the 1 KiB BLAKE3
/// chunks of every node eight at a time). For blake3, callgrind counted 0.87x the
/// instructions of one-by-one hashing for a 1M-row build and 0.85x for 1,000 edits; a single
/// edit (one node per level) pays about 3% for the queue's copy of each node.
pub(crate) fn batch_hashing_pays(profile: HashProfile) -> bool {
    matches!(profile, HashProfile::Dolt | HashProfile::Blake3)
}

/// Where completed nodes go: the store, a reusable serializer, and the schema.
pub(crate) struct NodeOut<'a, S: ChunkStore + ?Sized, T: TreeSchema + ?Sized> {
    pub store: &'a S,
    pub schema: &'a T,
    pub writer: NodeWriter,
    pub with_addresses: bool,
}

thread_local! {
    /// Serializers whose buffers have grown to node size, kept between builds and edits so
    /// that a small edit does not pay for growing them again.
    static WRITERS: std::cell::RefCell<Vec<NodeWriter>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl<'a, S: ChunkStore + ?Sized, T: TreeSchema + ?Sized> NodeOut<'a, S, T> {
    pub fn new(store: &'a S, schema: &'a T) -> Self {
        let writer = WRITERS
            .try_with(|w| w.borrow_mut().pop())
            .ok()
            .flatten()
            .unwrap_or_default();
        NodeOut {
            store,
            schema,
            writer,
            with_addresses: schema.values_have_addresses(),
        }
    }
}

impl<S: ChunkStore + ?Sized, T: TreeSchema + ?Sized> Drop for NodeOut<'_, S, T> {
    fn drop(&mut self) {
        let writer = std::mem::take(&mut self.writer);
        let _ = WRITERS.try_with(|w| {
            let mut w = w.borrow_mut();
            if w.len() < 4 {
                w.push(writer);
            }
        });
    }
}

/// Receives each completed node: `(out, last key, address, tree count)`.
pub(crate) type Emit<'e, S, T> =
    dyn FnMut(&mut NodeOut<'_, S, T>, &[u8], Address, u64) -> Result<(), TreeError> + 'e;

impl LevelBuilder {
    pub fn new(level: u8) -> LevelBuilder {
        // Room for a typical node up front: growing the buffers item by item costs more than
        // the node's hashing when only a few nodes are written (single edits).
        let mut b = LevelBuilder {
            level,
            key_items: Vec::with_capacity(4096),
            key_offsets: Vec::with_capacity(256),
            value_items: Vec::with_capacity(4096),
            value_offsets: Vec::with_capacity(if level == 0 { 256 } else { 1 }),
            counts: Vec::with_capacity(if level == 0 { 0 } else { 256 }),
            ..LevelBuilder::default()
        };
        b.key_offsets.push(0);
        b.value_offsets.push(0);
        b
    }

    /// Makes this an empty builder for `level`, keeping its buffers and its way of hashing
    /// (edits reuse one builder for every level they rewrite). Queued nodes not yet handed on
    /// are dropped: there are any only after a failed edit.
    pub(crate) fn relevel(&mut self, level: u8) {
        self.reset();
        self.level = level;
        self.used = false;
        self.last_written = 0;
        if let Some(batch) = &mut self.deferred {
            batch.clear();
        }
    }

    /// From now on, completed nodes are queued and hashed [`HASH_BATCH`] at a time on this
    /// thread, then stored and handed to `emit` in order. The owner must call
    /// [`LevelBuilder::flush_batch`] after the last node, and count the queued nodes
    /// ([`LevelBuilder::queued`]) wherever it counts the nodes handed on so far.
    pub(crate) fn hash_in_batches(&mut self) {
        if self.deferred.is_none() {
            self.deferred = Some(NodeBatch::default());
        }
        self.hash_batches = true;
    }

    /// From now on, completed nodes are queued until `batch_len` of them wait; the owner
    /// then takes the batch ([`LevelBuilder::batch_for_thread`], [`LevelBuilder::swap_batch`])
    /// to hash it on another thread, and must count the nodes in flight as handed on.
    pub(crate) fn batches_for_owner(&mut self, batch_len: usize) {
        if self.deferred.is_none() {
            self.deferred = Some(NodeBatch::default());
        }
        self.hash_batches = false;
        self.thread_batch = batch_len;
    }

    /// Gives the owner the queued batch, putting `fresh` (cleared) in its place.
    pub(crate) fn swap_batch(&mut self, fresh: NodeBatch) -> Option<NodeBatch> {
        self.deferred.replace(fresh)
    }

    /// True when the batch is full and the owner takes it (the hash thread).
    #[inline]
    pub(crate) fn batch_for_thread(&self) -> bool {
        !self.hash_batches
            && self
                .deferred
                .as_ref()
                .is_some_and(|b| b.len() >= self.thread_batch)
    }

    /// Completed nodes queued for hashing, not yet handed to `emit`.
    pub(crate) fn queued(&self) -> usize {
        self.deferred.as_ref().map_or(0, NodeBatch::len)
    }

    /// Hashes and stores the queued nodes and hands them to `emit`, in order.
    pub(crate) fn flush_batch<S: ChunkStore + ?Sized, T: TreeSchema + ?Sized>(
        &mut self,
        out: &mut NodeOut<'_, S, T>,
        emit: &mut Emit<'_, S, T>,
    ) -> Result<(), TreeError> {
        match &mut self.deferred {
            Some(batch) if batch.len() > 0 => {
                batch.hash(out.store.profile());
                batch.store_and_emit(out, emit)
            }
            _ => Ok(()),
        }
    }

    /// Items of the node this level wrote last (0 if none since it was created or
    /// re-levelled).
    pub(crate) fn last_written(&self) -> usize {
        self.last_written
    }

    /// Appends the old items `from..to` of `node` (a node of this level) in one go, without
    /// asking the splitter about each: correct only where the old tree proves that none of them
    /// ends a node, i.e. the builder is [in step](LevelBuilder::in_step_with) with the old
    /// tree's at `from` and `to` is before the node's last item (its items before the last did
    /// not end it, and the splitter state is the same). `counts`
    /// are the node's subtree counts (internal levels). False (nothing appended) if the items
    /// would not fit the node's byte limit; the caller then appends them one by one.
    pub(crate) fn extend_unsplit<S: ChunkStore + ?Sized, T: TreeSchema + ?Sized>(
        &mut self,
        out: &NodeOut<'_, S, T>,
        node: &Node<'_>,
        from: usize,
        to: usize,
        counts: &[u64],
    ) -> bool {
        match self.copy_items(out, node, from, to, counts) {
            Some(bytes) => {
                self.splitter.add_size(bytes);
                true
            }
            None => from >= to,
        }
    }

    /// True if the builder is in the state the old tree's builder was in just before item
    /// `from` of `node` (a node of this level): then the old node's boundaries after `from`
    /// repeat, and its items from `from` to before its last can go in through
    /// [`LevelBuilder::extend_unsplit`]. The splitter's decisions depend only on the bytes
    /// since the node's start, the item and (at internal levels) whether it is the node's first
    /// item, so equal byte counts suffice: at the node's start (`from == 0`) the builder must be
    /// fresh; after it, hold at least one item (so neither is at a first item). An edit that
    /// keeps the sizes (a value update, a child rewritten in place) resynchronizes here at once.
    pub(crate) fn in_step_with(&self, node: &Node<'_>, from: usize) -> bool {
        if from == 0 {
            return self.is_fresh();
        }
        if self.count() == 0 || from >= node.count() {
            return false;
        }
        let keys = node.key_offset(from).wrapping_sub(node.key_offset(0));
        let values = if self.level == 0 {
            let vo = node.value_offsets_bytes();
            offset_at(vo, from).wrapping_sub(offset_at(vo, 0))
        } else {
            from * ADDRESS_LEN
        };
        self.data_len() == keys.wrapping_add(values)
    }

    /// Appends the old items `from..end` of `node` (a node of this level), asking the splitter
    /// about each exactly as [`LevelBuilder::append`] one by one would, but copying the items
    /// between boundaries in one go. `counts` as for [`LevelBuilder::extend_unsplit`].
    pub(crate) fn append_run<S: ChunkStore + ?Sized, T: TreeSchema + ?Sized>(
        &mut self,
        out: &mut NodeOut<'_, S, T>,
        node: &Node<'_>,
        from: usize,
        end: usize,
        counts: &[u64],
        emit: &mut Emit<'_, S, T>,
    ) -> Result<(), TreeError> {
        let end = end.min(node.count());
        let leaf = self.level == 0;
        let vo = node.value_offsets_bytes();
        // Items `start..j` are accounted for by the splitter but not copied yet; `pending`
        // is their byte size.
        let mut start = from;
        let mut pending = 0usize;
        for j in from..end {
            let key = node.key(j);
            let value_len = if leaf {
                offset_at(vo, j + 1).saturating_sub(offset_at(vo, j))
            } else {
                ADDRESS_LEN
            };
            let item_len = key.len() + value_len;
            if self.data_len() + pending + item_len > MAX_NODE_DATA {
                // Rare: the byte limit closes the node before this item (as `append` does).
                self.copy_run(out, node, start, j, counts)?;
                start = j;
                pending = 0;
                if self.level > 0 && self.count() == 1 {
                    return Err(TreeError::ItemTooLarge {
                        len: item_len,
                        level: self.level,
                    });
                }
                self.boundary(out, emit)?;
            }
            pending += item_len;
            let crossed = self.splitter.append(key, value_len, self.level);
            if crossed && !(self.level > 0 && self.count() + (j + 1 - start) == 1) {
                self.copy_run(out, node, start, j + 1, counts)?;
                start = j + 1;
                pending = 0;
                self.boundary(out, emit)?;
            }
        }
        self.copy_run(out, node, start, end, counts)
    }

    /// [`LevelBuilder::copy_items`] for items the splitter has already seen.
    #[inline]
    fn copy_run<S: ChunkStore + ?Sized, T: TreeSchema + ?Sized>(
        &mut self,
        out: &NodeOut<'_, S, T>,
        node: &Node<'_>,
        from: usize,
        to: usize,
        counts: &[u64],
    ) -> Result<(), TreeError> {
        if from >= to || self.copy_items(out, node, from, to, counts).is_some() {
            return Ok(());
        }
        Err(TreeError::Malformed {
            address: Address::ZERO,
            reason: "node items out of range while copying them",
        })
    }

    /// Copies the items `from..to` of `node` (a node of this level) to the pending node, with
    /// their offsets, counts and value addresses; the splitter is not told. Their byte size, or
    /// `None` (nothing copied) if they are out of range or would not fit the byte limit.
    fn copy_items<S: ChunkStore + ?Sized, T: TreeSchema + ?Sized>(
        &mut self,
        out: &NodeOut<'_, S, T>,
        node: &Node<'_>,
        from: usize,
        to: usize,
        counts: &[u64],
    ) -> Option<usize> {
        if from >= to || to > node.count() {
            return None;
        }
        let (ks, ke) = (node.key_offset(from), node.key_offset(to));
        let (vs, ve) = if self.level == 0 {
            (
                offset_at(node.value_offsets_bytes(), from),
                offset_at(node.value_offsets_bytes(), to),
            )
        } else {
            (from * ADDRESS_LEN, to * ADDRESS_LEN)
        };
        let (Some(keys), Some(values)) = (
            node.key_items().get(ks..ke),
            if self.level == 0 {
                node.value_items().get(vs..ve)
            } else {
                node.address_array().get(vs..ve)
            },
        ) else {
            return None;
        };
        if self.data_len() + keys.len() + values.len() > MAX_NODE_DATA {
            return None;
        }
        self.used = true;
        let kbase = self.key_items.len();
        self.key_items.extend_from_slice(keys);
        let ko = node.key_offsets_bytes();
        rebase_offsets(&mut self.key_offsets, ko, from, to, kbase, ks);
        let vbase = self.value_items.len();
        self.value_items.extend_from_slice(values);
        if self.level == 0 {
            let vo = node.value_offsets_bytes();
            rebase_offsets(&mut self.value_offsets, vo, from, to, vbase, vs);
            if out.with_addresses {
                for i in from..to {
                    let base = vbase + offset_at(vo, i) - vs;
                    out.schema.push_value_address_offsets(
                        node.value(i),
                        base,
                        &mut self.address_offsets,
                    );
                }
            }
            self.tree_count += (to - from) as u64;
        } else {
            let c = counts.get(from..to).unwrap_or(&[]);
            self.counts.extend_from_slice(c);
            self.tree_count += c.iter().sum::<u64>();
        }
        Some(keys.len() + values.len())
    }

    /// Items in the node being filled.
    #[inline]
    pub fn count(&self) -> usize {
        self.key_offsets.len() - 1
    }

    /// True if any item was ever appended at this level.
    #[inline]
    pub fn used(&self) -> bool {
        self.used
    }

    /// True at the start of a node (nothing pending, splitter reset).
    #[inline]
    pub fn is_fresh(&self) -> bool {
        self.count() == 0 && self.splitter.is_fresh()
    }

    #[inline]
    fn data_len(&self) -> usize {
        self.key_items.len() + self.value_items.len()
    }

    /// The key of the last pending item.
    pub fn last_key(&self) -> &[u8] {
        let n = self.key_offsets.len();
        if n < 2 {
            return &[];
        }
        let start = usize::from(self.key_offsets[n - 2]);
        &self.key_items[start..]
    }

    /// The pending items' keys, key offsets, values (leaf) or child addresses (internal), and
    /// counts.
    pub fn reset(&mut self) {
        self.key_items.clear();
        self.key_offsets.truncate(1);
        self.value_items.clear();
        self.value_offsets.truncate(1);
        self.address_offsets.clear();
        self.counts.clear();
        self.splitter.reset();
        self.tree_count = 0;
    }

    /// Adds one item without any boundary logic.
    #[inline]
    fn push<S: ChunkStore + ?Sized, T: TreeSchema + ?Sized>(
        &mut self,
        out: &NodeOut<'_, S, T>,
        key: &[u8],
        value: &[u8],
        count: u64,
    ) {
        self.used = true;
        self.key_items.extend_from_slice(key);
        self.key_offsets.push(self.key_items.len() as u16);
        if self.level == 0 {
            let base = self.value_items.len();
            self.value_items.extend_from_slice(value);
            self.value_offsets.push(self.value_items.len() as u16);
            if out.with_addresses {
                out.schema
                    .push_value_address_offsets(value, base, &mut self.address_offsets);
            }
            self.tree_count += 1;
        } else {
            self.value_items.extend_from_slice(value);
            self.counts.push(count);
            self.tree_count += count;
        }
    }

    /// Serializes and stores the pending node: `(address, tree count)`. Does not reset.
    pub fn write<S: ChunkStore + ?Sized, T: TreeSchema + ?Sized>(
        &self,
        out: &mut NodeOut<'_, S, T>,
    ) -> Result<(Address, u64), TreeError> {
        let chunk = self.serialize(&mut out.writer)?;
        let address = out.store.put_node(chunk)?;
        Ok((address, self.tree_count))
    }

    /// The pending node as a chunk (in the writer's buffer).
    fn serialize<'w>(&self, writer: &'w mut NodeWriter) -> Result<&'w [u8], TreeError> {
        Ok(if self.level == 0 {
            writer.write_leaf(&LeafInput {
                key_items: &self.key_items,
                key_offsets: &self.key_offsets,
                value_items: &self.value_items,
                value_offsets: &self.value_offsets,
                value_address_offsets: &self.address_offsets,
            })?
        } else {
            writer.write_internal(&InternalInput {
                key_items: &self.key_items,
                key_offsets: &self.key_offsets,
                child_addresses: &self.value_items,
                subtree_counts: &self.counts,
                level: self.level,
            })?
        })
    }

    /// Serializes the pending node into `batch`; hashes and hands on the batch if it is full
    /// and this level hashes its own batches. Leaves for the hash thread go in unserialized,
    /// their buffers with them (the builder is left with empty ones). Does not reset.
    fn queue<S: ChunkStore + ?Sized, T: TreeSchema + ?Sized>(
        &mut self,
        batch: &mut NodeBatch,
        out: &mut NodeOut<'_, S, T>,
        emit: &mut Emit<'_, S, T>,
    ) -> Result<(), TreeError> {
        if !self.hash_batches && self.level == 0 {
            // For the hash thread, which serializes too.
            batch.push_raw(self);
            return Ok(());
        }
        let chunk = self.serialize(&mut out.writer)?;
        batch.push(chunk, self.last_key(), self.tree_count);
        if self.hash_batches && batch.len() >= HASH_BATCH {
            batch.hash(out.store.profile());
            batch.store_and_emit(out, emit)?;
        }
        Ok(())
    }

    /// Writes the pending node, hands it to `emit`, and starts a new node.
    fn boundary<S: ChunkStore + ?Sized, T: TreeSchema + ?Sized>(
        &mut self,
        out: &mut NodeOut<'_, S, T>,
        emit: &mut Emit<'_, S, T>,
    ) -> Result<(), TreeError> {
        let count = self.count();
        if let Some(mut batch) = self.deferred.take() {
            let queued = self.queue(&mut batch, out, emit);
            self.deferred = Some(batch);
            queued?;
        } else {
            let (address, count) = self.write(out)?;
            emit(out, self.last_key(), address, count)?;
        }
        self.last_written = count;
        self.reset();
        Ok(())
    }

    /// Hands on a node of this level written elsewhere (an old node with children replaced in
    /// place: the same keys and sizes, so the same boundaries) as the builder's next node,
    /// queued, hashed and stored exactly like the nodes it completes itself. `write` makes the
    /// chunk and its tree count; `last_key` is the node's last key, `items` its item count.
    /// The builder must be fresh (between nodes), and stays so.
    pub(crate) fn emit_written<S, T, W>(
        &mut self,
        out: &mut NodeOut<'_, S, T>,
        write: W,
        last_key: &[u8],
        items: usize,
        emit: &mut Emit<'_, S, T>,
    ) -> Result<(), TreeError>
    where
        S: ChunkStore + ?Sized,
        T: TreeSchema + ?Sized,
        W: FnOnce(&mut NodeWriter) -> Result<(&[u8], u64), TreeError>,
    {
        debug_assert!(self.is_fresh(), "a written node goes in between nodes");
        self.used = true;
        if let Some(mut batch) = self.deferred.take() {
            let queued =
                write(&mut out.writer).map(|(chunk, total)| batch.push(chunk, last_key, total));
            let handed = match queued {
                Ok(()) if self.hash_batches && batch.len() >= HASH_BATCH => {
                    batch.hash(out.store.profile());
                    batch.store_and_emit(out, emit)
                }
                other => other,
            };
            self.deferred = Some(batch);
            handed?;
        } else {
            let (chunk, total) = write(&mut out.writer)?;
            let address = out.store.put_node(chunk)?;
            emit(out, last_key, address, total)?;
        }
        self.last_written = items;
        Ok(())
    }

    /// Appends one item (Dolt's `chunker.append`): closes the node first if the item would
    /// overflow it, then closes it after the item if the splitter says so. `value` is the
    /// 20-byte child address at internal levels, `count` its subtree count (ignored at leaves).
    #[inline]
    pub fn append<S: ChunkStore + ?Sized, T: TreeSchema + ?Sized>(
        &mut self,
        out: &mut NodeOut<'_, S, T>,
        key: &[u8],
        value: &[u8],
        count: u64,
        emit: &mut Emit<'_, S, T>,
    ) -> Result<(), TreeError> {
        let item_len = key.len() + value.len();
        if self.data_len() + item_len > MAX_NODE_DATA {
            if self.level > 0 && self.count() == 1 {
                return Err(TreeError::ItemTooLarge {
                    len: item_len,
                    level: self.level,
                });
            }
            self.boundary(out, emit)?;
        }
        self.push(out, key, value, count);
        let crossed = self.splitter.append(key, value.len(), self.level);
        if crossed && !(self.level > 0 && self.count() == 1) {
            self.boundary(out, emit)?;
        }
        Ok(())
    }

    /// Writes whatever is pending as a final node and hands it to `emit` (no-op when empty).
    pub fn flush<S: ChunkStore + ?Sized, T: TreeSchema + ?Sized>(
        &mut self,
        out: &mut NodeOut<'_, S, T>,
        emit: &mut Emit<'_, S, T>,
    ) -> Result<(), TreeError> {
        if self.count() > 0 {
            self.boundary(out, emit)?;
        }
        Ok(())
    }

    /// The pending items of this level as `(key, child address, count)` (internal levels).
    pub fn internal_item(&self, i: usize) -> (&[u8], Address, u64) {
        let ks = usize::from(self.key_offsets[i]);
        let ke = usize::from(self.key_offsets[i + 1]);
        let a = i * ADDRESS_LEN;
        let addr = Address::from_slice(&self.value_items[a..a + ADDRESS_LEN]).unwrap_or_default();
        (&self.key_items[ks..ke], addr, self.counts[i])
    }
}

/// Appends the end offsets of items `from..to` of a node's offsets array, moved from `start`
/// (the first item's start in the node) to `base` (where the items now start): the u16 sums
/// wrap exactly as the `usize` ones would stay below 2^16, which they do in a node that fits.
#[inline]
fn rebase_offsets(
    out: &mut Vec<u16>,
    offsets: &[u8],
    from: usize,
    to: usize,
    base: usize,
    start: usize,
) {
    let delta = (base as u16).wrapping_sub(start as u16);
    match offsets.get(2 * (from + 1)..2 * (to + 1)) {
        Some(ends) => {
            // Grown first, then filled through a slice: a loop the compiler vectorizes
            // (`extend` with a mapping iterator pushed one offset at a time, ~8% of the calling
            // thread of 1,000 edits).
            let at = out.len();
            out.resize(at + (to - from), 0);
            for (o, p) in out[at..].iter_mut().zip(ends.as_chunks::<2>().0) {
                *o = u16::from_le_bytes(*p).wrapping_add(delta);
            }
        }
        None => {
            out.extend((from + 1..=to).map(|i| (offset_at(offsets, i) as u16).wrapping_add(delta)))
        }
    }
}

/// The little-endian u16 at pair `i` of an offsets array (0 if out of range).
#[inline]
fn offset_at(offsets: &[u8], i: usize) -> usize {
    match offsets.get(2 * i..2 * i + 2) {
        Some(&[a, b]) => usize::from(u16::from_le_bytes([a, b])),
        _ => 0,
    }
}

/// A stack of level builders that turns items in key order into a tree (Dolt's chunker built
/// from scratch), reusing all buffers between nodes.
pub struct TreeBuilder<'a, S: ChunkStore + ?Sized, T: TreeSchema + ?Sized> {
    out: NodeOut<'a, S, T>,
    levels: Vec<LevelBuilder>,
    first_level: u8,
    /// Pipelined builds (from the leaves up): the thread hashing leaf batches, started at the
    /// first full batch, so small builds never start it.
    worker: Option<HashThread>,
    /// A cleared batch to reuse.
    spare: Option<NodeBatch>,
}

/// Appends at `levels[0]`, sending completed nodes up the stack.
fn append_up<S: ChunkStore + ?Sized, T: TreeSchema + ?Sized>(
    levels: &mut [LevelBuilder],
    out: &mut NodeOut<'_, S, T>,
    key: &[u8],
    value: &[u8],
    count: u64,
) -> Result<(), TreeError> {
    let Some((this, parents)) = levels.split_first_mut() else {
        return Err(TreeError::TooTall(MAX_LEVELS));
    };
    this.append(out, key, value, count, &mut |out, k, a, c| {
        append_up(parents, out, k, a.as_bytes(), c)
    })
}

impl<'a, S: ChunkStore + ?Sized, T: TreeSchema + ?Sized> TreeBuilder<'a, S, T> {
    /// A builder for a tree whose items start at level 0 (leaves).
    pub fn new(store: &'a S, schema: &'a T) -> Self {
        Self::at_level(store, schema, 0)
    }

    /// A builder whose first items are entries of level `level` (for rebuilding the upper
    /// part of a tree over existing nodes).
    pub(crate) fn at_level(store: &'a S, schema: &'a T, level: u8) -> Self {
        let mut levels: Vec<LevelBuilder> =
            (level..MAX_LEVELS as u8).map(LevelBuilder::new).collect();
        if level == 0 && batch_hashing_pays(store.profile()) {
            if let Some(leaves) = levels.first_mut() {
                leaves.hash_in_batches();
            }
        }
        TreeBuilder {
            out: NodeOut::new(store, schema),
            levels,
            first_level: level,
            worker: None,
            spare: None,
        }
    }

    /// Hashes batches of leaves on one background thread while the build goes on filling the
    /// next batch (the same tree; only the hashing moves). The thread starts at the first full
    /// batch (256 leaves, about 23k rows of two int64 pairs), so small builds
    /// never start it. A `TreeBuilder` hashes on its own thread unless asked;
    /// [`Map::from_sorted`](crate::Map::from_sorted) asks when
    /// [`background_hashing`](super::hash_thread::background_hashing) allows it.
    /// `tree_workload build1t` in the benchmarks gives the speedup on your machine.
    pub fn with_hash_thread(mut self) -> Self {
        if self.first_level == 0 {
            if let Some(leaves) = self.levels.first_mut() {
                leaves.batches_for_owner(BUILD_LEAF_BATCH);
            }
        }
        self
    }

    /// Appends the next item (keys must come in strictly increasing order; not checked here).
    #[inline]
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<(), TreeError> {
        // The common case, a leaf item that fits: `LevelBuilder::append` without going
        // through the level stack; only a boundary takes the general path.
        if self.first_level == 0 {
            if let Some(leaf) = self.levels.first_mut() {
                if leaf.data_len() + key.len() + value.len() <= MAX_NODE_DATA {
                    leaf.push(&self.out, key, value, 1);
                    if leaf.splitter.append(key, value.len(), 0) {
                        self.close_leaf()?;
                    }
                    return Ok(());
                }
            }
        }
        append_up(&mut self.levels, &mut self.out, key, value, 1)?;
        if self.levels[0].batch_for_thread() {
            self.hand_off()?;
        }
        Ok(())
    }

    /// Ends the pending leaf after an item the splitter chose, passing it up (or to the
    /// batch being hashed).
    #[inline(never)]
    fn close_leaf(&mut self) -> Result<(), TreeError> {
        let Some((leaf, parents)) = self.levels.split_first_mut() else {
            return Err(TreeError::TooTall(MAX_LEVELS));
        };
        leaf.boundary(&mut self.out, &mut |out, k, a, c| {
            append_up(parents, out, k, a.as_bytes(), c)
        })?;
        if leaf.batch_for_thread() {
            self.hand_off()?;
        }
        Ok(())
    }

    /// Sends the full leaf batch to the hashing thread (starting it if needed) after taking
    /// back and applying the batch before it.
    #[cold]
    fn hand_off(&mut self) -> Result<(), TreeError> {
        if self.worker.is_none() {
            self.worker = HashThread::start();
        }
        let fresh = self.spare.take().unwrap_or_default();
        let Some(batch) = self.levels[0].swap_batch(fresh) else {
            return Ok(());
        };
        let previous = match &mut self.worker {
            Some(w) => w.receive()?,
            None => None,
        };
        if let Some(done) = previous {
            self.apply(done)?;
        }
        match &mut self.worker {
            Some(w) => w.send(batch, self.out.store.profile()),
            None => {
                // No thread: hash here.
                let mut batch = batch;
                batch.hash(self.out.store.profile());
                self.apply(batch)
            }
        }
    }

    /// Stores a hashed batch's leaves and appends them, in order, to the level above.
    fn apply(&mut self, mut batch: NodeBatch) -> Result<(), TreeError> {
        let Some((_, parents)) = self.levels.split_first_mut() else {
            return Err(TreeError::TooTall(MAX_LEVELS));
        };
        batch.store_and_emit(&mut self.out, &mut |out, k, a, c| {
            append_up(parents, out, k, a.as_bytes(), c)
        })?;
        self.spare = Some(batch);
        Ok(())
    }

    /// Ends batching and pipelining: the last leaf (if any leaf was completed before it, as a
    /// one-thread build would close it) joins the batch, and every batch is stored and passed
    /// up.
    fn drain(&mut self) -> Result<(), TreeError> {
        let Some((leaf, parents)) = self.levels.split_first_mut() else {
            return Err(TreeError::TooTall(MAX_LEVELS));
        };
        if leaf.deferred.is_none() {
            return Ok(());
        }
        if leaf.last_written() > 0 && leaf.count() > 0 {
            leaf.flush(&mut self.out, &mut |out, k, a, c| {
                append_up(parents, out, k, a.as_bytes(), c)
            })?;
        }
        let batch = leaf.deferred.take().unwrap_or_default();
        let done = match &mut self.worker {
            Some(w) => {
                let done = w.receive()?;
                // The last batch is hashed here: the thread may sleep until it is dropped.
                w.pause();
                done
            }
            None => None,
        };
        if let Some(done) = done {
            self.apply(done)?;
        }
        let mut batch = batch;
        batch.hash(self.out.store.profile());
        self.apply(batch)
    }

    /// Appends an entry at the builder's first level (internal levels: a child node).
    pub(crate) fn add_entry(
        &mut self,
        key: &[u8],
        child: Address,
        count: u64,
    ) -> Result<(), TreeError> {
        append_up(
            &mut self.levels,
            &mut self.out,
            key,
            child.as_bytes(),
            count,
        )
    }

    /// Finishes the tree and returns its canonical root (Dolt's `chunker.Done`).
    pub fn finish(mut self) -> Result<Address, TreeError> {
        self.drain()?;
        let mut l = 0usize;
        loop {
            let parent_used = self.levels.get(l + 1).is_some_and(|p| p.used());
            let (this, parents) = match self.levels.get_mut(l..) {
                Some(rest) => match rest.split_first_mut() {
                    Some(x) => x,
                    None => return Err(TreeError::TooTall(MAX_LEVELS)),
                },
                None => return Err(TreeError::TooTall(MAX_LEVELS)),
            };
            if parent_used {
                let out = &mut self.out;
                this.flush(out, &mut |out, k, a, c| {
                    append_up(parents, out, k, a.as_bytes(), c)
                })?;
                l += 1;
                continue;
            }
            // This level holds every item of its level.
            let level = self.first_level as usize + l;
            if level == 0 || this.count() > 1 {
                let (address, _) = this.write(&mut self.out)?;
                return Ok(address);
            }
            if this.count() == 0 {
                // Only possible when the builder started above the leaves with no entries.
                return Err(TreeError::Malformed {
                    address: Address::ZERO,
                    reason: "no entries at an internal level",
                });
            }
            let (_, child, _) = this.internal_item(0);
            return canonical_root(self.out.store, child);
        }
    }
}

/// Follows single-child internal nodes down from `address` (Dolt's `getCanonicalRoot`).
pub(crate) fn canonical_root<S: ChunkStore + ?Sized>(
    store: &S,
    mut address: Address,
) -> Result<Address, TreeError> {
    loop {
        let node = store.get_node(&address)?;
        if node.is_leaf() || node.count() != 1 {
            return Ok(address);
        }
        address = node.child(0);
    }
}

/// Builds a tree from `(key, value)` pairs in strictly increasing key order.
pub fn build_tree<'k, S, T, I>(store: &S, schema: &T, items: I) -> Result<Address, TreeError>
where
    S: ChunkStore + ?Sized,
    T: TreeSchema + ?Sized,
    I: IntoIterator<Item = (&'k [u8], &'k [u8])>,
{
    let mut b = TreeBuilder::new(store, schema);
    for (k, v) in items {
        b.add(k, v)?;
    }
    b.finish()
}
