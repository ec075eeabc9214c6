//! The point lookup of `prolly_map_get`, one function per concrete store type, each in a module
//! of its own.
//!
//! Why: `map::get` against one store type compiles to a descent with the key search inlined
//! (the node views stay in registers) only where it is the sole caller of the search in its
//! codegen unit, as in a Rust program calling `Map::get` in one place. Dispatching on the
//! `BuiltinStore` inside one `Map::get` (the earlier code) or putting both instances in one module
//! left the search out of line and the nodes copied through memory: about 13% more
//! instructions per get than Rust and 1.2-1.4x its time (benches/benches/ffi.rs). Keep
//! other callers of the key search out of these modules.

/// File stores.
pub(crate) mod file {
    use prollystore::format::Address;
    use prollystore::store::FileStore;
    use prollystore::tuples::TupleSchema;
    use prollystore::TreeError;

    /// `Map::get` on a file store.
    #[inline(never)]
    pub(crate) fn get<'s>(
        store: &'s FileStore,
        root: Address,
        schema: &TupleSchema,
        key: &[u8],
    ) -> Result<Option<&'s [u8]>, TreeError> {
        prollystore::map::get(store, root, schema, key)
    }
}

/// Memory stores.
pub(crate) mod memory {
    use prollystore::format::Address;
    use prollystore::tuples::TupleSchema;
    use prollystore::{MemoryStore, TreeError};

    /// `Map::get` on a memory store.
    #[inline(never)]
    pub(crate) fn get<'s>(
        store: &'s MemoryStore,
        root: Address,
        schema: &TupleSchema,
        key: &[u8],
    ) -> Result<Option<&'s [u8]>, TreeError> {
        prollystore::map::get(store, root, schema, key)
    }
}

/// Remote stores read in place (the `remote` feature).
#[cfg(feature = "remote")]
pub(crate) mod remote {
    use prollystore::format::Address;
    use prollystore::tuples::TupleSchema;
    use prollystore::TreeError;
    use prollystore_remote::RemoteStore;

    /// `Map::get` on a remote store.
    #[inline(never)]
    pub(crate) fn get<'s>(
        store: &'s RemoteStore,
        root: Address,
        schema: &TupleSchema,
        key: &[u8],
    ) -> Result<Option<&'s [u8]>, TreeError> {
        prollystore::map::get(store, root, schema, key)
    }
}
