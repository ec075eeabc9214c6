//! [`TupleBuilder`]: writes tuples byte for byte as Dolt's `val.TupleBuilder` does, including its
//! inline/out-of-band decision for adaptive values, and reuses its buffers across rows.

use std::cmp::Reverse;

use super::access::bad;
use super::decimal::Decimal;
use super::layout::{MAX_TUPLE_DATA_SIZE, MAX_TUPLE_FIELDS};
use super::temporal::{year_to_raw, Date};
use super::value::{Adaptive, Value};
use super::{Tuple, TupleDesc, TupleError};
use crate::{varint, Address, Encoding, ADDRESS_LEN};

/// Dolt's `DefaultTupleLengthTarget`: above this many bytes (counting adaptive values as if
/// inline) the builder moves adaptive values out of band.
pub const DEFAULT_TUPLE_LENGTH_TARGET: usize = 2048;

/// Error type of a [`BlobStore`].
pub type BlobError = Box<dyn std::error::Error + Send + Sync>;

/// Where adaptive values go when they move out of band, and come from when they move back
/// inline. The tuple builder cannot write blob trees itself; the tree layer provides this.
pub trait BlobStore {
    /// Writes `payload` as a blob tree and returns its root address (Dolt's
    /// `NodeStore.WriteBytes`).
    fn write_blob(&mut self, payload: &[u8]) -> Result<Address, BlobError>;

    /// Appends the `len` bytes of the blob tree at `address` to `out`. Needed only when a value
    /// given out of band must come back inline; the default refuses.
    fn read_blob(
        &mut self,
        address: &Address,
        len: u64,
        out: &mut Vec<u8>,
    ) -> Result<(), BlobError> {
        let _ = (address, len, out);
        Err("this blob store cannot read blobs".into())
    }
}

/// A [`BlobStore`] that has no blobs: building fails if a value must move.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoBlobStore;

impl BlobStore for NoBlobStore {
    fn write_blob(&mut self, _payload: &[u8]) -> Result<Address, BlobError> {
        Err("no blob store was given to the tuple builder".into())
    }
}

/// Where one field's current bytes are in the builder's data buffer.
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    start: u32,
    len: u32,
    /// Dolt's size accounting for this field (`inlineSize` contribution).
    budget: u64,
    /// An inline adaptive value larger than the target: Dolt writes it out of band at once.
    forced_out: bool,
    set: bool,
}

/// Builds tuples for one descriptor. Put fields by index in any order (unset fields are NULL),
/// then [`build`](TupleBuilder::build); the builder resets and its buffers are reused, so building
/// allocates nothing once they have grown.
#[derive(Debug)]
pub struct TupleBuilder {
    desc: TupleDesc,
    slots: Vec<Slot>,
    data: Vec<u8>,
    out: Vec<u8>,
    target: usize,
    candidates: Vec<(usize, u64)>,
    chosen: Vec<bool>,
    scratch: Vec<u8>,
}

impl TupleBuilder {
    /// A builder for `desc` with Dolt's default length target.
    pub fn new(desc: TupleDesc) -> TupleBuilder {
        let n = desc.len();
        TupleBuilder {
            desc,
            slots: vec![Slot::default(); n],
            data: Vec::with_capacity(128),
            out: Vec::with_capacity(128),
            target: DEFAULT_TUPLE_LENGTH_TARGET,
            candidates: Vec::new(),
            chosen: vec![false; n],
            scratch: Vec::new(),
        }
    }

    /// Uses another length target (a table's `target_row_size`).
    pub fn with_target(mut self, target: u16) -> TupleBuilder {
        self.target = usize::from(target);
        self
    }

    /// The descriptor.
    pub fn desc(&self) -> &TupleDesc {
        &self.desc
    }

    /// Forgets every put value.
    pub fn reset(&mut self) {
        self.slots.fill(Slot::default());
        self.data.clear();
    }

    fn check(
        &self,
        i: usize,
        ok: impl Fn(Encoding) -> bool,
        requested: Encoding,
    ) -> Result<Encoding, TupleError> {
        let enc = self.desc.type_of(i)?.enc;
        if ok(enc) {
            Ok(enc)
        } else {
            Err(TupleError::WrongEncoding {
                field: i,
                actual: enc,
                requested,
            })
        }
    }

    /// Stores the bytes `write` appends as field `i` with budget `budget`.
    fn store(
        &mut self,
        i: usize,
        budget: u64,
        write: impl FnOnce(&mut Vec<u8>),
    ) -> Result<(), TupleError> {
        let start = self.data.len();
        write(&mut self.data);
        let len = self.data.len() - start;
        if self.data.len() > u32::MAX as usize {
            self.data.truncate(start);
            return Err(TupleError::DataTooLarge { len });
        }
        let slot = self.slots.get_mut(i).ok_or(TupleError::FieldOutOfRange {
            field: i,
            len: self.desc.len(),
        })?;
        *slot = Slot {
            start: start as u32,
            len: len as u32,
            budget,
            forced_out: false,
            set: true,
        };
        Ok(())
    }

    fn put_fixed(&mut self, i: usize, enc: Encoding, bytes: &[u8]) -> Result<(), TupleError> {
        self.check(i, |e| e == enc, enc)?;
        // Dolt's PutYear counts 2 bytes toward the length target although it writes 1.
        let budget = if enc == Encoding::Year {
            2
        } else {
            bytes.len() as u64
        };
        self.store(i, budget, |d| d.extend_from_slice(bytes))
    }

    /// Sets field `i` to NULL.
    pub fn put_null(&mut self, i: usize) -> Result<(), TupleError> {
        self.desc.type_of(i)?;
        if let Some(s) = self.slots.get_mut(i) {
            *s = Slot::default();
        }
        Ok(())
    }

    /// Puts an int8.
    pub fn put_int8(&mut self, i: usize, v: i8) -> Result<(), TupleError> {
        self.put_fixed(i, Encoding::Int8, &v.to_le_bytes())
    }
    /// Puts a BOOL (int8 1 or 0).
    pub fn put_bool(&mut self, i: usize, v: bool) -> Result<(), TupleError> {
        self.put_int8(i, i8::from(v))
    }
    /// Puts a uint8.
    pub fn put_uint8(&mut self, i: usize, v: u8) -> Result<(), TupleError> {
        self.put_fixed(i, Encoding::Uint8, &[v])
    }
    /// Puts an int16.
    pub fn put_int16(&mut self, i: usize, v: i16) -> Result<(), TupleError> {
        self.put_fixed(i, Encoding::Int16, &v.to_le_bytes())
    }
    /// Puts a uint16.
    pub fn put_uint16(&mut self, i: usize, v: u16) -> Result<(), TupleError> {
        self.put_fixed(i, Encoding::Uint16, &v.to_le_bytes())
    }
    /// Puts an int32.
    pub fn put_int32(&mut self, i: usize, v: i32) -> Result<(), TupleError> {
        self.put_fixed(i, Encoding::Int32, &v.to_le_bytes())
    }
    /// Puts a uint32.
    pub fn put_uint32(&mut self, i: usize, v: u32) -> Result<(), TupleError> {
        self.put_fixed(i, Encoding::Uint32, &v.to_le_bytes())
    }
    /// Puts an int64.
    pub fn put_int64(&mut self, i: usize, v: i64) -> Result<(), TupleError> {
        self.put_fixed(i, Encoding::Int64, &v.to_le_bytes())
    }
    /// Puts a uint64.
    pub fn put_uint64(&mut self, i: usize, v: u64) -> Result<(), TupleError> {
        self.put_fixed(i, Encoding::Uint64, &v.to_le_bytes())
    }
    /// Puts a float32 (bits kept).
    pub fn put_float32(&mut self, i: usize, v: f32) -> Result<(), TupleError> {
        self.put_fixed(i, Encoding::Float32, &v.to_le_bytes())
    }
    /// Puts a float64 (bits kept).
    pub fn put_float64(&mut self, i: usize, v: f64) -> Result<(), TupleError> {
        self.put_fixed(i, Encoding::Float64, &v.to_le_bytes())
    }
    /// Puts a bit64.
    pub fn put_bit64(&mut self, i: usize, v: u64) -> Result<(), TupleError> {
        self.put_fixed(i, Encoding::Bit64, &v.to_le_bytes())
    }
    /// Puts a hash128.
    pub fn put_hash128(&mut self, i: usize, v: &[u8; 16]) -> Result<(), TupleError> {
        self.put_fixed(i, Encoding::Hash128, v)
    }
    /// Puts a YEAR (0, or 1901..=2155).
    pub fn put_year(&mut self, i: usize, year: u16) -> Result<(), TupleError> {
        let raw = year_to_raw(year).ok_or(TupleError::BadValue {
            field: i,
            encoding: Encoding::Year,
            reason: "a year outside 0 and 1901..=2155",
        })?;
        self.put_fixed(i, Encoding::Year, &[raw])
    }
    /// Puts a DATE.
    pub fn put_date(&mut self, i: usize, v: Date) -> Result<(), TupleError> {
        self.put_fixed(i, Encoding::Date, &v.to_raw().to_le_bytes())
    }
    /// Puts a TIME (signed microseconds).
    pub fn put_time(&mut self, i: usize, micros: i64) -> Result<(), TupleError> {
        self.put_fixed(i, Encoding::Time, &micros.to_le_bytes())
    }
    /// Puts a DATETIME (Unix microseconds, UTC).
    pub fn put_datetime(&mut self, i: usize, micros: i64) -> Result<(), TupleError> {
        self.put_fixed(i, Encoding::Datetime, &micros.to_le_bytes())
    }
    /// Puts an ENUM member index.
    pub fn put_enum(&mut self, i: usize, v: u16) -> Result<(), TupleError> {
        self.put_fixed(i, Encoding::Enum, &v.to_le_bytes())
    }
    /// Puts a SET bitmask.
    pub fn put_set(&mut self, i: usize, v: u64) -> Result<(), TupleError> {
        self.put_fixed(i, Encoding::Set, &v.to_le_bytes())
    }
    /// Puts a cell.
    pub fn put_cell(&mut self, i: usize, v: &[u8; 17]) -> Result<(), TupleError> {
        self.put_fixed(i, Encoding::Cell, v)
    }
    /// Puts an address into any `*_addr` field.
    pub fn put_address(&mut self, i: usize, v: &Address) -> Result<(), TupleError> {
        self.check(i, Encoding::is_address, Encoding::BytesAddr)?;
        self.store(i, ADDRESS_LEN as u64, |d| d.extend_from_slice(v.as_bytes()))
    }

    fn put_terminated(&mut self, i: usize, enc: Encoding, v: &[u8]) -> Result<(), TupleError> {
        self.check(i, |e| e == enc, enc)?;
        self.store(i, v.len() as u64 + 1, |d| {
            d.extend_from_slice(v);
            d.push(0);
        })
    }
    /// Puts a string (a 0x00 terminator is added; interior 0x00 bytes are allowed).
    pub fn put_string(&mut self, i: usize, v: &str) -> Result<(), TupleError> {
        self.put_terminated(i, Encoding::String, v.as_bytes())
    }
    /// Puts string bytes without UTF-8 checking.
    pub fn put_string_bytes(&mut self, i: usize, v: &[u8]) -> Result<(), TupleError> {
        self.put_terminated(i, Encoding::String, v)
    }
    /// Puts bytes.
    pub fn put_bytes(&mut self, i: usize, v: &[u8]) -> Result<(), TupleError> {
        self.put_terminated(i, Encoding::Bytes, v)
    }
    /// Puts legacy inline JSON text.
    pub fn put_json(&mut self, i: usize, v: &[u8]) -> Result<(), TupleError> {
        self.put_terminated(i, Encoding::Json, v)
    }
    /// Puts legacy inline geometry.
    pub fn put_geometry(&mut self, i: usize, v: &[u8]) -> Result<(), TupleError> {
        self.put_terminated(i, Encoding::Geometry, v)
    }
    /// Puts handler bytes into an extended field (must be non-empty: empty would read as NULL).
    pub fn put_extended(&mut self, i: usize, v: &[u8]) -> Result<(), TupleError> {
        self.check(i, |e| e == Encoding::Extended, Encoding::Extended)?;
        if v.is_empty() {
            return Err(TupleError::BadValue {
                field: i,
                encoding: Encoding::Extended,
                reason: "an empty extended value",
            });
        }
        self.store(i, v.len() as u64, |d| d.extend_from_slice(v))
    }
    /// Puts a decimal, written as Dolt writes it (fewest 8-byte coefficient words).
    pub fn put_decimal(&mut self, i: usize, v: &Decimal<'_>) -> Result<(), TupleError> {
        self.check(i, |e| e == Encoding::Decimal, Encoding::Decimal)?;
        self.store(i, v.encoded_len() as u64, |d| v.write(d))
    }

    /// Puts an adaptive value given inline (Dolt's `PutAdaptive*FromInline`). If its inline form
    /// exceeds the length target it goes out of band at build time; otherwise build decides.
    pub fn put_adaptive_inline(&mut self, i: usize, payload: &[u8]) -> Result<(), TupleError> {
        self.check(i, Encoding::is_adaptive, Encoding::BytesAdaptive)?;
        let inline = payload.len() as u64 + 1;
        self.store(i, inline, |d| {
            d.push(0);
            d.extend_from_slice(payload);
        })?;
        if let Some(s) = self.slots.get_mut(i) {
            s.forced_out = inline > self.target as u64;
        }
        Ok(())
    }

    /// Puts an adaptive value already stored as a blob (Dolt's `PutAdaptive*FromOutline`). It
    /// stays out of band unless the build must bring it back inline (which needs
    /// [`BlobStore::read_blob`]). An empty value cannot be out of band: its length byte would
    /// read back as the inline marker, so `len == 0` is refused.
    pub fn put_adaptive_out_of_band(
        &mut self,
        i: usize,
        len: u64,
        address: &Address,
    ) -> Result<(), TupleError> {
        let enc = self.check(i, Encoding::is_adaptive, Encoding::BytesAdaptive)?;
        if len == 0 {
            return Err(bad(i, enc, "an out-of-band value cannot be empty"));
        }
        self.store(i, len.saturating_add(1), |d| {
            Adaptive::OutOfBand {
                len,
                address: *address,
            }
            .write(d)
        })
    }

    /// Puts stored bytes as they are (no checks beyond the field index); counts their length
    /// toward the length target, as Dolt's `PutRaw`. An empty slice means NULL.
    pub fn put_raw(&mut self, i: usize, bytes: &[u8]) -> Result<(), TupleError> {
        self.desc.type_of(i)?;
        if bytes.is_empty() {
            return self.put_null(i);
        }
        self.store(i, bytes.len() as u64, |d| d.extend_from_slice(bytes))
    }

    /// Puts any value (or NULL for `None`), dispatching on its variant; the variant must fit the
    /// field's encoding ([`Value::fits`]). The typed put each variant goes to checks that, so a
    /// misfit is that put's `WrongEncoding` error (no second check here: it was a quarter of a
    /// typed row encode's overhead).
    #[inline]
    pub fn put(&mut self, i: usize, v: Option<Value<'_>>) -> Result<(), TupleError> {
        let Some(v) = v else { return self.put_null(i) };
        match v {
            Value::Int8(x) => self.put_int8(i, x),
            Value::Uint8(x) => self.put_uint8(i, x),
            Value::Int16(x) => self.put_int16(i, x),
            Value::Uint16(x) => self.put_uint16(i, x),
            Value::Int32(x) => self.put_int32(i, x),
            Value::Uint32(x) => self.put_uint32(i, x),
            Value::Int64(x) => self.put_int64(i, x),
            Value::Uint64(x) => self.put_uint64(i, x),
            Value::Float32(x) => self.put_float32(i, x),
            Value::Float64(x) => self.put_float64(i, x),
            Value::Bit64(x) => self.put_bit64(i, x),
            Value::Hash128(x) => self.put_hash128(i, &x),
            Value::Year(x) => self.put_year(i, x),
            Value::Date(x) => self.put_date(i, x),
            Value::Time(x) => self.put_time(i, x),
            Value::Datetime(x) => self.put_datetime(i, x),
            Value::Enum(x) => self.put_enum(i, x),
            Value::Set(x) => self.put_set(i, x),
            Value::Address(x) => self.put_address(i, &x),
            Value::Cell(x) => self.put_cell(i, &x),
            Value::String(x) => self.put_string(i, x),
            Value::Bytes(x) => self.put_bytes(i, x),
            Value::Decimal(x) => self.put_decimal(i, &x),
            Value::Json(x) => self.put_json(i, x),
            Value::Geometry(x) => self.put_geometry(i, x),
            Value::Extended(x) => self.put_extended(i, x),
            Value::Adaptive(Adaptive::Inline(p)) => self.put_adaptive_inline(i, p),
            Value::Adaptive(Adaptive::OutOfBand { len, address }) => {
                self.put_adaptive_out_of_band(i, len, &address)
            }
        }
    }

    /// Builds the tuple without a blob store (fails if an adaptive value must move) and resets
    /// the builder. The tuple borrows the builder until the next build.
    pub fn build(&mut self) -> Result<Tuple<'_>, TupleError> {
        self.build_with(&mut NoBlobStore)
    }

    /// Builds the tuple, moving adaptive values out of band (or back inline) through `store` as
    /// Dolt's `TupleBuilder.Build` does, and resets the builder.
    pub fn build_with(&mut self, store: &mut dyn BlobStore) -> Result<Tuple<'_>, TupleError> {
        let mut out = std::mem::take(&mut self.out);
        out.clear();
        let r = self.build_into(store, &mut out);
        self.out = out;
        r?;
        Ok(Tuple::new_unverified(&self.out))
    }

    /// Like [`build_with`](TupleBuilder::build_with) but appends the tuple to `out` (for example
    /// a node's item buffer) and returns its length. On error nothing is appended; the builder is
    /// reset either way.
    pub fn build_into(
        &mut self,
        store: &mut dyn BlobStore,
        out: &mut Vec<u8>,
    ) -> Result<usize, TupleError> {
        let r = self.assemble(store, out);
        self.reset();
        r
    }

    fn assemble(
        &mut self,
        store: &mut dyn BlobStore,
        out: &mut Vec<u8>,
    ) -> Result<usize, TupleError> {
        for (i, (ty, s)) in self.desc.types.iter().zip(&self.slots).enumerate() {
            if !ty.nullable && !s.set {
                return Err(TupleError::UnexpectedNull { field: i });
            }
        }
        self.place_adaptive(store)?;
        let count = self.slots.iter().rposition(|s| s.set).map_or(0, |p| p + 1);
        if count > MAX_TUPLE_FIELDS {
            return Err(TupleError::TooManyFields { count });
        }
        let data_len: usize = self.slots.iter().take(count).map(|s| s.len as usize).sum();
        if data_len > MAX_TUPLE_DATA_SIZE {
            return Err(TupleError::DataTooLarge { len: data_len });
        }
        let base = out.len();
        out.reserve(data_len + 2 * count.max(1));
        for s in self.slots.iter().take(count) {
            let (a, b) = (s.start as usize, s.start as usize + s.len as usize);
            out.extend_from_slice(self.data.get(a..b).unwrap_or(&[]));
        }
        let mut pos = 0usize;
        for (k, s) in self.slots.iter().take(count).enumerate() {
            if k > 0 {
                out.extend_from_slice(&(pos as u16).to_le_bytes());
            }
            pos += s.len as usize;
        }
        out.extend_from_slice(&(count as u16).to_le_bytes());
        Ok(out.len() - base)
    }

    /// Dolt's `BuildPermissive` decision: if the tuple counted with every adaptive value inline
    /// exceeds the target, move values out of band by largest saving first (stable), until it
    /// fits; every other adaptive value is then stored inline.
    fn place_adaptive(&mut self, store: &mut dyn BlobStore) -> Result<(), TupleError> {
        let total: u64 = self.slots.iter().fold(0u64, |t, s| {
            t.saturating_add(if s.set { s.budget } else { 0 })
        });
        let target = self.target as u64;
        if total <= target {
            return Ok(());
        }
        self.candidates.clear();
        for (i, (ty, s)) in self.desc.types.iter().zip(&self.slots).enumerate() {
            if !ty.enc.is_adaptive() || !s.set {
                continue;
            }
            let bytes = self
                .data
                .get(s.start as usize..(s.start + s.len) as usize)
                .unwrap_or(&[]);
            let (inline, out_of_band) = match Adaptive::from_bytes(bytes) {
                // Dolt's forced out-of-band values are already blobs when Build sees them.
                Some(Adaptive::Inline(p)) if s.forced_out => (
                    p.len() as u64 + 1,
                    (varint::sqlite4_len(p.len() as u64) + ADDRESS_LEN) as u64,
                ),
                // Quirk kept from Dolt: for an inline value the out-of-band size is computed by
                // reading its 0x00 header as a 1-byte varint, i.e. always 21.
                Some(Adaptive::Inline(p)) => (p.len() as u64 + 1, 1 + ADDRESS_LEN as u64),
                Some(Adaptive::OutOfBand { len, .. }) => (len.saturating_add(1), u64::from(s.len)),
                None => continue,
            };
            if inline > out_of_band {
                self.candidates.push((i, inline - out_of_band));
            }
        }
        self.candidates
            .sort_by_key(|&(_, savings)| Reverse(savings)); // stable
        self.chosen.clear();
        self.chosen.resize(self.slots.len(), false);
        let mut total = total;
        for k in 0..self.candidates.len() {
            let Some(&(i, savings)) = self.candidates.get(k) else {
                break;
            };
            self.move_out(i, store)?;
            if let Some(c) = self.chosen.get_mut(i) {
                *c = true;
            }
            total = total.saturating_sub(savings);
            if total <= target {
                break;
            }
        }
        for i in 0..self.slots.len() {
            let adaptive = self.desc.types.get(i).is_some_and(|t| t.enc.is_adaptive());
            if adaptive && !self.chosen.get(i).copied().unwrap_or(false) {
                self.move_in(i, store)?;
            }
        }
        Ok(())
    }

    fn slot_bytes(&self, i: usize) -> Option<(&[u8], Slot)> {
        let s = *self.slots.get(i)?;
        if !s.set {
            return None;
        }
        Some((
            self.data
                .get(s.start as usize..(s.start + s.len) as usize)?,
            s,
        ))
    }

    fn move_out(&mut self, i: usize, store: &mut dyn BlobStore) -> Result<(), TupleError> {
        let Some((bytes, slot)) = self.slot_bytes(i) else {
            return Ok(());
        };
        let Some(Adaptive::Inline(payload)) = Adaptive::from_bytes(bytes) else {
            return Ok(());
        };
        let len = payload.len() as u64;
        let address = store.write_blob(payload).map_err(|e| TupleError::Blob {
            field: i,
            message: e.to_string(),
        })?;
        self.store(i, slot.budget, |d| {
            Adaptive::OutOfBand { len, address }.write(d)
        })
    }

    fn move_in(&mut self, i: usize, store: &mut dyn BlobStore) -> Result<(), TupleError> {
        let Some((bytes, slot)) = self.slot_bytes(i) else {
            return Ok(());
        };
        let Some(Adaptive::OutOfBand { len, address }) = Adaptive::from_bytes(bytes) else {
            return Ok(());
        };
        let enc = self.desc.type_of(i)?.enc;
        self.scratch.clear();
        store
            .read_blob(&address, len, &mut self.scratch)
            .map_err(|e| TupleError::Blob {
                field: i,
                message: e.to_string(),
            })?;
        if self.scratch.len() as u64 != len {
            return Err(bad(i, enc, "blob length differs from the recorded length"));
        }
        let scratch = std::mem::take(&mut self.scratch);
        let r = self.store(i, slot.budget, |d| {
            d.push(0);
            d.extend_from_slice(&scratch);
        });
        self.scratch = scratch;
        r
    }
}
