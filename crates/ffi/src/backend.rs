//! The store behind a `prolly_store` handle: a built-in store, or (the `remote` feature) a
//! remote read in place, so that every map function works on either unchanged. With the
//! feature it is `prollystore_remote::BuiltinOrRemote` (the type the command-line tool uses
//! too); without it, the built-in store itself.

#[cfg(not(feature = "remote"))]
pub(crate) use prollystore::BuiltinStore as Backend;
#[cfg(feature = "remote")]
pub(crate) use prollystore_remote::BuiltinOrRemote as Backend;

/// The built-in store inside `backend`, or the remote one.
pub(crate) enum Parts<'a> {
    /// A memory or file store.
    Builtin(&'a prollystore::BuiltinStore),
    /// A remote read in place.
    #[cfg(feature = "remote")]
    Remote(&'a prollystore_remote::RemoteStore),
}

/// Splits `backend` into its kinds, so that callers match the same way with or without the
/// `remote` feature.
#[inline]
pub(crate) fn parts(backend: &Backend) -> Parts<'_> {
    #[cfg(feature = "remote")]
    match backend {
        Backend::Builtin(b) => Parts::Builtin(b),
        Backend::Remote(r) => Parts::Remote(r),
    }
    #[cfg(not(feature = "remote"))]
    Parts::Builtin(backend)
}

/// [`Parts`] for a mutating call.
pub(crate) enum PartsMut<'a> {
    /// A memory or file store.
    Builtin(&'a mut prollystore::BuiltinStore),
    /// A remote read in place (read-only: nothing to mutate).
    #[cfg(feature = "remote")]
    Remote,
}

/// [`parts`] for a mutating call.
#[inline]
pub(crate) fn parts_mut(backend: &mut Backend) -> PartsMut<'_> {
    #[cfg(feature = "remote")]
    match backend {
        Backend::Builtin(b) => PartsMut::Builtin(b),
        Backend::Remote(_) => PartsMut::Remote,
    }
    #[cfg(not(feature = "remote"))]
    PartsMut::Builtin(backend)
}
