//! The two chunk codecs Dolt uses on disk, and positioned reads of chunk files.
//!
//! * "Compressed chunk" (table files, journal payloads, archive spans without a dictionary):
//!   snappy block format followed by the CRC-32C (big-endian u32) of the snappy bytes.
//! * zstd frames decoded with a dictionary (archives).

use std::fs::File;
use std::sync::Arc;

use crate::error::{corrupt, DoltError, Result};

/// Largest decompressed chunk accepted. Dolt's chunks are far smaller (tree nodes aim at 4 KiB,
/// blob leaves are 4000 bytes, journal records are capped at 5 MiB); the bound stops a
/// corrupted length header from allocating gigabytes.
pub const MAX_CHUNK_LEN: usize = 64 << 20;

/// Reads a big-endian u32 at `at`, if in bounds.
pub(crate) fn be_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let b: [u8; 4] = bytes.get(at..at.checked_add(4)?)?.try_into().ok()?;
    Some(u32::from_be_bytes(b))
}

/// Reads a big-endian u64 at `at`, if in bounds.
pub(crate) fn be_u64(bytes: &[u8], at: usize) -> Option<u64> {
    let b: [u8; 8] = bytes.get(at..at.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_be_bytes(b))
}

/// Checks a snappy‖CRC-32C record's CRC and returns its snappy bytes and decompressed length.
pub(crate) fn snappy_payload<'r>(
    record: &'r [u8],
    file: &str,
    offset: u64,
) -> Result<(&'r [u8], usize)> {
    let Some(split) = record.len().checked_sub(4) else {
        return Err(corrupt(
            file,
            offset,
            "compressed chunk shorter than its CRC",
        ));
    };
    let (data, crc) = record.split_at(split);
    let stored = be_u32(crc, 0).unwrap_or(0);
    let actual = crc32c::crc32c(data);
    if stored != actual {
        return Err(corrupt(
            file,
            offset,
            format!("chunk CRC-32C is {actual:08x}, record says {stored:08x}"),
        ));
    }
    let len = snap::raw::decompress_len(data)
        .map_err(|e| corrupt(file, offset, format!("bad snappy header: {e}")))?;
    if len > MAX_CHUNK_LEN {
        return Err(corrupt(
            file,
            offset,
            format!("chunk claims {len} bytes, more than the {MAX_CHUNK_LEN} limit"),
        ));
    }
    Ok((data, len))
}

/// Decompresses snappy `data` of decompressed length `len` into `buf` (exactly `len` bytes).
fn snappy_into(data: &[u8], len: usize, buf: &mut [u8], file: &str, offset: u64) -> Result<()> {
    let n = snap::raw::Decoder::new()
        .decompress(data, buf)
        .map_err(|e| corrupt(file, offset, format!("bad snappy data: {e}")))?;
    if n != len {
        return Err(corrupt(
            file,
            offset,
            format!("snappy data decodes to {n} bytes, its header says {len}"),
        ));
    }
    Ok(())
}

/// Decodes a snappy‖CRC-32C record (at `offset` in `file`, for errors), straight into the
/// shared allocation the chunk cache keeps (no second copy).
pub fn decode_snappy_record(record: &[u8], file: &str, offset: u64) -> Result<Arc<[u8]>> {
    let (data, len) = snappy_payload(record, file, offset)?;
    // A fresh `Arc` is unique, so `get_mut` always succeeds; the zero fill is the price of
    // staying free of `unsafe`.
    let mut out: Arc<[u8]> = std::iter::repeat_n(0u8, len).collect();
    let Some(buf) = Arc::get_mut(&mut out) else {
        return Err(corrupt(file, offset, "chunk buffer is shared"));
    };
    snappy_into(data, len, buf, file, offset)?;
    Ok(out)
}

/// Decodes a snappy‖CRC-32C record into `out` (replacing its contents). A reused `out` is only
/// zero-filled where it grows, so bulk readers that keep their buffers pay no fill and no
/// allocation per chunk.
pub fn decode_snappy_record_into(
    record: &[u8],
    out: &mut Vec<u8>,
    file: &str,
    offset: u64,
) -> Result<()> {
    let (data, len) = snappy_payload(record, file, offset)?;
    out.resize(len, 0);
    snappy_into(data, len, out, file, offset)
}

/// Decompresses one zstd frame, optionally against a prepared dictionary, bounded by
/// [`MAX_CHUNK_LEN`].
pub fn decode_zstd(
    data: &[u8],
    dict: Option<&zstd::dict::DecoderDictionary<'static>>,
    file: &str,
    offset: u64,
) -> Result<Vec<u8>> {
    use std::io::Read;
    let err = |e: std::io::Error| corrupt(file, offset, format!("bad zstd data: {e}"));
    let mut out = Vec::new();
    match dict {
        Some(d) => {
            let dec =
                zstd::stream::read::Decoder::with_prepared_dictionary(data, d).map_err(err)?;
            dec.take(MAX_CHUNK_LEN as u64 + 1)
                .read_to_end(&mut out)
                .map_err(err)?;
        }
        None => {
            let dec = zstd::stream::read::Decoder::with_buffer(data).map_err(err)?;
            dec.take(MAX_CHUNK_LEN as u64 + 1)
                .read_to_end(&mut out)
                .map_err(err)?;
        }
    }
    if out.len() > MAX_CHUNK_LEN {
        return Err(corrupt(
            file,
            offset,
            "zstd frame decodes to too many bytes",
        ));
    }
    Ok(out)
}

/// A chunk file opened for positioned reads (no seeking state, so `&self` reads are fine from
/// several threads).
#[derive(Debug)]
pub struct PositionedFile {
    file: File,
    name: String,
    len: u64,
}

impl PositionedFile {
    /// Opens `path` read-only; `name` is used in errors.
    pub fn open(path: &std::path::Path) -> Result<PositionedFile> {
        let name = path.display().to_string();
        let io = |source| DoltError::Io {
            file: name.clone(),
            source,
        };
        let file = File::open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        Ok(PositionedFile { file, name, len })
    }

    /// The file's name as given when opened.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The file's length when opened.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True for an empty file.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Reads exactly `len` bytes at `offset`; an error names the file and offset.
    pub fn read_at(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        self.check_range(offset, len)?;
        // `vec!` of zeros comes from the allocator already zeroed (no fill for large reads).
        let mut buf = vec![0u8; len];
        read_exact_at(&self.file, &mut buf, offset)
            .map_err(|source| self.io_error(offset, source))?;
        Ok(buf)
    }

    fn check_range(&self, offset: u64, len: usize) -> Result<()> {
        let end = offset.checked_add(len as u64);
        if end.is_none_or(|e| e > self.len) {
            return Err(corrupt(
                &self.name,
                offset,
                format!(
                    "read of {len} bytes runs past the end of the file ({} bytes)",
                    self.len
                ),
            ));
        }
        Ok(())
    }

    fn io_error(&self, offset: u64, source: std::io::Error) -> DoltError {
        DoltError::Io {
            file: format!("{} (offset {offset})", self.name),
            source,
        }
    }

    /// Reads exactly `len` bytes at `offset` into `buf` (replacing its contents; zero-filled
    /// only where it grows, so a reused buffer costs no fill).
    pub fn read_at_into(&self, offset: u64, len: usize, buf: &mut Vec<u8>) -> Result<()> {
        self.check_range(offset, len)?;
        buf.resize(len, 0);
        read_exact_at(&self.file, buf, offset).map_err(|source| self.io_error(offset, source))
    }
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(windows)]
fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> std::io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        let n = file.seek_read(buf, offset)?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf = &mut buf[n..];
        offset += n as u64;
    }
    Ok(())
}

/// A chunk file whose bytes are read by range from elsewhere (an object in a bucket: the
/// crate that talks to the bucket implements it; this crate does no network I/O).
pub trait RangeRead: Send + Sync + std::fmt::Debug {
    /// The name used in errors (the object's URL).
    fn name(&self) -> &str;
    /// Total length in bytes.
    fn size(&self) -> u64;
    /// Exactly `len` bytes at `offset`, or an error naming the file and offset.
    fn read_at(&self, offset: u64, len: usize) -> Result<Vec<u8>>;
}

/// Where a chunk file's bytes come from: a file on disk (read on demand), memory (tests,
/// fuzzing, embedding) or range reads of a remote object ([`RangeRead`]).
#[derive(Debug)]
pub enum Backing {
    /// A file read with positioned reads.
    File(PositionedFile),
    /// A remote object read by range.
    Ranged(std::sync::Arc<dyn RangeRead>),
    /// Bytes held in memory, with a name for errors.
    Memory {
        /// Name used in errors.
        name: String,
        /// The whole file.
        bytes: Vec<u8>,
    },
}

impl Backing {
    /// The name used in errors.
    pub fn name(&self) -> &str {
        match self {
            Backing::File(f) => f.name(),
            Backing::Ranged(r) => r.name(),
            Backing::Memory { name, .. } => name,
        }
    }

    /// Total length in bytes.
    pub fn len(&self) -> u64 {
        match self {
            Backing::File(f) => f.len(),
            Backing::Ranged(r) => r.size(),
            Backing::Memory { bytes, .. } => bytes.len() as u64,
        }
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Exactly `len` bytes at `offset`, or an error naming the file and offset.
    pub fn read_at(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        match self {
            Backing::File(f) => f.read_at(offset, len),
            Backing::Ranged(r) => r.read_at(offset, len),
            Backing::Memory { name, bytes } => usize::try_from(offset)
                .ok()
                .and_then(|o| bytes.get(o..o.checked_add(len)?))
                .map(<[u8]>::to_vec)
                .ok_or_else(|| {
                    corrupt(
                        name,
                        offset,
                        format!(
                            "read of {len} bytes runs past the end of the file ({} bytes)",
                            bytes.len()
                        ),
                    )
                }),
        }
    }

    /// Exactly `len` bytes at `offset` into `buf` (replacing its contents), or an error naming
    /// the file and offset. Reusing `buf` avoids an allocation and a zero fill per read.
    pub fn read_at_into(&self, offset: u64, len: usize, buf: &mut Vec<u8>) -> Result<()> {
        match self {
            Backing::File(f) => f.read_at_into(offset, len, buf),
            Backing::Ranged(r) => {
                *buf = r.read_at(offset, len)?;
                Ok(())
            }
            Backing::Memory { name, bytes } => {
                let src = usize::try_from(offset)
                    .ok()
                    .and_then(|o| bytes.get(o..o.checked_add(len)?))
                    .ok_or_else(|| {
                        corrupt(
                            name,
                            offset,
                            format!(
                                "read of {len} bytes runs past the end of the file ({} bytes)",
                                bytes.len()
                            ),
                        )
                    })?;
                buf.clear();
                buf.extend_from_slice(src);
                Ok(())
            }
        }
    }
}
