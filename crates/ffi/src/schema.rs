//! Schema handles: the key and value tuple descriptors of a map.

use std::sync::Arc;

use prollystore::format::tuple::{needs_external_order, TupleDesc, Type, MAX_TUPLE_FIELDS};
use prollystore::format::Encoding;
use prollystore::tuples::TupleSchema;

use crate::args::{array, free_handle, input, into_handle, Out};
use crate::result::{ffi, prolly_result, Error};

/// One field of a schema description.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct prolly_type {
    /// A `prolly_encoding` code: Dolt's numeric field encodings (`serial.Encoding`), the header's
    /// copy of the format crate's `Encoding`.
    pub encoding: u8,
    /// Non-zero if the field may be NULL.
    pub nullable: u8,
}

/// Which tuple of a row a field belongs to. Pass as a plain `uint32_t`.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum prolly_side {
    /// The key tuple (orders the map).
    Key = 0,
    /// The value tuple.
    Value = 1,
}

/// The key and value descriptors of a map: field encodings and nullability. Immutable; safe to
/// use from any number of threads at once. Maps and builders made with it keep it alive.
pub struct prolly_schema {
    pub(crate) inner: Arc<TupleSchema>,
}

impl prolly_schema {
    /// The descriptor of `side`.
    #[inline]
    pub(crate) fn desc(&self, side: u32) -> Result<&TupleDesc, Error> {
        match side {
            0 => Ok(&self.inner.key),
            1 => Ok(&self.inner.value),
            _ => Err(Error::invalid(format!("unknown side {side}"))),
        }
    }
}

fn types(list: &[prolly_type], what: &str, key: bool) -> Result<Vec<Type>, Error> {
    let bad = |m: String| Error::new(prolly_result::ErrInvalidSchema, m);
    if list.len() > MAX_TUPLE_FIELDS {
        return Err(bad(format!(
            "{what} has {} fields; at most 4096",
            list.len()
        )));
    }
    let mut out = Vec::with_capacity(list.len());
    for (i, t) in list.iter().enumerate() {
        let enc = Encoding::from_code(t.encoding)
            .ok_or_else(|| bad(format!("{what} field {i}: unknown encoding {}", t.encoding)))?;
        if key && needs_external_order(enc) {
            return Err(bad(format!(
                "{what} field {i}: {} has no default key order",
                enc.name()
            )));
        }
        out.push(Type {
            enc,
            nullable: t.nullable != 0,
        });
    }
    Ok(out)
}

/// Describes a map: `key_count` key fields (at least one; they order the map with Dolt's
/// default comparator) and `value_count` value fields. Fails with
/// `PROLLY_RESULT_ERR_INVALID_SCHEMA` on an unknown encoding, no key fields, more than 4096
/// fields, or a key encoding without a default order (JSON, geometry, extended). Free with
/// `prolly_schema_free`.
#[no_mangle]
pub extern "C" fn prolly_schema_new(
    key_types: *const prolly_type,
    key_count: usize,
    value_types: *const prolly_type,
    value_count: usize,
    out_schema: *mut *mut prolly_schema,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: `key_count` readable items.
        let k = unsafe { array(key_types, key_count, "key_types") }?;
        // SAFETY: C caller's contract: `value_count` readable items.
        let v = unsafe { array(value_types, value_count, "value_types") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_schema, "out_schema") }?;
        if k.is_empty() {
            return Err(Error::new(
                prolly_result::ErrInvalidSchema,
                "a schema needs at least one key field",
            ));
        }
        let key = TupleDesc::new(types(k, "key", true)?);
        let value = TupleDesc::new(types(v, "value", false)?);
        out.set(into_handle(prolly_schema {
            inner: Arc::new(TupleSchema::new(key, value)),
        }));
        Ok(())
    })
}

/// The number of fields of `side` (a `prolly_side`) into `out_count`.
#[no_mangle]
pub extern "C" fn prolly_schema_field_count(
    schema: *const prolly_schema,
    side: u32,
    out_count: *mut usize,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let s = unsafe { input(schema, "schema") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_count, "out_count") }?;
        out.set(s.desc(side)?.len());
        Ok(())
    })
}

/// Frees a schema handle (NULL is a no-op). Maps and builders made with it stay valid.
#[no_mangle]
pub extern "C" fn prolly_schema_free(schema: *mut prolly_schema) {
    let _ = ffi!({
        // SAFETY: C caller's contract: NULL or a handle from this library, not used afterwards.
        unsafe { free_handle(schema) };
        Ok(())
    });
}
