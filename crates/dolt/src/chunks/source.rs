//! [`DoltChunkSource`]: a `.dolt/noms` directory (new generation, plus `oldgen/`) as one
//! read-only chunk store with Dolt's hash profile.
//!
//! Every chunk on disk is compressed, so nothing can be borrowed straight from a file. Two ways
//! to read, by design:
//!
//! * [`DoltChunkSource::chunk`] returns `Arc<[u8]>` from a **bounded** cache (two generations
//!   of a hash map, swapped when the young one passes half the byte budget: O(1), and at most
//!   about the budget plus one generation's worth of live `Arc`s stays resident). This is what
//!   the navigation code uses, so memory stays bounded on any database size. Full-table scans
//!   read leaves with [`DoltChunkSource::read_uncached`] instead: each is used once, so caching
//!   it would only evict useful chunks. Snappy and sized zstd chunks are decompressed straight
//!   into the `Arc` allocation (no second copy).
//! * The [`ChunkStore`] trait hands out `&[u8]` borrows tied to `&self`, which a bounded cache
//!   cannot honour without `unsafe` (an entry could be evicted while borrowed). Chunks read
//!   through the trait are therefore kept in an append-only arena for the life of the handle
//!   (or until [`DoltChunkSource::clear_arena`], which needs `&mut self`, so no borrow can be
//!   live). Use the trait for tree code that needs it and the `Arc` API for bulk reads. A
//!   node read through the trait is verified once; its layout is kept with it. The arena is
//!   laid out for point gets: its slots sit in pages that never move, found from a slot
//!   number without a lock; a node's [`NodeHint`] is its slot; an internal node lists its
//!   children's slots as they are first visited, so a warm descent goes parent's slot →
//!   child's slot → child's bytes, with no lock, no hash table, not even the child's address.
//!
//! Bulk reads (the leaf reader's whole-table passes) keep the leaves they read in the same
//! arena, so later reads are warm, but only up to a byte budget
//! ([`DoltChunkSource::set_bulk_keep_budget`]; by default a quarter of physical memory or
//! `PROLLY_KEEP_BUDGET`): the arena cannot evict, so past the budget a bulk read keeps
//! nothing more and those leaves are read cold again next time.
//!
//! Each chunk's SHA-512/20 is checked whenever it is decompressed (so at least on first read),
//! unless turned off with [`DoltChunkSource::with_verify_hashes`]; the CRC-32C of every
//! compressed chunk is always checked. Bulk readers may read with
//! [`DoltChunkSource::read_into_unchecked`] (or [`DoltChunkSource::record_span`] and friends)
//! and then check many addresses at once with [`DoltChunkSource::check_addresses`], which
//! hashes several chunks side by side.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use prollystore::store::{
    AddressHasher, ChunkStore, NodeHint, SharedArena, StoreError, StoreFastPaths,
};
use prollystore_format::message::{Node, NodeLayout};
use prollystore_format::{Address, HashProfile};

use super::archive::Archive;
use super::codec::{decode_snappy_record_into, Backing, PositionedFile};
use super::fetched::FetchChunks;
use super::journal::Journal;
use super::keep_budget::default_keep_budget;
use super::manifest::{Manifest, JOURNAL_NAME};
use super::table_file::TableFile;
use crate::error::{bad_chunk, corrupt, DoltError, Result};

/// Where a chunk's compressed record lies ([`DoltChunkSource::record_span`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordSpan {
    /// The file's number among the store's files (old generation first).
    pub file: usize,
    /// Offset of the record in the file.
    pub offset: u64,
    /// Length of the record.
    pub len: usize,
}

/// Default byte budget of the decompressed-chunk cache.
pub const DEFAULT_CACHE_BYTES: usize = 64 << 20;

/// One open chunk file of any form.
#[derive(Debug)]
pub enum ChunkFile {
    /// The chunk journal.
    Journal(Journal),
    /// A classic table file.
    Table(TableFile),
    /// An archive.
    Archive(Archive),
}

impl ChunkFile {
    /// The file's name.
    pub fn name(&self) -> &str {
        match self {
            ChunkFile::Journal(j) => j.name(),
            ChunkFile::Table(t) => t.name(),
            ChunkFile::Archive(a) => a.name(),
        }
    }

    /// True if the file holds `address`.
    pub fn has(&self, address: &Address) -> bool {
        match self {
            ChunkFile::Journal(j) => j.has(address),
            ChunkFile::Table(t) => t.has(address),
            ChunkFile::Archive(a) => a.has(address),
        }
    }

    /// The decompressed chunk and the offset it was read from.
    pub fn read(&self, address: &Address) -> Result<Option<(Arc<[u8]>, u64)>> {
        match self {
            ChunkFile::Journal(j) => j.read(address),
            ChunkFile::Table(t) => t.read(address),
            ChunkFile::Archive(a) => a.read(address),
        }
    }

    /// Reads the chunk into `out` (replacing its contents), with `scratch` for compressed bytes;
    /// returns the offset it was read from. Journals and table files reuse both buffers
    /// (no allocation); archives decode as [`ChunkFile::read`] does and copy.
    pub fn read_into(
        &self,
        address: &Address,
        scratch: &mut Vec<u8>,
        out: &mut Vec<u8>,
    ) -> Result<Option<u64>> {
        match self {
            ChunkFile::Journal(j) => j.read_into(address, scratch, out),
            ChunkFile::Table(t) => t.read_into(address, scratch, out),
            ChunkFile::Archive(a) => Ok(a.read(address)?.map(|(chunk, offset)| {
                out.clear();
                out.extend_from_slice(&chunk);
                offset
            })),
        }
    }

    /// Every address the file holds.
    pub fn addresses(&self) -> Result<Vec<Address>> {
        match self {
            ChunkFile::Journal(j) => j.addresses(),
            ChunkFile::Table(t) => Ok(t.addresses()),
            ChunkFile::Archive(a) => Ok(a.addresses()),
        }
    }
}

/// One generation (a directory with a manifest and its chunk files).
#[derive(Debug)]
pub struct Generation {
    /// The directory.
    pub dir: PathBuf,
    /// Its manifest, if the directory has one.
    pub manifest: Option<Manifest>,
    /// The chunk files the manifest lists, in manifest order.
    pub files: Vec<ChunkFile>,
}

impl Generation {
    /// Opens the generation in `dir`; a missing manifest gives an empty generation.
    pub fn open(dir: impl AsRef<Path>) -> Result<Generation> {
        let dir = dir.as_ref();
        let manifest_path = dir.join("manifest");
        let manifest = match std::fs::read(&manifest_path) {
            Ok(bytes) => Some(Manifest::parse(
                &bytes,
                &manifest_path.display().to_string(),
            )?),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => {
                return Err(DoltError::Io {
                    file: manifest_path.display().to_string(),
                    source,
                })
            }
        };
        let mut files = Vec::new();
        for spec in manifest.iter().flat_map(|m| &m.specs) {
            let file = if spec.name == JOURNAL_NAME {
                let path = dir.join(&spec.name);
                let idx_path = dir.join("journal.idx");
                let idx = std::fs::read(&idx_path).ok().filter(|b| !b.is_empty());
                ChunkFile::Journal(Journal::open(
                    Backing::File(PositionedFile::open(&path)?),
                    idx.as_deref(),
                )?)
            } else {
                let darc = dir.join(format!("{}.darc", spec.name));
                if darc.exists() {
                    ChunkFile::Archive(Archive::open(Backing::File(PositionedFile::open(&darc)?))?)
                } else {
                    let path = dir.join(&spec.name);
                    let t = TableFile::open(Backing::File(PositionedFile::open(&path)?))?;
                    if t.chunk_count() != spec.chunk_count as usize {
                        return Err(corrupt(
                            t.name(),
                            0,
                            format!(
                                "holds {} chunks, the manifest says {}",
                                t.chunk_count(),
                                spec.chunk_count
                            ),
                        ));
                    }
                    ChunkFile::Table(t)
                }
            };
            files.push(file);
        }
        Ok(Generation {
            dir: dir.to_path_buf(),
            manifest,
            files,
        })
    }
}

#[derive(Default)]
struct TwoGenCache {
    young: HashMap<Address, Arc<[u8]>>,
    old: HashMap<Address, Arc<[u8]>>,
    young_bytes: usize,
}

impl TwoGenCache {
    fn get(&mut self, a: &Address) -> Option<Arc<[u8]>> {
        if let Some(c) = self.young.get(a) {
            return Some(c.clone());
        }
        let c = self.old.remove(a)?;
        self.young_bytes += c.len();
        self.young.insert(*a, c.clone());
        Some(c)
    }

    fn insert(&mut self, a: Address, c: Arc<[u8]>, budget: usize) {
        if self.young_bytes + c.len() > budget / 2 {
            self.old = std::mem::take(&mut self.young);
            self.young_bytes = 0;
        }
        self.young_bytes += c.len();
        self.young.insert(a, c);
    }
}

/// Chunks a read-ahead batch must hold before it is split between two threads
/// ([`DoltChunkSource::read_ahead`]).
const READ_AHEAD_SPLIT: usize = 16;

/// A Dolt database's chunk store (`.dolt/noms` and `.dolt/noms/oldgen`), read-only.
pub struct DoltChunkSource {
    newgen: Generation,
    oldgen: Generation,
    root: Address,
    cache: Mutex<TwoGenCache>,
    cache_budget: usize,
    verify_hashes: bool,
    /// Chunks read through the trait, by slot (a slot is also a node's [`NodeHint`]). Declared
    /// before `chunk_bytes`, whose memory its chunks borrow, so it drops first.
    arena: Arena,
    /// The bytes of the chunks in `arena`, copied into large blocks (a bulk read keeps tens of
    /// thousands of leaves: one heap allocation each cost more than reading them; see
    /// [`SharedArena`]).
    chunk_bytes: SharedArena,
    /// Address → slot in `arena` (addresses are uniformly random: 8 of their bytes hash them).
    arena_index: RwLock<HashMap<Address, u32, BuildHasherDefault<AddressHasher>>>,
    /// The slot last found by address in `arena_index`: gets from one root look it up again and
    /// again, and this skips the lock and the table (checked against the slot's address).
    last_found: AtomicU32,
    /// Address of each embedded chunk pinned by [`DoltChunkSource::pin_embedded`], by the
    /// address of the chunk embedding it (so it is hashed once).
    embedded: elsa::sync::FrozenMap<Address, Box<Address>>,
    /// Where chunks no local file holds are fetched from (a remote read in place).
    fetched: Option<Arc<dyn FetchChunks>>,
    /// The most bytes of leaves bulk reads keep in the arena (see
    /// [`DoltChunkSource::set_bulk_keep_budget`]).
    bulk_keep_budget: AtomicU64,
    /// The budget [`DoltChunkSource::set_keep_bulk_reads`]`(true)` sets, fixed on open.
    default_keep_budget: u64,
    /// Bytes of leaves bulk reads have kept in the arena.
    bulk_kept: AtomicU64,
}

/// A chunk kept for the [`ChunkStore`] trait, with its node layout once it has been verified as
/// a `ProllyTreeNode` (tree reads verify each node once, not on every visit) and, for internal
/// nodes, the arena slots of the children found so far (descents then skip the address lookup).
/// The fields a warm descent reads (layout, bytes, children) come first.
#[derive(Debug)]
struct ArenaChunk {
    /// `Some` once verified as a node; `None` inside when it is not one.
    layout: OnceLock<Option<NodeLayout>>,
    /// In the source's `chunk_bytes`, which outlives the chunk (see
    /// [`DoltChunkSource::add_to_arena`]); handed out only as borrows of the chunk.
    bytes: &'static [u8],
    /// Per child, its slot, or [`NO_SLOT`] until first visited.
    children: OnceLock<Box<[AtomicU32]>>,
    address: Address,
}

/// A child whose slot is not known yet.
const NO_SLOT: u32 = u32::MAX;

impl ArenaChunk {
    /// The chunk at `address`, `bytes`; `layout`, when given, is the layout verified on
    /// these very bytes (or on bytes equal to them, of which `bytes` is a copy).
    fn new(address: Address, bytes: &'static [u8], layout: Option<NodeLayout>) -> ArenaChunk {
        let verified = OnceLock::new();
        if let Some(layout) = layout {
            let _ = verified.set(Some(layout));
        }
        ArenaChunk {
            layout: verified,
            bytes,
            children: OnceLock::new(),
            address,
        }
    }

    /// The chunk as a verified node (verified on first use).
    #[inline]
    fn node(&self) -> Result<Node<'_>, StoreError> {
        match self.layout.get() {
            // SAFETY: the layout is set once, from the verified view of `self.bytes` (by
            // `verify_node`) or, when the chunk is made, of the bytes `self.bytes` is a copy
            // of (`keep_verified`); `self.bytes` never change.
            Some(Some(layout)) => Ok(unsafe { Node::from_verified(self.bytes, *layout) }),
            _ => self.verify_node(),
        }
    }

    /// [`ArenaChunk::node`] on first use, and its error (out of line: the warm path is hot).
    #[cold]
    #[inline(never)]
    fn verify_node(&self) -> Result<Node<'_>, StoreError> {
        let layout = self
            .layout
            .get_or_init(|| Node::verify(self.bytes).ok().map(|n| n.layout()));
        match layout {
            // SAFETY: just set from the verified view of `self.bytes`, which never change.
            Some(layout) => Ok(unsafe { Node::from_verified(self.bytes, *layout) }),
            None => Err(Node::verify(self.bytes).err().map_or(
                StoreError::Missing(self.address),
                |source| StoreError::BadMessage {
                    address: self.address,
                    source,
                },
            )),
        }
    }
}

/// Slots in the first page of an [`Arena`]; page `k` holds `FIRST_PAGE << k`.
const FIRST_PAGE: usize = 1 << 10;
/// Pages enough for every `u32` slot number.
const PAGES: usize = 23;

/// An append-only list of [`ArenaChunk`]s whose slots never move, read without locks: slot
/// `n` lies in page `k` (of `FIRST_PAGE << k` slots, made on first use), each slot set once.
/// The pages double in size, so a few of them hold a database's nodes and at most half of the
/// slot memory is unused.
#[derive(Debug)]
struct Arena {
    pages: [OnceLock<Box<[OnceLock<ArenaChunk>]>>; PAGES],
    /// The next slot number to hand out.
    next: AtomicU32,
}

impl Arena {
    fn new() -> Arena {
        Arena {
            pages: std::array::from_fn(|_| OnceLock::new()),
            next: AtomicU32::new(0),
        }
    }

    /// Page and position in it of slot `n`.
    #[inline]
    fn place(n: u32) -> (usize, usize) {
        let m = n as usize / FIRST_PAGE + 1;
        let k = m.ilog2() as usize;
        (k, n as usize - FIRST_PAGE * ((1 << k) - 1))
    }

    /// The chunk in slot `n`, if it is set.
    #[inline]
    fn get(&self, n: u32) -> Option<&ArenaChunk> {
        let (k, i) = Arena::place(n);
        self.pages.get(k)?.get()?.get(i)?.get()
    }

    /// Puts `chunk` in a new slot; returns its number, or `None` when the slots are used up.
    fn push(&self, chunk: ArenaChunk) -> Option<u32> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        if n == NO_SLOT {
            return None;
        }
        let (k, i) = Arena::place(n);
        let page = self
            .pages
            .get(k)?
            .get_or_init(|| (0..FIRST_PAGE << k).map(|_| OnceLock::new()).collect());
        page.get(i)?.set(chunk).ok()?;
        Some(n)
    }
}

impl std::fmt::Debug for DoltChunkSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DoltChunkSource")
            .field("newgen", &self.newgen)
            .field("oldgen", &self.oldgen)
            .field("root", &self.root)
            .field("fetched", &self.fetched)
            .finish()
    }
}

impl DoltChunkSource {
    /// Opens the store in `noms_dir` (a `.dolt/noms` directory), never writing to it.
    pub fn open(noms_dir: impl AsRef<Path>) -> Result<DoltChunkSource> {
        let noms_dir = noms_dir.as_ref();
        let newgen = Generation::open(noms_dir)?;
        let oldgen = Generation::open(noms_dir.join("oldgen"))?;
        if newgen.manifest.is_none() {
            return Err(DoltError::NotFound(format!(
                "manifest in {}",
                noms_dir.display()
            )));
        }
        // Dolt's rule: the journal's last readable root record is the root, whatever root the
        // manifest names (Dolt trues the manifest up to it); a journal without one leaves the
        // manifest's root. Damage that could hide a later root is refused when the journal is
        // scanned (see `journal::scan_records`).
        let journal_root = newgen.files.iter().find_map(|f| match f {
            ChunkFile::Journal(j) => j.root(),
            _ => None,
        });
        let root = journal_root
            .or(newgen.manifest.as_ref().map(|m| m.root))
            .unwrap_or(Address::ZERO);
        DoltChunkSource::with_files(newgen, oldgen, root, None)
    }

    /// A store with no local files whose chunks all come from `fetcher` (a remote read in
    /// place), at store root `root`. Its chunks are checked by the fetcher, not again here.
    /// Fails only on a bad `PROLLY_KEEP_BUDGET` ([`DoltChunkSource::set_bulk_keep_budget`]).
    pub fn fetched(root: Address, fetcher: Arc<dyn FetchChunks>) -> Result<DoltChunkSource> {
        let empty = || Generation {
            dir: PathBuf::from(fetcher.name()),
            manifest: None,
            files: Vec::new(),
        };
        let mut source = DoltChunkSource::with_files(empty(), empty(), root, Some(fetcher))?;
        source.verify_hashes = false;
        Ok(source)
    }

    fn with_files(
        newgen: Generation,
        oldgen: Generation,
        root: Address,
        fetched: Option<Arc<dyn FetchChunks>>,
    ) -> Result<DoltChunkSource> {
        let default_keep_budget = default_keep_budget()?;
        Ok(DoltChunkSource {
            newgen,
            oldgen,
            root,
            cache: Mutex::new(TwoGenCache::default()),
            cache_budget: DEFAULT_CACHE_BYTES,
            verify_hashes: true,
            arena: Arena::new(),
            chunk_bytes: SharedArena::new(),
            arena_index: RwLock::default(),
            last_found: AtomicU32::new(NO_SLOT),
            embedded: elsa::sync::FrozenMap::new(),
            fetched,
            bulk_keep_budget: AtomicU64::new(default_keep_budget),
            default_keep_budget,
            bulk_kept: AtomicU64::new(0),
        })
    }

    /// True if chunks missing from the local files are fetched from elsewhere
    /// ([`DoltChunkSource::fetched`]): bulk readers then ask for many at once
    /// ([`DoltChunkSource::fetch_many`]).
    pub fn is_fetched(&self) -> bool {
        self.fetched.is_some()
    }

    /// The chunks at `addresses` (in order; `None` where missing), read like
    /// [`DoltChunkSource::read_uncached`], those no local file holds fetched in one call.
    pub fn fetch_many(&self, addresses: &[Address]) -> Result<Vec<Option<Arc<[u8]>>>> {
        let mut out = Vec::with_capacity(addresses.len());
        let mut absent = Vec::new();
        for a in addresses {
            let local = match self.read_local(a)? {
                Some(chunk) => Some(chunk),
                None => {
                    absent.push(*a);
                    None
                }
            };
            out.push(local);
        }
        if let (Some(f), false) = (&self.fetched, absent.is_empty()) {
            let mut fetched = f.fetch(&absent)?.into_iter();
            for slot in out.iter_mut().filter(|c| c.is_none()) {
                *slot = fetched.next().flatten();
            }
        }
        Ok(out)
    }

    /// The fetcher's copy of `address`, if this store has a fetcher and it has the chunk.
    fn read_fetched(&self, address: &Address) -> Result<Option<Arc<[u8]>>> {
        match &self.fetched {
            Some(f) => Ok(f.fetch(std::slice::from_ref(address))?.pop().flatten()),
            None => Ok(None),
        }
    }

    /// Sets the byte budget of the decompressed-chunk cache.
    pub fn with_cache_bytes(mut self, bytes: usize) -> Self {
        self.cache_budget = bytes;
        self
    }

    /// Whether each chunk's SHA-512/20 is checked when it is decompressed (the default). Turning
    /// it off leaves the CRC-32C of every compressed chunk as the only integrity check, which is
    /// what Dolt itself relies on when reading; it saves about a fifth of a bulk export's CPU.
    pub fn with_verify_hashes(mut self, verify: bool) -> Self {
        self.verify_hashes = verify;
        self
    }

    /// The store root (`STRT` address): the journal's last root record, else the manifest's.
    pub fn root(&self) -> Address {
        self.root
    }

    /// The new generation (`noms/`).
    pub fn newgen(&self) -> &Generation {
        &self.newgen
    }

    /// The old generation (`noms/oldgen/`).
    pub fn oldgen(&self) -> &Generation {
        &self.oldgen
    }

    fn files(&self) -> impl Iterator<Item = &ChunkFile> {
        self.oldgen.files.iter().chain(&self.newgen.files)
    }

    /// Reads, decompresses and hash-checks a chunk, bypassing the caches (for chunks read once,
    /// such as the leaves of a full-table scan, so they do not push useful chunks out of the
    /// cache and their memory is recycled at once).
    pub fn read_uncached(&self, address: &Address) -> Result<Option<Arc<[u8]>>> {
        match self.read_local(address)? {
            Some(chunk) => Ok(Some(chunk)),
            None => self.read_fetched(address),
        }
    }

    /// [`DoltChunkSource::read_uncached`] from the local files only.
    fn read_local(&self, address: &Address) -> Result<Option<Arc<[u8]>>> {
        for f in self.files() {
            if let Some((chunk, offset)) = f.read(address)? {
                self.check_hash(address, &chunk, f, offset)?;
                return Ok(Some(chunk));
            }
        }
        Ok(None)
    }

    /// Reads, decompresses and hash-checks a chunk into `out` (replacing its contents), with
    /// `scratch` for the compressed bytes; false if no file holds it. The bulk path: with
    /// buffers reused across calls it allocates nothing per chunk.
    pub fn read_into(
        &self,
        address: &Address,
        scratch: &mut Vec<u8>,
        out: &mut Vec<u8>,
    ) -> Result<bool> {
        match self.read_into_from_files(address, scratch, out)? {
            Some((f, offset)) => {
                self.check_hash(address, out, f, offset)?;
                Ok(true)
            }
            None => self.read_fetched_into(address, out),
        }
    }

    /// The fetcher's copy of `address` into `out`; false if there is none.
    fn read_fetched_into(&self, address: &Address, out: &mut Vec<u8>) -> Result<bool> {
        match self.read_fetched(address)? {
            Some(chunk) => {
                out.clear();
                out.extend_from_slice(&chunk);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Reads and decompresses a chunk into `out` like [`DoltChunkSource::read_into`] but
    /// leaves its address check to the caller, who must pass it to
    /// [`DoltChunkSource::check_addresses`] before trusting it (the CRC-32C of the compressed
    /// bytes is checked here). For bulk readers: checking many addresses at once is cheaper.
    pub fn read_into_unchecked(
        &self,
        address: &Address,
        scratch: &mut Vec<u8>,
        out: &mut Vec<u8>,
    ) -> Result<bool> {
        if self.read_into_from_files(address, scratch, out)?.is_some() {
            return Ok(true);
        }
        self.read_fetched_into(address, out)
    }

    /// The first file holding `address`, with the chunk decompressed into `out` (its address
    /// not checked): that file and the record's offset.
    fn read_into_from_files(
        &self,
        address: &Address,
        scratch: &mut Vec<u8>,
        out: &mut Vec<u8>,
    ) -> Result<Option<(&ChunkFile, u64)>> {
        for f in self.files() {
            if let Some(offset) = f.read_into(address, scratch, out)? {
                return Ok(Some((f, offset)));
            }
        }
        Ok(None)
    }

    /// Where the first file holding `address` keeps its compressed record, when that file is
    /// a journal or a table file (archives: `None`): the file's number (for
    /// [`DoltChunkSource::read_span`] and [`DoltChunkSource::decode_record_into`]), offset and
    /// length. Lets bulk readers fetch records that lie close together with one read.
    pub fn record_span(&self, address: &Address) -> Option<RecordSpan> {
        for (file, f) in self.files().enumerate() {
            let span = match f {
                ChunkFile::Journal(j) => j.record_span(address),
                ChunkFile::Table(t) => t.record_span(address),
                ChunkFile::Archive(a) if a.has(address) => return None,
                ChunkFile::Archive(_) => None,
            };
            if let Some((offset, len)) = span {
                return Some(RecordSpan { file, offset, len });
            }
        }
        None
    }

    /// Reads `len` bytes at `offset` of file number `file` into `buf` (replacing its contents).
    pub fn read_span(&self, file: usize, offset: u64, len: usize, buf: &mut Vec<u8>) -> Result<()> {
        match self.files().nth(file) {
            Some(ChunkFile::Journal(j)) => j.read_span(offset, len, buf),
            Some(ChunkFile::Table(t)) => t.read_span(offset, len, buf),
            _ => Err(DoltError::NotFound(format!("chunk file number {file}"))),
        }
    }

    /// Decodes a compressed record of file number `file` (read at `offset`, for errors) into
    /// `out` (replacing its contents), checking its CRC-32C but not its address (see
    /// [`DoltChunkSource::read_into_unchecked`]).
    pub fn decode_record_into(
        &self,
        file: usize,
        record: &[u8],
        offset: u64,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let name = self.files().nth(file).map_or("", ChunkFile::name);
        decode_snappy_record_into(record, out, name, offset)
    }

    /// Checks that `chunks[i]` hashes to `addresses[i]` for every `i` (when hash checks are
    /// on), hashing several chunks at once ([`HashProfile::addresses_of`]). A mismatch is reported as
    /// [`DoltChunkSource::read_into`] reports it, with the file and offset.
    pub fn check_addresses(&self, addresses: &[Address], chunks: &[&[u8]]) -> Result<()> {
        if !self.verify_hashes {
            return Ok(());
        }
        match HashProfile::Dolt.first_mismatch(addresses, chunks) {
            Some((i, actual)) => Err(self.mismatch(&addresses[i], &actual, chunks[i])),
            None => Ok(()),
        }
    }

    /// The error for `chunk`, read for `address`, hashing to `actual` instead: names the file
    /// and offset the chunk comes from.
    fn mismatch(&self, address: &Address, actual: &Address, chunk: &[u8]) -> DoltError {
        let (mut scratch, mut again) = (Vec::new(), Vec::new());
        for f in self.files() {
            if let Ok(Some(offset)) = f.read_into(address, &mut scratch, &mut again) {
                if again == chunk {
                    return DoltError::HashMismatch {
                        address: *address,
                        actual: *actual,
                        file: f.name().to_string(),
                        offset,
                    };
                }
            }
        }
        DoltError::HashMismatch {
            address: *address,
            actual: *actual,
            file: "(chunk read for a bulk check)".to_string(),
            offset: 0,
        }
    }

    /// Checks that `chunk` hashes to `address` (when hash checks are on).
    fn check_hash(
        &self,
        address: &Address,
        chunk: &[u8],
        f: &ChunkFile,
        offset: u64,
    ) -> Result<()> {
        if !self.verify_hashes {
            return Ok(());
        }
        let actual = HashProfile::Dolt.address_of(chunk);
        if actual != *address {
            return Err(DoltError::HashMismatch {
                address: *address,
                actual,
                file: f.name().to_string(),
                offset,
            });
        }
        Ok(())
    }

    /// The chunk at `address`, or `None` if no file holds it. Bounded cache.
    pub fn try_chunk(&self, address: &Address) -> Result<Option<Arc<[u8]>>> {
        if let Ok(mut c) = self.cache.lock() {
            if let Some(hit) = c.get(address) {
                return Ok(Some(hit));
            }
        }
        let Some(arc) = self.read_uncached(address)? else {
            return Ok(None);
        };
        if let Ok(mut c) = self.cache.lock() {
            c.insert(*address, arc.clone(), self.cache_budget);
        }
        Ok(Some(arc))
    }

    /// The chunk at `address`; a missing chunk is an error.
    pub fn chunk(&self, address: &Address) -> Result<Arc<[u8]>> {
        self.try_chunk(address)?
            .ok_or(DoltError::MissingChunk(*address))
    }

    /// True if some chunk file holds `address` (or, for a [`DoltChunkSource::fetched`] store,
    /// the fetcher has it: that fetches it).
    pub fn contains(&self, address: &Address) -> bool {
        self.files().any(|f| f.has(address))
            || self
                .read_fetched(address)
                .is_ok_and(|chunk| chunk.is_some())
    }

    /// Every (file name, address) pair in both generations.
    pub fn all_addresses(&self) -> Result<Vec<(String, Address)>> {
        let mut out = Vec::new();
        for f in self.files() {
            for a in f.addresses()? {
                out.push((f.name().to_string(), a));
            }
        }
        Ok(out)
    }

    /// Keeps `chunk` readable through [`ChunkStore::get`] under its Dolt address, which it
    /// returns. Dolt embeds a table's primary-index root node in the table chunk and need not
    /// store it on its own; pinning it lets that index be read as a [`prollystore::Map`].
    /// Pinning the same bytes again is free.
    pub(crate) fn pin_chunk(&self, chunk: &[u8]) -> Address {
        let address = HashProfile::Dolt.address_of(chunk);
        if !self.is_kept(&address) {
            // Only a full arena (2^32 chunks) fails; the chunk then reads as missing.
            let _ = self.add_to_arena(address, chunk, None);
        }
        address
    }

    /// Copies `chunk` into the arena under `address`; returns its slot (the first one's, if
    /// another thread added the same chunk meanwhile). `layout`: the node layout verified on
    /// `chunk`, kept with the copy.
    fn add_to_arena(
        &self,
        address: Address,
        chunk: &[u8],
        layout: Option<NodeLayout>,
    ) -> Result<u32, StoreError> {
        let full = || StoreError::InvalidArgument("more than 2^32 chunks read".to_string());
        let bytes = self.chunk_bytes.copy(chunk);
        // SAFETY: the copy stays in `self.chunk_bytes`, unchanged, until that arena drops or is
        // replaced, and the slot arena holding the chunk goes first in both cases (it is
        // declared before it, and `clear_arena` replaces it first). Slots hand the bytes out
        // only as borrows of `&self` (`get`, the node views of `arena_node` and `child_node`),
        // so no reference to them outlives the arena that holds them.
        let bytes: &'static [u8] = unsafe { &*std::ptr::from_ref(bytes) };
        let slot = self
            .arena
            .push(ArenaChunk::new(address, bytes, layout))
            .ok_or_else(full)?;
        let mut index = self.arena_index.write().map_err(|_| {
            StoreError::InvalidArgument(
                "the chunk arena's index is unusable: a thread panicked while adding to it"
                    .to_string(),
            )
        })?;
        Ok(*index.entry(address).or_insert(slot))
    }

    /// The slot of `address` in the arena, if it is there.
    #[inline]
    fn find_slot(&self, address: &Address) -> Option<u32> {
        let last = self.last_found.load(Ordering::Relaxed);
        if self.arena.get(last).is_some_and(|c| c.address == *address) {
            return Some(last);
        }
        let slot = *self.arena_index.read().ok()?.get(address)?;
        self.last_found.store(slot, Ordering::Relaxed);
        Some(slot)
    }

    /// True if the chunk at `address` is in the arena (read through the trait, or kept by the
    /// bulk leaf reader): reading it again touches no file.
    pub fn is_kept(&self, address: &Address) -> bool {
        self.find_slot(address).is_some()
    }

    /// Sets the most bytes of leaves bulk reads (a table's first Arrow read or SQL scan, the
    /// bulk leaf reader's passes asked to keep them) keep in the chunk arena. Kept, they make
    /// later reads of the table warm (a 10M-row `GROUP BY`: 1.5 s cold, 0.24 s warm), held
    /// until this store drops or [`DoltChunkSource::clear_arena`]. The arena cannot evict: once
    /// the kept bytes reach the budget, bulk reads keep nothing more (the leaf that crosses it
    /// is the last kept), and what they did not keep is read cold next time. Lowering the
    /// budget frees nothing already kept. 0 keeps nothing: a process that reads a table once
    /// (a command-line query, a worker reading one part) then copies nothing into the arena
    /// (1.27 GB less resident memory and a third less time for that query; `docs/PERF.md`,
    /// "SQL"). The default: `PROLLY_KEEP_BUDGET` when the store was opened (bytes, with an
    /// optional K, M or G suffix), else a quarter of physical memory. Chunks tree reads
    /// (cursors, point gets) bring in are kept whatever the budget: borrows depend on them.
    pub fn set_bulk_keep_budget(&self, bytes: u64) {
        self.bulk_keep_budget.store(bytes, Ordering::Relaxed);
    }

    /// See [`DoltChunkSource::set_bulk_keep_budget`].
    pub fn bulk_keep_budget(&self) -> u64 {
        self.bulk_keep_budget.load(Ordering::Relaxed)
    }

    /// Bytes of leaves bulk reads have kept in the arena (since it was last cleared).
    pub fn bulk_kept_bytes(&self) -> u64 {
        self.bulk_kept.load(Ordering::Relaxed)
    }

    /// Whether bulk reads keep their leaves: false sets the budget to 0, true to the default
    /// ([`DoltChunkSource::set_bulk_keep_budget`]).
    pub fn set_keep_bulk_reads(&self, keep: bool) {
        self.set_bulk_keep_budget(if keep { self.default_keep_budget } else { 0 });
    }

    /// Whether the budget lets bulk reads keep anything
    /// ([`DoltChunkSource::set_bulk_keep_budget`]).
    pub fn keeps_bulk_reads(&self) -> bool {
        self.bulk_keep_budget() > 0
    }

    /// Keeps `chunk`, already read and checked against `address` by a tree read's read-ahead,
    /// in the arena (unless it is there), so the tree read finds it there. Not counted
    /// against the bulk budget: the tree read would keep it anyway.
    pub(crate) fn keep_checked(&self, address: Address, chunk: &[u8]) {
        if !self.is_kept(&address) {
            // As in `pin_chunk`: only a full arena fails, and the chunk is then read again.
            let _ = self.add_to_arena(address, chunk, None);
        }
    }

    /// Keeps a leaf a bulk read has read, checked against `address` and verified (`node`),
    /// in the arena, if the bulk budget has room ([`DoltChunkSource::set_bulk_keep_budget`]).
    /// The arena keeps its layout, so the first tree read of it does not verify it again (a
    /// bulk read's leaves then cost the next pass a third less).
    pub(crate) fn keep_verified(&self, address: Address, node: &Node<'_>) {
        let budget = self.bulk_keep_budget();
        if self.bulk_kept.load(Ordering::Relaxed) >= budget || self.is_kept(&address) {
            return;
        }
        let len = node.chunk().len() as u64;
        let counted = self
            .bulk_kept
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |kept| {
                (kept < budget).then_some(kept.saturating_add(len))
            });
        // Only a full arena fails (the leaf is then read again): its bytes are given back.
        // The layout goes with the copy of these bytes, to no other slot.
        if counted.is_ok()
            && self
                .add_to_arena(address, node.chunk(), Some(node.layout()))
                .is_err()
        {
            self.bulk_kept.fetch_sub(len, Ordering::Relaxed);
        }
    }

    /// Whether the chunk at `address` is in the arena with its node layout already verified.
    #[cfg(test)]
    pub(crate) fn kept_verified(&self, address: &Address) -> bool {
        self.find_slot(address)
            .and_then(|slot| self.arena.get(slot))
            .is_some_and(|c| matches!(c.layout.get(), Some(Some(_))))
    }

    /// Reads the chunks at `addresses` that are not in the arena yet into it, as one batch:
    /// from a fetcher in one call, from the local files with their addresses checked side by
    /// side ([`DoltChunkSource::check_addresses`]) rather than one by one as tree reads would.
    /// A chunk no file holds is skipped (the read that needs it reports it); a failed check
    /// keeps none of the batch.
    pub(crate) fn read_ahead(&self, addresses: &[Address]) -> Result<()> {
        // A warm scan (its leaves read before) asks about every window: its ends in the arena
        // say it is one, without a lookup per chunk.
        match (addresses.first(), addresses.last()) {
            (Some(first), Some(last)) if self.is_kept(first) && self.is_kept(last) => return Ok(()),
            (None, _) => return Ok(()),
            _ => {}
        }
        let wanted: Vec<Address> = addresses
            .iter()
            .filter(|a| !self.is_kept(a))
            .copied()
            .collect();
        if wanted.is_empty() {
            return Ok(());
        }
        if self.fetched.is_some() {
            for (address, chunk) in wanted.iter().zip(self.fetch_many(&wanted)?) {
                if let Some(chunk) = chunk {
                    self.keep_checked(*address, &chunk[..]);
                }
            }
            return Ok(());
        }
        // Reading a chunk (CRC, snappy, SHA-512) costs about what a scan does with it: a
        // large batch is read in two halves on two threads.
        let read = if wanted.len() >= READ_AHEAD_SPLIT {
            let (first, second) = wanted.split_at(wanted.len() / 2);
            std::thread::scope(|s| {
                let other = s.spawn(|| self.read_checked(second));
                let mut read = self.read_checked(first)?;
                match other.join() {
                    Ok(rest) => read.extend(rest?),
                    Err(_) => return Err(bad_chunk(second[0], "the read-ahead thread panicked")),
                }
                Ok(read)
            })?
        } else {
            self.read_checked(&wanted)?
        };
        for (address, chunk) in &read {
            self.keep_checked(*address, chunk);
        }
        Ok(())
    }

    /// The chunks at `addresses` that the local files hold, read and checked against their
    /// addresses (four hashes side by side).
    fn read_checked(&self, addresses: &[Address]) -> Result<Vec<(Address, Vec<u8>)>> {
        let mut scratch = Vec::new();
        let mut read: Vec<(Address, Vec<u8>)> = Vec::with_capacity(addresses.len());
        for address in addresses {
            let mut chunk = Vec::new();
            if self
                .read_into_from_files(address, &mut scratch, &mut chunk)?
                .is_some()
            {
                read.push((*address, chunk));
            }
        }
        let addresses: Vec<Address> = read.iter().map(|(a, _)| *a).collect();
        let chunks: Vec<&[u8]> = read.iter().map(|(_, c)| c.as_slice()).collect();
        self.check_addresses(&addresses, &chunks)?;
        Ok(read)
    }

    /// The arena slot of the chunk at `address`, read on first use.
    #[inline]
    fn arena_slot(&self, address: &Address) -> Result<Option<u32>, StoreError> {
        match self.find_slot(address) {
            Some(slot) => Ok(Some(slot)),
            None => self.read_into_arena(address),
        }
    }

    /// [`DoltChunkSource::arena_slot`] of a chunk not in the arena yet: reads and checks it.
    #[cold]
    #[inline(never)]
    fn read_into_arena(&self, address: &Address) -> Result<Option<u32>, StoreError> {
        match self.read_uncached(address).map_err(to_store_error)? {
            None => Ok(None),
            Some(bytes) => self.add_to_arena(*address, &bytes, None).map(Some),
        }
    }

    /// The arena's copy of the chunk at `address`, read on first use.
    fn arena_chunk(&self, address: &Address) -> Result<Option<&ArenaChunk>, StoreError> {
        Ok(self.arena_slot(address)?.and_then(|s| self.arena.get(s)))
    }

    /// The node at `address` with its slot.
    #[inline]
    fn arena_node(&self, address: &Address) -> Result<(Node<'_>, NodeHint), StoreError> {
        let Some(slot) = self.arena_slot(address)? else {
            return Err(StoreError::Missing(*address));
        };
        let Some(chunk) = self.arena.get(slot) else {
            return Err(StoreError::Missing(*address));
        };
        Ok((chunk.node()?, NodeHint::new(slot)))
    }

    /// Child `i` of `parent` (which this store handed out with `hint`) through the parent's
    /// list of child slots, filled in as children are first visited; by address when the hint
    /// is not the parent's slot.
    #[inline]
    fn child_node(
        &self,
        parent: &Node<'_>,
        hint: NodeHint,
        i: usize,
    ) -> Result<(Node<'_>, NodeHint), StoreError> {
        // The hint must name the slot holding `parent` itself (same bytes), else it is ignored.
        let p = hint
            .get()
            .and_then(|s| self.arena.get(s))
            .filter(|p| std::ptr::eq(p.bytes.as_ptr(), parent.chunk().as_ptr()));
        let Some(p) = p else {
            return self.arena_node(&parent.child(i));
        };
        let children = p.children.get_or_init(|| {
            (0..parent.count())
                .map(|_| AtomicU32::new(NO_SLOT))
                .collect()
        });
        let Some(entry) = children.get(i) else {
            return self.arena_node(&parent.child(i));
        };
        let known = entry.load(Ordering::Relaxed);
        if let Some(chunk) = self.arena.get(known) {
            return Ok((chunk.node()?, NodeHint::new(known)));
        }
        let (node, child_hint) = self.arena_node(&parent.child(i))?;
        if let Some(slot) = child_hint.get() {
            entry.store(slot, Ordering::Relaxed);
        }
        Ok((node, child_hint))
    }

    /// [`DoltChunkSource::pin_chunk`] for `chunk` embedded in the chunk at `owner` (a table's
    /// primary-index root in its table chunk): `owner`'s address fixes its bytes, so the
    /// address of `chunk` is computed only the first time.
    pub(crate) fn pin_embedded(&self, owner: Address, chunk: &[u8]) -> Address {
        if let Some(address) = self.embedded.get(&owner) {
            return *address;
        }
        let address = self.pin_chunk(chunk);
        self.embedded.insert(owner, Box::new(address));
        address
    }

    /// Drops every chunk read through the [`ChunkStore`] trait or kept by bulk reads (whose
    /// count, [`DoltChunkSource::bulk_kept_bytes`], starts again from 0).
    pub fn clear_arena(&mut self) {
        // The slots first: they borrow `chunk_bytes` (see `add_to_arena`).
        self.arena = Arena::new();
        self.chunk_bytes = SharedArena::new();
        self.arena_index = RwLock::default();
        self.last_found = AtomicU32::new(NO_SLOT);
        self.embedded = elsa::sync::FrozenMap::new();
        self.bulk_kept = AtomicU64::new(0);
    }
}

fn to_store_error(e: DoltError) -> StoreError {
    match e {
        DoltError::Io { file, source } => StoreError::Io {
            context: file,
            source,
        },
        DoltError::Corrupt {
            file,
            offset,
            reason,
        } => StoreError::Corrupted {
            file,
            offset,
            reason,
        },
        DoltError::HashMismatch {
            address,
            actual,
            file,
            offset,
        } => StoreError::HashMismatch {
            address,
            actual,
            location: Some(format!("{file} at offset {offset}")),
        },
        DoltError::MissingChunk(a) => StoreError::Missing(a),
        other => StoreError::InvalidArgument(other.to_string()),
    }
}

impl ChunkStore for DoltChunkSource {
    fn profile(&self) -> HashProfile {
        HashProfile::Dolt
    }

    fn get(&self, address: &Address) -> Result<Option<&[u8]>, StoreError> {
        Ok(self.arena_chunk(address)?.map(|c| c.bytes))
    }

    fn get_node(&self, address: &Address) -> Result<Node<'_>, StoreError> {
        Ok(self.arena_node(address)?.0)
    }

    fn has(&self, address: &Address) -> Result<bool, StoreError> {
        Ok(self.is_kept(address) || self.contains(address))
    }

    fn put(&self, _chunk: &[u8]) -> Result<Address, StoreError> {
        Err(StoreError::ReadOnly {
            path: self.newgen.dir.display().to_string(),
        })
    }
}

/// Node hints are arena slots: a descent finds a child through its parent's list of child
/// slots (filled in as children are first visited) instead of looking its address up. No lent
/// memory: the store is read-only.
impl StoreFastPaths for DoltChunkSource {
    #[inline]
    fn get_node_hinted(&self, address: &Address) -> Result<(Node<'_>, NodeHint), StoreError> {
        self.arena_node(address)
    }

    #[inline]
    fn get_child(
        &self,
        parent: &Node<'_>,
        hint: NodeHint,
        i: usize,
    ) -> Result<(Node<'_>, NodeHint), StoreError> {
        self.child_node(parent, hint, i)
    }

    #[inline]
    fn descend<'a>(
        &'a self,
        node: &mut Node<'a>,
        hint: &mut NodeHint,
        i: usize,
    ) -> Result<(), StoreError> {
        (*node, *hint) = self.child_node(node, *hint, i)?;
        Ok(())
    }

    const PREFETCHES: bool = true;

    /// Reads the chunks not in the arena yet into it, as one batch (hashes checked side by
    /// side, on two threads for a large batch; one call to a fetcher), its errors left to the
    /// reads that follow.
    fn prefetch(&self, addresses: &[Address]) {
        let _ = self.read_ahead(addresses);
    }
}
