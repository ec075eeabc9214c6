//! Row changes and commits on a Dolt database from C (`prollystore_dolt::write::DoltWriter`):
//! open a database for writing, create or drop tables (`CREATE TABLE` text), insert, update,
//! upsert and delete rows given as `prolly_dolt_value`s, save the working set, commit.
//!
//! The writer holds Dolt's writer lock from `prolly_dolt_writer_open` to
//! `prolly_dolt_writer_free`. Changes stay in memory until `prolly_dolt_writer_save` or
//! `prolly_dolt_writer_commit`; a rejected change (duplicate key, NOT NULL, value out of
//! range, unknown column, bad SQL) returns an error with the row, column and reason in
//! `prolly_last_error_message` and changes nothing, in memory or on disk.

use std::ffi::c_char;
use std::path::Path;

#[cfg(feature = "arrow")]
use arrow_array::ffi_stream::{ArrowArrayStreamReader, FFI_ArrowArrayStream};
#[cfg(feature = "arrow")]
use prollystore_arrow::dolt_write::write_batches;
use prollystore_dolt::write::{CommitMeta, DoltWriter, RowMode, TableDef};
use prollystore_dolt::SqlValue;
use prollystore_sql::{FromSql, SqlWriter};

use super::{from_c_value, prolly_dolt_value};
use crate::args::{array, free_handle, input, input_mut, into_handle, text, Out};
use crate::result::{ffi, prolly_result, Error};
use crate::store::prolly_address;

/// A Dolt database open for writing (Dolt's writer lock held until freed). Not thread-safe:
/// use one handle from one thread at a time.
pub struct prolly_dolt_writer {
    writer: DoltWriter,
}

/// What `prolly_dolt_writer_apply` does with each row. Plain `uint32_t` in the call.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum prolly_dolt_row_mode {
    /// Insert (a duplicate primary or unique key is an error).
    Insert = 0,
    /// Update by primary key (every key column given; a missing row is an error).
    Update = 1,
    /// Insert rows whose key is new, update the listed columns of the others.
    Upsert = 2,
    /// Delete the row with the given primary key (keyless tables: one copy of the row).
    Delete = 3,
}

/// Opens the database at `path` (the directory holding `.dolt`) for writing on its current
/// branch. `PROLLY_RESULT_ERR_LOCKED` while Dolt (a `dolt` command or `dolt sql-server`) or
/// another writer has it open. Free with `prolly_dolt_writer_free` (changes not saved or
/// committed by then are dropped).
#[no_mangle]
pub extern "C" fn prolly_dolt_writer_open(
    path: *const c_char,
    out_writer: *mut *mut prolly_dolt_writer,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: NUL-terminated string or NULL.
        let path = unsafe { text(path, "path") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_writer, "out_writer") }?;
        let writer = prollystore_sql::writer(Path::new(path))?;
        out.set(into_handle(prolly_dolt_writer { writer }));
        Ok(())
    })
}

/// Frees a writer (NULL is a no-op), releasing Dolt's writer lock; unsaved changes are dropped.
#[no_mangle]
pub extern "C" fn prolly_dolt_writer_free(writer: *mut prolly_dolt_writer) {
    let _ = ffi!({
        // SAFETY: C caller's contract: NULL or a handle from this library, not used afterwards.
        unsafe { free_handle(writer) };
        Ok(())
    });
}

/// Creates a table from a `CREATE TABLE` statement (columns, types, collations, defaults,
/// primary key, indexes, checks), with column tags, schema and index layout as Dolt makes
/// them. An existing table of that name or an unsupported clause is
/// `PROLLY_RESULT_ERR_INVALID_ARGUMENT` / `PROLLY_RESULT_ERR_UNSUPPORTED`.
#[no_mangle]
pub extern "C" fn prolly_dolt_writer_create_table(
    writer: *mut prolly_dolt_writer,
    create_table_sql: *const c_char,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle, NUL-terminated string.
        let (w, sql) = unsafe {
            (
                input_mut(writer, "writer")?,
                text(create_table_sql, "create_table_sql")?,
            )
        };
        let def = TableDef::from_sql(sql)?;
        w.writer.create_table(&def)?;
        Ok(())
    })
}

/// Runs one `ALTER TABLE …` statement (or `RENAME TABLE a TO b`) on the working set as Dolt
/// 2.3.1 runs it (same schema, column tags, rows and index trees). A name that does not exist
/// is `PROLLY_RESULT_NOT_FOUND`; a clause Dolt refuses, or one not done yet, an error naming
/// it. Nothing changes on an error.
#[no_mangle]
pub extern "C" fn prolly_dolt_writer_alter(
    writer: *mut prolly_dolt_writer,
    alter_table_sql: *const c_char,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle, NUL-terminated string.
        let (w, sql) = unsafe {
            (
                input_mut(writer, "writer")?,
                text(alter_table_sql, "alter_table_sql")?,
            )
        };
        w.writer.alter(sql)?;
        Ok(())
    })
}

/// Drops table `table` (`PROLLY_RESULT_NOT_FOUND` when there is none).
#[no_mangle]
pub extern "C" fn prolly_dolt_writer_drop_table(
    writer: *mut prolly_dolt_writer,
    table: *const c_char,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle, NUL-terminated string.
        let (w, table) = unsafe { (input_mut(writer, "writer")?, text(table, "table")?) };
        w.writer.drop_table(table)?;
        Ok(())
    })
}

/// Applies `row_count` rows to `table` in `mode` (a `prolly_dolt_row_mode`): `values` holds
/// `row_count * column_count` values, row after row, one per name in `columns`. Values are
/// typed as `prolly_dolt_rows_get` takes keys (`PROLLY_DOLT_KIND_NULL` is SQL NULL); a
/// `PROLLY_DOLT_KIND_TEXT` value for a non-text column is parsed as `dolt sql -r csv` prints
/// such values (`"12.50"` for a DECIMAL, `"2024-01-31 12:00:00"` for a DATETIME, an ENUM
/// member by name). Columns left out get their default. All rows or none: an error names the
/// row and column and changes nothing.
#[no_mangle]
pub extern "C" fn prolly_dolt_writer_apply(
    writer: *mut prolly_dolt_writer,
    mode: u32,
    table: *const c_char,
    columns: *const *const c_char,
    column_count: usize,
    values: *const prolly_dolt_value,
    row_count: usize,
) -> prolly_result {
    ffi!({
        let mode = row_mode(mode)?;
        let cells = row_count
            .checked_mul(column_count)
            .ok_or_else(|| Error::invalid("row_count * column_count overflows"))?;
        // SAFETY: C caller's contract: valid handle, string, arrays of the given lengths.
        let (w, table, names, values) = unsafe {
            (
                input_mut(writer, "writer")?,
                text(table, "table")?,
                array(columns, column_count, "columns")?,
                array(values, cells, "values")?,
            )
        };
        let names = names
            .iter()
            .enumerate()
            // SAFETY: C caller's contract: each name is a NUL-terminated string.
            .map(|(i, &n)| unsafe { text(n, &format!("columns[{i}]")) })
            .collect::<Result<Vec<&str>, Error>>()?;
        let rows = values
            .chunks(column_count.max(1))
            .take(row_count)
            .enumerate()
            .map(|(r, row)| {
                row.iter()
                    .zip(&names)
                    .map(|(v, name)| {
                        // SAFETY: C caller's contract: each value's text is readable.
                        unsafe { from_c_value(v) }
                            .map_err(|e| Error::invalid(format!("row {r}, column {name}: {e}")))
                    })
                    .collect::<Result<Vec<Option<SqlValue>>, Error>>()
            })
            .collect::<Result<Vec<_>, Error>>()?;
        w.writer.apply(mode, table, &names, &rows)?;
        Ok(())
    })
}

/// Applies every row of the Arrow stream `stream` to `table` in `mode` (a
/// `prolly_dolt_row_mode`): each stream column goes to the table column of its name (the
/// others get their defaults). Text and binary values are taken as they are; every other value
/// as the text `dolt sql` prints for it, so the values are checked and stored as a CSV import
/// of them would be. Timestamps with a time zone are instants (a TIMESTAMP column takes only
/// those). The call consumes the stream (it is released, whatever the result). All rows or
/// none: an error names the column and row and changes nothing.
#[cfg(feature = "arrow")]
#[no_mangle]
pub extern "C" fn prolly_dolt_writer_apply_arrow(
    writer: *mut prolly_dolt_writer,
    mode: u32,
    table: *const c_char,
    stream: *mut FFI_ArrowArrayStream,
) -> prolly_result {
    ffi!({
        if stream.is_null() {
            return Err(Error::invalid("stream is NULL"));
        }
        // SAFETY: C caller's contract: `stream` points to a valid ArrowArrayStream the caller
        // gives up; the reader moves it out, leaving a released one in its place.
        let reader = unsafe { ArrowArrayStreamReader::from_raw(stream) }
            .map_err(prollystore_arrow::Error::from)?;
        let mode = row_mode(mode)?;
        // SAFETY: C caller's contract: valid handle, NUL-terminated string.
        let (w, table) = unsafe { (input_mut(writer, "writer")?, text(table, "table")?) };
        let batches = reader
            .collect::<Result<Vec<_>, _>>()
            .map_err(prollystore_arrow::Error::from)?;
        write_batches(&mut w.writer, mode, table, batches)?;
        Ok(())
    })
}

/// The row mode a `prolly_dolt_row_mode` value names.
fn row_mode(mode: u32) -> Result<RowMode, Error> {
    Ok(match mode {
        m if m == prolly_dolt_row_mode::Insert as u32 => RowMode::Insert,
        m if m == prolly_dolt_row_mode::Update as u32 => RowMode::Update,
        m if m == prolly_dolt_row_mode::Upsert as u32 => RowMode::Upsert,
        m if m == prolly_dolt_row_mode::Delete as u32 => RowMode::Delete,
        m => {
            return Err(Error::invalid(format!(
                "mode {m} is not a prolly_dolt_row_mode"
            )))
        }
    })
}

/// Writes the working changes as the branch's working set (uncommitted, as after a `dolt sql`
/// transaction: `dolt status` lists them), stamped with `name`, `email` and `timestamp_secs`
/// (Unix seconds). Without changes, writes nothing.
#[no_mangle]
pub extern "C" fn prolly_dolt_writer_save(
    writer: *mut prolly_dolt_writer,
    name: *const c_char,
    email: *const c_char,
    timestamp_secs: u64,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle, NUL-terminated strings.
        let (w, name, email) = unsafe {
            (
                input_mut(writer, "writer")?,
                text(name, "name")?,
                text(email, "email")?,
            )
        };
        w.writer.save((name, email), timestamp_secs)?;
        Ok(())
    })
}

/// Stages every working change and commits it to the branch (`dolt add -A` + `dolt commit`),
/// durable (fsync'd) when this returns. `author_millis` is the author date in Unix
/// milliseconds; `committer_name`/`committer_email` NULL mean the author, and a negative
/// `committer_millis` the author date (as `dolt commit --date`). Writes the commit to
/// `out_commit` (NULL to skip). Nothing to commit is `PROLLY_RESULT_ERR_INVALID_ARGUMENT`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn prolly_dolt_writer_commit(
    writer: *mut prolly_dolt_writer,
    message: *const c_char,
    author_name: *const c_char,
    author_email: *const c_char,
    author_millis: i64,
    committer_name: *const c_char,
    committer_email: *const c_char,
    committer_millis: i64,
    out_commit: *mut prolly_address,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle, NUL-terminated strings.
        let (w, message, name, email) = unsafe {
            (
                input_mut(writer, "writer")?,
                text(message, "message")?,
                text(author_name, "author_name")?,
                text(author_email, "author_email")?,
            )
        };
        let committer = if committer_name.is_null() && committer_email.is_null() {
            None
        } else {
            // SAFETY: C caller's contract: NUL-terminated strings.
            let (n, e) = unsafe {
                (
                    text(committer_name, "committer_name")?,
                    text(committer_email, "committer_email")?,
                )
            };
            Some((n.to_string(), e.to_string()))
        };
        if w.writer.is_clean()? {
            return Err(Error::invalid(format!(
                "nothing to commit on {} (the working changes equal the head commit)",
                w.writer.branch()
            )));
        }
        let commit = w.writer.commit(&CommitMeta {
            message: message.to_string(),
            author_name: name.to_string(),
            author_email: email.to_string(),
            author_millis,
            committer,
            committer_millis: (committer_millis >= 0).then_some(committer_millis),
        })?;
        if !out_commit.is_null() {
            // SAFETY: C caller's contract: writable.
            unsafe { Out::new(out_commit, "out_commit") }?.set(commit.into());
        }
        Ok(())
    })
}

/// The branch the writer changes, as a NUL-terminated string copied into `buf` (at most
/// `buf_len` bytes with the NUL); returns the name's length (without NUL), or -1 on a NULL
/// writer. A name longer than `buf_len - 1` is cut.
#[no_mangle]
pub extern "C" fn prolly_dolt_writer_branch(
    writer: *const prolly_dolt_writer,
    buf: *mut c_char,
    buf_len: usize,
) -> i64 {
    // SAFETY: C caller's contract: valid handle or NULL.
    let Ok(w) = (unsafe { input(writer, "writer") }) else {
        return -1;
    };
    let name = w.writer.branch().as_bytes();
    if !buf.is_null() && buf_len > 0 {
        let n = name.len().min(buf_len - 1);
        // SAFETY: C caller's contract: `buf` is writable for `buf_len` bytes; n < buf_len.
        unsafe {
            std::ptr::copy_nonoverlapping(name.as_ptr(), buf.cast::<u8>(), n);
            *buf.add(n) = 0;
        }
    }
    name.len() as i64
}
