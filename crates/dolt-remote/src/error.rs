//! Errors of the remote client: each says which remote (and chunk or file) and why.

use prollystore_format::Address;

/// Everything that can go wrong talking to a Dolt remote or storing what it sent.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// The URL is not one this client speaks.
    #[error("{url}: {reason}")]
    BadUrl {
        /// The URL as given.
        url: String,
        /// Why it is refused (unknown scheme, no database path, …).
        reason: String,
    },
    /// The server could not be reached, or it does not speak Dolt's remote API.
    #[error("{url}: {reason}")]
    NotARemote {
        /// The remote.
        url: String,
        /// What the connection or the first call said.
        reason: String,
    },
    /// The server is a Dolt remote but has no database at that path.
    #[error("{url}: no such database ({reason})")]
    NoSuchDatabase {
        /// The remote.
        url: String,
        /// What the server said.
        reason: String,
    },
    /// The remote refused who we said we are, or what that user may do (a password-protected
    /// `dolt sql-server`: give a user and `DOLT_REMOTE_PASSWORD`, as for `dolt --user`).
    #[error("{url}: the remote refused the credentials of {user}: {reason}")]
    Credentials {
        /// The remote's URL.
        url: String,
        /// The user the request named (`root`, with an empty password, when none was given).
        user: String,
        /// What the remote said.
        reason: String,
    },
    /// A remote call failed.
    #[error("{url}: {call} failed: {reason}")]
    Call {
        /// The remote.
        url: String,
        /// The gRPC method or HTTP request.
        call: String,
        /// What went wrong.
        reason: String,
    },
    /// The remote sent something that is not what Dolt sends (a malformed location, a chunk
    /// that does not decode or does not hash to its address, a short body).
    #[error("{url}: {what}: {reason}")]
    BadResponse {
        /// The remote (or the download URL it handed out).
        url: String,
        /// What was being read (a chunk address, a file URL and range).
        what: String,
        /// What is wrong.
        reason: String,
    },
    /// The remote lacks a chunk that its own data refers to.
    #[error("{url}: the remote does not have chunk {chunk}, which its data refers to")]
    MissingChunk {
        /// The remote.
        url: String,
        /// The chunk.
        chunk: Address,
    },
    /// The database has no remote of that name.
    #[error("unknown remote {name:?}: this database's remotes are {}", if known.is_empty() { "none".to_string() } else { known.join(", ") })]
    UnknownRemote {
        /// The name asked for.
        name: String,
        /// The remotes `repo_state.json` names.
        known: Vec<String>,
    },
    /// `remote add` of a name already taken.
    #[error("remote {name:?} already exists")]
    RemoteExists {
        /// The name.
        name: String,
    },
    /// The remote has no branch of that name.
    #[error("{url}: the remote has no branch {branch:?}")]
    NoSuchBranch {
        /// The remote.
        url: String,
        /// The branch.
        branch: String,
    },
    /// A push the remote refused: not a fast-forward, or its root moved under the push
    /// (another push won the compare-and-set). Nothing changed on either side.
    #[error("{url}: push rejected: {reason}")]
    Rejected {
        /// The remote.
        url: String,
        /// Why.
        reason: String,
    },
    /// The destination cannot be used (exists, not writable).
    #[error("{path}: {reason}")]
    Destination {
        /// The directory.
        path: String,
        /// Why.
        reason: String,
    },
    /// Writing or reading the local database failed.
    #[error(transparent)]
    Local(#[from] prollystore_dolt::error::DoltError),
}

/// Results of this crate.
pub type Result<T> = std::result::Result<T, RemoteError>;
