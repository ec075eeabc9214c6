//! A back-to-front FlatBuffers builder that reproduces the Go builder Dolt uses
//! (`github.com/dolthub/flatbuffers/v23`), byte for byte.
//!
//! Chunk bytes are hashed, so the exact padding and vtable placement matter. The Rust
//! `flatbuffers` crate is close but not guaranteed identical; this is a small port of the Go
//! rules (see `shared/reference/dolt-format.md` §2.3). The buffer is reused across messages, so
//! steady-state writing allocates nothing.

use super::MessageError;

/// Size of Dolt's message prefix (kind byte + u24 body length).
pub(crate) const PREFIX_LEN: usize = 4;
/// Dolt's serial-message kind byte.
pub(crate) const MESSAGE_KIND: u8 = 0x1B;
/// A body must be shorter than 2^24 bytes (u24 length).
pub(crate) const MAX_BODY_LEN: usize = (1 << 24) - 1;

/// The builder. Data lives in `buf[head..]`; `off()` counts bytes written so far.
#[derive(Debug, Default)]
pub(crate) struct Builder {
    buf: Vec<u8>,
    head: usize,
    minalign: usize,
    /// Per-field positions (`off()` after the field was written; 0 = absent).
    slots: Vec<u32>,
    object_end: u32,
    /// `off()` of every vtable written in this message, oldest first.
    vtables: Vec<u32>,
}

impl Builder {
    /// Starts a new message, keeping the allocated buffer.
    pub(crate) fn reset(&mut self) {
        self.head = self.buf.len();
        self.minalign = 1;
        self.slots.clear();
        self.vtables.clear();
        self.object_end = 0;
    }

    #[inline]
    fn off(&self) -> usize {
        self.buf.len() - self.head
    }

    /// Makes room for `n` more bytes in front of the data.
    fn ensure(&mut self, n: usize) {
        if self.head >= n {
            return;
        }
        let used = self.off();
        let new_len = (self.buf.len() * 2).max(used + n).max(1024);
        let mut grown = vec![0u8; new_len];
        grown[new_len - used..].copy_from_slice(&self.buf[self.head..]);
        self.buf = grown;
        self.head = new_len - used;
    }

    fn pad(&mut self, n: usize) {
        self.ensure(n);
        self.head -= n;
        self.buf[self.head..self.head + n].fill(0);
    }

    /// Go `Prep`: align so that after writing `extra` bytes the next `size`-byte value is aligned.
    fn prep(&mut self, size: usize, extra: usize) {
        if size > self.minalign {
            self.minalign = size;
        }
        let align = (!(self.off() + extra)).wrapping_add(1) & (size - 1);
        self.ensure(align + size + extra);
        self.pad(align);
    }

    fn place(&mut self, bytes: &[u8]) {
        self.ensure(bytes.len());
        self.head -= bytes.len();
        self.buf[self.head..self.head + bytes.len()].copy_from_slice(bytes);
    }

    pub(crate) fn prepend_u8(&mut self, v: u8) {
        self.prep(1, 0);
        self.place(&[v]);
    }

    pub(crate) fn prepend_u16(&mut self, v: u16) {
        self.prep(2, 0);
        self.place(&v.to_le_bytes());
    }

    pub(crate) fn prepend_u64(&mut self, v: u64) {
        self.prep(8, 0);
        self.place(&v.to_le_bytes());
    }

    /// Prepends a uoffset pointing at the object written when `off()` was `target`.
    pub(crate) fn prepend_uoffset(&mut self, target: u32) {
        self.prep(4, 0);
        let rel = self.off() as u32 - target + 4;
        self.place(&rel.to_le_bytes());
    }

    /// Go `CreateByteVector`; returns the vector's offset.
    pub(crate) fn create_byte_vector(&mut self, bytes: &[u8]) -> u32 {
        self.prep(4, bytes.len());
        self.place(bytes);
        self.place(&(bytes.len() as u32).to_le_bytes());
        self.off() as u32
    }

    /// Go `CreateString`: the bytes, a NUL terminator, and the length; returns the offset.
    pub(crate) fn create_string(&mut self, s: &str) -> u32 {
        self.create_string_bytes(s.as_bytes())
    }

    /// Go `CreateString` of bytes that need not be UTF-8 (a Go string holds any bytes).
    pub(crate) fn create_string_bytes(&mut self, s: &[u8]) -> u32 {
        self.prep(4, s.len() + 1);
        self.place(&[0]);
        self.place(s);
        self.place(&(s.len() as u32).to_le_bytes());
        self.off() as u32
    }

    /// A vector of offsets to objects written earlier (Go `StartVector(4, n, 4)`, then
    /// `PrependUOffsetT` from the last element to the first, then `EndVector`).
    pub(crate) fn create_offset_vector(&mut self, targets: &[u32]) -> u32 {
        self.start_vector(4, targets.len(), 4);
        for &t in targets.iter().rev() {
            self.prepend_uoffset(t);
        }
        self.end_vector(targets.len())
    }

    /// Go `StartVector(elem_size, n, alignment)`.
    pub(crate) fn start_vector(&mut self, elem_size: usize, n: usize, alignment: usize) {
        self.prep(4, elem_size * n);
        self.prep(alignment, elem_size * n);
    }

    /// Go `EndVector(n)`: writes the length (room was made by `start_vector`).
    pub(crate) fn end_vector(&mut self, n: usize) -> u32 {
        self.place(&(n as u32).to_le_bytes());
        self.off() as u32
    }

    /// Writes a u16 vector exactly as Dolt's `StartVector(2, n, 2)` + `PrependUint16`s.
    pub(crate) fn create_u16_vector(&mut self, values: &[u16]) -> u32 {
        self.start_vector(2, values.len(), 2);
        // After start_vector the elements are contiguous and aligned, so writing them in one
        // pass gives the same bytes as prepending them one by one.
        let n = 2 * values.len();
        self.ensure(n);
        self.head -= n;
        let dst = &mut self.buf[self.head..self.head + n];
        for (d, v) in dst.chunks_exact_mut(2).zip(values) {
            d.copy_from_slice(&v.to_le_bytes());
        }
        self.end_vector(values.len())
    }

    /// Go `StartObject(num_fields)`.
    pub(crate) fn start_object(&mut self, num_fields: usize) {
        self.slots.clear();
        self.slots.resize(num_fields, 0);
        self.object_end = self.off() as u32;
    }

    fn slot(&mut self, field: usize) {
        self.slots[field] = self.off() as u32;
    }

    /// Go `PrependUint8Slot`: omitted when equal to the default.
    pub(crate) fn add_u8(&mut self, field: usize, v: u8, default: u8) {
        if v != default {
            self.prepend_u8(v);
            self.slot(field);
        }
    }

    /// Go `PrependUint64Slot`: omitted when equal to the default.
    pub(crate) fn add_u64(&mut self, field: usize, v: u64, default: u64) {
        if v != default {
            self.prepend_u64(v);
            self.slot(field);
        }
    }

    /// Go `PrependBoolSlot`: omitted when equal to the default.
    pub(crate) fn add_bool(&mut self, field: usize, v: bool, default: bool) {
        self.add_u8(field, u8::from(v), u8::from(default));
    }

    /// Go `PrependUint16Slot` (also enums stored as u16): omitted when equal to the default.
    pub(crate) fn add_u16(&mut self, field: usize, v: u16, default: u16) {
        if v != default {
            self.prepend_u16(v);
            self.slot(field);
        }
    }

    /// Go `PrependInt16Slot`: omitted when equal to the default.
    pub(crate) fn add_i16(&mut self, field: usize, v: i16, default: i16) {
        self.add_u16(field, v as u16, default as u16);
    }

    /// Go `PrependInt64Slot`: omitted when equal to the default.
    pub(crate) fn add_i64(&mut self, field: usize, v: i64, default: i64) {
        self.add_u64(field, v as u64, default as u64);
    }

    /// Go `PrependFloat32Slot`: omitted when equal to the default.
    pub(crate) fn add_f32(&mut self, field: usize, v: f32, default: f32) {
        if v != default {
            self.prep(4, 0);
            self.place(&v.to_bits().to_le_bytes());
            self.slot(field);
        }
    }

    /// Go `PrependUOffsetTSlot` with default 0: omitted for offset 0 ("no object").
    pub(crate) fn add_offset(&mut self, field: usize, target: u32) {
        if target != 0 {
            self.prepend_uoffset(target);
            self.slot(field);
        }
    }

    /// Go `EndObject` / `WriteVtable`: returns the table's offset.
    pub(crate) fn end_object(&mut self) -> u32 {
        self.prep(4, 0);
        self.place(&[0; 4]);
        let object_offset = self.off() as u32;
        while self.slots.last() == Some(&0) {
            self.slots.pop();
        }
        let mut existing = None;
        for &vt_off in self.vtables.iter().rev() {
            let start = self.buf.len() - vt_off as usize;
            let vt_len = usize::from(u16::from_le_bytes([self.buf[start], self.buf[start + 1]]));
            let entries = &self.buf[start + 4..start + vt_len];
            if vtable_equal(&self.slots, object_offset, entries) {
                existing = Some(vt_off);
                break;
            }
        }
        let table_pos = self.buf.len() - object_offset as usize;
        match existing {
            Some(vt_off) => {
                let rel = vt_off as i32 - object_offset as i32;
                self.buf[table_pos..table_pos + 4].copy_from_slice(&rel.to_le_bytes());
            }
            None => {
                for i in (0..self.slots.len()).rev() {
                    let s = self.slots[i];
                    let entry = if s != 0 { object_offset - s } else { 0 };
                    self.prepend_u16(entry as u16);
                }
                self.prepend_u16((object_offset - self.object_end) as u16);
                self.prepend_u16(((self.slots.len() + 2) * 2) as u16);
                let rel = self.off() as i32 - object_offset as i32;
                let table_pos = self.buf.len() - object_offset as usize;
                self.buf[table_pos..table_pos + 4].copy_from_slice(&rel.to_le_bytes());
                self.vtables.push(self.off() as u32);
            }
        }
        self.slots.clear();
        object_offset
    }

    /// Dolt's `FinishMessage`: finish with the file identifier, then put the 4-byte prefix in
    /// front. Returns the whole chunk.
    pub(crate) fn finish_message(
        &mut self,
        root: u32,
        file_id: &[u8; 4],
    ) -> Result<&[u8], MessageError> {
        self.prep(1, 12);
        let minalign = self.minalign;
        self.prep(minalign, 8);
        self.place(file_id);
        self.prep(minalign, 4);
        self.prepend_uoffset(root);
        let prefix = message_prefix(self.off())?;
        self.place(&prefix);
        Ok(&self.buf[self.head..])
    }
}

/// Dolt's 4-byte message prefix for a body of `body_len` bytes (the kind byte, then the length
/// in 24 bits big-endian), or an error if the body is too long for it.
pub(crate) fn message_prefix(body_len: usize) -> Result<[u8; PREFIX_LEN], MessageError> {
    if body_len > MAX_BODY_LEN {
        return Err(MessageError::TooLarge {
            field: "message body",
            len: body_len,
            max: MAX_BODY_LEN,
        });
    }
    let n = body_len as u32;
    Ok([MESSAGE_KIND, (n >> 16) as u8, (n >> 8) as u8, n as u8])
}

/// Go's `vtableEqual`: compares field entries only, not the vtable/object size header.
fn vtable_equal(slots: &[u32], object_offset: u32, entries: &[u8]) -> bool {
    if slots.len() * 2 != entries.len() {
        return false;
    }
    slots.iter().zip(entries.chunks_exact(2)).all(|(&s, e)| {
        let x = u16::from_le_bytes([e[0], e[1]]);
        if x == 0 && s == 0 {
            return true;
        }
        i64::from(x) == i64::from(object_offset) - i64::from(s)
    })
}
