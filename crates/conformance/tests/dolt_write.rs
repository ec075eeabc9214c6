//! Category `dolt-write`: every write scenario of the vectors (made by running the real
//! `dolt`) replayed from its operations with our writer gives Dolt's commit, root value and
//! table hashes at every step, and Dolt's final branches, tables, rows, schemas and logs.

use std::path::Path;

use prollystore_conformance::dolt_write::check_dolt_write;

/// Every scenario under `dir/dolt-write` replays with no failed case, and at least `min` cases.
fn all_pass(dir: &Path, min: usize) {
    let c = check_dolt_write(dir);
    assert!(c.missing.is_none(), "{:?}", c.missing);
    assert!(
        c.failed == 0,
        "{} passed, {} failed:\n{}",
        c.passed,
        c.failed,
        c.failures.join("\n")
    );
    assert!(c.passed >= min, "only {} cases", c.passed);
}

#[test]
fn write_scenarios_hash_as_dolts_at_every_step() {
    prollystore_test_vectors::require("dolt-write/basic/ops.jsonl");
    // basic 4 steps + 6 final files, branches 11 + 17, types 5 + 16 (public set).
    all_pass(prollystore_test_vectors::dir(), 59);
}

/// The scenarios made for this repository with `scripts/dolt_scenario.py` (see
/// `tests/data/dolt-write/README.md`): what the shared set does not exercise.
#[test]
fn own_dolt_made_scenarios_replay_to_dolts_hashes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    // fkeys: 5 steps + 35 final files; collated: 6 steps + 14; json: 4 steps + 10; fkalter
    // (ALTERs on tables with foreign keys), textmerge (VARCHAR → TEXT, VARBINARY → BLOB
    // merged): 112; cschema (`_ci` values respelled across merges that change schemas) and
    // gmerge (rows with generated columns merged cell by cell): 173 in all.
    all_pass(&dir, 173);
}
