//! Scenarios of `shared/vectors/dolt-write` replayed from their operations: every recorded
//! step's commit, root value and table hashes must equal Dolt's.

use super::ops::{apply_ops, compare_step};
use super::tests::{copy_tree, scenario};
use crate::error::{DoltError, Result};

/// Runs scenario `name` on a fresh copy of `before/`; returns (steps matched, steps compared,
/// the error that stopped it).
fn run(
    name: &str,
) -> (
    Vec<usize>,
    Vec<String>,
    Option<DoltError>,
    tempfile::TempDir,
) {
    let base = scenario(name);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    copy_tree(&base.join("before"), &dir);
    let ops = std::fs::read_to_string(base.join("ops.jsonl")).unwrap();
    let steps: Vec<serde_json::Value> = std::fs::read_to_string(base.join("expected/steps.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut matched = Vec::new();
    let mut failed = Vec::new();
    let r: Result<()> = apply_ops(&dir, &ops, &mut |s| {
        let theirs = steps
            .iter()
            .find(|t| t["step"].as_u64() == Some(s.step as u64))
            .expect("a recorded step");
        match compare_step(s, theirs) {
            None => matched.push(s.step),
            Some(d) => failed.push(format!("step {}: {d}", s.step)),
        }
        Ok(())
    });
    (matched, failed, r.err(), tmp)
}

#[test]
fn basic_scenario_from_ops_hashes_as_dolts() {
    let (matched, failed, err, _tmp) = run("basic");
    assert!(err.is_none(), "{err:?}");
    assert!(failed.is_empty(), "{failed:#?}");
    assert_eq!(matched, vec![3, 6, 8]);
}

#[test]
fn types_scenario_from_ops() {
    let (matched, failed, err, _tmp) = run("types");
    eprintln!("types: matched {matched:?}, failed {failed:#?}, stopped by {err:?}");
    assert!(err.is_none(), "{err:?}");
    assert!(failed.is_empty(), "{failed:#?}");
}

#[test]
fn branches_scenario_from_ops_hashes_as_dolts() {
    let (matched, failed, err, _tmp) = run("branches");
    assert!(err.is_none(), "{err:?}");
    assert!(failed.is_empty(), "{failed:#?}");
    assert_eq!(matched, vec![5, 10, 13, 17, 18, 22, 24, 25, 26, 30]);
}

/// Schema changes (37 `alter_table` ops, two merges): every step Dolt recorded.
#[test]
fn schema_scenario_from_ops_hashes_as_dolts() {
    let (matched, failed, err, _tmp) = run("schema");
    assert!(err.is_none(), "{err:?}");
    assert!(failed.is_empty(), "{failed:#?}");
    assert_eq!(
        matched,
        vec![9, 15, 18, 23, 32, 35, 43, 47, 49, 55, 61, 67, 72, 73, 78, 81, 83]
    );
}
