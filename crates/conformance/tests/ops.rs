//! Scenarios of `shared/vectors/dolt-write` replayed from their operations: every recorded
//! step's commit, root value and table hashes must equal Dolt's.

use prollystore_conformance::ops::{apply_ops, compare_step};
use prollystore_dolt::{DoltError, Result, SqlValue, State};

// The Dolt crate's test helpers (public API only).
#[allow(dead_code)]
#[path = "../../dolt/tests/write/helpers.rs"]
mod helpers;

use helpers::{copy_db, copy_tree, dolt_bytes, dolt_user as dolt, meta, scenario};

fn text(v: &str) -> Option<SqlValue> {
    Some(SqlValue::Text(v.into()))
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

/// ALTER forms added in session 25 (generated columns, unnamed CHECKs, new primary keys on a
/// foreign key's parent; 27 `alter_table` ops, recorded by `scripts/dolt_scenario.py` running
/// Dolt 2.3.1): every step Dolt recorded.
#[test]
fn alter_forms_scenario_from_ops_hashes_as_dolts() {
    let (matched, failed, err, _tmp) = run("alter_forms");
    assert!(err.is_none(), "{err:?}");
    assert!(failed.is_empty(), "{failed:#?}");
    assert_eq!(matched, vec![9, 18, 26, 32, 37, 43]);
}

/// Dolt logs, selects, diffs and commits on databases our writer made from the scenarios'
/// ops, and our reader reads what Dolt then wrote.
#[test]
fn dolt_works_on_what_we_wrote() {
    for name in ["basic", "types"] {
        let base = scenario(name);
        let (_tmp, dir) = copy_db(&base.join("before"));
        let ops = std::fs::read_to_string(base.join("ops.jsonl")).unwrap();
        apply_ops(&dir, &ops, &mut |_| Ok(())).unwrap();
        let Some(log) = dolt(&dir, &["log", "--oneline"]) else {
            eprintln!("PROLLY_DOLT not set: Dolt's reading of our {name} database not checked");
            return;
        };
        let want = std::fs::read_to_string(base.join("expected/branch/main/log_oneline.plain.txt"))
            .unwrap();
        assert_eq!(log, want, "{name}: dolt log --oneline");
        for table in std::fs::read_to_string(base.join("expected/branch/main/tables.txt"))
            .unwrap()
            .lines()
        {
            let theirs =
                std::fs::read(base.join(format!("expected/branch/main/{table}.csv"))).unwrap();
            let t = prollystore_sql::open(&dir)
                .unwrap()
                .table_at("main", State::Committed, table)
                .unwrap();
            let order = match t.schema.keyless {
                true => t
                    .schema
                    .visible_columns()
                    .iter()
                    .map(|&i| t.schema.columns[i].name.clone())
                    .collect::<Vec<_>>(),
                false => t
                    .schema
                    .key_columns
                    .iter()
                    .map(|&i| t.schema.columns[i].name.clone())
                    .collect(),
            };
            let q = format!("SELECT * FROM {table} ORDER BY {}", order.join(", "));
            let csv = dolt_bytes(&dir, &["sql", "-r", "csv", "-q", &q]).unwrap();
            assert!(csv == theirs, "{name}: dolt sql {q}");
        }
        let diff = dolt(&dir, &["diff", "HEAD~1"]).unwrap();
        assert!(diff.contains("diff --dolt"), "{name}: {diff}");
        let status = dolt(&dir, &["status"]).unwrap();
        assert!(status.contains("nothing to commit"), "{name}: {status}");
        if name == "basic" {
            dolt(
                &dir,
                &[
                    "sql",
                    "-q",
                    "INSERT INTO items VALUES (1000, 'from dolt', 1, 2.50, NULL)",
                ],
            )
            .unwrap();
            dolt(
                &dir,
                &[
                    "commit",
                    "-am",
                    "Dolt on top",
                    "--date",
                    "2024-02-01T00:00:00",
                ],
            )
            .unwrap();
            let db = prollystore_sql::open(&dir).unwrap();
            let head = db.branch_head("main").unwrap();
            let c = db.commit(head).unwrap();
            assert_eq!(c.message, "Dolt on top");
            let t = db.table_at("main", State::Committed, "items").unwrap();
            let r = t.reader(&db).unwrap();
            let row = r.get(&[SqlValue::Int(1000)]).unwrap().unwrap();
            assert_eq!(row[1], text("from dolt"));
            // And we write on top of Dolt's commit again.
            drop(db);
            let mut w = prollystore_sql::writer(&dir).unwrap();
            w.delete("items", &[vec![SqlValue::Int(1000)]]).unwrap();
            w.commit(&meta("Ours after Dolt's")).unwrap();
            drop(w);
            let log = dolt(&dir, &["log", "--oneline", "-n", "3"]).unwrap();
            assert!(
                log.contains("Ours after Dolt's") && log.contains("Dolt on top"),
                "{log}"
            );
            let count = dolt(
                &dir,
                &["sql", "-r", "csv", "-q", "SELECT COUNT(*) FROM items"],
            )
            .unwrap();
            assert_eq!(count, "COUNT(*)\n232\n");
        }
    }
}
