//! Checks a database against a `<db>.expected/` folder made by the `dolt` CLI, file by file.
//! Shared by this crate's tests and the conformance runner.

use std::path::Path;

use crate::db::{log_date, log_oneline_text, log_text, Database, RootValue};
use crate::error::{DoltError, Result};
use crate::rows::{export_csv, write_csv_field};

/// The outcome for one expected file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileResult {
    /// Path relative to the expected folder.
    pub file: String,
    /// `Ok(())` when our output equals the file byte for byte; else why not.
    pub outcome: std::result::Result<(), String>,
}

/// Produces what we would write for an expected file, or `Ok(None)` if this kind of file is
/// not implemented.
fn produce(db: &Database, branch: Option<&str>, name: &str) -> Result<Option<Vec<u8>>> {
    let Some(branch) = branch else {
        return match name {
            "branches.txt" => branches_text(db).map(Some),
            "tags.txt" => tags_text(db).map(Some),
            _ => Ok(None),
        };
    };
    let head = db.branch_head(branch)?;
    let ws = db.working_set(branch)?;
    let head_commit = db.commit(head)?;
    let working = ws
        .as_ref()
        .map(|w| w.working_root)
        .unwrap_or(head_commit.root);
    match name {
        "log.txt" => return Ok(Some(log_text(&db.log(head)?).into_bytes())),
        "log_oneline.txt" => return Ok(Some(log_oneline_text(&db.log(head)?).into_bytes())),
        "head.csv" => {
            let text = if branch == "wip" {
                let staged = ws
                    .as_ref()
                    .and_then(|w| w.staged_root)
                    .unwrap_or(head_commit.root);
                format!("head,staged_hash,working_hash\n{head},{staged},{working}\n")
            } else {
                format!("head,db_hash\n{head},{working}\n")
            };
            return Ok(Some(text.into_bytes()));
        }
        "table_hashes.csv" => {
            let root = db.root_value(working)?;
            let mut s = String::from("TABLE_NAME,table_hash\n");
            let mut tables = root.tables.clone();
            tables.sort();
            for (n, a) in tables {
                s.push_str(&format!("{n},{a}\n"));
            }
            return Ok(Some(s.into_bytes()));
        }
        _ => {}
    }
    if let Some(table) = name.strip_suffix(".csv") {
        if table.contains('.') {
            return Ok(None);
        }
        let root: RootValue = db.root_value(working)?;
        let t = db.table(&root, table)?;
        let mut out = Vec::new();
        export_csv(db, &t, &mut out)?;
        return Ok(Some(out));
    }
    Ok(None)
}

fn branches_text(db: &Database) -> Result<Vec<u8>> {
    let current = db.current_branch().unwrap_or_default();
    let branches = db.branches()?;
    let width = branches.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    let mut s = String::new();
    for (name, head) in branches {
        let c = db.commit(head)?;
        let mark = if name == current { '*' } else { ' ' };
        s.push_str(&format!("{mark} {name:<width$} {head} {}\n", c.message));
    }
    Ok(s.into_bytes())
}

fn tags_text(db: &Database) -> Result<Vec<u8>> {
    let mut s = String::new();
    for t in db.tags()? {
        s.push_str(&format!("{}\t{}\n", t.name, t.commit));
        s.push_str(&format!("Tagger: {} <{}>\n", t.tagger_name, t.tagger_email));
        s.push_str(&format!(
            "Date:   {}\n\n",
            log_date(t.user_timestamp_millis)
        ));
        for line in t.message.lines() {
            s.push_str(&format!("\t{line}\n"));
        }
        s.push('\n');
    }
    Ok(s.into_bytes())
}

/// Checks every file of `expected` (a `<db>.expected` folder) against the database in `db_dir`.
pub fn check_database(db_dir: &Path, expected: &Path) -> Result<Vec<FileResult>> {
    let db = Database::open(db_dir)?;
    let mut results = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(expected)
        .map_err(|source| DoltError::Io {
            file: expected.display().to_string(),
            source,
        })?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        let fname = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if path.is_dir() {
            let mut files: Vec<_> = std::fs::read_dir(&path)
                .map_err(|source| DoltError::Io {
                    file: path.display().to_string(),
                    source,
                })?
                .filter_map(|e| e.ok())
                .map(|e| e.path())
                .collect();
            files.sort();
            for f in files {
                let name = f
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                results.push(check_one(
                    &db,
                    Some(&fname),
                    &name,
                    &f,
                    format!("{fname}/{name}"),
                ));
            }
        } else {
            results.push(check_one(&db, None, &fname, &path, fname.clone()));
        }
    }
    Ok(results)
}

fn check_one(
    db: &Database,
    branch: Option<&str>,
    name: &str,
    path: &Path,
    label: String,
) -> FileResult {
    let outcome = match (produce(db, branch, name), std::fs::read(path)) {
        (_, Err(e)) => Err(format!("cannot read expected file: {e}")),
        (Err(e), _) => Err(format!("error: {e}")),
        (Ok(None), _) => Err("not implemented".to_string()),
        (Ok(Some(got)), Ok(want)) => {
            if got == want {
                Ok(())
            } else {
                Err(first_difference(&got, &want))
            }
        }
    };
    FileResult {
        file: label,
        outcome,
    }
}

/// Describes where two outputs first differ (line number and both lines, shortened).
pub fn first_difference(got: &[u8], want: &[u8]) -> String {
    let g: Vec<&[u8]> = got.split(|&b| b == b'\n').collect();
    let w: Vec<&[u8]> = want.split(|&b| b == b'\n').collect();
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        if a != b {
            let show = |x: &[u8]| {
                let s = String::from_utf8_lossy(x).into_owned();
                s.chars().take(160).collect::<String>()
            };
            return format!("line {}: got {:?}, want {:?}", i + 1, show(a), show(b));
        }
    }
    format!("{} lines, want {}", g.len(), w.len())
}

#[allow(dead_code)]
fn unused(out: &mut Vec<u8>) {
    write_csv_field(None, out)
}
