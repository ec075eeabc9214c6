//! The one codec of Dolt values: how a column's SQL type and its stored [`Encoding`] go
//! together ([`Kind`], decided once per column), where each visible column lives in a row's
//! tuples ([`Slot`]), how its stored bytes are read ([`Read`]), and a table's [`RowPlan`]
//! compiled once from its schema.
//!
//! One decoder, [`RowPlan::decode`], reads a stored field and hands it to a [`FieldSink`]:
//! the typed row decoder's [`SqlValue`]s (`value_of`), the CSV export's text, the Arrow
//! crate's column builders and the Python module's objects are sinks, each a small impl in
//! its own crate. The fast paths live in the decoder (fixed-width numbers, dates and
//! one-word decimals read straight from the field's bytes, inline text handed over as it is,
//! ASCII checked first) and in the sinks' methods (a value straight into a builder); sinks are
//! generic parameters, so nothing is dispatched dynamically per field. A new type or encoding
//! is taught here once. The writer's direct import fields take their per-column choice from
//! the same [`Kind`].
//!
//! Values are printed as Dolt prints them by [`SqlValue::to_text`] / [`SqlValue::csv_bytes`]
//! (`value_text` holds the number, date and time formatting they call).
//!
//! The other direction, in this module's two children:
//! * [`encode`]: a [`SqlValue`] (or its text, read by [`encode::parse_value`]) into a column's
//!   stored field ([`encode::put_field`], the one encoder: the writer, key lookups and
//!   bounds, Arrow and Python values all come through it) and key tuples of an index
//!   ([`encode::KeyEncoder`]).
//! * `text_fields`: the bulk import's direct path, a CSV field's text encoded straight into
//!   its stored field for the common kinds (same grammar, same bytes), everything else handed
//!   back to [`encode`].

use prollystore_format::message::BlobNode;
use prollystore_format::tuple::{text_of, Adaptive, Date, Decimal, Tuple, TupleDesc, Value};
use prollystore_format::{Address, Encoding};

use crate::db::{Database, Table};
use crate::error::{bad_chunk, malformed, DoltError, Result};
use crate::schema::{Column, Schema, SqlType};
use crate::sql_value::{decimal_text, SqlValue};

pub mod encode;
pub(crate) mod text_fields;

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
            SqlType::Enum { .. } => when(enc == E::Enum, Kind::Enum),
            SqlType::Set { .. } => when(enc == E::Set, Kind::Set),
            SqlType::Text { .. } => Kind::Text(family(E::String, E::StringAdaptive, E::StringAddr)),
            SqlType::Binary { fixed, .. } => Kind::Binary {
                storage: family(E::Bytes, E::BytesAdaptive, E::BytesAddr),
                fixed: *fixed,
            },
            SqlType::Json => Kind::Json(family(E::Json, E::JsonAdaptive, E::JsonAddr)),
            SqlType::Geometry { .. } => {
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
    /// How [`RowPlan::decode`] reads its stored bytes.
    pub read: Read,
}

/// How a field's stored bytes are read, chosen once per column from its [`Kind`] and the
/// encoding of its field: the common pairs straight from the bytes, the rest through the
/// tuple's checked [`Value`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Read {
    /// TINYINT in `Int8`.
    Int8,
    /// SMALLINT in `Int16`.
    Int16,
    /// INT or MEDIUMINT in `Int32`.
    Int32,
    /// BIGINT in `Int64`.
    Int64,
    /// TINYINT UNSIGNED in `Uint8`.
    Uint8,
    /// SMALLINT UNSIGNED in `Uint16`.
    Uint16,
    /// INT or MEDIUMINT UNSIGNED in `Uint32`.
    Uint32,
    /// BIGINT UNSIGNED in `Uint64`, or BIT in `Bit64`.
    Uint64,
    /// FLOAT in `Float32`.
    Float,
    /// DOUBLE in `Float64`.
    Double,
    /// DECIMAL with this scale.
    Decimal(u8),
    /// DATE in `Date`.
    Date,
    /// DATETIME/TIMESTAMP in `Datetime`.
    Datetime {
        /// Fraction digits shown.
        fsp: u8,
        /// TIMESTAMP rather than DATETIME.
        timestamp: bool,
    },
    /// Text in a plain `String` field (NUL-terminated UTF-8).
    String,
    /// Text, bytes, JSON or geometry in an adaptive field (inline, or out of band in a blob
    /// tree).
    Adaptive,
    /// Through the tuple's checked [`Value`].
    Value,
}

impl Read {
    /// The read of a column of kind `kind` whose field is stored in encoding `enc`.
    pub fn of(kind: &Kind, enc: Encoding) -> Read {
        use Encoding as E;
        match (kind, enc) {
            (Kind::Int, E::Int8) => Read::Int8,
            (Kind::Int, E::Int16) => Read::Int16,
            (Kind::Int, E::Int32) => Read::Int32,
            (Kind::Int, E::Int64) => Read::Int64,
            (Kind::Int, E::Uint8) => Read::Uint8,
            (Kind::Int, E::Uint16) => Read::Uint16,
            (Kind::Int, E::Uint32) => Read::Uint32,
            (Kind::Int, E::Uint64) | (Kind::Bit, E::Bit64) => Read::Uint64,
            (Kind::Float, E::Float32) => Read::Float,
            (Kind::Double, E::Float64) => Read::Double,
            (Kind::Decimal { scale, .. }, E::Decimal) => Read::Decimal(*scale),
            (Kind::Date, E::Date) => Read::Date,
            (Kind::Datetime { fsp, timestamp }, E::Datetime) => Read::Datetime {
                fsp: *fsp,
                timestamp: *timestamp,
            },
            (Kind::Text(_), E::String) => Read::String,
            (
                Kind::Text(s) | Kind::Binary { storage: s, .. } | Kind::Json(s) | Kind::Geometry(s),
                e,
            ) if e.is_adaptive() && *s == Storage::Adaptive => Read::Adaptive,
            _ => Read::Value,
        }
    }
}

/// Where decoded fields go: CSV text, Arrow builders, Python objects, [`SqlValue`]s. Each
/// method takes one non-NULL value of the kind it names and returns false when the sink does
/// not take it (a builder of another type, a value the fast route leaves to a slower one);
/// [`RowPlan::decode`] passes that on. Text and bytes given to a method are borrowed: a sink
/// copies what it keeps.
pub trait FieldSink {
    /// A NULL.
    fn null(&mut self);
    /// A signed integer (TINYINT … BIGINT).
    fn int(&mut self, v: i64) -> bool;
    /// An unsigned integer, a BIT value, or an ENUM/SET number outside its own kind.
    fn uint(&mut self, v: u64) -> bool;
    /// A FLOAT.
    fn float(&mut self, v: f32) -> bool;
    /// A DOUBLE.
    fn double(&mut self, v: f64) -> bool;
    /// A DECIMAL shown with `scale` fraction digits.
    fn decimal(&mut self, d: &Decimal<'_>, scale: u8) -> bool;
    /// A YEAR.
    fn year(&mut self, y: u16) -> bool;
    /// A DATE (its stored parts; zero dates included).
    fn date(&mut self, d: Date) -> bool;
    /// A TIME in microseconds.
    fn time(&mut self, us: i64) -> bool;
    /// A DATETIME (or TIMESTAMP, UTC, when `timestamp`) in Unix microseconds, shown with
    /// `fsp` fraction digits.
    fn datetime(&mut self, us: i64, fsp: u8, timestamp: bool) -> bool;
    /// An ENUM member: its 1-based index (0: the empty value) among `members`.
    fn enumeration(&mut self, index: u16, members: &[String]) -> bool;
    /// A SET: its member bits over `members`.
    fn set(&mut self, bits: u64, members: &[String]) -> bool;
    /// Text known to be UTF-8.
    #[inline]
    fn str(&mut self, s: &str) -> bool {
        self.text(s.as_bytes())
    }
    /// Text stored as UTF-8 (a plain string field) and not checked yet: a sink whose own
    /// handling checks it anyway (ASCII text printed as it is, a strict UTF-8 decoder) takes
    /// it here and returns `Some`; `None`, the default, has the decoder check it and call
    /// [`FieldSink::str`] (or report text that is not UTF-8).
    #[inline]
    fn stored_str(&mut self, _b: &[u8]) -> Option<bool> {
        None
    }
    /// Text bytes not checked as UTF-8 (shown with replacement characters where they are not).
    fn text(&mut self, b: &[u8]) -> bool;
    /// JSON text (bytes not checked as UTF-8).
    fn json(&mut self, b: &[u8]) -> bool;
    /// Bytes: BINARY (already padded to its width), VARBINARY, BLOB, GEOMETRY, and values of
    /// kinds read by their stored value alone.
    fn bytes(&mut self, b: &[u8]) -> bool;
}

/// The ENUM or SET member names of `col` (none for other types).
#[inline]
pub fn members(col: &Column) -> &[String] {
    match &col.sql_type {
        SqlType::Enum { members: names, .. } | SqlType::Set { members: names, .. } => names,
        _ => &[],
    }
}

/// Field `b` as a little-endian `N`-byte value, if it has that width.
#[inline(always)]
fn le<const N: usize>(b: &[u8]) -> Option<[u8; N]> {
    b.try_into().ok()
}

/// Hands the payload `b` of a text, bytes, JSON or geometry value of kind `kind` to `sink`.
#[inline(always)]
fn payload_into<S: FieldSink>(kind: &Kind, b: &[u8], sink: &mut S) -> bool {
    match kind {
        Kind::Text(_) => sink.text(b),
        Kind::Json(_) => sink.json(b),
        Kind::Binary { fixed: Some(n), .. } if b.len() < *n as usize => {
            let mut padded = b.to_vec();
            padded.resize(*n as usize, 0);
            sink.bytes(&padded)
        }
        _ => sink.bytes(b),
    }
}

/// Hands a decoded value `v` of column `col` (kind `kind`) to `sink`; `bytes` is the payload
/// of a string, bytes, JSON, geometry or adaptive value (blob trees already read, see
/// [`payload`]). False if the sink does not take it, or if nothing can show it (an encoding
/// with no value Dolt shows).
#[inline]
pub fn decode_value<S: FieldSink>(
    col: &Column,
    kind: &Kind,
    v: &Value<'_>,
    bytes: Option<&[u8]>,
    sink: &mut S,
) -> bool {
    match (kind, v) {
        (Kind::Decimal { scale, .. }, Value::Decimal(d)) => sink.decimal(d, *scale),
        (Kind::Enum, Value::Enum(e)) => sink.enumeration(*e, members(col)),
        (Kind::Set, Value::Set(bits)) => sink.set(*bits, members(col)),
        (Kind::Datetime { fsp, timestamp }, Value::Datetime(us)) => {
            sink.datetime(*us, *fsp, *timestamp)
        }
        (Kind::Json(_) | Kind::Text(_) | Kind::Binary { fixed: Some(_), .. }, _) => {
            payload_into(kind, bytes.unwrap_or(&[]), sink)
        }
        (_, Value::Int8(x)) => sink.int((*x).into()),
        (_, Value::Int16(x)) => sink.int((*x).into()),
        (_, Value::Int32(x)) => sink.int((*x).into()),
        (_, Value::Int64(x)) => sink.int(*x),
        (_, Value::Uint8(x)) => sink.uint((*x).into()),
        (_, Value::Uint16(x)) => sink.uint((*x).into()),
        (_, Value::Uint32(x)) => sink.uint((*x).into()),
        (_, Value::Uint64(x) | Value::Bit64(x) | Value::Set(x)) => sink.uint(*x),
        (_, Value::Enum(e)) => sink.uint((*e).into()),
        (_, Value::Float32(x)) => sink.float(*x),
        (_, Value::Float64(x)) => sink.double(*x),
        (_, Value::Year(y)) => sink.year(*y),
        (_, Value::Date(d)) => sink.date(*d),
        (_, Value::Time(us)) => sink.time(*us),
        (_, Value::Datetime(us)) => sink.datetime(*us, 6, false),
        (_, _) => match bytes {
            Some(b) => sink.bytes(b),
            None => false,
        },
    }
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
            let kind = Kind::of_column(col);
            fields.push(Field {
                column,
                slot,
                read: Read::of(&kind, enc),
                kind,
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

    /// Decodes field `f` of the row stored as key tuple `kt` and value tuple `vt` of `table`
    /// (the plan's table) into `sink`: [`FieldSink::null`] for NULL and for VIRTUAL columns
    /// (computed by the caller), else the method of the value's kind. `scratch` holds
    /// out-of-band values read from their blob trees. Returns false if the sink did not take
    /// the value; fails for a field whose bytes are not its encoding's, and for a blob tree
    /// that cannot be read.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn decode<S: FieldSink>(
        &self,
        db: &Database,
        table: &Table,
        f: &Field,
        kt: Tuple<'_>,
        vt: Tuple<'_>,
        scratch: &mut Vec<u8>,
        sink: &mut S,
    ) -> Result<bool> {
        let (desc, t, i) = match f.slot {
            Slot::Key(i) => (&self.key_desc, kt, i),
            Slot::Value(i) => (&self.value_desc, vt, i),
            Slot::Virtual => {
                sink.null();
                return Ok(true);
            }
        };
        let Some(b) = desc.field(t, i) else {
            sink.null();
            return Ok(true);
        };
        match decode_fast(f, f.read, b, sink) {
            Some(taken) => Ok(taken),
            None => self.decode_checked(db, table, f, desc, t, i, scratch, sink),
        }
    }

    /// [`RowPlan::decode`] of field `f` of every row, a column at a time: `tuples` gives, in
    /// order, each row's tuple that holds the field (its key tuple for a [`Slot::Key`] field,
    /// else its value tuple; nothing is read from them for a VIRTUAL one). How to read the
    /// field is chosen once for the column instead of once per row, and each common kind
    /// runs a loop of its own (with the scans taking a leaf at a time, a warm GROUP BY took
    /// 0.76 of the time; `docs/PERF.md`, "SQL"). Stops at the first row the sink does not
    /// take and returns how many rows it took (all of them: the length of `tuples`); an error
    /// comes with the number of the row (from 0) it is about.
    #[allow(clippy::too_many_arguments)]
    pub fn decode_column<'t, S: FieldSink>(
        &self,
        db: &Database,
        table: &Table,
        f: &Field,
        tuples: impl Iterator<Item = Tuple<'t>>,
        scratch: &mut Vec<u8>,
        sink: &mut S,
    ) -> std::result::Result<usize, (usize, DoltError)> {
        let (desc, i) = match f.slot {
            Slot::Key(i) => (&self.key_desc, i),
            Slot::Value(i) => (&self.value_desc, i),
            Slot::Virtual => {
                let mut n = 0;
                for _ in tuples {
                    sink.null();
                    n += 1;
                }
                return Ok(n);
            }
        };
        // One loop per way of reading, each a function of its own with `read` a constant:
        // `decode_fast` is inlined into it and its choice folded away, and the loop is small
        // enough for the sink's appends to be inlined too.
        macro_rules! each_row {
            ($read:expr) => {
                self.column_loop(db, table, f, desc, i, tuples, scratch, sink, |b, sink| {
                    decode_fast(f, $read, b, sink)
                })
            };
        }
        match f.read {
            Read::Int8 => each_row!(Read::Int8),
            Read::Int16 => each_row!(Read::Int16),
            Read::Int32 => each_row!(Read::Int32),
            Read::Int64 => each_row!(Read::Int64),
            Read::Uint8 => each_row!(Read::Uint8),
            Read::Uint16 => each_row!(Read::Uint16),
            Read::Uint32 => each_row!(Read::Uint32),
            Read::Uint64 => each_row!(Read::Uint64),
            Read::Float => each_row!(Read::Float),
            Read::Double => each_row!(Read::Double),
            Read::Decimal(scale) => each_row!(Read::Decimal(scale)),
            Read::Date => each_row!(Read::Date),
            Read::Datetime { fsp, timestamp } => each_row!(Read::Datetime { fsp, timestamp }),
            Read::String => each_row!(Read::String),
            Read::Adaptive => each_row!(Read::Adaptive),
            Read::Value => each_row!(Read::Value),
        }
    }

    /// The loop of [`RowPlan::decode_column`] over one column's fields, each read by `fast`
    /// (a fast path of [`decode_fast`], or `None` for the checked route).
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn column_loop<'t, S: FieldSink>(
        &self,
        db: &Database,
        table: &Table,
        f: &Field,
        desc: &TupleDesc,
        i: usize,
        tuples: impl Iterator<Item = Tuple<'t>>,
        scratch: &mut Vec<u8>,
        sink: &mut S,
        fast: impl Fn(&[u8], &mut S) -> Option<bool>,
    ) -> std::result::Result<usize, (usize, DoltError)> {
        let mut n = 0;
        for t in tuples {
            let taken = match desc.field(t, i) {
                None => {
                    sink.null();
                    true
                }
                Some(b) => match fast(b, sink) {
                    Some(taken) => taken,
                    None => self
                        .decode_checked(db, table, f, desc, t, i, scratch, sink)
                        .map_err(|e| (n, e))?,
                },
            };
            if !taken {
                return Ok(n);
            }
            n += 1;
        }
        Ok(n)
    }

    /// The route of [`RowPlan::decode`] for the fields its fast paths leave: out-of-band
    /// values read from their blob trees, and everything else through the tuple's checked
    /// [`Value`] (which says what is wrong with a field that is not its encoding's). Kept out
    /// of line so that the fast paths inlined into each sink's loop stay small.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn decode_checked<S: FieldSink>(
        &self,
        db: &Database,
        table: &Table,
        f: &Field,
        desc: &TupleDesc,
        t: Tuple<'_>,
        i: usize,
        scratch: &mut Vec<u8>,
        sink: &mut S,
    ) -> Result<bool> {
        if f.read == Read::Adaptive {
            if let Some(Adaptive::OutOfBand { len, address }) =
                desc.field(t, i).and_then(Adaptive::from_bytes)
            {
                read_blob_exact(db, address, len, scratch)?;
                return Ok(payload_into(&f.kind, scratch, sink));
            }
        }
        let col = table
            .schema
            .columns
            .get(f.column)
            .ok_or_else(|| bad_chunk(table.schema_address, "a field names no column"))?;
        let v = desc
            .value(t, i)
            .map_err(|e| bad_chunk(table.address, format!("column {}: {e}", col.name)))?;
        let Some(v) = v else {
            sink.null();
            return Ok(true);
        };
        let bytes = payload(db, &v, scratch)?;
        Ok(decode_value(col, &f.kind, &v, bytes, sink))
    }
}

/// The common pairs of kind and encoding of [`RowPlan::decode`], straight from a field's
/// bytes `b`, read as `read` (`f.read`, or that constant in [`RowPlan::decode_column`]'s
/// loops): whether the sink took the value, or `None` for a field not of the expected shape
/// (and for the kinds read through [`Value`]), which takes the checked route that says what is
/// wrong with it.
#[inline(always)]
fn decode_fast<S: FieldSink>(f: &Field, read: Read, b: &[u8], sink: &mut S) -> Option<bool> {
    match read {
        Read::Int8 => le::<1>(b).map(|a| sink.int(i8::from_le_bytes(a).into())),
        Read::Int16 => le::<2>(b).map(|a| sink.int(i16::from_le_bytes(a).into())),
        Read::Int32 => le::<4>(b).map(|a| sink.int(i32::from_le_bytes(a).into())),
        Read::Int64 => le::<8>(b).map(|a| sink.int(i64::from_le_bytes(a))),
        Read::Uint8 => le::<1>(b).map(|a| sink.uint(a[0].into())),
        Read::Uint16 => le::<2>(b).map(|a| sink.uint(u16::from_le_bytes(a).into())),
        Read::Uint32 => le::<4>(b).map(|a| sink.uint(u32::from_le_bytes(a).into())),
        Read::Uint64 => le::<8>(b).map(|a| sink.uint(u64::from_le_bytes(a))),
        Read::Float => le::<4>(b).map(|a| sink.float(f32::from_le_bytes(a))),
        Read::Double => le::<8>(b).map(|a| sink.double(f64::from_le_bytes(a))),
        Read::Decimal(scale) => Decimal::from_bytes(b).map(|d| sink.decimal(&d, scale)),
        Read::Date => le::<4>(b).map(|a| sink.date(Date::from_raw(u32::from_le_bytes(a)))),
        Read::Datetime { fsp, timestamp } => {
            le::<8>(b).map(|a| sink.datetime(i64::from_le_bytes(a), fsp, timestamp))
        }
        // Plain strings are NUL-terminated UTF-8 (checked: the checked route reports
        // invalid text as the error it is).
        Read::String => match b.split_last() {
            Some((0, s)) => sink
                .stored_str(s)
                .or_else(|| text_of(s).map(|s| sink.str(s))),
            _ => None,
        },
        Read::Adaptive => match Adaptive::from_bytes(b) {
            Some(Adaptive::Inline(p)) => Some(payload_into(&f.kind, p, sink)),
            _ => None,
        },
        Read::Value => None,
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
    let mut sink = SqlValueSink::default();
    decode_value(col, kind, &v, bytes, &mut sink);
    sink.0.ok_or_else(|| cannot_show(col))
}

/// The error for a stored field no sink can show: every encoding Dolt writes for a column
/// is shown, so the column's stored encoding does not fit its type (a value of another kind,
/// a hash or spatial cell).
fn cannot_show(col: &Column) -> DoltError {
    malformed(
        format!("column {:?} ({})", col.name, col.sql_type_text),
        format!(
            "its stored encoding {} holds no value of its type to show",
            col.encoding
        ),
    )
}

/// Field `f` of a stored row of `table` (by `plan`) as the value Dolt shows (`None`: NULL, or
/// a VIRTUAL column, which the caller computes).
#[inline]
pub(crate) fn sql_value_of(
    db: &Database,
    table: &Table,
    plan: &RowPlan,
    f: &Field,
    kt: Tuple<'_>,
    vt: Tuple<'_>,
    scratch: &mut Vec<u8>,
) -> Result<Option<SqlValue>> {
    let mut sink = SqlValueSink::default();
    if plan.decode(db, table, f, kt, vt, scratch, &mut sink)? {
        return Ok(sink.0);
    }
    match table.schema.columns.get(f.column) {
        Some(col) => Err(cannot_show(col)),
        None => Ok(None),
    }
}

/// The [`SqlValue`] sink: the value Dolt shows (`None` for NULL). Takes every value.
#[derive(Default)]
pub(crate) struct SqlValueSink(pub(crate) Option<SqlValue>);

impl SqlValueSink {
    #[inline]
    fn put(&mut self, v: SqlValue) -> bool {
        self.0 = Some(v);
        true
    }
}

impl FieldSink for SqlValueSink {
    #[inline]
    fn null(&mut self) {
        self.0 = None;
    }
    #[inline]
    fn int(&mut self, v: i64) -> bool {
        self.put(SqlValue::Int(v))
    }
    #[inline]
    fn uint(&mut self, v: u64) -> bool {
        self.put(SqlValue::Uint(v))
    }
    #[inline]
    fn float(&mut self, v: f32) -> bool {
        self.put(SqlValue::Float(v))
    }
    #[inline]
    fn double(&mut self, v: f64) -> bool {
        self.put(SqlValue::Double(v))
    }
    #[inline]
    fn decimal(&mut self, d: &Decimal<'_>, scale: u8) -> bool {
        self.put(SqlValue::Decimal(decimal_text(d, scale)))
    }
    #[inline]
    fn year(&mut self, y: u16) -> bool {
        self.put(SqlValue::Year(y))
    }
    #[inline]
    fn date(&mut self, d: Date) -> bool {
        self.put(SqlValue::Date(d))
    }
    #[inline]
    fn time(&mut self, us: i64) -> bool {
        self.put(SqlValue::Time(us))
    }
    #[inline]
    fn datetime(&mut self, us: i64, fsp: u8, _timestamp: bool) -> bool {
        self.put(SqlValue::Datetime(us, fsp))
    }
    #[inline]
    fn enumeration(&mut self, index: u16, members: &[String]) -> bool {
        let name = members
            .get(usize::from(index).wrapping_sub(1))
            .cloned()
            .unwrap_or_default();
        self.put(SqlValue::Enum(index, name))
    }
    #[inline]
    fn set(&mut self, bits: u64, members: &[String]) -> bool {
        self.put(SqlValue::Set(bits, set_text(members, bits)))
    }
    #[inline]
    fn str(&mut self, s: &str) -> bool {
        self.put(SqlValue::Text(s.to_owned()))
    }
    #[inline]
    fn text(&mut self, b: &[u8]) -> bool {
        self.put(SqlValue::Text(String::from_utf8_lossy(b).into_owned()))
    }
    #[inline]
    fn json(&mut self, b: &[u8]) -> bool {
        self.put(SqlValue::Json(String::from_utf8_lossy(b).into_owned()))
    }
    #[inline]
    fn bytes(&mut self, b: &[u8]) -> bool {
        self.put(SqlValue::Bytes(b.to_vec()))
    }
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
    read_blob_exact(db, root, expected_len, &mut out)?;
    Ok(out)
}

/// Reads the whole contents of a blob tree into `out` (cleared first), which must come to
/// `expected_len` bytes.
fn read_blob_exact(
    db: &Database,
    root: Address,
    expected_len: u64,
    out: &mut Vec<u8>,
) -> Result<()> {
    out.clear();
    read_blob_into(db, root, out, 0)?;
    if out.len() as u64 != expected_len {
        return Err(bad_chunk(
            root,
            format!(
                "blob holds {} bytes, the row says {expected_len}",
                out.len()
            ),
        ));
    }
    Ok(())
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
