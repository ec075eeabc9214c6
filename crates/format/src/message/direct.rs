//! A straight-line writer for `ProllyTreeNode` chunks: the same bytes as the general
//! back-to-front [`Builder`](super::builder::Builder) (the port of the Go builder Dolt uses)
//! produces for a node, without its per-value alignment bookkeeping, buffer growth checks and
//! vtable search.
//!
//! A node message always has the same shape: its vectors, then one table, one vtable (the
//! first of the message, so never shared) and the root offset. Every padding is therefore a
//! function of the lengths alone, and the writer reserves the upper bound once, then places
//! each part with the Go builder's alignment rules. `tests.rs` compares it with the general
//! builder on thousands of random nodes (and the golden vectors pin both to Dolt's bytes).

use super::builder::message_prefix;
use super::MessageError;

/// Fields of the `ProllyTreeNode` table (must equal `node/layout.rs`' numbering).
pub(crate) const NUM_FIELDS: usize = 11;

/// Bytes a node message adds to its vectors' contents, at most: vector lengths and their
/// padding, the table (five offsets, a u64, three u8s, padding, the vtable offset), the vtable,
/// the root offset, file identifier and alignment, and the prefix.
const OVERHEAD: usize = 5 * (4 + 3) + (5 * 4 + 8 + 4 + 3 + 3 + 4) + 2 * (NUM_FIELDS + 2) + 32;

/// `(-x) mod align` for a power-of-two `align`: the Go builder's padding before a value.
#[inline(always)]
fn pad_to(x: usize, align: usize) -> usize {
    x.wrapping_neg() & (align - 1)
}

/// A buffer filled from the back; `off()` counts the bytes written so far, as the Go builder's
/// `Offset()` does.
pub(crate) struct Back<'b> {
    buf: &'b mut [u8],
    head: usize,
}

/// The most bytes a node message with `contents` bytes of vector data takes: the room a
/// [`Back`] over a caller's buffer needs.
#[inline]
pub(crate) fn message_bound(contents: usize) -> usize {
    contents + OVERHEAD
}

impl<'b> Back<'b> {
    /// Starts a message of at most `contents` bytes of vector data plus the fixed overhead,
    /// in `buf` (grown to that bound if it is shorter).
    #[inline]
    pub(crate) fn new(buf: &'b mut Vec<u8>, contents: usize) -> Back<'b> {
        let len = message_bound(contents);
        if buf.len() < len {
            buf.resize(len, 0);
        }
        Back::over(buf.as_mut_slice())
    }

    /// Starts a message that ends at the end of `buf`, which the caller made at least
    /// [`message_bound`] long for the contents it writes.
    #[inline]
    pub(crate) fn over(buf: &'b mut [u8]) -> Back<'b> {
        let head = buf.len();
        Back { buf, head }
    }

    #[inline(always)]
    fn off(&self) -> usize {
        self.buf.len() - self.head
    }

    #[inline(always)]
    fn zeros(&mut self, n: usize) {
        let start = self.head - n;
        self.buf[start..self.head].fill(0);
        self.head = start;
    }

    #[inline(always)]
    fn bytes(&mut self, b: &[u8]) {
        let start = self.head - b.len();
        self.buf[start..self.head].copy_from_slice(b);
        self.head = start;
    }

    #[inline(always)]
    fn u16s(&mut self, values: &[u16]) {
        let start = self.head - 2 * values.len();
        let dst = &mut self.buf[start..self.head];
        // Two-byte arrays rather than slices: the loop becomes a vector copy.
        for (d, v) in dst.as_chunks_mut::<2>().0.iter_mut().zip(values) {
            *d = v.to_le_bytes();
        }
        self.head = start;
    }

    /// A byte vector (Go `CreateByteVector`); returns its offset.
    #[inline]
    pub(crate) fn byte_vector(&mut self, b: &[u8]) -> u32 {
        self.zeros(pad_to(self.off() + b.len(), 4));
        self.bytes(b);
        self.bytes(&(b.len() as u32).to_le_bytes());
        self.off() as u32
    }

    /// [`Back::byte_vector`] of `b` with `patch` in place of its bytes from `at` on. The
    /// caller checks that `at + patch.len() <= b.len()` (the node writers return an error
    /// first).
    #[inline]
    pub(crate) fn byte_vector_patched(&mut self, b: &[u8], at: usize, patch: &[u8]) -> u32 {
        self.zeros(pad_to(self.off() + b.len(), 4));
        self.bytes(b);
        let start = self.head + at;
        self.buf[start..start + patch.len()].copy_from_slice(patch);
        self.bytes(&(b.len() as u32).to_le_bytes());
        self.off() as u32
    }

    /// [`Back::u16_vector`] of values already stored little-endian (`le.len()` is even).
    #[inline]
    pub(crate) fn u16_vector_le(&mut self, le: &[u8]) -> u32 {
        self.zeros(pad_to(self.off() + le.len(), 4));
        self.bytes(le);
        self.bytes(&((le.len() / 2) as u32).to_le_bytes());
        self.off() as u32
    }

    /// A u16 vector (Go `StartVector(2, n, 2)`, the elements, `EndVector`); returns its offset.
    #[inline]
    pub(crate) fn u16_vector(&mut self, values: &[u16]) -> u32 {
        // The 4-byte alignment of the length makes the 2-byte alignment of the elements hold.
        self.zeros(pad_to(self.off() + 2 * values.len(), 4));
        self.u16s(values);
        self.bytes(&(values.len() as u32).to_le_bytes());
        self.off() as u32
    }
}

/// The table of a node message, written after its vectors.
pub(crate) struct Table<'b> {
    w: Back<'b>,
    /// Positions (`off()` after the field), 0 for absent fields.
    slots: [u32; NUM_FIELDS],
    object_end: usize,
    minalign: usize,
}

impl<'b> Table<'b> {
    /// Go `StartObject` (the vectors before it are 4-aligned, so `minalign` is 4).
    #[inline]
    pub(crate) fn start(w: Back<'b>) -> Table<'b> {
        let object_end = w.off();
        Table {
            w,
            slots: [0; NUM_FIELDS],
            object_end,
            minalign: 4,
        }
    }

    /// Go `PrependUOffsetTSlot` with default 0.
    #[inline]
    pub(crate) fn offset(&mut self, field: usize, target: u32) {
        if target != 0 {
            self.w.zeros(pad_to(self.w.off(), 4));
            let rel = self.w.off() as u32 + 4 - target;
            self.w.bytes(&rel.to_le_bytes());
            self.slots[field] = self.w.off() as u32;
        }
    }

    /// Go `PrependUint64Slot` with default 0.
    #[inline]
    pub(crate) fn u64(&mut self, field: usize, v: u64) {
        if v != 0 {
            self.minalign = 8;
            self.w.zeros(pad_to(self.w.off(), 8));
            self.w.bytes(&v.to_le_bytes());
            self.slots[field] = self.w.off() as u32;
        }
    }

    /// Go `PrependUint8Slot` with default 0.
    #[inline]
    pub(crate) fn u8(&mut self, field: usize, v: u8) {
        if v != 0 {
            self.w.bytes(&[v]);
            self.slots[field] = self.w.off() as u32;
        }
    }

    /// Go `EndObject` (a fresh vtable: the message has no other table) and `FinishMessage`
    /// with `file_id`. Returns the whole chunk, prefix included.
    pub(crate) fn finish(self, file_id: &[u8; 4]) -> Result<&'b [u8], MessageError> {
        let Table {
            mut w,
            slots,
            object_end,
            minalign,
        } = self;
        // The table's soffset to its vtable, patched below.
        w.zeros(pad_to(w.off(), 4));
        w.zeros(4);
        let object_offset = w.off();
        let used = slots.iter().rposition(|&s| s != 0).map_or(0, |i| i + 1);
        for &s in slots[..used].iter().rev() {
            let entry = if s != 0 { object_offset as u32 - s } else { 0 };
            w.bytes(&(entry as u16).to_le_bytes());
        }
        w.bytes(&((object_offset - object_end) as u16).to_le_bytes());
        w.bytes(&(((used + 2) * 2) as u16).to_le_bytes());
        let rel = (w.off() - object_offset) as i32;
        let table_pos = w.buf.len() - object_offset;
        w.buf[table_pos..table_pos + 4].copy_from_slice(&rel.to_le_bytes());
        // FinishMessage: the file identifier and the root offset, aligned to `minalign`.
        w.zeros(pad_to(w.off() + 8, minalign));
        w.bytes(file_id);
        w.zeros(pad_to(w.off() + 4, minalign));
        w.zeros(pad_to(w.off(), 4));
        let root = (w.off() + 4 - object_offset) as u32;
        w.bytes(&root.to_le_bytes());
        w.bytes(&message_prefix(w.off())?);
        let Back { buf, head } = w;
        let buf: &'b [u8] = buf;
        Ok(&buf[head..])
    }
}
