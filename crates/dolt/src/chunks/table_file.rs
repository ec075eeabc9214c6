//! Classic NBS table files: snappy‖CRC records back to back, then an index (prefix tuples,
//! lengths, suffixes) and a 20-byte footer ending in the NBS magic.

use std::sync::Arc;

use prollystore_format::Address;

use super::codec::{be_u32, be_u64, decode_snappy_record, decode_snappy_record_into, Backing};
use crate::error::{corrupt, Result};

/// First 8 bytes of SHA-256(`"https://github.com/attic-labs/nbs"`).
pub const TABLE_MAGIC: [u8; 8] = [0xff, 0xb5, 0xd8, 0xc2, 0x24, 0x63, 0xee, 0x50];
const FOOTER_LEN: u64 = 20;
const PREFIX_TUPLE_LEN: usize = 12;
const SUFFIX_LEN: usize = 12;
const INDEX_ENTRY_LEN: u64 = 28;

/// An open table file: its index in memory, chunk bytes read on demand.
#[derive(Debug)]
pub struct TableFile {
    backing: Backing,
    /// (prefix, ordinal), sorted by prefix.
    prefixes: Vec<(u64, u32)>,
    /// Record offset of each ordinal, plus the end of the last record.
    offsets: Vec<u64>,
    /// hash[8..20] of each ordinal.
    suffixes: Vec<[u8; SUFFIX_LEN]>,
    total_uncompressed: u64,
}

impl TableFile {
    /// Opens a table file and loads its index. Checks the footer magic, that the index fits,
    /// and that the records exactly fill the space before the index.
    pub fn open(backing: Backing) -> Result<TableFile> {
        let name = backing.name().to_string();
        let file_len = backing.len();
        if file_len < FOOTER_LEN {
            return Err(corrupt(&name, 0, "too short for a table-file footer"));
        }
        let footer_at = file_len - FOOTER_LEN;
        let footer = backing.read_at(footer_at, FOOTER_LEN as usize)?;
        if footer.get(12..20) != Some(&TABLE_MAGIC[..]) {
            return Err(corrupt(&name, footer_at + 12, "missing table-file magic"));
        }
        let count = be_u32(&footer, 0).unwrap_or(0);
        let total_uncompressed = be_u64(&footer, 4).unwrap_or(0);
        let index_len = u64::from(count) * INDEX_ENTRY_LEN;
        let Some(index_at) = footer_at.checked_sub(index_len) else {
            return Err(corrupt(
                &name,
                footer_at,
                format!("index of {count} chunks does not fit in the file"),
            ));
        };
        let index = backing.read_at(index_at, index_len as usize)?;
        let n = count as usize;
        let (tuples, rest) = index.split_at(n * PREFIX_TUPLE_LEN);
        let (lengths, suffix_bytes) = rest.split_at(n * 4);
        let mut prefixes = Vec::with_capacity(n);
        let mut last = 0u64;
        for (i, t) in tuples.chunks_exact(PREFIX_TUPLE_LEN).enumerate() {
            let p = be_u64(t, 0).unwrap_or(0);
            let ord = be_u32(t, 8).unwrap_or(0);
            let at = index_at + (i * PREFIX_TUPLE_LEN) as u64;
            if p < last {
                return Err(corrupt(&name, at, "prefix tuples are not sorted"));
            }
            if ord >= count {
                return Err(corrupt(
                    &name,
                    at + 8,
                    format!("ordinal {ord} out of range"),
                ));
            }
            last = p;
            prefixes.push((p, ord));
        }
        let mut offsets = Vec::with_capacity(n + 1);
        let mut pos = 0u64;
        offsets.push(0);
        for (i, l) in lengths.chunks_exact(4).enumerate() {
            let len = u64::from(be_u32(l, 0).unwrap_or(0));
            if len < 5 {
                let at = index_at + (n * PREFIX_TUPLE_LEN + i * 4) as u64;
                return Err(corrupt(
                    &name,
                    at,
                    format!("record length {len} is too short"),
                ));
            }
            pos += len;
            offsets.push(pos);
        }
        if pos != index_at {
            return Err(corrupt(
                &name,
                index_at,
                format!("records end at {pos} but the index starts at {index_at}"),
            ));
        }
        let suffixes = suffix_bytes
            .chunks_exact(SUFFIX_LEN)
            .map(|s| {
                let mut a = [0u8; SUFFIX_LEN];
                a.copy_from_slice(s);
                a
            })
            .collect();
        Ok(TableFile {
            backing,
            prefixes,
            offsets,
            suffixes,
            total_uncompressed,
        })
    }

    /// The file's name (for errors and listings).
    pub fn name(&self) -> &str {
        self.backing.name()
    }

    /// Number of chunks in the file.
    pub fn chunk_count(&self) -> usize {
        self.suffixes.len()
    }

    /// Bytes of all chunk records (the data region before the index).
    pub fn data_bytes(&self) -> u64 {
        self.offsets.last().copied().unwrap_or(0)
    }

    /// The footer's total of uncompressed chunk bytes.
    pub fn total_uncompressed(&self) -> u64 {
        self.total_uncompressed
    }

    fn ordinal_of(&self, address: &Address) -> Option<usize> {
        let bytes = address.as_bytes();
        let prefix = be_u64(bytes, 0)?;
        let start = self.prefixes.partition_point(|&(p, _)| p < prefix);
        self.prefixes
            .get(start..)?
            .iter()
            .take_while(|&&(p, _)| p == prefix)
            .map(|&(_, ord)| ord as usize)
            .find(|&ord| self.suffixes.get(ord).map(|s| &s[..]) == bytes.get(8..))
    }

    /// True if the file holds `address`.
    pub fn has(&self, address: &Address) -> bool {
        self.ordinal_of(address).is_some()
    }

    /// The decompressed chunk and the offset of its record, or `None` if absent.
    pub fn read(&self, address: &Address) -> Result<Option<(Arc<[u8]>, u64)>> {
        let Some(ord) = self.ordinal_of(address) else {
            return Ok(None);
        };
        let (Some(&start), Some(&end)) = (self.offsets.get(ord), self.offsets.get(ord + 1)) else {
            return Ok(None);
        };
        let record = self.backing.read_at(start, (end - start) as usize)?;
        let chunk = decode_snappy_record(&record, self.name(), start)?;
        Ok(Some((chunk, start)))
    }

    /// Where the chunk's compressed record (snappy‖CRC) is: offset and length.
    pub fn record_span(&self, address: &Address) -> Option<(u64, usize)> {
        let ord = self.ordinal_of(address)?;
        let (&start, &end) = (self.offsets.get(ord)?, self.offsets.get(ord + 1)?);
        Some((start, end.checked_sub(start)? as usize))
    }

    /// Exactly `len` bytes at `offset` into `buf` (replacing its contents).
    pub fn read_span(&self, offset: u64, len: usize, buf: &mut Vec<u8>) -> Result<()> {
        self.backing.read_at_into(offset, len, buf)
    }

    /// Reads the chunk into `out` (replacing its contents), using `scratch` for the compressed
    /// record; returns the record's offset, or `None` if absent.
    pub fn read_into(
        &self,
        address: &Address,
        scratch: &mut Vec<u8>,
        out: &mut Vec<u8>,
    ) -> Result<Option<u64>> {
        let Some(ord) = self.ordinal_of(address) else {
            return Ok(None);
        };
        let (Some(&start), Some(&end)) = (self.offsets.get(ord), self.offsets.get(ord + 1)) else {
            return Ok(None);
        };
        self.backing
            .read_at_into(start, (end - start) as usize, scratch)?;
        decode_snappy_record_into(scratch, out, self.name(), start)?;
        Ok(Some(start))
    }

    /// Every address in the file, in ordinal (record) order.
    pub fn addresses(&self) -> Vec<Address> {
        let mut out = vec![Address::ZERO; self.suffixes.len()];
        for &(p, ord) in &self.prefixes {
            if let (Some(slot), Some(s)) =
                (out.get_mut(ord as usize), self.suffixes.get(ord as usize))
            {
                slot.0[..8].copy_from_slice(&p.to_be_bytes());
                slot.0[8..].copy_from_slice(s);
            }
        }
        out
    }
}
