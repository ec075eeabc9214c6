//! Blob trees: large values split into fixed 4000-byte leaves under 200-way internal nodes
//! (Dolt's `BlobBuilder`), and reading them back.
//!
//! Reproduced exactly, quirks included: an empty value is the zero address (nothing written);
//! when the input ends right after a full node at some level, Dolt's writer chain asks that
//! level for one more node, which comes out empty (written by Dolt but referenced by nothing);
//! and the root is always the node at the level computed from the size, so an exact power of
//! 200 leaves gives a root with a single child.

use prollystore_format::message::{BlobNode, BlobWriter};
use prollystore_format::tuple::{BlobError, BlobStore};
use prollystore_format::{Address, ADDRESS_LEN};

use crate::error::TreeError;
use crate::store::{StoreError, StoreFastPaths};

/// Bytes per blob leaf (Dolt's `DefaultFixedChunkLength`).
pub const BLOB_LEAF_LEN: usize = 4000;
/// Children per internal blob node (`4000 / 20`).
pub const BLOB_FANOUT: usize = BLOB_LEAF_LEN / ADDRESS_LEN;

/// Writes blob trees, reusing its buffers between values.
#[derive(Default)]
pub struct BlobBuilder {
    writer: BlobWriter,
    /// Per level (index = level - 1): child addresses and leaf counts being collected.
    levels: Vec<(Vec<u8>, Vec<u64>)>,
}

impl BlobBuilder {
    /// A builder with empty buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Writes `data` as a blob tree into `store`; returns its root (zero for empty data).
    pub fn write<S: StoreFastPaths + ?Sized>(
        &mut self,
        store: &S,
        data: &[u8],
    ) -> Result<Address, TreeError> {
        if data.is_empty() {
            return Ok(Address::ZERO);
        }
        if data.len() <= BLOB_LEAF_LEN {
            let chunk = self.writer.write_leaf(data)?;
            return Ok(store.put(chunk)?);
        }
        let mut q = data.len() / BLOB_LEAF_LEN;
        let mut top = 0usize;
        while q > 0 {
            q /= BLOB_FANOUT;
            top += 1;
        }
        while self.levels.len() < top {
            self.levels.push((Vec::new(), Vec::new()));
        }
        let mut pos = 0usize;
        let (address, _, _) = self.write_level(store, data, &mut pos, top)?;
        Ok(address)
    }

    /// One call of a level writer: `(address, leaves under it, input exhausted)`. A leaf call
    /// past the end writes nothing and reports `(zero, 0, true)`.
    fn write_level<S: StoreFastPaths + ?Sized>(
        &mut self,
        store: &S,
        data: &[u8],
        pos: &mut usize,
        level: usize,
    ) -> Result<(Address, u64, bool), TreeError> {
        if level == 0 {
            let Some(rest) = data.get(*pos..).filter(|r| !r.is_empty()) else {
                return Ok((Address::ZERO, 0, true));
            };
            let piece = &rest[..rest.len().min(BLOB_LEAF_LEN)];
            *pos += piece.len();
            let chunk = self.writer.write_leaf(piece)?;
            return Ok((store.put(chunk)?, 1, false));
        }
        if let Some((a, c)) = self.levels.get_mut(level - 1) {
            a.clear();
            c.clear();
        }
        loop {
            let (child, n, eof) = self.write_level(store, data, pos, level - 1)?;
            let (addrs, counts) = match self.levels.get_mut(level - 1) {
                Some(x) => x,
                None => return Err(TreeError::TooTall(level)),
            };
            if n != 0 {
                addrs.extend_from_slice(child.as_bytes());
                counts.push(n);
            }
            if counts.len() >= BLOB_FANOUT || eof {
                let total: u64 = counts.iter().sum();
                if counts.is_empty() {
                    // Dolt writes an empty internal node here that nothing references; the
                    // message writer does not make childless blob nodes, so it is skipped.
                    return Ok((Address::ZERO, 0, eof));
                }
                let chunk = self.writer.write_internal(addrs, counts, level as u8)?;
                return Ok((store.put(chunk)?, total, eof));
            }
        }
    }
}

/// Appends the bytes of the blob tree at `address` to `out` (nothing for the zero address).
pub fn read_blob<S: StoreFastPaths + ?Sized>(
    store: &S,
    address: &Address,
    out: &mut Vec<u8>,
) -> Result<(), TreeError> {
    if address.is_zero() {
        return Ok(());
    }
    read_node(store, address, out, 0)
}

fn read_node<S: StoreFastPaths + ?Sized>(
    store: &S,
    address: &Address,
    out: &mut Vec<u8>,
    depth: usize,
) -> Result<(), TreeError> {
    if depth > 16 {
        return Err(TreeError::BadBlob {
            address: *address,
            reason: "blob tree deeper than 16 levels".into(),
        });
    }
    let chunk = store.get(address)?.ok_or(StoreError::Missing(*address))?;
    let node = BlobNode::verify(chunk).map_err(|source| StoreError::BadMessage {
        address: *address,
        source,
    })?;
    if node.is_leaf() {
        out.extend_from_slice(node.payload());
        return Ok(());
    }
    for i in 0..node.child_count() {
        read_node(store, &node.child(i), out, depth + 1)?;
    }
    Ok(())
}

/// Adapts a [`ChunkStore`](crate::ChunkStore) to the tuple builder's [`BlobStore`], so values too large for a row
/// move out of band into blob trees in this store.
pub struct StoreBlobs<'s, S: StoreFastPaths + ?Sized> {
    store: &'s S,
    builder: BlobBuilder,
}

impl<'s, S: StoreFastPaths + ?Sized> StoreBlobs<'s, S> {
    /// Blob access over `store`.
    pub fn new(store: &'s S) -> Self {
        StoreBlobs {
            store,
            builder: BlobBuilder::new(),
        }
    }
}

impl<S: StoreFastPaths + ?Sized> BlobStore for StoreBlobs<'_, S> {
    fn write_blob(&mut self, payload: &[u8]) -> Result<Address, BlobError> {
        self.builder
            .write(self.store, payload)
            .map_err(|e| Box::new(e) as BlobError)
    }

    fn read_blob(
        &mut self,
        address: &Address,
        len: u64,
        out: &mut Vec<u8>,
    ) -> Result<(), BlobError> {
        let start = out.len();
        read_blob(self.store, address, out).map_err(|e| Box::new(e) as BlobError)?;
        if (out.len() - start) as u64 != len {
            return Err(format!(
                "blob {address} holds {} bytes, the field says {len}",
                out.len() - start
            )
            .into());
        }
        Ok(())
    }
}
