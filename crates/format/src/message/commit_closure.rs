//! `CommitClosure` (`CMCL`): nodes of the set of a commit's ancestors. Keys are fixed 28-byte
//! items (height u64 little-endian, then the commit address); leaves store no values. See
//! `schema/commitclosure.fbs`.

use super::builder::Builder;
use super::generated::serial::CommitClosure;
use super::subtree_counts::SubtreeCounts;
use super::table::RootTable;
use super::{
    body_with_id, check_counts, put_counts, run_verifier, MessageError, FILE_ID_COMMIT_CLOSURE,
};
use crate::{Address, ADDRESS_LEN};

/// Width of a commit-closure key: height (8) + address (20).
pub const COMMIT_CLOSURE_KEY_LEN: usize = 28;

const TABLE: &str = "CommitClosure";
const NUM_FIELDS: usize = 5;
const F_KEY_ITEMS: usize = 0;
const F_ADDRESS_ARRAY: usize = 1;
const F_SUBTREE_COUNTS: usize = 2;
const F_TREE_COUNT: usize = 3;
const F_TREE_LEVEL: usize = 4;

/// A verified `CommitClosure` chunk.
#[derive(Clone, Copy, Debug)]
pub struct CommitClosureNode<'a> {
    chunk: &'a [u8],
    keys: &'a [u8],
    addresses: &'a [u8],
    counts: &'a [u8],
    tree_count: u64,
    level: u8,
}

impl<'a> CommitClosureNode<'a> {
    /// Verifies `chunk`: prefix, `CMCL`, FlatBuffers verifier, 28-byte keys, and children and
    /// counts consistent with the level.
    pub fn verify(chunk: &'a [u8]) -> Result<CommitClosureNode<'a>, MessageError> {
        let body = body_with_id(chunk, FILE_ID_COMMIT_CLOSURE)?;
        run_verifier::<CommitClosure>(body, TABLE)?;
        let t = RootTable::open(body, TABLE, NUM_FIELDS)?;
        let ki = t.required_vector(F_KEY_ITEMS, 1, "key_items")?;
        let aa = t.vector(F_ADDRESS_ARRAY, 1, "address_array")?;
        let sc = t.vector(F_SUBTREE_COUNTS, 1, "subtree_counts")?;
        let tree_count = t.u64(F_TREE_COUNT, "tree_count")?;
        let level = t.u8(F_TREE_LEVEL, "tree_level")?;
        let get = |v: Option<super::table::VectorPos>| match v {
            None => &[][..],
            Some(v) => body.get(v.start..v.start + v.len).unwrap_or(&[]),
        };
        let keys = get(Some(ki));
        if !keys.len().is_multiple_of(COMMIT_CLOSURE_KEY_LEN) {
            return Err(MessageError::CountMismatch {
                field: "key_items bytes (a multiple of 28)",
                expected: (keys.len() / COMMIT_CLOSURE_KEY_LEN * COMMIT_CLOSURE_KEY_LEN) as u64,
                found: keys.len() as u64,
            });
        }
        let count = keys.len() / COMMIT_CLOSURE_KEY_LEN;
        let addresses = get(aa);
        let counts = get(sc);
        if level == 0 {
            if !addresses.is_empty() || !counts.is_empty() {
                return Err(MessageError::UnexpectedField {
                    table: TABLE,
                    field: "address_array/subtree_counts",
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
            if count == 0 || addresses.len() != count * ADDRESS_LEN {
                return Err(MessageError::CountMismatch {
                    field: "address_array bytes (20 per key, at least one)",
                    expected: (count.max(1) * ADDRESS_LEN) as u64,
                    found: addresses.len() as u64,
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
        Ok(CommitClosureNode {
            chunk,
            keys,
            addresses,
            counts,
            tree_count,
            level,
        })
    }

    /// The whole chunk, prefix included.
    pub fn chunk(&self) -> &'a [u8] {
        self.chunk
    }

    /// Keys in this node.
    pub fn count(&self) -> usize {
        self.keys.len() / COMMIT_CLOSURE_KEY_LEN
    }

    /// Tree level: 0 for leaves.
    pub fn level(&self) -> u8 {
        self.level
    }

    /// True for leaves.
    pub fn is_leaf(&self) -> bool {
        self.level == 0
    }

    /// Keys in the subtree.
    pub fn tree_count(&self) -> u64 {
        self.tree_count
    }

    /// Key `i` (28 bytes; the last key under child `i` on internal nodes).
    ///
    /// # Panics
    /// If `i >= self.count()`.
    pub fn key(&self, i: usize) -> &'a [u8] {
        assert!(i < self.count(), "key index {i} out of range");
        let at = i * COMMIT_CLOSURE_KEY_LEN;
        self.keys
            .get(at..at + COMMIT_CLOSURE_KEY_LEN)
            .unwrap_or(&[])
    }

    /// Height of the commit in key `i`.
    pub fn height(&self, i: usize) -> u64 {
        let k = self.key(i);
        k.get(..8)
            .and_then(|b| b.try_into().ok())
            .map_or(0, u64::from_le_bytes)
    }

    /// Commit address in key `i`.
    pub fn commit(&self, i: usize) -> Address {
        let k = self.key(i);
        k.get(8..)
            .and_then(Address::from_slice)
            .unwrap_or(Address::ZERO)
    }

    /// Children of an internal node (0 for leaves).
    pub fn child_count(&self) -> usize {
        self.addresses.len() / ADDRESS_LEN
    }

    /// Address of child `i`.
    ///
    /// # Panics
    /// If `i >= self.child_count()`.
    pub fn child(&self, i: usize) -> Address {
        assert!(i < self.child_count(), "child index {i} out of range");
        self.addresses
            .get(i * ADDRESS_LEN..(i + 1) * ADDRESS_LEN)
            .and_then(Address::from_slice)
            .unwrap_or(Address::ZERO)
    }

    /// Keys under each item (1 per key on leaves).
    pub fn subtree_counts(&self) -> SubtreeCounts<'a> {
        if self.is_leaf() {
            SubtreeCounts::ones(self.count())
        } else {
            SubtreeCounts::decode(self.counts, self.count())
        }
    }

    /// All keys, concatenated.
    pub fn key_items(&self) -> &'a [u8] {
        self.keys
    }
}

/// Writes `CommitClosure` chunks byte-identical to Dolt's; reuse it to avoid allocation.
#[derive(Debug, Default)]
pub struct CommitClosureWriter {
    builder: Builder,
    counts: Vec<u8>,
}

impl CommitClosureWriter {
    /// A writer with empty buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Writes a node: `keys` is n × 28 bytes; internal nodes (`level` ≥ 1) also take n child
    /// addresses and n subtree counts, leaves take none. Returns the whole chunk.
    pub fn write(
        &mut self,
        keys: &[u8],
        child_addresses: &[u8],
        subtree_counts: &[u64],
        level: u8,
    ) -> Result<&[u8], MessageError> {
        if !keys.len().is_multiple_of(COMMIT_CLOSURE_KEY_LEN) {
            return Err(MessageError::BadInput {
                field: "keys",
                reason: "must be a multiple of 28 bytes",
            });
        }
        let n = keys.len() / COMMIT_CLOSURE_KEY_LEN;
        let (want_addr, want_counts) = if level == 0 {
            (0, 0)
        } else {
            (n * ADDRESS_LEN, n)
        };
        if child_addresses.len() != want_addr || subtree_counts.len() != want_counts {
            return Err(MessageError::BadInput {
                field: "child_addresses/subtree_counts",
                reason: "leaves take none; internal nodes one per key",
            });
        }
        // A leaf's counts are empty (checked above): nothing is written, and its total is
        // its entry count.
        let sum = put_counts(&mut self.counts, subtree_counts, "subtree_counts")?;
        let total = if level == 0 { n as u64 } else { sum };
        let b = &mut self.builder;
        b.reset();
        let k = b.create_byte_vector(keys);
        let (a, c) = if level > 0 {
            let a = b.create_byte_vector(child_addresses);
            (a, b.create_byte_vector(&self.counts))
        } else {
            (0, 0)
        };
        b.start_object(NUM_FIELDS);
        b.add_offset(F_KEY_ITEMS, k);
        b.add_offset(F_ADDRESS_ARRAY, a);
        b.add_offset(F_SUBTREE_COUNTS, c);
        b.add_u64(F_TREE_COUNT, total, 0);
        b.add_u8(F_TREE_LEVEL, level, 0);
        let root = b.end_object();
        b.finish_message(root, FILE_ID_COMMIT_CLOSURE)
    }
}
