//! Arrow out of the C ABI: Dolt tables (whole, key ranges, index ranges, parts), diffs between
//! two states (whole or parts), and maps with a row schema, as Arrow C stream interface streams
//! (`struct ArrowArrayStream`) that C, C++, Python, R or DuckDB consume without copying.
//!
//! Each function fills a caller-provided `struct ArrowArrayStream`; the stream owns everything
//! it reads from (the database, the table, the map's store), so the handles it was made from
//! may be freed first. Release the stream with its own `release` callback, as the Arrow
//! specification says; errors met while streaming come back from `get_next` with the
//! message in `get_last_error`. The batch size is the caller's (0: 65,536 rows).

use std::ffi::c_char;
use std::ops::Bound;

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use std::sync::Arc;

use arrow_array::RecordBatchReader;
use prollystore::rows::RowSchema;
use prollystore_arrow::{DiffBatches, MapBatches, TableBatches, DEFAULT_BATCH_ROWS};
use prollystore_dolt::diff_parts::DiffPart;
use prollystore_dolt::parts::{Located, Part};
use prollystore_dolt::Database;

use crate::args::{input, text, Out};
use crate::dolt::{prolly_dolt, prolly_dolt_bound, prolly_dolt_table, range_args};
use crate::map::prolly_map;
use crate::result::{ffi, prolly_result, Error};
use crate::store::{Backend, Borrow};

impl From<prollystore_arrow::Error> for Error {
    fn from(e: prollystore_arrow::Error) -> Error {
        use prollystore_arrow::Error as A;
        match e {
            A::Dolt(d) => d.into(),
            A::Tree(t) => t.into(),
            other => Error::new(prolly_result::ErrInvalidArgument, other.to_string()),
        }
    }
}

fn batch_rows(n: u64) -> usize {
    match n {
        0 => DEFAULT_BATCH_ROWS,
        n => usize::try_from(n).unwrap_or(usize::MAX),
    }
}

/// Writes `reader` as a stream to `out`.
fn stream(out: Out<FFI_ArrowArrayStream>, reader: impl RecordBatchReader + Send + 'static) {
    out.set(FFI_ArrowArrayStream::new(Box::new(reader)));
}

/// Fills `out_stream` with every row of `table` (primary-key order; keyless tables in stored
/// order, each row repeated by its count), `batch_rows` rows a batch (0: 65,536). The Arrow
/// type of each column is in docs/ARROW.md. The stream keeps the table alive: the table and
/// its database may be freed before it. Release it with `out_stream->release`.
#[no_mangle]
pub extern "C" fn prolly_dolt_table_arrow(
    table: *const prolly_dolt_table,
    batch_rows_: u64,
    out_stream: *mut FFI_ArrowArrayStream,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let t = unsafe { input(table, "table") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_stream, "out_stream") }?;
        let reader = TableBatches::new(t.db.clone(), (*t.table).clone(), batch_rows(batch_rows_))?;
        stream(out, reader);
        Ok(())
    })
}

/// Fills `out_stream` with the rows of `table` whose keys lie between `lower` and `upper`,
/// through the primary key (`index` NULL) or secondary index `index` (whole rows either way),
/// in `direction` (a `prolly_direction`), at most `limit` rows (0: no limit), `batch_rows`
/// rows a batch (0: 65,536). Bounds are as for `prolly_dolt_rows_range` (read by the call).
/// `PROLLY_RESULT_NOT_FOUND` when there is no such index. Release with
/// `out_stream->release`.
#[no_mangle]
pub extern "C" fn prolly_dolt_range_arrow(
    table: *const prolly_dolt_table,
    index: *const c_char,
    lower: *const prolly_dolt_bound,
    upper: *const prolly_dolt_bound,
    direction: u32,
    limit: u64,
    batch_rows_: u64,
    out_stream: *mut FFI_ArrowArrayStream,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let t = unsafe { input(table, "table") }?;
        // SAFETY: C caller's contract: a string or NULL, readable bounds and values.
        let (index, range) = unsafe { range_args(index, lower, upper, direction, limit) }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_stream, "out_stream") }?;
        let (db, table, n) = (t.db.clone(), (*t.table).clone(), batch_rows(batch_rows_));
        let reader = match index {
            Some(name) => TableBatches::index_range(db, table, name, &range, n)?,
            None => TableBatches::range(db, table, &range, n)?,
        };
        stream(out, reader);
        Ok(())
    })
}

/// Fills `out_stream` with the rows of one part, `part_json` being a description that
/// `prolly_dolt_split` (or `prolly dolt split`, or Python's `Table.split`) made: only the part's
/// rows and columns, in key order, `batch_rows` rows a batch (0: 65,536). The part opens its
/// database on its own (the location it names) and reads the table chunk it was cut from.
/// `PROLLY_RESULT_ERR_INVALID_ARGUMENT` for a description that does not parse as a part (a
/// diff part's included: read those with `prolly_dolt_diff_part_arrow`) or does not match its
/// database (another database's, or one whose state was removed). Release with
/// `out_stream->release`.
#[no_mangle]
pub extern "C" fn prolly_dolt_part_arrow(
    part_json: *const c_char,
    batch_rows_: u64,
    out_stream: *mut FFI_ArrowArrayStream,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: NUL-terminated string or NULL.
        let json = unsafe { text(part_json, "part_json") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_stream, "out_stream") }?;
        part_stream(json, batch_rows_, out, Part::from_json, TableBatches::part)
    })
}

/// Fills `out_stream` with the rows of one part of a table's diff, `part_json` being a
/// description that `prolly_dolt_split_diff` (or `prolly dolt split-diff`, or Python's
/// `Database.split_diff`) made: the rows of `prolly_dolt_diff_arrow` whose keys are in the
/// part's range, with its columns (the same schema for every part, an empty one included) in
/// its order, `batch_rows` rows a batch (0: 65,536). The part opens its database on its own
/// (the location it names) and reads the two table chunks it was cut from, whatever the
/// branches hold now.
///
/// `PROLLY_RESULT_ERR_INVALID_ARGUMENT` for a description that does not parse as a diff part
/// (not JSON, a table part's description — read those with `prolly_dolt_part_arrow` —, a
/// field missing or changed) or does not match its database (another database's, or one whose
/// state was removed); when its database cannot be opened, `prolly_dolt_open`'s code
/// (`PROLLY_RESULT_NOT_FOUND` for no database there); `PROLLY_RESULT_ERR_NULL_ARGUMENT` for a
/// NULL pointer. The message says which.
///
/// Pointers and ownership: `part_json` is NULL or a NUL-terminated string, read during the
/// call only (the part list it came from may be freed at once); `out_stream` is NULL or a
/// writable `struct ArrowArrayStream`, written only on success. The stream owns the database
/// it opened: release it with `out_stream->release`.
#[no_mangle]
pub extern "C" fn prolly_dolt_diff_part_arrow(
    part_json: *const c_char,
    batch_rows_: u64,
    out_stream: *mut FFI_ArrowArrayStream,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: NUL-terminated string or NULL.
        let json = unsafe { text(part_json, "part_json") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_stream, "out_stream") }?;
        part_stream(
            json,
            batch_rows_,
            out,
            DiffPart::from_json,
            DiffBatches::part,
        )
    })
}

/// What both part readers do: the description `json` parsed by its kind's own parser (`parse`,
/// which refuses the other kind), its database opened ([`open_part`]) and `read`'s reader of it
/// written to `out`.
fn part_stream<P: Located, R: RecordBatchReader + Send + 'static>(
    json: &str,
    batch_rows_: u64,
    out: Out<FFI_ArrowArrayStream>,
    parse: impl FnOnce(&str) -> prollystore_dolt::Result<P>,
    read: impl FnOnce(Arc<Database>, &P, usize) -> prollystore_arrow::Result<R>,
) -> Result<(), Error> {
    let part = parse(json)?;
    let reader = read(open_part(&part)?, &part, batch_rows(batch_rows_))?;
    stream(out, reader);
    Ok(())
}

/// The database a part (of either kind) names, opened as `prolly_dolt_open` opens one (VIRTUAL
/// columns computed); with the dolt-remote feature, a part cut from a remote (`http(s)://`,
/// `s3://`) is read there. Opened for one part, it keeps none of the leaves its read brings in.
fn open_part(part: &impl Located) -> Result<Arc<Database>, Error> {
    #[cfg(feature = "dolt-remote")]
    let db = prollystore_dolt_remote::open_part_database(part, &Default::default())?
        .with_expressions(prollystore_sql::engine());
    #[cfg(not(feature = "dolt-remote"))]
    let db = prollystore_sql::open(part.database_path()?)?;
    db.source().set_keep_bulk_reads(false);
    Ok(Arc::new(db))
}

/// Fills `out_stream` with the row changes of table `table` from revision `from` to revision
/// `to` (as `prolly_dolt_diff_open` takes them), with `dolt_diff`'s columns: `to_<column>`…,
/// `to_commit`, `to_commit_date`, `from_<column>`…, `from_commit`, `from_commit_date`,
/// `diff_type`; `batch_rows` rows a batch (0: 65,536). `PROLLY_RESULT_NOT_FOUND` when a
/// revision is unknown or the table is in neither state; `PROLLY_RESULT_ERR_UNSUPPORTED` when
/// the primary key differs between the states. Release with `out_stream->release`.
#[no_mangle]
pub extern "C" fn prolly_dolt_diff_arrow(
    db: *const prolly_dolt,
    from: *const c_char,
    to: *const c_char,
    table: *const c_char,
    batch_rows_: u64,
    out_stream: *mut FFI_ArrowArrayStream,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let db = unsafe { input(db, "db") }?;
        // SAFETY: C caller's contract: NUL-terminated strings or NULL.
        let (from, to, table) =
            unsafe { (text(from, "from")?, text(to, "to")?, text(table, "table")?) };
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_stream, "out_stream") }?;
        let reader = DiffBatches::new(db.db.clone(), from, to, table, batch_rows(batch_rows_))?;
        stream(out, reader);
        Ok(())
    })
}

/// A map's store, lent to a stream: keeps the store alive and its mutating calls refused
/// while the stream lives.
struct StreamStore(Borrow);

impl AsRef<Backend> for StreamStore {
    fn as_ref(&self) -> &Backend {
        self.0 .0.backend()
    }
}

/// A map stream, movable to the thread that consumes it.
struct MapStream(MapBatches<Backend, StreamStore>);

// SAFETY: the stream reads its store only through shared references, and the store's documented
// contract lets a handle move between threads (a memory store: used by one thread at a time; a
// file store: read by many). The C caller keeps that contract for streams as for cursors.
unsafe impl Send for MapStream {}

impl Iterator for MapStream {
    type Item = Result<arrow_array::RecordBatch, arrow_schema::ArrowError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next()
    }
}

impl RecordBatchReader for MapStream {
    fn schema(&self) -> arrow_schema::SchemaRef {
        self.0.schema()
    }
}

/// Fills `out_stream` with the rows of `map` whose keys lie between `lower` and `upper`
/// (encoded key tuples of `lower_len`/`upper_len` bytes; NULL: unbounded; `*_inclusive` says
/// whether a bound's own key belongs), read under the row schema `key_columns` /
/// `value_columns` (the text of `prolly::rows`: `id:bigint, name:varchar(40)?`), key columns
/// first, `batch_rows` rows a batch (0: 65,536). The stream keeps the map's store alive, and
/// `prolly_store_commit` / `prolly_store_refresh` return `PROLLY_RESULT_ERR_BUSY` while it
/// lives. Release with `out_stream->release`.
#[no_mangle]
pub extern "C" fn prolly_map_arrow(
    map: *const prolly_map,
    key_columns: *const c_char,
    value_columns: *const c_char,
    lower: *const u8,
    lower_len: usize,
    lower_inclusive: bool,
    upper: *const u8,
    upper_len: usize,
    upper_inclusive: bool,
    batch_rows_: u64,
    out_stream: *mut FFI_ArrowArrayStream,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let m = unsafe { input(map, "map") }?;
        // SAFETY: C caller's contract: NUL-terminated strings or NULL.
        let (key, value) = unsafe {
            (
                text(key_columns, "key_columns")?,
                text(value_columns, "value_columns")?,
            )
        };
        // SAFETY: C caller's contract: NULL or `len` readable bytes.
        let bound = |p: *const u8,
                     len: usize,
                     inclusive: bool,
                     name: &str|
         -> Result<Bound<&[u8]>, Error> {
            if p.is_null() {
                return Ok(Bound::Unbounded);
            }
            // SAFETY: as above.
            let b = unsafe { crate::args::bytes(p, len, name) }?;
            Ok(if inclusive {
                Bound::Included(b)
            } else {
                Bound::Excluded(b)
            })
        };
        let from = bound(lower, lower_len, lower_inclusive, "lower")?;
        let to = bound(upper, upper_len, upper_inclusive, "upper")?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_stream, "out_stream") }?;
        let schema = RowSchema::parse(key, value).map_err(|e| Error::invalid(e.to_string()))?;
        let holder = StreamStore(Borrow::new(&m.store));
        let reader =
            MapBatches::with_store(holder, m.root, schema, from, to, batch_rows(batch_rows_))?;
        stream(out, MapStream(reader));
        Ok(())
    })
}

// Dolt streams move to the consuming thread without help: keep it so.
const _: fn() = || {
    fn sendable<T: Send>() {}
    sendable::<TableBatches>();
    sendable::<DiffBatches>();
};
