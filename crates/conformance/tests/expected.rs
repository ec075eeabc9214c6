//! Every expected file of every vector database, compared byte for byte. Prints a per-database
//! tally and fails if fewer files match than already did (so regressions are caught).

use prollystore_conformance::expected::check_database;
use prollystore_test_vectors::DOLT_DATABASES;

#[test]
fn expected_outputs() {
    let dir = prollystore_test_vectors::require("dolt-db");
    let mut total_pass = 0;
    let mut total = 0;
    for db in DOLT_DATABASES {
        let results = check_database(&dir.join(db), &dir.join(format!("{db}.expected"))).unwrap();
        let pass = results.iter().filter(|r| r.outcome.is_ok()).count();
        println!("{db}: {pass}/{} files match", results.len());
        for r in &results {
            if let Err(e) = &r.outcome {
                println!("  FAIL {}: {e}", r.file);
            }
        }
        total_pass += pass;
        total += results.len();
    }
    println!("total: {total_pass}/{total}");
    // Raise this floor as more file kinds are implemented (CREATE TABLE text, WKT, storage).
    assert!(
        total_pass >= 137,
        "regression: only {total_pass}/{total} expected files match"
    );
}
