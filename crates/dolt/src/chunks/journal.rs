//! The chunk journal (`noms/vvvv…`): an append-only log of chunk records (snappy‖CRC payloads)
//! and root records, each with a CRC-32C, plus the optional `journal.idx` accelerator.
//!
//! Reading stops at the last complete, checksummed record, so a journal that Dolt is appending
//! to right now opens at its last durable state.

use std::collections::HashMap;
use std::sync::Arc;

use prollystore_format::Address;

use super::codec::{be_u32, be_u64, decode_snappy_record, decode_snappy_record_into, Backing};
use crate::error::{corrupt, Result};

/// Largest record Dolt's journal writer can emit (its buffer size).
pub const MAX_RECORD_LEN: u32 = 5 * 1024 * 1024;

/// Why a scan stopped before the end of the file (or `End`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScanStop {
    /// Reached the end of the bytes exactly after a record.
    End,
    /// A zero length: the rest is pre-allocated zeros.
    ZeroLength,
    /// The last record is incomplete (being written, or cut off).
    TruncatedTail,
    /// A record's CRC does not match: everything from here on is ignored.
    BadChecksum,
}

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

/// Scans journal records in `bytes`, which start at file offset `base`. Structural errors inside
/// a record whose CRC is valid are reported as errors; a bad CRC or an incomplete tail ends the
/// scan (see [`ScanStop`]).
pub fn scan_records(bytes: &[u8], base: u64, file: &str) -> Result<JournalScan> {
    let mut scan = JournalScan {
        end: base,
        ..JournalScan::default()
    };
    let mut pos = 0usize;
    loop {
        let at = base + pos as u64;
        if pos == bytes.len() {
            scan.stop = Some(ScanStop::End);
            break;
        }
        let Some(len) = be_u32(bytes, pos) else {
            scan.stop = Some(ScanStop::TruncatedTail);
            break;
        };
        if len == 0 {
            scan.stop = Some(ScanStop::ZeroLength);
            break;
        }
        if len > MAX_RECORD_LEN {
            return Err(corrupt(
                file,
                at,
                format!("record length {len} exceeds 5 MiB"),
            ));
        }
        if len < 9 {
            return Err(corrupt(
                file,
                at,
                format!("record length {len} is too short"),
            ));
        }
        let Some(record) = bytes.get(pos..pos + len as usize) else {
            scan.stop = Some(ScanStop::TruncatedTail);
            break;
        };
        let body_end = record.len() - 4;
        let stored = be_u32(record, body_end).unwrap_or(0);
        if crc32c::crc32c(&record[..body_end]) != stored {
            scan.stop = Some(ScanStop::BadChecksum);
            break;
        }
        parse_record(&record[..body_end], at, file, &mut scan)?;
        pos += len as usize;
        scan.end = base + pos as u64;
    }
    Ok(scan)
}

fn parse_record(body: &[u8], at: u64, file: &str, scan: &mut JournalScan) -> Result<()> {
    let mut kind = None;
    let mut address = None;
    let mut timestamp = None;
    let mut payload = None;
    let mut p = 4usize;
    while p < body.len() {
        let tag = body.get(p).copied().unwrap_or(0);
        let field_at = at + p as u64;
        p += 1;
        match tag {
            1 => {
                kind = Some(
                    *body
                        .get(p)
                        .ok_or_else(|| corrupt(file, field_at, "kind field cut short"))?,
                );
                p += 1;
            }
            2 => {
                let a = body
                    .get(p..p + 20)
                    .and_then(Address::from_slice)
                    .ok_or_else(|| corrupt(file, field_at, "address field cut short"))?;
                address = Some(a);
                p += 20;
            }
            3 => {
                payload = Some((at + p as u64, (body.len() - p) as u32));
                p = body.len();
            }
            4 => {
                timestamp = Some(
                    be_u64(body, p)
                        .ok_or_else(|| corrupt(file, field_at, "timestamp field cut short"))?,
                );
                p += 8;
            }
            t => {
                return Err(corrupt(
                    file,
                    field_at,
                    format!("unknown record field tag {t}"),
                ))
            }
        }
    }
    match (kind, address, payload) {
        (Some(2), Some(a), Some((payload_offset, payload_len))) => {
            scan.chunks.push((
                a,
                ChunkLocation {
                    payload_offset,
                    payload_len,
                },
            ));
            Ok(())
        }
        (Some(1), Some(root), None) => {
            scan.roots.push(RootRecord {
                root,
                timestamp,
                offset: at,
            });
            Ok(())
        }
        (Some(k), _, _) if k != 1 && k != 2 => {
            Err(corrupt(file, at, format!("unknown record kind {k}")))
        }
        _ => Err(corrupt(file, at, "record lacks a required field")),
    }
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
}

/// Parses `journal.idx`. Lookups after the last valid batch, and any batch whose checksum does
/// not match, end the index (it is an accelerator; the journal is the truth).
pub fn parse_index(bytes: &[u8], file: &str) -> Result<JournalIndex> {
    let mut out = JournalIndex::default();
    let mut batch: Vec<([u8; 16], ChunkLocation)> = Vec::new();
    let mut crc = 0u32;
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
                crc = crc32c::crc32c_append(crc, &prefix);
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
                if stored != crc || end < start || start != out.covered_end {
                    break;
                }
                out.root = Address::from_slice(&rec[20..40]);
                out.covered_end = end;
                out.lookups.append(&mut batch);
                crc = 0;
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
    end: u64,
    stop: Option<ScanStop>,
}

impl Journal {
    /// Opens a journal, using `index` (the `journal.idx` bytes) to skip scanning the part it
    /// covers; the rest of the journal is scanned.
    pub fn open(backing: Backing, index: Option<&[u8]>) -> Result<Journal> {
        let name = backing.name().to_string();
        let idx = match index {
            Some(bytes) => parse_index(bytes, &format!("{name}.idx"))?,
            None => JournalIndex::default(),
        };
        let mut start = idx.covered_end.min(backing.len());
        // A root record sits at the covered end; scan from there so it is seen.
        let mut by_prefix = HashMap::with_hasher(AddressHash);
        for (p, loc) in &idx.lookups {
            if loc
                .payload_offset
                .saturating_add(u64::from(loc.payload_len))
                > backing.len()
            {
                // The index does not fit this journal: ignore it and scan everything.
                by_prefix.clear();
                start = 0;
                break;
            }
            by_prefix.insert(*p, *loc);
        }
        let index_root = if start > 0 { idx.root } else { None };
        let rest = backing.read_at(start, (backing.len() - start) as usize)?;
        let scan = scan_records(&rest, start, &name)?;
        let mut by_address = HashMap::with_hasher(AddressHash);
        by_address.extend(scan.chunks);
        Ok(Journal {
            backing,
            by_address,
            by_prefix,
            roots: scan.roots,
            index_root,
            end: scan.end,
            stop: scan.stop,
        })
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

    fn locate(&self, address: &Address) -> Option<ChunkLocation> {
        if let Some(l) = self.by_address.get(address) {
            return Some(*l);
        }
        let mut p = [0u8; 16];
        p.copy_from_slice(&address.as_bytes()[..16]);
        self.by_prefix.get(&p).copied()
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
