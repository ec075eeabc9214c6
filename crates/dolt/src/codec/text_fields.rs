//! Text fields encoded straight into tuples for the column types an import mostly holds
//! (integers, FLOAT, DOUBLE, DECIMAL, DATE, DATETIME/TIMESTAMP, CHAR/VARCHAR/TEXT): no
//! `SqlValue`, no cell `Vec`s, the column's limits worked out once. Text is read with the
//! same grammar as the general path's ([`value_parse`]) and encoded to the same bytes; a
//! field it does not take whole (spaces around it, a decimal exponent or a fraction to round,
//! a value out of range, a NULL in a NOT NULL column, …) makes [`FastFields::parse`] give the
//! row back, and the general path then stores it or names its error exactly as before.

use std::borrow::Cow;

use prollystore_format::tuple::{Date, Decimal, TupleBuilder};
use prollystore_format::value_parse;
use prollystore_format::Encoding;

use crate::codec::{self, Storage};
use crate::schema::{key_encoding, Column, Schema, SqlType};

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
    /// DATETIME or TIMESTAMP keeping `fsp` fraction digits.
    Datetime { fsp: u8 },
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
pub(crate) struct FastFields {
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
    pub(crate) fn new(schema: &Schema, positions: &[usize], has_checks: bool) -> Option<Self> {
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
    pub(crate) fn parse(&mut self, row: &[Option<Cow<'_, [u8]>>]) -> bool {
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
    pub(crate) fn put(
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
        codec::Kind::Datetime { fsp, .. } => Kind::Datetime { fsp },
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
        Kind::Datetime { .. } => enc == Encoding::Datetime,
        Kind::Text { .. } => enc == Encoding::String,
    }
}

/// Field `field` (`text`) parsed for a column of `kind`; `None` when it needs the general
/// path.
fn parse(kind: Kind, field: usize, text: &[u8]) -> Option<Parsed> {
    Some(match kind {
        Kind::Int { signed, lo, hi } => {
            // Parsed as the general path parses (an i64, or a u64), then its range checked.
            let x = if signed {
                i128::from(value_parse::parse_i64(text)?)
            } else {
                i128::from(value_parse::parse_u64(text)?)
            };
            if x < lo || x > hi {
                return None;
            }
            Parsed::Int(x)
        }
        Kind::Float32 => Parsed::Float32(std::str::from_utf8(text).ok()?.trim().parse().ok()?),
        Kind::Float64 => Parsed::Float64(std::str::from_utf8(text).ok()?.trim().parse().ok()?),
        Kind::Decimal { whole, scale } => {
            let d = value_parse::parse_decimal_text(text)?;
            // An exponent, a fraction to round or too many digits: the general path's.
            if d.exponent != 0 || d.fraction.len() > scale as usize {
                return None;
            }
            let first = d
                .whole
                .iter()
                .position(|&c| c != b'0')
                .unwrap_or(d.whole.len());
            let w = &d.whole[first..];
            if w.len() > whole {
                return None;
            }
            let mut coefficient = 0u128;
            for &digit in w.iter().chain(d.fraction) {
                coefficient = coefficient * 10 + u128::from(digit - b'0');
            }
            coefficient *= 10u128.pow(scale - d.fraction.len() as u32);
            Parsed::Decimal {
                negative: d.negative && coefficient != 0,
                coefficient,
            }
        }
        Kind::Date => Parsed::Date(value_parse::parse_date(text)?),
        Kind::Datetime { fsp } => Parsed::Datetime(value_parse::parse_datetime_at(text, fsp)?),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_the_general_path_reads_alike_is_taken() {
        let int = Kind::Int {
            signed: true,
            lo: -128,
            hi: 127,
        };
        assert!(matches!(parse(int, 0, b"-128"), Some(Parsed::Int(-128))));
        assert!(matches!(parse(int, 0, b"+001"), Some(Parsed::Int(1))));
        for t in [
            &b"128"[..],
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
        assert_eq!(d(b"+1"), Some((false, 100)));
        // Exponents and fractions to round are the general path's.
        for t in [&b"1234"[..], b"1.234", b".", b"", b"1e5", b"1.2.3"] {
            assert_eq!(d(t), None, "{t:?}");
        }
        assert!(matches!(
            parse(Kind::Datetime { fsp: 6 }, 0, b"1970-01-02 00:00:01.5"),
            Some(Parsed::Datetime(86_401_500_000))
        ));
        assert!(matches!(
            parse(Kind::Datetime { fsp: 6 }, 0, b"1970-01-01"),
            Some(Parsed::Datetime(0))
        ));
        assert!(matches!(
            parse(Kind::Datetime { fsp: 0 }, 0, b"1970-1-1 0:0:0.5"),
            Some(Parsed::Datetime(1_000_000))
        ));
        // More fraction digits than a microsecond round once, to the column's precision.
        assert!(matches!(
            parse(Kind::Datetime { fsp: 6 }, 0, b"1970-01-01 00:00:00.1234565"),
            Some(Parsed::Datetime(123_457))
        ));
        assert!(matches!(
            parse(Kind::Datetime { fsp: 0 }, 0, b"1970-01-01 00:00:00.4999996"),
            Some(Parsed::Datetime(0))
        ));
        for t in [
            &b"1970-01-01 24:00:00"[..],
            b"1970-01-01 00:00:00.1234567x",
            b"1970-02-30 00:00:00",
            b"1970-13-01",
            b" 1970-01-01",
        ] {
            assert!(parse(Kind::Datetime { fsp: 6 }, 0, t).is_none(), "{t:?}");
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
