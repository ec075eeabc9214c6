//! Range cursors (both directions) and diffs between two maps.

use std::ops::Bound;
use std::sync::Arc;

use prollystore::map::{Iter, Run, Runs};
use prollystore::tuples::TupleSchema;
use prollystore::{Diff, DiffEntry, Map};

use crate::args::{bytes, free_handle, input, input_mut, into_handle, Out};
use crate::map::{extend, prolly_map, prolly_row};
use crate::result::{ffi, ffi_status, prolly_result, Error};
use crate::store::{Backend, Borrow};

/// Kinds of range bound. Plain `uint32_t` in `prolly_bound.kind`.
#[repr(u32)]
#[derive(Clone, Copy, Debug)]
pub enum prolly_bound_kind {
    /// No bound on this side (the key is ignored).
    Unbounded = 0,
    /// Keys equal to the bound are inside.
    Included = 1,
    /// Keys equal to the bound are outside.
    Excluded = 2,
}

/// One end of a key range.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct prolly_bound {
    /// A `prolly_bound_kind`.
    pub kind: u32,
    /// The encoded key tuple (ignored when unbounded; copied by the call).
    pub key: *const u8,
    /// Length of `key`.
    pub key_len: usize,
}

/// Scan directions. Plain `uint32_t`.
#[repr(u32)]
#[derive(Clone, Copy, Debug)]
pub enum prolly_direction {
    /// Ascending key order.
    Forward = 0,
    /// Descending key order.
    Backward = 1,
}

/// A scan over a key range of a map, forward or backward. Rows point into the store's chunks
/// (see `prolly_row`). Counts as open for `prolly_store_commit` (`PROLLY_RESULT_ERR_BUSY`) until
/// freed. Not thread-safe: one thread at a time.
pub struct prolly_cursor {
    // Drop order matters: `run` and `scan` borrow everything declared after them.
    /// Forward scans over leaves of fixed-width rows: the rows of the current leaf not returned
    /// yet, so that the common step of `prolly_cursor_next` is a few instructions on one cache
    /// line. Empty otherwise.
    hot: Hot,
    /// Forward scans: the rows of the current leaf not returned yet when they are not in
    /// `hot` (leaves walked through offsets; the rest of a leaf a batch call left). Always
    /// empty for backward scans.
    run: Run<'static>,
    scan: Scan,
    _map: Arc<Map<'static, Backend, &'static TupleSchema>>,
    _lo: Arc<[u8]>,
    _hi: Arc<[u8]>,
    _schema: Arc<TupleSchema>,
    _borrow: Borrow,
}

/// The rows left in a leaf whose keys all have one width and whose values all have one width,
/// as positions: a step is a compare, two pointer bumps and the row's four words. The
/// pointers are only handed to C, never read here; they point into chunks that the cursor
/// keeps alive (as `run`'s borrows do). Aligned so that it fills part of one cache line
/// (Rust places the most aligned field first).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Hot {
    /// The next row's key; equal to `key_end` when no row is left.
    key: *const u8,
    /// One past the last key.
    key_end: *const u8,
    /// The next row's value.
    value: *const u8,
    key_width: usize,
    value_width: usize,
}

impl Hot {
    /// No rows.
    const EMPTY: Hot = Hot {
        key: std::ptr::null(),
        key_end: std::ptr::null(),
        value: std::ptr::null(),
        key_width: 0,
        value_width: 0,
    };

    /// The rows of `run`, if its rows have fixed widths.
    fn of(run: &Run<'_>) -> Option<Hot> {
        let (keys, key_width, values, value_width) = run.fixed_parts()?;
        // Both widths are nonzero; the counts agree on a verified node (the smaller wins
        // otherwise).
        let n = (keys.len() / key_width.max(1)).min(values.len() / value_width.max(1));
        let keys = &keys[..n * key_width];
        Some(Hot {
            key: keys.as_ptr(),
            key_end: keys.as_ptr_range().end,
            value: values.as_ptr(),
            key_width,
            value_width,
        })
    }

    /// The next row.
    #[inline(always)]
    fn next(&mut self) -> Option<prolly_row> {
        if self.key == self.key_end {
            return None;
        }
        let row = prolly_row {
            key: self.key,
            key_len: self.key_width,
            value: self.value,
            value_len: self.value_width,
        };
        // Within the slices `of` took (or one past their ends).
        self.key = self.key.wrapping_add(self.key_width);
        self.value = self.value.wrapping_add(self.value_width);
        Some(row)
    }
}

type Schema = &'static TupleSchema;

/// Where a cursor's rows come from.
enum Scan {
    /// Ascending: a leaf's worth of rows at a time (into `prolly_cursor::run`).
    Forward(Runs<'static, 'static, Backend, Schema>),
    /// Descending: one row at a time.
    Backward(Iter<'static, 'static, Backend, Schema>),
}

/// Copies a bound's key and reads its kind.
///
/// # Safety
/// `b` is NULL or readable, and its key readable for `key_len` bytes.
unsafe fn bound_of(b: *const prolly_bound, name: &str) -> Result<(u32, Arc<[u8]>), Error> {
    // SAFETY: per this function's contract.
    let b = unsafe { input(b, name) }?;
    if b.kind == prolly_bound_kind::Unbounded as u32 {
        return Ok((0, Arc::from(&[][..])));
    }
    if b.kind > 2 {
        return Err(Error::invalid(format!(
            "{name}: unknown bound kind {}",
            b.kind
        )));
    }
    // SAFETY: per this function's contract.
    let k = unsafe { bytes(b.key, b.key_len, name) }?;
    Ok((b.kind, Arc::from(k)))
}

fn as_bound(kind: u32, key: &'static [u8]) -> Bound<&'static [u8]> {
    match kind {
        1 => Bound::Included(key),
        2 => Bound::Excluded(key),
        _ => Bound::Unbounded,
    }
}

/// Opens a cursor over the rows of `map` between `lower` and `upper` (use
/// `PROLLY_BOUND_KIND_UNBOUNDED` for an open end), in `direction` (a `prolly_direction`). The
/// bounds' keys are copied. Free with `prolly_cursor_free`.
#[no_mangle]
pub extern "C" fn prolly_map_range(
    map: *const prolly_map,
    lower: *const prolly_bound,
    upper: *const prolly_bound,
    direction: u32,
    out_cursor: *mut *mut prolly_cursor,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let m = unsafe { input(map, "map") }?;
        // SAFETY: C caller's contract: readable bounds.
        let (lo, hi) = unsafe { (bound_of(lower, "lower")?, bound_of(upper, "upper")?) };
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_cursor, "out_cursor") }?;
        if direction > 1 {
            return Err(Error::invalid(format!("unknown direction {direction}")));
        }
        let borrow = Borrow::new(&m.store);
        let schema = Arc::clone(&m.schema);
        // SAFETY: the cursor owns the store (`_borrow`), schema, map and keys through `Arc`s,
        // declared after `iter`, so they outlive every use of these references.
        let (backend, schema_ref) = unsafe { (extend(borrow.0.backend()), extend(&*schema)) };
        let map = Arc::new(Map::new(backend, m.root, schema_ref));
        // SAFETY: as above.
        let (map_ref, lo_key, hi_key) = unsafe { (extend(&*map), extend(&*lo.1), extend(&*hi.1)) };
        let (l, h) = (as_bound(lo.0, lo_key), as_bound(hi.0, hi_key));
        let scan = if direction == 0 {
            Scan::Forward(map_ref.range_runs(l, h)?)
        } else {
            Scan::Backward(map_ref.range_rev(l, h)?)
        };
        out.set(into_handle(prolly_cursor {
            hot: Hot::EMPTY,
            run: Run::default(),
            scan,
            _map: map,
            _lo: lo.1,
            _hi: hi.1,
            _schema: schema,
            _borrow: borrow,
        }));
        Ok(())
    })
}

/// Moves to the next row and writes it to `*out_row`; `PROLLY_RESULT_END` (row untouched) when
/// the range is exhausted (and on every later call).
#[no_mangle]
pub extern "C" fn prolly_cursor_next(
    cursor: *mut prolly_cursor,
    out_row: *mut prolly_row,
) -> prolly_result {
    // The common step, the next row of a fixed-width leaf, runs before the panic boundary: it
    // only compares and bumps pointers and writes the row, so nothing in it can panic
    // (were that to change, the `extern "C"` boundary would abort, never unwind into C).
    // Outside the boundary it is a leaf function that jumps to the rest, with no frame: about
    // 5% of a one-row scan's time (measured, benches/benches/ffi.rs).
    // SAFETY: C caller's contract: valid handle or NULL, not used concurrently.
    if let (Some(c), false) = (unsafe { cursor.as_mut() }, out_row.is_null()) {
        if let Some(row) = c.hot.next() {
            // SAFETY: non-null, and writable per the C caller's contract.
            unsafe { out_row.write(row) };
            return prolly_result::Ok;
        }
    }
    std::hint::cold_path();
    cursor_next_guarded(cursor, out_row)
}

/// `prolly_cursor_next` past its common step, inside the panic boundary. `extern "C"` (so it
/// cannot unwind), which lets the caller jump to it instead of calling it.
#[cold]
#[inline(never)]
extern "C" fn cursor_next_guarded(
    cursor: *mut prolly_cursor,
    out_row: *mut prolly_row,
) -> prolly_result {
    ffi_status!({ cursor_next_slow(cursor, out_row) })
}

/// The rest of `prolly_cursor_next`: NULL arguments, the next leaf, backward scans.
#[cold]
#[inline(never)]
fn cursor_next_slow(
    cursor: *mut prolly_cursor,
    out_row: *mut prolly_row,
) -> Result<prolly_result, Error> {
    // SAFETY: C caller's contract: valid handle, not used concurrently.
    let c = unsafe { input_mut(cursor, "cursor") }?;
    // SAFETY: C caller's contract: writable or NULL.
    let out = unsafe { Out::new(out_row, "out_row") }?;
    let row = match &mut c.scan {
        Scan::Forward(runs) => {
            // The rest of a run a batch call left: fixed-width rows go to the fast path.
            if let Some(hot) = Hot::of(&c.run) {
                c.hot = hot;
                c.run = Run::default();
            }
            loop {
                if let Some(row) = c.hot.next() {
                    out.set(row);
                    return Ok(prolly_result::Ok);
                }
                if let Some(row) = c.run.next() {
                    break row;
                }
                match runs.next() {
                    Some(run) => {
                        let run = run?;
                        match Hot::of(&run) {
                            Some(hot) => c.hot = hot,
                            None => c.run = run,
                        }
                    }
                    None => return Ok(prolly_result::End),
                }
            }
        }
        Scan::Backward(iter) => match iter.next() {
            Some(r) => r?,
            None => return Ok(prolly_result::End),
        },
    };
    out.set(prolly_row::of(row.0, row.1));
    Ok(prolly_result::Ok)
}

/// Fills `rows` (room for `capacity` rows, at least 1) with the next rows and writes how many
/// to `*out_count`: `PROLLY_RESULT_OK` with 1 to `capacity` rows, or `PROLLY_RESULT_END` with 0
/// once the range is exhausted. The same rows as repeated `prolly_cursor_next` calls (the two
/// may be mixed on one cursor), with one call per batch instead of one per row.
#[no_mangle]
pub extern "C" fn prolly_cursor_next_batch(
    cursor: *mut prolly_cursor,
    rows: *mut prolly_row,
    capacity: usize,
    out_count: *mut usize,
) -> prolly_result {
    ffi_status!({
        // SAFETY: C caller's contract: valid handle, not used concurrently.
        let c = unsafe { input_mut(cursor, "cursor") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_count, "out_count") }?;
        if rows.is_null() {
            return Err(Error::null("rows"));
        }
        if capacity == 0 || capacity > isize::MAX as usize / size_of::<prolly_row>() {
            return Err(Error::invalid(format!("capacity {capacity}")));
        }
        let mut n = 0usize;
        // Rows `prolly_cursor_next` left in the fast path first.
        while n < capacity {
            let Some(row) = c.hot.next() else { break };
            // SAFETY: `rows` is non-null and writable for `capacity > n` rows per the caller's
            // contract.
            unsafe { rows.add(n).write(row) };
            n += 1;
        }
        match &mut c.scan {
            Scan::Forward(_) if n == capacity => {}
            Scan::Forward(runs) => loop {
                // The part of the run that fits, walked in one tight loop.
                c.run.take_front(capacity - n).for_each(|(k, v)| {
                    // SAFETY: `rows` is non-null and writable for `capacity` rows per the
                    // caller's contract, and the part has at most `capacity - n` rows.
                    unsafe { rows.add(n).write(prolly_row::of(k, v)) };
                    n += 1;
                });
                if n == capacity {
                    break;
                }
                match runs.next() {
                    Some(run) => c.run = run?,
                    None => break,
                }
            },
            Scan::Backward(iter) => {
                iter.next_batch(capacity, |k, v| {
                    if n < capacity {
                        // SAFETY: `rows` is non-null and writable for `capacity > n` rows per
                        // the caller's contract.
                        unsafe { rows.add(n).write(prolly_row::of(k, v)) };
                        n += 1;
                    }
                })?;
            }
        }
        out.set(n);
        Ok(if n == 0 {
            prolly_result::End
        } else {
            prolly_result::Ok
        })
    })
}

/// Frees a cursor (NULL is a no-op). Rows it returned stay valid (they point into the store).
#[no_mangle]
pub extern "C" fn prolly_cursor_free(cursor: *mut prolly_cursor) {
    let _ = ffi!({
        // SAFETY: C caller's contract: NULL or a handle from this library, not used afterwards.
        unsafe { free_handle(cursor) };
        Ok(())
    });
}

/// Kinds of difference. Plain `uint32_t` in `prolly_diff_entry.kind`.
#[repr(u32)]
#[derive(Clone, Copy, Debug)]
pub enum prolly_diff_kind {
    /// The key is only in the `to` map (`from_value` is NULL).
    Added = 1,
    /// The key is only in the `from` map (`to_value` is NULL).
    Removed = 2,
    /// The key's value differs.
    Modified = 3,
}

/// One difference; the pointers point into the store's chunks (lifetime as in `prolly_row`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct prolly_diff_entry {
    /// A `prolly_diff_kind`.
    pub kind: u32,
    /// The key.
    pub key: *const u8,
    /// Length of `key`.
    pub key_len: usize,
    /// The value in `from`, or NULL.
    pub from_value: *const u8,
    /// Length of `from_value` (0 if NULL).
    pub from_value_len: usize,
    /// The value in `to`, or NULL.
    pub to_value: *const u8,
    /// Length of `to_value` (0 if NULL).
    pub to_value_len: usize,
}

/// The differences from one map to another, in key order; shared subtrees are skipped, so the
/// cost follows the size of the change. Counts as open for `prolly_store_commit` until freed.
/// Not thread-safe: one thread at a time.
pub struct prolly_diff {
    diff: Diff<'static, 'static, Backend, TupleSchema>,
    _schema: Arc<TupleSchema>,
    _borrow: Borrow,
}

/// Starts a diff from map `from` to map `to`, which must share a store
/// (`PROLLY_RESULT_ERR_INCOMPATIBLE` otherwise); keys are ordered by `from`'s schema. Free with
/// `prolly_diff_free`.
#[no_mangle]
pub extern "C" fn prolly_map_diff(
    from: *const prolly_map,
    to: *const prolly_map,
    out_diff: *mut *mut prolly_diff,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handles or NULL.
        let (a, b) = unsafe { (input(from, "from")?, input(to, "to")?) };
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_diff, "out_diff") }?;
        if !Arc::ptr_eq(&a.store, &b.store) {
            return Err(Error::new(
                prolly_result::ErrIncompatible,
                "the maps are in different stores",
            ));
        }
        let borrow = Borrow::new(&a.store);
        let schema = Arc::clone(&a.schema);
        // SAFETY: the diff owns the store and schema (fields after `diff`).
        let (backend, schema_ref) = unsafe { (extend(borrow.0.backend()), extend(&*schema)) };
        let diff = Diff::new(backend, schema_ref, a.root, b.root)?;
        out.set(into_handle(prolly_diff {
            diff,
            _schema: schema,
            _borrow: borrow,
        }));
        Ok(())
    })
}

/// Writes the next difference to `*out_entry`; `PROLLY_RESULT_END` when there are no more.
#[no_mangle]
pub extern "C" fn prolly_diff_next(
    diff: *mut prolly_diff,
    out_entry: *mut prolly_diff_entry,
) -> prolly_result {
    ffi_status!({
        // SAFETY: C caller's contract: valid handle, not used concurrently.
        let d = unsafe { input_mut(diff, "diff") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_entry, "out_entry") }?;
        let Some(e) = d.diff.next() else {
            return Ok(prolly_result::End);
        };
        let (kind, key, from, to) = match e? {
            DiffEntry::Added { key, to } => (prolly_diff_kind::Added, key, None, Some(to)),
            DiffEntry::Removed { key, from } => (prolly_diff_kind::Removed, key, Some(from), None),
            DiffEntry::Modified { key, from, to } => {
                (prolly_diff_kind::Modified, key, Some(from), Some(to))
            }
        };
        let ptr = |v: Option<&[u8]>| v.map_or(std::ptr::null(), <[u8]>::as_ptr);
        out.set(prolly_diff_entry {
            kind: kind as u32,
            key: key.as_ptr(),
            key_len: key.len(),
            from_value: ptr(from),
            from_value_len: from.map_or(0, <[u8]>::len),
            to_value: ptr(to),
            to_value_len: to.map_or(0, <[u8]>::len),
        });
        Ok(prolly_result::Ok)
    })
}

/// Frees a diff (NULL is a no-op).
#[no_mangle]
pub extern "C" fn prolly_diff_free(diff: *mut prolly_diff) {
    let _ = ffi!({
        // SAFETY: C caller's contract: NULL or a handle from this library, not used afterwards.
        unsafe { free_handle(diff) };
        Ok(())
    });
}
