//! Builders that take a map's rows one at a time, as real input arrives:
//!
//! * [`MapBuilder`] ([`Map::builder`]) for rows already in key order, streamed straight into
//!   the tree with nothing kept but the previous key.
//! * [`SortingBuilder`] for rows in any order: it keeps rows in
//!   memory up to a bound, sorts them, writes each full buffer to a temporary file as a sorted
//!   run, and at the end merges the runs into the tree, so an import of any size needs only
//!   the bound in memory (and the rows' size on disk). A key added twice is an error naming
//!   both items ([`TreeError::DuplicateKey`]).
//!
//! ```
//! use prollystore::format::tuple::Value;
//! use prollystore::format::HashProfile;
//! use prollystore::rows::RowSchema;
//! use prollystore::builder::SortingBuilder;
//! use prollystore::{Map, MemoryStore, TreeError};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let store = MemoryStore::new(HashProfile::Dolt);
//! let rows = RowSchema::parse("id:bigint", "score:double")?;
//! let schema = rows.tuple_schema();
//!
//! // Rows in any order, at most 1 MiB of them in memory at a time.
//! let mut b = SortingBuilder::new(schema.clone(), 1 << 20);
//! for id in [5i64, 3, 9, 1] {
//!     let (k, v) = rows.encode_row(&[Some(Value::Int64(id)), Some(Value::Float64(id as f64 / 2.0))])?;
//!     b.add(&k, &v)?;
//! }
//! let map = b.finish(&store)?;
//! assert_eq!(map.count()?, 4);
//!
//! // A key given twice: both items are named.
//! let mut b = SortingBuilder::new(schema.clone(), 1 << 20);
//! for id in [5i64, 3, 5] {
//!     let (k, v) = rows.encode_row(&[Some(Value::Int64(id)), Some(Value::Float64(0.0))])?;
//!     b.add(&k, &v)?;
//! }
//! assert!(matches!(b.finish(&store), Err(TreeError::DuplicateKey { first: 0, second: 2 })));
//!
//! // Rows already in order stream straight into the tree (checked).
//! let mut b = Map::builder(&store, &schema);
//! for (k, v) in map.iter()?.collect::<Result<Vec<_>, _>>()? {
//!     b.add(k, v)?;
//! }
//! assert_eq!(b.finish()?.root(), map.root());
//! # Ok(())
//! # }
//! ```

use std::cmp::Ordering;
use std::fs::File;
use std::path::PathBuf;

use crate::error::TreeError;
use crate::map::Map;
use crate::process::background_hashing;
use crate::store::StoreFastPaths;
use crate::tree::build::TreeBuilder;
use crate::tree::prefetch::{prefetch_at, prefetch_ptr};
use crate::tree::schema::TreeSchema;

impl<'s, S: StoreFastPaths + ?Sized, T: TreeSchema + Clone> Map<'s, S, T> {
    /// A builder for rows in strictly increasing key order (checked), added one at a time.
    pub fn builder(store: &'s S, schema: &'s T) -> MapBuilder<'s, S, T> {
        MapBuilder {
            tree: tree_builder(store, schema),
            store,
            schema,
            last: Vec::new(),
            count: 0,
        }
    }
}

fn tree_builder<'s, S: StoreFastPaths + ?Sized, T: TreeSchema>(
    store: &'s S,
    schema: &'s T,
) -> TreeBuilder<'s, S, T> {
    let b = TreeBuilder::new(store, schema);
    if background_hashing() {
        b.with_hash_thread()
    } else {
        b
    }
}

/// Builds a map from rows in strictly increasing key order, one [`MapBuilder::add`] at a
/// time; the same tree as [`Map::from_sorted`] over the same rows.
pub struct MapBuilder<'s, S: StoreFastPaths + ?Sized, T: TreeSchema> {
    tree: TreeBuilder<'s, S, T>,
    store: &'s S,
    schema: &'s T,
    last: Vec<u8>,
    count: u64,
}

impl<'s, S: StoreFastPaths + ?Sized, T: TreeSchema + Clone> MapBuilder<'s, S, T> {
    /// Adds the next row; [`TreeError::Unsorted`] (with the row's index, from 0) if its key is
    /// not greater than the previous one.
    #[inline]
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<(), TreeError> {
        if self.count > 0 && self.schema.compare_keys(&self.last, key) != Ordering::Less {
            return Err(TreeError::Unsorted {
                index: self.count as usize,
            });
        }
        self.tree.add(key, value)?;
        self.last.clear();
        self.last.extend_from_slice(key);
        self.count += 1;
        Ok(())
    }

    /// Rows added so far.
    pub fn len(&self) -> u64 {
        self.count
    }

    /// True if no row was added.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Finishes the tree and returns the map.
    pub fn finish(self) -> Result<Map<'s, S, T>, TreeError> {
        let root = self.tree.finish()?;
        Ok(Map::new(self.store, root, self.schema.clone()))
    }
}

/// The smallest memory bound a sorting builder uses (smaller ones are raised to it).
const MIN_BOUND: usize = 4 << 10;

/// Memory per buffered row besides its bytes: its place in the buffer, and its entries in the
/// sort order made when the buffer is sorted (a 16-byte word and index, twice while they are
/// bucketed).
const ITEM_COST: usize = std::mem::size_of::<Item>() + 32;

/// Asks the kernel to back the untouched capacity of `v` with 2 MiB pages (Linux; only
/// advice). The sorted passes over a buffer jump all over its rows and the bucket pass writes
/// to thousands of places at once: with 4 KiB pages nearly every one of those accesses also
/// misses the TLB.
fn advise_huge_pages<T>(v: &Vec<T>) {
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

/// Builds a map from rows in any order: rows are buffered up to the memory bound, each full
/// buffer is sorted and written to an anonymous temporary file (deleted by the OS when
/// closed), and [`SortingBuilder::finish`] merges the sorted runs into the tree. With fewer
/// rows than the bound holds, nothing touches the disk. Keys that [`TreeSchema::sort_word`]
/// orders exactly (one integer field) are sorted and checked for duplicates as words alone;
/// when a second thread may be used ([`crate::process::background_hashing`]), a large buffer
/// of them is sorted and written by two threads, as two runs.
///
/// The bound counts the buffered rows' bytes plus 40 bytes per row; buffers grow in steps
/// within it. A single row larger than the bound is still taken, alone. Duplicate keys are
/// reported as [`TreeError::DuplicateKey`] with the indexes (from 0, in the order of
/// [`SortingBuilder::add`] calls) of the first two items with the key; nothing is built then.
pub struct SortingBuilder<T: TreeSchema> {
    schema: T,
    bound: usize,
    spill_dir: Option<PathBuf>,
    buf: Buffer,
    runs: Vec<File>,
    added: u64,
}

/// Where a buffered row's bytes are: key at `start`, value after it up to the next row.
#[derive(Clone, Copy)]
struct Item {
    start: u32,
    key_len: u32,
}

/// Rows in the order they were added: their bytes back to back and where each starts.
#[derive(Default)]
struct Buffer {
    data: Vec<u8>,
    items: Vec<Item>,
    /// Index (over all rows added) of the first row here.
    first_row: u64,
    /// While every row here has the same key length and size: those (row `i` then starts at
    /// `i` times the size, which the sorted pass computes instead of loading its item).
    fixed: Option<(u32, u32)>,
}

impl Buffer {
    fn key(&self, i: usize) -> &[u8] {
        let it = self.items[i];
        let start = it.start as usize;
        &self.data[start..start + it.key_len as usize]
    }

    fn row(&self, i: usize) -> (&[u8], &[u8]) {
        let it = self.items[i];
        let start = it.start as usize;
        let end = match self.items.get(i + 1) {
            Some(next) => next.start as usize,
            None => self.data.len(),
        };
        let (k, v) = self.data[start..end].split_at(it.key_len as usize);
        (k, v)
    }

    /// Makes room for one more row of `n` bytes within `bound` (growing the buffers in steps,
    /// never past it); false if the bound leaves no room.
    fn room(&mut self, n: usize, bound: usize) -> bool {
        let need_data = self.data.len() + n;
        let need_items = self.items.len() + 1;
        if need_data > u32::MAX as usize || need_items > u32::MAX as usize {
            return false;
        }
        if need_items > self.items.capacity() {
            // Leave room for the bytes of the rows the items will place (at the average row
            // size so far), so neither buffer crowds out the other.
            let avg = match self.items.len() {
                0 => n,
                len => self.data.len() / len,
            };
            let max_items =
                bound.saturating_sub(self.data.capacity().max(need_data)) / (ITEM_COST + avg);
            if max_items < need_items {
                return false;
            }
            let target = (self.items.capacity() * 2)
                .max(4096)
                .min(max_items)
                .max(need_items);
            self.items.reserve_exact(target - self.items.len());
            advise_huge_pages(&self.items);
        }
        if need_data > self.data.capacity() {
            let max_data = bound.saturating_sub(self.items.capacity() * ITEM_COST);
            if max_data < need_data {
                return false;
            }
            let target = (self.data.capacity() * 2)
                .max(64 << 10)
                .min(max_data)
                .max(need_data);
            self.data.reserve_exact(target - self.data.len());
            advise_huge_pages(&self.data);
        }
        true
    }

    fn push(&mut self, key: &[u8], value: &[u8]) {
        let shape = (key.len() as u32, (key.len() + value.len()) as u32);
        if self.items.is_empty() {
            self.fixed = Some(shape);
        } else if self.fixed != Some(shape) {
            self.fixed = None;
        }
        self.items.push(Item {
            start: self.data.len() as u32,
            key_len: key.len() as u32,
        });
        self.data.extend_from_slice(key);
        self.data.extend_from_slice(value);
    }

    /// The rows in key order (equal keys by index).
    fn sorted<T: TreeSchema + ?Sized>(&self, schema: &T) -> Order {
        let n = self.items.len();
        // Exact words, the common case for integer keys: one 128-bit integer per row orders
        // by key, then index, and equal keys are equal words.
        let mut exact: Vec<u128> = Vec::with_capacity(n);
        advise_huge_pages(&exact);
        for i in 0..n {
            match schema.sort_word(self.key(i)) {
                Some((w, true)) => exact.push((u128::from(w) << 64) | i as u128),
                _ => break,
            }
        }
        if exact.len() == n {
            sort_words(&mut exact, n >= TWO_THREADS_MIN && background_hashing());
            return Order::Exact(exact);
        }
        drop(exact);
        let words: Option<Vec<u64>> = (0..n)
            .map(|i| schema.sort_word(self.key(i)).map(|w| w.0))
            .collect();
        match words {
            Some(words) => {
                let mut order: Vec<(u64, u32)> = words
                    .iter()
                    .enumerate()
                    .map(|(i, &w)| (w, i as u32))
                    .collect();
                drop(words);
                order.sort_unstable_by(|a, b| {
                    a.0.cmp(&b.0)
                        .then_with(|| {
                            schema.compare_keys(self.key(a.1 as usize), self.key(b.1 as usize))
                        })
                        .then(a.1.cmp(&b.1))
                });
                Order::Indexes(order.into_iter().map(|x| x.1).collect())
            }
            None => {
                let mut order: Vec<u32> = (0..n as u32).collect();
                order.sort_unstable_by(|&a, &b| {
                    schema
                        .compare_keys(self.key(a as usize), self.key(b as usize))
                        .then(a.cmp(&b))
                });
                Order::Indexes(order)
            }
        }
    }

    fn clear(&mut self, first_row: u64) {
        self.data.clear();
        self.items.clear();
        self.first_row = first_row;
    }
}

/// A buffer's rows in key order, as [`Buffer::sorted`] makes it.
enum Order {
    /// Every key has an exact sort word: `word << 64 | index`, ascending, so equal words are
    /// equal keys.
    Exact(Vec<u128>),
    /// Row indexes.
    Indexes(Vec<u32>),
}

/// Sorts exact words with their indexes: one pass scatters them into buckets by the highest
/// bits in which the words differ, then each bucket (small enough to stay in cache) is sorted
/// on its own. Words spread evenly (hashed or random keys) cost two passes over memory and a
/// cache-resident sort instead of a sort over all of them.
///
/// With `two_threads`, the second half of the buckets is sorted on a second thread.
fn sort_words(words: &mut Vec<u128>, two_threads: bool) {
    let n = words.len();
    let word = |x: u128| (x >> 64) as u64;
    let (lo, hi) = words.iter().fold((u64::MAX, 0), |(lo, hi), &x| {
        (lo.min(word(x)), hi.max(word(x)))
    });
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
    let mut starts = vec![0usize; mask + 2];
    for &x in words.iter() {
        starts[bucket(x) + 1] += 1;
    }
    for b in 1..starts.len() {
        starts[b] += starts[b - 1];
    }
    let mut next = starts.clone();
    let mut out = vec![0u128; n];
    advise_huge_pages(&out);
    for &x in words.iter() {
        let b = bucket(x);
        out[next[b]] = x;
        next[b] += 1;
    }
    let sort_buckets = |out: &mut [u128], starts: &[usize]| {
        let base = starts[0];
        for pair in starts.windows(2) {
            out[pair[0] - base..pair[1] - base].sort_unstable();
        }
    };
    let mid = starts.len() / 2;
    if two_threads {
        let (a, b) = out.split_at_mut(starts[mid]);
        let (sa, sb) = (&starts[..=mid], &starts[mid..]);
        std::thread::scope(|s| {
            s.spawn(|| sort_buckets(b, sb));
            sort_buckets(a, sa);
        });
    } else {
        sort_buckets(&mut out, &starts);
    }
    *words = out;
}

/// Below this many rows a buffer is sorted and written on one thread.
const TWO_THREADS_MIN: usize = 1 << 15;

/// Rows a sorted pass prefetches ahead of the one it reads (items twice as far).
const AHEAD: usize = 8;

/// Prefetches item `far` and the bytes of row `near` for a pass in sorted order.
#[inline]
fn prefetch_rows(buf: &Buffer, far: Option<u32>, near: Option<u32>) {
    if let Some(it) = far.and_then(|i| buf.items.get(i as usize)) {
        prefetch_ptr((it as *const Item).cast());
    }
    if let Some(it) = near.and_then(|i| buf.items.get(i as usize)) {
        prefetch_at(&buf.data, it.start as usize);
    }
}

/// [`for_each_sorted`] for exact words (`order` as [`Order::Exact`] holds them, or a part of
/// it): equal keys are equal words, so neither the order nor the duplicate check reads a key.
fn for_each_exact(
    buf: &Buffer,
    order: &[u128],
    mut f: impl FnMut(&[u8], &[u8], u64) -> Result<(), TreeError>,
) -> Result<(), TreeError> {
    let duplicate = |first: u32, second: u32| TreeError::DuplicateKey {
        first: buf.first_row + u64::from(first),
        second: buf.first_row + u64::from(second),
    };
    // Rows of one size: each one's place is computed, so only its bytes are loaded.
    let fixed = buf.fixed.map(|(k, n)| (k as usize, n as usize));
    let mut prev: Option<u128> = None;
    for (j, &x) in order.iter().enumerate() {
        match fixed {
            Some((_, len)) => {
                if let Some(&near) = order.get(j + AHEAD) {
                    let at = (near as u32 as usize) * len;
                    prefetch_at(&buf.data, at);
                    prefetch_at(&buf.data, at + len.saturating_sub(1));
                }
            }
            None => prefetch_rows(
                buf,
                order.get(j + 2 * AHEAD).map(|&x| x as u32),
                order.get(j + AHEAD).map(|&x| x as u32),
            ),
        }
        let i = x as u32;
        if let Some(p) = prev {
            if p >> 64 == x >> 64 {
                return Err(duplicate(p as u32, i));
            }
        }
        let (k, v) = match fixed {
            Some((key_len, len)) => {
                let start = i as usize * len;
                buf.data[start..start + len].split_at(key_len)
            }
            None => buf.row(i as usize),
        };
        f(k, v, buf.first_row + u64::from(i))?;
        prev = Some(x);
    }
    Ok(())
}

/// Calls `f(key, value, row)` for the rows of `buf` in key `order`, failing at the first two
/// rows with equal keys. Rows are read in sorted order, all over the buffer: each row's place
/// and bytes are prefetched a few rows ahead, since the misses, not the copies, are what such
/// a pass waits for.
fn for_each_sorted<T: TreeSchema + ?Sized>(
    buf: &Buffer,
    schema: &T,
    order: &Order,
    mut f: impl FnMut(&[u8], &[u8], u64) -> Result<(), TreeError>,
) -> Result<(), TreeError> {
    let duplicate = |first: u32, second: u32| TreeError::DuplicateKey {
        first: buf.first_row + u64::from(first),
        second: buf.first_row + u64::from(second),
    };
    match order {
        Order::Exact(order) => return for_each_exact(buf, order, f),
        Order::Indexes(order) => {
            let mut prev: Option<(&[u8], u32)> = None;
            for (j, &i) in order.iter().enumerate() {
                prefetch_rows(
                    buf,
                    order.get(j + 2 * AHEAD).copied(),
                    order.get(j + AHEAD).copied(),
                );
                let (k, v) = buf.row(i as usize);
                if let Some((p, pi)) = prev {
                    if schema.compare_keys(p, k) == Ordering::Equal {
                        return Err(duplicate(pi, i));
                    }
                }
                f(k, v, buf.first_row + u64::from(i))?;
                prev = Some((k, i));
            }
        }
    }
    Ok(())
}

impl<T: TreeSchema + Clone> SortingBuilder<T> {
    /// A builder for rows of `schema` in any order that keeps about `memory_bound` bytes of
    /// rows in memory (at least 4 KiB) and sorts the rest through temporary files.
    pub fn new(schema: T, memory_bound: usize) -> SortingBuilder<T> {
        SortingBuilder {
            schema,
            bound: memory_bound.max(MIN_BOUND),
            spill_dir: None,
            buf: Buffer::default(),
            runs: Vec::new(),
            added: 0,
        }
    }

    /// Writes sorted runs into `dir` instead of the system's temporary directory.
    pub fn spill_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.spill_dir = Some(dir.into());
        self
    }

    /// Adds a row (any order). Writes a sorted run to disk when the buffer is full; a
    /// duplicate key within that run is reported then.
    #[inline]
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<(), TreeError> {
        let n = key.len() + value.len();
        if !self.buf.room(n, self.bound) {
            self.spill()?;
            if !self.buf.room(n, self.bound) {
                // A row larger than the bound: taken alone.
                self.buf.data.reserve_exact(n);
                self.buf.items.reserve_exact(1);
            }
        }
        self.buf.push(key, value);
        self.added += 1;
        Ok(())
    }

    /// Rows added so far.
    pub fn len(&self) -> u64 {
        self.added
    }

    /// True if no row was added.
    pub fn is_empty(&self) -> bool {
        self.added == 0
    }

    /// Sorted runs written to disk so far.
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    #[cold]
    fn spill(&mut self) -> Result<(), TreeError> {
        let dir = self.spill_dir.as_ref();
        spill_into(&mut self.buf, &self.schema, dir, &mut self.runs, self.added)
    }

    /// Sorts what is left, merges it with the runs on disk into a tree in `store` (the only
    /// time the builder writes to a store), and returns the map.
    pub fn finish<S: StoreFastPaths + ?Sized>(
        mut self,
        store: &S,
    ) -> Result<Map<'_, S, T>, TreeError> {
        let root = {
            let schema = &self.schema;
            let mut tree = tree_builder(store, schema);
            if self.runs.is_empty() {
                let order = self.buf.sorted(schema);
                for_each_sorted(&self.buf, schema, &order, |k, v, _| tree.add(k, v))?;
            } else {
                let mut runs = std::mem::take(&mut self.runs);
                let mut buf = std::mem::take(&mut self.buf);
                // The last run; then the buffer's memory goes back before merging.
                spill_into(
                    &mut buf,
                    schema,
                    self.spill_dir.as_ref(),
                    &mut runs,
                    self.added,
                )?;
                drop(buf);
                merge_runs(schema, runs, |k, v, _| tree.add(k, v))?;
            }
            tree.finish()?
        };
        Ok(Map::new(store, root, self.schema))
    }
}

/// Sorts `buf` and writes it to a new temporary file as a run ([`RunWriter`]), appended to
/// `runs` (merging all of them into one when too many are open); the buffer is then emptied
/// for the rows from `added` on.
fn spill_into<T: TreeSchema + ?Sized>(
    buf: &mut Buffer,
    schema: &T,
    dir: Option<&PathBuf>,
    runs: &mut Vec<File>,
    added: u64,
) -> Result<(), TreeError> {
    if buf.items.is_empty() {
        return Ok(());
    }
    let order = buf.sorted(schema);
    match &order {
        Order::Exact(words) if words.len() >= TWO_THREADS_MIN && background_hashing() => {
            // Two runs written side by side, split where the words differ, so the two never
            // hold the same key.
            let mut mid = words.len() / 2;
            while mid < words.len() && words[mid - 1] >> 64 == words[mid] >> 64 {
                mid += 1;
            }
            let (a, b) = words.split_at(mid);
            let write = |part: &[u128]| -> Result<File, TreeError> {
                let mut w = RunWriter::new(dir)?;
                for_each_exact(buf, part, |k, v, row| w.push(k, v, row))?;
                w.finish()
            };
            let (ra, rb) = std::thread::scope(|s| {
                let second = s.spawn(|| write(b));
                (write(a), second.join())
            });
            let rb = rb.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            runs.push(ra?);
            runs.push(rb?);
        }
        _ => {
            let mut w = RunWriter::new(dir)?;
            for_each_sorted(buf, schema, &order, |k, v, row| w.push(k, v, row))?;
            runs.push(w.finish()?);
        }
    }
    drop(order);
    if runs.len() >= MAX_OPEN_RUNS {
        // Too many files to keep open: merge them into one run.
        let files = std::mem::take(runs);
        let mut w = RunWriter::new(dir)?;
        merge_runs(schema, files, |k, v, row| w.push(k, v, row))?;
        runs.push(w.finish()?);
    }
    buf.clear(added);
    Ok(())
}

/// One sorted run being merged: its reader and the current row's sort word.
struct Cursor {
    run: RunReader,
    word: Option<(u64, bool)>,
}

impl Cursor {
    /// Moves to the next row; false at the end of the run.
    #[inline]
    fn advance<T: TreeSchema + ?Sized>(&mut self, schema: &T) -> Result<bool, TreeError> {
        if !self.run.advance()? {
            return Ok(false);
        }
        self.word = schema.sort_word(self.run.key());
        Ok(true)
    }

    /// Key order, then the order rows were added in.
    #[inline]
    fn cmp<T: TreeSchema + ?Sized>(&self, other: &Cursor, schema: &T) -> Ordering {
        let keys = match (self.word, other.word) {
            (Some(a), Some(b)) if a.0 != b.0 => a.0.cmp(&b.0),
            (Some((_, true)), Some((_, true))) => Ordering::Equal,
            _ => schema.compare_keys(self.run.key(), other.run.key()),
        };
        keys.then(self.run.row.cmp(&other.run.row))
    }
}

/// Most sorted runs kept open at once: beyond it, the runs are merged into one first.
const MAX_OPEN_RUNS: usize = 64;

/// Merges sorted runs in key order, calling `emit(key, value, row)` for each row, through a
/// binary heap of the runs' current rows; a key that comes twice is an error.
fn merge_runs<T: TreeSchema + ?Sized>(
    schema: &T,
    files: Vec<File>,
    mut emit: impl FnMut(&[u8], &[u8], u64) -> Result<(), TreeError>,
) -> Result<(), TreeError> {
    let mut runs = Vec::with_capacity(files.len());
    for f in files {
        let mut c = Cursor {
            run: RunReader::new(f),
            word: None,
        };
        if c.advance(schema)? {
            runs.push(c);
        }
    }
    // heap[0] is the run with the smallest current row.
    let mut heap: Vec<usize> = (0..runs.len()).collect();
    let less = |runs: &[Cursor], a: usize, b: usize| runs[a].cmp(&runs[b], schema).is_lt();
    for i in (0..heap.len() / 2).rev() {
        sift_down(&mut heap, i, |a, b| less(&runs, a, b));
    }
    // The previous row's word and key.
    let mut prev_word: Option<(u64, bool)> = None;
    let mut prev_key: Vec<u8> = Vec::new();
    let mut prev_row: Option<u64> = None;
    while let Some(&top) = heap.first() {
        let c = &mut runs[top];
        let key = c.run.key();
        if let Some(first) = prev_row {
            let equal = match (prev_word, c.word) {
                (Some((a, true)), Some((b, true))) => a == b,
                (Some((a, _)), Some((b, _))) if a != b => false,
                _ => schema.compare_keys(&prev_key, key) == Ordering::Equal,
            };
            if equal {
                return Err(TreeError::DuplicateKey {
                    first,
                    second: c.run.row,
                });
            }
        }
        emit(key, c.run.value(), c.run.row)?;
        prev_word = c.word;
        prev_key.clear();
        prev_key.extend_from_slice(key);
        prev_row = Some(c.run.row);
        if !c.advance(schema)? {
            let last = heap.len() - 1;
            heap.swap(0, last);
            heap.pop();
        }
        sift_down(&mut heap, 0, |a, b| less(&runs, a, b));
    }
    Ok(())
}

/// Restores the heap order below `i` (`less(a, b)`: `a` comes out first).
fn sift_down(heap: &mut [usize], mut i: usize, less: impl Fn(usize, usize) -> bool) {
    loop {
        let (l, r) = (2 * i + 1, 2 * i + 2);
        let mut m = i;
        if l < heap.len() && less(heap[l], heap[m]) {
            m = l;
        }
        if r < heap.len() && less(heap[r], heap[m]) {
            m = r;
        }
        if m == i {
            return;
        }
        heap.swap(i, m);
        i = m;
    }
}

mod run;

use run::{RunReader, RunWriter};

#[cfg(test)]
mod tests;
