//! Three-way merge of maps with conflict reporting.

use std::sync::Arc;

use prollystore::tree::merge::{merge, Conflict, Resolution};

use crate::args::{free_handle, input, into_handle, Out};
use crate::map::prolly_map;
use crate::result::{ffi, prolly_result, Error};

/// What to do with a key both sides changed differently. Plain `uint32_t`.
#[repr(u32)]
#[derive(Clone, Copy, Debug)]
pub enum prolly_merge_policy {
    /// Keep the left value and report a conflict.
    Report = 0,
    /// Take the left side's change silently.
    PreferLeft = 1,
    /// Take the right side's change silently.
    PreferRight = 2,
}

/// The outcome of `prolly_merge`: the merged map and the conflicts. Immutable; the pointers in
/// its conflicts are owned by it and valid until it is freed.
pub struct prolly_merge_result {
    map: prolly_map,
    conflicts: Vec<Conflict>,
}

/// A key both sides changed differently. Absent values are NULL with length 0.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct prolly_conflict {
    /// The key.
    pub key: *const u8,
    /// Length of `key`.
    pub key_len: usize,
    /// The value in the base, or NULL.
    pub base: *const u8,
    /// Length of `base`.
    pub base_len: usize,
    /// The value on the left, or NULL.
    pub left: *const u8,
    /// Length of `left`.
    pub left_len: usize,
    /// The value on the right, or NULL.
    pub right: *const u8,
    /// Length of `right`.
    pub right_len: usize,
}

/// Merges the changes from `base` to `right` into `left` (all three in one store, else
/// `PROLLY_RESULT_ERR_INCOMPATIBLE`), writing the merged tree into the store (a writer). Keys
/// both sides changed to different values follow `policy` (a `prolly_merge_policy`). Free the
/// result with `prolly_merge_result_free`.
#[no_mangle]
pub extern "C" fn prolly_merge(
    base: *const prolly_map,
    left: *const prolly_map,
    right: *const prolly_map,
    policy: u32,
    out_result: *mut *mut prolly_merge_result,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handles or NULL.
        let (b, l, r) = unsafe {
            (
                input(base, "base")?,
                input(left, "left")?,
                input(right, "right")?,
            )
        };
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_result, "out_result") }?;
        if !Arc::ptr_eq(&b.store, &l.store) || !Arc::ptr_eq(&b.store, &r.store) {
            return Err(Error::new(
                prolly_result::ErrIncompatible,
                "the maps are in different stores",
            ));
        }
        if policy > 2 {
            return Err(Error::invalid(format!("unknown merge policy {policy}")));
        }
        let outcome = merge(
            l.store.backend(),
            &*l.schema,
            b.root,
            l.root,
            r.root,
            |_, _, lv, rv| match policy {
                1 => Resolution::Value(lv.map(<[u8]>::to_vec)),
                2 => Resolution::Value(rv.map(<[u8]>::to_vec)),
                _ => Resolution::Conflict,
            },
        )?;
        out.set(into_handle(prolly_merge_result {
            map: l.at(outcome.root),
            conflicts: outcome.conflicts,
        }));
        Ok(())
    })
}

/// Opens the merged map as a new handle (free it with `prolly_map_free`).
#[no_mangle]
pub extern "C" fn prolly_merge_result_map(
    result: *const prolly_merge_result,
    out_map: *mut *mut prolly_map,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let r = unsafe { input(result, "result") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_map, "out_map") }?;
        out.set(into_handle(r.map.at(r.map.root)));
        Ok(())
    })
}

/// The number of conflicts (0 means the merge was clean).
#[no_mangle]
pub extern "C" fn prolly_merge_result_conflict_count(
    result: *const prolly_merge_result,
    out_count: *mut usize,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let r = unsafe { input(result, "result") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_count, "out_count") }?;
        out.set(r.conflicts.len());
        Ok(())
    })
}

/// Conflict number `index` (in key order); `PROLLY_RESULT_ERR_INVALID_ARGUMENT` past the end.
#[no_mangle]
pub extern "C" fn prolly_merge_result_conflict(
    result: *const prolly_merge_result,
    index: usize,
    out_conflict: *mut prolly_conflict,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let r = unsafe { input(result, "result") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_conflict, "out_conflict") }?;
        let c = r
            .conflicts
            .get(index)
            .ok_or_else(|| Error::invalid(format!("conflict {index} of {}", r.conflicts.len())))?;
        let p = |v: &Option<Vec<u8>>| v.as_deref().map_or(std::ptr::null(), <[u8]>::as_ptr);
        let n = |v: &Option<Vec<u8>>| v.as_deref().map_or(0, <[u8]>::len);
        out.set(prolly_conflict {
            key: c.key.as_ptr(),
            key_len: c.key.len(),
            base: p(&c.base),
            base_len: n(&c.base),
            left: p(&c.left),
            left_len: n(&c.left),
            right: p(&c.right),
            right_len: n(&c.right),
        });
        Ok(())
    })
}

/// Frees a merge result (NULL is a no-op).
#[no_mangle]
pub extern "C" fn prolly_merge_result_free(result: *mut prolly_merge_result) {
    let _ = ffi!({
        // SAFETY: C caller's contract: NULL or a handle from this library, not used afterwards.
        unsafe { free_handle(result) };
        Ok(())
    });
}
