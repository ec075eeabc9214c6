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

use std::path::{Path, PathBuf};

use prollystore_format::message::objects::CommitFields;
use prollystore_format::{Address, HashProfile};

use super::journal_append::JournalAppender;
use super::refs::for_each_ref;
use super::writer::{StoreWriter, WorkingSetMeta};
use crate::chunks::manifest::Manifest;
use crate::error::{bad_chunk, DoltError, Result};

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
}

impl CloneTarget {
    /// Creates `dir/.dolt` (and `dir` if needed) as an empty store and locks it. Refuses a
    /// `dir` that already holds `.dolt`.
    pub fn create(dir: &Path) -> Result<CloneTarget> {
        let dot = dir.join(".dolt");
        if dot.exists() {
            return Err(DoltError::Unsupported(format!(
                "{} already holds a Dolt database",
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
        let mut manifest = Manifest {
            storage_version: 5,
            format: "__DOLT__".to_string(),
            lock: Address::ZERO,
            root: Address::ZERO,
            gc_gen: Address::ZERO,
            specs: Vec::new(),
        };
        manifest.lock = manifest.fresh_lock()?;
        let path = noms.join("manifest");
        std::fs::write(&path, manifest.encode()).map_err(io(&path))?;
        Ok(CloneTarget {
            journal: JournalAppender::open(&noms)?,
            chunks: 0,
        })
    }

    /// Whether the store holds (or has queued) `address`.
    pub fn contains(&self, address: &Address) -> bool {
        self.journal.contains(address)
    }

    /// How many chunks were queued.
    pub fn chunk_count(&self) -> u64 {
        self.chunks
    }

    /// Queues `chunks` (address, bytes) for the journal after checking every one hashes to
    /// its address; `origin` names where they came from, for the error. On a mismatch nothing
    /// of this batch is queued.
    pub fn put_verified(&mut self, chunks: &[(Address, &[u8])], origin: &str) -> Result<()> {
        let bytes: Vec<&[u8]> = chunks.iter().map(|(_, c)| *c).collect();
        let mut actual = vec![Address::ZERO; chunks.len()];
        HashProfile::Dolt.addresses_of(&bytes, &mut actual);
        for ((address, _), actual) in chunks.iter().zip(&actual) {
            if address != actual {
                return Err(DoltError::HashMismatch {
                    address: *address,
                    actual: *actual,
                    file: origin.to_string(),
                    offset: 0,
                });
            }
        }
        self.journal.put_all(chunks)?;
        self.chunks += chunks.len() as u64;
        Ok(())
    }

    /// Makes `root` (a store root queued before) the store's root: every queued record, then
    /// the root record stamped `timestamp_secs`, one write and one fsync.
    pub fn finish(mut self, root: Address, timestamp_secs: u64) -> Result<()> {
        self.journal.commit_root(root, timestamp_secs)
    }
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
pub fn set_clone_refs(dir: &Path, refs: &CloneRefs<'_>) -> Result<String> {
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
    let commit = writer.chunk(&head)?;
    let root = Address(
        CommitFields::decode(&commit)
            .map_err(|e| bad_chunk(head, e.to_string()))?
            .root,
    );
    let meta = WorkingSetMeta {
        name: refs.user_name,
        email: refs.user_email,
        description: "updated from dolt environment",
        timestamp_secs: refs.timestamp_secs,
    };
    let ws = writer.put_working_set(root, &meta)?;

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

/// Dolt's choice of the branch a clone checks out: `main`, else `master`, else the first by
/// name (Dolt would next try its configured default init branch, `main` unless set).
fn default_branch<'a>(branches: &[(&'a str, Address)]) -> &'a str {
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

/// `repo_state.json` as `dolt clone` writes it (same keys, order and indentation).
fn write_repo_state(dot: &Path, refs: &CloneRefs<'_>, branch: &str) -> Result<()> {
    let q = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string());
    let text = format!(
        "{{\n  \"head\": {head},\n  \"remotes\": {{\n    {name}: {{\n      \"name\": {name},\n      \"url\": {url},\n      \"fetch_specs\": [\n        {spec}\n      ],\n      \"params\": {{}}\n    }}\n  }},\n  \"backups\": {{}},\n  \"branches\": {{\n    {b}: {{\n      \"head\": {head},\n      \"remote\": {name}\n    }}\n  }}\n}}",
        head = q(&format!("refs/heads/{branch}")),
        name = q(refs.remote),
        url = q(refs.url),
        spec = q(&format!("refs/heads/*:refs/remotes/{}/*", refs.remote)),
        b = q(branch),
    );
    let path = dot.join("repo_state.json");
    std::fs::write(&path, text).map_err(|source| DoltError::Io {
        file: path.display().to_string(),
        source,
    })
}
