//! The text of one Arrow value: as a write into Dolt reads it (the same text `dolt sql`
//! prints, so the one value parser checks it), and as `dolt sql` shows a query's result
//! ([`write_cell`]: a column's DATETIME precision from its field's SQL type, FLOAT as a
//! 32-bit float, booleans as `true`/`false`).

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Date64Type, Decimal128Type, Decimal256Type, DurationMicrosecondType,
    DurationMillisecondType, DurationNanosecondType, DurationSecondType, Float32Type, Float64Type,
    Int16Type, Int32Type, Int64Type, Int8Type, Time32MillisecondType, Time32SecondType,
    Time64MicrosecondType, Time64NanosecondType, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType, UInt16Type, UInt32Type,
    UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType};
use arrow_schema::{DataType, Field, TimeUnit};
use prollystore_dolt::schema::SqlType;
use prollystore_format::tuple::{civil_from_days, Date};
use prollystore_format::value_text;

use crate::dolt_types::{GEOMETRY_BYTES_METADATA, SQL_TYPE_METADATA};
use crate::error::{Error, Result};

/// Appends the text `dolt sql` shows for non-NULL row `r` of `array`, a column of a query's
/// result with field `field`: text and bytes as they are (a geometry with its SRID before its
/// WKB, as Dolt stores it), an ENUM's member, numbers, decimals,
/// dates and times as Dolt prints them (a DATETIME or TIMESTAMP with the fraction digits its
/// field's SQL type gives, six without one; a decimal whose field's SQL type is DOUBLE as that
/// double), booleans as `true` / `false`. Lists, structs,
/// maps and intervals have no Dolt text and are refused.
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{ArrayRef, Float32Array};
/// use arrow_schema::{DataType, Field};
/// use prollystore_arrow::cell_text::write_cell;
///
/// let floats: ArrayRef = Arc::new(Float32Array::from(vec![0.1]));
/// let mut out = Vec::new();
/// write_cell(&Field::new("f", DataType::Float32, true), &floats, 0, &mut out).unwrap();
/// assert_eq!(out, b"0.1");
/// ```
pub fn write_cell(field: &Field, array: &ArrayRef, r: usize, out: &mut Vec<u8>) -> Result<()> {
    let sql_type = || {
        field
            .metadata()
            .get(SQL_TYPE_METADATA)
            .map(|t| SqlType::parse(t))
    };
    if let Some(b) = bytes_at(array.as_ref(), r) {
        // Dolt shows a geometry as stored: its SRID (four bytes, little endian), then the
        // WKB. Read as WKB, the SRID is gone: the column's declared one, else 0, is shown.
        let stored = field
            .metadata()
            .get(GEOMETRY_BYTES_METADATA)
            .map(String::as_str);
        if let (Some(SqlType::Geometry { srid, .. }), None) = (sql_type(), stored) {
            out.extend_from_slice(&srid.unwrap_or(0).to_le_bytes());
        }
        out.extend_from_slice(b);
        return Ok(());
    }
    // An ENUM column (UInt16 keys, as `arrow_type` gives it): the one key, not every row's.
    if let Some(dict) = array.as_dictionary_opt::<UInt16Type>() {
        let key = usize::from(dict.keys().value(r));
        return write_cell(field, dict.values(), key, out);
    }
    if let Some(dict) = array.as_any_dictionary_opt() {
        let key = dict.normalized_keys()[r];
        return write_cell(field, dict.values(), key, out);
    }
    match array.data_type() {
        DataType::Boolean => {
            let v = array.as_boolean().value(r);
            out.extend_from_slice(if v { b"true" } else { b"false" });
        }
        DataType::Float32 => {
            value_text::write_f32(out, array.as_primitive::<Float32Type>().value(r))
        }
        DataType::Decimal128(..) | DataType::Decimal256(..)
            if matches!(sql_type(), Some(SqlType::Double)) =>
        {
            // A decimal Dolt types as a DOUBLE (a SUM or AVG of decimals): the double
            // nearest it, as Dolt shows it.
            let start = out.len();
            write_value(field.name(), array, r, out)?;
            let v = std::str::from_utf8(&out[start..])
                .ok()
                .and_then(|t| t.parse::<f64>().ok())
                .ok_or_else(|| {
                    Error::Mismatch(format!(
                        "column {:?}, row {}: the decimal has no double",
                        field.name(),
                        r + 1
                    ))
                })?;
            out.truncate(start);
            value_text::write_f64(out, v);
        }
        DataType::Timestamp(unit, _) => {
            let fsp = match sql_type() {
                Some(SqlType::Datetime(f) | SqlType::Timestamp(f)) => f,
                _ => 6,
            };
            let raw = timestamp_raw(array, *unit, r);
            let (us, _) = micros(raw, *unit, true).ok_or_else(|| out_of_range(field.name(), r))?;
            value_text::write_datetime(out, us, fsp);
        }
        _ => write_value(field.name(), array, r, out)?,
    }
    Ok(())
}

fn timestamp_raw(array: &ArrayRef, unit: TimeUnit, r: usize) -> i64 {
    match unit {
        TimeUnit::Second => array.as_primitive::<TimestampSecondType>().value(r),
        TimeUnit::Millisecond => array.as_primitive::<TimestampMillisecondType>().value(r),
        TimeUnit::Microsecond => array.as_primitive::<TimestampMicrosecondType>().value(r),
        TimeUnit::Nanosecond => array.as_primitive::<TimestampNanosecondType>().value(r),
    }
}

/// Whether values of type `t` are text or bytes handed over as they are.
pub(crate) fn is_bytes(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Utf8View
            | DataType::Binary
            | DataType::LargeBinary
            | DataType::BinaryView
            | DataType::FixedSizeBinary(_)
    )
}

/// The bytes of row `r` of a text or binary array (`None`: NULL, past the end, or another
/// type).
pub(crate) fn bytes_at(array: &dyn Array, r: usize) -> Option<&[u8]> {
    if r >= array.len() || array.is_null(r) {
        return None;
    }
    Some(match array.data_type() {
        DataType::Utf8 => array.as_string::<i32>().value(r).as_bytes(),
        DataType::LargeUtf8 => array.as_string::<i64>().value(r).as_bytes(),
        DataType::Utf8View => array.as_string_view().value(r).as_bytes(),
        DataType::Binary => array.as_binary::<i32>().value(r),
        DataType::LargeBinary => array.as_binary::<i64>().value(r),
        DataType::BinaryView => array.as_binary_view().value(r),
        DataType::FixedSizeBinary(_) => array.as_fixed_size_binary().value(r),
        _ => return None,
    })
}

/// An Arrow type with no SQL counterpart (lists, structs, maps, intervals, half floats).
pub(crate) fn unsupported(name: &str, t: &DataType) -> Error {
    Error::Mismatch(format!(
        "column {name:?}: Arrow type {t} has no SQL type to write it as"
    ))
}

/// Appends the text of non-NULL row `r` of `array` (a number, decimal, date, time or
/// timestamp) as `dolt sql` prints such a value.
pub(crate) fn write_value(name: &str, array: &ArrayRef, r: usize, out: &mut Vec<u8>) -> Result<()> {
    fn v<T: ArrowPrimitiveType>(a: &ArrayRef, r: usize) -> T::Native {
        a.as_primitive::<T>().value(r)
    }
    match array.data_type() {
        DataType::Boolean => out.push(if array.as_boolean().value(r) {
            b'1'
        } else {
            b'0'
        }),
        DataType::Int8 => value_text::write_i64(out, v::<Int8Type>(array, r).into()),
        DataType::Int16 => value_text::write_i64(out, v::<Int16Type>(array, r).into()),
        DataType::Int32 => value_text::write_i64(out, v::<Int32Type>(array, r).into()),
        DataType::Int64 => value_text::write_i64(out, v::<Int64Type>(array, r)),
        DataType::UInt8 => value_text::write_u64(out, v::<UInt8Type>(array, r).into()),
        DataType::UInt16 => value_text::write_u64(out, v::<UInt16Type>(array, r).into()),
        DataType::UInt32 => value_text::write_u64(out, v::<UInt32Type>(array, r).into()),
        DataType::UInt64 => value_text::write_u64(out, v::<UInt64Type>(array, r)),
        // Widened exactly: its text reads back as the same number into a DOUBLE column, and
        // rounds back to it in a FLOAT one.
        DataType::Float32 => value_text::write_f64(out, f64::from(v::<Float32Type>(array, r))),
        DataType::Float64 => value_text::write_f64(out, v::<Float64Type>(array, r)),
        &DataType::Decimal128(_, scale) => {
            let c = v::<Decimal128Type>(array, r);
            write_scaled(out, c < 0, &c.unsigned_abs().to_string(), scale);
        }
        &DataType::Decimal256(_, scale) => {
            let c = v::<Decimal256Type>(array, r).to_string();
            let (negative, digits) = match c.strip_prefix('-') {
                Some(d) => (true, d),
                None => (false, c.as_str()),
            };
            write_scaled(out, negative, digits, scale);
        }
        DataType::Date32 => write_days(name, out, v::<Date32Type>(array, r).into())?,
        DataType::Date64 => {
            write_days(name, out, v::<Date64Type>(array, r).div_euclid(86_400_000))?
        }
        DataType::Time32(TimeUnit::Second) => {
            value_text::write_time(out, i64::from(v::<Time32SecondType>(array, r)) * 1_000_000)
        }
        DataType::Time32(_) => {
            value_text::write_time(out, i64::from(v::<Time32MillisecondType>(array, r)) * 1_000)
        }
        DataType::Time64(TimeUnit::Microsecond) => {
            value_text::write_time(out, v::<Time64MicrosecondType>(array, r))
        }
        DataType::Time64(_) => {
            let ns = v::<Time64NanosecondType>(array, r);
            value_text::write_time(out, ns / 1_000);
            write_nanos(out, Some((ns % 1_000).unsigned_abs()));
        }
        DataType::Duration(unit) => {
            let raw = match unit {
                TimeUnit::Second => v::<DurationSecondType>(array, r),
                TimeUnit::Millisecond => v::<DurationMillisecondType>(array, r),
                TimeUnit::Microsecond => v::<DurationMicrosecondType>(array, r),
                TimeUnit::Nanosecond => v::<DurationNanosecondType>(array, r),
            };
            // Toward zero: the text's sign applies to the whole duration.
            let (us, ns) = micros(raw, *unit, false).ok_or_else(|| out_of_range(name, r))?;
            value_text::write_time(out, us);
            write_nanos(out, ns);
        }
        DataType::Timestamp(unit, _) => {
            let raw = timestamp_raw(array, *unit, r);
            // The microsecond at or before the instant, and the nanoseconds after it.
            let (us, ns) = micros(raw, *unit, true).ok_or_else(|| out_of_range(name, r))?;
            value_text::write_datetime(out, us, 6);
            write_nanos(out, ns);
        }
        other => return Err(unsupported(name, other)),
    }
    Ok(())
}

/// A count of `unit`s as whole microseconds and the nanoseconds past them (`None` for a
/// unit coarser than nanoseconds), split toward negative infinity (`floor`) or toward zero;
/// `None` when the microseconds overflow.
fn micros(raw: i64, unit: TimeUnit, floor: bool) -> Option<(i64, Option<u64>)> {
    Some(match unit {
        TimeUnit::Second => (raw.checked_mul(1_000_000)?, None),
        TimeUnit::Millisecond => (raw.checked_mul(1_000)?, None),
        TimeUnit::Microsecond => (raw, None),
        TimeUnit::Nanosecond if floor => (
            raw.div_euclid(1_000),
            Some(raw.rem_euclid(1_000).unsigned_abs()),
        ),
        TimeUnit::Nanosecond => (raw / 1_000, Some((raw % 1_000).unsigned_abs())),
    })
}

/// Appends `ns` (below 1,000), unless none or zero, as the three fraction digits after a
/// text's six: the reader of value text rounds a datetime's as the column's precision says,
/// and refuses a time's (Dolt rounds those by their last digit alone).
fn write_nanos(out: &mut Vec<u8>, ns: Option<u64>) {
    if let Some(ns @ 1..) = ns {
        out.extend_from_slice(format!("{ns:03}").as_bytes());
    }
}

/// Appends a decimal of coefficient `digits` (and sign) with `scale` fraction digits (a
/// negative scale multiplies by a power of ten).
fn write_scaled(out: &mut Vec<u8>, negative: bool, digits: &str, scale: i8) {
    if negative {
        out.push(b'-');
    }
    if scale <= 0 {
        out.extend_from_slice(digits.as_bytes());
        out.extend(std::iter::repeat_n(b'0', usize::from(scale.unsigned_abs())));
        return;
    }
    let scale = usize::from(scale.unsigned_abs());
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    out.extend_from_slice(int.as_bytes());
    out.push(b'.');
    out.extend_from_slice(frac.as_bytes());
}

/// Appends the date `days` after 1970-01-01.
fn write_days(name: &str, out: &mut Vec<u8>, days: i64) -> Result<()> {
    let (y, m, d) = civil_from_days(days);
    let year = u16::try_from(y)
        .ok()
        .filter(|y| *y <= 9999)
        .ok_or_else(|| {
            Error::Mismatch(format!(
                "column {name:?}: the date {days} days after 1970-01-01 is outside years 0 to 9999"
            ))
        })?;
    value_text::write_date(
        out,
        Date {
            year,
            month: m as u8,
            day: d as u8,
        },
    );
    Ok(())
}

fn out_of_range(name: &str, r: usize) -> Error {
    Error::Mismatch(format!(
        "column {name:?}, row {}: the time is out of range",
        r + 1
    ))
}
