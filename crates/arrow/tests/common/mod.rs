//! Test support: Arrow cells read back as Dolt's typed values, so batches compare with what the
//! row decoder (itself checked against Dolt's CSV) gives.

#![allow(dead_code)]

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use prollystore_dolt::schema::{Column, SqlType};
use prollystore_dolt::{Row, SqlValue, Table};

/// What a row looks like after the documented losses of the Arrow mapping: a date with a zero
/// month or day has no calendar day (NULL), geometry loses its SRID prefix (WKB alone), an
/// ENUM index outside the member list is NULL.
pub fn as_arrow_sees(row: &Row, columns: &[&Column]) -> Row {
    row.iter()
        .zip(columns)
        .map(|(v, c)| match (v, &c.sql_type) {
            (Some(SqlValue::Date(d)), _) if d.month == 0 || d.day == 0 => None,
            (Some(SqlValue::Bytes(b)), SqlType::Geometry { .. }) => {
                Some(SqlValue::Bytes(b.get(4..).unwrap_or(&[]).to_vec()))
            }
            (Some(SqlValue::Enum(i, _)), SqlType::Enum { members: m, .. })
                if *i == 0 || usize::from(*i) > m.len() =>
            {
                None
            }
            (Some(SqlValue::Set(_, s)), _) => Some(SqlValue::Set(0, s.clone())),
            (v, _) => v.clone(),
        })
        .collect()
}

fn decimal_text(digits: String, scale: usize) -> String {
    let (neg, d) = match digits.strip_prefix('-') {
        Some(d) => (true, d.to_string()),
        None => (false, digits),
    };
    let d = format!("{d:0>width$}", width = scale + 1);
    let (i, f) = d.split_at(d.len() - scale);
    let sign = if neg { "-" } else { "" };
    if scale == 0 {
        format!("{sign}{i}")
    } else {
        format!("{sign}{i}.{f}")
    }
}

/// Cell `row` of `array`, a column of Dolt type `col`, as the typed value Dolt shows.
pub fn cell(array: &dyn Array, row: usize, col: &Column) -> Option<SqlValue> {
    if array.is_null(row) {
        return None;
    }
    let v = match (array.data_type(), &col.sql_type) {
        (DataType::Int8, _) => SqlValue::Int(array.as_primitive::<Int8Type>().value(row).into()),
        (DataType::Int16, _) => SqlValue::Int(array.as_primitive::<Int16Type>().value(row).into()),
        (DataType::Int32, _) => SqlValue::Int(array.as_primitive::<Int32Type>().value(row).into()),
        (DataType::Int64, _) => SqlValue::Int(array.as_primitive::<Int64Type>().value(row)),
        (DataType::UInt8, _) => SqlValue::Uint(array.as_primitive::<UInt8Type>().value(row).into()),
        (DataType::UInt16, SqlType::Year) => {
            SqlValue::Year(array.as_primitive::<UInt16Type>().value(row))
        }
        (DataType::UInt16, _) => {
            SqlValue::Uint(array.as_primitive::<UInt16Type>().value(row).into())
        }
        (DataType::UInt32, _) => {
            SqlValue::Uint(array.as_primitive::<UInt32Type>().value(row).into())
        }
        (DataType::UInt64, _) => SqlValue::Uint(array.as_primitive::<UInt64Type>().value(row)),
        (DataType::Float32, _) => SqlValue::Float(array.as_primitive::<Float32Type>().value(row)),
        (DataType::Float64, _) => SqlValue::Double(array.as_primitive::<Float64Type>().value(row)),
        (DataType::Decimal128(_, s), _) => SqlValue::Decimal(decimal_text(
            array
                .as_primitive::<Decimal128Type>()
                .value(row)
                .to_string(),
            *s as usize,
        )),
        (DataType::Decimal256(_, s), _) => SqlValue::Decimal(decimal_text(
            array
                .as_primitive::<Decimal256Type>()
                .value(row)
                .to_string(),
            *s as usize,
        )),
        (DataType::Date32, _) => SqlValue::Date(
            prollystore_arrow::date_from_days(array.as_primitive::<Date32Type>().value(row).into())
                .unwrap(),
        ),
        (DataType::Duration(_), _) => {
            SqlValue::Time(array.as_primitive::<DurationMicrosecondType>().value(row))
        }
        (DataType::Timestamp(..), SqlType::Datetime(f) | SqlType::Timestamp(f)) => {
            SqlValue::Datetime(
                array.as_primitive::<TimestampMicrosecondType>().value(row),
                *f,
            )
        }
        (DataType::Timestamp(..), _) => SqlValue::Datetime(
            array.as_primitive::<TimestampMicrosecondType>().value(row),
            6,
        ),
        (DataType::Dictionary(..), _) => {
            let d = array.as_dictionary::<UInt16Type>();
            let k = d.keys().value(row);
            let name = d
                .values()
                .as_string::<i32>()
                .value(usize::from(k))
                .to_string();
            SqlValue::Enum(k + 1, name)
        }
        (DataType::Utf8, SqlType::Json) => {
            SqlValue::Json(array.as_string::<i32>().value(row).to_string())
        }
        (DataType::Utf8, SqlType::Set { .. }) => {
            SqlValue::Set(0, array.as_string::<i32>().value(row).to_string())
        }
        (DataType::Utf8, _) => SqlValue::Text(array.as_string::<i32>().value(row).to_string()),
        (DataType::Binary, _) => SqlValue::Bytes(array.as_binary::<i32>().value(row).to_vec()),
        (other, _) => panic!("column {}: unexpected Arrow type {other}", col.name),
    };
    Some(v)
}

/// The rows of a batch as typed values, `columns` giving each column's Dolt type.
pub fn batch_rows(batch: &RecordBatch, columns: &[&Column]) -> Vec<Row> {
    (0..batch.num_rows())
        .map(|r| {
            batch
                .columns()
                .iter()
                .zip(columns)
                .map(|(a, c)| cell(a.as_ref(), r, c))
                .collect()
        })
        .collect()
}

/// The visible columns of a table, in row order.
pub fn columns(t: &Table) -> Vec<&Column> {
    let s = &t.schema;
    s.visible_columns()
        .into_iter()
        .map(|i| &s.columns[i])
        .collect()
}
