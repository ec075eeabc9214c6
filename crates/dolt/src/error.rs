//! One error type for everything this crate reads, so callers see which file, offset or chunk
//! was at fault.

use prollystore_format::Address;
use thiserror::Error;

/// What went wrong opening or reading a Dolt database.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum DoltError {
    /// An operating-system error while reading a file.
    #[error("{file}: {source}")]
    Io {
        /// The file being read.
        file: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A file's bytes are not what Dolt writes (corrupted or truncated).
    #[error("{file} is corrupted at offset {offset}: {reason}")]
    Corrupt {
        /// The file.
        file: String,
        /// Byte offset of the problem within the file.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
    /// A chunk that the database refers to is in none of its chunk files.
    #[error("chunk {0} is not in the database")]
    MissingChunk(Address),
    /// A chunk's decompressed bytes do not hash to its address.
    #[error("chunk {address} read from {file} at offset {offset} hashes to {actual}")]
    HashMismatch {
        /// The address it is stored under.
        address: Address,
        /// What its bytes hash to.
        actual: Address,
        /// The chunk file.
        file: String,
        /// Offset of the chunk's record in that file.
        offset: u64,
    },
    /// A chunk is not the message its referrer says it is, or the message is malformed.
    #[error("chunk {address}: {reason}")]
    BadChunk {
        /// The chunk's address.
        address: Address,
        /// What is wrong.
        reason: String,
    },
    /// A named thing (branch, tag, table, column) does not exist.
    #[error("{0} not found")]
    NotFound(String),
    /// Another process may be writing the database (Dolt's `noms/LOCK` is held, or a
    /// `dolt sql-server` is running on it), so it cannot be opened for writing.
    #[error("{path} is in use: {reason}")]
    Locked {
        /// The lock file or server file that says so.
        path: String,
        /// Who holds it, as far as known.
        reason: String,
    },
    /// A value given for a column (a key to look up, a range bound) does not fit the column.
    #[error("table {table:?}, column {column:?}: {reason}")]
    BadValue {
        /// The table.
        table: String,
        /// The column.
        column: String,
        /// What is wrong with the value.
        reason: String,
    },
    /// The data uses a feature this reader does not implement.
    #[error("unsupported: {0}")]
    Unsupported(String),
}

/// Shorthand for results of this crate.
pub type Result<T, E = DoltError> = std::result::Result<T, E>;

pub(crate) fn corrupt(file: &str, offset: u64, reason: impl Into<String>) -> DoltError {
    DoltError::Corrupt {
        file: file.to_string(),
        offset,
        reason: reason.into(),
    }
}

pub(crate) fn bad_chunk(address: Address, reason: impl Into<String>) -> DoltError {
    DoltError::BadChunk {
        address,
        reason: reason.into(),
    }
}
