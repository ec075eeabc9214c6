//! Where read commands read from: a local store directory, or a remote read in place
//! (`prolly -s s3://bucket/prefix get …`), as one store type shared with the C ABI
//! ([`ReadStore`], `prollystore_remote::BuiltinOrRemote`).

use std::collections::BTreeMap;

use prollystore::format::Address;
use prollystore::{FileStore, StoreFastPaths};

/// A local file store or a remote store read in place.
pub type ReadStore = prollystore_remote::BuiltinOrRemote;

/// True if `store` names a remote (`scheme://…`) rather than a directory.
pub fn is_remote_url(store: &str) -> bool {
    store.contains("://")
}

/// A store with named roots (maps are kept as roots, see [`crate::catalog`]).
pub trait NamedRoots: StoreFastPaths {
    /// Every named root.
    fn named_roots(&self) -> &BTreeMap<String, Address>;

    /// The root called `name`.
    fn named_root(&self, name: &str) -> Option<Address> {
        self.named_roots().get(name).copied()
    }
}

impl NamedRoots for FileStore {
    fn named_roots(&self) -> &BTreeMap<String, Address> {
        self.roots()
    }
}

impl NamedRoots for ReadStore {
    fn named_roots(&self) -> &BTreeMap<String, Address> {
        self.roots()
    }
}
