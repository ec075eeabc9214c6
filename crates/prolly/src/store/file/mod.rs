//! The durable chunk store: a directory of immutable chunk files plus one manifest that names
//! them and holds the named roots. Byte layouts and the commit protocol are in `docs/FORMAT.md`.
//!
//! * Reads borrow from the store and copy nothing: chunk files are memory-mapped (or read into
//!   memory with [`OpenOptions::mmap`]`(false)`). A chunk's address is checked on its first read
//!   and trusted after that; [`FileStore::verify`] checks everything eagerly.
//! * [`FileStore::put`] keeps chunks in memory (readable at once through `&self`) and streams
//!   them to the chunk file of the next commit as they come (a temporary file until then), so a
//!   big import's bytes are on their way to the disk while it builds; [`FileStore::commit`]
//!   finishes that file (index and footer) and swaps the manifest, with the root updates
//!   (compare-and-swap), atomically: after a crash the store reopens at the old or the new state.
//! * One writer at a time (an OS file lock on `LOCK`); any number of readers, in this process or
//!   others, each on the snapshot it opened until [`FileStore::refresh`].
//! * [`FileStore::gc_with`] drops chunks unreachable from the roots, [`FileStore::compact`] merges
//!   small chunk files; both write new files first, then swap the manifest, then delete.

mod chunk_file;
mod manifest;
mod mmap;

/// The on-disk layout (`docs/FORMAT.md`) for tools that move store files elsewhere (remotes):
/// the manifest, chunk-file records and names, writing a chunk file, and validating a chunk
/// file from its header and tail alone.
pub mod layout {
    pub use super::chunk_file::{
        file_name, parse_tail, tail_len, write as write_chunk_file, FileRecord, IndexEntry,
        HEADER_LEN,
    };
    pub use super::manifest::{Manifest, MANIFEST};
}

use std::collections::{BTreeMap, HashSet};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use elsa::sync::FrozenMap;
use prollystore_format::message::{self, Message, Node, NodeLayout};
use prollystore_format::{Address, HashProfile};

use chunk_file::{ChunkFile, ChunkFileWriter, FileRecord};
use manifest::{Manifest, MANIFEST};

use crate::store::{ChunkStore, StoreError, StoreFastPaths};

/// The writer lock file's name.
const LOCK: &str = "LOCK";
/// The chunk file that pending chunks stream into until a commit names and renames it.
const STREAM_TMP: &str = "stream.chunks.tmp";

/// How to open a [`FileStore`]: read-only or writer, create or not, mapped or read.
#[derive(Clone, Debug)]
pub struct OpenOptions {
    write: bool,
    create: Option<HashProfile>,
    mmap: bool,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions::new()
    }
}

impl OpenOptions {
    /// Read-only, existing store, memory-mapped.
    pub fn new() -> OpenOptions {
        OpenOptions {
            write: false,
            create: None,
            mmap: true,
        }
    }

    /// Open as the writer (takes the store's lock; fails with [`StoreError::Locked`] if another
    /// handle holds it).
    pub fn write(mut self, write: bool) -> OpenOptions {
        self.write = write;
        self
    }

    /// Create the store with `profile` if it does not exist (implies `write`); if it exists, its
    /// profile must be `profile`.
    pub fn create(mut self, profile: HashProfile) -> OpenOptions {
        self.create = Some(profile);
        self.write = true;
        self
    }

    /// Memory-map chunk files (the default), or read them into memory: for filesystems where
    /// mapping is unwanted. Reading costs open time proportional to the store's size.
    pub fn mmap(mut self, mmap: bool) -> OpenOptions {
        self.mmap = mmap;
        self
    }

    /// Opens the store in `dir`.
    pub fn open(&self, dir: impl AsRef<Path>) -> Result<FileStore, StoreError> {
        FileStore::open_with(dir.as_ref(), self.clone())
    }
}

/// One root update for [`FileStore::commit`]: set root `name` to `new` (`None` deletes it) if it
/// currently is `expected` (`None`: it must not exist).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RootUpdate<'a> {
    /// The root's name (1 to 1024 bytes of UTF-8).
    pub name: &'a str,
    /// The value the root must have for the update to apply.
    pub expected: Option<Address>,
    /// The root's new value; `None` removes it.
    pub new: Option<Address>,
}

impl<'a> RootUpdate<'a> {
    /// An update of `name` from `expected` to `new`.
    pub fn new(name: &'a str, expected: Option<Address>, new: Option<Address>) -> RootUpdate<'a> {
        RootUpdate {
            name,
            expected,
            new,
        }
    }
}

/// What [`FileStore::gc_with`] or [`FileStore::compact`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RewriteStats {
    /// Chunk files before and after.
    pub files_before: usize,
    /// Chunk files after.
    pub files_after: usize,
    /// Chunks in the rewritten files before.
    pub chunks_before: u64,
    /// Chunks written to the new file.
    pub chunks_after: u64,
}

/// What [`FileStore::verify`] checked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VerifyReport {
    /// Chunk files checked.
    pub files: usize,
    /// Chunks whose hash was checked.
    pub chunks: u64,
    /// Bytes of chunk data hashed.
    pub bytes: u64,
    /// Chunks that are messages of a known kind and passed message verification (the others
    /// are opaque to this crate and only hash-checked).
    pub messages: u64,
}

/// A chunk put but not yet committed, with its node layout once verified.
struct Pending {
    /// Shared with the stream file's write queue until it is written.
    chunk: Arc<[u8]>,
    layout: OnceLock<NodeLayout>,
    /// Put by `put_node`: a node this process serialized, read back without checks (once
    /// committed and reopened, it is verified like any other chunk).
    trusted: bool,
}

/// The chunk file pending chunks are written to as they are put ([`STREAM_TMP`]).
enum Stream {
    /// No chunk pending since the last commit: the file is made at the next put.
    Idle,
    /// Every pending chunk is in this file, in the order put.
    Open(ChunkFileWriter),
    /// Making or writing the file failed, or a commit failed after finishing it: until the
    /// next commit, puts only keep chunks in memory, and that commit writes all of them anew
    /// (and reports the error if it happens again).
    Off,
}

/// A durable, content-addressed chunk store in a directory.
///
/// One writer at a time (a lock file); any number of read-only openers, each reading the
/// snapshot of the last commit until [`FileStore::refresh`]. Chunks put by the writer become
/// durable, and visible to others, with the next [`FileStore::commit`], which also moves named
/// roots by compare-and-swap.
///
/// ```
/// use prollystore::format::tuple::{TupleBuilder, TupleDesc, Type};
/// use prollystore::format::{Encoding, HashProfile};
/// use prollystore::store::RootUpdate;
/// use prollystore::{tuples::TupleSchema, FileStore, Map};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let schema = TupleSchema::new(
///     TupleDesc::new(vec![Type::not_null(Encoding::Int64)]),
///     TupleDesc::new(vec![Type::not_null(Encoding::String)]),
/// );
/// let mut kb = TupleBuilder::new(schema.key.clone());
/// let mut vb = TupleBuilder::new(schema.value.clone());
/// let mut rows = Vec::new();
/// for i in 0..1000 {
///     kb.put_int64(0, i)?;
///     vb.put_string(0, &format!("row {i}"))?;
///     rows.push((kb.build()?.as_bytes().to_vec(), vb.build()?.as_bytes().to_vec()));
/// }
///
/// let mut store = FileStore::create(dir.path(), HashProfile::Dolt)?;
/// let root = Map::from_sorted(&store, schema.clone(), rows.iter().map(|(k, v)| (&k[..], &v[..])))?
///     .root();
/// // Durable from here on; "main" must not exist yet (expected: None).
/// store.commit(&[RootUpdate::new("main", None, Some(root))])?;
/// drop(store);
///
/// let store = FileStore::open(dir.path())?; // read-only
/// let map = Map::new(&store, store.root("main").expect("committed"), schema);
/// assert_eq!(map.count()?, 1000);
/// assert_eq!(map.get(&rows[10].0)?, Some(&rows[10].1[..]));
/// # Ok(())
/// # }
/// ```
pub struct FileStore {
    dir: PathBuf,
    options: OpenOptions,
    /// The locked `LOCK` file, for the writer.
    lock: Option<File>,
    /// Set when a manifest write failed midway: the on-disk state is unknown, so this handle
    /// refuses further writes (reopen the store).
    poisoned: bool,
    manifest: Manifest,
    files: Vec<ChunkFile>,
    pending: FrozenMap<Address, Box<Pending>>,
    has_pending: AtomicBool,
    /// Where pending chunks are streamed (writer only). Its lock also makes a put's check,
    /// insert and write one step, so a chunk is never pending or streamed twice.
    stream: Mutex<Stream>,
}

impl Drop for FileStore {
    /// Deletes the stream file of chunks that were put but never committed (the next writer
    /// would delete it too: it is a temporary file).
    fn drop(&mut self) {
        if let Stream::Open(w) = std::mem::replace(
            self.stream.get_mut().unwrap_or_else(|e| e.into_inner()),
            Stream::Idle,
        ) {
            let path = w.path().to_path_buf();
            drop(w);
            let _ = std::fs::remove_file(path);
        }
    }
}

impl std::fmt::Debug for FileStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileStore")
            .field("dir", &self.dir)
            .field("writer", &self.lock.is_some())
            .field("generation", &self.manifest.generation)
            .field("files", &self.files.len())
            .finish_non_exhaustive()
    }
}

fn io_err(context: String) -> impl FnOnce(std::io::Error) -> StoreError {
    move |source| StoreError::Io { context, source }
}

/// Fsyncs a directory, making renames and unlinks in it durable.
fn sync_dir(dir: &Path) -> Result<(), StoreError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_err(format!("fsyncing directory {}", dir.display())))
}

/// Replaces `dir/name` with `bytes` atomically and durably: temporary file, fsync, rename,
/// fsync of the directory.
fn write_atomically(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), StoreError> {
    let tmp = write_temporary(dir, name, bytes)?;
    rename_into_place(dir, &tmp, name)
}

/// Writes `bytes` to a new `dir/name.tmp` and fsyncs it; returns its path.
fn write_temporary(dir: &Path, name: &str, bytes: &[u8]) -> Result<PathBuf, StoreError> {
    let tmp = dir.join(format!("{name}.tmp"));
    remove_if_present(&tmp)?;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .map_err(io_err(format!("creating {}", tmp.display())))?;
    f.write_all(bytes)
        .and_then(|()| f.sync_all())
        .map_err(io_err(format!("writing {}", tmp.display())))?;
    Ok(tmp)
}

/// Renames `tmp` to `dir/name` and fsyncs the directory.
fn rename_into_place(dir: &Path, tmp: &Path, name: &str) -> Result<(), StoreError> {
    let dest = dir.join(name);
    std::fs::rename(tmp, &dest).map_err(io_err(format!("renaming to {}", dest.display())))?;
    sync_dir(dir)
}

fn remove_if_present(path: &Path) -> Result<(), StoreError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(io_err(format!("removing {}", path.display()))(e))
        }
        _ => Ok(()),
    }
}

fn read_manifest(dir: &Path) -> Result<Option<Manifest>, StoreError> {
    let path = dir.join(MANIFEST);
    match std::fs::read(&path) {
        Ok(bytes) => Manifest::decode(&bytes).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_err(format!("reading {}", path.display()))(e)),
    }
}

fn is_not_found(e: &StoreError) -> bool {
    matches!(e, StoreError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
}

/// Opens the chunk files `manifest` names, reusing already-open ones from `reuse`.
fn open_files(
    dir: &Path,
    manifest: &Manifest,
    mmap: bool,
    reuse: &mut Vec<ChunkFile>,
) -> Result<Vec<ChunkFile>, StoreError> {
    let mut files = Vec::with_capacity(manifest.files.len());
    for rec in &manifest.files {
        if let Some(pos) = reuse.iter().position(|f| f.record() == *rec) {
            files.push(reuse.swap_remove(pos));
            continue;
        }
        match ChunkFile::open(dir, *rec, manifest.profile, mmap) {
            Ok(f) => files.push(f),
            Err(e) => {
                // Put back what was taken so a retry can reuse it.
                reuse.append(&mut files);
                return Err(e);
            }
        }
    }
    Ok(files)
}

impl FileStore {
    /// Creates (or opens, if it exists with the same profile) a store in `dir`, as the writer.
    pub fn create(dir: impl AsRef<Path>, profile: HashProfile) -> Result<FileStore, StoreError> {
        OpenOptions::new().create(profile).open(dir)
    }

    /// Opens an existing store read-only (memory-mapped).
    pub fn open(dir: impl AsRef<Path>) -> Result<FileStore, StoreError> {
        OpenOptions::new().open(dir)
    }

    /// Opens an existing store as the writer.
    pub fn open_writer(dir: impl AsRef<Path>) -> Result<FileStore, StoreError> {
        OpenOptions::new().write(true).open(dir)
    }

    fn open_with(dir: &Path, options: OpenOptions) -> Result<FileStore, StoreError> {
        let dir = dir.to_path_buf();
        let mut lock = None;
        if options.write {
            if options.create.is_some() {
                std::fs::create_dir_all(&dir)
                    .map_err(io_err(format!("creating directory {}", dir.display())))?;
            }
            let path = dir.join(LOCK);
            let f = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(io_err(format!("opening {}", path.display())))?;
            match f.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(StoreError::Locked {
                        path: dir.display().to_string(),
                    })
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(io_err(format!("locking {}", path.display()))(e))
                }
            }
            lock = Some(f);
        }
        let mut store = FileStore {
            dir,
            options,
            lock,
            poisoned: false,
            manifest: Manifest::empty(HashProfile::Blake3),
            files: Vec::new(),
            pending: FrozenMap::new(),
            has_pending: AtomicBool::new(false),
            stream: Mutex::new(Stream::Idle),
        };
        store.load()?;
        if let Some(expected) = store.options.create {
            if store.manifest.profile != expected {
                return Err(StoreError::ProfileMismatch {
                    expected,
                    found: store.manifest.profile,
                });
            }
        }
        if store.lock.is_some() {
            store.remove_unreferenced()?;
        }
        Ok(store)
    }

    /// Reads the manifest and opens its files. Readers retry when a file vanished because a
    /// writer's gc replaced the manifest in between.
    fn load(&mut self) -> Result<(), StoreError> {
        let mut reuse = std::mem::take(&mut self.files);
        let mut attempt = 0;
        loop {
            let manifest = match read_manifest(&self.dir)? {
                Some(m) => m,
                None => match (self.lock.is_some(), self.options.create) {
                    (true, Some(profile)) => {
                        self.refuse_orphaned_chunk_files()?;
                        let m = Manifest::empty(profile);
                        write_atomically(&self.dir, MANIFEST, &m.encode())?;
                        m
                    }
                    _ => {
                        return Err(StoreError::Io {
                            context: format!("opening store {}: no {MANIFEST}", self.dir.display()),
                            source: std::io::ErrorKind::NotFound.into(),
                        })
                    }
                },
            };
            match open_files(&self.dir, &manifest, self.options.mmap, &mut reuse) {
                Ok(files) => {
                    self.manifest = manifest;
                    self.files = files;
                    return Ok(());
                }
                Err(e) if is_not_found(&e) => {
                    attempt += 1;
                    let changed = read_manifest(&self.dir)?.as_ref() != Some(&manifest);
                    if !changed || attempt > 100 {
                        return Err(StoreError::Corrupted {
                            file: MANIFEST.to_string(),
                            offset: 0,
                            reason: format!("it names a chunk file that is missing ({e})"),
                        });
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Before creating a store: a directory that has chunk files but no manifest lost its
    /// manifest; starting afresh would delete them, so this is an error instead.
    fn refuse_orphaned_chunk_files(&self) -> Result<(), StoreError> {
        let entries = std::fs::read_dir(&self.dir)
            .map_err(io_err(format!("listing {}", self.dir.display())))?;
        for entry in entries {
            let entry = entry.map_err(io_err(format!("listing {}", self.dir.display())))?;
            let name = entry.file_name();
            if name.to_string_lossy().ends_with(".chunks") {
                return Err(StoreError::Corrupted {
                    file: MANIFEST.to_string(),
                    offset: 0,
                    reason: format!(
                        "missing, but chunk file {} exists; refusing to create a new store over it",
                        name.to_string_lossy()
                    ),
                });
            }
        }
        Ok(())
    }

    /// Deletes temporary files and chunk files the manifest does not name (left by a crash or by
    /// an interrupted gc). Writer only.
    fn remove_unreferenced(&self) -> Result<(), StoreError> {
        let live: HashSet<String> = self
            .manifest
            .files
            .iter()
            .map(|r| chunk_file::file_name(r.seq))
            .collect();
        let entries = std::fs::read_dir(&self.dir)
            .map_err(io_err(format!("listing {}", self.dir.display())))?;
        let mut removed = false;
        for entry in entries {
            let entry = entry.map_err(io_err(format!("listing {}", self.dir.display())))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if name.ends_with(".tmp") || (name.ends_with(".chunks") && !live.contains(name)) {
                remove_if_present(&entry.path())?;
                removed = true;
            }
        }
        if removed {
            sync_dir(&self.dir)?;
        }
        Ok(())
    }

    /// The store's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The hash profile recorded in the store.
    pub fn profile(&self) -> HashProfile {
        self.manifest.profile
    }

    /// The commit counter of the snapshot this handle sees.
    pub fn generation(&self) -> u64 {
        self.manifest.generation
    }

    /// True if this handle holds the writer lock.
    pub fn is_writer(&self) -> bool {
        self.lock.is_some()
    }

    /// The value of root `name` in this handle's snapshot.
    pub fn root(&self, name: &str) -> Option<Address> {
        self.manifest.roots.get(name).copied()
    }

    /// All named roots of this handle's snapshot, by name.
    pub fn roots(&self) -> &BTreeMap<String, Address> {
        &self.manifest.roots
    }

    /// Number of committed chunk files.
    pub fn file_count(&self) -> usize {
        self.files.len()
    }

    /// Number of committed chunks (over all files).
    pub fn chunk_count(&self) -> u64 {
        self.files.iter().map(|f| f.len() as u64).sum()
    }

    /// The addresses of every committed chunk, file by file (each file's by increasing address).
    pub fn addresses(&self) -> impl Iterator<Item = Address> + '_ {
        self.files
            .iter()
            .flat_map(|f| (0..f.len()).filter_map(|i| f.address(i)))
    }

    /// Each committed chunk file's record with the addresses it holds (by increasing address).
    pub fn chunk_files(&self) -> impl Iterator<Item = (FileRecord, Vec<Address>)> + '_ {
        self.files.iter().map(|f| {
            let addresses = (0..f.len()).filter_map(|i| f.address(i)).collect();
            (f.record(), addresses)
        })
    }

    /// The manifest this handle reads (its snapshot).
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// Number of chunks put but not yet committed.
    pub fn pending_count(&self) -> usize {
        self.pending.len()
    }

    /// Picks up commits made since this handle opened (or last refreshed); returns true if the
    /// snapshot changed. A writer always sees the latest state already.
    pub fn refresh(&mut self) -> Result<bool, StoreError> {
        if self.lock.is_some() {
            return Ok(false);
        }
        let before = self.manifest.generation;
        self.load()?;
        Ok(self.manifest.generation != before)
    }

    /// The bytes of the chunk at `address`, or `None` if it is absent. The chunk's address is
    /// checked on its first read.
    #[inline]
    pub fn get(&self, address: &Address) -> Result<Option<&[u8]>, StoreError> {
        let profile = self.manifest.profile;
        for f in &self.files {
            if let Some(i) = f.find(address) {
                return f.chunk(i, profile).map(Some);
            }
        }
        if self.has_pending.load(Ordering::Acquire) {
            return Ok(self.pending.get(address).map(|p| &p.chunk[..]));
        }
        Ok(None)
    }

    /// The prolly-tree node at `address`: hash-checked and verified on first read, then
    /// rebuilt from its cached layout without checks.
    #[inline]
    pub fn get_node(&self, address: &Address) -> Result<Node<'_>, StoreError> {
        let profile = self.manifest.profile;
        for f in &self.files {
            if let Some(i) = f.find(address) {
                return f.node(i, profile);
            }
        }
        if self.has_pending.load(Ordering::Acquire) {
            if let Some(p) = self.pending.get(address) {
                if let Some(layout) = p.layout.get() {
                    // SAFETY: the layout was set below from a view of these same bytes (a
                    // pending chunk's bytes never change).
                    return Ok(unsafe { Node::from_verified(&p.chunk, *layout) });
                }
                let node = if p.trusted {
                    // SAFETY: `trusted` is set only by `put_node` and `put_node_hashed`, whose
                    // callers promise a node this process's `NodeWriter` wrote.
                    unsafe { Node::from_own_writer(&p.chunk) }
                } else {
                    Node::verify(&p.chunk)
                }
                .map_err(|source| StoreError::BadMessage {
                    address: *address,
                    source,
                })?;
                let _ = p.layout.set(node.layout());
                return Ok(node);
            }
        }
        Err(StoreError::Missing(*address))
    }

    /// True if the chunk is stored (committed or pending).
    pub fn has(&self, address: &Address) -> Result<bool, StoreError> {
        if self.files.iter().any(|f| f.find(address).is_some()) {
            return Ok(true);
        }
        Ok(self.has_pending.load(Ordering::Acquire) && self.pending.get(address).is_some())
    }

    /// Buffers `chunk` for the next commit and returns its address; readable at once. A chunk
    /// already stored is not buffered again. Writer only.
    pub fn put(&self, chunk: &[u8]) -> Result<Address, StoreError> {
        self.put_chunk(chunk, false, None)
    }

    /// [`StoreFastPaths::put_node`]: a node this process just serialized.
    ///
    /// # Safety
    ///
    /// As [`StoreFastPaths::put_node`]: the store reads the node back with
    /// [`Node::from_own_writer`].
    pub unsafe fn put_node(&self, chunk: &[u8]) -> Result<Address, StoreError> {
        self.put_chunk(chunk, true, None)
    }

    /// [`StoreFastPaths::put_node_hashed`]: a node this process just serialized and hashed.
    ///
    /// # Safety
    ///
    /// As [`StoreFastPaths::put_node`].
    pub unsafe fn put_node_hashed(&self, address: Address, chunk: &[u8]) -> Result<(), StoreError> {
        self.put_chunk(chunk, true, Some(address)).map(|_| ())
    }

    fn put_chunk(
        &self,
        chunk: &[u8],
        trusted: bool,
        address: Option<Address>,
    ) -> Result<Address, StoreError> {
        self.check_writable()?;
        if chunk.len() > chunk_file::MAX_CHUNK_LEN {
            return Err(StoreError::InvalidArgument(format!(
                "chunk of {} bytes exceeds 4 GiB",
                chunk.len()
            )));
        }
        let address = address.unwrap_or_else(|| self.manifest.profile.address_of(chunk));
        let mut stream = self.stream.lock().unwrap_or_else(|e| e.into_inner());
        if !self.has(&address)? {
            let chunk: Arc<[u8]> = Arc::from(chunk);
            self.pending.insert(
                address,
                Box::new(Pending {
                    chunk: Arc::clone(&chunk),
                    layout: OnceLock::new(),
                    trusted,
                }),
            );
            self.has_pending.store(true, Ordering::Release);
            self.stream_chunk(&mut stream, address, chunk);
        }
        Ok(address)
    }

    /// Appends a new pending chunk to the stream file, making the file at the first chunk. A
    /// failure is not the put's: the chunk is pending in memory, and the commit will write it.
    fn stream_chunk(&self, stream: &mut Stream, address: Address, chunk: Arc<[u8]>) {
        if let Stream::Idle = stream {
            let path = self.dir.join(STREAM_TMP);
            *stream = match remove_if_present(&path)
                .and_then(|()| ChunkFileWriter::create(&path, self.manifest.profile))
            {
                Ok(w) => Stream::Open(w),
                Err(_) => Stream::Off,
            };
        }
        if let Stream::Open(w) = stream {
            if w.push(address, chunk).is_err() {
                *stream = Stream::Off;
            }
        }
    }

    fn check_writable(&self) -> Result<(), StoreError> {
        if self.lock.is_none() {
            return Err(StoreError::ReadOnly {
                path: self.dir.display().to_string(),
            });
        }
        if self.poisoned {
            return Err(StoreError::Io {
                context: format!(
                    "writing {}: an earlier manifest write failed; reopen the store",
                    self.dir.display()
                ),
                source: std::io::ErrorKind::Other.into(),
            });
        }
        Ok(())
    }

    /// Makes the pending chunks and the root updates durable together, atomically, and returns
    /// the new generation. Each update is a compare-and-swap, applied in order; if any fails,
    /// nothing is written ([`StoreError::RootConflict`]). A root's new value must be a stored
    /// chunk. Writer only.
    pub fn commit(&mut self, updates: &[RootUpdate<'_>]) -> Result<u64, StoreError> {
        self.check_writable()?;
        let mut roots = self.manifest.roots.clone();
        for u in updates {
            manifest::check_root_name(u.name)?;
            let actual = roots.get(u.name).copied();
            if actual != u.expected {
                return Err(StoreError::RootConflict {
                    name: u.name.to_string(),
                    expected: u.expected,
                    actual,
                });
            }
            match u.new {
                Some(a) => {
                    if !self.has(&a)? {
                        return Err(StoreError::Missing(a));
                    }
                    roots.insert(u.name.to_string(), a);
                }
                None => {
                    roots.remove(u.name);
                }
            }
        }
        let has_pending = !self.pending.is_empty();
        if !has_pending && roots == self.manifest.roots {
            return Ok(self.manifest.generation);
        }
        let mut next = self.manifest.clone();
        next.roots = roots;
        next.generation += 1;
        let mut pending = std::mem::take(&mut self.pending);
        let stream = std::mem::replace(
            self.stream.get_mut().unwrap_or_else(|e| e.into_inner()),
            Stream::Idle,
        );
        let map: &std::collections::HashMap<Address, Box<Pending>> = pending.as_mut();
        let pending_bytes = map.values().map(|p| p.chunk.len()).sum();
        // The stream file holds exactly the pending chunks unless it failed along the way;
        // then (or with nothing pending) it is dropped and the chunks are written anew.
        let source = match stream {
            Stream::Open(w) if has_pending && w.len() == map.len() => NewChunks::Streamed(w),
            other => {
                if let Stream::Open(w) = other {
                    // Best effort, and no early return: the pending chunks are out of `self`
                    // here (the next writer deletes a left-over `.tmp` file anyway).
                    let path = w.path().to_path_buf();
                    drop(w);
                    let _ = remove_if_present(&path);
                }
                let mut chunks: Vec<(Address, &[u8])> =
                    map.iter().map(|(a, p)| (*a, &p.chunk[..])).collect();
                chunks.sort_unstable_by_key(|c| c.0);
                NewChunks::Sorted(chunks)
            }
        };
        let published = publish_with(
            &self.dir,
            self.options.mmap,
            &mut self.poisoned,
            &mut next,
            source,
        );
        let new_file = match published {
            Ok(f) => f,
            Err(e) => {
                // The commit did not complete: the chunks stay pending, readable here, and
                // the next commit writes them all anew.
                self.pending = pending;
                *self.stream.get_mut().unwrap_or_else(|e| e.into_inner()) = Stream::Off;
                return Err(e);
            }
        };
        self.manifest = next;
        self.files.extend(new_file);
        self.has_pending.store(false, Ordering::Release);
        free_in_background(pending, pending_bytes);
        Ok(self.manifest.generation)
    }

    /// Garbage collection over Dolt messages: a chunk's references are what
    /// `Message::for_each_ref` reports (prolly-tree children, out-of-band value addresses of
    /// leaves — which lead into blob trees —, blob children, address-map entries, commit-closure
    /// children). A reachable chunk that is not a message of a known kind stops the collection
    /// with [`StoreError::BadMessage`] rather than guessing that it refers to nothing; stores
    /// holding other chunk kinds use [`FileStore::gc_with`].
    pub fn gc(&mut self) -> Result<RewriteStats, StoreError> {
        let profile = self.manifest.profile;
        self.gc_with(|chunk, out| {
            let m = Message::verify(chunk).map_err(|source| StoreError::BadMessage {
                address: profile.address_of(chunk),
                source,
            })?;
            m.for_each_ref(|a| out.push(a));
            Ok(())
        })
    }

    /// Garbage collection: keeps only chunks reachable from the named roots, in one new chunk
    /// file, and deletes the old files. `children(chunk, out)` pushes the addresses `chunk`
    /// refers to (zero addresses are ignored). Pending chunks are untouched. Crash-safe: the new
    /// file is durable before the manifest swap, and old files are deleted only after it.
    pub fn gc_with<F>(&mut self, mut children: F) -> Result<RewriteStats, StoreError>
    where
        F: FnMut(&[u8], &mut Vec<Address>) -> Result<(), StoreError>,
    {
        self.check_writable()?;
        let mut live: HashSet<Address> = HashSet::new();
        let mut stack: Vec<Address> = self.manifest.roots.values().copied().collect();
        let mut kids = Vec::new();
        while let Some(a) = stack.pop() {
            if a.is_zero() || !live.insert(a) {
                continue;
            }
            let chunk = self.get(&a)?.ok_or(StoreError::Missing(a))?;
            kids.clear();
            children(chunk, &mut kids)?;
            stack.extend(kids.iter().copied().filter(|k| !live.contains(k)));
        }
        let all: Vec<usize> = (0..self.files.len()).collect();
        self.rewrite(&all, |a| live.contains(a))
    }

    /// Merges every chunk file smaller than `small_file_len` bytes into one new file (nothing is
    /// dropped). Crash-safe like [`FileStore::gc_with`]. `u64::MAX` merges all files.
    pub fn compact(&mut self, small_file_len: u64) -> Result<RewriteStats, StoreError> {
        self.check_writable()?;
        let small: Vec<usize> = (0..self.files.len())
            .filter(|&i| {
                self.files
                    .get(i)
                    .is_some_and(|f| f.record().file_len < small_file_len)
            })
            .collect();
        if small.len() < 2 {
            return Ok(RewriteStats {
                files_before: self.files.len(),
                files_after: self.files.len(),
                ..RewriteStats::default()
            });
        }
        self.rewrite(&small, |_| true)
    }

    /// Replaces the files at positions `replace` with one file holding their chunks that `keep`
    /// accepts.
    fn rewrite(
        &mut self,
        replace: &[usize],
        keep: impl Fn(&Address) -> bool,
    ) -> Result<RewriteStats, StoreError> {
        let profile = self.manifest.profile;
        let mut stats = RewriteStats {
            files_before: self.files.len(),
            ..RewriteStats::default()
        };
        let mut chunks: Vec<(Address, &[u8])> = Vec::new();
        for &fi in replace {
            let Some(f) = self.files.get(fi) else {
                continue;
            };
            stats.chunks_before += f.len() as u64;
            for i in 0..f.len() {
                let Some(a) = f.address(i) else { continue };
                if keep(&a) {
                    chunks.push((a, f.chunk(i, profile)?));
                }
            }
        }
        chunks.sort_unstable_by_key(|c| c.0);
        chunks.dedup_by(|a, b| a.0 == b.0);
        stats.chunks_after = chunks.len() as u64;
        let replaced: HashSet<u64> = replace
            .iter()
            .filter_map(|&i| self.files.get(i).map(|f| f.record().seq))
            .collect();
        let mut next = self.manifest.clone();
        next.generation += 1;
        next.files.retain(|r| !replaced.contains(&r.seq));
        let new_file = publish_with(
            &self.dir,
            self.options.mmap,
            &mut self.poisoned,
            &mut next,
            NewChunks::Sorted(chunks),
        )?;
        self.manifest = next;
        let old = std::mem::take(&mut self.files);
        let mut doomed = Vec::new();
        for f in old {
            if replaced.contains(&f.record().seq) {
                doomed.push(f.name().to_string());
            } else {
                self.files.push(f);
            }
        }
        self.files.extend(new_file);
        stats.files_after = self.files.len();
        // Other handles keep their own mappings (or copies), so unlinking is safe for them.
        for name in &doomed {
            remove_if_present(&self.dir.join(name))?;
        }
        if !doomed.is_empty() {
            sync_dir(&self.dir)?;
        }
        Ok(stats)
    }

    /// Checks everything eagerly: every chunk file's structure (checked at open) and every
    /// chunk's hash, ignoring what earlier reads already checked; every chunk whose file
    /// identifier (bytes 8..12) is a known message kind (prolly-tree node, blob, address map,
    /// commit closure) is verified as that message, other chunks are opaque here;
    /// every root must name a stored chunk. Uses all cores.
    pub fn verify(&self) -> Result<VerifyReport, StoreError> {
        let profile = self.manifest.profile;
        let mut report = VerifyReport::default();
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        for f in &self.files {
            f.forget_checks();
            let n = f.len();
            // Threads only pay off for big files (about 1 ms of hashing each).
            let threads = if f.data_len() >= 1 << 20 { cores } else { 1 };
            let per = n.div_ceil(threads).max(1);
            let messages = if threads == 1 {
                verify_range(f, profile, 0..n)?
            } else {
                std::thread::scope(|s| {
                    let workers: Vec<_> = (0..n)
                        .step_by(per)
                        .map(|start| {
                            s.spawn(move || verify_range(f, profile, start..(start + per).min(n)))
                        })
                        .collect();
                    workers
                        .into_iter()
                        .map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                        .sum::<Result<u64, StoreError>>()
                })?
            };
            report.files += 1;
            report.chunks += n as u64;
            report.bytes += f.data_len();
            report.messages += messages;
        }
        for (name, a) in &self.manifest.roots {
            if !self.has(a)? {
                return Err(StoreError::Corrupted {
                    file: MANIFEST.to_string(),
                    offset: 0,
                    reason: format!("root {name:?} names chunk {a}, which is not stored"),
                });
            }
        }
        Ok(report)
    }
}

/// Hash-checks chunks `range` of `f` and verifies those that are known messages; returns how
/// many messages were verified.
fn verify_range(
    f: &ChunkFile,
    profile: HashProfile,
    range: std::ops::Range<usize>,
) -> Result<u64, StoreError> {
    let mut messages = 0;
    for i in range {
        let chunk = f.chunk(i, profile)?;
        // Known by the file identifier alone, so a broken prefix is reported, not skipped.
        let known = chunk.get(8..12).is_some_and(|id| {
            [
                &message::FILE_ID_PROLLY[..],
                &message::FILE_ID_BLOB[..],
                &message::FILE_ID_ADDRESS_MAP[..],
                &message::FILE_ID_COMMIT_CLOSURE[..],
            ]
            .contains(&id)
        });
        if known {
            Message::verify(chunk).map_err(|source| StoreError::BadMessage {
                address: f.address(i).unwrap_or_default(),
                source,
            })?;
            messages += 1;
        }
    }
    Ok(messages)
}

impl ChunkStore for FileStore {
    fn profile(&self) -> HashProfile {
        FileStore::profile(self)
    }

    #[inline]
    fn get(&self, address: &Address) -> Result<Option<&[u8]>, StoreError> {
        FileStore::get(self, address)
    }

    #[inline]
    fn get_node(&self, address: &Address) -> Result<Node<'_>, StoreError> {
        FileStore::get_node(self, address)
    }

    fn has(&self, address: &Address) -> Result<bool, StoreError> {
        FileStore::has(self, address)
    }

    fn put(&self, chunk: &[u8]) -> Result<Address, StoreError> {
        FileStore::put(self, chunk)
    }
}

impl StoreFastPaths for FileStore {
    unsafe fn put_node(&self, chunk: &[u8]) -> Result<Address, StoreError> {
        // SAFETY: the caller's promise is the inherent method's.
        unsafe { FileStore::put_node(self, chunk) }
    }

    unsafe fn put_node_hashed(&self, address: Address, chunk: &[u8]) -> Result<(), StoreError> {
        // SAFETY: the caller's promise is the inherent method's.
        unsafe { FileStore::put_node_hashed(self, address, chunk) }
    }
}

/// Pending chunks of at least this many bytes are freed on a thread of their own after a commit.
const BACKGROUND_FREE_BYTES: usize = 8 << 20;

/// Frees the committed pending chunks: on a short-lived thread when they are big (a big import's
/// tens of thousands of allocations take several milliseconds to free, and the chunks are in the
/// new file by now), else here. If the thread cannot start, here too.
fn free_in_background(pending: FrozenMap<Address, Box<Pending>>, bytes: usize) {
    if bytes < BACKGROUND_FREE_BYTES {
        return drop(pending);
    }
    let _ = std::thread::Builder::new()
        .name("prolly-free".into())
        .spawn(move || drop(pending));
}

/// A chunk file at least this long is fsynced on a thread of its own while the new manifest's
/// temporary file is written and fsynced ([`publish_with`]).
const OVERLAPPED_FSYNC_LEN: u64 = 1 << 20;

/// The chunks of a new chunk file.
enum NewChunks<'a> {
    /// Chunks to write now (unique; none: no new file).
    Sorted(Vec<(Address, &'a [u8])>),
    /// A file already holding them, written as they were put, still to be finished.
    Streamed(ChunkFileWriter),
}

/// Publishes manifest `next` in `dir` with `chunks` as its new chunk file `next.next_seq`, which
/// it records in `next` and returns opened (validated). Sets `poisoned` when writing the manifest
/// fails.
///
/// The order is the one of `docs/FORMAT.md`: the chunk file is written under a temporary name,
/// fsynced, renamed into place and the directory fsynced before the manifest's rename, the commit
/// point. The manifest's temporary file does not depend on the chunk file being durable, so for
/// a big chunk file it is written and fsynced while the chunk file's fsync runs.
fn publish_with(
    dir: &Path,
    mmap: bool,
    poisoned: &mut bool,
    next: &mut Manifest,
    chunks: NewChunks<'_>,
) -> Result<Option<ChunkFile>, StoreError> {
    let seq = next.next_seq;
    let name = chunk_file::file_name(seq);
    let (tmp, (file, record)) = match chunks {
        NewChunks::Sorted(chunks) if chunks.is_empty() => {
            let r = write_atomically(dir, MANIFEST, &next.encode());
            *poisoned |= r.is_err();
            return r.map(|()| None);
        }
        NewChunks::Sorted(chunks) => {
            let tmp = dir.join(format!("{name}.tmp"));
            remove_if_present(&tmp)?;
            let written = chunk_file::write(&tmp, seq, next.profile, &chunks)?;
            (tmp, written)
        }
        NewChunks::Streamed(w) => (w.path().to_path_buf(), w.finish(seq)?),
    };
    next.next_seq += 1;
    next.files.push(record);
    let manifest = next.encode();
    let sync_chunks = || {
        file.sync_all()
            .map_err(io_err(format!("fsyncing {}", tmp.display())))
    };
    let stage_manifest = || write_temporary(dir, MANIFEST, &manifest);
    let (synced, staged) = std::thread::scope(|s| {
        let syncing = (record.file_len >= OVERLAPPED_FSYNC_LEN)
            .then(|| {
                std::thread::Builder::new()
                    .name("prolly-fsync".into())
                    .spawn_scoped(s, sync_chunks)
                    .ok()
            })
            .flatten();
        match syncing {
            Some(h) => {
                let staged = stage_manifest();
                let synced = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
                (synced, Some(staged))
            }
            None => (sync_chunks(), None),
        }
    });
    drop(file);
    synced?;
    let staged = staged.unwrap_or_else(stage_manifest);
    let manifest_tmp = staged.inspect_err(|_| *poisoned = true)?;
    rename_into_place(dir, &tmp, &name)?;
    let f = ChunkFile::open(dir, record, next.profile, mmap)?;
    rename_into_place(dir, &manifest_tmp, MANIFEST).inspect_err(|_| *poisoned = true)?;
    Ok(Some(f))
}
