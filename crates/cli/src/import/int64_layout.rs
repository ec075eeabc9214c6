//! The integer fast path made for maps whose key and value tuples are one to four `int64`
//! fields each, every CSV column one of them: each pair of field counts compiled on its own,
//! tuples of constant size written in place.

use prollystore::tuples::TupleSchema;
use prollystore::TreeSchema;

use crate::records::PlainRun;

use super::batch::Batch;
use super::int_tuple::{IntTuple, INT_COLUMNS, INT_KEY};

/// The layout of a map whose key and value tuples are one to four `int64` fields each, every
/// CSV column one of them: records of such maps are read by [`Int64Layout::run`], made for the
/// field counts at compile time (tuples of constant size written in place, no per-field
/// dispatch).
#[derive(Clone, Copy)]
pub(super) struct Int64Layout {
    /// Key fields (1 to 4).
    key_fields: usize,
    /// Value fields (1 to 4).
    value_fields: usize,
    /// The CSV column of each key field.
    key: [usize; 4],
    /// The CSV column of each value field.
    value: [usize; 4],
    /// True if the CSV columns are the key fields, then the value fields, in order (the
    /// columns are then known at compile time).
    pub(super) in_order: bool,
}

/// The SWAR digit test of `IntRows`' digit reader on the eight bytes of `x` (each byte minus `'0'`): how
/// many of its low bytes are digits (0 to 8).
#[inline(always)]
fn digit_count(x: u64) -> usize {
    let other = (x.wrapping_add(0x7676_7676_7676_7676) | x) & 0x8080_8080_8080_8080;
    (other.trailing_zeros() / 8) as usize
}

/// The value of the digits in the top bytes of `d` (each byte minus `'0'`, first digit in the
/// lowest of them, the bytes below them zero).
#[inline(always)]
fn digits8(d: u64) -> u64 {
    let d = ((d & 0x0f0f_0f0f_0f0f_0f0f).wrapping_mul(2561)) >> 8;
    let d = ((d & 0x00ff_00ff_00ff_00ff).wrapping_mul(6_553_601)) >> 16;
    ((d & 0x0000_ffff_0000_ffff).wrapping_mul(42_949_672_960_001)) >> 32
}

/// The eight bytes of `data` from `i`, as a little-endian integer, minus `'0'` in each byte.
#[inline(always)]
fn word(data: &[u8], i: usize) -> Option<u64> {
    let b: [u8; 8] = data.get(i..i.wrapping_add(8))?.try_into().ok()?;
    Some(u64::from_le_bytes(b).wrapping_sub(0x3030_3030_3030_3030))
}

/// Reads one decimal `int64` field at `data[i..]` that ends with `delimiter`: its value and the
/// index after the delimiter. `None` (for the general path to read) unless it is an optional
/// `-` and 1 to 15 digits, with eight bytes buffered from the field's start, from its first
/// digit and, past eight digits, from the ninth.
#[inline(always)]
fn int64_field(data: &[u8], i: usize, delimiter: u8) -> Option<(i64, usize)> {
    let mut x = word(data, i)?;
    // The lowest byte has no borrow from below.
    let neg = x & 0xff == u64::from(b'-'.wrapping_sub(b'0'));
    let j = i + usize::from(neg);
    if neg {
        x = word(data, j)?;
    }
    let n = digit_count(x);
    let want = u64::from(delimiter.wrapping_sub(b'0'));
    // No borrow reaches byte `n` from the digits below it, so it is the delimiter minus '0'.
    let (v, end) = if (1..8).contains(&n) {
        if (x >> (8 * n)) & 0xff != want {
            return None;
        }
        (digits8(x << (8 * (8 - n))), j + n)
    } else if n == 8 {
        let y = word(data, j + 8)?;
        let m = digit_count(y);
        if m == 8 || (y >> (8 * m)) & 0xff != want {
            return None;
        }
        // Shifted in two steps: by 64 when `m` is 0.
        let low = digits8((y << 8) << (8 * (7 - m)));
        const POW10: [u64; 8] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000];
        (digits8(x) * POW10[m & 7] + low, j + 8 + m)
    } else {
        return None;
    };
    // At most 15 digits: `v` fits an i64 either way.
    let sign = -i64::from(neg);
    Some(((v as i64 ^ sign) - sign, end + 1))
}

/// The tuple of `N` (at most 4) `int64`s in the first `10 * N` bytes: the fields, the
/// offsets of all but the first, the count.
#[inline(always)]
fn int64s_tuple<const N: usize>(ints: &[i64; N]) -> [u8; 40] {
    let mut t = [0u8; 40];
    for (f, v) in ints.iter().enumerate() {
        t[8 * f..8 * f + 8].copy_from_slice(&v.to_le_bytes());
    }
    for f in 1..N {
        let o = 8 * N + 2 * (f - 1);
        t[o..o + 2].copy_from_slice(&((8 * f) as u16).to_le_bytes());
    }
    t[10 * N - 2..10 * N].copy_from_slice(&(N as u16).to_le_bytes());
    t
}

impl Int64Layout {
    /// The layout for `key` and `value` tuples of a CSV file of `columns` columns.
    pub(super) fn new(key: &IntTuple, value: &IntTuple, columns: usize) -> Option<Int64Layout> {
        let (k, v) = (key.int64s?, value.int64s?);
        if k + v != columns {
            return None;
        }
        let mut layout = Int64Layout {
            key_fields: k,
            value_fields: v,
            key: [0; 4],
            value: [0; 4],
            in_order: false,
        };
        for (c, f) in layout.key.iter_mut().zip(&key.fields) {
            *c = f.column;
        }
        for (c, f) in layout.value.iter_mut().zip(&value.fields) {
            *c = f.column;
        }
        let columns = layout.key.iter().take(k).chain(layout.value.iter().take(v));
        layout.in_order = columns.copied().eq(0..k + v);
        Some(layout)
    }

    /// `IntRows::parse_run` for this layout.
    #[inline]
    pub(super) fn run(
        &self,
        data: &[u8],
        room: usize,
        batch: &mut Batch,
        prev: &mut Option<[i64; INT_KEY]>,
        prev_key: Option<&[u8]>,
        schema: &TupleSchema,
    ) -> PlainRun {
        macro_rules! dispatch {
            ($(($k:literal, $v:literal)),*) => {
                match (self.key_fields, self.value_fields, self.in_order) {
                    $(
                        ($k, $v, true) => {
                            self.run_kv::<$k, $v, true>(data, room, batch, prev, prev_key, schema)
                        }
                        ($k, $v, false) => {
                            self.run_kv::<$k, $v, false>(data, room, batch, prev, prev_key, schema)
                        }
                    )*
                    _ => PlainRun::default(),
                }
            };
        }
        dispatch!(
            (1, 1),
            (1, 2),
            (1, 3),
            (1, 4),
            (2, 1),
            (2, 2),
            (2, 3),
            (2, 4),
            (3, 1),
            (3, 2),
            (3, 3),
            (3, 4),
            (4, 1),
            (4, 2),
            (4, 3),
            (4, 4)
        )
    }

    /// [`Int64Layout::run`] for `K` key and `V` value fields (and the columns in that order if
    /// `IN_ORDER`): tuples of constant size made on the stack, the batch's room for them made
    /// once, the rows counted once at the end.
    #[inline(never)]
    fn run_kv<const K: usize, const V: usize, const IN_ORDER: bool>(
        &self,
        data: &[u8],
        room: usize,
        batch: &mut Batch,
        prev: &mut Option<[i64; INT_KEY]>,
        prev_key: Option<&[u8]>,
        schema: &TupleSchema,
    ) -> PlainRun {
        let (ksize, vsize) = (10 * K, 10 * V);
        let mut last: [i64; K] = [0; K];
        let mut have_last = prev.is_some();
        if let Some(p) = prev {
            for (l, p) in last.iter_mut().zip(p.iter()) {
                *l = *p;
            }
        }
        let (key_cols, value_cols) = if IN_ORDER {
            (
                std::array::from_fn::<_, 4, _>(|f| f % INT_COLUMNS),
                std::array::from_fn::<_, 4, _>(|f| (K + f) % INT_COLUMNS),
            )
        } else {
            (
                self.key.map(|c| c % INT_COLUMNS),
                self.value.map(|c| c % INT_COLUMNS),
            )
        };
        let mut run = PlainRun::default();
        batch.keys.reserve(room * ksize);
        batch.values.reserve(room * vsize);
        while run.records < room {
            let rest = data.get(run.bytes..).unwrap_or(&[]);
            let mut cols = [0i64; INT_COLUMNS];
            let mut i = 0;
            let mut whole = true;
            for c in 0..K + V {
                let delimiter = if c + 1 == K + V { b'\n' } else { b',' };
                match int64_field(rest, i, delimiter) {
                    Some((v, next)) => {
                        cols[c % INT_COLUMNS] = v;
                        i = next;
                    }
                    None => {
                        whole = false;
                        break;
                    }
                }
            }
            if !whole {
                break;
            }
            let key: [i64; K] = std::array::from_fn(|f| cols[key_cols[f]]);
            let value: [i64; V] = std::array::from_fn(|f| cols[value_cols[f]]);
            let kt = int64s_tuple(&key);
            let kt = &kt[..ksize];
            // Strictly after the previous key?
            let after = if have_last {
                key > last
            } else {
                prev_key.is_none_or(|pk| schema.compare_keys(pk, kt).is_lt())
            };
            if !after {
                break;
            }
            batch.keys.extend_from_slice(kt);
            batch
                .values
                .extend_from_slice(&int64s_tuple(&value)[..vsize]);
            last = key;
            have_last = true;
            run.last_start = run.bytes;
            run.bytes += i;
            run.records += 1;
        }
        if batch.end_rows(run.records, (ksize, vsize)).is_err() {
            batch.keys.truncate(batch.keys.len() - run.records * ksize);
            batch
                .values
                .truncate(batch.values.len() - run.records * vsize);
            return PlainRun::default();
        }
        if have_last {
            let p = prev.get_or_insert([0; INT_KEY]);
            for (p, l) in p.iter_mut().zip(last) {
                *p = l;
            }
        }
        run
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int64_fields_match_a_plain_parse() {
        let mut texts: Vec<String> = vec![
            String::new(),
            "-".into(),
            "--1".into(),
            "+1".into(),
            "-0".into(),
            "0".into(),
            " 1".into(),
            "1 ".into(),
            "\"1\"".into(),
            "x".into(),
        ];
        for len in 1..=20 {
            for d in ["7", "9", "0"] {
                texts.push(d.repeat(len));
                texts.push(format!("-{}", d.repeat(len)));
            }
            texts.push(format!("{}1", "0".repeat(len)));
        }
        for t in &texts {
            for tail in [",", "\n", "\r\n", "", ";", "-"] {
                for pad in ["", "1,2,3\n", "1234567890123456789"] {
                    let s = format!("{t}{tail}{pad}");
                    let b = s.as_bytes();
                    for delimiter in [b',', b'\n'] {
                        let got = int64_field(b, 0, delimiter);
                        // The field: an optional `-`, the digits after it.
                        let first = usize::from(b.first() == Some(&b'-'));
                        let digits = b[first..].iter().take_while(|c| c.is_ascii_digit()).count();
                        let end = first + digits;
                        let want = ((1..=15).contains(&digits) && b.get(end) == Some(&delimiter))
                            .then(|| (s[..end].parse::<i64>().unwrap(), end + 1));
                        match got {
                            Some(g) => assert_eq!(Some(g), want, "{s:?}"),
                            // Declined: only for want of buffered bytes (8 from the first
                            // digit, and from the ninth when there are more than 8).
                            None => {
                                let short =
                                    b.len() < first + 8 || (digits >= 8 && b.len() < first + 16);
                                assert!(want.is_none() || short, "{s:?} declined");
                            }
                        }
                    }
                }
            }
        }
    }
}
