//! The manifest: the store's single commit point. It names the live chunk files and holds the
//! named roots; a commit replaces it atomically (write a temporary file, fsync, rename, fsync the
//! directory). Byte layout in `docs/FORMAT.md`.

use std::collections::BTreeMap;

use prollystore_format::{Address, HashProfile, ADDRESS_LEN};
use xxhash_rust::xxh3::xxh3_64;

use super::chunk_file::FileRecord;
use super::StoreError;

/// The manifest's file name.
pub const MANIFEST: &str = "MANIFEST";
/// First 8 bytes of the manifest.
pub(super) const MAGIC: [u8; 8] = *b"PRLYMANI";
/// Manifest format version.
pub(super) const VERSION: u32 = 1;
/// Fixed part before the file records.
const HEAD_LEN: usize = 40;
/// One file record.
const RECORD_LEN: usize = 32;
/// Longest root name, in bytes.
pub(super) const MAX_ROOT_NAME: usize = 1024;

/// One committed state of the store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// The hash profile of every chunk in the store.
    pub profile: HashProfile,
    /// Incremented by every commit; lets readers tell whether anything changed.
    pub generation: u64,
    /// The next chunk file's sequence number (greater than every seq ever published).
    pub next_seq: u64,
    /// Live chunk files, by increasing seq.
    pub files: Vec<FileRecord>,
    /// Named roots.
    pub roots: BTreeMap<String, Address>,
}

/// Checks that `name` may be a root name.
pub(super) fn check_root_name(name: &str) -> Result<(), StoreError> {
    if name.is_empty() || name.len() > MAX_ROOT_NAME {
        return Err(StoreError::InvalidArgument(format!(
            "root names are 1 to {MAX_ROOT_NAME} bytes, {:?} is {}",
            name,
            name.len()
        )));
    }
    Ok(())
}

fn corrupted(offset: usize, reason: impl Into<String>) -> StoreError {
    StoreError::Corrupted {
        file: MANIFEST.to_string(),
        offset: offset as u64,
        reason: reason.into(),
    }
}

/// A bounds-checked little-endian reader over the manifest bytes.
struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], StoreError> {
        let s = self
            .at
            .checked_add(n)
            .and_then(|end| self.b.get(self.at..end))
            .ok_or_else(|| corrupted(self.at, format!("truncated in {what}")))?;
        self.at += n;
        Ok(s)
    }
    fn u64(&mut self, what: &str) -> Result<u64, StoreError> {
        let s = self.take(8, what)?;
        Ok(u64::from_le_bytes(s.try_into().unwrap_or([0; 8])))
    }
    fn u32(&mut self, what: &str) -> Result<u32, StoreError> {
        let s = self.take(4, what)?;
        Ok(u32::from_le_bytes(s.try_into().unwrap_or([0; 4])))
    }
    fn u16(&mut self, what: &str) -> Result<u16, StoreError> {
        let s = self.take(2, what)?;
        Ok(u16::from_le_bytes(s.try_into().unwrap_or([0; 2])))
    }
}

impl Manifest {
    /// An empty store's manifest.
    pub fn empty(profile: HashProfile) -> Manifest {
        Manifest {
            profile,
            generation: 0,
            next_seq: 1,
            files: Vec::new(),
            roots: BTreeMap::new(),
        }
    }

    /// The manifest's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEAD_LEN + self.files.len() * RECORD_LEN + 64);
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&[self.profile.tag(), 0, 0, 0]);
        out.extend_from_slice(&self.generation.to_le_bytes());
        out.extend_from_slice(&self.next_seq.to_le_bytes());
        out.extend_from_slice(&(self.files.len() as u32).to_le_bytes());
        out.extend_from_slice(&(self.roots.len() as u32).to_le_bytes());
        for f in &self.files {
            out.extend_from_slice(&f.seq.to_le_bytes());
            out.extend_from_slice(&f.chunk_count.to_le_bytes());
            out.extend_from_slice(&f.file_len.to_le_bytes());
            out.extend_from_slice(&f.checksum.to_le_bytes());
        }
        for (name, addr) in &self.roots {
            out.extend_from_slice(&(name.len() as u16).to_le_bytes());
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(addr.as_bytes());
        }
        let sum = xxh3_64(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        out
    }

    /// Parses and validates manifest bytes.
    pub fn decode(b: &[u8]) -> Result<Manifest, StoreError> {
        if b.len() < HEAD_LEN + 8 {
            return Err(corrupted(b.len(), "file is too short to be a manifest"));
        }
        let body_len = b.len() - 8;
        let (body, tail) = b.split_at(body_len);
        let stored = u64::from_le_bytes(tail.try_into().unwrap_or([0; 8]));
        if body.get(..8) != Some(&MAGIC[..]) {
            return Err(corrupted(0, "bad magic: not a manifest"));
        }
        if xxh3_64(body) != stored {
            return Err(corrupted(body_len, "checksum does not match"));
        }
        let mut r = Reader { b: body, at: 8 };
        let version = r.u32("version")?;
        if version != VERSION {
            return Err(corrupted(8, format!("unsupported version {version}")));
        }
        let p = r.take(4, "profile")?;
        let profile = p
            .first()
            .copied()
            .and_then(HashProfile::from_tag)
            .filter(|_| p.get(1..) == Some(&[0u8; 3][..]))
            .ok_or_else(|| corrupted(12, "unknown hash profile"))?;
        let generation = r.u64("generation")?;
        let next_seq = r.u64("next file number")?;
        let file_count = r.u32("file count")? as usize;
        let root_count = r.u32("root count")? as usize;
        if file_count > body_len / RECORD_LEN {
            return Err(corrupted(32, "file count exceeds the manifest's size"));
        }
        let mut files = Vec::with_capacity(file_count);
        for _ in 0..file_count {
            let at = r.at;
            let rec = FileRecord {
                seq: r.u64("file record")?,
                chunk_count: r.u64("file record")?,
                file_len: r.u64("file record")?,
                checksum: r.u64("file record")?,
            };
            let prev = files.last().map(|f: &FileRecord| f.seq);
            if prev.is_some_and(|p| p >= rec.seq) || rec.seq >= next_seq || rec.seq == 0 {
                return Err(corrupted(
                    at,
                    "file numbers are not increasing and below the next number",
                ));
            }
            files.push(rec);
        }
        let mut roots = BTreeMap::new();
        let mut prev: Option<String> = None;
        for _ in 0..root_count {
            let at = r.at;
            let n = r.u16("root name length")? as usize;
            let name = r.take(n, "root name")?;
            let name = std::str::from_utf8(name)
                .map_err(|_| corrupted(at + 2, "root name is not UTF-8"))?;
            if name.is_empty() || name.len() > MAX_ROOT_NAME {
                return Err(corrupted(at, "root name length out of range"));
            }
            if prev.as_deref().is_some_and(|p| p >= name) {
                return Err(corrupted(at, "root names are not strictly increasing"));
            }
            let addr = Address::from_slice(r.take(ADDRESS_LEN, "root address")?)
                .ok_or_else(|| corrupted(at, "root address"))?;
            roots.insert(name.to_string(), addr);
            prev = Some(name.to_string());
        }
        if r.at != body_len {
            return Err(corrupted(r.at, "trailing bytes after the roots"));
        }
        Ok(Manifest {
            profile,
            generation,
            next_seq,
            files,
            roots,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_every_flip_detected() {
        let mut m = Manifest::empty(HashProfile::Dolt);
        m.generation = 7;
        m.next_seq = 9;
        m.files.push(FileRecord {
            seq: 3,
            chunk_count: 2,
            file_len: 100,
            checksum: 5,
        });
        m.roots.insert("main".into(), Address([1; 20]));
        m.roots.insert("dev".into(), Address([2; 20]));
        let bytes = m.encode();
        assert_eq!(Manifest::decode(&bytes).unwrap(), m);
        for i in 0..bytes.len() {
            for bit in 0..8 {
                let mut b = bytes.clone();
                b[i] ^= 1 << bit;
                assert!(Manifest::decode(&b).is_err(), "flip at {i} bit {bit}");
            }
            assert!(Manifest::decode(&bytes[..i]).is_err());
        }
    }
}
