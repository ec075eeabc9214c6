//! A SQL value as Dolt shows it ([`SqlValue`]), its text as `dolt sql` prints it, and the order
//! of whole rows that `ORDER BY` all columns gives.
//!
//! # NULL
//!
//! NULL has one representation across the crate: `None`. Rows hold `Option<SqlValue>` (a
//! [`crate::Row`]), the writer takes rows of `Option<SqlValue>`, and key bounds and lookups
//! ([`crate::KeyRange`], [`crate::TableReader::get`]) take `Option<SqlValue>` too, where
//! `None` is the NULL key that sorts before every value, as in Dolt's indexes. A [`SqlValue`]
//! is always a value, so its text, order and encoding never have a NULL case, and the type of
//! a slot says whether it can be NULL. Lookups also accept plain `SqlValue`s ([`Nullable`]),
//! so keys without NULLs need no `Some(…)`.

use std::cmp::Ordering;

use prollystore_format::json_order;
use prollystore_format::tuple::Date;
use prollystore_format::Collation;

use crate::value_text;

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
    ///
    /// ```
    /// use prollystore_dolt::SqlValue;
    /// assert_eq!(SqlValue::Double(0.1).to_text(), "0.1");
    /// assert_eq!(SqlValue::from("ab").to_string(), "ab");
    /// ```
    pub fn to_text(&self) -> String {
        let mut out = Vec::new();
        self.csv_bytes(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    /// The text `dolt sql -r csv` writes for this value (before CSV quoting).
    pub fn csv_bytes(&self, out: &mut Vec<u8>) {
        match self {
            SqlValue::Int(v) => value_text::write_i64(out, *v),
            SqlValue::Uint(v) => value_text::write_u64(out, *v),
            SqlValue::Float(v) => value_text::write_f32(out, *v),
            SqlValue::Double(v) => value_text::write_f64(out, *v),
            SqlValue::Decimal(s) | SqlValue::Text(s) | SqlValue::Json(s) => {
                out.extend_from_slice(s.as_bytes())
            }
            SqlValue::Enum(_, s) | SqlValue::Set(_, s) => out.extend_from_slice(s.as_bytes()),
            SqlValue::Year(y) => value_text::write_u64(out, u64::from(*y)),
            SqlValue::Date(d) => value_text::write_date(out, *d),
            SqlValue::Time(us) => value_text::write_time(out, *us),
            SqlValue::Datetime(us, fsp) => value_text::write_datetime(out, *us, *fsp),
            SqlValue::Bytes(b) => out.extend_from_slice(b),
        }
    }
}

/// A key value that may be NULL, as lookups and bounds take it: a [`SqlValue`] (never NULL) or
/// an `Option<SqlValue>` (`None` is NULL; see the module's notes on NULL).
pub trait Nullable {
    /// The value, or `None` for NULL.
    fn as_value(&self) -> Option<&SqlValue>;
}

impl Nullable for SqlValue {
    fn as_value(&self) -> Option<&SqlValue> {
        Some(self)
    }
}

impl Nullable for Option<SqlValue> {
    fn as_value(&self) -> Option<&SqlValue> {
        self.as_ref()
    }
}

impl<T: Nullable + ?Sized> Nullable for &T {
    fn as_value(&self) -> Option<&SqlValue> {
        (**self).as_value()
    }
}

macro_rules! from_primitive {
    ($($t:ty => $v:ident as $as:ty),* $(,)?) => {$(
        #[doc = concat!("`", stringify!($t), "` as [`SqlValue::", stringify!($v), "`].")]
        impl From<$t> for SqlValue {
            fn from(x: $t) -> SqlValue {
                SqlValue::$v(<$as>::from(x))
            }
        }
    )*};
}

from_primitive! {
    i8 => Int as i64, i16 => Int as i64, i32 => Int as i64, i64 => Int as i64,
    u8 => Uint as u64, u16 => Uint as u64, u32 => Uint as u64, u64 => Uint as u64,
    f32 => Float as f32, f64 => Double as f64, bool => Int as i64,
    String => Text as String, &str => Text as String, Vec<u8> => Bytes as Vec<u8>,
    &[u8] => Bytes as Vec<u8>,
}

/// The value as `dolt sql` prints it (as [`SqlValue::to_text`]).
impl std::fmt::Display for SqlValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_text())
    }
}

/// chrono's dates, date-times and durations as values, and back (feature `chrono`).
///
/// ```
/// use chrono::{NaiveDate, TimeDelta};
/// use prollystore_dolt::SqlValue;
/// let day = NaiveDate::from_ymd_opt(2024, 6, 1).unwrap();
/// let at = day.and_hms_micro_opt(12, 0, 0, 250).unwrap();
/// assert_eq!(SqlValue::try_from(day)?.to_text(), "2024-06-01");
/// assert_eq!(SqlValue::from(at).to_text(), "2024-06-01 12:00:00.000250");
/// assert_eq!(SqlValue::from(at).as_naive_datetime(), Some(at));
/// assert_eq!(SqlValue::try_from(TimeDelta::seconds(-90))?.to_text(), "-00:01:30");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "chrono")]
mod chrono_values {
    use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeDelta, Utc};
    use prollystore_format::tuple::{Date, YearOutOfRange};

    use super::SqlValue;

    /// A DATE (years `0..=9999`).
    impl TryFrom<NaiveDate> for SqlValue {
        type Error = YearOutOfRange;
        fn try_from(d: NaiveDate) -> Result<SqlValue, YearOutOfRange> {
            Date::try_from(d).map(SqlValue::Date)
        }
    }

    /// A DATETIME(6): the wall-clock time as UTC.
    impl From<NaiveDateTime> for SqlValue {
        fn from(t: NaiveDateTime) -> SqlValue {
            SqlValue::Datetime(t.and_utc().timestamp_micros(), 6)
        }
    }

    /// A DATETIME(6)/TIMESTAMP(6) of the instant.
    impl From<DateTime<Utc>> for SqlValue {
        fn from(t: DateTime<Utc>) -> SqlValue {
            SqlValue::Datetime(t.timestamp_micros(), 6)
        }
    }

    /// A TIME, refused when its microseconds overflow an `i64`.
    impl TryFrom<TimeDelta> for SqlValue {
        type Error = TimeDelta;
        fn try_from(t: TimeDelta) -> Result<SqlValue, TimeDelta> {
            t.num_microseconds().map(SqlValue::Time).ok_or(t)
        }
    }

    impl SqlValue {
        /// A DATE as a calendar date (`None` for other values and for zero dates).
        pub fn as_naive_date(&self) -> Option<NaiveDate> {
            match self {
                SqlValue::Date(d) => d.to_naive_date(),
                _ => None,
            }
        }

        /// A DATETIME/TIMESTAMP as UTC wall-clock time (`None` for other values).
        pub fn as_naive_datetime(&self) -> Option<NaiveDateTime> {
            match self {
                SqlValue::Datetime(us, _) => {
                    DateTime::from_timestamp_micros(*us).map(|t| t.naive_utc())
                }
                _ => None,
            }
        }

        /// A TIME as a duration (`None` for other values).
        pub fn as_time_delta(&self) -> Option<TimeDelta> {
            match self {
                SqlValue::Time(us) => Some(TimeDelta::microseconds(*us)),
                _ => None,
            }
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
pub fn write_decimal(out: &mut Vec<u8>, d: &prollystore_format::tuple::Decimal<'_>, scale: u8) {
    match d.coefficient_u128() {
        Some(c) => value_text::write_decimal_u128(out, d.is_negative(), c, d.exponent(), scale),
        None => value_text::write_decimal_digits(
            out,
            d.is_negative(),
            d.coefficient_digits().as_bytes(),
            d.exponent(),
            scale,
        ),
    }
}

/// Orders rows as Dolt's `ORDER BY` all columns does (NULLs first); used for keyless tables,
/// whose stored order is by row hash, and for the keys of an `IN` list. `collations[i]` is
/// the collation of text column `i` (`None`, or past the end: byte order); JSON values follow
/// Dolt's JSON order.
pub fn compare_rows(
    a: &[Option<SqlValue>],
    b: &[Option<SqlValue>],
    collations: &[Option<Collation>],
) -> Ordering {
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        let o = match (x, y) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(x), Some(y)) => compare_values(x, y, collations.get(i).copied().flatten()),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

fn compare_values(x: &SqlValue, y: &SqlValue, collation: Option<Collation>) -> Ordering {
    use SqlValue as V;
    match (x, y) {
        (V::Text(a), V::Text(b)) => match collation {
            Some(c) => c.compare(a.as_bytes(), b.as_bytes()),
            None => a.as_bytes().cmp(b.as_bytes()),
        },
        (V::Json(a), V::Json(b)) => json_order::compare(a.as_bytes(), b.as_bytes()),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_text() {
        assert_eq!(SqlValue::Double(-660.642578125).to_text(), "-660.642578125");
        assert_eq!(SqlValue::Float(0.1).to_text(), "0.1");
        assert_eq!(SqlValue::Time(-1).to_text(), "-00:00:00.000001");
        assert_eq!(SqlValue::Datetime(0, 0).to_text(), "1970-01-01 00:00:00");
        assert_eq!(SqlValue::Date(Date::from_raw(0)).to_string(), "0000-00-00");
        assert_eq!(
            SqlValue::Datetime(-59_011_459_200_877_000, 3).to_string(),
            "99-12-31 23:59:59.123"
        );
        let coeff = 6_033_988_078u64.to_be_bytes();
        let d = prollystore_format::tuple::Decimal::finite(-4, true, &coeff);
        assert_eq!(decimal_text(&d, 4), "-603398.8078");
    }
}
