//! How a [`Node`] is made from bytes: [`Node::verify`] for any bytes, and the view without
//! the corruption checks for chunks this process's [`NodeWriter`](super::NodeWriter) wrote.

use super::layout::{
    NodeLayout, Span, F_ADDRESS_ARRAY, F_KEY_ITEMS, F_KEY_OFFSETS, F_KEY_TYPE, F_SUBTREE_COUNTS,
    F_TREE_COUNT, F_TREE_LEVEL, F_VALUE_ADDRESS_OFFSETS, F_VALUE_ITEMS, F_VALUE_OFFSETS,
    F_VALUE_TYPE, ITEM_TYPE_TUPLE, NUM_FIELDS, TABLE,
};
use super::view::Node;
use crate::message::generated::serial::ProllyTreeNode;
use crate::message::table::{RootTable, VectorPos};
use crate::message::{
    body_with_id, check_counts, check_offsets, run_verifier, MessageError, FILE_ID_PROLLY,
};
use crate::tuple::{layout_is_valid, validate_layout};
use crate::ADDRESS_LEN;

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

        let mut node = Node { chunk, layout };
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

    /// The view of a chunk this process serialized itself with [`NodeWriter`](super::NodeWriter),
    /// finding its parts without the checks that only catch corruption (the FlatBuffers
    /// verifier, every offset, tuple layouts, subtree counts): a store uses it for nodes a tree
    /// writer just put, instead of [`Node::verify`] on their first read, since their bytes
    /// never left the process.
    ///
    /// # Safety
    ///
    /// `chunk` must be bytes a [`NodeWriter`](super::NodeWriter) of this process wrote,
    /// unchanged since; never bytes read from outside. The view's accessors, and later
    /// [`Node::from_verified`] views of the layout it gives, may rely on that. (Today every
    /// accessor is bounds-checked, so on other bytes they give wrong answers or panic rather
    /// than read out of bounds.)
    pub unsafe fn from_own_writer(chunk: &'a [u8]) -> Result<Node<'a>, MessageError> {
        Self::verify_with(chunk, Checks::Trusted)
    }
}

/// The number of items of an offsets vector (n+1 u16 LE offsets), after the O(1) part of
/// [`check_offsets`]: at least one offset, the first 0, the last `items_len`. That the offsets
/// never decrease is checked by [`tuple_items_width`] while it walks the items; any failure is
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
pub(in crate::message) fn verify_checks_agree(chunk: &[u8]) -> bool {
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
    /// Only what finding the parts needs (see [`Node::from_own_writer`]).
    Trusted,
}
