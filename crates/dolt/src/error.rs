//! One error type for everything this crate reads and writes, so callers see which file,
//! offset or chunk was at fault, or why a write was refused.

use prollystore::{StoreError, TreeError};
use prollystore_format::collation::CollationError;
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
    /// The caller's input is invalid, whatever the database holds: malformed SQL (a `CREATE`
    /// or `ALTER TABLE` that does not parse or contradicts itself), a bad CSV or ops line, an
    /// invalid branch or tag name, an argument out of range. Nothing was written.
    #[error("{what}: {reason}{}", suffix(.source))]
    BadInput {
        /// What was given (`ALTER TABLE`, `branch name "x"`, `CSV line 3`...).
        what: String,
        /// Why it is refused.
        reason: String,
        /// The parser's or converter's own error, when one was wrapped.
        #[source]
        source: Option<BoxError>,
    },
    /// The data uses a feature Dolt has that this library does not implement (yet).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// Stored data (a row, a schema, a map entry) is not what Dolt writes, where no file offset
    /// or chunk address is at hand to report it as [`DoltError::Corrupt`] or
    /// [`DoltError::BadChunk`].
    #[error("{what} is malformed: {reason}{}", suffix(.source))]
    Malformed {
        /// The stored thing (`a keyless row of "t"`, `the schema of "t"`...).
        what: String,
        /// What is wrong with it.
        reason: String,
        /// The decoder's own error, when one was wrapped.
        #[source]
        source: Option<BoxError>,
    },
    /// The database changed under the operation (a branch head moved since it was read, the
    /// journal and the manifest disagree about the root): nothing was written; read again
    /// and retry.
    #[error("conflict: {what}: {reason}")]
    Conflict {
        /// What changed (`branch "main"`, `the chunk journal`).
        what: String,
        /// How it differs from what the operation expected.
        reason: String,
    },
    /// A message this library built could not be encoded (a value past a format limit, or a
    /// bug): nothing was written.
    #[error("cannot encode {what}: {source}")]
    Encode {
        /// The message (`commit`, `root value`, `table "t"`...).
        what: String,
        /// The encoder's error.
        #[source]
        source: BoxError,
    },
    /// A tree operation failed in a way none of the variants above describes (an edit or
    /// build refused, a store that is read-only...).
    #[error(transparent)]
    Tree(TreeError),
    /// The operation was refused because of the database's state, and nothing was written: a
    /// branch or tag that already exists, a branch not merged, uncommitted changes in the way,
    /// rows that cannot be matched across a primary-key change.
    #[error("refused: {0}")]
    Refused(String),
}

impl DoltError {
    /// The same error saying it came from SQL statement `sql` (`what`: `ALTER TABLE`..., in
    /// place of the inner statement kind a shared clause parser named) when it is about the input ([`DoltError::BadInput`], [`DoltError::Unsupported`]); any other
    /// error unchanged.
    pub fn in_sql(self, what: &str, sql: &str) -> DoltError {
        match self {
            DoltError::BadInput { reason, source, .. } => DoltError::BadInput {
                what: what.to_string(),
                reason: format!("{reason} (in {sql:?})"),
                source,
            },
            DoltError::Unsupported(m) => unsupported_sql(what, sql, m),
            other => other,
        }
    }

    /// The same error with a [`DoltError::BadValue`]'s reason rewritten by `f` (to say which
    /// row of the caller's, or through what, a value came); any other error unchanged.
    pub(crate) fn map_reason(self, f: impl FnOnce(String) -> String) -> DoltError {
        match self {
            DoltError::BadValue {
                table,
                column,
                reason,
            } => DoltError::BadValue {
                table,
                column,
                reason: f(reason),
            },
            other => other,
        }
    }
}

/// Store errors as the variants above when one fits (a missing chunk, an I/O error, a damaged
/// file or chunk), so callers match on one type whichever layer failed.
impl From<StoreError> for DoltError {
    fn from(e: StoreError) -> DoltError {
        match e {
            StoreError::Missing(address) => DoltError::MissingChunk(address),
            StoreError::Io { context, source } => DoltError::Io {
                file: context,
                source,
            },
            StoreError::Corrupted {
                file,
                offset,
                reason,
            } => DoltError::Corrupt {
                file,
                offset,
                reason,
            },
            StoreError::BadMessage { address, source } => bad_chunk(address, source.to_string()),
            StoreError::HashMismatch {
                address,
                actual,
                location,
            } => DoltError::HashMismatch {
                address,
                actual,
                file: location.unwrap_or_default(),
                offset: 0,
            },
            other => DoltError::Tree(TreeError::Store(other)),
        }
    }
}

/// Tree errors: store failures as [`From<StoreError>`] maps them, malformed nodes and blobs as
/// [`DoltError::BadChunk`], the rest as [`DoltError::Tree`].
impl From<TreeError> for DoltError {
    fn from(e: TreeError) -> DoltError {
        match e {
            TreeError::Store(s) => s.into(),
            TreeError::Malformed { address, reason } => bad_chunk(address, reason),
            TreeError::BadBlob { address, reason } => bad_chunk(address, reason),
            other => DoltError::Tree(other),
        }
    }
}

/// A wrapped error kept as the source of a [`DoltError`].
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// `": {source}"` when there is a source, for the messages that show it.
fn suffix(source: &Option<BoxError>) -> String {
    source
        .as_ref()
        .map(|e| format!(": {e}"))
        .unwrap_or_default()
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

/// [`DoltError::BadInput`] without a wrapped error.
pub fn bad_input(what: impl Into<String>, reason: impl Into<String>) -> DoltError {
    DoltError::BadInput {
        what: what.into(),
        reason: reason.into(),
        source: None,
    }
}

/// [`DoltError::BadInput`] wrapping the parser's or converter's error.
pub fn bad_input_from(
    what: impl Into<String>,
    reason: impl Into<String>,
    source: impl Into<BoxError>,
) -> DoltError {
    DoltError::BadInput {
        what: what.into(),
        reason: reason.into(),
        source: Some(source.into()),
    }
}

/// [`DoltError::Malformed`] without a wrapped error.
pub fn malformed(what: impl Into<String>, reason: impl Into<String>) -> DoltError {
    DoltError::Malformed {
        what: what.into(),
        reason: reason.into(),
        source: None,
    }
}

/// [`DoltError::Malformed`] wrapping the decoder's error.
pub fn malformed_from(
    what: impl Into<String>,
    reason: impl Into<String>,
    source: impl Into<BoxError>,
) -> DoltError {
    DoltError::Malformed {
        what: what.into(),
        reason: reason.into(),
        source: Some(source.into()),
    }
}

/// [`DoltError::Encode`] for message `what`.
pub fn encode(what: impl Into<String>, source: impl Into<BoxError>) -> DoltError {
    DoltError::Encode {
        what: what.into(),
        source: source.into(),
    }
}

/// A collation named by the caller that cannot be used: [`DoltError::Unsupported`] for one
/// Dolt accepts but whose weights are not here yet, [`DoltError::BadInput`] for the others.
pub fn collation_input(what: impl Into<String>, e: CollationError) -> DoltError {
    match e {
        CollationError::NotImplemented { .. } => {
            DoltError::Unsupported(format!("{}: {e}", what.into()))
        }
        other => bad_input_from(what, "its collation", other),
    }
}

/// [`DoltError::Unsupported`] for a clause of the SQL statement `sql` (`what`: `ALTER TABLE`,
/// `CREATE TABLE`) that Dolt takes and this library does not yet.
pub fn unsupported_sql(what: &str, sql: &str, why: impl std::fmt::Display) -> DoltError {
    DoltError::Unsupported(format!("{what}: {why} (in {sql:?})"))
}

/// [`DoltError::BadInput`] for SQL text `sql` that does not parse, with the parser's error.
pub fn unparsable_sql(what: &str, sql: &str, source: impl Into<BoxError>) -> DoltError {
    bad_input_from(what, format!("cannot parse {sql:?}"), source)
}

/// A stored collation id or name that cannot be used: [`DoltError::Unsupported`] for one Dolt
/// accepts but whose weights are not here yet, [`DoltError::Malformed`] for the others.
pub fn collation_stored(what: impl Into<String>, e: CollationError) -> DoltError {
    match e {
        CollationError::NotImplemented { .. } => {
            DoltError::Unsupported(format!("{}: {e}", what.into()))
        }
        other => malformed_from(what, "its collation", other),
    }
}

/// [`DoltError::Conflict`].
pub fn conflict(what: impl Into<String>, reason: impl Into<String>) -> DoltError {
    DoltError::Conflict {
        what: what.into(),
        reason: reason.into(),
    }
}

pub(crate) fn bad_chunk(address: Address, reason: impl Into<String>) -> DoltError {
    DoltError::BadChunk {
        address,
        reason: reason.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_and_tree_errors_keep_their_kind() {
        let a = Address::from_slice(&[7; 20]).unwrap_or(Address::ZERO);
        let missing: DoltError = TreeError::Store(StoreError::Missing(a)).into();
        assert!(matches!(missing, DoltError::MissingChunk(x) if x == a));
        let io: DoltError = StoreError::Io {
            context: "reading f".into(),
            source: std::io::Error::other("disk"),
        }
        .into();
        assert!(
            matches!(io, DoltError::Io { ref file, .. } if file == "reading f"),
            "{io}"
        );
        let malformed: DoltError = TreeError::Malformed {
            address: a,
            reason: "empty internal node",
        }
        .into();
        assert!(matches!(malformed, DoltError::BadChunk { address, .. } if address == a));
        let unsorted: DoltError = TreeError::Unsorted { index: 3 }.into();
        assert!(matches!(
            unsorted,
            DoltError::Tree(TreeError::Unsorted { index: 3 })
        ));
        assert!(unsorted.to_string().contains("item 3"), "{unsorted}");
    }

    /// The new kinds say what and why, and keep the error they wrap as their source.
    #[test]
    fn new_kinds_say_what_and_keep_sources() {
        use std::error::Error as _;
        let parse = std::io::Error::other("syntax error at 3");
        let e = bad_input_from("ALTER TABLE", "cannot parse \"x\"", parse);
        assert_eq!(
            e.to_string(),
            "ALTER TABLE: cannot parse \"x\": syntax error at 3"
        );
        assert_eq!(e.source().unwrap().to_string(), "syntax error at 3");
        let e = bad_input("branch name \"a..b\"", "`..`");
        assert!(e.source().is_none() && e.to_string() == "branch name \"a..b\": `..`");
        let e = encode("commit", "too many parents");
        assert_eq!(e.to_string(), "cannot encode commit: too many parents");
        assert!(e.source().is_some());
        let e = malformed("a keyless row's key", "shorter than its hash");
        assert_eq!(
            e.to_string(),
            "a keyless row's key is malformed: shorter than its hash"
        );
        let e = conflict("branch \"main\"", "its head moved");
        assert_eq!(e.to_string(), "conflict: branch \"main\": its head moved");
        let e = collation_input("table \"t\"", CollationError::UnknownName("x".into()));
        assert!(
            matches!(e, DoltError::BadInput { .. }) && e.source().is_some(),
            "{e:?}"
        );
        let e = collation_stored("column", CollationError::UnknownId(9999));
        assert!(matches!(e, DoltError::Malformed { .. }), "{e:?}");
        let e = bad_input("CREATE TABLE", "no table name").in_sql("ALTER TABLE", "ALTER x");
        assert_eq!(e.to_string(), "ALTER TABLE: no table name (in \"ALTER x\")");
        let e = DoltError::Unsupported("CREATE TABLE: LIKE".into()).in_sql("ALTER TABLE", "s");
        assert!(matches!(e, DoltError::Unsupported(ref m) if m.contains("(in \"s\")")));
    }
}
