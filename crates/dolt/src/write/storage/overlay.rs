//! A chunk store for editing trees of an open database: reads find this session's chunks first
//! (including those already written to the journal: the session store keeps them), then the
//! database's files; puts go to the session's memory only, so nothing reaches the database
//! until a commit writes what its new root reaches (a rejected change writes nothing).
//! [`OverlayIo`] is the one adapter that hands it to code taking a [`ChunkIo`].

use std::ops::Range;
use std::sync::Arc;

use prollystore::store::{ChunkStore, LentSpace, MemoryStore, StoreError, StoreFastPaths};
use prollystore_format::message::Node;
use prollystore_format::{Address, HashProfile};

use super::chunk_io::ChunkIo;
use crate::chunks::DoltChunkSource;
use crate::error::{DoltError, Result};
use crate::expressions::Engine;

/// The database's chunks with this session's new ones over them.
pub(crate) struct Overlay<'a> {
    /// What the database held when it was opened.
    pub base: &'a DoltChunkSource,
    /// Chunks made in memory (every tree node, blob and message this session built).
    pub new: &'a MemoryStore,
    /// The writer's SQL expression engine (computed columns, CHECKs), if it was given one.
    pub engine: &'a Engine,
}

impl ChunkStore for Overlay<'_> {
    fn profile(&self) -> HashProfile {
        HashProfile::Dolt
    }

    fn get(&self, address: &Address) -> Result<Option<&[u8]>, StoreError> {
        if let Some(c) = self.new.get(address)? {
            return Ok(Some(c));
        }
        self.base.get(address)
    }

    fn get_node(&self, address: &Address) -> Result<Node<'_>, StoreError> {
        if self.new.has(address)? {
            return self.new.get_node(address);
        }
        self.base.get_node(address)
    }

    fn has(&self, address: &Address) -> Result<bool, StoreError> {
        Ok(self.new.has(address)? || self.base.has(address)?)
    }

    fn put(&self, chunk: &[u8]) -> Result<Address, StoreError> {
        self.new.put(chunk)
    }
}

/// Puts go to the memory store, so its fast paths for them serve here too: nodes a build has
/// already hashed (on its hash thread) are not hashed again, and leaves are serialized into
/// memory the store lends. Reads keep the defaults (they must look in three places), but
/// read-ahead reaches the database's files.
impl StoreFastPaths for Overlay<'_> {
    unsafe fn put_node(&self, chunk: &[u8]) -> Result<Address, StoreError> {
        // SAFETY: the caller's promise (this method's contract) is the inner store's.
        unsafe { self.new.put_node(chunk) }
    }

    unsafe fn put_node_hashed(&self, address: Address, chunk: &[u8]) -> Result<(), StoreError> {
        // SAFETY: the caller's promise (this method's contract) is the inner store's.
        unsafe { self.new.put_node_hashed(address, chunk) }
    }

    fn lend(&self, want: usize) -> Option<LentSpace<'_>> {
        self.new.lend(want)
    }

    unsafe fn adopt(
        &self,
        space: LentSpace<'_>,
        chunks: &[(Address, Range<usize>)],
    ) -> Result<(), StoreError> {
        // SAFETY: the caller's promise (this method's contract) is the inner store's.
        unsafe { self.new.adopt(space, chunks) }
    }

    const PREFETCHES: bool = true;

    /// The database's files read ahead for the nodes this session did not make.
    fn prefetch(&self, addresses: &[Address]) {
        let base: Vec<Address> = addresses
            .iter()
            .filter(|a| !self.new.has(a).unwrap_or(true))
            .copied()
            .collect();
        self.base.prefetch(&base);
    }
}

/// The overlay as [`ChunkIo`] (reads through it, puts into its memory).
pub(crate) struct OverlayIo<'a, 'b>(pub(crate) &'a Overlay<'b>);

impl ChunkIo for OverlayIo<'_, '_> {
    fn chunk(&self, address: &Address) -> Result<Arc<[u8]>> {
        match self.0.get(address)? {
            Some(c) => Ok(Arc::from(c)),
            None => Err(DoltError::MissingChunk(*address)),
        }
    }

    fn put(&mut self, chunk: &[u8]) -> Result<Address> {
        Ok(self.0.put(chunk)?)
    }
}
