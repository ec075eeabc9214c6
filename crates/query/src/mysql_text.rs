//! A value's text where MySQL wants a string, as Dolt makes it: `CONCAT`, `CONCAT_WS`,
//! `CAST(x AS CHAR)`, `GROUP_CONCAT` and `LENGTH` (its bytes). DataFusion's casts to text write floats with
//! exponents (`1e20`), datetimes with a `T`, TIMEs as intervals and JSON without spaces, and
//! its `CONCAT` skips NULLs; MySQL's `CONCAT` is NULL when any part is.
//!
//! The text of each type: integers and decimals as written; FLOAT and DOUBLE as their
//! shortest digits without an exponent (Go's `FormatFloat(x, 'f', -1, …)`, which is Rust's
//! `Display`); a DATE as its midnight (`2010-03-26 00:00:00`, as Dolt converts it — MySQL
//! writes the date alone); DATETIME and TIMESTAMP with the fraction's trailing zeros dropped;
//! TIME with six fraction digits (`-29:47:09.000000`); JSON as MySQL prints it (`[1, 2]`,
//! `{"k": 1}`); booleans as `1`/`0`; an ENUM's member; text and bytes as they are.

use std::any::Any;
use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BinaryBuilder, GenericByteArray, StringArray,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::compute::kernels::length::length;
use datafusion::arrow::datatypes::{
    BinaryType, DataType, Date32Type, Decimal128Type, Decimal256Type, DurationMicrosecondType,
    Field, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, TimeUnit,
    TimestampMicrosecondType, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use datafusion::common::{exec_err, plan_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use prollystore_arrow::dolt_types::SQL_TYPE_METADATA;
use prollystore_dolt::schema::SqlType;
use prollystore_format::value_text;
use prollystore_sql::generated::json_text;

use crate::columnar::scalar_or_array;
use crate::mysql_json::is_json;

/// The name of the one-value text function `CAST(x AS CHAR)` and `GROUP_CONCAT` use.
pub(crate) const TEXT: &str = "dolt_text";

/// Registers `CONCAT`, `CONCAT_WS`, `LENGTH` (in place of DataFusion's) and [`TEXT`].
pub(crate) fn register(ctx: &datafusion::prelude::SessionContext) {
    for kind in [Kind::Concat, Kind::ConcatWs, Kind::Text, Kind::Length] {
        ctx.register_udf(ScalarUDF::new_from_impl(MySqlText {
            kind,
            signature: Signature::variadic_any(Volatility::Immutable),
        }));
    }
}

/// Which of the functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    /// `CONCAT(a, …)`: NULL if any part is.
    Concat,
    /// `CONCAT_WS(separator, a, …)`: NULL parts skipped; NULL if the separator is.
    ConcatWs,
    /// [`TEXT`]`(x)`: one value's text.
    Text,
    /// `LENGTH(x)`: the bytes of its text (of text and bytes as they are; DataFusion's
    /// refuses bytes and numbers).
    Length,
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct MySqlText {
    kind: Kind,
    signature: Signature,
}

fn is_binary(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Binary
            | DataType::LargeBinary
            | DataType::BinaryView
            | DataType::FixedSizeBinary(_)
    )
}

impl ScalarUDFImpl for MySqlText {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn name(&self) -> &str {
        match self.kind {
            Kind::Concat => "concat",
            Kind::ConcatWs => "concat_ws",
            Kind::Text => TEXT,
            Kind::Length => "length",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        let fewest = match self.kind {
            Kind::Concat | Kind::Text | Kind::Length => 1,
            Kind::ConcatWs => 2,
        };
        let one = matches!(self.kind, Kind::Text | Kind::Length);
        if args.len() < fewest || (one && args.len() > 1) {
            return plan_err!("{}() takes {fewest} or more values", self.name());
        }
        if self.kind == Kind::Length {
            return Ok(DataType::Int64);
        }
        // Bytes in, bytes out (a binary string, as in MySQL).
        Ok(if args.iter().any(is_binary) {
            DataType::Binary
        } else {
            DataType::Utf8
        })
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let n = args.number_rows;
        let scalar = args
            .args
            .iter()
            .all(|a| matches!(a, ColumnarValue::Scalar(_)));
        let rows = if scalar { 1 } else { n };
        if let (Kind::Length, [value], [field]) =
            (self.kind, args.args.as_slice(), args.arg_fields.as_slice())
        {
            // Text and bytes (not JSON, whose text is rewritten) are counted where they are.
            let json = is_json(field.metadata());
            let t = field.data_type();
            if !json && (is_binary(t) || matches!(t, DataType::Utf8 | DataType::LargeUtf8)) {
                let bytes = length(&value.to_array(rows)?)?;
                return scalar_or_array(cast(&bytes, &DataType::Int64)?, scalar);
            }
        }
        let mut parts = Vec::with_capacity(args.args.len());
        for (value, field) in args.args.iter().zip(&args.arg_fields) {
            parts.push(texts(&value.to_array(rows)?, field)?);
        }
        if self.kind == Kind::Length {
            let lengths: datafusion::arrow::array::Int64Array =
                parts[0].iter().map(|t| t.map(|t| t.len() as i64)).collect();
            return scalar_or_array(Arc::new(lengths), scalar);
        }
        let (separator, parts) = match (self.kind, parts.split_first()) {
            (Kind::ConcatWs, Some((separator, rest))) => (Some(separator), rest),
            (Kind::ConcatWs, None) => return exec_err!("concat_ws() takes a separator"),
            _ => (None, &parts[..]),
        };
        let mut out = BinaryBuilder::with_capacity(rows, rows * 16);
        let mut row = Vec::new();
        'rows: for r in 0..rows {
            row.clear();
            match separator {
                None => {
                    for p in parts {
                        if p.is_null(r) {
                            out.append_null();
                            continue 'rows;
                        }
                        row.extend_from_slice(p.value(r));
                    }
                }
                Some(sep) => {
                    if sep.is_null(r) {
                        out.append_null();
                        continue;
                    }
                    let mut first = true;
                    for p in parts.iter().filter(|p| !p.is_null(r)) {
                        if !first {
                            row.extend_from_slice(sep.value(r));
                        }
                        first = false;
                        row.extend_from_slice(p.value(r));
                    }
                }
            }
            out.append_value(&row);
        }
        let bytes = out.finish();
        let types: Vec<DataType> = args
            .arg_fields
            .iter()
            .map(|f| f.data_type().clone())
            .collect();
        let array: ArrayRef = if self.return_type(&types)? == DataType::Binary {
            Arc::new(bytes)
        } else {
            // Every part is text (UTF-8) or made here from numbers, dates and JSON.
            Arc::new(StringArray::try_from_binary(bytes)?)
        };
        scalar_or_array(array, scalar)
    }
}

/// The text of every value of `array` (of field `field`), NULLs kept.
fn texts(array: &ArrayRef, field: &Field) -> Result<GenericByteArray<BinaryType>> {
    let mut out = BinaryBuilder::with_capacity(array.len(), array.len() * 8);
    let mut buf = Vec::new();
    // Types written through another: timestamps and durations in microseconds, dictionaries
    // (ENUM), views and large strings as plain strings, DATE64 as a DATE.
    let through = match array.data_type() {
        DataType::Timestamp(_, _) => Some(DataType::Timestamp(TimeUnit::Microsecond, None)),
        DataType::Duration(_) => Some(DataType::Duration(TimeUnit::Microsecond)),
        DataType::Dictionary(..) | DataType::Utf8View | DataType::LargeUtf8 => Some(DataType::Utf8),
        DataType::Date64 => Some(DataType::Date32),
        DataType::LargeBinary | DataType::BinaryView | DataType::FixedSizeBinary(_) => {
            Some(DataType::Binary)
        }
        _ => None,
    };
    let array = match through {
        Some(t) => cast(array, &t)?,
        None => array.clone(),
    };
    let json = is_json(field.metadata());
    let double = field
        .metadata()
        .get(SQL_TYPE_METADATA)
        .is_some_and(|t| matches!(SqlType::parse(t), SqlType::Double));
    // A NULL literal's array keeps no null bits: every value of it is NULL.
    let all_null = array.data_type() == &DataType::Null;
    for r in 0..array.len() {
        if all_null || array.is_null(r) {
            out.append_null();
            continue;
        }
        buf.clear();
        write_text(&array, r, json, double, &mut buf)?;
        out.append_value(&buf);
    }
    Ok(out.finish())
}

/// Appends the text of non-NULL row `r` of `array` (module docs). `json`: text that is a
/// JSON document; `double`: a decimal Dolt types as a DOUBLE.
fn write_text(
    array: &ArrayRef,
    r: usize,
    json: bool,
    double: bool,
    out: &mut Vec<u8>,
) -> Result<()> {
    use std::io::Write as _;
    macro_rules! number {
        ($t:ty) => {{
            let _ = write!(out, "{}", array.as_primitive::<$t>().value(r));
        }};
    }
    match array.data_type() {
        DataType::Utf8 => {
            let s = array.as_string::<i32>().value(r);
            match json.then(|| serde_json::from_str::<serde_json::Value>(s)) {
                Some(Ok(doc)) => out.extend_from_slice(json_text(&doc).as_bytes()),
                _ => out.extend_from_slice(s.as_bytes()),
            }
        }
        DataType::Binary => out.extend_from_slice(array.as_binary::<i32>().value(r)),
        DataType::Boolean => out.push(if array.as_boolean().value(r) {
            b'1'
        } else {
            b'0'
        }),
        DataType::Int8 => number!(Int8Type),
        DataType::Int16 => number!(Int16Type),
        DataType::Int32 => number!(Int32Type),
        DataType::Int64 => number!(Int64Type),
        DataType::UInt8 => number!(UInt8Type),
        DataType::UInt16 => number!(UInt16Type),
        DataType::UInt32 => number!(UInt32Type),
        DataType::UInt64 => number!(UInt64Type),
        DataType::Float32 => {
            let v = array.as_primitive::<Float32Type>().value(r);
            write_float(out, f64::from(v), || v.to_string());
        }
        DataType::Float64 => {
            let v = array.as_primitive::<Float64Type>().value(r);
            write_float(out, v, || v.to_string());
        }
        DataType::Decimal128(..) | DataType::Decimal256(..) => {
            let text = match array.data_type() {
                DataType::Decimal128(..) => {
                    array.as_primitive::<Decimal128Type>().value_as_string(r)
                }
                _ => array.as_primitive::<Decimal256Type>().value_as_string(r),
            };
            match double.then(|| text.parse::<f64>()) {
                Some(Ok(v)) => write_float(out, v, || v.to_string()),
                _ => out.extend_from_slice(text.as_bytes()),
            }
        }
        DataType::Date32 => {
            let days = i64::from(array.as_primitive::<Date32Type>().value(r));
            value_text::write_datetime(out, days.saturating_mul(MICROS_PER_DAY), 0);
        }
        DataType::Timestamp(TimeUnit::Microsecond, _) => {
            let us = array.as_primitive::<TimestampMicrosecondType>().value(r);
            let start = out.len();
            value_text::write_datetime(out, us, 6);
            // Go's layout `.999999`: the fraction's trailing zeros, and a bare point, dropped.
            if let Some(dot) = out[start..].iter().rposition(|&b| b == b'.') {
                let point = start + dot;
                while out.len() > point + 1 && out.last() == Some(&b'0') {
                    out.pop();
                }
                if out.len() == point + 1 {
                    out.pop();
                }
            }
        }
        DataType::Duration(TimeUnit::Microsecond) => {
            let us = array.as_primitive::<DurationMicrosecondType>().value(r);
            value_text::write_time(out, us);
        }
        other => return exec_err!("no MySQL text for a value of type {other}"),
    }
    Ok(())
}

/// Microseconds in a day.
const MICROS_PER_DAY: i64 = 86_400_000_000;

/// A float's text: `shortest` (its shortest digits, no exponent), and `0` for minus zero, as
/// Go writes it.
fn write_float(out: &mut Vec<u8>, v: f64, shortest: impl Fn() -> String) {
    if v == 0.0 {
        out.push(b'0');
    } else {
        out.extend_from_slice(shortest().as_bytes());
    }
}
