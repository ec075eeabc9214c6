//! The row diff from `main` to `feature` of every vector database equals the key-wise
//! difference of the two branches' table exports made by Dolt.

use prollystore_conformance::branch_diff::check_branch_diffs;
use prollystore_test_vectors::DOLT_DATABASES;

#[test]
fn branch_diffs_equal_export_differences() {
    let dir = prollystore_test_vectors::require("dolt-db");
    let mut checked = 0;
    for db in DOLT_DATABASES {
        let results =
            check_branch_diffs(&dir.join(db), &dir.join(format!("{db}.expected"))).unwrap();
        for r in &results {
            println!("{db} {}: {:?}", r.file, r.outcome);
            assert!(r.outcome.is_ok(), "{db} {}: {:?}", r.file, r.outcome);
        }
        checked += results.len();
    }
    assert!(checked >= 4, "only {checked} table diffs checked");
}
