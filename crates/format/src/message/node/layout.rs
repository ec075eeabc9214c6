//! The `ProllyTreeNode` table's fields, and [`NodeLayout`]: where a verified node's parts are
//! in its chunk.

use super::super::direct::NUM_FIELDS as DIRECT_FIELDS;
use super::super::table::VectorPos;

pub(super) const TABLE: &str = "ProllyTreeNode";
const _: () = assert!(NUM_FIELDS == DIRECT_FIELDS);
pub(super) const NUM_FIELDS: usize = 11;
pub(super) const F_KEY_ITEMS: usize = 0;
pub(super) const F_KEY_OFFSETS: usize = 1;
pub(super) const F_KEY_TYPE: usize = 2;
pub(super) const F_VALUE_ITEMS: usize = 3;
pub(super) const F_VALUE_OFFSETS: usize = 4;
pub(super) const F_VALUE_TYPE: usize = 5;
pub(super) const F_VALUE_ADDRESS_OFFSETS: usize = 6;
pub(super) const F_ADDRESS_ARRAY: usize = 7;
pub(super) const F_SUBTREE_COUNTS: usize = 8;
pub(super) const F_TREE_COUNT: usize = 9;
pub(super) const F_TREE_LEVEL: usize = 10;
/// `ItemType::TupleFormatAlpha`: items are `val.Tuple`s.
pub(super) const ITEM_TYPE_TUPLE: u8 = 1;

/// A byte range of the chunk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(super) struct Span {
    start: u32,
    len: u32,
}

impl Span {
    /// Converts a body vector position of `elem`-byte elements to a chunk byte range.
    pub(super) fn of(v: Option<VectorPos>, elem: usize) -> Span {
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
    pub(super) fn slice<'a>(&self, chunk: &'a [u8]) -> &'a [u8] {
        let start = self.start as usize;
        chunk.get(start..start + self.len as usize).unwrap_or(&[])
    }
}

/// Where the parts of a verified node are: lets a cache keep nodes as (bytes, layout) and
/// re-create the view with [`Node::from_verified`](super::Node::from_verified) without
/// verifying again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NodeLayout {
    pub(super) key_items: Span,
    pub(super) key_offsets: Span,
    /// Leaf: `value_items`; internal: `address_array`.
    pub(super) values: Span,
    /// Leaf only.
    pub(super) value_offsets: Span,
    pub(super) value_address_offsets: Span,
    pub(super) subtree_counts: Span,
    pub(super) count: u32,
    pub(super) level: u8,
    pub(super) tree_count: u64,
    /// Length of every key if all keys are equally long and end with the same field count
    /// (see `verify::tuple_items_width`); 0 otherwise. Lets searches and scans skip the offsets.
    pub(super) key_width: u16,
    /// The same for leaf values (0 on internal nodes).
    pub(super) value_width: u16,
}
