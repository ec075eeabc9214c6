//! `ProllyTreeNode` (`TUPM`): the verified view [`Node`] and the writer [`NodeWriter`].
//!
//! A leaf holds key and value tuples; an internal node holds the last key of each child, the
//! children's addresses and their row counts. See `schema/prolly.fbs`.

use std::cmp::Ordering;

#[cfg(test)]
use super::builder::Builder;
use super::direct::{message_bound, Back, Table, NUM_FIELDS as DIRECT_FIELDS};
use super::generated::serial::ProllyTreeNode;
use super::table::{u16_at, RootTable, VectorPos};
use super::{
    body_with_id, check_counts, check_input_offsets, check_offsets, put_counts, run_verifier,
    MessageError, FILE_ID_PROLLY,
};
use crate::tuple::{layout_is_valid, validate_layout};
use crate::varint::{decode_count_deltas_into, get_signed, put_signed, CountDeltas};
use crate::{Address, ADDRESS_LEN};

const TABLE: &str = "ProllyTreeNode";
const _: () = assert!(NUM_FIELDS == DIRECT_FIELDS);
const NUM_FIELDS: usize = 11;
const F_KEY_ITEMS: usize = 0;
const F_KEY_OFFSETS: usize = 1;
const F_KEY_TYPE: usize = 2;
const F_VALUE_ITEMS: usize = 3;
const F_VALUE_OFFSETS: usize = 4;
const F_VALUE_TYPE: usize = 5;
const F_VALUE_ADDRESS_OFFSETS: usize = 6;
const F_ADDRESS_ARRAY: usize = 7;
const F_SUBTREE_COUNTS: usize = 8;
const F_TREE_COUNT: usize = 9;
const F_TREE_LEVEL: usize = 10;
/// `ItemType::TupleFormatAlpha`: items are `val.Tuple`s.
const ITEM_TYPE_TUPLE: u8 = 1;

/// A byte range of the chunk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
struct Span {
    start: u32,
    len: u32,
}

impl Span {
    /// Converts a body vector position of `elem`-byte elements to a chunk byte range.
    fn of(v: Option<VectorPos>, elem: usize) -> Span {
        match v {
            None => Span::default(),
            // Positions fit in u32: bodies are shorter than 2^24 bytes.
            Some(v) => Span {
                start: (v.start + 4) as u32,
                len: (v.len * elem) as u32,
            },
        }
    }

    #[inline]
    fn slice<'a>(&self, chunk: &'a [u8]) -> &'a [u8] {
        let start = self.start as usize;
        chunk.get(start..start + self.len as usize).unwrap_or(&[])
    }
}

/// Where the parts of a verified node are: lets a cache keep nodes as (bytes, layout) and
/// re-create the view with [`Node::with_layout`] without verifying again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NodeLayout {
    key_items: Span,
    key_offsets: Span,
    /// Leaf: `value_items`; internal: `address_array`.
    values: Span,
    /// Leaf only.
    value_offsets: Span,
    value_address_offsets: Span,
    subtree_counts: Span,
    count: u32,
    level: u8,
    tree_count: u64,
    /// Length of every key if all keys are equally long and end with the same field count
    /// (see [`tuple_items_width`]); 0 otherwise. Lets searches and scans skip the offsets.
    key_width: u16,
    /// The same for leaf values (0 on internal nodes).
    value_width: u16,
}

/// A verified `ProllyTreeNode` chunk. Made only by [`Node::verify`] (or from a layout that
/// verification produced, [`Node::with_layout`]); all accessors are cheap and allocation-free.
#[derive(Clone, Copy, Debug)]
pub struct Node<'a> {
    chunk: &'a [u8],
    /// Where the parts are; slices are cut on access (a few instructions), which keeps the
    /// view small: cursors hold one per level and copy them around.
    layout: NodeLayout,
}

/// Item `i` of `items` delimited by the u16 offsets in `offsets`; empty if out of range (which
/// a verified node never is).
#[inline(always)]
fn item<'a>(items: &'a [u8], offsets: &[u8], i: usize) -> &'a [u8] {
    match offsets.get(2 * i..2 * i + 4) {
        Some(&[a, b, c, d]) => {
            let start = usize::from(u16::from_le_bytes([a, b]));
            let end = usize::from(u16::from_le_bytes([c, d]));
            items.get(start..end).unwrap_or(&[])
        }
        _ => &[],
    }
}

/// Item `i` of `items` when every item is `width` bytes long; empty if out of range.
#[inline(always)]
fn fixed_item(items: &[u8], width: usize, i: usize) -> &[u8] {
    items.get(i * width..(i + 1) * width).unwrap_or(&[])
}

impl<'a> Node<'a> {
    /// Verifies `chunk` (prefix, `TUPM`, FlatBuffers verifier, then the structure: offsets,
    /// counts, level consistency, embedded addresses, item types = tuples, and the layout of
    /// every key tuple and leaf value tuple) and returns the view. Afterwards every key and
    /// leaf value is a valid tuple, so tuple access on them never fails.
    pub fn verify(chunk: &'a [u8]) -> Result<Node<'a>, MessageError> {
        match Self::verify_with(chunk, Checks::Fast) {
            Ok(node) => Ok(node),
            // Report exactly what the step-by-step checks find first (the fast checks find
            // the same problems, in another order).
            Err(fast) => match Self::verify_with(chunk, Checks::Exact) {
                Err(exact) => Err(exact),
                Ok(_) => Err(fast),
            },
        }
    }

    /// Verification; `checks` selects fused single-pass item checks or the step-by-step order
    /// (every offsets vector in full, then the other fields, then each tuple) used for errors.
    #[inline(always)]
    fn verify_with(chunk: &'a [u8], checks: Checks) -> Result<Node<'a>, MessageError> {
        let check_offsets = |offsets: &[u8], items_len: usize, field: &'static str| match checks {
            Checks::Fast | Checks::Trusted => offsets_count(offsets, items_len, field),
            Checks::Exact => check_offsets(offsets, items_len, field),
        };
        let body = body_with_id(chunk, FILE_ID_PROLLY)?;
        if checks != Checks::Trusted {
            run_verifier::<ProllyTreeNode>(body, TABLE)?;
        }
        let t = RootTable::open(body, TABLE, NUM_FIELDS)?;

        let key_items = t.required_vector(F_KEY_ITEMS, 1, "key_items")?;
        let key_offsets = t.required_vector(F_KEY_OFFSETS, 2, "key_offsets")?;
        let key_type = t.u8(F_KEY_TYPE, "key_type")?;
        let value_items = t.vector(F_VALUE_ITEMS, 1, "value_items")?;
        let value_offsets = t.vector(F_VALUE_OFFSETS, 2, "value_offsets")?;
        let value_type = t.u8(F_VALUE_TYPE, "value_type")?;
        let vao = t.vector(F_VALUE_ADDRESS_OFFSETS, 2, "value_address_offsets")?;
        let address_array = t.vector(F_ADDRESS_ARRAY, 1, "address_array")?;
        let subtree_counts = t.vector(F_SUBTREE_COUNTS, 1, "subtree_counts")?;
        let tree_count = t.u64(F_TREE_COUNT, "tree_count")?;
        let level = t.u8(F_TREE_LEVEL, "tree_level")?;

        // Dolt writes TupleFormatAlpha on every node (leaf and internal). Requiring it makes
        // the tuple-layout guarantee unconditional: every key and leaf value is a valid tuple.
        for (field, value) in [("key_type", key_type), ("value_type", value_type)] {
            if value != ITEM_TYPE_TUPLE {
                return Err(MessageError::UnknownItemType { field, value });
            }
        }
        let key_items_s = Span::of(Some(key_items), 1);
        let key_offsets_s = Span::of(Some(key_offsets), 2);
        let count = check_offsets(key_offsets_s.slice(chunk), key_items.len, "key_offsets")?;
        let empty = |v: Option<VectorPos>| v.is_none_or(|v| v.len == 0);
        let unexpected = |field, reason| MessageError::UnexpectedField {
            table: TABLE,
            field,
            reason,
        };

        let layout = if level == 0 {
            let missing = |field| MessageError::MissingField {
                table: TABLE,
                field,
            };
            let vi = value_items.ok_or(missing("value_items"))?;
            let vo = value_offsets.ok_or(missing("value_offsets"))?;
            let values = Span::of(Some(vi), 1);
            let value_offsets_s = Span::of(Some(vo), 2);
            let n = check_offsets(value_offsets_s.slice(chunk), vi.len, "value_offsets")?;
            if n != count {
                return Err(MessageError::CountMismatch {
                    field: "value items (key items expected)",
                    expected: count as u64,
                    found: n as u64,
                });
            }
            if !empty(address_array) {
                return Err(unexpected("address_array", "a leaf has no children"));
            }
            if !empty(subtree_counts) {
                return Err(unexpected("subtree_counts", "a leaf has no children"));
            }
            if tree_count != count as u64 {
                return Err(MessageError::CountMismatch {
                    field: "tree_count of a leaf (items expected)",
                    expected: count as u64,
                    found: tree_count,
                });
            }
            let vao_s = Span::of(vao, 2);
            for (index, pair) in vao_s.slice(chunk).chunks_exact(2).enumerate() {
                let value = usize::from(u16::from_le_bytes([pair[0], pair[1]]));
                if value + ADDRESS_LEN > vi.len {
                    return Err(MessageError::BadOffset {
                        field: "value_address_offsets",
                        index,
                        value,
                        reason: "the 20-byte address would end past value_items",
                    });
                }
            }
            NodeLayout {
                key_items: key_items_s,
                key_offsets: key_offsets_s,
                values,
                value_offsets: value_offsets_s,
                value_address_offsets: vao_s,
                subtree_counts: Span::default(),
                count: count as u32,
                level,
                tree_count,
                key_width: 0,
                value_width: 0,
            }
        } else {
            if value_items.is_some() {
                return Err(unexpected("value_items", "internal nodes store addresses"));
            }
            if value_offsets.is_some() {
                return Err(unexpected(
                    "value_offsets",
                    "internal nodes store addresses",
                ));
            }
            if !empty(vao) {
                return Err(unexpected("value_address_offsets", "internal node"));
            }
            if count == 0 {
                return Err(MessageError::CountMismatch {
                    field: "children of an internal node (at least one)",
                    expected: 1,
                    found: 0,
                });
            }
            let aa = address_array.ok_or(MessageError::MissingField {
                table: TABLE,
                field: "address_array",
            })?;
            if aa.len != count * ADDRESS_LEN {
                return Err(MessageError::CountMismatch {
                    field: "address_array bytes (20 per child)",
                    expected: (count * ADDRESS_LEN) as u64,
                    found: aa.len as u64,
                });
            }
            let sc = subtree_counts.ok_or(MessageError::MissingField {
                table: TABLE,
                field: "subtree_counts",
            })?;
            let sc_s = Span::of(Some(sc), 1);
            if checks != Checks::Trusted {
                check_counts(sc_s.slice(chunk), count, tree_count, "subtree_counts")?;
            }
            NodeLayout {
                key_items: key_items_s,
                key_offsets: key_offsets_s,
                values: Span::of(Some(aa), 1),
                value_offsets: Span::default(),
                value_address_offsets: Span::default(),
                subtree_counts: sc_s,
                count: count as u32,
                level,
                tree_count,
                key_width: 0,
                value_width: 0,
            }
        };

        let mut node = Node::with_layout(chunk, layout);
        match checks {
            Checks::Trusted => {
                node.layout.key_width = items_width(node.key_items(), node.key_offsets_bytes());
                if level == 0 {
                    node.layout.value_width =
                        items_width(node.values(), node.value_offsets_bytes());
                }
            }
            Checks::Fast => {
                let keys = tuple_items_width(node.key_items(), node.key_offsets_bytes());
                let values = if level == 0 {
                    tuple_items_width(node.values(), node.value_offsets_bytes())
                } else {
                    Some(0)
                };
                if let (Some(k), Some(v)) = (keys, values) {
                    node.layout.key_width = k;
                    node.layout.value_width = v;
                } else {
                    return Err(MessageError::BadOffset {
                        field: "key_offsets",
                        index: 0,
                        value: 0,
                        reason: "items are not all valid tuples",
                    });
                }
            }
            Checks::Exact => {
                // (Only reports errors: its node is never returned, so no widths.)
                for i in 0..count {
                    validate_layout(node.key(i)).map_err(|source| MessageError::BadTuple {
                        field: "key_items",
                        index: i,
                        source,
                    })?;
                }
                if level == 0 {
                    for i in 0..count {
                        validate_layout(node.value(i)).map_err(|source| {
                            MessageError::BadTuple {
                                field: "value_items",
                                index: i,
                                source,
                            }
                        })?;
                    }
                }
            }
        }
        Ok(node)
    }

    /// The view of a chunk this process serialized itself with [`NodeWriter`], finding its
    /// parts without the checks that only catch corruption (the FlatBuffers verifier, every
    /// offset, tuple layouts, subtree counts): a store uses it for nodes a tree writer just
    /// put, instead of [`Node::verify`] on their first read. Memory-safe whatever the bytes
    /// (every accessor is bounds-checked); on bytes that are not a valid node, accessors may
    /// return empty or wrong items, so never use it for bytes read from outside.
    pub fn from_trusted(chunk: &'a [u8]) -> Result<Node<'a>, MessageError> {
        Self::verify_with(chunk, Checks::Trusted)
    }

    /// Re-creates the view of an already verified chunk from its cached layout. Memory-safe
    /// with any input: with a layout that does not belong to `chunk`, accessors return empty or
    /// wrong bytes but never read out of bounds.
    #[inline]
    pub fn with_layout(chunk: &'a [u8], layout: NodeLayout) -> Node<'a> {
        Node { chunk, layout }
    }

    /// The positions found by verification (for [`Node::with_layout`]).
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
    fn values(&self) -> &'a [u8] {
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

    /// Key offset `i` (0..=count), for callers that want item boundaries.
    #[inline]
    pub fn key_offset(&self, i: usize) -> usize {
        u16_at(self.key_offsets_bytes(), 2 * i).map_or(0, usize::from)
    }
}

/// The number of items of an offsets vector (n+1 u16 LE offsets), after the O(1) part of
/// [`check_offsets`]: at least one offset, the first 0, the last `items_len`. That the offsets
/// never decrease is checked by [`check_tuples`] while it walks the items; any failure is
/// reported by `check_offsets` itself, so errors are the same.
#[inline]
fn offsets_count(
    offsets: &[u8],
    items_len: usize,
    field: &'static str,
) -> Result<usize, MessageError> {
    let first = offsets.first_chunk::<2>().map(|b| u16::from_le_bytes(*b));
    let last = offsets
        .last_chunk::<2>()
        .map(|b| usize::from(u16::from_le_bytes(*b)));
    if first == Some(0) && last == Some(items_len) && offsets.len().is_multiple_of(2) {
        return Ok(offsets.len() / 2 - 1);
    }
    check_offsets(offsets, items_len, field)
}

/// The common length of the items delimited by `offsets` if all are equally long (at least
/// 2 bytes) and end with the same two bytes, else 0: [`tuple_items_width`] without the tuple
/// checks, for trusted nodes.
fn items_width(items: &[u8], offsets: &[u8]) -> u16 {
    let mut rest = offsets;
    let Some(first) = next_item(items, &mut rest) else {
        return 0;
    };
    let (width, tail) = (first.len(), first.last_chunk::<2>().copied());
    let mut uniform = width >= 2;
    let mut seen = 1usize;
    while let Some(item) = next_item(items, &mut rest) {
        uniform &= item.len() == width && item.last_chunk::<2>().copied() == tail;
        seen += 1;
    }
    if uniform && seen + 1 == offsets.len() / 2 {
        u16::try_from(width).unwrap_or(0)
    } else {
        0
    }
}

/// The item whose start and end are the first two u16 LE offsets of `offsets`, which then
/// moves on by one offset; `None` when fewer than two remain or they do not delimit `items`.
#[inline(always)]
fn next_item<'a>(items: &'a [u8], offsets: &mut &[u8]) -> Option<&'a [u8]> {
    let (start, rest) = offsets.split_first_chunk::<2>()?;
    let end = rest.first_chunk::<2>()?;
    let (start, end) = (u16::from_le_bytes(*start), u16::from_le_bytes(*end));
    *offsets = rest;
    items.get(usize::from(start)..usize::from(end))
}

/// Walks the items delimited by `offsets` (whose ends [`offsets_count`] checked) once. `None`
/// unless every offset pair delimits a slice of `items` (so the offsets never decrease) and
/// every item is a valid tuple layout ([`layout_is_valid`]). Otherwise the items' common
/// length if all are equally long and end with the same two bytes (for tuples: the same field
/// count), else `Some(0)`: with a common length, item `i` is at `i * width` and searches and
/// scans need not read the offsets.
#[inline]
fn tuple_items_width(items: &[u8], offsets: &[u8]) -> Option<u16> {
    let mut rest = offsets;
    let mut seen = 0usize;
    let mut width = None;
    let mut tail = [0u8; 2];
    let mut uniform = true;
    while let Some(item) = next_item(items, &mut rest) {
        if !layout_is_valid(item) {
            return None;
        }
        // `layout_is_valid` implies at least the 2-byte field count.
        let t = item.last_chunk::<2>().copied().unwrap_or_default();
        match width {
            None => {
                width = Some(item.len());
                tail = t;
            }
            Some(w) => uniform &= w == item.len() && t == tail,
        }
        seen += 1;
    }
    if seen + 1 != offsets.len() / 2 {
        return None;
    }
    match width {
        Some(w) if uniform => Some(u16::try_from(w).unwrap_or(0)),
        _ => Some(0),
    }
}

/// Whether the fused and the step-by-step verification accept and reject the same chunks (for
/// the corruption tests).
#[cfg(test)]
pub(super) fn verify_checks_agree(chunk: &[u8]) -> bool {
    Node::verify_with(chunk, Checks::Fast).is_ok()
        == Node::verify_with(chunk, Checks::Exact).is_ok()
}

/// Which checks [`Node::verify_with`] runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Checks {
    /// Offsets' ends only, then one fused pass over offsets and tuple layouts.
    Fast,
    /// Each offsets vector in full where it is read, then each tuple with its own error.
    Exact,
    /// Only what finding the parts needs (see [`Node::from_trusted`]).
    Trusted,
}

/// Rows under each item of a node, in order (see [`Node::subtree_counts`]).
#[derive(Clone, Debug)]
pub struct SubtreeCounts<'a> {
    deltas: Option<CountDeltas<'a>>,
    remaining: usize,
}

impl<'a> SubtreeCounts<'a> {
    /// `n` counts of 1 (leaf items).
    pub(crate) fn ones(n: usize) -> Self {
        SubtreeCounts {
            deltas: None,
            remaining: n,
        }
    }

    /// `n` counts decoded from varint deltas.
    pub(crate) fn decode(bytes: &'a [u8], n: usize) -> Self {
        SubtreeCounts {
            deltas: Some(CountDeltas::new(bytes)),
            remaining: n,
        }
    }
}

impl Iterator for SubtreeCounts<'_> {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        match &mut self.deltas {
            None => Some(1),
            Some(d) => match d.next() {
                Some(Ok(c)) => Some(c),
                _ => {
                    // Only reachable through a misused layout.
                    self.remaining = 0;
                    None
                }
            },
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.remaining))
    }
}

/// The parts of a leaf node for [`NodeWriter::write_leaf`]. Offsets have n+1 entries from 0.
#[derive(Clone, Copy, Debug, Default)]
pub struct LeafInput<'a> {
    /// Key tuples, concatenated.
    pub key_items: &'a [u8],
    /// n+1 boundaries into `key_items`.
    pub key_offsets: &'a [u16],
    /// Value tuples, concatenated.
    pub value_items: &'a [u8],
    /// n+1 boundaries into `value_items`.
    pub value_offsets: &'a [u16],
    /// Positions of embedded 20-byte addresses in `value_items`, in Dolt's order (tuples in
    /// order; within a tuple, adaptive fields then address fields, each last column first).
    /// Empty => the vector is left out, as Dolt does.
    pub value_address_offsets: &'a [u16],
}

/// The parts of an internal node for [`NodeWriter::write_internal`].
#[derive(Clone, Copy, Debug, Default)]
pub struct InternalInput<'a> {
    /// The last key of each child, concatenated.
    pub key_items: &'a [u8],
    /// n+1 boundaries into `key_items`.
    pub key_offsets: &'a [u16],
    /// n × 20 bytes of child addresses.
    pub child_addresses: &'a [u8],
    /// Rows under each child.
    pub subtree_counts: &'a [u64],
    /// Level of this node (≥ 1).
    pub level: u8,
}

/// Writes `ProllyTreeNode` chunks byte-identical to Dolt's. Reuse one writer: its buffers are
/// kept, so steady-state writing allocates nothing.
#[derive(Debug, Default)]
pub struct NodeWriter {
    /// The general builder: only the tests' reference writer uses it.
    #[cfg(test)]
    builder: Builder,
    /// The chunk being written (filled from the back by [`direct::Back`]).
    buf: Vec<u8>,
    /// Encoded subtree counts of the internal node being written.
    counts: Vec<u8>,
    /// Decoded subtree counts and child addresses ([`NodeWriter::write_internal_replacing_many`]).
    count_values: Vec<u64>,
    addresses: Vec<u8>,
}

impl NodeWriter {
    /// A writer with empty buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Writes a leaf; returns the whole chunk (prefix included).
    pub fn write_leaf(&mut self, input: &LeafInput) -> Result<&[u8], MessageError> {
        let n = check_leaf_input(input)?;
        write_leaf_vectors(Back::new(&mut self.buf, leaf_contents(input)), input, n)
    }

    /// The room [`NodeWriter::write_leaf_into`] needs for `input`: an upper bound of its
    /// chunk's length (a few dozen bytes over it).
    pub fn leaf_bound(input: &LeafInput) -> usize {
        message_bound(leaf_contents(input))
    }

    /// [`NodeWriter::write_leaf`] straight into `dst` (for example memory a store lends), which
    /// must be at least [`NodeWriter::leaf_bound`] long: the chunk is written at the end of
    /// `dst`, and its start there is returned (`dst[start..]` is the chunk; the bytes before
    /// it are left as they were). The same bytes as `write_leaf`, without the copy out of the
    /// writer's buffer.
    pub fn write_leaf_into(input: &LeafInput, dst: &mut [u8]) -> Result<usize, MessageError> {
        let n = check_leaf_input(input)?;
        if dst.len() < Self::leaf_bound(input) {
            return Err(MessageError::BadInput {
                field: "dst",
                reason: "must be at least leaf_bound long",
            });
        }
        let len = dst.len();
        let chunk = write_leaf_vectors(Back::over(dst), input, n)?;
        Ok(len - chunk.len())
    }

    /// [`NodeWriter::write_leaf`] through the general builder: the reference the direct
    /// writer is tested against.
    #[cfg(test)]
    pub(crate) fn write_leaf_reference(
        &mut self,
        input: &LeafInput,
    ) -> Result<&[u8], MessageError> {
        let n = input.key_offsets.len() - 1;
        let b = &mut self.builder;
        b.reset();
        let key_items = b.create_byte_vector(input.key_items);
        let key_offsets = b.create_u16_vector(input.key_offsets);
        let value_items = b.create_byte_vector(input.value_items);
        let value_offsets = b.create_u16_vector(input.value_offsets);
        let vao = if input.value_address_offsets.is_empty() {
            0
        } else {
            b.create_u16_vector(input.value_address_offsets)
        };
        b.start_object(NUM_FIELDS);
        b.add_offset(F_KEY_ITEMS, key_items);
        b.add_offset(F_KEY_OFFSETS, key_offsets);
        b.add_offset(F_VALUE_ITEMS, value_items);
        b.add_offset(F_VALUE_OFFSETS, value_offsets);
        b.add_u64(F_TREE_COUNT, n as u64, 0);
        b.add_offset(F_VALUE_ADDRESS_OFFSETS, vao);
        b.add_u8(F_KEY_TYPE, ITEM_TYPE_TUPLE, 0);
        b.add_u8(F_VALUE_TYPE, ITEM_TYPE_TUPLE, 0);
        b.add_u8(F_TREE_LEVEL, 0, 0);
        let root = b.end_object();
        b.finish_message(root, FILE_ID_PROLLY)
    }

    /// Writes an internal node; returns the whole chunk (prefix included).
    pub fn write_internal(&mut self, input: &InternalInput) -> Result<&[u8], MessageError> {
        let n = check_input_offsets(input.key_offsets, input.key_items.len(), "key_offsets")?;
        if input.level == 0 {
            return Err(MessageError::BadInput {
                field: "level",
                reason: "internal nodes have level >= 1",
            });
        }
        if input.child_addresses.len() != n * ADDRESS_LEN {
            return Err(MessageError::BadInput {
                field: "child_addresses",
                reason: "must hold 20 bytes per key",
            });
        }
        if input.subtree_counts.len() != n {
            return Err(MessageError::BadInput {
                field: "subtree_counts",
                reason: "must hold one count per key",
            });
        }
        let total = put_counts(&mut self.counts, input.subtree_counts, "subtree_counts")?;
        let contents = input.key_items.len()
            + 2 * input.key_offsets.len()
            + input.child_addresses.len()
            + self.counts.len();
        let mut w = Back::new(&mut self.buf, contents);
        let key_items = w.byte_vector(input.key_items);
        let key_offsets = w.u16_vector(input.key_offsets);
        let addresses = w.byte_vector(input.child_addresses);
        let counts = w.byte_vector(&self.counts);
        finish_internal(
            w,
            [key_items, key_offsets, addresses, counts],
            total,
            input.level,
        )
    }

    /// Writes leaf `node` again with the value of item `i` replaced by `value`, which is as
    /// long as the old one: the chunk [`NodeWriter::write_leaf`] gives for the leaf's items
    /// with that one change, made from the leaf's stored vectors. An update that keeps the
    /// value's length changes its leaf just so (same keys, same sizes, so the same
    /// boundaries). The leaf's positions of embedded addresses are kept as they are, so the
    /// caller must know they do not change (the leaf has none, or the new value has its
    /// addresses where the old one had them).
    pub fn write_leaf_replacing(
        &mut self,
        node: &Node<'_>,
        i: usize,
        value: &[u8],
    ) -> Result<&[u8], MessageError> {
        let n = node.count();
        if !node.is_leaf() {
            return Err(MessageError::BadInput {
                field: "node",
                reason: "must be a leaf",
            });
        }
        if i >= n {
            return Err(MessageError::BadInput {
                field: "i",
                reason: "must index one of the leaf's items",
            });
        }
        let value_offsets = node.value_offsets_bytes();
        let start = u16_at(value_offsets, 2 * i).map_or(0, usize::from);
        let end = u16_at(value_offsets, 2 * i + 2).map_or(0, usize::from);
        if end.checked_sub(start) != Some(value.len()) {
            return Err(MessageError::BadInput {
                field: "value",
                reason: "must be as long as the value it replaces",
            });
        }
        let (key_items, key_offsets) = (node.key_items(), node.key_offsets_bytes());
        let value_items = node.value_items();
        if end > value_items.len() {
            // Only a view made without checks (`Node::from_trusted`) of bytes that are not
            // a node gets here.
            return Err(MessageError::BadInput {
                field: "node",
                reason: "its value offsets point past its value items",
            });
        }
        let vao = node.layout.value_address_offsets.slice(node.chunk);
        let contents = key_items.len()
            + key_offsets.len()
            + value_items.len()
            + value_offsets.len()
            + vao.len();
        let mut w = Back::new(&mut self.buf, contents);
        let key_items = w.byte_vector(key_items);
        let key_offsets = w.u16_vector_le(key_offsets);
        let value_items = w.byte_vector_patched(value_items, start, value);
        let value_offsets = w.u16_vector_le(value_offsets);
        let vao = if vao.is_empty() {
            0
        } else {
            w.u16_vector_le(vao)
        };
        finish_leaf(
            w,
            [key_items, key_offsets, value_items, value_offsets, vao],
            n,
        )
    }

    /// Writes internal node `node` again with child `i` replaced by `child`, whose subtree
    /// count is now `count`: the chunk [`NodeWriter::write_internal`] gives for the node's
    /// items with that one change, made from the node's stored vectors without decoding its
    /// keys and offsets, and the node's new tree count. An edit that rewrote one child without
    /// moving any boundary changes its parent just so (same keys, same sizes, so the same
    /// boundaries).
    ///
    /// The counts are stored as deltas between neighbours, so only the deltas of children `i`
    /// and `i + 1` change; they are re-encoded and the rest copied as it is (decoding and
    /// encoding every count had cost about 5% of a single edit).
    pub fn write_internal_replacing(
        &mut self,
        node: &Node<'_>,
        i: usize,
        child: &Address,
        count: u64,
    ) -> Result<(&[u8], u64), MessageError> {
        let n = internal_count(node)?;
        if i >= n {
            return Err(MessageError::BadInput {
                field: "i",
                reason: "must index one of the node's children",
            });
        }
        let total = self.replace_count(node, i, count)?;
        let addresses = node_addresses(node)?;
        let chunk = write_internal_with(
            &mut self.buf,
            node,
            Patched {
                bytes: addresses,
                at: i * ADDRESS_LEN,
                patch: child.as_bytes(),
            },
            &self.counts,
            total,
        )?;
        Ok((chunk, total))
    }

    /// [`NodeWriter::write_internal_replacing`] for several children at once: `children`
    /// lists `(index, new address, new subtree count)` in increasing index order. The counts
    /// are decoded, changed and encoded again; everything else is copied from the node.
    pub fn write_internal_replacing_many(
        &mut self,
        node: &Node<'_>,
        children: &[(usize, Address, u64)],
    ) -> Result<(&[u8], u64), MessageError> {
        let n = internal_count(node)?;
        if children.windows(2).any(|w| w[0].0 >= w[1].0)
            || children.last().is_some_and(|c| c.0 >= n)
        {
            return Err(MessageError::BadInput {
                field: "children",
                reason: "must index the node's children in increasing order",
            });
        }
        self.count_values.clear();
        if !decode_count_deltas_into(node.subtree_counts_bytes(), &mut self.count_values)
            || self.count_values.len() != n
        {
            return Err(MessageError::BadInput {
                field: "node",
                reason: "its subtree counts do not decode to one per child",
            });
        }
        self.addresses.clear();
        self.addresses.extend_from_slice(node_addresses(node)?);
        for &(i, child, count) in children {
            self.count_values[i] = count;
            self.addresses[i * ADDRESS_LEN..(i + 1) * ADDRESS_LEN]
                .copy_from_slice(child.as_bytes());
        }
        let total = put_counts(&mut self.counts, &self.count_values, "children")?;
        let chunk = write_internal_with(
            &mut self.buf,
            node,
            Patched {
                bytes: &self.addresses,
                at: 0,
                patch: &[],
            },
            &self.counts,
            total,
        )?;
        Ok((chunk, total))
    }

    /// Puts `node`'s subtree counts with count `i` replaced by `count` into `self.counts`
    /// (zig-zag varint deltas, as [`crate::varint::put_count_deltas`] writes them); returns the new total.
    /// Decodes the deltas up to child `i + 1` only, and checks that the bytes after them hold
    /// one varint per remaining child.
    fn replace_count(
        &mut self,
        node: &Node<'_>,
        i: usize,
        count: u64,
    ) -> Result<u64, MessageError> {
        let bad = || MessageError::BadInput {
            field: "node",
            reason: "its subtree counts do not decode to one per child",
        };
        let bytes = node.subtree_counts_bytes();
        // Sibling counts are close, so most deltas take one byte: those are read inline.
        let delta_at = |pos: usize| match bytes.get(pos) {
            Some(&b) if b < 0x80 => Ok((i64::from(b >> 1) ^ -i64::from(b & 1), 1)),
            _ => get_signed(bytes.get(pos..).unwrap_or(&[])).ok_or_else(bad),
        };
        // `before` is count `k - 1` while delta `k` is read; `old` ends as count `i`.
        let (mut pos, mut before, mut old, mut i_start) = (0usize, 0u64, 0u64, 0usize);
        for k in 0..=i {
            let (delta, used) = delta_at(pos)?;
            if k == i {
                i_start = pos;
                old = before.wrapping_add(delta as u64);
            } else {
                before = before.wrapping_add(delta as u64);
            }
            pos += used;
        }
        let after = if i + 1 < node.count() {
            let (delta, used) = delta_at(pos)?;
            pos += used;
            Some(old.wrapping_add(delta as u64))
        } else {
            None
        };
        let rest = bytes.get(pos..).unwrap_or(&[]);
        // A varint ends at its first byte below 0x80, so the rest holds one per child if it
        // has that many such bytes and ends with one.
        let remaining = node.count().saturating_sub(i + 2);
        if rest.iter().filter(|&&b| b < 0x80).count() != remaining
            || rest.last().is_some_and(|&b| b >= 0x80)
        {
            return Err(bad());
        }
        let total = node
            .tree_count()
            .checked_sub(old)
            .and_then(|t| t.checked_add(count))
            .ok_or(MessageError::BadInput {
                field: "count",
                reason: "the node's total overflows u64 (or is less than its counts)",
            })?;
        self.counts.clear();
        self.counts
            .extend_from_slice(bytes.get(..i_start).unwrap_or(&[]));
        put_signed(&mut self.counts, count.wrapping_sub(before) as i64);
        if let Some(next) = after {
            put_signed(&mut self.counts, next.wrapping_sub(count) as i64);
        }
        self.counts.extend_from_slice(rest);
        Ok(total)
    }

    /// [`NodeWriter::write_internal`] through the general builder: the reference the direct
    /// writer is tested against.
    #[cfg(test)]
    pub(crate) fn write_internal_reference(
        &mut self,
        input: &InternalInput,
    ) -> Result<&[u8], MessageError> {
        let total: u64 = input.subtree_counts.iter().sum();
        self.counts.clear();
        crate::varint::put_count_deltas(&mut self.counts, input.subtree_counts.iter().copied());
        let b = &mut self.builder;
        b.reset();
        let key_items = b.create_byte_vector(input.key_items);
        let key_offsets = b.create_u16_vector(input.key_offsets);
        let addresses = b.create_byte_vector(input.child_addresses);
        let counts = b.create_byte_vector(&self.counts);
        b.start_object(NUM_FIELDS);
        b.add_offset(F_KEY_ITEMS, key_items);
        b.add_offset(F_KEY_OFFSETS, key_offsets);
        b.add_offset(F_ADDRESS_ARRAY, addresses);
        b.add_offset(F_SUBTREE_COUNTS, counts);
        b.add_u64(F_TREE_COUNT, total, 0);
        b.add_u8(F_KEY_TYPE, ITEM_TYPE_TUPLE, 0);
        b.add_u8(F_VALUE_TYPE, ITEM_TYPE_TUPLE, 0);
        b.add_u8(F_TREE_LEVEL, input.level, 0);
        let root = b.end_object();
        b.finish_message(root, FILE_ID_PROLLY)
    }
}

/// The child count of `node`, refused if it is a leaf (for the in-place internal writers).
fn internal_count(node: &Node<'_>) -> Result<usize, MessageError> {
    if node.is_leaf() {
        return Err(MessageError::BadInput {
            field: "node",
            reason: "must be an internal node",
        });
    }
    Ok(node.count())
}

/// Bytes with `patch` written over them from `at` on (`at + patch.len() <= bytes.len()`).
struct Patched<'a> {
    bytes: &'a [u8],
    at: usize,
    patch: &'a [u8],
}

/// The address array of internal node `node`, checked to hold 20 bytes per child (only an
/// unchecked view of bytes that are not a node can fail).
fn node_addresses<'a>(node: &Node<'a>) -> Result<&'a [u8], MessageError> {
    let addresses = node.address_array();
    if addresses.len() != node.count() * ADDRESS_LEN {
        return Err(MessageError::BadInput {
            field: "node",
            reason: "its address array does not hold 20 bytes per child",
        });
    }
    Ok(addresses)
}

/// Writes internal node `node` into `buf` with its keys and key offsets as stored, the child
/// addresses `addresses` and the encoded subtree counts `counts`, totalling `total`.
fn write_internal_with<'b>(
    buf: &'b mut Vec<u8>,
    node: &Node<'_>,
    addresses: Patched<'_>,
    counts: &[u8],
    total: u64,
) -> Result<&'b [u8], MessageError> {
    let (key_items, key_offsets) = (node.key_items(), node.key_offsets_bytes());
    let contents = key_items.len() + key_offsets.len() + addresses.bytes.len() + counts.len();
    let mut w = Back::new(buf, contents);
    let key_items = w.byte_vector(key_items);
    let key_offsets = w.u16_vector_le(key_offsets);
    let addresses = w.byte_vector_patched(addresses.bytes, addresses.at, addresses.patch);
    let counts = w.byte_vector(counts);
    finish_internal(
        w,
        [key_items, key_offsets, addresses, counts],
        total,
        node.level(),
    )
}

/// Checks a leaf's input arrays against each other; returns its item count.
fn check_leaf_input(input: &LeafInput) -> Result<usize, MessageError> {
    let n = check_input_offsets(input.key_offsets, input.key_items.len(), "key_offsets")?;
    let nv = check_input_offsets(
        input.value_offsets,
        input.value_items.len(),
        "value_offsets",
    )?;
    if n != nv {
        return Err(MessageError::BadInput {
            field: "value_offsets",
            reason: "must have as many entries as key_offsets",
        });
    }
    if input
        .value_address_offsets
        .iter()
        .any(|&o| usize::from(o) + ADDRESS_LEN > input.value_items.len())
    {
        return Err(MessageError::BadInput {
            field: "value_address_offsets",
            reason: "an address would end past value_items",
        });
    }
    Ok(n)
}

/// The bytes of a leaf's vectors.
fn leaf_contents(input: &LeafInput) -> usize {
    input.key_items.len()
        + input.value_items.len()
        + 2 * (input.key_offsets.len()
            + input.value_offsets.len()
            + input.value_address_offsets.len())
}

/// Writes the leaf `input` (checked, `n` items) into `w`; returns the chunk.
fn write_leaf_vectors<'b>(
    mut w: Back<'b>,
    input: &LeafInput,
    n: usize,
) -> Result<&'b [u8], MessageError> {
    let key_items = w.byte_vector(input.key_items);
    let key_offsets = w.u16_vector(input.key_offsets);
    let value_items = w.byte_vector(input.value_items);
    let value_offsets = w.u16_vector(input.value_offsets);
    let vao = if input.value_address_offsets.is_empty() {
        0
    } else {
        w.u16_vector(input.value_address_offsets)
    };
    finish_leaf(
        w,
        [key_items, key_offsets, value_items, value_offsets, vao],
        n,
    )
}

/// The table of a leaf whose vectors `w` holds (`key_items`, `key_offsets`, `value_items`,
/// `value_offsets`, `value_address_offsets`; 0 for a vector left out), of `n` items.
fn finish_leaf(w: Back<'_>, vectors: [u32; 5], n: usize) -> Result<&[u8], MessageError> {
    let [key_items, key_offsets, value_items, value_offsets, vao] = vectors;
    let mut t = Table::start(w);
    t.offset(F_KEY_ITEMS, key_items);
    t.offset(F_KEY_OFFSETS, key_offsets);
    t.offset(F_VALUE_ITEMS, value_items);
    t.offset(F_VALUE_OFFSETS, value_offsets);
    t.u64(F_TREE_COUNT, n as u64);
    t.offset(F_VALUE_ADDRESS_OFFSETS, vao);
    t.u8(F_KEY_TYPE, ITEM_TYPE_TUPLE);
    t.u8(F_VALUE_TYPE, ITEM_TYPE_TUPLE);
    t.finish(FILE_ID_PROLLY)
}

/// The table of an internal node whose vectors `w` holds (`key_items`, `key_offsets`,
/// `address_array`, `subtree_counts`), with `total` rows under it.
fn finish_internal(
    w: Back<'_>,
    vectors: [u32; 4],
    total: u64,
    level: u8,
) -> Result<&[u8], MessageError> {
    let [key_items, key_offsets, addresses, counts] = vectors;
    let mut t = Table::start(w);
    t.offset(F_KEY_ITEMS, key_items);
    t.offset(F_KEY_OFFSETS, key_offsets);
    t.offset(F_ADDRESS_ARRAY, addresses);
    t.offset(F_SUBTREE_COUNTS, counts);
    t.u64(F_TREE_COUNT, total);
    t.u8(F_KEY_TYPE, ITEM_TYPE_TUPLE);
    t.u8(F_VALUE_TYPE, ITEM_TYPE_TUPLE);
    t.u8(F_TREE_LEVEL, level);
    t.finish(FILE_ID_PROLLY)
}

/// Iterator over a node's (key, value) pairs (see [`Node::entries`]).
///
/// Keeps one index: each pair is found from it by the node's common key and value widths
/// where it has them (no offsets read), else from the offsets. One counter is all the state
/// a step updates. The default value is empty.
#[derive(Clone, Debug, Default)]
pub struct Entries<'a> {
    key_items: &'a [u8],
    key_offsets: &'a [u8],
    /// Leaf: the value items; internal: the child addresses.
    values: &'a [u8],
    /// Leaf: the value offsets (unused on internal nodes).
    value_offsets: &'a [u8],
    /// Length of every key, or 0 to read the offsets.
    key_width: usize,
    /// The same for values (always 20 on internal nodes).
    value_width: usize,
    /// Index of the next pair.
    next: usize,
    /// One past the last pair.
    end: usize,
}

impl<'a> Entries<'a> {
    /// The pair at `i` (`i < end`).
    #[inline(always)]
    fn pair(&self, i: usize) -> (&'a [u8], &'a [u8]) {
        let key = match self.key_width {
            0 => item(self.key_items, self.key_offsets, i),
            w => fixed_item(self.key_items, w, i),
        };
        let value = match self.value_width {
            0 => item(self.values, self.value_offsets, i),
            w => fixed_item(self.values, w, i),
        };
        (key, value)
    }

    /// Skips `n` pairs.
    #[inline]
    pub fn skip_pairs(&mut self, n: usize) {
        self.next = self.next.saturating_add(n).min(self.end);
    }

    /// Keeps at most the next `n` pairs (like `Vec::truncate` on what is left).
    #[inline]
    pub fn truncate(&mut self, n: usize) {
        self.end = self.next.saturating_add(n).min(self.end);
    }

    /// On a node whose keys all have one width and whose values all have one width: the bytes
    /// of the pairs not yet returned, as `(keys, key width, values, value width)`, each slice
    /// a whole number of items. `None` on other nodes (or a layout that does not fit).
    #[inline]
    pub fn fixed_parts(&self) -> Option<(&'a [u8], usize, &'a [u8], usize)> {
        let (kw, vw) = (self.key_width, self.value_width);
        if kw == 0 || vw == 0 {
            return None;
        }
        let keys = self.key_items.get(self.next * kw..self.end * kw)?;
        let values = self.values.get(self.next * vw..self.end * vw)?;
        Some((keys, kw, values, vw))
    }
}

impl<'a> Iterator for Entries<'a> {
    type Item = (&'a [u8], &'a [u8]);

    /// The next pair: exactly `(key(i), value(i))` (on a layout that does not belong to the
    /// chunk, empty or wrong bytes, never an out-of-bounds read).
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.end {
            return None;
        }
        let i = self.next;
        self.next += 1;
        Some(self.pair(i))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.end - self.next;
        (n, Some(n))
    }

    #[inline]
    fn fold<B, F: FnMut(B, Self::Item) -> B>(mut self, init: B, mut f: F) -> B {
        let mut acc = init;
        let (kw, vw) = (self.key_width, self.value_width);
        if kw != 0 && vw != 0 {
            // Common widths: walk both arrays in fixed steps, no offsets and no index math.
            let keys = self
                .key_items
                .get(self.next * kw..self.end * kw)
                .unwrap_or(&[]);
            let values = self
                .values
                .get(self.next * vw..self.end * vw)
                .unwrap_or(&[]);
            for pair in keys.chunks_exact(kw).zip(values.chunks_exact(vw)) {
                acc = f(acc, pair);
            }
            return acc;
        }
        while self.next < self.end {
            let i = self.next;
            self.next += 1;
            acc = f(acc, self.pair(i));
        }
        acc
    }
}

impl ExactSizeIterator for Entries<'_> {}

#[cfg(test)]
mod width_tests {
    use super::*;

    /// A one-field tuple holding `data` (bytes, then the count).
    fn tuple(data: &[u8]) -> Vec<u8> {
        let mut t = data.to_vec();
        t.extend_from_slice(&1u16.to_le_bytes());
        t
    }

    fn leaf(keys: &[Vec<u8>], values: &[Vec<u8>]) -> Vec<u8> {
        let concat = |items: &[Vec<u8>]| -> (Vec<u8>, Vec<u16>) {
            let mut bytes = Vec::new();
            let mut offsets = vec![0u16];
            for i in items {
                bytes.extend_from_slice(i);
                offsets.push(bytes.len() as u16);
            }
            (bytes, offsets)
        };
        let (ki, ko) = concat(keys);
        let (vi, vo) = concat(values);
        let mut w = NodeWriter::new();
        w.write_leaf(&LeafInput {
            key_items: &ki,
            key_offsets: &ko,
            value_items: &vi,
            value_offsets: &vo,
            value_address_offsets: &[],
        })
        .expect("leaf")
        .to_vec()
    }

    /// Fixed-width items are found as such, and every accessor gives the same items as the
    /// offsets do, whatever the widths.
    #[test]
    fn widths_are_detected_and_accessors_agree() {
        let fixed: Vec<Vec<u8>> = (0u8..9).map(|i| tuple(&[i, i, i])).collect();
        let ragged: Vec<Vec<u8>> = (0u8..9)
            .map(|i| tuple(&vec![i; usize::from(i % 3)]))
            .collect();
        // Same length, different field counts: not uniform.
        let mut counts = fixed.clone();
        // Two fields: data [7], the offset 0 of field 1, the count 2.
        counts[4] = vec![7, 0, 0, 2, 0];
        for (keys, values, kw, vw) in [
            (&fixed, &fixed, Some(5), Some(5)),
            (&fixed, &ragged, Some(5), None),
            (&ragged, &fixed, None, Some(5)),
            (&fixed, &counts, Some(5), None),
        ] {
            let chunk = leaf(keys, values);
            let node = Node::verify(&chunk).expect("verifies");
            assert_eq!((node.key_width(), node.value_width()), (kw, vw));
            let trusted = Node::from_trusted(&chunk).expect("parses");
            assert_eq!(trusted.layout(), node.layout());
            let pairs: Vec<_> = node.entries().collect();
            assert_eq!(pairs.len(), keys.len());
            let folded = node.entries().fold(Vec::new(), |mut v, p| {
                v.push(p);
                v
            });
            assert_eq!(folded, pairs);
            for (i, (k, v)) in pairs.iter().enumerate() {
                assert_eq!((*k, *v), (&keys[i][..], &values[i][..]));
                assert_eq!((node.key(i), node.value(i)), (*k, *v));
            }
            let mut skipped = node.entries();
            skipped.skip_pairs(3);
            assert_eq!(skipped.len(), keys.len() - 3);
            assert_eq!(skipped.next(), Some(pairs[3]));
        }
    }
}
