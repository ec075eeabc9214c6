//! Typed rows: named, typed columns ([`RowSchema`]) written as compact text
//! (`id:bigint, name:varchar(40)?`), and rows of [`Value`]s encoded into and decoded from a
//! map's key and value tuples, so that no caller builds tuples by hand unless it wants to.
//!
//! A column is `NAME:TYPE`, with a trailing `?` when it may be NULL. `TYPE` is a SQL type name
//! (`int`, `bigint unsigned`, `varchar(40)`, `text`, `double`, `decimal(12,4)`, `datetime(6)`,
//! `json`, `blob`, …), mapped to the encoding Dolt uses for that type, or one of Dolt's
//! encoding names (`int64`, `string_adaptive`, …; [`Encoding::from_name`]). In key columns,
//! text and binary types are stored inline (`string`, `bytes`), as Dolt stores them in keys.
//!
//! ```
//! use prollystore::format::tuple::{Decimal, Value};
//! use prollystore::format::HashProfile;
//! use prollystore::rows::RowSchema;
//! use prollystore::{Map, MemoryStore};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let schema = RowSchema::parse("id:bigint", "name:varchar(40)?, price:decimal(10,2)")?;
//! let store = MemoryStore::new(HashProfile::Dolt);
//! let mut rows = Vec::new();
//! for i in 0..100i64 {
//!     let name = format!("item {i}");
//!     let cents = (i as u64 * 150).to_be_bytes();
//!     let price = Decimal::finite(-2, false, &cents); // 1.50 per id
//!     rows.push(schema.encode_row(&[
//!         Some(Value::Int64(i)),
//!         Some(Value::String(&name)),
//!         Some(Value::Decimal(price)),
//!     ])?);
//! }
//! let map = Map::from_sorted(&store, schema.tuple_schema(), rows.iter().map(|(k, v)| (&k[..], &v[..])))?;
//! let key = schema.encode_key(&[Some(Value::Int64(7))])?;
//! let value = map.get(&key)?.expect("row 7");
//! let row = schema.decode_row(&key, value)?;
//! assert_eq!(row[1], Some(Value::String("item 7")));
//! # Ok(())
//! # }
//! ```

use std::fmt;

use prollystore_format::sql_type::SqlType;
use prollystore_format::tuple::{
    needs_external_order, BlobStore, TupleBuilder, TupleDesc, TupleError, Type, Value,
    MAX_TUPLE_FIELDS,
};
use prollystore_format::Encoding;
use thiserror::Error;

use crate::tuples::TupleSchema;

/// One named, typed column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    /// The column's name.
    pub name: String,
    /// Its encoding and nullability.
    pub ty: Type,
}

/// What was wrong with a schema text or a row.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum RowError {
    /// The schema text is not valid; the message quotes the offending part.
    #[error("{0}")]
    Schema(String),
    /// A row has the wrong number of values.
    #[error("the row has {got} values; the schema has {expected} columns")]
    Arity {
        /// Columns in the schema (or in its key, for a key).
        expected: usize,
        /// Values given.
        got: usize,
    },
    /// A value does not fit its column, or stored bytes do not decode.
    #[error("column {column}: {source}")]
    Value {
        /// The column's name, quoted.
        column: String,
        /// What is wrong.
        #[source]
        source: TupleError,
    },
}

/// Longest user text an error message quotes in full, in characters.
const QUOTE_CHARS: usize = 60;

/// `text` quoted for an error message: in full when short, else its first characters, an
/// ellipsis and its length, so that no input makes a huge message.
pub fn quote_bounded(text: &str) -> String {
    match text.char_indices().nth(QUOTE_CHARS) {
        None => format!("{text:?}"),
        Some((cut, _)) => format!("{:?}… ({} bytes)", &text[..cut], text.len()),
    }
}

fn schema_error(part: &str, why: impl fmt::Display) -> RowError {
    RowError::Schema(format!("bad column {}: {why}", quote_bounded(part)))
}

/// The encoding Dolt stores a SQL type in (`None` for a name that is not a SQL type). `text` is
/// the type as written (`bigint unsigned`, `varchar(40)`, `DECIMAL(12, 4)`), any case.
pub fn sql_type_encoding(text: &str) -> Option<Encoding> {
    SqlType::parse_declared(text)?.encoding()
}

/// The encoding a key column of encoding `enc` is stored in: Dolt keeps text and binary inline
/// in keys.
fn key_column_encoding(enc: Encoding) -> Encoding {
    match enc {
        Encoding::StringAdaptive => Encoding::String,
        Encoding::BytesAdaptive => Encoding::Bytes,
        e => e,
    }
}

/// Splits a column list at commas outside parentheses and quotes (`decimal(12,4)`,
/// `enum('a','b')` stay whole).
fn split_columns(spec: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut quote, mut start) = (0i32, None::<char>, 0);
    for (i, c) in spec.char_indices() {
        match (quote, c) {
            (Some(q), _) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => depth -= 1,
            (None, ',') if depth == 0 => {
                parts.push(&spec[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&spec[start..]);
    parts
}

/// How the names in a column list are read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Names {
    /// SQL type names first (what people write), then encoding names.
    Sql,
    /// Encoding names only (text this module wrote).
    Exact,
}

fn parse_columns(spec: &str, names: Names, key: bool) -> Result<Vec<Column>, RowError> {
    let mut out: Vec<Column> = Vec::new();
    if spec.trim().is_empty() {
        return Ok(out);
    }
    for part in split_columns(spec) {
        let part = part.trim();
        let Some((name, ty)) = part.split_once(':') else {
            return Err(schema_error(
                part,
                "expected NAME:TYPE (for example id:bigint or note:text?)",
            ));
        };
        let (name, ty) = (name.trim(), ty.trim());
        if name.is_empty() {
            return Err(schema_error(part, "empty name"));
        }
        let (ty_name, nullable) = match ty.strip_suffix('?') {
            Some(t) => (t.trim(), true),
            None => (ty, false),
        };
        let sql = match names {
            Names::Sql => sql_type_encoding(ty_name),
            Names::Exact => None,
        };
        let enc = match sql.or_else(|| Encoding::from_name(ty_name)) {
            Some(e) if key && sql.is_some() => key_column_encoding(e),
            Some(e) => e,
            None => {
                return Err(schema_error(
                    part,
                    format!(
                        "unknown type {} (SQL types such as int, bigint unsigned, varchar(40), \
                         text, double, decimal(12,4), datetime(6), json, blob; or encodings: {})",
                        quote_bounded(ty_name),
                        known_encodings()
                    ),
                ))
            }
        };
        if out.iter().any(|c| c.name == name) {
            return Err(RowError::Schema(format!(
                "column {} appears twice",
                quote_bounded(name)
            )));
        }
        let ty = if nullable {
            Type::nullable(enc)
        } else {
            Type::not_null(enc)
        };
        out.push(Column {
            name: name.to_string(),
            ty,
        });
    }
    Ok(out)
}

fn known_encodings() -> String {
    prollystore_format::encoding::ALL_ENCODINGS
        .iter()
        .map(|e| e.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The column list in the compact syntax with encoding names (what [`RowSchema::from_stored`]
/// reads back exactly).
pub fn format_columns(cols: &[Column]) -> String {
    cols.iter()
        .map(|c| {
            format!(
                "{}:{}{}",
                c.name,
                c.ty.enc.name(),
                if c.ty.nullable { "?" } else { "" }
            )
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// First line of [`RowSchema::to_stored`]'s text (a format version for later changes).
const STORED_MAGIC: &str = "prolly-schema 1";

/// Key and value columns of a map: names and types, enough to encode and decode its rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowSchema {
    /// Key columns, in key order.
    pub key: Vec<Column>,
    /// Value columns.
    pub value: Vec<Column>,
}

impl RowSchema {
    /// A schema from key and value column lists (see the module docs), checked: at least one
    /// key column, no name twice, at most 4,096 columns a side, no key column whose order
    /// needs an external handler (JSON, geometry, extended).
    pub fn parse(key: &str, value: &str) -> Result<RowSchema, RowError> {
        Self::parse_with(key, value, Names::Sql)
    }

    fn parse_with(key: &str, value: &str, names: Names) -> Result<RowSchema, RowError> {
        let key = parse_columns(key, names, true)?;
        let value = parse_columns(value, names, false)?;
        if key.is_empty() {
            return Err(RowError::Schema("the key needs at least one column".into()));
        }
        for (side, cols) in [("key", &key), ("value", &value)] {
            if cols.len() > MAX_TUPLE_FIELDS {
                return Err(RowError::Schema(format!(
                    "the {side} has {} columns; a tuple holds at most {MAX_TUPLE_FIELDS}",
                    cols.len()
                )));
            }
        }
        for c in &key {
            if needs_external_order(c.ty.enc) {
                return Err(RowError::Schema(format!(
                    "key column {}: type {} is ordered by an external handler and cannot be a key here",
                    quote_bounded(&c.name),
                    c.ty.enc
                )));
            }
            if value.iter().any(|v| v.name == c.name) {
                return Err(RowError::Schema(format!(
                    "column {} is in both the key and the value",
                    quote_bounded(&c.name)
                )));
            }
        }
        Ok(RowSchema { key, value })
    }

    /// The schema as text to keep beside a map (encoding names, exact; see
    /// [`RowSchema::from_stored`]).
    pub fn to_stored(&self) -> String {
        format!(
            "{STORED_MAGIC}\nkey {}\nvalue {}\n",
            format_columns(&self.key),
            format_columns(&self.value)
        )
    }

    /// Reads [`RowSchema::to_stored`]'s text.
    pub fn from_stored(text: &str) -> Result<RowSchema, RowError> {
        let bad = || RowError::Schema("the stored schema is malformed".into());
        let mut lines = text.lines();
        if lines.next() != Some(STORED_MAGIC) {
            return Err(RowError::Schema(
                "the stored schema has an unknown format (not written by prollystore?)".into(),
            ));
        }
        let key = lines
            .next()
            .and_then(|l| l.strip_prefix("key "))
            .ok_or_else(bad)?;
        let value = lines
            .next()
            .and_then(|l| l.strip_prefix("value").map(str::trim))
            .ok_or_else(bad)?;
        Self::parse_with(key, value, Names::Exact)
    }

    /// The key and value columns in the compact syntax, for messages.
    pub fn describe(&self) -> String {
        format!(
            "key={} value={}",
            format_columns(&self.key),
            format_columns(&self.value)
        )
    }

    /// Descriptor of key tuples.
    pub fn key_desc(&self) -> TupleDesc {
        TupleDesc::new(self.key.iter().map(|c| c.ty).collect())
    }

    /// Descriptor of value tuples.
    pub fn value_desc(&self) -> TupleDesc {
        TupleDesc::new(self.value.iter().map(|c| c.ty).collect())
    }

    /// The tree schema (key order, value addresses) of a map with these rows.
    pub fn tuple_schema(&self) -> TupleSchema {
        TupleSchema::new(self.key_desc(), self.value_desc())
    }

    /// Every column, key first.
    pub fn columns(&self) -> impl Iterator<Item = &Column> {
        self.key.iter().chain(self.value.iter())
    }

    /// Encodes a row, key columns first, into its key and value tuples. For many rows,
    /// [`RowEncoder`] reuses its buffers; for values large enough to move out of band, use
    /// [`RowEncoder::encode_with`] with a blob store.
    pub fn encode_row(&self, row: &[Option<Value<'_>>]) -> Result<(Vec<u8>, Vec<u8>), RowError> {
        let mut enc = RowEncoder::new(self);
        let (k, v) = enc.encode(row)?;
        Ok((k.to_vec(), v.to_vec()))
    }

    /// Encodes the key columns' values alone (for gets, ranges and deletes).
    pub fn encode_key(&self, key: &[Option<Value<'_>>]) -> Result<Vec<u8>, RowError> {
        let mut b = TupleBuilder::new(self.key_desc());
        put_values(&mut b, &self.key, key)?;
        let t = b
            .build()
            .map_err(|source| self.field_error(&self.key, source, 0))?;
        Ok(t.as_bytes().to_vec())
    }

    /// Decodes a stored row into one value per column, key columns first, borrowing from the
    /// tuples. Out-of-band values come back as [`Value::Adaptive`] addresses (read them with
    /// [`crate::blob::read_blob`]).
    pub fn decode_row<'a>(
        &self,
        key: &'a [u8],
        value: &'a [u8],
    ) -> Result<Vec<Option<Value<'a>>>, RowError> {
        let mut out = Vec::with_capacity(self.key.len() + self.value.len());
        RowDecoder::new(self).decode_into(key, value, &mut out)?;
        Ok(out)
    }

    #[cold]
    fn field_error(&self, cols: &[Column], source: TupleError, offset: usize) -> RowError {
        let field = match &source {
            TupleError::BadField { field, .. }
            | TupleError::WrongEncoding { field, .. }
            | TupleError::FieldOutOfRange { field, .. }
            | TupleError::UnexpectedNull { field }
            | TupleError::BadValue { field, .. } => Some(*field),
            _ => None,
        };
        let column = match field.and_then(|f| cols.get(f)) {
            Some(c) => quote_bounded(&c.name),
            None => format!("#{offset}"),
        };
        RowError::Value { column, source }
    }
}

impl fmt::Display for RowSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

/// Puts `values` into `b` for `cols`; text and bytes given for adaptive columns go inline (the
/// build moves large ones out of band when it has a blob store).
fn put_values(
    b: &mut TupleBuilder,
    cols: &[Column],
    values: &[Option<Value<'_>>],
) -> Result<(), RowError> {
    if values.len() != cols.len() {
        return Err(RowError::Arity {
            expected: cols.len(),
            got: values.len(),
        });
    }
    for (i, (c, v)) in cols.iter().zip(values).enumerate() {
        let r = match (*v, c.ty.enc.is_adaptive()) {
            (Some(Value::String(s)), true) => b.put_adaptive_inline(i, s.as_bytes()),
            (Some(Value::Bytes(s) | Value::Json(s) | Value::Geometry(s)), true) => {
                b.put_adaptive_inline(i, s)
            }
            (v, _) => b.put(i, v),
        };
        r.map_err(|source| RowError::Value {
            column: quote_bounded(&c.name),
            source,
        })?;
    }
    Ok(())
}

/// Encodes rows into key and value tuples, reusing its buffers: no allocation per row once
/// warm.
#[derive(Debug)]
pub struct RowEncoder<'r> {
    schema: &'r RowSchema,
    key: TupleBuilder,
    value: TupleBuilder,
    key_out: Vec<u8>,
    value_out: Vec<u8>,
}

impl<'r> RowEncoder<'r> {
    /// An encoder for rows of `schema`.
    pub fn new(schema: &'r RowSchema) -> RowEncoder<'r> {
        RowEncoder {
            schema,
            key: TupleBuilder::new(schema.key_desc()),
            value: TupleBuilder::new(schema.value_desc()),
            key_out: Vec::new(),
            value_out: Vec::new(),
        }
    }

    /// Encodes a row (key columns first); the tuples borrow the encoder until the next call.
    /// Fails if a value must move out of band (use [`RowEncoder::encode_with`]).
    pub fn encode(&mut self, row: &[Option<Value<'_>>]) -> Result<(&[u8], &[u8]), RowError> {
        self.encode_with(row, &mut prollystore_format::tuple::NoBlobStore)
    }

    /// Encodes a row, moving large adaptive values out of band through `blobs` (for example
    /// [`crate::blob::StoreBlobs`] over the map's store), as Dolt does.
    pub fn encode_with(
        &mut self,
        row: &[Option<Value<'_>>],
        blobs: &mut dyn BlobStore,
    ) -> Result<(&[u8], &[u8]), RowError> {
        let schema = self.schema;
        let n = schema.key.len();
        if row.len() != n + schema.value.len() {
            return Err(RowError::Arity {
                expected: n + schema.value.len(),
                got: row.len(),
            });
        }
        let (kv, vv) = row.split_at(n);
        put_values(&mut self.key, &schema.key, kv)?;
        put_values(&mut self.value, &schema.value, vv)?;
        self.key_out.clear();
        self.value_out.clear();
        self.key
            .build_into(blobs, &mut self.key_out)
            .map_err(|e| schema.field_error(&schema.key, e, 0))?;
        self.value
            .build_into(blobs, &mut self.value_out)
            .map_err(|e| schema.field_error(&schema.value, e, n))?;
        Ok((&self.key_out, &self.value_out))
    }
}

/// Decodes stored rows of one schema (descriptors made once).
#[derive(Debug)]
pub struct RowDecoder<'r> {
    schema: &'r RowSchema,
    key: TupleDesc,
    value: TupleDesc,
}

impl<'r> RowDecoder<'r> {
    /// A decoder for rows of `schema`.
    pub fn new(schema: &'r RowSchema) -> RowDecoder<'r> {
        RowDecoder {
            schema,
            key: schema.key_desc(),
            value: schema.value_desc(),
        }
    }

    /// Decodes a stored row into `out` (cleared first): one value per column, key columns
    /// first, borrowing from the tuples.
    pub fn decode_into<'a>(
        &self,
        key: &'a [u8],
        value: &'a [u8],
        out: &mut Vec<Option<Value<'a>>>,
    ) -> Result<(), RowError> {
        out.clear();
        self.key
            .values_into(key, out)
            .map_err(|e| self.part_error(Part::Key, e))?;
        self.value
            .values_into(value, out)
            .map_err(|e| self.part_error(Part::Value, e))
    }

    /// The error for a bad field of the key or value tuple, naming the column (off the hot
    /// loop: building it formats text).
    #[cold]
    #[inline(never)]
    fn part_error(&self, part: Part, e: TupleError) -> RowError {
        let schema = self.schema;
        match part {
            Part::Key => schema.field_error(&schema.key, e, 0),
            Part::Value => schema.field_error(&schema.value, e, schema.key.len()),
        }
    }
}

/// Which of a stored row's two tuples is being decoded.
#[derive(Clone, Copy)]
enum Part {
    Key,
    Value,
}
