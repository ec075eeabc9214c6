//! Where read commands read from: a local store directory, or a remote read in place
//! (`prolly -s s3://bucket/prefix get …`), as one store type shared with the C ABI
//! ([`ReadStore`], `prollystore_remote::BuiltinOrRemote`).

/// A local file store or a remote store read in place.
pub type ReadStore = prollystore_remote::BuiltinOrRemote;

/// True if `store` names a remote (`scheme://…`) rather than a directory.
pub fn is_remote_url(store: &str) -> bool {
    store.contains("://")
}

/// A store with named roots (maps are kept as roots, see [`crate::catalog`]).
pub use prollystore::catalog::NamedRoots;
