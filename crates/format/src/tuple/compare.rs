//! Dolt's tuple order (`DefaultTupleComparator`), total over arbitrary bytes.
//!
//! Field by field over the descriptor's fields, first difference wins; missing trailing fields
//! are NULL and NULL sorts first. Per encoding:
//!
//! * integers, enum, set, bit64, time, datetime: numeric; year: decoded (year 0 first);
//!   date: chronological after Go's normalisation of zero months/days;
//! * float32/float64: `a == b` → Equal, `a < b` → Less, otherwise Greater (so −0 == +0 and any
//!   NaN compares Greater, both ways);
//! * decimal: numeric (see [`Decimal::compare`]);
//! * string/bytes: bytewise without the terminator; hash128, cell, `*_addr`: bytewise;
//! * string and string adaptive (inline) fields with a collation that is not code-point order
//!   (see [`TupleDesc::with_collations`]): by the collation, as Dolt's
//!   `CollationTupleComparator` does;
//! * string/bytes/geometry adaptive: inline payloads bytewise; when either side is out of band
//!   the descriptor's [`FieldOrder`](super::FieldOrder) decides;
//! * json, geometry, extended*, json adaptive (and fields the hook takes over): the hook.
//!
//! **Fallback without a hook** (not Dolt's order, only deterministic): the raw stored bytes are
//! compared bytewise. Malformed fields (wrong width, undecodable decimal) are ordered after
//! well-formed ones and bytewise among themselves; nothing ever panics.

use std::cmp::Ordering;

use super::decimal::Decimal;
use super::desc::Kind;
use super::temporal::{year_from_raw, Date};
use super::TupleDesc;

/// A tuple's count and data end, read once per comparison.
#[derive(Clone, Copy)]
struct Fields<'a> {
    bytes: &'a [u8],
    count: usize,
    split: usize,
}

impl<'a> Fields<'a> {
    #[inline(always)]
    fn new(bytes: &'a [u8]) -> Fields<'a> {
        let count = match bytes.len() {
            n if n >= 2 => usize::from(u16::from_le_bytes([bytes[n - 2], bytes[n - 1]])),
            _ => 0,
        };
        Fields {
            bytes,
            count,
            split: bytes.len().saturating_sub(2 * count.max(1)),
        }
    }

    #[inline(always)]
    fn u16_at(&self, pos: usize) -> usize {
        match self.bytes.get(pos..pos + 2) {
            Some(&[a, b]) => usize::from(u16::from_le_bytes([a, b])),
            _ => 0,
        }
    }

    #[inline(always)]
    fn get(&self, i: usize, fixed: Option<&(u16, u16)>) -> Option<&'a [u8]> {
        if i >= self.count {
            return None;
        }
        if let Some(&(start, stop)) = fixed {
            if usize::from(stop) <= self.split {
                return self.bytes.get(usize::from(start)..usize::from(stop));
            }
        }
        let start = if i == 0 {
            0
        } else {
            self.u16_at(self.split + 2 * (i - 1))
        };
        let stop = if i + 1 == self.count {
            self.split
        } else {
            self.u16_at(self.split + 2 * i)
        };
        if start >= stop {
            return None;
        }
        self.bytes.get(start..stop)
    }
}

impl TupleDesc {
    /// Orders two tuples as Dolt's default comparator does, over all of this descriptor's fields.
    /// Total over arbitrary bytes; never panics, never allocates for the encodings Dolt orders
    /// (decimals with coefficients above 16 bytes excepted).
    #[inline]
    pub fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        match self.compare_canonical(a, b) {
            Some(ord) => ord,
            None => self.compare_prefix(a, b, self.len()),
        }
    }

    /// The fast path for descriptors made only of non-nullable fixed-width fields, when both
    /// tuples have exactly the canonical shape (every field stored, total length as expected).
    /// For such tuples the general path reads every field at its fixed-access position too, so
    /// the result is the same; `None` sends anything else there.
    #[inline(always)]
    fn compare_canonical(&self, a: &[u8], b: &[u8]) -> Option<Ordering> {
        let n = self.canonical_len;
        if n == 0 || a.len() != n || b.len() != n {
            return None;
        }
        let count = self.fixed.len();
        let stored = |t: &[u8]| {
            t.last_chunk::<2>()
                .map(|c| usize::from(u16::from_le_bytes(*c)))
        };
        if stored(a) != Some(count) || stored(b) != Some(count) {
            return None;
        }
        if self.all_i64 {
            // Fields at 0, 8, 16, ...: `count` of them fill the data exactly.
            let mut at = 0;
            while at < 8 * count {
                let x = i64::from_le_bytes(*a.get(at..)?.first_chunk::<8>()?);
                let y = i64::from_le_bytes(*b.get(at..)?.first_chunk::<8>()?);
                if x != y {
                    return Some(x.cmp(&y));
                }
                at += 8;
            }
            return Some(Ordering::Equal);
        }
        for (i, (&(start, stop), &kind)) in self.fixed.iter().zip(self.kinds.iter()).enumerate() {
            let (start, stop) = (usize::from(start), usize::from(stop));
            // Integers (the usual key columns) inline; anything else through the general rule.
            let ord = match kind {
                Kind::I64 => int_at(a, b, start, i64::from_le_bytes)?,
                Kind::U64 => int_at(a, b, start, u64::from_le_bytes)?,
                Kind::I32 => int_at(a, b, start, i32::from_le_bytes)?,
                Kind::U32 => int_at(a, b, start, u32::from_le_bytes)?,
                Kind::I16 => int_at(a, b, start, i16::from_le_bytes)?,
                Kind::U16 => int_at(a, b, start, u16::from_le_bytes)?,
                Kind::I8 => int_at(a, b, start, i8::from_le_bytes)?,
                Kind::U8 => int_at(a, b, start, u8::from_le_bytes)?,
                _ => self.compare_field(i, a.get(start..stop)?, b.get(start..stop)?),
            };
            if ord != Ordering::Equal {
                return Some(ord);
            }
        }
        Some(Ordering::Equal)
    }

    /// Orders two tuples by their first `n` fields only (as a [`TupleDesc::prefix`] descriptor
    /// would).
    pub fn compare_prefix(&self, a: &[u8], b: &[u8], n: usize) -> Ordering {
        let (fa, fb) = (Fields::new(a), Fields::new(b));
        let n = n.min(self.kinds.len());
        for i in 0..n {
            let fixed = self.fixed.get(i);
            let ord = match (fa.get(i, fixed), fb.get(i, fixed)) {
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Less,
                (Some(_), None) => Ordering::Greater,
                (Some(x), Some(y)) => self.compare_field(i, x, y),
            };
            if ord != Ordering::Equal {
                return ord;
            }
        }
        Ordering::Equal
    }

    /// Orders two non-NULL stored values of field `i` (raw bytes as stored).
    #[inline]
    pub fn compare_field(&self, i: usize, x: &[u8], y: &[u8]) -> Ordering {
        let Some(&kind) = self.kinds.get(i) else {
            return x.cmp(y);
        };
        match kind {
            Kind::I8 => num(x, y, |b: [u8; 1]| i8::from_le_bytes(b)),
            Kind::U8 => num(x, y, |b: [u8; 1]| b[0]),
            Kind::I16 => num(x, y, i16::from_le_bytes),
            Kind::U16 => num(x, y, u16::from_le_bytes),
            Kind::I32 => num(x, y, i32::from_le_bytes),
            Kind::U32 => num(x, y, u32::from_le_bytes),
            Kind::I64 => num(x, y, i64::from_le_bytes),
            Kind::U64 => num(x, y, u64::from_le_bytes),
            Kind::F32 => float(x, y, f32::from_le_bytes),
            Kind::F64 => float(x, y, f64::from_le_bytes),
            Kind::Year => num(x, y, |b: [u8; 1]| year_from_raw(b[0])),
            Kind::Date => num(x, y, |b: [u8; 4]| {
                Date::from_raw(u32::from_le_bytes(b)).normalized_days()
            }),
            Kind::Raw => x.cmp(y),
            Kind::Terminated => strip_last(x).cmp(strip_last(y)),
            Kind::Decimal => match (Decimal::from_bytes(x), Decimal::from_bytes(y)) {
                (Some(p), Some(q)) => p.compare(&q),
                (p, q) => malformed(p.is_some(), q.is_some(), x, y),
            },
            Kind::Adaptive => match (x.split_first(), y.split_first()) {
                (Some((0, p)), Some((0, q))) => p.cmp(q),
                _ => self.external(i, x, y),
            },
            Kind::External => self.external(i, x, y),
            Kind::CollatedString => self.collated(i, strip_last(x), strip_last(y)),
            Kind::CollatedAdaptive => match (x.split_first(), y.split_first()) {
                (Some((0, p)), Some((0, q))) => self.collated(i, p, q),
                _ => self.external(i, x, y),
            },
        }
    }

    /// Orders two string payloads by field `i`'s collation.
    #[inline(never)]
    fn collated(&self, i: usize, x: &[u8], y: &[u8]) -> Ordering {
        match self.collation(i) {
            Some(c) => c.compare(x, y),
            None => x.cmp(y),
        }
    }

    #[cold]
    fn external(&self, i: usize, x: &[u8], y: &[u8]) -> Ordering {
        match (&self.order, self.types.get(i)) {
            (Some(order), Some(&ty)) => order.compare(i, ty, x, y),
            _ => x.cmp(y),
        }
    }
}

/// Orders the `N`-byte little-endian integers at `start` of `a` and `b`; `None` if either is
/// short.
#[inline(always)]
fn int_at<const N: usize, T: Ord>(
    a: &[u8],
    b: &[u8],
    start: usize,
    f: impl Fn([u8; N]) -> T,
) -> Option<Ordering> {
    let x = a.get(start..)?.first_chunk::<N>()?;
    let y = b.get(start..)?.first_chunk::<N>()?;
    Some(f(*x).cmp(&f(*y)))
}

#[inline(always)]
fn num<const N: usize, T: Ord>(x: &[u8], y: &[u8], f: impl Fn([u8; N]) -> T) -> Ordering {
    match (<[u8; N]>::try_from(x), <[u8; N]>::try_from(y)) {
        (Ok(p), Ok(q)) => f(p).cmp(&f(q)),
        (p, q) => malformed(p.is_ok(), q.is_ok(), x, y),
    }
}

#[inline(always)]
fn float<const N: usize, T: PartialOrd>(x: &[u8], y: &[u8], f: impl Fn([u8; N]) -> T) -> Ordering {
    match (<[u8; N]>::try_from(x), <[u8; N]>::try_from(y)) {
        (Ok(p), Ok(q)) => {
            let (p, q) = (f(p), f(q));
            if p == q {
                Ordering::Equal
            } else if p < q {
                Ordering::Less
            } else {
                Ordering::Greater
            }
        }
        (p, q) => malformed(p.is_ok(), q.is_ok(), x, y),
    }
}

/// Order when at least one side is malformed: well-formed first, then bytewise.
#[cold]
fn malformed(x_ok: bool, y_ok: bool, x: &[u8], y: &[u8]) -> Ordering {
    y_ok.cmp(&x_ok).then_with(|| x.cmp(y))
}

#[inline(always)]
fn strip_last(x: &[u8]) -> &[u8] {
    x.split_last().map_or(x, |(_, rest)| rest)
}
