//! Category `dolt-write`: every scenario in DIR/dolt-write (made by running the real `dolt`)
//! replayed from its `ops.jsonl` onto a copy of its `before/` database with our writer. Each
//! recorded step (commit, merge, tag) is one case: the commit, root value and table hashes must
//! be Dolt's (for tags, the tagged commit). When the ops ran to the end, the final branches and,
//! per branch, `SHOW TABLES`, every table's rows (as `dolt sql -r csv` prints them), every
//! schema (`dolt schema show`) and the log are cases too. An op the writer cannot do yet stops
//! the scenario: the steps it did not reach count as failed, with the reason.

use std::path::{Path, PathBuf};

use prollystore_dolt::csv_export::export_csv;
use prollystore_dolt::log_text::log_text;
use prollystore_dolt::{Database, State};
use prollystore_sql::open as open_db;

use crate::ops::{apply_ops, compare_step};
use serde_json::Value;

use crate::category::Category;
use crate::expected::first_difference;

/// Runs every scenario of `DIR/dolt-write`.
pub fn check_dolt_write(dir: &Path) -> Category {
    let root = dir.join("dolt-write");
    let Ok(entries) = std::fs::read_dir(&root) else {
        return Category::missing("dolt-write", format!("{} not found", root.display()));
    };
    let mut scenarios: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("ops.jsonl").is_file() && p.join("before").is_dir())
        .collect();
    scenarios.sort();
    if scenarios.is_empty() {
        return Category::missing("dolt-write", format!("no scenarios in {}", root.display()));
    }
    let mut cat = Category::new("dolt-write");
    for s in scenarios {
        check_scenario(&s, &mut cat);
    }
    cat
}

/// A scratch directory removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            // Copied by content: the vectors may be read-only, the copy must be writable.
            std::fs::write(&target, std::fs::read(entry.path())?)?;
        }
    }
    Ok(())
}

fn read_jsonl(path: &Path) -> Result<Vec<Value>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).map_err(|e| format!("{}: {e}", path.display())))
        .collect()
}

fn check_scenario(dir: &Path, cat: &mut Category) {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let steps = match read_jsonl(&dir.join("expected/steps.jsonl")) {
        Ok(s) => s,
        Err(e) => return cat.fail(format!("{name}: {e}")),
    };
    let ops = match std::fs::read_to_string(dir.join("ops.jsonl")) {
        Ok(s) => s,
        Err(e) => return cat.fail(format!("{name}: ops.jsonl: {e}")),
    };
    let scratch = Scratch(std::env::temp_dir().join(format!(
        "prolly-conformance-write-{}-{name}",
        std::process::id()
    )));
    let _ = std::fs::remove_dir_all(&scratch.0);
    let db_dir = scratch.0.join("db");
    if let Err(e) = copy_tree(&dir.join("before"), &db_dir) {
        return cat.fail(format!("{name}: copying before/: {e}"));
    }
    // `init` is the starting point, not replayed: the copy's head must be Dolt's init commit.
    for s in steps.iter().filter(|s| s["op"] == "init") {
        cat.record(check_init(&db_dir, s).map_err(|e| format!("{name} step 0 (init): {e}")));
    }
    let mut reached = Vec::new();
    let result = apply_ops(&db_dir, &ops, &mut |ours| {
        reached.push(ours.step as u64);
        let theirs = steps
            .iter()
            .find(|t| t["step"].as_u64() == Some(ours.step as u64));
        let outcome = match theirs {
            None => Err(format!("Dolt recorded no step {}", ours.step)),
            Some(t) => compare_step(ours, t).map_or(Ok(()), Err),
        };
        cat.record(outcome.map_err(|e| format!("{name} step {} ({}): {e}", ours.step, ours.op)));
        Ok(())
    });
    for s in steps.iter().filter(|s| s["op"] != "init") {
        let step = s["step"].as_u64().unwrap_or(0);
        if !reached.contains(&step) {
            let why = match &result {
                Err(e) => format!("not reached: {e}"),
                Ok(()) => "not reached".to_string(),
            };
            cat.fail(format!("{name} step {step} ({}): {why}", s["op"]));
        }
    }
    if let Err(e) = result {
        return cat.fail(format!("{name}: final state not checked: {e}"));
    }
    match open_db(&db_dir) {
        Ok(db) => check_final(&name, &db, &dir.join("expected"), cat),
        Err(e) => cat.fail(format!("{name}: cannot open the result: {e}")),
    }
}

/// The copied `before/` is at Dolt's init commit.
fn check_init(db_dir: &Path, step: &Value) -> Result<(), String> {
    let db = open_db(db_dir).map_err(|e| e.to_string())?;
    let branch = step["branch"].as_str().unwrap_or("main");
    let head = db.branch_head(branch).map_err(|e| e.to_string())?;
    if Some(head.to_base32().as_str()) != step["commit"].as_str() {
        return Err(format!("head {head}, Dolt {}", step["commit"]));
    }
    Ok(())
}

/// Branch heads, and per branch: tables, rows, schemas, log.
fn check_final(name: &str, db: &Database, expected: &Path, cat: &mut Category) {
    let refs: Value = match std::fs::read_to_string(expected.join("refs.json"))
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
    {
        Ok(v) => v,
        Err(e) => return cat.fail(format!("{name} refs.json: {e}")),
    };
    let ours: Vec<(String, String)> = match db.branches() {
        Ok(b) => b.into_iter().map(|(n, a)| (n, a.to_base32())).collect(),
        Err(e) => return cat.fail(format!("{name} branches: {e}")),
    };
    let theirs: Vec<(String, String)> = refs["branches"]
        .as_object()
        .map(|o| {
            o.iter()
                .map(|(n, a)| (n.clone(), a.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default();
    cat.record(if ours == theirs {
        Ok(())
    } else {
        Err(format!("{name} branches {ours:?}, Dolt {theirs:?}"))
    });
    let Ok(branch_dirs) = std::fs::read_dir(expected.join("branch")) else {
        return;
    };
    let mut branches: Vec<String> = branch_dirs
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    branches.sort();
    for branch in branches {
        let bdir = expected.join("branch").join(&branch);
        let Ok(files) = std::fs::read_dir(&bdir) else {
            continue;
        };
        let mut files: Vec<String> = files
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        for file in files {
            let Some(got) = produce(db, &branch, &file) else {
                continue;
            };
            let outcome = got.map_err(|e| e.to_string()).and_then(|got| {
                let want = std::fs::read(bdir.join(&file)).map_err(|e| e.to_string())?;
                if got == want {
                    Ok(())
                } else {
                    Err(first_difference(&got, &want))
                }
            });
            cat.record(outcome.map_err(|e| format!("{name} {branch}/{file}: {e}")));
        }
    }
}

/// What we print for an expected per-branch file, or `None` for files not compared
/// (`log.txt` and `log_oneline.txt` carry Dolt's forced colour codes; the plain forms are).
fn produce(db: &Database, branch: &str, file: &str) -> Option<prollystore_dolt::Result<Vec<u8>>> {
    let run = || -> prollystore_dolt::Result<Option<Vec<u8>>> {
        if file == "log.plain.txt" {
            let head = db.branch_head(branch)?;
            return Ok(Some(
                log_text(&db.log(head).collect::<Result<Vec<_>, _>>()?).into_bytes(),
            ));
        }
        if file == "tables.txt" {
            let root = db.root_at(branch, State::Committed)?;
            let mut names: Vec<&str> = root.tables.iter().map(|(n, _)| n.as_str()).collect();
            names.sort();
            let mut out = String::new();
            for n in names {
                out.push_str(n);
                out.push('\n');
            }
            return Ok(Some(out.into_bytes()));
        }
        if let Some(table) = file.strip_suffix(".schema.txt") {
            let root = db.root_at(branch, State::Committed)?;
            let t = db.table(&root, table)?;
            let create = prollystore_sql::show_create_table(db, &root, &t)?;
            return Ok(Some(
                format!("{table} @ {branch}\n{create};\n\n").into_bytes(),
            ));
        }
        if let Some(table) = file.strip_suffix(".csv") {
            let root = db.root_at(branch, State::Committed)?;
            let t = db.table(&root, table)?;
            let mut out = Vec::new();
            export_csv(db, &t, &mut out)?;
            return Ok(Some(out));
        }
        Ok(None)
    };
    run().transpose()
}
