//! One immutable chunk file: header, chunk bytes back to back, a sorted index, (version 2) the
//! order of the chunks in the data, a checksummed footer (byte layout in `docs/FORMAT.md`).
//!
//! Opening checks the header, footer, index checksum and that the index tiles the data region
//! exactly (sorted unique addresses; the chunks, taken in data order, each start where the
//! previous one ends). The chunk bytes themselves are covered by their addresses: each chunk is
//! hashed once, on first read, and a per-chunk bit records that it was checked.
//!
//! Version 2 lets the chunks lie in any order, so that [`ChunkFileWriter`] can write them as they
//! are made (a big import streams its chunks to disk while it builds) and sort only the index at
//! the end. Version 1 files (chunks in address order, no order table) are still read.

use std::fs::File;
use std::io::{IoSlice, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use prollystore_format::message::{Node, NodeLayout};
use prollystore_format::{Address, HashProfile, ADDRESS_LEN};
use xxhash_rust::xxh3::Xxh3;

use super::mmap::FileBytes;
use super::StoreError;

/// First 8 bytes of every chunk file.
pub const MAGIC: [u8; 8] = *b"PRLYCHNK";
/// Last 8 bytes of every chunk file.
pub const FOOTER_MAGIC: [u8; 8] = *b"PRLYCEND";
/// Chunk file format version written: 2, chunks in any order with an order table.
pub const VERSION: u32 = 2;
/// The first version, still read: chunks in address order, no order table.
const VERSION_1: u32 = 1;
/// Header: magic (8), version u32, profile u8, 3 zero bytes.
pub const HEADER_LEN: u64 = 16;
/// Index entry: address (20), offset u64, length u32.
pub const ENTRY_LEN: u64 = 32;
/// Order table entry (version 2): the index position of the next chunk in the data, u32.
pub const ORDER_LEN: u64 = 4;
/// Footer: index offset u64, chunk count u64, checksum u64, magic (8).
pub const FOOTER_LEN: u64 = 32;
/// Largest chunk the format allows (lengths are u32).
pub(super) const MAX_CHUNK_LEN: usize = u32::MAX as usize;

/// What the manifest records about a chunk file, and what opening it must find.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileRecord {
    /// Sequence number; the file is named [`file_name`]`(seq)`.
    pub seq: u64,
    /// Number of chunks.
    pub chunk_count: u64,
    /// File length in bytes.
    pub file_len: u64,
    /// The footer checksum.
    pub checksum: u64,
}

/// The name of chunk file number `seq`.
pub fn file_name(seq: u64) -> String {
    format!("{seq:016x}.chunks")
}

fn corrupted(file: &str, offset: u64, reason: impl Into<String>) -> StoreError {
    StoreError::Corrupted {
        file: file.to_string(),
        offset,
        reason: reason.into(),
    }
}

fn le_u64(bytes: &[u8], at: u64) -> Option<u64> {
    let at = usize::try_from(at).ok()?;
    let b: [u8; 8] = bytes.get(at..at.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_le_bytes(b))
}

fn le_u32(bytes: &[u8], at: u64) -> Option<u32> {
    let at = usize::try_from(at).ok()?;
    let b: [u8; 4] = bytes.get(at..at.checked_add(4)?)?.try_into().ok()?;
    Some(u32::from_le_bytes(b))
}

/// A validated chunk file, ready for lookups.
pub(super) struct ChunkFile {
    name: String,
    record: FileRecord,
    bytes: FileBytes,
    /// Byte offset of the index.
    index_offset: usize,
    /// Byte offset of the order table (version 2), which follows the index.
    order_offset: Option<usize>,
    count: usize,
    /// One bit per chunk: set once the chunk's bytes were found to hash to its address.
    checked: Box<[AtomicU64]>,
    /// Lookup accelerator built at open: `radix[p]` is the first index entry whose address
    /// starts with a `radix_bits`-bit prefix of at least `p` (addresses are uniform hashes, so
    /// each bucket holds about two entries).
    radix: Box<[u32]>,
    radix_bits: u32,
    /// Node layouts, one slot per chunk, allocated on the first `node` call.
    layouts: OnceLock<Box<[OnceLock<NodeLayout>]>>,
}

/// The top `bits` bits of an address (0 when `bits` is 0).
#[inline]
fn prefix(address: &[u8], bits: u32) -> usize {
    let mut p = [0u8; 4];
    if let Some(b) = address.get(..4) {
        p.copy_from_slice(b);
    }
    (u64::from(u32::from_be_bytes(p)) >> (32 - bits)) as usize
}

impl ChunkFile {
    /// Opens and validates chunk file `record` in `dir`.
    pub(super) fn open(
        dir: &Path,
        record: FileRecord,
        profile: HashProfile,
        mmap: bool,
    ) -> Result<ChunkFile, StoreError> {
        let name = file_name(record.seq);
        let path = dir.join(&name);
        let io = |what: &str, source| StoreError::Io {
            context: format!("{what} {}", path.display()),
            source,
        };
        let file = File::open(&path).map_err(|e| io("opening chunk file", e))?;
        let len = file
            .metadata()
            .map_err(|e| io("reading metadata of", e))?
            .len();
        if len != record.file_len {
            return Err(corrupted(
                &name,
                len.min(record.file_len),
                format!(
                    "file is {len} bytes long, the manifest says {}",
                    record.file_len
                ),
            ));
        }
        if len < HEADER_LEN + FOOTER_LEN {
            return Err(corrupted(
                &name,
                len,
                "file is too short for header and footer",
            ));
        }
        let bytes = if mmap {
            FileBytes::map(&file).map_err(|e| io("mapping", e))?
        } else {
            let mut buf = Vec::new();
            std::io::Read::read_to_end(&mut &file, &mut buf).map_err(|e| io("reading", e))?;
            FileBytes::Owned(buf)
        };
        Self::from_bytes(name, record, bytes, profile)
    }

    /// Validates the structure of `bytes` (everything except the chunk contents).
    pub(super) fn from_bytes(
        name: String,
        record: FileRecord,
        bytes: FileBytes,
        profile: HashProfile,
    ) -> Result<ChunkFile, StoreError> {
        let b: &[u8] = &bytes;
        let len = b.len() as u64;
        if len != record.file_len {
            return Err(corrupted(
                &name,
                len.min(record.file_len),
                format!("file is {len} bytes, the manifest says {}", record.file_len),
            ));
        }
        if len < HEADER_LEN + FOOTER_LEN {
            return Err(corrupted(
                &name,
                len,
                "file is too short for header and footer",
            ));
        }
        let footer = len - FOOTER_LEN;
        if b.get(footer as usize + 24..) != Some(&FOOTER_MAGIC[..]) {
            return Err(corrupted(&name, footer + 24, "bad footer magic"));
        }
        if b.get(..8) != Some(&MAGIC[..]) {
            return Err(corrupted(&name, 0, "bad magic: not a chunk file"));
        }
        let (index_offset, count, checksum) = match (
            le_u64(b, footer),
            le_u64(b, footer + 8),
            le_u64(b, footer + 16),
        ) {
            (Some(i), Some(c), Some(s)) => (i, c, s),
            _ => return Err(corrupted(&name, footer, "footer is unreadable")),
        };
        // The version decides how much lies between the index and the footer; it is covered by
        // the checksum below like the rest of the header.
        let version = le_u32(b, 8).unwrap_or(0);
        let per_chunk = match version {
            VERSION_1 => ENTRY_LEN,
            VERSION => ENTRY_LEN + ORDER_LEN,
            _ => {
                return Err(corrupted(
                    &name,
                    8,
                    format!("unsupported version {version}"),
                ))
            }
        };
        // The checksum covers the header, the index, the order table and the footer's first 16
        // bytes, so a flipped length or offset field is caught before it is trusted.
        let trailer_len = count.checked_mul(per_chunk);
        let index_ok = trailer_len.is_some_and(|tl| {
            index_offset >= HEADER_LEN && index_offset.checked_add(tl) == Some(footer)
        });
        if !index_ok {
            return Err(corrupted(
                &name,
                footer,
                format!("footer says {count} chunks indexed at offset {index_offset}, which does not fit the file"),
            ));
        }
        let computed = structure_checksum(b, index_offset as usize);
        if computed != Some(checksum) {
            return Err(corrupted(
                &name,
                footer + 16,
                "checksum of header, index and footer does not match",
            ));
        }
        if checksum != record.checksum || count != record.chunk_count {
            return Err(corrupted(
                &name,
                footer,
                "file is not the one the manifest names (checksum or chunk count differ)",
            ));
        }
        let tag = b.get(12).copied().unwrap_or(0);
        if HashProfile::from_tag(tag) != Some(profile) || b.get(13..16) != Some(&[0u8; 3][..]) {
            return Err(corrupted(
                &name,
                12,
                format!(
                    "hash profile tag {tag} does not match the store's ({})",
                    profile.name()
                ),
            ));
        }
        let count_usize = usize::try_from(count)
            .ok()
            .filter(|&c| u32::try_from(c).is_ok())
            .ok_or_else(|| corrupted(&name, footer + 8, "chunk count too large"))?;
        // About two entries per radix bucket, at most 2^24 buckets.
        let radix_bits = (usize::BITS - count_usize.leading_zeros())
            .saturating_sub(2)
            .min(24);
        let mut file = ChunkFile {
            checked: (0..count_usize.div_ceil(64))
                .map(|_| AtomicU64::new(0))
                .collect(),
            name,
            record,
            bytes,
            index_offset: index_offset as usize,
            // Fits: the whole trailer was checked to end at the footer.
            order_offset: (version == VERSION)
                .then(|| index_offset as usize + count_usize * ENTRY_LEN as usize),
            count: count_usize,
            radix: Box::new([]),
            radix_bits,
            layouts: OnceLock::new(),
        };
        file.radix = file.check_index()?;
        Ok(file)
    }

    /// Checks that index entries are strictly sorted and tile the data region exactly, and
    /// builds the radix table.
    fn check_index(&self) -> Result<Box<[u32]>, StoreError> {
        let buckets = 1usize << self.radix_bits;
        let mut radix = Vec::with_capacity(buckets + 1);
        let mut prev: Option<&[u8]> = None;
        for i in 0..self.count {
            let at = self.index_offset as u64 + i as u64 * ENTRY_LEN;
            let entry = self
                .entry(i)
                .ok_or_else(|| corrupted(&self.name, at, "index entry out of bounds"))?;
            if prev.is_some_and(|p| p >= entry.0) {
                return Err(corrupted(
                    &self.name,
                    at,
                    "index addresses are not strictly increasing",
                ));
            }
            prev = Some(entry.0);
            let p = prefix(entry.0, self.radix_bits);
            while radix.len() <= p {
                radix.push(i as u32);
            }
        }
        while radix.len() <= buckets {
            radix.push(self.count as u32);
        }
        self.check_tiling()?;
        Ok(radix.into_boxed_slice())
    }

    /// Checks that the chunks, taken in data order (index order in version 1, the order table's
    /// in version 2), each start where the previous one ends, from the end of the header to the
    /// start of the index, and that the order table names every entry exactly once.
    fn check_tiling(&self) -> Result<(), StoreError> {
        let mut seen = vec![0u64; self.count.div_ceil(64)];
        let mut expected = HEADER_LEN;
        for k in 0..self.count {
            let (i, at) = match self.order_offset {
                None => (k, self.index_offset as u64 + k as u64 * ENTRY_LEN),
                Some(order) => {
                    let at = order as u64 + k as u64 * ORDER_LEN;
                    let i = le_u32(&self.bytes, at)
                        .map(|i| i as usize)
                        .filter(|&i| i < self.count)
                        .ok_or_else(|| {
                            corrupted(&self.name, at, "order table names no index entry")
                        })?;
                    let bit = 1u64 << (i % 64);
                    if seen[i / 64] & bit != 0 {
                        return Err(corrupted(
                            &self.name,
                            at,
                            format!("order table names index entry {i} twice"),
                        ));
                    }
                    seen[i / 64] |= bit;
                    (i, at)
                }
            };
            let entry_at = self.index_offset as u64 + i as u64 * ENTRY_LEN;
            let (_, offset, len) = self
                .entry(i)
                .ok_or_else(|| corrupted(&self.name, entry_at, "index entry out of bounds"))?;
            if offset != expected {
                return Err(corrupted(
                    &self.name,
                    entry_at + 20,
                    format!(
                        "chunk {i} starts at {offset}, but the chunk before it in the data \
                         (order position {k}, at {at}) ends at {expected}"
                    ),
                ));
            }
            expected = expected
                .checked_add(u64::from(len))
                .ok_or_else(|| corrupted(&self.name, entry_at + 28, "chunk length overflows"))?;
        }
        if expected != self.index_offset as u64 {
            return Err(corrupted(
                &self.name,
                expected.min(self.index_offset as u64),
                "chunks do not end where the index begins",
            ));
        }
        Ok(())
    }

    /// Index entry `i`: (address bytes, offset, length).
    #[inline]
    fn entry(&self, i: usize) -> Option<(&[u8], u64, u32)> {
        let start = self
            .index_offset
            .checked_add(i.checked_mul(ENTRY_LEN as usize)?)?;
        let e = self
            .bytes
            .get(start..start.checked_add(ENTRY_LEN as usize)?)?;
        let addr = e.get(..ADDRESS_LEN)?;
        let off = u64::from_le_bytes(e.get(20..28)?.try_into().ok()?);
        let len = u32::from_le_bytes(e.get(28..32)?.try_into().ok()?);
        Some((addr, off, len))
    }

    /// The file's name inside the store directory.
    pub(super) fn name(&self) -> &str {
        &self.name
    }

    /// What the manifest records for this file.
    pub(super) fn record(&self) -> FileRecord {
        self.record
    }

    /// Bytes of chunk data.
    pub(super) fn data_len(&self) -> u64 {
        self.index_offset as u64 - HEADER_LEN
    }

    /// Number of chunks.
    pub(super) fn len(&self) -> usize {
        self.count
    }

    /// Position of `address` in the index.
    #[inline]
    pub(super) fn find(&self, address: &Address) -> Option<usize> {
        let key: &[u8] = address.as_bytes();
        let base = self.index_offset;
        let idx = self
            .bytes
            .get(base..base + self.count * ENTRY_LEN as usize)?;
        let p = prefix(key, self.radix_bits);
        let mut lo = *self.radix.get(p)? as usize;
        let mut hi = *self.radix.get(p + 1)? as usize;
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let at = mid * ENTRY_LEN as usize;
            let probe = idx.get(at..at + ADDRESS_LEN)?;
            match probe.cmp(key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// True if chunk `i` is in this file (no hash check).
    #[inline]
    fn is_checked(&self, i: usize) -> bool {
        self.checked
            .get(i / 64)
            .is_some_and(|w| w.load(Ordering::Relaxed) & (1u64 << (i % 64)) != 0)
    }

    /// The bytes of chunk `i`, hash-checked on first read.
    #[inline]
    pub(super) fn chunk(&self, i: usize, profile: HashProfile) -> Result<&[u8], StoreError> {
        let (addr, off, len) = self.entry(i).ok_or_else(|| {
            corrupted(
                &self.name,
                self.index_offset as u64,
                "index entry out of bounds",
            )
        })?;
        let data = usize::try_from(off)
            .ok()
            .and_then(|s| self.bytes.get(s..s.checked_add(len as usize)?))
            .ok_or_else(|| corrupted(&self.name, off, "chunk lies outside the file"))?;
        if !self.is_checked(i) {
            let expected = Address::from_slice(addr).unwrap_or_default();
            let actual = profile.address_of(data);
            if actual != expected {
                return Err(StoreError::HashMismatch {
                    address: expected,
                    actual,
                    location: Some(format!("{} at offset {off}", self.name)),
                });
            }
            if let Some(w) = self.checked.get(i / 64) {
                // The bytes are immutable, so the bit publishes no data: Relaxed is enough.
                w.fetch_or(1u64 << (i % 64), Ordering::Relaxed);
            }
        }
        Ok(data)
    }

    /// The verified node at position `i` (hash-checked and verified on first read; the layout
    /// is cached so later reads cost no checks).
    pub(super) fn node(&self, i: usize, profile: HashProfile) -> Result<Node<'_>, StoreError> {
        let chunk = self.chunk(i, profile)?;
        let layouts = self
            .layouts
            .get_or_init(|| (0..self.count).map(|_| OnceLock::new()).collect());
        let slot = layouts.get(i);
        if let Some(layout) = slot.and_then(|s| s.get()) {
            // SAFETY: the slot's layout was set below from the verified view of chunk `i`,
            // whose mapped bytes never change.
            return Ok(unsafe { Node::from_verified(chunk, *layout) });
        }
        let node = Node::verify(chunk).map_err(|source| StoreError::BadMessage {
            address: self.address(i).unwrap_or_default(),
            source,
        })?;
        if let Some(s) = slot {
            let _ = s.set(node.layout());
        }
        Ok(node)
    }

    /// The address of chunk `i`.
    pub(super) fn address(&self, i: usize) -> Option<Address> {
        self.entry(i).and_then(|e| Address::from_slice(e.0))
    }

    /// Forgets which chunks were checked, so the next read of each checks it again.
    pub(super) fn forget_checks(&self) {
        for w in self.checked.iter() {
            w.store(0, Ordering::Relaxed);
        }
    }
}

/// One entry of a chunk file's index: where a chunk's bytes lie in the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexEntry {
    /// The chunk's address.
    pub address: Address,
    /// Byte offset of the chunk in the file.
    pub offset: u64,
    /// Length of the chunk in bytes.
    pub len: u32,
}

/// How many bytes at the end of a version-2 chunk file with `chunk_count` chunks hold its index,
/// order table and footer (what [`parse_tail`] needs besides the header), or `None` on overflow.
pub fn tail_len(chunk_count: u64) -> Option<u64> {
    chunk_count
        .checked_mul(ENTRY_LEN + ORDER_LEN)?
        .checked_add(FOOTER_LEN)
}

/// Validates a chunk file from its 16-byte header and its last bytes (at least the index, the
/// order table and the footer; a longer `tail` is fine), without its chunk data: the checks a
/// reader makes at open (`docs/FORMAT.md`), against the manifest's `record`. Returns the index,
/// by increasing address. For readers that fetch only these parts of a file (remote stores).
pub fn parse_tail(
    name: &str,
    record: &FileRecord,
    profile: HashProfile,
    header: &[u8],
    tail: &[u8],
) -> Result<Vec<IndexEntry>, StoreError> {
    let len = record.file_len;
    if len < HEADER_LEN + FOOTER_LEN || header.len() != HEADER_LEN as usize {
        return Err(corrupted(
            name,
            0,
            "file is too short for header and footer",
        ));
    }
    if header.get(..8) != Some(&MAGIC[..]) {
        return Err(corrupted(name, 0, "bad magic: not a chunk file"));
    }
    let tail_start = len
        .checked_sub(tail.len() as u64)
        .ok_or_else(|| corrupted(name, 0, "more tail bytes than the file holds"))?;
    // Offsets below are file offsets; `at(o)` reads the tail at file offset `o`.
    let at_u64 = |o: u64| o.checked_sub(tail_start).and_then(|r| le_u64(tail, r));
    let footer = len - FOOTER_LEN;
    if tail.get(tail.len().saturating_sub(8)..) != Some(&FOOTER_MAGIC[..]) || tail.len() < 32 {
        return Err(corrupted(name, footer + 24, "bad footer magic"));
    }
    let (index_offset, count, checksum) =
        match (at_u64(footer), at_u64(footer + 8), at_u64(footer + 16)) {
            (Some(i), Some(c), Some(s)) => (i, c, s),
            _ => return Err(corrupted(name, footer, "footer is unreadable")),
        };
    let version = le_u32(header, 8).unwrap_or(0);
    let per_chunk = match version {
        VERSION_1 => ENTRY_LEN,
        VERSION => ENTRY_LEN + ORDER_LEN,
        _ => return Err(corrupted(name, 8, format!("unsupported version {version}"))),
    };
    let fits = count.checked_mul(per_chunk).is_some_and(|tl| {
        index_offset >= HEADER_LEN && index_offset.checked_add(tl) == Some(footer)
    });
    if !fits || index_offset < tail_start {
        return Err(corrupted(
            name,
            footer,
            format!("footer says {count} chunks indexed at offset {index_offset}, which does not fit the file or the bytes read"),
        ));
    }
    let trailer = &tail[(index_offset - tail_start) as usize..];
    let mut h = Xxh3::new();
    h.update(header);
    h.update(&trailer[..trailer.len() - 16]);
    if h.digest() != checksum {
        return Err(corrupted(
            name,
            footer + 16,
            "checksum of header, index and footer does not match",
        ));
    }
    if checksum != record.checksum || count != record.chunk_count {
        return Err(corrupted(
            name,
            footer,
            "file is not the one the manifest names (checksum or chunk count differ)",
        ));
    }
    let tag = header[12];
    if HashProfile::from_tag(tag) != Some(profile) || header[13..16] != [0u8; 3] {
        return Err(corrupted(
            name,
            12,
            format!(
                "hash profile tag {tag} does not match the store's ({})",
                profile.name()
            ),
        ));
    }
    let n = count as usize;
    let mut entries = Vec::with_capacity(n);
    for i in 0..n {
        let e = &trailer[i * ENTRY_LEN as usize..(i + 1) * ENTRY_LEN as usize];
        let at = index_offset + i as u64 * ENTRY_LEN;
        let address = Address::from_slice(&e[..ADDRESS_LEN])
            .ok_or_else(|| corrupted(name, at, "bad address"))?;
        if entries
            .last()
            .is_some_and(|p: &IndexEntry| p.address >= address)
        {
            return Err(corrupted(
                name,
                at,
                "index addresses are not strictly increasing",
            ));
        }
        let offset = le_u64(e, 20).unwrap_or(0);
        let len = le_u32(e, 28).unwrap_or(0);
        entries.push(IndexEntry {
            address,
            offset,
            len,
        });
    }
    // The chunks, taken in data order, must tile the data region exactly.
    let mut seen = vec![false; n];
    let mut expected = HEADER_LEN;
    for k in 0..n {
        let i = if version == VERSION_1 {
            k
        } else {
            let o = n * ENTRY_LEN as usize + k * ORDER_LEN as usize;
            le_u32(trailer, o as u64)
                .map(|i| i as usize)
                .filter(|&i| i < n && !seen[i])
                .ok_or_else(|| {
                    corrupted(
                        name,
                        index_offset + o as u64,
                        "order table names no index entry, or one twice",
                    )
                })?
        };
        seen[i] = true;
        if entries[i].offset != expected {
            return Err(corrupted(name, index_offset + i as u64 * ENTRY_LEN + 20, format!("chunk {i} starts at {}, but the chunk before it in the data ends at {expected}", entries[i].offset)));
        }
        expected += u64::from(entries[i].len);
    }
    if expected != index_offset {
        return Err(corrupted(
            name,
            expected.min(index_offset),
            "chunks do not end where the index begins",
        ));
    }
    Ok(entries)
}

/// xxh3-64 over the header, the index (and order table) and the footer's first 16 bytes of a
/// whole file `b` whose index starts at `index_offset`.
fn structure_checksum(b: &[u8], index_offset: usize) -> Option<u64> {
    let footer = b.len().checked_sub(FOOTER_LEN as usize)?;
    let mut h = Xxh3::new();
    h.update(b.get(..HEADER_LEN as usize)?);
    h.update(b.get(index_offset..footer + 16)?);
    Some(h.digest())
}

/// Bytes written between two writeback starts ([`start_writeback`]).
const WRITEBACK_STEP: u64 = 8 << 20;
/// Slices per `writev` call (Linux's `IOV_MAX` is 1024).
const MAX_SLICES: usize = 1024;
/// Bytes per `writev` call, about: small enough that writeback starts often.
const WRITE_BATCH: usize = 2 << 20;

/// Bytes of chunks pushed one by one that are gathered before one write.
const QUEUE_LEN: usize = 1 << 20;

/// Writes a new chunk file (the current version) as its chunks arrive, in any order: chunk bytes
/// go to the file as they come, and [`ChunkFileWriter::finish`] appends the sorted index, the
/// order table and the footer. Every [`WRITEBACK_STEP`] bytes the kernel is asked to start
/// writing what it has, so the disk works while more chunks are made and the final fsync waits
/// for little more than the tail.
pub(super) struct ChunkFileWriter {
    file: File,
    path: PathBuf,
    profile: HashProfile,
    /// The chunks in data order: address, offset, length.
    entries: Vec<(Address, u64, u32)>,
    /// Bytes pushed one by one and not yet written (they end at `end`): shared with the
    /// caller, so they reach the file without a copy of ours.
    queued: Vec<Arc<[u8]>>,
    /// Their total length.
    queued_len: usize,
    /// Where the next chunk starts: the header plus every chunk so far.
    end: u64,
    /// Bytes handed to the kernel so far (`end - queued_len`).
    written: u64,
    /// Bytes for which writeback was started.
    flushed: u64,
}

/// The header of a chunk file written now.
fn header(profile: HashProfile) -> [u8; HEADER_LEN as usize] {
    let mut header = [0u8; HEADER_LEN as usize];
    header[..8].copy_from_slice(&MAGIC);
    header[8..12].copy_from_slice(&VERSION.to_le_bytes());
    header[12] = profile.tag();
    header
}

impl ChunkFileWriter {
    /// Creates the new file `path` (which must not exist); its header goes out with the first
    /// write.
    pub(super) fn create(path: &Path, profile: HashProfile) -> Result<ChunkFileWriter, StoreError> {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| StoreError::Io {
                context: format!("creating {}", path.display()),
                source: e,
            })?;
        Ok(ChunkFileWriter {
            file,
            path: path.to_path_buf(),
            profile,
            entries: Vec::new(),
            queued: vec![Arc::from(&header(profile)[..])],
            queued_len: HEADER_LEN as usize,
            end: HEADER_LEN,
            written: 0,
            flushed: 0,
        })
    }

    /// The file's path.
    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// Number of chunks pushed.
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    fn io(&self, what: &str) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
        let context = format!("{what} {}", self.path.display());
        move |source| StoreError::Io { context, source }
    }

    /// Records chunk `address` of `len` bytes at the end of the data.
    fn record(&mut self, address: Address, len: usize) -> Result<(), StoreError> {
        let len = u32::try_from(len).map_err(|_| {
            StoreError::InvalidArgument(format!("chunk {address} is longer than 4 GiB"))
        })?;
        self.entries.push((address, self.end, len));
        self.end += u64::from(len);
        Ok(())
    }

    /// Appends one chunk, kept (shared, not copied) until about [`QUEUE_LEN`] bytes are
    /// queued and then written with the others in one vectored write.
    pub(super) fn push(&mut self, address: Address, chunk: Arc<[u8]>) -> Result<(), StoreError> {
        self.record(address, chunk.len())?;
        self.queued_len += chunk.len();
        self.queued.push(chunk);
        if self.queued_len >= QUEUE_LEN {
            self.write_queued()?;
        }
        Ok(())
    }

    /// Appends `chunks`, written straight from the caller's buffers with vectored writes.
    pub(super) fn push_all(&mut self, chunks: &[(Address, &[u8])]) -> Result<(), StoreError> {
        for (a, c) in chunks {
            self.record(*a, c.len())?;
        }
        let queued = std::mem::take(&mut self.queued);
        let parts = queued
            .iter()
            .map(|q| &q[..])
            .chain(chunks.iter().map(|c| c.1));
        let r = self.write_parts(parts);
        self.queued_len = 0;
        r.map_err(self.io("writing"))
    }

    /// Writes the queued bytes.
    fn write_queued(&mut self) -> Result<(), StoreError> {
        let queued = std::mem::take(&mut self.queued);
        let r = self.write_parts(queued.iter().map(|q| &q[..]));
        self.queued = queued;
        self.queued.clear();
        self.queued_len = 0;
        r.map_err(self.io("writing"))
    }

    /// Writes `parts` back to back at the end of the file: up to [`MAX_SLICES`] slices or about
    /// [`WRITE_BATCH`] bytes per `writev`, starting writeback every [`WRITEBACK_STEP`] bytes.
    fn write_parts<'a>(&mut self, parts: impl Iterator<Item = &'a [u8]>) -> std::io::Result<()> {
        let mut slices: Vec<IoSlice<'a>> = Vec::with_capacity(MAX_SLICES);
        let mut parts = parts.peekable();
        while parts.peek().is_some() {
            slices.clear();
            let mut batch = 0usize;
            while slices.len() < MAX_SLICES && batch < WRITE_BATCH {
                let Some(p) = parts.next() else { break };
                if !p.is_empty() {
                    slices.push(IoSlice::new(p));
                    batch += p.len();
                }
            }
            let mut rest = &mut slices[..];
            while !rest.is_empty() {
                let n = (&self.file).write_vectored(rest)?;
                if n == 0 {
                    return Err(std::io::ErrorKind::WriteZero.into());
                }
                IoSlice::advance_slices(&mut rest, n);
            }
            self.written += batch as u64;
            if self.written - self.flushed >= WRITEBACK_STEP {
                start_writeback(&self.file, self.flushed, self.written - self.flushed);
                self.flushed = self.written;
            }
        }
        Ok(())
    }

    /// Ends the file as chunk file number `seq`: writes the index (the chunks' addresses in
    /// increasing order), the order table and the footer, and returns the file, not yet
    /// fsynced, with its record. The caller fsyncs it and renames it into place. A chunk pushed
    /// twice is an error.
    pub(super) fn finish(mut self, seq: u64) -> Result<(File, FileRecord), StoreError> {
        let n = self.entries.len();
        let mut by_address: Vec<u32> = (0..n as u32).collect();
        by_address.sort_unstable_by_key(|&k| self.entries[k as usize].0);
        if let Some(w) = by_address
            .windows(2)
            .find(|w| self.entries[w[0] as usize].0 == self.entries[w[1] as usize].0)
        {
            return Err(StoreError::InvalidArgument(format!(
                "chunk {} was written twice to {}",
                self.entries[w[0] as usize].0,
                self.path.display()
            )));
        }
        // order[k] = index position of the k-th chunk in the data.
        let mut order = vec![0u32; n];
        let trailer_len = n as u64 * (ENTRY_LEN + ORDER_LEN) + FOOTER_LEN;
        let mut tail = Vec::with_capacity(trailer_len as usize);
        for (position, &k) in by_address.iter().enumerate() {
            let (address, offset, len) = self.entries[k as usize];
            order[k as usize] = position as u32;
            tail.extend_from_slice(address.as_bytes());
            tail.extend_from_slice(&offset.to_le_bytes());
            tail.extend_from_slice(&len.to_le_bytes());
        }
        for position in order {
            tail.extend_from_slice(&position.to_le_bytes());
        }
        let index_offset = self.end;
        tail.extend_from_slice(&index_offset.to_le_bytes());
        tail.extend_from_slice(&(n as u64).to_le_bytes());
        let mut sum = Xxh3::new();
        sum.update(&header(self.profile));
        sum.update(&tail);
        let checksum = sum.digest();
        tail.extend_from_slice(&checksum.to_le_bytes());
        tail.extend_from_slice(&FOOTER_MAGIC);
        let file_len = index_offset + tail.len() as u64;
        self.queued_len += tail.len();
        self.queued.push(Arc::from(tail));
        self.write_queued()?;
        let record = FileRecord {
            seq,
            chunk_count: n as u64,
            file_len,
            checksum,
        };
        Ok((self.file, record))
    }
}

/// Writes a chunk file holding `chunks` (unique) to the new file `path` and returns it, not yet
/// fsynced, with its record. The caller fsyncs it and renames it into place.
pub fn write(
    path: &Path,
    seq: u64,
    profile: HashProfile,
    chunks: &[(Address, &[u8])],
) -> Result<(File, FileRecord), StoreError> {
    let mut w = ChunkFileWriter::create(path, profile)?;
    w.push_all(chunks)?;
    w.finish(seq)
}

/// Asks the kernel to start writing bytes `offset .. offset + len` of `file` to the disk, without
/// waiting (Linux `sync_file_range(SYNC_FILE_RANGE_WRITE)`). Only a hint: durability still comes
/// from the fsync that follows, and errors are left for that fsync to report (this flag neither
/// waits nor collects write errors, so it cannot consume one before the fsync sees it).
#[cfg(target_os = "linux")]
fn start_writeback(file: &File, offset: u64, len: u64) {
    use std::os::fd::AsRawFd;
    let (Ok(offset), Ok(len)) = (i64::try_from(offset), i64::try_from(len)) else {
        return;
    };
    // SAFETY: the call takes a file descriptor, which `file` keeps open for its duration, and
    // integers; it reads or writes no memory of this process.
    let _ = unsafe {
        libc::sync_file_range(file.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE)
    };
}

/// Elsewhere writeback starts at the fsync.
#[cfg(not(target_os = "linux"))]
fn start_writeback(_file: &File, _offset: u64, _len: u64) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_find_every_chunk_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let profile = HashProfile::Blake3;
        for (seq, n) in [0usize, 1, 2, 3, 5, 17, 100, 1000, 5000]
            .into_iter()
            .enumerate()
        {
            let seq = seq as u64 + 1;
            let data: Vec<Vec<u8>> = (0..n).map(|i| (i as u32).to_le_bytes().to_vec()).collect();
            let mut chunks: Vec<(Address, &[u8])> = data
                .iter()
                .map(|c| (profile.address_of(c), &c[..]))
                .collect();
            chunks.sort_unstable_by_key(|c| c.0);
            let path = dir.path().join(file_name(seq));
            let rec = write(&path, seq, profile, &chunks).unwrap().1;
            for mmap in [true, false] {
                let f = ChunkFile::open(dir.path(), rec, profile, mmap).unwrap();
                assert_eq!(f.len(), n);
                for (i, (a, c)) in chunks.iter().enumerate() {
                    assert_eq!(f.find(a), Some(i));
                    assert_eq!(f.chunk(i, profile).unwrap(), *c);
                }
                for probe in 0..200u32 {
                    let absent = profile.address_of(&(probe + 1_000_000).to_le_bytes());
                    assert_eq!(f.find(&absent), None);
                }
                assert_eq!(f.find(&Address([0; 20])), None);
                assert_eq!(f.find(&Address([0xff; 20])), None);
            }
        }
    }

    #[test]
    fn a_big_file_written_in_many_pieces_reads_back() {
        // More chunks than one `writev` takes, more bytes than one batch and than one
        // writeback step, and some empty chunks.
        let dir = tempfile::tempdir().unwrap();
        let profile = HashProfile::Blake3;
        let n = 3000;
        let data: Vec<Vec<u8>> = (0..n)
            .map(|i: usize| {
                let len = if i % 100 == 7 {
                    0
                } else {
                    (i * 7919) % 7000 + 1
                };
                (0..len).map(|j| (i * 31 + j) as u8).collect()
            })
            .collect();
        let mut chunks: Vec<(Address, &[u8])> = data
            .iter()
            .map(|c| (profile.address_of(c), &c[..]))
            .collect();
        chunks.sort_unstable_by_key(|c| c.0);
        chunks.dedup_by_key(|c| c.0);
        let path = dir.path().join(file_name(1));
        let rec = write(&path, 1, profile, &chunks).unwrap().1;
        let f = ChunkFile::open(dir.path(), rec, profile, false).unwrap();
        assert_eq!(f.len(), chunks.len());
        for (i, (a, c)) in chunks.iter().enumerate() {
            assert_eq!(f.find(a), Some(i));
            assert_eq!(f.chunk(i, profile).unwrap(), *c);
        }
    }

    /// Chunks of assorted lengths (some empty) and their addresses, in making order.
    fn assorted(n: usize) -> Vec<(Address, Vec<u8>)> {
        let profile = HashProfile::Blake3;
        (0..n)
            .map(|i| {
                let len = if i % 50 == 3 {
                    0
                } else {
                    (i * 7919) % 5000 + 1
                };
                let c: Vec<u8> = (0..len).map(|j| (i * 31 + j) as u8).collect();
                (profile.address_of(&c), c)
            })
            .collect::<std::collections::BTreeMap<_, _>>()
            .into_iter()
            .collect()
    }

    #[test]
    fn chunks_pushed_in_any_order_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let profile = HashProfile::Blake3;
        let mut chunks = assorted(2500);
        // Not address order: reversed halves, so the order table is far from the identity.
        chunks.reverse();
        chunks[..1000].reverse();
        let path = dir.path().join(file_name(7));
        let mut w = ChunkFileWriter::create(&path, profile).unwrap();
        for (a, c) in &chunks {
            w.push(*a, Arc::from(&c[..])).unwrap();
        }
        // Some pushed as a batch too.
        let extra = [(profile.address_of(b"extra"), &b"extra"[..])];
        w.push_all(&extra).unwrap();
        assert_eq!(w.len(), chunks.len() + 1);
        let rec = w.finish(7).unwrap().1;
        for mmap in [true, false] {
            let f = ChunkFile::open(dir.path(), rec, profile, mmap).unwrap();
            assert_eq!(f.len(), chunks.len() + 1);
            for (a, c) in chunks
                .iter()
                .map(|(a, c)| (a, &c[..]))
                .chain(extra.iter().map(|(a, c)| (a, *c)))
            {
                let i = f.find(a).unwrap();
                assert_eq!(f.chunk(i, profile).unwrap(), c);
                assert_eq!(f.address(i), Some(*a));
            }
        }
    }

    #[test]
    fn a_chunk_pushed_twice_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let profile = HashProfile::Blake3;
        let path = dir.path().join(file_name(1));
        let mut w = ChunkFileWriter::create(&path, profile).unwrap();
        let a = profile.address_of(b"x");
        w.push(a, Arc::from(&b"x"[..])).unwrap();
        w.push(profile.address_of(b"y"), Arc::from(&b"y"[..]))
            .unwrap();
        w.push(a, Arc::from(&b"x"[..])).unwrap();
        assert!(matches!(w.finish(1), Err(StoreError::InvalidArgument(_))));
    }

    /// The bytes of a version 1 file of `chunks` (sorted, unique), made here by hand so that
    /// reading version 1 stays tested now that only version 2 is written.
    fn version_1_file(profile: HashProfile, chunks: &[(Address, Vec<u8>)]) -> (Vec<u8>, u64) {
        let mut b = Vec::new();
        b.extend_from_slice(&MAGIC);
        b.extend_from_slice(&VERSION_1.to_le_bytes());
        b.extend_from_slice(&[profile.tag(), 0, 0, 0]);
        let mut index = Vec::new();
        for (a, c) in chunks {
            index.extend_from_slice(a.as_bytes());
            index.extend_from_slice(&(b.len() as u64).to_le_bytes());
            index.extend_from_slice(&(c.len() as u32).to_le_bytes());
            b.extend_from_slice(c);
        }
        let index_offset = b.len() as u64;
        b.extend_from_slice(&index);
        b.extend_from_slice(&index_offset.to_le_bytes());
        b.extend_from_slice(&(chunks.len() as u64).to_le_bytes());
        let checksum =
            structure_checksum(&[&b[..], &[0u8; 16]].concat(), index_offset as usize).unwrap();
        b.extend_from_slice(&checksum.to_le_bytes());
        b.extend_from_slice(&FOOTER_MAGIC);
        (b, checksum)
    }

    #[test]
    fn version_1_files_still_read() {
        let profile = HashProfile::Blake3;
        let chunks = assorted(300);
        let (bytes, checksum) = version_1_file(profile, &chunks);
        let record = FileRecord {
            seq: 1,
            chunk_count: chunks.len() as u64,
            file_len: bytes.len() as u64,
            checksum,
        };
        let f =
            ChunkFile::from_bytes("v1".into(), record, FileBytes::Owned(bytes), profile).unwrap();
        for (i, (a, c)) in chunks.iter().enumerate() {
            assert_eq!(f.find(a), Some(i));
            assert_eq!(f.chunk(i, profile).unwrap(), &c[..]);
        }
    }

    /// Rewrites the order table of a finished version 2 file with `edit`, fixes the checksum,
    /// and returns what opening it says.
    fn reopen_with_order(edit: impl Fn(&mut [u32])) -> Result<ChunkFile, StoreError> {
        let dir = tempfile::tempdir().unwrap();
        let profile = HashProfile::Blake3;
        let chunks = assorted(40);
        let path = dir.path().join(file_name(1));
        let mut w = ChunkFileWriter::create(&path, profile).unwrap();
        for (a, c) in chunks.iter().rev() {
            w.push(*a, Arc::from(&c[..])).unwrap();
        }
        w.finish(1).unwrap();
        let mut b = std::fs::read(&path).unwrap();
        let footer = b.len() - FOOTER_LEN as usize;
        let index_offset = le_u64(&b, footer as u64).unwrap() as usize;
        let order_at = index_offset + chunks.len() * ENTRY_LEN as usize;
        let mut order: Vec<u32> = b[order_at..footer]
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        edit(&mut order);
        for (k, o) in order.iter().enumerate() {
            b[order_at + 4 * k..order_at + 4 * k + 4].copy_from_slice(&o.to_le_bytes());
        }
        let checksum = structure_checksum(&b, index_offset).unwrap();
        b[footer + 16..footer + 24].copy_from_slice(&checksum.to_le_bytes());
        let record = FileRecord {
            seq: 1,
            chunk_count: chunks.len() as u64,
            file_len: b.len() as u64,
            checksum,
        };
        ChunkFile::from_bytes("edited".into(), record, FileBytes::Owned(b), profile)
    }

    #[test]
    fn a_bad_order_table_is_reported_even_with_a_good_checksum() {
        assert!(reopen_with_order(|_| {}).is_ok());
        let reason = |e: Result<ChunkFile, StoreError>| match e {
            Err(StoreError::Corrupted { reason, .. }) => reason,
            Err(e) => panic!("unexpected error {e}"),
            Ok(_) => panic!("accepted"),
        };
        assert!(reason(reopen_with_order(|o| o[4] = o[3])).contains("twice"));
        assert!(reason(reopen_with_order(|o| o[0] = 40)).contains("names no index entry"));
        assert!(reason(reopen_with_order(|o| o.swap(1, 2))).contains("starts at"));
    }
}
