//! Turning C arguments into Rust values: NULL checks for inputs, handles and outputs. Every raw
//! pointer the crate dereferences goes through here.

use std::ffi::{c_char, CStr};
use std::ptr::NonNull;

use crate::result::Error;

/// A shared reference to a caller-owned input (NULL is an error).
///
/// # Safety
/// `p` is NULL or points to a valid `T` that stays valid and unchanged during `'a`.
#[inline]
pub(crate) unsafe fn input<'a, T>(p: *const T, name: &str) -> Result<&'a T, Error> {
    // SAFETY: non-null pointers are valid per this function's contract.
    unsafe { p.as_ref() }.ok_or_else(|| Error::null(name))
}

/// An exclusive reference to a caller-owned handle (NULL is an error).
///
/// # Safety
/// `p` is NULL or points to a valid `T` not used elsewhere during `'a`.
#[inline]
pub(crate) unsafe fn input_mut<'a, T>(p: *mut T, name: &str) -> Result<&'a mut T, Error> {
    // SAFETY: non-null pointers are valid and unaliased per this function's contract.
    unsafe { p.as_mut() }.ok_or_else(|| Error::null(name))
}

/// `len` bytes at `p`. NULL is allowed when `len` is 0.
///
/// # Safety
/// If `len > 0`, `p` points to `len` readable bytes that stay unchanged during `'a`.
#[inline]
pub(crate) unsafe fn bytes<'a>(p: *const u8, len: usize, name: &str) -> Result<&'a [u8], Error> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Error::null(name));
    }
    if len > isize::MAX as usize {
        return Err(Error::invalid(format!(
            "`{name}` length {len} is too large"
        )));
    }
    // SAFETY: non-null, `len` readable bytes per the contract, and `len <= isize::MAX`.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// `len` items at `p`. NULL is allowed when `len` is 0.
///
/// # Safety
/// If `len > 0`, `p` points to `len` valid `T`s that stay unchanged during `'a`.
#[inline]
pub(crate) unsafe fn array<'a, T>(p: *const T, len: usize, name: &str) -> Result<&'a [T], Error> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Error::null(name));
    }
    if len
        .checked_mul(size_of::<T>())
        .is_none_or(|b| b > isize::MAX as usize)
    {
        return Err(Error::invalid(format!("`{name}` count {len} is too large")));
    }
    // SAFETY: non-null, `len` valid items per the contract, total size checked above.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// A NUL-terminated UTF-8 string.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string that stays unchanged during `'a`.
#[inline]
pub(crate) unsafe fn text<'a>(p: *const c_char, name: &str) -> Result<&'a str, Error> {
    if p.is_null() {
        return Err(Error::null(name));
    }
    // SAFETY: non-null and NUL-terminated per the contract.
    let c = unsafe { CStr::from_ptr(p) };
    c.to_str()
        .map_err(|_| Error::invalid(format!("`{name}` is not valid UTF-8")))
}

/// [`text`] for an optional argument: NULL is `None`.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string that stays unchanged during `'a`.
#[inline]
#[cfg(feature = "dolt")]
pub(crate) unsafe fn opt_text<'a>(p: *const c_char, name: &str) -> Result<Option<&'a str>, Error> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: forwarded contract.
    unsafe { text(p, name) }.map(Some)
}

/// An output location, checked non-NULL up front and written only once the call succeeds.
pub(crate) struct Out<T>(NonNull<T>);

impl<T> Out<T> {
    /// Checks `p`.
    ///
    /// # Safety
    /// `p` is NULL or valid for a write of `T` (it may hold uninitialized memory) until the
    /// exported call returns.
    #[inline]
    pub(crate) unsafe fn new(p: *mut T, name: &str) -> Result<Out<T>, Error> {
        NonNull::new(p).map(Out).ok_or_else(|| Error::null(name))
    }

    /// Writes the result (without reading or dropping what was there).
    #[inline]
    pub(crate) fn set(self, v: T) {
        // SAFETY: `Out::new`'s contract: valid for one write of `T`.
        unsafe { self.0.as_ptr().write(v) }
    }
}

/// Moves `v` to the heap and hands ownership to C.
pub(crate) fn into_handle<T>(v: T) -> *mut T {
    Box::into_raw(Box::new(v))
}

/// Takes back ownership of a handle made by [`into_handle`] and drops it; NULL is a no-op.
///
/// # Safety
/// `p` is NULL or came from [`into_handle`] for the same `T` and is not used afterwards.
pub(crate) unsafe fn free_handle<T>(p: *mut T) {
    if !p.is_null() {
        // SAFETY: per the contract `p` is an owned box pointer from `into_handle`.
        drop(unsafe { Box::from_raw(p) });
    }
}
