//! The `prollystore.Error` hierarchy and the conversions of the library's errors into it, so
//! Python code catches one base class and reads the library's own message.

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::{create_exception, PyErr};

use prollystore::rows::RowError;
use prollystore::{StoreError, TreeError};
use prollystore_dolt::DoltError;

create_exception!(
    prollystore,
    Error,
    PyException,
    "Base class of every error the library raises."
);
create_exception!(
    prollystore,
    NotFoundError,
    Error,
    "A branch, tag, commit, table, column, index or map that does not exist."
);
create_exception!(
    prollystore,
    CorruptError,
    Error,
    "Stored bytes are damaged: a chunk is missing, does not hash to its address, or is not what \
     its referrer says."
);
create_exception!(
    prollystore,
    UnsupportedError,
    Error,
    "The data uses a feature this library does not implement yet."
);
create_exception!(
    prollystore,
    BadInputError,
    Error,
    "The input given is invalid whatever the database holds: SQL that does not parse or that \
     Dolt refuses, an invalid branch or tag name. Nothing was written."
);
create_exception!(
    prollystore,
    ConflictError,
    Error,
    "The database changed under the operation (a branch head moved since it was read): nothing \
     was written; read again and retry."
);
create_exception!(
    prollystore,
    EncodeError,
    Error,
    "A message the library built could not be encoded (a format limit, or a bug): nothing was \
     written."
);
create_exception!(
    prollystore,
    LockedError,
    Error,
    "Another process holds the database or store for writing."
);
create_exception!(
    prollystore,
    ClosedError,
    Error,
    "The handle (database, store, table or map) was closed."
);

/// `DoltError` as the exception that fits it.
pub fn dolt_err(e: DoltError) -> PyErr {
    let msg = e.to_string();
    match e {
        DoltError::NotFound(_) => NotFoundError::new_err(msg),
        DoltError::Corrupt { .. }
        | DoltError::MissingChunk(_)
        | DoltError::HashMismatch { .. }
        | DoltError::BadChunk { .. }
        | DoltError::Malformed { .. } => CorruptError::new_err(msg),
        DoltError::Unsupported(_) => UnsupportedError::new_err(msg),
        DoltError::BadInput { .. } => BadInputError::new_err(msg),
        DoltError::Conflict { .. } => ConflictError::new_err(msg),
        DoltError::Encode { .. } => EncodeError::new_err(msg),
        DoltError::Locked { .. } => LockedError::new_err(msg),
        DoltError::BadValue { .. } => pyo3::exceptions::PyValueError::new_err(msg),
        DoltError::Tree(t) => tree_err(t),
        _ => Error::new_err(msg),
    }
}

/// `StoreError` as the exception that fits it.
pub fn store_err(e: StoreError) -> PyErr {
    let msg = e.to_string();
    match e {
        StoreError::Corrupted { .. } | StoreError::BadMessage { .. } => CorruptError::new_err(msg),
        StoreError::Locked { .. } => LockedError::new_err(msg),
        StoreError::InvalidArgument(_) => pyo3::exceptions::PyValueError::new_err(msg),
        _ => Error::new_err(msg),
    }
}

/// `TreeError` as the exception that fits it.
pub fn tree_err(e: TreeError) -> PyErr {
    match e {
        TreeError::Store(s) => store_err(s),
        other => Error::new_err(other.to_string()),
    }
}

/// A row that does not fit its schema: `ValueError` naming the column (and the row, if known).
pub fn row_err(e: RowError, row: Option<usize>) -> PyErr {
    let msg = match row {
        Some(r) => format!("row {r}: {e}"),
        None => e.to_string(),
    };
    match e {
        RowError::Schema(_) => pyo3::exceptions::PyValueError::new_err(msg),
        _ => pyo3::exceptions::PyValueError::new_err(msg),
    }
}

/// The catalog's errors (map names, stored schemas).
pub fn catalog_err(e: prollystore::catalog::CatalogError) -> PyErr {
    Error::new_err(e.to_string())
}

/// The handle was closed.
pub fn closed(what: &str) -> PyErr {
    ClosedError::new_err(format!("the {what} is closed"))
}

/// Registers the exception classes on the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("NotFoundError", py.get_type::<NotFoundError>())?;
    m.add("CorruptError", py.get_type::<CorruptError>())?;
    m.add("UnsupportedError", py.get_type::<UnsupportedError>())?;
    m.add("LockedError", py.get_type::<LockedError>())?;
    m.add("BadInputError", py.get_type::<BadInputError>())?;
    m.add("ConflictError", py.get_type::<ConflictError>())?;
    m.add("EncodeError", py.get_type::<EncodeError>())?;
    m.add("ClosedError", py.get_type::<ClosedError>())?;
    Ok(())
}
