//! Text forms of field values: parsing CSV fields into tuple fields and printing them back.
//!
//! | encodings | text |
//! | --- | --- |
//! | `int*`, `uint*`, `bit64`, `enum`, `set`, `year` | decimal integer |
//! | `float32`, `float64` | Rust float syntax (`1.5`, `-2e-3`, `NaN`, `inf`); printed shortest round-trip |
//! | `decimal` | `[-]digits[.digits][e[+-]n]`, `NaN`, `Infinity`, `-Infinity`; printed as Dolt does (`12.50`) |
//! | `date` | `YYYY-MM-DD` |
//! | `time` | `[-]HH:MM:SS[.ffffff]` (hours may exceed 24) |
//! | `datetime` | `YYYY-MM-DD HH:MM:SS[.ffffff]` (or `T` between), UTC; printed without a zero fraction |
//! | `string`, `json`, `string_adaptive`, `json_adaptive`, `string_addr`, `json_addr` | the text itself (strings must be UTF-8) |
//! | `bytes`, `geometry`, `extended`, their `_adaptive` and `_addr` forms, `hash128`, `cell` | lower-case hex (upper case accepted) |
//! | `commit_addr` | Dolt's 32-character base32 address |
//!
//! `*_addr` fields (except `commit_addr`) hold the address of a blob tree that the importer writes
//! and the exporter reads back, so their text is the content, as for adaptive fields.

use std::io::Write;

use prollystore::store::StoreFastPaths;
use prollystore::tuples::field_bytes;
use prollystore_format::tuple::{
    datetime_text, time_text, year_to_raw, BlobStore, Decimal, Tuple, TupleBuilder, TupleDesc, Type,
};
use prollystore_format::value_parse::{
    hex_digit, parse_date, parse_datetime, parse_decimal_text, parse_hex_into, parse_i64,
    parse_time, parse_u64,
};
use prollystore_format::{Address, Encoding};

use crate::error::Error;

/// True for encodings whose empty text is a value (the empty string or byte string) rather
/// than nothing.
pub fn empty_is_value(enc: Encoding) -> bool {
    use Encoding as E;
    matches!(
        enc,
        E::String
            | E::Bytes
            | E::Json
            | E::Geometry
            | E::StringAdaptive
            | E::BytesAdaptive
            | E::JsonAdaptive
            | E::GeomAdaptive
            | E::StringAddr
            | E::BytesAddr
            | E::JsonAddr
            | E::GeomAddr
    )
}

/// True for encodings whose content is written as hex.
fn is_hex_content(enc: Encoding) -> bool {
    use Encoding as E;
    matches!(
        enc,
        E::Bytes
            | E::Geometry
            | E::Extended
            | E::BytesAdaptive
            | E::GeomAdaptive
            | E::ExtendedAdaptive
            | E::BytesAddr
            | E::GeomAddr
            | E::ExtendedAddr
    )
}

/// How NULL is spelled in CSV text.
#[derive(Clone, Debug, Default)]
pub struct NullText {
    /// `None`: the empty field (which, in a non-nullable text or bytes column, is the empty
    /// value instead).
    pub marker: Option<Vec<u8>>,
}

impl NullText {
    /// Whether `text` in a column of type `ty` means NULL; an error if it does in a non-nullable
    /// column.
    #[inline]
    pub fn is_null(&self, ty: Type, text: &[u8]) -> Result<bool, String> {
        let null = match &self.marker {
            Some(m) => text == &m[..],
            None => text.is_empty() && (ty.nullable || !empty_is_value(ty.enc)),
        };
        if null && !ty.nullable {
            return Err("NULL (empty) in a non-nullable column".to_string());
        }
        Ok(null)
    }

    /// The NULL spelling for output.
    pub fn out(&self) -> &[u8] {
        self.marker.as_deref().unwrap_or(b"")
    }
}

/// Appends lower-case hex of `b`.
pub fn write_hex(b: &[u8], out: &mut Vec<u8>) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.reserve(b.len() * 2);
    for &x in b {
        out.push(DIGITS[usize::from(x >> 4)]);
        out.push(DIGITS[usize::from(x & 15)]);
    }
}

/// The canonical text of a DATETIME: like [`datetime_text`] without a `.000000` fraction.
pub fn datetime_canonical(micros: i64) -> String {
    let mut s = datetime_text(micros);
    if s.ends_with(".000000") {
        s.truncate(s.len() - 7);
    }
    s
}

/// A parsed decimal's parts: sign, exponent, coefficient (big-endian, in a reused buffer).
fn parse_decimal<'a>(t: &[u8], coeff: &'a mut Vec<u8>) -> Option<Decimal<'a>> {
    let lower: &[u8] = if t.len() <= 9 { t } else { b"" };
    let mut buf = [0u8; 9];
    let n = lower.len();
    buf[..n].copy_from_slice(lower);
    buf[..n].make_ascii_lowercase();
    match &buf[..n] {
        b"nan" => return Some(Decimal::NAN),
        b"inf" | b"+inf" | b"infinity" | b"+infinity" => return Some(Decimal::POS_INFINITY),
        b"-inf" | b"-infinity" => return Some(Decimal::NEG_INFINITY),
        _ => {}
    }
    let d = parse_decimal_text(t)?;
    let (neg, int, frac) = (d.negative, d.whole, d.fraction);
    // Coefficient digits → u32 limbs (little-endian), then big-endian bytes.
    let mut limbs: Vec<u32> = Vec::new();
    for &c in int.iter().chain(frac) {
        let mut carry = u64::from(c - b'0');
        for l in limbs.iter_mut() {
            let v = u64::from(*l) * 10 + carry;
            *l = v as u32;
            carry = v >> 32;
        }
        if carry != 0 {
            limbs.push(carry as u32);
        }
    }
    coeff.clear();
    for l in limbs.iter().rev() {
        coeff.extend_from_slice(&l.to_be_bytes());
    }
    let exponent = d.exponent.checked_sub(i32::try_from(frac.len()).ok()?)?;
    Some(Decimal::finite(exponent, neg, coeff))
}

/// Writes the stored bytes of a fixed-width, non-address field parsed from `t` into `buf`;
/// returns their length. Used both by the row builder and by the fixed-layout fast path, so
/// the two agree by construction.
#[inline]
pub fn fixed_bytes(enc: Encoding, t: &[u8], buf: &mut [u8; 20]) -> Option<usize> {
    use Encoding as E;
    macro_rules! int {
        ($ty:ty, $parse:ident) => {{
            let v = <$ty>::try_from($parse(t)?).ok()?;
            let b = v.to_le_bytes();
            buf[..b.len()].copy_from_slice(&b);
            b.len()
        }};
    }
    Some(match enc {
        E::Int8 => int!(i8, parse_i64),
        E::Int16 => int!(i16, parse_i64),
        E::Int32 => int!(i32, parse_i64),
        E::Int64 => int!(i64, parse_i64),
        E::Uint8 => int!(u8, parse_u64),
        E::Uint16 => int!(u16, parse_u64),
        E::Uint32 => int!(u32, parse_u64),
        E::Uint64 | E::Bit64 | E::Set => int!(u64, parse_u64),
        E::Enum => int!(u16, parse_u64),
        E::Float32 => {
            let v: f32 = std::str::from_utf8(t).ok()?.parse().ok()?;
            buf[..4].copy_from_slice(&v.to_le_bytes());
            4
        }
        E::Float64 => {
            let v: f64 = std::str::from_utf8(t).ok()?.parse().ok()?;
            buf[..8].copy_from_slice(&v.to_le_bytes());
            8
        }
        E::Year => {
            let y = u16::try_from(parse_u64(t)?).ok()?;
            buf[0] = year_to_raw(y)?;
            1
        }
        E::Date => {
            buf[..4].copy_from_slice(&parse_date(t)?.to_raw().to_le_bytes());
            4
        }
        E::Time => {
            buf[..8].copy_from_slice(&parse_time(t)?.to_le_bytes());
            8
        }
        E::Datetime => {
            buf[..8].copy_from_slice(&parse_datetime(t)?.to_le_bytes());
            8
        }
        E::Hash128 | E::Cell => {
            let w = enc.fixed_width()?;
            if t.len() != 2 * w {
                return None;
            }
            for (k, pair) in t.chunks_exact(2).enumerate() {
                let h = hex_digit(*pair.first()?)?;
                let l = hex_digit(*pair.get(1)?)?;
                *buf.get_mut(k)? = h << 4 | l;
            }
            w
        }
        _ => return None,
    })
}

/// What a field's text should look like, for error messages.
fn expected(enc: Encoding) -> &'static str {
    use Encoding as E;
    match enc {
        E::Int8 | E::Int16 | E::Int32 | E::Int64 => "a signed integer in range",
        E::Uint8 | E::Uint16 | E::Uint32 | E::Uint64 | E::Bit64 | E::Set | E::Enum => {
            "an unsigned integer in range"
        }
        E::Float32 | E::Float64 => "a number",
        E::Year => "a year (0 or 1901..2155)",
        E::Date => "a date YYYY-MM-DD",
        E::Time => "a time [-]HH:MM:SS[.ffffff]",
        E::Datetime => "a datetime YYYY-MM-DD HH:MM:SS[.ffffff]",
        E::Hash128 => "32 hex digits",
        E::Cell => "34 hex digits",
        E::Decimal => "a decimal such as 12.50",
        E::CommitAddr => "a 32-character base32 address",
        _ => "a value",
    }
}

/// Parses field text into a [`TupleBuilder`], reusing scratch buffers between fields.
#[derive(Default)]
pub struct FieldParser {
    scratch: Vec<u8>,
}

impl FieldParser {
    /// Puts field `i` (of type `ty`, not NULL) parsed from `t`. Blob content of `*_addr` fields
    /// is written through `blobs`. The error says what was expected.
    pub fn put(
        &mut self,
        b: &mut TupleBuilder,
        i: usize,
        ty: Type,
        t: &[u8],
        blobs: &mut dyn BlobStore,
    ) -> Result<(), String> {
        use Encoding as E;
        let enc = ty.enc;
        let shown = || {
            String::from_utf8_lossy(t)
                .chars()
                .take(60)
                .collect::<String>()
        };
        let bad = |why: &str| format!("{} {:?} is not {why}", enc, shown());
        let utf8 = |t: &[u8]| -> Result<(), String> {
            std::str::from_utf8(t)
                .map(|_| ())
                .map_err(|_| format!("{enc} value is not valid UTF-8"))
        };
        let r = match enc {
            E::Year => {
                let y = parse_u64(t)
                    .and_then(|y| u16::try_from(y).ok())
                    .filter(|&y| year_to_raw(y).is_some())
                    .ok_or_else(|| bad(expected(enc)))?;
                b.put_year(i, y)
            }
            e if e.fixed_width().is_some() && !e.is_address() => {
                let mut buf = [0u8; 20];
                let n = fixed_bytes(e, t, &mut buf).ok_or_else(|| bad(expected(enc)))?;
                b.put_raw(i, &buf[..n])
            }
            E::CommitAddr => {
                let s = std::str::from_utf8(t).map_err(|_| bad(expected(enc)))?;
                let a = Address::from_base32(s).map_err(|_| bad(expected(enc)))?;
                b.put_address(i, &a)
            }
            E::Decimal => {
                let d = parse_decimal(t, &mut self.scratch).ok_or_else(|| bad(expected(enc)))?;
                b.put_decimal(i, &d)
            }
            E::String => {
                utf8(t)?;
                b.put_string_bytes(i, t)
            }
            E::Json => {
                utf8(t)?;
                b.put_json(i, t)
            }
            _ => {
                let content: &[u8] = if is_hex_content(enc) {
                    parse_hex_into(t, &mut self.scratch).map_err(bad)?;
                    &self.scratch
                } else {
                    if matches!(enc, E::StringAdaptive | E::StringAddr) {
                        utf8(t)?;
                    }
                    t
                };
                match enc {
                    E::Bytes => b.put_bytes(i, content),
                    E::Geometry => b.put_geometry(i, content),
                    E::Extended => b.put_extended(i, content),
                    e if e.is_adaptive() => b.put_adaptive_inline(i, content),
                    e if e.is_address() => {
                        let a = blobs
                            .write_blob(content)
                            .map_err(|e| format!("writing the blob of a {enc} value: {e}"))?;
                        b.put_address(i, &a)
                    }
                    _ => return Err(format!("type {enc} cannot be imported")),
                }
            }
        };
        r.map_err(|e| e.to_string())
    }
}

/// A descriptor whose fields all have a fixed width and need no blobs: such tuples are written
/// straight from text without a [`TupleBuilder`] (the import fast path).
pub struct FixedEncoder {
    types: Vec<Type>,
    /// End of each field within the tuple being written.
    ends: Vec<u16>,
    /// Largest tuple: every field present, plus offsets and count.
    max_len: usize,
}

impl FixedEncoder {
    /// The encoder for `desc`, if every field is fixed-width and not an address.
    pub fn new(desc: &TupleDesc) -> Option<FixedEncoder> {
        let mut data = 0usize;
        for t in desc.types() {
            if t.enc.is_address() {
                return None;
            }
            data += t.enc.fixed_width()?;
        }
        let max_len = data + 2 * desc.len().max(1);
        (max_len <= usize::from(u16::MAX)).then(|| FixedEncoder {
            types: desc.types().to_vec(),
            ends: vec![0; desc.len()],
            max_len,
        })
    }

    /// Appends the tuple of `fields` (text per field, in descriptor order) to `out`. On error
    /// `out` is unchanged and the error names the field index.
    #[inline]
    pub fn encode<'f>(
        &mut self,
        fields: impl Iterator<Item = &'f [u8]>,
        null: &NullText,
        out: &mut Vec<u8>,
    ) -> Result<(), (usize, String)> {
        let mut bytes = Vec::new();
        let mut bounds = Vec::new();
        for f in fields {
            bounds.push((bytes.len(), bytes.len() + f.len()));
            bytes.extend_from_slice(f);
        }
        let columns: Vec<usize> = (0..bounds.len()).collect();
        self.encode_record(&bytes, &bounds, &columns, null, out)
    }

    /// [`FixedEncoder::encode`] for fields given as ranges of `src` (as a CSV record holds
    /// them): descriptor field `i` is `src[bounds[columns[i]]]` (empty if out of range).
    #[inline]
    pub fn encode_record(
        &mut self,
        src: &[u8],
        bounds: &[(usize, usize)],
        columns: &[usize],
        null: &NullText,
        out: &mut Vec<u8>,
    ) -> Result<(), (usize, String)> {
        use Encoding as E;
        let base = out.len();
        out.reserve(self.max_len);
        let mut count = 0usize;
        let marker = null.marker.is_some();
        for (i, ((&ty, end), &j)) in self
            .types
            .iter()
            .zip(self.ends.iter_mut())
            .zip(columns)
            .enumerate()
        {
            let t = bounds
                .get(j)
                .and_then(|&(s, e)| src.get(s..e))
                .unwrap_or(b"");
            let present = if t.is_empty() || marker {
                match null.is_null(ty, t) {
                    Ok(n) => !n,
                    Err(e) => {
                        out.truncate(base);
                        return Err((i, e));
                    }
                }
            } else {
                true
            };
            if present {
                // The common widths inline; the rest through `fixed_bytes`.
                let ok = match ty.enc {
                    E::Int64 => parse_i64(t).map(|v| out.extend_from_slice(&v.to_le_bytes())),
                    E::Int32 => parse_i64(t)
                        .and_then(|v| i32::try_from(v).ok())
                        .map(|v| out.extend_from_slice(&v.to_le_bytes())),
                    E::Uint64 => parse_u64(t).map(|v| out.extend_from_slice(&v.to_le_bytes())),
                    E::Uint32 => parse_u64(t)
                        .and_then(|v| u32::try_from(v).ok())
                        .map(|v| out.extend_from_slice(&v.to_le_bytes())),
                    enc => {
                        let mut buf = [0u8; 20];
                        fixed_bytes(enc, t, &mut buf)
                            .map(|n| out.extend_from_slice(buf.get(..n).unwrap_or(&[])))
                    }
                };
                if ok.is_none() {
                    out.truncate(base);
                    let shown = String::from_utf8_lossy(t)
                        .chars()
                        .take(60)
                        .collect::<String>();
                    return Err((
                        i,
                        format!("{} {shown:?} is not {}", ty.enc, expected(ty.enc)),
                    ));
                }
                count = i + 1;
            }
            *end = (out.len() - base) as u16;
        }
        for k in 1..count {
            let start = self.ends.get(k - 1).copied().unwrap_or(0);
            out.extend_from_slice(&start.to_le_bytes());
        }
        out.extend_from_slice(&(count as u16).to_le_bytes());
        Ok(())
    }
}

/// Appends the text of field `i` of `tuple` to `out`; returns false (appending nothing) for
/// NULL. Out-of-band values are read from `store`.
pub fn format_field<S: StoreFastPaths + ?Sized>(
    store: &S,
    desc: &TupleDesc,
    tuple: &[u8],
    i: usize,
    out: &mut Vec<u8>,
) -> Result<bool, Error> {
    use Encoding as E;
    let t = Tuple::new_unverified(tuple);
    let enc = desc.type_of(i)?.enc;
    macro_rules! num {
        ($get:ident) => {
            match desc.$get(t, i)? {
                Some(v) => {
                    write!(out, "{v}")?;
                    true
                }
                None => false,
            }
        };
    }
    let present = match enc {
        E::Int8 => num!(get_int8),
        E::Int16 => num!(get_int16),
        E::Int32 => num!(get_int32),
        E::Int64 => num!(get_int64),
        E::Uint8 => num!(get_uint8),
        E::Uint16 => num!(get_uint16),
        E::Uint32 => num!(get_uint32),
        E::Uint64 => num!(get_uint64),
        E::Float32 => num!(get_float32),
        E::Float64 => num!(get_float64),
        E::Bit64 => num!(get_bit64),
        E::Year => num!(get_year),
        E::Date => num!(get_date),
        E::Enum => num!(get_enum),
        E::Set => num!(get_set),
        E::Decimal => num!(get_decimal),
        E::Time => match desc.get_time(t, i)? {
            Some(v) => {
                out.extend_from_slice(time_text(v).as_bytes());
                true
            }
            None => false,
        },
        E::Datetime => match desc.get_datetime(t, i)? {
            Some(v) => {
                out.extend_from_slice(datetime_canonical(v).as_bytes());
                true
            }
            None => false,
        },
        E::Hash128 => match desc.get_hash128(t, i)? {
            Some(v) => {
                write_hex(&v, out);
                true
            }
            None => false,
        },
        E::Cell => match desc.get_cell(t, i)? {
            Some(v) => {
                write_hex(&v, out);
                true
            }
            None => false,
        },
        E::CommitAddr => match desc.get_address(t, i)? {
            Some(a) => {
                out.extend_from_slice(a.to_base32().as_bytes());
                true
            }
            None => false,
        },
        E::String | E::Json | E::Bytes | E::Geometry => {
            let v = match enc {
                E::String => desc.get_string_bytes(t, i)?,
                E::Json => desc.get_json(t, i)?,
                E::Bytes => desc.get_bytes(t, i)?,
                _ => desc.get_geometry(t, i)?,
            };
            match v {
                Some(v) if is_hex_content(enc) => {
                    write_hex(v, out);
                    true
                }
                Some(v) => {
                    out.extend_from_slice(v);
                    true
                }
                None => false,
            }
        }
        _ => match field_bytes(store, desc, tuple, i)? {
            Some(v) if is_hex_content(enc) => {
                write_hex(&v, out);
                true
            }
            Some(v) => {
                out.extend_from_slice(&v);
                true
            }
            None => false,
        },
    };
    Ok(present)
}

#[cfg(test)]
mod tests {
    use super::*;
    use prollystore_format::tuple::NoBlobStore;

    #[test]
    fn temporal() {
        assert_eq!(
            parse_datetime(b"2000-02-29 12:34:56.123456").map(datetime_canonical),
            Some("2000-02-29 12:34:56.123456".to_string())
        );
        assert_eq!(
            parse_datetime(b"1969-12-31 23:59:59").map(datetime_canonical),
            Some("1969-12-31 23:59:59".to_string())
        );
        assert_eq!(
            parse_datetime(b"0000-00-00 00:00:00"),
            Some(prollystore_format::tuple::ZERO_DATETIME_MICROS)
        );
        assert_eq!(parse_datetime(b"2000-01-01 24:00:00"), None);
        assert_eq!(
            parse_time(b"-838:59:59").map(time_text),
            Some("-838:59:59".into())
        );
        assert_eq!(
            parse_time(b"01:02:03.5").map(time_text),
            Some("01:02:03.500000".into())
        );
        assert_eq!(
            parse_date(b"2024-02-29").map(|d| d.to_string()),
            Some("2024-02-29".into())
        );
        assert_eq!(parse_date(b"2024-13-01"), None);
    }

    #[test]
    fn decimals_print_back() {
        let mut c = Vec::new();
        for s in [
            "12.50",
            "-0.001",
            "0",
            "123456789012345678901234567890123456789012.5",
            "NaN",
            "-Infinity",
            "1E+30",
        ] {
            let d = parse_decimal(s.as_bytes(), &mut c).unwrap();
            let mut b = Vec::new();
            d.write(&mut b);
            let back = Decimal::from_bytes(&b).unwrap();
            assert_eq!(back.to_string(), s);
        }
        assert!(parse_decimal(b"1.2.3", &mut c).is_none());
        assert!(parse_decimal(b".", &mut c).is_none());
    }

    #[test]
    fn fast_path_matches_the_builder() {
        let types = vec![
            Type::not_null(Encoding::Int64),
            Type::nullable(Encoding::Uint8),
            Type::nullable(Encoding::Year),
            Type::nullable(Encoding::Date),
            Type::nullable(Encoding::Datetime),
            Type::nullable(Encoding::Float64),
            Type::nullable(Encoding::Hash128),
        ];
        let desc = TupleDesc::new(types.clone());
        let mut enc = FixedEncoder::new(&desc).unwrap();
        let rows: [[&[u8]; 7]; 3] = [
            [
                b"-5",
                b"7",
                b"1999",
                b"2024-02-29",
                b"2000-01-01 00:00:01",
                b"1.5",
                b"00112233445566778899aabbccddeeff",
            ],
            [b"5", b"", b"", b"2024-02-29", b"", b"", b""],
            [b"6", b"", b"", b"", b"", b"", b""],
        ];
        let null = NullText::default();
        for row in rows {
            let mut fast = Vec::new();
            enc.encode(row.iter().copied(), &null, &mut fast).unwrap();
            let mut b = TupleBuilder::new(desc.clone());
            let mut p = FieldParser::default();
            for (i, (ty, t)) in types.iter().zip(row).enumerate() {
                if !null.is_null(*ty, t).unwrap() {
                    p.put(&mut b, i, *ty, t, &mut NoBlobStore).unwrap();
                }
            }
            assert_eq!(fast, b.build().unwrap().as_bytes());
        }
    }
}
