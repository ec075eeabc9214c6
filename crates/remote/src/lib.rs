//! # prollystore-remote
//!
//! Remotes for prollystore file stores on object storage, through the `object_store` crate:
//! `s3://bucket/prefix` (AWS S3, MinIO, R2, ...), `gs://bucket/prefix`, `az://container/prefix`,
//! `file:///dir`. A remote holds a store in exactly the file store's layout (`docs/FORMAT.md`):
//! a `MANIFEST` object and immutable `<seq>.chunks` objects.
//!
//! Connecting:
//! * [`Remote`] (module `remote`): a connection (URL, credentials from the environment or
//!   options), counting round trips; `location` turns a URL into an object store and a prefix.
//! * [`config`]: the names a local store gives its remotes.
//! * `error`: [`RemoteError`], what went wrong, with the object and address involved.
//!
//! Moving chunks:
//! * [`push`], [`pull`], [`clone`](clone()) (module [`sync`]): move only missing chunks; the
//!   remote manifest is switched by compare-and-swap after every chunk file is uploaded, so
//!   racing pushers get [`RemoteError::Conflict`] instead of losing an update.
//! * `download`: whole chunk files fetched for a clone, with network, hashing and disk busy
//!   at once.
//! * [`gc()`] (module `gc`): deletes chunk files no manifest names, past a grace period that
//!   keeps concurrent pushes safe.
//!
//! Reading in place:
//! * [`RemoteStore`] (module [`read`]): read a remote in place (range reads, prefetch along
//!   scans, a bounded cache), as a [`prollystore::ChunkStore`] that `Map` reads work on;
//!   `cache`: the least-recently-used cache of chunks no reader holds.
//! * [`BuiltinOrRemote`] (module `builtin_or_remote`): a built-in store or a remote store behind
//!   one type, for callers that choose at run time (the C ABI, the command-line tool).
//!
//! Heavy dependencies (an async runtime, HTTP and TLS clients) stay in this crate, out of the
//! core crates.

mod builtin_or_remote;
mod cache;
pub mod config;
mod download;
mod error;
mod gc;
mod location;
pub mod read;
mod remote;
pub mod sync;

pub use builtin_or_remote::BuiltinOrRemote;
pub use error::RemoteError;
pub use gc::{gc, GcReport, DEFAULT_GRACE};
pub use read::RemoteStore;
pub use remote::{put_bytes, Remote, RemoteStats};
pub use sync::{
    clone, prepare_push, pull, push, tracking_root, PreparedPush, PullReport, PushReport,
};
