//! Rows: walking a table's clustered index, decoding fields into typed SQL values (out-of-band
//! values read from their blob trees), and CSV text identical to `dolt sql -r csv`.

use std::cmp::Ordering;

use prollystore_format::message::{BlobNode, Node};
use prollystore_format::tuple::{Adaptive, Date, Tuple, TupleDesc, Value};
use prollystore_format::Address;

use crate::db::{Database, Table};
use crate::error::{bad_chunk, DoltError, Result};
use crate::schema::{Column, SqlType};
use crate::text;

/// A SQL value as Dolt shows it, owned.
#[derive(Clone, Debug, PartialEq)]
pub enum SqlValue {
    /// Signed integers (TINYINT … BIGINT).
    Int(i64),
    /// Unsigned integers, and BIT values.
    Uint(u64),
    /// FLOAT.
    Float(f32),
    /// DOUBLE.
    Double(f64),
    /// DECIMAL, as text with the column's scale.
    Decimal(String),
    /// YEAR.
    Year(u16),
    /// DATE.
    Date(Date),
    /// TIME in microseconds.
    Time(i64),
    /// DATETIME/TIMESTAMP in Unix microseconds, with the column's fractional digits.
    Datetime(i64, u8),
    /// ENUM member (1-based index, name).
    Enum(u16, String),
    /// SET members (bitmask, names joined by commas).
    Set(u64, String),
    /// Text (CHAR/VARCHAR/TEXT).
    Text(String),
    /// Bytes (BINARY/VARBINARY/BLOB/GEOMETRY/VECTOR), raw.
    Bytes(Vec<u8>),
    /// JSON text.
    Json(String),
}

impl SqlValue {
    /// The value as `dolt sql` text (lossy for non-UTF-8 bytes).
    pub fn to_text(&self) -> String {
        let mut out = Vec::new();
        self.csv_bytes(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    /// The text `dolt sql -r csv` writes for this value (before CSV quoting).
    pub fn csv_bytes(&self, out: &mut Vec<u8>) {
        match self {
            SqlValue::Int(v) => text::write_i64(out, *v),
            SqlValue::Uint(v) => text::write_u64(out, *v),
            SqlValue::Float(v) => text::write_f32(out, *v),
            SqlValue::Double(v) => text::write_f64(out, *v),
            SqlValue::Decimal(s) | SqlValue::Text(s) | SqlValue::Json(s) => {
                out.extend_from_slice(s.as_bytes())
            }
            SqlValue::Enum(_, s) | SqlValue::Set(_, s) => out.extend_from_slice(s.as_bytes()),
            SqlValue::Year(y) => text::write_u64(out, u64::from(*y)),
            SqlValue::Date(d) => text::write_date(out, *d),
            SqlValue::Time(us) => text::write_time(out, *us),
            SqlValue::Datetime(us, fsp) => text::write_datetime(out, *us, *fsp),
            SqlValue::Bytes(b) => out.extend_from_slice(b),
        }
    }
}

/// Formats a stored decimal with exactly `scale` fraction digits.
pub(crate) fn decimal_text(d: &prollystore_format::tuple::Decimal<'_>, scale: u8) -> String {
    let mut out = Vec::new();
    write_decimal(&mut out, d, scale);
    String::from_utf8(out).unwrap_or_default()
}

/// Appends a stored decimal with exactly `scale` fraction digits (allocation-free when the
/// coefficient fits in 128 bits, as it always does for DECIMAL(≤38)).
pub(crate) fn write_decimal(
    out: &mut Vec<u8>,
    d: &prollystore_format::tuple::Decimal<'_>,
    scale: u8,
) {
    match d.coefficient_u128() {
        Some(c) => text::write_decimal_u128(out, d.is_negative(), c, d.exponent(), scale),
        None => text::write_decimal_digits(
            out,
            d.is_negative(),
            d.coefficient_digits().as_bytes(),
            d.exponent(),
            scale,
        ),
    }
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

/// A callback over one (key, value) entry of a tree.
pub type EntryFn<'a> = dyn FnMut(&[u8], &[u8]) -> Result<()> + 'a;

/// Calls `f(key, value)` for every entry of the prolly tree whose root node bytes are `root`,
/// in key order.
pub fn for_each_entry(
    db: &Database,
    root: &[u8],
    owner: Address,
    f: &mut EntryFn<'_>,
) -> Result<()> {
    walk(db, root, owner, f, 0)
}

fn walk(
    db: &Database,
    bytes: &[u8],
    owner: Address,
    f: &mut EntryFn<'_>,
    depth: usize,
) -> Result<()> {
    if depth > 64 {
        return Err(bad_chunk(owner, "tree is too deep"));
    }
    let node = Node::verify(bytes).map_err(|e| bad_chunk(owner, e.to_string()))?;
    if node.is_leaf() {
        for i in 0..node.count() {
            f(node.key(i), node.value(i))?;
        }
    } else {
        for i in 0..node.count() {
            let child = node.child(i);
            let chunk = db.source().chunk(&child)?;
            walk(db, &chunk, child, f, depth + 1)?;
        }
    }
    Ok(())
}

/// Decodes one stored field into the value Dolt shows for `col`.
pub(crate) fn decode_field(
    db: &Database,
    col: &Column,
    desc: &TupleDesc,
    t: Tuple<'_>,
    i: usize,
) -> Result<Option<SqlValue>> {
    let owner = Address::ZERO;
    let v = desc
        .value(t, i)
        .map_err(|e| bad_chunk(owner, format!("column {}: {e}", col.name)))?;
    let Some(v) = v else { return Ok(None) };
    let payload: Vec<u8>;
    let bytes: Option<&[u8]> = match &v {
        Value::Adaptive(Adaptive::Inline(b)) => Some(b),
        Value::Adaptive(Adaptive::OutOfBand { len, address }) => {
            payload = read_blob(db, *address, *len)?;
            Some(&payload)
        }
        Value::Address(a) => {
            // Legacy *_addr encodings: the whole blob tree.
            let mut out = Vec::new();
            if !a.is_zero() {
                read_blob_into(db, *a, &mut out, 0)?;
            }
            payload = out;
            Some(&payload)
        }
        Value::String(s) => Some(s.as_bytes()),
        Value::Bytes(b) | Value::Json(b) | Value::Geometry(b) | Value::Extended(b) => Some(b),
        _ => None,
    };
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let out = match (&col.sql_type, v) {
        (SqlType::Decimal { scale, .. }, Value::Decimal(d)) => {
            SqlValue::Decimal(decimal_text(&d, *scale))
        }
        (SqlType::Enum(names), Value::Enum(e)) => SqlValue::Enum(
            e,
            names
                .get(usize::from(e).wrapping_sub(1))
                .cloned()
                .unwrap_or_default(),
        ),
        (SqlType::Set(names), Value::Set(bits)) => {
            let chosen: Vec<&str> = names
                .iter()
                .enumerate()
                .filter(|(k, _)| *k < 64 && bits & (1u64 << k) != 0)
                .map(|(_, n)| n.as_str())
                .collect();
            SqlValue::Set(bits, chosen.join(","))
        }
        (SqlType::Datetime(f) | SqlType::Timestamp(f), Value::Datetime(us)) => {
            SqlValue::Datetime(us, *f)
        }
        (SqlType::Json, _) => SqlValue::Json(text(bytes.unwrap_or(&[]))),
        (SqlType::Text { .. }, _) => SqlValue::Text(text(bytes.unwrap_or(&[]))),
        (SqlType::Binary { fixed: Some(n), .. }, _) => {
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
    Ok(Some(out))
}

/// Where a visible column's value lives in a row's tuples.
#[derive(Clone, Copy, Debug)]
enum Slot {
    Key(usize),
    Value(usize),
}

/// Reads every row of `table` in stored (key) order as values of its visible columns, calling
/// `f` once per row copy (keyless rows repeat by their cardinality).
pub fn for_each_row(
    db: &Database,
    table: &Table,
    f: &mut dyn FnMut(&[Option<SqlValue>]) -> Result<()>,
) -> Result<()> {
    let schema = &table.schema;
    let key_desc = schema.key_desc();
    let value_desc = schema.value_desc();
    let mut slots = Vec::new();
    for i in schema.visible_columns() {
        let col = schema.columns.get(i);
        if col.is_some_and(|c| c.virtual_) {
            return Err(DoltError::Unsupported(format!(
                "virtual generated column {:?} (needs expression evaluation)",
                col.map(|c| c.name.as_str()).unwrap_or("")
            )));
        }
        let slot = if let Some(k) = schema.key_columns.iter().position(|&c| c == i) {
            Slot::Key(k)
        } else if let Some(v) = schema.value_columns.iter().position(|&c| c == i) {
            Slot::Value(v)
        } else {
            return Err(bad_chunk(
                table.schema_address,
                format!("column {i} is in no tuple"),
            ));
        };
        slots.push((i, slot));
    }
    let mut row: Vec<Option<SqlValue>> = Vec::with_capacity(slots.len());
    for_each_entry(db, &table.primary_index, table.address, &mut |k, v| {
        let kt = Tuple::new(k).map_err(|e| bad_chunk(table.address, format!("key tuple: {e}")))?;
        let vt =
            Tuple::new(v).map_err(|e| bad_chunk(table.address, format!("value tuple: {e}")))?;
        row.clear();
        for &(i, slot) in &slots {
            let Some(col) = schema.columns.get(i) else {
                continue;
            };
            let value = match slot {
                Slot::Key(k) => decode_field(db, col, &key_desc, kt, k)?,
                Slot::Value(j) => decode_field(db, col, &value_desc, vt, j)?,
            };
            row.push(value);
        }
        let copies = if schema.keyless {
            value_desc.get_uint64(vt, 0).ok().flatten().unwrap_or(1)
        } else {
            1
        };
        for _ in 0..copies {
            f(&row)?;
        }
        Ok(())
    })
}

/// Appends one CSV field as Dolt writes it: NULL is empty, an empty string is `""`, and fields
/// with a comma, quote, CR/LF, a leading space or equal to `\.` are quoted.
pub fn write_csv_field(field: Option<&[u8]>, out: &mut Vec<u8>) {
    let Some(f) = field else { return };
    if !needs_quotes(f) {
        out.extend_from_slice(f);
        return;
    }
    out.reserve(f.len() + 2);
    out.push(b'"');
    let mut rest = f;
    while let Some(p) = rest.iter().position(|&b| b == b'"') {
        let (upto, after) = rest.split_at(p + 1);
        out.extend_from_slice(upto);
        out.push(b'"');
        rest = after;
    }
    out.extend_from_slice(rest);
    out.push(b'"');
}

/// Whether Dolt's CSV writer quotes `f`.
#[inline]
fn needs_quotes(f: &[u8]) -> bool {
    let Some(&first) = f.first() else {
        return true;
    };
    let first_is_space = if first.is_ascii() {
        // `char::is_whitespace` on ASCII: TAB, LF, VT, FF, CR and space.
        matches!(first, b' ' | b'\t'..=b'\r')
    } else {
        first_char_is_whitespace(f)
    };
    first_is_space || f == b"\\." || f.iter().any(|&b| matches!(b, b',' | b'"' | b'\r' | b'\n'))
}

/// Whether the first UTF-8 character of `f` is Unicode whitespace (false if it is not valid
/// UTF-8).
fn first_char_is_whitespace(f: &[u8]) -> bool {
    (1..=f.len().min(4))
        .find_map(|n| std::str::from_utf8(f.get(..n)?).ok())
        .and_then(|s| s.chars().next())
        .is_some_and(char::is_whitespace)
}

/// Orders rows as MySQL's `ORDER BY` all columns would (NULLs first); used for keyless tables,
/// whose stored order is by row hash.
pub(crate) fn compare_rows(a: &[Option<SqlValue>], b: &[Option<SqlValue>]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        let o = match (x, y) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(x), Some(y)) => compare_values(x, y),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

fn compare_values(x: &SqlValue, y: &SqlValue) -> Ordering {
    use SqlValue as V;
    match (x, y) {
        (V::Int(a), V::Int(b)) => a.cmp(b),
        (V::Uint(a), V::Uint(b)) => a.cmp(b),
        (V::Float(a), V::Float(b)) => a.total_cmp(b),
        (V::Double(a), V::Double(b)) => a.total_cmp(b),
        (V::Year(a), V::Year(b)) => a.cmp(b),
        (V::Date(a), V::Date(b)) => a.to_raw().cmp(&b.to_raw()),
        (V::Time(a), V::Time(b)) => a.cmp(b),
        (V::Datetime(a, _), V::Datetime(b, _)) => a.cmp(b),
        (V::Enum(a, _), V::Enum(b, _)) => a.cmp(b),
        (V::Set(a, _), V::Set(b, _)) => a.cmp(b),
        (V::Decimal(a), V::Decimal(b)) => {
            let fa: f64 = a.parse().unwrap_or(0.0);
            let fb: f64 = b.parse().unwrap_or(0.0);
            fa.total_cmp(&fb)
        }
        _ => {
            let mut a = Vec::new();
            let mut b = Vec::new();
            x.csv_bytes(&mut a);
            y.csv_bytes(&mut b);
            a.cmp(&b)
        }
    }
}

pub use crate::export::export_csv;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_text() {
        assert_eq!(SqlValue::Double(-660.642578125).to_text(), "-660.642578125");
        assert_eq!(SqlValue::Float(0.1).to_text(), "0.1");
        assert_eq!(SqlValue::Time(-1).to_text(), "-00:00:00.000001");
        assert_eq!(SqlValue::Datetime(0, 0).to_text(), "1970-01-01 00:00:00");
        let coeff = 6_033_988_078u64.to_be_bytes();
        let d = prollystore_format::tuple::Decimal::finite(-4, true, &coeff);
        assert_eq!(decimal_text(&d, 4), "-603398.8078");
    }
}
