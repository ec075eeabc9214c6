//! Three-way merges of tables whose schema changed, against `dolt merge`: the cases of
//! `tests/data/make_schema_merge.sh` (columns added with and without defaults, dropped,
//! indexes added and dropped, defaults and comments changed, the same change on both sides,
//! different changes on each side, a long TEXT value rewritten, VARCHAR/CHAR → TEXT and
//! VARBINARY → BLOB on either side with and without row changes on the other (a prefix index
//! on the column, long values, cell and delete conflicts), ENUM members appended, collation
//! changes, and the conflicts Dolt reports) merged by this writer must give Dolt's merge commit hash, or a conflict with
//! nothing written where Dolt reported one. Without `PROLLY_DOLT` the committed database and
//! hashes (made by that script with Dolt 2.3.1) are used; with it, the script is run again
//! with that `dolt` and its fresh output is checked too.

use std::path::Path;

use super::history::commit::Person;
use super::merges::merge::{MergeMeta, MergeOutcome};
use super::merges::row_merge::ConflictChoice;
use super::tests::{copy_db, millis, sql_meta, DOLT_ENV};
use super::tests_vc::{open, snapshot};
use crate::error::DoltError;
use prollystore_format::Address;

const DATE: &str = "2024-03-01T00:00:00Z";

/// Cases this writer refuses with an error naming the column or the table (nothing written):
/// schema changes of keyless tables.
const UNSUPPORTED: &[(&str, &str)] = &[("keyless_add", "keyless table \"t\"")];

/// Merges every case of `db` as `expected` lists it; returns the cases that merged.
fn check_cases(db: &Path, expected: &str) -> usize {
    let when = millis(DATE);
    let ws = sql_meta((when / 1000) as u64);
    let mut merged = 0;
    for line in expected.lines().filter(|l| !l.trim().is_empty()) {
        let (name, want) = line.split_once(' ').unwrap();
        // `CASE:theirs`, `CASE:ours`: the conflicting rows taken from one side, as
        // `dolt conflicts resolve --theirs` (`--ours`) takes them.
        let (case, choice) = match name.split_once(':') {
            Some((case, "theirs")) => (case, ConflictChoice::Theirs),
            Some((case, "ours")) => (case, ConflictChoice::Ours),
            _ => (name, ConflictChoice::Stop),
        };
        let (_tmp, dir) = copy_db(db);
        let mut w = open(&dir);
        w.checkout(&format!("{case}_o"), &ws).unwrap();
        drop(w);
        let before = snapshot(&dir);
        let message = format!("merge {case}");
        let meta = MergeMeta {
            author: Person {
                name: "Merge Bot",
                email: "merge@example.com",
            },
            committer: None,
            message: &message,
            author_millis: when,
            committer_millis: when as u64,
        };
        let mut w = open(&dir);
        // Merged rows' CHECKs need the expression engine.
        w.set_engine(Some(std::sync::Arc::new(
            super::test_engine::MySqlExpressions,
        )));
        let outcome = w.merge(&format!("{case}_t"), &meta, choice, &ws);
        drop(w);
        if let Some((_, column)) = UNSUPPORTED.iter().find(|(c, _)| *c == case) {
            match outcome {
                Err(DoltError::Unsupported(m)) if m.contains(column) => {}
                other => panic!("{case}: expected a refusal naming {column}, got {other:?}"),
            }
            assert!(snapshot(&dir) == before, "{case}: a refused merge wrote");
        } else if want.starts_with("conflict") || want == "refused" {
            // Schema conflicts (and what Dolt refuses outright) are reported per table with
            // the columns named; row conflicts by key.
            match outcome {
                Ok(MergeOutcome::Conflicts(c)) => {
                    eprintln!("{case}: {c:?}");
                    assert!(!c.is_empty(), "{case}");
                    assert!(c.iter().all(|c| c.table == "t"), "{case}: {c:?}");
                    let by_key = want == "conflict-rows";
                    assert!(
                        c.iter().all(|c| c.key.is_empty() != by_key),
                        "{case}: Dolt says {want}, we gave {c:?}"
                    );
                }
                other => panic!("{case}: Dolt says {want}, we gave {other:?}"),
            }
            assert!(snapshot(&dir) == before, "{case}: a refused merge wrote");
        } else {
            let want = Address::from_base32(want).unwrap();
            match outcome {
                Ok(MergeOutcome::Merged { commit, .. }) => {
                    assert_eq!(commit, want, "{case}: Dolt's merge commit")
                }
                other => panic!("{case}: Dolt merged ({want}), we gave {other:?}"),
            }
            merged += 1;
        }
    }
    merged
}

#[test]
fn schema_merges_match_dolts_committed() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let expected = std::fs::read_to_string(data.join("schema_merge.expected.txt")).unwrap();
    let merged = check_cases(&data.join("schema_merge"), &expected);
    assert!(merged >= 15, "only {merged} cases merged");
}

#[test]
fn schema_merges_match_dolts_fresh() {
    let Some(bin) = std::env::var_os(DOLT_ENV).filter(|v| !v.is_empty()) else {
        eprintln!("{DOLT_ENV} not set: schema merges checked against the committed data only");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/make_schema_merge.sh");
    let out = std::process::Command::new("sh")
        .arg(&script)
        .arg(&bin)
        .arg(tmp.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let expected = std::fs::read_to_string(tmp.path().join("schema_merge.expected.txt")).unwrap();
    let committed = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/schema_merge.expected.txt"),
    )
    .unwrap();
    // The same cases and outcomes (the hashes differ only if the script changed).
    let outcomes = |s: &str| -> Vec<(String, String)> {
        s.lines()
            .map(|l| {
                let (c, w) = l.split_once(' ').unwrap();
                let merged = Address::from_base32(w).is_ok();
                (c.to_string(), if merged { "merged" } else { w }.to_string())
            })
            .collect()
    };
    assert_eq!(outcomes(&expected), outcomes(&committed));
    check_cases(&tmp.path().join("schema_merge"), &expected);
}
