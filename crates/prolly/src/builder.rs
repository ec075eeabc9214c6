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
use std::path::PathBuf;

use crate::error::TreeError;
use crate::map::Map;
use crate::process::background_hashing;
use crate::sort::{advise_huge_pages, reserve_advised, sort_words, TWO_THREADS_MIN};
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

/// A memory bound for [`SortingBuilder`] when the caller has no better figure: 256 MiB of
/// rows, enough to sort a few million small rows without touching the disk, and small next
/// to the memory of a machine that builds maps of that size.
pub const DEFAULT_MEMORY_BOUND: usize = 256 << 20;

/// Memory per buffered row besides its bytes: its place in the buffer, and its entries in the
/// sort order made when the buffer is sorted (a 16-byte word and index, twice while they are
/// bucketed).
const ITEM_COST: usize = std::mem::size_of::<Item>() + 32;

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
    /// Whether the first key added has an exact sort word (then the buffer prepares its sort
    /// arrays ahead).
    exact: Option<bool>,
    buf: Buffer,
    runs: Vec<Run>,
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
    /// The sort arrays of exact words ([`Order::Exact`] and the one it is bucketed from),
    /// kept from one full buffer to the next: their memory is in the bound, and a fresh pair
    /// for every buffer cost its page faults and clearing again (system time).
    words: Vec<u128>,
    spare: Vec<u128>,
    /// The sort arrays for a buffer that will soon be full, being faulted in on a second
    /// thread while rows are still added ([`Buffer::prepare_sort_arrays`]).
    prepared: Option<std::thread::JoinHandle<(Vec<u128>, Vec<u128>)>>,
    /// Threads faulting in the grown part of `data` or `items` ([`populate_ahead`]); joined
    /// before either grows again and when the buffer is dropped.
    populating: Vec<std::thread::JoinHandle<()>>,
}

impl Drop for Buffer {
    fn drop(&mut self) {
        self.finish_populating();
    }
}

impl Buffer {
    fn key(&self, i: usize) -> &[u8] {
        let it = self.items[i];
        let start = it.start as usize;
        &self.data[start..start + it.key_len as usize]
    }

    /// Row `i`'s key and value bytes (back to back) and its key's length.
    fn row_bytes(&self, i: usize) -> (&[u8], usize) {
        let it = self.items[i];
        let start = it.start as usize;
        let end = match self.items.get(i + 1) {
            Some(next) => next.start as usize,
            None => self.data.len(),
        };
        (&self.data[start..end], it.key_len as usize)
    }

    /// Makes room for one more row of `n` bytes within `bound` (growing the buffers in steps,
    /// never past it); false if the bound leaves no room. With `exact` (keys with exact sort
    /// words), the sort arrays are prepared ahead once the next growth is the last.
    fn room(&mut self, n: usize, bound: usize, exact: bool) -> bool {
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
            self.finish_populating();
            self.items.reserve_exact(target - self.items.len());
            advise_huge_pages(&self.items);
            // The last growth before the buffer is full (it holds half of it already, so
            // what is prepared ahead is at most twice what the rows need).
            if target == max_items {
                self.populating
                    .extend(populate_ahead(&self.items, self.items.capacity()));
                if exact {
                    self.prepare_sort_arrays(max_items);
                }
            }
            self.populate_data(avg);
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
            self.finish_populating();
            self.data.reserve_exact(target - self.data.len());
            advise_huge_pages(&self.data);
            self.populate_data(self.data.len() / self.items.len().max(1));
        }
        true
    }

    /// Faults in ahead the data bytes that the items' capacity will place at `avg` bytes a
    /// row: no more than the rows that fit will use.
    fn populate_data(&mut self, avg: usize) {
        let end = self.items.capacity().saturating_mul(avg);
        if end > self.data.len() {
            self.populating.extend(populate_ahead(&self.data, end));
        }
    }

    /// Makes room for one row of `n` bytes past the bound.
    #[cold]
    fn take_alone(&mut self, n: usize) {
        self.finish_populating();
        self.data.reserve_exact(n);
        self.items.reserve_exact(1);
    }

    /// Waits for the threads [`populate_ahead`] started.
    fn finish_populating(&mut self) {
        for thread in self.populating.drain(..) {
            let _ = thread.join();
        }
    }

    /// Starts making the sort arrays for `n` rows on a second thread, which faults in their
    /// pages (writing zeros) while the rows that fill the buffer are still being added:
    /// otherwise the first sort spends a large part of its time waiting for the kernel to
    /// clear those pages. Nothing happens without a second core, or if they exist already.
    fn prepare_sort_arrays(&mut self, n: usize) {
        if self.prepared.is_some() || self.words.capacity() >= n || !background_hashing() {
            return;
        }
        let make = move || {
            let array = || {
                let mut v: Vec<u128> = Vec::with_capacity(n);
                advise_huge_pages(&v);
                v.resize(n, 0);
                v
            };
            (array(), array())
        };
        self.prepared = std::thread::Builder::new()
            .name("prolly-sort-prep".into())
            .spawn(make)
            .ok();
    }

    /// Takes the arrays [`Buffer::prepare_sort_arrays`] made (waiting for them if need be).
    fn take_prepared(&mut self) {
        if let Some(thread) = self.prepared.take() {
            if let Ok((words, spare)) = thread.join() {
                if words.capacity() > self.words.capacity() {
                    self.words = words;
                    self.spare = spare;
                }
            }
        }
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

    /// The rows in key order (equal keys by index). An [`Order::Exact`] borrows the kept sort
    /// arrays: give it back with [`Buffer::recycle`].
    fn sorted<T: TreeSchema + ?Sized>(&mut self, schema: &T) -> Order {
        let n = self.items.len();
        self.take_prepared();
        // Exact words, the common case for integer keys: one 128-bit integer per row orders
        // by key, then index, and equal keys are equal words.
        let mut exact = std::mem::take(&mut self.words);
        exact.clear();
        reserve_advised(&mut exact, n);
        for i in 0..n {
            match schema.sort_word(self.key(i)) {
                Some((w, true)) => exact.push((u128::from(w) << 64) | i as u128),
                _ => break,
            }
        }
        if exact.len() == n {
            let two_threads = n >= TWO_THREADS_MIN && background_hashing();
            sort_words(&mut exact, &mut self.spare, two_threads);
            return Order::Exact(exact);
        }
        self.words = exact;
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

    /// Takes back the sort array an [`Order::Exact`] borrowed.
    fn recycle(&mut self, order: Order) {
        if let Order::Exact(words) = order {
            self.words = words;
        }
    }

    /// Bytes of memory the buffer holds (its capacities: every page of them has been used).
    fn memory(&self) -> usize {
        self.data.capacity()
            + self.items.capacity() * std::mem::size_of::<Item>()
            + (self.words.capacity() + self.spare.capacity()) * std::mem::size_of::<u128>()
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

impl Order {
    /// Bytes of memory the order holds.
    fn memory(&self) -> usize {
        match self {
            Order::Exact(words) => words.capacity() * std::mem::size_of::<u128>(),
            Order::Indexes(rows) => rows.capacity() * std::mem::size_of::<u32>(),
        }
    }
}

/// Grown parts smaller than this are left to fault in as they are used.
const POPULATE_MIN: usize = 8 << 20;

/// Starts a thread that faults in the unused capacity of `v` up to element `end` (Linux, with
/// a second core, for `POPULATE_MIN` bytes or more), beyond the 2 MiB page that rows are
/// added to now: rows are added into it soon, and otherwise the thread adding them waits for
/// the kernel to clear every page first (a tenth of the adding time for a large buffer). The
/// caller joins the thread before `v` is reallocated or dropped.
fn populate_ahead<T>(v: &Vec<T>, end: usize) -> Option<std::thread::JoinHandle<()>> {
    #[cfg(all(target_os = "linux", not(miri)))]
    {
        const HUGE: usize = 2 << 20;
        let size = std::mem::size_of::<T>();
        let start = v.as_ptr() as usize + v.len() * size;
        let end = v.as_ptr() as usize + end.min(v.capacity()) * size;
        let lo = (start + HUGE).next_multiple_of(HUGE);
        if end < lo + POPULATE_MIN || !background_hashing() {
            return None;
        }
        let populate = move || {
            // In 2 MiB steps from the front, as the rows come in behind.
            let mut at = lo;
            while at < end {
                let len = HUGE.min(end - at);
                // SAFETY: `at..at + len` lies in the spare capacity of a vector that is
                // neither reallocated nor freed before this thread is joined. Populating
                // only faults in pages that read as zero already, whether by this thread or
                // the one adding rows (the kernel serializes the two), and never changes
                // their contents, so nothing Rust relies on changes.
                let failed = unsafe {
                    libc::madvise(at as *mut libc::c_void, len, libc::MADV_POPULATE_WRITE)
                } != 0;
                if failed {
                    return;
                }
                at += len;
            }
        };
        std::thread::Builder::new()
            .name("prolly-sort-prep".into())
            .spawn(populate)
            .ok()
    }
    #[cfg(not(all(target_os = "linux", not(miri))))]
    {
        let _ = (v, end);
        None
    }
}

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
    mut f: impl FnMut(&[u8], usize, u64) -> Result<(), TreeError>,
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
        let (bytes, key_len) = match fixed {
            Some((key_len, len)) => {
                let start = i as usize * len;
                (&buf.data[start..start + len], key_len)
            }
            None => buf.row_bytes(i as usize),
        };
        f(bytes, key_len, buf.first_row + u64::from(i))?;
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
    mut f: impl FnMut(&[u8], usize, u64) -> Result<(), TreeError>,
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
                let (bytes, key_len) = buf.row_bytes(i as usize);
                let k = &bytes[..key_len];
                if let Some((p, pi)) = prev {
                    if schema.compare_keys(p, k) == Ordering::Equal {
                        return Err(duplicate(pi, i));
                    }
                }
                f(bytes, key_len, buf.first_row + u64::from(i))?;
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
            exact: None,
            buf: Buffer::default(),
            runs: Vec::new(),
            added: 0,
        }
    }

    /// A builder with the [`DEFAULT_MEMORY_BOUND`].
    pub fn with_default_bound(schema: T) -> SortingBuilder<T> {
        SortingBuilder::new(schema, DEFAULT_MEMORY_BOUND)
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
        if self.buf.items.len() == self.buf.items.capacity() {
            return self.add_growing(key, value);
        }
        if !self.buf.room(n, self.bound, false) {
            self.spill()?;
            if !self.buf.room(n, self.bound, false) {
                // A row larger than the bound: taken alone.
                self.buf.take_alone(n);
            }
        }
        self.buf.push(key, value);
        self.added += 1;
        Ok(())
    }

    /// [`SortingBuilder::add`] when the buffer's items must grow (or it is full).
    #[cold]
    fn add_growing(&mut self, key: &[u8], value: &[u8]) -> Result<(), TreeError> {
        let exact = *self
            .exact
            .get_or_insert_with(|| matches!(self.schema.sort_word(key), Some((_, true))));
        let n = key.len() + value.len();
        if !self.buf.room(n, self.bound, exact) {
            self.spill()?;
            if !self.buf.room(n, self.bound, exact) {
                // A row larger than the bound: taken alone.
                self.buf.take_alone(n);
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
        spill_into(
            &mut self.buf,
            &self.schema,
            dir,
            &mut self.runs,
            self.added,
            Spill::File,
        )
    }

    /// Sorts what is left, merges it with the runs on disk into a tree in `store` (the only
    /// time the builder writes to a store), and returns the map.
    ///
    /// The last buffer's rows are not written to disk when the bound leaves room for them as
    /// a run in memory (a varint head per row) beside the buffer; that run's memory goes back
    /// block by block as the merge reads it, while the tree grows. With a second core
    /// ([`crate::process::background_hashing`]) the merge runs on its own thread ahead of the
    /// tree builder (so the schema is shared with it: `T: Sync`).
    pub fn finish<S: StoreFastPaths + ?Sized>(
        mut self,
        store: &S,
    ) -> Result<Map<'_, S, T>, TreeError>
    where
        T: Sync,
    {
        let root = {
            let schema = &self.schema;
            let mut tree = tree_builder(store, schema);
            if self.runs.is_empty() {
                let order = self.buf.sorted(schema);
                // Only the order is needed from here on.
                self.buf.spare = Vec::new();
                for_each_sorted(&self.buf, schema, &order, |r, key_len, _| {
                    let (k, v) = r.split_at(key_len);
                    tree.add(k, v)
                })?;
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
                    Spill::Last { bound: self.bound },
                )?;
                drop(buf);
                merge_into(schema, runs, |k, v| tree.add(k, v))?;
            }
            tree.finish()?
        };
        Ok(Map::new(store, root, self.schema))
    }
}

/// Where [`spill_into`] puts a buffer's rows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Spill {
    /// A temporary file (a full buffer, more rows to come).
    File,
    /// The last buffer: in memory if the bound leaves room for its rows beside the buffer
    /// (`bound` bytes), else a file.
    Last { bound: usize },
}

#[cfg(test)]
thread_local! {
    /// Whether the last buffer of this thread's last build with runs was kept in memory.
    static LAST_IN_MEMORY: std::cell::Cell<Option<bool>> = const { std::cell::Cell::new(None) };
}

/// Sorts `buf` and writes it as a run ([`RunWriter`]) appended to `runs` (merging all of them
/// into one when too many are open); the buffer is then emptied for the rows from `added` on.
fn spill_into<T: TreeSchema + ?Sized>(
    buf: &mut Buffer,
    schema: &T,
    dir: Option<&PathBuf>,
    runs: &mut Vec<Run>,
    added: u64,
    to: Spill,
) -> Result<(), TreeError> {
    if buf.items.is_empty() {
        return Ok(());
    }
    let order = buf.sorted(schema);
    let memory = match to {
        Spill::File => false,
        Spill::Last { bound } => {
            // The bucketed copy is not needed any more.
            buf.spare = Vec::new();
            // A run row is its bytes and three varints (row index, two lengths) plus the
            // writers' blocks.
            let n = buf.items.len();
            let head = (u64::BITS - added.leading_zeros()).div_ceil(7) as usize + 10;
            let run = buf.data.len() + n * head + 2 * (run::MEMORY_BLOCK + run::MAX_HEAD);
            let memory = buf.memory() + order.memory() + run <= bound;
            #[cfg(test)]
            LAST_IN_MEMORY.with(|last| last.set(Some(memory)));
            memory
        }
    };
    let writer = || {
        if memory {
            Ok(RunWriter::memory())
        } else {
            RunWriter::new(dir)
        }
    };
    match &order {
        Order::Exact(words) if words.len() >= TWO_THREADS_MIN && background_hashing() => {
            // Two runs written side by side, split where the words differ, so the two never
            // hold the same key.
            let mut mid = words.len() / 2;
            while mid < words.len() && words[mid - 1] >> 64 == words[mid] >> 64 {
                mid += 1;
            }
            let (a, b) = words.split_at(mid);
            let buf = &*buf;
            let write = |part: &[u128]| -> Result<Run, TreeError> {
                let mut w = writer()?;
                for_each_exact(buf, part, |r, key_len, row| w.push_row(r, key_len, row))?;
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
            let mut w = writer()?;
            for_each_sorted(buf, schema, &order, |r, key_len, row| {
                w.push_row(r, key_len, row)
            })?;
            runs.push(w.finish()?);
        }
    }
    buf.recycle(order);
    if runs.len() >= MAX_OPEN_RUNS {
        // Too many files to keep open: merge them into one run.
        let all = std::mem::take(runs);
        let mut w = RunWriter::new(dir)?;
        merge_runs(schema, all, |r, key_len, row| w.push_row(r, key_len, row))?;
        runs.push(w.finish()?);
    }
    buf.clear(added);
    Ok(())
}

/// One sorted run being merged: its reader and the current row's sort word.
struct Cursor {
    run: RunReader,
    word: Option<(u64, bool)>,
    /// Past the run's last row.
    done: bool,
}

impl Cursor {
    /// Moves to the next row (or marks the run done).
    #[inline]
    fn advance<T: TreeSchema + ?Sized>(&mut self, schema: &T) -> Result<(), TreeError> {
        if self.run.advance()? {
            self.word = schema.sort_word(self.run.key());
        } else {
            self.done = true;
        }
        Ok(())
    }

    /// True if this run's row comes out before `other`'s: key order, then the order rows
    /// were added in; a finished run comes out last.
    #[inline]
    fn before<T: TreeSchema + ?Sized>(&self, other: &Cursor, schema: &T) -> bool {
        if self.done || other.done {
            return !self.done;
        }
        let keys = match (self.word, other.word) {
            (Some(a), Some(b)) if a.0 != b.0 => a.0.cmp(&b.0),
            (Some((_, true)), Some((_, true))) => Ordering::Equal,
            _ => schema.compare_keys(self.run.key(), other.run.key()),
        };
        keys.then(self.run.row.cmp(&other.run.row)).is_lt()
    }
}

/// Most sorted runs kept open at once: beyond it, the runs are merged into one first.
const MAX_OPEN_RUNS: usize = 64;

/// A tournament (loser) tree over `k` sources: `nodes[0]` is the source whose row comes out
/// next, `nodes[1..k]` the losers of the matches on the way up. Replacing the winner's row
/// replays only its path, one comparison a level (a binary heap takes two), with no moves.
struct LoserTree {
    nodes: Vec<usize>,
}

impl LoserTree {
    /// Plays every match; `before(a, b)`: source `a`'s row comes out before `b`'s.
    fn new(k: usize, before: impl Fn(usize, usize) -> bool) -> LoserTree {
        // Sources are the leaves at positions k..2k; position i's parent is i / 2.
        let mut wins: Vec<usize> = vec![0; 2 * k];
        let mut nodes = vec![0; k.max(1)];
        for j in 0..k {
            wins[k + j] = j;
        }
        for i in (1..k).rev() {
            let (a, b) = (wins[2 * i], wins[2 * i + 1]);
            let (w, l) = if before(b, a) { (b, a) } else { (a, b) };
            wins[i] = w;
            nodes[i] = l;
        }
        if k > 1 {
            nodes[0] = wins[1];
        }
        LoserTree { nodes }
    }

    #[inline]
    fn winner(&self) -> usize {
        self.nodes[0]
    }

    /// Replays the matches of source `s` (the last winner) after its row changed.
    #[inline]
    fn replay(&mut self, s: usize, before: impl Fn(usize, usize) -> bool) {
        let k = self.nodes.len();
        let mut winner = s;
        let mut i = (s + k) / 2;
        while i > 0 {
            if before(self.nodes[i], winner) {
                std::mem::swap(&mut self.nodes[i], &mut winner);
            }
            i /= 2;
        }
        self.nodes[0] = winner;
    }
}

/// Merges sorted runs in key order, calling `emit(bytes, key_len, row)` for each row (its key
/// and value back to back, the key's length, its index over all rows added), through a
/// loser tree of the runs' current rows; a key that comes twice is an error.
fn merge_runs<T: TreeSchema + ?Sized>(
    schema: &T,
    runs: Vec<Run>,
    mut emit: impl FnMut(&[u8], usize, u64) -> Result<(), TreeError>,
) -> Result<(), TreeError> {
    let mut cursors = Vec::with_capacity(runs.len());
    for run in runs {
        let mut c = Cursor {
            run: RunReader::new(run),
            word: None,
            done: false,
        };
        c.advance(schema)?;
        cursors.push(c);
    }
    let mut tree = LoserTree::new(cursors.len(), |a, b| cursors[a].before(&cursors[b], schema));
    // The previous row's word, key and index.
    let mut prev_word: Option<(u64, bool)> = None;
    let mut prev_key: Vec<u8> = Vec::new();
    let mut prev_row: Option<u64> = None;
    loop {
        let top = tree.winner();
        let Some(c) = cursors.get_mut(top) else {
            return Ok(());
        };
        if c.done {
            return Ok(());
        }
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
        emit(c.run.row_bytes(), key.len(), c.run.row)?;
        prev_word = c.word;
        prev_key.clear();
        prev_key.extend_from_slice(key);
        prev_row = Some(c.run.row);
        c.advance(schema)?;
        tree.replay(top, |a, b| cursors[a].before(&cursors[b], schema));
    }
}

/// Bytes of rows the merge thread hands over at a time: large enough that the hand-over is
/// rare (a few thousand small rows), small enough to stay in cache.
const BATCH_BYTES: usize = 128 << 10;

/// Batches in flight from the merge thread (besides the one it fills and the one the tree
/// builder reads).
const BATCHES_IN_FLIGHT: usize = 2;

/// Merged rows handed from the merge thread to the tree builder.
#[derive(Default)]
struct Batch {
    bytes: Vec<u8>,
    /// Key and value length of each row, in order.
    rows: Vec<(usize, usize)>,
}

/// [`merge_runs`] into `add`: with a second core ([`background_hashing`]), the merge runs on
/// its own thread ahead of the caller (which builds the tree), handing over batches of rows;
/// the merge's work then leaves the tree builder's path.
fn merge_into<T: TreeSchema + Sync + ?Sized>(
    schema: &T,
    runs: Vec<Run>,
    mut add: impl FnMut(&[u8], &[u8]) -> Result<(), TreeError>,
) -> Result<(), TreeError> {
    if !background_hashing() {
        return merge_runs(schema, runs, |r, key_len, _| {
            let (k, v) = r.split_at(key_len);
            add(k, v)
        });
    }
    let (full_tx, full_rx) = std::sync::mpsc::sync_channel::<Batch>(BATCHES_IN_FLIGHT);
    let (empty_tx, empty_rx) = std::sync::mpsc::channel::<Batch>();
    std::thread::scope(|s| {
        let merger = s.spawn(move || {
            let mut batch = Batch::default();
            merge_runs(schema, runs, |r, key_len, _| {
                batch.bytes.extend_from_slice(r);
                batch.rows.push((key_len, r.len() - key_len));
                if batch.bytes.len() >= BATCH_BYTES {
                    let next = empty_rx.try_recv().unwrap_or_default();
                    // The receiver is gone only when the tree builder failed; its error is
                    // the one reported.
                    full_tx
                        .send(std::mem::replace(&mut batch, next))
                        .map_err(|_| TreeError::Internal("tree builder stopped"))?;
                }
                Ok(())
            })?;
            if !batch.rows.is_empty() {
                let _ = full_tx.send(batch);
            }
            Ok(())
        });
        let mut added = Ok(());
        while let Ok(mut batch) = full_rx.recv() {
            let mut at = 0;
            for &(k, v) in &batch.rows {
                let (key, rest) = batch.bytes[at..].split_at(k);
                added = add(key, &rest[..v]);
                if added.is_err() {
                    break;
                }
                at += k + v;
            }
            if added.is_err() {
                break;
            }
            batch.bytes.clear();
            batch.rows.clear();
            let _ = empty_tx.send(batch);
        }
        // Unblocks the merge thread if the tree builder stopped early.
        drop(full_rx);
        let merged = merger
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        added.and(merged)
    })
}

mod run;

use run::{Run, RunReader, RunWriter};

#[cfg(test)]
mod tests;
