//! Appending to Dolt's chunk journal (`noms/vvvv…`): chunk records, then a root record, each
//! framed and checksummed as Dolt's `journal_record.go` writes them (the layout is
//! [`crate::chunks::journal_record`]'s), made durable with fsync.
//!
//! What is there is never rewritten: records go after the last valid record. The one exception
//! is Dolt's own: bytes after the last valid record that are not a record (a torn tail left by a
//! crash, or the zeros older Dolt pre-allocated) are cut off when the journal is opened for
//! writing, exactly as Dolt does on every writable open (`processJournalRecords` with
//! `tryTruncate`) — otherwise records appended after them could never be read. A journal whose
//! damage is followed by durable records (possible data loss) is refused, as Dolt refuses it.
//!
//! Durability: [`JournalAppender::commit_root`] writes the pending chunk records and the root
//! record after them in one `write`, then fsyncs once — what Dolt's `commitRootHash` does
//! (flush the buffered chunk records and root record, one `Sync`). A killed process can leave
//! a prefix of the write (Linux stops a `write` between pages when a kill arrives): whole
//! chunk records and a torn one, without the root record; a crash of the machine during the
//! fsync can leave a prefix whose last records fail their CRC. Readers (Dolt's and ours) take
//! either as a torn tail, i.e. the old root, and whole chunk records after the last root
//! record are not counted as held ([`crate::chunks::journal::JournalScan::drop_unrooted`]),
//! so a rerun writes them again; the batch holds children before parents
//! ([`super::writer::StoreWriter::write_reachable`]), so no prefix of it has a chunk whose
//! children are missing. Every record
//! is checksummed, so a root record whose chunks were lost would follow a damaged record —
//! the case Dolt refuses as possible data loss rather than silently opening.
//!
//! A store without a journal (table files only, as `dolt gc` leaves it) gets one on its first
//! commit, in the order Dolt's `bootstrapJournalWriter` and first manifest flush give: the
//! journal is created holding one root record of the manifest's current root (fsync'd), then
//! the manifest is rewritten to name the journal (temporary file, fsync, rename, directory
//! fsync), and only then are the commit's records appended. A crash between any two steps
//! leaves the old root readable by Dolt and by us: a journal the manifest does not name is
//! ignored by readers, and one it names starts at the old root. Nothing happens before the first
//! commit, so a rejected change leaves such a store byte for byte as it was.
//!
//! Otherwise the manifest is not touched. With a journal, Dolt itself rewrites the manifest only when the
//! set of table files changes (`ChunkJournal.Update` compares spec names only); a root update
//! is just a journal root record, and Dolt "trues up" the manifest's root to the journal's last
//! root the next time it opens the store for writing (`trueUpBackingManifest`). Readers (Dolt's
//! and ours) take the journal's last root record over the manifest's root. Appends leave the
//! `journal.idx` accelerator valid (it only covers regions up to an older root record); as
//! Dolt's writable open does, opening a store whose journal has a large unindexed part adds a
//! batch covering it up to its last root record (`StoreWriter::open`,
//! `Journal::index_batch`), and the appender then takes the journal's end, root and chunks from
//! the reader's read of it ([`JournalAppender::open_read`]) instead of reading it again.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use prollystore_format::Address;

use super::lock::WriterLock;
use crate::chunks::journal::{scan_records, AddressHash, Journal};
use crate::chunks::journal_record::{
    chunk_record, chunk_record_from_payload, root_record, ROOT_RECORD_LEN,
};
use crate::chunks::manifest::{Manifest, TableSpec, JOURNAL_NAME};
use crate::error::{conflict, DoltError, Result};

/// File name of the chunk journal: base32 of twenty 0xFF bytes.
pub(crate) const JOURNAL_FILE: &str = "vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv";

/// Chunks of at least this many bytes in all are made into records on two threads
/// ([`JournalAppender::put_all`]); a small commit's few chunks stay on the calling thread.
const PARALLEL_RECORDS_BYTES: usize = 4 << 20;
/// An open journal, appended to under the database's writer lock.
#[derive(Debug)]
pub(crate) struct JournalAppender {
    /// The open journal; `None` until the first commit of a store that has none.
    file: Option<File>,
    path: PathBuf,
    /// The manifest as read under the lock (for a store whose manifest does not name the
    /// journal yet: rewritten once, on the first commit).
    manifest: Manifest,
    /// Whether the manifest names the journal (so readers look in it).
    listed: bool,
    /// Offset just after the last valid record: where the next record goes.
    end: u64,
    /// Chunks already in the journal or pending, so each is written once.
    present: HashSet<Address, AddressHash>,
    /// Address prefixes of the chunks the reader's `journal.idx` located (see
    /// [`JournalAppender::open_read`]): in the journal too.
    indexed: HashSet<[u8; 16], AddressHash>,
    /// Encoded chunk records not yet written.
    pending: Vec<u8>,
    /// How many chunk records `pending` holds.
    pending_chunks: usize,
    /// Each pending chunk record's address and where it starts in `pending`, in order.
    pending_records: Vec<(Address, usize)>,
    /// The last root record's root.
    root: Option<Address>,
    _lock: WriterLock,
}

impl JournalAppender {
    /// Opens the journal of the store in `noms_dir` for appending, taking its writer lock. A
    /// store without a journal is opened too; its journal is made on the first commit (see the
    /// module doc).
    pub(crate) fn open(noms_dir: &Path) -> Result<JournalAppender> {
        Self::open_locked(noms_dir, WriterLock::acquire(noms_dir)?)
    }

    /// [`JournalAppender::open`] under `lock` (taken by the caller), for a store whose reader
    /// opened it after the lock was taken: when the manifest names the journal and the reader
    /// read it (`journal`), the end, last root and chunks are taken from that read instead of
    /// reading and checksumming the file a second time (a tail the reader ignored is cut off,
    /// as `open` cuts it); otherwise as `open`.
    pub(crate) fn open_read(
        noms_dir: &Path,
        lock: WriterLock,
        journal: Option<&Journal>,
    ) -> Result<JournalAppender> {
        let path = noms_dir.join(JOURNAL_FILE);
        let Some(journal) = journal.filter(|j| Path::new(j.name()) == path) else {
            return Self::open_locked(noms_dir, lock);
        };
        let manifest_path = noms_dir.join("manifest");
        let manifest_bytes = std::fs::read(&manifest_path).map_err(|source| DoltError::Io {
            file: manifest_path.display().to_string(),
            source,
        })?;
        let manifest = Manifest::parse(&manifest_bytes, &manifest_path.display().to_string())?;
        if !manifest.specs.iter().any(TableSpec::is_journal) {
            return Self::open_locked(noms_dir, lock);
        }
        let io = |source| DoltError::Io {
            file: path.display().to_string(),
            source,
        };
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        if len != journal.file_len() {
            // Changed since the reader opened it (not under our lock): read it again.
            return Self::open_locked(noms_dir, lock);
        }
        if journal.end() < len {
            file.set_len(journal.end()).map_err(io)?;
            file.sync_all().map_err(io)?;
        }
        let (scanned, indexed) = journal.chunk_keys();
        Ok(JournalAppender {
            file: Some(file),
            path,
            manifest,
            listed: true,
            end: journal.end(),
            present: scanned.copied().collect(),
            indexed: indexed.copied().collect(),
            pending: Vec::new(),
            pending_chunks: 0,
            pending_records: Vec::new(),
            root: journal.root(),
            _lock: lock,
        })
    }

    fn open_locked(noms_dir: &Path, lock: WriterLock) -> Result<JournalAppender> {
        let manifest_path = noms_dir.join("manifest");
        let manifest_bytes = std::fs::read(&manifest_path).map_err(|source| DoltError::Io {
            file: manifest_path.display().to_string(),
            source,
        })?;
        let manifest = Manifest::parse(&manifest_bytes, &manifest_path.display().to_string())?;
        let listed = manifest.specs.iter().any(TableSpec::is_journal);
        let path = noms_dir.join(JOURNAL_FILE);
        let name = path.display().to_string();
        let io = |source| DoltError::Io {
            file: name.clone(),
            source,
        };
        if !path.is_file() {
            if listed {
                return Err(DoltError::Corrupt {
                    file: manifest_path.display().to_string(),
                    offset: 0,
                    reason: format!(
                        "the manifest names the chunk journal {name}, which is missing"
                    ),
                });
            }
            return Ok(JournalAppender {
                file: None,
                path,
                manifest,
                listed,
                end: 0,
                present: HashSet::default(),
                indexed: HashSet::default(),
                pending: Vec::new(),
                pending_chunks: 0,
                pending_records: Vec::new(),
                root: None,
                _lock: lock,
            });
        }
        let bytes = std::fs::read(&path).map_err(io)?;
        // Errors here are Dolt's data-loss refusals (damage with durable records after it).
        let mut scan = scan_records(&bytes, 0, &name)?;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(io)?;
        if scan.end < bytes.len() as u64 {
            // A torn or zero-filled tail: not durable data (see the module doc).
            file.set_len(scan.end).map_err(io)?;
            file.sync_all().map_err(io)?;
        }
        // A journal the manifest does not name (a crash between its creation and the manifest
        // rewrite) is unread by readers: it may hold only the manifest's own root.
        let root = scan.roots.last().map(|r| r.root);
        // Records after the last root record are written again if needed (see
        // `JournalScan::drop_unrooted`).
        scan.drop_unrooted();
        if !listed && root.is_some_and(|r| r != manifest.root) {
            return Err(conflict(
                format!("the chunk journal {name}"),
                format!(
                    "it ends at root {}, but the manifest, which does not name the journal, is \
                     at root {}",
                    root.unwrap_or(Address::ZERO),
                    manifest.root
                ),
            ));
        }
        Ok(JournalAppender {
            file: Some(file),
            path,
            manifest,
            listed,
            end: scan.end,
            present: scan.chunks.iter().map(|(a, _)| *a).collect(),
            indexed: HashSet::default(),
            pending: Vec::new(),
            pending_chunks: 0,
            pending_records: Vec::new(),
            root,
            _lock: lock,
        })
    }

    /// The root of the last root record (written by Dolt or by us), if any.
    pub(crate) fn root(&self) -> Option<Address> {
        self.root
    }

    /// Queues the record of `chunk`, stored under `address` (the address its caller's chunk
    /// store computed for it), unless the journal already holds it. The chunk is compressed
    /// straight from the caller's bytes (the journal keeps no copy: the writer's session store
    /// serves reads of what was put). Nothing reaches the file before
    /// [`JournalAppender::commit_root`].
    pub(crate) fn put_addressed(&mut self, address: Address, chunk: &[u8]) -> Result<()> {
        if self.contains(&address) {
            return Ok(());
        }
        let start = self.pending.len();
        chunk_record(address, chunk, &mut self.pending)?;
        self.queued(address, start);
        Ok(())
    }

    /// [`JournalAppender::put_addressed`] for a chunk given as its checked payload (snappy
    /// block ‖ CRC-32C, as a table file stores it), which becomes the record's payload as it
    /// is: nothing is compressed again.
    pub(crate) fn put_payload(&mut self, address: Address, payload: &[u8]) -> Result<()> {
        if self.contains(&address) {
            return Ok(());
        }
        let start = self.pending.len();
        chunk_record_from_payload(address, payload, &mut self.pending)?;
        self.queued(address, start);
        Ok(())
    }

    /// Notes the chunk record of `address` just made at `start` in `pending`.
    fn queued(&mut self, address: Address, start: usize) {
        self.present.insert(address);
        self.pending_chunks += 1;
        self.pending_records.push((address, start));
    }

    /// Puts the pending chunk records in the order of `rank` (lowest first; records of
    /// addresses it lacks keep their order, after the ranked ones): a writer that queued
    /// chunks as they came (a fetch, level by level from the root) orders them children
    /// first before they are written.
    pub(crate) fn reorder_pending(&mut self, rank: &std::collections::HashMap<Address, usize>) {
        let mut records: Vec<(usize, Address, std::ops::Range<usize>)> = self
            .pending_records
            .iter()
            .enumerate()
            .map(|(i, (a, start))| {
                let end = self
                    .pending_records
                    .get(i + 1)
                    .map_or(self.pending.len(), |(_, next)| *next);
                (rank.get(a).copied().unwrap_or(usize::MAX), *a, *start..end)
            })
            .collect();
        // Stable: unranked records keep their order.
        records.sort_by_key(|(r, _, _)| *r);
        let mut pending = Vec::with_capacity(self.pending.len());
        self.pending_records.clear();
        for (_, a, range) in records {
            self.pending_records.push((a, pending.len()));
            pending.extend_from_slice(&self.pending[range]);
        }
        self.pending = pending;
    }

    /// [`JournalAppender::put_addressed`] for each of `chunks`, in order. When they are many
    /// bytes in all, the second half's records are compressed on another thread meanwhile:
    /// the same records in the same order, made in about half the time on a free core. On an
    /// error the chunks before the failing one stay queued, as one by one.
    pub(crate) fn put_all(&mut self, chunks: &[(Address, &[u8])]) -> Result<()> {
        let total: usize = chunks.iter().map(|(_, c)| c.len()).sum();
        if total < PARALLEL_RECORDS_BYTES {
            return chunks
                .iter()
                .try_for_each(|(a, c)| self.put_addressed(*a, c));
        }
        // Each chunk once, none the journal holds: every record made is then kept.
        let mut seen = HashSet::with_capacity(chunks.len());
        let chunks: Vec<(Address, &[u8])> = chunks
            .iter()
            .filter(|(a, _)| !self.contains(a) && seen.insert(*a))
            .copied()
            .collect();
        let mut half = 0;
        let mid = chunks
            .iter()
            .position(|(_, c)| {
                half += c.len();
                2 * half >= total
            })
            .map_or(chunks.len(), |i| i + 1);
        let (first, second) = chunks.split_at(mid);
        // The records of `part` appended to `out`, up to the first error: how many were made,
        // the end of each, and the error.
        let records = |part: &[(Address, &[u8])], out: &mut Vec<u8>| {
            let mut ends = Vec::with_capacity(part.len());
            for (a, c) in part {
                if let Err(e) = chunk_record(*a, c, out) {
                    return (ends, Some(e));
                }
                ends.push(out.len());
            }
            (ends, None)
        };
        let mut pending = std::mem::take(&mut self.pending);
        let first_start = pending.len();
        let mut later = Vec::new();
        let ((made, error), (later_ends, later_error)) = std::thread::scope(|s| {
            let other = s.spawn(|| records(second, &mut later));
            let made = records(first, &mut pending);
            let later = other
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (made, later)
        });
        self.pending = pending;
        // Each record made is queued; a part's record starts where the one before it ended.
        let mut start = first_start;
        for ((a, _), end) in first.iter().zip(&made) {
            self.queued(*a, start);
            start = *end;
        }
        if let Some(e) = error {
            return Err(e);
        }
        let base = self.pending.len();
        let mut start = base;
        for ((a, _), end) in second.iter().zip(&later_ends) {
            self.queued(*a, start);
            start = base + end;
        }
        let end = later_ends.last().copied().unwrap_or(0);
        self.pending.extend_from_slice(&later[..end]);
        later_error.map_or(Ok(()), Err)
    }

    /// Whether the journal holds `address` (from before, or put in this session).
    pub(crate) fn contains(&self, address: &Address) -> bool {
        self.present.contains(address)
            || (!self.indexed.is_empty() && self.indexed.contains(&prefix16(address)))
    }

    /// Makes `root` (a `StoreRoot` chunk put before, or already in the store) the store's root:
    /// writes the pending chunk records followed by the root record stamped `timestamp_secs`
    /// (Unix seconds; Dolt stamps the current time) in one write, and fsyncs once.
    pub(crate) fn commit_root(&mut self, root: Address, timestamp_secs: u64) -> Result<()> {
        if !self.contains(&root) {
            return Err(DoltError::MissingChunk(root));
        }
        self.bootstrap(timestamp_secs)?;
        let mut batch = std::mem::take(&mut self.pending);
        batch.extend_from_slice(&root_record(root, timestamp_secs));
        let written = self.write_at_end(&batch);
        if written.is_err() {
            // Nothing of this batch counts as written: keep the chunk records for a retry.
            batch.truncate(batch.len() - ROOT_RECORD_LEN);
            self.pending = batch;
            return written;
        }
        batch.clear();
        self.pending = batch;
        self.pending_chunks = 0;
        self.pending_records.clear();
        self.root = Some(root);
        Ok(())
    }

    /// Gives a store without a journal one the manifest names, before its first commit's
    /// records (see the module doc for the order and why it is crash-safe).
    fn bootstrap(&mut self, timestamp_secs: u64) -> Result<()> {
        let noms_dir = self
            .path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let io = |file: &Path, source| DoltError::Io {
            file: file.display().to_string(),
            source,
        };
        if self.file.is_none() {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&self.path)
                .map_err(|e| io(&self.path, e))?;
            let first = root_record(self.manifest.root, timestamp_secs);
            file.write_all(&first).map_err(|e| io(&self.path, e))?;
            file.sync_all().map_err(|e| io(&self.path, e))?;
            sync_dir(&noms_dir)?;
            self.file = Some(file);
            self.end = first.len() as u64;
            self.root = Some(self.manifest.root);
        }
        if !self.listed {
            let mut next = self.manifest.clone();
            next.specs.push(TableSpec {
                name: JOURNAL_NAME.to_string(),
                chunk_count: (self.present.len() - self.pending_chunks) as u32,
            });
            next.lock = next.fresh_lock()?;
            let manifest_path = noms_dir.join("manifest");
            let temp = noms_dir.join("manifest.prolly-tmp");
            let mut f = File::create(&temp).map_err(|e| io(&temp, e))?;
            f.write_all(next.encode().as_bytes())
                .map_err(|e| io(&temp, e))?;
            f.sync_all().map_err(|e| io(&temp, e))?;
            drop(f);
            std::fs::rename(&temp, &manifest_path).map_err(|e| io(&manifest_path, e))?;
            sync_dir(&noms_dir)?;
            self.manifest = next;
            self.listed = true;
        }
        Ok(())
    }

    /// Appends `bytes` at the durable end and fsyncs them.
    fn write_at_end(&mut self, bytes: &[u8]) -> Result<()> {
        let io = |source| DoltError::Io {
            file: self.path.display().to_string(),
            source,
        };
        let file = self.file.as_mut().ok_or_else(|| DoltError::Io {
            file: self.path.display().to_string(),
            source: std::io::Error::other("the journal was not created"),
        })?;
        file.seek(SeekFrom::Start(self.end)).map_err(io)?;
        file.write_all(bytes).map_err(io)?;
        file.flush().map_err(io)?;
        file.sync_data().map_err(io)?;
        self.end += bytes.len() as u64;
        Ok(())
    }
}

/// The first 16 bytes of an address (what `journal.idx` keys chunks by).
fn prefix16(address: &Address) -> [u8; 16] {
    let mut p = [0u8; 16];
    p.copy_from_slice(&address.as_bytes()[..16]);
    p
}

/// Makes a directory's entries (a created or renamed file) durable.
fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|source| DoltError::Io {
            file: dir.display().to_string(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use prollystore_format::{Address, HashProfile};

    use super::{JournalAppender, PARALLEL_RECORDS_BYTES};
    use crate::write::tests::{copy_db, scenario};

    /// Many chunks queued at once (records made on two threads) give the bytes they give one
    /// by one; a chunk listed twice or already queued is written once.
    #[test]
    fn chunks_queued_at_once_make_the_records_of_one_by_one() {
        let mut x: u64 = 7;
        let mut chunks: Vec<(Address, Vec<u8>)> = (0..1500)
            .map(|i| {
                let chunk: Vec<u8> = (0..(3000 + i % 5000))
                    .map(|_| {
                        x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                        (x >> 60) as u8
                    })
                    .collect();
                (HashProfile::Dolt.address_of(&chunk), chunk)
            })
            .collect();
        let total: usize = chunks.iter().map(|(_, c)| c.len()).sum();
        assert!(total >= PARALLEL_RECORDS_BYTES);
        chunks.push(chunks[3].clone());
        chunks.push(chunks[1400].clone());
        let (_a, a) = copy_db(&scenario("branches/after"));
        let (_b, b) = copy_db(&scenario("branches/after"));
        let mut one = JournalAppender::open(&a.join(".dolt/noms")).unwrap();
        let mut all = JournalAppender::open(&b.join(".dolt/noms")).unwrap();
        one.put_addressed(chunks[10].0, &chunks[10].1).unwrap();
        all.put_addressed(chunks[10].0, &chunks[10].1).unwrap();
        for (address, chunk) in &chunks {
            one.put_addressed(*address, chunk).unwrap();
        }
        let borrowed: Vec<(Address, &[u8])> = chunks.iter().map(|(a, c)| (*a, &c[..])).collect();
        all.put_all(&borrowed).unwrap();
        assert_eq!(all.pending_chunks, one.pending_chunks);
        assert_eq!(all.pending_chunks, 1500);
        assert!(all.pending == one.pending, "different records");
        assert_eq!(all.present, one.present);
        assert_eq!(all.pending_records, one.pending_records);
        // Reordered by rank (the unranked after, in their order), the records are the same
        // records, each still where its start says.
        let rank: std::collections::HashMap<Address, usize> = chunks[..1500]
            .iter()
            .rev()
            .step_by(2)
            .enumerate()
            .map(|(i, (a, _))| (*a, i))
            .collect();
        let before = all.pending.clone();
        let starts = all.pending_records.clone();
        all.reorder_pending(&rank);
        assert_eq!(all.pending.len(), before.len());
        let record = |pending: &[u8], records: &[(Address, usize)], i: usize| {
            let end = records.get(i + 1).map_or(pending.len(), |r| r.1);
            pending[records[i].1..end].to_vec()
        };
        let by_address: std::collections::HashMap<Address, Vec<u8>> = (0..starts.len())
            .map(|i| (starts[i].0, record(&before, &starts, i)))
            .collect();
        for (i, (a, _)) in all.pending_records.iter().enumerate() {
            assert_eq!(record(&all.pending, &all.pending_records, i), by_address[a]);
            if i < rank.len() {
                assert_eq!(rank[a], i, "ranked records first, by rank");
            }
        }
        let unranked: Vec<Address> = starts
            .iter()
            .map(|(a, _)| *a)
            .filter(|a| !rank.contains_key(a))
            .collect();
        let after: Vec<Address> = all.pending_records[rank.len()..]
            .iter()
            .map(|(a, _)| *a)
            .collect();
        assert_eq!(after, unranked);
    }
}
