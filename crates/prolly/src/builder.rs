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
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;

use crate::error::TreeError;
use crate::map::Map;
use crate::process::background_hashing;
use crate::store::{StoreError, StoreFastPaths};
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

/// Memory per buffered row besides its bytes: its place in the buffer, and its entry in the
/// sort order made when the buffer is sorted.
const ITEM_COST: usize = std::mem::size_of::<Item>() + 16;

/// Builds a map from rows in any order: rows are buffered up to the memory bound, each full
/// buffer is sorted and written to an anonymous temporary file (deleted by the OS when
/// closed), and [`SortingBuilder::finish`] merges the sorted runs into the tree. With fewer
/// rows than the bound holds, nothing touches the disk.
///
/// The bound counts the buffered rows' bytes plus 24 bytes per row; buffers grow in steps
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
        }
        true
    }

    fn push(&mut self, key: &[u8], value: &[u8]) {
        self.items.push(Item {
            start: self.data.len() as u32,
            key_len: key.len() as u32,
        });
        self.data.extend_from_slice(key);
        self.data.extend_from_slice(value);
    }

    /// The rows' indexes in key order (equal keys by index), and whether each key's sort word
    /// was exact (then equal words mean equal keys).
    fn sorted<T: TreeSchema + ?Sized>(&self, schema: &T) -> (Vec<u32>, bool) {
        let n = self.items.len();
        let words: Option<Vec<(u64, bool)>> =
            (0..n).map(|i| schema.sort_word(self.key(i))).collect();
        match words {
            Some(words) if words.iter().all(|w| w.1) => {
                // Exact words: one 128-bit integer per row orders by key, then index.
                let mut order: Vec<u128> = words
                    .iter()
                    .enumerate()
                    .map(|(i, w)| (u128::from(w.0) << 64) | i as u128)
                    .collect();
                drop(words);
                order.sort_unstable();
                (order.into_iter().map(|x| x as u32).collect(), true)
            }
            Some(words) => {
                let mut order: Vec<(u64, u32)> = words
                    .iter()
                    .enumerate()
                    .map(|(i, w)| (w.0, i as u32))
                    .collect();
                drop(words);
                order.sort_unstable_by(|a, b| {
                    a.0.cmp(&b.0)
                        .then_with(|| {
                            schema.compare_keys(self.key(a.1 as usize), self.key(b.1 as usize))
                        })
                        .then(a.1.cmp(&b.1))
                });
                (order.into_iter().map(|x| x.1).collect(), false)
            }
            None => {
                let mut order: Vec<u32> = (0..n as u32).collect();
                order.sort_unstable_by(|&a, &b| {
                    schema
                        .compare_keys(self.key(a as usize), self.key(b as usize))
                        .then(a.cmp(&b))
                });
                (order, false)
            }
        }
    }

    fn clear(&mut self, first_row: u64) {
        self.data.clear();
        self.items.clear();
        self.first_row = first_row;
    }
}

/// Calls `f(key, value, row)` for the rows of `buf` in key order (`order` and `exact` as
/// [`Buffer::sorted`] gives them), failing at the first two rows with equal keys. Rows are
/// read in sorted order, all over the buffer: each row's place and bytes are prefetched a few
/// rows ahead, since the misses, not the copies, are what such a pass waits for.
fn for_each_sorted<T: TreeSchema + ?Sized>(
    buf: &Buffer,
    schema: &T,
    order: &[u32],
    exact: bool,
    mut f: impl FnMut(&[u8], &[u8], u64) -> Result<(), TreeError>,
) -> Result<(), TreeError> {
    const AHEAD: usize = 8;
    let mut prev: Option<(&[u8], u32)> = None;
    for (j, &i) in order.iter().enumerate() {
        if let Some(&far) = order.get(j + 2 * AHEAD) {
            if let Some(it) = buf.items.get(far as usize) {
                prefetch_ptr((it as *const Item).cast());
            }
        }
        if let Some(&near) = order.get(j + AHEAD) {
            if let Some(it) = buf.items.get(near as usize) {
                prefetch_at(&buf.data, it.start as usize);
            }
        }
        let (k, v) = buf.row(i as usize);
        if let Some((p, pi)) = prev {
            let equal = if exact {
                p == k
            } else {
                schema.compare_keys(p, k) == Ordering::Equal
            };
            if equal {
                return Err(TreeError::DuplicateKey {
                    first: buf.first_row + u64::from(pi),
                    second: buf.first_row + u64::from(i),
                });
            }
        }
        f(k, v, buf.first_row + u64::from(i))?;
        prev = Some((k, i));
    }
    Ok(())
}

fn io_error(what: &str) -> impl FnOnce(std::io::Error) -> TreeError + '_ {
    move |source| {
        TreeError::Store(StoreError::Io {
            context: format!("sorting builder: {what}"),
            source,
        })
    }
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
                let (order, exact) = self.buf.sorted(schema);
                for_each_sorted(&self.buf, schema, &order, exact, |k, v, _| tree.add(k, v))?;
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

/// Sorts `buf` and writes it to a new temporary file as a run ([`write_row`]), appended to
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
    let (order, exact) = buf.sorted(schema);
    let mut w = run_file(dir)?;
    for_each_sorted(buf, schema, &order, exact, |k, v, row| {
        write_row(&mut w, k, v, row)
    })?;
    drop(order);
    runs.push(finish_run(w)?);
    if runs.len() >= MAX_OPEN_RUNS {
        // Too many files to keep open: merge them into one run.
        let files = std::mem::take(runs);
        let mut w = run_file(dir)?;
        merge_runs(schema, files, |k, v, row| write_row(&mut w, k, v, row))?;
        runs.push(finish_run(w)?);
    }
    buf.clear(added);
    Ok(())
}

/// One sorted run being read back: its current row.
struct RunReader {
    file: BufReader<File>,
    key: Vec<u8>,
    value: Vec<u8>,
    row: u64,
    word: Option<(u64, bool)>,
}

impl RunReader {
    /// Reads the next row; false at the end of the run.
    fn advance<T: TreeSchema + ?Sized>(&mut self, schema: &T) -> Result<bool, TreeError> {
        let mut head = [0u8; 16];
        match self.file.read_exact(&mut head) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(false),
            Err(e) => return Err(io_error("reading a sorted run")(e)),
        }
        let [r @ .., _, _, _, _, _, _, _, _] = head;
        let row = u64::from_le_bytes(r);
        let key_len = u32::from_le_bytes([head[8], head[9], head[10], head[11]]) as usize;
        let value_len = u32::from_le_bytes([head[12], head[13], head[14], head[15]]) as usize;
        self.key.resize(key_len, 0);
        self.value.resize(value_len, 0);
        let read = |f: &mut BufReader<File>, b: &mut [u8]| {
            f.read_exact(b).map_err(io_error("reading a sorted run"))
        };
        read(&mut self.file, &mut self.key)?;
        read(&mut self.file, &mut self.value)?;
        self.row = row;
        self.word = schema.sort_word(&self.key);
        Ok(true)
    }

    /// Key order, then the order rows were added in.
    fn cmp<T: TreeSchema + ?Sized>(&self, other: &RunReader, schema: &T) -> Ordering {
        let keys = match (self.word, other.word) {
            (Some(a), Some(b)) if a.0 != b.0 => a.0.cmp(&b.0),
            (Some((_, true)), Some((_, true))) => Ordering::Equal,
            _ => schema.compare_keys(&self.key, &other.key),
        };
        keys.then(self.row.cmp(&other.row))
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
        let mut r = RunReader {
            file: BufReader::with_capacity(256 << 10, f),
            key: Vec::new(),
            value: Vec::new(),
            row: 0,
            word: None,
        };
        if r.advance(schema)? {
            runs.push(r);
        }
    }
    // heap[0] is the run with the smallest current row.
    let mut heap: Vec<usize> = (0..runs.len()).collect();
    let less = |runs: &[RunReader], a: usize, b: usize| runs[a].cmp(&runs[b], schema).is_lt();
    for i in (0..heap.len() / 2).rev() {
        sift_down(&mut heap, i, |a, b| less(&runs, a, b));
    }
    let mut prev_key: Vec<u8> = Vec::new();
    let mut prev_row: Option<u64> = None;
    while let Some(&top) = heap.first() {
        let run = &mut runs[top];
        if let Some(first) = prev_row {
            if schema.compare_keys(&prev_key, &run.key) == Ordering::Equal {
                return Err(TreeError::DuplicateKey {
                    first,
                    second: run.row,
                });
            }
        }
        emit(&run.key, &run.value, run.row)?;
        // Keep this key for the duplicate check by swapping buffers, not copying.
        std::mem::swap(&mut prev_key, &mut run.key);
        prev_row = Some(run.row);
        if !run.advance(schema)? {
            let last = heap.len() - 1;
            heap.swap(0, last);
            heap.pop();
        }
        sift_down(&mut heap, 0, |a, b| less(&runs, a, b));
    }
    Ok(())
}

/// A new temporary file for a sorted run.
fn run_file(dir: Option<&PathBuf>) -> Result<BufWriter<File>, TreeError> {
    let file = match dir {
        Some(dir) => tempfile::tempfile_in(dir),
        None => tempfile::tempfile(),
    }
    .map_err(io_error("creating a temporary file for a sorted run"))?;
    Ok(BufWriter::with_capacity(1 << 20, file))
}

/// Appends one row to a run: its index (8 bytes), key and value lengths (4 bytes each,
/// little-endian), key, value.
fn write_row(w: &mut BufWriter<File>, key: &[u8], value: &[u8], row: u64) -> Result<(), TreeError> {
    let mut head = [0u8; 16];
    head[..8].copy_from_slice(&row.to_le_bytes());
    head[8..12].copy_from_slice(&(key.len() as u32).to_le_bytes());
    head[12..].copy_from_slice(&(value.len() as u32).to_le_bytes());
    let mut put = || -> std::io::Result<()> {
        w.write_all(&head)?;
        w.write_all(key)?;
        w.write_all(value)
    };
    put().map_err(io_error("writing a sorted run"))
}

/// The finished run, rewound for reading.
fn finish_run(w: BufWriter<File>) -> Result<File, TreeError> {
    let mut file = w
        .into_inner()
        .map_err(|e| io_error("writing a sorted run")(e.into_error()))?;
    file.seek(SeekFrom::Start(0))
        .map_err(io_error("rewinding a sorted run"))?;
    Ok(file)
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

#[cfg(test)]
mod tests;
