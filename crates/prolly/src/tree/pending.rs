//! The items of the node a level is filling, in the arrays a node message holds, so that
//! writing the node is one call to the node writer and handing a finished leaf to the
//! pipeline is a swap of buffers.

use prollystore_format::message::{InternalInput, LeafInput, MessageError, NodeWriter};

/// A node's items as the node writer takes them: keys and their end offsets, then values and
/// their end offsets (leaves) or child addresses (internal levels), and the offsets of value
/// addresses (leaves whose values hold out-of-band addresses).
#[derive(Debug, Default)]
pub(crate) struct PendingNode {
    pub(crate) key_items: Vec<u8>,
    pub(crate) key_offsets: Vec<u16>,
    pub(crate) value_items: Vec<u8>,
    pub(crate) value_offsets: Vec<u16>,
    pub(crate) address_offsets: Vec<u16>,
}

impl PendingNode {
    /// An empty node with room for a typical one at `level`: growing the buffers item by item
    /// costs more than the node's hashing when only a few nodes are written (single edits).
    pub(crate) fn with_room(level: u8) -> PendingNode {
        let mut node = PendingNode {
            key_items: Vec::with_capacity(4096),
            key_offsets: Vec::with_capacity(256),
            value_items: Vec::with_capacity(4096),
            value_offsets: Vec::with_capacity(if level == 0 { 256 } else { 1 }),
            address_offsets: Vec::new(),
        };
        node.key_offsets.push(0);
        node.value_offsets.push(0);
        node
    }

    /// Empties it, keeping the leading 0 offsets an empty node has.
    #[inline]
    pub(crate) fn clear(&mut self) {
        self.key_items.clear();
        self.key_offsets.truncate(1);
        self.value_items.clear();
        self.value_offsets.truncate(1);
        self.address_offsets.clear();
    }

    /// Its items as a leaf, as the node writer takes them.
    #[inline]
    pub(crate) fn leaf_input(&self) -> LeafInput<'_> {
        LeafInput {
            key_items: &self.key_items,
            key_offsets: &self.key_offsets,
            value_items: &self.value_items,
            value_offsets: &self.value_offsets,
            value_address_offsets: &self.address_offsets,
        }
    }
}

impl PendingNode {
    /// The key of the last item (empty if there is none).
    #[inline]
    pub(crate) fn last_key(&self) -> &[u8] {
        let n = self.key_offsets.len();
        if n < 2 {
            return &[];
        }
        let start = usize::from(self.key_offsets[n - 2]);
        &self.key_items[start..]
    }

    /// The node as a chunk of `level` (in the writer's buffer); `counts` are its children's
    /// subtree counts at internal levels.
    pub(crate) fn serialize<'w>(
        &self,
        level: u8,
        counts: &[u64],
        writer: &'w mut NodeWriter,
    ) -> Result<&'w [u8], MessageError> {
        if level == 0 {
            writer.write_leaf(&self.leaf_input())
        } else {
            writer.write_internal(&InternalInput {
                key_items: &self.key_items,
                key_offsets: &self.key_offsets,
                child_addresses: &self.value_items,
                subtree_counts: counts,
                level,
            })
        }
    }
}
