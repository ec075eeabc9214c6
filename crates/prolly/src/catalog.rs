//! Named maps that remember their row schema: map `NAME` is the named root `NAME` (the map's
//! root node), and its [`RowSchema`] is the named root `NAME.schema`, a blob holding the
//! schema text ([`RowSchema::to_stored`]). Both roots change together in one commit, so
//! reopening a store needs only the map's name (layout in `docs/FORMAT.md`).
//!
//! Keeping the schema as a blob (a Dolt `Blob` message) means garbage collection, `verify` and
//! other readers treat it like any other chunk, and it costs one small chunk per schema. The
//! `prolly` CLI, the C ABI and the Python package keep their maps this way.

use std::collections::BTreeMap;

use prollystore_format::Address;
use thiserror::Error;

use crate::blob::{read_blob, BlobBuilder};
use crate::rows::{RowError, RowSchema};
use crate::store::{FileStore, StoreFastPaths};
use crate::TreeError;

/// Suffix of schema roots.
pub const SCHEMA_SUFFIX: &str = ".schema";

/// What went wrong finding, reading or naming a map.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// The name cannot be a map's name; the message says why.
    #[error("{0}")]
    BadName(String),
    /// No root has this name.
    #[error("no map named {name:?} ({})", if .maps.is_empty() { "the store has no maps".to_string() } else { format!("maps: {}", .maps.join(", ")) })]
    NoSuchMap {
        /// The name asked for.
        name: String,
        /// The store's maps.
        maps: Vec<String>,
    },
    /// A root of this name exists but has no schema root beside it.
    #[error("root {name:?} has no schema root {:?}: it was not made as a named map", schema_root_name(.name))]
    NoSchema {
        /// The root's name.
        name: String,
    },
    /// The schema blob of a map could not be read or parsed.
    #[error("reading the schema of map {name:?}: {source}")]
    Schema {
        /// The map.
        name: String,
        /// Why.
        #[source]
        source: Box<CatalogError>,
    },
    /// The stored schema text is not UTF-8.
    #[error("the stored schema is not UTF-8")]
    NotUtf8,
    /// The stored schema text is not a schema.
    #[error(transparent)]
    Row(#[from] RowError),
    /// Reading or writing the blob failed.
    #[error(transparent)]
    Tree(#[from] TreeError),
}

/// A store with named roots (a [`FileStore`]; other crates implement it for theirs).
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

/// The name of map `map`'s schema root.
pub fn schema_root_name(map: &str) -> String {
    format!("{map}{SCHEMA_SUFFIX}")
}

/// Checks a map name: non-empty, at most 1000 bytes, no control characters, not ending in
/// `.schema` (those names are the schema roots).
pub fn check_map_name(name: &str) -> Result<(), CatalogError> {
    if name.is_empty() || name.len() > 1000 {
        return Err(CatalogError::BadName(format!(
            "map names are 1 to 1000 bytes, {name:?} is {}",
            name.len()
        )));
    }
    if name.ends_with(SCHEMA_SUFFIX) {
        return Err(CatalogError::BadName(format!(
            "map name {name:?} ends in {SCHEMA_SUFFIX:?}, which is reserved for schemas"
        )));
    }
    if name.chars().any(char::is_control) {
        return Err(CatalogError::BadName(format!(
            "map name {name:?} has control characters"
        )));
    }
    Ok(())
}

/// Writes `schema`'s text as a blob and returns its address.
pub fn write_schema<S: StoreFastPaths + ?Sized>(
    store: &S,
    schema: &RowSchema,
) -> Result<Address, CatalogError> {
    Ok(BlobBuilder::new().write(store, schema.to_stored().as_bytes())?)
}

/// Reads the schema blob at `address`.
pub fn read_schema<S: StoreFastPaths + ?Sized>(
    store: &S,
    address: &Address,
) -> Result<RowSchema, CatalogError> {
    let mut text = Vec::new();
    read_blob(store, address, &mut text)?;
    let text = String::from_utf8(text).map_err(|_| CatalogError::NotUtf8)?;
    Ok(RowSchema::from_stored(&text)?)
}

/// A map as recorded in the store: its root, its schema and the schema's address.
#[derive(Clone, Debug)]
pub struct MapEntry {
    /// The map's name.
    pub name: String,
    /// Root node of the map's tree.
    pub root: Address,
    /// Its columns.
    pub schema: RowSchema,
    /// Address of the schema blob.
    pub schema_address: Address,
}

/// The map `name`, or `None` if there is no root by that name.
pub fn find_map<S: NamedRoots + ?Sized>(
    store: &S,
    name: &str,
) -> Result<Option<MapEntry>, CatalogError> {
    check_map_name(name)?;
    let Some(root) = store.named_root(name) else {
        return Ok(None);
    };
    let Some(schema_address) = store.named_root(&schema_root_name(name)) else {
        return Err(CatalogError::NoSchema {
            name: name.to_string(),
        });
    };
    let schema = read_schema(store, &schema_address).map_err(|source| CatalogError::Schema {
        name: name.to_string(),
        source: Box::new(source),
    })?;
    Ok(Some(MapEntry {
        name: name.to_string(),
        root,
        schema,
        schema_address,
    }))
}

/// The map `name`; an error naming the store's maps if there is none.
pub fn open_map<S: NamedRoots + ?Sized>(store: &S, name: &str) -> Result<MapEntry, CatalogError> {
    find_map(store, name)?.ok_or_else(|| CatalogError::NoSuchMap {
        name: name.to_string(),
        maps: map_names(store),
    })
}

/// Names of the roots that have a schema root, i.e. the named maps.
pub fn map_names<S: NamedRoots + ?Sized>(store: &S) -> Vec<String> {
    let roots = store.named_roots();
    roots
        .keys()
        .filter(|n| !n.ends_with(SCHEMA_SUFFIX) && roots.contains_key(&schema_root_name(n)))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked() {
        assert!(check_map_name("scores").is_ok());
        assert!(check_map_name("").is_err());
        assert!(check_map_name("a.schema").is_err());
        assert!(check_map_name("a\nb").is_err());
        assert_eq!(schema_root_name("m"), "m.schema");
    }
}
