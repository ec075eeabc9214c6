//! Writing Dolt databases: every chunk, root and commit byte-identical to what Dolt writes for
//! the same changes, proved against data Dolt made (the `dolt-write` scenarios and the writer
//! tests in `crates/dolt/tests/`).
//!
//! Public: [`DoltWriter`] (tables created from a [`TableDef`], altered by an
//! [`AlterStatement`], rows inserted, updated, upserted and deleted on the current branch's
//! working root, the working set saved, commits) and [`vc`] (branches, checkout, tags,
//! merges, status). `CREATE`/`ALTER TABLE` text is read by the `prollystore-sql` crate, which
//! also gives the writer its expression engine ([`crate::expressions`]).
//!
//! The modules, by concern:
//!
//! | folder | what it holds |
//! |---|---|
//! | `api.rs`, [`vc`] | the public writer and version control |
//! | `tables/` | a table's schema (`table_def`, `column_tags`, `alter_op`, `alter`) and its rows (`table_edit`, `bulk_insert`, `dates`) |
//! | `constraints/` | what a row change must pass: CHECKs, foreign keys and their ON DELETE/UPDATE actions, at a few named calls from `tables/` |
//! | `history/` | commits, branches, tags, working sets, status, merge bases, checkout |
//! | `merges/` | three-way merges: rows cell by cell, JSON documents, schemas, rows carried into a merged schema |
//! | `maps/` | Dolt's address maps and commit closures, read and edited as Dolt edits them |
//! | `storage/` | the locked store under the writer: chunks in a session overlay, the chunk journal appended, the writer lock, what each message refers to, the target a clone fills |
//!
//! What the writer does not do yet is refused by name with nothing written: CHECK and
//! expression forms the evaluator lacks, UNIQUE indexes over spatial columns, expression key
//! parts, and the three-way schema merges listed in `merges/schema_merge.rs`.

mod api;
pub(crate) mod constraints;
pub(crate) mod history;
pub(crate) mod maps;
pub(crate) mod merges;
pub(crate) mod storage;
pub(crate) mod tables;
pub mod vc;

pub use api::{CommitMeta, DoltWriter, RowMode};
pub use history::repo_state;
pub use storage::clone_target;
pub use storage::push_target;
pub use tables::alter_op::{AlterOp, AlterStatement, DefaultText, Position};
pub use tables::dates::parse_date_millis;
pub use tables::table_def::{
    CheckDef, ColumnDef, ForeignKeyAction, ForeignKeyDef, GeneratedDef, IndexDef, TableDef,
};

// The writer's tests that reach its internals are modules of this one, but their files live
// outside the library's sources, in `crates/dolt/tests/write/` (with `new_table`, a test-only
// table builder, and `helpers`, shared with the integration tests of `tests/writer/`, which
// use the public API and the `prollystore-sql` crate for SQL text and expressions).
#[cfg(test)]
#[path = "../../tests/write/crash_tests.rs"]
mod crash_tests;
#[cfg(test)]
#[path = "../../tests/write/helpers.rs"]
mod helpers;
#[cfg(test)]
#[path = "../../tests/write/new_table.rs"]
mod new_table;
#[cfg(test)]
#[path = "../../tests/write/tests.rs"]
mod tests;
#[cfg(test)]
#[path = "../../tests/write/tests_bootstrap.rs"]
mod tests_bootstrap;
#[cfg(test)]
#[path = "../../tests/write/tests_checkout_fk.rs"]
mod tests_checkout_fk;
#[cfg(test)]
#[path = "../../tests/write/tests_chunked.rs"]
mod tests_chunked;
#[cfg(test)]
#[path = "../../tests/write/tests_errors.rs"]
mod tests_errors;
#[cfg(test)]
#[path = "../../tests/write/tests_fk_stored.rs"]
mod tests_fk_stored;
#[cfg(test)]
#[path = "../../tests/write/tests_schema_merge.rs"]
mod tests_schema_merge;
// The SQL crate's expression engine, compiled into this crate's test build for the internal
// tests that need one (the SQL crate's own build implements the library's trait, not this
// test build's).
#[cfg(test)]
#[allow(dead_code, missing_docs)]
#[path = "../../../sql/src/generated.rs"]
mod test_engine;
#[cfg(test)]
#[path = "../../tests/write/tests_vc.rs"]
mod tests_vc;
