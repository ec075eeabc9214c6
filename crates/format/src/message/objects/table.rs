//! `Table` (`DTBL`): one table — its schema's address, the primary index's root node
//! (embedded), the secondary-index name → root address map (its root node embedded), the
//! auto-increment counter, and merge leftovers (conflicts, violations, artifacts).

use super::super::builder::Builder;
use super::super::generated::serial::Table;
use super::super::MessageError;
use super::{address_field, open, FILE_ID_TABLE};

const TABLE: &str = "Table";
const NUM_FIELDS: usize = 7;

/// A table's `Conflicts` (old-style conflict storage); Dolt writes all four, each the zero
/// address (20 zero bytes) for a clean table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConflictsFields<'a> {
    /// Conflict data.
    pub data: &'a [u8],
    /// Our schema.
    pub our_schema: &'a [u8],
    /// Their schema.
    pub their_schema: &'a [u8],
    /// The ancestor's schema.
    pub ancestor_schema: &'a [u8],
}

/// The fields of a table message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableFields<'a> {
    /// Address of the `DSCH` schema message.
    pub schema: [u8; 20],
    /// The primary index's root node (`TUPM` chunk bytes).
    pub primary_index: &'a [u8],
    /// The secondary-index map's root node (`ADRM` chunk bytes).
    pub secondary_indexes: &'a [u8],
    /// The next AUTO_INCREMENT value (0 when the table has no such column).
    pub auto_increment_value: u64,
    /// Conflicts; Dolt writes all four vectors, zero addresses when clean.
    pub conflicts: ConflictsFields<'a>,
    /// Constraint violations (an address; zero when clean).
    pub violations: &'a [u8],
    /// Merge artifacts (an address; zero when clean).
    pub artifacts: &'a [u8],
}

impl<'a> TableFields<'a> {
    /// Reads the fields of a verified `DTBL` chunk.
    pub fn decode(chunk: &'a [u8]) -> Result<TableFields<'a>, MessageError> {
        let t = open::<Table>(chunk, FILE_ID_TABLE, TABLE)?;
        let missing = |field| MessageError::MissingField {
            table: TABLE,
            field,
        };
        let c = t.conflicts().ok_or(missing("conflicts"))?;
        Ok(TableFields {
            schema: address_field(t.schema().bytes(), TABLE, "schema")?,
            primary_index: t.primary_index().bytes(),
            secondary_indexes: t
                .secondary_indexes()
                .ok_or(missing("secondary_indexes"))?
                .bytes(),
            auto_increment_value: t.auto_increment_value(),
            conflicts: ConflictsFields {
                data: c.data().bytes(),
                our_schema: c.our_schema().bytes(),
                their_schema: c.their_schema().bytes(),
                ancestor_schema: c.ancestor_schema().bytes(),
            },
            violations: t.violations().ok_or(missing("violations"))?.bytes(),
            artifacts: t.artifacts().ok_or(missing("artifacts"))?.bytes(),
        })
    }

    /// Encodes the message as Dolt's `serialTableFields.write` does.
    pub fn encode(&self) -> Result<Vec<u8>, MessageError> {
        let mut b = Builder::default();
        b.reset();
        let schema = b.create_byte_vector(&self.schema);
        let rows = b.create_byte_vector(self.primary_index);
        let indexes = b.create_byte_vector(self.secondary_indexes);
        let c = &self.conflicts;
        let data = b.create_byte_vector(c.data);
        let ours = b.create_byte_vector(c.our_schema);
        let theirs = b.create_byte_vector(c.their_schema);
        let base = b.create_byte_vector(c.ancestor_schema);
        b.start_object(4);
        b.add_offset(0, data);
        b.add_offset(1, ours);
        b.add_offset(2, theirs);
        b.add_offset(3, base);
        let conflicts = b.end_object();
        let violations = b.create_byte_vector(self.violations);
        let artifacts = b.create_byte_vector(self.artifacts);
        b.start_object(NUM_FIELDS);
        b.add_offset(0, schema);
        b.add_offset(1, rows);
        b.add_offset(2, indexes);
        b.add_u64(3, self.auto_increment_value, 0);
        b.add_offset(4, conflicts);
        b.add_offset(5, violations);
        b.add_offset(6, artifacts);
        let end = b.end_object();
        Ok(b.finish_message(end, FILE_ID_TABLE)?.to_vec())
    }
}
