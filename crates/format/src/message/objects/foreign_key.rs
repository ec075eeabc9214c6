//! `ForeignKeyCollection` (`DFKC`): every foreign key of a database state, which the root
//! value points to. Columns are named by tag; the names as declared are kept beside them.

use super::super::builder::Builder;
use super::super::generated::serial::ForeignKeyCollection;
use super::super::MessageError;
use super::{open, FILE_ID_FOREIGN_KEYS};

const TABLE: &str = "ForeignKeyCollection";
const FK_FIELDS: usize = 15;

/// One foreign key as Dolt stores it (`serial.ForeignKey`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ForeignKeyFields<'a> {
    /// Constraint name.
    pub name: &'a str,
    /// Child (referencing) table.
    pub child_table: &'a str,
    /// The child index the key uses (`""`: the primary key).
    pub child_index: &'a str,
    /// Child column tags, in key order.
    pub child_columns: Vec<u64>,
    /// Parent (referenced) table.
    pub parent_table: &'a str,
    /// The parent index the key uses (`""`: the primary key).
    pub parent_index: &'a str,
    /// Parent column tags, in key order.
    pub parent_columns: Vec<u64>,
    /// ON UPDATE action (`0` default, `1` CASCADE, `2` NO ACTION, `3` RESTRICT, `4` SET NULL).
    pub on_update: u8,
    /// ON DELETE action, coded as `on_update`.
    pub on_delete: u8,
    /// Child column names as declared (`None`: not written).
    pub unresolved_child_columns: Option<Vec<&'a str>>,
    /// Parent column names as declared (`None`: not written).
    pub unresolved_parent_columns: Option<Vec<&'a str>>,
    /// Existing rows were not checked (`NOT VALID`).
    pub is_not_valid: bool,
    /// MATCH type (`0` SIMPLE, `1` FULL, `2` PARTIAL).
    pub match_type: u8,
}

/// The fields of a foreign-key collection message, keys in the stored order (by name).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ForeignKeyCollectionFields<'a> {
    /// The foreign keys.
    pub foreign_keys: Vec<ForeignKeyFields<'a>>,
}

fn strings<'a>(
    v: Option<flatbuffers::Vector<'a, flatbuffers::ForwardsUOffset<&'a str>>>,
) -> Option<Vec<&'a str>> {
    v.map(|v| v.iter().collect())
}

impl<'a> ForeignKeyCollectionFields<'a> {
    /// Reads the fields of a verified `DFKC` chunk. Keys of tables in a non-default schema
    /// (Doltgres) are an error: Dolt never writes them.
    pub fn decode(chunk: &'a [u8]) -> Result<ForeignKeyCollectionFields<'a>, MessageError> {
        let c = open::<ForeignKeyCollection>(chunk, FILE_ID_FOREIGN_KEYS, TABLE)?;
        let mut foreign_keys = Vec::new();
        for fk in c.foreign_keys().iter().flatten() {
            if fk.child_table_database_schema().is_some()
                || fk.parent_table_database_schema().is_some()
            {
                return Err(MessageError::UnexpectedField {
                    table: "ForeignKey",
                    field: "child_table_database_schema",
                    reason: "database schemas are not Dolt's",
                });
            }
            foreign_keys.push(ForeignKeyFields {
                name: fk.name().unwrap_or(""),
                child_table: fk.child_table_name().unwrap_or(""),
                child_index: fk.child_table_index().unwrap_or(""),
                child_columns: fk
                    .child_table_columns()
                    .map(|v| v.iter().collect())
                    .unwrap_or_default(),
                parent_table: fk.parent_table_name().unwrap_or(""),
                parent_index: fk.parent_table_index().unwrap_or(""),
                parent_columns: fk
                    .parent_table_columns()
                    .map(|v| v.iter().collect())
                    .unwrap_or_default(),
                on_update: fk.on_update().0,
                on_delete: fk.on_delete().0,
                unresolved_child_columns: strings(fk.unresolved_child_columns()),
                unresolved_parent_columns: strings(fk.unresolved_parent_columns()),
                is_not_valid: fk.is_not_valid(),
                match_type: fk.match_type().0,
            });
        }
        Ok(ForeignKeyCollectionFields { foreign_keys })
    }

    /// Encodes the message as Dolt's `serializeFlatbufferForeignKeys` does (keys written last
    /// to first, each one's strings and vectors before its table).
    pub fn encode(&self) -> Result<Vec<u8>, MessageError> {
        let mut b = Builder::default();
        b.reset();
        let mut offsets = vec![0u32; self.foreign_keys.len()];
        for (i, fk) in self.foreign_keys.iter().enumerate().rev() {
            let unresolved_parent = fk
                .unresolved_parent_columns
                .as_deref()
                .map_or(0, |v| string_vector(&mut b, v));
            let unresolved_child = fk
                .unresolved_child_columns
                .as_deref()
                .map_or(0, |v| string_vector(&mut b, v));
            let parent_cols = u64_vector(&mut b, &fk.parent_columns);
            let child_cols = u64_vector(&mut b, &fk.child_columns);
            let parent_table = b.create_string(fk.parent_table);
            let parent_index = b.create_string(fk.parent_index);
            let child_table = b.create_string(fk.child_table);
            let child_index = b.create_string(fk.child_index);
            let name = b.create_string(fk.name);
            b.start_object(FK_FIELDS);
            b.add_offset(0, name);
            b.add_offset(1, child_table);
            b.add_offset(2, child_index);
            b.add_offset(3, child_cols);
            b.add_offset(4, parent_table);
            b.add_offset(5, parent_index);
            b.add_offset(6, parent_cols);
            b.add_offset(9, unresolved_child);
            b.add_offset(10, unresolved_parent);
            b.add_u8(7, fk.on_update, 0);
            b.add_u8(8, fk.on_delete, 0);
            b.add_bool(13, fk.is_not_valid, false);
            b.add_u8(14, fk.match_type, 0);
            offsets[i] = b.end_object();
        }
        let vec = b.create_offset_vector(&offsets);
        b.start_object(1);
        b.add_offset(0, vec);
        let end = b.end_object();
        Ok(b.finish_message(end, FILE_ID_FOREIGN_KEYS)?.to_vec())
    }
}

/// Go `datas.SerializeStringVector`: the strings last to first, then the offset vector.
fn string_vector(b: &mut Builder, items: &[&str]) -> u32 {
    let mut offs = vec![0u32; items.len()];
    for (j, s) in items.iter().enumerate().rev() {
        offs[j] = b.create_string(s);
    }
    b.create_offset_vector(&offs)
}

/// Go `serializeUint64Vector`: `StartVector(8, n, 8)` and the values prepended.
fn u64_vector(b: &mut Builder, values: &[u64]) -> u32 {
    b.start_vector(8, values.len(), 8);
    for &v in values.iter().rev() {
        b.prepend_u64(v);
    }
    b.end_vector(values.len())
}
