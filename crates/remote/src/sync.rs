//! Moving chunks between a local [`FileStore`] and a [`Remote`]: push, pull, clone.
//!
//! Only the chunks the other side lacks move (compared by address against the chunk-file
//! indexes), grouped into chunk files of the documented format. A push uploads every file before
//! it swaps the remote manifest with a compare-and-swap, so a reader never sees a manifest
//! naming a missing file, and of two racing pushers one wins and the other gets
//! [`RemoteError::Conflict`]. Files are named by their content (a hash of their footer
//! checksum), so an interrupted push that is retried finds its files already uploaded and
//! reuses them; a pull commits what it fetched in batches, so a retried pull fetches only the
//! rest. Every chunk fetched is checked against its address.
//!
//! Each local store remembers, per remote and map, the root it last pushed or pulled, as the
//! root `remotes/<remote>/<map>`. A push refuses to move a map the remote changed since then
//! (pull first); a pull moves a local map only if it has not changed since then, and reports
//! it as diverged otherwise (nothing local is overwritten).

use std::collections::{BTreeMap, HashSet};
use std::hash::BuildHasherDefault;
use std::path::Path;
use std::sync::Arc;

use futures::stream::{self, StreamExt, TryStreamExt};
use prollystore::format::message::Message;
use prollystore::format::{Address, HashProfile};
use prollystore::store::file::layout::{
    file_name, write_chunk_file, FileRecord, IndexEntry, Manifest, MANIFEST,
};
use prollystore::store::AddressHasher;
use prollystore::store::RootUpdate;
use prollystore::FileStore;

use crate::download::{self, Download};
use crate::remote::{ChunkAt, ManifestVersion, PARALLEL_REQUESTS};
use crate::{config, Remote, RemoteError};

type AddressSet = HashSet<Address, BuildHasherDefault<AddressHasher>>;

/// Most bytes of chunks put in one chunk file by a push, or fetched before a commit by a pull.
const BATCH_BYTES: u64 = 64 << 20;
/// Oldest orphaned chunk file a push reuses instead of uploading again; [`crate::gc`] keeps
/// orphans younger than its grace period, which must exceed this plus the longest push.
pub const REUSE_MAX_AGE: std::time::Duration = std::time::Duration::from_secs(3600);
/// Prefix of the roots that remember remote state.
const TRACKING: &str = "remotes/";

/// The root that remembers what `map` was on remote `remote` at the last push or pull.
pub fn tracking_root(remote: &str, map: &str) -> String {
    format!("{TRACKING}{remote}/{map}")
}

/// What a push did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PushReport {
    /// The maps pushed, with their new roots.
    pub maps: BTreeMap<String, Address>,
    /// Chunks the remote lacked, now uploaded.
    pub chunks: u64,
    /// Bytes of those chunks.
    pub chunk_bytes: u64,
    /// Bytes of chunk files uploaded (chunks plus index and footer).
    pub bytes_uploaded: u64,
    /// Chunk files found already uploaded by an interrupted earlier push, and reused.
    pub files_reused: usize,
}

/// What a pull did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PullReport {
    /// Chunks fetched.
    pub chunks: u64,
    /// Bytes of those chunks.
    pub bytes: u64,
    /// Maps moved to the remote's root.
    pub updated: BTreeMap<String, Address>,
    /// Maps changed both here and on the remote since the last pull: left as they were here;
    /// the remote's root is in `remotes/<remote>/<map>`.
    pub diverged: Vec<String>,
}

/// A push with its chunk files uploaded, waiting for the manifest swap
/// ([`PreparedPush::commit`]). Splitting the two lets tests race two pushers deterministically.
#[derive(Debug)]
pub struct PreparedPush<'r> {
    remote: &'r Remote,
    name: String,
    expected: ManifestVersion,
    manifest: Manifest,
    report: PushReport,
}

fn check_profile(remote: &Remote, m: &Manifest, profile: HashProfile) -> Result<(), RemoteError> {
    if m.profile != profile {
        return Err(RemoteError::Invalid(format!(
            "remote {} uses hash profile {}, the local store {}",
            remote.url(),
            m.profile.name(),
            profile.name()
        )));
    }
    Ok(())
}

/// A content-derived file number: equal files get equal names, so a retried push reuses what
/// an interrupted one uploaded, and two pushers never write different bytes to one name.
fn seq_for(checksum: u64) -> u64 {
    (checksum >> 2) | 1
}

/// The maps of `local` (its roots except the tracking ones).
fn local_maps(local: &FileStore) -> Vec<String> {
    local
        .roots()
        .keys()
        .filter(|n| !n.starts_with(TRACKING))
        .cloned()
        .collect()
}

/// Uploads what the remote lacks for `maps` (all maps when empty); the manifest is not yet
/// swapped. Fails with [`RemoteError::Conflict`] if a map moved on the remote since this store
/// last pulled it.
pub fn prepare_push<'r>(
    remote: &'r Remote,
    local: &FileStore,
    name: &str,
    maps: &[String],
) -> Result<PreparedPush<'r>, RemoteError> {
    let profile = local.profile();
    let expected = remote.read_manifest()?;
    if let Some(m) = &expected.manifest {
        check_profile(remote, m, profile)?;
    }
    let mut manifest = expected
        .manifest
        .clone()
        .unwrap_or_else(|| Manifest::empty(profile));
    let explicit = !maps.is_empty();
    let maps = if maps.is_empty() {
        local_maps(local)
    } else {
        maps.to_vec()
    };
    let mut report = PushReport::default();
    for m in &maps {
        let ours = local.root(m).ok_or_else(|| {
            RemoteError::Invalid(format!("the local store has no map named {m:?}"))
        })?;
        if let Some(theirs) = manifest.roots.get(m) {
            let tracked = local.root(&tracking_root(name, m));
            if *theirs != ours && tracked != Some(*theirs) {
                if tracked == Some(ours) {
                    // Unchanged here since the last pull, moved there: nothing to push.
                    continue;
                }
                return Err(RemoteError::Conflict {
                    remote: remote.url().to_string(),
                    reason: format!("map {m:?} is {theirs} there, which this store has not pulled"),
                });
            }
        }
        report.maps.insert(m.clone(), ours);
    }
    // The chunks the remote lacks.
    let indexes = remote.indexes(profile, &manifest.files)?;
    let remote_has: AddressSet = indexes
        .iter()
        .flat_map(|i| i.iter().map(|e| e.address))
        .collect();
    // Named maps: only the chunks they reach; all maps: every chunk the remote lacks.
    let reached = if explicit {
        reached_from(local, report.maps.values().copied(), &remote_has)?
    } else {
        None
    };
    let wanted =
        |a: &Address| !remote_has.contains(a) && reached.as_ref().is_none_or(|r| r.contains(a));
    // Chunks already set to go (a chunk may be in several local files).
    let mut seen = AddressSet::default();
    let mut batches: Vec<Vec<(Address, &[u8])>> = vec![Vec::new()];
    let mut batch_bytes = 0u64;
    let mut files: Vec<(FileRecord, std::path::PathBuf)> = Vec::new();
    let mut repack: Vec<Address> = Vec::new();
    for (record, mut addresses) in local.chunk_files() {
        if !addresses.is_empty() && addresses.iter().all(|a| wanted(a) && !seen.contains(a)) {
            // The remote has none of this file's chunks and needs all: upload the file as it
            // is (it is in the remote's format already).
            for a in &addresses {
                seen.insert(*a);
                report.chunks += 1;
                report.chunk_bytes += local.get(a)?.map_or(0, |c| c.len() as u64);
            }
            let path = local.dir().join(file_name(record.seq));
            files.push((
                FileRecord {
                    seq: seq_for(record.checksum),
                    ..record
                },
                path,
            ));
        } else {
            addresses.retain(wanted);
            repack.extend(addresses);
        }
    }
    for address in repack {
        if !seen.insert(address) {
            continue;
        }
        let chunk = local
            .get(&address)?
            .ok_or(prollystore::StoreError::Missing(address))?;
        if batch_bytes + chunk.len() as u64 > BATCH_BYTES && batch_bytes > 0 {
            batches.push(Vec::new());
            batch_bytes = 0;
        }
        batch_bytes += chunk.len() as u64;
        report.chunks += 1;
        report.chunk_bytes += chunk.len() as u64;
        batches
            .last_mut()
            .expect("one batch at least")
            .push((address, chunk));
    }
    // Write each batch as a chunk file, then upload those the remote does not have yet.
    let tmp = tempfile::tempdir().map_err(|e| RemoteError::Io {
        context: "creating a temporary directory".into(),
        source: e,
    })?;
    for (i, batch) in batches.iter().filter(|b| !b.is_empty()).enumerate() {
        let path = tmp.path().join(format!("{i}.chunks"));
        let (_, mut record) = write_chunk_file(&path, 0, profile, batch)?;
        record.seq = seq_for(record.checksum);
        files.push((record, path));
    }
    drop(batches);
    let reused: Vec<bool> = remote.wait(
        files.len() as u64 * 2,
        stream::iter(files.iter().map(|(record, path)| async move {
            let name = file_name(record.seq);
            // Reuse only recent files: an older one may be an orphan a concurrent `gc` is
            // about to delete (its grace period exceeds REUSE_MAX_AGE); uploading the same
            // bytes again makes it recent.
            if let Some((len, age)) = remote.size_of(&name).await? {
                if len == record.file_len && age < REUSE_MAX_AGE {
                    return Ok::<bool, RemoteError>(true);
                }
            }
            remote.upload(&name, path).await?;
            Ok(false)
        }))
        .buffered(2)
        .try_collect(),
    )?;
    for ((record, _), reused) in files.iter().zip(reused) {
        if reused {
            report.files_reused += 1;
        } else {
            report.bytes_uploaded += record.file_len;
        }
        if !manifest.files.iter().any(|f| f.seq == record.seq) {
            manifest.files.push(*record);
        }
    }
    manifest.files.sort_by_key(|f| f.seq);
    manifest.next_seq = manifest
        .files
        .iter()
        .map(|f| f.seq + 1)
        .max()
        .unwrap_or(1)
        .max(manifest.next_seq);
    manifest.generation += 1;
    for (m, root) in &report.maps {
        manifest.roots.insert(m.clone(), *root);
    }
    Ok(PreparedPush {
        remote,
        name: name.to_string(),
        expected,
        manifest,
        report,
    })
}

/// The chunks reachable from `roots` in `local` that `remote_has` lacks, following every
/// reference a Dolt message holds and stopping at chunks the remote has (a remote holds whole
/// closures: every push uploads all a map reaches). `None` if a chunk is not a message of a
/// known kind: then the caller pushes every chunk the remote lacks rather than guess.
fn reached_from(
    local: &FileStore,
    roots: impl Iterator<Item = Address>,
    remote_has: &AddressSet,
) -> Result<Option<AddressSet>, RemoteError> {
    let mut reached = AddressSet::default();
    let mut stack: Vec<Address> = roots.collect();
    while let Some(a) = stack.pop() {
        if a.is_zero() || remote_has.contains(&a) || !reached.insert(a) {
            continue;
        }
        let chunk = local.get(&a)?.ok_or(prollystore::StoreError::Missing(a))?;
        let Ok(message) = Message::verify(chunk) else {
            return Ok(None);
        };
        message.for_each_ref(|r| stack.push(r));
    }
    Ok(Some(reached))
}

impl PreparedPush<'_> {
    /// Swaps the remote's manifest (compare-and-swap against the one read when preparing) and
    /// records the pushed roots in `local` (which must be open for writing) as its tracking
    /// roots. [`RemoteError::Conflict`] if another push won meanwhile.
    pub fn commit(self, local: &mut FileStore) -> Result<PushReport, RemoteError> {
        self.remote.swap_manifest(&self.expected, &self.manifest)?;
        record_tracking(local, &self.name, &self.report.maps)?;
        Ok(self.report)
    }
}

/// Sets the tracking roots of remote `name` for `maps`.
fn record_tracking(
    local: &mut FileStore,
    name: &str,
    maps: &BTreeMap<String, Address>,
) -> Result<(), RemoteError> {
    let names: Vec<(String, Option<Address>, Address)> = maps
        .iter()
        .map(|(m, a)| {
            let t = tracking_root(name, m);
            let old = local.root(&t);
            (t, old, *a)
        })
        .filter(|(_, old, a)| *old != Some(*a))
        .collect();
    if names.is_empty() {
        return Ok(());
    }
    let updates: Vec<RootUpdate<'_>> = names
        .iter()
        .map(|(t, old, a)| RootUpdate::new(t, *old, Some(*a)))
        .collect();
    local.commit(&updates)?;
    Ok(())
}

/// Pushes `maps` (all maps when empty) of `local` to `remote`, known to `local` as `name`:
/// [`prepare_push`] then [`PreparedPush::commit`].
pub fn push(
    remote: &Remote,
    local: &mut FileStore,
    name: &str,
    maps: &[String],
) -> Result<PushReport, RemoteError> {
    prepare_push(remote, local, name, maps)?.commit(local)
}

/// Fetches the chunks `local` lacks of every map on `remote` (known to `local` as `name`) and
/// moves the local maps that have not changed since the last pull. `local` must be open for
/// writing.
pub fn pull(remote: &Remote, local: &mut FileStore, name: &str) -> Result<PullReport, RemoteError> {
    let profile = local.profile();
    let current = remote.read_manifest()?;
    let Some(manifest) = current.manifest else {
        return Err(RemoteError::Invalid(format!(
            "remote {} holds no store yet",
            remote.url()
        )));
    };
    check_profile(remote, &manifest, profile)?;
    let indexes = remote.indexes(profile, &manifest.files)?;
    let mut seen = AddressSet::default();
    let mut missing: Vec<ChunkAt> = Vec::new();
    for (record, index) in manifest.files.iter().zip(&indexes) {
        let object: Arc<str> = Arc::from(file_name(record.seq));
        for entry in index.iter() {
            if seen.insert(entry.address) && !local.has(&entry.address)? {
                missing.push(ChunkAt {
                    object: object.clone(),
                    entry: *entry,
                });
            }
        }
    }
    let mut report = PullReport::default();
    fetch_into(remote, local, missing, &mut report)?;
    // Move the maps.
    let mut tracking = BTreeMap::new();
    let mut updates: Vec<(String, Option<Address>, Address)> = Vec::new();
    for (m, theirs) in &manifest.roots {
        let ours = local.root(m);
        let last = local.root(&tracking_root(name, m));
        if ours == Some(*theirs) {
        } else if ours.is_none() || ours == last {
            updates.push((m.clone(), ours, *theirs));
            report.updated.insert(m.clone(), *theirs);
        } else {
            report.diverged.push(m.clone());
        }
        tracking.insert(m.clone(), *theirs);
    }
    let ups: Vec<RootUpdate<'_>> = updates
        .iter()
        .map(|(m, old, new)| RootUpdate::new(m, *old, Some(*new)))
        .collect();
    if !ups.is_empty() {
        local.commit(&ups)?;
    }
    record_tracking(local, name, &tracking)?;
    Ok(report)
}

/// Fetches `missing` into `local`, pipelined: coalesced range reads run [`PARALLEL_REQUESTS`]
/// at a time on the remote's runtime while this thread checks each arriving chunk against its
/// address (the local put hashes it) and streams it into the local store's next chunk file.
/// Committed every [`BATCH_BYTES`] (one file and one sync each), so an interrupted pull keeps
/// what it fetched.
fn fetch_into(
    remote: &Remote,
    local: &mut FileStore,
    missing: Vec<ChunkAt>,
    report: &mut PullReport,
) -> Result<(), RemoteError> {
    let reads = crate::remote::coalesce(missing);
    if reads.is_empty() {
        return Ok(());
    }
    let n = reads.len() as u64;
    // Reads wait here for the checker: at most two beside those in flight.
    let (tx, mut rx) = tokio::sync::mpsc::channel(2);
    std::thread::scope(|s| {
        let fetcher = s.spawn(move || {
            remote.wait(n, async {
                stream::iter(reads.into_iter().map(|read| async move {
                    let bytes = remote.read_coalesced(&read).await?;
                    Ok::<_, RemoteError>((read, bytes))
                }))
                .buffer_unordered(PARALLEL_REQUESTS)
                .try_for_each(|got| {
                    let tx = tx.clone();
                    async move {
                        // A closed channel: the receiver stopped on an error of its own.
                        let _ = tx.send(got).await;
                        Ok(())
                    }
                })
                .await
            })
        });
        let mut uncommitted = 0u64;
        let received = (|| {
            while let Some((read, bytes)) = rx.blocking_recv() {
                for e in &read.inside {
                    let chunk = read.chunk(&bytes, e);
                    let actual = local.put(chunk)?;
                    if actual != e.address {
                        return Err(read.corrupt(remote, e, actual));
                    }
                    report.chunks += 1;
                    report.bytes += u64::from(e.len);
                    uncommitted += u64::from(e.len);
                }
                if uncommitted >= BATCH_BYTES {
                    local.commit(&[])?;
                    uncommitted = 0;
                }
            }
            Ok(())
        })();
        drop(rx);
        let fetched = fetcher.join().expect("the fetching thread panicked");
        // Whatever arrived intact is kept, even if the rest failed.
        let committed = local.commit(&[]).map(|_| ()).map_err(RemoteError::from);
        received.and(fetched).and(committed)
    })
}

/// Clones the store at `remote` into the new directory `dir` (which may hold files of an
/// interrupted clone of the same remote, which are reused), records the remote as `origin`,
/// checks every downloaded chunk against its address, and returns the store open for writing.
pub fn clone(remote: &Remote, dir: impl AsRef<Path>) -> Result<FileStore, RemoteError> {
    let dir = dir.as_ref();
    let io = |what: String| {
        move |e| RemoteError::Io {
            context: what,
            source: e,
        }
    };
    if dir.join(MANIFEST).exists() {
        return Err(RemoteError::Invalid(format!(
            "{} already holds a store",
            dir.display()
        )));
    }
    std::fs::create_dir_all(dir).map_err(io(format!("creating {}", dir.display())))?;
    let current = remote.read_manifest()?;
    let Some(mut manifest) = current.manifest else {
        return Err(RemoteError::Invalid(format!(
            "remote {} holds no store yet",
            remote.url()
        )));
    };
    let profile = manifest.profile;
    let wanted: Vec<FileRecord> = manifest
        .files
        .iter()
        .filter(|f| {
            std::fs::metadata(dir.join(file_name(f.seq)))
                .map(|m| m.len())
                .ok()
                != Some(f.file_len)
        })
        .copied()
        .collect();
    // Header and tail of every file first (one round trip), then all data parts in one
    // pipeline, then one sync per file before the manifest.
    remote.wait(wanted.len() as u64 * 2, async {
        let downloads: Vec<Download> = stream::iter(
            wanted
                .iter()
                .map(|f| download::start(remote, dir, profile, *f)),
        )
        .buffer_unordered(PARALLEL_REQUESTS)
        .try_collect()
        .await?;
        download::fetch_parts(remote, profile, &downloads).await?;
        download::finish(dir, downloads).await
    })?;
    let maps: BTreeMap<String, Address> = manifest.roots.clone();
    for (m, a) in &maps {
        manifest.roots.insert(tracking_root("origin", m), *a);
    }
    let tmp = dir.join(format!("{MANIFEST}.tmp"));
    std::fs::write(&tmp, manifest.encode()).map_err(io(format!("writing {}", tmp.display())))?;
    std::fs::File::open(&tmp)
        .and_then(|f| f.sync_all())
        .map_err(io(format!("syncing {}", tmp.display())))?;
    std::fs::rename(&tmp, dir.join(MANIFEST)).map_err(io(format!("renaming {}", tmp.display())))?;
    config::add_remote(dir, "origin", remote.url())?;
    Ok(FileStore::open_writer(dir)?)
}

/// The chunks of the remote's files, for tests and tools: (object name, index entry).
pub fn remote_chunks(remote: &Remote) -> Result<Vec<(String, IndexEntry)>, RemoteError> {
    let current = remote.read_manifest()?;
    let Some(m) = current.manifest else {
        return Ok(Vec::new());
    };
    let indexes = remote.indexes(m.profile, &m.files)?;
    Ok(m.files
        .iter()
        .zip(indexes)
        .flat_map(|(f, i)| {
            let name = file_name(f.seq);
            i.iter()
                .map(move |e| (name.clone(), *e))
                .collect::<Vec<_>>()
        })
        .collect())
}
