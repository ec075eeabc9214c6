//! The point lookup of `prolly_map_get`, one function per concrete store type.

use prollystore::format::Address;
use prollystore::store::FileStore;
use prollystore::tuples::TupleSchema;
use prollystore::TreeError;

/// `Map::get` on a file store.
#[inline(never)]
pub(crate) fn get_file<'s>(
    store: &'s FileStore,
    root: Address,
    schema: &TupleSchema,
    key: &[u8],
) -> Result<Option<&'s [u8]>, TreeError> {
    prollystore::map::get(store, root, schema, key)
}
