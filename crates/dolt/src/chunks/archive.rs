//! Dolt archives (`<name>.darc`): byte spans, an index sorted by address, JSON metadata and a
//! footer ending in `DOLTARC`. A chunk is a snappy‖CRC span (dictionary id 0) or a zstd frame
//! decoded against a dictionary span, which is itself zstd-compressed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use prollystore_format::Address;

use super::codec::{be_u32, be_u64, decode_snappy_record, decode_zstd, Backing, MAX_CHUNK_LEN};
use crate::error::{corrupt, Result};

/// The archive signature at the very end of the file.
pub const ARCHIVE_SIGNATURE: &[u8; 7] = b"DOLTARC";
const FOOTER_V3: usize = 220;
const FOOTER_V1: usize = 216;

/// Offset and length of a byte span in the file.
pub type ByteSpan = (u64, u64);

type Dictionary = Arc<zstd::dict::DecoderDictionary<'static>>;

/// An open archive: index in memory, spans read on demand, dictionaries decoded once.
pub struct Archive {
    backing: Backing,
    version: u8,
    /// End offset of span k at index k−1 (span 0 is empty).
    span_ends: Vec<u64>,
    prefixes: Vec<u64>,
    /// (dictionary span, data span) per chunk.
    refs: Vec<(u32, u32)>,
    suffixes: Vec<[u8; 12]>,
    metadata: String,
    dictionaries: Mutex<HashMap<u32, Dictionary>>,
    /// One zstd decompression context, reused for every chunk (creating one per chunk costs
    /// more than decoding a 4 KiB chunk).
    dctx: Mutex<zstd::zstd_safe::DCtx<'static>>,
}

impl std::fmt::Debug for Archive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Archive")
            .field("name", &self.backing.name())
            .field("version", &self.version)
            .field("chunks", &self.prefixes.len())
            .field("spans", &self.span_ends.len())
            .finish()
    }
}

impl Archive {
    /// Opens an archive and loads its index and metadata.
    pub fn open(backing: Backing) -> Result<Archive> {
        let name = backing.name().to_string();
        let file_len = backing.len();
        if file_len < FOOTER_V1 as u64 {
            return Err(corrupt(&name, 0, "too short for an archive footer"));
        }
        let tail_len = FOOTER_V3.min(file_len as usize);
        let tail_at = file_len - tail_len as u64;
        let tail = backing.read_at(tail_at, tail_len)?;
        let sig_at = tail_len - 7;
        if tail.get(sig_at..) != Some(&ARCHIVE_SIGNATURE[..]) {
            return Err(corrupt(
                &name,
                tail_at + sig_at as u64,
                "missing DOLTARC signature",
            ));
        }
        let version = tail.get(sig_at - 1).copied().unwrap_or(0);
        let (footer_len, fields_at, index_len) = match version {
            3 if tail_len == FOOTER_V3 => (FOOTER_V3, 8usize, be_u64(&tail, 0).unwrap_or(0)),
            1 | 2 => {
                let base = tail_len - FOOTER_V1;
                (
                    FOOTER_V1,
                    base + 4,
                    u64::from(be_u32(&tail, base).unwrap_or(0)),
                )
            }
            v => {
                return Err(corrupt(
                    &name,
                    tail_at + sig_at as u64 - 1,
                    format!("unsupported archive format version {v}"),
                ))
            }
        };
        let footer_at = file_len - footer_len as u64;
        let span_count = be_u32(&tail, fields_at).unwrap_or(0) as usize;
        let chunk_count = be_u32(&tail, fields_at + 4).unwrap_or(0) as usize;
        let meta_len = u64::from(be_u32(&tail, fields_at + 8).unwrap_or(0));
        let expected_index = (span_count as u64) * 8 + (chunk_count as u64) * (8 + 8 + 12);
        if index_len != expected_index {
            return Err(corrupt(
                &name,
                footer_at,
                format!("index length {index_len} does not match {span_count} spans and {chunk_count} chunks"),
            ));
        }
        let Some(meta_at) = footer_at.checked_sub(meta_len) else {
            return Err(corrupt(
                &name,
                footer_at,
                "metadata does not fit in the file",
            ));
        };
        let Some(index_at) = meta_at.checked_sub(index_len) else {
            return Err(corrupt(&name, meta_at, "index does not fit in the file"));
        };
        let index = backing.read_at(index_at, index_len as usize)?;
        let metadata_bytes = backing.read_at(meta_at, meta_len as usize)?;
        let metadata = String::from_utf8_lossy(&metadata_bytes).into_owned();

        let (span_bytes, rest) = index.split_at(span_count * 8);
        let (prefix_bytes, rest) = rest.split_at(chunk_count * 8);
        let (ref_bytes, suffix_bytes) = rest.split_at(chunk_count * 8);
        let mut span_ends = Vec::with_capacity(span_count);
        let mut prev = 0u64;
        for (i, s) in span_bytes.chunks_exact(8).enumerate() {
            let end = be_u64(s, 0).unwrap_or(0);
            if end < prev || end > index_at {
                return Err(corrupt(
                    &name,
                    index_at + (i * 8) as u64,
                    format!("span {} ends at {end}, outside the data region", i + 1),
                ));
            }
            prev = end;
            span_ends.push(end);
        }
        let mut prefixes = Vec::with_capacity(chunk_count);
        let mut last = 0u64;
        for (i, p) in prefix_bytes.chunks_exact(8).enumerate() {
            let v = be_u64(p, 0).unwrap_or(0);
            if v < last {
                let at = index_at + (span_count * 8 + i * 8) as u64;
                return Err(corrupt(&name, at, "prefixes are not sorted"));
            }
            last = v;
            prefixes.push(v);
        }
        let mut refs = Vec::with_capacity(chunk_count);
        for (i, r) in ref_bytes.chunks_exact(8).enumerate() {
            let dict = be_u32(r, 0).unwrap_or(0);
            let data = be_u32(r, 4).unwrap_or(0);
            let at = index_at + (span_count * 8 + chunk_count * 8 + i * 8) as u64;
            if dict as usize > span_count || data == 0 || data as usize > span_count {
                return Err(corrupt(
                    &name,
                    at,
                    format!("chunk {i} refers to spans ({dict}, {data}) of {span_count}"),
                ));
            }
            if dict == 0 && version < 2 {
                return Err(corrupt(&name, at, "format 1 requires a dictionary"));
            }
            refs.push((dict, data));
        }
        let suffixes = suffix_bytes
            .chunks_exact(12)
            .map(|s| {
                let mut a = [0u8; 12];
                a.copy_from_slice(s);
                a
            })
            .collect();
        Ok(Archive {
            backing,
            version,
            span_ends,
            prefixes,
            refs,
            suffixes,
            metadata,
            dictionaries: Mutex::new(HashMap::new()),
            dctx: Mutex::new(zstd::zstd_safe::DCtx::create()),
        })
    }

    /// The file's name.
    pub fn name(&self) -> &str {
        self.backing.name()
    }

    /// Archive format version (1, 2 or 3).
    pub fn version(&self) -> u8 {
        self.version
    }

    /// The metadata JSON text (Dolt version, origin, conversion time).
    pub fn metadata(&self) -> &str {
        &self.metadata
    }

    /// Number of chunks.
    pub fn chunk_count(&self) -> usize {
        self.prefixes.len()
    }

    /// How many chunks are stored with snappy (no dictionary) and with zstd.
    pub fn compression_counts(&self) -> (usize, usize) {
        let snappy = self.refs.iter().filter(|r| r.0 == 0).count();
        (snappy, self.refs.len() - snappy)
    }

    /// Storage statistics: (snappy chunks, their span bytes), (zstd chunks, their span bytes),
    /// (dictionaries, their span bytes).
    pub fn storage_stats(&self) -> [(u64, u64); 3] {
        let span_len = |id: u32| -> u64 {
            let i = id as usize;
            let end = self.span_ends.get(i.wrapping_sub(1)).copied().unwrap_or(0);
            let start = if i >= 2 {
                self.span_ends.get(i - 2).copied().unwrap_or(0)
            } else {
                0
            };
            end.saturating_sub(start)
        };
        let mut out = [(0u64, 0u64); 3];
        let mut dicts = std::collections::BTreeSet::new();
        for &(dict, data) in &self.refs {
            let slot = if dict == 0 { 0 } else { 1 };
            out[slot].0 += 1;
            out[slot].1 += span_len(data);
            if dict != 0 {
                dicts.insert(dict);
            }
        }
        for d in dicts {
            out[2].0 += 1;
            out[2].1 += span_len(d);
        }
        out
    }

    fn id_of(&self, address: &Address) -> Option<usize> {
        let bytes = address.as_bytes();
        let prefix = be_u64(bytes, 0)?;
        let start = self.prefixes.partition_point(|&p| p < prefix);
        (start..self.prefixes.len())
            .take_while(|&i| self.prefixes.get(i) == Some(&prefix))
            .find(|&i| self.suffixes.get(i).map(|s| &s[..]) == bytes.get(8..))
    }

    /// True if the archive holds `address`.
    pub fn has(&self, address: &Address) -> bool {
        self.id_of(address).is_some()
    }

    /// Offset and length of span `id` (span 0 is empty).
    fn span_range(&self, id: u32) -> (u64, u64) {
        let i = id as usize;
        let end = self.span_ends.get(i.wrapping_sub(1)).copied().unwrap_or(0);
        let start = if i >= 2 {
            self.span_ends.get(i - 2).copied().unwrap_or(0)
        } else {
            0
        };
        (start, end - start.min(end))
    }

    fn span(&self, id: u32) -> Result<(u64, Vec<u8>)> {
        let (start, len) = self.span_range(id);
        Ok((start, self.backing.read_at(start, len as usize)?))
    }

    /// Where the chunk's record is, for readers that fetch it themselves: its data span
    /// (offset, length) and, for a zstd chunk, its dictionary's span (a zstd frame itself);
    /// `None` if the archive does not hold it.
    pub fn record_spans(&self, address: &Address) -> Option<(ByteSpan, Option<ByteSpan>)> {
        let &(dict, data) = self.refs.get(self.id_of(address)?)?;
        let dictionary = (dict != 0).then(|| self.span_range(dict));
        Some((self.span_range(data), dictionary))
    }

    fn dictionary(&self, id: u32) -> Result<Dictionary> {
        if let Ok(map) = self.dictionaries.lock() {
            if let Some(d) = map.get(&id) {
                return Ok(d.clone());
            }
        }
        let (offset, bytes) = self.span(id)?;
        let raw = decode_zstd(&bytes, None, self.name(), offset)?;
        let dict = Arc::new(zstd::dict::DecoderDictionary::copy(&raw));
        if let Ok(mut map) = self.dictionaries.lock() {
            map.insert(id, dict.clone());
        }
        Ok(dict)
    }

    /// Decodes a zstd frame against a dictionary. Frames that state their content size (Dolt's
    /// do) are decoded in one shot with the shared context straight into the cached buffer;
    /// others go through the streaming decoder.
    fn decode_with_dictionary(
        &self,
        data: &[u8],
        dict: &Dictionary,
        offset: u64,
    ) -> Result<Arc<[u8]>> {
        use zstd::zstd_safe;
        let known = match zstd_safe::get_frame_content_size(data) {
            Ok(Some(size)) if size <= MAX_CHUNK_LEN as u64 => Some(size as usize),
            _ => None,
        };
        if let (Some(len), Ok(mut ctx)) = (known, self.dctx.lock()) {
            let mut out: Arc<[u8]> = std::iter::repeat_n(0u8, len).collect();
            if let Some(buf) = Arc::get_mut(&mut out) {
                return match ctx.decompress_using_ddict(buf, data, dict.as_ddict()) {
                    Ok(n) if n == len => Ok(out),
                    Ok(n) => Err(corrupt(
                        self.name(),
                        offset,
                        format!("zstd frame decodes to {n} bytes, its header says {len}"),
                    )),
                    Err(code) => Err(corrupt(
                        self.name(),
                        offset,
                        format!("bad zstd data: {}", zstd_safe::get_error_name(code)),
                    )),
                };
            }
        }
        Ok(Arc::from(decode_zstd(
            data,
            Some(dict),
            self.name(),
            offset,
        )?))
    }

    /// The decompressed chunk and the offset of its data span, or `None` if absent.
    pub fn read(&self, address: &Address) -> Result<Option<(Arc<[u8]>, u64)>> {
        let Some(id) = self.id_of(address) else {
            return Ok(None);
        };
        let Some(&(dict, data)) = self.refs.get(id) else {
            return Ok(None);
        };
        let (offset, bytes) = self.span(data)?;
        let chunk = if dict == 0 {
            decode_snappy_record(&bytes, self.name(), offset)?
        } else {
            let d = self.dictionary(dict)?;
            self.decode_with_dictionary(&bytes, &d, offset)?
        };
        Ok(Some((chunk, offset)))
    }

    /// Every address, in index (address) order.
    pub fn addresses(&self) -> Vec<Address> {
        self.prefixes
            .iter()
            .zip(&self.suffixes)
            .map(|(p, s)| {
                let mut a = [0u8; 20];
                a[..8].copy_from_slice(&p.to_be_bytes());
                a[8..].copy_from_slice(s);
                Address(a)
            })
            .collect()
    }
}
