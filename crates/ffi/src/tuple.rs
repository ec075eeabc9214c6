//! Tuple builders, and the shared plumbing of the typed field getters and putters
//! (`fields.rs`).

use std::sync::Arc;

use prollystore::blob::StoreBlobs;
use prollystore::format::tuple::{Tuple, TupleBuilder, TupleDesc, TupleError};
use prollystore::tuples::TupleSchema;

use crate::args::{bytes, free_handle, input, input_mut, into_handle, Out};
use crate::result::{ffi, prolly_result, Error};
use crate::schema::prolly_schema;
use crate::store::prolly_store;

/// Builds key or value tuples of one schema side, field by field; unset fields are NULL. Reuses
/// its buffers, so building rows allocates nothing once warm. Not thread-safe: one thread at a
/// time.
pub struct prolly_tuple_builder {
    pub(crate) schema: Arc<TupleSchema>,
    pub(crate) side: u32,
    pub(crate) builder: TupleBuilder,
}

/// A builder for tuples of `side` (a `prolly_side`) of `schema`. Free with
/// `prolly_tuple_builder_free`.
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_new(
    schema: *const prolly_schema,
    side: u32,
    out_builder: *mut *mut prolly_tuple_builder,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let s = unsafe { input(schema, "schema") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_builder, "out_builder") }?;
        let desc = s.desc(side)?.clone();
        out.set(into_handle(prolly_tuple_builder {
            schema: Arc::clone(&s.inner),
            side,
            builder: TupleBuilder::new(desc),
        }));
        Ok(())
    })
}

/// Forgets every value put since the last build.
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_reset(builder: *mut prolly_tuple_builder) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle, not used concurrently.
        let b = unsafe { input_mut(builder, "builder") }?;
        b.builder.reset();
        Ok(())
    })
}

/// Encodes the tuple from the values put so far and resets the builder. `*out_tuple` points to
/// `*out_len` bytes owned by the builder, valid until the next put, build, reset or free on it.
/// Adaptive values that would have to move out of band fail with
/// `PROLLY_RESULT_ERR_BAD_VALUE`; use `prolly_tuple_builder_build_in` for those.
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_build(
    builder: *mut prolly_tuple_builder,
    out_tuple: *mut *const u8,
    out_len: *mut usize,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle, not used concurrently.
        let b = unsafe { input_mut(builder, "builder") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let (o1, o2) = unsafe {
            (
                Out::new(out_tuple, "out_tuple")?,
                Out::new(out_len, "out_len")?,
            )
        };
        let t = b.builder.build()?.as_bytes();
        o1.set(t.as_ptr());
        o2.set(t.len());
        Ok(())
    })
}

/// Like `prolly_tuple_builder_build`, but adaptive values too large for the row move out of band
/// into blob trees written to `store` (a writer; the blobs become durable with the next commit).
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_build_in(
    builder: *mut prolly_tuple_builder,
    store: *const prolly_store,
    out_tuple: *mut *const u8,
    out_len: *mut usize,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle, not used concurrently.
        let b = unsafe { input_mut(builder, "builder") }?;
        // SAFETY: C caller's contract: valid handle or NULL.
        let store = unsafe { input(store, "store") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let (o1, o2) = unsafe {
            (
                Out::new(out_tuple, "out_tuple")?,
                Out::new(out_len, "out_len")?,
            )
        };
        let mut blobs = StoreBlobs::new(store.shared.backend());
        let t = b.builder.build_with(&mut blobs)?.as_bytes();
        o1.set(t.as_ptr());
        o2.set(t.len());
        Ok(())
    })
}

/// Frees a tuple builder (NULL is a no-op).
#[no_mangle]
pub extern "C" fn prolly_tuple_builder_free(builder: *mut prolly_tuple_builder) {
    let _ = ffi!({
        // SAFETY: C caller's contract: NULL or a handle from this library, not used afterwards.
        unsafe { free_handle(builder) };
        Ok(())
    });
}

/// Checks a getter's common arguments: the descriptor and the tuple's layout.
///
/// # Safety
/// `schema` is NULL or a valid handle; `tuple` points to `tuple_len` readable bytes (or is NULL
/// with length 0) that outlive `'a`.
#[inline]
unsafe fn view<'a>(
    schema: *const prolly_schema,
    side: u32,
    tuple: *const u8,
    tuple_len: usize,
) -> Result<(&'a TupleDesc, Tuple<'a>), Error> {
    // SAFETY: per this function's contract.
    let s: &'a prolly_schema = unsafe { input(schema, "schema") }?;
    // SAFETY: per this function's contract.
    let t = unsafe { bytes(tuple, tuple_len, "tuple") }?;
    if tuple_len == 0 {
        return Err(Error::null("tuple"));
    }
    Ok((s.desc(side)?, Tuple::new(t)?))
}

/// The body of every fixed-size getter.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(crate) fn get_field<V>(
    schema: *const prolly_schema,
    side: u32,
    tuple: *const u8,
    tuple_len: usize,
    field: usize,
    out_value: *mut V,
    out_is_null: *mut bool,
    read: impl FnOnce(&TupleDesc, Tuple<'_>, usize) -> Result<Option<V>, TupleError>,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract (documented on each getter).
        let (desc, t) = unsafe { view(schema, side, tuple, tuple_len) }?;
        // SAFETY: C caller's contract: writable or NULL.
        let (ov, on) = unsafe {
            (
                Out::new(out_value, "out_value")?,
                Out::new(out_is_null, "out_is_null")?,
            )
        };
        match read(desc, t, field)? {
            Some(v) => {
                ov.set(v);
                on.set(false);
            }
            None => on.set(true),
        }
        Ok(())
    })
}

/// The body of every getter returning bytes inside the tuple.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(crate) fn get_slice(
    schema: *const prolly_schema,
    side: u32,
    tuple: *const u8,
    tuple_len: usize,
    field: usize,
    out_data: *mut *const u8,
    out_len: *mut usize,
    out_is_null: *mut bool,
    read: impl for<'t> FnOnce(&TupleDesc, Tuple<'t>, usize) -> Result<Option<&'t [u8]>, TupleError>,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract (documented on each getter).
        let (desc, t) = unsafe { view(schema, side, tuple, tuple_len) }?;
        // SAFETY: C caller's contract: writable or NULL.
        let (od, ol, on) = unsafe {
            (
                Out::new(out_data, "out_data")?,
                Out::new(out_len, "out_len")?,
                Out::new(out_is_null, "out_is_null")?,
            )
        };
        match read(desc, t, field)? {
            Some(v) => {
                od.set(v.as_ptr());
                ol.set(v.len());
                on.set(false);
            }
            None => on.set(true),
        }
        Ok(())
    })
}

/// The body of every putter.
#[inline]
pub(crate) fn put_field(
    builder: *mut prolly_tuple_builder,
    put: impl FnOnce(&mut TupleBuilder) -> Result<(), Error>,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle, not used concurrently.
        let b = unsafe { input_mut(builder, "builder") }?;
        put(&mut b.builder)
    })
}
