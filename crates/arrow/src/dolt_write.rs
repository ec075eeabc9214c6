//! Record batches written into a Dolt table: each batch column goes to the table column of
//! its name, through the writer's streamed row path ([`DoltWriter::apply_fields`]). Text and
//! binary arrays hand over their bytes as they are; every other value is first written as the
//! text `dolt sql` prints for it ([`prollystore_format::value_text`]), so the one reader of
//! value text ([`prollystore_format::value_parse`]) checks and encodes every value, exactly as
//! for a CSV import: the same limits, the same rounding, the same errors.
//!
//! ```
//! use std::sync::Arc;
//! use arrow_array::{Int64Array, RecordBatch, StringArray};
//! use prollystore_arrow::dolt_write::write_batches;
//! use prollystore_dolt::write::{DoltWriter, RowMode};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # use prollystore_sql::FromSql;
//! # let tmp = tempfile::tempdir()?;
//! # let dir = prollystore_test_vectors::writable_copy("dolt-db/vecdb", tmp.path())?;
//! # let mut w = prollystore_sql::writer(&dir)?;
//! # w.create_table(&prollystore_dolt::write::TableDef::from_sql(
//! #     "CREATE TABLE people (id BIGINT PRIMARY KEY, name VARCHAR(20))")?)?;
//! # w.save(("Ada", "ada@example.com"), 1_704_067_200)?;
//! # drop(w);
//! let batch = RecordBatch::try_from_iter([
//!     ("id", Arc::new(Int64Array::from(vec![1, 2])) as _),
//!     ("name", Arc::new(StringArray::from(vec![Some("Ada"), None])) as _),
//! ])?;
//! let mut w = DoltWriter::open(&dir)?;
//! let rows = write_batches(&mut w, RowMode::Insert, "people", [batch])?;
//! assert_eq!(rows, 2);
//! w.save(("Ada", "ada@example.com"), 1_704_067_200)?;
//! # Ok(())
//! # }
//! ```

use std::borrow::Cow;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Date64Type, Decimal128Type, Decimal256Type, DurationMicrosecondType,
    DurationMillisecondType, DurationNanosecondType, DurationSecondType, Float32Type, Float64Type,
    Int16Type, Int32Type, Int64Type, Int8Type, Time32MillisecondType, Time32SecondType,
    Time64MicrosecondType, Time64NanosecondType, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType, UInt16Type, UInt32Type,
    UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType, RecordBatch};
use arrow_schema::{DataType, SchemaRef, TimeUnit};
use prollystore_dolt::schema::SqlType;
use prollystore_dolt::write::{DoltWriter, RowMode};
use prollystore_format::tuple::{civil_from_days, Date};
use prollystore_format::value_text;

use crate::error::{Error, Result};

/// Writes `batches` into `table` in `mode` (insert, update, upsert or delete, as
/// [`DoltWriter::apply_fields`] takes them) and returns the number of rows. Every batch has
/// the first one's schema; its fields name the table's columns (the other columns get their
/// defaults). Timestamps with a time zone are instants, written as their UTC time; a TIMESTAMP
/// column takes only those. All rows or none: a value the column cannot hold, a repeated key
/// or an Arrow type with no SQL counterpart (lists, structs, maps, intervals, half floats)
/// changes nothing.
pub fn write_batches(
    writer: &mut DoltWriter,
    mode: RowMode,
    table: &str,
    batches: impl IntoIterator<Item = RecordBatch>,
) -> Result<usize> {
    let batches: Vec<RecordBatch> = batches.into_iter().collect();
    let Some(schema) = batches.first().map(RecordBatch::schema) else {
        return Ok(0);
    };
    // A TIMESTAMP column holds UTC instants: a timestamp without a zone does not say which
    // instant it is (Python's naive datetimes are refused the same way).
    let columns = writer.columns(table)?;
    for field in schema.fields() {
        let column = columns
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(field.name()));
        if let (DataType::Timestamp(_, None), Some(c)) = (field.data_type(), column) {
            if matches!(c.sql_type, SqlType::Timestamp(_)) {
                return Err(Error::Mismatch(format!(
                    "column {:?} of table {table:?} is a TIMESTAMP (a UTC instant): give \
                     timestamps with a time zone, not {}",
                    c.name,
                    field.data_type()
                )));
            }
        }
    }
    let texts = batches
        .iter()
        .enumerate()
        .map(|(i, b)| BatchText::of(&schema, i, b))
        .collect::<Result<Vec<_>>>()?;
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    let rows = || {
        texts
            .iter()
            .flat_map(|t| (0..t.rows).map(move |r| t.columns.iter().map(|c| c.field(r)).collect()))
    };
    Ok(writer.apply_fields(mode, table, &names, rows)?)
}

/// A batch's columns as the writer's fields.
struct BatchText {
    rows: usize,
    columns: Vec<ColumnText>,
}

impl BatchText {
    /// Batch `at` of a write whose first batch has `schema`.
    fn of(schema: &SchemaRef, at: usize, batch: &RecordBatch) -> Result<BatchText> {
        if batch.schema().fields() != schema.fields() {
            return Err(Error::Mismatch(format!(
                "record batch {at}: its schema {} is not the first batch's {}",
                batch.schema(),
                schema
            )));
        }
        let columns = batch
            .columns()
            .iter()
            .zip(schema.fields())
            .map(|(array, field)| ColumnText::of(field.name(), array))
            .collect::<Result<_>>()?;
        Ok(BatchText {
            rows: batch.num_rows(),
            columns,
        })
    }
}

/// One column's fields: the array's own bytes, or its values written as text.
enum ColumnText {
    /// Text or binary values, handed over as they are.
    Bytes(ArrayRef),
    /// A dictionary of text or binary values: each row's key into `values`.
    Dictionary {
        keys: Vec<Option<usize>>,
        values: ArrayRef,
    },
    /// Other values, as text end to end (`ends[r]`: where row `r`'s text ends; NULL rows
    /// none).
    Text {
        text: Vec<u8>,
        ends: Vec<usize>,
        array: ArrayRef,
    },
    /// Arrow's null type: NULL in every row.
    Null,
}

impl ColumnText {
    fn of(name: &str, array: &ArrayRef) -> Result<ColumnText> {
        if is_bytes(array.data_type()) {
            return Ok(ColumnText::Bytes(array.clone()));
        }
        if let Some(dict) = array.as_any_dictionary_opt() {
            if !is_bytes(dict.values().data_type()) {
                return Err(unsupported(name, array.data_type()));
            }
            let keys = dict.normalized_keys();
            let keys = (0..array.len())
                .map(|r| array.is_valid(r).then(|| keys[r]))
                .collect();
            return Ok(ColumnText::Dictionary {
                keys,
                values: dict.values().clone(),
            });
        }
        if *array.data_type() == DataType::Null {
            return Ok(ColumnText::Null);
        }
        let mut text = Vec::with_capacity(array.len() * 8);
        let mut ends = Vec::with_capacity(array.len());
        for r in 0..array.len() {
            if array.is_valid(r) {
                write_value(name, array, r, &mut text)?;
            }
            ends.push(text.len());
        }
        Ok(ColumnText::Text {
            text,
            ends,
            array: array.clone(),
        })
    }

    /// Row `r`'s field (`None`: NULL).
    fn field(&self, r: usize) -> Option<Cow<'_, [u8]>> {
        match self {
            ColumnText::Bytes(array) => bytes_at(array.as_ref(), r).map(Cow::Borrowed),
            ColumnText::Dictionary { keys, values } => {
                bytes_at(values.as_ref(), (*keys.get(r)?)?).map(Cow::Borrowed)
            }
            ColumnText::Text { text, ends, array } => {
                if array.is_null(r) {
                    return None;
                }
                let start = r.checked_sub(1).map_or(0, |p| ends[p]);
                Some(Cow::Borrowed(&text[start..ends[r]]))
            }
            ColumnText::Null => None,
        }
    }
}

/// Whether values of type `t` are text or bytes handed over as they are.
fn is_bytes(t: &DataType) -> bool {
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
fn bytes_at(array: &dyn Array, r: usize) -> Option<&[u8]> {
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

fn unsupported(name: &str, t: &DataType) -> Error {
    Error::Mismatch(format!(
        "column {name:?}: Arrow type {t} has no SQL type to write it as"
    ))
}

/// Appends the text of non-NULL row `r` of `array` (a number, decimal, date, time or
/// timestamp) as `dolt sql` prints such a value.
fn write_value(name: &str, array: &ArrayRef, r: usize, out: &mut Vec<u8>) -> Result<()> {
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
            let raw = match unit {
                TimeUnit::Second => v::<TimestampSecondType>(array, r),
                TimeUnit::Millisecond => v::<TimestampMillisecondType>(array, r),
                TimeUnit::Microsecond => v::<TimestampMicrosecondType>(array, r),
                TimeUnit::Nanosecond => v::<TimestampNanosecondType>(array, r),
            };
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
