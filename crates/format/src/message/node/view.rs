//! [`Node`]: the view of a verified `ProllyTreeNode` chunk, and its accessors.

use std::cmp::Ordering;
use std::ops::Range;

use super::entries::{fixed_item, item, Entries, Items};
use super::layout::NodeLayout;
use crate::message::table::u16_at;
use crate::message::SubtreeCounts;
use crate::varint::CountDeltas;
use crate::{Address, ADDRESS_LEN};

/// A verified `ProllyTreeNode` chunk; all accessors are cheap and allocation-free.
///
/// Made from bytes only by verification, [`Node::verify`], which checks everything. Two
/// trusted paths skip checks for bytes this process already knows, and are `unsafe` for it:
/// their callers promise where the bytes come from.
/// * [`Node::from_verified`]: bytes verified before in this process, with the [`NodeLayout`]
///   their view gave; checks nothing (how a store's cache hands a node out again).
/// * [`Node::from_own_writer`]: a chunk this process's [`NodeWriter`](super::NodeWriter)
///   wrote; finds the parts without the checks that only catch corruption.
#[derive(Clone, Copy, Debug)]
pub struct Node<'a> {
    pub(super) chunk: &'a [u8],
    /// Where the parts are; slices are cut on access (a few instructions), which keeps the
    /// view small: cursors hold one per level and copy them around.
    pub(super) layout: NodeLayout,
}

impl<'a> Node<'a> {
    /// The view of `chunk` from the layout ([`Node::layout`]) a view of these same bytes gave
    /// earlier in this process, without checking anything: a store that keeps nodes as
    /// (bytes, layout) hands them out again this way after their first read. Checking again
    /// would cost a verification per read (the whole FlatBuffers walk), where this costs none.
    ///
    /// # Safety
    ///
    /// `chunk` must be the very bytes (unchanged) whose view, made by [`Node::verify`] or
    /// [`Node::from_own_writer`] in this process, gave `layout`. The accessors may rely on
    /// that. (Today every accessor is bounds-checked, so a broken promise gives wrong answers
    /// or panics rather than out-of-bounds reads; the contract leaves room for accessors that
    /// skip those checks.)
    #[inline]
    pub unsafe fn from_verified(chunk: &'a [u8], layout: NodeLayout) -> Node<'a> {
        Node { chunk, layout }
    }

    /// The positions found by verification (for [`Node::from_verified`]).
    #[inline]
    pub fn layout(&self) -> NodeLayout {
        self.layout
    }

    /// The whole chunk, prefix included.
    #[inline]
    pub fn chunk(&self) -> &'a [u8] {
        self.chunk
    }

    /// Number of items (rows on a leaf, children on an internal node).
    #[inline]
    pub fn count(&self) -> usize {
        self.layout.count as usize
    }

    /// Tree level: 0 for leaves.
    #[inline]
    pub fn level(&self) -> u8 {
        self.layout.level
    }

    /// True for level-0 nodes.
    #[inline]
    pub fn is_leaf(&self) -> bool {
        self.layout.level == 0
    }

    /// Rows in the subtree under this node.
    #[inline]
    pub fn tree_count(&self) -> u64 {
        self.layout.tree_count
    }

    /// Key `i`: a key tuple on leaves, the last key of child `i` on internal nodes.
    ///
    /// # Panics
    /// If `i >= self.count()`.
    #[inline]
    pub fn key(&self, i: usize) -> &'a [u8] {
        assert!(
            i < self.count(),
            "key index {i} out of range for {} items",
            self.count()
        );
        self.key_unchecked_index(i)
    }

    /// Key `i`, or empty bytes if `i` is out of range.
    #[inline(always)]
    fn key_unchecked_index(&self, i: usize) -> &'a [u8] {
        match self.layout.key_width {
            0 => item(self.key_items(), self.key_offsets_bytes(), i),
            w => fixed_item(self.key_items(), usize::from(w), i),
        }
    }

    /// The common length of all keys, if they are equally long and end with the same two
    /// bytes (a tuple's field count): key `i` is then `key_items[i * w..(i + 1) * w]`.
    #[inline]
    pub fn key_width(&self) -> Option<usize> {
        (self.layout.key_width != 0).then_some(usize::from(self.layout.key_width))
    }

    /// The same as [`Node::key_width`] for the values of a leaf (`None` on internal nodes).
    #[inline]
    pub fn value_width(&self) -> Option<usize> {
        (self.layout.value_width != 0).then_some(usize::from(self.layout.value_width))
    }

    /// Value `i`: the value tuple on leaves, the 20 address bytes of child `i` on internal
    /// nodes.
    ///
    /// # Panics
    /// If `i >= self.count()`.
    #[inline]
    pub fn value(&self, i: usize) -> &'a [u8] {
        assert!(
            i < self.count(),
            "value index {i} out of range for {} items",
            self.count()
        );
        if self.is_leaf() {
            match self.layout.value_width {
                0 => item(self.values(), self.value_offsets_bytes(), i),
                w => fixed_item(self.values(), usize::from(w), i),
            }
        } else {
            self.values()
                .get(i * ADDRESS_LEN..(i + 1) * ADDRESS_LEN)
                .unwrap_or(&[])
        }
    }

    /// Address of child `i` of an internal node.
    ///
    /// # Panics
    /// If `i >= self.count()` or the node is a leaf (caller bugs, like slice indexing).
    #[inline]
    pub fn child(&self, i: usize) -> Address {
        assert!(!self.is_leaf(), "child() called on a leaf node");
        Address::from_slice(self.value(i)).unwrap_or(Address::ZERO)
    }

    /// Rows under each item: 1 per item on leaves, the decoded subtree counts on internal nodes.
    #[inline]
    pub fn subtree_counts(&self) -> SubtreeCounts<'a> {
        SubtreeCounts {
            deltas: if self.is_leaf() {
                None
            } else {
                Some(CountDeltas::new(
                    self.layout.subtree_counts.slice(self.chunk),
                ))
            },
            remaining: self.count(),
        }
    }

    /// All key bytes, concatenated.
    #[inline]
    pub fn key_items(&self) -> &'a [u8] {
        self.layout.key_items.slice(self.chunk)
    }

    /// Leaf: the value items; internal: the address array.
    #[inline(always)]
    pub(super) fn values(&self) -> &'a [u8] {
        self.layout.values.slice(self.chunk)
    }

    /// All value bytes, concatenated (empty on internal nodes).
    #[inline]
    pub fn value_items(&self) -> &'a [u8] {
        if self.is_leaf() {
            self.values()
        } else {
            &[]
        }
    }

    /// The n+1 key offsets as stored (little-endian u16 pairs).
    #[inline]
    pub fn key_offsets_bytes(&self) -> &'a [u8] {
        self.layout.key_offsets.slice(self.chunk)
    }

    /// The n+1 value offsets as stored (empty on internal nodes).
    #[inline]
    pub fn value_offsets_bytes(&self) -> &'a [u8] {
        self.layout.value_offsets.slice(self.chunk)
    }

    /// The concatenated child addresses of an internal node (empty on leaves).
    #[inline]
    pub fn address_array(&self) -> &'a [u8] {
        if self.is_leaf() {
            &[]
        } else {
            self.values()
        }
    }

    /// The raw subtree-count varints of an internal node (empty on leaves).
    #[inline]
    pub fn subtree_counts_bytes(&self) -> &'a [u8] {
        self.layout.subtree_counts.slice(self.chunk)
    }

    /// Positions in [`Node::value_items`] of the chunk addresses embedded in leaf values
    /// (out-of-band values), in stored order. Each is followed by 20 address bytes.
    #[inline]
    pub fn value_address_offsets(&self) -> impl Iterator<Item = u16> + 'a {
        self.layout
            .value_address_offsets
            .slice(self.chunk)
            .chunks_exact(2)
            .map(|p| u16::from_le_bytes([p[0], p[1]]))
    }

    /// Binary search over the keys with `cmp` giving each key's order relative to the target,
    /// like [`slice::binary_search_by`]: `Ok(i)` for a match, `Err(i)` for the insert position.
    #[inline]
    pub fn search_by(&self, mut cmp: impl FnMut(&'a [u8]) -> Ordering) -> Result<usize, usize> {
        let (mut lo, mut hi) = (0usize, self.count());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match cmp(self.key_unchecked_index(mid)) {
                Ordering::Less => lo = mid + 1,
                Ordering::Greater => hi = mid,
                Ordering::Equal => return Ok(mid),
            }
        }
        Err(lo)
    }

    /// The first index whose key does not satisfy `pred` (keys satisfying it must come
    /// first), like [`slice::partition_point`]. With `pred = |k| k < target` this is the lower
    /// bound; Dolt's cursors search internal nodes this way.
    #[inline]
    pub fn partition_point(&self, mut pred: impl FnMut(&'a [u8]) -> bool) -> usize {
        let (mut lo, mut hi) = (0usize, self.count());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(self.key_unchecked_index(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// All (key, value) pairs in order, as [`Node::key`]/[`Node::value`] give them, reading each
    /// offset once: the fast path for full scans.
    #[inline]
    pub fn entries(&self) -> Entries<'a> {
        Entries {
            key_items: self.key_items(),
            key_offsets: self.key_offsets_bytes(),
            values: self.values(),
            value_offsets: self.value_offsets_bytes(),
            key_width: usize::from(self.layout.key_width),
            value_width: if self.is_leaf() {
                usize::from(self.layout.value_width)
            } else {
                ADDRESS_LEN
            },
            next: 0,
            end: self.count(),
        }
    }

    /// Keys `range` in order (clamped to the node), as [`Node::key`] gives them: one side of
    /// [`Node::entries`], for readers that decode a column at a time.
    #[inline]
    pub fn keys_in(&self, range: Range<usize>) -> Items<'a> {
        let end = range.end.min(self.count());
        Items {
            items: self.key_items(),
            offsets: self.key_offsets_bytes(),
            width: usize::from(self.layout.key_width),
            next: range.start.min(end),
            end,
        }
    }

    /// A leaf's values `range` in order (clamped to the node; none on internal nodes), as
    /// [`Node::value`] gives them.
    #[inline]
    pub fn values_in(&self, range: Range<usize>) -> Items<'a> {
        let end = if self.is_leaf() {
            range.end.min(self.count())
        } else {
            0
        };
        Items {
            items: self.values(),
            offsets: self.value_offsets_bytes(),
            width: usize::from(self.layout.value_width),
            next: range.start.min(end),
            end,
        }
    }

    /// Key offset `i` (0..=count), for callers that want item boundaries.
    #[inline]
    pub fn key_offset(&self, i: usize) -> usize {
        u16_at(self.key_offsets_bytes(), 2 * i).map_or(0, usize::from)
    }
}
