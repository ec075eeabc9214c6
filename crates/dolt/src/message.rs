//! Opening Dolt's chunk messages: the verified FlatBuffers table of a commit, tag, working set,
//! root value, table, schema or foreign-key collection, after checking the chunk's 4-byte file
//! identifier. Kept apart from navigation so that every module reading a message (the database,
//! schemas, `SHOW CREATE TABLE`) depends on this one and not on each other.

use prollystore_format::message::file_id;
use prollystore_format::Address;

use crate::error::{bad_chunk, Result};

/// Opens a verified FlatBuffers table of type `T` in a chunk whose identifier must be `id`.
pub(crate) fn fb_root<'a, T>(chunk: &'a [u8], id: &[u8; 4], address: Address) -> Result<T::Inner>
where
    T: flatbuffers::Follow<'a> + flatbuffers::Verifiable + 'a,
{
    let found = file_id(chunk).map_err(|e| bad_chunk(address, e.to_string()))?;
    if &found != id {
        return Err(bad_chunk(
            address,
            format!(
                "expected a {} message, found {}",
                String::from_utf8_lossy(id),
                String::from_utf8_lossy(&found)
            ),
        ));
    }
    let body = chunk.get(4..).unwrap_or(&[]);
    let opts = flatbuffers::VerifierOptions {
        max_depth: 16,
        max_tables: 1 << 20,
        max_apparent_size: 1 << 30,
        ignore_missing_null_terminator: false,
    };
    flatbuffers::root_with_opts::<T>(&opts, body).map_err(|e| {
        bad_chunk(
            address,
            format!("bad {} message: {e}", String::from_utf8_lossy(id)),
        )
    })
}

/// The 20-byte address in a message's `field`, or an error naming the field.
pub(crate) fn addr_field(bytes: &[u8], address: Address, field: &str) -> Result<Address> {
    Address::from_slice(bytes)
        .ok_or_else(|| bad_chunk(address, format!("{field} is not a 20-byte address")))
}
