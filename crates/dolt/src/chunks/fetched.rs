//! [`FetchChunks`]: chunks that come from somewhere other than the local chunk files (a Dolt
//! remote read in place), behind the same [`super::DoltChunkSource`] the reader uses for a
//! local database ([`super::DoltChunkSource::fetched`]).
//!
//! The source keeps its own caches (the bounded cache of [`super::DoltChunkSource::chunk`] and
//! the arena of tree reads), so a fetcher needs none for chunks; the bulk leaf reader asks it
//! for a batch of leaves at once ([`super::DoltChunkSource::fetch_many`]), which lets it
//! group them into few requests.

use std::sync::Arc;

use prollystore_format::Address;

use crate::error::Result;

/// A read-only supply of chunks by address, fetched on demand.
pub trait FetchChunks: Send + Sync + std::fmt::Debug {
    /// Where the chunks come from (a URL), for errors and `Debug`.
    fn name(&self) -> &str;

    /// The chunks at `addresses`, in the same order, each decompressed and checked against its
    /// address by the fetcher (the source does not check them again); `None` for a chunk the
    /// supply does not have. May be called from several threads at once.
    fn fetch(&self, addresses: &[Address]) -> Result<Vec<Option<Arc<[u8]>>>>;
}
