//! `Blob` (`BLOB`): nodes of the trees that hold large byte values (out-of-band strings,
//! bytes, JSON). Leaves carry a piece of the value; internal nodes carry child addresses and
//! per-child leaf-chunk counts. See `schema/blob.fbs`.

use super::builder::Builder;
use super::generated::serial::Blob;
use super::subtree_counts::SubtreeCounts;
use super::table::RootTable;
use super::{body_with_id, check_counts, put_counts, run_verifier, MessageError, FILE_ID_BLOB};
use crate::{Address, ADDRESS_LEN};

const TABLE: &str = "Blob";
const NUM_FIELDS: usize = 5;
const F_PAYLOAD: usize = 0;
const F_ADDRESS_ARRAY: usize = 1;
const F_SUBTREE_SIZES: usize = 2;
const F_TREE_SIZE: usize = 3;
const F_TREE_LEVEL: usize = 4;

/// A verified `Blob` chunk.
#[derive(Clone, Copy, Debug)]
pub struct BlobNode<'a> {
    chunk: &'a [u8],
    /// Leaf: payload; internal: address_array.
    data: &'a [u8],
    sizes: &'a [u8],
    tree_size: u64,
    level: u8,
}

impl<'a> BlobNode<'a> {
    /// Verifies `chunk`: prefix, `BLOB`, FlatBuffers verifier, then leaf ⇔ payload present and
    /// no children, tree size 1 on leaves; internal nodes have 20 bytes per child and one size
    /// per child summing to `tree_size`.
    pub fn verify(chunk: &'a [u8]) -> Result<BlobNode<'a>, MessageError> {
        let body = body_with_id(chunk, FILE_ID_BLOB)?;
        run_verifier::<Blob>(body, TABLE)?;
        let t = RootTable::open(body, TABLE, NUM_FIELDS)?;
        let payload = t.vector(F_PAYLOAD, 1, "payload")?;
        let addresses = t.vector(F_ADDRESS_ARRAY, 1, "address_array")?;
        let sizes = t.vector(F_SUBTREE_SIZES, 1, "subtree_sizes")?;
        let tree_size = t.u64(F_TREE_SIZE, "tree_size")?;
        let level = t.u8(F_TREE_LEVEL, "tree_level")?;
        let slice = |v: Option<super::table::VectorPos>| match v {
            None => &[][..],
            Some(v) => body.get(v.start..v.start + v.len).unwrap_or(&[]),
        };
        let unexpected = |field, reason| MessageError::UnexpectedField {
            table: TABLE,
            field,
            reason,
        };
        if level == 0 {
            let payload = payload.ok_or(MessageError::MissingField {
                table: TABLE,
                field: "payload",
            })?;
            if addresses.is_some_and(|v| v.len > 0) {
                return Err(unexpected("address_array", "a leaf has no children"));
            }
            if sizes.is_some_and(|v| v.len > 0) {
                return Err(unexpected("subtree_sizes", "a leaf has no children"));
            }
            if tree_size != 1 {
                return Err(MessageError::CountMismatch {
                    field: "tree_size of a blob leaf",
                    expected: 1,
                    found: tree_size,
                });
            }
            Ok(BlobNode {
                chunk,
                data: slice(Some(payload)),
                sizes: &[],
                tree_size,
                level,
            })
        } else {
            if payload.is_some() {
                return Err(unexpected("payload", "internal nodes hold addresses"));
            }
            let addresses = addresses.ok_or(MessageError::MissingField {
                table: TABLE,
                field: "address_array",
            })?;
            if addresses.len == 0 || !addresses.len.is_multiple_of(ADDRESS_LEN) {
                return Err(MessageError::CountMismatch {
                    field: "address_array bytes (a positive multiple of 20)",
                    expected: (addresses.len.div_ceil(ADDRESS_LEN).max(1) * ADDRESS_LEN) as u64,
                    found: addresses.len as u64,
                });
            }
            let sizes = sizes.ok_or(MessageError::MissingField {
                table: TABLE,
                field: "subtree_sizes",
            })?;
            let sizes = slice(Some(sizes));
            check_counts(
                sizes,
                addresses.len / ADDRESS_LEN,
                tree_size,
                "subtree_sizes",
            )?;
            Ok(BlobNode {
                chunk,
                data: slice(Some(addresses)),
                sizes,
                tree_size,
                level,
            })
        }
    }

    /// The whole chunk, prefix included.
    pub fn chunk(&self) -> &'a [u8] {
        self.chunk
    }

    /// Tree level: 0 for leaves.
    pub fn level(&self) -> u8 {
        self.level
    }

    /// True for leaves (which carry payload).
    pub fn is_leaf(&self) -> bool {
        self.level == 0
    }

    /// Leaf chunks under this node (1 for a leaf).
    pub fn tree_size(&self) -> u64 {
        self.tree_size
    }

    /// The payload of a leaf (empty for internal nodes).
    pub fn payload(&self) -> &'a [u8] {
        if self.is_leaf() {
            self.data
        } else {
            &[]
        }
    }

    /// Children of an internal node (0 for leaves).
    pub fn child_count(&self) -> usize {
        if self.is_leaf() {
            0
        } else {
            self.data.len() / ADDRESS_LEN
        }
    }

    /// Concatenated child addresses (empty for leaves).
    pub fn address_array(&self) -> &'a [u8] {
        if self.is_leaf() {
            &[]
        } else {
            self.data
        }
    }

    /// Address of child `i`.
    ///
    /// # Panics
    /// If `i >= self.child_count()`.
    pub fn child(&self, i: usize) -> Address {
        assert!(i < self.child_count(), "blob child {i} out of range");
        self.data
            .get(i * ADDRESS_LEN..(i + 1) * ADDRESS_LEN)
            .and_then(Address::from_slice)
            .unwrap_or(Address::ZERO)
    }

    /// Leaf chunks under each child (internal nodes; empty for leaves).
    pub fn subtree_sizes(&self) -> SubtreeCounts<'a> {
        SubtreeCounts::decode(self.sizes, self.child_count())
    }

    /// The raw subtree-size varints.
    pub fn subtree_sizes_bytes(&self) -> &'a [u8] {
        self.sizes
    }
}

/// Writes `Blob` chunks byte-identical to Dolt's; reuse it to avoid allocation.
#[derive(Debug, Default)]
pub struct BlobWriter {
    builder: Builder,
    counts: Vec<u8>,
}

impl BlobWriter {
    /// A writer with empty buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Writes a leaf holding `payload`; returns the whole chunk.
    pub fn write_leaf(&mut self, payload: &[u8]) -> Result<&[u8], MessageError> {
        let b = &mut self.builder;
        b.reset();
        let p = b.create_byte_vector(payload);
        b.start_object(NUM_FIELDS);
        b.add_offset(F_PAYLOAD, p);
        b.add_u64(F_TREE_SIZE, 1, 0);
        b.add_u8(F_TREE_LEVEL, 0, 0);
        let root = b.end_object();
        b.finish_message(root, FILE_ID_BLOB)
    }

    /// Writes an internal node over `child_addresses` (20 bytes each) with the leaf-chunk
    /// count under each child; returns the whole chunk.
    pub fn write_internal(
        &mut self,
        child_addresses: &[u8],
        leaf_counts: &[u64],
        level: u8,
    ) -> Result<&[u8], MessageError> {
        if level == 0 {
            return Err(MessageError::BadInput {
                field: "level",
                reason: "internal nodes have level >= 1",
            });
        }
        if child_addresses.len() != leaf_counts.len() * ADDRESS_LEN || leaf_counts.is_empty() {
            return Err(MessageError::BadInput {
                field: "child_addresses",
                reason: "must hold 20 bytes per count, at least one child",
            });
        }
        let total = put_counts(&mut self.counts, leaf_counts, "leaf_counts")?;
        let b = &mut self.builder;
        b.reset();
        let addrs = b.create_byte_vector(child_addresses);
        let cards = b.create_byte_vector(&self.counts);
        b.start_object(NUM_FIELDS);
        b.add_offset(F_ADDRESS_ARRAY, addrs);
        b.add_offset(F_SUBTREE_SIZES, cards);
        b.add_u64(F_TREE_SIZE, total, 0);
        b.add_u8(F_TREE_LEVEL, level, 0);
        let root = b.end_object();
        b.finish_message(root, FILE_ID_BLOB)
    }
}
