//! The tool's one error type: a sentence for the user (printed as `error: ...`), or a closed
//! output pipe (which ends the command quietly, as `head` expects).

use std::fmt;

/// What stopped a command.
#[derive(Debug)]
pub enum Error {
    /// A message for the user.
    Msg(String),
    /// Standard output was closed by the reader (for example `prolly scan ... | head`).
    BrokenPipe,
}

impl Error {
    /// An error with this message.
    pub fn msg(m: impl Into<String>) -> Error {
        Error::Msg(m.into())
    }

    /// The same error with `context: ` in front of its message.
    pub fn context(self, context: impl fmt::Display) -> Error {
        match self {
            Error::Msg(m) => Error::Msg(format!("{context}: {m}")),
            Error::BrokenPipe => Error::BrokenPipe,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Msg(m) => f.write_str(m),
            Error::BrokenPipe => f.write_str("output closed"),
        }
    }
}

impl std::error::Error for Error {}

/// `text` quoted for an error line: in full when short, else its first characters, an
/// ellipsis and its length, so that no input (a 1 MiB CSV header name) makes a huge line.
pub fn quoted(text: &str) -> String {
    prollystore::rows::quote_bounded(text)
}

/// [`quoted`] for bytes that should be UTF-8 (invalid sequences shown as U+FFFD).
pub fn quoted_bytes(text: &[u8]) -> String {
    quoted(&String::from_utf8_lossy(text))
}

/// A list of names for an error line, each [`quoted`], at most a few of them, then a count of
/// the rest.
pub fn quoted_list<'a>(names: impl IntoIterator<Item = &'a [u8]>) -> String {
    const SHOWN: usize = 8;
    let mut out = Vec::new();
    let mut rest = 0usize;
    for n in names {
        if out.len() < SHOWN {
            out.push(quoted_bytes(n));
        } else {
            rest += 1;
        }
    }
    let mut s = out.join(", ");
    if rest > 0 {
        s.push_str(&format!(" and {rest} more"));
    }
    s
}

/// Flattens an error and its sources into one line.
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        let t = inner.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        src = inner.source();
    }
    s
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            Error::BrokenPipe
        } else {
            Error::Msg(chain(&e))
        }
    }
}

impl From<csv::Error> for Error {
    fn from(e: csv::Error) -> Error {
        if let csv::ErrorKind::Io(io) = e.kind() {
            if io.kind() == std::io::ErrorKind::BrokenPipe {
                return Error::BrokenPipe;
            }
        }
        Error::Msg(chain(&e))
    }
}

impl From<prollystore::StoreError> for Error {
    fn from(e: prollystore::StoreError) -> Error {
        Error::Msg(chain(&e))
    }
}

impl From<prollystore_remote::RemoteError> for Error {
    fn from(e: prollystore_remote::RemoteError) -> Error {
        Error::Msg(chain(&e))
    }
}

impl From<prollystore::rows::RowError> for Error {
    fn from(e: prollystore::rows::RowError) -> Error {
        Error::Msg(chain(&e))
    }
}

impl From<prollystore::catalog::CatalogError> for Error {
    fn from(e: prollystore::catalog::CatalogError) -> Error {
        Error::Msg(chain(&e))
    }
}

impl From<prollystore::TreeError> for Error {
    fn from(e: prollystore::TreeError) -> Error {
        Error::Msg(chain(&e))
    }
}

impl From<prollystore_format::tuple::TupleError> for Error {
    fn from(e: prollystore_format::tuple::TupleError) -> Error {
        Error::Msg(chain(&e))
    }
}

impl From<prollystore_dolt::DoltError> for Error {
    fn from(e: prollystore_dolt::DoltError) -> Error {
        if let prollystore_dolt::DoltError::Io { source, .. } = &e {
            if source.kind() == std::io::ErrorKind::BrokenPipe {
                return Error::BrokenPipe;
            }
        }
        Error::Msg(chain(&e))
    }
}

/// The tool's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
