//! Typed values to key tuples: a [`SqlValue`] (or the CLI's text for one) becomes the stored
//! field of a column as Dolt encodes it, so a key can be looked up or bounded in an index map.
//! Text keys are compared under the index's collation by the map itself, so a spelling that the
//! collation calls equal finds the row, as in Dolt.
//!
//! [`parse_value`] reads a Dolt value's text for a column, through the one grammar of
//! [`value_parse`] (numbers, dates, times) and [`decimal_parts`] (a decimal scaled to its
//! column): the writer, generated columns and the test tables use it. The writer's direct
//! import fields (`codec::text_fields`) read with the same grammar, to the same
//! values, and give anything they do not take whole to it.

use prollystore::blob::StoreBlobs;
use prollystore::MemoryStore;
use prollystore_format::tuple::{
    civil_from_days, round_datetime, Date, Decimal, TupleBuilder, TupleDesc,
};
use prollystore_format::value_parse::decimal_at_scale;
pub use prollystore_format::value_parse::decimal_parts;
use prollystore_format::{value_parse, Encoding, HashProfile};

use crate::error::{DoltError, Result};
use crate::schema::{key_encoding, Column, SqlType};
use crate::sql_value::{Nullable, SqlValue};

/// Encodes values of one index's leading key columns into key tuples (a full key, or a prefix
/// of a composite key for ranges).
#[derive(Clone, Debug)]
pub struct KeyEncoder {
    table: String,
    columns: Vec<Column>,
    desc: TupleDesc,
    /// Per column, whether the key holds the address of the value rather than the value (a
    /// UNIQUE index's TEXT/BLOB column without a prefix length); empty: none does.
    hashed: Vec<bool>,
}

impl KeyEncoder {
    /// The encoder for keys over `columns` (in key order) of table `table`, whose key tuples
    /// `desc` describes.
    pub fn new(table: &str, columns: Vec<Column>, desc: TupleDesc) -> KeyEncoder {
        KeyEncoder {
            table: table.to_string(),
            columns,
            desc,
            hashed: Vec::new(),
        }
    }

    /// This encoder for an index whose columns flagged in `hashed` are content-hashed (see
    /// [`crate::schema::Schema::content_hashed`]): their values are stored as Dolt stores
    /// them in rows, as the address of their blob tree (always, or when large).
    pub fn with_content_hashed(mut self, hashed: Vec<bool>) -> KeyEncoder {
        self.hashed = if hashed.contains(&true) {
            hashed
        } else {
            Vec::new()
        };
        self
    }

    /// Whether key column `i` is content-hashed.
    pub fn is_hashed(&self, i: usize) -> bool {
        self.hashed.get(i).copied().unwrap_or(false)
    }

    /// The key columns, in key order.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// The descriptor of whole key tuples (a [`TupleBuilder`] over it, fed by [`put_field`],
    /// builds keys without this encoder's per-call allocations).
    pub fn desc(&self) -> &TupleDesc {
        &self.desc
    }

    /// The key tuple of `values`, one per leading key column (fewer than the key has: a
    /// prefix tuple, for ranges); NULL is `None` (values may be `SqlValue`s or
    /// `Option<SqlValue>`s, see [`Nullable`]).
    pub fn encode<V: Nullable>(&self, values: &[V]) -> Result<Vec<u8>> {
        self.encode_fields(values.len(), values.iter().map(Nullable::as_value))
    }

    fn encode_fields<'v>(
        &self,
        n: usize,
        values: impl Iterator<Item = Option<&'v SqlValue>>,
    ) -> Result<Vec<u8>> {
        self.check_len(n)?;
        let mut b = TupleBuilder::new(self.desc.prefix(n));
        let mut hashed_values = false;
        for (i, (col, v)) in self.columns.iter().zip(values).enumerate() {
            match v {
                Some(v) if self.is_hashed(i) => {
                    hashed_values = true;
                    self.put_hashed(&mut b, i, col, v)?;
                }
                v => put_field(&mut b, i, col, key_encoding(col.encoding), v)
                    .map_err(|reason| self.bad(col, reason))?,
            }
        }
        let bad = |e: prollystore_format::tuple::TupleError| DoltError::BadValue {
            table: self.table.clone(),
            column: String::new(),
            reason: e.to_string(),
        };
        if hashed_values {
            // Large adaptive values move out of band exactly as Dolt's build moves them; the
            // blob trees are only hashed, into a scratch store, for their addresses.
            let scratch = MemoryStore::new(HashProfile::Dolt);
            let t = b.build_with(&mut StoreBlobs::new(&scratch)).map_err(bad)?;
            return Ok(t.as_bytes().to_vec());
        }
        let t = b.build().map_err(bad)?;
        Ok(t.as_bytes().to_vec())
    }

    /// Puts the stored form of a content-hashed column's value: the address of its blob tree,
    /// or an adaptive value (inline when small).
    fn put_hashed(&self, b: &mut TupleBuilder, i: usize, col: &Column, v: &SqlValue) -> Result<()> {
        let mut bytes = Vec::new();
        match v {
            SqlValue::Bytes(x) => bytes.extend_from_slice(x),
            SqlValue::Text(t) => bytes.extend_from_slice(t.as_bytes()),
            other => other.csv_bytes(&mut bytes),
        }
        let r = if col.encoding.is_adaptive() {
            b.put_adaptive_inline(i, &bytes)
        } else {
            let scratch = MemoryStore::new(HashProfile::Dolt);
            let address = prollystore_format::tuple::BlobStore::write_blob(
                &mut StoreBlobs::new(&scratch),
                &bytes,
            )
            .map_err(|e| self.bad(col, e.to_string()))?;
            b.put_address(i, &address)
        };
        r.map_err(|e| self.bad(col, e.to_string()))
    }

    /// Parses the CLI's text for the leading key columns (see [`parse_value`]).
    pub fn parse(&self, texts: &[&str]) -> Result<Vec<SqlValue>> {
        self.check_len(texts.len())?;
        self.columns
            .iter()
            .zip(texts)
            .map(|(col, t)| parse_value(col, t).map_err(|reason| self.bad(col, reason)))
            .collect()
    }

    /// As [`KeyEncoder::parse`], with `None` for NULL (for bounds).
    pub fn parse_nullable(&self, texts: &[Option<&str>]) -> Result<Vec<Option<SqlValue>>> {
        self.check_len(texts.len())?;
        self.columns
            .iter()
            .zip(texts)
            .map(|(col, t)| match t {
                None => Ok(None),
                Some(t) => parse_value(col, t)
                    .map(Some)
                    .map_err(|reason| self.bad(col, reason)),
            })
            .collect()
    }

    /// Refuses more values than the key has columns.
    fn check_len(&self, n: usize) -> Result<()> {
        if n <= self.columns.len() {
            return Ok(());
        }
        let names: Vec<&str> = self.columns.iter().map(|c| c.name.as_str()).collect();
        Err(DoltError::BadValue {
            table: self.table.clone(),
            column: names.join(","),
            reason: format!("{n} values given for a key of {} columns", names.len()),
        })
    }

    fn bad(&self, col: &Column, reason: String) -> DoltError {
        DoltError::BadValue {
            table: self.table.clone(),
            column: col.name.clone(),
            reason,
        }
    }
}

/// Puts `v` (NULL for `None`) as field `i` of `b`, stored with encoding `enc` the way Dolt
/// stores a value of `col`. Errors say what does not fit.
pub fn put_field(
    b: &mut TupleBuilder,
    i: usize,
    col: &Column,
    enc: Encoding,
    v: Option<&SqlValue>,
) -> std::result::Result<(), String> {
    let Some(v) = v else {
        return b.put_null(i).map_err(|e| e.to_string());
    };
    use SqlValue as V;
    let int = || -> std::result::Result<i128, String> {
        match v {
            V::Int(x) => Ok(i128::from(*x)),
            V::Uint(x) => Ok(i128::from(*x)),
            V::Year(y) => Ok(i128::from(*y)),
            V::Enum(n, _) => Ok(i128::from(*n)),
            V::Set(n, _) => Ok(i128::from(*n)),
            other => Err(format!("{other:?} is not an integer")),
        }
    };
    let fit = |lo: i128, hi: i128| -> std::result::Result<i128, String> {
        let x = int()?;
        if x < lo || x > hi {
            return Err(format!("{x} is out of range for {}", col.sql_type_text));
        }
        Ok(x)
    };
    let r = match enc {
        Encoding::Int8 => b.put_int8(i, fit(i8::MIN.into(), i8::MAX.into())? as i8),
        Encoding::Uint8 => b.put_uint8(i, fit(0, u8::MAX.into())? as u8),
        Encoding::Int16 => b.put_int16(i, fit(i16::MIN.into(), i16::MAX.into())? as i16),
        Encoding::Uint16 => b.put_uint16(i, fit(0, u16::MAX.into())? as u16),
        Encoding::Int32 => b.put_int32(i, fit(i32::MIN.into(), i32::MAX.into())? as i32),
        Encoding::Uint32 => b.put_uint32(i, fit(0, u32::MAX.into())? as u32),
        Encoding::Int64 => b.put_int64(i, fit(i64::MIN.into(), i64::MAX.into())? as i64),
        Encoding::Uint64 => b.put_uint64(i, fit(0, u64::MAX.into())? as u64),
        Encoding::Bit64 => b.put_bit64(i, fit(0, u64::MAX.into())? as u64),
        Encoding::Float32 => match v {
            V::Float(x) => b.put_float32(i, *x),
            V::Double(x) => b.put_float32(i, *x as f32),
            _ => b.put_float32(i, int()? as f32),
        },
        Encoding::Float64 => match v {
            V::Double(x) => b.put_float64(i, *x),
            V::Float(x) => b.put_float64(i, f64::from(*x)),
            _ => b.put_float64(i, int()? as f64),
        },
        Encoding::Decimal => {
            let text: std::borrow::Cow<'_, str> = match v {
                V::Decimal(s) => s.into(),
                V::Int(_) | V::Uint(_) => int()?.to_string().into(),
                other => return Err(format!("{other:?} is not a decimal")),
            };
            // At the column's scale, as Dolt stores it (`1.5` in a DECIMAL(8,2) is `1.50`).
            let text = match col.sql_type {
                SqlType::Decimal { scale, .. } => decimal_at_scale(&text, scale)?.into(),
                _ => text,
            };
            let (negative, digits, exponent) = decimal_parts(&text)?;
            let coefficient = decimal_digits_to_be(&digits);
            b.put_decimal(i, &Decimal::finite(exponent, negative, &coefficient))
        }
        Encoding::Year => match v {
            V::Year(y) => b.put_year(i, *y),
            _ => b.put_year(i, fit(0, 2155)? as u16),
        },
        Encoding::Date => match v {
            V::Date(d) => b.put_date(i, *d),
            other => return Err(format!("{other:?} is not a date")),
        },
        Encoding::Time => match v {
            V::Time(us) => b.put_time(i, *us),
            other => return Err(format!("{other:?} is not a time")),
        },
        Encoding::Datetime => match v {
            // More fraction digits than the column keeps are rounded, as Dolt stores them.
            V::Datetime(us, _) => b.put_datetime(i, round_datetime(*us, col.sql_type.fsp())),
            other => return Err(format!("{other:?} is not a datetime")),
        },
        Encoding::Enum => match v {
            V::Text(name) => b.put_enum(i, enum_index(col, name)?),
            _ => b.put_enum(i, fit(0, u16::MAX.into())? as u16),
        },
        Encoding::Set => match v {
            V::Text(names) => b.put_set(i, set_bits(col, names)?),
            _ => b.put_set(i, fit(0, u64::MAX.into())? as u64),
        },
        Encoding::String => match v {
            V::Text(s) | V::Json(s) => b.put_string(i, s),
            V::Bytes(x) => b.put_string_bytes(i, x),
            other => b.put_string(i, &other.to_text()),
        },
        Encoding::Bytes => match v {
            V::Bytes(x) => b.put_bytes(i, x),
            V::Text(s) => b.put_bytes(i, s.as_bytes()),
            other => return Err(format!("{other:?} is not bytes")),
        },
        Encoding::Json => b.put_json(i, &json_stored(v)?),
        Encoding::JsonAdaptive => b.put_adaptive_inline(i, &json_stored(v)?),
        Encoding::StringAdaptive | Encoding::BytesAdaptive => {
            let mut bytes = Vec::new();
            v.csv_bytes(&mut bytes);
            b.put_adaptive_inline(i, &bytes)
        }
        Encoding::GeomAdaptive => {
            let stored = match v {
                V::Bytes(x) => crate::geometry::from_ewkb(x)?,
                V::Text(t) => crate::geometry::from_text(t)?,
                other => return Err(format!("{other:?} is not a geometry")),
            };
            crate::geometry::check_column(&stored, &col.sql_type, &col.name)?;
            b.put_adaptive_inline(i, &stored)
        }
        other => {
            return Err(format!(
                "keys of encoding {other} cannot be built from values"
            ))
        }
    };
    r.map_err(|e| e.to_string())
}

/// Decimal digits as an unsigned big-endian integer.
fn decimal_digits_to_be(digits: &str) -> Vec<u8> {
    // Up to 38 digits fit a u128 (the usual DECIMAL): its bytes without leading zeros.
    if let Some(n) = (digits.len() <= 38)
        .then(|| digits.parse::<u128>().ok())
        .flatten()
    {
        let be = n.to_be_bytes();
        let zeros = be.iter().take_while(|&&b| b == 0).count();
        return be[zeros..].to_vec();
    }
    let mut out: Vec<u8> = Vec::new();
    for d in digits.bytes() {
        let mut carry = u32::from(d - b'0');
        for byte in out.iter_mut().rev() {
            let x = u32::from(*byte) * 10 + carry;
            *byte = x as u8;
            carry = x >> 8;
        }
        while carry > 0 {
            out.insert(0, carry as u8);
            carry >>= 8;
        }
    }
    out
}

/// The 1-based index of enum member `name` (exact, else ASCII case-insensitive as MySQL
/// matches enum members), or a number given as text.
fn enum_index(col: &Column, name: &str) -> std::result::Result<u16, String> {
    let SqlType::Enum { members, .. } = &col.sql_type else {
        return Err(format!("{} is not an enum", col.sql_type_text));
    };
    let found = members
        .iter()
        .position(|m| m == name)
        .or_else(|| members.iter().position(|m| m.eq_ignore_ascii_case(name)));
    match found {
        Some(p) => Ok(p as u16 + 1),
        None if name.is_empty() => Ok(0),
        None => name
            .parse::<u16>()
            .ok()
            .filter(|&n| usize::from(n) <= members.len())
            .ok_or_else(|| format!("{name:?} is not a member of {}", col.sql_type_text)),
    }
}

/// The bitmask of comma-separated set members.
fn set_bits(col: &Column, names: &str) -> std::result::Result<u64, String> {
    let SqlType::Set { members, .. } = &col.sql_type else {
        return Err(format!("{} is not a set", col.sql_type_text));
    };
    let mut bits = 0u64;
    for name in names.split(',').filter(|n| !n.is_empty()) {
        let p = members
            .iter()
            .position(|m| m.eq_ignore_ascii_case(name))
            .filter(|&p| p < 64)
            .ok_or_else(|| format!("{name:?} is not a member of {}", col.sql_type_text))?;
        bits |= 1 << p;
    }
    Ok(bits)
}

/// The bytes Dolt stores for `v` in a JSON column: its text read as JSON and written back as
/// Dolt writes it ([`prollystore_format::json::normalize`]), or why Dolt refuses it.
fn json_stored(v: &SqlValue) -> std::result::Result<Vec<u8>, String> {
    let mut text = Vec::new();
    match v {
        SqlValue::Json(s) | SqlValue::Text(s) => text.extend_from_slice(s.as_bytes()),
        SqlValue::Bytes(b) => text.extend_from_slice(b),
        other => other.csv_bytes(&mut text),
    }
    prollystore_format::json::normalize(&text).map_err(|e| {
        let shown = String::from_utf8_lossy(&text);
        let shown: String = shown.chars().take(60).collect();
        let more = if text.len() > shown.len() { "…" } else { "" };
        format!("{shown:?}{more} is not valid JSON ({e})")
    })
}

/// The value Dolt shows for `col` written as `text` (the CLI's key syntax): integers and
/// floats in decimal, decimals as `[-]digits[.digits]`, `YYYY-MM-DD`, `[-]H:MM:SS[.ffffff]`,
/// `YYYY-MM-DD HH:MM:SS[.ffffff]`, enum members by name or number, set members comma-separated,
/// BIT as a number, binary strings as `0x` + hex digits (or their text as is), geometry as
/// [`crate::geometry::from_text`] reads it (checked against the column's type and SRID),
/// anything else as text.
pub fn parse_value(col: &Column, text: &str) -> std::result::Result<SqlValue, String> {
    let bad = |what: &str| format!("{text:?} is not {what}");
    Ok(match &col.sql_type {
        SqlType::Int {
            unsigned: false, ..
        } => SqlValue::Int(
            value_parse::parse_i64(text.trim().as_bytes()).ok_or_else(|| bad("an integer"))?,
        ),
        SqlType::Int { unsigned: true, .. } | SqlType::Bit(_) => SqlValue::Uint(
            value_parse::parse_u64(text.trim().as_bytes())
                .ok_or_else(|| bad("an unsigned integer"))?,
        ),
        SqlType::Float => SqlValue::Float(text.trim().parse().map_err(|_| bad("a number"))?),
        SqlType::Double => SqlValue::Double(text.trim().parse().map_err(|_| bad("a number"))?),
        SqlType::Decimal { scale, .. } => SqlValue::Decimal(decimal_at_scale(text, *scale)?),
        SqlType::Year => SqlValue::Year(
            text.trim()
                .parse()
                .ok()
                .filter(|y| *y == 0 || (1901..=2155).contains(y))
                .ok_or_else(|| bad("a year (0 or 1901..2155)"))?,
        ),
        SqlType::Date => SqlValue::Date(parse_date(text.trim()).ok_or_else(|| bad("a date"))?),
        SqlType::Time(_) => SqlValue::Time(
            value_parse::parse_time(text.trim().as_bytes()).ok_or_else(|| bad("a time"))?,
        ),
        SqlType::Datetime(f) | SqlType::Timestamp(f) => SqlValue::Datetime(
            value_parse::parse_datetime_at(text.trim().as_bytes(), *f)
                .ok_or_else(|| bad("a datetime"))?,
            *f,
        ),
        SqlType::Enum { members, .. } => {
            let i = enum_index(col, text)?;
            let name = members
                .get(usize::from(i).wrapping_sub(1))
                .cloned()
                .unwrap_or_default();
            SqlValue::Enum(i, name)
        }
        SqlType::Set { members, .. } => {
            let bits = set_bits(col, text)?;
            let names: Vec<&str> = members
                .iter()
                .enumerate()
                .filter(|(k, _)| *k < 64 && bits & (1 << k) != 0)
                .map(|(_, m)| m.as_str())
                .collect();
            SqlValue::Set(bits, names.join(","))
        }
        SqlType::Binary { fixed, .. } => {
            let mut bytes = match text.strip_prefix("0x") {
                Some(hex) => {
                    crate::value_parse::parse_hex(hex).ok_or_else(|| bad("0x and hex digits"))?
                }
                None => text.as_bytes().to_vec(),
            };
            if let Some(n) = fixed {
                if bytes.len() < *n as usize {
                    bytes.resize(*n as usize, 0);
                }
            }
            SqlValue::Bytes(bytes)
        }
        SqlType::Json => SqlValue::Json(text.to_string()),
        SqlType::Geometry { .. } => {
            let stored = crate::geometry::from_text(text)?;
            crate::geometry::check_column(&stored, &col.sql_type, &col.name)?;
            SqlValue::Bytes(stored)
        }
        _ => SqlValue::Text(text.to_string()),
    })
}

/// A DATE's text: a date, or a datetime whose time of day is dropped (as Dolt stores
/// `2024-01-05 12:30` in a DATE column).
fn parse_date(t: &str) -> Option<Date> {
    let t = t.as_bytes();
    value_parse::parse_date(t).or_else(|| {
        let micros = value_parse::parse_datetime(t)?;
        if micros == prollystore_format::tuple::ZERO_DATETIME_MICROS {
            return Some(Date::ZERO);
        }
        let (y, m, d) = civil_from_days(micros.div_euclid(86_400_000_000));
        Some(Date {
            year: u16::try_from(y).ok()?,
            month: m as u8,
            day: d as u8,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn big_coefficients() {
        assert_eq!(decimal_digits_to_be("256"), vec![1, 0]);
        assert_eq!(decimal_digits_to_be("0"), Vec::<u8>::new());
        let v: u128 = 123_456_789_012_345_678_901_234_567_890_123_456_789;
        let be = decimal_digits_to_be(&v.to_string());
        let full = v.to_be_bytes();
        let skip = full.iter().take_while(|&&b| b == 0).count();
        assert_eq!(be, full[skip..]);
    }

    /// decode(encode(v)) == v for every stored value of every column of every table in the
    /// vector databases, and the CLI text of each value parses back to it.
    #[test]
    fn every_vector_value_round_trips() {
        use crate::codec::{payload, sql_value_of, value_of, Kind, RowPlan, Slot};
        use crate::db::{Database, State};
        use prollystore_format::tuple::{Tuple, Type};
        // Field `i` of `t` as `col` shows it, through the tuple's checked value.
        let decode_field = |db: &Database,
                            col: &Column,
                            kind: &Kind,
                            desc: &TupleDesc,
                            t: Tuple<'_>,
                            i: usize|
         -> crate::Result<Option<SqlValue>> {
            let Some(v) = desc.value(t, i).unwrap() else {
                return Ok(None);
            };
            let mut scratch = Vec::new();
            let bytes = payload(db, &v, &mut scratch)?;
            value_of(col, kind, v, bytes).map(Some)
        };
        let (mut checked, mut decoded) = (0usize, 0usize);
        for name in ["vecdb", "vecdb_journal"] {
            let dir = prollystore_test_vectors::require(&format!("dolt-db/{name}"));
            let db = Database::open(&dir).unwrap();
            let root = db.root_at("main", State::Committed).unwrap();
            for (table_name, _) in &root.tables {
                let t = db.table(&root, table_name).unwrap();
                let s = &t.schema;
                let (kd, vd) = (s.key_desc(), s.value_desc());
                let plan = RowPlan::new(s, t.schema_address).unwrap();
                let mut scratch = Vec::new();
                let map = t.primary_scan_map(&db);
                for entry in map.iter().unwrap().step_by(3) {
                    let (k, v) = entry.unwrap();
                    let (kt, vt) = (Tuple::new(k).unwrap(), Tuple::new(v).unwrap());
                    // The codec's decoder (fast reads from the bytes) gives what the checked
                    // values give.
                    for f in &plan.fields {
                        let (desc, tuple, i) = match f.slot {
                            Slot::Key(i) => (&kd, kt, i),
                            Slot::Value(i) => (&vd, vt, i),
                            Slot::Virtual => continue,
                        };
                        let col = &s.columns[f.column];
                        let fast = sql_value_of(&db, &t, &plan, f, kt, vt, &mut scratch).unwrap();
                        let checked = decode_field(&db, col, &f.kind, desc, tuple, i).unwrap();
                        assert_eq!(fast, checked, "{table_name}.{} decoded", col.name);
                        decoded += 1;
                    }
                    for i in s.visible_columns() {
                        let col = &s.columns[i];
                        if matches!(col.sql_type, SqlType::Geometry { .. }) || col.virtual_ {
                            continue;
                        }
                        let kind = crate::codec::Kind::of_column(col);
                        let value = match s.key_columns.iter().position(|&c| c == i) {
                            Some(f) => decode_field(&db, col, &kind, &kd, kt, f),
                            None => {
                                let f = s.value_columns.iter().position(|&c| c == i).unwrap();
                                decode_field(&db, col, &kind, &vd, vt, f)
                            }
                        }
                        .unwrap();
                        let enc = match key_encoding(col.encoding) {
                            Encoding::JsonAdaptive => Encoding::Json,
                            e => e,
                        };
                        let desc = TupleDesc::new(vec![Type::nullable(enc)]);
                        let mut b = TupleBuilder::new(desc.clone());
                        put_field(&mut b, 0, col, enc, value.as_ref())
                            .unwrap_or_else(|e| panic!("{table_name}.{}: {e}", col.name));
                        let bytes = b.build().unwrap().as_bytes().to_vec();
                        let back =
                            decode_field(&db, col, &kind, &desc, Tuple::new(&bytes).unwrap(), 0)
                                .unwrap();
                        assert_eq!(back, value, "{table_name}.{}", col.name);
                        let Some(value) = value else { continue };
                        let text_form = !matches!(
                            col.sql_type,
                            SqlType::Binary { .. } | SqlType::Json | SqlType::Other(_)
                        );
                        if text_form {
                            let parsed = parse_value(col, &value.to_text())
                                .unwrap_or_else(|e| panic!("{table_name}.{}: {e}", col.name));
                            assert_eq!(parsed, value, "{table_name}.{} text", col.name);
                        }
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 10_000, "{checked} values");
        assert!(decoded > checked, "{decoded} values decoded");
    }

    /// A DECIMAL is stored at its column's scale whatever the text's scale or exponent, as
    /// Dolt stores it: `1.5`, `1.50`, `15e-1` and `1.500` are the same bytes in a DECIMAL(8,2).
    #[test]
    fn decimals_are_stored_at_the_columns_scale() {
        let col = Column {
            name: "price".into(),
            sql_type_text: "decimal(8,2)".into(),
            sql_type: SqlType::parse("decimal(8,2)"),
            encoding: Encoding::Decimal,
            tag: 1,
            primary_key: false,
            nullable: true,
            auto_increment: false,
            hidden: false,
            generated: false,
            virtual_: false,
            default_value: None,
            on_update: None,
            comment: None,
        };
        let stored = |text: &str| {
            let desc = TupleDesc::new(vec![prollystore_format::tuple::Type::nullable(
                Encoding::Decimal,
            )]);
            let mut b = TupleBuilder::new(desc);
            put_field(
                &mut b,
                0,
                &col,
                Encoding::Decimal,
                Some(&SqlValue::Decimal(text.into())),
            )
            .unwrap();
            b.build().unwrap().as_bytes().to_vec()
        };
        for t in ["1.5", "15e-1", "1.500", "+1.50"] {
            assert_eq!(stored(t), stored("1.50"), "{t}");
        }
        assert_ne!(stored("1.51"), stored("1.50"));
    }

    /// A DATE column takes a datetime's text and keeps its date, as Dolt does.
    #[test]
    fn dates_from_datetime_text() {
        let d = |t: &str| parse_date(t).map(|d| d.to_string());
        assert_eq!(d("2024-01-05 12:30").as_deref(), Some("2024-01-05"));
        assert_eq!(d("1969-12-31T23:59:59.5").as_deref(), Some("1969-12-31"));
        assert_eq!(d("0000-00-00 00:00:00").as_deref(), Some("0000-00-00"));
        assert_eq!(d("2024-02-30 00:00:00"), None);
    }
}
