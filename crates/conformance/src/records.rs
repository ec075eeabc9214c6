//! The vectors' chunk dumps, `maps/<name>.chunks`: one record per chunk reachable from a map's
//! root (the root first), each `address[20] | length u32 LE | chunk` as Dolt stored it.
//!
//! Read here rather than by a store, so that loading a dump goes through the public
//! [`ChunkStore::put`] like any other writer and checks the store's own addressing.

use std::path::Path;

use prollystore::format::Address;
use prollystore::ChunkStore;

/// Bytes before each chunk: its address and its length.
const HEADER_LEN: usize = 20 + 4;

/// One record of a dump.
pub struct Record<'a> {
    /// The address Dolt recorded for the chunk.
    pub address: Address,
    /// The chunk's bytes.
    pub chunk: &'a [u8],
}

/// The records of a dump, in file order; a malformed record yields an error naming it and
/// ends the iteration.
pub struct Records<'a> {
    data: &'a [u8],
    pos: usize,
    index: usize,
}

/// Iterates the records of the dump `data`.
pub fn records(data: &[u8]) -> Records<'_> {
    Records {
        data,
        pos: 0,
        index: 0,
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<Record<'a>, String>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.data.len() {
            return None;
        }
        let pos = self.pos;
        // Whatever happens, this record is the last one on error.
        self.pos = self.data.len();
        let Some(header) = self.data.get(pos..pos + HEADER_LEN) else {
            return Some(Err(format!("truncated record header at byte {pos}")));
        };
        let address = Address::from_slice(&header[..20]).unwrap_or(Address::ZERO);
        let len = u32::from_le_bytes([header[20], header[21], header[22], header[23]]) as usize;
        let start = pos + HEADER_LEN;
        let Some(chunk) = self.data.get(start..start + len) else {
            return Some(Err(format!(
                "record {} runs past the end of the file",
                self.index
            )));
        };
        self.pos = start + len;
        self.index += 1;
        Some(Ok(Record { address, chunk }))
    }
}

/// Stores every chunk of the dump at `path` in `store` with [`ChunkStore::put`], checking that
/// each lands at the address Dolt recorded; returns the addresses in file order.
pub fn load_chunks(store: &impl ChunkStore, path: &Path) -> Result<Vec<Address>, String> {
    let name = path.display();
    let bytes = std::fs::read(path).map_err(|e| format!("{name}: {e}"))?;
    let mut order = Vec::new();
    for record in records(&bytes) {
        let Record { address, chunk } = record.map_err(|e| format!("{name}: {e}"))?;
        let stored = store.put(chunk).map_err(|e| format!("{name}: {e}"))?;
        if stored != address {
            return Err(format!(
                "{name}: record {} hashes to {}, the file says {}",
                order.len(),
                stored.to_hex(),
                address.to_hex()
            ));
        }
        order.push(address);
    }
    Ok(order)
}
