//! Dolt's one-line text manifest (`noms/manifest`, `noms/oldgen/manifest`): which chunk files
//! make up a store, and the store's root.

use prollystore_format::Address;

use crate::error::{corrupt, malformed_from, Result};

/// The journal's reserved file name: base32 of twenty 0xFF bytes.
pub const JOURNAL_NAME: &str = "vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv";

/// A parsed manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// Storage version: 5 (current) or 4 (legacy, no GC generation).
    pub storage_version: u8,
    /// Binary format name; `__DOLT__` for the format this crate reads.
    pub format: String,
    /// Optimistic-concurrency token (opaque to readers).
    pub lock: Address,
    /// Address of the store root (`STRT`); zero for an empty store (and in oldgen).
    pub root: Address,
    /// GC generation (zero if never collected; absent in version 4).
    pub gc_gen: Address,
    /// The chunk files, in manifest order.
    pub specs: Vec<TableSpec>,
}

/// One chunk file listed in a manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableSpec {
    /// The file's name (base32; the journal is `vvvv…`; archives add `.darc` on disk).
    pub name: String,
    /// The number of chunks the manifest says the file holds.
    pub chunk_count: u32,
}

impl TableSpec {
    /// True if this spec names the chunk journal.
    pub fn is_journal(&self) -> bool {
        self.name == JOURNAL_NAME
    }
}

impl Manifest {
    /// Parses manifest bytes; `file` names the source in errors.
    pub fn parse(bytes: &[u8], file: &str) -> Result<Manifest> {
        let text = std::str::from_utf8(bytes)
            .map_err(|e| corrupt(file, e.valid_up_to() as u64, "manifest is not UTF-8"))?;
        // Tolerate a trailing newline (Dolt writes none).
        let text = text.strip_suffix('\n').unwrap_or(text);
        let mut fields = Vec::new();
        let mut start = 0usize;
        for part in text.split(':') {
            fields.push((start, part));
            start += part.len() + 1;
        }
        let field = |i: usize| -> Result<(u64, &str)> {
            fields
                .get(i)
                .map(|&(o, s)| (o as u64, s))
                .ok_or_else(|| corrupt(file, bytes.len() as u64, format!("missing field {i}")))
        };
        let (_, version) = field(0)?;
        let storage_version = match version {
            "5" => 5u8,
            "4" => 4u8,
            other => {
                return Err(corrupt(
                    file,
                    0,
                    format!("unsupported manifest version {other:?}"),
                ))
            }
        };
        let (_, format) = field(1)?;
        let addr = |i: usize| -> Result<Address> {
            let (off, s) = field(i)?;
            Address::from_base32(s).map_err(|e| corrupt(file, off, format!("bad address: {e}")))
        };
        let lock = addr(2)?;
        let root = addr(3)?;
        let (gc_gen, first_spec) = if storage_version == 5 {
            (addr(4)?, 5)
        } else {
            (Address::ZERO, 4)
        };
        let rest = fields.get(first_spec..).unwrap_or(&[]);
        if rest.len() % 2 != 0 {
            let off = rest.last().map(|&(o, _)| o as u64).unwrap_or(0);
            return Err(corrupt(file, off, "table spec without a chunk count"));
        }
        let mut specs = Vec::with_capacity(rest.len() / 2);
        for pair in rest.chunks_exact(2) {
            let (name_off, name) = pair[0];
            let (count_off, count) = pair[1];
            Address::from_base32(name)
                .map_err(|e| corrupt(file, name_off as u64, format!("bad table file name: {e}")))?;
            let chunk_count = count.parse::<u32>().map_err(|_| {
                corrupt(file, count_off as u64, format!("bad chunk count {count:?}"))
            })?;
            specs.push(TableSpec {
                name: name.to_string(),
                chunk_count,
            });
        }
        Ok(Manifest {
            storage_version,
            format: format.to_string(),
            lock,
            root,
            gc_gen,
            specs,
        })
    }
}

impl Manifest {
    /// The manifest of an empty store in Dolt's format: storage version 5, `__DOLT__`, zero
    /// lock, root and GC generation, no files.
    pub fn empty() -> Manifest {
        Manifest {
            storage_version: 5,
            format: "__DOLT__".to_string(),
            lock: Address::ZERO,
            root: Address::ZERO,
            gc_gen: Address::ZERO,
            specs: Vec::new(),
        }
    }

    /// The manifest's text as Dolt's `writeManifest` lays it out: always storage version 5
    /// (a version-4 manifest is written back as version 5 with a zero GC generation, as Dolt
    /// does), no trailing newline.
    pub fn encode(&self) -> String {
        let mut text = format!(
            "5:{}:{}:{}:{}",
            self.format,
            self.lock.to_base32(),
            self.root.to_base32(),
            self.gc_gen.to_base32()
        );
        for spec in &self.specs {
            text.push_str(&format!(":{}:{}", spec.name, spec.chunk_count));
        }
        text
    }

    /// A fresh optimistic-lock token for this manifest's root and chunk files, made as Dolt's
    /// `generateLockHash` makes it (SHA-512 of the root, the table file names, separators;
    /// first 20 bytes), so that a writer comparing tokens sees the change. Manifests with an
    /// appendix are not written by this crate, so none is hashed.
    pub(crate) fn fresh_lock(&self) -> Result<Address> {
        use sha2::{Digest, Sha512};
        let mut h = Sha512::new();
        h.update(self.root.as_bytes());
        h.update([0u8]);
        for spec in &self.specs {
            let name = Address::from_base32(&spec.name).map_err(|e| {
                malformed_from(
                    "the manifest",
                    format!("table file name {:?}", spec.name),
                    e,
                )
            })?;
            h.update(name.as_bytes());
        }
        h.update([0u8]);
        let digest = h.finalize();
        Ok(Address::from_slice(&digest[..20]).expect("20 bytes make an address"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_reference_example() {
        let m = Manifest::parse(b"5:__DOLT__:brqj5m8e9b0s0rtjmhqp4pn1k8e2akqv:8m5mnvhavk3k6b409fajpv9iipokkeuj:00000000000000000000000000000000:vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv:34", "m").unwrap();
        assert_eq!(m.specs.len(), 1);
        assert!(m.specs[0].is_journal());
        assert_eq!(m.specs[0].chunk_count, 34);
        assert!(Manifest::parse(b"5:__DOLT__:x", "m").is_err());
        assert!(Manifest::parse(b"5:__DOLT__:brqj5m8e9b0s0rtjmhqp4pn1k8e2akqv:8m5mnvhavk3k6b409fajpv9iipokkeuj:00000000000000000000000000000000:vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv", "m").is_err());
    }

    /// Dolt's own manifests, written by `dolt` after `dolt gc` and then after a write that
    /// created the journal (2026-11-27, /work/dolt-bin/dolt): our text is theirs byte for
    /// byte, and the lock token of the second is the one Dolt's formula gives for its root
    /// and files.
    #[test]
    fn encodes_and_locks_as_dolt() {
        for text in [
            "5:__DOLT__:7h6pvvvonhcpc3afi6j4vr11qvt1incr:rp3bgqm4lhl2rt17sa4f6a0v2lcoai9s:7h6pvvvonhcpc3afi6j4vr11qvt1incr:ano1kpa0i1rcg3814j7rtduang9i391n:5",
            "5:__DOLT__:atgcftmopv9fi4jbvreuh3l10h7ecevt:vv9mjavc7bdrngb9aldc4orqhvan7quc:7h6pvvvonhcpc3afi6j4vr11qvt1incr:ano1kpa0i1rcg3814j7rtduang9i391n:5:vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv:8",
        ] {
            let m = Manifest::parse(text.as_bytes(), "m").unwrap();
            assert_eq!(m.encode(), text);
            assert_eq!(m.fresh_lock().unwrap(), m.lock, "{text}");
        }
        let m = Manifest::parse(b"4:__DOLT__:brqj5m8e9b0s0rtjmhqp4pn1k8e2akqv:8m5mnvhavk3k6b409fajpv9iipokkeuj:ohffsgnklo90ert6t5a4r1bu6hc490f3:3", "m").unwrap();
        assert_eq!(
            m.encode(),
            "5:__DOLT__:brqj5m8e9b0s0rtjmhqp4pn1k8e2akqv:8m5mnvhavk3k6b409fajpv9iipokkeuj:00000000000000000000000000000000:ohffsgnklo90ert6t5a4r1bu6hc490f3:3"
        );
    }
}
