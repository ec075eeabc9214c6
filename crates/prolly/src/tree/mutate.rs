//! Applying a batch of sorted edits to a tree, rewriting only the regions they touch.
//!
//! Boundaries depend only on the items since the previous boundary, so the result must equal a
//! build from scratch of the final items. Level by level, starting at the leaves:
//!
//! * a *region* starts at the first entry of the old node holding the first pending edit (a
//!   boundary in the old and in the new sequence, since everything before it is unchanged);
//! * old items are fed to a fresh level builder, with the edits applied in passing;
//! * the region ends where the builder is at the start of a node exactly at the start of an old
//!   node with no edit before the next one: from there on the old nodes are reused as they are.
//!
//! Each region becomes a *splice* one level up ("replace the entries of the old nodes
//! `first..=last` by these new nodes"), which is applied the same way. At the old root's level
//! the whole level is rewritten, and whatever it becomes is made canonical.
//!
//! A level's new entries are read only by the next level's pass, so with the Dolt profile a
//! pass queues its new nodes and hashes them several at a time
//! (`LevelBuilder::hash_in_batches`); splices count the queued nodes as entries already.

use std::cmp::Ordering;

use prollystore_format::varint::decode_count_deltas_into;
use prollystore_format::Address;

use super::build::{canonical_root, LevelBuilder, TreeBuilder};
use super::cursor::Cursor;
use super::pipeline::hash_thread::background_hashing;
use super::pipeline::{batch_hashing_pays, Background, Loans, NodeOut, LEAF_BATCH};
use super::schema::TreeSchema;
use crate::error::TreeError;
use crate::store::StoreFastPaths;

/// One edit: `Some(value)` puts, `None` deletes.
pub type Edit<'a> = (&'a [u8], Option<&'a [u8]>);

/// Nodes made at one level: the entries of the level above.
#[derive(Default)]
struct NewEntries {
    keys: Vec<u8>,
    key_ends: Vec<usize>,
    addresses: Vec<Address>,
    counts: Vec<u64>,
}

impl NewEntries {
    fn clear(&mut self) {
        self.keys.clear();
        self.key_ends.clear();
        self.addresses.clear();
        self.counts.clear();
    }
    fn push(&mut self, key: &[u8], address: Address, count: u64) {
        self.keys.extend_from_slice(key);
        self.key_ends.push(self.keys.len());
        self.addresses.push(address);
        self.counts.push(count);
    }
    fn len(&self) -> usize {
        self.addresses.len()
    }
    fn key(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.key_ends[i - 1] };
        &self.keys[start..self.key_ends[i]]
    }
}

/// "Replace the old entries with keys `first..=last` (to the end if `last` is `None`) by the new
/// entries `new_start..new_end`."
struct Splice<'s> {
    first: &'s [u8],
    last: Option<&'s [u8]>,
    new_start: usize,
    new_end: usize,
}

/// The operations applied at one level.
enum Ops<'e, 's> {
    Leaf(&'e [Edit<'e>]),
    Internal(&'e [Splice<'s>], &'e NewEntries),
}

impl Ops<'_, '_> {
    fn len(&self) -> usize {
        match self {
            Ops::Leaf(e) => e.len(),
            Ops::Internal(s, _) => s.len(),
        }
    }
    fn key(&self, i: usize) -> &[u8] {
        match self {
            Ops::Leaf(e) => e[i].0,
            Ops::Internal(s, _) => s[i].first,
        }
    }
}

/// Rewrites one level; returns the splices for the level above (or, at the root level, the one
/// splice covering the whole level) and the new entries they refer to.
struct LevelPass<'a, 's, 'p, 'l, S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized> {
    store: &'s S,
    schema: &'a T,
    root: Address,
    level: usize,
    builder: &'p mut LevelBuilder,
    out: NewEntries,
    splices: Vec<Splice<'s>>,
    cursor: Option<Cursor<'s>>,
    counts: &'p mut Vec<u64>,
    counts_of: usize,
    region_first: &'s [u8],
    last_node_key: &'s [u8],
    /// Set once the cursor left the node where the region started.
    crossed: bool,
    /// The leaf pass of an edit with background hashing: full batches of new leaves go to
    /// the hash thread, serialized into memory the store lends.
    background: Option<&'p mut Loans<'l, 's, S>>,
    /// Children replaced in place in the node [`LevelPass::replace_in_place`] writes.
    replaced: Vec<(usize, Address, u64)>,
    /// The leaf pass of a tree whose leaves are stored without their values
    /// ([`TreeSchema::leaf_values_kept`]): Dolt's rules for re-chunking.
    strict: bool,
    /// Set when the last item appended was the last item of its old node, re-read, and ended
    /// a node: where Dolt's chunker sees the new nodes line up with the old ones.
    old_end_split: bool,
}

impl<'a, 's, 'p, 'l, S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized>
    LevelPass<'a, 's, 'p, 'l, S, T>
{
    /// A pass over `level` using the shared builder and counts buffer, its new entries going
    /// to `fresh` (empty).
    // The pass's inputs and the edit's reusable buffers, one by one: a bundle would only
    // move the list elsewhere.
    #[allow(clippy::too_many_arguments)]
    fn new(
        store: &'s S,
        schema: &'a T,
        root: Address,
        level: usize,
        builder: &'p mut LevelBuilder,
        counts: &'p mut Vec<u64>,
        fresh: NewEntries,
        background: Option<&'p mut Loans<'l, 's, S>>,
    ) -> Self {
        builder.relevel(level as u8);
        let batches = hashes_in_batches(store, schema);
        let background = background.filter(|_| level == 0 && batches);
        if background.is_some() {
            builder.batches_for_owner(LEAF_BATCH);
        } else if batches {
            builder.hash_in_batches();
        } else {
            builder.store_each();
        }
        counts.clear();
        LevelPass {
            store,
            schema,
            root,
            level,
            builder,
            out: fresh,
            splices: Vec::new(),
            cursor: None,
            counts,
            counts_of: 0,
            region_first: &[],
            last_node_key: &[],
            crossed: false,
            background,
            replaced: Vec::new(),
            strict: level == 0 && !schema.leaf_values_kept(),
            old_end_split: false,
        }
    }

    /// With background hashing, once the builder holds a full batch of new leaves: takes back
    /// the batch in flight (its leaves become new entries, in order) and sends this one.
    fn hand_off_full_batch(&mut self, out: &mut NodeOut<'_, S, T>) -> Result<(), TreeError> {
        let Some(loans) = self.background.as_deref_mut() else {
            return Ok(());
        };
        if !self.builder.batch_for_thread() {
            return Ok(());
        }
        let Some(queue) = self.builder.queue_mut() else {
            return Ok(());
        };
        let entries = &mut self.out;
        loans.hand_off(queue, out, &mut |_, k, a, c| {
            entries.push(k, a, c);
            Ok(())
        })
    }

    /// Takes back the batch in flight, if any, and hands its leaves on as new entries.
    fn collect_in_flight(&mut self, out: &mut NodeOut<'_, S, T>) -> Result<(), TreeError> {
        let Some(loans) = self.background.as_deref_mut() else {
            return Ok(());
        };
        let entries = &mut self.out;
        loans.collect(out, &mut |_, k, a, c| {
            entries.push(k, a, c);
            Ok(())
        })
    }

    fn cursor(&self) -> Result<&Cursor<'s>, TreeError> {
        self.cursor.as_ref().ok_or_else(|| lost_cursor(self.root))
    }

    fn valid(&self) -> bool {
        self.cursor.as_ref().is_some_and(|c| c.valid_at(self.level))
    }

    fn old_key(&self) -> Result<&'s [u8], TreeError> {
        let (n, i) = self.cursor()?.at(self.level);
        Ok(n.key(i))
    }

    /// Moves past the current old item, noting the last key of a node when leaving it.
    fn step(&mut self) -> Result<(), TreeError> {
        let level = self.level;
        let store = self.store;
        let root = self.root;
        self.old_end_split = false;
        let c = self.cursor.as_mut().ok_or_else(|| lost_cursor(root))?;
        if c.at_node_end(level) {
            let (n, i) = c.at(level);
            self.last_node_key = n.key(i);
            self.crossed = true;
        }
        c.advance_at(store, level)?;
        Ok(())
    }

    /// Makes `self.counts` the subtree counts of `node` (internal levels; cached per node).
    fn load_counts(&mut self, node: &prollystore_format::message::Node<'_>) {
        let id = node.chunk().as_ptr() as usize;
        if self.level > 0 && self.counts_of != id {
            self.counts.clear();
            // A stored node was verified (or written here), so its counts decode; on bytes
            // that do not, the counts missing read as 0, as `subtree_counts` gives them.
            let _ = decode_count_deltas_into(node.subtree_counts_bytes(), self.counts);
            self.counts_of = id;
        }
    }

    /// Appends old items `from..end` of the cursor's current node (the cursor is at `from`),
    /// then moves the cursor to `end` (past the node: onto the next one, noting the node's last
    /// key). Where the builder is in step with the old tree's (at the start of a region, or
    /// after an edit that kept the sizes) the items before the node's last one go in as one
    /// run: the old tree shows that none of them ends a node.
    fn feed_range(
        &mut self,
        out: &mut NodeOut<'_, S, T>,
        from: usize,
        end: usize,
    ) -> Result<(), TreeError> {
        let (node, _) = self.cursor()?.at(self.level);
        let count = node.count();
        self.load_counts(&node);
        let mut i = from;
        let stop = end.min(count.saturating_sub(1));
        if from < stop
            && !self.strict
            && self.builder.in_step_with(&node, from)
            && self
                .builder
                .extend_unsplit(out, &node, from, stop, self.counts)
        {
            i = stop;
        }
        let entries = &mut self.out;
        self.builder
            .append_run(out, &node, i, end, self.counts, &mut |_, k, a, c| {
                entries.push(k, a, c);
                Ok(())
            })?;
        let level = self.level;
        let store = self.store;
        let root = self.root;
        let c = self.cursor.as_mut().ok_or_else(|| lost_cursor(root))?;
        self.old_end_split = end >= count && self.builder.is_fresh();
        if end < count {
            c.set_index(level, end);
        } else {
            self.last_node_key = node.key(count - 1);
            self.crossed = true;
            c.set_index(level, count - 1);
            c.advance_at(store, level)?;
        }
        self.hand_off_full_batch(out)
    }

    fn append_new(
        &mut self,
        out: &mut NodeOut<'_, S, T>,
        key: &[u8],
        value: &[u8],
        count: u64,
    ) -> Result<(), TreeError> {
        self.old_end_split = false;
        let entries = &mut self.out;
        self.builder
            .append(out, key, value, count, &mut |_, k, a, c| {
                entries.push(k, a, c);
                Ok(())
            })?;
        self.hand_off_full_batch(out)
    }

    /// New entries made so far: those handed on, then those being hashed on the hash thread,
    /// then those queued for hashing.
    fn made(&self) -> usize {
        let in_flight = self.background.as_deref().map_or(0, Loans::in_flight);
        self.out.len() + in_flight + self.builder.queued()
    }

    /// Closes the current region at the cursor (a synchronized old node start).
    fn close_region(&mut self, new_start: &mut usize) {
        let made = self.made();
        self.splices.push(Splice {
            first: self.region_first,
            last: Some(self.last_node_key),
            new_start: *new_start,
            new_end: made,
        });
        *new_start = made;
        self.cursor = None;
    }

    /// Feeds old items while they are before `until` (all of them if `None`), closing the
    /// region if the new and old nodes line up again. True if the region was closed.
    fn feed_until(
        &mut self,
        out: &mut NodeOut<'_, S, T>,
        until: Option<&[u8]>,
        new_start: &mut usize,
    ) -> Result<bool, TreeError> {
        loop {
            if !self.valid() {
                return Ok(false);
            }
            let (node, i) = self.cursor()?.at(self.level);
            // Dolt's rule where leaves lose their values: the new nodes line up with the old
            // ones only where an old node's last item ended a node again.
            let in_step = !self.strict || self.old_end_split;
            if self.crossed && i == 0 && self.builder.is_fresh() && in_step {
                self.close_region(new_start);
                return Ok(true);
            }
            // Items of this node before `until`.
            let end = match until {
                None => node.count(),
                // The items before `i` are all before `until` (edits come sorted), so the
                // schema's search of the whole node (cache-aware: it fetches the lines its
                // next steps need) finds it.
                Some(k) => self.schema.lower_bound(&node, k).max(i),
            };
            if end == i {
                return Ok(false);
            }
            self.feed_range(out, i, end)?;
        }
    }

    /// At an internal level, with the cursor at the start of an old node and the builder
    /// fresh: if every splice from `first` on that falls in this node swaps one old entry for
    /// one new entry under the same key (a child rewritten without moving a boundary, the
    /// usual result of an edit below), writes the node again with those children replaced
    /// ([`NodeWriter::write_internal_replacing_many`]): the same keys and sizes give the same
    /// boundaries, so the bytes are those the splitter would write, without feeding it every
    /// item. Moves the cursor past the node and returns the index of the first splice after
    /// it; `None` (nothing done) where any splice of the node is of another kind.
    ///
    /// [`NodeWriter::write_internal_replacing_many`]: prollystore_format::message::NodeWriter::write_internal_replacing_many
    fn replace_in_place(
        &mut self,
        out: &mut NodeOut<'_, S, T>,
        splices: &[Splice<'s>],
        entries: &NewEntries,
        first: usize,
    ) -> Result<Option<usize>, TreeError> {
        if self.level == 0 || !self.builder.is_fresh() {
            return Ok(None);
        }
        let cursor = self.cursor()?;
        let (node, at) = cursor.at(self.level);
        let n = node.count();
        // At the root's level the node must stay a canonical root (more than one child).
        let is_root = usize::from(node.level()) + 1 == cursor.height();
        if at != 0 || n == 0 || (is_root && n < 2) {
            return Ok(None);
        }
        let last_key = node.key(n - 1);
        let mut children = std::mem::take(&mut self.replaced);
        children.clear();
        let mut next = first;
        while let Some(s) = splices.get(next) {
            if self.schema.compare_keys(s.first, last_key) == Ordering::Greater {
                break;
            }
            let i = self.schema.lower_bound(&node, s.first);
            let one_to_one = s.last == Some(s.first)
                && s.new_end == s.new_start + 1
                && entries.key(s.new_start) == s.first
                && i < n
                && node.key(i) == s.first;
            if !one_to_one {
                self.replaced = children;
                return Ok(None);
            }
            children.push((
                i,
                entries.addresses[s.new_start],
                entries.counts[s.new_start],
            ));
            next += 1;
        }
        let made = self.builder.emit_written(
            out,
            |w| Ok(w.write_internal_replacing_many(&node, &children)?),
            last_key,
            n,
            &mut |_, k, a, c| {
                self.out.push(k, a, c);
                Ok(())
            },
        );
        self.replaced = children;
        made?;
        self.last_node_key = last_key;
        self.crossed = true;
        let (level, store, root) = (self.level, self.store, self.root);
        let c = self.cursor.as_mut().ok_or_else(|| lost_cursor(root))?;
        c.set_index(level, n - 1);
        c.advance_at(store, level)?;
        Ok(Some(next))
    }

    fn run(
        mut self,
        out: &mut NodeOut<'_, S, T>,
        ops: Ops<'_, 's>,
    ) -> Result<(Vec<Splice<'s>>, NewEntries), TreeError> {
        let mut new_start = 0usize;
        let mut next_op = 0usize;
        while next_op < ops.len() {
            let op = next_op;
            next_op += 1;
            let op_key = ops.key(op);
            if self.cursor.is_some() && self.feed_until(out, Some(op_key), &mut new_start)? {
                // Region closed; a new one starts below.
            }
            if self.cursor.is_none() {
                let c = Cursor::node_start_at_level(
                    self.store,
                    &self.root,
                    self.level,
                    op_key,
                    self.schema,
                )?;
                let (node, _) = c.at(self.level);
                let count = node.count();
                self.region_first = if count == 0 { &[] } else { node.key(count - 1) };
                self.cursor = Some(c);
                self.crossed = false;
                if let Ops::Internal(splices, entries) = &ops {
                    if let Some(done) = self.replace_in_place(out, splices, entries, op)? {
                        // The node's splices are applied: the next op starts after them.
                        next_op = done;
                        continue;
                    }
                }
                self.feed_until(out, Some(op_key), &mut new_start)?;
            }
            match &ops {
                Ops::Leaf(edits) => {
                    let (key, value) = edits[op];
                    let same_key = self.valid()
                        && self.schema.compare_keys(self.old_key()?, key) == Ordering::Equal;
                    if same_key {
                        let (n, i) = self.cursor()?.at(self.level);
                        let unchanged = value.is_some_and(|v| n.key(i) == key && n.value(i) == v);
                        if unchanged {
                            continue;
                        }
                        self.step()?;
                    }
                    if let Some(v) = value {
                        self.append_new(out, key, v, 1)?;
                    }
                }
                Ops::Internal(splices, entries) => {
                    let s = &splices[op];
                    // Skip the replaced old entries.
                    loop {
                        if !self.valid() {
                            break;
                        }
                        let k = self.old_key()?;
                        let past = match s.last {
                            Some(last) => self.schema.compare_keys(k, last) == Ordering::Greater,
                            None => false,
                        };
                        if past {
                            break;
                        }
                        self.step()?;
                    }
                    for j in s.new_start..s.new_end {
                        let (k, a, c) = (entries.key(j), entries.addresses[j], entries.counts[j]);
                        self.append_new(out, k, a.as_bytes(), c)?;
                    }
                }
            }
        }
        if self.cursor.is_some() && !self.feed_until(out, None, &mut new_start)? {
            // Reached the end of the level.
            let entries = &mut self.out;
            self.builder.flush(out, &mut |_, k, a, c| {
                entries.push(k, a, c);
                Ok(())
            })?;
            let made = self.made();
            self.splices.push(Splice {
                first: self.region_first,
                last: None,
                new_start,
                new_end: made,
            });
        }
        self.collect_in_flight(out)?;
        let entries = &mut self.out;
        self.builder.flush_queue(out, &mut |_, k, a, c| {
            entries.push(k, a, c);
            Ok(())
        })?;
        Ok((self.splices, self.out))
    }
}

/// True where a pass queues its new nodes and hashes them several at a time: the store's
/// profile makes that pay, and the store does not give nodes their addresses itself
/// ([`TreeSchema::foreign_nodes`]).
#[inline]
fn hashes_in_batches<S, T>(store: &S, schema: &T) -> bool
where
    S: StoreFastPaths + ?Sized,
    T: TreeSchema + ?Sized,
{
    batch_hashing_pays(store.profile()) && !schema.foreign_nodes()
}

/// The error for a pass without a cursor where it needs one (a bug, not bad input), made only
/// when needed: these checks run for every item.
#[cold]
fn lost_cursor(_root: Address) -> TreeError {
    TreeError::Internal("edit pass lost its cursor")
}

/// Buffers an edit reuses from the previous one on the same thread: the level builder (its
/// node-sized buffers), the decoded subtree counts, spare lists of new entries (a level pass
/// fills one while it reads the one the pass below filled), and the hash thread of large
/// edits.
#[derive(Default)]
struct Scratch {
    builder: LevelBuilder,
    counts: Vec<u64>,
    spares: Vec<NewEntries>,
    background: Background,
}

/// An empty list of new entries: a spare one if there is one.
fn spare_entries(spares: &mut Vec<NewEntries>) -> NewEntries {
    let mut entries = spares.pop().unwrap_or_default();
    entries.clear();
    entries
}

thread_local! {
    /// Process-wide state (see [`crate::process`]).
    static SCRATCH: std::cell::RefCell<Option<Scratch>> = const { std::cell::RefCell::new(None) };
}

/// Drops the calling thread's [`Scratch`] (ending its hash thread).
pub(crate) fn release_thread_scratch() {
    let scratch = SCRATCH.try_with(|s| s.borrow_mut().take()).ok().flatten();
    drop(scratch);
}

/// Applies `edits` (strictly increasing keys) to the tree at `root`; returns the new root.
///
/// When [`background_hashing`] allows it, the leaf pass hands full batches of new leaves to a
/// hash thread (started by the first edit that fills one, then kept for later edits on the
/// calling thread, and ended with it); the new leaves' entries reach the next level in order,
/// so the tree is the same.
pub fn apply_edits<S, T>(
    store: &S,
    schema: &T,
    root: Address,
    edits: &[Edit<'_>],
) -> Result<Address, TreeError>
where
    S: StoreFastPaths + ?Sized,
    T: TreeSchema + ?Sized,
{
    if edits.is_empty() {
        return Ok(root);
    }
    let root_level = usize::from(store.get_node(&root)?.level());
    let mut scratch = SCRATCH
        .try_with(|s| s.borrow_mut().take())
        .ok()
        .flatten()
        .unwrap_or_else(|| Scratch {
            builder: LevelBuilder::new(0),
            ..Scratch::default()
        });
    let Scratch {
        builder,
        counts,
        spares,
        background,
    } = &mut scratch;
    // A failed edit may leave a batch in flight, writing into memory the store lent it:
    // `with_loans` waits for it before returning, while the store is surely alive.
    let result = background.with_loans(store, |loans| {
        // Asked only where the pass could use it (asking costs a look at the machine's cores
        // once per process: a commit's address-map and closure edits need not pay it).
        let loans = (hashes_in_batches(store, schema) && background_hashing()).then_some(loans);
        let buffers = Buffers {
            builder,
            counts,
            spares,
        };
        rewrite_levels(store, schema, root, root_level, edits, buffers, loans)
    });
    let _ = SCRATCH.try_with(|s| *s.borrow_mut() = Some(scratch));
    result
}

/// The reusable buffers of [`Scratch`] one edit's passes work with.
struct Buffers<'b> {
    builder: &'b mut LevelBuilder,
    counts: &'b mut Vec<u64>,
    spares: &'b mut Vec<NewEntries>,
}

/// The level passes of [`apply_edits`], from the leaves to the old root's level.
fn rewrite_levels<'s, S, T>(
    store: &'s S,
    schema: &T,
    root: Address,
    root_level: usize,
    edits: &[Edit<'_>],
    buffers: Buffers<'_>,
    background: Option<&mut Loans<'_, 's, S>>,
) -> Result<Address, TreeError>
where
    S: StoreFastPaths + ?Sized,
    T: TreeSchema + ?Sized,
{
    let mut out = NodeOut::new(store, schema);
    let Buffers {
        builder,
        counts,
        spares,
    } = buffers;
    let fresh = spare_entries(spares);
    // Items in the last node the last pass wrote.
    let mut last_written;
    let (mut splices, mut entries) = match replace_one_value(&mut out, &root, edits, fresh)? {
        Replaced::Node(s, e, count) => {
            last_written = count;
            (vec![s], e)
        }
        Replaced::No(fresh) => {
            let pass = LevelPass::new(store, schema, root, 0, builder, counts, fresh, background);
            let done = pass.run(&mut out, Ops::Leaf(edits))?;
            last_written = builder.last_written();
            done
        }
    };
    let mut level = 0usize;
    while level < root_level {
        level += 1;
        let fresh = spare_entries(spares);
        let (s, e) = match replace_one_child(&mut out, &root, level, &splices, &entries, fresh)? {
            Replaced::Node(s, e, count) => {
                last_written = count;
                (vec![s], e)
            }
            Replaced::No(fresh) => {
                let pass = LevelPass::new(store, schema, root, level, builder, counts, fresh, None);
                let done = pass.run(&mut out, Ops::Internal(&splices, &entries))?;
                last_written = builder.last_written();
                done
            }
        };
        splices = s;
        spares.push(std::mem::replace(&mut entries, e));
    }
    // `entries` now holds every node of the old root's level.
    let root = match entries.len() {
        0 => {
            let b = TreeBuilder::new(store, schema);
            b.finish()
        }
        // The single node was the last the final pass wrote: unless it is an internal node
        // with one child, it is the canonical root (no need to read it back).
        1 if root_level == 0 || last_written > 1 => Ok(entries.addresses[0]),
        1 => canonical_root(store, entries.addresses[0]),
        _ => {
            let mut b = TreeBuilder::at_level(store, schema, (root_level + 1) as u8);
            for i in 0..entries.len() {
                b.add_entry(entries.key(i), entries.addresses[i], entries.counts[i])?;
            }
            b.finish()
        }
    };
    spares.push(entries);
    root
}

/// What [`replace_one_value`] or [`replace_one_child`] did.
enum Replaced<'s> {
    /// Wrote the node again: the splice and entry for the level above, and the node's item
    /// count.
    Node(Splice<'s>, NewEntries, usize),
    /// The level needs a full pass (the entries buffer is handed back).
    No(NewEntries),
}

/// A batch of one update that keeps the value's length (the most common edit of a table with
/// fixed-width rows): the leaf keeps all its keys and item sizes, so the splitter would end it
/// where it ends now, and it is written again with the new value in place
/// ([`NodeWriter::write_leaf_replacing`], the bytes the leaf pass would write).
///
/// [`NodeWriter::write_leaf_replacing`]: prollystore_format::message::NodeWriter::write_leaf_replacing
fn replace_one_value<'s, S, T>(
    out: &mut NodeOut<'s, S, T>,
    root: &Address,
    edits: &[Edit<'_>],
    fresh: NewEntries,
) -> Result<Replaced<'s>, TreeError>
where
    S: StoreFastPaths + ?Sized,
    T: TreeSchema + ?Sized,
{
    let [(key, Some(value))] = edits else {
        return Ok(Replaced::No(fresh));
    };
    // A value with embedded addresses may move them at the same length, and leaves stored
    // without values re-read smaller: left to the pass.
    if out.with_addresses || !out.schema.leaf_values_kept() {
        return Ok(Replaced::No(fresh));
    }
    let store = out.store;
    let cursor = Cursor::node_start_at_level(store, root, 0, key, out.schema)?;
    let (node, _) = cursor.at(0);
    let i = out.schema.lower_bound(&node, key);
    let n = node.count();
    let same_place = i < n
        && node.key(i) == *key
        && node.value(i).len() == value.len()
        && node.value(i) != *value
        && node.value_address_offsets().next().is_none();
    if !same_place {
        return Ok(Replaced::No(fresh));
    }
    let chunk = out.writer.write_leaf_replacing(&node, i, value)?;
    // SAFETY: `out.writer`, a `NodeWriter`, has just serialized `chunk`.
    let address = unsafe { store.put_node(chunk) }?;
    Ok(one_node(fresh, node.key(n - 1), address, n as u64, n))
}

/// [`Replaced::Node`] for a node written again in place: one new entry for the old one, under
/// the same last key.
fn one_node<'s>(
    mut fresh: NewEntries,
    last_key: &'s [u8],
    address: Address,
    tree_count: u64,
    items: usize,
) -> Replaced<'s> {
    fresh.clear();
    fresh.push(last_key, address, tree_count);
    let splice = Splice {
        first: last_key,
        last: Some(last_key),
        new_start: 0,
        new_end: 1,
    };
    Replaced::Node(splice, fresh, items)
}

/// The usual shape of a small edit one level up: the pass below rewrote a single node without
/// moving any boundary, so its one splice swaps one old entry for one new entry with the same
/// key. The node holding that entry keeps all its keys and item sizes, so the splitter would
/// end it where it ends now: it is written again with the new child address and count in
/// place ([`NodeWriter::write_internal_replacing`], the bytes a full pass would write),
/// without feeding its items through the level's builder.
///
/// [`NodeWriter::write_internal_replacing`]: prollystore_format::message::NodeWriter::write_internal_replacing
fn replace_one_child<'s, S, T>(
    out: &mut NodeOut<'s, S, T>,
    root: &Address,
    level: usize,
    splices: &[Splice<'s>],
    below: &NewEntries,
    fresh: NewEntries,
) -> Result<Replaced<'s>, TreeError>
where
    S: StoreFastPaths + ?Sized,
    T: TreeSchema + ?Sized,
{
    let [Splice {
        first,
        last: Some(last),
        new_start,
        new_end,
    }] = splices
    else {
        return Ok(Replaced::No(fresh));
    };
    if first != last || *new_end != new_start + 1 || below.key(*new_start) != *first {
        return Ok(Replaced::No(fresh));
    }
    let store = out.store;
    let cursor = Cursor::node_start_at_level(store, root, level, first, out.schema)?;
    let (node, _) = cursor.at(level);
    let n = node.count();
    let i = out.schema.lower_bound(&node, first);
    // At the root's level the node must stay a canonical root (more than one child).
    let is_root = usize::from(node.level()) + 1 == cursor.height();
    if i >= n || node.key(i) != *first || (is_root && n < 2) {
        return Ok(Replaced::No(fresh));
    }
    let (child, count) = (below.addresses[*new_start], below.counts[*new_start]);
    let (chunk, total) = out
        .writer
        .write_internal_replacing(&node, i, &child, count)?;
    // SAFETY: `out.writer`, a `NodeWriter`, has just serialized `chunk`.
    let address = unsafe { store.put_node(chunk) }?;
    Ok(one_node(fresh, node.key(n - 1), address, total, n))
}

/// Sorts edits by key with `schema`, keeping the last edit of each key.
pub fn normalize_edits<'e, T: TreeSchema + ?Sized>(schema: &T, edits: &mut Vec<Edit<'e>>) {
    // Stable sort keeps the original order among equal keys; then keep the last of each run.
    edits.sort_by(|a, b| schema.compare_keys(a.0, b.0));
    let mut out: Vec<Edit<'e>> = Vec::with_capacity(edits.len());
    for e in edits.drain(..) {
        match out.last_mut() {
            Some(last) if schema.compare_keys(last.0, e.0) == Ordering::Equal => *last = e,
            _ => out.push(e),
        }
    }
    *edits = out;
}
