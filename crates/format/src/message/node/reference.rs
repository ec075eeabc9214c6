//! The reference the direct node writer is tested against: the same chunks through the general
//! FlatBuffers builder (test-only).

use super::layout::{
    F_ADDRESS_ARRAY, F_KEY_ITEMS, F_KEY_OFFSETS, F_KEY_TYPE, F_SUBTREE_COUNTS, F_TREE_COUNT,
    F_TREE_LEVEL, F_VALUE_ADDRESS_OFFSETS, F_VALUE_ITEMS, F_VALUE_OFFSETS, F_VALUE_TYPE,
    ITEM_TYPE_TUPLE, NUM_FIELDS,
};
use super::writer::{InternalInput, LeafInput};
use crate::message::builder::Builder;
use crate::message::{MessageError, FILE_ID_PROLLY};

/// Writes nodes through the general builder [`Builder`], as [`NodeWriter`](super::NodeWriter)
/// writes them directly.
#[derive(Debug, Default)]
pub(in crate::message) struct ReferenceWriter {
    /// The general builder.
    builder: Builder,
    /// Encoded subtree counts of the internal node being written.
    counts: Vec<u8>,
}

impl ReferenceWriter {
    /// [`NodeWriter::write_leaf`](super::NodeWriter::write_leaf) through the general builder: the reference the direct
    /// writer is tested against.
    pub(in crate::message) fn write_leaf_reference(
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

    /// [`NodeWriter::write_internal`](super::NodeWriter::write_internal) through the general builder: the reference the direct
    /// writer is tested against.
    pub(in crate::message) fn write_internal_reference(
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
