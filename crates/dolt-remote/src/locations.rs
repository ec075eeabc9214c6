//! The download locations a remote hands out, checked and turned into range reads, and the
//! chunks cut out of what those reads return. Everything here is decoded by hand from
//! untrusted bytes (the server's responses and the files it serves), so every function
//! returns an error for bad input and none panics (fuzzed by `fuzz/fuzz_targets/
//! dolt_remote_locations.rs`).
//!
//! A location is a file URL and, per chunk, the byte range of its record in that file, plus
//! for an archive's zstd chunks the range of the dictionary it was compressed with. A record
//! is Dolt's compressed chunk: snappy‖CRC-32C (table files, journals, archive chunks without
//! a dictionary), or a zstd frame decoded against the dictionary, which is itself a zstd frame
//! ([`prollystore_dolt::chunks::codec`] decodes both, as the local reader does).

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use prollystore_dolt::chunks::codec::{decode_snappy_record, decode_zstd, MAX_CHUNK_LEN};
use prollystore_format::Address;

use crate::proto::download_loc::Location;
use crate::proto::GetDownloadLocsResponse;

/// Largest range accepted for one chunk record or dictionary: a compressed chunk of
/// [`MAX_CHUNK_LEN`] bytes plus snappy's worst-case growth and the CRC.
pub const MAX_RECORD_LEN: u64 = MAX_CHUNK_LEN as u64 + MAX_CHUNK_LEN as u64 / 6 + 64;

/// Ranges of one file closer than this are read in one request (the bytes between are read and
/// dropped; fewer round trips).
pub const MERGE_GAP: u64 = 16 << 10;

/// Largest single range request made by merging.
pub const MAX_SPAN: u64 = 8 << 20;

/// One chunk's record in a served file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkRange {
    /// The chunk's address.
    pub address: Address,
    /// Where its record starts.
    pub offset: u64,
    /// The record's length.
    pub length: u64,
    /// The dictionary (offset, length) its zstd frame needs; `None` for snappy records.
    pub dictionary: Option<(u64, u64)>,
}

/// Adds the ranges of `response` to `plan` (file URL → chunk ranges), checking each: an HTTP
/// range location (the whole-chunk `HttpGetChunk` form is refused), a URL with an http or https
/// scheme, 20-byte hashes the client asked for (`requested`), lengths within
/// [`MAX_RECORD_LEN`], no offset overflow. Records in `found` the chunks located. A chunk
/// located twice keeps its first location.
pub fn add_locations(
    response: &GetDownloadLocsResponse,
    requested: &HashSet<Address>,
    found: &mut HashSet<Address>,
    plan: &mut BTreeMap<String, Vec<ChunkRange>>,
) -> Result<(), String> {
    for loc in &response.locs {
        let range = match &loc.location {
            Some(Location::HttpGetRange(r)) => r,
            Some(Location::HttpGet(_)) => {
                return Err("a whole-chunk HttpGetChunk location (not supported)".into())
            }
            None => return Err("a download location without a location".into()),
        };
        check_url(&range.url)?;
        for chunk in &range.ranges {
            let address = Address::from_slice(&chunk.hash)
                .ok_or_else(|| format!("a hash of {} bytes, not 20", chunk.hash.len()))?;
            if !requested.contains(&address) {
                return Err(format!("chunk {address}, which was not asked for"));
            }
            let length = u64::from(chunk.length);
            check_range(chunk.offset, length, &address, "record")?;
            let dictionary = match chunk.dictionary_length {
                0 => None,
                n => {
                    let n = u64::from(n);
                    check_range(chunk.dictionary_offset, n, &address, "dictionary")?;
                    Some((chunk.dictionary_offset, n))
                }
            };
            if found.insert(address) {
                plan.entry(range.url.clone()).or_default().push(ChunkRange {
                    address,
                    offset: chunk.offset,
                    length,
                    dictionary,
                });
            }
        }
    }
    Ok(())
}

fn check_url(text: &str) -> Result<(), String> {
    let url = url::Url::parse(text).map_err(|e| format!("download URL {text:?}: {e}"))?;
    match url.scheme() {
        "http" | "https" => Ok(()),
        other => Err(format!("download URL {text:?} has scheme {other:?}")),
    }
}

/// Checks one record's or dictionary's range: a length within [`MAX_RECORD_LEN`], no overflow.
pub(crate) fn check_range(
    offset: u64,
    length: u64,
    address: &Address,
    what: &str,
) -> Result<(), String> {
    if !(4..=MAX_RECORD_LEN).contains(&length) {
        return Err(format!(
            "chunk {address}: a {what} of {length} bytes (must be 4 to {MAX_RECORD_LEN})"
        ));
    }
    offset
        .checked_add(length)
        .ok_or_else(|| format!("chunk {address}: {what} offset {offset} + {length} overflows"))?;
    Ok(())
}

/// A byte range of one file read in one request, and what it serves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    /// First byte.
    pub offset: u64,
    /// Length in bytes.
    pub length: u64,
}

/// Merges ranges (offset, length) of one file into spans: sorted, overlapping or closer than
/// [`MERGE_GAP`] merged while a span stays within [`MAX_SPAN`] (a single larger range stays
/// one span). Ranges must have been checked ([`add_locations`]: no overflow).
pub fn merge_ranges(mut ranges: Vec<(u64, u64)>) -> Vec<Span> {
    ranges.sort_unstable();
    let mut out: Vec<Span> = Vec::new();
    for (offset, length) in ranges {
        let end = offset.saturating_add(length);
        if let Some(last) = out.last_mut() {
            let last_end = last.offset.saturating_add(last.length);
            if offset <= last_end.saturating_add(MERGE_GAP)
                && end.max(last_end) - last.offset <= MAX_SPAN
            {
                last.length = end.max(last_end) - last.offset;
                continue;
            }
        }
        out.push(Span { offset, length });
    }
    out
}

/// The bytes of range (`offset`, `length`) inside a span read at `span_offset`, or an error if
/// the span's bytes do not cover it.
pub fn slice(span_offset: u64, body: &[u8], offset: u64, length: u64) -> Result<&[u8], String> {
    let start = offset
        .checked_sub(span_offset)
        .ok_or_else(|| format!("range at {offset} starts before the span at {span_offset}"))?;
    let end = start
        .checked_add(length)
        .ok_or_else(|| format!("range at {offset} + {length} overflows"))?;
    let (Ok(start), Ok(end)) = (usize::try_from(start), usize::try_from(end)) else {
        return Err(format!("range at {offset} + {length} is too large"));
    };
    body.get(start..end).ok_or_else(|| {
        format!(
            "range {offset}..{} is past the {} bytes read at {span_offset}",
            offset.saturating_add(length),
            body.len()
        )
    })
}

/// A decoded zstd dictionary, shared by the chunks compressed with it.
pub type Dictionary = Arc<zstd::dict::DecoderDictionary<'static>>;

/// Decodes a dictionary range (itself a zstd frame).
pub fn decode_dictionary(bytes: &[u8], file: &str, offset: u64) -> Result<Dictionary, String> {
    let raw = decode_zstd(bytes, None, file, offset).map_err(|e| e.to_string())?;
    Ok(Arc::new(zstd::dict::DecoderDictionary::copy(&raw)))
}

/// Decodes one chunk record: snappy‖CRC-32C without a dictionary, else a zstd frame against
/// it. The caller checks the result against the chunk's address.
pub fn decode_record(
    record: &[u8],
    dictionary: Option<&Dictionary>,
    file: &str,
    offset: u64,
) -> Result<Arc<[u8]>, String> {
    match dictionary {
        None => decode_snappy_record(record, file, offset).map_err(|e| e.to_string()),
        Some(d) => decode_zstd(record, Some(d.as_ref()), file, offset)
            .map(Arc::from)
            .map_err(|e| e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{DownloadLoc, HttpGetRange, RangeChunk};

    fn response(url: &str, hash: Vec<u8>, offset: u64, length: u32) -> GetDownloadLocsResponse {
        GetDownloadLocsResponse {
            locs: vec![DownloadLoc {
                location: Some(Location::HttpGetRange(HttpGetRange {
                    url: url.into(),
                    ranges: vec![RangeChunk {
                        hash,
                        offset,
                        length,
                        dictionary_offset: 0,
                        dictionary_length: 0,
                    }],
                })),
                refresh_after: None,
                refresh_request: None,
            }],
            repo_token: String::new(),
        }
    }

    #[test]
    fn locations_are_checked() {
        let a = Address([7; 20]);
        let requested: HashSet<Address> = [a].into();
        let ok = |r: &GetDownloadLocsResponse| {
            add_locations(r, &requested, &mut HashSet::new(), &mut BTreeMap::new())
        };
        ok(&response("http://h:1/db/f", a.0.to_vec(), 10, 100)).unwrap();
        for (r, why) in [
            (response("http://h:1/f", vec![7; 19], 0, 10), "19 bytes"),
            (
                response("http://h:1/f", vec![8; 20], 0, 10),
                "not asked for",
            ),
            (response("ftp://h/f", a.0.to_vec(), 0, 10), "scheme"),
            (
                response("http://h:1/f", a.0.to_vec(), u64::MAX - 3, 10),
                "overflows",
            ),
            (response("http://h:1/f", a.0.to_vec(), 0, 2), "2 bytes"),
        ] {
            let e = ok(&r).unwrap_err();
            assert!(e.contains(why), "{e}");
        }
    }

    #[test]
    fn ranges_merge_within_gap_and_span_limits() {
        let spans = merge_ranges(vec![(100, 10), (0, 50), (60, 10), (MERGE_GAP * 4, 5)]);
        assert_eq!(
            spans,
            vec![
                Span {
                    offset: 0,
                    length: 110
                },
                Span {
                    offset: MERGE_GAP * 4,
                    length: 5
                }
            ]
        );
        let body = [1u8, 2, 3, 4, 5];
        assert_eq!(slice(10, &body, 11, 3).unwrap(), &[2, 3, 4]);
        assert!(slice(10, &body, 9, 1).is_err());
        assert!(slice(10, &body, 13, 3).is_err());
        assert!(slice(0, &body, u64::MAX, 2).is_err());
    }
}
