//! Downloading whole chunk files for a clone, with the network, the hashing and the disk kept
//! busy at once.
//!
//! A file's header and tail (index, order table, footer) are read first and validated against
//! the manifest's record; the data region is then cut at chunk boundaries into parts of about
//! [`PART_BYTES`], fetched with parallel range reads. As each part arrives, a blocking task
//! checks every chunk in it against its address (several chunks hashed side by side) and
//! writes it at its offset in a temporary file, while the next parts are still downloading.
//! Nothing is synced here: the caller syncs every file once, before it switches a manifest.

use std::fs::File;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures::stream::{self, StreamExt, TryStreamExt};
use prollystore::format::{Address, HashProfile};
use prollystore::store::file::layout::{
    file_name, parse_tail, tail_len, FileRecord, IndexEntry, HEADER_LEN,
};

use crate::remote::PARALLEL_REQUESTS;
use crate::{Remote, RemoteError};

/// Target size of one range read of chunk data (a part holds whole chunks, so a part may be
/// smaller, or bigger when one chunk is).
pub(crate) const PART_BYTES: u64 = 4 << 20;

/// A chunk file being downloaded into a temporary file.
pub(crate) struct Download {
    /// The object name (`<seq>.chunks`).
    pub name: String,
    /// The temporary file the bytes go to (renamed by the caller once synced).
    pub tmp: PathBuf,
    /// Its open handle, shared by the parts' writers.
    pub file: Arc<Mutex<File>>,
    /// The chunks of the data region in data order, cut into parts.
    parts: Vec<Vec<IndexEntry>>,
}

fn io(what: String) -> impl FnOnce(std::io::Error) -> RemoteError {
    move |e| RemoteError::Io {
        context: what,
        source: e,
    }
}

/// Writes `bytes` at `offset` of the shared file.
fn write_at(file: &Mutex<File>, offset: u64, bytes: &[u8], tmp: &Path) -> Result<(), RemoteError> {
    use std::io::{Seek, SeekFrom, Write};
    let mut f = file.lock().expect("file lock poisoned");
    f.seek(SeekFrom::Start(offset))
        .and_then(|_| f.write_all(bytes))
        .map_err(io(format!("writing {} at {offset}", tmp.display())))
}

/// Reads and validates the header and tail of `record`'s file, creates its temporary file in
/// `dir` holding them, and plans the parts of its data region.
pub(crate) async fn start(
    remote: &Remote,
    dir: &Path,
    profile: HashProfile,
    record: FileRecord,
) -> Result<Download, RemoteError> {
    let name = file_name(record.seq);
    let object = remote.path(&name).to_string();
    let tail = tail_len(record.chunk_count)
        .filter(|&t| t <= record.file_len.saturating_sub(HEADER_LEN))
        .ok_or_else(|| {
            RemoteError::Invalid(format!(
                "remote object {object}: the manifest's chunk count does not fit the file length"
            ))
        })?;
    let tail_start = record.file_len - tail;
    let got = remote
        .read_ranges(&name, &[0..HEADER_LEN, tail_start..record.file_len])
        .await?;
    let mut entries = parse_tail(&object, &record, profile, &got[0], &got[1])?;
    // The index tiles the data region (checked above), so it ends where the index begins.
    let data_end = HEADER_LEN + entries.iter().map(|e| u64::from(e.len)).sum::<u64>();
    entries.sort_unstable_by_key(|e| e.offset);
    let mut parts: Vec<Vec<IndexEntry>> = Vec::new();
    let mut part_bytes = 0u64;
    for e in entries {
        match parts.last_mut() {
            Some(p) if part_bytes + u64::from(e.len) <= PART_BYTES => p.push(e),
            _ => {
                parts.push(vec![e]);
                part_bytes = 0;
            }
        }
        part_bytes += u64::from(e.len);
    }
    let tmp = dir.join(format!("{name}.tmp"));
    let file = File::create(&tmp).map_err(io(format!("creating {}", tmp.display())))?;
    file.set_len(record.file_len)
        .map_err(io(format!("sizing {}", tmp.display())))?;
    let file = Arc::new(Mutex::new(file));
    write_at(&file, 0, &got[0], &tmp)?;
    // A tail read longer than the index (version-1 files) also holds data: write from the
    // index on, the data comes with its parts.
    let skip = (data_end.max(tail_start) - tail_start) as usize;
    write_at(&file, tail_start + skip as u64, &got[1][skip..], &tmp)?;
    Ok(Download {
        name,
        tmp,
        file,
        parts,
    })
}

/// One part to fetch: its file, byte range and chunks.
struct Part {
    object: String,
    name: String,
    tmp: PathBuf,
    file: Arc<Mutex<File>>,
    range: Range<u64>,
    chunks: Vec<IndexEntry>,
}

/// Checks every chunk of a fetched part against its address, then writes the part.
fn verify_and_write(part: &Part, profile: HashProfile, bytes: &Bytes) -> Result<(), RemoteError> {
    let at = |e: &IndexEntry| {
        let s = (e.offset - part.range.start) as usize;
        &bytes[s..s + e.len as usize]
    };
    let chunks: Vec<&[u8]> = part.chunks.iter().map(at).collect();
    let mut actual = vec![Address::ZERO; chunks.len()];
    profile.addresses_of(&chunks, &mut actual);
    for (e, a) in part.chunks.iter().zip(&actual) {
        if *a != e.address {
            return Err(RemoteError::CorruptChunk {
                object: part.object.clone(),
                offset: e.offset,
                address: e.address,
                reason: format!("hashes to {a}"),
            });
        }
    }
    write_at(&part.file, part.range.start, bytes, &part.tmp)
}

/// Fetches, checks and writes every part of `downloads`, all files' parts in one stream with
/// [`PARALLEL_REQUESTS`] range reads in flight, each checked and written on a blocking thread
/// as it arrives. Returns the bytes fetched.
pub(crate) async fn fetch_parts(
    remote: &Remote,
    profile: HashProfile,
    downloads: &[Download],
) -> Result<u64, RemoteError> {
    let parts: Vec<Part> = downloads
        .iter()
        .flat_map(|d| {
            d.parts.iter().map(|chunks| {
                let start = chunks.first().map_or(0, |e| e.offset);
                let end = chunks.last().map_or(0, |e| e.offset + u64::from(e.len));
                Part {
                    object: remote.path(&d.name).to_string(),
                    name: d.name.clone(),
                    tmp: d.tmp.clone(),
                    file: d.file.clone(),
                    range: start..end,
                    chunks: chunks.clone(),
                }
            })
        })
        .collect();
    let fetched: Vec<u64> = stream::iter(parts.into_iter().map(|part| async move {
        let bytes = remote
            .read_ranges(&part.name, std::slice::from_ref(&part.range))
            .await?
            .pop()
            .unwrap_or_default();
        let n = bytes.len() as u64;
        tokio::task::spawn_blocking(move || verify_and_write(&part, profile, &bytes))
            .await
            .map_err(|e| RemoteError::Invalid(format!("a download task failed: {e}")))??;
        Ok::<u64, RemoteError>(n)
    }))
    .buffer_unordered(PARALLEL_REQUESTS)
    .try_collect()
    .await?;
    Ok(fetched.iter().sum())
}

/// Syncs every downloaded file (in parallel) and renames it to its final name in `dir`, then
/// syncs `dir`.
pub(crate) async fn finish(dir: &Path, downloads: Vec<Download>) -> Result<(), RemoteError> {
    let synced: Vec<()> = stream::iter(downloads.into_iter().map(|d| {
        let target = dir.join(&d.name);
        async move {
            tokio::task::spawn_blocking(move || {
                let f = d.file.lock().expect("file lock poisoned");
                f.sync_all()
                    .map_err(io(format!("syncing {}", d.tmp.display())))?;
                std::fs::rename(&d.tmp, &target)
                    .map_err(io(format!("renaming {}", d.tmp.display())))
            })
            .await
            .map_err(|e| RemoteError::Invalid(format!("a sync task failed: {e}")))?
        }
    }))
    .buffer_unordered(PARALLEL_REQUESTS)
    .try_collect()
    .await?;
    drop(synced);
    sync_dir(dir)
}

/// Syncs a directory, so renames in it survive a crash.
pub(crate) fn sync_dir(dir: &Path) -> Result<(), RemoteError> {
    #[cfg(unix)]
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io(format!("syncing the directory {}", dir.display())))?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}
