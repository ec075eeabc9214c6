//! Real Dolt databases (`.dolt` directories) from C. Reads: branches, tags, the log, tables,
//! schemas, rows as typed values, CSV export identical to `dolt sql -r csv`, and row diffs
//! between states ([`diff`]). Writes: row changes and commits ([`write`](mod@write)), and
//! branches, checkout, tags, merges and status ([`vc`]).
//!
//! A thin layer over the `prollystore-dolt` crate: every handle owns what its pointers point
//! into, so C never sees a Rust lifetime. The reading functions of this module never write to
//! the database directory; only [`write`](mod@write) and [`vc`] do, under Dolt's writer lock.

use std::ffi::{c_char, c_int, c_void};
use std::io::Write;
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

use prollystore::format::tuple::Date;
use prollystore::format::Address;
use prollystore_dolt::csv_export::export_csv;
use prollystore_dolt::diff_parts::{split_diff, DiffPart};
use prollystore_dolt::parts::{split, Part, SplitOptions};
use prollystore_dolt::sql_value::SqlValue;
use prollystore_dolt::{
    Commit, Database, DoltError, KeyRange, RootValue, Row, Rows, Table, TableReader,
};

use crate::args::{free_handle, input, input_mut, into_handle, opt_text, text, Out};
use crate::iter::prolly_bound_kind;
use crate::map::extend;
use crate::result::{ffi, ffi_status, prolly_result, Error};
use crate::store::prolly_address;

pub mod diff;
pub mod vc;
pub mod write;

impl From<DoltError> for Error {
    fn from(e: DoltError) -> Error {
        use prolly_result as R;
        // A tree or store error (a read-only store, unsorted input) keeps its own code.
        let e = match e {
            DoltError::Tree(t) => return t.into(),
            e => e,
        };
        let code = match &e {
            DoltError::Io { .. } => R::ErrIo,
            DoltError::MissingChunk(_) => R::ErrMissingChunk,
            DoltError::NotFound(_) => R::NotFound,
            DoltError::Unsupported(_) => R::ErrUnsupported,
            DoltError::BadValue { .. } => R::ErrInvalidArgument,
            DoltError::Locked { .. } => R::ErrLocked,
            DoltError::Refused(_) => R::ErrInvalidArgument,
            DoltError::BadInput { .. } => R::ErrInvalidArgument,
            DoltError::Conflict { .. } => R::ErrRootConflict,
            DoltError::Encode { .. } => R::ErrEncode,
            DoltError::Corrupt { .. }
            | DoltError::HashMismatch { .. }
            | DoltError::BadChunk { .. }
            | DoltError::Malformed { .. } => R::ErrCorrupted,
            _ => R::ErrCorrupted,
        };
        Error::new(code, e.to_string())
    }
}

// The database handle is documented as usable from several threads at once: keep it true.
const _: fn() = || {
    fn shared<T: Send + Sync>() {}
    shared::<Database>();
};

/// A string as C sees it: the bytes plus a NUL. Interior NULs (which Dolt does not write in
/// names) simply end the string early for `strlen`; lengths reported alongside stay exact.
fn c_string(s: &[u8]) -> Box<[u8]> {
    let mut v = Vec::with_capacity(s.len() + 1);
    v.extend_from_slice(s);
    v.push(0);
    v.into_boxed_slice()
}

/// Replaces `buf` with `s` plus a NUL, reusing its allocation.
fn set_c_string(buf: &mut Vec<u8>, s: &[u8]) {
    buf.clear();
    buf.extend_from_slice(s);
    buf.push(0);
}

fn c_ptr(s: &[u8]) -> *const c_char {
    s.as_ptr().cast()
}

/// An open Dolt database, read-only.
///
/// Thread-safety: any number of threads may use one database handle at once. Every handle made
/// from it (ref lists, logs, roots, tables, row cursors) keeps it alive, so it may be freed
/// first.
pub struct prolly_dolt {
    pub(crate) db: Arc<Database>,
}

impl prolly_dolt {
    /// A handle of `db`.
    pub(crate) fn new(db: Database) -> prolly_dolt {
        prolly_dolt { db: Arc::new(db) }
    }
}

/// Opens the Dolt database at `path`: the directory holding `.dolt`, or the `.dolt` directory
/// itself. Reads the manifest, journal, table files and archives of both generations; never
/// writes to the directory (it may be open in Dolt at the same time). Free with
/// `prolly_dolt_free`.
#[no_mangle]
pub extern "C" fn prolly_dolt_open(
    path: *const c_char,
    out_db: *mut *mut prolly_dolt,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: NUL-terminated string or NULL.
        let path = unsafe { text(path, "path") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_db, "out_db") }?;
        let db = prollystore_sql::open(Path::new(path))?;
        out.set(into_handle(prolly_dolt::new(db)));
        Ok(())
    })
}

/// Frees a database handle (NULL is a no-op). Handles made from it stay usable.
#[no_mangle]
pub extern "C" fn prolly_dolt_free(db: *mut prolly_dolt) {
    let _ = ffi!({
        // SAFETY: C caller's contract: NULL or a handle from this library, not used afterwards.
        unsafe { free_handle(db) };
        Ok(())
    });
}

/// Sets the most bytes of table leaves whole-table reads of `db` (Arrow streams) keep in
/// memory so that later reads of the same tables are warm; 0 keeps none. Past the budget,
/// leaves are read again from the files each time: what is kept stays until `db` and every
/// handle made from it are freed (it cannot be evicted), so lowering the budget frees
/// nothing. The default, set on open: `PROLLY_KEEP_BUDGET` (bytes, with an optional K, M or G
/// suffix), else a quarter of the machine's memory. Handles opened for one part
/// (`prolly_dolt_part_arrow` and friends) keep nothing. Any thread, any time.
#[no_mangle]
pub extern "C" fn prolly_dolt_set_keep_budget(db: *const prolly_dolt, bytes: u64) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let db = unsafe { input(db, "db") }?;
        db.db.source().set_bulk_keep_budget(bytes);
        Ok(())
    })
}

/// One branch or tag of a `prolly_dolt_refs` list. The strings are NUL-terminated and valid
/// until the list is freed.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct prolly_dolt_ref {
    /// The branch or tag name (without `refs/heads/` or `refs/tags/`).
    pub name: *const c_char,
    /// The commit it points at, in Dolt's 32-character base32 spelling (as `dolt log` prints).
    pub commit: *const c_char,
    /// The same commit as 20 bytes.
    pub commit_address: prolly_address,
    /// A tag's message; empty for branches.
    pub message: *const c_char,
}

struct RefEntry {
    name: Box<[u8]>,
    commit: Box<[u8]>,
    address: Address,
    message: Box<[u8]>,
}

/// A snapshot list of the branches or tags of a database, sorted by name. Immutable: any
/// number of threads.
pub struct prolly_dolt_refs {
    refs: Vec<RefEntry>,
}

fn ref_entry(name: &str, commit: Address, message: &str) -> RefEntry {
    RefEntry {
        name: c_string(name.as_bytes()),
        commit: c_string(commit.to_base32().as_bytes()),
        address: commit,
        message: c_string(message.as_bytes()),
    }
}

/// Lists the branches of `db` (name and head commit), sorted by name. Free with
/// `prolly_dolt_refs_free`.
#[no_mangle]
pub extern "C" fn prolly_dolt_branches(
    db: *const prolly_dolt,
    out_refs: *mut *mut prolly_dolt_refs,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let db = unsafe { input(db, "db") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_refs, "out_refs") }?;
        let refs = db
            .db
            .branches()?
            .into_iter()
            .map(|(name, head)| ref_entry(&name, head, ""))
            .collect();
        out.set(into_handle(prolly_dolt_refs { refs }));
        Ok(())
    })
}

/// Lists the tags of `db` (name, tagged commit, message), sorted by name. Free with
/// `prolly_dolt_refs_free`.
#[no_mangle]
pub extern "C" fn prolly_dolt_tags(
    db: *const prolly_dolt,
    out_refs: *mut *mut prolly_dolt_refs,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let db = unsafe { input(db, "db") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_refs, "out_refs") }?;
        let refs = db
            .db
            .tags()?
            .into_iter()
            .map(|t| ref_entry(&t.name, t.commit, &t.message))
            .collect();
        out.set(into_handle(prolly_dolt_refs { refs }));
        Ok(())
    })
}

/// Writes the number of entries of `refs` to `*out_count`.
#[no_mangle]
pub extern "C" fn prolly_dolt_refs_count(
    refs: *const prolly_dolt_refs,
    out_count: *mut usize,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let refs = unsafe { input(refs, "refs") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_count, "out_count") }?;
        out.set(refs.refs.len());
        Ok(())
    })
}

/// Writes entry `index` (0-based, below the count) of `refs` to `*out_ref`;
/// `PROLLY_RESULT_ERR_INVALID_ARGUMENT` when out of range.
#[no_mangle]
pub extern "C" fn prolly_dolt_refs_get(
    refs: *const prolly_dolt_refs,
    index: usize,
    out_ref: *mut prolly_dolt_ref,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let refs = unsafe { input(refs, "refs") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_ref, "out_ref") }?;
        let r = refs.refs.get(index).ok_or_else(|| {
            Error::invalid(format!(
                "ref index {index} out of range (count {})",
                refs.refs.len()
            ))
        })?;
        out.set(prolly_dolt_ref {
            name: c_ptr(&r.name),
            commit: c_ptr(&r.commit),
            commit_address: r.address.into(),
            message: c_ptr(&r.message),
        });
        Ok(())
    })
}

/// The parts `prolly_dolt_split` cut a table into, or `prolly_dolt_split_diff` a table's diff
/// into: each part's description, one line of JSON that any process reads on its own (a table
/// part with `prolly_dolt_part_arrow`, a diff part with `prolly_dolt_diff_part_arrow`; either
/// with `prolly dolt read-part`, the Python `Part` / `DiffPart`). Immutable: any number of
/// threads.
pub struct prolly_dolt_parts {
    parts: Vec<Box<[u8]>>,
}

impl prolly_dolt_parts {
    /// The list of `descriptions` (each a part's JSON), as C reads them.
    fn of(descriptions: impl Iterator<Item = String>) -> prolly_dolt_parts {
        let parts = descriptions.map(|json| c_string(json.as_bytes())).collect();
        prolly_dolt_parts { parts }
    }
}

/// Cuts table `table` of state `at` (a branch, tag, commit, `HEAD~N`, or `BRANCH@WORKING` /
/// `BRANCH@STAGED`) of `db` into `parts` parts of nearly equal row counts, found from the
/// tree's counts without a scan (fewer parts when the table has fewer rows; one empty part for
/// an empty table). `columns`: NULL for every column, else comma-separated column names that
/// each part reads, in that order. Each part records the table chunk it was cut from, so it
/// reads the same rows however the branch moves. `PROLLY_RESULT_NOT_FOUND` for an unknown
/// state, table or column. Free with `prolly_dolt_parts_free`.
#[no_mangle]
pub extern "C" fn prolly_dolt_split(
    db: *const prolly_dolt,
    at: *const c_char,
    table: *const c_char,
    parts: u64,
    columns: *const c_char,
    out_parts: *mut *mut prolly_dolt_parts,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let db = unsafe { input(db, "db") }?;
        // SAFETY: C caller's contract: NUL-terminated strings or NULL.
        let (at, table) = unsafe { (text(at, "at")?, text(table, "table")?) };
        // SAFETY: C caller's contract: NUL-terminated string or NULL.
        let columns = unsafe { opt_text(columns, "columns") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_parts, "out_parts") }?;
        let n = usize::try_from(parts).unwrap_or(usize::MAX);
        let options = SplitOptions {
            columns: columns.map(|c| c.split(',').map(|n| n.trim().to_string()).collect()),
            ..SplitOptions::default()
        };
        let parts = split(&db.db, at, table, n, &options)?;
        out.set(into_handle(prolly_dolt_parts::of(
            parts.iter().map(Part::to_json),
        )));
        Ok(())
    })
}

/// Cuts the diff of table `table` from state `from` to state `to` of `db` (each a branch, tag,
/// commit, `HEAD~N`, or `BRANCH@WORKING` / `BRANCH@STAGED`) into at most `parts` key ranges of
/// nearly equal work: the rows of the leaves the two states do not share, counted from the
/// trees' internal nodes without reading a leaf (the number of rows each part *gives* is even
/// only when the changes are spread evenly). Read each with `prolly_dolt_diff_part_arrow`: the
/// parts, one after the other, give exactly the rows of `prolly_dolt_diff_arrow` on the same
/// arguments, in its order. Two states that share the table's rows give one empty part. Each
/// part records both table chunks it was cut from, so it reads the same rows however the
/// branches move. The list is the one `prolly_dolt_split` gives (`prolly_dolt_parts_count`,
/// `prolly_dolt_parts_get`), freed with `prolly_dolt_parts_free`.
///
/// `PROLLY_RESULT_NOT_FOUND` for an unknown state or a table in neither state;
/// `PROLLY_RESULT_ERR_INVALID_ARGUMENT` for `parts` 0; `PROLLY_RESULT_ERR_UNSUPPORTED` when the
/// primary key differs between the states; `PROLLY_RESULT_ERR_NULL_ARGUMENT` for a NULL
/// pointer.
///
/// Pointers and ownership: `db` is NULL or a live handle from `prolly_dolt_open`; `from`, `to`
/// and `table` are NULL or NUL-terminated strings, read during the call only; `out_parts` is
/// NULL or writable, and written only on success. The list owns its strings and does not
/// borrow `db`: either may be freed first.
#[no_mangle]
pub extern "C" fn prolly_dolt_split_diff(
    db: *const prolly_dolt,
    from: *const c_char,
    to: *const c_char,
    table: *const c_char,
    parts: u64,
    out_parts: *mut *mut prolly_dolt_parts,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let db = unsafe { input(db, "db") }?;
        // SAFETY: C caller's contract: NUL-terminated strings or NULL.
        let (from, to, table) =
            unsafe { (text(from, "from")?, text(to, "to")?, text(table, "table")?) };
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_parts, "out_parts") }?;
        let n = usize::try_from(parts).unwrap_or(usize::MAX);
        let parts = split_diff(&db.db, from, to, table, n, None)?;
        out.set(into_handle(prolly_dolt_parts::of(
            parts.iter().map(DiffPart::to_json),
        )));
        Ok(())
    })
}

/// Writes the number of parts of `parts` to `*out_count`.
#[no_mangle]
pub extern "C" fn prolly_dolt_parts_count(
    parts: *const prolly_dolt_parts,
    out_count: *mut usize,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let parts = unsafe { input(parts, "parts") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_count, "out_count") }?;
        out.set(parts.parts.len());
        Ok(())
    })
}

/// Writes part `index` (0-based, below the count) of `parts` to `*out_json`: its description as
/// NUL-terminated JSON, valid until the list is freed (copy it to send it elsewhere).
/// `PROLLY_RESULT_ERR_INVALID_ARGUMENT` when out of range.
#[no_mangle]
pub extern "C" fn prolly_dolt_parts_get(
    parts: *const prolly_dolt_parts,
    index: usize,
    out_json: *mut *const c_char,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let parts = unsafe { input(parts, "parts") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_json, "out_json") }?;
        let p = parts.parts.get(index).ok_or_else(|| {
            Error::invalid(format!(
                "part index {index} out of range (count {})",
                parts.parts.len()
            ))
        })?;
        out.set(c_ptr(p));
        Ok(())
    })
}

/// Frees a part list (NULL is a no-op); its strings become invalid.
#[no_mangle]
pub extern "C" fn prolly_dolt_parts_free(parts: *mut prolly_dolt_parts) {
    let _ = ffi!({
        // SAFETY: C caller's contract: NULL or a handle from this library, not used afterwards.
        unsafe { free_handle(parts) };
        Ok(())
    });
}

/// Frees a ref list (NULL is a no-op); its strings become invalid.
#[no_mangle]
pub extern "C" fn prolly_dolt_refs_free(refs: *mut prolly_dolt_refs) {
    let _ = ffi!({
        // SAFETY: C caller's contract: NULL or a handle from this library, not used afterwards.
        unsafe { free_handle(refs) };
        Ok(())
    });
}

/// One commit of a log. Pointers are valid until the next `prolly_dolt_log_next` or
/// `prolly_dolt_log_free` on the same log.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct prolly_dolt_commit {
    /// The commit hash in base32, as `dolt log` prints it (NUL-terminated).
    pub hash: *const c_char,
    /// The same hash as 20 bytes.
    pub address: prolly_address,
    /// Author name (NUL-terminated).
    pub author: *const c_char,
    /// Author email (NUL-terminated).
    pub email: *const c_char,
    /// Author date in Unix milliseconds (the date `dolt log` shows).
    pub date_millis: i64,
    /// The commit message (NUL-terminated; `message_len` bytes before the NUL).
    pub message: *const c_char,
    /// Length of `message` in bytes.
    pub message_len: usize,
    /// The parents, first parent first (`parent_count` addresses; NULL when 0).
    pub parents: *const prolly_address,
    /// Number of parents: 0 for the first commit, 2 for a merge.
    pub parent_count: usize,
    /// Commit height: 1 + the greatest parent height.
    pub height: u64,
}

/// A walk over the commits reachable from a branch, tag or commit, in `dolt log` order. One
/// thread at a time.
pub struct prolly_dolt_log_iter {
    commits: std::vec::IntoIter<Commit>,
    hash: Vec<u8>,
    author: Vec<u8>,
    email: Vec<u8>,
    message: Vec<u8>,
    parents: Vec<prolly_address>,
}

/// Starts the log of `spec`: a branch name, a tag name or a commit hash (base32). Commits come
/// in `dolt log` order: newest first, merges before the branches they join. Returns
/// `PROLLY_RESULT_NOT_FOUND` (output untouched) when `spec` names nothing. Free with
/// `prolly_dolt_log_free`.
#[no_mangle]
pub extern "C" fn prolly_dolt_log(
    db: *const prolly_dolt,
    spec: *const c_char,
    out_log: *mut *mut prolly_dolt_log_iter,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let db = unsafe { input(db, "db") }?;
        // SAFETY: C caller's contract: NUL-terminated string or NULL.
        let spec = unsafe { text(spec, "spec") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_log, "out_log") }?;
        let start = db.db.resolve(spec)?;
        let commits: Vec<_> = db.db.log(start).collect::<Result<_, _>>()?;
        out.set(into_handle(prolly_dolt_log_iter {
            commits: commits.into_iter(),
            hash: Vec::new(),
            author: Vec::new(),
            email: Vec::new(),
            message: Vec::new(),
            parents: Vec::new(),
        }));
        Ok(())
    })
}

/// Moves to the next commit and writes it to `*out_commit`; `PROLLY_RESULT_END` (output
/// untouched) after the first commit of the history.
#[no_mangle]
pub extern "C" fn prolly_dolt_log_next(
    log: *mut prolly_dolt_log_iter,
    out_commit: *mut prolly_dolt_commit,
) -> prolly_result {
    ffi_status!({
        // SAFETY: C caller's contract: valid handle, not used concurrently.
        let log = unsafe { input_mut(log, "log") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_commit, "out_commit") }?;
        let Some(c) = log.commits.next() else {
            return Ok(prolly_result::End);
        };
        set_c_string(&mut log.hash, c.address.to_base32().as_bytes());
        set_c_string(&mut log.author, c.name.as_bytes());
        set_c_string(&mut log.email, c.email.as_bytes());
        set_c_string(&mut log.message, c.message.as_bytes());
        log.parents.clear();
        log.parents
            .extend(c.parents.iter().map(|p| prolly_address::from(*p)));
        out.set(prolly_dolt_commit {
            hash: c_ptr(&log.hash),
            address: c.address.into(),
            author: c_ptr(&log.author),
            email: c_ptr(&log.email),
            date_millis: c.user_timestamp_millis,
            message: c_ptr(&log.message),
            message_len: c.message.len(),
            parents: if log.parents.is_empty() {
                std::ptr::null()
            } else {
                log.parents.as_ptr()
            },
            parent_count: log.parents.len(),
            height: c.height,
        });
        Ok(prolly_result::Ok)
    })
}

/// Frees a log (NULL is a no-op).
#[no_mangle]
pub extern "C" fn prolly_dolt_log_free(log: *mut prolly_dolt_log_iter) {
    let _ = ffi!({
        // SAFETY: C caller's contract: NULL or a handle from this library, not used afterwards.
        unsafe { free_handle(log) };
        Ok(())
    });
}

/// Which state of a branch `prolly_dolt_root_open` reads. Pass as a plain `uint32_t`. Tags and
/// commit hashes always give their commit's state.
#[repr(u32)]
#[derive(Clone, Copy, Debug)]
pub enum prolly_dolt_state {
    /// The branch's working set, with uncommitted changes: what `dolt sql` shows (the branch
    /// head when it has no working set).
    Working = 0,
    /// The branch's staged state (the branch head when nothing is staged).
    Staged = 1,
    /// The branch's head commit.
    Committed = 2,
}

/// Resolves `spec` in `state` to a root value's address.
fn resolve_root(db: &Database, spec: &str, state: u32) -> Result<Address, Error> {
    if state > prolly_dolt_state::Committed as u32 {
        return Err(Error::invalid(format!("unknown state {state}")));
    }
    let commit = db.resolve(spec)?;
    let committed = db.commit(commit)?.root;
    let is_branch = db.branch_head(spec).is_ok_and(|h| h == commit);
    if !is_branch || state == prolly_dolt_state::Committed as u32 {
        return Ok(committed);
    }
    let ws = db.working_set(spec)?;
    Ok(match ws {
        Some(w) if state == prolly_dolt_state::Working as u32 => w.working_root,
        Some(w) => w.staged_root.unwrap_or(committed),
        None => committed,
    })
}

/// One state of a database (a root value): its tables. Immutable: any number of threads.
pub struct prolly_dolt_root {
    db: Arc<Database>,
    root: RootValue,
    names: Vec<Box<[u8]>>,
}

/// Opens the state `state` (a `prolly_dolt_state`) of `spec` — a branch name, a tag name or a
/// commit hash — to list and open its tables. Returns `PROLLY_RESULT_NOT_FOUND` (output
/// untouched) when `spec` names nothing. Free with `prolly_dolt_root_free`.
#[no_mangle]
pub extern "C" fn prolly_dolt_root_open(
    db: *const prolly_dolt,
    spec: *const c_char,
    state: u32,
    out_root: *mut *mut prolly_dolt_root,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let db = unsafe { input(db, "db") }?;
        // SAFETY: C caller's contract: NUL-terminated string or NULL.
        let spec = unsafe { text(spec, "spec") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_root, "out_root") }?;
        let address = resolve_root(&db.db, spec, state)?;
        let root = db.db.root_value(address)?;
        let names = root
            .tables
            .iter()
            .map(|(n, _)| c_string(n.as_bytes()))
            .collect();
        out.set(into_handle(prolly_dolt_root {
            db: Arc::clone(&db.db),
            root,
            names,
        }));
        Ok(())
    })
}

/// Writes the root value's address (`dolt_hashof_db` for the working state) to `*out_address`.
#[no_mangle]
pub extern "C" fn prolly_dolt_root_address(
    root: *const prolly_dolt_root,
    out_address: *mut prolly_address,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let root = unsafe { input(root, "root") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_address, "out_address") }?;
        out.set(root.root.address.into());
        Ok(())
    })
}

/// Writes the number of tables of `root` to `*out_count`.
#[no_mangle]
pub extern "C" fn prolly_dolt_root_table_count(
    root: *const prolly_dolt_root,
    out_count: *mut usize,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let root = unsafe { input(root, "root") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_count, "out_count") }?;
        out.set(root.names.len());
        Ok(())
    })
}

/// Writes the name of table `index` (0-based; tables in name order) to `*out_name`, a
/// NUL-terminated string valid until `root` is freed; `PROLLY_RESULT_ERR_INVALID_ARGUMENT` when
/// out of range.
#[no_mangle]
pub extern "C" fn prolly_dolt_root_table_name(
    root: *const prolly_dolt_root,
    index: usize,
    out_name: *mut *const c_char,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let root = unsafe { input(root, "root") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_name, "out_name") }?;
        let n = root.names.get(index).ok_or_else(|| {
            Error::invalid(format!(
                "table index {index} out of range (count {})",
                root.names.len()
            ))
        })?;
        out.set(c_ptr(n));
        Ok(())
    })
}

/// Frees a root (NULL is a no-op). Tables opened from it stay usable.
#[no_mangle]
pub extern "C" fn prolly_dolt_root_free(root: *mut prolly_dolt_root) {
    let _ = ffi!({
        // SAFETY: C caller's contract: NULL or a handle from this library, not used afterwards.
        unsafe { free_handle(root) };
        Ok(())
    });
}

/// One visible column of a table (what `SELECT *` shows). Strings are NUL-terminated and valid
/// until the table is freed.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct prolly_dolt_column {
    /// Column name.
    pub name: *const c_char,
    /// SQL type as Dolt records it, e.g. `varchar(64)`, `decimal(12,4)`, `enum('a','b')`.
    pub sql_type: *const c_char,
    /// Whether the column accepts NULL.
    pub nullable: bool,
    /// Whether the column is AUTO_INCREMENT.
    pub auto_increment: bool,
    /// 0-based position in the primary key, or -1 when the column is not part of it.
    pub primary_key_position: i32,
}

struct ColumnEntry {
    name: Box<[u8]>,
    sql_type: Box<[u8]>,
    nullable: bool,
    auto_increment: bool,
    key_position: i32,
}

/// A table of one database state: its schema, and row cursors over it. Immutable: any number of
/// threads.
pub struct prolly_dolt_table {
    pub(crate) db: Arc<Database>,
    pub(crate) table: Arc<Table>,
    columns: Vec<ColumnEntry>,
}

/// Opens table `name` of `root`; `PROLLY_RESULT_NOT_FOUND` (output untouched) when it has no such
/// table. Free with `prolly_dolt_table_free`.
#[no_mangle]
pub extern "C" fn prolly_dolt_table_open(
    root: *const prolly_dolt_root,
    name: *const c_char,
    out_table: *mut *mut prolly_dolt_table,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let root = unsafe { input(root, "root") }?;
        // SAFETY: C caller's contract: NUL-terminated string or NULL.
        let name = unsafe { text(name, "name") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_table, "out_table") }?;
        let table = root.db.table(&root.root, name)?;
        let s = &table.schema;
        let columns = s
            .visible_columns()
            .into_iter()
            .filter_map(|i| {
                let c = s.columns.get(i)?;
                let key_position = s
                    .key_columns
                    .iter()
                    .position(|&k| k == i)
                    .and_then(|p| i32::try_from(p).ok())
                    .unwrap_or(-1);
                Some(ColumnEntry {
                    name: c_string(c.name.as_bytes()),
                    sql_type: c_string(c.sql_type_text.as_bytes()),
                    nullable: c.nullable,
                    auto_increment: c.auto_increment,
                    key_position,
                })
            })
            .collect();
        out.set(into_handle(prolly_dolt_table {
            db: Arc::clone(&root.db),
            table: Arc::new(table),
            columns,
        }));
        Ok(())
    })
}

/// Writes the number of visible columns of `table` (the fields of each row) to `*out_count`.
#[no_mangle]
pub extern "C" fn prolly_dolt_table_column_count(
    table: *const prolly_dolt_table,
    out_count: *mut usize,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let t = unsafe { input(table, "table") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_count, "out_count") }?;
        out.set(t.columns.len());
        Ok(())
    })
}

/// Writes visible column `index` (0-based, in `SELECT *` order) of `table` to `*out_column`;
/// `PROLLY_RESULT_ERR_INVALID_ARGUMENT` when out of range.
#[no_mangle]
pub extern "C" fn prolly_dolt_table_column(
    table: *const prolly_dolt_table,
    index: usize,
    out_column: *mut prolly_dolt_column,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let t = unsafe { input(table, "table") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_column, "out_column") }?;
        let c = t.columns.get(index).ok_or_else(|| {
            Error::invalid(format!(
                "column index {index} out of range (count {})",
                t.columns.len()
            ))
        })?;
        out.set(prolly_dolt_column {
            name: c_ptr(&c.name),
            sql_type: c_ptr(&c.sql_type),
            nullable: c.nullable,
            auto_increment: c.auto_increment,
            primary_key_position: c.key_position,
        });
        Ok(())
    })
}

/// Writes whether `table` is keyless (no primary key; rows may repeat) to `*out_keyless`.
#[no_mangle]
pub extern "C" fn prolly_dolt_table_keyless(
    table: *const prolly_dolt_table,
    out_keyless: *mut bool,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let t = unsafe { input(table, "table") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_keyless, "out_keyless") }?;
        out.set(t.table.schema.keyless);
        Ok(())
    })
}

/// Frees a table (NULL is a no-op). Row cursors opened from it stay usable.
#[no_mangle]
pub extern "C" fn prolly_dolt_table_free(table: *mut prolly_dolt_table) {
    let _ = ffi!({
        // SAFETY: C caller's contract: NULL or a handle from this library, not used afterwards.
        unsafe { free_handle(table) };
        Ok(())
    });
}

/// Kinds of `prolly_dolt_value`. Plain `uint32_t` in `prolly_dolt_value.kind`.
#[repr(u32)]
#[derive(Clone, Copy, Debug)]
pub enum prolly_dolt_kind {
    /// SQL NULL (no other field is set; `text` is NULL). In a key or a bound: the NULL key,
    /// which sorts before every other value of its column in Dolt's indexes.
    Null = 0,
    /// Signed integer (TINYINT ... BIGINT): `int_value`.
    Int = 1,
    /// Unsigned integer or BIT: `uint_value`.
    Uint = 2,
    /// FLOAT: `double_value` (widened exactly from 32 bits).
    Float = 3,
    /// DOUBLE: `double_value`.
    Double = 4,
    /// DECIMAL: exact text with the column's scale in `text` (e.g. `-603398.8078`).
    Decimal = 5,
    /// YEAR: `int_value`.
    Year = 6,
    /// DATE: `int_value` = year * 10000 + month * 100 + day (MySQL's numeric form).
    Date = 7,
    /// TIME: `int_value` in microseconds (may be negative).
    Time = 8,
    /// DATETIME or TIMESTAMP: `int_value` in Unix microseconds (UTC); `fsp` fraction digits.
    Datetime = 9,
    /// ENUM: `uint_value` is the 1-based member index, `text` the member.
    Enum = 10,
    /// SET: `uint_value` is the member bitmask, `text` the members joined by commas.
    Set = 11,
    /// CHAR, VARCHAR, TEXT: UTF-8 in `text`.
    Text = 12,
    /// BINARY, VARBINARY, BLOB, GEOMETRY, VECTOR: raw bytes in `text` (may contain NULs).
    Bytes = 13,
    /// JSON: the document text in `text`.
    Json = 14,
}

/// One field of a row. `text`/`text_len` hold the value as `dolt sql` shows it (before CSV
/// quoting) for every kind but NULL — for TEXT, BYTES and JSON the contents themselves — followed
/// by a NUL that `text_len` does not count. `text` is valid until the next
/// `prolly_dolt_rows_next` or `prolly_dolt_rows_free` on the cursor.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct prolly_dolt_value {
    /// A `prolly_dolt_kind`.
    pub kind: u32,
    /// Fractional-second digits of a DATETIME (0 to 6); 0 otherwise.
    pub fsp: u32,
    /// INT, YEAR, DATE, TIME and DATETIME values (see `prolly_dolt_kind`); 0 otherwise.
    pub int_value: i64,
    /// UINT, ENUM and SET values; 0 otherwise.
    pub uint_value: u64,
    /// FLOAT and DOUBLE values; 0 otherwise.
    pub double_value: f64,
    /// The display text (NULL for SQL NULL).
    pub text: *const u8,
    /// Length of `text` in bytes.
    pub text_len: usize,
}

/// A cursor over rows of a table: all of them in stored order (primary-key order, or for
/// keyless tables the order Dolt stores them in, each row repeated by its count), one primary
/// key, or a key range of the primary key or of a secondary index. Reads through the table's
/// index maps; a row's fixed-width fields are decoded without allocating. One thread at a time.
pub struct prolly_dolt_rows {
    // Drop order matters: `rows` borrows the table and database declared after it.
    rows: Rows<'static>,
    /// The row returned last (its allocation reused from row to row).
    row: Row,
    /// A row already read (by `prolly_dolt_rows_get`) and not yet returned.
    peeked: bool,
    /// Display text per column of the last row returned.
    texts: Vec<Vec<u8>>,
    columns: usize,
    _table: Arc<Table>,
    _db: Arc<Database>,
}

/// A cursor over the rows `open` picks from `t`'s reader.
fn open_rows(
    t: &prolly_dolt_table,
    open: impl FnOnce(&TableReader<'static>) -> Result<Rows<'static>, DoltError>,
) -> Result<prolly_dolt_rows, Error> {
    let db = Arc::clone(&t.db);
    let table = Arc::clone(&t.table);
    // SAFETY: the cursor owns the database and the table through `Arc`s (their addresses do
    // not move), declared after `rows`, so they outlive every use of these references.
    let (db_ref, table_ref) = unsafe { (extend(&*db), extend(&*table)) };
    let reader = TableReader::new(db_ref, table_ref)?;
    let rows = open(&reader)?;
    Ok(prolly_dolt_rows {
        rows,
        row: Vec::new(),
        peeked: false,
        texts: vec![Vec::new(); t.columns.len()],
        columns: t.columns.len(),
        _table: table,
        _db: db,
    })
}

/// Opens a cursor over the rows of `table`. Free with `prolly_dolt_rows_free`.
#[no_mangle]
pub extern "C" fn prolly_dolt_rows_open(
    table: *const prolly_dolt_table,
    out_rows: *mut *mut prolly_dolt_rows,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let t = unsafe { input(table, "table") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_rows, "out_rows") }?;
        out.set(into_handle(open_rows(t, |r| r.scan(&KeyRange::all()))?));
        Ok(())
    })
}

/// One end of a key range of a table: the values of the leading key columns (fewer than the
/// key has bound a prefix of a composite key). A value of kind `PROLLY_DOLT_KIND_NULL` is the
/// NULL key, first in key order: an included lower bound of NULL takes the NULL rows in, an
/// excluded one starts after them (SQL's `c < x` is the range from NULL excluded to `x`
/// excluded), and a bound of NULL on both ends is `c IS NULL`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct prolly_dolt_bound {
    /// A `prolly_bound_kind` (`PROLLY_BOUND_KIND_UNBOUNDED` ignores the values).
    pub kind: u32,
    /// One value per leading key column, as `prolly_dolt_rows_next` returns them (the call
    /// reads them; see `prolly_dolt_rows_get` for what each kind must fill in).
    pub values: *const prolly_dolt_value,
    /// Number of values.
    pub values_len: usize,
}

/// Reads `len` C values as key values.
///
/// # Safety
/// `values` is NULL with `len == 0`, or readable for `len` values whose text pointers are
/// readable for their lengths.
unsafe fn key_values(
    values: *const prolly_dolt_value,
    len: usize,
    name: &str,
) -> Result<Vec<Option<SqlValue>>, Error> {
    if len == 0 {
        return Ok(Vec::new());
    }
    if values.is_null() {
        return Err(Error::null(name));
    }
    // SAFETY: per this function's contract.
    let values = unsafe { std::slice::from_raw_parts(values, len) };
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            // SAFETY: per this function's contract (each value's text is readable).
            let v = unsafe { from_c_value(v) };
            v.map_err(|e| Error::invalid(format!("{name}[{i}]: {e}")))
        })
        .collect()
}

/// The Rust value of a C one (for keys and rows), `None` for NULL.
///
/// # Safety
/// `v.text` is NULL or readable for `v.text_len` bytes.
pub(crate) unsafe fn from_c_value(v: &prolly_dolt_value) -> Result<Option<SqlValue>, String> {
    use prolly_dolt_kind as K;
    let bytes = || -> Result<Vec<u8>, String> {
        if v.text.is_null() {
            return if v.text_len == 0 {
                Ok(Vec::new())
            } else {
                Err("text is NULL".into())
            };
        }
        // SAFETY: per this function's contract.
        Ok(unsafe { std::slice::from_raw_parts(v.text, v.text_len) }.to_vec())
    };
    let text = || -> Result<String, String> {
        String::from_utf8(bytes()?).map_err(|_| "text is not UTF-8".to_string())
    };
    Ok(Some(match v.kind {
        k if k == K::Int as u32 => SqlValue::Int(v.int_value),
        k if k == K::Uint as u32 => SqlValue::Uint(v.uint_value),
        k if k == K::Float as u32 => SqlValue::Float(v.double_value as f32),
        k if k == K::Double as u32 => SqlValue::Double(v.double_value),
        k if k == K::Decimal as u32 => SqlValue::Decimal(text()?),
        k if k == K::Year as u32 => {
            SqlValue::Year(u16::try_from(v.int_value).map_err(|_| format!("year {}", v.int_value))?)
        }
        k if k == K::Date as u32 => {
            let n = v.int_value;
            if !(0..=99_991_231).contains(&n) {
                return Err(format!("date {n} is not YYYYMMDD"));
            }
            SqlValue::Date(Date {
                year: (n / 10_000) as u16,
                month: (n / 100 % 100) as u8,
                day: (n % 100) as u8,
            })
        }
        k if k == K::Time as u32 => SqlValue::Time(v.int_value),
        k if k == K::Datetime as u32 => SqlValue::Datetime(v.int_value, v.fsp.min(6) as u8),
        k if k == K::Enum as u32 => SqlValue::Enum(
            u16::try_from(v.uint_value).map_err(|_| format!("enum index {}", v.uint_value))?,
            String::new(),
        ),
        k if k == K::Set as u32 => SqlValue::Set(v.uint_value, String::new()),
        k if k == K::Text as u32 => SqlValue::Text(text()?),
        k if k == K::Bytes as u32 => SqlValue::Bytes(bytes()?),
        k if k == K::Json as u32 => SqlValue::Json(text()?),
        k if k == K::Null as u32 => return Ok(None),
        k => return Err(format!("unknown kind {k}")),
    }))
}

/// Opens a cursor holding the row of `table` whose primary key is `key` (one value per key
/// column, in key order), or returns `PROLLY_RESULT_NOT_FOUND` (output untouched) when there
/// is none. Each value gives its kind and: INT/YEAR/DATE (YYYYMMDD)/TIME/DATETIME in
/// `int_value`; UINT/ENUM (index)/SET (bitmask) in `uint_value`; FLOAT/DOUBLE in
/// `double_value`; DECIMAL (digits), TEXT, BYTES and JSON in `text`/`text_len`; NULL (the NULL
/// key: no primary key holds it, so `PROLLY_RESULT_NOT_FOUND`) nothing. Text keys match
/// under the column's collation, as in Dolt. Read the row with `prolly_dolt_rows_next`; free
/// with `prolly_dolt_rows_free`. Keyless tables have no primary key
/// (`PROLLY_RESULT_ERR_UNSUPPORTED`); a value that does not fit its column is
/// `PROLLY_RESULT_ERR_INVALID_ARGUMENT`.
#[no_mangle]
pub extern "C" fn prolly_dolt_rows_get(
    table: *const prolly_dolt_table,
    key: *const prolly_dolt_value,
    key_len: usize,
    out_rows: *mut *mut prolly_dolt_rows,
) -> prolly_result {
    ffi_status!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let t = unsafe { input(table, "table") }?;
        // SAFETY: C caller's contract: readable values.
        let key = unsafe { key_values(key, key_len, "key") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_rows, "out_rows") }?;
        let mut c = open_rows(t, |r| {
            let n = r.primary_key()?.columns().len();
            if key.len() != n {
                return Err(DoltError::BadValue {
                    table: r.table().name.clone(),
                    column: String::new(),
                    reason: format!("{} key values given for a key of {n} columns", key.len()),
                });
            }
            r.scan(&KeyRange {
                limit: Some(1),
                ..KeyRange::prefix(key)
            })
        })?;
        if !c.rows.next_into(&mut c.row)? {
            return Ok(prolly_result::NotFound);
        }
        c.peeked = true;
        out.set(into_handle(c));
        Ok(prolly_result::Ok)
    })
}

/// Opens a cursor over the rows of `table` whose keys lie between `lower` and `upper`, through
/// the primary key (`index` NULL) or secondary index `index` (whole rows either way), in
/// `direction` (a `prolly_direction`), at most `limit` rows (0: no limit). A bound with fewer
/// values than the key has columns bounds a prefix of it; a NULL value is the NULL key, first in
/// key order (see `prolly_dolt_bound`: both bounds NULL is `IS NULL`). The values are read by the
/// call (see `prolly_dolt_rows_get`). Free with `prolly_dolt_rows_free`.
/// `PROLLY_RESULT_NOT_FOUND` when there is no such index.
#[no_mangle]
pub extern "C" fn prolly_dolt_rows_range(
    table: *const prolly_dolt_table,
    index: *const c_char,
    lower: *const prolly_dolt_bound,
    upper: *const prolly_dolt_bound,
    direction: u32,
    limit: u64,
    out_rows: *mut *mut prolly_dolt_rows,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let t = unsafe { input(table, "table") }?;
        // SAFETY: C caller's contract: a string or NULL, readable bounds and values.
        let (index, range) = unsafe { range_args(index, lower, upper, direction, limit) }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_rows, "out_rows") }?;
        let c = open_rows(t, |r| match index {
            Some(name) => r.index_scan(name, &range),
            None => r.scan(&range),
        })?;
        out.set(into_handle(c));
        Ok(())
    })
}

/// The index (`None`: the primary key) and key range of a range call: `index` NULL or a name,
/// two bounds, a `prolly_direction` and a row limit (0: none).
///
/// # Safety
/// `index` is NULL or a NUL-terminated string; `lower` and `upper` as [`dolt_bound`] requires.
pub(crate) unsafe fn range_args<'a>(
    index: *const c_char,
    lower: *const prolly_dolt_bound,
    upper: *const prolly_dolt_bound,
    direction: u32,
    limit: u64,
) -> Result<(Option<&'a str>, KeyRange), Error> {
    let index = if index.is_null() {
        None
    } else {
        // SAFETY: per this function's contract.
        Some(unsafe { text(index, "index") }?)
    };
    // SAFETY: per this function's contract.
    let (from, to) = unsafe { (dolt_bound(lower, "lower")?, dolt_bound(upper, "upper")?) };
    if direction > 1 {
        return Err(Error::invalid(format!("unknown direction {direction}")));
    }
    let range = KeyRange {
        from,
        to,
        reverse: direction == 1,
        limit: (limit > 0).then_some(limit),
    };
    Ok((index, range))
}

/// Reads one bound.
///
/// # Safety
/// `b` is NULL or readable, its values as `key_values` requires.
unsafe fn dolt_bound(
    b: *const prolly_dolt_bound,
    name: &str,
) -> Result<Bound<Vec<Option<SqlValue>>>, Error> {
    // SAFETY: per this function's contract.
    let b = unsafe { input(b, name) }?;
    if b.kind == prolly_bound_kind::Unbounded as u32 {
        return Ok(Bound::Unbounded);
    }
    // SAFETY: per this function's contract.
    let values = unsafe { key_values(b.values, b.values_len, name) }?;
    match b.kind {
        k if k == prolly_bound_kind::Included as u32 => Ok(Bound::Included(values)),
        k if k == prolly_bound_kind::Excluded as u32 => Ok(Bound::Excluded(values)),
        k => Err(Error::invalid(format!("{name}: unknown bound kind {k}"))),
    }
}

/// Fills a C value from a Rust one, with its display text in `buf`.
fn to_c_value(v: Option<&SqlValue>, buf: &mut Vec<u8>) -> prolly_dolt_value {
    use prolly_dolt_kind as K;
    buf.clear();
    let mut out = prolly_dolt_value {
        kind: K::Null as u32,
        fsp: 0,
        int_value: 0,
        uint_value: 0,
        double_value: 0.0,
        text: std::ptr::null(),
        text_len: 0,
    };
    let Some(v) = v else {
        return out;
    };
    v.csv_bytes(buf);
    let kind = match v {
        SqlValue::Int(x) => {
            out.int_value = *x;
            K::Int
        }
        SqlValue::Uint(x) => {
            out.uint_value = *x;
            K::Uint
        }
        SqlValue::Float(x) => {
            out.double_value = f64::from(*x);
            K::Float
        }
        SqlValue::Double(x) => {
            out.double_value = *x;
            K::Double
        }
        SqlValue::Decimal(_) => K::Decimal,
        SqlValue::Year(y) => {
            out.int_value = i64::from(*y);
            K::Year
        }
        SqlValue::Date(d) => {
            out.int_value =
                i64::from(d.year) * 10_000 + i64::from(d.month) * 100 + i64::from(d.day);
            K::Date
        }
        SqlValue::Time(us) => {
            out.int_value = *us;
            K::Time
        }
        SqlValue::Datetime(us, fsp) => {
            out.int_value = *us;
            out.fsp = u32::from(*fsp);
            K::Datetime
        }
        SqlValue::Enum(i, _) => {
            out.uint_value = u64::from(*i);
            K::Enum
        }
        SqlValue::Set(bits, _) => {
            out.uint_value = *bits;
            K::Set
        }
        SqlValue::Text(_) => K::Text,
        SqlValue::Bytes(_) => K::Bytes,
        SqlValue::Json(_) => K::Json,
    };
    out.kind = kind as u32;
    out.text_len = buf.len();
    buf.push(0);
    out.text = buf.as_ptr();
    out
}

/// Moves to the next row and writes its fields to `values[0 .. column count]` (room for
/// `values_len` values) and the column count to `*out_count`. Returns `PROLLY_RESULT_END`
/// (outputs untouched) after the last row, and `PROLLY_RESULT_ERR_BUFFER_TOO_SMALL` (cursor not
/// moved, `*out_count` set to the count needed) when `values_len` is below the column count.
/// Text pointers in the values are valid until the next call on the cursor or its free.
#[no_mangle]
pub extern "C" fn prolly_dolt_rows_next(
    rows: *mut prolly_dolt_rows,
    values: *mut prolly_dolt_value,
    values_len: usize,
    out_count: *mut usize,
) -> prolly_result {
    ffi_status!({
        // SAFETY: C caller's contract: valid handle, not used concurrently.
        let c = unsafe { input_mut(rows, "rows") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_count, "out_count") }?;
        if values.is_null() && c.columns > 0 {
            return Err(Error::null("values"));
        }
        if values_len < c.columns {
            out.set(c.columns);
            return Err(Error::new(
                prolly_result::ErrBufferTooSmall,
                format!(
                    "the table has {} columns; values has room for {values_len}",
                    c.columns
                ),
            ));
        }
        if c.peeked {
            c.peeked = false;
        } else if !c.rows.next_into(&mut c.row)? {
            return Ok(prolly_result::End);
        }
        for (i, buf) in c.texts.iter_mut().enumerate() {
            let v = to_c_value(c.row.get(i).and_then(Option::as_ref), buf);
            // SAFETY: `values` is non-null and writable for `values_len >= columns > i` values
            // per the caller's contract.
            unsafe { values.add(i).write(v) };
        }
        out.set(c.columns);
        Ok(prolly_result::Ok)
    })
}

/// Frees a row cursor (NULL is a no-op); text pointers it returned become invalid.
#[no_mangle]
pub extern "C" fn prolly_dolt_rows_free(rows: *mut prolly_dolt_rows) {
    let _ = ffi!({
        // SAFETY: C caller's contract: NULL or a handle from this library, not used afterwards.
        unsafe { free_handle(rows) };
        Ok(())
    });
}

/// Opens table `table` of `spec`'s working state (what `dolt sql` shows).
fn working_table(db: &Database, spec: &str, table: &str) -> Result<Table, Error> {
    let address = resolve_root(db, spec, prolly_dolt_state::Working as u32)?;
    let root = db.root_value(address)?;
    Ok(db.table(&root, table)?)
}

/// Writes table `table` of `spec` (a branch's working state, a tag or a commit) as CSV to a new
/// file at `out_path` (replaced if it exists): exactly the bytes of
/// `dolt sql -r csv -q "SELECT * FROM table"` ordered by primary key (keyless tables by all
/// columns). Refuses (`PROLLY_RESULT_ERR_INVALID_ARGUMENT`) a path inside the database's `.dolt`
/// directory. On failure the partial file is removed. `NOT_FOUND` when the branch or table does
/// not exist (no file is created).
#[no_mangle]
pub extern "C" fn prolly_dolt_export_csv(
    db: *const prolly_dolt,
    spec: *const c_char,
    table: *const c_char,
    out_path: *const c_char,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let db = unsafe { input(db, "db") }?;
        // SAFETY: C caller's contract: NUL-terminated strings or NULL.
        let (spec, table, path) = unsafe {
            (
                text(spec, "spec")?,
                text(table, "table")?,
                text(out_path, "out_path")?,
            )
        };
        let path = Path::new(path);
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => std::path::PathBuf::from("."),
        };
        let dot = db.db.dot_dolt().canonicalize().ok();
        let target = dir
            .canonicalize()
            .map_err(|e| Error::new(prolly_result::ErrIo, format!("{}: {e}", dir.display())))?;
        if dot.is_some_and(|d| target.starts_with(d)) {
            return Err(Error::invalid(format!(
                "{} is inside the database's .dolt directory, which is never written",
                path.display()
            )));
        }
        let t = working_table(&db.db, spec, table)?;
        let io = |e: std::io::Error| {
            Error::new(prolly_result::ErrIo, format!("{}: {e}", path.display()))
        };
        let file = std::fs::File::create(path).map_err(io)?;
        let mut w = std::io::BufWriter::with_capacity(1 << 16, file);
        let written = export_csv(&db.db, &t, &mut w)
            .map_err(Error::from)
            .and_then(|_| w.flush().map_err(io));
        if let Err(e) = written {
            drop(w);
            let _ = std::fs::remove_file(path);
            return Err(e);
        }
        Ok(())
    })
}

/// Receives CSV bytes from `prolly_dolt_export_csv_write`: `len` bytes at `data` (valid only
/// during the call). Return 0 to continue, anything else to stop the export with
/// `PROLLY_RESULT_ERR_IO`.
pub type prolly_write_fn =
    Option<unsafe extern "C" fn(user: *mut c_void, data: *const u8, len: usize) -> c_int>;

/// Adapts a C write callback to `std::io::Write`.
struct CallbackWriter {
    write: unsafe extern "C" fn(*mut c_void, *const u8, usize) -> c_int,
    user: *mut c_void,
}

impl Write for CallbackWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        // SAFETY: the callback's contract (`prolly_write_fn`): it reads `len` bytes at `data`
        // during the call only; `user` is the caller's own pointer, passed back unchanged.
        let rc = unsafe { (self.write)(self.user, buf.as_ptr(), buf.len()) };
        if rc == 0 {
            Ok(buf.len())
        } else {
            Err(std::io::Error::other(format!(
                "the write callback returned {rc}"
            )))
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Like `prolly_dolt_export_csv`, but hands the CSV bytes to `write` (called with `user` and
/// chunks of about 64 KiB, in order) instead of writing a file: for standard output, sockets or
/// memory. The callback must not unwind (C++ exceptions) into the library.
#[no_mangle]
pub extern "C" fn prolly_dolt_export_csv_write(
    db: *const prolly_dolt,
    spec: *const c_char,
    table: *const c_char,
    write: prolly_write_fn,
    user: *mut c_void,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let db = unsafe { input(db, "db") }?;
        // SAFETY: C caller's contract: NUL-terminated strings or NULL.
        let (spec, table) = unsafe { (text(spec, "spec")?, text(table, "table")?) };
        let write = write.ok_or_else(|| Error::null("write"))?;
        let t = working_table(&db.db, spec, table)?;
        let mut w = std::io::BufWriter::with_capacity(1 << 16, CallbackWriter { write, user });
        export_csv(&db.db, &t, &mut w)?;
        w.flush()
            .map_err(|e| Error::new(prolly_result::ErrIo, e.to_string()))?;
        Ok(())
    })
}
