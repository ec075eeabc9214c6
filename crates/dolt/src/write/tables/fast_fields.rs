//! Text fields encoded straight into tuples for the column types an import mostly holds
//! (integers, FLOAT, DOUBLE, DECIMAL, DATE, DATETIME/TIMESTAMP, CHAR/VARCHAR/TEXT): no
//! `SqlValue`, no cell `Vec`s, the column's limits worked out once. Only text the general
//! path would take as it is is accepted here, and it is encoded to the same bytes; any other
//! field (spaces, a sign, a fraction to round, a value out of range, a NULL in a NOT NULL
//! column, …) makes [`FastFields::encode`] give the row back, and the general path then
//! stores it or names its error exactly as before.

use std::borrow::Cow;

use prollystore_format::tuple::{days_from_civil, Date, Decimal, TupleBuilder};
use prollystore_format::Encoding;

use crate::codec::{self, Storage};
use crate::schema::{key_encoding, Column, Schema, SqlType};

/// Microseconds in a day.
const DAY_MICROS: i64 = 86_400_000_000;

/// How one column's text becomes its field.
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// An integer column stored in an integer encoding: values in `lo..=hi` (the encoding's
    /// range), parsed as `i64` (`signed`) or `u64`, as the general path parses them.
    Int { signed: bool, lo: i128, hi: i128 },
    /// FLOAT in a 4-byte float.
    Float32,
    /// DOUBLE in an 8-byte float.
    Float64,
    /// DECIMAL: at most `whole` digits before the point, exactly `scale` after.
    Decimal { whole: usize, scale: u32 },
    /// DATE.
    Date,
    /// DATETIME or TIMESTAMP.
    Datetime,
    /// Text: UTF-8 of at most `max` characters (bytes for the TEXT types).
    Text { max: Option<u64>, bytes: bool },
}

/// One parsed field, ready to be put (no borrowed text: text is read again from the row).
#[derive(Clone, Copy, Debug)]
enum Parsed {
    Null,
    Int(i128),
    Float32(f32),
    Float64(f64),
    Decimal {
        negative: bool,
        coefficient: u128,
    },
    Date(Date),
    Datetime(i64),
    /// The text of field `field` of the row.
    Text(usize),
}

#[derive(Clone, Debug)]
struct FastColumn {
    kind: Kind,
    /// NULL may be stored (nullable, not in the primary key).
    nullable: bool,
    /// The field of the row that holds it; `None`: not given (stored as NULL).
    field: Option<usize>,
}

/// A table's columns as the direct encoder takes them, and the row being encoded.
#[derive(Clone, Debug)]
pub(in crate::write) struct FastFields {
    columns: Vec<FastColumn>,
    /// Per schema column: its encoding in value tuples and in key tuples.
    encodings: Vec<(Encoding, Encoding)>,
    width: usize,
    parsed: Vec<Parsed>,
}

impl FastFields {
    /// The encoder for rows giving columns `positions` (one field each, in row order) of a
    /// table with `schema`; `None` when a column's type, a default, a generated or
    /// AUTO_INCREMENT column, a CHECK or an index form needs the general path.
    pub(in crate::write) fn new(
        schema: &Schema,
        positions: &[usize],
        has_checks: bool,
    ) -> Option<Self> {
        if has_checks || schema.keyless {
            return None;
        }
        let indexes_plain = schema.indexes.iter().all(|ix| {
            ix.prefix_lengths.iter().all(|&p| p == 0)
                && !ix.spatial
                && !ix.fulltext
                && schema.content_hashed(ix).iter().all(|h| !h)
        });
        if !indexes_plain {
            return None;
        }
        let mut field_of = vec![None; schema.columns.len()];
        for (f, &c) in positions.iter().enumerate() {
            // A column named twice: the general path keeps the last value.
            if field_of.get_mut(c)?.replace(f).is_some() {
                return None;
            }
        }
        let mut columns = Vec::with_capacity(schema.columns.len());
        let mut encodings = Vec::with_capacity(schema.columns.len());
        for (c, col) in schema.columns.iter().enumerate() {
            if col.hidden || col.generated || col.auto_increment {
                return None;
            }
            let nullable = col.nullable && !col.primary_key;
            if field_of[c].is_none() {
                // Not given: NULL when that is what the general path stores.
                let default = col.default_value.as_deref().filter(|d| !d.is_empty());
                if default.is_some() || !nullable {
                    return None;
                }
            }
            let kind = kind_of(col)?;
            let key = key_encoding(col.encoding);
            let in_key = schema.key_columns.contains(&c)
                || schema.indexes.iter().any(|ix| ix.key_columns.contains(&c));
            if in_key && !fits(kind, key) {
                return None;
            }
            encodings.push((col.encoding, key));
            columns.push(FastColumn {
                kind,
                nullable,
                field: field_of[c],
            });
        }
        Some(FastFields {
            parsed: Vec::with_capacity(columns.len()),
            columns,
            encodings,
            width: positions.len(),
        })
    }

    /// Parses `row` (a field per given column); `false` when a field needs the general path.
    /// Then [`FastFields::put`] puts its columns.
    pub(in crate::write) fn parse(&mut self, row: &[Option<Cow<'_, [u8]>>]) -> bool {
        self.parsed.clear();
        if row.len() != self.width {
            return false;
        }
        for col in &self.columns {
            let field = col.field.and_then(|f| row[f].as_deref().map(|b| (f, b)));
            let parsed = match field {
                None if col.nullable => Parsed::Null,
                None => return false,
                Some((f, text)) => match parse(col.kind, f, text) {
                    Some(p) => p,
                    None => return false,
                },
            };
            self.parsed.push(parsed);
        }
        true
    }

    /// Puts schema column `c` of the parsed row as field `f` of `b`, in its value encoding
    /// (`key == false`) or key encoding.
    pub(in crate::write) fn put(
        &self,
        row: &[Option<Cow<'_, [u8]>>],
        b: &mut TupleBuilder,
        f: usize,
        c: usize,
        key: bool,
    ) -> Option<()> {
        let (value_enc, key_enc) = self.encodings[c];
        let enc = if key { key_enc } else { value_enc };
        let r = match self.parsed[c] {
            Parsed::Null => b.put_null(f),
            Parsed::Int(x) => match enc {
                Encoding::Int8 => b.put_int8(f, x as i8),
                Encoding::Uint8 => b.put_uint8(f, x as u8),
                Encoding::Int16 => b.put_int16(f, x as i16),
                Encoding::Uint16 => b.put_uint16(f, x as u16),
                Encoding::Int32 => b.put_int32(f, x as i32),
                Encoding::Uint32 => b.put_uint32(f, x as u32),
                Encoding::Int64 => b.put_int64(f, x as i64),
                Encoding::Uint64 => b.put_uint64(f, x as u64),
                _ => return None,
            },
            Parsed::Float32(x) => b.put_float32(f, x),
            Parsed::Float64(x) => b.put_float64(f, x),
            Parsed::Decimal {
                negative,
                coefficient,
            } => {
                let Kind::Decimal { scale, .. } = self.columns[c].kind else {
                    return None;
                };
                let be = coefficient.to_be_bytes();
                let zeros = be.iter().take_while(|&&x| x == 0).count();
                b.put_decimal(f, &Decimal::finite(-(scale as i32), negative, &be[zeros..]))
            }
            Parsed::Date(d) => b.put_date(f, d),
            Parsed::Datetime(us) => b.put_datetime(f, us),
            Parsed::Text(field) => {
                let text = row[field].as_deref()?;
                match enc {
                    // `parse` checked that the bytes are UTF-8.
                    Encoding::String => b.put_string_bytes(f, text),
                    Encoding::StringAdaptive => b.put_adaptive_inline(f, text),
                    _ => return None,
                }
            }
        };
        r.ok()
    }
}

/// The direct kind of `col`, when it has one (from the codec's [`codec::Kind`]).
fn kind_of(col: &Column) -> Option<Kind> {
    let enc = col.encoding;
    let kind = match codec::Kind::of_column(col) {
        codec::Kind::Int => {
            let (lo, hi) = int_range(enc)?;
            Kind::Int {
                signed: !matches!(col.sql_type, SqlType::Int { unsigned: true, .. }),
                lo,
                hi,
            }
        }
        codec::Kind::Float => Kind::Float32,
        codec::Kind::Double => Kind::Float64,
        codec::Kind::Decimal { precision, scale } => Kind::Decimal {
            whole: usize::from(precision.saturating_sub(scale)),
            scale: u32::from(scale),
        },
        codec::Kind::Date => Kind::Date,
        codec::Kind::Datetime { .. } => Kind::Datetime,
        codec::Kind::Text(Storage::Plain | Storage::Adaptive) => {
            let (max, bytes) = col.sql_type.text_limit()?;
            Kind::Text { max, bytes }
        }
        _ => return None,
    };
    // Decimals whose coefficient may not fit 38 digits take the general path.
    if let Kind::Decimal { whole, scale } = kind {
        if whole + scale as usize > 38 {
            return None;
        }
    }
    Some(kind)
}

/// The values an integer encoding holds (`None` for other encodings).
fn int_range(enc: Encoding) -> Option<(i128, i128)> {
    let (width, signed) = enc.integer()?;
    let bits = 8 * width as u32;
    Some(if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    })
}

/// Whether `kind`'s parsed values can be put in encoding `enc` (a key's).
fn fits(kind: Kind, enc: Encoding) -> bool {
    match kind {
        Kind::Int { lo, hi, .. } => int_range(enc).is_some_and(|(elo, ehi)| elo <= lo && hi <= ehi),
        Kind::Float32 => enc == Encoding::Float32,
        Kind::Float64 => enc == Encoding::Float64,
        Kind::Decimal { .. } => enc == Encoding::Decimal,
        Kind::Date => enc == Encoding::Date,
        Kind::Datetime => enc == Encoding::Datetime,
        Kind::Text { .. } => enc == Encoding::String,
    }
}

/// Field `field` (`text`) parsed for a column of `kind`; `None` when it needs the general
/// path.
fn parse(kind: Kind, field: usize, text: &[u8]) -> Option<Parsed> {
    Some(match kind {
        Kind::Int { signed, lo, hi } => {
            let (negative, digits) = match text.split_first() {
                Some((b'-', rest)) if signed => (true, rest),
                _ => (false, text),
            };
            let magnitude = i128::from(digits_u64(digits)?);
            let x = if negative { -magnitude } else { magnitude };
            // The general path parses an i64 (signed) or u64, then checks the range.
            let parsed_range = if signed {
                i128::from(i64::MIN)..=i128::from(i64::MAX)
            } else {
                0..=i128::from(u64::MAX)
            };
            if !parsed_range.contains(&x) || x < lo || x > hi {
                return None;
            }
            Parsed::Int(x)
        }
        Kind::Float32 => Parsed::Float32(std::str::from_utf8(text).ok()?.trim().parse().ok()?),
        Kind::Float64 => Parsed::Float64(std::str::from_utf8(text).ok()?.trim().parse().ok()?),
        Kind::Decimal { whole, scale } => {
            let (negative, body) = match text.split_first() {
                Some((b'-', rest)) => (true, rest),
                _ => (false, text),
            };
            let (w, f) = match body.iter().position(|&c| c == b'.') {
                Some(p) => (&body[..p], &body[p + 1..]),
                None => (body, &body[body.len()..]),
            };
            if (w.is_empty() && f.is_empty()) || f.len() > scale as usize {
                return None;
            }
            let first = w.iter().position(|&c| c != b'0').unwrap_or(w.len());
            let w = &w[first..];
            if w.len() > whole {
                return None;
            }
            let mut coefficient = 0u128;
            for &d in w.iter().chain(f) {
                if !d.is_ascii_digit() {
                    return None;
                }
                coefficient = coefficient * 10 + u128::from(d - b'0');
            }
            coefficient *= 10u128.pow(scale - f.len() as u32);
            Parsed::Decimal {
                negative: negative && coefficient != 0,
                coefficient,
            }
        }
        Kind::Date => Parsed::Date(date(text)?),
        Kind::Datetime => {
            let d = date(text.get(..10)?)?;
            let time = match text.get(10..) {
                Some([]) => 0,
                Some([b' ' | b'T', t @ ..]) => time_of_day(t)?,
                _ => return None,
            };
            let days = days_from_civil(i64::from(d.year), i64::from(d.month), i64::from(d.day));
            Parsed::Datetime(days * DAY_MICROS + time)
        }
        Kind::Text { max, bytes } => {
            let s = std::str::from_utf8(text).ok()?;
            if let Some(max) = max {
                let len = if bytes || s.is_ascii() {
                    s.len()
                } else {
                    s.chars().count()
                };
                if len as u64 > max {
                    return None;
                }
            }
            Parsed::Text(field)
        }
    })
}

/// 1 to 20 ASCII digits as a `u64` (`None` if not, or too large).
fn digits_u64(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || digits.len() > 20 {
        return None;
    }
    let mut x = 0u64;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        x = x.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    Some(x)
}

/// Two ASCII digits.
fn two(b: &[u8]) -> Option<u8> {
    match b {
        [a @ b'0'..=b'9', c @ b'0'..=b'9'] => Some((a - b'0') * 10 + (c - b'0')),
        _ => None,
    }
}

/// `YYYY-MM-DD` exactly (month at most 12, day at most 31, as the general path checks).
fn date(t: &[u8]) -> Option<Date> {
    let [y0, y1, y2, y3, b'-', m0, m1, b'-', d0, d1] = *t else {
        return None;
    };
    let year = u16::from(two(&[y0, y1])?) * 100 + u16::from(two(&[y2, y3])?);
    let month = two(&[m0, m1])?;
    let day = two(&[d0, d1])?;
    if month > 12 || day > 31 {
        return None;
    }
    Some(Date { year, month, day })
}

/// `HH:MM:SS[.f…]` (one to six fraction digits) within a day, in microseconds.
fn time_of_day(t: &[u8]) -> Option<i64> {
    let (hms, frac) = match t.get(8) {
        None => (t, &t[t.len()..]),
        Some(b'.') => (&t[..8], &t[9..]),
        Some(_) => return None,
    };
    let [h0, h1, b':', m0, m1, b':', s0, s1] = *hms else {
        return None;
    };
    let (h, m, s) = (two(&[h0, h1])?, two(&[m0, m1])?, two(&[s0, s1])?);
    if h > 23 || m > 59 || s > 59 || frac.is_empty() && t.len() > 8 || frac.len() > 6 {
        return None;
    }
    let mut us = 0i64;
    for k in 0..6 {
        let d = match frac.get(k) {
            Some(d) if d.is_ascii_digit() => i64::from(d - b'0'),
            Some(_) => return None,
            None => 0,
        };
        us = us * 10 + d;
    }
    Some(((i64::from(h) * 60 + i64::from(m)) * 60 + i64::from(s)) * 1_000_000 + us)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_text_is_taken() {
        let int = Kind::Int {
            signed: true,
            lo: -128,
            hi: 127,
        };
        assert!(matches!(parse(int, 0, b"-128"), Some(Parsed::Int(-128))));
        for t in [
            &b"128"[..],
            b"+1",
            b" 1",
            b"",
            b"-",
            b"1.0",
            b"99999999999999999999999",
        ] {
            assert!(parse(int, 0, t).is_none(), "{t:?}");
        }
        let dec = Kind::Decimal { whole: 3, scale: 2 };
        let d = |t: &[u8]| match parse(dec, 0, t) {
            Some(Parsed::Decimal {
                negative,
                coefficient,
            }) => Some((negative, coefficient)),
            _ => None,
        };
        assert_eq!(d(b"12.5"), Some((false, 1250)));
        assert_eq!(d(b"-0.00"), Some((false, 0)));
        assert_eq!(d(b"-007.01"), Some((true, 701)));
        assert_eq!(d(b".5"), Some((false, 50)));
        assert_eq!(d(b"1."), Some((false, 100)));
        for t in [&b"1234"[..], b"1.234", b".", b"", b"+1", b"1e5", b"1.2.3"] {
            assert_eq!(d(t), None, "{t:?}");
        }
        assert!(matches!(
            parse(Kind::Datetime, 0, b"1970-01-02 00:00:01.5"),
            Some(Parsed::Datetime(86_401_500_000))
        ));
        assert!(matches!(
            parse(Kind::Datetime, 0, b"1970-01-01"),
            Some(Parsed::Datetime(0))
        ));
        for t in [
            &b"1970-01-01 24:00:00"[..],
            b"1970-01-01 00:00:00.",
            b"1970-01-01 00:00:00.1234567",
            b"1970-1-01 00:00:00",
            b"1970-01-01 00:00",
            b"1970-13-01",
        ] {
            assert!(parse(Kind::Datetime, 0, t).is_none(), "{t:?}");
        }
        let text = Kind::Text {
            max: Some(3),
            bytes: false,
        };
        assert!(parse(text, 0, "äöü".as_bytes()).is_some());
        assert!(parse(text, 0, b"abcd").is_none());
        assert!(parse(text, 0, b"\xff").is_none());
    }
}
