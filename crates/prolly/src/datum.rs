//! [`Datum`]: one owned value of a typed row, what [`crate::typed::TypedMap`] takes and gives.
//!
//! A datum is the owned form of a stored [`Value`], with one NULL ([`Datum::Null`]) and one
//! variant per kind of value rather than per encoding: every integer column gives
//! [`Datum::Int`] or [`Datum::Uint`], every text column [`Datum::Text`] (inline or in a blob
//! tree), every JSON column [`Datum::Json`]. Writing converts a datum to the column's encoding,
//! checking the range (`Datum::Int(300)` does not fit a `tinyint`).
//!
//! What to pass for each column type:
//!
//! | column type | datum | from |
//! |---|---|---|
//! | integers, `bit`, `year`, `enum` (index), `set` (mask) | [`Datum::Int`], [`Datum::Uint`] | `i8`…`i64`, `u8`…`u64`, `bool` |
//! | `float`, `double` | [`Datum::Float`] | `f32`, `f64` |
//! | `char`, `varchar`, `text` | [`Datum::Text`] | `&str`, `String` |
//! | `binary`, `varbinary`, `blob` | [`Datum::Bytes`] (or text) | `&[u8]`, `Vec<u8>` |
//! | `json` | [`Datum::Json`] (JSON text; a `Text` is taken as JSON text too) | `serde_json::Value` (feature `serde_json`) |
//! | `decimal` | [`Datum::Decimal`] | [`Datum::decimal`] |
//! | `date`, `time`, `datetime`, `timestamp` | [`Datum::Date`], [`Datum::Time`] (µs), [`Datum::Datetime`] (Unix µs) | [`Date`]; chrono's `NaiveDate`, `TimeDelta`, `NaiveDateTime`, `DateTime<Utc>` (feature `chrono`) |
//! | any nullable column | [`Datum::Null`] | `Option<T>` (`None`) |
//!
//! JSON is stored as Dolt stores it ([`prollystore_format::json::normalize`]: no spaces,
//! object members sorted by key), and comes back as that text:
//!
//! ```
//! use prollystore::datum::Datum;
//!
//! let d = Datum::from(42i32);
//! assert_eq!(d, Datum::Int(42));
//! assert_eq!(d.to_string(), "42");
//! assert_eq!(Datum::from(Some("x")), Datum::Text("x".into()));
//! assert_eq!(Datum::from(None::<i64>), Datum::Null);
//! assert_eq!(Datum::json(r#"{"b": 1, "a": [true]}"#).to_string(), r#"{"b": 1, "a": [true]}"#);
//! assert_eq!(Datum::Int(7).as_i64(), Some(7));
//! assert!(Datum::Null.is_null());
//! ```

use std::fmt;

use prollystore_format::tuple::{
    datetime_text, text_of, time_text, Adaptive, Date, Decimal, DecimalForm, Value,
};
use prollystore_format::{value_text, Address, Encoding};

/// Reads an out-of-band value (its length and blob address) into the buffer.
pub(crate) type ReadPayload<'f> = dyn FnMut(u64, &Address, &mut Vec<u8>) -> Result<(), String> + 'f;

/// One value of a typed row, owned. See the [module docs](self) for what each column takes.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Datum {
    /// SQL NULL (the only NULL of the typed API).
    Null,
    /// A signed integer (any signed integer column; `year`, `enum` and `set` take it too).
    Int(i64),
    /// An unsigned integer (unsigned integer and `bit` columns; `enum` indexes, `set` masks).
    Uint(u64),
    /// A floating-point number (`float` columns hold it as `f32`).
    Float(f64),
    /// Text.
    Text(String),
    /// Bytes.
    Bytes(Vec<u8>),
    /// JSON text (stored as Dolt normalizes it).
    Json(String),
    /// A finite decimal: `coefficient × 10^exponent`, the coefficient as big-endian bytes.
    Decimal {
        /// Power of ten.
        exponent: i32,
        /// Sign.
        negative: bool,
        /// Big-endian magnitude.
        coefficient: Vec<u8>,
    },
    /// A DATE.
    Date(Date),
    /// A TIME in signed microseconds.
    Time(i64),
    /// A DATETIME or TIMESTAMP in Unix microseconds (UTC).
    Datetime(i64),
    /// Geometry bytes as stored (SRID + WKB).
    Geometry(Vec<u8>),
    /// 16 raw bytes.
    Hash128([u8; 16]),
    /// A chunk address (`*_addr` columns).
    Address(Address),
    /// A spatial index cell.
    Cell([u8; 17]),
}

impl Datum {
    /// JSON text as a datum (checked and normalized when written).
    pub fn json(text: impl Into<String>) -> Datum {
        Datum::Json(text.into())
    }

    /// A decimal `coefficient × 10^exponent` (for `decimal(p,s)` columns, `exponent` is
    /// `-s`): `Datum::decimal(-2, 1234)` is 12.34.
    ///
    /// ```
    /// use prollystore::datum::Datum;
    /// assert_eq!(Datum::decimal(-2, -1234).to_string(), "-12.34");
    /// assert_eq!(Datum::decimal(-2, 5).to_string(), "0.05");
    /// ```
    pub fn decimal(exponent: i32, coefficient: i128) -> Datum {
        let bytes = coefficient.unsigned_abs().to_be_bytes();
        let first = bytes.iter().position(|&b| b != 0).unwrap_or(bytes.len());
        Datum::Decimal {
            exponent,
            negative: coefficient < 0,
            coefficient: bytes[first..].to_vec(),
        }
    }

    /// True for [`Datum::Null`].
    pub fn is_null(&self) -> bool {
        matches!(self, Datum::Null)
    }

    /// The integer, if this is an integer that fits an `i64`.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Datum::Int(v) => Some(v),
            Datum::Uint(v) => i64::try_from(v).ok(),
            _ => None,
        }
    }

    /// The number as an `f64`, if this is a float or an integer.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Datum::Float(v) => Some(v),
            Datum::Int(v) => Some(v as f64),
            Datum::Uint(v) => Some(v as f64),
            _ => None,
        }
    }

    /// The text of a [`Datum::Text`] or [`Datum::Json`].
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Datum::Text(s) | Datum::Json(s) => Some(s),
            _ => None,
        }
    }

    /// The bytes of a [`Datum::Bytes`] or [`Datum::Geometry`], or the UTF-8 of a text.
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Datum::Bytes(b) | Datum::Geometry(b) => Some(b),
            Datum::Text(s) | Datum::Json(s) => Some(s.as_bytes()),
            _ => None,
        }
    }

    /// The value's text (what [`fmt::Display`] writes; `NULL` for NULL).
    pub fn to_text(&self) -> String {
        self.to_string()
    }

    /// The JSON document of a [`Datum::Json`] (or JSON text in a [`Datum::Text`]).
    ///
    /// ```
    /// use prollystore::datum::Datum;
    /// let doc = serde_json::json!({"tags": ["a", "b"], "n": 1});
    /// let d = Datum::from(doc.clone());
    /// assert_eq!(d.to_json()?, doc);
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    #[cfg(feature = "serde_json")]
    pub fn to_json(&self) -> Result<serde_json::Value, serde_json::Error> {
        match self {
            Datum::Json(s) | Datum::Text(s) => serde_json::from_str(s),
            Datum::Null => Ok(serde_json::Value::Null),
            other => Err(serde::de::Error::custom(format!(
                "{} is not JSON text",
                other.kind()
            ))),
        }
    }

    /// The variant's name, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Datum::Null => "NULL",
            Datum::Int(_) => "an integer",
            Datum::Uint(_) => "an unsigned integer",
            Datum::Float(_) => "a float",
            Datum::Text(_) => "text",
            Datum::Bytes(_) => "bytes",
            Datum::Json(_) => "JSON",
            Datum::Decimal { .. } => "a decimal",
            Datum::Date(_) => "a date",
            Datum::Time(_) => "a time",
            Datum::Datetime(_) => "a datetime",
            Datum::Geometry(_) => "a geometry",
            Datum::Hash128(_) => "a hash128",
            Datum::Address(_) => "an address",
            Datum::Cell(_) => "a cell",
        }
    }

    /// The stored value for a column of encoding `enc`, borrowing from the datum (JSON text
    /// from `json`, its normalized form, which the caller makes first with
    /// [`Datum::normalized_json`]). `Ok(None)` is NULL; `Err` says why the datum does not fit.
    pub(crate) fn to_value<'a>(
        &'a self,
        enc: Encoding,
        json: Option<&'a [u8]>,
    ) -> Result<Option<Value<'a>>, String> {
        use Encoding as E;
        let misfit = || {
            format!(
                "{} does not fit a column of encoding {}",
                self.kind(),
                enc.name()
            )
        };
        let range =
            |v: &dyn fmt::Display| format!("{v} is out of range for encoding {}", enc.name());
        let int = |d: &Datum| -> Result<i128, String> {
            match *d {
                Datum::Int(v) => Ok(i128::from(v)),
                Datum::Uint(v) => Ok(i128::from(v)),
                _ => Err(misfit()),
            }
        };
        macro_rules! narrow {
            ($variant:ident, $t:ty) => {{
                let v = int(self)?;
                Value::$variant(<$t>::try_from(v).map_err(|_| range(&v))?)
            }};
        }
        if let Datum::Null = self {
            return Ok(None);
        }
        let v = match enc {
            E::Int8 => narrow!(Int8, i8),
            E::Uint8 => narrow!(Uint8, u8),
            E::Int16 => narrow!(Int16, i16),
            E::Uint16 => narrow!(Uint16, u16),
            E::Int32 => narrow!(Int32, i32),
            E::Uint32 => narrow!(Uint32, u32),
            E::Int64 => narrow!(Int64, i64),
            E::Uint64 => narrow!(Uint64, u64),
            E::Bit64 => narrow!(Bit64, u64),
            E::Year => narrow!(Year, u16),
            E::Enum => narrow!(Enum, u16),
            E::Set => narrow!(Set, u64),
            E::Float32 => match *self {
                Datum::Float(f) if f.is_nan() || (f as f32) as f64 == f => Value::Float32(f as f32),
                Datum::Float(f) => return Err(format!("{f} is not exactly a float32")),
                _ => return Err(misfit()),
            },
            E::Float64 => match *self {
                Datum::Float(f) => Value::Float64(f),
                _ => return Err(misfit()),
            },
            E::Date => match *self {
                Datum::Date(d) => Value::Date(d),
                _ => return Err(misfit()),
            },
            E::Time => match *self {
                Datum::Time(t) => Value::Time(t),
                _ => return Err(misfit()),
            },
            E::Datetime => match *self {
                Datum::Datetime(t) => Value::Datetime(t),
                _ => return Err(misfit()),
            },
            E::Hash128 => match *self {
                Datum::Hash128(h) => Value::Hash128(h),
                _ => return Err(misfit()),
            },
            E::Cell => match *self {
                Datum::Cell(c) => Value::Cell(c),
                _ => return Err(misfit()),
            },
            e if e.is_address() => match *self {
                Datum::Address(a) => Value::Address(a),
                _ => return Err(misfit()),
            },
            E::Decimal => match self {
                Datum::Decimal {
                    exponent,
                    negative,
                    coefficient,
                } => Value::Decimal(Decimal::finite(*exponent, *negative, coefficient)),
                _ => return Err(misfit()),
            },
            E::String | E::StringAdaptive => match self {
                Datum::Text(s) => Value::String(s),
                _ => return Err(misfit()),
            },
            E::Json | E::JsonAdaptive => match (self, json) {
                (Datum::Json(_) | Datum::Text(_), Some(j)) => Value::Json(j),
                _ => return Err(misfit()),
            },
            E::Geometry | E::GeomAdaptive => match self {
                Datum::Geometry(b) | Datum::Bytes(b) => Value::Geometry(b),
                _ => return Err(misfit()),
            },
            E::Extended => match self {
                Datum::Bytes(b) => Value::Extended(b),
                _ => return Err(misfit()),
            },
            _ => match self.as_bytes() {
                // Bytes, BytesAdaptive and anything else byte-shaped.
                Some(b) if !matches!(self, Datum::Geometry(_)) => Value::Bytes(b),
                _ => return Err(misfit()),
            },
        };
        Ok(Some(v))
    }

    /// For a JSON column, the bytes Dolt stores for this datum's JSON text; `None` for other
    /// columns and for NULL.
    pub(crate) fn normalized_json(&self, enc: Encoding) -> Result<Option<Vec<u8>>, String> {
        match (enc, self) {
            (Encoding::Json | Encoding::JsonAdaptive, Datum::Json(s) | Datum::Text(s)) => {
                prollystore_format::json::normalize(s.as_bytes())
                    .map(Some)
                    .map_err(|e| e.to_string())
            }
            _ => Ok(None),
        }
    }

    /// Makes this datum the one of a stored value of encoding `enc`, reusing its text or byte
    /// buffer when it has one: a scan that refills the same row allocates only when a value
    /// outgrows the one before it. `payload` reads an out-of-band adaptive value (its length
    /// and blob address) into the given buffer.
    pub(crate) fn set_from_value(
        &mut self,
        v: Option<Value<'_>>,
        enc: Encoding,
        payload: &mut ReadPayload<'_>,
    ) -> Result<(), String> {
        if self.refill_in_place(&v, enc)? {
            return Ok(());
        }
        let Some(v) = v else {
            *self = Datum::Null;
            return Ok(());
        };
        *self = match v {
            Value::Int8(x) => Datum::Int(x.into()),
            Value::Int16(x) => Datum::Int(x.into()),
            Value::Int32(x) => Datum::Int(x.into()),
            Value::Int64(x) => Datum::Int(x),
            Value::Year(x) => Datum::Int(x.into()),
            Value::Uint8(x) => Datum::Uint(x.into()),
            Value::Uint16(x) => Datum::Uint(x.into()),
            Value::Uint32(x) => Datum::Uint(x.into()),
            Value::Uint64(x) | Value::Bit64(x) | Value::Set(x) => Datum::Uint(x),
            Value::Enum(x) => Datum::Uint(x.into()),
            Value::Float32(x) => Datum::Float(x.into()),
            Value::Float64(x) => Datum::Float(x),
            Value::Hash128(h) => Datum::Hash128(h),
            Value::Date(d) => Datum::Date(d),
            Value::Time(t) => Datum::Time(t),
            Value::Datetime(t) => Datum::Datetime(t),
            Value::Address(a) => Datum::Address(a),
            Value::Cell(c) => Datum::Cell(c),
            Value::String(s) => {
                let mut out = self.take_string();
                out.push_str(s);
                Datum::Text(out)
            }
            Value::Bytes(b) | Value::Extended(b) => Datum::Bytes(self.filled(b)),
            Value::Json(b) => Datum::Json(utf8(self.filled(b), "JSON")?),
            Value::Geometry(b) => Datum::Geometry(self.filled(b)),
            Value::Decimal(d) => match d.form() {
                DecimalForm::Finite => Datum::Decimal {
                    exponent: d.exponent(),
                    negative: d.is_negative(),
                    coefficient: self.filled(d.coefficient_be()),
                },
                other => return Err(format!("the decimal is {other:?}, not a number")),
            },
            Value::Adaptive(a) => {
                let bytes = match a {
                    Adaptive::Inline(p) => self.filled(p),
                    Adaptive::OutOfBand { len, address } => {
                        let mut out = self.take_buffer();
                        payload(len, &address, &mut out)?;
                        out
                    }
                };
                match enc {
                    Encoding::StringAdaptive => Datum::Text(utf8(bytes, "text")?),
                    Encoding::JsonAdaptive => Datum::Json(utf8(bytes, "JSON")?),
                    Encoding::GeomAdaptive => Datum::Geometry(bytes),
                    _ => Datum::Bytes(bytes),
                }
            }
        };
        Ok(())
    }

    /// The scan's common case: a text, JSON or byte value stored inline, landing on a datum
    /// that already holds that kind of buffer, is copied into it without moving the datum
    /// (`false` when the value is another case, left for [`Datum::set_from_value`]).
    #[inline]
    fn refill_in_place(&mut self, v: &Option<Value<'_>>, enc: Encoding) -> Result<bool, String> {
        let text = match (&mut *self, v) {
            (Datum::Text(s), Some(Value::String(x))) => (s, *x),
            (Datum::Text(s), Some(Value::Adaptive(Adaptive::Inline(p))))
                if enc == Encoding::StringAdaptive =>
            {
                (s, text_of(p).ok_or("stored text is not UTF-8")?)
            }
            (Datum::Json(s), Some(Value::Json(p) | Value::Adaptive(Adaptive::Inline(p))))
                if matches!(enc, Encoding::Json | Encoding::JsonAdaptive) =>
            {
                (s, text_of(p).ok_or("stored JSON is not UTF-8")?)
            }
            (Datum::Bytes(b), Some(Value::Bytes(x) | Value::Extended(x))) => {
                b.clear();
                b.extend_from_slice(x);
                return Ok(true);
            }
            (Datum::Bytes(b), Some(Value::Adaptive(Adaptive::Inline(x))))
                if !matches!(
                    enc,
                    Encoding::StringAdaptive | Encoding::JsonAdaptive | Encoding::GeomAdaptive
                ) =>
            {
                b.clear();
                b.extend_from_slice(x);
                return Ok(true);
            }
            _ => return Ok(false),
        };
        let (s, x) = text;
        s.clear();
        s.push_str(x);
        Ok(true)
    }

    /// This datum's text or byte buffer, emptied (a new one when it has none); the datum is
    /// left NULL.
    fn take_buffer(&mut self) -> Vec<u8> {
        let mut out = match std::mem::replace(self, Datum::Null) {
            Datum::Text(s) | Datum::Json(s) => s.into_bytes(),
            Datum::Bytes(b) | Datum::Geometry(b) => b,
            Datum::Decimal { coefficient, .. } => coefficient,
            _ => Vec::new(),
        };
        out.clear();
        out
    }

    /// This datum's text, emptied (a new one when it holds no text); the datum is left NULL.
    fn take_string(&mut self) -> String {
        match std::mem::replace(self, Datum::Null) {
            Datum::Text(mut s) | Datum::Json(mut s) => {
                s.clear();
                s
            }
            _ => String::new(),
        }
    }

    /// [`Datum::take_buffer`] holding `bytes`.
    fn filled(&mut self, bytes: &[u8]) -> Vec<u8> {
        let mut out = self.take_buffer();
        out.extend_from_slice(bytes);
        out
    }
}

/// chrono's dates, date-times and durations as datums, and back (feature `chrono`).
///
/// ```
/// use chrono::{NaiveDate, TimeDelta};
/// use prollystore::datum::Datum;
/// let day = NaiveDate::from_ymd_opt(2024, 6, 1).unwrap();
/// let at = day.and_hms_micro_opt(12, 0, 0, 250).unwrap();
/// assert_eq!(Datum::try_from(day)?.to_string(), "2024-06-01");
/// assert_eq!(Datum::from(at).to_string(), "2024-06-01 12:00:00.000250");
/// assert_eq!(Datum::from(at).as_naive_datetime(), Some(at));
/// assert_eq!(Datum::try_from(TimeDelta::seconds(-90))?.as_time_delta(), Some(TimeDelta::seconds(-90)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "chrono")]
mod chrono_values {
    use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeDelta, Utc};
    use prollystore_format::tuple::{Date, YearOutOfRange};

    use super::Datum;

    /// A DATE datum (years `0..=9999`).
    impl TryFrom<NaiveDate> for Datum {
        type Error = YearOutOfRange;
        fn try_from(d: NaiveDate) -> Result<Datum, YearOutOfRange> {
            Date::try_from(d).map(Datum::Date)
        }
    }

    /// A DATETIME datum: the wall-clock time as UTC.
    impl From<NaiveDateTime> for Datum {
        fn from(t: NaiveDateTime) -> Datum {
            Datum::Datetime(t.and_utc().timestamp_micros())
        }
    }

    /// A DATETIME/TIMESTAMP datum of the instant.
    impl From<DateTime<Utc>> for Datum {
        fn from(t: DateTime<Utc>) -> Datum {
            Datum::Datetime(t.timestamp_micros())
        }
    }

    /// A TIME datum, refused when its microseconds overflow an `i64`.
    impl TryFrom<TimeDelta> for Datum {
        type Error = TimeDelta;
        fn try_from(t: TimeDelta) -> Result<Datum, TimeDelta> {
            t.num_microseconds().map(Datum::Time).ok_or(t)
        }
    }

    impl Datum {
        /// A DATE as a calendar date (`None` for other datums and for zero dates).
        pub fn as_naive_date(&self) -> Option<NaiveDate> {
            match self {
                Datum::Date(d) => d.to_naive_date(),
                _ => None,
            }
        }

        /// A DATETIME/TIMESTAMP as UTC wall-clock time (`None` for other datums).
        pub fn as_naive_datetime(&self) -> Option<NaiveDateTime> {
            match self {
                Datum::Datetime(us) => DateTime::from_timestamp_micros(*us).map(|t| t.naive_utc()),
                _ => None,
            }
        }

        /// A TIME as a duration (`None` for other datums).
        pub fn as_time_delta(&self) -> Option<TimeDelta> {
            match self {
                Datum::Time(us) => Some(TimeDelta::microseconds(*us)),
                _ => None,
            }
        }
    }
}

/// Stored `what` bytes as a `String`, refused when not UTF-8.
fn utf8(bytes: Vec<u8>, what: &str) -> Result<String, String> {
    String::from_utf8(bytes).map_err(|_| format!("stored {what} is not UTF-8"))
}

/// The value's text: integers and text as they are, floats as `dolt sql` prints them (Go's
/// shortest text, [`value_text`]; a value a FLOAT column can
/// hold exactly is printed as a FLOAT, since a datum does not say which of the two it came
/// from), decimals as the format crate prints them
/// (plain notation for a column's scale: `12.50`), dates, times and datetimes as the format
/// crate's Dolt text (`2024-06-01 12:00:00.000000`, UTC), bytes as lossy UTF-8, NULL as `NULL`.
impl fmt::Display for Datum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Datum::Null => f.write_str("NULL"),
            Datum::Int(v) => write!(f, "{v}"),
            Datum::Uint(v) => write!(f, "{v}"),
            Datum::Float(v) => {
                let mut text = Vec::with_capacity(24);
                #[allow(clippy::cast_possible_truncation)] // checked: the f32 widens back to `v`
                let narrow = *v as f32;
                if f64::from(narrow) == *v {
                    value_text::write_f32(&mut text, narrow);
                } else {
                    value_text::write_f64(&mut text, *v);
                }
                f.write_str(&String::from_utf8_lossy(&text))
            }
            Datum::Text(s) | Datum::Json(s) => f.write_str(s),
            Datum::Bytes(b) | Datum::Geometry(b) => f.write_str(&String::from_utf8_lossy(b)),
            Datum::Decimal {
                exponent,
                negative,
                coefficient,
            } => fmt::Display::fmt(&Decimal::finite(*exponent, *negative, coefficient), f),
            Datum::Date(d) => fmt::Display::fmt(d, f),
            Datum::Time(us) => f.write_str(&time_text(*us)),
            Datum::Datetime(us) => f.write_str(&datetime_text(*us)),
            Datum::Hash128(h) => h.iter().try_for_each(|b| write!(f, "{b:02x}")),
            Datum::Address(a) => write!(f, "{a}"),
            Datum::Cell(c) => c.iter().try_for_each(|b| write!(f, "{b:02x}")),
        }
    }
}

macro_rules! from_int {
    ($($t:ty => $variant:ident),*) => {$(
        impl From<$t> for Datum {
            fn from(v: $t) -> Datum {
                Datum::$variant(v.into())
            }
        }
    )*};
}
from_int!(i8 => Int, i16 => Int, i32 => Int, i64 => Int, u8 => Uint, u16 => Uint, u32 => Uint,
    u64 => Uint, f32 => Float, f64 => Float);

impl From<bool> for Datum {
    fn from(v: bool) -> Datum {
        Datum::Int(v.into())
    }
}

impl From<&str> for Datum {
    fn from(v: &str) -> Datum {
        Datum::Text(v.to_string())
    }
}

impl From<String> for Datum {
    fn from(v: String) -> Datum {
        Datum::Text(v)
    }
}

impl From<&String> for Datum {
    fn from(v: &String) -> Datum {
        Datum::Text(v.clone())
    }
}

impl From<&[u8]> for Datum {
    fn from(v: &[u8]) -> Datum {
        Datum::Bytes(v.to_vec())
    }
}

impl From<Vec<u8>> for Datum {
    fn from(v: Vec<u8>) -> Datum {
        Datum::Bytes(v)
    }
}

impl From<Date> for Datum {
    fn from(v: Date) -> Datum {
        Datum::Date(v)
    }
}

impl<T: Into<Datum>> From<Option<T>> for Datum {
    fn from(v: Option<T>) -> Datum {
        v.map_or(Datum::Null, Into::into)
    }
}

/// A JSON document, for `json` columns (written as Dolt normalizes it).
#[cfg(feature = "serde_json")]
impl From<serde_json::Value> for Datum {
    fn from(v: serde_json::Value) -> Datum {
        Datum::Json(v.to_string())
    }
}

/// A JSON document, for `json` columns.
#[cfg(feature = "serde_json")]
impl From<&serde_json::Value> for Datum {
    fn from(v: &serde_json::Value) -> Datum {
        Datum::Json(v.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_dolt_prints_them() {
        let text = |v: f64| Datum::Float(v).to_string();
        assert_eq!(text(0.1), "0.1");
        assert_eq!(text(f64::from(0.1f32)), "0.1"); // a FLOAT column's value
        assert_eq!(text(3.0), "3");
        assert_eq!(text(1e21), "1e+21");
        assert_eq!(text(-2.5e-5), "-2.5e-05");
        assert_eq!(text(123456789.125), "1.23456789125e+08");
    }

    #[test]
    fn text_of_temporal_and_decimal_values() {
        assert_eq!(Datum::Datetime(0).to_string(), "1970-01-01 00:00:00.000000");
        assert_eq!(
            Datum::Datetime(1_717_243_200_000_001).to_string(),
            "2024-06-01 12:00:00.000001"
        );
        assert_eq!(Datum::Time(-3_723_000_000).to_string(), "-01:02:03");
        assert_eq!(Datum::decimal(-3, 5).to_string(), "0.005");
        assert_eq!(Datum::decimal(-2, -1234).to_string(), "-12.34");
    }

    #[test]
    fn integers_are_range_checked() {
        assert!(Datum::Int(300).to_value(Encoding::Int8, None).is_err());
        assert_eq!(
            Datum::Int(-3).to_value(Encoding::Int16, None),
            Ok(Some(Value::Int16(-3)))
        );
        assert!(Datum::Int(-1).to_value(Encoding::Uint64, None).is_err());
        assert!(Datum::Float(0.1).to_value(Encoding::Float32, None).is_err());
        assert!(Datum::Text("x".into())
            .to_value(Encoding::Int64, None)
            .is_err());
    }
}
