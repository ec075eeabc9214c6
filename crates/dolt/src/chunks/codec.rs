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

/// Decodes a snappy‖CRC-32C record (at `offset` in `file`, for errors), straight into the
/// shared allocation the chunk cache keeps (no second copy).
pub fn decode_snappy_record(record: &[u8], file: &str, offset: u64) -> Result<Arc<[u8]>> {
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
    // A fresh `Arc` is unique, so `get_mut` always succeeds; the zero fill is the price of
    // staying free of `unsafe`.
    let mut out: Arc<[u8]> = std::iter::repeat_n(0u8, len).collect();
    let Some(buf) = Arc::get_mut(&mut out) else {
        return Err(corrupt(file, offset, "chunk buffer is shared"));
    };
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
    Ok(out)
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
        let mut buf = vec![0u8; len];
        read_exact_at(&self.file, &mut buf, offset).map_err(|source| DoltError::Io {
            file: format!("{} (offset {offset})", self.name),
            source,
        })?;
        Ok(buf)
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

/// Where a chunk file's bytes come from: a file on disk (read on demand) or memory (tests,
/// fuzzing, embedding).
#[derive(Debug)]
pub enum Backing {
    /// A file read with positioned reads.
    File(PositionedFile),
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
            Backing::Memory { name, .. } => name,
        }
    }

    /// Total length in bytes.
    pub fn len(&self) -> u64 {
        match self {
            Backing::File(f) => f.len(),
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
}
