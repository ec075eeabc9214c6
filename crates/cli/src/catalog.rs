//! Where the tool keeps maps in a store: [`prollystore::catalog`] (map `NAME` is the named
//! root `NAME`, its schema the named root `NAME.schema`), under the names this tool uses.

pub use prollystore::catalog::{
    check_map_name, find_map, map_names, open_map, read_schema, schema_root_name, write_schema,
    CatalogError, MapEntry, SCHEMA_SUFFIX,
};
