//! The locked store under the writer: `writer` (`StoreWriter`: a locked, open database that
//! commits to a branch and sets or removes any dataset), `lock` (Dolt's writer lock, `flock`
//! on `noms/LOCK`, and the running-`dolt sql-server` check), `overlay` and `chunk_io` (the
//! session's chunks over the database's), `journal_append` (chunk and root records appended
//! to the chunk journal, fsync'd, root record last; the manifest left as Dolt leaves it),
//! `refs` (the addresses each message kind refers to, for copying reachable chunks),
//! `clone_target` (the empty database a clone fills), `push_target` (table files, a remote's
//! new store root and a `file://` remote's manifest, for a push).

pub(crate) mod chunk_io;
pub mod clone_target;
pub(crate) mod journal_append;
pub(crate) mod lock;
pub(crate) mod overlay;
pub mod push_target;
pub(crate) mod refs;
pub(crate) mod writer;
