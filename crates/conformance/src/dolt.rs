//! Category `dolt`: every expected file of every database in DIR/dolt-db, produced by reading
//! the database with `prollystore-dolt` and compared byte for byte. Files of kinds not yet
//! implemented count as failed, with the reason. Keyed reads (gets of every row by primary
//! key, ranges) are checked against the same table CSVs ([`crate::keyed`]), and the row diff
//! between the `main` and `feature` branches against their exported contents
//! ([`crate::branch_diff`]).

use std::path::Path;

use crate::branch_diff::check_branch_diffs;
use crate::category::Category;
use crate::expected::check_database;
use crate::keyed::check_keyed;

/// Checks `DIR/dolt-db/<db>` against `DIR/dolt-db/<db>.expected` for every database found.
pub fn check_dolt(dir: &Path) -> Category {
    let root = dir.join("dolt-db");
    let Ok(entries) = std::fs::read_dir(&root) else {
        return Category::missing("dolt", format!("{} not found", root.display()));
    };
    let mut dbs: Vec<String> = entries
        .flatten()
        .filter(|e| e.path().join(".dolt").is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    dbs.sort();
    if dbs.is_empty() {
        return Category::missing("dolt", format!("no databases in {}", root.display()));
    }
    let mut cat = Category::new("dolt");
    for db in dbs {
        let expected = root.join(format!("{db}.expected"));
        match check_database(&root.join(&db), &expected) {
            Ok(results) => {
                for r in results {
                    cat.record(
                        r.outcome
                            .map_err(|e| format!("{db}.expected/{}: {e}", r.file)),
                    );
                }
            }
            Err(e) => cat.fail(format!("{db}: cannot open: {e}")),
        }
        match check_branch_diffs(&root.join(&db), &expected) {
            Ok(results) => {
                for r in results {
                    cat.record(r.outcome.map_err(|e| format!("{db} diff {}: {e}", r.file)));
                }
            }
            Err(e) => cat.fail(format!("{db}: branch diffs: {e}")),
        }
        for (file, r) in check_keyed(&root.join(&db), &expected) {
            cat.record(r.map_err(|e| format!("{db}.expected/{file} (keyed reads): {e}")));
        }
    }
    cat
}
