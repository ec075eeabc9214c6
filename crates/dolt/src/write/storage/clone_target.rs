//! A new database directory filled with chunks from elsewhere (a Dolt remote), for
//! `prollystore-dolt-remote`'s clone: the one public way into the journal appender and the
//! store writer for code outside this crate.
//!
//! [`CloneTarget::create`] makes `DIR/.dolt` as an empty store (a manifest with the zero root
//! and no files, `config.json`) and takes Dolt's writer lock; [`CloneTarget::put_verified`]
//! checks each chunk against its address (SHA-512/20) before queueing its journal record;
//! [`CloneTarget::finish`] writes the records and a root record of the remote's store root
//! (one write, one fsync: the journal is made as our writer makes it, see
//! `write::journal_append`). [`set_clone_refs`] then replaces the datasets with what
//! `dolt clone` leaves (remote-tracking branches, the checked-out branch with a clean working
//! set, the tags) and writes `repo_state.json` with the remote.
//!
//! [`chunk_refs`] is the writer's reference walk (`write::refs`), public for the clone's
//! walk from the remote's root.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use prollystore_format::message::objects::StoreRootFields;
use prollystore_format::Address;

use super::chunk_io::ChunkIo;
use super::journal_append::JournalAppender;
use super::refs::{children_first, for_each_ref};
use super::writer::{StoreWriter, WorkingSetMeta};
use crate::chunks::codec::snappy_payload;
use crate::chunks::manifest::Manifest;
use crate::chunks::{check_chunks, DoltChunkSource};
use crate::error::{bad_chunk, DoltError, Result};
use crate::write::history::ancestry::is_ancestor;
use crate::write::history::repo_state::{BranchConfig, RemoteConfig, RepoState};
use crate::write::maps::address_map::address_map_entries;

/// Calls `f` with every chunk address `chunk` (stored at `address`) refers to, for every
/// message kind a Dolt database holds; an unknown kind is an error.
pub fn chunk_refs(address: Address, chunk: &[u8], f: &mut dyn FnMut(Address)) -> Result<()> {
    for_each_ref(address, chunk, f)
}

/// A new, empty Dolt store being filled; see the module doc.
#[derive(Debug)]
pub struct CloneTarget {
    journal: JournalAppender,
    chunks: u64,
    /// What an existing database held when opened for a fetch ([`CloneTarget::open_existing`]).
    existing: Option<DoltChunkSource>,
    /// For a fetch: the chunks each queued chunk refers to, to write children before parents.
    refs: HashMap<Address, Vec<Address>>,
}

impl CloneTarget {
    /// Creates `dir/.dolt` (and `dir` if needed) as an empty store and locks it. Refuses a
    /// `dir` that already holds `.dolt`.
    pub fn create(dir: impl AsRef<Path>) -> Result<CloneTarget> {
        let dir = dir.as_ref();
        let dot = dir.join(".dolt");
        if dot.exists() {
            return Err(DoltError::Refused(format!(
                "a new Dolt store in {}: it already holds a Dolt database (.dolt)",
                dir.display()
            )));
        }
        let noms = dot.join("noms");
        let io = |p: &Path| {
            let file = p.display().to_string();
            move |source| DoltError::Io { file, source }
        };
        std::fs::create_dir_all(&noms).map_err(io(&noms))?;
        let config = dot.join("config.json");
        std::fs::write(&config, "{}").map_err(io(&config))?;
        let mut manifest = Manifest::empty();
        manifest.lock = manifest.fresh_lock()?;
        let path = noms.join("manifest");
        std::fs::write(&path, manifest.encode()).map_err(io(&path))?;
        Ok(CloneTarget {
            journal: JournalAppender::open(&noms)?,
            chunks: 0,
            existing: None,
            refs: HashMap::new(),
        })
    }

    /// Opens the existing database in `dir` (the directory holding `.dolt`) to receive chunks
    /// from a remote (a fetch): Dolt's writer lock first, then what it holds (table files,
    /// archives, journal). Finish with [`CloneTarget::finish_fetch`]; the refs are then moved
    /// with [`set_tracking_refs`] and [`fast_forward_branch`].
    pub fn open_existing(dir: &Path) -> Result<CloneTarget> {
        let noms = dot_dolt(dir).join("noms");
        if !noms.join("manifest").is_file() {
            return Err(DoltError::NotFound(format!(
                "a Dolt database at {} (no .dolt/noms/manifest)",
                dir.display()
            )));
        }
        let journal = JournalAppender::open(&noms)?;
        // Hashes of what is there were checked when it was written; only presence is asked.
        let existing = DoltChunkSource::open(&noms)?.with_verify_hashes(false);
        Ok(CloneTarget {
            journal,
            chunks: 0,
            existing: Some(existing),
            refs: HashMap::new(),
        })
    }

    /// The store root of the database opened by [`CloneTarget::open_existing`] (zero for a new
    /// one).
    pub fn local_root(&self) -> Address {
        self.existing
            .as_ref()
            .map_or(Address::ZERO, DoltChunkSource::root)
    }

    /// Whether the store holds (or has queued) `address`.
    pub fn contains(&self, address: &Address) -> bool {
        self.journal.contains(address)
            || self.existing.as_ref().is_some_and(|s| s.contains(address))
    }

    /// How many chunks were queued.
    pub fn chunk_count(&self) -> u64 {
        self.chunks
    }

    /// Queues `chunks` (address, bytes) for the journal after checking every one hashes to
    /// its address; `origin` names where they came from, for the error. On a mismatch nothing
    /// of this batch is queued.
    pub fn put_verified(&mut self, chunks: &[(Address, &[u8])], origin: &str) -> Result<()> {
        self.put_verified_payloads(chunks, &[], origin)
    }

    /// [`CloneTarget::put_verified`] for chunks that come with their stored payloads:
    /// `payloads[i]`, when given, is chunk `i` as a table file or journal stores it (snappy
    /// block ‖ CRC-32C), and goes into the journal as it is instead of the chunk being
    /// compressed again (a clone's largest cost after hashing); its CRC and decompressed
    /// length are checked against the chunk here.
    /// `None`, or no entry, for a chunk stored otherwise (an archive's zstd frame).
    pub fn put_verified_payloads(
        &mut self,
        chunks: &[(Address, &[u8])],
        payloads: &[Option<&[u8]>],
        origin: &str,
    ) -> Result<()> {
        check_chunks(chunks, origin)?;
        let mut to_compress = Vec::with_capacity(chunks.len());
        for (i, &(address, chunk)) in chunks.iter().enumerate() {
            match payloads.get(i).copied().flatten() {
                Some(payload) => {
                    // Checked on the way in, so that the journal never keeps a payload that
                    // is not this chunk's: its CRC, and the length it decompresses to.
                    let (_, len) = snappy_payload(payload, origin, 0)?;
                    if len != chunk.len() {
                        return Err(bad_chunk(
                            address,
                            format!(
                                "its stored payload from {origin} decompresses to {len} bytes, \
                                 the chunk has {}",
                                chunk.len()
                            ),
                        ));
                    }
                    self.journal.put_payload(address, payload)?
                }
                None => to_compress.push((address, chunk)),
            }
        }
        self.journal.put_all(&to_compress)?;
        self.chunks += chunks.len() as u64;
        if self.existing.is_some() {
            for (a, c) in chunks {
                let mut out = Vec::new();
                for_each_ref(*a, c, &mut |r| out.push(r))?;
                self.refs.insert(*a, out);
            }
        }
        Ok(())
    }

    /// Makes `root` (a store root queued before) the store's root: every queued record, then
    /// the root record stamped `timestamp_secs`, one write and one fsync.
    pub fn finish(mut self, root: Address, timestamp_secs: u64) -> Result<()> {
        self.journal.commit_root(root, timestamp_secs)
    }

    /// Makes the chunks queued into an existing database durable without moving its root:
    /// the records, then a root record of the root it had (nothing is written when nothing was
    /// queued). The lock is released on return.
    pub fn finish_fetch(mut self, timestamp_secs: u64) -> Result<()> {
        if self.chunks == 0 {
            return Ok(());
        }
        let root = self.local_root();
        self.journal
            .reorder_pending(&children_first_ranks(&self.refs));
        self.journal.commit_root(root, timestamp_secs)
    }
}

/// Ranks the chunks of `refs` (each with the chunks it refers to) so that every chunk comes
/// after the ones it refers to ([`children_first`] from those no other refers to). A fetch
/// queues chunks as they come, parents first; a kill can cut the write of that batch short,
/// and the whole records it leaves must not include a parent without its children (Dolt's
/// pull skips the subtree of a chunk it holds).
fn children_first_ranks(refs: &HashMap<Address, Vec<Address>>) -> HashMap<Address, usize> {
    let referenced: HashSet<&Address> = refs.values().flatten().collect();
    let mut tops: Vec<Address> = refs
        .keys()
        .filter(|a| !referenced.contains(a))
        .copied()
        .collect();
    tops.sort();
    let mut rank = HashMap::with_capacity(refs.len());
    // The walk's callbacks never fail here.
    let _ = children_first(
        tops,
        |a| Ok(refs.get(&a).cloned()),
        |a| {
            let next = rank.len();
            rank.insert(a, next);
            Ok(())
        },
    );
    rank
}

/// One remote-tracking ref moved by [`set_tracking_refs`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrackingUpdate {
    /// The remote's branch.
    pub branch: String,
    /// The commit `refs/remotes/REMOTE/BRANCH` held before (none: a new branch).
    pub old: Option<Address>,
    /// The commit it holds now.
    pub new: Address,
}

/// Sets `refs/remotes/REMOTE/B` to each `(B, commit)` of `heads` (the remote's branches, whose
/// chunks the database holds), as `dolt fetch` does; branches the remote no longer has are
/// kept (Dolt prunes only with `--prune`). One store-root update; returns the refs that moved.
pub fn set_tracking_refs(
    dir: &Path,
    remote: &str,
    heads: &[(String, Address)],
    timestamp_secs: u64,
) -> Result<Vec<TrackingUpdate>> {
    let mut writer = StoreWriter::open(dir)?;
    let mut updates = Vec::new();
    let mut names = Vec::new();
    for (branch, commit) in heads {
        let name = format!("refs/remotes/{remote}/{branch}");
        let old = writer.dataset(&name)?;
        if old != Some(*commit) {
            updates.push(TrackingUpdate {
                branch: branch.clone(),
                old,
                new: *commit,
            });
            names.push((name, *commit));
        }
    }
    if !names.is_empty() {
        let changes: Vec<(&str, Option<Address>)> =
            names.iter().map(|(n, a)| (n.as_str(), Some(*a))).collect();
        writer.update_datasets(&changes, timestamp_secs)?;
    }
    Ok(updates)
}

/// The remote-tracking refs of `remote` (`refs/remotes/REMOTE/B`: B, commit) the database in
/// `dir` holds.
pub fn tracking_refs(dir: &Path, remote: &str) -> Result<Vec<(String, Address)>> {
    let writer = StoreWriter::open(dir)?;
    let prefix = format!("refs/remotes/{remote}/");
    Ok(writer
        .datasets()?
        .into_iter()
        .filter_map(|(k, a)| {
            String::from_utf8(k)
                .ok()
                .and_then(|n| n.strip_prefix(&prefix).map(|b| (b.to_string(), a)))
        })
        .collect())
}

/// Removes every remote-tracking ref of `remote` (what `dolt remote remove` does to them), in
/// one store-root update.
pub fn remove_tracking_refs(dir: &Path, remote: &str, timestamp_secs: u64) -> Result<()> {
    prune_tracking_refs(dir, remote, &[], timestamp_secs).map(drop)
}

/// Removes the remote-tracking refs of `remote` whose branch is not among `keep` (the
/// remote's branches), in one store-root update, as `dolt fetch --prune` deletes them. Returns
/// the branches removed (name order).
pub fn prune_tracking_refs(
    dir: &Path,
    remote: &str,
    keep: &[(String, Address)],
    timestamp_secs: u64,
) -> Result<Vec<String>> {
    let mut writer = StoreWriter::open(dir)?;
    let prefix = format!("refs/remotes/{remote}/");
    let names: Vec<String> = writer
        .datasets()?
        .into_iter()
        .filter_map(|(k, _)| String::from_utf8(k).ok())
        .filter(|n| {
            n.strip_prefix(&prefix)
                .is_some_and(|b| !keep.iter().any(|(k, _)| k == b))
        })
        .collect();
    if !names.is_empty() {
        let changes: Vec<(&str, Option<Address>)> =
            names.iter().map(|n| (n.as_str(), None)).collect();
        writer.update_datasets(&changes, timestamp_secs)?;
    }
    Ok(names
        .iter()
        .map(|n| n[prefix.len()..].to_string())
        .collect())
}

/// What [`fast_forward_branch`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FastForward {
    /// The branch already was at the commit, or the commit is one of its ancestors.
    UpToDate,
    /// The branch (and its working set) moved from `from` to `to`.
    Moved {
        /// The branch's head before.
        from: Address,
        /// Its head now.
        to: Address,
    },
}

/// Moves local branch `branch` forward to `to` (a commit the database holds) as `dolt pull`
/// does when it can fast-forward: the branch head, and its working set reset to the new
/// commit's root. Refused, with nothing written, when the branch has uncommitted changes
/// (Dolt: "cannot merge with uncommitted changes") or when its head is not an ancestor of
/// `to` (Dolt `--ff-only`: "Not possible to fast-forward").
pub fn fast_forward_branch(
    dir: &Path,
    branch: &str,
    to: Address,
    refs: &CloneRefs<'_>,
) -> Result<FastForward> {
    let mut writer = StoreWriter::open(dir)?;
    let head = writer.head_of(branch)?;
    if head == to || is_ancestor(&writer, to, head)? {
        return Ok(FastForward::UpToDate);
    }
    let head_root = writer.commit_root(head)?;
    let roots = writer.working_roots(branch)?;
    if roots.working != head_root || roots.staged != head_root || roots.merging {
        return Err(DoltError::Refused(format!(
            "cannot merge with uncommitted changes: branch {branch} has uncommitted changes \
             (commit or discard them first)"
        )));
    }
    if !is_ancestor(&writer, head, to)? {
        return Err(DoltError::Refused(format!(
            "not possible to fast-forward branch {branch} ({head}) to {} {to}: the branches \
             have diverged (only fast-forward pulls are made)",
            refs.remote
        )));
    }
    let ws = clean_working_set(&mut writer, to, refs)?;
    writer.update_datasets(
        &[
            (&format!("refs/heads/{branch}"), Some(to)),
            (&format!("workingSets/heads/{branch}"), Some(ws)),
        ],
        refs.timestamp_secs,
    )?;
    Ok(FastForward::Moved { from: head, to })
}

/// Reads of a chunk source for the tree walks (nothing is put).
struct SourceIo<'a>(&'a DoltChunkSource);

impl ChunkIo for SourceIo<'_> {
    fn chunk(&self, address: &Address) -> Result<std::sync::Arc<[u8]>> {
        self.0
            .read_uncached(address)?
            .ok_or(DoltError::MissingChunk(*address))
    }

    /// The source refuses every put ([`prollystore::StoreError::ReadOnly`], naming its
    /// directory): these walks only read.
    fn put(&mut self, chunk: &[u8]) -> Result<Address> {
        Ok(prollystore::store::ChunkStore::put(self.0, chunk)?)
    }
}

/// The branches (`refs/heads/*`: name, commit) of the store root `root` held in `dir`.
pub fn branches_at(dir: &Path, root: Address) -> Result<Vec<(String, Address)>> {
    refs_at(dir, root, "refs/heads/")
}

/// The tags (`refs/tags/*`: name, tag object) of the store root `root` held in `dir`.
pub fn tags_at(dir: &Path, root: Address) -> Result<Vec<(String, Address)>> {
    refs_at(dir, root, "refs/tags/")
}

/// Sets `refs/tags/NAME` to each `(NAME, tag object)` of `tags` (chunks the database holds),
/// in one store-root update (nothing when `tags` is empty).
pub fn set_tags(dir: &Path, tags: &[(String, Address)], timestamp_secs: u64) -> Result<()> {
    if tags.is_empty() {
        return Ok(());
    }
    let names: Vec<(String, Address)> = tags
        .iter()
        .map(|(n, a)| (format!("refs/tags/{n}"), *a))
        .collect();
    let changes: Vec<(&str, Option<Address>)> =
        names.iter().map(|(n, a)| (n.as_str(), Some(*a))).collect();
    StoreWriter::open(dir)?.update_datasets(&changes, timestamp_secs)?;
    Ok(())
}

/// The datasets under `prefix` (name without it, address) of store root `root` in `dir`.
fn refs_at(dir: &Path, root: Address, prefix: &str) -> Result<Vec<(String, Address)>> {
    let source = DoltChunkSource::open(dot_dolt(dir).join("noms"))?;
    let chunk = source
        .read_uncached(&root)?
        .ok_or(DoltError::MissingChunk(root))?;
    let sr = StoreRootFields::decode(&chunk).map_err(|e| bad_chunk(root, e.to_string()))?;
    let io = SourceIo(&source);
    Ok(address_map_entries(&io, sr.address_map)?
        .into_iter()
        .filter_map(|(k, a)| {
            String::from_utf8(k)
                .ok()
                .and_then(|n| n.strip_prefix(prefix).map(|b| (b.to_string(), a)))
        })
        .collect())
}

/// What [`set_clone_refs`] records about the remote and the user.
#[derive(Clone, Copy, Debug)]
pub struct CloneRefs<'a> {
    /// The remote's name (`origin`).
    pub remote: &'a str,
    /// Its URL, as given to clone.
    pub url: &'a str,
    /// The branch to check out; `None`: Dolt's default (`main`, else `master`, else the first
    /// branch by name).
    pub branch: Option<&'a str>,
    /// `user.name`, recorded in the working set.
    pub user_name: &'a str,
    /// `user.email`, recorded in the working set.
    pub user_email: &'a str,
    /// Unix seconds, for the working set and the journal's root record.
    pub timestamp_secs: u64,
}

/// Turns a store holding a copy of a remote's root (made by [`CloneTarget`]) into what
/// `dolt clone` leaves: every dataset removed; each remote branch `B` as
/// `refs/remotes/REMOTE/B`; the checked-out branch as `refs/heads/B` with a working set whose
/// working and staged roots are its commit's root; the tags kept; `repo_state.json` naming the
/// remote (fetch spec `refs/heads/*:refs/remotes/REMOTE/*`) as the branch's upstream. Returns
/// the checked-out branch. A remote without branches is an error.
pub fn set_clone_refs(dir: impl AsRef<Path>, refs: &CloneRefs<'_>) -> Result<String> {
    let dir = dir.as_ref();
    let mut writer = StoreWriter::open(dir)?;
    let datasets = writer.datasets()?;
    let names: Vec<(String, Address)> = datasets
        .into_iter()
        .map(|(k, a)| (String::from_utf8_lossy(&k).into_owned(), a))
        .collect();
    let branches: Vec<(&str, Address)> = names
        .iter()
        .filter_map(|(n, a)| n.strip_prefix("refs/heads/").map(|b| (b, *a)))
        .collect();
    if branches.is_empty() {
        return Err(DoltError::NotFound(format!(
            "a branch at the remote {} (it holds no Dolt data)",
            refs.url
        )));
    }
    let branch = match refs.branch {
        Some(b) => b.to_string(),
        None => default_branch(&branches).to_string(),
    };
    let Some(head) = branches.iter().find(|(b, _)| *b == branch).map(|(_, a)| *a) else {
        return Err(DoltError::NotFound(format!(
            "branch {branch} at the remote {}",
            refs.url
        )));
    };
    let ws = clean_working_set(&mut writer, head, refs)?;

    let mut owned: Vec<(String, Option<Address>)> = names
        .iter()
        .filter(|(n, _)| !n.starts_with("refs/tags/"))
        .map(|(n, _)| (n.clone(), None))
        .collect();
    for (b, a) in &branches {
        owned.push((format!("refs/remotes/{}/{b}", refs.remote), Some(*a)));
    }
    owned.push((format!("refs/heads/{branch}"), Some(head)));
    owned.push((format!("workingSets/heads/{branch}"), Some(ws)));
    // Later entries win: a name removed above and set here is set.
    let mut changes: std::collections::BTreeMap<&str, Option<Address>> = Default::default();
    for (n, a) in &owned {
        changes.insert(n.as_str(), *a);
    }
    let changes: Vec<(&str, Option<Address>)> = changes.into_iter().collect();
    writer.update_datasets(&changes, refs.timestamp_secs)?;
    drop(writer);
    write_repo_state(&dot_dolt(dir), refs, &branch)?;
    Ok(branch)
}

/// A working set with nothing uncommitted on `commit` (working = staged = its root), as
/// `dolt clone` and `dolt pull` write it for the branch they check out or move.
fn clean_working_set(
    writer: &mut StoreWriter,
    commit: Address,
    refs: &CloneRefs<'_>,
) -> Result<Address> {
    let root = writer.commit_root(commit)?;
    let meta = WorkingSetMeta {
        name: refs.user_name,
        email: refs.user_email,
        description: "updated from dolt environment",
        timestamp_secs: refs.timestamp_secs,
    };
    writer.put_working_set(root, &meta)
}

/// Dolt's choice of the branch a clone checks out: `main`, else `master`, else the first by
/// name (Dolt would next try its configured default init branch, `main` unless set).
pub fn default_branch<'a>(branches: &[(&'a str, Address)]) -> &'a str {
    for preferred in ["main", "master"] {
        if branches.iter().any(|(b, _)| *b == preferred) {
            return preferred;
        }
    }
    branches.iter().map(|(b, _)| *b).min().unwrap_or("main")
}

fn dot_dolt(dir: &Path) -> PathBuf {
    dir.join(".dolt")
}

/// `repo_state.json` as `dolt clone` writes it: the checked-out branch, the remote, the branch's
/// upstream.
fn write_repo_state(dot: &Path, refs: &CloneRefs<'_>, branch: &str) -> Result<()> {
    let mut state = RepoState::new(&format!("refs/heads/{branch}"));
    state.remotes.insert(
        refs.remote.to_string(),
        RemoteConfig::new(refs.remote, refs.url),
    );
    state.branches.insert(
        branch.to_string(),
        BranchConfig {
            merge: format!("refs/heads/{branch}"),
            remote: refs.remote.to_string(),
        },
    );
    state.write(dot)
}

/// What [`push_head`] found: the local branch's head and whether the remote needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PushHead {
    /// The remote's branch already is at the local head.
    UpToDate(Address),
    /// The local head is new to the remote's branch (the branch is absent there, or its head
    /// is an ancestor of the local one): a fast-forward push.
    FastForward(Address),
}

/// The head of local branch `branch` in `dir` and whether a push of it onto a remote branch
/// whose head is `remote_head` (`None`: the remote has no such branch) fast-forwards. Refused
/// as Dolt refuses it (`! [rejected] B -> B (non-fast-forward)`) when the remote's head is not
/// an ancestor of the local one (the remote has commits this database lacks, or the local
/// branch is behind).
pub fn push_head(dir: &Path, branch: &str, remote_head: Option<Address>) -> Result<PushHead> {
    let source = DoltChunkSource::open(dot_dolt(dir).join("noms"))?;
    let io = SourceIo(&source);
    let chunk = source
        .read_uncached(&source.root())?
        .ok_or(DoltError::MissingChunk(source.root()))?;
    let sr =
        StoreRootFields::decode(&chunk).map_err(|e| bad_chunk(source.root(), e.to_string()))?;
    let head_ref = format!("refs/heads/{branch}");
    let Some(head) = address_map_entries(&io, sr.address_map)?
        .into_iter()
        .find(|(k, _)| k.as_slice() == head_ref.as_bytes())
        .map(|(_, a)| a)
    else {
        return Err(DoltError::NotFound(format!(
            "branch {branch:?} in {} (refspec not found)",
            dir.display()
        )));
    };
    let Some(remote) = remote_head else {
        return Ok(PushHead::FastForward(head));
    };
    if remote == head {
        return Ok(PushHead::UpToDate(head));
    }
    if !source.contains(&remote) || !is_ancestor(&io, remote, head)? {
        return Err(DoltError::Refused(format!(
            "! [rejected] {branch} -> {branch} (non-fast-forward): the remote's {branch} \
             ({remote}) is not an ancestor of the local {branch} ({head}); fetch and merge \
             first"
        )));
    }
    Ok(PushHead::FastForward(head))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use prollystore_format::Address;

    use super::{children_first_ranks, CloneTarget};
    use crate::chunks::journal_record::{chunk_record, CHUNK_PAYLOAD_AT};

    /// A chunk's stored payload is kept only when it is that chunk's: one with a bad CRC, or
    /// one that decompresses to another length, is refused; the right one is taken.
    #[test]
    fn payloads_that_are_not_the_chunks_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut target = CloneTarget::create(dir.path().join("db")).unwrap();
        let chunk = b"a chunk of some bytes".to_vec();
        let address = prollystore_format::HashProfile::Dolt.address_of(&chunk);
        let payload_of = |c: &[u8]| {
            let mut record = Vec::new();
            chunk_record(address, c, &mut record).unwrap();
            record[CHUNK_PAYLOAD_AT..record.len() - 4].to_vec()
        };
        let other = payload_of(b"another chunk, longer than the first one");
        let err = target
            .put_verified_payloads(&[(address, &chunk)], &[Some(&other)], "f")
            .unwrap_err();
        assert!(err.to_string().contains("decompresses to"), "{err}");
        let mut bad_crc = payload_of(&chunk);
        *bad_crc.last_mut().unwrap() ^= 1;
        assert!(target
            .put_verified_payloads(&[(address, &chunk)], &[Some(&bad_crc)], "f")
            .is_err());
        assert_eq!(target.chunk_count(), 0);
        target
            .put_verified_payloads(&[(address, &chunk)], &[Some(&payload_of(&chunk))], "f")
            .unwrap();
        assert!(target.contains(&address));
        assert_eq!(target.chunk_count(), 1);
    }

    /// A chunk shared at two depths (the root refers to it, and so does a grandchild): ranked
    /// before every chunk that refers to it, though a walk by levels meets it first.
    #[test]
    fn every_chunk_ranks_after_what_it_refers_to() {
        let a = |n: u8| Address([n; 20]);
        let refs: HashMap<Address, Vec<Address>> = HashMap::from([
            (a(1), vec![a(2), a(5)]),
            (a(2), vec![a(3)]),
            (a(3), vec![a(5), a(9)]),
            (a(5), vec![]),
            (a(6), vec![a(3)]),
        ]);
        let rank = children_first_ranks(&refs);
        assert_eq!(rank.len(), refs.len());
        for (parent, children) in &refs {
            for c in children.iter().filter(|c| refs.contains_key(c)) {
                assert!(rank[c] < rank[parent], "{c} must come before {parent}");
            }
        }
    }
}
