//! What can go wrong talking to a remote, with the object and address involved.

use prollystore::format::Address;
use prollystore::StoreError;
use thiserror::Error;

/// An error from a remote operation.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum RemoteError {
    /// The remote's manifest changed since it was read (another writer pushed first), or a map
    /// on the remote moved past what this store last pulled: pull, then retry the push.
    #[error("conflict on remote {remote}: {reason}; pull and retry")]
    Conflict {
        /// The remote's URL.
        remote: String,
        /// What changed.
        reason: String,
    },
    /// The URL names no store this build can reach.
    #[error("bad remote URL {url:?}: {reason}")]
    BadUrl {
        /// The URL given.
        url: String,
        /// Why it is unusable.
        reason: String,
    },
    /// A request to the object store failed (after the object store's own retries).
    #[error("{context}: {source}")]
    ObjectStore {
        /// What was being done, with the object's path.
        context: String,
        /// The object store's error.
        #[source]
        source: object_store::Error,
    },
    /// An object on the remote is missing.
    #[error("remote object {object} is missing{}", chunk_suffix(.address))]
    MissingObject {
        /// The object's path.
        object: String,
        /// The chunk that was wanted from it, if any.
        address: Option<Address>,
    },
    /// A chunk fetched from the remote does not hash to its address, or came back short.
    #[error("remote object {object} is corrupted at offset {offset}: chunk {address} {reason}")]
    CorruptChunk {
        /// The object's path.
        object: String,
        /// Offset of the chunk in the object.
        offset: u64,
        /// The chunk's address.
        address: Address,
        /// What was wrong.
        reason: String,
    },
    /// The local store (or a remote manifest or chunk-file index, checked like a local file).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A local file operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, with the file name.
        context: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The request makes no sense (an unknown remote name, a clone into a non-empty store, ...).
    #[error("{0}")]
    Invalid(String),
}

fn chunk_suffix(address: &Option<Address>) -> String {
    match address {
        Some(a) => format!(" (wanted for chunk {a})"),
        None => String::new(),
    }
}

impl RemoteError {
    /// Wraps an object-store error, turning "not found" into [`RemoteError::MissingObject`].
    pub(crate) fn object(context: impl Into<String>, object: &str, e: object_store::Error) -> Self {
        match e {
            object_store::Error::NotFound { .. } => RemoteError::MissingObject {
                object: object.to_string(),
                address: None,
            },
            source => RemoteError::ObjectStore {
                context: format!("{} {object}", context.into()),
                source,
            },
        }
    }

    /// This error as a [`StoreError`], for the chunk-store traits (remote reads).
    pub(crate) fn into_store_error(self) -> StoreError {
        match self {
            RemoteError::Store(e) => e,
            RemoteError::CorruptChunk {
                object,
                offset,
                reason,
                address,
            } => StoreError::Corrupted {
                file: object,
                offset,
                reason: format!("chunk {address} {reason}"),
            },
            other => StoreError::Io {
                context: "reading the remote store".to_string(),
                source: std::io::Error::other(other.to_string()),
            },
        }
    }
}
