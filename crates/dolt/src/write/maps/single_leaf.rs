//! Trees small enough to be one leaf node, written without a chunker.
//!
//! Dolt's chunker (`keySplitter`) considers no boundary before a node holds 512 bytes of keys
//! and values (`minChunkSize`), so a map whose items total less is certainly one leaf — the
//! root. The table maps of small databases are such trees; larger ones are refused here (the
//! general path is [`super::address_map`]).

use prollystore_format::message::AddressMapWriter;
use prollystore_format::{Address, ADDRESS_LEN};

use crate::error::{encode, DoltError, Result};

/// Dolt's `minChunkSize`: no node boundary before this many item bytes.
const MIN_CHUNK_SIZE: usize = 512;

/// An `AddressMap` (`ADRM`) of `entries` as one leaf, names sorted bytewise as Dolt keeps them.
pub(crate) fn address_map_leaf(entries: &[(Vec<u8>, Address)]) -> Result<Vec<u8>> {
    let mut sorted: Vec<&(Vec<u8>, Address)> = entries.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    if sorted.windows(2).any(|w| w[0].0 == w[1].0) {
        return Err(encode("address map", "a name twice"));
    }
    let size: usize = sorted.iter().map(|(k, _)| k.len() + ADDRESS_LEN).sum();
    if size >= MIN_CHUNK_SIZE {
        return Err(too_big("address map", size));
    }
    let mut keys = Vec::new();
    let mut offsets = vec![0u16];
    let mut addresses = Vec::new();
    for (k, a) in sorted {
        keys.extend_from_slice(k);
        offsets.push(keys.len() as u16);
        addresses.extend_from_slice(a.as_bytes());
    }
    let mut w = AddressMapWriter::new();
    let chunk = w
        .write(&keys, &offsets, &addresses, &[], 0)
        .map_err(|e| encode("address map", e))?;
    Ok(chunk.to_vec())
}

fn too_big(what: &str, size: usize) -> DoltError {
    DoltError::Unsupported(format!(
        "a {what} of {size} item bytes may span several nodes; writing it needs Dolt's chunker \
         (not done yet)"
    ))
}
