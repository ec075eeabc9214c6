//! # prollystore-conformance
//!
//! Checks prollystore and prollystore-dolt against a folder laid out like the public golden
//! vectors (data produced by running Dolt itself; see `vectors/README.md`), one category of
//! checks at a time. The `conformance` binary prints the tallies; the tests of this crate
//! assert them, since they are the only tests that need both the trees and the Dolt reader.
//!
//! Formats and trees:
//! * [`tuples`]: the tuple codec and comparator (categories `tuples`, `order`).
//! * [`chunks`]: every dumped chunk verifies and re-serializes identically (`chunks`).
//! * [`maps`]: maps read back and rebuild, edits and diffs equal Dolt's (`maps`, `edits`,
//!   `diffs`).
//!
//! Dolt databases:
//! * [`dolt`]: every expected output of every Dolt database (`dolt`), produced by
//!   [`expected`], and keyed reads (gets, ranges) checked against the same table CSVs by
//!   [`keyed`].
//! * [`branch_diff`]: row diffs between two branches against their exports (in `dolt`).
//! * [`dolt_write`]: Dolt-made write scenarios replayed from their operations with our writer
//!   (`dolt-write`): every step's hashes, then the final branches, tables, schemas and logs;
//!   [`ops`]: the replayer of a scenario's `ops.jsonl`.
//!
//! Databases are opened with `prollystore-sql`'s expression engine (VIRTUAL generated columns,
//! defaults and CHECKs computed) and schemas printed by its `SHOW CREATE TABLE`.
//!
//! Plumbing: [`records`] reads the chunk dumps, [`json`] the JSON files; [`category`] tallies.

pub mod branch_diff;
pub mod category;
pub mod chunks;
pub mod dolt;
pub mod dolt_write;
pub mod expected;
pub mod json;
pub mod keyed;
pub mod maps;
pub mod ops;
pub mod records;
pub mod tuples;

use std::path::Path;

use category::Category;

/// Runs every category found in `dir`.
pub fn run_all(dir: &Path) -> Vec<Category> {
    vec![
        tuples::check_tuples(dir),
        tuples::check_order(dir),
        chunks::check_chunks(dir),
        maps::check_maps(dir),
        maps::check_edits(dir),
        maps::check_diffs(dir),
        dolt::check_dolt(dir),
        dolt_write::check_dolt_write(dir),
    ]
}
