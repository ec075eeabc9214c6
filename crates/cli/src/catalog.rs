//! Where the tool keeps maps in a store: map `NAME` is the named root `NAME` (the map's root
//! node), and its schema is the named root `NAME.schema`, a blob holding the schema text
//! ([`MapSchema::to_stored`]). Both roots change together in one commit.
//!
//! Keeping the schema as a blob (a Dolt `Blob` message) means garbage collection, `verify` and
//! other readers treat it like any other chunk, and it costs one small chunk per schema.

use prollystore::blob::{read_blob, BlobBuilder};
use prollystore::store::StoreFastPaths;
use prollystore_format::Address;

use crate::error::{Error, Result};
use crate::map_schema::MapSchema;
use crate::source::NamedRoots;

/// Suffix of schema roots.
pub const SCHEMA_SUFFIX: &str = ".schema";

/// The name of map `map`'s schema root.
pub fn schema_root_name(map: &str) -> String {
    format!("{map}{SCHEMA_SUFFIX}")
}

/// Checks a map name: non-empty, at most 1000 bytes, no control characters, not ending in
/// `.schema` (those names are the schema roots).
pub fn check_map_name(name: &str) -> Result<()> {
    if name.is_empty() || name.len() > 1000 {
        return Err(Error::msg(format!(
            "map names are 1 to 1000 bytes, {name:?} is {}",
            name.len()
        )));
    }
    if name.ends_with(SCHEMA_SUFFIX) {
        return Err(Error::msg(format!(
            "map name {name:?} ends in {SCHEMA_SUFFIX:?}, which is reserved for schemas"
        )));
    }
    if name.chars().any(char::is_control) {
        return Err(Error::msg(format!(
            "map name {name:?} has control characters"
        )));
    }
    Ok(())
}

/// Writes `schema`'s text as a blob and returns its address.
pub fn write_schema<S: StoreFastPaths + ?Sized>(store: &S, schema: &MapSchema) -> Result<Address> {
    Ok(BlobBuilder::new().write(store, schema.to_stored().as_bytes())?)
}

/// Reads the schema blob at `address`.
pub fn read_schema<S: StoreFastPaths + ?Sized>(store: &S, address: &Address) -> Result<MapSchema> {
    let mut text = Vec::new();
    read_blob(store, address, &mut text)?;
    let text = String::from_utf8(text).map_err(|_| Error::msg("the stored schema is not UTF-8"))?;
    Ok(MapSchema::from_stored(&text)?)
}

/// A map as recorded in the store: its root, its schema and the schema's address.
#[derive(Clone, Debug)]
pub struct MapEntry {
    /// The map's name.
    pub name: String,
    /// Root node of the map's tree.
    pub root: Address,
    /// Its columns.
    pub schema: MapSchema,
    /// Address of the schema blob.
    pub schema_address: Address,
}

/// The map `name`, or `None` if there is no root by that name.
pub fn find_map<S: NamedRoots + ?Sized>(store: &S, name: &str) -> Result<Option<MapEntry>> {
    check_map_name(name)?;
    let Some(root) = store.named_root(name) else {
        return Ok(None);
    };
    let Some(schema_address) = store.named_root(&schema_root_name(name)) else {
        return Err(Error::msg(format!(
            "root {name:?} has no schema root {:?}: it was not made by this tool",
            schema_root_name(name)
        )));
    };
    let schema = read_schema(store, &schema_address)
        .map_err(|e| e.context(format!("reading the schema of map {name:?}")))?;
    Ok(Some(MapEntry {
        name: name.to_string(),
        root,
        schema,
        schema_address,
    }))
}

/// The map `name`; an error naming the store's maps if there is none.
pub fn open_map<S: NamedRoots + ?Sized>(store: &S, name: &str) -> Result<MapEntry> {
    match find_map(store, name)? {
        Some(m) => Ok(m),
        None => {
            let maps = map_names(store);
            Err(Error::msg(if maps.is_empty() {
                format!("no map named {name:?} (the store has no maps)")
            } else {
                format!("no map named {name:?} (maps: {})", maps.join(", "))
            }))
        }
    }
}

/// Names of the roots that have a schema root, i.e. the tool's maps.
pub fn map_names<S: NamedRoots + ?Sized>(store: &S) -> Vec<String> {
    let roots = store.named_roots();
    roots
        .keys()
        .filter(|n| !n.ends_with(SCHEMA_SUFFIX) && roots.contains_key(&schema_root_name(n)))
        .cloned()
        .collect()
}
