//! What a push to a Dolt remote needs from this crate (for `prollystore-dolt-remote`'s push):
//!
//! * [`encode_table_file`]: chunks as one classic NBS table file, laid out as Dolt's
//!   `tableWriter` lays it out (snappy‖CRC-32C records in the order given, the prefix index
//!   sorted by address prefix, the lengths and suffixes in record order, the footer), named as
//!   Dolt names it (SHA-512 of the suffixes, first 20 bytes). Dolt's push uploads exactly such
//!   a file; the reader in [`crate::chunks::table_file`] reads it back.
//! * [`RemoteRoot`]: a remote's store root and address map read from chunks the caller
//!   provides one by one (the remote is not on this disk), and the new store root a push makes
//!   by setting one dataset (the chunks to upload come back with it).
//! * [`commit_file_remote`]: a `file://` remote (a directory of table files and a manifest,
//!   no journal) given a new table file and moved from one root to the next under its `LOCK`,
//!   with Dolt's compare-and-set: the table file is written and fsync'd first, then the
//!   manifest is replaced (temporary file, fsync, rename, directory fsync) only if the remote's
//!   root is still the one the push started from.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use prollystore::store::{ChunkStore, MemoryStore};
use prollystore_format::message::objects::{CommitFields, StoreRootFields, WorkingSetFields};
use prollystore_format::{Address, HashProfile};

use super::chunk_io::ChunkIo;
use super::lock::WriterLock;
use crate::chunks::manifest::{Manifest, TableSpec};
use crate::error::{bad_chunk, bad_input, conflict, encode, DoltError, Result};
use crate::write::maps::address_map::{address_map_entries, edit_address_map, empty_address_map};

/// The NBS table file footer's magic number.
const MAGIC: &[u8; 8] = b"\xff\xb5\xd8\xc2\x24\x63\xee\x50";

/// A table file made by [`encode_table_file`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableFile {
    /// Its name (the file name is the base32 of this).
    pub name: Address,
    /// The whole file.
    pub data: Vec<u8>,
    /// Where the index begins (the length of the chunk records), as Dolt reports it on upload.
    pub split_offset: u64,
    /// How many chunks it holds.
    pub chunk_count: u32,
}

impl TableFile {
    /// The file's name on disk and in a manifest (base32).
    pub fn file_name(&self) -> String {
        self.name.to_base32()
    }
}

/// Encodes `chunks` (address, uncompressed bytes; a repeated address is written once, empty
/// chunks refused) as one NBS table file; see the module doc. Every chunk is checked to hash
/// to its address first.
pub fn encode_table_file(chunks: &[(Address, &[u8])]) -> Result<TableFile> {
    let mut seen = std::collections::HashSet::with_capacity(chunks.len());
    let unique: Vec<(Address, &[u8])> = chunks
        .iter()
        .filter(|(a, _)| seen.insert(*a))
        .copied()
        .collect();
    if unique.is_empty() {
        return Err(bad_input("a table file", "it holds no chunks"));
    }
    let count = u32::try_from(unique.len()).map_err(|_| {
        bad_input(
            "a table file",
            format!("{} chunks are too many", unique.len()),
        )
    })?;
    let bytes: Vec<&[u8]> = unique.iter().map(|(_, c)| *c).collect();
    let mut actual = vec![Address::ZERO; unique.len()];
    HashProfile::Dolt.addresses_of(&bytes, &mut actual);
    for ((address, chunk), actual) in unique.iter().zip(&actual) {
        if chunk.is_empty() {
            return Err(bad_input(format!("chunk {address}"), "it is empty"));
        }
        if address != actual {
            return Err(DoltError::HashMismatch {
                address: *address,
                actual: *actual,
                file: "a table file being written".into(),
                offset: 0,
            });
        }
    }
    let mut data = Vec::new();
    let mut lengths = Vec::with_capacity(unique.len());
    let mut uncompressed: u64 = 0;
    let mut encoder = snap::raw::Encoder::new();
    for (address, chunk) in &unique {
        let compressed = encoder
            .compress_vec(chunk)
            .map_err(|e| encode(format!("chunk {address} (snappy)"), e))?;
        data.extend_from_slice(&compressed);
        data.extend_from_slice(&crc32c::crc32c(&compressed).to_be_bytes());
        lengths.push(
            u32::try_from(compressed.len() + 4)
                .map_err(|_| bad_input(format!("chunk {address}"), "it is too large"))?,
        );
        uncompressed += chunk.len() as u64;
    }
    let split_offset = data.len() as u64;
    // The prefix index: (prefix, ordinal) sorted by prefix (ties in record order).
    let mut order: Vec<u32> = (0..count).collect();
    let prefix = |a: &Address| u64::from_be_bytes(a.0[..8].try_into().expect("8 bytes"));
    order.sort_by_key(|&i| (prefix(&unique[i as usize].0), i));
    for &i in &order {
        data.extend_from_slice(&unique[i as usize].0 .0[..8]);
        data.extend_from_slice(&i.to_be_bytes());
    }
    for length in &lengths {
        data.extend_from_slice(&length.to_be_bytes());
    }
    let suffixes_at = data.len();
    for (address, _) in &unique {
        data.extend_from_slice(&address.0[8..]);
    }
    let name = {
        use sha2::{Digest, Sha512};
        let digest = Sha512::digest(&data[suffixes_at..]);
        Address::from_slice(&digest[..20]).expect("20 bytes make an address")
    };
    data.extend_from_slice(&count.to_be_bytes());
    data.extend_from_slice(&uncompressed.to_be_bytes());
    data.extend_from_slice(MAGIC);
    Ok(TableFile {
        name,
        data,
        split_offset,
        chunk_count: count,
    })
}

/// A remote's store root, read from chunks the caller supplies (see the module doc): ask
/// [`RemoteRoot::datasets`] or [`RemoteRoot::set_datasets`]; an
/// `Err(DoltError::MissingChunk(a))` names a chunk to read from the remote and
/// [`RemoteRoot::insert`] before asking again (the address map is read top-down, so a few
/// rounds suffice).
#[derive(Debug, Default)]
pub struct RemoteRoot {
    chunks: HashMap<Address, Arc<[u8]>>,
}

/// The store root a push makes, and the chunks that are new in it.
#[derive(Clone, Debug)]
pub struct NewRoot {
    /// The new store root.
    pub root: Address,
    /// Its chunk and the address-map chunks it needs (address, bytes).
    pub chunks: Vec<(Address, Vec<u8>)>,
}

/// Reads of [`RemoteRoot`]'s chunks, and puts into a session store.
struct RootIo<'a> {
    known: &'a HashMap<Address, Arc<[u8]>>,
    session: MemoryStore,
}

impl ChunkIo for RootIo<'_> {
    fn chunk(&self, address: &Address) -> Result<Arc<[u8]>> {
        if let Some(c) = self.session.get(address)? {
            return Ok(Arc::from(c));
        }
        self.known
            .get(address)
            .cloned()
            .ok_or(DoltError::MissingChunk(*address))
    }

    fn put(&mut self, chunk: &[u8]) -> Result<Address> {
        Ok(self.session.put(chunk)?)
    }
}

impl RemoteRoot {
    /// An empty set of known chunks.
    pub fn new() -> RemoteRoot {
        RemoteRoot::default()
    }

    /// Adds a chunk read from the remote, after checking it hashes to `address`; `origin` names
    /// where it came from, for the error.
    pub fn insert(&mut self, address: Address, chunk: &[u8], origin: &str) -> Result<()> {
        let actual = HashProfile::Dolt.address_of(chunk);
        if actual != address {
            return Err(DoltError::HashMismatch {
                address,
                actual,
                file: origin.to_string(),
                offset: 0,
            });
        }
        self.chunks.insert(address, Arc::from(chunk));
        Ok(())
    }

    fn io(&self) -> RootIo<'_> {
        RootIo {
            known: &self.chunks,
            session: MemoryStore::new(HashProfile::Dolt),
        }
    }

    fn address_map(&self, io: &RootIo<'_>, root: Address) -> Result<Vec<u8>> {
        if root.is_zero() {
            return empty_address_map();
        }
        let chunk = io.chunk(&root)?;
        Ok(StoreRootFields::decode(&chunk)
            .map_err(|e| bad_chunk(root, e.to_string()))?
            .address_map
            .to_vec())
    }

    /// The datasets (name, address) of store root `root` (zero: none), bytewise name order.
    pub fn datasets(&self, root: Address) -> Result<Vec<(String, Address)>> {
        let io = self.io();
        let map = self.address_map(&io, root)?;
        Ok(address_map_entries(&io, &map)?
            .into_iter()
            .map(|(k, a)| (String::from_utf8_lossy(&k).into_owned(), a))
            .collect())
    }

    /// The store root `root` (zero: an empty store) with each `(name, Some(address))` set and
    /// each `(name, None)` removed, and the chunks that make it.
    pub fn set_datasets(
        &self,
        root: Address,
        changes: &[(&str, Option<Address>)],
    ) -> Result<NewRoot> {
        let mut io = self.io();
        let map = self.address_map(&io, root)?;
        let byte_changes: Vec<(&[u8], Option<Address>)> =
            changes.iter().map(|(n, a)| (n.as_bytes(), *a)).collect();
        let leaf = edit_address_map(&mut io, &map, &byte_changes)?;
        let root_chunk = StoreRootFields { address_map: &leaf }
            .encode()
            .map_err(|e| encode("store root", e))?;
        let root = io.put(&root_chunk)?;
        let mut chunks = Vec::new();
        for a in io.session.addresses() {
            if let Some(c) = io.session.get(&a)? {
                chunks.push((a, c.to_vec()));
            }
        }
        Ok(NewRoot { root, chunks })
    }
}

impl RemoteRoot {
    /// The store root a fast-forward push of `branch` to commit `head` (whose root value is
    /// `head_root`) makes from `root`, as Dolt's `FastForward` makes it: `refs/heads/BRANCH`
    /// set to `head`; with `assert_working_set` (a remote that asks for it, as `dolt
    /// sql-server` does) the branch's working set is checked first — refused, as Dolt refuses
    /// it ("target has uncommitted changes"), when its staged root differs from its working
    /// root or from the root of the branch's current head — and replaced by one whose working
    /// and staged roots are `head_root` (no metadata, as Dolt writes it on a push); a branch
    /// without a working set gets one.
    pub fn fast_forward(
        &self,
        root: Address,
        branch: &str,
        head: Address,
        head_root: Address,
        assert_working_set: bool,
    ) -> Result<NewRoot> {
        let head_ref = format!("refs/heads/{branch}");
        if !assert_working_set {
            return self.set_datasets(root, &[(&head_ref, Some(head))]);
        }
        let ws_ref = format!("workingSets/heads/{branch}");
        let datasets = self.datasets(root)?;
        let get = |name: &str| datasets.iter().find(|(n, _)| n == name).map(|(_, a)| *a);
        if let Some(ws) = get(&ws_ref) {
            let io = self.io();
            let chunk = io.chunk(&ws)?;
            let fields =
                WorkingSetFields::decode(&chunk).map_err(|e| bad_chunk(ws, e.to_string()))?;
            let staged = fields.staged_root_addr.unwrap_or(fields.working_root_addr);
            let current_root = match get(&head_ref) {
                Some(c) => {
                    let chunk = io.chunk(&c)?;
                    Address(
                        CommitFields::decode(&chunk)
                            .map_err(|e| bad_chunk(c, e.to_string()))?
                            .root,
                    )
                }
                None => Address::ZERO,
            };
            if staged != fields.working_root_addr || Address(staged) != current_root {
                return Err(DoltError::Refused(format!(
                    "target has uncommitted changes on branch {branch} (--force required to \
                     overwrite)"
                )));
            }
        }
        let ws = WorkingSetFields {
            working_root_addr: head_root.0,
            staged_root_addr: Some(head_root.0),
            name: "",
            email: "",
            desc: "",
            timestamp_millis: 0,
            merge_state: None,
            rebase_state: None,
        }
        .encode()
        .map_err(|e| encode("working set", e))?;
        let ws_address = HashProfile::Dolt.address_of(&ws);
        let mut new = self.set_datasets(
            root,
            &[(&head_ref, Some(head)), (&ws_ref, Some(ws_address))],
        )?;
        new.chunks.push((ws_address, ws));
        Ok(new)
    }
}

/// Adds `table` to the `file://` remote in `dir` and moves its root from `last` to `current`
/// (see the module doc). A remote whose root is no longer `last` (another push moved it) is a
/// conflict and its manifest is left alone (the table file written stays, unreferenced, as
/// Dolt leaves one). A directory without a manifest is made a new, empty store first (as a
/// `dolt push` to a new `file://` remote does), but only when `last` is zero.
pub fn commit_file_remote(
    dir: &Path,
    table: &TableFile,
    last: Address,
    current: Address,
) -> Result<()> {
    let io = |p: &Path| {
        let file = p.display().to_string();
        move |source| DoltError::Io { file, source }
    };
    std::fs::create_dir_all(dir.join("oldgen")).map_err(io(dir))?;
    // The table file first, durable before the manifest names it.
    let final_path = dir.join(table.file_name());
    if !final_path.is_file() {
        let temp = dir.join(format!(
            "nbs_table_{}_{}",
            table.file_name(),
            std::process::id()
        ));
        write_synced(&temp, &table.data).map_err(io(&temp))?;
        std::fs::rename(&temp, &final_path).map_err(io(&final_path))?;
    }
    let _lock = WriterLock::acquire(dir)?;
    let manifest_path = dir.join("manifest");
    let mut manifest = match std::fs::read(&manifest_path) {
        Ok(bytes) => Manifest::parse(&bytes, &manifest_path.display().to_string())?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Manifest::empty(),
        Err(e) => return Err(io(&manifest_path)(e)),
    };
    if manifest.root != last {
        return Err(conflict(
            format!("the remote {}", dir.display()),
            format!(
                "its root moved from {last} to {} while this push ran (another push?); \
                 nothing was changed there, fetch and push again",
                manifest.root
            ),
        ));
    }
    if !manifest
        .specs
        .iter()
        .any(|s| s.name == table.file_name() || s.name == format!("{}.darc", table.file_name()))
    {
        manifest.specs.push(TableSpec {
            name: table.file_name(),
            chunk_count: table.chunk_count,
        });
    }
    manifest.root = current;
    manifest.lock = manifest.fresh_lock()?;
    let temp = dir.join(format!("nbs_manifest_{}", std::process::id()));
    write_synced(&temp, manifest.encode().as_bytes()).map_err(io(&temp))?;
    std::fs::rename(&temp, &manifest_path).map_err(io(&manifest_path))?;
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io(dir))?;
    Ok(())
}

fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = std::fs::File::create(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunks::DoltChunkSource;

    #[test]
    fn a_table_file_reads_back_and_moves_a_file_remote() {
        let dir = tempfile::tempdir().unwrap();
        let remote = dir.path().join("remote");
        let a: Vec<u8> = b"hello table file".to_vec();
        let b: Vec<u8> = (0..5000u32).flat_map(|i| i.to_le_bytes()).collect();
        let chunks = [
            (HashProfile::Dolt.address_of(&a), &a[..]),
            (HashProfile::Dolt.address_of(&b), &b[..]),
        ];
        let table = encode_table_file(&chunks).unwrap();
        assert_eq!(table.chunk_count, 2);
        // A new root: one dataset pointing at chunk a (not a commit, but the map only stores
        // addresses).
        let roots = RemoteRoot::new();
        let new = roots
            .set_datasets(Address::ZERO, &[("refs/heads/main", Some(chunks[0].0))])
            .unwrap();
        let mut all: Vec<(Address, &[u8])> = chunks.to_vec();
        all.extend(new.chunks.iter().map(|(a, c)| (*a, &c[..])));
        let table = encode_table_file(&all).unwrap();
        commit_file_remote(&remote, &table, Address::ZERO, new.root).unwrap();
        let source = DoltChunkSource::open(&remote).unwrap();
        assert_eq!(source.root(), new.root);
        for (addr, bytes) in &all {
            assert_eq!(&source.read_uncached(addr).unwrap().unwrap()[..], *bytes);
        }
        // The datasets read back through RemoteRoot, chunk by chunk.
        let mut known = RemoteRoot::new();
        let datasets = loop {
            match known.datasets(new.root) {
                Ok(d) => break d,
                Err(DoltError::MissingChunk(m)) => {
                    let c = source.read_uncached(&m).unwrap().unwrap();
                    known.insert(m, &c, "test").unwrap();
                }
                Err(e) => panic!("{e}"),
            }
        };
        assert_eq!(datasets, vec![("refs/heads/main".to_string(), chunks[0].0)]);
        // A stale compare-and-set is refused and changes nothing.
        let e = commit_file_remote(&remote, &table, Address::ZERO, new.root).unwrap_err();
        assert!(e.to_string().contains("moved"), "{e}");
        assert_eq!(DoltChunkSource::open(&remote).unwrap().root(), new.root);
        assert!(encode_table_file(&[]).is_err());
        assert!(encode_table_file(&[(chunks[0].0, &b[..])]).is_err());
    }
}
