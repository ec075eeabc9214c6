//! Reading and putting chunks, as the layers that make new objects (commits, tables) need it,
//! apart from the open database that provides it.

use std::sync::Arc;

use prollystore_format::Address;

use crate::error::Result;

/// A store being written: chunks readable (including this session's) and new ones put.
pub(crate) trait ChunkIo {
    /// A chunk, which must exist.
    fn chunk(&self, address: &Address) -> Result<Arc<[u8]>>;
    /// Puts a chunk (durable at the next root update); returns its address.
    fn put(&mut self, chunk: &[u8]) -> Result<Address>;
}
