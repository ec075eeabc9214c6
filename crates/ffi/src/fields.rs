//! Typed field access: getters for every encoding (reading tuples in place, reporting NULL)
//! and the tuple builder's putters. Written out one function per encoding so that cbindgen
//! sees each of them.

use prollystore::format::tuple::{Adaptive, Date, Decimal, DecimalForm};
use prollystore::format::Address;

use crate::args::bytes;
use crate::result::{prolly_result, Error};
use crate::schema::prolly_schema;
use crate::store::prolly_address;
use crate::tuple::{get_field, get_slice, prolly_tuple_builder, put_field};

/// A DATE field's parts.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct prolly_date {
    /// Year (0 in the zero date).
    pub year: u16,
    /// Month 1..=12 (0 in the zero date).
    pub month: u8,
    /// Day 1..=31 (0 in the zero date).
    pub day: u8,
}

/// A hash128 field's 16 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct prolly_hash128 {
    /// The bytes.
    pub bytes: [u8; 16],
}

/// A spatial cell field's 17 bytes (level, then the Z-value).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct prolly_cell {
    /// The bytes.
    pub bytes: [u8; 17],
}

/// Which kind of decimal value. Plain `uint32_t` in `prolly_decimal.form`.
#[repr(u32)]
#[derive(Clone, Copy, Debug)]
pub enum prolly_decimal_form {
    /// `(-1)^negative * coefficient * 10^exponent`.
    Finite = 0,
    /// Not a number.
    Nan = 1,
    /// +Infinity.
    PosInfinity = 2,
    /// -Infinity.
    NegInfinity = 3,
}

/// A decimal value. From a getter, `coefficient` points into the tuple (same lifetime as the
/// tuple bytes); for a putter, it is read during the call only.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct prolly_decimal {
    /// A `prolly_decimal_form`.
    pub form: u32,
    /// Power of ten (finite values).
    pub exponent: i32,
    /// Non-zero if negative (finite values).
    pub negative: u8,
    /// Unsigned big-endian coefficient bytes (finite values; leading zeros allowed).
    pub coefficient: *const u8,
    /// Length of `coefficient`.
    pub coefficient_len: usize,
}

/// An adaptive field (TEXT, BLOB, JSON... in new tables): inline, or out of band in a blob
/// tree read with `prolly_store_read_blob`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct prolly_adaptive {
    /// Non-zero if the value lives in the blob tree `blob`.
    pub out_of_band: u8,
    /// Inline values: the payload, pointing into the tuple. NULL when out of band.
    pub data: *const u8,
    /// Payload length in bytes (inline or out of band).
    pub len: u64,
    /// Out-of-band values: the blob tree's root.
    pub blob: prolly_address,
}

fn decimal_out(d: Decimal<'_>) -> prolly_decimal {
    let form = match d.form() {
        DecimalForm::Finite => prolly_decimal_form::Finite,
        DecimalForm::NaN => prolly_decimal_form::Nan,
        DecimalForm::PosInfinity => prolly_decimal_form::PosInfinity,
        DecimalForm::NegInfinity => prolly_decimal_form::NegInfinity,
    };
    let c = d.coefficient_be();
    prolly_decimal {
        form: form as u32,
        exponent: d.exponent(),
        negative: u8::from(d.is_negative()),
        coefficient: c.as_ptr(),
        coefficient_len: c.len(),
    }
}

fn adaptive_out(a: Adaptive<'_>) -> prolly_adaptive {
    match a {
        Adaptive::Inline(p) => prolly_adaptive {
            out_of_band: 0,
            data: p.as_ptr(),
            len: p.len() as u64,
            blob: prolly_address::default(),
        },
        Adaptive::OutOfBand { len, address } => prolly_adaptive {
            out_of_band: 1,
            data: std::ptr::null(),
            len,
            blob: address.into(),
        },
    }
}

/// Reads field `field` of `tuple` (`tuple_len` bytes; a `prolly_side` of `schema`) as an int8.
/// On success `*out_is_null` says whether the field is NULL, and `*out_value` is written only
/// when it is not. Fails with `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another
/// encoding, `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE` or `PROLLY_RESULT_ERR_BAD_TUPLE`.
#[no_mangle]
pub extern "C" fn prolly_field_int8(
    schema: *const prolly_schema,
    side: u32,
    tuple: *const u8,
    tuple_len: usize,
    field: usize,
    out_value: *mut i8,
    out_is_null: *mut bool,
) -> prolly_result {
    get_field(
        schema,
        side,
        tuple,
        tuple_len,
        field,
        out_value,
        out_is_null,
        |d, t, i| d.get_int8(t, i),
    )
}

/// Reads field `field` of `tuple` (`tuple_len` bytes; a `prolly_side` of `schema`) as a uint8.
/// On success `*out_is_null` says whether the field is NULL, and `*out_value` is written only
/// when it is not. Fails with `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another
/// encoding, `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE` or `PROLLY_RESULT_ERR_BAD_TUPLE`.
#[no_mangle]
pub extern "C" fn prolly_field_uint8(
    schema: *const prolly_schema,
    side: u32,
    tuple: *const u8,
    tuple_len: usize,
    field: usize,
    out_value: *mut u8,
    out_is_null: *mut bool,
) -> prolly_result {
    get_field(
        schema,
        side,
        tuple,
        tuple_len,
        field,
        out_value,
        out_is_null,
        |d, t, i| d.get_uint8(t, i),
    )
}

/// Reads field `field` of `tuple` (`tuple_len` bytes; a `prolly_side` of `schema`) as an int16.
/// On success `*out_is_null` says whether the field is NULL, and `*out_value` is written only
/// when it is not. Fails with `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another
/// encoding, `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE` or `PROLLY_RESULT_ERR_BAD_TUPLE`.
#[no_mangle]
pub extern "C" fn prolly_field_int16(
    schema: *const prolly_schema,
    side: u32,
    tuple: *const u8,
    tuple_len: usize,
    field: usize,
    out_value: *mut i16,
    out_is_null: *mut bool,
) -> prolly_result {
    get_field(
        schema,
        side,
        tuple,
        tuple_len,
        field,
        out_value,
        out_is_null,
        |d, t, i| d.get_int16(t, i),
    )
}

/// Reads field `field` of `tuple` (`tuple_len` bytes; a `prolly_side` of `schema`) as a uint16.
/// On success `*out_is_null` says whether the field is NULL, and `*out_value` is written only
/// when it is not. Fails with `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another
/// encoding, `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE` or `PROLLY_RESULT_ERR_BAD_TUPLE`.
#[no_mangle]
pub extern "C" fn prolly_field_uint16(
    schema: *const prolly_schema,
    side: u32,
    tuple: *const u8,
    tuple_len: usize,
    field: usize,
    out_value: *mut u16,
    out_is_null: *mut bool,
) -> prolly_result {
    get_field(
        schema,
        side,
        tuple,
        tuple_len,
        field,
        out_value,
        out_is_null,
        |d, t, i| d.get_uint16(t, i),
    )
}

/// Reads field `field` of `tuple` (`tuple_len` bytes; a `prolly_side` of `schema`) as an int32.
/// On success `*out_is_null` says whether the field is NULL, and `*out_value` is written only
/// when it is not. Fails with `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another
/// encoding, `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE` or `PROLLY_RESULT_ERR_BAD_TUPLE`.
#[no_mangle]
pub extern "C" fn prolly_field_int32(
    schema: *const prolly_schema,
    side: u32,
    tuple: *const u8,
    tuple_len: usize,
    field: usize,
    out_value: *mut i32,
    out_is_null: *mut bool,
) -> prolly_result {
    get_field(
        schema,
        side,
        tuple,
        tuple_len,
        field,
        out_value,
        out_is_null,
        |d, t, i| d.get_int32(t, i),
    )
}

/// Reads field `field` of `tuple` (`tuple_len` bytes; a `prolly_side` of `schema`) as a uint32.
/// On success `*out_is_null` says whether the field is NULL, and `*out_value` is written only
/// when it is not. Fails with `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another
/// encoding, `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE` or `PROLLY_RESULT_ERR_BAD_TUPLE`.
#[no_mangle]
pub extern "C" fn prolly_field_uint32(
    schema: *const prolly_schema,
    side: u32,
    tuple: *const u8,
    tuple_len: usize,
    field: usize,
    out_value: *mut u32,
    out_is_null: *mut bool,
) -> prolly_result {
    get_field(
        schema,
        side,
        tuple,
        tuple_len,
        field,
        out_value,
        out_is_null,
        |d, t, i| d.get_uint32(t, i),
    )
}

/// Reads field `field` of `tuple` (`tuple_len` bytes; a `prolly_side` of `schema`) as an int64.
/// On success `*out_is_null` says whether the field is NULL, and `*out_value` is written only
/// when it is not. Fails with `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another
/// encoding, `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE` or `PROLLY_RESULT_ERR_BAD_TUPLE`.
#[no_mangle]
pub extern "C" fn prolly_field_int64(
    schema: *const prolly_schema,
    side: u32,
    tuple: *const u8,
    tuple_len: usize,
    field: usize,
    out_value: *mut i64,
    out_is_null: *mut bool,
) -> prolly_result {
    get_field(
        schema,
        side,
        tuple,
        tuple_len,
        field,
        out_value,
        out_is_null,
        |d, t, i| d.get_int64(t, i),
    )
}

/// Reads field `field` of `tuple` (`tuple_len` bytes; a `prolly_side` of `schema`) as a uint64.
/// On success `*out_is_null` says whether the field is NULL, and `*out_value` is written only
/// when it is not. Fails with `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another
/// encoding, `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE` or `PROLLY_RESULT_ERR_BAD_TUPLE`.
#[no_mangle]
pub extern "C" fn prolly_field_uint64(
    schema: *const prolly_schema,
    side: u32,
    tuple: *const u8,
    tuple_len: usize,
    field: usize,
    out_value: *mut u64,
    out_is_null: *mut bool,
) -> prolly_result {
    get_field(
        schema,
        side,
        tuple,
        tuple_len,
        field,
        out_value,
        out_is_null,
        |d, t, i| d.get_uint64(t, i),
    )
}

/// Reads field `field` of `tuple` (`tuple_len` bytes; a `prolly_side` of `schema`) as a float32.
/// On success `*out_is_null` says whether the field is NULL, and `*out_value` is written only
/// when it is not. Fails with `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another
/// encoding, `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE` or `PROLLY_RESULT_ERR_BAD_TUPLE`.
#[no_mangle]
pub extern "C" fn prolly_field_float32(
    schema: *const prolly_schema,
    side: u32,
    tuple: *const u8,
    tuple_len: usize,
    field: usize,
    out_value: *mut f32,
    out_is_null: *mut bool,
) -> prolly_result {
    get_field(
        schema,
        side,
        tuple,
        tuple_len,
        field,
        out_value,
        out_is_null,
        |d, t, i| d.get_float32(t, i),
    )
}

/// Reads field `field` of `tuple` (`tuple_len` bytes; a `prolly_side` of `schema`) as a float64.
/// On success `*out_is_null` says whether the field is NULL, and `*out_value` is written only
/// when it is not. Fails with `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another
/// encoding, `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE` or `PROLLY_RESULT_ERR_BAD_TUPLE`.
#[no_mangle]
pub extern "C" fn prolly_field_float64(
    schema: *const prolly_schema,
    side: u32,
    tuple: *const u8,
    tuple_len: usize,
    field: usize,
    out_value: *mut f64,
    out_is_null: *mut bool,
) -> prolly_result {
    get_field(
        schema,
        side,
        tuple,
        tuple_len,
        field,
        out_value,
        out_is_null,
        |d, t, i| d.get_float64(t, i),
    )
}

/// Reads field `field` of `tuple` (`tuple_len` bytes; a `prolly_side` of `schema`) as a bit64.
/// On success `*out_is_null` says whether the field is NULL, and `*out_value` is written only
/// when it is not. Fails with `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another
/// encoding, `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE` or `PROLLY_RESULT_ERR_BAD_TUPLE`.
#[no_mangle]
pub extern "C" fn prolly_field_bit64(
    schema: *const prolly_schema,
    side: u32,
    tuple: *const u8,
    tuple_len: usize,
    field: usize,
    out_value: *mut u64,
    out_is_null: *mut bool,
) -> prolly_result {
    get_field(
        schema,
        side,
        tuple,
        tuple_len,
        field,
        out_value,
        out_is_null,
        |d, t, i| d.get_bit64(t, i),
    )
}

/// Reads field `field` of `tuple` (`tuple_len` bytes; a `prolly_side` of `schema`) as a year (1901..=2155, or 0).
/// On success `*out_is_null` says whether the field is NULL, and `*out_value` is written only
/// when it is not. Fails with `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another
/// encoding, `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE` or `PROLLY_RESULT_ERR_BAD_TUPLE`.
#[no_mangle]
pub extern "C" fn prolly_field_year(
    schema: *const prolly_schema,
    side: u32,
    tuple: *const u8,
    tuple_len: usize,
    field: usize,
    out_value: *mut u16,
    out_is_null: *mut bool,
) -> prolly_result {
    get_field(
        schema,
        side,
        tuple,
        tuple_len,
        field,
        out_value,
        out_is_null,
        |d, t, i| d.get_year(t, i),
    )
}

/// Reads field `field` of `tuple` (`tuple_len` bytes; a `prolly_side` of `schema`) as a time (signed microseconds).
/// On success `*out_is_null` says whether the field is NULL, and `*out_value` is written only
/// when it is not. Fails with `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another
/// encoding, `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE` or `PROLLY_RESULT_ERR_BAD_TUPLE`.
#[no_mangle]
pub extern "C" fn prolly_field_time(
    schema: *const prolly_schema,
    side: u32,
    tuple: *const u8,
    tuple_len: usize,
    field: usize,
    out_value: *mut i64,
    out_is_null: *mut bool,
) -> prolly_result {
    get_field(
        schema,
        side,
        tuple,
        tuple_len,
        field,
        out_value,
        out_is_null,
        |d, t, i| d.get_time(t, i),
    )
}

/// Reads field `field` of `tuple` (`tuple_len` bytes; a `prolly_side` of `schema`) as a datetime (Unix microseconds UTC).
/// On success `*out_is_null` says whether the field is NULL, and `*out_value` is written only
/// when it is not. Fails with `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another
/// encoding, `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE` or `PROLLY_RESULT_ERR_BAD_TUPLE`.
#[no_mangle]
pub extern "C" fn prolly_field_datetime(
    schema: *const prolly_schema,
    side: u32,
    tuple: *const u8,
    tuple_len: usize,
    field: usize,
    out_value: *mut i64,
    out_is_null: *mut bool,
) -> prolly_result {
    get_field(
        schema,
        side,
        tuple,
        tuple_len,
        field,
        out_value,
        out_is_null,
        |d, t, i| d.get_datetime(t, i),
    )
}

/// Reads field `field` of `tuple` (`tuple_len` bytes; a `prolly_side` of `schema`) as an enum (member index).
/// On success `*out_is_null` says whether the field is NULL, and `*out_value` is written only
/// when it is not. Fails with `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another
/// encoding, `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE` or `PROLLY_RESULT_ERR_BAD_TUPLE`.
#[no_mangle]
pub extern "C" fn prolly_field_enum(
    schema: *const prolly_schema,
    side: u32,
    tuple: *const u8,
    tuple_len: usize,
    field: usize,
    out_value: *mut u16,
    out_is_null: *mut bool,
) -> prolly_result {
    get_field(
        schema,
        side,
        tuple,
        tuple_len,
        field,
        out_value,
        out_is_null,
        |d, t, i| d.get_enum(t, i),
    )
}

/// Reads field `field` of `tuple` (`tuple_len` bytes; a `prolly_side` of `schema`) as a set (member bitmask).
/// On success `*out_is_null` says whether the field is NULL, and `*out_value` is written only
/// when it is not. Fails with `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another
/// encoding, `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE` or `PROLLY_RESULT_ERR_BAD_TUPLE`.
#[no_mangle]
pub extern "C" fn prolly_field_set(
    schema: *const prolly_schema,
    side: u32,
    tuple: *const u8,
    tuple_len: usize,
    field: usize,
    out_value: *mut u64,
    out_is_null: *mut bool,
) -> prolly_result {
    get_field(
        schema,
        side,
        tuple,
        tuple_len,
        field,
        out_value,
        out_is_null,
        |d, t, i| d.get_set(t, i),
    )
}

/// Reads field `field` of `tuple` (`tuple_len` bytes; a `prolly_side` of `schema`) as a BOOL (an int8 field; non-zero is true).
/// On success `*out_is_null` says whether the field is NULL, and `*out_value` is written only
/// when it is not. Fails with `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another
/// encoding, `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE` or `PROLLY_RESULT_ERR_BAD_TUPLE`.
#[no_mangle]
pub extern "C" fn prolly_field_bool(
    schema: *const prolly_schema,
    side: u32,
    tuple: *const u8,
    tuple_len: usize,
    field: usize,
    out_value: *mut bool,
    out_is_null: *mut bool,
) -> prolly_result {
    get_field(
        schema,
        side,
        tuple,
        tuple_len,
        field,
        out_value,
        out_is_null,
        |d, t, i| d.get_bool(t, i),
    )
}

/// Reads field `field` of `tuple` (`tuple_len` bytes; a `prolly_side` of `schema`) as a date.
/// On success `*out_is_null` says whether the field is NULL, and `*out_value` is written only
/// when it is not. Fails with `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another
/// encoding, `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE` or `PROLLY_RESULT_ERR_BAD_TUPLE`.
#[no_mangle]
pub extern "C" fn prolly_field_date(
    schema: *const prolly_schema,
    side: u32,
    tuple: *const u8,
    tuple_len: usize,
    field: usize,
    out_value: *mut prolly_date,
    out_is_null: *mut bool,
) -> prolly_result {
    get_field(
        schema,
        side,
        tuple,
        tuple_len,
        field,
        out_value,
        out_is_null,
        |d, t, i| {
            Ok(d.get_date(t, i)?.map(|x| prolly_date {
                year: x.year,
                month: x.month,
                day: x.day,
            }))
        },
    )
}

/// Reads field `field` of `tuple` (`tuple_len` bytes; a `prolly_side` of `schema`) as a hash128.
/// On success `*out_is_null` says whether the field is NULL, and `*out_value` is written only
/// when it is not. Fails with `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another
/// encoding, `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE` or `PROLLY_RESULT_ERR_BAD_TUPLE`.
#[no_mangle]
pub extern "C" fn prolly_field_hash128(
    schema: *const prolly_schema,
    side: u32,
    tuple: *const u8,
    tuple_len: usize,
    field: usize,
    out_value: *mut prolly_hash128,
    out_is_null: *mut bool,
) -> prolly_result {
    get_field(
        schema,
        side,
        tuple,
        tuple_len,
        field,
        out_value,
        out_is_null,
        |d, t, i| Ok(d.get_hash128(t, i)?.map(|bytes| prolly_hash128 { bytes })),
    )
}

/// Reads field `field` of `tuple` (`tuple_len` bytes; a `prolly_side` of `schema`) as a spatial cell.
/// On success `*out_is_null` says whether the field is NULL, and `*out_value` is written only
/// when it is not. Fails with `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another
/// encoding, `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE` or `PROLLY_RESULT_ERR_BAD_TUPLE`.
#[no_mangle]
pub extern "C" fn prolly_field_cell(
    schema: *const prolly_schema,
    side: u32,
    tuple: *const u8,
    tuple_len: usize,
    field: usize,
    out_value: *mut prolly_cell,
    out_is_null: *mut bool,
) -> prolly_result {
    get_field(
        schema,
        side,
        tuple,
        tuple_len,
        field,
        out_value,
        out_is_null,
        |d, t, i| Ok(d.get_cell(t, i)?.map(|bytes| prolly_cell { bytes })),
    )
}

/// Reads field `field` of `tuple` (`tuple_len` bytes; a `prolly_side` of `schema`) as an address (any `*_addr` encoding).
/// On success `*out_is_null` says whether the field is NULL, and `*out_value` is written only
/// when it is not. Fails with `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another
/// encoding, `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE` or `PROLLY_RESULT_ERR_BAD_TUPLE`.
#[no_mangle]
pub extern "C" fn prolly_field_address(
    schema: *const prolly_schema,
    side: u32,
    tuple: *const u8,
    tuple_len: usize,
    field: usize,
    out_value: *mut prolly_address,
    out_is_null: *mut bool,
) -> prolly_result {
    get_field(
        schema,
        side,
        tuple,
        tuple_len,
        field,
        out_value,
        out_is_null,
        |d, t, i| Ok(d.get_address(t, i)?.map(prolly_address::from)),
    )
}

/// Reads field `field` of `tuple` (`tuple_len` bytes; a `prolly_side` of `schema`) as a decimal (the coefficient points into the tuple).
/// On success `*out_is_null` says whether the field is NULL, and `*out_value` is written only
/// when it is not. Fails with `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another
/// encoding, `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE` or `PROLLY_RESULT_ERR_BAD_TUPLE`.
#[no_mangle]
pub extern "C" fn prolly_field_decimal(
    schema: *const prolly_schema,
    side: u32,
    tuple: *const u8,
    tuple_len: usize,
    field: usize,
    out_value: *mut prolly_decimal,
    out_is_null: *mut bool,
) -> prolly_result {
    get_field(
        schema,
        side,
        tuple,
        tuple_len,
        field,
        out_value,
        out_is_null,
        |d, t, i| Ok(d.get_decimal(t, i)?.map(decimal_out)),
    )
}

/// Reads field `field` of `tuple` (`tuple_len` bytes; a `prolly_side` of `schema`) as an adaptive value of any adaptive encoding (inline payloads point into the tuple).
/// On success `*out_is_null` says whether the field is NULL, and `*out_value` is written only
/// when it is not. Fails with `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another
/// encoding, `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE` or `PROLLY_RESULT_ERR_BAD_TUPLE`.
#[no_mangle]
pub extern "C" fn prolly_field_adaptive(
    schema: *const prolly_schema,
    side: u32,
    tuple: *const u8,
    tuple_len: usize,
    field: usize,
    out_value: *mut prolly_adaptive,
    out_is_null: *mut bool,
) -> prolly_result {
    get_field(
        schema,
        side,
        tuple,
        tuple_len,
        field,
        out_value,
        out_is_null,
        |d, t, i| Ok(d.get_adaptive(t, i)?.map(adaptive_out)),
    )
}

/// Reads field `field` of `tuple` (`tuple_len` bytes; a `prolly_side` of `schema`) as a string (UTF-8 bytes, not checked):
/// `*out_data`/`*out_len` point into the tuple (no copy; not NUL-terminated) and are written only
/// when the field is not NULL; `*out_is_null` says whether it is. Errors as `prolly_field_int64`.
#[no_mangle]
pub extern "C" fn prolly_field_string(
    schema: *const prolly_schema,
    side: u32,
    tuple: *const u8,
    tuple_len: usize,
    field: usize,
    out_data: *mut *const u8,
    out_len: *mut usize,
    out_is_null: *mut bool,
) -> prolly_result {
    get_slice(
        schema,
        side,
        tuple,
        tuple_len,
        field,
        out_data,
        out_len,
        out_is_null,
        |d, t, i| d.get_string_bytes(t, i),
    )
}

/// Reads field `field` of `tuple` (`tuple_len` bytes; a `prolly_side` of `schema`) as bytes:
/// `*out_data`/`*out_len` point into the tuple (no copy; not NUL-terminated) and are written only
/// when the field is not NULL; `*out_is_null` says whether it is. Errors as `prolly_field_int64`.
#[no_mangle]
pub extern "C" fn prolly_field_bytes(
    schema: *const prolly_schema,
    side: u32,
    tuple: *const u8,
    tuple_len: usize,
    field: usize,
    out_data: *mut *const u8,
    out_len: *mut usize,
    out_is_null: *mut bool,
) -> prolly_result {
    get_slice(
        schema,
        side,
        tuple,
        tuple_len,
        field,
        out_data,
        out_len,
        out_is_null,
        |d, t, i| d.get_bytes(t, i),
    )
}

/// Reads field `field` of `tuple` (`tuple_len` bytes; a `prolly_side` of `schema`) as legacy inline JSON:
/// `*out_data`/`*out_len` point into the tuple (no copy; not NUL-terminated) and are written only
/// when the field is not NULL; `*out_is_null` says whether it is. Errors as `prolly_field_int64`.
#[no_mangle]
pub extern "C" fn prolly_field_json(
    schema: *const prolly_schema,
    side: u32,
    tuple: *const u8,
    tuple_len: usize,
    field: usize,
    out_data: *mut *const u8,
    out_len: *mut usize,
    out_is_null: *mut bool,
) -> prolly_result {
    get_slice(
        schema,
        side,
        tuple,
        tuple_len,
        field,
        out_data,
        out_len,
        out_is_null,
        |d, t, i| d.get_json(t, i),
    )
}

/// Reads field `field` of `tuple` (`tuple_len` bytes; a `prolly_side` of `schema`) as legacy inline geometry:
/// `*out_data`/`*out_len` point into the tuple (no copy; not NUL-terminated) and are written only
/// when the field is not NULL; `*out_is_null` says whether it is. Errors as `prolly_field_int64`.
#[no_mangle]
pub extern "C" fn prolly_field_geometry(
    schema: *const prolly_schema,
    side: u32,
    tuple: *const u8,
    tuple_len: usize,
    field: usize,
    out_data: *mut *const u8,
    out_len: *mut usize,
    out_is_null: *mut bool,
) -> prolly_result {
    get_slice(
        schema,
        side,
        tuple,
        tuple_len,
        field,
        out_data,
        out_len,
        out_is_null,
        |d, t, i| d.get_geometry(t, i),
    )
}

/// Reads field `field` of `tuple` (`tuple_len` bytes; a `prolly_side` of `schema`) as extended (handler) bytes:
/// `*out_data`/`*out_len` point into the tuple (no copy; not NUL-terminated) and are written only
/// when the field is not NULL; `*out_is_null` says whether it is. Errors as `prolly_field_int64`.
#[no_mangle]
pub extern "C" fn prolly_field_extended(
    schema: *const prolly_schema,
    side: u32,
    tuple: *const u8,
    tuple_len: usize,
    field: usize,
    out_data: *mut *const u8,
    out_len: *mut usize,
    out_is_null: *mut bool,
) -> prolly_result {
    get_slice(
        schema,
        side,
        tuple,
        tuple_len,
        field,
        out_data,
        out_len,
        out_is_null,
        |d, t, i| d.get_extended(t, i),
    )
}

/// Sets field `field` of the tuple being built to an int8. Fails with
/// `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another encoding,
/// `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE`, or `PROLLY_RESULT_ERR_BAD_VALUE` if the value cannot be
/// stored.
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_put_int8(
    builder: *mut prolly_tuple_builder,
    field: usize,
    value: i8,
) -> prolly_result {
    put_field(builder, |b| Ok(b.put_int8(field, value)?))
}

/// Sets field `field` of the tuple being built to a uint8. Fails with
/// `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another encoding,
/// `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE`, or `PROLLY_RESULT_ERR_BAD_VALUE` if the value cannot be
/// stored.
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_put_uint8(
    builder: *mut prolly_tuple_builder,
    field: usize,
    value: u8,
) -> prolly_result {
    put_field(builder, |b| Ok(b.put_uint8(field, value)?))
}

/// Sets field `field` of the tuple being built to an int16. Fails with
/// `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another encoding,
/// `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE`, or `PROLLY_RESULT_ERR_BAD_VALUE` if the value cannot be
/// stored.
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_put_int16(
    builder: *mut prolly_tuple_builder,
    field: usize,
    value: i16,
) -> prolly_result {
    put_field(builder, |b| Ok(b.put_int16(field, value)?))
}

/// Sets field `field` of the tuple being built to a uint16. Fails with
/// `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another encoding,
/// `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE`, or `PROLLY_RESULT_ERR_BAD_VALUE` if the value cannot be
/// stored.
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_put_uint16(
    builder: *mut prolly_tuple_builder,
    field: usize,
    value: u16,
) -> prolly_result {
    put_field(builder, |b| Ok(b.put_uint16(field, value)?))
}

/// Sets field `field` of the tuple being built to an int32. Fails with
/// `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another encoding,
/// `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE`, or `PROLLY_RESULT_ERR_BAD_VALUE` if the value cannot be
/// stored.
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_put_int32(
    builder: *mut prolly_tuple_builder,
    field: usize,
    value: i32,
) -> prolly_result {
    put_field(builder, |b| Ok(b.put_int32(field, value)?))
}

/// Sets field `field` of the tuple being built to a uint32. Fails with
/// `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another encoding,
/// `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE`, or `PROLLY_RESULT_ERR_BAD_VALUE` if the value cannot be
/// stored.
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_put_uint32(
    builder: *mut prolly_tuple_builder,
    field: usize,
    value: u32,
) -> prolly_result {
    put_field(builder, |b| Ok(b.put_uint32(field, value)?))
}

/// Sets field `field` of the tuple being built to an int64. Fails with
/// `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another encoding,
/// `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE`, or `PROLLY_RESULT_ERR_BAD_VALUE` if the value cannot be
/// stored.
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_put_int64(
    builder: *mut prolly_tuple_builder,
    field: usize,
    value: i64,
) -> prolly_result {
    put_field(builder, |b| Ok(b.put_int64(field, value)?))
}

/// Sets field `field` of the tuple being built to a uint64. Fails with
/// `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another encoding,
/// `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE`, or `PROLLY_RESULT_ERR_BAD_VALUE` if the value cannot be
/// stored.
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_put_uint64(
    builder: *mut prolly_tuple_builder,
    field: usize,
    value: u64,
) -> prolly_result {
    put_field(builder, |b| Ok(b.put_uint64(field, value)?))
}

/// Sets field `field` of the tuple being built to a float32. Fails with
/// `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another encoding,
/// `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE`, or `PROLLY_RESULT_ERR_BAD_VALUE` if the value cannot be
/// stored.
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_put_float32(
    builder: *mut prolly_tuple_builder,
    field: usize,
    value: f32,
) -> prolly_result {
    put_field(builder, |b| Ok(b.put_float32(field, value)?))
}

/// Sets field `field` of the tuple being built to a float64. Fails with
/// `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another encoding,
/// `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE`, or `PROLLY_RESULT_ERR_BAD_VALUE` if the value cannot be
/// stored.
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_put_float64(
    builder: *mut prolly_tuple_builder,
    field: usize,
    value: f64,
) -> prolly_result {
    put_field(builder, |b| Ok(b.put_float64(field, value)?))
}

/// Sets field `field` of the tuple being built to a bit64. Fails with
/// `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another encoding,
/// `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE`, or `PROLLY_RESULT_ERR_BAD_VALUE` if the value cannot be
/// stored.
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_put_bit64(
    builder: *mut prolly_tuple_builder,
    field: usize,
    value: u64,
) -> prolly_result {
    put_field(builder, |b| Ok(b.put_bit64(field, value)?))
}

/// Sets field `field` of the tuple being built to a year (1901..=2155, or 0). Fails with
/// `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another encoding,
/// `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE`, or `PROLLY_RESULT_ERR_BAD_VALUE` if the value cannot be
/// stored.
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_put_year(
    builder: *mut prolly_tuple_builder,
    field: usize,
    value: u16,
) -> prolly_result {
    put_field(builder, |b| Ok(b.put_year(field, value)?))
}

/// Sets field `field` of the tuple being built to a time (signed microseconds). Fails with
/// `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another encoding,
/// `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE`, or `PROLLY_RESULT_ERR_BAD_VALUE` if the value cannot be
/// stored.
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_put_time(
    builder: *mut prolly_tuple_builder,
    field: usize,
    value: i64,
) -> prolly_result {
    put_field(builder, |b| Ok(b.put_time(field, value)?))
}

/// Sets field `field` of the tuple being built to a datetime (Unix microseconds UTC). Fails with
/// `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another encoding,
/// `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE`, or `PROLLY_RESULT_ERR_BAD_VALUE` if the value cannot be
/// stored.
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_put_datetime(
    builder: *mut prolly_tuple_builder,
    field: usize,
    value: i64,
) -> prolly_result {
    put_field(builder, |b| Ok(b.put_datetime(field, value)?))
}

/// Sets field `field` of the tuple being built to an enum (member index). Fails with
/// `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another encoding,
/// `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE`, or `PROLLY_RESULT_ERR_BAD_VALUE` if the value cannot be
/// stored.
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_put_enum(
    builder: *mut prolly_tuple_builder,
    field: usize,
    value: u16,
) -> prolly_result {
    put_field(builder, |b| Ok(b.put_enum(field, value)?))
}

/// Sets field `field` of the tuple being built to a set (member bitmask). Fails with
/// `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another encoding,
/// `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE`, or `PROLLY_RESULT_ERR_BAD_VALUE` if the value cannot be
/// stored.
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_put_set(
    builder: *mut prolly_tuple_builder,
    field: usize,
    value: u64,
) -> prolly_result {
    put_field(builder, |b| Ok(b.put_set(field, value)?))
}

/// Sets field `field` of the tuple being built to NULL (`PROLLY_RESULT_ERR_BAD_VALUE` at build time if the field is not nullable). Fails with
/// `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another encoding,
/// `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE`, or `PROLLY_RESULT_ERR_BAD_VALUE` if the value cannot be
/// stored.
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_put_null(
    builder: *mut prolly_tuple_builder,
    field: usize,
) -> prolly_result {
    put_field(builder, |b| Ok(b.put_null(field)?))
}

/// Sets field `field` of the tuple being built to a BOOL (an int8 field: 1 or 0). Fails with
/// `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another encoding,
/// `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE`, or `PROLLY_RESULT_ERR_BAD_VALUE` if the value cannot be
/// stored.
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_put_bool(
    builder: *mut prolly_tuple_builder,
    field: usize,
    value: bool,
) -> prolly_result {
    put_field(builder, |b| Ok(b.put_bool(field, value)?))
}

/// Sets field `field` of the tuple being built to a date. Fails with
/// `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another encoding,
/// `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE`, or `PROLLY_RESULT_ERR_BAD_VALUE` if the value cannot be
/// stored.
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_put_date(
    builder: *mut prolly_tuple_builder,
    field: usize,
    value: prolly_date,
) -> prolly_result {
    put_field(builder, |b| {
        let d = Date {
            year: value.year,
            month: value.month,
            day: value.day,
        };
        Ok(b.put_date(field, d)?)
    })
}

/// Sets field `field` of the tuple being built to a hash128. Fails with
/// `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another encoding,
/// `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE`, or `PROLLY_RESULT_ERR_BAD_VALUE` if the value cannot be
/// stored.
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_put_hash128(
    builder: *mut prolly_tuple_builder,
    field: usize,
    value: *const prolly_hash128,
) -> prolly_result {
    put_field(builder, |b| {
        // SAFETY: C caller's contract: NULL or readable.
        let v = unsafe { crate::args::input(value, "value") }?;
        Ok(b.put_hash128(field, &v.bytes)?)
    })
}

/// Sets field `field` of the tuple being built to a spatial cell. Fails with
/// `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another encoding,
/// `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE`, or `PROLLY_RESULT_ERR_BAD_VALUE` if the value cannot be
/// stored.
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_put_cell(
    builder: *mut prolly_tuple_builder,
    field: usize,
    value: *const prolly_cell,
) -> prolly_result {
    put_field(builder, |b| {
        // SAFETY: C caller's contract: NULL or readable.
        let v = unsafe { crate::args::input(value, "value") }?;
        Ok(b.put_cell(field, &v.bytes)?)
    })
}

/// Sets field `field` of the tuple being built to an address (any `*_addr` encoding). Fails with
/// `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another encoding,
/// `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE`, or `PROLLY_RESULT_ERR_BAD_VALUE` if the value cannot be
/// stored.
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_put_address(
    builder: *mut prolly_tuple_builder,
    field: usize,
    value: *const prolly_address,
) -> prolly_result {
    put_field(builder, |b| {
        // SAFETY: C caller's contract: NULL or readable.
        let v = unsafe { crate::args::input(value, "value") }?;
        Ok(b.put_address(field, &Address::from(*v))?)
    })
}

/// Sets field `field` of the tuple being built to a decimal. Fails with
/// `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another encoding,
/// `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE`, or `PROLLY_RESULT_ERR_BAD_VALUE` if the value cannot be
/// stored.
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_put_decimal(
    builder: *mut prolly_tuple_builder,
    field: usize,
    value: *const prolly_decimal,
) -> prolly_result {
    put_field(builder, |b| {
        // SAFETY: C caller's contract: NULL or readable.
        let v = unsafe { crate::args::input(value, "value") }?;
        // SAFETY: C caller's contract: `coefficient_len` readable bytes.
        let c = unsafe { bytes(v.coefficient, v.coefficient_len, "value.coefficient") }?;
        let d = match v.form {
            0 => Decimal::finite(v.exponent, v.negative != 0, c),
            1 => Decimal::NAN,
            2 => Decimal::POS_INFINITY,
            3 => Decimal::NEG_INFINITY,
            f => return Err(Error::invalid(format!("unknown decimal form {f}"))),
        };
        Ok(b.put_decimal(field, &d)?)
    })
}

/// Sets field `field` of the tuple being built to UTF-8 text of `len` bytes (no NUL needed; checked). Fails with
/// `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another encoding,
/// `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE`, or `PROLLY_RESULT_ERR_BAD_VALUE` if the value cannot be
/// stored.
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_put_string(
    builder: *mut prolly_tuple_builder,
    field: usize,
    data: *const std::ffi::c_char,
    len: usize,
) -> prolly_result {
    put_field(builder, |b| {
        // SAFETY: C caller's contract: `len` readable bytes.
        let d = unsafe { bytes(data.cast::<u8>(), len, "data") }?;
        let d = std::str::from_utf8(d).map_err(|e| {
            Error::new(
                prolly_result::ErrBadValue,
                format!(
                    "field {field}: the string is not UTF-8 (bad byte at offset {})",
                    e.valid_up_to()
                ),
            )
        })?;
        Ok(b.put_string(field, d)?)
    })
}

/// Sets field `field` of the tuple being built to `len` bytes. Fails with
/// `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another encoding,
/// `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE`, or `PROLLY_RESULT_ERR_BAD_VALUE` if the value cannot be
/// stored.
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_put_bytes(
    builder: *mut prolly_tuple_builder,
    field: usize,
    data: *const u8,
    len: usize,
) -> prolly_result {
    put_field(builder, |b| {
        // SAFETY: C caller's contract: `len` readable bytes.
        let d = unsafe { bytes(data, len, "data") }?;
        Ok(b.put_bytes(field, d)?)
    })
}

/// Sets field `field` of the tuple being built to legacy inline JSON text. Fails with
/// `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another encoding,
/// `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE`, or `PROLLY_RESULT_ERR_BAD_VALUE` if the value cannot be
/// stored.
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_put_json(
    builder: *mut prolly_tuple_builder,
    field: usize,
    data: *const u8,
    len: usize,
) -> prolly_result {
    put_field(builder, |b| {
        // SAFETY: C caller's contract: `len` readable bytes.
        let d = unsafe { bytes(data, len, "data") }?;
        Ok(b.put_json(field, d)?)
    })
}

/// Sets field `field` of the tuple being built to legacy inline geometry bytes. Fails with
/// `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another encoding,
/// `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE`, or `PROLLY_RESULT_ERR_BAD_VALUE` if the value cannot be
/// stored.
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_put_geometry(
    builder: *mut prolly_tuple_builder,
    field: usize,
    data: *const u8,
    len: usize,
) -> prolly_result {
    put_field(builder, |b| {
        // SAFETY: C caller's contract: `len` readable bytes.
        let d = unsafe { bytes(data, len, "data") }?;
        Ok(b.put_geometry(field, d)?)
    })
}

/// Sets field `field` of the tuple being built to extended (handler) bytes. Fails with
/// `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another encoding,
/// `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE`, or `PROLLY_RESULT_ERR_BAD_VALUE` if the value cannot be
/// stored.
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_put_extended(
    builder: *mut prolly_tuple_builder,
    field: usize,
    data: *const u8,
    len: usize,
) -> prolly_result {
    put_field(builder, |b| {
        // SAFETY: C caller's contract: `len` readable bytes.
        let d = unsafe { bytes(data, len, "data") }?;
        Ok(b.put_extended(field, d)?)
    })
}

/// Sets field `field` of the tuple being built to an adaptive value given inline (any adaptive encoding); building moves it out of band into a blob tree when the row is too large (`prolly_tuple_builder_build_in`). Fails with
/// `PROLLY_RESULT_ERR_WRONG_ENCODING` if the field has another encoding,
/// `PROLLY_RESULT_ERR_FIELD_OUT_OF_RANGE`, or `PROLLY_RESULT_ERR_BAD_VALUE` if the value cannot be
/// stored.
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_put_adaptive(
    builder: *mut prolly_tuple_builder,
    field: usize,
    data: *const u8,
    len: usize,
) -> prolly_result {
    put_field(builder, |b| {
        // SAFETY: C caller's contract: `len` readable bytes.
        let d = unsafe { bytes(data, len, "data") }?;
        Ok(b.put_adaptive_inline(field, d)?)
    })
}
