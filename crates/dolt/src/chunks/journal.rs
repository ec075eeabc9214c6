//! The chunk journal (`noms/vvvv…`): an append-only log of chunk records (snappy‖CRC payloads)
//! and root records, each with a CRC-32C, plus the optional `journal.idx` accelerator. The
//! record layout itself is [`super::journal_record`].
//!
//! Reading follows Dolt's rule for damaged tails exactly (`processJournalRecords` and
//! `possibleDataLossCheck` in Dolt's `journal_record.go`): reading stops at the first record
//! that cannot be read (cut short, a length of zero or out of range, a CRC that does not match);
//! the journal is refused only if a valid root record followed by another valid record lies
//! after that point (the journal was synced past the damage: data lost). Otherwise the rest is a
//! torn tail and the store opens at the last readable root record — even when the manifest
//! names a later root, as Dolt opens it (and trues its manifest up to it). See [`scan_records`].

use std::collections::HashMap;
use std::sync::Arc;

use prollystore_format::Address;

use super::codec::{be_u32, be_u64, decode_snappy_record, decode_snappy_record_into, Backing};
use super::journal_record::{self as record, frame, Record, MIN_RECORD_LEN, ROOT_RECORD_LEN};
use crate::error::{corrupt, Result};

pub use super::journal_record::{ScanStop, MAX_RECORD_LEN};

/// One root record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RootRecord {
    /// The store root after this update.
    pub root: Address,
    /// Unix seconds, if the record has a timestamp.
    pub timestamp: Option<u64>,
    /// Offset of the record in the journal.
    pub offset: u64,
}

/// One chunk record's location.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkLocation {
    /// Offset of the payload (snappy‖CRC) in the journal.
    pub payload_offset: u64,
    /// Length of the payload.
    pub payload_len: u32,
}

/// The records found by [`scan_records`].
#[derive(Clone, Debug, Default)]
pub struct JournalScan {
    /// Chunk records in file order.
    pub chunks: Vec<(Address, ChunkLocation)>,
    /// Root records in file order.
    pub roots: Vec<RootRecord>,
    /// Offset just after the last complete valid record.
    pub end: u64,
    /// Why scanning stopped.
    pub stop: Option<ScanStop>,
}

impl JournalScan {
    /// Leaves out the chunk records after the last root record (all of them, if there is
    /// none). No root reaches them: they are what is left of a write cut short (a `write` a
    /// kill interrupts stops between pages, keeping whole records without the root record
    /// that was to follow). They stay in the file, as Dolt keeps them, but a store must not
    /// count them as held: a writer skips whole subtrees whose top chunk the store holds, and
    /// such a chunk's children may be the part of the batch that was never written.
    pub fn drop_unrooted(&mut self) {
        let last = self.roots.last().map_or(0, |r| r.offset);
        self.chunks.retain(|(_, loc)| loc.payload_offset < last);
    }
}

/// Scans journal records in `bytes`, which start at file offset `base`.
///
/// A record that cannot be read (bad length, bad CRC, cut short) ends the scan like a torn tail
/// of a crashed write *only if* Dolt's data-loss rule finds nothing durable after it: a valid
/// root record followed by another valid record after it means the journal had been synced past
/// the damage, so the damage is reported as an error instead of silently opening an older root.
/// Structural errors inside a record whose CRC is valid are errors too.
pub fn scan_records(bytes: &[u8], base: u64, file: &str) -> Result<JournalScan> {
    let mut scan = JournalScan {
        end: base,
        ..JournalScan::default()
    };
    let (pos, stop) = scan_readable(bytes, base, file, &mut scan)?;
    if stop != ScanStop::End {
        let damage = |what: String| {
            corrupt(
                file,
                base + pos as u64,
                format!("{} where {what}", stop.describe()),
            )
        };
        match after_damage(bytes, pos) {
            AfterDamage::Nothing => {}
            AfterDamage::Durable { root_at, next_at } => {
                return Err(damage(format!(
                    "the journal has a valid root record at offset {} and another valid record \
                     at offset {} after it: data lost, not a torn tail",
                    base + root_at as u64,
                    base + next_at as u64
                )))
            }
            AfterDamage::TooCostly { at } => {
                return Err(damage(format!(
                    "the bytes after it hold too many record-like lengths to tell a torn tail \
                     from data loss (checked up to offset {})",
                    base + at as u64
                )))
            }
        }
    }
    scan.stop = Some(stop);
    Ok(scan)
}

/// Adds to `scan` the records at the start of `bytes` (file offset `base`) up to the first
/// that cannot be read; returns where that is in `bytes` and why ([`ScanStop::End`]: all of
/// them were read). Structural errors inside a record whose CRC is valid are errors.
fn scan_readable(
    bytes: &[u8],
    base: u64,
    file: &str,
    scan: &mut JournalScan,
) -> Result<(usize, ScanStop)> {
    let mut pos = 0usize;
    loop {
        let at = base + pos as u64;
        let Some(rest) = bytes.get(pos..).filter(|r| !r.is_empty()) else {
            return Ok((pos, ScanStop::End));
        };
        let record = match frame(rest) {
            Ok(record) => record,
            Err(stop) => return Ok((pos, stop)),
        };
        match record::decode(record).map_err(|e| e.in_file(file, at))? {
            Record::Chunk {
                address,
                payload_at,
                payload_len,
            } => scan.chunks.push((
                address,
                ChunkLocation {
                    payload_offset: at + payload_at,
                    payload_len,
                },
            )),
            Record::Root { root, timestamp } => scan.roots.push(RootRecord {
                root,
                timestamp,
                offset: at,
            }),
        }
        pos += record.len();
        scan.end = base + pos as u64;
    }
}

/// Bytes of the journal read at a time by [`scan_file`].
const SCAN_WINDOW: usize = 1 << 20;

/// [`scan_records`] of `backing` from offset `from` to its end, reading it a window at a time
/// into one reused buffer rather than into a buffer as large as the journal (whose pages the
/// kernel would clear and fault in one by one: most of the time of opening a large journal).
/// Each window is read from the first record the last one did not hold whole; the part from
/// a record that cannot be read (or is longer than a window) to the end of the file is read
/// whole and given to [`scan_records`], so the damaged-tail rule sees exactly the bytes it
/// would see in one read.
pub(crate) fn scan_file(backing: &Backing, from: u64, name: &str) -> Result<JournalScan> {
    scan_file_by(backing, from, name, SCAN_WINDOW)
}

/// [`scan_file`] with windows of `window` bytes.
fn scan_file_by(backing: &Backing, from: u64, name: &str, window: usize) -> Result<JournalScan> {
    let len = backing.len();
    let mut scan = JournalScan {
        end: from,
        ..JournalScan::default()
    };
    let mut buf = Vec::new();
    let mut at = from;
    while len.saturating_sub(at) > window as u64 {
        backing.read_at_into(at, window, &mut buf)?;
        let (pos, stop) = scan_readable(&buf, at, name, &mut scan)?;
        at += pos as u64;
        // A record cut by the window's end is read again with the next window; anything
        // else that stopped the scan is judged with the rest of the file.
        if pos == 0 || !matches!(stop, ScanStop::TruncatedTail | ScanStop::End) {
            break;
        }
    }
    let rest = backing.read_at(at, (len - at) as usize)?;
    let tail = scan_records(&rest, at, name)?;
    scan.chunks.extend(tail.chunks);
    scan.roots.extend(tail.roots);
    scan.end = tail.end;
    scan.stop = tail.stop;
    Ok(scan)
}

/// What follows a record that could not be read.
enum AfterDamage {
    /// No valid root record with a valid record after it: a torn tail.
    Nothing,
    /// A valid root record at `root_at` and a valid record at `next_at` after it.
    Durable {
        /// Offset of the root record.
        root_at: usize,
        /// Offset of the record after it.
        next_at: usize,
    },
    /// The check gave up at `at`: checksumming every candidate would take quadratic time.
    TooCostly {
        /// Where it stopped.
        at: usize,
    },
}

/// Bytes the data-loss check may checksum beyond four passes over the tail. Real data rarely
/// holds a plausible length at a wrong position; a crafted tail full of them would otherwise
/// cost time quadratic in its size.
const CHECK_SLACK: usize = 64 << 20;

/// Dolt's data-loss check, run from `from` (the record that could not be read): looks byte by
/// byte for a valid record, skipping whole records once found, until it has seen a valid root
/// record and a valid record after it. Like Dolt, it only tries positions with room for a root
/// record after them.
fn after_damage(bytes: &[u8], from: usize) -> AfterDamage {
    let mut budget = CHECK_SLACK.saturating_add(bytes.len().saturating_sub(from).saturating_mul(4));
    let mut root_at = None;
    let mut pos = from;
    while let Some(rest) = bytes.get(pos..).filter(|r| r.len() >= ROOT_RECORD_LEN) {
        // What checksumming the record this position claims to start costs.
        let claimed = be_u32(rest, 0)
            .filter(|l| (MIN_RECORD_LEN..=MAX_RECORD_LEN).contains(l))
            .map_or(0, |l| l as usize);
        let claimed = if claimed <= rest.len() { claimed } else { 0 };
        budget = match budget.checked_sub(claimed) {
            Some(left) => left,
            None => return AfterDamage::TooCostly { at: pos },
        };
        let Ok(framed) = frame(rest) else {
            pos += 1;
            continue;
        };
        // A checksummed record whose fields Dolt cannot read ends Dolt's check there, finding
        // no loss (its `readJournalRecord` error is only a warning at this point).
        let Ok(fields) = record::fields(framed) else {
            return AfterDamage::Nothing;
        };
        if let Some(root_at) = root_at {
            return AfterDamage::Durable {
                root_at,
                next_at: pos,
            };
        }
        if fields.kind == Some(record::KIND_ROOT) {
            root_at = Some(pos);
        }
        pos += framed.len();
    }
    AfterDamage::Nothing
}

/// What a `journal.idx` file holds: complete, checksummed batches only.
#[derive(Clone, Debug, Default)]
pub struct JournalIndex {
    /// Lookups: 16-byte address prefix → payload location.
    pub lookups: Vec<([u8; 16], ChunkLocation)>,
    /// Journal offset up to which the index covers the journal (end of the last batch).
    pub covered_end: u64,
    /// Root of the last complete batch.
    pub root: Option<Address>,
    /// Bytes of the index file its complete batches take (a partial batch after them is
    /// dropped when a writer extends the index, as Dolt drops it).
    pub valid_len: u64,
}

/// Parses `journal.idx`. Lookups after the last valid batch, and any batch whose checksum does
/// not match, end the index (it is an accelerator; the journal is the truth).
pub fn parse_index(bytes: &[u8], file: &str) -> Result<JournalIndex> {
    let mut out = JournalIndex::default();
    let mut batch: Vec<([u8; 16], ChunkLocation)> = Vec::new();
    let mut pos = 0usize;
    while let Some(&tag) = bytes.get(pos) {
        match tag {
            0 => {
                let Some(rec) = bytes.get(pos + 1..pos + 29) else {
                    break;
                };
                let mut prefix = [0u8; 16];
                prefix.copy_from_slice(&rec[..16]);
                let payload_offset = be_u64(rec, 16).unwrap_or(0);
                let payload_len = be_u32(rec, 24).unwrap_or(0);
                batch.push((
                    prefix,
                    ChunkLocation {
                        payload_offset,
                        payload_len,
                    },
                ));
                pos += 29;
            }
            1 => {
                let Some(rec) = bytes.get(pos + 1..pos + 41) else {
                    break;
                };
                let start = be_u64(rec, 0).unwrap_or(0);
                let end = be_u64(rec, 8).unwrap_or(0);
                let stored = be_u32(rec, 16).unwrap_or(0);
                if stored != prefixes_crc(&batch) || end < start || start != out.covered_end {
                    break;
                }
                out.root = Address::from_slice(&rec[20..40]);
                out.covered_end = end;
                out.valid_len = (pos + 41) as u64;
                out.lookups.append(&mut batch);
                pos += 41;
            }
            t => {
                return Err(corrupt(
                    file,
                    pos as u64,
                    format!("unknown index record tag {t}"),
                ));
            }
        }
    }
    Ok(out)
}

/// The CRC-32C of a batch's address prefixes one after another (its closing record's
/// checksum), computed over runs of them at once: one call per prefix costs several times
/// the checksum itself.
fn prefixes_crc(lookups: &[([u8; 16], ChunkLocation)]) -> u32 {
    let mut crc = 0u32;
    let mut run = Vec::with_capacity(lookups.len().min(4096) * 16);
    for part in lookups.chunks(4096) {
        run.clear();
        for (p, _) in part {
            run.extend_from_slice(p);
        }
        crc = crc32c::crc32c_append(crc, &run);
    }
    crc
}

/// Appends `batch` (from [`Journal::index_batch`]) to the `journal.idx` at `path` after its
/// first `keep` bytes, under the database's writer lock: the lookups are made durable before
/// the batch's closing record is written, so a crash never leaves a closing record after
/// lookups that were not written, only at most a partial batch, which readers ignore. The index only accelerates opening; the caller may ignore a failure.
pub fn extend_index(path: &std::path::Path, keep: u64, batch: &[u8]) -> std::io::Result<()> {
    use std::io::{Seek, SeekFrom, Write};
    let meta = batch.len().saturating_sub(41);
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    f.set_len(keep)?;
    f.seek(SeekFrom::Start(keep))?;
    f.write_all(&batch[..meta])?;
    f.sync_data()?;
    // Not synced (Dolt does not sync its index either): a closing record lost in a crash
    // leaves a partial batch, which is ignored.
    f.write_all(&batch[meta..])
}

/// Hashing for maps keyed by chunk addresses (or their prefixes): the keys are already
/// uniformly distributed hash bytes, so their first eight bytes serve as the hash instead of
/// running SipHash over them on every lookup. (A crafted journal can only make its own lookups
/// slower.)
#[derive(Clone, Copy, Debug, Default)]
pub struct AddressHash;

/// The hasher [`AddressHash`] builds.
#[derive(Clone, Copy, Debug, Default)]
pub struct AddressHasher(u64);

impl std::hash::Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut word = [0u8; 8];
        let n = bytes.len().min(8);
        if let (Some(dst), Some(src)) = (word.get_mut(..n), bytes.get(..n)) {
            dst.copy_from_slice(src);
        }
        self.0 = self.0.rotate_left(29) ^ u64::from_le_bytes(word);
    }
}

impl std::hash::BuildHasher for AddressHash {
    type Hasher = AddressHasher;

    fn build_hasher(&self) -> AddressHasher {
        AddressHasher(0)
    }
}

/// An open chunk journal.
#[derive(Debug)]
pub struct Journal {
    backing: Backing,
    by_address: HashMap<Address, ChunkLocation, AddressHash>,
    by_prefix: HashMap<[u8; 16], ChunkLocation, AddressHash>,
    roots: Vec<RootRecord>,
    index_root: Option<Address>,
    /// Journal offset the index covers (0: no index used) and the bytes of the index file its
    /// batches take.
    index_covered: (u64, u64),
    end: u64,
    stop: Option<ScanStop>,
}

/// Unindexed chunk records (before the last root record) from which a writer adds a batch to
/// `journal.idx` ([`Journal::index_batch`]). Dolt adds one when more than 16,384 are new at a
/// commit or on opening; a lower bar makes the next open of a large journal Dolt loaded in
/// one go (fewer chunks than that: no batch) read the index instead of the whole journal.
pub const INDEX_BATCH_MIN_CHUNKS: usize = 4096;

impl Journal {
    /// Opens a journal, using `index` (the `journal.idx` bytes) to skip scanning the part it
    /// covers; the rest of the journal is scanned. As Dolt does, the index is used only when
    /// it fits this journal: its batches' lookups lie inside the file and the root record its
    /// last batch names sits where that batch ends (Dolt's `peekRootHashAt` check); otherwise
    /// (stale, damaged or from another journal) the whole journal is scanned. Chunks read
    /// through the index are checked (CRC) when read.
    pub fn open(backing: Backing, index: Option<&[u8]>) -> Result<Journal> {
        let name = backing.name().to_string();
        let idx = match index {
            Some(bytes) => parse_index(bytes, &format!("{name}.idx"))?,
            None => JournalIndex::default(),
        };
        let fits = idx.covered_end > 0
            && idx.covered_end < backing.len()
            && idx.lookups.iter().all(|(_, loc)| {
                loc.payload_offset
                    .saturating_add(u64::from(loc.payload_len))
                    <= idx.covered_end
            });
        if fits {
            let scan = scan_file(&backing, idx.covered_end, &name)?;
            let first_root = scan.roots.first();
            if first_root.is_some_and(|r| r.offset == idx.covered_end && Some(r.root) == idx.root) {
                let mut by_prefix =
                    HashMap::with_capacity_and_hasher(idx.lookups.len(), AddressHash);
                by_prefix.extend(idx.lookups.iter().copied());
                return Ok(Journal::from_scan(
                    backing,
                    scan,
                    by_prefix,
                    idx.root,
                    (idx.covered_end, idx.valid_len),
                ));
            }
        }
        let scan = scan_file(&backing, 0, &name)?;
        Ok(Journal::from_scan(
            backing,
            scan,
            HashMap::with_hasher(AddressHash),
            None,
            (0, 0),
        ))
    }

    fn from_scan(
        backing: Backing,
        mut scan: JournalScan,
        by_prefix: HashMap<[u8; 16], ChunkLocation, AddressHash>,
        index_root: Option<Address>,
        index_covered: (u64, u64),
    ) -> Journal {
        scan.drop_unrooted();
        let mut by_address = HashMap::with_capacity_and_hasher(scan.chunks.len(), AddressHash);
        by_address.extend(scan.chunks);
        Journal {
            backing,
            by_address,
            by_prefix,
            roots: scan.roots,
            index_root,
            index_covered,
            end: scan.end,
            stop: scan.stop,
        }
    }

    /// A batch for `journal.idx` covering the scanned chunk records up to the last root record
    /// read, if they are at least `min_chunks` (writers give [`INDEX_BATCH_MIN_CHUNKS`]): the
    /// length the index file keeps
    /// (its complete batches; Dolt drops a partial one the same way) and the bytes to append
    /// after it, in Dolt's layout (lookups `0‖prefix16‖offset‖length`, then
    /// `1‖start‖end‖crc32c(prefixes)‖root`, numbers big-endian).
    pub fn index_batch(&self, min_chunks: usize) -> Option<(u64, Vec<u8>)> {
        let last = self.roots.last()?;
        let lookups: Vec<([u8; 16], ChunkLocation)> = self
            .by_address
            .iter()
            .filter(|(_, loc)| loc.payload_offset < last.offset)
            .map(|(a, loc)| {
                let mut p = [0u8; 16];
                p.copy_from_slice(&a.as_bytes()[..16]);
                (p, *loc)
            })
            .collect();
        if lookups.is_empty() || lookups.len() < min_chunks {
            return None;
        }
        let (start, keep) = self.index_covered;
        let mut out = Vec::with_capacity(lookups.len() * 29 + 41);
        for (p, loc) in &lookups {
            out.push(0);
            out.extend_from_slice(p);
            out.extend_from_slice(&loc.payload_offset.to_be_bytes());
            out.extend_from_slice(&loc.payload_len.to_be_bytes());
        }
        let crc = prefixes_crc(&lookups);
        out.push(1);
        out.extend_from_slice(&start.to_be_bytes());
        out.extend_from_slice(&last.offset.to_be_bytes());
        out.extend_from_slice(&crc.to_be_bytes());
        out.extend_from_slice(last.root.as_bytes());
        Some((keep, out))
    }

    /// The file's name.
    pub fn name(&self) -> &str {
        self.backing.name()
    }

    /// The latest root: the last root record read, else the index's last batch root.
    pub fn root(&self) -> Option<Address> {
        self.roots.last().map(|r| r.root).or(self.index_root)
    }

    /// Root records read by scanning (not those covered by the index).
    pub fn root_records(&self) -> &[RootRecord] {
        &self.roots
    }

    /// Offset just after the last complete record read.
    pub fn end(&self) -> u64 {
        self.end
    }

    /// Why the scan stopped.
    pub fn stop(&self) -> Option<&ScanStop> {
        self.stop.as_ref()
    }

    /// Where the bytes the scan ignored begin and why, if it stopped before the end of the file.
    pub fn ignored_tail(&self) -> Option<(u64, &ScanStop)> {
        match &self.stop {
            Some(stop) if *stop != ScanStop::End => Some((self.end, stop)),
            _ => None,
        }
    }

    fn locate(&self, address: &Address) -> Option<ChunkLocation> {
        if let Some(l) = self.by_address.get(address) {
            return Some(*l);
        }
        let mut p = [0u8; 16];
        p.copy_from_slice(&address.as_bytes()[..16]);
        self.by_prefix.get(&p).copied()
    }

    /// The chunks the journal holds: full addresses of those scanned, 16-byte prefixes of
    /// those its `journal.idx` located.
    pub fn chunk_keys(
        &self,
    ) -> (
        impl Iterator<Item = &Address> + '_,
        impl Iterator<Item = &[u8; 16]> + '_,
    ) {
        (self.by_address.keys(), self.by_prefix.keys())
    }

    /// True if the journal holds `address`.
    pub fn has(&self, address: &Address) -> bool {
        self.locate(address).is_some()
    }

    /// The journal file's length when opened.
    pub fn file_len(&self) -> u64 {
        self.backing.len()
    }

    /// Total bytes of all chunk payloads (compressed chunk + CRC).
    pub fn payload_bytes(&self) -> u64 {
        self.by_address
            .values()
            .chain(self.by_prefix.values())
            .map(|l| u64::from(l.payload_len))
            .sum()
    }

    /// Number of chunks known (indexed plus scanned).
    pub fn chunk_count(&self) -> usize {
        self.by_address.len() + self.by_prefix.len()
    }

    /// The decompressed chunk and its payload offset, or `None` if absent.
    pub fn read(&self, address: &Address) -> Result<Option<(Arc<[u8]>, u64)>> {
        let Some(loc) = self.locate(address) else {
            return Ok(None);
        };
        let payload = self
            .backing
            .read_at(loc.payload_offset, loc.payload_len as usize)?;
        let chunk = decode_snappy_record(&payload, self.name(), loc.payload_offset)?;
        Ok(Some((chunk, loc.payload_offset)))
    }

    /// Where the chunk's compressed record (snappy‖CRC) is: offset and length.
    pub fn record_span(&self, address: &Address) -> Option<(u64, usize)> {
        self.locate(address)
            .map(|l| (l.payload_offset, l.payload_len as usize))
    }

    /// Exactly `len` bytes at `offset` into `buf` (replacing its contents).
    pub fn read_span(&self, offset: u64, len: usize, buf: &mut Vec<u8>) -> Result<()> {
        self.backing.read_at_into(offset, len, buf)
    }

    /// Reads the chunk into `out` (replacing its contents), using `scratch` for the compressed
    /// bytes; returns the payload offset, or `None` if absent. Reused buffers make this free of
    /// allocation.
    pub fn read_into(
        &self,
        address: &Address,
        scratch: &mut Vec<u8>,
        out: &mut Vec<u8>,
    ) -> Result<Option<u64>> {
        let Some(loc) = self.locate(address) else {
            return Ok(None);
        };
        self.backing
            .read_at_into(loc.payload_offset, loc.payload_len as usize, scratch)?;
        decode_snappy_record_into(scratch, out, self.name(), loc.payload_offset)?;
        Ok(Some(loc.payload_offset))
    }

    /// Every chunk address (indexed ones read back from their records' address fields).
    pub fn addresses(&self) -> Result<Vec<Address>> {
        let mut out: Vec<Address> = self.by_address.keys().copied().collect();
        for loc in self.by_prefix.values() {
            let Some(at) = loc.payload_offset.checked_sub(21) else {
                return Err(corrupt(
                    self.name(),
                    loc.payload_offset,
                    "index points before a record",
                ));
            };
            let bytes = self.backing.read_at(at, 20)?;
            out.push(Address::from_slice(&bytes).unwrap_or_default());
        }
        Ok(out)
    }
}

#[cfg(test)]
mod scan_tests {
    use super::*;
    use crate::chunks::journal_record::{chunk_record, root_record};

    fn summary(r: &Result<JournalScan>) -> String {
        match r {
            Ok(s) => format!("{:?} {:?} {} {:?}", s.chunks, s.roots, s.end, s.stop),
            Err(e) => format!("error: {e}"),
        }
    }

    /// Records of many sizes (some longer than the windows), root records between them, and
    /// damage of each kind: scanning by windows finds what one read of the whole file finds.
    #[test]
    fn windows_scan_as_one_read_does() {
        let mut bytes = Vec::new();
        let mut x: u64 = 7;
        for i in 0..120u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let chunk: Vec<u8> = (0..(x >> 54) as usize)
                .map(|j| (j as u64 ^ x) as u8)
                .collect();
            let mut a = [0u8; 20];
            a[..8].copy_from_slice(&x.to_le_bytes());
            chunk_record(Address(a), &chunk, &mut bytes).unwrap();
            if i % 7 == 0 {
                bytes.extend_from_slice(&root_record(Address(a), i));
            }
        }
        let whole = bytes.len();
        let cases: Vec<(String, Vec<u8>)> = vec![
            ("intact".into(), bytes.clone()),
            ("cut".into(), bytes[..whole - 9].to_vec()),
            ("flipped early".into(), {
                let mut b = bytes.clone();
                b[300] ^= 1;
                b
            }),
            ("flipped late".into(), {
                let mut b = bytes.clone();
                b[whole - 40] ^= 1;
                b
            }),
            ("zeros after".into(), {
                let mut b = bytes.clone();
                b.extend_from_slice(&[0u8; 5000]);
                b
            }),
        ];
        for (what, b) in cases {
            let backing = Backing::Memory {
                name: "j".into(),
                bytes: b.clone(),
            };
            let want = summary(&scan_records(&b, 0, "j"));
            for window in [1, 16, 100, 333, 1024, 4096, b.len(), b.len() + 1] {
                let got = summary(&scan_file_by(&backing, 0, "j", window));
                assert_eq!(got, want, "{what}, window {window}");
            }
        }
    }

    /// Chunk records after the last root record (a write cut before its root record) stay
    /// in the file and are read past, but the journal does not count them as held: a writer
    /// must write them again rather than trust the subtree under them.
    #[test]
    fn chunks_after_the_last_root_are_not_held() {
        let (kept, orphan) = (Address([1; 20]), Address([2; 20]));
        let mut bytes = root_record(Address([9; 20]), 1).to_vec();
        chunk_record(kept, b"kept", &mut bytes).unwrap();
        bytes.extend_from_slice(&root_record(kept, 2));
        chunk_record(orphan, b"orphan", &mut bytes).unwrap();
        let whole = bytes.len() as u64;
        bytes.extend_from_slice(&[7, 0, 0]);
        let j = Journal::open(
            Backing::Memory {
                name: "j".into(),
                bytes,
            },
            None,
        )
        .unwrap();
        assert!(j.has(&kept));
        assert!(!j.has(&orphan));
        assert_eq!(j.root(), Some(kept));
        assert_eq!(
            j.end(),
            whole,
            "the orphan record is read past, not cut off"
        );
        assert_eq!(j.chunk_keys().0.count(), 1);
    }
}
