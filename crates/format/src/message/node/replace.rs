//! [`NodeWriter`]'s in-place writers: a node written again from its stored vectors with one or
//! a few items changed, without decoding what stays the same.

use super::view::Node;
use super::writer::{finish_internal, finish_leaf, NodeWriter};
use crate::message::direct::Back;
use crate::message::table::u16_at;
use crate::message::{put_counts, MessageError};
use crate::varint::{decode_count_deltas_into, get_signed, put_signed};
use crate::{Address, ADDRESS_LEN};

impl NodeWriter {
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
            // Only a view made without checks (`Node::from_own_writer`) of bytes that are not
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
    /// and `i + 1` change; they are re-encoded and the rest copied as it is, since decoding and
    /// encoding every count was a noticeable part of the cost of a single edit.
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
