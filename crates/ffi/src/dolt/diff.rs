//! A table's row changes between two database states from C: the rows `dolt_diff(from, to,
//! table)` returns, each as its kind and the row on each side in `prolly_dolt_value`s.

use std::collections::VecDeque;
use std::ffi::c_char;

use prollystore_dolt::table_diff::{ChangeKind, RowChange, TableDiff};

use super::{c_ptr, c_string, prolly_dolt, prolly_dolt_value, to_c_value};
use crate::args::{free_handle, input, input_mut, into_handle, text, Out};
use crate::result::{ffi, ffi_status, prolly_result, Error};

/// Kinds of row change, as `dolt_diff`'s `diff_type`. Plain `uint32_t` outputs.
#[repr(u32)]
#[derive(Clone, Copy, Debug)]
pub enum prolly_dolt_change {
    /// Only in the `to` state (`from` values are all NULL).
    Added = 1,
    /// Only in the `from` state (`to` values are all NULL).
    Removed = 2,
    /// In both states with different values.
    Modified = 3,
}

/// What a `prolly_dolt_diff` compares.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct prolly_dolt_diff_info {
    /// Columns of the `from` row (`dolt_diff`'s `from_…` columns; the `to` side's when the
    /// table does not exist in `from`).
    pub from_column_count: usize,
    /// Columns of the `to` row.
    pub to_column_count: usize,
    /// Whether the table exists in the `from` state.
    pub from_exists: bool,
    /// Whether the table exists in the `to` state.
    pub to_exists: bool,
    /// Whether the schema differs between the states (or the table is in only one).
    pub schema_changed: bool,
}

/// One table's row changes between two states. Computed when opened (the work and memory
/// follow the number of changes, not the table size). One thread at a time.
pub struct prolly_dolt_diff {
    info: prolly_dolt_diff_info,
    from_columns: Vec<Box<[u8]>>,
    to_columns: Vec<Box<[u8]>>,
    changes: VecDeque<RowChange>,
    /// Display text per column of the last change returned, per side.
    from_texts: Vec<Vec<u8>>,
    to_texts: Vec<Vec<u8>>,
}

/// Opens the row changes of table `table` from revision `from` to revision `to`: branch, tag,
/// commit hash, `HEAD`, with `~N`/`^` ancestry, or `WORKING` / `STAGED` for the current
/// branch's uncommitted states. `PROLLY_RESULT_NOT_FOUND` (output untouched) when a revision
/// is unknown or the table is in neither state; `PROLLY_RESULT_ERR_UNSUPPORTED` when the primary
/// key differs between the states (rows cannot be matched; `dolt diff` skips them too). Free
/// with `prolly_dolt_diff_free`.
#[no_mangle]
pub extern "C" fn prolly_dolt_diff_open(
    db: *const prolly_dolt,
    from: *const c_char,
    to: *const c_char,
    table: *const c_char,
    out_diff: *mut *mut prolly_dolt_diff,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let db = unsafe { input(db, "db") }?;
        // SAFETY: C caller's contract: NUL-terminated strings or NULL.
        let (from, to, table) =
            unsafe { (text(from, "from")?, text(to, "to")?, text(table, "table")?) };
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_diff, "out_diff") }?;
        let diff = TableDiff::new(&db.db, from, to, table)?;
        let changes = diff.rows()?.collect::<Result<VecDeque<_>, _>>()?;
        let names = |cols: Vec<String>| -> Vec<Box<[u8]>> {
            cols.iter().map(|c| c_string(c.as_bytes())).collect()
        };
        let (from_columns, to_columns) = (names(diff.from_columns()), names(diff.to_columns()));
        let info = prolly_dolt_diff_info {
            from_column_count: from_columns.len(),
            to_column_count: to_columns.len(),
            from_exists: diff.from().table.is_some(),
            to_exists: diff.to().table.is_some(),
            schema_changed: diff.schema_changed(),
        };
        out.set(into_handle(prolly_dolt_diff {
            info,
            from_texts: vec![Vec::new(); from_columns.len()],
            to_texts: vec![Vec::new(); to_columns.len()],
            from_columns,
            to_columns,
            changes,
        }));
        Ok(())
    })
}

/// Writes what `diff` compares (column counts, which states have the table, whether the schema
/// changed) to `*out_info`.
#[no_mangle]
pub extern "C" fn prolly_dolt_diff_get_info(
    diff: *const prolly_dolt_diff,
    out_info: *mut prolly_dolt_diff_info,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let d = unsafe { input(diff, "diff") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_info, "out_info") }?;
        out.set(d.info);
        Ok(())
    })
}

/// Writes the name of column `index` of the `to` side (`to_side` true) or the `from` side to
/// `*out_name`: NUL-terminated, valid until the diff is freed.
/// `PROLLY_RESULT_ERR_INVALID_ARGUMENT` when out of range.
#[no_mangle]
pub extern "C" fn prolly_dolt_diff_column_name(
    diff: *const prolly_dolt_diff,
    to_side: bool,
    index: usize,
    out_name: *mut *const c_char,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let d = unsafe { input(diff, "diff") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_name, "out_name") }?;
        let cols = if to_side {
            &d.to_columns
        } else {
            &d.from_columns
        };
        let name = cols.get(index).ok_or_else(|| {
            Error::invalid(format!(
                "column index {index} out of range (count {})",
                cols.len()
            ))
        })?;
        out.set(c_ptr(name));
        Ok(())
    })
}

/// Writes one side's values (all NULL when the change has no row on that side).
fn write_side(
    row: Option<&Vec<Option<prollystore_dolt::sql_value::SqlValue>>>,
    texts: &mut [Vec<u8>],
    values: *mut prolly_dolt_value,
) {
    for (i, buf) in texts.iter_mut().enumerate() {
        let v = to_c_value(row.and_then(|r| r.get(i)).and_then(Option::as_ref), buf);
        // SAFETY: the caller checked `values` non-null with room for `texts.len()` values.
        unsafe { values.add(i).write(v) };
    }
}

/// Moves to the next change and writes its `prolly_dolt_change` kind to `*out_kind`, the `from`
/// row to `from_values` (room for `from_len`) and the `to` row to `to_values` (room for
/// `to_len`); the side a change lacks is all NULL values. Changes come in `dolt_diff`'s order
/// (primary-key order; keyless tables in stored order, a row whose count changed by n coming n
/// times). Returns `PROLLY_RESULT_END` (outputs untouched) after the last change, and
/// `PROLLY_RESULT_ERR_BUFFER_TOO_SMALL` (not moved) when a side has less room than its column
/// count (`prolly_dolt_diff_get_info`). Text pointers stay valid until the next call or the free.
#[no_mangle]
pub extern "C" fn prolly_dolt_diff_next(
    diff: *mut prolly_dolt_diff,
    out_kind: *mut u32,
    from_values: *mut prolly_dolt_value,
    from_len: usize,
    to_values: *mut prolly_dolt_value,
    to_len: usize,
) -> prolly_result {
    ffi_status!({
        // SAFETY: C caller's contract: valid handle, not used concurrently.
        let d = unsafe { input_mut(diff, "diff") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_kind, "out_kind") }?;
        for (ptr, len, need, name) in [
            (from_values, from_len, d.from_texts.len(), "from_values"),
            (to_values, to_len, d.to_texts.len(), "to_values"),
        ] {
            if len < need {
                return Err(Error::new(
                    prolly_result::ErrBufferTooSmall,
                    format!("{name} has room for {len} values; the side has {need} columns"),
                ));
            }
            if ptr.is_null() && need > 0 {
                return Err(Error::null(name));
            }
        }
        let Some(change) = d.changes.pop_front() else {
            return Ok(prolly_result::End);
        };
        write_side(change.from.as_ref(), &mut d.from_texts, from_values);
        write_side(change.to.as_ref(), &mut d.to_texts, to_values);
        out.set(match change.kind {
            ChangeKind::Added => prolly_dolt_change::Added,
            ChangeKind::Removed => prolly_dolt_change::Removed,
            ChangeKind::Modified => prolly_dolt_change::Modified,
        } as u32);
        Ok(prolly_result::Ok)
    })
}

/// Frees a diff (NULL is a no-op); text pointers it returned become invalid.
#[no_mangle]
pub extern "C" fn prolly_dolt_diff_free(diff: *mut prolly_dolt_diff) {
    let _ = ffi!({
        // SAFETY: C caller's contract: NULL or a handle from this library, not used afterwards.
        unsafe { free_handle(diff) };
        Ok(())
    });
}
