//! The byte layout of a Dolt tuple (`val.Tuple`), and a zero-copy view over it.
//!
//! ```text
//! +---------+---------+-----+-----------+--------+-----+----------+-------+
//! | field 0 | field 1 | ... | field K-1 | off[1] | ... | off[K-1] | K     |
//! +---------+---------+-----+-----------+--------+-----+----------+-------+
//!   field data, back to back              u16 LE each                u16 LE
//! ```
//!
//! `off[i]` is where field `i` starts, counted from the tuple's first byte; field 0 starts at 0
//! and its offset is not stored. Field `i` ends where field `i+1` starts, the last field ends where
//! the offsets begin. A zero-length field is NULL, and so is every index `>= K`. Writers drop
//! trailing NULLs, so a tuple never ends with one; a tuple of only NULLs is `00 00`.

use super::TupleError;

/// Most field slots a tuple may have (Dolt's `MaxTupleFields`).
pub const MAX_TUPLE_FIELDS: usize = 4096;

/// Most bytes of field data a tuple may hold (Dolt's `MaxTupleDataSize`: 65535 − 2 − 20 − 8 − 1).
pub const MAX_TUPLE_DATA_SIZE: usize = 65_504;

/// A borrowed, structurally valid tuple.
///
/// Made by [`Tuple::new`], which checks the layout (count, offsets inside the data and
/// non-decreasing) so that field access afterwards can never fail. [`Tuple::new_unverified`]
/// skips that check for bytes that were already checked (for example the items of a verified
/// node); access on such a view is still memory-safe and panic-free, it may only return
/// meaningless fields if the bytes were in fact malformed.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tuple<'a> {
    bytes: &'a [u8],
}

impl<'a> Tuple<'a> {
    /// The tuple with no fields (`00 00`), Dolt's `EmptyTuple`.
    pub const EMPTY: Tuple<'static> = Tuple { bytes: &[0, 0] };

    /// Checks the layout of `bytes` and returns a view over them.
    pub fn new(bytes: &'a [u8]) -> Result<Tuple<'a>, TupleError> {
        validate_layout(bytes)?;
        Ok(Tuple { bytes })
    }

    /// A view over bytes whose layout is already known to be valid. Never unsafe: on malformed
    /// bytes accessors return NULL or clamped fields instead of panicking.
    #[inline]
    pub fn new_unverified(bytes: &'a [u8]) -> Tuple<'a> {
        Tuple { bytes }
    }

    /// The tuple's bytes.
    #[inline]
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Number of stored field slots `K` (trailing NULLs are not stored).
    #[inline]
    pub fn count(&self) -> usize {
        count_of(self.bytes)
    }

    /// Bytes of field data (everything before the offsets).
    #[inline]
    pub fn data_len(&self) -> usize {
        data_end(self.bytes, self.count())
    }

    /// The bytes of field `i`, or `None` if it is NULL (zero length, or `i >= count`).
    #[inline]
    pub fn field(&self, i: usize) -> Option<&'a [u8]> {
        field_of(self.bytes, i)
    }

    /// True if field `i` is NULL.
    #[inline]
    pub fn is_null(&self, i: usize) -> bool {
        self.field(i).is_none()
    }

    /// Iterates the stored field slots (`None` = NULL).
    pub fn fields(&self) -> impl Iterator<Item = Option<&'a [u8]>> + 'a {
        let t = *self;
        (0..t.count()).map(move |i| t.field(i))
    }
}

impl std::fmt::Debug for Tuple<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut list = f.debug_list();
        for field in self.fields() {
            match field {
                None => list.entry(&"NULL"),
                Some(b) => list.entry(&HexBytes(b)),
            };
        }
        list.finish()
    }
}

struct HexBytes<'a>(&'a [u8]);

impl std::fmt::Debug for HexBytes<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

/// Reads a little-endian u16 at `pos`, or 0 if out of range.
#[inline(always)]
fn u16_at(bytes: &[u8], pos: usize) -> usize {
    match bytes.get(pos..pos + 2) {
        Some(&[a, b]) => usize::from(u16::from_le_bytes([a, b])),
        _ => 0,
    }
}

/// `K`, the stored field count; 0 for inputs shorter than 2 bytes.
#[inline(always)]
pub(crate) fn count_of(bytes: &[u8]) -> usize {
    if bytes.len() < 2 {
        return 0;
    }
    u16_at(bytes, bytes.len() - 2)
}

/// Where the field data ends (the offsets begin); clamped to 0 for malformed input.
#[inline(always)]
fn data_end(bytes: &[u8], count: usize) -> usize {
    bytes.len().saturating_sub(2 * count.max(1))
}

/// Field `i` of possibly-malformed tuple bytes: total, never panics.
#[inline(always)]
pub(crate) fn field_of(bytes: &[u8], i: usize) -> Option<&[u8]> {
    let count = count_of(bytes);
    if i >= count {
        return None;
    }
    let split = data_end(bytes, count);
    let start = if i == 0 {
        0
    } else {
        u16_at(bytes, split + 2 * (i - 1))
    };
    let stop = if i + 1 == count {
        split
    } else {
        u16_at(bytes, split + 2 * i)
    };
    if start >= stop {
        return None;
    }
    bytes.get(start..stop)
}

/// Reads a tuple's field slots in order, checking the layout on the way (each offset read
/// once, where [`validate_layout`] and then [`field_of`] per field read them all again): for
/// decoding whole rows. Walking every stored slot without an error is exactly what
/// [`validate_layout`] accepts; the fields are those [`field_of`] gives.
pub(crate) struct CheckedFields<'a> {
    bytes: &'a [u8],
    count: usize,
    split: usize,
    start: usize,
    next: usize,
}

impl<'a> CheckedFields<'a> {
    /// A cursor at slot 0, or `None` if the count, the room for the offsets or the data size
    /// is wrong ([`layout_failure`] says which).
    #[inline(always)]
    pub(crate) fn new(bytes: &'a [u8]) -> Option<CheckedFields<'a>> {
        let (head, count) = bytes.split_last_chunk::<2>()?;
        let count = usize::from(u16::from_le_bytes(*count));
        let split = match count {
            0 if head.is_empty() => 0,
            0 => return None,
            _ if count > MAX_TUPLE_FIELDS => return None,
            _ => head.len().checked_sub(2 * (count - 1))?,
        };
        if split > MAX_TUPLE_DATA_SIZE {
            return None;
        }
        Some(CheckedFields {
            bytes,
            count,
            split,
            start: 0,
            next: 0,
        })
    }

    /// True while stored slots remain.
    #[inline(always)]
    pub(crate) fn has_more(&self) -> bool {
        self.next < self.count
    }

    /// The next slot's bytes (`Ok(None)`: NULL, also past the stored slots), or `Err` if its
    /// end offset is before its start or beyond the data.
    #[inline(always)]
    pub(crate) fn next_field(&mut self) -> Result<Option<&'a [u8]>, ()> {
        let i = self.next;
        if i >= self.count {
            return Ok(None);
        }
        self.next = i + 1;
        let stop = if i + 1 == self.count {
            self.split
        } else {
            u16_at(self.bytes, self.split + 2 * i)
        };
        // Slot i starts where slot i - 1 stopped.
        let start = std::mem::replace(&mut self.start, stop);
        if stop < start || stop > self.split {
            return Err(());
        }
        Ok(if start == stop {
            None
        } else {
            self.bytes.get(start..stop)
        })
    }

    /// The error [`validate_layout`] gives for the bytes this cursor refused.
    #[cold]
    pub(crate) fn layout_failure(&self) -> TupleError {
        layout_failure(self.bytes)
    }
}

/// The error [`validate_layout`] gives for `bytes`, which a [`CheckedFields`] walk refused
/// (the two accept the same bytes; `tests::checked_fields_accept_what_validate_layout_accepts`).
#[cold]
pub(crate) fn layout_failure(bytes: &[u8]) -> TupleError {
    match layout_error(bytes) {
        Err(e) => e,
        // Not reached (the checks agree); an error all the same, never a panic.
        Ok(()) => TupleError::TooShort { len: bytes.len() },
    }
}

/// Checks that `bytes` is a well-formed tuple layout: at least the 2-byte count, room for the
/// offsets, no more than [`MAX_TUPLE_FIELDS`] slots, offsets non-decreasing and inside the data.
#[inline]
pub fn validate_layout(bytes: &[u8]) -> Result<(), TupleError> {
    if layout_is_valid(bytes) {
        return Ok(());
    }
    layout_error(bytes)
}

/// The yes/no form of [`validate_layout`], for loops over many tuples (node verification):
/// no error values, one pass over the offsets without early exits. `true` exactly when
/// `validate_layout` succeeds.
#[inline(always)]
pub fn layout_is_valid(bytes: &[u8]) -> bool {
    let Some((head, count)) = bytes.split_last_chunk::<2>() else {
        return false;
    };
    let count = usize::from(u16::from_le_bytes(*count));
    if count == 2 {
        // The most common shape (two-column keys and values): data, one offset, count.
        let Some((data, offset)) = head.split_last_chunk::<2>() else {
            return false;
        };
        return data.len() <= MAX_TUPLE_DATA_SIZE
            && usize::from(u16::from_le_bytes(*offset)) <= data.len();
    }
    if count <= 1 {
        // No stored offsets: count 0 is exactly `00 00`; count 1 is data + count.
        return if count == 0 {
            head.is_empty()
        } else {
            head.len() <= MAX_TUPLE_DATA_SIZE
        };
    }
    if count > MAX_TUPLE_FIELDS {
        return false;
    }
    let Some((data, offsets)) = head.split_at_checked(head.len().wrapping_sub(2 * (count - 1)))
    else {
        return false;
    };
    let split = data.len();
    if split > MAX_TUPLE_DATA_SIZE {
        return false;
    }
    // Offsets non-decreasing, the last one inside the data (so all are).
    let mut prev = 0usize;
    let mut ok = true;
    for pair in offsets.chunks_exact(2) {
        let off = usize::from(u16::from_le_bytes([pair[0], pair[1]]));
        ok &= prev <= off;
        prev = off;
    }
    ok && prev <= split
}

/// The error [`validate_layout`] reports for an invalid layout (the first problem found).
#[cold]
#[inline(never)]
fn layout_error(bytes: &[u8]) -> Result<(), TupleError> {
    if bytes.len() < 2 {
        return Err(TupleError::TooShort { len: bytes.len() });
    }
    let count = count_of(bytes);
    if count > MAX_TUPLE_FIELDS {
        return Err(TupleError::TooManyFields { count });
    }
    // A tuple with count 0 is exactly the two count bytes.
    let offsets_len = 2 * count.max(1);
    if bytes.len() < offsets_len {
        return Err(TupleError::OffsetsOverrun {
            count,
            len: bytes.len(),
        });
    }
    if count == 0 && bytes.len() != 2 {
        return Err(TupleError::OffsetsOverrun {
            count,
            len: bytes.len(),
        });
    }
    let split = bytes.len() - offsets_len;
    if split > MAX_TUPLE_DATA_SIZE {
        return Err(TupleError::DataTooLarge { len: split });
    }
    let mut prev = 0usize;
    for i in 1..count {
        let off = u16_at(bytes, split + 2 * (i - 1));
        if off < prev || off > split {
            return Err(TupleError::BadOffset {
                field: i,
                offset: off,
                data_len: split,
            });
        }
        prev = off;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_documented_examples() {
        let t = Tuple::new(&[0x07, 0, 0, 0, 0x01, 0]).unwrap();
        assert_eq!(t.count(), 1);
        assert_eq!(t.field(0), Some(&[7u8, 0, 0, 0][..]));
        assert_eq!(t.field(1), None);
        let t = Tuple::new(&[0x05, 0x61, 0x62, 0x00, 0x01, 0x00, 0x02, 0x00]).unwrap();
        assert_eq!(t.field(0), Some(&[5u8][..]));
        assert_eq!(t.field(1), Some(&b"ab\0"[..]));
        assert_eq!(Tuple::new(&[0, 0]).unwrap().count(), 0);
    }

    #[test]
    fn rejects_malformed_layouts() {
        assert!(matches!(Tuple::new(&[]), Err(TupleError::TooShort { .. })));
        assert_eq!(Tuple::new(&[1, 0]).unwrap().field(0), None); // one (non-canonical) NULL slot
        assert!(Tuple::new(&[0, 0, 0, 0]).is_err()); // count 0 with extra bytes
        assert!(Tuple::new(&[1, 2, 9, 0, 2, 0]).is_err()); // offset 9 beyond data
        assert!(Tuple::new(&[1, 2, 2, 0, 1, 0, 3, 0]).is_err()); // decreasing offsets
    }

    #[test]
    fn accessors_never_panic_on_garbage() {
        for len in 0..12usize {
            for seed in 0..64u8 {
                let bytes: Vec<u8> = (0..len)
                    .map(|i| seed.wrapping_mul(31).wrapping_add(i as u8 * 7))
                    .collect();
                let t = Tuple::new_unverified(&bytes);
                for i in 0..8 {
                    let _ = t.field(i);
                }
            }
        }
    }
}

#[cfg(test)]
mod fast_check_tests {
    use super::*;

    /// Tuples of many shapes, well-formed and not: every count class, offsets around the data
    /// boundary, decreasing offsets, truncations.
    fn shaped_bytes() -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let mut seed = 0x9e37_79b9_u32;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed
        };
        for len in 0..40usize {
            for count in [0u16, 1, 2, 3, 4, 5, 19, 4096, 4097, 0xffff] {
                for _ in 0..12 {
                    let mut b: Vec<u8> = (0..len).map(|_| next() as u8).collect();
                    let n = usize::from(count);
                    if len >= 2 {
                        let split = len.saturating_sub(2 * n.max(1));
                        // Mostly plausible offsets (small, often non-decreasing).
                        let mut off = 0u16;
                        for i in 1..n.min(len / 2) {
                            let at = split + 2 * (i - 1);
                            if at + 2 > len - 2 {
                                break;
                            }
                            off = match next() % 5 {
                                0 => off.wrapping_sub(1),
                                1 => split as u16 + (next() % 3) as u16,
                                _ => off.wrapping_add((next() % 4) as u16),
                            };
                            b[at..at + 2].copy_from_slice(&off.to_le_bytes());
                        }
                        b[len - 2..].copy_from_slice(&count.to_le_bytes());
                    }
                    out.push(b);
                }
            }
        }
        out
    }

    #[test]
    fn fast_check_agrees_with_detailed_check() {
        for b in shaped_bytes() {
            assert_eq!(
                layout_is_valid(&b),
                layout_error(&b).is_ok(),
                "disagree on {b:02x?}"
            );
        }
        // Data size limit, count 1 and 2.
        for (len, count) in [
            (MAX_TUPLE_DATA_SIZE + 2, 1u16),
            (MAX_TUPLE_DATA_SIZE + 3, 1),
            (MAX_TUPLE_DATA_SIZE + 4, 2),
            (MAX_TUPLE_DATA_SIZE + 5, 2),
        ] {
            let mut b = vec![0u8; len];
            b[len - 2..].copy_from_slice(&count.to_le_bytes());
            assert_eq!(layout_is_valid(&b), layout_error(&b).is_ok(), "len {len}");
        }
    }
}
