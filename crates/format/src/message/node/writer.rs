//! [`NodeWriter`]: writes whole `ProllyTreeNode` chunks from their parts ([`LeafInput`],
//! [`InternalInput`]).

use super::layout::{
    F_ADDRESS_ARRAY, F_KEY_ITEMS, F_KEY_OFFSETS, F_KEY_TYPE, F_SUBTREE_COUNTS, F_TREE_COUNT,
    F_TREE_LEVEL, F_VALUE_ADDRESS_OFFSETS, F_VALUE_ITEMS, F_VALUE_OFFSETS, F_VALUE_TYPE,
    ITEM_TYPE_TUPLE,
};
use crate::message::direct::{message_bound, Back, Table};
use crate::message::{check_input_offsets, put_counts, MessageError, FILE_ID_PROLLY};
use crate::ADDRESS_LEN;

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
    /// The chunk being written (filled from the back by [`Back`]).
    pub(super) buf: Vec<u8>,
    /// Encoded subtree counts of the internal node being written.
    pub(super) counts: Vec<u8>,
    /// Decoded subtree counts and child addresses ([`NodeWriter::write_internal_replacing_many`]).
    pub(super) count_values: Vec<u64>,
    pub(super) addresses: Vec<u8>,
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
pub(super) fn finish_leaf(w: Back<'_>, vectors: [u32; 5], n: usize) -> Result<&[u8], MessageError> {
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
pub(super) fn finish_internal(
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
