//! The compact schema syntax (`id:bigint,name:varchar(40)?`) and the schema text stored with
//! each map: [`prollystore::rows`], under the names this tool uses.

pub use prollystore::rows::{format_columns, Column, RowSchema as MapSchema};
