//! What can go wrong running SQL over a Dolt database: the database (a state that does not
//! resolve, a table that does not exist, a damaged chunk), the Arrow readers, DataFusion
//! (SQL it cannot parse or plan), or the way a query was asked for.

use datafusion::common::DataFusionError;

/// An error from [`crate::DoltSession`] or the `prolly-sql` command.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The database: a state that does not resolve, a missing table, a damaged chunk.
    #[error(transparent)]
    Dolt(#[from] prollystore_dolt::DoltError),
    /// Rows into Arrow arrays.
    #[error(transparent)]
    Arrow(#[from] prollystore_arrow::Error),
    /// Parsing, planning or running the query (a database error met while running it is
    /// shown as the database's own message).
    #[error("{}", describe(.0))]
    DataFusion(#[from] DataFusionError),
    /// The query text asks for something this crate does not do (the message says what).
    #[error("{0}")]
    Unsupported(String),
}

impl Error {
    /// The underlying database error, if the query failed reading the database (DataFusion
    /// wraps errors raised inside a scan).
    pub fn dolt(&self) -> Option<&prollystore_dolt::DoltError> {
        match self {
            Error::Dolt(e) => Some(e),
            Error::DataFusion(e) => find_dolt(e),
            _ => None,
        }
    }
}

/// DataFusion's message, or the database's or reader's own when DataFusion only carries it.
fn describe(e: &DataFusionError) -> String {
    match e {
        DataFusionError::External(inner) => inner.to_string(),
        DataFusionError::Context(c, inner) => format!("{c}: {}", describe(inner)),
        other => other.to_string(),
    }
}

fn find_dolt(e: &DataFusionError) -> Option<&prollystore_dolt::DoltError> {
    match e {
        DataFusionError::External(inner) => inner.downcast_ref(),
        DataFusionError::Context(_, inner) => find_dolt(inner),
        _ => None,
    }
}

/// A database error as DataFusion carries it.
pub(crate) fn dolt_error(e: prollystore_dolt::DoltError) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

/// An Arrow reader's error as DataFusion carries it.
pub(crate) fn arrow_error(e: prollystore_arrow::Error) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

/// Result of this crate's calls.
pub type Result<T, E = Error> = std::result::Result<T, E>;
