//! `TableSchema` (`DSCH`): a table's columns (names, tags, SQL type text, storage encodings,
//! defaults, comments), its clustered (primary) index, secondary indexes, checks, collation.
//!
//! A keyless table's schema also lists two hidden columns last (the row hash and the row
//! count); Dolt always writes them the same way, so they are a flag here, not columns.

use super::super::builder::Builder;
use super::super::generated::serial::{Column, Index, TableSchema};
use super::super::MessageError;
use super::{open, FILE_ID_TABLE_SCHEMA};

const TABLE: &str = "TableSchema";
const NUM_FIELDS: usize = 8;
/// Dolt's default target row size (`val.DefaultTupleLengthTarget`); the field is left out at it.
const DEFAULT_TARGET_ROW_SIZE: u16 = 2048;
/// Name of a keyless table's hidden row-hash column.
const KEYLESS_ID_NAME: &str = "keyless_hash_id";
/// Name of a keyless table's hidden row-count column.
const KEYLESS_CARD_NAME: &str = "keyless_cardinality";
/// Tag of the hidden row-hash column (`schema.KeylessRowIdTag`: 2^51 + 5000).
const KEYLESS_ID_TAG: u64 = (1 << 51) + 5000;
/// Encoding of the hidden row-hash column (`Hash128`).
const KEYLESS_ID_ENCODING: u8 = 14;
/// Encoding of the hidden row-count column (`Uint64`).
const KEYLESS_CARD_ENCODING: u8 = 10;

/// One visible column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnFields<'a> {
    /// Column name.
    pub name: &'a str,
    /// SQL type text as Dolt prints it (`varchar(30) COLLATE utf8mb4_0900_bin`).
    pub sql_type: &'a str,
    /// Default expression text, or a generated column's expression; `""` for none.
    pub default_value: &'a str,
    /// Column comment; `""` for none.
    pub comment: &'a str,
    /// Position among the columns (Dolt writes the column's index).
    pub display_order: i16,
    /// Column tag.
    pub tag: u64,
    /// Storage encoding (`serial.Encoding`).
    pub encoding: u8,
    /// Part of the primary key.
    pub primary_key: bool,
    /// Nullable.
    pub nullable: bool,
    /// AUTO_INCREMENT.
    pub auto_increment: bool,
    /// Hidden from `SELECT *`.
    pub hidden: bool,
    /// A generated column (its expression is in `default_value`).
    pub generated: bool,
    /// A virtual generated column.
    pub virtual_: bool,
    /// `ON UPDATE` expression; `""` for none (then not written).
    pub on_update_value: &'a str,
    /// Uses an adaptive (inline-or-out-of-band) encoding; Dolt then also sets
    /// `adaptive_encoding_breaking_change`.
    pub uses_adaptive_encoding: bool,
    /// Hidden even from system views.
    pub hidden_system: bool,
}

/// An index: the clustered index (only the column vectors matter) or a secondary one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IndexFields<'a> {
    /// Index name (secondary indexes).
    pub name: &'a str,
    /// Index comment.
    pub comment: &'a str,
    /// Positions (in the columns vector) of the indexed columns.
    pub index_columns: Vec<u16>,
    /// Positions of the columns of the index's key tuples (indexed, then primary key).
    pub key_columns: Vec<u16>,
    /// Positions of the value columns (clustered index only).
    pub value_columns: Vec<u16>,
    /// UNIQUE.
    pub unique_key: bool,
    /// Created by Dolt (not user-defined), e.g. for a foreign key.
    pub system_defined: bool,
    /// Prefix lengths, one per indexed column, or empty.
    pub prefix_lengths: Vec<u16>,
    /// SPATIAL.
    pub spatial_key: bool,
    /// Partial-index predicate; `""` for none.
    pub predicate: &'a str,
}

/// A CHECK constraint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckFields<'a> {
    /// Constraint name.
    pub name: &'a str,
    /// Expression text.
    pub expression: &'a str,
    /// ENFORCED.
    pub enforced: bool,
    /// NOT VALID.
    pub is_not_valid: bool,
}

/// The fields of a table-schema message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableSchemaFields<'a> {
    /// Visible columns in order (without a keyless table's hidden columns).
    pub columns: Vec<ColumnFields<'a>>,
    /// A keyless table (Dolt adds the hidden row-hash and row-count columns).
    pub keyless: bool,
    /// The clustered index: `key_columns` and `value_columns` matter.
    pub clustered_index: IndexFields<'a>,
    /// Secondary indexes in order.
    pub secondary_indexes: Vec<IndexFields<'a>>,
    /// Checks in order.
    pub checks: Vec<CheckFields<'a>>,
    /// The table collation (MySQL collation id).
    pub collation: u16,
    /// Table comment; `""` for none.
    pub comment: &'a str,
    /// Target row size (2048 unless set).
    pub target_row_size: u16,
}

fn unsupported(field: &'static str) -> MessageError {
    MessageError::UnexpectedField {
        table: TABLE,
        field,
        reason: "not supported by this encoder yet",
    }
}

fn u16s(v: Option<flatbuffers::Vector<'_, u16>>) -> Vec<u16> {
    v.map(|v| v.iter().collect()).unwrap_or_default()
}

fn decode_column<'a>(c: &Column<'a>) -> ColumnFields<'a> {
    ColumnFields {
        name: c.name(),
        sql_type: c.sql_type().unwrap_or(""),
        default_value: c.default_value().unwrap_or(""),
        comment: c.comment().unwrap_or(""),
        display_order: c.display_order(),
        tag: c.tag(),
        encoding: c.encoding().0,
        primary_key: c.primary_key(),
        nullable: c.nullable(),
        auto_increment: c.auto_increment(),
        hidden: c.hidden(),
        generated: c.generated(),
        virtual_: c.virtual_(),
        on_update_value: c.on_update_value().unwrap_or(""),
        uses_adaptive_encoding: c.uses_adaptive_encoding(),
        hidden_system: c.hidden_system(),
    }
}

fn decode_index<'a>(i: &Index<'a>) -> Result<IndexFields<'a>, MessageError> {
    if i.fulltext_key() || i.fulltext_info().is_some() {
        return Err(unsupported("fulltext_info"));
    }
    if i.vector_key() || i.vector_info().is_some() {
        return Err(unsupported("vector_info"));
    }
    Ok(IndexFields {
        name: i.name().unwrap_or(""),
        comment: i.comment().unwrap_or(""),
        index_columns: i.index_columns().iter().collect(),
        key_columns: i.key_columns().iter().collect(),
        value_columns: u16s(i.value_columns()),
        unique_key: i.unique_key(),
        system_defined: i.system_defined(),
        prefix_lengths: u16s(i.prefix_lengths()),
        spatial_key: i.spatial_key(),
        predicate: i.predicate().unwrap_or(""),
    })
}

impl<'a> TableSchemaFields<'a> {
    /// Reads the fields of a verified `DSCH` chunk.
    pub fn decode(chunk: &'a [u8]) -> Result<TableSchemaFields<'a>, MessageError> {
        let s = open::<TableSchema>(chunk, FILE_ID_TABLE_SCHEMA, TABLE)?;
        let all: Vec<ColumnFields<'a>> = s.columns().iter().map(|c| decode_column(&c)).collect();
        let n = all.len();
        let keyless = n >= 2
            && all[n - 2].name == KEYLESS_ID_NAME
            && all[n - 2].hidden
            && all[n - 2].generated;
        let visible = if keyless { n - 2 } else { n };
        let mut columns = all;
        columns.truncate(visible);
        let clustered_index = decode_index(&s.clustered_index())?;
        let mut secondary_indexes = Vec::new();
        if let Some(v) = s.secondary_indexes() {
            for i in v.iter() {
                secondary_indexes.push(decode_index(&i)?);
            }
        }
        let mut checks = Vec::new();
        if let Some(v) = s.checks() {
            for c in v.iter() {
                checks.push(CheckFields {
                    name: c.name().unwrap_or(""),
                    expression: c.expression().unwrap_or(""),
                    enforced: c.enforced(),
                    is_not_valid: c.is_not_valid(),
                });
            }
        }
        Ok(TableSchemaFields {
            columns,
            keyless,
            clustered_index,
            secondary_indexes,
            checks,
            collation: s.collation().0,
            comment: s.comment().unwrap_or(""),
            target_row_size: s.target_row_size(),
        })
    }

    /// Encodes the message as Dolt's `serializeSchemaAsFlatbuffer` does; its
    /// `has_features_after_try_accessors` flag is set as Dolt sets it (an ON UPDATE column, a
    /// table comment, or a non-default target row size).
    pub fn encode(&self) -> Result<Vec<u8>, MessageError> {
        let mut b = Builder::default();
        b.reset();
        let columns = self.encode_columns(&mut b);
        let clustered = {
            let ci = &self.clustered_index;
            let keys = b.create_u16_vector(&ci.key_columns);
            let values = b.create_u16_vector(&ci.value_columns);
            b.start_object(15);
            b.add_offset(2, keys);
            b.add_offset(3, keys);
            b.add_offset(4, values);
            b.add_bool(5, true, false);
            b.add_bool(6, true, false);
            b.end_object()
        };
        let mut index_offs = vec![0u32; self.secondary_indexes.len()];
        for (i, idx) in self.secondary_indexes.iter().enumerate().rev() {
            index_offs[i] = encode_secondary_index(&mut b, idx);
        }
        let indexes = b.create_offset_vector(&index_offs);
        let mut check_offs = vec![0u32; self.checks.len()];
        for (i, c) in self.checks.iter().enumerate().rev() {
            let expr = b.create_string(c.expression);
            let name = b.create_string(c.name);
            b.start_object(4);
            b.add_bool(2, c.enforced, false);
            b.add_offset(1, expr);
            b.add_offset(0, name);
            b.add_bool(3, c.is_not_valid, false);
            check_offs[i] = b.end_object();
        }
        let checks = b.create_offset_vector(&check_offs);
        let comment = b.create_string(self.comment);
        let mut has_features = self.columns.iter().any(|c| !c.on_update_value.is_empty());
        b.start_object(NUM_FIELDS);
        b.add_offset(1, clustered);
        b.add_offset(0, columns);
        b.add_offset(2, indexes);
        b.add_offset(3, checks);
        b.add_u16(4, self.collation, 0);
        if !self.comment.is_empty() {
            b.add_offset(6, comment);
            has_features = true;
        }
        if self.target_row_size != DEFAULT_TARGET_ROW_SIZE {
            b.add_u16(7, self.target_row_size, DEFAULT_TARGET_ROW_SIZE);
            has_features = true;
        }
        if has_features {
            b.add_bool(5, true, false);
        }
        let end = b.end_object();
        Ok(b.finish_message(end, FILE_ID_TABLE_SCHEMA)?.to_vec())
    }

    /// The columns vector (Dolt's `serializeSchemaColumns`): a keyless table's hidden columns
    /// first (row count, then row hash), then the visible ones last to first.
    fn encode_columns(&self, b: &mut Builder) -> u32 {
        let mut offs = vec![0u32; self.columns.len()];
        let mut hidden = Vec::new();
        if self.keyless {
            let card = hidden_column(
                b,
                KEYLESS_CARD_NAME,
                KEYLESS_ID_TAG + 1,
                KEYLESS_CARD_ENCODING,
            );
            let id = hidden_column(b, KEYLESS_ID_NAME, KEYLESS_ID_TAG, KEYLESS_ID_ENCODING);
            hidden = vec![id, card];
        }
        for (i, c) in self.columns.iter().enumerate().rev() {
            let comment = b.create_string(c.comment);
            let default = b.create_string(c.default_value);
            let on_update = b.create_string(c.on_update_value);
            let sql_type = b.create_string(c.sql_type);
            let name = b.create_string(c.name);
            b.start_object(17);
            b.add_offset(0, name);
            b.add_offset(1, sql_type);
            b.add_offset(2, default);
            b.add_offset(3, comment);
            b.add_i16(4, c.display_order, 0);
            b.add_u64(5, c.tag, 0);
            b.add_u8(6, c.encoding, 0);
            b.add_bool(7, c.primary_key, false);
            b.add_bool(9, c.auto_increment, false);
            b.add_bool(8, c.nullable, false);
            b.add_bool(11, c.generated, false);
            b.add_bool(12, c.virtual_, false);
            if !c.on_update_value.is_empty() {
                b.add_offset(13, on_update);
            }
            if c.uses_adaptive_encoding {
                b.add_bool(14, true, false);
                b.add_bool(16, true, false);
            }
            b.add_bool(10, c.hidden, false);
            b.add_bool(15, c.hidden_system, false);
            offs[i] = b.end_object();
        }
        offs.extend(hidden);
        b.create_offset_vector(&offs)
    }
}

/// One of a keyless table's hidden columns, as Dolt's `serializeHiddenKeylessColumns` writes it.
fn hidden_column(b: &mut Builder, name: &str, tag: u64, encoding: u8) -> u32 {
    let name = b.create_string(name);
    b.start_object(17);
    b.add_offset(0, name);
    b.add_i16(4, -1, 0);
    b.add_u64(5, tag, 0);
    b.add_u8(6, encoding, 0);
    b.add_bool(11, true, false);
    b.add_bool(10, true, false);
    b.end_object()
}

/// A secondary index, as Dolt's `serializeSecondaryIndexes` writes each one.
fn encode_secondary_index(b: &mut Builder, idx: &IndexFields<'_>) -> u32 {
    let name = b.create_string(idx.name);
    let comment = b.create_string(idx.comment);
    let predicate = if idx.predicate.is_empty() {
        0
    } else {
        b.create_string(idx.predicate)
    };
    let index_columns = b.create_u16_vector(&idx.index_columns);
    let key_columns = b.create_u16_vector(&idx.key_columns);
    let prefix_lengths = b.create_u16_vector(&idx.prefix_lengths);
    b.start_object(15);
    b.add_offset(0, name);
    b.add_offset(1, comment);
    b.add_offset(2, index_columns);
    b.add_offset(3, key_columns);
    b.add_bool(5, false, false);
    b.add_bool(6, idx.unique_key, false);
    b.add_bool(7, idx.system_defined, false);
    b.add_offset(8, prefix_lengths);
    b.add_bool(9, idx.spatial_key, false);
    b.add_bool(10, false, false);
    b.add_offset(14, predicate);
    b.end_object()
}
