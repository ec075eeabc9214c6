//! A table's schema and rows as the writer changes them.
//!
//! * `table_def` (`TableDef`, `ColumnDef`, …): a table's schema message as Dolt writes it
//!   (stored type text, encodings, tags, clustered and secondary index layout, checks,
//!   collation, comment); `column_tags`: new columns' tags as Dolt derives them (Go's
//!   `math/rand`, reproduced); `alter_op`: an `ALTER TABLE`'s clauses, which `alter` applies.
//! * `table_edit`: row changes of one table (values encoded and checked, large values in blob
//!   trees, keyless rows by hash with counts, every index maintained, unique keys enforced,
//!   prefix indexes cut as Dolt cuts them, VIRTUAL columns computed for index keys) as map
//!   edits in memory; `bulk_insert`: rows streamed into an empty table (the import path:
//!   encoded once into packed buffers, each index sorted and built bottom-up; the common column types'
//!   text is encoded straight into tuples by `codec::text_fields`); `dates`: date text.
//!
//! The constraints a row change must pass are the sibling folder `constraints/`.

pub(in crate::write) mod alter;
pub(in crate::write) mod alter_op;
pub(in crate::write) mod bulk_insert;
pub(crate) mod column_tags;
pub(in crate::write) mod column_tags_cooked;
pub(in crate::write) mod dates;
pub(in crate::write) mod table_def;
pub(crate) mod table_edit;
