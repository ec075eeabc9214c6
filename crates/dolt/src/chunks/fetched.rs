//! [`FetchChunks`]: chunks that come from somewhere other than the local chunk files (a Dolt
//! remote read in place), behind the same [`super::DoltChunkSource`] the reader uses for a
//! local database ([`super::DoltChunkSource::fetched`]).
//!
//! The source keeps its own caches (the bounded cache of [`super::DoltChunkSource::chunk`] and
//! the arena of tree reads), so a fetcher needs none for chunks; the bulk leaf reader asks it
//! for a batch of leaves at once ([`super::DoltChunkSource::fetch_many`]), which lets it
//! group them into few requests.

use std::sync::Arc;

use prollystore_format::{Address, HashProfile};

use crate::error::{DoltError, Result};

/// A read-only supply of chunks by address, fetched on demand.
pub trait FetchChunks: Send + Sync + std::fmt::Debug {
    /// Where the chunks come from (a URL), for errors and `Debug`.
    fn name(&self) -> &str;

    /// The chunks at `addresses`, in the same order, each decompressed and checked against its
    /// address by the fetcher (the source does not check them again); `None` for a chunk the
    /// supply does not have. May be called from several threads at once.
    fn fetch(&self, addresses: &[Address]) -> Result<Vec<Option<Arc<[u8]>>>>;
}

/// Checks that every chunk of `chunks` (address, bytes) hashes to its address (Dolt's
/// SHA-512/20, several side by side): what a fetcher or a clone does with every chunk that
/// arrives before anything uses it. `origin` names where they came from, for the error.
pub fn check_chunks(chunks: &[(Address, &[u8])], origin: &str) -> Result<()> {
    let addresses: Vec<Address> = chunks.iter().map(|(a, _)| *a).collect();
    let bytes: Vec<&[u8]> = chunks.iter().map(|(_, c)| *c).collect();
    match HashProfile::Dolt.first_mismatch(&addresses, &bytes) {
        Some((i, actual)) => Err(DoltError::HashMismatch {
            address: addresses[i],
            actual,
            file: origin.to_string(),
            offset: 0,
        }),
        None => Ok(()),
    }
}
