//! Positions in a tree: a fixed-size stack of `(node, index)` from the leaf up to the root, so
//! seeking and stepping allocate nothing.

use prollystore_format::message::Node;
use prollystore_format::Address;

use super::prefetch::touch_keys;
use super::schema::TreeSchema;
use super::split::MAX_LEVELS;
use crate::error::TreeError;
use crate::store::{NodeHint, StoreFastPaths};

/// Deepest tree a cursor can walk (Dolt defines salts for 15 levels).
pub(crate) const MAX_DEPTH: usize = MAX_LEVELS + 1;

/// Smallest `i` with `key <= node.key(i)` (`count` if none). The schema's search brings the
/// lines it needs into cache (see [`TreeSchema::lower_bound`]).
#[inline]
pub(crate) fn lower_bound<T: TreeSchema + ?Sized>(
    node: &Node<'_>,
    key: &[u8],
    schema: &T,
) -> usize {
    schema.lower_bound(node, key)
}

/// Smallest `i` for which `pred(node.key(i))` is false, given `pred` true then false.
#[inline]
pub(crate) fn partition_point(node: &Node<'_>, mut pred: impl FnMut(&[u8]) -> bool) -> usize {
    let (mut lo, mut hi) = (0usize, node.count());
    while lo < hi {
        let mid = (lo + hi) / 2;
        if pred(node.key(mid)) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// A position in a tree, made by [`Map`](crate::Map)'s `seek` methods: the row under it
/// ([`Cursor::key`], [`Cursor::value`] while [`Cursor::valid`]), moved one row at a time
/// ([`Cursor::advance`], [`Cursor::retreat`]).
///
/// Inside: `frames[0]` is the leaf, `frames[height-1]` the root. The leaf index
/// may be `-1` (before the first item) or `count` (after the last).
#[derive(Clone, Copy)]
pub struct Cursor<'s> {
    nodes: [Option<Node<'s>>; MAX_DEPTH],
    idx: [i32; MAX_DEPTH],
    /// The store's hint for each loaded node, so that children are found through
    /// [`ChunkStore::get_child`] instead of by address.
    hints: [NodeHint; MAX_DEPTH],
    height: usize,
    /// Lowest loaded level (0 unless the cursor was made to stop above the leaves).
    bottom: usize,
}

impl<'s> Cursor<'s> {
    fn empty() -> Cursor<'s> {
        Cursor {
            nodes: [None; MAX_DEPTH],
            idx: [0; MAX_DEPTH],
            hints: [NodeHint::NONE; MAX_DEPTH],
            height: 0,
            bottom: 0,
        }
    }

    /// Descends from `root`, choosing at every node the index `choose(node)` returns
    /// (clamped into the node at internal levels).
    fn descend<S: StoreFastPaths + ?Sized>(
        store: &'s S,
        root: &Address,
        choose: impl FnMut(&Node<'s>) -> usize,
    ) -> Result<Cursor<'s>, TreeError> {
        Self::descend_to(store, root, 0, choose)
    }

    /// Like `descend` but stops at `stop` (the frames below it are left unset).
    pub(crate) fn descend_to<S: StoreFastPaths + ?Sized>(
        store: &'s S,
        root: &Address,
        stop: usize,
        mut choose: impl FnMut(&Node<'s>) -> usize,
    ) -> Result<Cursor<'s>, TreeError> {
        let mut c = Cursor::empty();
        let (node, hint) = store.get_node_hinted(root)?;
        let height = usize::from(node.level()) + 1;
        if height > MAX_DEPTH {
            return Err(TreeError::TooTall(MAX_DEPTH));
        }
        c.height = height;
        let mut node = node;
        let mut hint = hint;
        let mut address = *root;
        let mut level = height - 1;
        loop {
            if usize::from(node.level()) != level {
                return Err(TreeError::Malformed {
                    address,
                    reason: "child level is not one below its parent",
                });
            }
            let i = choose(&node);
            c.nodes[level] = Some(node);
            c.hints[level] = hint;
            if level == 0 {
                c.idx[0] = i as i32;
                return Ok(c);
            }
            if level == stop {
                c.bottom = stop;
                c.idx[level] = i.min(node.count()) as i32;
                return Ok(c);
            }
            if node.count() == 0 {
                return Err(TreeError::Malformed {
                    address,
                    reason: "empty internal node",
                });
            }
            let i = i.min(node.count() - 1);
            c.idx[level] = i as i32;
            address = node.child(i);
            (node, hint) = store.get_child(&node, hint, i)?;
            level -= 1;
        }
    }

    /// A cursor with nothing loaded, to be started where it stays with
    /// [`Cursor::start_at_root`] (a cursor is over a kilobyte; moving one is a `memcpy`).
    pub(crate) fn unloaded() -> Cursor<'s> {
        Cursor::empty()
    }

    /// Loads only the root frame, at its first entry, into a cursor fresh from
    /// [`Cursor::unloaded`]: the start of a descent one level at a time with
    /// [`Cursor::descend_into`].
    pub(crate) fn start_at_root<S: StoreFastPaths + ?Sized>(
        &mut self,
        store: &'s S,
        root: &Address,
    ) -> Result<(), TreeError> {
        let (node, hint) = store.get_node_hinted(root)?;
        let height = usize::from(node.level()) + 1;
        if height > MAX_DEPTH {
            return Err(TreeError::TooTall(MAX_DEPTH));
        }
        if height > 1 && node.count() == 0 {
            return Err(TreeError::Malformed {
                address: *root,
                reason: "empty internal node",
            });
        }
        self.height = height;
        self.bottom = height - 1;
        self.nodes[height - 1] = Some(node);
        self.hints[height - 1] = hint;
        Ok(())
    }

    /// Lowest loaded level.
    pub(crate) fn bottom(&self) -> usize {
        self.bottom
    }

    /// Points the bottom frame (an internal node) at entry `i` (clamped into the node) and
    /// loads that child as the new bottom frame, at its first entry.
    pub(crate) fn descend_into<S: StoreFastPaths + ?Sized>(
        &mut self,
        store: &'s S,
        i: usize,
    ) -> Result<(), TreeError> {
        let level = self.bottom;
        if level == 0 {
            return Ok(());
        }
        let i = i.min(self.node_ref(level).count().saturating_sub(1));
        self.idx[level] = i as i32;
        self.load_child(store, level)?;
        self.idx[level - 1] = 0;
        self.bottom = level - 1;
        Ok(())
    }

    /// Loads the child under the entry of the frame at `level` (an internal level) into the
    /// frame below, found through the parent's hint; the index there is left to the caller.
    #[inline]
    fn load_child<S: StoreFastPaths + ?Sized>(
        &mut self,
        store: &'s S,
        level: usize,
    ) -> Result<(), TreeError> {
        let parent = self.node_ref(level);
        let i = self.idx[level] as usize;
        let (child, hint) = store.get_child(parent, self.hints[level], i)?;
        let below = level - 1;
        if usize::from(child.level()) != below || (below > 0 && child.count() == 0) {
            return Err(malformed_child(parent, i));
        }
        self.nodes[below] = Some(child);
        self.hints[below] = hint;
        Ok(())
    }

    /// Cursor at the first key `>= key` (past the end if none).
    pub(crate) fn at_key<S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized>(
        store: &'s S,
        root: &Address,
        key: &[u8],
        schema: &T,
    ) -> Result<Cursor<'s>, TreeError> {
        Self::descend(store, root, |n| lower_bound(n, key, schema))
    }

    /// Cursor at the first key for which `pred` is false (keys for which it is true come
    /// first).
    pub(crate) fn at_partition<S: StoreFastPaths + ?Sized>(
        store: &'s S,
        root: &Address,
        mut pred: impl FnMut(&[u8]) -> bool,
    ) -> Result<Cursor<'s>, TreeError> {
        Self::descend(store, root, |n| {
            touch_keys(n);
            partition_point(n, &mut pred)
        })
    }

    /// Cursor whose frames stop at `level`, positioned at the first entry of the level-`level`
    /// node on the lower-bound path of `key`.
    pub(crate) fn node_start_at_level<S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized>(
        store: &'s S,
        root: &Address,
        level: usize,
        key: &[u8],
        schema: &T,
    ) -> Result<Cursor<'s>, TreeError> {
        // The node at `level` itself is not searched: the cursor starts at its first entry.
        let choose = |n: &Node<'s>| {
            if usize::from(n.level()) == level {
                0
            } else {
                lower_bound(n, key, schema)
            }
        };
        Self::descend_to(store, root, level, choose)
    }

    /// True if the frame at `level` is on an entry.
    #[inline]
    pub(crate) fn valid_at(&self, level: usize) -> bool {
        level < self.height && {
            let i = self.idx[level];
            i >= 0 && (i as usize) < self.node(level).count()
        }
    }

    /// The node at `level` and the cursor's index in it (unchecked index).
    #[inline]
    pub(crate) fn at(&self, level: usize) -> (Node<'s>, usize) {
        (self.node(level), self.idx[level].max(0) as usize)
    }

    /// [`Cursor::at`] without copying the node: a reference to it in place.
    #[inline]
    pub(crate) fn at_ref(&self, level: usize) -> (&Node<'s>, usize) {
        (self.node_ref(level), self.idx[level].max(0) as usize)
    }

    /// Moves the frame at `level` to entry `i` of its node without loading anything below.
    pub(crate) fn set_index(&mut self, level: usize, i: usize) {
        if level < self.height {
            self.idx[level] = i as i32;
        }
    }

    /// Moves the leaf index (used to reposition within the current leaf).
    pub(crate) fn set_leaf_index(&mut self, i: usize) {
        self.idx[0] = i as i32;
    }

    /// Cursor at the first item (past the end for an empty tree).
    pub(crate) fn at_start<S: StoreFastPaths + ?Sized>(
        store: &'s S,
        root: &Address,
    ) -> Result<Cursor<'s>, TreeError> {
        Self::descend(store, root, |_| 0)
    }

    /// Cursor at the last item (before the start for an empty tree).
    pub(crate) fn at_last<S: StoreFastPaths + ?Sized>(
        store: &'s S,
        root: &Address,
    ) -> Result<Cursor<'s>, TreeError> {
        let mut c = Self::descend(store, root, |n| n.count().saturating_sub(1))?;
        if c.leaf().count() == 0 {
            c.idx[0] = -1;
        }
        Ok(c)
    }

    /// Cursor at ordinal `ordinal` (0-based; past the end if `ordinal >= count`).
    pub(crate) fn at_ordinal<S: StoreFastPaths + ?Sized>(
        store: &'s S,
        root: &Address,
        ordinal: u64,
    ) -> Result<Cursor<'s>, TreeError> {
        let mut rest = ordinal;
        let mut past_end = false;
        let c = Self::descend(store, root, |n| {
            if past_end {
                return n.count();
            }
            if n.is_leaf() {
                return usize::try_from(rest).unwrap_or(usize::MAX).min(n.count());
            }
            for (i, sc) in n.subtree_counts().enumerate() {
                if rest < sc {
                    return i;
                }
                rest -= sc;
            }
            past_end = true;
            n.count()
        })?;
        if past_end {
            let mut c = c;
            c.idx[0] = c.leaf().count() as i32;
            return Ok(c);
        }
        Ok(c)
    }

    #[inline]
    fn node(&self, level: usize) -> Node<'s> {
        *self.node_ref(level)
    }

    /// The node at `level`, in place.
    #[inline]
    pub(crate) fn node_ref(&self, level: usize) -> &Node<'s> {
        // Every level below `height` is set by `descend` and kept set.
        match &self.nodes[level] {
            Some(n) => n,
            None => unreachable_node(),
        }
    }

    /// The leaf the cursor is in.
    #[inline]
    pub(crate) fn leaf(&self) -> Node<'s> {
        self.node(0)
    }

    /// Number of levels (1 for a single-leaf tree).
    pub(crate) fn height(&self) -> usize {
        self.height
    }

    /// True if the cursor is on an item.
    #[inline]
    pub fn valid(&self) -> bool {
        let i = self.idx[0];
        i >= 0 && (i as usize) < self.node_ref(0).count()
    }

    /// The key under the cursor (call only when [`Cursor::valid`]).
    #[inline]
    pub fn key(&self) -> &'s [u8] {
        self.leaf().key(self.idx[0].max(0) as usize)
    }

    /// The value under the cursor (call only when [`Cursor::valid`]).
    #[inline]
    pub fn value(&self) -> &'s [u8] {
        self.leaf().value(self.idx[0].max(0) as usize)
    }

    /// Index within the leaf.
    pub(crate) fn leaf_index(&self) -> usize {
        self.idx[0].max(0) as usize
    }

    /// The leaf under the cursor and its entries from the cursor's to the leaf's last (empty
    /// when the cursor is on no item): for readers that decode a leaf's rows a column at a
    /// time instead of a row at a time. Move on with [`Cursor::advance_by`].
    #[inline]
    pub fn rest_of_leaf(&self) -> (Node<'s>, std::ops::Range<usize>) {
        let leaf = self.leaf();
        let count = leaf.count();
        let i = self.idx[0].clamp(0, count as i32) as usize;
        (leaf, i..count)
    }

    /// Moves `n` items forward; false (and past the end) if the tree ends first. Within the
    /// leaf this is one addition; the leaves passed over on the way are loaded.
    pub fn advance_by<S: StoreFastPaths + ?Sized>(
        &mut self,
        store: &'s S,
        mut n: usize,
    ) -> Result<bool, TreeError> {
        while n > 0 {
            let (_, rest) = self.rest_of_leaf();
            if rest.is_empty() {
                return Ok(false);
            }
            // Up to the leaf's last entry by index; one step past it loads the next leaf.
            let within = (rest.len() - 1).min(n);
            self.idx[0] += within as i32;
            n -= within;
            if n > 0 {
                if !self.advance(store)? {
                    return Ok(false);
                }
                n -= 1;
            }
        }
        Ok(self.valid())
    }

    /// Moves to the next item; false (and past the end) if there is none.
    pub fn advance<S: StoreFastPaths + ?Sized>(&mut self, store: &'s S) -> Result<bool, TreeError> {
        self.advance_at(store, 0)
    }

    /// Moves the frame at `level` to its next entry, reloading the loaded levels below at their
    /// first entries. False if there is none: the bottom frame is then one past the last entry
    /// of the tree (and stepping back from there reaches the last entry).
    pub(crate) fn advance_at<S: StoreFastPaths + ?Sized>(
        &mut self,
        store: &'s S,
        level: usize,
    ) -> Result<bool, TreeError> {
        self.step_at(store, level, true)
    }

    /// [`Cursor::advance_at`] for walks that never step back: past the end, the bottom frame
    /// just becomes invalid where it is, instead of loading the path to the last entry.
    pub(crate) fn advance_forward_at<S: StoreFastPaths + ?Sized>(
        &mut self,
        store: &'s S,
        level: usize,
    ) -> Result<bool, TreeError> {
        self.step_at(store, level, false)
    }

    fn step_at<S: StoreFastPaths + ?Sized>(
        &mut self,
        store: &'s S,
        level: usize,
        keep_last: bool,
    ) -> Result<bool, TreeError> {
        let mut l = level;
        loop {
            if l >= self.height && !keep_last {
                let b = self.bottom;
                self.idx[b] = self.node(b).count() as i32;
                return Ok(false);
            }
            if l >= self.height {
                // Past the end: keep the path to the last entry (so that stepping back works)
                // and put the bottom frame one past its last entry.
                let mut k = level;
                while k > self.bottom {
                    self.idx[k] = self.node_ref(k).count().saturating_sub(1) as i32;
                    self.load_child(store, k)?;
                    k -= 1;
                    self.idx[k] = self.node_ref(k).count().saturating_sub(1) as i32;
                }
                self.idx[self.bottom] = self.node(self.bottom).count() as i32;
                return Ok(false);
            }
            let n = self.node_ref(l).count() as i32;
            if self.idx[l] + 1 < n {
                self.idx[l] += 1;
                break;
            }
            l += 1;
        }
        while l > self.bottom {
            self.load_child(store, l)?;
            l -= 1;
            self.idx[l] = 0;
        }
        Ok(true)
    }

    /// Moves to the previous item; false (and before the start) if there is none.
    pub fn retreat<S: StoreFastPaths + ?Sized>(&mut self, store: &'s S) -> Result<bool, TreeError> {
        let mut l = 0usize;
        loop {
            if l >= self.height {
                self.idx[0] = -1;
                for k in 1..self.height {
                    self.idx[k] = 0;
                }
                return Ok(false);
            }
            if self.idx[l] > 0 {
                let n = self.node(l).count() as i32;
                self.idx[l] = (self.idx[l] - 1).min(n - 1);
                break;
            }
            l += 1;
        }
        while l > 0 {
            self.load_child(store, l)?;
            l -= 1;
            self.idx[l] = self.node_ref(l).count() as i32 - 1;
        }
        Ok(true)
    }

    /// True if the cursor at `level` is on the last entry of its node.
    pub(crate) fn at_node_end(&self, level: usize) -> bool {
        level < self.height && self.idx[level] + 1 >= self.node_ref(level).count() as i32
    }

    /// The ordinal of the item under the cursor (the count when past the end).
    pub fn ordinal(&self) -> u64 {
        let mut o = self.idx[0].max(0) as u64;
        for l in 1..self.height {
            let i = self.idx[l].max(0) as usize;
            o += self.node(l).subtree_counts().take(i).sum::<u64>();
        }
        o
    }
}

/// The error for child `i` of `parent` at the wrong level or empty.
#[cold]
#[inline(never)]
fn malformed_child(parent: &Node<'_>, i: usize) -> TreeError {
    TreeError::Malformed {
        address: parent.child(i),
        reason: "child node at the wrong level, or an empty internal node",
    }
}

#[cold]
fn unreachable_node() -> ! {
    // A cursor only reads levels it has loaded; reaching this is a bug in this module.
    panic!("cursor level not loaded")
}
