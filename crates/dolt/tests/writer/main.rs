//! The writer through its public API, with `prollystore-sql` for `CREATE`/`ALTER TABLE` text
//! and expressions (defaults, generated columns, CHECKs): rules, foreign-key actions, JSON,
//! geometry, prefix indexes and schema changes, each checked against data Dolt made and, when
//! `PROLLY_DOLT` names a `dolt` binary, against Dolt itself.

// Shared with the crate's internal tests, which use other helpers of it.
#[allow(dead_code)]
#[path = "../write/helpers.rs"]
mod helpers;

mod api_tests;
mod bulk_insert;
mod tests_alter;
mod tests_alter_generated;
mod tests_errors;
mod tests_fk_actions;
mod tests_geometry;
mod tests_json;
mod tests_keyless_fk;
mod tests_many_indexes;
mod tests_prefix_index;
mod tests_rules;
