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
//!
//! A store pushed to a remote and cloned from it (a `file://` remote here; an `s3://` URL
//! works the same, credentials from the environment):
//!
//! ```
//! use prollystore::format::HashProfile;
//! use prollystore::{rows::RowSchema, Datum, FileStore, TypedMap};
//! use prollystore_remote::Remote;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let tmp = tempfile::tempdir()?;
//! let mut local = FileStore::create(tmp.path().join("local"), HashProfile::Blake3)?;
//! let schema = RowSchema::parse("name:varchar(40)", "score:bigint")?;
//! let rows = (0..1000).map(|i| [Datum::from(format!("user{i}")), Datum::Int(i)]);
//! TypedMap::from_rows(&local, schema, rows)?.save_as("scores")?.commit(&mut local)?;
//!
//! let url = format!("file://{}", tmp.path().join("remote").display());
//! std::fs::create_dir(tmp.path().join("remote"))?;
//! let remote = Remote::open(&url)?;
//! let pushed = prollystore_remote::push(&remote, &mut local, "origin", &[])?;
//! println!("{pushed:?}");
//!
//! let copy = prollystore_remote::clone(&remote, tmp.path().join("copy"))?;
//! let scores = TypedMap::open(&copy, "scores")?;
//! assert_eq!(scores.get(&["user7".into()])?.unwrap()[1], Datum::Int(7));
//! # Ok(())
//! # }
//! ```

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
