//! Removing orphaned chunk files from a remote: files no manifest names, left by pushes that
//! were interrupted or lost a race before their manifest swap.
//!
//! A push uploads its files first and names them in the manifest last, so a file the manifest
//! does not name may belong to a push still under way. Only orphans older than a grace period
//! are deleted; a push never relies on an orphan older than `REUSE_MAX_AGE` (it uploads it
//! again instead), so with a grace period longer than that plus the longest push, a concurrent
//! push never loses a file it is about to name. Manifests only ever add files, and the
//! manifest is read both before and after listing, so a file any manifest version named while
//! the collection ran is kept.

use std::collections::HashSet;
use std::time::Duration;

use futures::stream::{self, StreamExt, TryStreamExt};
use object_store::ObjectStoreExt;
use prollystore::store::file::layout::file_name;

use crate::remote::{age, PARALLEL_REQUESTS};
use crate::{Remote, RemoteError};

/// Grace period of `prolly remote gc` unless told otherwise: a day.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(24 * 3600);

/// What a collection found and removed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GcReport {
    /// Chunk files the manifest names (kept).
    pub live_files: usize,
    /// Orphaned chunk files deleted, with their bytes.
    pub deleted_files: usize,
    /// Bytes of the deleted files.
    pub deleted_bytes: u64,
    /// Orphans kept because they are younger than the grace period.
    pub young_orphans: usize,
}

/// The file numbers the remote's current manifest names.
fn named_files(remote: &Remote) -> Result<HashSet<u64>, RemoteError> {
    Ok(remote
        .read_manifest()?
        .manifest
        .map(|m| m.files.iter().map(|f| f.seq).collect())
        .unwrap_or_default())
}

/// Deletes the chunk files of `remote` that its manifest does not name and that were last
/// written more than `grace` ago. Safe with pushes running when `grace` exceeds
/// [`REUSE_MAX_AGE`](crate::sync::REUSE_MAX_AGE) plus the longest push: a push uploads its
/// files before naming them, and never relies on an orphan older than that (it uploads it
/// again); a shorter grace is for remotes nobody pushes to meanwhile. Objects that are not
/// chunk files are left alone.
pub fn gc(remote: &Remote, grace: Duration) -> Result<GcReport, RemoteError> {
    let before = named_files(remote)?;
    let (store, prefix) = remote.object_store();
    let listed: Vec<object_store::ObjectMeta> = remote
        .run(store.list(Some(prefix)).try_collect())
        .map_err(|e| RemoteError::object("listing", prefix.as_ref(), e))?;
    let after = named_files(remote)?;
    let mut report = GcReport {
        live_files: after.len(),
        ..GcReport::default()
    };
    let mut doomed = Vec::new();
    for meta in listed {
        // Only `<seq>.chunks` directly under the prefix, named the way pushes name files.
        let Some(name) = meta.location.filename() else {
            continue;
        };
        let Some(seq) = name
            .strip_suffix(".chunks")
            .and_then(|s| u64::from_str_radix(s, 16).ok())
        else {
            continue;
        };
        if remote.path(&file_name(seq)) != meta.location
            || before.contains(&seq)
            || after.contains(&seq)
        {
            continue;
        }
        if age(&meta) <= grace {
            report.young_orphans += 1;
            continue;
        }
        report.deleted_files += 1;
        report.deleted_bytes += meta.size;
        doomed.push(meta.location);
    }
    remote.run(
        stream::iter(doomed.iter().map(|path| async move {
            match store.delete(path).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                Err(e) => Err(RemoteError::object("deleting", path.as_ref(), e)),
            }
        }))
        .buffer_unordered(PARALLEL_REQUESTS)
        .try_collect::<Vec<()>>(),
    )?;
    Ok(report)
}
