//! Typed, zero-copy field access and validation on a [`TupleDesc`].
//!
//! Every getter returns `Ok(None)` for NULL, an error for a field index beyond the descriptor, a
//! getter of another encoding, or bytes that are not a value of the encoding. None allocates.

use super::decimal::Decimal;
use super::layout::{count_of, field_of, layout_failure, validate_layout, CheckedFields};
use super::temporal::{year_from_raw, Date};
use super::value::{text_of, Adaptive, Value};
use super::{Tuple, TupleDesc, TupleError};
use crate::{Address, Encoding};

impl TupleDesc {
    /// Field `i`'s bytes after checking that its encoding is `enc`.
    #[inline]
    fn typed<'a>(
        &self,
        t: Tuple<'a>,
        i: usize,
        enc: Encoding,
    ) -> Result<Option<&'a [u8]>, TupleError> {
        let ty = self.type_of(i)?;
        if ty.enc != enc {
            return Err(TupleError::WrongEncoding {
                field: i,
                actual: ty.enc,
                requested: enc,
            });
        }
        Ok(self.field(t, i))
    }

    #[inline(always)]
    fn fixed<const N: usize>(
        &self,
        t: Tuple<'_>,
        i: usize,
        enc: Encoding,
    ) -> Result<Option<[u8; N]>, TupleError> {
        let ty = self.type_of(i)?;
        if ty.enc != enc {
            return Err(TupleError::WrongEncoding {
                field: i,
                actual: ty.enc,
                requested: enc,
            });
        }
        match self.field(t, i) {
            None => Ok(None),
            Some(b) => fixed_bytes(i, enc, b).map(Some),
        }
    }

    /// Reads an int8 field.
    #[inline]
    pub fn get_int8(&self, t: Tuple<'_>, i: usize) -> Result<Option<i8>, TupleError> {
        Ok(self
            .fixed::<1>(t, i, Encoding::Int8)?
            .map(i8::from_le_bytes))
    }
    /// Reads an int8 field as a BOOL (non-zero = true).
    #[inline]
    pub fn get_bool(&self, t: Tuple<'_>, i: usize) -> Result<Option<bool>, TupleError> {
        Ok(self.get_int8(t, i)?.map(|v| v != 0))
    }
    /// Reads a uint8 field.
    #[inline]
    pub fn get_uint8(&self, t: Tuple<'_>, i: usize) -> Result<Option<u8>, TupleError> {
        Ok(self
            .fixed::<1>(t, i, Encoding::Uint8)?
            .map(u8::from_le_bytes))
    }
    /// Reads an int16 field.
    #[inline]
    pub fn get_int16(&self, t: Tuple<'_>, i: usize) -> Result<Option<i16>, TupleError> {
        Ok(self
            .fixed::<2>(t, i, Encoding::Int16)?
            .map(i16::from_le_bytes))
    }
    /// Reads a uint16 field.
    #[inline]
    pub fn get_uint16(&self, t: Tuple<'_>, i: usize) -> Result<Option<u16>, TupleError> {
        Ok(self
            .fixed::<2>(t, i, Encoding::Uint16)?
            .map(u16::from_le_bytes))
    }
    /// Reads an int32 field.
    #[inline]
    pub fn get_int32(&self, t: Tuple<'_>, i: usize) -> Result<Option<i32>, TupleError> {
        Ok(self
            .fixed::<4>(t, i, Encoding::Int32)?
            .map(i32::from_le_bytes))
    }
    /// Reads a uint32 field.
    #[inline]
    pub fn get_uint32(&self, t: Tuple<'_>, i: usize) -> Result<Option<u32>, TupleError> {
        Ok(self
            .fixed::<4>(t, i, Encoding::Uint32)?
            .map(u32::from_le_bytes))
    }
    /// Reads an int64 field.
    #[inline]
    pub fn get_int64(&self, t: Tuple<'_>, i: usize) -> Result<Option<i64>, TupleError> {
        Ok(self
            .fixed::<8>(t, i, Encoding::Int64)?
            .map(i64::from_le_bytes))
    }
    /// Reads a uint64 field.
    #[inline]
    pub fn get_uint64(&self, t: Tuple<'_>, i: usize) -> Result<Option<u64>, TupleError> {
        Ok(self
            .fixed::<8>(t, i, Encoding::Uint64)?
            .map(u64::from_le_bytes))
    }
    /// Reads a float32 field (bit pattern preserved).
    #[inline]
    pub fn get_float32(&self, t: Tuple<'_>, i: usize) -> Result<Option<f32>, TupleError> {
        Ok(self
            .fixed::<4>(t, i, Encoding::Float32)?
            .map(f32::from_le_bytes))
    }
    /// Reads a float64 field (bit pattern preserved).
    #[inline]
    pub fn get_float64(&self, t: Tuple<'_>, i: usize) -> Result<Option<f64>, TupleError> {
        Ok(self
            .fixed::<8>(t, i, Encoding::Float64)?
            .map(f64::from_le_bytes))
    }
    /// Reads a bit64 field.
    #[inline]
    pub fn get_bit64(&self, t: Tuple<'_>, i: usize) -> Result<Option<u64>, TupleError> {
        Ok(self
            .fixed::<8>(t, i, Encoding::Bit64)?
            .map(u64::from_le_bytes))
    }
    /// Reads a hash128 field.
    #[inline]
    pub fn get_hash128(&self, t: Tuple<'_>, i: usize) -> Result<Option<[u8; 16]>, TupleError> {
        self.fixed::<16>(t, i, Encoding::Hash128)
    }
    /// Reads a YEAR field as the year (0 for the zero year).
    #[inline]
    pub fn get_year(&self, t: Tuple<'_>, i: usize) -> Result<Option<u16>, TupleError> {
        Ok(self.get_year_raw(t, i)?.map(year_from_raw))
    }
    /// Reads a YEAR field's stored byte (`year − 1901`, 255 for 0).
    #[inline]
    pub fn get_year_raw(&self, t: Tuple<'_>, i: usize) -> Result<Option<u8>, TupleError> {
        Ok(self
            .fixed::<1>(t, i, Encoding::Year)?
            .map(u8::from_le_bytes))
    }
    /// Reads a DATE field.
    #[inline]
    pub fn get_date(&self, t: Tuple<'_>, i: usize) -> Result<Option<Date>, TupleError> {
        Ok(self.get_date_raw(t, i)?.map(Date::from_raw))
    }
    /// Reads a DATE field's stored u32.
    #[inline]
    pub fn get_date_raw(&self, t: Tuple<'_>, i: usize) -> Result<Option<u32>, TupleError> {
        Ok(self
            .fixed::<4>(t, i, Encoding::Date)?
            .map(u32::from_le_bytes))
    }
    /// Reads a TIME field (signed microseconds).
    #[inline]
    pub fn get_time(&self, t: Tuple<'_>, i: usize) -> Result<Option<i64>, TupleError> {
        Ok(self
            .fixed::<8>(t, i, Encoding::Time)?
            .map(i64::from_le_bytes))
    }
    /// Reads a DATETIME field (Unix microseconds, UTC).
    #[inline]
    pub fn get_datetime(&self, t: Tuple<'_>, i: usize) -> Result<Option<i64>, TupleError> {
        Ok(self
            .fixed::<8>(t, i, Encoding::Datetime)?
            .map(i64::from_le_bytes))
    }
    /// Reads an ENUM field (1-based member index).
    #[inline]
    pub fn get_enum(&self, t: Tuple<'_>, i: usize) -> Result<Option<u16>, TupleError> {
        Ok(self
            .fixed::<2>(t, i, Encoding::Enum)?
            .map(u16::from_le_bytes))
    }
    /// Reads a SET field (member bitmask).
    #[inline]
    pub fn get_set(&self, t: Tuple<'_>, i: usize) -> Result<Option<u64>, TupleError> {
        Ok(self
            .fixed::<8>(t, i, Encoding::Set)?
            .map(u64::from_le_bytes))
    }
    /// Reads a cell field.
    #[inline]
    pub fn get_cell(&self, t: Tuple<'_>, i: usize) -> Result<Option<[u8; 17]>, TupleError> {
        self.fixed::<17>(t, i, Encoding::Cell)
    }

    /// Reads any `*_addr` field.
    #[inline]
    pub fn get_address(&self, t: Tuple<'_>, i: usize) -> Result<Option<Address>, TupleError> {
        let ty = self.type_of(i)?;
        if !ty.enc.is_address() {
            return Err(TupleError::WrongEncoding {
                field: i,
                actual: ty.enc,
                requested: Encoding::BytesAddr,
            });
        }
        match self.field(t, i) {
            None => Ok(None),
            Some(b) => Address::from_slice(b)
                .map(Some)
                .ok_or_else(|| bad(i, ty.enc, "wrong width")),
        }
    }

    fn terminated<'a>(
        &self,
        t: Tuple<'a>,
        i: usize,
        enc: Encoding,
    ) -> Result<Option<&'a [u8]>, TupleError> {
        match self.typed(t, i, enc)? {
            None => Ok(None),
            Some(b) => terminated_bytes(i, enc, b).map(Some),
        }
    }

    /// Reads a string field as UTF-8 text.
    #[inline]
    pub fn get_string<'a>(&self, t: Tuple<'a>, i: usize) -> Result<Option<&'a str>, TupleError> {
        match self.get_string_bytes(t, i)? {
            None => Ok(None),
            Some(b) => text_of(b)
                .map(Some)
                .ok_or_else(|| bad(i, Encoding::String, "not valid UTF-8")),
        }
    }
    /// Reads a string field's bytes without checking UTF-8.
    #[inline]
    pub fn get_string_bytes<'a>(
        &self,
        t: Tuple<'a>,
        i: usize,
    ) -> Result<Option<&'a [u8]>, TupleError> {
        self.terminated(t, i, Encoding::String)
    }
    /// Reads a bytes field.
    #[inline]
    pub fn get_bytes<'a>(&self, t: Tuple<'a>, i: usize) -> Result<Option<&'a [u8]>, TupleError> {
        self.terminated(t, i, Encoding::Bytes)
    }
    /// Reads a legacy inline JSON field.
    pub fn get_json<'a>(&self, t: Tuple<'a>, i: usize) -> Result<Option<&'a [u8]>, TupleError> {
        self.terminated(t, i, Encoding::Json)
    }
    /// Reads a legacy inline geometry field.
    pub fn get_geometry<'a>(&self, t: Tuple<'a>, i: usize) -> Result<Option<&'a [u8]>, TupleError> {
        self.terminated(t, i, Encoding::Geometry)
    }
    /// Reads an extended field (handler bytes, as stored).
    pub fn get_extended<'a>(&self, t: Tuple<'a>, i: usize) -> Result<Option<&'a [u8]>, TupleError> {
        self.typed(t, i, Encoding::Extended)
    }

    /// Reads a decimal field.
    #[inline]
    pub fn get_decimal<'a>(
        &self,
        t: Tuple<'a>,
        i: usize,
    ) -> Result<Option<Decimal<'a>>, TupleError> {
        match self.typed(t, i, Encoding::Decimal)? {
            None => Ok(None),
            Some(b) => Decimal::from_bytes(b)
                .map(Some)
                .ok_or_else(|| bad(i, Encoding::Decimal, "not a decimal")),
        }
    }

    /// Reads any adaptive field.
    #[inline]
    pub fn get_adaptive<'a>(
        &self,
        t: Tuple<'a>,
        i: usize,
    ) -> Result<Option<Adaptive<'a>>, TupleError> {
        let ty = self.type_of(i)?;
        if !ty.enc.is_adaptive() {
            return Err(TupleError::WrongEncoding {
                field: i,
                actual: ty.enc,
                requested: Encoding::BytesAdaptive,
            });
        }
        match self.field(t, i) {
            None => Ok(None),
            Some(b) => Adaptive::from_bytes(b)
                .map(Some)
                .ok_or_else(|| bad(i, ty.enc, "malformed out-of-band value")),
        }
    }

    /// Reads field `i` whatever its encoding.
    #[inline]
    pub fn value<'a>(&self, t: Tuple<'a>, i: usize) -> Result<Option<Value<'a>>, TupleError> {
        let enc = self.type_of(i)?.enc;
        match self.field(t, i) {
            None => Ok(None),
            Some(f) => field_value(i, enc, f).map(Some),
        }
    }

    /// Checks `bytes` as [`Tuple::new`] does and appends each of its fields to `out`, one per
    /// field of the descriptor in order (NULL past the stored ones), with the checks and errors
    /// of [`TupleDesc::value`]: the whole-row form of both, reading each offset once. Stored
    /// fields beyond the descriptor are checked for layout only. On an error `out` holds the
    /// fields before the bad one.
    pub fn values_into<'a>(
        &self,
        bytes: &'a [u8],
        out: &mut Vec<Option<Value<'a>>>,
    ) -> Result<(), TupleError> {
        let Some(mut fields) = CheckedFields::new(bytes) else {
            return Err(layout_failure(bytes));
        };
        out.reserve(self.types.len());
        for (i, ty) in self.types.iter().enumerate() {
            match fields.next_field() {
                Ok(None) => out.push(None),
                Ok(Some(f)) => {
                    if let Err(e) = push_field_value(i, ty.enc, f, out) {
                        // A bad layout further on is the error `Tuple::new` would have given.
                        return Err(match validate_layout(bytes) {
                            Ok(()) => e,
                            Err(layout) => layout,
                        });
                    }
                }
                Err(()) => return Err(fields.layout_failure()),
            }
        }
        while fields.has_more() {
            if fields.next_field().is_err() {
                return Err(fields.layout_failure());
            }
        }
        Ok(())
    }

    /// Checks `bytes` completely against this descriptor: the layout, no stored fields beyond the
    /// descriptor, no stored trailing NULL (Dolt never writes one), no NULL in a non-nullable
    /// field, and every field a well-formed value of its encoding in the exact shape Dolt writes
    /// (widths, terminators, canonical decimals and adaptive values). Does not check UTF-8 of
    /// strings, nor that dates are real calendar dates.
    ///
    /// After this succeeds every getter for the right encoding returns `Ok` (string getters may
    /// still report invalid UTF-8).
    pub fn validate(&self, bytes: &[u8]) -> Result<(), TupleError> {
        validate_layout(bytes)?;
        let count = count_of(bytes);
        if count > self.len() {
            return Err(TupleError::FieldsBeyondDescriptor {
                count,
                len: self.len(),
            });
        }
        if count > 0 && field_of(bytes, count - 1).is_none() {
            return Err(TupleError::TrailingNull { count });
        }
        for (i, ty) in self.types.iter().enumerate() {
            let Some(f) = field_of(bytes, i) else {
                if !ty.nullable {
                    return Err(TupleError::UnexpectedNull { field: i });
                }
                continue;
            };
            check_field(i, ty.enc, f)?;
        }
        Ok(())
    }
}

/// The value of field `i`, stored as the non-NULL bytes `f` of encoding `enc`, checked as that
/// encoding's getter checks it.
#[inline(always)]
fn field_value(i: usize, enc: Encoding, f: &[u8]) -> Result<Value<'_>, TupleError> {
    use Encoding as E;
    Ok(match enc {
        E::Int8 => Value::Int8(i8::from_le_bytes(fixed_bytes(i, enc, f)?)),
        E::Uint8 => Value::Uint8(u8::from_le_bytes(fixed_bytes(i, enc, f)?)),
        E::Int16 => Value::Int16(i16::from_le_bytes(fixed_bytes(i, enc, f)?)),
        E::Uint16 => Value::Uint16(u16::from_le_bytes(fixed_bytes(i, enc, f)?)),
        E::Int32 => Value::Int32(i32::from_le_bytes(fixed_bytes(i, enc, f)?)),
        E::Uint32 => Value::Uint32(u32::from_le_bytes(fixed_bytes(i, enc, f)?)),
        E::Int64 => Value::Int64(i64::from_le_bytes(fixed_bytes(i, enc, f)?)),
        E::Uint64 => Value::Uint64(u64::from_le_bytes(fixed_bytes(i, enc, f)?)),
        E::Float32 => Value::Float32(f32::from_le_bytes(fixed_bytes(i, enc, f)?)),
        E::Float64 => Value::Float64(f64::from_le_bytes(fixed_bytes(i, enc, f)?)),
        E::Bit64 => Value::Bit64(u64::from_le_bytes(fixed_bytes(i, enc, f)?)),
        E::Hash128 => Value::Hash128(fixed_bytes(i, enc, f)?),
        E::Year => Value::Year(year_from_raw(u8::from_le_bytes(fixed_bytes(i, enc, f)?))),
        E::Date => Value::Date(Date::from_raw(u32::from_le_bytes(fixed_bytes(i, enc, f)?))),
        E::Time => Value::Time(i64::from_le_bytes(fixed_bytes(i, enc, f)?)),
        E::Datetime => Value::Datetime(i64::from_le_bytes(fixed_bytes(i, enc, f)?)),
        E::Enum => Value::Enum(u16::from_le_bytes(fixed_bytes(i, enc, f)?)),
        E::Set => Value::Set(u64::from_le_bytes(fixed_bytes(i, enc, f)?)),
        E::Cell => Value::Cell(fixed_bytes(i, enc, f)?),
        E::String => Value::String(
            text_of(terminated_bytes(i, enc, f)?).ok_or_else(|| bad(i, enc, "not valid UTF-8"))?,
        ),
        E::Bytes => Value::Bytes(terminated_bytes(i, enc, f)?),
        E::Json => Value::Json(terminated_bytes(i, enc, f)?),
        E::Geometry => Value::Geometry(terminated_bytes(i, enc, f)?),
        E::Extended => Value::Extended(f),
        E::Decimal => {
            Value::Decimal(Decimal::from_bytes(f).ok_or_else(|| bad(i, enc, "not a decimal"))?)
        }
        e if e.is_address() => {
            Value::Address(Address::from_slice(f).ok_or_else(|| bad(i, enc, "wrong width"))?)
        }
        e if e.is_adaptive() => Value::Adaptive(
            Adaptive::from_bytes(f).ok_or_else(|| bad(i, enc, "malformed out-of-band value"))?,
        ),
        _ => return Err(bad(i, enc, "encoding not supported")),
    })
}

/// Pushes the value of field `i` (non-NULL bytes `f` of encoding `enc`) onto `out`; each
/// encoding pushes its own value, so no `Result<Value>` is built and then moved (measured:
/// the moves cost more than the field reads, see `docs/PERF.md`).
#[inline(always)]
fn push_field_value<'a>(
    i: usize,
    enc: Encoding,
    f: &'a [u8],
    out: &mut Vec<Option<Value<'a>>>,
) -> Result<(), TupleError> {
    use Encoding as E;
    match enc {
        E::Int64 => out.push(Some(Value::Int64(i64::from_le_bytes(fixed_bytes(
            i, enc, f,
        )?)))),
        E::Datetime => out.push(Some(Value::Datetime(i64::from_le_bytes(fixed_bytes(
            i, enc, f,
        )?)))),
        E::String => out.push(Some(Value::String(
            text_of(terminated_bytes(i, enc, f)?).ok_or_else(|| bad(i, enc, "not valid UTF-8"))?,
        ))),
        E::Decimal => out.push(Some(Value::Decimal(
            Decimal::from_bytes(f).ok_or_else(|| bad(i, enc, "not a decimal"))?,
        ))),
        _ => out.push(Some(field_value(i, enc, f)?)),
    }
    Ok(())
}

/// Field `i`'s bytes `f` as the `N` bytes of a fixed-width encoding `enc`.
#[inline(always)]
fn fixed_bytes<const N: usize>(i: usize, enc: Encoding, f: &[u8]) -> Result<[u8; N], TupleError> {
    <[u8; N]>::try_from(f).map_err(|_| bad(i, enc, "wrong width"))
}

/// Field `i`'s bytes `f` without the 0x00 terminator of encoding `enc`.
#[inline(always)]
fn terminated_bytes(i: usize, enc: Encoding, f: &[u8]) -> Result<&[u8], TupleError> {
    match f.split_last() {
        Some((0, v)) => Ok(v),
        _ => Err(bad(i, enc, "missing 0x00 terminator")),
    }
}

/// Checks one non-NULL stored field against its encoding.
pub(crate) fn check_field(i: usize, enc: Encoding, f: &[u8]) -> Result<(), TupleError> {
    use Encoding as E;
    if let Some(w) = enc.fixed_width() {
        return if f.len() == w {
            Ok(())
        } else {
            Err(bad(i, enc, "wrong width"))
        };
    }
    match enc {
        E::String | E::Bytes | E::Json | E::Geometry => match f.last() {
            Some(0) => Ok(()),
            _ => Err(bad(i, enc, "missing 0x00 terminator")),
        },
        E::Decimal if !Decimal::is_canonical(f) => Err(bad(i, enc, "not a canonical decimal")),
        e if e.is_adaptive() && !Adaptive::is_canonical(f) => {
            Err(bad(i, enc, "malformed adaptive value"))
        }
        _ => Ok(()),
    }
}

#[inline]
pub(crate) fn bad(field: usize, encoding: Encoding, reason: &'static str) -> TupleError {
    TupleError::BadField {
        field,
        encoding,
        reason,
    }
}
