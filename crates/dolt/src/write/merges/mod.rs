//! Three-way merges as Dolt merges: `merge` (fast-forward and three-way merges of roots,
//! table by table), `row_merge` (cell-wise row merge), `json_merge` (JSON documents both sides
//! changed), `schema_merge` (a table's three schemas: columns, indexes, checks, collation;
//! schema conflicts named by column; the changes Dolt merges and this writer refuses are
//! listed there), `schema_merge_rows` (rows carried into the merged schema: new columns at
//! their default, dropped ones removed, indexes kept, rebuilt or dropped).

pub(crate) mod json_merge;
pub(crate) mod merge;
pub(crate) mod row_merge;
pub(in crate::write) mod schema_merge;
pub(in crate::write) mod schema_merge_rows;
