//! Scenarios of `shared/vectors/dolt-write` replayed from their operations: every recorded
//! step's commit, root value and table hashes must equal Dolt's.

use std::path::{Path, PathBuf};

use prollystore_format::Address;

use super::ops::{apply_ops, StepState};
use crate::error::{DoltError, Result};

fn scenario(name: &str) -> PathBuf {
    prollystore_test_vectors::require("dolt-write").join(name)
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::write(&target, std::fs::read(entry.path()).unwrap()).unwrap();
        }
    }
}

/// Compares one step with Dolt's record of it; returns a description of what differs.
pub(crate) fn compare_step(ours: &StepState, theirs: &serde_json::Value) -> Option<String> {
    let a = |v: &serde_json::Value| v.as_str().and_then(|s| Address::from_base32(s).ok());
    let mut diffs = Vec::new();
    if a(&theirs["root"]) != Some(ours.root) {
        diffs.push(format!("root {} (Dolt {})", ours.root, theirs["root"]));
    }
    let want: Vec<(String, Option<Address>)> = theirs["tables"]
        .as_object()
        .map(|o| o.iter().map(|(k, v)| (k.clone(), a(v))).collect())
        .unwrap_or_default();
    for (name, addr) in &want {
        let got = ours.tables.iter().find(|(n, _)| n == name).map(|(_, a)| *a);
        if got != *addr {
            diffs.push(format!("table {name} {got:?} (Dolt {addr:?})"));
        }
    }
    if ours.tables.len() != want.len() {
        diffs.push(format!(
            "{} tables (Dolt {})",
            ours.tables.len(),
            want.len()
        ));
    }
    if a(&theirs["commit"]) != Some(ours.commit) {
        diffs.push(format!(
            "commit {} (Dolt {})",
            ours.commit, theirs["commit"]
        ));
    }
    (!diffs.is_empty()).then(|| diffs.join("; "))
}

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
fn branches_scenario_from_ops_until_version_control() {
    let (matched, failed, err, _tmp) = run("branches");
    eprintln!("branches: matched {matched:?}, failed {failed:#?}, stopped by {err:?}");
    assert!(failed.is_empty(), "{failed:#?}");
    assert!(matched.contains(&5), "{matched:?}");
}
