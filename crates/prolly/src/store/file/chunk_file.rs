//! One immutable chunk file: header, chunk bytes back to back, a sorted index, a checksummed
//! footer (byte layout in `docs/FORMAT.md`).
//!
//! Opening checks the header, footer, index checksum and that the index tiles the data region
//! exactly (sorted unique addresses, each chunk starting where the previous one ends). The chunk
//! bytes themselves are covered by their addresses: each chunk is hashed once, on first read,
//! and a per-chunk bit records that it was checked.

use std::fs::File;
use std::io::{IoSlice, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use prollystore_format::message::{Node, NodeLayout};
use prollystore_format::{Address, HashProfile, ADDRESS_LEN};
use xxhash_rust::xxh3::Xxh3;

use super::mmap::FileBytes;
use super::StoreError;

/// First 8 bytes of every chunk file.
pub(super) const MAGIC: [u8; 8] = *b"PRLYCHNK";
/// Last 8 bytes of every chunk file.
pub(super) const FOOTER_MAGIC: [u8; 8] = *b"PRLYCEND";
/// Chunk file format version.
pub(super) const VERSION: u32 = 1;
/// Header: magic (8), version u32, profile u8, 3 zero bytes.
pub(super) const HEADER_LEN: u64 = 16;
/// Index entry: address (20), offset u64, length u32.
pub(super) const ENTRY_LEN: u64 = 32;
/// Footer: index offset u64, chunk count u64, checksum u64, magic (8).
pub(super) const FOOTER_LEN: u64 = 32;
/// Largest chunk the format allows (lengths are u32).
pub(super) const MAX_CHUNK_LEN: usize = u32::MAX as usize;

/// What the manifest records about a chunk file, and what opening it must find.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct FileRecord {
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
pub(super) fn file_name(seq: u64) -> String {
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
        // The checksum covers the header, the index and the footer's first 16 bytes, so a
        // flipped length or offset field is caught before it is trusted.
        let index_len = count.checked_mul(ENTRY_LEN);
        let index_ok = index_len.is_some_and(|il| {
            index_offset >= HEADER_LEN && index_offset.checked_add(il) == Some(footer)
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
        let version = le_u32(b, 8).unwrap_or(0);
        if version != VERSION {
            return Err(corrupted(
                &name,
                8,
                format!("unsupported version {version}"),
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
        let mut expected = HEADER_LEN;
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
            if entry.1 != expected {
                return Err(corrupted(
                    &self.name,
                    at + 20,
                    format!("chunk {i} starts at {}, expected {expected}", entry.1),
                ));
            }
            expected = expected
                .checked_add(u64::from(entry.2))
                .ok_or_else(|| corrupted(&self.name, at + 28, "chunk length overflows"))?;
            prev = Some(entry.0);
            let p = prefix(entry.0, self.radix_bits);
            while radix.len() <= p {
                radix.push(i as u32);
            }
        }
        while radix.len() <= buckets {
            radix.push(self.count as u32);
        }
        if expected != self.index_offset as u64 {
            return Err(corrupted(
                &self.name,
                expected.min(self.index_offset as u64),
                "chunks do not end where the index begins",
            ));
        }
        Ok(radix.into_boxed_slice())
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
            return Ok(Node::with_layout(chunk, *layout));
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

/// xxh3-64 over the header, the index and the footer's first 16 bytes of a whole file `b` whose
/// index starts at `index_offset`.
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

/// Writes a chunk file holding `chunks` (sorted by address, unique) to the new file `path` and
/// returns it, not yet fsynced, with its record. The caller fsyncs it and renames it into place.
///
/// The index and footer are made first (32 bytes per chunk), so the chunk bytes go to the file
/// straight from the caller's buffers with vectored writes, never through a staging buffer; and
/// every [`WRITEBACK_STEP`] bytes the kernel is asked to start writing what it has, so the disk
/// works while the rest is copied and the final fsync waits for little more than the tail.
pub(super) fn write(
    path: &Path,
    seq: u64,
    profile: HashProfile,
    chunks: &[(Address, &[u8])],
) -> Result<(File, FileRecord), StoreError> {
    let io = |what: &str, source| StoreError::Io {
        context: format!("{what} {}", path.display()),
        source,
    };
    let mut header = [0u8; HEADER_LEN as usize];
    header[..8].copy_from_slice(&MAGIC);
    header[8..12].copy_from_slice(&VERSION.to_le_bytes());
    header[12] = profile.tag();
    let mut tail = Vec::with_capacity(chunks.len() * ENTRY_LEN as usize + FOOTER_LEN as usize);
    let mut at = HEADER_LEN;
    for (addr, data) in chunks {
        let len = u32::try_from(data.len()).map_err(|_| {
            StoreError::InvalidArgument(format!("chunk {addr} is longer than 4 GiB"))
        })?;
        tail.extend_from_slice(addr.as_bytes());
        tail.extend_from_slice(&at.to_le_bytes());
        tail.extend_from_slice(&len.to_le_bytes());
        at += u64::from(len);
    }
    let index_offset = at;
    tail.extend_from_slice(&index_offset.to_le_bytes());
    tail.extend_from_slice(&(chunks.len() as u64).to_le_bytes());
    let mut sum = Xxh3::new();
    sum.update(&header);
    sum.update(&tail);
    let checksum = sum.digest();
    tail.extend_from_slice(&checksum.to_le_bytes());
    tail.extend_from_slice(&FOOTER_MAGIC);
    let file_len = index_offset + tail.len() as u64;

    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| io("creating", e))?;
    let parts = std::iter::once(&header[..])
        .chain(chunks.iter().map(|c| c.1))
        .chain(std::iter::once(&tail[..]));
    write_parts(&file, parts).map_err(|e| io("writing", e))?;
    let record = FileRecord {
        seq,
        chunk_count: chunks.len() as u64,
        file_len,
        checksum,
    };
    Ok((file, record))
}

/// Writes `parts` back to back at the start of the new, empty `file`: up to [`MAX_SLICES`]
/// slices or about [`WRITE_BATCH`] bytes per `writev`, starting writeback every
/// [`WRITEBACK_STEP`] bytes.
fn write_parts<'a>(mut file: &File, parts: impl Iterator<Item = &'a [u8]>) -> std::io::Result<()> {
    let mut slices: Vec<IoSlice<'a>> = Vec::with_capacity(MAX_SLICES);
    let mut written = 0u64;
    let mut flushed = 0u64;
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
            let n = file.write_vectored(rest)?;
            if n == 0 {
                return Err(std::io::ErrorKind::WriteZero.into());
            }
            IoSlice::advance_slices(&mut rest, n);
        }
        written += batch as u64;
        if written - flushed >= WRITEBACK_STEP {
            start_writeback(file, flushed, written - flushed);
            flushed = written;
        }
    }
    Ok(())
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
}
