//! The two variable-length integer codes Dolt uses.
//!
//! * Signed LEB128 with zig-zag (Go's `binary.PutVarint`): subtree counts of internal nodes are
//!   stored as deltas in this code.
//! * SQLite4 varints (big-endian tail, `github.com/mohae/uvarint`): lengths of out-of-band
//!   adaptive values and JSON array indexes.
//!
//! Decoders take untrusted bytes and return `None` on malformed or truncated input; they never
//! panic.

/// Longest zig-zag LEB128 encoding of a 64-bit value.
pub const MAX_VARINT_LEN: usize = 10;

/// Appends `v` as a zig-zag LEB128 varint (Go `binary.PutVarint`).
#[inline]
pub fn put_signed(out: &mut Vec<u8>, v: i64) {
    let zz = ((v << 1) ^ (v >> 63)) as u64;
    put_unsigned(out, zz);
}

/// Appends `v` as an unsigned LEB128 varint (Go `binary.PutUvarint`).
#[inline]
pub fn put_unsigned(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Decodes one unsigned LEB128 varint from the front of `bytes`: `(value, bytes used)`.
/// `None` if it is truncated or overflows 64 bits (Go's rules: at most 10 bytes, and the 10th
/// byte may only be 0 or 1).
#[inline]
pub fn get_unsigned(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut x: u64 = 0;
    let mut shift = 0u32;
    for (i, &b) in bytes.iter().enumerate() {
        if i == MAX_VARINT_LEN {
            return None;
        }
        if b < 0x80 {
            if i == MAX_VARINT_LEN - 1 && b > 1 {
                return None;
            }
            return Some((x | (u64::from(b) << shift), i + 1));
        }
        x |= u64::from(b & 0x7f) << shift;
        shift += 7;
    }
    None
}

/// Decodes one zig-zag LEB128 varint from the front of `bytes`: `(value, bytes used)`.
#[inline]
pub fn get_signed(bytes: &[u8]) -> Option<(i64, usize)> {
    let (zz, n) = get_unsigned(bytes)?;
    Some((((zz >> 1) as i64) ^ -((zz & 1) as i64), n))
}

/// Appends subtree counts as zig-zag varints of the deltas between consecutive counts
/// (Dolt's `encodeVarints`). `[300, 250]` gives `D8 04 63`.
pub fn put_count_deltas(out: &mut Vec<u8>, counts: impl IntoIterator<Item = u64>) {
    let mut prev: u64 = 0;
    let mut counts = counts.into_iter();
    loop {
        // Room for the next batch of counts at their longest, written by index (sibling
        // counts are close: most deltas take one byte), then cut to what was written.
        let batch = counts.size_hint().0.clamp(1, 256);
        let mut pos = out.len();
        out.resize(pos + batch * MAX_VARINT_LEN, 0);
        let mut done = true;
        for c in counts.by_ref().take(batch) {
            let v = c.wrapping_sub(prev) as i64;
            let mut zz = ((v << 1) ^ (v >> 63)) as u64;
            prev = c;
            while zz >= 0x80 {
                out[pos] = (zz as u8) | 0x80;
                pos += 1;
                zz >>= 7;
            }
            out[pos] = zz as u8;
            pos += 1;
            done = false;
        }
        out.truncate(pos);
        if done {
            return;
        }
    }
}

/// Appends the counts stored as zig-zag varint deltas in `bytes` to `out` (what
/// [`CountDeltas`] yields, in one loop). False, with `out` holding the counts before it, at the
/// first malformed varint.
pub fn decode_count_deltas_into(bytes: &[u8], out: &mut Vec<u64>) -> bool {
    // Every count takes at least one byte: room for all, written by index, then cut.
    let mut n = out.len();
    out.resize(n + bytes.len(), 0);
    let mut prev: u64 = 0;
    let mut pos = 0usize;
    let mut ok = true;
    while let Some(&b) = bytes.get(pos) {
        let zz = if b < 0x80 {
            pos += 1;
            u64::from(b)
        } else {
            match get_unsigned(bytes.get(pos..).unwrap_or(&[])) {
                Some((zz, used)) => {
                    pos += used;
                    zz
                }
                None => {
                    ok = false;
                    break;
                }
            }
        };
        let delta = ((zz >> 1) as i64) ^ -((zz & 1) as i64);
        prev = prev.wrapping_add(delta as u64);
        out[n] = prev;
        n += 1;
    }
    out.truncate(n);
    ok
}

/// Iterates the counts stored as zig-zag varint deltas in `bytes`.
///
/// Yields `Err(offset)` (and then stops) at the first malformed varint. A verified node's
/// counts never produce an error.
#[derive(Clone, Debug)]
pub struct CountDeltas<'a> {
    bytes: &'a [u8],
    pos: usize,
    prev: u64,
    failed: bool,
}

impl<'a> CountDeltas<'a> {
    /// Starts decoding `bytes`.
    #[inline]
    pub fn new(bytes: &'a [u8]) -> Self {
        CountDeltas {
            bytes,
            pos: 0,
            prev: 0,
            failed: false,
        }
    }
}

impl Iterator for CountDeltas<'_> {
    type Item = Result<u64, usize>;
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.pos >= self.bytes.len() {
            return None;
        }
        let rest = self.bytes.get(self.pos..).unwrap_or(&[]);
        match get_signed(rest) {
            Some((delta, n)) => {
                self.pos += n;
                self.prev = self.prev.wrapping_add(delta as u64);
                Some(Ok(self.prev))
            }
            None => {
                self.failed = true;
                Some(Err(self.pos))
            }
        }
    }
}

/// Bytes the SQLite4 varint of `v` takes.
#[inline]
pub fn sqlite4_len(v: u64) -> usize {
    match v {
        0..=240 => 1,
        241..=2287 => 2,
        2288..=67823 => 3,
        _ if v < 1 << 24 => 4,
        _ if v < 1 << 32 => 5,
        _ if v < 1 << 40 => 6,
        _ if v < 1 << 48 => 7,
        _ if v < 1 << 56 => 8,
        _ => 9,
    }
}

/// Appends `v` as a SQLite4 varint.
pub fn put_sqlite4(out: &mut Vec<u8>, v: u64) {
    match v {
        0..=240 => out.push(v as u8),
        241..=2287 => {
            let w = v - 240;
            out.push((w / 256 + 241) as u8);
            out.push((w % 256) as u8);
        }
        2288..=67823 => {
            let w = v - 2288;
            out.push(249);
            out.push((w / 256) as u8);
            out.push((w % 256) as u8);
        }
        _ => {
            let n = sqlite4_len(v) - 1; // tail bytes: 3..=8
            out.push(247 + n as u8); // 250 for 3 bytes ... 255 for 8 bytes
            let be = v.to_be_bytes();
            out.extend_from_slice(&be[8 - n..]);
        }
    }
}

/// Decodes a SQLite4 varint from the front of `bytes`: `(value, bytes used)`; `None` if truncated.
#[inline]
pub fn get_sqlite4(bytes: &[u8]) -> Option<(u64, usize)> {
    let b0 = *bytes.first()?;
    match b0 {
        0..=240 => Some((u64::from(b0), 1)),
        241..=248 => {
            let b1 = *bytes.get(1)?;
            Some((240 + 256 * (u64::from(b0) - 241) + u64::from(b1), 2))
        }
        249 => {
            let b1 = *bytes.get(1)?;
            let b2 = *bytes.get(2)?;
            Some((2288 + 256 * u64::from(b1) + u64::from(b2), 3))
        }
        _ => {
            let n = usize::from(b0 - 247);
            let tail = bytes.get(1..1 + n)?;
            let v = tail.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
            Some((v, 1 + n))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn subtree_count_example_from_dolt() {
        let mut out = Vec::new();
        put_count_deltas(&mut out, [300u64, 250]);
        assert_eq!(out, [0xD8, 0x04, 0x63]);
        let back: Vec<u64> = CountDeltas::new(&out).map(|r| r.unwrap()).collect();
        assert_eq!(back, [300, 250]);
    }

    #[test]
    fn sqlite4_examples() {
        for (v, want) in [
            (240u64, vec![0xF0]),
            (241, vec![0xF1, 0x01]),
            (2287, vec![0xF8, 0xFF]),
            (2288, vec![0xF9, 0x00, 0x00]),
            (67824, vec![0xFA, 0x01, 0x08, 0xF0]),
        ] {
            let mut out = Vec::new();
            put_sqlite4(&mut out, v);
            assert_eq!(out, want, "value {v}");
            assert_eq!(get_sqlite4(&out), Some((v, out.len())));
        }
    }

    #[test]
    fn malformed_varints_are_errors() {
        assert_eq!(get_unsigned(&[0x80, 0x80]), None);
        assert_eq!(get_unsigned(&[0xff; 11]), None);
        assert_eq!(get_sqlite4(&[]), None);
        assert_eq!(get_sqlite4(&[0xFF, 1, 2]), None);
        let mut it = CountDeltas::new(&[0x02, 0x80]);
        assert_eq!(it.next(), Some(Ok(1)));
        assert_eq!(it.next(), Some(Err(1)));
        assert_eq!(it.next(), None);
    }

    proptest! {
        #[test]
        fn signed_round_trip(v in any::<i64>()) {
            let mut out = Vec::new();
            put_signed(&mut out, v);
            prop_assert_eq!(get_signed(&out), Some((v, out.len())));
        }

        #[test]
        fn sqlite4_round_trip(v in any::<u64>()) {
            let mut out = Vec::new();
            put_sqlite4(&mut out, v);
            prop_assert_eq!(out.len(), sqlite4_len(v));
            prop_assert_eq!(get_sqlite4(&out), Some((v, out.len())));
        }

        #[test]
        fn varint_decoders_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..16)) {
            let _ = get_signed(&bytes);
            let _ = get_sqlite4(&bytes);
            let _ = CountDeltas::new(&bytes).count();
        }

        /// The one-byte fast paths give Go's bytes, and the bulk decoder yields exactly what
        /// the iterator does, on well-formed and malformed input.
        #[test]
        fn count_deltas_fast_paths(
            counts in proptest::collection::vec(
                prop_oneof![0u64..200, any::<u64>(), (0u64..1 << 40)], 0..64),
            junk in proptest::collection::vec(any::<u8>(), 0..12),
        ) {
            let mut out = Vec::new();
            put_count_deltas(&mut out, counts.iter().copied());
            let mut slow = Vec::new();
            let mut prev = 0u64;
            for &c in &counts {
                put_signed(&mut slow, c.wrapping_sub(prev) as i64);
                prev = c;
            }
            prop_assert_eq!(&out, &slow);
            let mut back = Vec::new();
            prop_assert!(decode_count_deltas_into(&out, &mut back));
            prop_assert_eq!(&back, &counts);
            out.extend_from_slice(&junk);
            let iter: Vec<Result<u64, usize>> = CountDeltas::new(&out).collect();
            let mut bulk = Vec::new();
            let ok = decode_count_deltas_into(&out, &mut bulk);
            let iter_ok: Vec<u64> = iter.iter().filter_map(|r| r.ok()).collect();
            prop_assert_eq!(ok, iter.iter().all(|r| r.is_ok()));
            prop_assert_eq!(bulk, iter_ok);
        }
    }
}
