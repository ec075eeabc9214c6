//! A Dolt database open for writing: the writer lock, the journal appender, a reader for what
//! was there before, and the session's chunk store, tied together so that reads see this
//! session's chunks too.
//!
//! Chunk bytes take one path to the journal: every chunk this session makes lives once, in the
//! session store (tree builds and edits put there through [`crate::write::storage::overlay::Overlay`],
//! the writer's own objects through [`ChunkIo::put`]); a commit compresses the new ones that its
//! root reaches straight from there into the journal's records ([`StoreWriter::write_reachable`]),
//! and later reads find them there, so nothing is copied back out of the journal.

use std::path::Path;
use std::sync::Arc;

use prollystore::store::{ChunkStore, MemoryStore};
use prollystore_format::message::objects::{StoreRootFields, WorkingSetFields};
use prollystore_format::message::{file_id, Message};
use prollystore_format::{Address, HashProfile};

use super::chunk_io::ChunkIo;
use super::journal_append::JournalAppender;
use super::lock::WriterLock;
use super::refs::{children_first, for_each_ref};
use crate::chunks::journal::{extend_index, INDEX_BATCH_MIN_CHUNKS};
use crate::chunks::source::ChunkFile;
use crate::db::Database;
use crate::error::{bad_chunk, conflict, encode, DoltError, Result};
use crate::expressions::Engine;
use crate::write::history::commit::{put_commit, NewCommit};
use crate::write::maps::address_map::{address_map_entries, edit_address_map, empty_address_map};

/// An open database directory, locked for writing: the store under [`crate::write::api::DoltWriter`]
/// (Dolt's lock, the journal appender, the reader of what was there and the session's chunks).
#[derive(Debug)]
pub(crate) struct StoreWriter {
    db: Database,
    journal: JournalAppender,
    /// Every chunk this session made (whether or not written to the journal yet).
    session: MemoryStore,
    /// The store root (`STRT`) the next update replaces.
    root: Address,
}

/// The working-set metadata Dolt records with each working-set write.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WorkingSetMeta<'a> {
    /// Who (Dolt: `user.name`).
    pub name: &'a str,
    /// Their email (Dolt: `user.email`).
    pub email: &'a str,
    /// What (Dolt: `"sql transaction"`, `"updated from dolt environment"`, …).
    pub description: &'a str,
    /// When, Unix **seconds** (Dolt stores seconds in this `timestamp_millis` field).
    pub timestamp_secs: u64,
}

impl StoreWriter {
    /// Opens the database at `path` (the directory holding `.dolt`, or `.dolt` itself) for
    /// writing: takes Dolt's lock first, then reads the state it will append to.
    pub(crate) fn open(path: &Path) -> Result<StoreWriter> {
        let dot = if path.join(".dolt").is_dir() {
            path.join(".dolt")
        } else {
            path.to_path_buf()
        };
        let noms = dot.join("noms");
        let lock = WriterLock::acquire(&noms)?;
        let db = Database::open(&dot)?;
        let read = db.source().newgen().files.iter().find_map(|f| match f {
            ChunkFile::Journal(j) => Some(j),
            _ => None,
        });
        let journal = JournalAppender::open_read(&noms, lock, read)?;
        // As Dolt's writable open indexes the journal it loaded, a large unindexed part gets a
        // `journal.idx` batch, so the next open reads the index instead of scanning it.
        if let Some((keep, batch)) = read
            .filter(|j| j.root() == journal.root())
            .and_then(|j| j.index_batch(INDEX_BATCH_MIN_CHUNKS))
        {
            // An accelerator only: a failure leaves the index as readers accept it.
            let _ = extend_index(&noms.join("journal.idx"), keep, &batch);
        }
        let root = db.source().root();
        if let Some(j) = journal.root() {
            if j != root {
                return Err(conflict(
                    "the chunk journal",
                    format!("its last root {j} is not the store root {root} the reader found"),
                ));
            }
        }
        Ok(StoreWriter {
            db,
            journal,
            session: MemoryStore::new(HashProfile::Dolt),
            root,
        })
    }

    /// Installs (or removes) the SQL expression engine of the database and its edits.
    pub(crate) fn set_engine(&mut self, engine: Engine) {
        self.db.set_engine(engine);
    }

    /// The database as it was when opened (for reads of unchanged data).
    pub(crate) fn database(&self) -> &Database {
        &self.db
    }

    /// The chunks this session made: where tree edits put theirs.
    pub(crate) fn session(&self) -> &MemoryStore {
        &self.session
    }

    /// The current store root (the writer's tests check it).
    #[cfg(test)]
    pub(crate) fn root(&self) -> Address {
        self.root
    }

    /// A chunk, from this session's writes or the files.
    pub(crate) fn chunk(&self, address: &Address) -> Result<Arc<[u8]>> {
        ChunkIo::chunk(self, address)
    }

    /// Puts a chunk (written at the next root update); returns its address.
    pub(crate) fn put(&mut self, chunk: &[u8]) -> Result<Address> {
        ChunkIo::put(self, chunk)
    }

    /// Queues for the journal every chunk reachable from `root` that only the session store
    /// holds (the journal's records are made straight from the session's bytes; a large
    /// batch's on two threads), children before their parents (a depth-first walk from `root`
    /// in key order, each chunk after everything under it). So every prefix of the batch is
    /// closed under references: a write cut short leaves no chunk whose children are missing,
    /// and a later walk that skips a subtree whose top chunk is stored (ours after
    /// `JournalScan::drop_unrooted`, Dolt's pull) never skips one left incomplete.
    pub(crate) fn write_reachable(&mut self, root: Address) -> Result<()> {
        let source = self.db.source();
        let session = &self.session;
        let journal = &mut self.journal;
        let mut out: Vec<(Address, &[u8])> = Vec::new();
        let held = |a: &Address| journal.contains(a) || source.contains(a);
        let chunk_of = |a: Address| session.get(&a)?.ok_or(DoltError::MissingChunk(a));
        children_first(
            [root],
            |a| {
                if held(&a) {
                    return Ok(None);
                }
                let chunk = chunk_of(a)?;
                let mut refs = Vec::new();
                if file_id(chunk).is_ok_and(|id| id == *b"TUPM") {
                    // Through the store's node view: the nodes a build wrote here are not
                    // verified again (the walk over a million-row import's leaves was mostly
                    // that verification).
                    let node = session.get_node(&a)?;
                    Message::ProllyTree(node).for_each_ref(|r| {
                        if !r.is_zero() {
                            refs.push(r);
                        }
                    });
                } else {
                    for_each_ref(a, chunk, &mut |r| refs.push(r))?;
                }
                Ok(Some(refs))
            },
            |a| {
                out.push((a, chunk_of(a)?));
                Ok(())
            },
        )?;
        journal.put_all(&out)
    }

    /// The datasets of the current store root: name → address, bytewise order.
    pub(crate) fn datasets(&self) -> Result<Vec<(Vec<u8>, Address)>> {
        if self.root.is_zero() {
            return Ok(Vec::new());
        }
        let chunk = self.chunk(&self.root)?;
        let sr =
            StoreRootFields::decode(&chunk).map_err(|e| bad_chunk(self.root, e.to_string()))?;
        address_map_entries(self, sr.address_map)
    }

    /// Sets (`Some`) or removes (`None`) datasets, writes the new store root and makes it the
    /// root: everything put so far becomes durable, then the root record. `timestamp_secs` goes
    /// into the journal's root record (Dolt's reflog time).
    pub(crate) fn update_datasets(
        &mut self,
        changes: &[(&str, Option<Address>)],
        timestamp_secs: u64,
    ) -> Result<Address> {
        for (_, value) in changes {
            if let Some(a) = value {
                if !self.journal.contains(a) && !self.db.source().contains(a) {
                    return Err(DoltError::MissingChunk(*a));
                }
            }
        }
        let old_map = if self.root.is_zero() {
            empty_address_map()?
        } else {
            let chunk = self.chunk(&self.root)?;
            StoreRootFields::decode(&chunk)
                .map_err(|e| bad_chunk(self.root, e.to_string()))?
                .address_map
                .to_vec()
        };
        let byte_changes: Vec<(&[u8], Option<Address>)> =
            changes.iter().map(|(n, a)| (n.as_bytes(), *a)).collect();
        let leaf = edit_address_map(self, &old_map, &byte_changes)?;
        let root_chunk = StoreRootFields { address_map: &leaf }
            .encode()
            .map_err(|e| encode("store root", e))?;
        let root = self.put(&root_chunk)?;
        self.journal.commit_root(root, timestamp_secs)?;
        self.root = root;
        Ok(root)
    }

    /// Puts a working set whose working and staged roots are both `root` (a branch with
    /// nothing uncommitted), stamped with `meta`.
    pub(crate) fn put_working_set(
        &mut self,
        root: Address,
        meta: &WorkingSetMeta<'_>,
    ) -> Result<Address> {
        self.put_working_set_roots(root, root, meta)
    }

    /// A working set whose working and staged roots differ (uncommitted, partly staged
    /// changes); returns its address.
    pub(crate) fn put_working_set_roots(
        &mut self,
        working: Address,
        staged: Address,
        meta: &WorkingSetMeta<'_>,
    ) -> Result<Address> {
        let ws = WorkingSetFields {
            working_root_addr: working.0,
            staged_root_addr: Some(staged.0),
            name: meta.name,
            email: meta.email,
            desc: meta.description,
            timestamp_millis: meta.timestamp_secs,
            merge_state: None,
            rebase_state: None,
        }
        .encode()
        .map_err(|e| encode("working set", e))?;
        self.put(&ws)
    }

    /// Commits `commit` to `branch` as `dolt commit` does: the commit (with `branch`'s head as
    /// first parent, which the caller lists), the branch head moved to it, and the branch's
    /// working set reset to the committed root (working = staged = commit root). Returns the
    /// commit's address.
    pub(crate) fn commit_to_branch(
        &mut self,
        branch: &str,
        commit: &NewCommit<'_>,
        meta: &WorkingSetMeta<'_>,
        timestamp_secs: u64,
    ) -> Result<Address> {
        let head_ref = format!("refs/heads/{branch}");
        let current = self
            .datasets()?
            .into_iter()
            .find(|(k, _)| k.as_slice() == head_ref.as_bytes())
            .map(|(_, a)| a);
        if current.is_some() && commit.parents.first() != current.as_ref() {
            return Err(conflict(
                format!("branch {branch:?}"),
                format!(
                    "its head is {}, not the new commit's first parent",
                    current.map(|a| a.to_string()).unwrap_or_default()
                ),
            ));
        }
        let (address, _) = put_commit(self, commit)?;
        let ws = self.put_working_set(commit.root, meta)?;
        let ws_ref = format!("workingSets/heads/{branch}");
        self.update_datasets(
            &[(&head_ref, Some(address)), (&ws_ref, Some(ws))],
            timestamp_secs,
        )?;
        Ok(address)
    }
}

impl ChunkIo for StoreWriter {
    fn chunk(&self, address: &Address) -> Result<Arc<[u8]>> {
        match self.session.get(address)? {
            Some(c) => Ok(Arc::from(c)),
            None => self.db.source().chunk(address),
        }
    }

    fn put(&mut self, chunk: &[u8]) -> Result<Address> {
        let address = self.session.put(chunk)?;
        if !self.db.source().contains(&address) {
            self.journal.put_addressed(address, chunk)?;
        }
        Ok(address)
    }
}
