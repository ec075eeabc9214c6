//! Decoded field values: adaptive values, and the generic [`Value`] covering every encoding.

use super::decimal::Decimal;
use super::temporal::Date;
use crate::{varint, Address, Encoding, ADDRESS_LEN};

/// `bytes` as text if they are UTF-8. Most stored text is ASCII, and a word-at-a-time ASCII
/// check of a short value costs a fraction of the general UTF-8 check (callgrind: a row of
/// `varchar, bigint, json` read as values 1,716 → 1,611 instructions, and as typed datums
/// 2,274 → 2,071; the Arrow scan of the mixed 1M-row bench table 2,417 → 2,073 a row).
/// Every reader of stored text goes through it.
#[inline]
pub fn text_of(bytes: &[u8]) -> Option<&str> {
    if bytes.is_ascii() {
        // SAFETY: every ASCII byte sequence is valid UTF-8.
        return Some(unsafe { std::str::from_utf8_unchecked(bytes) });
    }
    std::str::from_utf8(bytes).ok()
}

/// An adaptive value (TEXT, BLOB, JSON, GEOMETRY, VECTOR in new tables): stored inline after a
/// `0x00` header, or out of band as a SQLite4 varint length and the address of a blob tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Adaptive<'a> {
    /// The payload, stored in the tuple.
    Inline(&'a [u8]),
    /// The payload lives in a blob tree.
    OutOfBand {
        /// Payload length in bytes.
        len: u64,
        /// Root of the blob tree.
        address: Address,
    },
}

impl<'a> Adaptive<'a> {
    /// Parses a stored (non-NULL) adaptive field. `None` if an out-of-band form is malformed
    /// (truncated varint, not exactly 20 address bytes) or the field is empty.
    pub fn from_bytes(bytes: &'a [u8]) -> Option<Adaptive<'a>> {
        match bytes.split_first()? {
            (0, payload) => Some(Adaptive::Inline(payload)),
            _ => {
                let (len, n) = varint::get_sqlite4(bytes)?;
                let address = Address::from_slice(bytes.get(n..)?)?;
                Some(Adaptive::OutOfBand { len, address })
            }
        }
    }

    /// Whether `bytes` is an adaptive value exactly as Dolt writes it (out-of-band lengths in
    /// their shortest varint).
    pub fn is_canonical(bytes: &[u8]) -> bool {
        match Adaptive::from_bytes(bytes) {
            Some(Adaptive::Inline(_)) => true,
            Some(Adaptive::OutOfBand { len, .. }) => {
                bytes.len() == varint::sqlite4_len(len) + ADDRESS_LEN
            }
            None => false,
        }
    }

    /// The payload length, inline or not.
    pub fn len(&self) -> u64 {
        match self {
            Adaptive::Inline(p) => p.len() as u64,
            Adaptive::OutOfBand { len, .. } => *len,
        }
    }

    /// True for an empty inline payload.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True for the out-of-band form.
    pub fn is_out_of_band(&self) -> bool {
        matches!(self, Adaptive::OutOfBand { .. })
    }

    /// Bytes of the stored form.
    pub fn encoded_len(&self) -> usize {
        match self {
            Adaptive::Inline(p) => 1 + p.len(),
            Adaptive::OutOfBand { len, .. } => varint::sqlite4_len(*len) + ADDRESS_LEN,
        }
    }

    /// Appends the stored form.
    pub fn write(&self, out: &mut Vec<u8>) {
        match self {
            Adaptive::Inline(p) => {
                out.push(0);
                out.extend_from_slice(p);
            }
            Adaptive::OutOfBand { len, address } => {
                varint::put_sqlite4(out, *len);
                out.extend_from_slice(address.as_bytes());
            }
        }
    }
}

/// One decoded field of any encoding; what [`TupleDesc::value`](super::TupleDesc::value)
/// returns and [`TupleBuilder::put`](super::TupleBuilder::put) takes. Borrows from the tuple.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value<'a> {
    /// int8 (also BOOL).
    Int8(i8),
    /// uint8.
    Uint8(u8),
    /// int16.
    Int16(i16),
    /// uint16.
    Uint16(u16),
    /// int32.
    Int32(i32),
    /// uint32.
    Uint32(u32),
    /// int64.
    Int64(i64),
    /// uint64.
    Uint64(u64),
    /// float32 (bit pattern preserved).
    Float32(f32),
    /// float64 (bit pattern preserved).
    Float64(f64),
    /// bit64.
    Bit64(u64),
    /// 16 raw bytes.
    Hash128([u8; 16]),
    /// The year (0, or 1901..=2155).
    Year(u16),
    /// A date's stored parts.
    Date(Date),
    /// TIME in signed microseconds.
    Time(i64),
    /// DATETIME/TIMESTAMP in Unix microseconds (UTC).
    Datetime(i64),
    /// 1-based enum member index (0 = empty).
    Enum(u16),
    /// Set member bitmask.
    Set(u64),
    /// Any `*_addr` encoding.
    Address(Address),
    /// Spatial cell: level + Z-value.
    Cell([u8; 17]),
    /// string, UTF-8, terminator stripped.
    String(&'a str),
    /// bytes, terminator stripped.
    Bytes(&'a [u8]),
    /// decimal.
    Decimal(Decimal<'a>),
    /// Legacy inline JSON text, terminator stripped.
    Json(&'a [u8]),
    /// Legacy inline geometry, terminator stripped.
    Geometry(&'a [u8]),
    /// Handler-serialized bytes, as stored.
    Extended(&'a [u8]),
    /// Any adaptive encoding.
    Adaptive(Adaptive<'a>),
}

impl Value<'_> {
    /// Whether this value can be stored in a field of encoding `enc`.
    pub fn fits(&self, enc: Encoding) -> bool {
        use Encoding as E;
        match self {
            Value::Int8(_) => enc == E::Int8,
            Value::Uint8(_) => enc == E::Uint8,
            Value::Int16(_) => enc == E::Int16,
            Value::Uint16(_) => enc == E::Uint16,
            Value::Int32(_) => enc == E::Int32,
            Value::Uint32(_) => enc == E::Uint32,
            Value::Int64(_) => enc == E::Int64,
            Value::Uint64(_) => enc == E::Uint64,
            Value::Float32(_) => enc == E::Float32,
            Value::Float64(_) => enc == E::Float64,
            Value::Bit64(_) => enc == E::Bit64,
            Value::Hash128(_) => enc == E::Hash128,
            Value::Year(_) => enc == E::Year,
            Value::Date(_) => enc == E::Date,
            Value::Time(_) => enc == E::Time,
            Value::Datetime(_) => enc == E::Datetime,
            Value::Enum(_) => enc == E::Enum,
            Value::Set(_) => enc == E::Set,
            Value::Address(_) => enc.is_address(),
            Value::Cell(_) => enc == E::Cell,
            Value::String(_) => enc == E::String,
            Value::Bytes(_) => enc == E::Bytes,
            Value::Decimal(_) => enc == E::Decimal,
            Value::Json(_) => enc == E::Json,
            Value::Geometry(_) => enc == E::Geometry,
            Value::Extended(_) => enc == E::Extended,
            Value::Adaptive(_) => enc.is_adaptive(),
        }
    }
}
