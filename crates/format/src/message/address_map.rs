//! `AddressMap` (`ADRM`): nodes of ordered maps from byte-string names to chunk addresses
//! (table names in a root value, dataset refs in a store root). Keys compare bytewise. See
//! `schema/addressmap.fbs`.

use std::cmp::Ordering;

use super::builder::Builder;
use super::generated::serial::AddressMap;
use super::subtree_counts::SubtreeCounts;
use super::table::RootTable;
use super::{
    body_with_id, check_counts, check_input_offsets, check_offsets, put_counts, run_verifier,
    MessageError, FILE_ID_ADDRESS_MAP,
};
use crate::{Address, ADDRESS_LEN};

const TABLE: &str = "AddressMap";
const NUM_FIELDS: usize = 6;
const F_KEY_ITEMS: usize = 0;
const F_KEY_OFFSETS: usize = 1;
const F_ADDRESS_ARRAY: usize = 2;
const F_SUBTREE_COUNTS: usize = 3;
const F_TREE_COUNT: usize = 4;
const F_TREE_LEVEL: usize = 5;

/// A verified `AddressMap` chunk: keys are raw names, values are addresses (of the named
/// values on leaves, of children on internal nodes).
#[derive(Clone, Copy, Debug)]
pub struct AddressMapNode<'a> {
    chunk: &'a [u8],
    key_items: &'a [u8],
    key_offsets: &'a [u8],
    addresses: &'a [u8],
    counts: &'a [u8],
    count: usize,
    tree_count: u64,
    level: u8,
}

impl<'a> AddressMapNode<'a> {
    /// Verifies `chunk`: prefix, `ADRM`, FlatBuffers verifier, key offsets, 20 address bytes
    /// per key, and counts (leaf: `tree_count` = keys; internal: one varint per child summing
    /// to `tree_count`).
    pub fn verify(chunk: &'a [u8]) -> Result<AddressMapNode<'a>, MessageError> {
        let body = body_with_id(chunk, FILE_ID_ADDRESS_MAP)?;
        run_verifier::<AddressMap>(body, TABLE)?;
        let t = RootTable::open(body, TABLE, NUM_FIELDS)?;
        let ki = t.required_vector(F_KEY_ITEMS, 1, "key_items")?;
        let ko = t.required_vector(F_KEY_OFFSETS, 2, "key_offsets")?;
        let aa = t.required_vector(F_ADDRESS_ARRAY, 1, "address_array")?;
        let sc = t.vector(F_SUBTREE_COUNTS, 1, "subtree_counts")?;
        let tree_count = t.u64(F_TREE_COUNT, "tree_count")?;
        let level = t.u8(F_TREE_LEVEL, "tree_level")?;
        let get = |start: usize, len: usize| body.get(start..start + len).unwrap_or(&[]);
        let key_items = get(ki.start, ki.len);
        let key_offsets = get(ko.start, 2 * ko.len);
        let addresses = get(aa.start, aa.len);
        let count = check_offsets(key_offsets, key_items.len(), "key_offsets")?;
        if addresses.len() != count * ADDRESS_LEN {
            return Err(MessageError::CountMismatch {
                field: "address_array bytes (20 per key)",
                expected: (count * ADDRESS_LEN) as u64,
                found: addresses.len() as u64,
            });
        }
        let counts = match sc {
            None => &[][..],
            Some(v) => get(v.start, v.len),
        };
        if level == 0 {
            if !counts.is_empty() {
                return Err(MessageError::UnexpectedField {
                    table: TABLE,
                    field: "subtree_counts",
                    reason: "a leaf has no children",
                });
            }
            if tree_count != count as u64 {
                return Err(MessageError::CountMismatch {
                    field: "tree_count of a leaf (keys expected)",
                    expected: count as u64,
                    found: tree_count,
                });
            }
        } else {
            if count == 0 {
                return Err(MessageError::CountMismatch {
                    field: "children of an internal node (at least one)",
                    expected: 1,
                    found: 0,
                });
            }
            if sc.is_none() {
                return Err(MessageError::MissingField {
                    table: TABLE,
                    field: "subtree_counts",
                });
            }
            check_counts(counts, count, tree_count, "subtree_counts")?;
        }
        Ok(AddressMapNode {
            chunk,
            key_items,
            key_offsets,
            addresses,
            counts,
            count,
            tree_count,
            level,
        })
    }

    /// The whole chunk, prefix included.
    pub fn chunk(&self) -> &'a [u8] {
        self.chunk
    }

    /// Entries in this node.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Tree level: 0 for leaves.
    pub fn level(&self) -> u8 {
        self.level
    }

    /// True for leaves.
    pub fn is_leaf(&self) -> bool {
        self.level == 0
    }

    /// Entries in the subtree.
    pub fn tree_count(&self) -> u64 {
        self.tree_count
    }

    /// Name `i` (the last name under child `i` on internal nodes).
    ///
    /// # Panics
    /// If `i >= self.count()`.
    pub fn key(&self, i: usize) -> &'a [u8] {
        assert!(i < self.count, "key index {i} out of range");
        match self.key_offsets.get(2 * i..2 * i + 4) {
            Some(&[a, b, c, d]) => {
                let s = usize::from(u16::from_le_bytes([a, b]));
                let e = usize::from(u16::from_le_bytes([c, d]));
                self.key_items.get(s..e).unwrap_or(&[])
            }
            _ => &[],
        }
    }

    /// Address `i`: the value of name `i` on leaves, child `i` on internal nodes.
    ///
    /// # Panics
    /// If `i >= self.count()`.
    pub fn address(&self, i: usize) -> Address {
        assert!(i < self.count, "address index {i} out of range");
        self.addresses
            .get(i * ADDRESS_LEN..(i + 1) * ADDRESS_LEN)
            .and_then(Address::from_slice)
            .unwrap_or(Address::ZERO)
    }

    /// Entries under each item (1 per entry on leaves).
    pub fn subtree_counts(&self) -> SubtreeCounts<'a> {
        if self.is_leaf() {
            SubtreeCounts::ones(self.count)
        } else {
            SubtreeCounts::decode(self.counts, self.count)
        }
    }

    /// All names, concatenated.
    pub fn key_items(&self) -> &'a [u8] {
        self.key_items
    }

    /// The n+1 key offsets as stored (little-endian u16 pairs).
    pub fn key_offsets_bytes(&self) -> &'a [u8] {
        self.key_offsets
    }

    /// All addresses, concatenated.
    pub fn address_array(&self) -> &'a [u8] {
        self.addresses
    }

    /// Binary search for `name` (bytewise order): `Ok(i)` if present, else `Err(insert
    /// position)`. On internal nodes `Err(i)`/`Ok(i)` is the child to descend into.
    pub fn search(&self, name: &[u8]) -> Result<usize, usize> {
        let (mut lo, mut hi) = (0usize, self.count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.key(mid).cmp(name) {
                Ordering::Less => lo = mid + 1,
                Ordering::Greater => hi = mid,
                Ordering::Equal => return Ok(mid),
            }
        }
        Err(lo)
    }
}

/// Writes `AddressMap` chunks byte-identical to Dolt's; reuse it to avoid allocation.
#[derive(Debug, Default)]
pub struct AddressMapWriter {
    builder: Builder,
    counts: Vec<u8>,
}

impl AddressMapWriter {
    /// A writer with empty buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Writes a node. `key_offsets` has n+1 entries; `addresses` n × 20 bytes; `subtree_counts`
    /// is empty for leaves (`level` 0) and has n entries otherwise. Returns the whole chunk.
    pub fn write(
        &mut self,
        key_items: &[u8],
        key_offsets: &[u16],
        addresses: &[u8],
        subtree_counts: &[u64],
        level: u8,
    ) -> Result<&[u8], MessageError> {
        let n = check_input_offsets(key_offsets, key_items.len(), "key_offsets")?;
        if addresses.len() != n * ADDRESS_LEN {
            return Err(MessageError::BadInput {
                field: "addresses",
                reason: "must hold 20 bytes per key",
            });
        }
        let expected_counts = if level == 0 { 0 } else { n };
        if subtree_counts.len() != expected_counts {
            return Err(MessageError::BadInput {
                field: "subtree_counts",
                reason: "leaves take none; internal nodes one per key",
            });
        }
        // A leaf's counts are empty (checked above): nothing is written, and its total is
        // its entry count.
        let sum = put_counts(&mut self.counts, subtree_counts, "subtree_counts")?;
        let total = if level == 0 { n as u64 } else { sum };
        let b = &mut self.builder;
        b.reset();
        let keys = b.create_byte_vector(key_items);
        let offsets = b.create_u16_vector(key_offsets);
        let addrs = b.create_byte_vector(addresses);
        let counts = if level > 0 {
            b.create_byte_vector(&self.counts)
        } else {
            0
        };
        b.start_object(NUM_FIELDS);
        b.add_offset(F_KEY_ITEMS, keys);
        b.add_offset(F_KEY_OFFSETS, offsets);
        b.add_offset(F_ADDRESS_ARRAY, addrs);
        b.add_offset(F_SUBTREE_COUNTS, counts);
        b.add_u64(F_TREE_COUNT, total, 0);
        b.add_u8(F_TREE_LEVEL, level, 0);
        let root = b.end_object();
        b.finish_message(root, FILE_ID_ADDRESS_MAP)
    }
}
