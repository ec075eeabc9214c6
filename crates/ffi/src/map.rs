//! Map handles: open at a root, point and ordinal reads, batch edits, building from rows.

use std::cmp::Ordering;
use std::sync::Arc;

use prollystore::blob::StoreBlobs;
use prollystore::format::tuple::TupleError;
use prollystore::format::Address;
use prollystore::process::background_hashing;
use prollystore::tree::build::TreeBuilder;
use prollystore::tree::schema::TreeSchema;
use prollystore::tuples::TupleSchema;
use prollystore::{ChunkStore, Map};

use crate::args::{array, bytes, free_handle, input, input_mut, into_handle, Out};
use crate::result::{ffi, ffi_status, prolly_result, Error};
use crate::schema::prolly_schema;
use crate::store::{parts, prolly_address, prolly_store, Backend, Borrow, Parts, Store};
use crate::tuple::prolly_tuple_builder;
use prollystore::BuiltinStore;

/// An immutable prolly map: a root in a store, read with a schema. Editing gives a new map.
/// Keeps its store and schema alive. Thread-safety is its store's (file store: any number of
/// threads at once; memory store: one thread at a time).
pub struct prolly_map {
    pub(crate) store: Arc<Store>,
    pub(crate) schema: Arc<TupleSchema>,
    pub(crate) root: Address,
}

impl prolly_map {
    /// A Rust map view for one call.
    #[inline]
    pub(crate) fn view(&self) -> Map<'_, Backend, &TupleSchema> {
        Map::new(self.store.backend(), self.root, &*self.schema)
    }

    pub(crate) fn at(&self, root: Address) -> prolly_map {
        prolly_map {
            store: Arc::clone(&self.store),
            schema: Arc::clone(&self.schema),
            root,
        }
    }
}

/// A `(key, value)` pair pointing into the store's chunks (no copy).
///
/// Lifetime of the pointers: until the store closes, or until the next `prolly_store_commit`,
/// `prolly_store_refresh` or `prolly_remote_trim` on it, whichever comes first.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct prolly_row {
    /// The key tuple.
    pub key: *const u8,
    /// Length of `key`.
    pub key_len: usize,
    /// The value tuple.
    pub value: *const u8,
    /// Length of `value`.
    pub value_len: usize,
}

impl prolly_row {
    pub(crate) fn of(k: &[u8], v: &[u8]) -> prolly_row {
        prolly_row {
            key: k.as_ptr(),
            key_len: k.len(),
            value: v.as_ptr(),
            value_len: v.len(),
        }
    }
}

/// Opens the map whose root node is at `root` in `store`, read with `schema`. Fails with
/// `PROLLY_RESULT_ERR_MISSING_CHUNK` if the root is not stored. Free with `prolly_map_free`.
#[no_mangle]
pub extern "C" fn prolly_map_open(
    store: *const prolly_store,
    schema: *const prolly_schema,
    root: *const prolly_address,
    out_map: *mut *mut prolly_map,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handles or NULL.
        let (st, sc) = unsafe { (input(store, "store")?, input(schema, "schema")?) };
        // SAFETY: C caller's contract: readable or NULL.
        let root = Address::from(*unsafe { input(root, "root") }?);
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_map, "out_map") }?;
        st.shared.backend().get_node(&root)?;
        out.set(into_handle(prolly_map {
            store: Arc::clone(&st.shared),
            schema: Arc::clone(&sc.inner),
            root,
        }));
        Ok(())
    })
}

/// Writes an empty map into `store` (a writer) and opens it.
#[no_mangle]
pub extern "C" fn prolly_map_new_empty(
    store: *const prolly_store,
    schema: *const prolly_schema,
    out_map: *mut *mut prolly_map,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handles or NULL.
        let (st, sc) = unsafe { (input(store, "store")?, input(schema, "schema")?) };
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_map, "out_map") }?;
        let m = Map::empty(st.shared.backend(), &*sc.inner)?;
        out.set(into_handle(prolly_map {
            store: Arc::clone(&st.shared),
            schema: Arc::clone(&sc.inner),
            root: m.root(),
        }));
        Ok(())
    })
}

/// The map's root address (store it as a named root with `prolly_store_commit`).
#[no_mangle]
pub extern "C" fn prolly_map_root(
    map: *const prolly_map,
    out_root: *mut prolly_address,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let m = unsafe { input(map, "map") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_root, "out_root") }?;
        out.set(m.root.into());
        Ok(())
    })
}

/// The number of rows.
#[no_mangle]
pub extern "C" fn prolly_map_count(map: *const prolly_map, out_count: *mut u64) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let m = unsafe { input(map, "map") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_count, "out_count") }?;
        out.set(m.view().count()?);
        Ok(())
    })
}

/// Looks up the encoded key tuple `key` (`key_len` bytes). On `PROLLY_RESULT_OK`, `*out_value`
/// points to the value tuple's `*out_value_len` bytes inside the store's chunk (no copy; see
/// `prolly_row` for how long it stays valid). Returns `PROLLY_RESULT_NOT_FOUND` (outputs
/// untouched) if the key is absent.
#[no_mangle]
pub extern "C" fn prolly_map_get(
    map: *const prolly_map,
    key: *const u8,
    key_len: usize,
    out_value: *mut *const u8,
    out_value_len: *mut usize,
) -> prolly_result {
    ffi_status!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let m = unsafe { input(map, "map") }?;
        // SAFETY: C caller's contract: `key_len` readable bytes.
        let k = unsafe { bytes(key, key_len, "key") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let (ov, ol) = unsafe {
            (
                Out::new(out_value, "out_value")?,
                Out::new(out_value_len, "out_value_len")?,
            )
        };
        let found = match parts(m.store.backend()) {
            Parts::Builtin(BuiltinStore::File(s)) => {
                crate::lookup::file::get(s, m.root, &m.schema, k)
            }
            Parts::Builtin(BuiltinStore::Memory(s)) => {
                crate::lookup::memory::get(s, m.root, &m.schema, k)
            }
            #[cfg(feature = "remote")]
            Parts::Remote(s) => crate::lookup::remote::get(s, m.root, &m.schema, k),
        };
        Ok(match found? {
            Some(v) => {
                ov.set(v.as_ptr());
                ol.set(v.len());
                prolly_result::Ok
            }
            None => prolly_result::NotFound,
        })
    })
}

/// The row at position `ordinal` (0-based, in key order); `PROLLY_RESULT_NOT_FOUND` past the
/// end.
#[no_mangle]
pub extern "C" fn prolly_map_get_ordinal(
    map: *const prolly_map,
    ordinal: u64,
    out_row: *mut prolly_row,
) -> prolly_result {
    ffi_status!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let m = unsafe { input(map, "map") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_row, "out_row") }?;
        Ok(match m.view().get_ordinal(ordinal)? {
            Some((k, v)) => {
                out.set(prolly_row::of(k, v));
                prolly_result::Ok
            }
            None => prolly_result::NotFound,
        })
    })
}

/// One edit for `prolly_map_apply`: put `value` under `key`, or delete `key` if `value` is NULL.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct prolly_edit {
    /// The encoded key tuple.
    pub key: *const u8,
    /// Length of `key`.
    pub key_len: usize,
    /// The encoded value tuple, or NULL to delete the key.
    pub value: *const u8,
    /// Length of `value`.
    pub value_len: usize,
}

/// Applies `edit_count` puts and deletes in any order (a later edit of the same key wins) and
/// opens the edited map as `*out_map`; `map` is unchanged. Only the touched parts of the tree
/// are rewritten; new chunks go to the map's store (a writer), durable after the next commit.
/// Every key (and every put's value) is checked against the map's schema first: a tuple that
/// does not fit gives `PROLLY_RESULT_ERR_BAD_TUPLE` naming the edit, and nothing is written.
#[no_mangle]
pub extern "C" fn prolly_map_apply(
    map: *const prolly_map,
    edits: *const prolly_edit,
    edit_count: usize,
    out_map: *mut *mut prolly_map,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let m = unsafe { input(map, "map") }?;
        // SAFETY: C caller's contract: `edit_count` readable edits.
        let es = unsafe { array(edits, edit_count, "edits") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_map, "out_map") }?;
        let mut list = Vec::with_capacity(es.len());
        for (i, e) in es.iter().enumerate() {
            // SAFETY: C caller's contract: `key_len` readable bytes.
            let k = unsafe { bytes(e.key, e.key_len, "edits[].key") }?;
            let v = if e.value.is_null() {
                None
            } else {
                // SAFETY: C caller's contract: `value_len` readable bytes.
                Some(unsafe { bytes(e.value, e.value_len, "edits[].value") }?)
            };
            check_row(&m.schema, k, v, &format!("edits[{i}]"))?;
            list.push((k, v));
        }
        let edited = m.view().apply(list)?;
        out.set(into_handle(m.at(edited.root())));
        Ok(())
    })
}

/// Frees a map handle (NULL is a no-op).
#[no_mangle]
pub extern "C" fn prolly_map_free(map: *mut prolly_map) {
    let _ = ffi!({
        // SAFETY: C caller's contract: NULL or a handle from this library, not used afterwards.
        unsafe { free_handle(map) };
        Ok(())
    });
}

/// Extends a borrow to `'static`.
///
/// # Safety
/// The referent must stay alive and unmoved for as long as the result is used: the handles
/// below keep its owner (an `Arc`) in a field declared after every field that uses it.
pub(crate) unsafe fn extend<'a, T: ?Sized>(r: &T) -> &'a T {
    // SAFETY: per this function's contract.
    unsafe { &*(r as *const T) }
}

/// Builds a new map from rows in strictly increasing key order, streaming them into tree nodes
/// in the store (a writer). Counts as open for `prolly_store_commit` (which returns
/// `PROLLY_RESULT_ERR_BUSY`) until finished or freed. Not thread-safe: one thread at a time.
pub struct prolly_map_builder {
    // Fields that borrow from the store come first so they drop before it.
    tree: Option<TreeBuilder<'static, Backend, TupleSchema>>,
    blobs: Option<StoreBlobs<'static, Backend>>,
    last_key: Vec<u8>,
    rows: u64,
    key_buf: Vec<u8>,
    value_buf: Vec<u8>,
    schema: Arc<TupleSchema>,
    borrow: Option<Borrow>,
}

/// Starts building a map of `schema` in `store`. Free with `prolly_map_builder_free`.
///
/// On a machine with two cores or more, a builder that has received a few thousand rows hashes
/// full batches of leaves on a thread of its own (ended by `prolly_map_builder_finish` or
/// `prolly_map_builder_free`); the map is the same either way.
#[no_mangle]
pub extern "C" fn prolly_map_builder_new(
    store: *const prolly_store,
    schema: *const prolly_schema,
    out_builder: *mut *mut prolly_map_builder,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handles or NULL.
        let (st, sc) = unsafe { (input(store, "store")?, input(schema, "schema")?) };
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_builder, "out_builder") }?;
        let borrow = Borrow::new(&st.shared);
        // SAFETY: the store and schema are owned by `borrow` and `schema` below, which the
        // builder drops after `tree` and `blobs` (field order; `finish` takes them first).
        let (backend, schema_ref) = unsafe { (extend(borrow.0.backend()), extend(&*sc.inner)) };
        let mut tree = TreeBuilder::new(backend, schema_ref);
        if background_hashing() {
            tree = tree.with_hash_thread();
        }
        out.set(into_handle(prolly_map_builder {
            tree: Some(tree),
            blobs: Some(StoreBlobs::new(backend)),
            last_key: Vec::new(),
            rows: 0,
            key_buf: Vec::new(),
            value_buf: Vec::new(),
            schema: Arc::clone(&sc.inner),
            borrow: Some(borrow),
        }));
        Ok(())
    })
}

/// Checks a row's tuples against the map's schema (structure, field count, fixed widths,
/// NULLs in non-nullable fields), so that no tuple a reader would refuse is ever written.
/// `row` names the row in the error (its position in the caller's input).
pub(crate) fn check_row(
    schema: &TupleSchema,
    key: &[u8],
    value: Option<&[u8]>,
    row: &str,
) -> Result<(), Error> {
    let bad = |side: &str, e: TupleError| {
        Error::new(
            prolly_result::ErrBadTuple,
            format!("{row}: the {side} tuple does not fit the schema: {e}"),
        )
    };
    schema.key.validate(key).map_err(|e| bad("key", e))?;
    if let Some(v) = value {
        schema.value.validate(v).map_err(|e| bad("value", e))?;
    }
    Ok(())
}

impl prolly_map_builder {
    fn add(&mut self) -> Result<(), Error> {
        let tree = self
            .tree
            .as_mut()
            .ok_or_else(|| Error::invalid("the map builder is finished"))?;
        check_row(
            &self.schema,
            &self.key_buf,
            Some(&self.value_buf),
            &format!("row {}", self.rows),
        )?;
        if self.rows > 0
            && self.schema.compare_keys(&self.last_key, &self.key_buf) != Ordering::Less
        {
            return Err(Error::new(
                prolly_result::ErrUnsorted,
                format!("row {} is not after the previous row's key", self.rows),
            ));
        }
        tree.add(&self.key_buf, &self.value_buf)?;
        std::mem::swap(&mut self.last_key, &mut self.key_buf);
        self.rows += 1;
        Ok(())
    }
}

/// Appends a row given as encoded key and value tuples; keys must strictly increase
/// (`PROLLY_RESULT_ERR_UNSORTED` otherwise, and the row is not added). Tuples that do not fit
/// the schema (structure, field count, fixed widths, NULL in a non-nullable field) give
/// `PROLLY_RESULT_ERR_BAD_TUPLE` and are not added; the builder goes on.
#[no_mangle]
pub extern "C" fn prolly_map_builder_append(
    builder: *mut prolly_map_builder,
    key: *const u8,
    key_len: usize,
    value: *const u8,
    value_len: usize,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle, not used concurrently.
        let b = unsafe { input_mut(builder, "builder") }?;
        // SAFETY: C caller's contract: readable bytes.
        let (k, v) = unsafe {
            (
                bytes(key, key_len, "key")?,
                bytes(value, value_len, "value")?,
            )
        };
        b.key_buf.clear();
        b.key_buf.extend_from_slice(k);
        b.value_buf.clear();
        b.value_buf.extend_from_slice(v);
        b.add()
    })
}

/// Appends a row built from two tuple builders of the same schema (key side and value side),
/// building both (large adaptive values move out of band into the store) and resetting them.
#[no_mangle]
pub extern "C" fn prolly_map_builder_append_row(
    builder: *mut prolly_map_builder,
    key: *mut prolly_tuple_builder,
    value: *mut prolly_tuple_builder,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid, distinct handles, not used concurrently.
        let (b, kb, vb) = unsafe {
            (
                input_mut(builder, "builder")?,
                input_mut(key, "key")?,
                input_mut(value, "value")?,
            )
        };
        if !Arc::ptr_eq(&kb.schema, &b.schema) || !Arc::ptr_eq(&vb.schema, &b.schema) {
            return Err(Error::new(
                prolly_result::ErrIncompatible,
                "the tuple builders belong to another schema handle",
            ));
        }
        if kb.side != 0 || vb.side != 1 {
            return Err(Error::new(
                prolly_result::ErrIncompatible,
                "pass the key-side builder first and the value-side builder second",
            ));
        }
        let blobs = b
            .blobs
            .as_mut()
            .ok_or_else(|| Error::invalid("the map builder is finished"))?;
        b.key_buf.clear();
        b.value_buf.clear();
        let r1 = kb.builder.build_into(blobs, &mut b.key_buf);
        let r2 = vb.builder.build_into(blobs, &mut b.value_buf);
        r1?;
        r2?;
        b.add()
    })
}

/// Finishes the tree and opens it as `*out_map`. The builder cannot take more rows and stops
/// counting as open; free it with `prolly_map_builder_free`.
#[no_mangle]
pub extern "C" fn prolly_map_builder_finish(
    builder: *mut prolly_map_builder,
    out_map: *mut *mut prolly_map,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle, not used concurrently.
        let b = unsafe { input_mut(builder, "builder") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_map, "out_map") }?;
        let tree = b
            .tree
            .take()
            .ok_or_else(|| Error::invalid("the map builder is finished"))?;
        b.blobs = None;
        let root = tree.finish();
        let borrow = b.borrow.take();
        let root = root?;
        if let Some(Borrow(store)) = &borrow {
            out.set(into_handle(prolly_map {
                store: Arc::clone(store),
                schema: Arc::clone(&b.schema),
                root,
            }));
        }
        Ok(())
    })
}

/// Frees a map builder (NULL is a no-op); an unfinished build is abandoned (chunks already
/// written stay in the store until garbage-collected).
#[no_mangle]
pub extern "C" fn prolly_map_builder_free(builder: *mut prolly_map_builder) {
    let _ = ffi!({
        // SAFETY: C caller's contract: NULL or a handle from this library, not used afterwards.
        unsafe { free_handle(builder) };
        Ok(())
    });
}
