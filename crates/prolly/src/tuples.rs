//! Maps of Dolt tuples: the [`TupleSchema`] that orders keys with the key descriptor and lists
//! value addresses with the value descriptor, and reading a field's bytes wherever they live
//! (inline, or out of band in a blob tree).

use std::borrow::Cow;
use std::cmp::Ordering;

use prollystore_format::message::Node;
use prollystore_format::tuple::{Adaptive, Tuple, TupleDesc};
use prollystore_format::{Address, Encoding};

use crate::blob::read_blob;
use crate::error::TreeError;
use crate::map::{Map, Window};
use crate::store::StoreFastPaths;
use crate::tree::prefetch::{prefetch_at, prefetch_ptr, touch_keys};
use crate::tree::schema::TreeSchema;

/// Key and value descriptors of a row or index map.
#[derive(Clone, Debug)]
pub struct TupleSchema {
    /// Orders keys (Dolt's comparator, or the descriptor's field orders).
    pub key: TupleDesc,
    /// Describes values; says where out-of-band addresses are.
    pub value: TupleDesc,
    value_addresses: bool,
    fast_keys: Option<FixedIntKeys>,
}

/// A shortcut for keys made only of non-NULL integer fields (the common primary key): such
/// tuples have one length and fixed field positions, so they compare as a few integers. Any
/// tuple of another length or count falls back to the descriptor's comparator.
#[derive(Clone, Debug)]
struct FixedIntKeys {
    /// `(offset, width, signed)` per field.
    fields: Box<[(usize, usize, bool)]>,
    len: usize,
    count: u16,
    /// When every field is 8 bytes wide (at most [`PROBE_FIELDS`] of them): per field, the bit
    /// to flip to make the little-endian word sort like the value (sign bit for signed).
    wide: Option<[u64; PROBE_FIELDS]>,
}

impl FixedIntKeys {
    fn new(desc: &TupleDesc) -> Option<FixedIntKeys> {
        if desc.order().is_some() || desc.is_empty() {
            return None;
        }
        let mut fields = Vec::new();
        let mut off = 0usize;
        for t in desc.types() {
            let (width, signed) = t.enc.integer()?;
            if t.nullable {
                return None;
            }
            fields.push((off, width, signed));
            off += width;
        }
        let n = fields.len();
        let wide = (n <= PROBE_FIELDS && fields.iter().all(|f| f.1 == 8)).then(|| {
            let mut flips = [0u64; PROBE_FIELDS];
            for (flip, f) in flips.iter_mut().zip(&fields) {
                *flip = if f.2 { 1 << 63 } else { 0 };
            }
            flips
        });
        Some(FixedIntKeys {
            fields: fields.into(),
            len: off + 2 * n,
            count: u16::try_from(n).ok()?,
            wide,
        })
    }

    /// The order of `a` and `b`, or `None` if either is not a tuple of this exact shape.
    #[inline]
    fn compare(&self, a: &[u8], b: &[u8]) -> Option<Ordering> {
        if a.len() != self.len || b.len() != self.len {
            return None;
        }
        let count = self.count.to_le_bytes();
        if a[self.len - 2..] != count || b[self.len - 2..] != count {
            return None;
        }
        if let Some(flips) = &self.wide {
            // 8-byte fields at 8-byte steps: one load, one flip and one compare each.
            for (f, &flip) in flips.iter().enumerate().take(self.fields.len()) {
                let x = fixed::<8>(a, 8 * f).map_or(0, u64::from_le_bytes) ^ flip;
                let y = fixed::<8>(b, 8 * f).map_or(0, u64::from_le_bytes) ^ flip;
                if x != y {
                    return Some(x.cmp(&y));
                }
            }
            return Some(Ordering::Equal);
        }
        for &(off, width, signed) in self.fields.iter() {
            let (x, y) = (
                sortable(a, off, width, signed),
                sortable(b, off, width, signed),
            );
            if x != y {
                return Some(x.cmp(&y));
            }
        }
        Some(Ordering::Equal)
    }
}

/// The little-endian integer at `off`, mapped to a `u64` that sorts like the value.
#[inline(always)]
fn sortable(t: &[u8], off: usize, width: usize, signed: bool) -> u64 {
    // Fixed-size reads per width (a runtime-length copy would be a `memcpy` call).
    let raw = match width {
        8 => fixed::<8>(t, off).map_or(0, u64::from_le_bytes),
        4 => fixed::<4>(t, off).map_or(0, |b| u64::from(u32::from_le_bytes(b))),
        2 => fixed::<2>(t, off).map_or(0, |b| u64::from(u16::from_le_bytes(b))),
        _ => fixed::<1>(t, off).map_or(0, |b| u64::from(b[0])),
    };
    if signed {
        let shift = 64 - 8 * width as u32;
        (((raw << shift) as i64) >> shift) as u64 ^ (1 << 63)
    } else {
        raw
    }
}

#[inline(always)]
fn fixed<const W: usize>(t: &[u8], off: usize) -> Option<[u8; W]> {
    t.get(off..off + W)
        .and_then(|b| <[u8; W]>::try_from(b).ok())
}

/// Most key fields the search fast path decodes a probe key into.
const PROBE_FIELDS: usize = 4;

impl FixedIntKeys {
    /// True if `k` has the fixed shape (length and field count).
    #[inline(always)]
    fn fits(&self, k: &[u8]) -> bool {
        k.len() == self.len && k.get(self.len - 2..) == Some(&self.count.to_le_bytes()[..])
    }

    /// The fields of `key` as sortable integers, if it has the fixed shape and few fields.
    #[inline]
    fn probe(&self, key: &[u8]) -> Option<[u64; PROBE_FIELDS]> {
        if self.fields.len() > PROBE_FIELDS || !self.fits(key) {
            return None;
        }
        let mut p = [0u64; PROBE_FIELDS];
        for (slot, &(off, width, signed)) in p.iter_mut().zip(self.fields.iter()) {
            *slot = sortable(key, off, width, signed);
        }
        Some(p)
    }

    /// True if `k` (of the fixed shape) sorts before the decoded probe.
    #[inline(always)]
    fn less_than_probe(&self, k: &[u8], probe: &[u64; PROBE_FIELDS]) -> bool {
        if let Some(flips) = &self.wide {
            for (f, (&flip, &p)) in flips.iter().zip(probe).take(self.fields.len()).enumerate() {
                let x = fixed::<8>(k, 8 * f).map_or(0, u64::from_le_bytes) ^ flip;
                if x != p {
                    return x < p;
                }
            }
            return false;
        }
        for (&(off, width, signed), &p) in self.fields.iter().zip(probe) {
            let x = sortable(k, off, width, signed);
            if x != p {
                return x < p;
            }
        }
        false
    }
}

impl TupleSchema {
    /// The schema of a map with these descriptors.
    pub fn new(key: TupleDesc, value: TupleDesc) -> TupleSchema {
        let value_addresses = value.may_carry_addresses();
        let fast_keys = FixedIntKeys::new(&key);
        TupleSchema {
            key,
            value,
            value_addresses,
            fast_keys,
        }
    }
}

impl TreeSchema for TupleSchema {
    #[inline]
    fn compare_keys(&self, a: &[u8], b: &[u8]) -> Ordering {
        if let Some(fast) = &self.fast_keys {
            if let Some(o) = fast.compare(a, b) {
                return o;
            }
        }
        self.key.compare(a, b)
    }
    #[inline]
    fn values_have_addresses(&self) -> bool {
        self.value_addresses
    }
    #[inline]
    fn push_value_address_offsets(&self, value: &[u8], base: usize, out: &mut Vec<u16>) {
        self.value.push_value_address_offsets(value, base, out)
    }
    fn values_equivalent(&self, a: &[u8], b: &[u8]) -> bool {
        self.value.compare(a, b) == Ordering::Equal
    }
    #[inline]
    fn sort_word(&self, key: &[u8]) -> Option<(u64, bool)> {
        // Keys of non-NULL integers: the first field as a sortable integer, exact when it is
        // the only field.
        let fast = self.fast_keys.as_ref()?;
        let &(off, width, signed) = fast.fields.first()?;
        fast.fits(key)
            .then(|| (sortable(key, off, width, signed), fast.fields.len() == 1))
    }
    #[inline]
    fn lower_bound(&self, node: &Node<'_>, key: &[u8]) -> usize {
        self.lower_bound_within(node, key, None, None)
    }

    #[inline]
    fn lower_bound_within(
        &self,
        node: &Node<'_>,
        key: &[u8],
        after: Option<&[u8]>,
        last: Option<&[u8]>,
    ) -> usize {
        if let Some(fast) = &self.fast_keys {
            if let (Some(flips), true) = (&fast.wide, fast.fits(key)) {
                // The first fields of the bounds, when they have the fixed shape.
                let first = |k: Option<&[u8]>| {
                    k.filter(|k| fast.fits(k))
                        .and_then(|k| fixed::<8>(k, 0))
                        .map(|w| u64::from_le_bytes(w) ^ flips[0])
                };
                let ends = (first(after), first(last));
                return match fast.fields.len() {
                    1 => self.wide_lower_bound::<1>(fast, node, key, flips, ends),
                    2 => self.wide_lower_bound::<2>(fast, node, key, flips, ends),
                    3 => self.wide_lower_bound::<3>(fast, node, key, flips, ends),
                    _ => self.wide_lower_bound::<4>(fast, node, key, flips, ends),
                };
            }
            if let Some(probe) = fast.probe(key) {
                // The probe is decoded once; node keys of the fixed shape compare as integers,
                // any other falls back to the descriptor.
                touch_keys(node);
                return node.partition_point(|k| {
                    if fast.fits(k) {
                        fast.less_than_probe(k, &probe)
                    } else {
                        self.key.compare(k, key) == Ordering::Less
                    }
                });
            }
        }
        touch_keys(node);
        node.partition_point(|k| self.compare_keys(k, key) == Ordering::Less)
    }
}

impl TupleSchema {
    /// [`TreeSchema::lower_bound`] for keys of `N` 8-byte integer fields: a branch-free binary
    /// search (the halving step is a conditional move, not a jump the predictor gets wrong
    /// half the time) reading each key as `N` words. Being branch-free, it cannot run ahead
    /// speculatively, so each step prefetches the offsets and (guessing a uniform key width) the
    /// key bytes of both candidates for the next step: cold nodes cost about one memory latency
    /// per level instead of one per step.
    #[inline]
    fn wide_lower_bound<const N: usize>(
        &self,
        fast: &FixedIntKeys,
        node: &Node<'_>,
        key: &[u8],
        flips: &[u64; PROBE_FIELDS],
        ends: Ends,
    ) -> usize {
        // The probe's fields, flipped to sort as unsigned (`key` has the fixed shape, so the
        // reads never miss; the loop over a constant count unrolls).
        let mut probe = [0u64; PROBE_FIELDS];
        for (f, (p, &flip)) in probe.iter_mut().zip(flips).enumerate().take(N) {
            *p = fixed::<8>(key, 8 * f).map_or(0, u64::from_le_bytes) ^ flip;
        }
        let probe = &probe;
        let offsets = node.key_offsets_bytes();
        let items = node.key_items();
        let count = fast.count.to_le_bytes();
        if node.key_width() == Some(fast.len) {
            let found = Self::stride_lower_bound::<N>(
                items,
                fast.len,
                node.count(),
                probe,
                flips,
                ends,
                count,
            );
            if let Some(found) = found {
                return found;
            }
        }
        let less = |i: usize| -> bool {
            let (start, end) = match offsets.get(2 * i..2 * i + 4) {
                Some(&[a, b, c, d]) => (
                    usize::from(u16::from_le_bytes([a, b])),
                    usize::from(u16::from_le_bytes([c, d])),
                ),
                _ => (0, 0),
            };
            let k = items.get(start..end).unwrap_or(&[]);
            if k.len() != fast.len || k.get(fast.len - 2..) != Some(&count[..]) {
                return self.key.compare(k, key) == Ordering::Less;
            }
            for f in 0..N {
                let x = fixed::<8>(k, 8 * f).map_or(0, u64::from_le_bytes) ^ flips[f];
                if x != probe[f] {
                    return x < probe[f];
                }
            }
            false
        };
        let mut size = node.count();
        if size == 0 {
            return 0;
        }
        // A guess only: a wrong one prefetches useless lines, never changes the answer.
        let stride = items.len() / size;
        let fetch = |i: usize| {
            prefetch_at(offsets, 2 * i);
            prefetch_at(items, i * stride);
        };
        let mut base = 0usize;
        fetch(size / 2);
        while size > 1 {
            let half = size / 2;
            let mid = base + half;
            let next = (size - half) / 2;
            fetch(base + next);
            fetch(mid + next);
            base = if less(mid) { mid } else { base };
            size -= half;
        }
        base + usize::from(less(base))
    }
}

impl TupleSchema {
    /// [`TupleSchema::wide_lower_bound`] on a node whose `count` keys are all `width` bytes
    /// long ([`Node::key_width`]), or `None` if they do not end with `field_count` (another
    /// shape of the same length, which the caller searches the general way): key `i` starts at
    /// `i * width`, so no offsets are read, every prefetch hits the right line, and the compare
    /// is branch-free too.
    #[inline]
    fn stride_lower_bound<const N: usize>(
        keys: &[u8],
        width: usize,
        count: usize,
        probe: &[u64; PROBE_FIELDS],
        flips: &[u64; PROBE_FIELDS],
        (after, last): Ends,
        field_count: [u8; 2],
    ) -> Option<usize> {
        // Every key read below lies within `keys`: `i < count`, the `N` words end within a key
        // (`8 * N + 2 <= width`), and `count * width <= keys.len()`. A layout that says
        // otherwise (not one from verification) goes back to the caller's checked search.
        if count == 0 {
            return Some(0);
        }
        if 8 * N + 2 > width || count.checked_mul(width).is_none_or(|n| n > keys.len()) {
            return None;
        }
        // The node's keys all have one length and end with the same two bytes (that is what
        // its key width says): any one key's tell whether they have this schema's field
        // count. The one checked is the first the search reads anyway, so the check costs
        // no extra cache miss.
        let shaped = |i: usize| {
            let end = (i + 1) * width;
            keys.get(end - 2..end) == Some(&field_count[..])
        };
        let keys = Stride::<N> {
            keys,
            width,
            last: count - 1,
            probe,
            flips,
        };
        if count >= INTERPOLATE_MIN {
            // Guess from the first fields of the bounds (from the parent: no read of this
            // node, so the guessed line is the first one fetched; else the node's end keys,
            // independent loads fetched in parallel), then gallop from the guess: on evenly
            // spread keys the answer is a key or two away, in lines already fetched.
            let (lo, exclusive) = match after {
                Some(a) => (a, true),
                None => (keys.first_word(0), false),
            };
            let hi = last.unwrap_or_else(|| keys.first_word(count - 1));
            let g = interpolate(lo, exclusive, hi, probe[0], count);
            prefetch_ptr(keys.line(g.saturating_sub(1)));
            prefetch_ptr(keys.line(g + 1));
            return shaped(g).then(|| gallop_lower_bound(count, g, &keys));
        }
        shaped(count / 2).then(|| branchless_lower_bound(0, count, &keys))
    }
}

/// Keys of `N` 8-byte integer fields at a fixed stride, compared with a decoded probe.
struct Stride<'a, const N: usize> {
    keys: &'a [u8],
    width: usize,
    /// Index of the last key: `(last + 1) * width <= keys.len()` and `8 * N <= width`.
    last: usize,
    probe: &'a [u64; PROBE_FIELDS],
    flips: &'a [u64; PROBE_FIELDS],
}

/// Sorted keys searched for the first not less than a probe.
trait SortedProbe {
    /// True if key `i` sorts before the probe (true then false as `i` grows).
    fn less(&self, i: usize) -> bool;
    /// Where key `i` starts, for prefetching (any value is harmless).
    fn line(&self, i: usize) -> *const u8;
}

impl<const N: usize> Stride<'_, N> {
    /// Word `f` (flipped to sort as unsigned) of key `i`, `i` clamped to the last key.
    #[inline(always)]
    fn word(&self, i: usize, f: usize) -> u64 {
        let at = i.min(self.last) * self.width + 8 * f.min(N - 1);
        // SAFETY: `i <= last` and `f < N`, so `at + 8 <= (last + 1) * width <= keys.len()`
        // (checked where `Stride` is made). Unchecked reads pay (`docs/PERF.md`, "Key search").
        let word = unsafe {
            self.keys
                .as_ptr()
                .add(at)
                .cast::<[u8; 8]>()
                .read_unaligned()
        };
        u64::from_le_bytes(word) ^ self.flips[f]
    }

    /// The first field of key `i` (sortable form).
    #[inline(always)]
    fn first_word(&self, i: usize) -> u64 {
        self.word(i, 0)
    }
}

impl<const N: usize> SortedProbe for Stride<'_, N> {
    /// Branch-free: the fields are all read and combined.
    #[inline(always)]
    fn less(&self, i: usize) -> bool {
        let (mut lt, mut eq) = (false, true);
        for f in 0..N {
            let x = self.word(i, f);
            lt |= eq & (x < self.probe[f]);
            eq &= x == self.probe[f];
        }
        lt
    }

    #[inline(always)]
    fn line(&self, i: usize) -> *const u8 {
        self.keys.as_ptr().wrapping_add(i.wrapping_mul(self.width))
    }
}

/// Nodes with fewer keys take the plain binary search (a guess saves little there).
const INTERPOLATE_MIN: usize = 8;

/// Gallop steps taken from an interpolation guess before the remaining range is left to the
/// binary search: a good guess is within a few keys of the answer.
const GALLOP_STEPS: u32 = 3;

/// First fields (sortable form) of the bounds a parent gives a node's keys: the key before
/// them (exclusive) and their last key (inclusive), when known.
type Ends = (Option<u64>, Option<u64>);

/// Where a key whose first field (sortable form) is `p` probably sits among `count` keys whose
/// first fields run from `lo` (the first key's, or just below it when `exclusive`) to `hi`,
/// assuming they are spread evenly: an index `< count`.
#[inline(always)]
fn interpolate(lo: u64, exclusive: bool, hi: u64, p: u64, count: usize) -> usize {
    if p <= lo || hi <= lo {
        return 0;
    }
    if p >= hi {
        return count - 1;
    }
    // `lo < p < hi`: a fraction in (0, 1); f64 rounding can only move the guess, which the
    // search corrects. Key `j` sits near `lo + (j + a) / (count - 1 + a)` of the way, with
    // `a = 1` when `lo` is below the first key.
    // Halved differences convert as signed integers (one instruction, not the unsigned
    // conversion's several).
    let a = f64::from(u8::from(exclusive));
    let f = ((p - lo) >> 1) as i64 as f64 / ((hi - lo) >> 1).max(1) as i64 as f64;
    // Rounded to nearest; through i64 (a signed conversion is one instruction), clamped.
    ((f * ((count - 1) as f64 + a) - a + 0.5) as i64).clamp(0, count as i64 - 1) as usize
}

/// Smallest `i <= count` for which `keys.less(i)` is false, starting from the guess
/// `g < count`: steps of 1, 2, 4, ... away from `g` bracket the answer, and after
/// [`GALLOP_STEPS`] of them the branch-free search finishes. The answer does not depend on `g`;
/// only the number of probes does. Only keys below `count` are read.
#[inline(always)]
fn gallop_lower_bound(count: usize, g: usize, keys: &impl SortedProbe) -> usize {
    // Invariant: the answer is in `lo..=hi`.
    let (mut lo, mut hi);
    if keys.less(g) {
        (lo, hi) = (g + 1, count);
        let mut step = 1usize;
        for _ in 0..GALLOP_STEPS {
            let j = g + step;
            if j >= count {
                break;
            }
            if keys.less(j) {
                lo = j + 1;
            } else {
                hi = j;
                break;
            }
            step *= 2;
        }
    } else {
        (lo, hi) = (0, g);
        let mut step = 1usize;
        for _ in 0..GALLOP_STEPS {
            let Some(j) = g.checked_sub(step) else {
                break;
            };
            if keys.less(j) {
                lo = j + 1;
                break;
            }
            hi = j;
            step *= 2;
        }
    }
    if lo >= hi {
        return lo;
    }
    branchless_lower_bound(lo, hi - lo, keys)
}

/// Smallest `i` in `base..=base + size` for which `keys.less(i)` is false, given `size > 0`,
/// every index below `base` less and `less` true then false; reads only keys below
/// `base + size`. Branch-free (the halving step is a conditional move); each step prefetches
/// the keys both candidates of the next step would read.
#[inline(always)]
fn branchless_lower_bound(mut base: usize, mut size: usize, keys: &impl SortedProbe) -> usize {
    prefetch_ptr(keys.line(base + size / 2));
    while size > 1 {
        let half = size / 2;
        let mid = base + half;
        let next = (size - half) / 2;
        prefetch_ptr(keys.line(base + next));
        prefetch_ptr(keys.line(mid + next));
        base = if keys.less(mid) { mid } else { base };
        size -= half;
    }
    base + usize::from(keys.less(base))
}

impl<'s, S: StoreFastPaths + ?Sized> Map<'s, S, TupleSchema> {
    /// Rows whose first `n` key fields equal those of `prefix` (a key tuple with at least `n`
    /// fields), in key order: an index lookup on a leading column, for example.
    pub fn prefix_rows<'p>(
        &'p self,
        prefix: &'p [u8],
        n: usize,
    ) -> Result<Window<'s, S, impl Fn(&[u8]) -> Ordering + 'p>, TreeError> {
        let desc = &self.schema().key;
        self.prefix_range(move |k: &[u8]| desc.compare_prefix(k, prefix, n))
    }
}

/// The bytes of field `i` of `tuple` under `desc`, following out-of-band adaptive values and
/// `*_addr` fields (except `commit_addr`) into their blob trees (`None` = NULL). Inline values
/// are borrowed.
pub fn field_bytes<'t, S: StoreFastPaths + ?Sized>(
    store: &S,
    desc: &TupleDesc,
    tuple: &'t [u8],
    i: usize,
) -> Result<Option<Cow<'t, [u8]>>, TreeError> {
    let Some(raw) = desc.field(Tuple::new_unverified(tuple), i) else {
        return Ok(None);
    };
    let Some(ty) = desc.types().get(i) else {
        return Ok(Some(Cow::Borrowed(raw)));
    };
    if ty.enc.is_adaptive() {
        return match Adaptive::from_bytes(raw) {
            Some(Adaptive::Inline(bytes)) => Ok(Some(Cow::Borrowed(bytes))),
            Some(Adaptive::OutOfBand { len, address }) => {
                let mut out = Vec::with_capacity(len.min(1 << 24) as usize);
                read_blob(store, &address, &mut out)?;
                Ok(Some(Cow::Owned(out)))
            }
            None => Err(TreeError::BadBlob {
                address: Address::ZERO,
                reason: format!("field {i} holds a malformed adaptive value"),
            }),
        };
    }
    if ty.enc.is_address() && ty.enc != Encoding::CommitAddr {
        let Some(address) = Address::from_slice(raw) else {
            return Err(TreeError::BadBlob {
                address: Address::ZERO,
                reason: format!("field {i} is not a 20-byte address"),
            });
        };
        let mut out = Vec::new();
        read_blob(store, &address, &mut out)?;
        return Ok(Some(Cow::Owned(out)));
    }
    Ok(Some(Cow::Borrowed(raw)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use prollystore_format::tuple::Type;

    fn tup(fields: &[&[u8]]) -> Vec<u8> {
        let mut t = Vec::new();
        let mut offs = Vec::new();
        for (i, f) in fields.iter().enumerate() {
            if i > 0 {
                offs.push(t.len() as u16);
            }
            t.extend_from_slice(f);
        }
        for o in offs {
            t.extend_from_slice(&o.to_le_bytes());
        }
        t.extend_from_slice(&(fields.len() as u16).to_le_bytes());
        t
    }

    #[test]
    fn fast_integer_keys_agree_with_the_descriptor() {
        let desc = TupleDesc::new(vec![
            Type::not_null(Encoding::Int16),
            Type::not_null(Encoding::Uint32),
            Type::not_null(Encoding::Int64),
            Type::not_null(Encoding::Int8),
        ]);
        let schema = TupleSchema::new(desc.clone(), TupleDesc::new(vec![]));
        assert!(schema.fast_keys.is_some());
        let mut x = 0x1234_5678_9abc_def0u64;
        let mut keys = Vec::new();
        let edge16 = [i16::MIN, -1, 0, 1, i16::MAX];
        for i in 0..400usize {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let a = edge16[i % 5].wrapping_add((x >> 60) as i16);
            let b = if i % 3 == 0 {
                u32::MAX - (x >> 62) as u32
            } else {
                (x >> 40) as u32 % 4
            };
            let c = if i % 7 == 0 {
                i64::MIN + (x >> 63) as i64
            } else {
                (x as i64) >> 62
            };
            let d = (x >> 56) as i8;
            keys.push(tup(&[
                &a.to_le_bytes(),
                &b.to_le_bytes(),
                &c.to_le_bytes(),
                &d.to_le_bytes(),
            ]));
        }
        keys.push(tup(&[&1i16.to_le_bytes()])); // other shape: falls back
        for p in &keys {
            for q in &keys {
                assert_eq!(schema.compare_keys(p, q), desc.compare(p, q));
            }
        }
    }

    #[test]
    fn fast_lower_bound_agrees_with_the_comparator() {
        use crate::{ChunkStore, Map, MemoryStore};
        for types in [
            vec![Type::not_null(Encoding::Int64)],
            vec![
                Type::not_null(Encoding::Int64),
                Type::not_null(Encoding::Uint64),
            ],
            vec![
                Type::not_null(Encoding::Int32),
                Type::not_null(Encoding::Int64),
            ],
        ] {
            let desc = TupleDesc::new(types.clone());
            let schema = TupleSchema::new(desc.clone(), TupleDesc::new(vec![]));
            let mk = |a: i64, b: i64| -> Vec<u8> {
                let f0: Vec<u8> = if types[0].enc == Encoding::Int32 {
                    (a as i32).to_le_bytes().to_vec()
                } else {
                    a.to_le_bytes().to_vec()
                };
                if types.len() == 1 {
                    tup(&[&f0])
                } else {
                    tup(&[&f0, &b.to_le_bytes()])
                }
            };
            let mut keys: Vec<Vec<u8>> = (-300i64..300)
                .flat_map(|a| [mk(a * 3, -1), mk(a * 3, 5)])
                .collect();
            keys.sort_by(|a, b| desc.compare(a, b));
            keys.dedup();
            let store = MemoryStore::default();
            let empty = tup(&[]);
            let map = Map::from_sorted(
                &store,
                schema.clone(),
                keys.iter().map(|k| (&k[..], &empty[..])),
            )
            .unwrap();
            let root = store.get_node(&map.root()).unwrap();
            let mut nodes = vec![root];
            if !root.is_leaf() {
                nodes.push(store.get_node(&root.child(0)).unwrap());
            }
            let odd = tup(&[&1i16.to_le_bytes()]);
            for node in nodes {
                assert!(node.count() > 1);
                let probes = (-1000i64..1000)
                    .map(|a| mk(a, (a % 3) * 4 - 2))
                    .chain([odd.clone()]);
                for p in probes {
                    let want =
                        node.partition_point(|k| desc.compare(k, &p) == std::cmp::Ordering::Less);
                    assert_eq!(schema.lower_bound(&node, &p), want);
                }
            }
        }
    }

    /// `count` keys of which the first `answer` are less than the probe.
    struct Answer {
        count: usize,
        answer: usize,
    }

    impl SortedProbe for Answer {
        fn less(&self, i: usize) -> bool {
            assert!(i < self.count, "probed {i} of {}", self.count);
            i < self.answer
        }
        fn line(&self, _: usize) -> *const u8 {
            std::ptr::null()
        }
    }

    #[test]
    fn gallop_finds_the_answer_from_any_guess() {
        for count in 1..80usize {
            for answer in 0..=count {
                let keys = Answer { count, answer };
                for g in 0..count {
                    let got = gallop_lower_bound(count, g, &keys);
                    assert_eq!(got, answer, "count {count} guess {g}");
                }
            }
        }
    }

    /// First fields of `n` keys spread in one of several ways (even, skewed, clustered,
    /// repeated, at the ends of the range), from `seed`.
    fn first_fields(kind: u8, n: usize, seed: u64) -> Vec<i64> {
        let mut x = seed | 1;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        (0..n as i64)
            .map(|i| match kind % 6 {
                0 => 2 * i - n as i64,
                1 => i * i * i - 5000,
                2 => i / 7 - 3,
                3 => rnd() as i64,
                4 => {
                    if i % 2 == 0 {
                        i64::MIN + i
                    } else {
                        i64::MAX - i
                    }
                }
                _ => (rnd() % 50) as i64 * (1 << 40) - (1 << 44),
            })
            .collect()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

        /// The guessing search (interpolation from the node's or the parent's end keys, then
        /// a gallop) gives exactly the comparator's lower bound, with right, missing or wrong
        /// bounds, on every node of trees of unevenly spread keys with repeated first fields.
        #[test]
        fn guessing_lower_bound_agrees_with_the_comparator(
            kind in 0u8..6,
            n in 1usize..2500,
            seed in proptest::prelude::any::<u64>(),
            two_fields in proptest::prelude::any::<bool>(),
            unsigned in proptest::prelude::any::<bool>(),
        ) {
            use crate::{ChunkStore, Map, MemoryStore};
            let first = if unsigned { Encoding::Uint64 } else { Encoding::Int64 };
            let mut types = vec![Type::not_null(first)];
            if two_fields {
                types.push(Type::not_null(Encoding::Int64));
            }
            let desc = TupleDesc::new(types);
            let schema = TupleSchema::new(desc.clone(), TupleDesc::new(vec![]));
            let mk = |a: i64, b: i64| -> Vec<u8> {
                if two_fields {
                    tup(&[&a.to_le_bytes(), &b.to_le_bytes()])
                } else {
                    tup(&[&a.to_le_bytes()])
                }
            };
            let mut keys: Vec<Vec<u8>> = first_fields(kind, n, seed)
                .into_iter()
                .enumerate()
                .map(|(i, a)| mk(a, (i as i64 % 5) - 2))
                .collect();
            keys.sort_by(|a, b| desc.compare(a, b));
            keys.dedup();
            let store = MemoryStore::default();
            let empty = tup(&[]);
            let map = Map::from_sorted(
                &store,
                schema.clone(),
                keys.iter().map(|k| (&k[..], &empty[..])),
            )
            .unwrap();
            // Probes: every key, its neighbours in both fields, and extremes.
            let mut probes = vec![mk(i64::MIN, 0), mk(i64::MAX, 0), mk(-1, -1), mk(0, 0)];
            for k in keys.iter().step_by(3) {
                let a = i64::from_le_bytes(k[..8].try_into().unwrap());
                probes.extend([
                    k.clone(),
                    mk(a.wrapping_add(1), -9),
                    mk(a.wrapping_sub(1), 9),
                    mk(a, -9),
                    mk(a, 9),
                ]);
            }
            // Every node with the bounds its parent gives it.
            let mut stack = vec![(map.root(), None::<Vec<u8>>, None::<Vec<u8>>)];
            while let Some((address, after, last)) = stack.pop() {
                let node = store.get_node(&address).unwrap();
                let wrong = Some(keys[keys.len() / 2].clone());
                for p in &probes {
                    let want = node
                        .partition_point(|k| desc.compare(k, p) == std::cmp::Ordering::Less);
                    for (a, l) in [
                        (after.as_deref(), last.as_deref()),
                        (None, None),
                        (None, last.as_deref()),
                        (after.as_deref(), None),
                        (wrong.as_deref(), after.as_deref()),
                        (last.as_deref(), wrong.as_deref()),
                    ] {
                        proptest::prop_assert_eq!(schema.lower_bound_within(&node, p, a, l), want);
                    }
                }
                if !node.is_leaf() {
                    for i in 0..node.count() {
                        let a = if i > 0 { Some(node.key(i - 1).to_vec()) } else { after.clone() };
                        stack.push((node.child(i), a, Some(node.key(i).to_vec())));
                    }
                }
            }
            // And the descent itself.
            for p in &probes {
                let want = keys.binary_search_by(|k| desc.compare(k, p)).is_ok();
                proptest::prop_assert_eq!(map.get(p).unwrap().is_some(), want);
            }
        }
    }

    #[test]
    fn diff_ignores_equivalent_values() {
        use crate::{Map, MemoryStore};
        let k = TupleDesc::new(vec![Type::not_null(Encoding::Int64)]);
        let v = TupleDesc::new(vec![Type::not_null(Encoding::Float64)]);
        let schema = TupleSchema::new(k, v);
        let store = MemoryStore::default();
        let key = tup(&[&1i64.to_le_bytes()]);
        let (pos, neg) = (
            tup(&[&0.0f64.to_le_bytes()]),
            tup(&[&(-0.0f64).to_le_bytes()]),
        );
        let (one, two) = (tup(&[&1.0f64.to_le_bytes()]), tup(&[&2.0f64.to_le_bytes()]));
        let a = Map::from_sorted(&store, schema.clone(), [(&key[..], &pos[..])]).unwrap();
        let b = Map::from_sorted(&store, schema.clone(), [(&key[..], &neg[..])]).unwrap();
        assert_ne!(a.root(), b.root());
        assert_eq!(
            a.diff(&b).unwrap().count(),
            0,
            "+0.0 and -0.0 are the same value"
        );
        let c = Map::from_sorted(&store, schema.clone(), [(&key[..], &one[..])]).unwrap();
        let d = Map::from_sorted(&store, schema, [(&key[..], &two[..])]).unwrap();
        assert_eq!(c.diff(&d).unwrap().count(), 1);
    }
}
