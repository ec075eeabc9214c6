//! Sorting many keys fast, the one place for it: exact sort words (`word << 64 | position`,
//! so that equal words are equal keys and ties keep their positions) sorted by bucketing
//! ([`sort_words`]). The sorting builder ([`crate::builder::SortingBuilder`]) sorts its
//! buffers' words with it; [`sorted_positions`] and [`sorted_positions_by_prefix`] sort
//! tuples held anywhere (Dolt's bulk imports and index builds), packing integer tuples into
//! exact words by each field's range of values and falling back to the descriptor's order.

use std::cmp::Ordering;

use prollystore_format::tuple::{Tuple, TupleDesc};

use crate::process::background_hashing;

/// Asks the kernel to back the untouched capacity of `v` with 2 MiB pages (Linux; only
/// advice). The sorted passes over a buffer jump all over its rows and the bucket pass writes
/// to thousands of places at once: with 4 KiB pages nearly every one of those accesses also
/// misses the TLB.
pub(crate) fn advise_huge_pages<T>(v: &Vec<T>) {
    #[cfg(all(target_os = "linux", not(miri)))]
    {
        const HUGE: usize = 2 << 20;
        let start = v.as_ptr() as usize;
        let end = start + v.capacity() * std::mem::size_of::<T>();
        let (lo, hi) = (start.next_multiple_of(HUGE), end / HUGE * HUGE);
        if hi > lo {
            // SAFETY: `lo..hi` lies inside the vector's own allocation, and MADV_HUGEPAGE only
            // changes which pages the kernel backs it with when it is touched: neither the
            // contents nor the mapping change, so nothing Rust relies on does.
            unsafe {
                libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(all(target_os = "linux", not(miri))))]
    let _ = v;
}

/// Sorts exact words with their indexes: one pass scatters them into buckets by the highest
/// bits in which the words differ, then each bucket (small enough to stay in cache) is sorted
/// on its own. Words spread evenly (hashed or random keys) cost two passes over memory and a
/// cache-resident sort instead of a sort over all of them.
///
/// With `two_threads`, the second half of the buckets is sorted on a second thread. `spare` is
/// the array bucketed into (it is swapped with `words`), kept between calls.
pub fn sort_words(words: &mut Vec<u128>, spare: &mut Vec<u128>, two_threads: bool) {
    let n = words.len();
    let word = |x: u128| (x >> 64) as u64;
    // Every pass over the words runs on both halves at once with two threads.
    let (first, second) = words.split_at(n / 2);
    let range = |part: &[u128]| {
        part.iter().fold((u64::MAX, 0), |(lo, hi), &x| {
            (lo.min(word(x)), hi.max(word(x)))
        })
    };
    let ((lo_a, hi_a), (lo_b, hi_b)) = both(two_threads, || range(first), || range(second));
    let (lo, hi) = (lo_a.min(lo_b), hi_a.max(hi_b));
    // About 256 rows per bucket, at most 2^14 buckets.
    let bits = (usize::BITS - n.leading_zeros()).saturating_sub(8).min(14);
    if bits < 4 || lo >= hi {
        words.sort_unstable();
        return;
    }
    // Bucket by the `bits` bits below the ones all words share (those of `lo ^ hi`'s top).
    let varying = u64::BITS - (lo ^ hi).leading_zeros();
    let shift = varying.saturating_sub(bits);
    let mask = (1usize << bits) - 1;
    let bucket = |x: u128| ((word(x) >> shift) as usize) & mask;
    let count = |part: &[u128]| {
        let mut counts = vec![0usize; mask + 1];
        for &x in part {
            counts[bucket(x)] += 1;
        }
        counts
    };
    let (counts_a, counts_b) = both(two_threads, || count(first), || count(second));
    let out = spare;
    if out.len() < n {
        reserve_advised(out, n);
        out.resize(n, 0);
    } else {
        // Every place is written below; what is there now does not matter.
        out.truncate(n);
    }
    // Each bucket holds the first half's words, then the second half's: each half scatters
    // into its own places of every bucket, so the two never write the same memory.
    let mut starts = Vec::with_capacity(mask + 2);
    let mut places_a: Vec<&mut [u128]> = Vec::with_capacity(mask + 1);
    let mut places_b: Vec<&mut [u128]> = Vec::with_capacity(mask + 1);
    let mut rest: &mut [u128] = &mut out[..];
    let mut at = 0;
    for (&ca, &cb) in counts_a.iter().zip(&counts_b) {
        starts.push(at);
        let (a, r) = std::mem::take(&mut rest).split_at_mut(ca);
        let (b, r) = r.split_at_mut(cb);
        places_a.push(a);
        places_b.push(b);
        rest = r;
        at += ca + cb;
    }
    starts.push(at);
    let scatter = |part: &[u128], places: &mut Vec<&mut [u128]>| {
        for &x in part {
            let place = &mut places[bucket(x)];
            // Counted above, so the place is never empty.
            if let Some((slot, tail)) = std::mem::take(place).split_first_mut() {
                *slot = x;
                *place = tail;
            }
        }
    };
    both(
        two_threads,
        || scatter(first, &mut places_a),
        || scatter(second, &mut places_b),
    );
    drop((places_a, places_b));
    let sort_buckets = |out: &mut [u128], starts: &[usize]| {
        let base = starts[0];
        for pair in starts.windows(2) {
            out[pair[0] - base..pair[1] - base].sort_unstable();
        }
    };
    let mid = starts.len() / 2;
    let (a, b) = out.split_at_mut(starts[mid]);
    let (sa, sb) = (&starts[..=mid], &starts[mid..]);
    both(two_threads, || sort_buckets(a, sa), || sort_buckets(b, sb));
    std::mem::swap(words, out);
}

/// Runs `a` and `b`, on two threads if `two_threads`.
pub(crate) fn both<A: Send, B: Send>(
    two_threads: bool,
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    if !two_threads {
        return (a(), b());
    }
    std::thread::scope(|s| {
        let second = s.spawn(b);
        let first = a();
        let second = second
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (first, second)
    })
}

/// Makes room for `n` elements in `v`, advising huge pages for a new allocation.
pub fn reserve_advised<T>(v: &mut Vec<T>, n: usize) {
    if v.capacity() < n {
        v.reserve_exact(n - v.len());
        advise_huge_pages(v);
    }
}

/// Below this many rows a buffer is sorted and written on one thread.
pub const TWO_THREADS_MIN: usize = 1 << 15;

/// Positions `0..n` of the tuples `key(i)` in `desc`'s order, ties by position (a stable
/// sort). Tuples already in order cost one pass; tuples of integers whose fields' ranges fit
/// 64 bits together (most primary keys and secondary index keys: the indexed columns and the
/// primary key) are sorted as exact words by [`sort_words`]; any others by the descriptor,
/// after a first pass by their first field when that is an integer.
pub fn sorted_positions<'a>(
    n: usize,
    key: impl Fn(usize) -> &'a [u8] + Sync,
    desc: &TupleDesc,
) -> Vec<u32> {
    if (1..n).all(|i| desc.compare(key(i - 1), key(i)) == Ordering::Less) {
        return (0..n as u32).collect();
    }
    if let Some(words) = exact_words(n, &key, desc, desc.types().len()) {
        return words;
    }
    let first = FieldRank::of(desc);
    let mut order: Vec<(u128, u32)> = (0..n)
        .map(|i| (first.rank(desc, key(i)), i as u32))
        .collect();
    order.sort_unstable_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| desc.compare(key(a.1 as usize), key(b.1 as usize)))
            .then(a.1.cmp(&b.1))
    });
    order.into_iter().map(|(_, i)| i).collect()
}

/// Positions `0..n` of the tuples `key(i)` in the order of their first `fields` fields under
/// `desc`, ties by position, when those fields are integers whose ranges fit 64 bits together
/// (`None` otherwise). For keys whose remaining fields order as their positions do (index
/// keys ending with the primary key, gathered in primary-key order).
pub fn sorted_positions_by_prefix<'a>(
    n: usize,
    key: impl Fn(usize) -> &'a [u8] + Sync,
    desc: &TupleDesc,
    fields: usize,
) -> Option<Vec<u32>> {
    exact_words(n, &key, desc, fields)
}

/// Sorts the tuples by exact words of their first `fields` fields and returns their
/// positions, when every one of those fields is an integer of its encoding's width in every
/// tuple and the fields' ranges of values (NULL taking one value below a nullable field's
/// least) fit 64 bits together. The tuples are read twice (for the ranges, then for the
/// words) rather than their values kept between the passes, and each pass reads the two
/// halves of the tuples on two threads when there are many.
fn exact_words<'a>(
    n: usize,
    key: &(impl Fn(usize) -> &'a [u8] + Sync),
    desc: &TupleDesc,
    fields: usize,
) -> Option<Vec<u32>> {
    let types = desc.types().get(..fields)?;
    if fields == 0 {
        // No field orders them: all equal, in position order.
        return Some((0..n as u32).collect());
    }
    let ints: Vec<(usize, bool)> = types
        .iter()
        .map(|t| t.enc.integer())
        .collect::<Option<_>>()?;
    let two_threads = n >= TWO_THREADS_MIN && background_hashing();
    // Each field's value in tuple `i` (as an unsigned number in the field's order; `None`:
    // NULL), or `None` when a field is not an integer of its width.
    let values = |i: usize, out: &mut [Option<u64>]| -> Option<()> {
        let t = Tuple::new_unverified(key(i));
        for (f, (&(width, signed), v)) in ints.iter().zip(out.iter_mut()).enumerate() {
            *v = ordered_int(desc.field(t, f), width, signed)?;
        }
        Some(())
    };
    // Each field's least and greatest value and whether it is NULL anywhere, over `part`.
    let ranges_of = |part: std::ops::Range<usize>| -> Option<Vec<(u64, u64, bool)>> {
        let mut ranges = vec![(u64::MAX, 0u64, false); fields];
        let mut v = vec![None; fields];
        for i in part {
            values(i, &mut v)?;
            for (range, v) in ranges.iter_mut().zip(&v) {
                match *v {
                    Some(v) => {
                        range.0 = range.0.min(v);
                        range.1 = range.1.max(v);
                    }
                    None => range.2 = true,
                }
            }
        }
        Some(ranges)
    };
    let (a, b) = both(two_threads, || ranges_of(0..n / 2), || ranges_of(n / 2..n));
    let ranges: Vec<(u64, u64, bool)> = a?
        .iter()
        .zip(&b?)
        .map(|(a, b)| (a.0.min(b.0), a.1.max(b.1), a.2 || b.2))
        .collect();
    // Bits each field takes: its values less its least, plus one (NULL as 0) if NULL occurs.
    let mut total = 0u32;
    let mut packing = Vec::with_capacity(fields);
    for &(lo, hi, null) in &ranges {
        let (lo, span) = if lo > hi { (0, 0) } else { (lo, hi - lo) };
        let span = if null { span.checked_add(1)? } else { span };
        let bits = u64::BITS - span.leading_zeros();
        total += bits;
        packing.push((lo, null, bits));
    }
    if total > 64 {
        return None;
    }
    let mut words: Vec<u128> = Vec::new();
    reserve_advised(&mut words, n);
    // The words of tuples `start..` into `out`, one per tuple.
    let fill = |start: usize, out: &mut [u128]| {
        let mut v = vec![None; fields];
        for (j, w) in out.iter_mut().enumerate() {
            let i = start + j;
            // The first pass read every tuple's fields as integers.
            let _ = values(i, &mut v);
            let mut word = 0u64;
            for (v, &(lo, null, bits)) in v.iter().zip(&packing) {
                let v = match v {
                    Some(v) => v - lo + u64::from(null),
                    None => 0,
                };
                word = if bits == 64 { v } else { word << bits | v };
            }
            *w = u128::from(word) << 64 | i as u128;
        }
    };
    words.resize(n, 0);
    let (first, second) = words.split_at_mut(n / 2);
    both(two_threads, || fill(0, first), || fill(n / 2, second));
    let mut spare = Vec::new();
    sort_words(&mut words, &mut spare, two_threads);
    Some(words.into_iter().map(|w| w as u32).collect())
}

/// An integer field's value as an unsigned number in the field's order (`Some(None)`: NULL),
/// or `None` when the field is not `width` bytes.
fn ordered_int(field: Option<&[u8]>, width: usize, signed: bool) -> Option<Option<u64>> {
    let Some(b) = field else {
        return Some(None);
    };
    let raw = match (width, b.len()) {
        (1, 1) => u64::from(b[0]),
        (2, 2) => u64::from(u16::from_le_bytes([b[0], b[1]])),
        (4, 4) => u64::from(u32::from_le_bytes(b.try_into().ok()?)),
        (8, 8) => u64::from_le_bytes(b.try_into().ok()?),
        _ => return None,
    };
    // Signed: flip the sign bit so that negative numbers come first.
    Some(Some(if signed {
        raw ^ 1 << (8 * width - 1)
    } else {
        raw
    }))
}

/// How [`sorted_positions`]' fallback ranks a tuple by its first field before comparing.
struct FieldRank(Option<(usize, bool)>);

impl FieldRank {
    fn of(desc: &TupleDesc) -> FieldRank {
        FieldRank(desc.types().first().and_then(|t| t.enc.integer()))
    }

    /// A number that orders as the tuple's first field does when that is an integer: NULL
    /// first, then by value, a field of the wrong width last (the descriptor's order then
    /// decides among those); 0 for every tuple otherwise.
    fn rank(&self, desc: &TupleDesc, tuple: &[u8]) -> u128 {
        let Some((width, signed)) = self.0 else {
            return 0;
        };
        match ordered_int(desc.field(Tuple::new_unverified(tuple), 0), width, signed) {
            None => u128::MAX,
            Some(None) => 0,
            Some(Some(v)) => 1u128 << 64 | u128::from(v),
        }
    }
}

#[cfg(test)]
mod tests {
    use prollystore_format::tuple::{TupleBuilder, TupleDesc, Type};
    use prollystore_format::Encoding;

    #[test]
    fn exact_words_sort_as_a_plain_sort_does() {
        // Spread words (bucketed), words sharing their high bits, equal words, and few words.
        let spread: Vec<u64> = (0..50_000u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        let narrow: Vec<u64> = spread.iter().map(|w| (1 << 40) | (w >> 50)).collect();
        let same = vec![7u64; 5000];
        let few: Vec<u64> = spread[..100].to_vec();
        // The bucketing array is reused: longer and shorter than needed, holding old words.
        let mut spare = vec![7u128; 60_000];
        for words in [spread, narrow, same, few] {
            let v: Vec<u128> = words
                .iter()
                .enumerate()
                .map(|(i, &w)| (u128::from(w) << 64) | i as u128)
                .collect();
            let mut want = v.clone();
            want.sort_unstable();
            for two_threads in [false, true] {
                let mut got = v.clone();
                super::sort_words(&mut got, &mut spare, two_threads);
                assert_eq!(got, want);
            }
        }
    }

    /// Keys of three integer fields (NULLs, extremes, repeats) and of a text field: the
    /// positions every strategy gives are those of a stable sort by the descriptor.
    #[test]
    fn positions_are_a_stable_sort_by_the_descriptor() {
        let desc = TupleDesc::new(vec![
            Type::nullable(Encoding::Int32),
            Type::nullable(Encoding::Uint8),
            Type::not_null(Encoding::Int64),
        ]);
        let mut b = TupleBuilder::new(desc.clone());
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        // Wide: the third field spans 64 bits (no exact words; first-field rank); narrow:
        // small values (exact words); prefix: by the first two fields.
        let (mut wide, mut narrow) = (Vec::new(), Vec::new());
        for _ in 0..3000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = (x >> 33) as i64;
            for (keys, third) in [
                (
                    &mut wide,
                    [i64::MIN, -1, 0, 1, i64::MAX, v][(v % 6) as usize],
                ),
                (&mut narrow, v % 1000 - 500),
            ] {
                b.reset();
                if v % 5 != 0 {
                    b.put_int32(0, [i32::MIN, -7, 0, 3, i32::MAX][(v % 5) as usize])
                        .unwrap();
                }
                if v % 3 != 0 {
                    b.put_uint8(1, (v % 256) as u8).unwrap();
                }
                b.put_int64(2, third).unwrap();
                keys.push(b.build().unwrap().as_bytes().to_vec());
            }
        }
        let stable = |keys: &[Vec<u8>], desc: &TupleDesc| {
            let mut order: Vec<u32> = (0..keys.len() as u32).collect();
            order.sort_by(|&a, &b| desc.compare(&keys[a as usize], &keys[b as usize]));
            order
        };
        for keys in [&wide, &narrow] {
            let got = super::sorted_positions(keys.len(), |i| &keys[i][..], &desc);
            assert_eq!(got, stable(keys, &desc));
            let prefix = desc.prefix(2);
            let by_prefix =
                super::sorted_positions_by_prefix(keys.len(), |i| &keys[i][..], &desc, 2);
            assert_eq!(by_prefix, Some(stable(keys, &prefix)));
        }
        assert!(super::exact_words(narrow.len(), &|i| &narrow[i][..], &desc, 3).is_some());
        assert!(super::exact_words(wide.len(), &|i| &wide[i][..], &desc, 3).is_none());
        // Already in order: one pass.
        let order = stable(&narrow, &desc);
        let sorted: Vec<&[u8]> = order.iter().map(|&i| &narrow[i as usize][..]).collect();
        let got = super::sorted_positions(sorted.len(), |i| sorted[i], &desc);
        assert_eq!(
            got,
            stable(
                &sorted.iter().map(|k| k.to_vec()).collect::<Vec<_>>(),
                &desc
            )
        );
        // Text keys: the descriptor's order.
        let text = TupleDesc::new(vec![Type::nullable(Encoding::String)]);
        let mut tb = TupleBuilder::new(text.clone());
        let words: Vec<Vec<u8>> = ["b", "a", "c", "a", ""]
            .iter()
            .map(|w| {
                tb.reset();
                tb.put_string(0, w).unwrap();
                tb.build().unwrap().as_bytes().to_vec()
            })
            .collect();
        let got = super::sorted_positions(words.len(), |i| &words[i][..], &text);
        assert_eq!(got, vec![4, 1, 3, 0, 2]);
    }
}
