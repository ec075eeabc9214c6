//! Column builders: one Arrow builder per output column, filled a value at a time (from Dolt's
//! typed [`SqlValue`]s, from raw tuple fields, or from bytes already resolved) and finished into
//! an array of exactly the field's type.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, FixedSizeBinaryBuilder, StringBuilder};
use arrow_array::types::{
    Date32Type, Decimal128Type, Decimal256Type, DurationMicrosecondType, Float32Type, Float64Type,
    Int16Type, Int32Type, Int64Type, Int8Type, TimestampMicrosecondType, UInt16Type, UInt32Type,
    UInt64Type, UInt8Type,
};
use arrow_array::{ArrayRef, DictionaryArray, RecordBatch, StringArray};
use arrow_buffer::i256;
use arrow_schema::{DataType, Field, SchemaRef};
use prollystore_dolt::SqlValue;
use prollystore_format::tuple::{days_from_civil, text_of, Date, Decimal, DecimalForm, Value};

use crate::error::{Error, Result};
use crate::primitive::PrimitiveColumn;

/// Days since 1970-01-01 of a stored date; `None` for MySQL's zero-in-date values
/// (`0000-00-00`, `2020-00-15`), which no calendar day is.
pub fn date_days(d: Date) -> Option<i32> {
    if d.month == 0 || d.month > 12 || d.day == 0 {
        return None;
    }
    i32::try_from(days_from_civil(
        i64::from(d.year),
        i64::from(d.month),
        i64::from(d.day),
    ))
    .ok()
}

/// The date `days` after 1970-01-01 (proleptic Gregorian; `None` outside years 0…65535):
/// the inverse of [`date_days`].
pub fn date_from_days(days: i64) -> Option<Date> {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    Some(Date {
        year: u16::try_from(year).ok()?,
        month: u8::try_from(month).ok()?,
        day: u8::try_from(day).ok()?,
    })
}

/// The builder of one column.
#[derive(Debug)]
pub(crate) enum ColumnBuilder {
    I8(PrimitiveColumn<Int8Type>),
    I16(PrimitiveColumn<Int16Type>),
    I32(PrimitiveColumn<Int32Type>),
    I64(PrimitiveColumn<Int64Type>),
    U8(PrimitiveColumn<UInt8Type>),
    U16(PrimitiveColumn<UInt16Type>),
    U32(PrimitiveColumn<UInt32Type>),
    U64(PrimitiveColumn<UInt64Type>),
    F32(PrimitiveColumn<Float32Type>),
    F64(PrimitiveColumn<Float64Type>),
    /// Decimals, with their scale.
    D128(PrimitiveColumn<Decimal128Type>, u32),
    D256(PrimitiveColumn<Decimal256Type>, u32),
    Date(PrimitiveColumn<Date32Type>),
    Timestamp(PrimitiveColumn<TimestampMicrosecondType>),
    Duration(PrimitiveColumn<DurationMicrosecondType>),
    Utf8(StringBuilder),
    /// Binary; `wkb`: values carry Dolt's 4-byte SRID before the WKB, which is dropped.
    Binary(BinaryBuilder, bool),
    Fixed(FixedSizeBinaryBuilder),
    /// ENUM: member indexes into a fixed dictionary of the member names.
    Enum(PrimitiveColumn<UInt16Type>, ArrayRef),
}

/// How a column's builder is made.
#[derive(Clone, Debug, Default)]
pub(crate) struct Extra {
    /// ENUM member names (the dictionary).
    pub members: Vec<String>,
    /// Geometry stored as SRID + WKB.
    pub wkb: bool,
}

macro_rules! prim {
    ($variant:ident, $b:ty, $dt:expr, $n:expr) => {
        ColumnBuilder::$variant(PrimitiveColumn::<$b>::new($dt.clone(), $n))
    };
}

/// Value bytes reserved per row for a variable-width column when nothing better is known.
const DEFAULT_VALUE_BYTES: usize = 8;

/// What each variable-width column of one read took per row in the batches built so far (the
/// most seen, in sixteenths of a byte), shared by the threads that build the read's batches:
/// a batch reserves that much for its values up front instead of growing the buffer by
/// doubling, each time a copy into fresh memory whose every page then faults in
/// (`docs/PERF.md`, "First read in a fresh process").
#[derive(Debug)]
pub(crate) struct ValueBytes(Vec<AtomicUsize>);

impl ValueBytes {
    /// Nothing known yet about the `columns` columns.
    pub(crate) fn new(columns: usize) -> ValueBytes {
        ValueBytes((0..columns).map(|_| AtomicUsize::new(0)).collect())
    }

    /// Bytes to reserve for column `i`'s values in a batch of `rows`: the most per row seen,
    /// and 1/32 more (a batch's mean varies a little), or the default before any batch.
    fn reserve(&self, i: usize, rows: usize) -> usize {
        match self.0.get(i).map_or(0, |a| a.load(Ordering::Relaxed)) {
            0 => rows.saturating_mul(DEFAULT_VALUE_BYTES),
            sixteenths => {
                let bytes = rows.saturating_mul(sixteenths).div_ceil(16);
                bytes.saturating_add(bytes / 32)
            }
        }
    }

    /// Records the value bytes per row of `builders`, which hold `builders.rows` rows.
    pub(crate) fn record(&self, builders: &Builders) {
        if builders.rows == 0 {
            return;
        }
        for (seen, b) in self.0.iter().zip(&builders.builders) {
            let bytes = match b {
                ColumnBuilder::Utf8(b) => b.values_slice().len(),
                ColumnBuilder::Binary(b, _) => b.values_slice().len(),
                _ => continue,
            };
            let sixteenths = bytes.saturating_mul(16).div_ceil(builders.rows);
            seen.fetch_max(sixteenths, Ordering::Relaxed);
        }
    }
}

impl ColumnBuilder {
    /// A builder for `field`'s type with room for `rows` values.
    pub(crate) fn new(field: &Field, extra: &Extra, rows: usize) -> Result<ColumnBuilder> {
        Self::with_value_bytes(field, extra, rows, rows.saturating_mul(DEFAULT_VALUE_BYTES))
    }

    /// [`ColumnBuilder::new`] with room for `value_bytes` bytes of variable-width values.
    fn with_value_bytes(
        field: &Field,
        extra: &Extra,
        rows: usize,
        value_bytes: usize,
    ) -> Result<ColumnBuilder> {
        let dt = field.data_type();
        Ok(match dt {
            DataType::Int8 => prim!(I8, Int8Type, dt, rows),
            DataType::Int16 => prim!(I16, Int16Type, dt, rows),
            DataType::Int32 => prim!(I32, Int32Type, dt, rows),
            DataType::Int64 => prim!(I64, Int64Type, dt, rows),
            DataType::UInt8 => prim!(U8, UInt8Type, dt, rows),
            DataType::UInt16 => prim!(U16, UInt16Type, dt, rows),
            DataType::UInt32 => prim!(U32, UInt32Type, dt, rows),
            DataType::UInt64 => prim!(U64, UInt64Type, dt, rows),
            DataType::Float32 => prim!(F32, Float32Type, dt, rows),
            DataType::Float64 => prim!(F64, Float64Type, dt, rows),
            DataType::Decimal128(_, s) => ColumnBuilder::D128(
                PrimitiveColumn::new(dt.clone(), rows),
                u32::try_from(*s).unwrap_or(0),
            ),
            DataType::Decimal256(_, s) => ColumnBuilder::D256(
                PrimitiveColumn::new(dt.clone(), rows),
                u32::try_from(*s).unwrap_or(0),
            ),
            DataType::Date32 => prim!(Date, Date32Type, dt, rows),
            DataType::Timestamp(..) => prim!(Timestamp, TimestampMicrosecondType, dt, rows),
            DataType::Duration(..) => prim!(Duration, DurationMicrosecondType, dt, rows),
            DataType::Utf8 => ColumnBuilder::Utf8(StringBuilder::with_capacity(rows, value_bytes)),
            DataType::Binary => {
                ColumnBuilder::Binary(BinaryBuilder::with_capacity(rows, value_bytes), extra.wkb)
            }
            DataType::FixedSizeBinary(n) => {
                ColumnBuilder::Fixed(FixedSizeBinaryBuilder::with_capacity(rows, *n))
            }
            DataType::Dictionary(..) => ColumnBuilder::Enum(
                PrimitiveColumn::new(DataType::UInt16, rows),
                Arc::new(StringArray::from_iter_values(&extra.members)),
            ),
            other => {
                return Err(Error::Mismatch(format!(
                    "column {:?}: no builder for Arrow type {other}",
                    field.name()
                )))
            }
        })
    }

    /// Appends a NULL.
    pub(crate) fn append_null(&mut self) {
        use ColumnBuilder as B;
        match self {
            B::I8(b) => b.append_null(),
            B::I16(b) => b.append_null(),
            B::I32(b) => b.append_null(),
            B::I64(b) => b.append_null(),
            B::U8(b) => b.append_null(),
            B::U16(b) => b.append_null(),
            B::U32(b) => b.append_null(),
            B::U64(b) => b.append_null(),
            B::F32(b) => b.append_null(),
            B::F64(b) => b.append_null(),
            B::D128(b, _) => b.append_null(),
            B::D256(b, _) => b.append_null(),
            B::Date(b) => b.append_null(),
            B::Timestamp(b) => b.append_null(),
            B::Duration(b) => b.append_null(),
            B::Utf8(b) => b.append_null(),
            B::Binary(b, _) => b.append_null(),
            B::Fixed(b) => b.append_null(),
            B::Enum(b, _) => b.append_null(),
        }
    }

    /// Appends a signed integer; false if this column does not take one or it does not fit.
    #[inline]
    pub(crate) fn append_int(&mut self, v: i64) -> bool {
        use ColumnBuilder as B;
        match self {
            B::I8(b) => i8::try_from(v).map(|v| b.append_value(v)).is_ok(),
            B::I16(b) => i16::try_from(v).map(|v| b.append_value(v)).is_ok(),
            B::I32(b) => i32::try_from(v).map(|v| b.append_value(v)).is_ok(),
            B::I64(b) => {
                b.append_value(v);
                true
            }
            _ => u64::try_from(v).is_ok_and(|u| self.append_uint(u)),
        }
    }

    /// Appends an unsigned integer; false if this column does not take one or it does not fit.
    #[inline]
    pub(crate) fn append_uint(&mut self, v: u64) -> bool {
        use ColumnBuilder as B;
        match self {
            B::U8(b) => u8::try_from(v).map(|v| b.append_value(v)).is_ok(),
            B::U16(b) => u16::try_from(v).map(|v| b.append_value(v)).is_ok(),
            B::U32(b) => u32::try_from(v).map(|v| b.append_value(v)).is_ok(),
            B::U64(b) => {
                b.append_value(v);
                true
            }
            B::I8(_) | B::I16(_) | B::I32(_) | B::I64(_) => {
                i64::try_from(v).is_ok_and(|i| self.append_int(i))
            }
            _ => false,
        }
    }

    /// Appends text or bytes to a text or binary column; false for other columns. Text that
    /// is not UTF-8 is appended with replacement characters, as Dolt shows it.
    #[inline]
    pub(crate) fn append_bytes(&mut self, v: &[u8]) -> bool {
        match self {
            ColumnBuilder::Utf8(b) => match text_of(v) {
                Some(s) => b.append_value(s),
                None => b.append_value(String::from_utf8_lossy(v)),
            },
            ColumnBuilder::Binary(b, wkb) => {
                let v = if *wkb { v.get(4..).unwrap_or(&[]) } else { v };
                b.append_value(v)
            }
            ColumnBuilder::Fixed(b) => return b.append_value(v).is_ok(),
            _ => return false,
        }
        true
    }

    /// Appends a decimal given as text (`-12.50`); false if the column is not a decimal or
    /// the text is not a number of its scale.
    fn append_decimal_text(&mut self, text: &str, scale: Option<u32>) -> bool {
        let (neg, body) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (int, frac) = body.split_once('.').unwrap_or((body, ""));
        if scale.is_some_and(|s| s as usize != frac.len()) {
            return false;
        }
        let mut digits = String::with_capacity(body.len() + 1);
        if neg {
            digits.push('-');
        }
        digits.push_str(int);
        digits.push_str(frac);
        match self {
            ColumnBuilder::D128(b, _) => digits.parse::<i128>().map(|v| b.append_value(v)).is_ok(),
            ColumnBuilder::D256(b, _) => i256::from_string(&digits)
                .map(|v| b.append_value(v))
                .is_some(),
            ColumnBuilder::Utf8(b) => {
                b.append_value(text);
                true
            }
            _ => false,
        }
    }

    fn decimal_scale(&self) -> Option<u32> {
        match self {
            ColumnBuilder::D128(_, s) | ColumnBuilder::D256(_, s) => Some(*s),
            _ => None,
        }
    }

    /// Appends a stored decimal to a decimal column of `scale` fraction digits; false if it
    /// is not finite or does not fit.
    #[inline(always)]
    pub(crate) fn append_decimal(&mut self, d: &Decimal<'_>, scale: u8) -> bool {
        if d.form() != DecimalForm::Finite {
            return false;
        }
        if let (ColumnBuilder::D128(b, _), Some(v)) = (&mut *self, decimal_i128(d, scale)) {
            b.append_value(v);
            return true;
        }
        self.append_wide_decimal(d, scale)
    }

    /// [`ColumnBuilder::append_decimal`] of a finite decimal that is not a 128-bit column's
    /// value (out of line: rare, and it formats text).
    #[inline(never)]
    fn append_wide_decimal(&mut self, d: &Decimal<'_>, scale: u8) -> bool {
        // Wide decimals: through their text, with the fraction set to `scale` digits.
        let mut text = Vec::new();
        write_decimal_text(d, &mut text);
        let text = String::from_utf8_lossy(&text);
        let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
        let want = usize::from(scale);
        let frac = if frac.len() > want {
            let (keep, drop) = frac.split_at(want);
            if drop.bytes().any(|c| c != b'0') {
                return false;
            }
            keep.to_string()
        } else {
            format!("{frac:0<want$}")
        };
        let text = if want == 0 {
            int.to_string()
        } else {
            format!("{int}.{frac}")
        };
        self.append_decimal_text(&text, Some(u32::from(scale)))
    }

    /// Appends one of Dolt's typed values (`None`: NULL). `what` names the column and row for
    /// the error when the value does not belong in this column.
    pub(crate) fn append_sql(
        &mut self,
        v: Option<&SqlValue>,
        what: &dyn Fn() -> String,
    ) -> Result<()> {
        use ColumnBuilder as B;
        let Some(v) = v else {
            self.append_null();
            return Ok(());
        };
        let ok = match (&mut *self, v) {
            (B::F32(b), SqlValue::Float(x)) => {
                b.append_value(*x);
                true
            }
            (B::F64(b), SqlValue::Double(x)) => {
                b.append_value(*x);
                true
            }
            (B::F64(b), SqlValue::Float(x)) => {
                b.append_value(f64::from(*x));
                true
            }
            (B::Date(b), SqlValue::Date(d)) => {
                b.append_option(date_days(*d));
                true
            }
            (B::Timestamp(b), SqlValue::Datetime(us, _)) => {
                b.append_value(*us);
                true
            }
            (B::Duration(b), SqlValue::Time(us)) => {
                b.append_value(*us);
                true
            }
            (B::Enum(b, values), SqlValue::Enum(i, _)) => {
                let key = i.checked_sub(1).filter(|k| usize::from(*k) < values.len());
                b.append_option(key);
                true
            }
            (_, SqlValue::Int(x)) => self.append_int(*x),
            (_, SqlValue::Uint(x)) => self.append_uint(*x),
            (_, SqlValue::Year(y)) => self.append_uint(u64::from(*y)),
            (_, SqlValue::Decimal(s)) => {
                let scale = self.decimal_scale();
                self.append_decimal_text(s, scale)
            }
            (
                _,
                SqlValue::Text(s) | SqlValue::Json(s) | SqlValue::Set(_, s) | SqlValue::Enum(_, s),
            ) => self.append_bytes(s.as_bytes()),
            (_, SqlValue::Bytes(b)) => self.append_bytes(b),
            _ => false,
        };
        if ok {
            Ok(())
        } else {
            Err(Error::Mismatch(format!(
                "{}: value {:?} does not fit the column's Arrow type",
                what(),
                v
            )))
        }
    }

    /// Appends a raw tuple field whose bytes (for text, binary and out-of-band values) the
    /// caller has already resolved into `bytes`. Returns false if the value does not belong.
    #[inline]
    pub(crate) fn append_value(&mut self, v: &Value<'_>, bytes: Option<&[u8]>) -> bool {
        use ColumnBuilder as B;
        match (&mut *self, v) {
            (B::F32(b), Value::Float32(x)) => b.append_value(*x),
            (B::F64(b), Value::Float64(x)) => b.append_value(*x),
            (B::Date(b), Value::Date(d)) => b.append_option(date_days(*d)),
            (B::Timestamp(b), Value::Datetime(us)) => b.append_value(*us),
            (B::Duration(b), Value::Time(us)) => b.append_value(*us),
            (B::Enum(b, values), Value::Enum(i)) => {
                let key = i.checked_sub(1).filter(|k| usize::from(*k) < values.len());
                b.append_option(key)
            }
            // Checked as UTF-8 when read: not checked again.
            (B::Utf8(b), Value::String(text)) => b.append_value(text),
            (B::Fixed(b), Value::Hash128(h)) => return b.append_value(h).is_ok(),
            (B::Fixed(b), Value::Cell(c)) => return b.append_value(c).is_ok(),
            (B::Fixed(b), Value::Address(a)) => return b.append_value(a.0).is_ok(),
            (_, Value::Int8(x)) => return self.append_int(i64::from(*x)),
            (_, Value::Int16(x)) => return self.append_int(i64::from(*x)),
            (_, Value::Int32(x)) => return self.append_int(i64::from(*x)),
            (_, Value::Int64(x)) => return self.append_int(*x),
            (_, Value::Uint8(x)) => return self.append_uint(u64::from(*x)),
            (_, Value::Uint16(x)) => return self.append_uint(u64::from(*x)),
            (_, Value::Uint32(x)) => return self.append_uint(u64::from(*x)),
            (_, Value::Uint64(x) | Value::Bit64(x) | Value::Set(x)) => return self.append_uint(*x),
            (_, Value::Year(y)) => return self.append_uint(u64::from(*y)),
            (_, Value::Enum(e)) => return self.append_uint(u64::from(*e)),
            (B::Utf8(b), Value::Decimal(d)) => {
                let mut out = Vec::new();
                write_decimal_text(d, &mut out);
                b.append_value(String::from_utf8_lossy(&out))
            }
            _ => {
                return match bytes {
                    Some(bytes) => self.append_bytes(bytes),
                    None => false,
                }
            }
        }
        true
    }

    /// The finished array (the builder starts over, empty).
    pub(crate) fn finish(&mut self) -> Result<ArrayRef> {
        use ColumnBuilder as B;
        Ok(match self {
            B::I8(b) => Arc::new(b.finish()),
            B::I16(b) => Arc::new(b.finish()),
            B::I32(b) => Arc::new(b.finish()),
            B::I64(b) => Arc::new(b.finish()),
            B::U8(b) => Arc::new(b.finish()),
            B::U16(b) => Arc::new(b.finish()),
            B::U32(b) => Arc::new(b.finish()),
            B::U64(b) => Arc::new(b.finish()),
            B::F32(b) => Arc::new(b.finish()),
            B::F64(b) => Arc::new(b.finish()),
            B::D128(b, _) => Arc::new(b.finish()),
            B::D256(b, _) => Arc::new(b.finish()),
            B::Date(b) => Arc::new(b.finish()),
            B::Timestamp(b) => Arc::new(b.finish()),
            B::Duration(b) => Arc::new(b.finish()),
            B::Utf8(b) => Arc::new(b.finish()),
            B::Binary(b, _) => Arc::new(b.finish()),
            B::Fixed(b) => Arc::new(b.finish()),
            B::Enum(b, values) => Arc::new(DictionaryArray::try_new(b.finish(), values.clone())?),
        })
    }
}

/// A stored decimal as plain text (`-1.5`, `12`), with as many fraction digits as stored.
pub(crate) fn write_decimal_text(d: &prollystore_format::tuple::Decimal<'_>, out: &mut Vec<u8>) {
    let digits = d.coefficient_digits();
    let exp = d.exponent();
    if d.is_negative() {
        out.push(b'-');
    }
    if exp >= 0 {
        out.extend_from_slice(digits.as_bytes());
        out.extend(std::iter::repeat_n(b'0', exp as usize));
        return;
    }
    let frac = exp.unsigned_abs() as usize;
    if digits.len() > frac {
        let (i, f) = digits.split_at(digits.len() - frac);
        out.extend_from_slice(i.as_bytes());
        out.push(b'.');
        out.extend_from_slice(f.as_bytes());
    } else {
        out.extend_from_slice(b"0.");
        out.extend(std::iter::repeat_n(b'0', frac - digits.len()));
        out.extend_from_slice(digits.as_bytes());
    }
}

/// One builder per column of a schema, with the facts each needs.
pub(crate) struct Builders {
    pub(crate) schema: SchemaRef,
    pub(crate) builders: Vec<ColumnBuilder>,
    /// Rows appended since the last batch.
    pub(crate) rows: usize,
}

impl Builders {
    pub(crate) fn new(schema: SchemaRef, extras: &[Extra], capacity: usize) -> Result<Builders> {
        let builders = schema
            .fields()
            .iter()
            .zip(extras)
            .map(|(f, e)| ColumnBuilder::new(f, e, capacity))
            .collect::<Result<_>>()?;
        Ok(Builders {
            schema,
            builders,
            rows: 0,
        })
    }

    /// [`Builders::new`] for one of a read's batches, of `rows` rows: variable-width columns
    /// reserve what `seen` says the read's batches so far took per row.
    pub(crate) fn sized(
        schema: SchemaRef,
        extras: &[Extra],
        rows: usize,
        seen: &ValueBytes,
    ) -> Result<Builders> {
        let builders = schema
            .fields()
            .iter()
            .zip(extras)
            .enumerate()
            .map(|(i, (f, e))| ColumnBuilder::with_value_bytes(f, e, rows, seen.reserve(i, rows)))
            .collect::<Result<_>>()?;
        Ok(Builders {
            schema,
            builders,
            rows: 0,
        })
    }

    /// Appends `values` to the builders from `first` on.
    pub(crate) fn append(
        &mut self,
        first: usize,
        values: &[Option<SqlValue>],
        row: u64,
    ) -> Result<()> {
        let schema = &self.schema;
        for (i, (b, v)) in self.builders.iter_mut().skip(first).zip(values).enumerate() {
            let what = || {
                let name = schema.fields().get(first + i).map(|f| f.name().as_str());
                format!("column {:?}, row {row}", name.unwrap_or("?"))
            };
            b.append_sql(v.as_ref(), &what)?;
        }
        Ok(())
    }

    pub(crate) fn builder(&mut self, i: usize) -> Option<&mut ColumnBuilder> {
        self.builders.get_mut(i)
    }

    pub(crate) fn finish(&mut self) -> Result<RecordBatch> {
        let columns = self
            .builders
            .iter_mut()
            .map(ColumnBuilder::finish)
            .collect::<Result<Vec<_>>>()?;
        let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(self.rows));
        self.rows = 0;
        Ok(RecordBatch::try_new_with_options(
            self.schema.clone(),
            columns,
            &options,
        )?)
    }
}

/// A decimal's coefficient scaled to `scale` fraction digits, if it fits 128 bits exactly.
#[inline]
pub(crate) fn decimal_i128(d: &Decimal<'_>, scale: u8) -> Option<i128> {
    let c = i128::try_from(d.coefficient_u128()?).ok()?;
    let shift = d.exponent().checked_add(i32::from(scale))?;
    let p = *POW10.get(usize::try_from(shift.unsigned_abs()).ok()?)?;
    let scaled = if shift == 0 {
        // Stored at the column's scale, as Dolt writes them: no 128-bit multiplication.
        c
    } else if shift > 0 {
        c.checked_mul(p)?
    } else {
        if c % p != 0 {
            return None;
        }
        c / p
    };
    Some(if d.is_negative() { -scaled } else { scaled })
}

/// `10^i` for every `i` an `i128` holds.
const POW10: [i128; 39] = {
    let mut p = [1i128; 39];
    let mut i = 1;
    while i < p.len() {
        p[i] = p[i - 1] * 10;
        i += 1;
    }
    p
};
