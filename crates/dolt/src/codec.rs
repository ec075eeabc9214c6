//! The one codec of Dolt values: how a column's SQL type and its stored [`Encoding`] go
//! together ([`Kind`], decided once per column), where each visible column lives in a row's
//! tuples ([`Slot`]), and a table's [`RowPlan`] compiled once from its schema. Every reader
//! and writer of rows starts from it: the typed row decoder (`value_of`, into [`SqlValue`]),
//! the CSV export, the Arrow crate's direct builders, the Python module's point gets and the
//! writer's direct import fields. Each of those keeps its own fast path (a getter straight into
//! a builder, ASCII text as it is) but takes the decision of which path a column may take from
//! the plan, so a new type or encoding is taught here once.
//!
//! Values are printed as Dolt prints them by [`SqlValue::to_text`] / [`SqlValue::csv_bytes`]
//! (`value_text` holds the number, date and time formatting they call).

use prollystore_format::message::BlobNode;
use prollystore_format::tuple::{Adaptive, TupleDesc, Value};
use prollystore_format::{Address, Encoding};

use crate::db::Database;
use crate::error::{bad_chunk, DoltError, Result};
use crate::schema::{Column, Schema, SqlType};
use crate::sql_value::{decimal_text, SqlValue};

/// How the bytes of a text, binary, JSON or geometry column are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    /// Inline in the tuple (`String`, `Bytes`, `Json`, `Geometry`).
    Plain,
    /// Adaptive: inline, or out of band in a blob tree (`*Adaptive`).
    Adaptive,
    /// Always in a blob tree, by address (legacy `*Addr`).
    Addr,
    /// An encoding of another family: decoded by its stored value only.
    Mismatch,
}

/// What a column is, for reading and writing its values: its SQL type with the stored
/// encoding it was found in. A kind other than [`Kind::Other`] promises that the encoding is
/// the one the type is stored in (the fast paths rely on it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// TINYINT … BIGINT in one of the eight integer encodings (signed or not, as stored).
    Int,
    /// BIT(n) in `Bit64`.
    Bit,
    /// FLOAT in `Float32`.
    Float,
    /// DOUBLE in `Float64`.
    Double,
    /// DECIMAL(precision, scale) in `Decimal`.
    Decimal {
        /// Total digits.
        precision: u8,
        /// Digits after the point.
        scale: u8,
    },
    /// YEAR in `Year`.
    Year,
    /// DATE in `Date`.
    Date,
    /// TIME(fsp) in `Time`.
    Time(u8),
    /// DATETIME(fsp) or TIMESTAMP(fsp) (`timestamp`) in `Datetime`.
    Datetime {
        /// Fraction digits shown.
        fsp: u8,
        /// TIMESTAMP (UTC) rather than DATETIME.
        timestamp: bool,
    },
    /// ENUM in `Enum` (the member names are the column type's).
    Enum,
    /// SET in `Set`.
    Set,
    /// CHAR/VARCHAR/TEXT.
    Text(Storage),
    /// BINARY/VARBINARY/BLOB; `fixed`: BINARY(n), zero-padded to n bytes as Dolt shows it.
    Binary {
        /// How the bytes are stored.
        storage: Storage,
        /// BINARY(n)'s width.
        fixed: Option<u32>,
    },
    /// JSON.
    Json(Storage),
    /// GEOMETRY and its subtypes.
    Geometry(Storage),
    /// Anything else (VECTOR, unknown types, a type in an encoding not its own): read by the
    /// stored value alone.
    Other,
}

impl Kind {
    /// The kind of a column of type `ty` stored in encoding `enc`.
    pub fn of(ty: &SqlType, enc: Encoding) -> Kind {
        use Encoding as E;
        let family = |plain: E, adaptive: E, addr: E| match enc {
            e if e == plain => Storage::Plain,
            e if e == adaptive => Storage::Adaptive,
            e if e == addr => Storage::Addr,
            _ => Storage::Mismatch,
        };
        let when = |ok: bool, k: Kind| if ok { k } else { Kind::Other };
        match ty {
            SqlType::Int { .. } => when(enc.integer().is_some(), Kind::Int),
            SqlType::Bit(_) => when(enc == E::Bit64, Kind::Bit),
            SqlType::Float => when(enc == E::Float32, Kind::Float),
            SqlType::Double => when(enc == E::Float64, Kind::Double),
            SqlType::Decimal { precision, scale } => when(
                enc == E::Decimal,
                Kind::Decimal {
                    precision: *precision,
                    scale: *scale,
                },
            ),
            SqlType::Year => when(enc == E::Year, Kind::Year),
            SqlType::Date => when(enc == E::Date, Kind::Date),
            SqlType::Time(fsp) => when(enc == E::Time, Kind::Time(*fsp)),
            SqlType::Datetime(fsp) | SqlType::Timestamp(fsp) => when(
                enc == E::Datetime,
                Kind::Datetime {
                    fsp: *fsp,
                    timestamp: matches!(ty, SqlType::Timestamp(_)),
                },
            ),
            SqlType::Enum(_) => when(enc == E::Enum, Kind::Enum),
            SqlType::Set(_) => when(enc == E::Set, Kind::Set),
            SqlType::Text { .. } => Kind::Text(family(E::String, E::StringAdaptive, E::StringAddr)),
            SqlType::Binary { fixed, .. } => Kind::Binary {
                storage: family(E::Bytes, E::BytesAdaptive, E::BytesAddr),
                fixed: *fixed,
            },
            SqlType::Json => Kind::Json(family(E::Json, E::JsonAdaptive, E::JsonAddr)),
            SqlType::Geometry(_) => {
                Kind::Geometry(family(E::Geometry, E::GeomAdaptive, E::GeomAddr))
            }
            SqlType::Vector(_) | SqlType::Other(_) => Kind::Other,
        }
    }

    /// The kind of `col` as its schema stores it in value tuples.
    pub fn of_column(col: &Column) -> Kind {
        Kind::of(&col.sql_type, col.encoding)
    }
}

/// Where a visible column's value lives in a row's tuples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// Field `i` of the key tuple.
    Key(usize),
    /// Field `i` of the value tuple.
    Value(usize),
    /// A VIRTUAL generated column, computed from the others (stored nowhere).
    Virtual,
}

/// One visible column of a [`RowPlan`].
#[derive(Clone, Debug)]
pub struct Field {
    /// Its index in the schema's columns.
    pub column: usize,
    /// Where it is stored.
    pub slot: Slot,
    /// Its kind (type with the column's value encoding).
    pub kind: Kind,
    /// The encoding of its field in the tuple it is stored in (a key tuple's may differ from
    /// the column's, see [`crate::schema::key_encoding`]); the column's for VIRTUAL columns.
    pub enc: Encoding,
}

/// A table's row layout, compiled once from its schema: the key and value tuple descriptors
/// and, per visible column in order, where it is stored and its [`Kind`].
#[derive(Clone, Debug)]
pub struct RowPlan {
    /// The clustered index's key tuples.
    pub key_desc: TupleDesc,
    /// The clustered index's value tuples.
    pub value_desc: TupleDesc,
    /// One per visible column.
    pub fields: Vec<Field>,
}

impl RowPlan {
    /// The plan of `schema`'s clustered index; `schema_address` names it in errors. Fails for
    /// a stored column that is in neither tuple.
    pub fn new(schema: &Schema, schema_address: prollystore_format::Address) -> Result<RowPlan> {
        let key_desc = schema.key_desc();
        let value_desc = schema.value_desc();
        let mut fields = Vec::new();
        for column in schema.visible_columns() {
            let Some(col) = schema.columns.get(column) else {
                continue;
            };
            let slot = if col.virtual_ {
                Slot::Virtual
            } else if let Some(k) = schema.key_columns.iter().position(|&c| c == column) {
                Slot::Key(k)
            } else if let Some(v) = schema.value_columns.iter().position(|&c| c == column) {
                Slot::Value(v)
            } else {
                return Err(bad_chunk(
                    schema_address,
                    format!("column {column} is in no tuple"),
                ));
            };
            let enc = match slot {
                Slot::Key(i) => key_desc.types().get(i),
                Slot::Value(i) => value_desc.types().get(i),
                Slot::Virtual => None,
            }
            .map_or(col.encoding, |t| t.enc);
            fields.push(Field {
                column,
                slot,
                kind: Kind::of_column(col),
                enc,
            });
        }
        Ok(RowPlan {
            key_desc,
            value_desc,
            fields,
        })
    }

    /// True if some visible column is VIRTUAL (computed, not stored).
    pub fn has_virtual(&self) -> bool {
        self.fields.iter().any(|f| f.slot == Slot::Virtual)
    }
}

/// The payload of a string, bytes, JSON, geometry or adaptive value `v` (`None` for other
/// values): inline bytes as they are, blob trees (out-of-band adaptive values and legacy
/// `*_addr` fields) read into `scratch`.
pub fn payload<'a>(
    db: &Database,
    v: &'a Value<'_>,
    scratch: &'a mut Vec<u8>,
) -> Result<Option<&'a [u8]>> {
    Ok(match v {
        Value::Adaptive(Adaptive::Inline(b)) => Some(b),
        Value::Adaptive(Adaptive::OutOfBand { len, address }) => {
            *scratch = read_blob(db, *address, *len)?;
            Some(scratch)
        }
        Value::Address(a) => {
            scratch.clear();
            if !a.is_zero() {
                read_blob_into(db, *a, scratch, 0)?;
            }
            Some(scratch)
        }
        Value::String(s) => Some(s.as_bytes()),
        Value::Bytes(b) | Value::Json(b) | Value::Geometry(b) | Value::Extended(b) => Some(b),
        _ => None,
    })
}

/// A decoded field as the value Dolt shows for `col` of kind `kind`; `bytes` is the payload
/// of a string, bytes, JSON, geometry or adaptive field (blob trees already read). The
/// [`SqlValue`] sink of the codec.
#[inline]
pub(crate) fn value_of(
    col: &Column,
    kind: &Kind,
    v: Value<'_>,
    bytes: Option<&[u8]>,
) -> Result<SqlValue> {
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let out = match (kind, v) {
        (Kind::Decimal { scale, .. }, Value::Decimal(d)) => {
            SqlValue::Decimal(decimal_text(&d, *scale))
        }
        (Kind::Enum, Value::Enum(e)) => SqlValue::Enum(
            e,
            match &col.sql_type {
                SqlType::Enum(names) => names
                    .get(usize::from(e).wrapping_sub(1))
                    .cloned()
                    .unwrap_or_default(),
                _ => String::new(),
            },
        ),
        (Kind::Set, Value::Set(bits)) => SqlValue::Set(
            bits,
            match &col.sql_type {
                SqlType::Set(names) => set_text(names, bits),
                _ => String::new(),
            },
        ),
        (Kind::Datetime { fsp, .. }, Value::Datetime(us)) => SqlValue::Datetime(us, *fsp),
        (Kind::Json(_), _) => SqlValue::Json(text(bytes.unwrap_or(&[]))),
        (Kind::Text(_), _) => SqlValue::Text(text(bytes.unwrap_or(&[]))),
        (Kind::Binary { fixed: Some(n), .. }, _) => {
            let mut b = bytes.unwrap_or(&[]).to_vec();
            if b.len() < *n as usize {
                b.resize(*n as usize, 0);
            }
            SqlValue::Bytes(b)
        }
        (_, Value::Int8(x)) => SqlValue::Int(x.into()),
        (_, Value::Int16(x)) => SqlValue::Int(x.into()),
        (_, Value::Int32(x)) => SqlValue::Int(x.into()),
        (_, Value::Int64(x)) => SqlValue::Int(x),
        (_, Value::Uint8(x)) => SqlValue::Uint(x.into()),
        (_, Value::Uint16(x)) => SqlValue::Uint(x.into()),
        (_, Value::Uint32(x)) => SqlValue::Uint(x.into()),
        (_, Value::Uint64(x)) | (_, Value::Bit64(x)) => SqlValue::Uint(x),
        (_, Value::Float32(x)) => SqlValue::Float(x),
        (_, Value::Float64(x)) => SqlValue::Double(x),
        (_, Value::Year(y)) => SqlValue::Year(y),
        (_, Value::Date(d)) => SqlValue::Date(d),
        (_, Value::Time(us)) => SqlValue::Time(us),
        (_, Value::Datetime(us)) => SqlValue::Datetime(us, 6),
        (_, Value::Enum(e)) => SqlValue::Uint(e.into()),
        (_, Value::Set(s)) => SqlValue::Uint(s),
        (_, _) => match bytes {
            Some(b) => SqlValue::Bytes(b.to_vec()),
            None => {
                return Err(DoltError::Unsupported(format!(
                    "column {} ({}): cannot show encoding {}",
                    col.name, col.sql_type_text, col.encoding
                )))
            }
        },
    };
    Ok(out)
}

/// The members of a SET value `bits`, comma-joined as Dolt shows them.
pub fn set_text(names: &[String], bits: u64) -> String {
    let mut text = String::new();
    for (k, n) in names.iter().enumerate().take(64) {
        if bits & (1u64 << k) != 0 {
            if !text.is_empty() {
                text.push(',');
            }
            text.push_str(n);
        }
    }
    text
}

/// Reads the whole contents of a blob tree.
pub fn read_blob(db: &Database, root: Address, expected_len: u64) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(usize::try_from(expected_len.min(1 << 24)).unwrap_or(0));
    read_blob_into(db, root, &mut out, 0)?;
    if out.len() as u64 != expected_len {
        return Err(bad_chunk(
            root,
            format!(
                "blob holds {} bytes, the row says {expected_len}",
                out.len()
            ),
        ));
    }
    Ok(out)
}

pub(crate) fn read_blob_into(
    db: &Database,
    address: Address,
    out: &mut Vec<u8>,
    depth: usize,
) -> Result<()> {
    if depth > 32 {
        return Err(bad_chunk(address, "blob tree is too deep"));
    }
    let chunk = db.source().chunk(&address)?;
    let node = BlobNode::verify(&chunk).map_err(|e| bad_chunk(address, e.to_string()))?;
    if node.is_leaf() {
        out.extend_from_slice(node.payload());
    } else {
        for i in 0..node.child_count() {
            read_blob_into(db, node.child(i), out, depth + 1)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_need_the_types_own_encoding() {
        let int = SqlType::parse("int unsigned");
        assert_eq!(Kind::of(&int, Encoding::Uint32), Kind::Int);
        assert_eq!(Kind::of(&int, Encoding::Float64), Kind::Other);
        assert_eq!(
            Kind::of(&SqlType::parse("text"), Encoding::StringAdaptive),
            Kind::Text(Storage::Adaptive)
        );
        assert_eq!(
            Kind::of(&SqlType::parse("varchar(3)"), Encoding::Bytes),
            Kind::Text(Storage::Mismatch)
        );
        assert_eq!(
            Kind::of(&SqlType::parse("timestamp(3)"), Encoding::Datetime),
            Kind::Datetime {
                fsp: 3,
                timestamp: true
            }
        );
        assert_eq!(
            Kind::of(&SqlType::parse("vector(3)"), Encoding::BytesAdaptive),
            Kind::Other
        );
        assert_eq!(
            set_text(&["a".into(), "b".into(), "c".into()], 0b101),
            "a,c"
        );
    }
}
