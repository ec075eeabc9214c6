//! Dolt indexes as prolly maps: a table's clustered (primary) index and each secondary index
//! read through [`prollystore::Map`] over the database's [`DoltChunkSource`], with a
//! [`TupleSchema`] that orders keys exactly as Dolt does for that column list (collations
//! included), so gets, ranges and diffs use the tree crate's machinery.

use prollystore::tuples::TupleSchema;
use prollystore::Map;
use prollystore_format::collation::Collation;
use prollystore_format::tuple::{TupleDesc, Type};
use prollystore_format::Encoding;

use crate::chunks::DoltChunkSource;
use crate::db::{Database, Table};
use crate::error::{bad_chunk, collation_stored, malformed, DoltError, Result};
use crate::schema::{key_encoding, Column, Index, Schema, SqlType};

/// One Dolt index (primary or secondary) of one table state, as a prolly map.
pub type IndexMap<'d> = Map<'d, DoltChunkSource, TupleSchema>;

impl Schema {
    /// The collation that orders `col` in keys: its own `COLLATE`, else `utf8mb4_0900_bin`.
    /// Dolt stores a text column's type with its collation whenever that is not
    /// `utf8mb4_0900_bin`, whatever the table's (`varchar(5) COLLATE utf8mb4_0900_ai_ci` for
    /// a column that took an `_ai_ci` table's, `varchar(5)` for one declared `_bin` there).
    /// `None` for columns that are not text.
    pub fn column_collation(&self, col: &Column) -> Result<Option<Collation>> {
        let (SqlType::Text { .. }, Some(name)) = (&col.sql_type, col.sql_type.collation()) else {
            return Ok(None);
        };
        Collation::from_name(name)
            .map(Some)
            .map_err(|e| collation_stored(format!("the schema's column {:?}", col.name), e))
    }

    /// Key descriptor over `columns` (positions in [`Schema::columns`]) with each text
    /// column's collation, as Dolt compares that index's keys.
    fn collated_key_desc(&self, columns: &[usize], hashed: &[bool]) -> Result<TupleDesc> {
        let mut types = Vec::with_capacity(columns.len());
        let mut collations = Vec::with_capacity(columns.len());
        for (k, &i) in columns.iter().enumerate() {
            let col = self.columns.get(i).ok_or_else(|| {
                malformed("an index", format!("its column {i} is not in the table"))
            })?;
            let (enc, collation) = if hashed.get(k).copied().unwrap_or(false) {
                // An address orders by its bytes, whatever the column's collation.
                (col.encoding, None)
            } else {
                (key_encoding(col.encoding), self.column_collation(col)?)
            };
            types.push(if col.nullable {
                Type::nullable(enc)
            } else {
                Type::not_null(enc)
            });
            collations.push(collation);
        }
        Ok(TupleDesc::new(types).with_collations(collations))
    }

    /// [`Schema::value_desc`] with each text column's collation: values compared as their
    /// SQL types compare them (`'Paris'` equals `'PARIS'` under a `_ci` collation), as Dolt
    /// compares an updated row with the old one and the two sides' values in a merge.
    pub fn collated_value_desc(&self) -> Result<TupleDesc> {
        let collations = self
            .value_columns
            .iter()
            .map(|&i| match self.columns.get(i) {
                Some(col) => self.column_collation(col),
                None => Ok(None),
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(self.value_desc().with_collations(collations))
    }

    /// The schema of the clustered index: keys ordered as Dolt orders them (collations
    /// included), values as [`Schema::value_desc`]. Fails when a key column's collation is
    /// not implemented: a wrong order would give wrong gets and ranges.
    pub fn primary_tuple_schema(&self) -> Result<TupleSchema> {
        let key = if self.keyless {
            TupleDesc::new(vec![Type::not_null(Encoding::Hash128)])
        } else {
            self.collated_key_desc(&self.key_columns, &[])?
        };
        Ok(TupleSchema::new(key, self.value_desc()))
    }

    /// The schema of secondary index `index`: keys are its key columns (indexed columns, then
    /// the remaining primary-key columns), values empty.
    pub fn index_tuple_schema(&self, index: &Index) -> Result<TupleSchema> {
        let hashed = self.content_hashed(index);
        let key = self.collated_key_desc(&index.key_columns, &hashed)?;
        Ok(TupleSchema::new(key, TupleDesc::new(Vec::new())))
    }

    /// The order of whole values over `index`'s key columns (no prefix cut, no content hash):
    /// what a range over that index means, for checking rows an inexact index returns.
    pub(crate) fn index_value_order(&self, index: &Index) -> Result<TupleDesc> {
        self.collated_key_desc(&index.key_columns, &[])
    }

    /// Per key column of `index`, whether Dolt keeps it content-hashed: a TEXT or BLOB column
    /// of a UNIQUE index without a prefix length is stored in the key as the address of its
    /// value (as in the row), not inline, so uniqueness is checked on whole values.
    pub fn content_hashed(&self, index: &Index) -> Vec<bool> {
        index
            .key_columns
            .iter()
            .enumerate()
            .map(|(k, &i)| {
                let unprefixed = index.prefix_lengths.get(k).copied().unwrap_or(0) == 0;
                index.unique
                    && k < index.columns.len()
                    && unprefixed
                    && self.columns.get(i).is_some_and(|c| out_of_band(c.encoding))
            })
            .collect()
    }
}

/// Encodings whose values may live out of band (an address, or an address when large).
fn out_of_band(enc: Encoding) -> bool {
    matches!(
        enc,
        Encoding::StringAdaptive
            | Encoding::StringAddr
            | Encoding::BytesAdaptive
            | Encoding::BytesAddr
    )
}

/// A schema's primary key order, as kept in the database's memo.
struct PrimaryOrder(TupleSchema);

impl Table {
    /// [`Schema::primary_tuple_schema`], made once per schema for the open database.
    pub(crate) fn primary_order(&self, db: &Database) -> Result<TupleSchema> {
        if self.schema_address.is_zero() {
            return self.schema.primary_tuple_schema();
        }
        let order = db.memo().get_or_make(self.schema_address, || {
            self.schema.primary_tuple_schema().map(PrimaryOrder)
        })?;
        Ok(order.0.clone())
    }

    /// The clustered index as a map (its root node, embedded in the table chunk, is pinned in
    /// the database's chunk source).
    pub fn primary_map<'d>(&self, db: &'d Database) -> Result<IndexMap<'d>> {
        let schema = self.primary_order(db)?;
        let root = db.source().pin_embedded(self.address, &self.primary_index);
        Ok(Map::new(db.source(), root, schema))
    }

    /// The clustered index as a map ordered by key bytes, for whole scans only: they never
    /// compare keys, so they read tables whose key collation has no weights here yet.
    pub fn primary_scan_map<'d>(&self, db: &'d Database) -> IndexMap<'d> {
        let schema = TupleSchema::new(self.schema.key_desc(), self.schema.value_desc());
        let root = db.source().pin_embedded(self.address, &self.primary_index);
        Map::new(db.source(), root, schema)
    }

    /// Secondary index `name` as a map.
    pub fn index_map<'d>(&self, db: &'d Database, name: &str) -> Result<IndexMap<'d>> {
        let index = self
            .schema
            .indexes
            .iter()
            .find(|ix| ix.name == name)
            .ok_or_else(|| {
                DoltError::NotFound(format!("index {name:?} of table {:?}", self.name))
            })?;
        let root = self
            .secondary_indexes
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, a)| *a)
            .ok_or_else(|| {
                bad_chunk(
                    self.address,
                    format!("the schema names index {name:?} but the table has no tree for it"),
                )
            })?;
        let schema = self.schema.index_tuple_schema(index)?;
        Ok(Map::new(db.source(), root, schema))
    }
}
