//! `StoreRoot` (`STRT`): the root of a whole store — the address map from dataset names
//! (`refs/heads/main`, `workingSets/heads/main`, `refs/tags/v1`, …) to the heads' addresses.
//! The map's root node is embedded whole.

use super::super::builder::Builder;
use super::super::generated::serial::StoreRoot;
use super::super::MessageError;
use super::{open, FILE_ID_STORE_ROOT};

const TABLE: &str = "StoreRoot";
const NUM_FIELDS: usize = 1;

/// The fields of a store-root message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreRootFields<'a> {
    /// The root node (`ADRM` chunk bytes) of the dataset address map.
    pub address_map: &'a [u8],
}

impl<'a> StoreRootFields<'a> {
    /// Reads the fields of a verified `STRT` chunk.
    pub fn decode(chunk: &'a [u8]) -> Result<StoreRootFields<'a>, MessageError> {
        let s = open::<StoreRoot>(chunk, FILE_ID_STORE_ROOT, TABLE)?;
        let address_map = s
            .address_map()
            .map(|v| v.bytes())
            .ok_or(MessageError::MissingField {
                table: TABLE,
                field: "address_map",
            })?;
        Ok(StoreRootFields { address_map })
    }

    /// Encodes the message as Dolt's `storeroot_flatbuffer` does.
    pub fn encode(&self) -> Result<Vec<u8>, MessageError> {
        let mut b = Builder::default();
        b.reset();
        let map = b.create_byte_vector(self.address_map);
        b.start_object(NUM_FIELDS);
        b.add_offset(0, map);
        let end = b.end_object();
        Ok(b.finish_message(end, FILE_ID_STORE_ROOT)?.to_vec())
    }
}
