//! Building trees from items in key order (Dolt's chunker): one level builder per level
//! assembles the node being filled, asks the splitter where it ends, and hands every completed
//! node on; its `(last key, address, count)` becomes an item of the level above.
//!
//! What happens to a completed node before its entry reaches the level above (queued, hashed
//! several at a time or on another thread, stored) is the write pipeline's (`tree::pipeline`)
//! business: a level builder only hands nodes to it and receives entries back, in order.

use prollystore_format::message::{Node, NodeWriter};
use prollystore_format::{Address, ADDRESS_LEN};

use super::pending::PendingNode;
use super::pipeline::{batch_hashing_pays, Background, Emit, NodeOut, NodeQueue, BUILD_LEAF_BATCH};
use super::schema::TreeSchema;
use super::split::{Splitter, MAX_LEVELS, MAX_NODE_DATA};
use crate::error::TreeError;
use crate::store::StoreFastPaths;

/// The nodes being filled at one level, with the splitter state.
#[derive(Debug, Default)]
pub(crate) struct LevelBuilder {
    level: u8,
    /// The items of the node being filled.
    node: PendingNode,
    /// Its children's subtree counts (internal levels).
    counts: Vec<u64>,
    splitter: Splitter,
    tree_count: u64,
    /// Set once any item was appended: at the top of a build, "a parent exists".
    used: bool,
    /// Items of the node this level wrote last (0 before any).
    last_written: usize,
    /// Completed nodes go here (the pipeline), serialized or not, instead of straight to the
    /// store and the level above.
    queue: Option<NodeQueue>,
    /// A queue kept for later while completed nodes go straight to the store
    /// ([`LevelBuilder::store_each`]), so that switching back allocates nothing.
    parked: Option<NodeQueue>,
}

impl LevelBuilder {
    pub fn new(level: u8) -> LevelBuilder {
        LevelBuilder {
            level,
            node: PendingNode::with_room(level),
            counts: Vec::with_capacity(if level == 0 { 0 } else { 256 }),
            splitter: Splitter::default(),
            tree_count: 0,
            used: false,
            last_written: 0,
            queue: None,
            parked: None,
        }
    }

    /// Makes this an empty builder for `level`, keeping its buffers and its way of hashing
    /// (edits reuse one builder for every level they rewrite). Queued nodes not yet handed on
    /// are dropped: there are any only after a failed edit.
    pub(crate) fn relevel(&mut self, level: u8) {
        self.reset();
        self.level = level;
        self.used = false;
        self.last_written = 0;
        if let Some(queue) = &mut self.queue {
            queue.clear();
        }
    }

    /// From now on, completed nodes are queued and hashed several at a time on this thread
    /// ([`NodeQueue::hash_here`]); the owner must [`flush_queue`](LevelBuilder::flush_queue)
    /// after the last node.
    pub(crate) fn hash_in_batches(&mut self) {
        self.unparked_queue().set_hash_here();
    }

    /// From now on, completed nodes are queued until `batch_len` of them wait, for the owner to
    /// take to the hash thread ([`NodeQueue::set_for_thread`]).
    pub(crate) fn batches_for_owner(&mut self, batch_len: usize) {
        self.unparked_queue().set_for_thread(batch_len);
    }

    /// From now on, each completed node is serialized and put as it completes, the store
    /// giving its address: the way of a builder that never queued, restored after a
    /// [`LevelBuilder::relevel`] for an edit whose store hashes its nodes itself
    /// ([`TreeSchema::foreign_nodes`]). Without it, an edit that reuses the builder of an
    /// earlier one that hashed in batches would take its own hash of a node for the address
    /// the store gave it (`crates/dolt` address maps and closures: a missing chunk).
    pub(crate) fn store_each(&mut self) {
        if let Some(queue) = self.queue.take() {
            self.parked = Some(queue);
        }
    }

    /// The queue, taken back from where [`LevelBuilder::store_each`] parked it or made.
    fn unparked_queue(&mut self) -> &mut NodeQueue {
        let parked = &mut self.parked;
        self.queue
            .get_or_insert_with(|| parked.take().unwrap_or_else(NodeQueue::hash_here))
    }

    /// The queue completed nodes go to, if they are queued.
    #[inline]
    pub(crate) fn queue_mut(&mut self) -> Option<&mut NodeQueue> {
        self.queue.as_mut()
    }

    /// True when the queue holds a full batch for the owner to take to the hash thread.
    #[inline]
    pub(crate) fn batch_for_thread(&self) -> bool {
        self.queue.as_ref().is_some_and(NodeQueue::full_for_thread)
    }

    /// Completed nodes queued, not yet handed to `emit`.
    pub(crate) fn queued(&self) -> usize {
        self.queue.as_ref().map_or(0, NodeQueue::len)
    }

    /// Hashes and stores the queued nodes and hands them to `emit`, in order.
    pub(crate) fn flush_queue<S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized>(
        &mut self,
        out: &mut NodeOut<'_, S, T>,
        emit: &mut Emit<'_, S, T>,
    ) -> Result<(), TreeError> {
        match &mut self.queue {
            Some(queue) => queue.flush(out, emit),
            None => Ok(()),
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
    pub(crate) fn extend_unsplit<S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized>(
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
    pub(crate) fn append_run<S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized>(
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
    fn copy_run<S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized>(
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
        Err(TreeError::Internal(
            "node items out of range while copying them",
        ))
    }

    /// Copies the items `from..to` of `node` (a node of this level) to the pending node, with
    /// their offsets, counts and value addresses; the splitter is not told. Their byte size, or
    /// `None` (nothing copied) if they are out of range or would not fit the byte limit.
    fn copy_items<S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized>(
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
        let kbase = self.node.key_items.len();
        self.node.key_items.extend_from_slice(keys);
        let ko = node.key_offsets_bytes();
        rebase_offsets(&mut self.node.key_offsets, ko, from, to, kbase, ks);
        let vbase = self.node.value_items.len();
        self.node.value_items.extend_from_slice(values);
        if self.level == 0 {
            let vo = node.value_offsets_bytes();
            rebase_offsets(&mut self.node.value_offsets, vo, from, to, vbase, vs);
            if out.with_addresses {
                for i in from..to {
                    let base = vbase + offset_at(vo, i) - vs;
                    out.schema.push_value_address_offsets(
                        node.value(i),
                        base,
                        &mut self.node.address_offsets,
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
        self.node.key_offsets.len() - 1
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
        self.node.key_items.len() + self.node.value_items.len()
    }

    /// The key of the last pending item.
    #[inline]
    pub fn last_key(&self) -> &[u8] {
        self.node.last_key()
    }

    /// The pending items' keys, key offsets, values (leaf) or child addresses (internal), and
    /// counts.
    pub fn reset(&mut self) {
        self.node.clear();
        self.counts.clear();
        self.splitter.reset();
        self.tree_count = 0;
    }

    /// Adds one item without any boundary logic.
    #[inline]
    fn push<S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized>(
        &mut self,
        out: &NodeOut<'_, S, T>,
        key: &[u8],
        value: &[u8],
        count: u64,
    ) {
        self.used = true;
        self.node.key_items.extend_from_slice(key);
        self.node.key_offsets.push(self.node.key_items.len() as u16);
        if self.level == 0 {
            let base = self.node.value_items.len();
            self.node.value_items.extend_from_slice(value);
            self.node
                .value_offsets
                .push(self.node.value_items.len() as u16);
            if out.with_addresses {
                out.schema
                    .push_value_address_offsets(value, base, &mut self.node.address_offsets);
            }
            self.tree_count += 1;
        } else {
            self.node.value_items.extend_from_slice(value);
            self.counts.push(count);
            self.tree_count += count;
        }
    }

    /// Serializes and stores the pending node: `(address, tree count)`. Does not reset.
    pub fn write<S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized>(
        &self,
        out: &mut NodeOut<'_, S, T>,
    ) -> Result<(Address, u64), TreeError> {
        let chunk = self
            .node
            .serialize(self.level, &self.counts, &mut out.writer)?;
        // SAFETY: `out.writer`, a `NodeWriter`, has just serialized `chunk`.
        let address = unsafe { out.store.put_node(chunk) }?;
        Ok((address, self.tree_count))
    }

    /// Writes the pending node (or hands it to the queue), hands it to `emit`, and starts a
    /// new node.
    fn boundary<S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized>(
        &mut self,
        out: &mut NodeOut<'_, S, T>,
        emit: &mut Emit<'_, S, T>,
    ) -> Result<(), TreeError> {
        let count = self.count();
        if let Some(queue) = &mut self.queue {
            queue.accept(
                &mut self.node,
                self.level,
                &self.counts,
                self.tree_count,
                out,
                emit,
            )?;
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
    /// chunk and its tree count with the `NodeWriter` it is given (the chunk is put into the
    /// store as that writer's node); `last_key` is the node's last key, `items` its item count.
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
        S: StoreFastPaths + ?Sized,
        T: TreeSchema + ?Sized,
        W: FnOnce(&mut NodeWriter) -> Result<(&[u8], u64), TreeError>,
    {
        debug_assert!(self.is_fresh(), "a written node goes in between nodes");
        self.used = true;
        if let Some(queue) = &mut self.queue {
            queue.accept_written(write, last_key, out, emit)?;
        } else {
            let (chunk, total) = write(&mut out.writer)?;
            // SAFETY: `write` serialized `chunk` with the `NodeWriter` it was given.
            let address = unsafe { out.store.put_node(chunk) }?;
            emit(out, last_key, address, total)?;
        }
        self.last_written = items;
        Ok(())
    }

    /// Appends one item (Dolt's `chunker.append`): closes the node first if the item would
    /// overflow it, then closes it after the item if the splitter says so. `value` is the
    /// 20-byte child address at internal levels, `count` its subtree count (ignored at leaves).
    #[inline]
    pub fn append<S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized>(
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
    pub fn flush<S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized>(
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
        let ks = usize::from(self.node.key_offsets[i]);
        let ke = usize::from(self.node.key_offsets[i + 1]);
        let a = i * ADDRESS_LEN;
        let addr =
            Address::from_slice(&self.node.value_items[a..a + ADDRESS_LEN]).unwrap_or_default();
        (&self.node.key_items[ks..ke], addr, self.counts[i])
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
            // (`extend` with a mapping iterator pushes one offset at a time).
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
pub struct TreeBuilder<'a, S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized> {
    out: NodeOut<'a, S, T>,
    levels: Vec<LevelBuilder>,
    first_level: u8,
    /// Pipelined builds (from the leaves up): the thread hashing leaf batches, started at the
    /// first full batch, so small builds never start it.
    background: Background,
}

/// Appends at `levels[0]`, sending completed nodes up the stack.
fn append_up<S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized>(
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

impl<'a, S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized> TreeBuilder<'a, S, T> {
    /// A builder for a tree whose items start at level 0 (leaves).
    pub fn new(store: &'a S, schema: &'a T) -> Self {
        Self::at_level(store, schema, 0)
    }

    /// A builder whose first items are entries of level `level` (for rebuilding the upper
    /// part of a tree over existing nodes).
    pub(crate) fn at_level(store: &'a S, schema: &'a T, level: u8) -> Self {
        let mut levels: Vec<LevelBuilder> =
            (level..MAX_LEVELS as u8).map(LevelBuilder::new).collect();
        if level == 0 && batch_hashing_pays(store.profile()) && !schema.foreign_nodes() {
            if let Some(leaves) = levels.first_mut() {
                leaves.hash_in_batches();
            }
        }
        TreeBuilder {
            out: NodeOut::new(store, schema),
            levels,
            first_level: level,
            background: Background::default(),
        }
    }

    /// Hashes batches of leaves on one background thread while the build goes on filling the
    /// next batch (the same tree; only the hashing moves). The thread starts at the first full
    /// batch (256 leaves, tens of thousands of small rows), so small builds never start it. A
    /// `TreeBuilder` hashes on its own thread unless asked;
    /// [`Map::from_sorted`](crate::Map::from_sorted) asks when
    /// [`background_hashing`](crate::process::background_hashing) allows it.
    /// `tree_workload build1t` in the benchmarks gives the speedup on your machine.
    pub fn with_hash_thread(mut self) -> Self {
        if self.first_level == 0 && !self.out.schema.foreign_nodes() {
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
    /// back and passing up the batch before it.
    #[cold]
    fn hand_off(&mut self) -> Result<(), TreeError> {
        let Some((leaf, parents)) = self.levels.split_first_mut() else {
            return Err(TreeError::TooTall(MAX_LEVELS));
        };
        let Some(queue) = leaf.queue_mut() else {
            return Ok(());
        };
        self.background
            .hand_off(queue, &mut self.out, &mut |out, k, a, c| {
                append_up(parents, out, k, a.as_bytes(), c)
            })
    }

    /// Ends batching and pipelining: the last leaf (if any leaf was completed before it, as a
    /// one-thread build would close it) joins the batch, and every batch is stored and passed
    /// up.
    fn drain(&mut self) -> Result<(), TreeError> {
        let Some((leaf, parents)) = self.levels.split_first_mut() else {
            return Err(TreeError::TooTall(MAX_LEVELS));
        };
        if leaf.queue.is_none() {
            return Ok(());
        }
        let mut up = |out: &mut NodeOut<'_, S, T>, k: &[u8], a: Address, c: u64| {
            append_up(parents, out, k, a.as_bytes(), c)
        };
        if leaf.last_written() > 0 && leaf.count() > 0 {
            leaf.flush(&mut self.out, &mut up)?;
        }
        let Some(queue) = leaf.queue.take() else {
            return Ok(());
        };
        // The batch in flight first, then the last batch, hashed here: the thread may sleep
        // until it is dropped.
        self.background.collect(&mut self.out, &mut up)?;
        let mut last = queue.into_batch();
        last.hash(self.out.store.profile());
        last.store_and_emit(&mut self.out, &mut up)
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
                return Err(TreeError::Internal("no entries at an internal level"));
            }
            let (_, child, _) = this.internal_item(0);
            return canonical_root(self.out.store, child);
        }
    }
}

/// Follows single-child internal nodes down from `address` (Dolt's `getCanonicalRoot`).
pub(crate) fn canonical_root<S: StoreFastPaths + ?Sized>(
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
    S: StoreFastPaths + ?Sized,
    T: TreeSchema + ?Sized,
    I: IntoIterator<Item = (&'k [u8], &'k [u8])>,
{
    let mut b = TreeBuilder::new(store, schema);
    for (k, v) in items {
        b.add(k, v)?;
    }
    b.finish()
}
