//! Result codes, the per-thread error detail, and the panic boundary every exported function
//! runs inside.

use std::cell::RefCell;
use std::ffi::{c_char, c_int};
use std::panic::{catch_unwind, AssertUnwindSafe};

use prollystore::format::tuple::TupleError;
use prollystore::store::StoreError;
use prollystore::TreeError;

/// What a call did. The numbers are stable: a code is never renumbered or reused. Values below
/// 10 are outcomes, not failures; 10 and above are errors (see `prolly_result_message`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum prolly_result {
    /// Success.
    Ok = 0,
    /// The key or root asked for is absent (outputs untouched).
    NotFound = 1,
    /// A cursor or diff has no more entries (outputs untouched).
    End = 2,
    /// A required pointer argument was NULL.
    ErrNullArgument = 10,
    /// An argument is unusable (bad UTF-8, unknown flag, out-of-range index, finished builder,
    /// SQL text that does not parse or that Dolt refuses, an invalid branch name...).
    ErrInvalidArgument = 11,
    /// The library panicked; this is a bug. The handle involved should be freed and not reused.
    ErrPanic = 12,
    /// The store cannot do this while cursors, diffs or map builders on it are open.
    ErrBusy = 13,
    /// A caller-supplied buffer is too small.
    ErrBufferTooSmall = 14,
    /// An operating-system I/O error.
    ErrIo = 20,
    /// Stored bytes are corrupted (hash mismatch, invalid message, damaged file, a stored row
    /// or schema that is not what Dolt writes).
    ErrCorrupted = 21,
    /// A chunk the operation needs is not in the store.
    ErrMissingChunk = 22,
    /// Another handle holds the store's writer lock.
    ErrLocked = 23,
    /// The store handle was opened read-only.
    ErrReadOnly = 24,
    /// A root's compare-and-swap failed: it did not hold the expected value (for a Dolt
    /// database: a branch head moved since it was read, or the chunk journal and the manifest
    /// disagree). Nothing was written; read again and retry.
    ErrRootConflict = 25,
    /// The store was created with another hash profile.
    ErrProfileMismatch = 26,
    /// A remote refused the credentials given, or what that user may do
    /// (`prolly_dolt_remote_credentials`).
    ErrDenied = 27,
    /// A schema description is invalid (unknown encoding, no key fields, unordered key type).
    ErrInvalidSchema = 30,
    /// A field was accessed with an accessor of another encoding.
    ErrWrongEncoding = 31,
    /// A field index beyond the descriptor.
    ErrFieldOutOfRange = 32,
    /// Tuple bytes are malformed for the descriptor.
    ErrBadTuple = 33,
    /// A value cannot be stored (out of range, NULL in a non-nullable field, too large).
    ErrBadValue = 34,
    /// Rows given to a map builder were not in strictly increasing key order.
    ErrUnsorted = 40,
    /// An item or tree exceeds a format limit.
    ErrTooLarge = 41,
    /// A tree or blob is structurally malformed.
    ErrMalformedTree = 42,
    /// Handles that must belong together do not (maps of different stores, a tuple builder of
    /// another schema).
    ErrIncompatible = 43,
    /// The data or the request uses a feature Dolt has that this library does not implement yet
    /// (e.g. a newer Dolt format version, a generated-column expression form that is not
    /// evaluated, an ALTER TABLE clause not done yet).
    ErrUnsupported = 44,
    /// A message the library built could not be encoded (a value past a format limit, or a
    /// bug in the library). Nothing was written.
    ErrEncode = 45,
}

/// The message of every code, indexed by value.
fn message(code: c_int) -> &'static str {
    use prolly_result as R;
    let all = [
        R::Ok,
        R::NotFound,
        R::End,
        R::ErrNullArgument,
        R::ErrInvalidArgument,
        R::ErrPanic,
        R::ErrBusy,
        R::ErrBufferTooSmall,
        R::ErrIo,
        R::ErrCorrupted,
        R::ErrMissingChunk,
        R::ErrLocked,
        R::ErrReadOnly,
        R::ErrRootConflict,
        R::ErrProfileMismatch,
        R::ErrDenied,
        R::ErrInvalidSchema,
        R::ErrWrongEncoding,
        R::ErrFieldOutOfRange,
        R::ErrBadTuple,
        R::ErrBadValue,
        R::ErrUnsorted,
        R::ErrTooLarge,
        R::ErrMalformedTree,
        R::ErrIncompatible,
        R::ErrUnsupported,
        R::ErrEncode,
    ];
    match all
        .into_iter()
        .find(|r| *r as u32 as i64 == i64::from(code))
    {
        Some(r) => r.static_message(),
        None => "unknown result code\0",
    }
}

impl prolly_result {
    fn static_message(self) -> &'static str {
        use prolly_result as R;
        match self {
            R::Ok => "ok\0",
            R::NotFound => "not found\0",
            R::End => "no more entries\0",
            R::ErrNullArgument => "a required pointer argument is NULL\0",
            R::ErrInvalidArgument => "invalid argument\0",
            R::ErrPanic => "internal panic (a bug in prollystore)\0",
            R::ErrBusy => "the store has open cursors, diffs or map builders\0",
            R::ErrBufferTooSmall => "buffer too small\0",
            R::ErrIo => "I/O error\0",
            R::ErrCorrupted => "stored data is corrupted\0",
            R::ErrMissingChunk => "a chunk is missing from the store\0",
            R::ErrLocked => "the store is locked by another writer\0",
            R::ErrReadOnly => "the store was opened read-only\0",
            R::ErrRootConflict => "root compare-and-swap failed\0",
            R::ErrProfileMismatch => "the store uses another hash profile\0",
            R::ErrDenied => "the remote refused the credentials\0",
            R::ErrInvalidSchema => "invalid schema\0",
            R::ErrWrongEncoding => "the field has another encoding\0",
            R::ErrFieldOutOfRange => "field index out of range\0",
            R::ErrBadTuple => "malformed tuple\0",
            R::ErrBadValue => "value cannot be stored in the field\0",
            R::ErrUnsorted => "keys are not in strictly increasing order\0",
            R::ErrTooLarge => "item or tree exceeds a format limit\0",
            R::ErrMalformedTree => "malformed tree\0",
            R::ErrIncompatible => "handles do not belong together\0",
            R::ErrUnsupported => "the data uses an unsupported feature\0",
            R::ErrEncode => "a message could not be encoded\0",
        }
    }
}

/// A static, NUL-terminated English description of result code `code` (any integer; unknown
/// values give "unknown result code"). Never NULL. Thread-safe.
#[no_mangle]
pub extern "C" fn prolly_result_message(code: c_int) -> *const c_char {
    message(code).as_ptr().cast()
}

thread_local! {
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Copies the detailed message of the last error on the calling thread (which chunk, file,
/// offset, field...) into `buf` as a NUL-terminated string, truncated to `buf_len - 1` bytes.
/// Returns the full message length without the NUL (like `snprintf`); 0 if no call on this thread
/// failed yet. `buf` may be NULL when `buf_len` is 0. Each failing call replaces the message;
/// successful calls leave it.
#[no_mangle]
pub extern "C" fn prolly_last_error_message(buf: *mut c_char, buf_len: usize) -> usize {
    let r = catch_unwind(|| {
        LAST_ERROR.with(|e| {
            let e = e.borrow();
            let bytes = e.as_bytes();
            if !buf.is_null() && buf_len > 0 {
                let n = bytes.len().min(buf_len - 1);
                // SAFETY: the caller guarantees `buf` is valid for `buf_len` bytes of writes;
                // `n + 1 <= buf_len`, and the source is a distinct Rust string.
                unsafe {
                    std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf.cast::<u8>(), n);
                    buf.add(n).write(0);
                }
            }
            bytes.len()
        })
    });
    r.unwrap_or(0)
}

/// An error on its way to C: a code and a detailed message.
#[derive(Debug)]
pub(crate) struct Error {
    pub(crate) code: prolly_result,
    pub(crate) detail: String,
}

impl Error {
    #[cold]
    pub(crate) fn new(code: prolly_result, detail: impl Into<String>) -> Error {
        Error {
            code,
            detail: detail.into(),
        }
    }
    #[cold]
    #[inline(never)]
    pub(crate) fn null(name: &str) -> Error {
        Error::new(
            prolly_result::ErrNullArgument,
            format!("argument `{name}` is NULL"),
        )
    }
    #[cold]
    pub(crate) fn invalid(detail: impl Into<String>) -> Error {
        Error::new(prolly_result::ErrInvalidArgument, detail)
    }
}

impl From<StoreError> for Error {
    fn from(e: StoreError) -> Error {
        use prolly_result as R;
        let code = match &e {
            StoreError::Missing(_) => R::ErrMissingChunk,
            StoreError::HashMismatch { .. }
            | StoreError::BadMessage { .. }
            | StoreError::Corrupted { .. } => R::ErrCorrupted,
            StoreError::Io { .. } => R::ErrIo,
            StoreError::Locked { .. } => R::ErrLocked,
            StoreError::ReadOnly { .. } => R::ErrReadOnly,
            StoreError::RootConflict { .. } => R::ErrRootConflict,
            StoreError::ProfileMismatch { .. } => R::ErrProfileMismatch,
            StoreError::InvalidArgument(_) => R::ErrInvalidArgument,
            _ => R::ErrIo,
        };
        Error::new(code, e.to_string())
    }
}

impl From<TreeError> for Error {
    fn from(e: TreeError) -> Error {
        use prolly_result as R;
        let code = match e {
            TreeError::Store(s) => return s.into(),
            TreeError::Message(_) | TreeError::ItemTooLarge { .. } | TreeError::TooTall(_) => {
                R::ErrTooLarge
            }
            TreeError::Unsorted { .. } => R::ErrUnsorted,
            TreeError::Malformed { .. } | TreeError::BadBlob { .. } => R::ErrMalformedTree,
            _ => R::ErrMalformedTree,
        };
        Error::new(code, e.to_string())
    }
}

impl From<TupleError> for Error {
    fn from(e: TupleError) -> Error {
        use prolly_result as R;
        let code = match &e {
            TupleError::WrongEncoding { .. } => R::ErrWrongEncoding,
            TupleError::FieldOutOfRange { .. } => R::ErrFieldOutOfRange,
            TupleError::BadValue { .. }
            | TupleError::UnexpectedNull { .. }
            | TupleError::Blob { .. } => R::ErrBadValue,
            TupleError::DataTooLarge { .. } | TupleError::TooManyFields { .. } => R::ErrTooLarge,
            _ => R::ErrBadTuple,
        };
        Error::new(code, e.to_string())
    }
}

/// Runs an exported function's body: panics become [`prolly_result::ErrPanic`], errors record
/// their detail for `prolly_last_error_message` and return their code.
#[inline]
pub(crate) fn guard(f: impl FnOnce() -> Result<prolly_result, Error>) -> prolly_result {
    // Errors are turned into codes inside the boundary so that only a `u32` crosses it.
    let r = catch_unwind(AssertUnwindSafe(|| match f() {
        Ok(code) => code,
        Err(e) => failed(e),
    }));
    match r {
        Ok(code) => code,
        Err(p) => panicked(p),
    }
}

/// Records an error's detail and returns its code.
#[cold]
#[inline(never)]
fn failed(e: Error) -> prolly_result {
    record(&e.detail);
    e.code
}

/// Records a caught panic.
#[cold]
#[inline(never)]
fn panicked(p: Box<dyn std::any::Any + Send>) -> prolly_result {
    let what = p
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    record(&format!("panic: {what}"));
    prolly_result::ErrPanic
}

/// [`guard`] for bodies without a status of their own.
#[inline]
pub(crate) fn guard_unit(f: impl FnOnce() -> Result<(), Error>) -> prolly_result {
    guard(|| f().map(|()| prolly_result::Ok))
}

pub(crate) fn record(detail: &str) {
    let _ = catch_unwind(|| {
        LAST_ERROR.with(|e| {
            if let Ok(mut e) = e.try_borrow_mut() {
                e.clear();
                e.push_str(detail);
            }
        })
    });
}

/// Runs a body returning `Result<(), Error>` and maps success to `Ok`.
macro_rules! ffi {
    ($body:block) => {
        $crate::result::guard_unit(|| $body)
    };
}

/// Runs a body that returns its own success status (`Ok`, `NotFound`, `End`).
macro_rules! ffi_status {
    ($body:block) => {
        $crate::result::guard(|| $body)
    };
}

pub(crate) use {ffi, ffi_status};
