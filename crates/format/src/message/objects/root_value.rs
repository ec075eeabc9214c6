//! `RootValue` (`RTVL`): one state of a database — the table-name → table address map (its
//! root node embedded), the foreign-key collection's address, the database collation.

use super::super::builder::Builder;
use super::super::generated::serial::RootValue;
use super::super::MessageError;
use super::{address_field, open, FILE_ID_ROOT_VALUE};

const TABLE: &str = "RootValue";
const NUM_FIELDS: usize = 5;

/// The fields of a root-value message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RootValueFields<'a> {
    /// Dolt's feature version (`DoltFeatureVersion` of the writer).
    pub feature_version: i64,
    /// The root node (`ADRM` chunk bytes) of the table map.
    pub tables: &'a [u8],
    /// Address of the foreign-key collection; all zeros when there are none.
    pub foreign_key_addr: [u8; 20],
    /// The database collation (MySQL collation id, `serial.Collation`).
    pub collation: u16,
    /// Database schema names (Doltgres); empty for Dolt, and then not written.
    pub schemas: Vec<&'a str>,
}

impl<'a> RootValueFields<'a> {
    /// Reads the fields of a verified `RTVL` chunk.
    pub fn decode(chunk: &'a [u8]) -> Result<RootValueFields<'a>, MessageError> {
        let r = open::<RootValue>(chunk, FILE_ID_ROOT_VALUE, TABLE)?;
        let missing = |field| MessageError::MissingField {
            table: TABLE,
            field,
        };
        let tables = r.tables().ok_or(missing("tables"))?.bytes();
        let fk = r.foreign_key_addr().ok_or(missing("foreign_key_addr"))?;
        let mut schemas = Vec::new();
        if let Some(v) = r.schemas() {
            for s in v.iter() {
                schemas.push(s.name().unwrap_or(""));
            }
        }
        Ok(RootValueFields {
            feature_version: r.feature_version(),
            tables,
            foreign_key_addr: address_field(fk.bytes(), TABLE, "foreign_key_addr")?,
            collation: r.collation().0,
            schemas,
        })
    }

    /// Encodes the message as Dolt's `serializeRootValue` (and `EmptyRootValue`) do.
    pub fn encode(&self) -> Result<Vec<u8>, MessageError> {
        let mut b = Builder::default();
        b.reset();
        let tables = b.create_byte_vector(self.tables);
        let schemas = if self.schemas.is_empty() {
            0
        } else {
            let mut offs = vec![0u32; self.schemas.len()];
            for (i, name) in self.schemas.iter().enumerate().rev() {
                let n = b.create_string(name);
                b.start_object(1);
                b.add_offset(0, n);
                offs[i] = b.end_object();
            }
            b.create_offset_vector(&offs)
        };
        let fk = b.create_byte_vector(&self.foreign_key_addr);
        b.start_object(NUM_FIELDS);
        b.add_i64(0, self.feature_version, 0);
        b.add_u16(3, self.collation, 0);
        b.add_offset(1, tables);
        b.add_offset(2, fk);
        b.add_offset(4, schemas);
        let end = b.end_object();
        Ok(b.finish_message(end, FILE_ID_ROOT_VALUE)?.to_vec())
    }
}
