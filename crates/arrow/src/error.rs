//! What can go wrong turning stored rows into Arrow arrays, or Arrow arrays into rows.

use arrow_schema::ArrowError;
use prollystore::rows::RowError;
use prollystore::TreeError;
use prollystore_dolt::DoltError;
use thiserror::Error;

/// An error from reading rows into Arrow, or building a map from Arrow data.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading the Dolt database failed.
    #[error(transparent)]
    Dolt(#[from] DoltError),
    /// Reading or building a prolly tree failed.
    #[error(transparent)]
    Tree(#[from] TreeError),
    /// A row did not encode or decode under its schema.
    #[error(transparent)]
    Row(#[from] RowError),
    /// Arrow refused an array or a batch.
    #[error(transparent)]
    Arrow(#[from] ArrowError),
    /// A value or type that has no place in the other side's types; the message names the
    /// column (and row, for a value).
    #[error("{0}")]
    Mismatch(String),
}

/// Results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<Error> for ArrowError {
    /// Record batch readers yield `ArrowError`: ours travel inside `ExternalError`, except
    /// Arrow's own, which stay as they are.
    fn from(e: Error) -> ArrowError {
        match e {
            Error::Arrow(a) => a,
            other => ArrowError::ExternalError(Box::new(other)),
        }
    }
}
