//! Checks a Dolt database against a `<db>.expected/` folder made by the `dolt` CLI, file by
//! file: each expected file is produced again by reading the database with prollystore-dolt.

use std::path::Path;

use prollystore_dolt::csv_export::export_csv;
use prollystore_dolt::csv_field::write_csv_field;
use prollystore_dolt::db::{Database, RootValue};
use prollystore_dolt::error::{DoltError, Result};
use prollystore_dolt::log_text::{log_oneline_text, log_text, tag_text};

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
fn produce(
    db: &Database,
    branch: Option<&str>,
    name: &str,
    expected_header: &str,
) -> Result<Option<Vec<u8>>> {
    let Some(branch) = branch else {
        return match name {
            "branches.txt" => branches_text(db).map(Some),
            "tags.txt" => tags_text(db).map(Some),
            "files.txt" => files_text(db).map(Some),
            "status.txt" => status_text(db),
            "storage.txt" => storage_text(db).map(Some),
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
    if name == "dolt_status.csv" {
        let head_root = db.root_value(head_commit.root)?;
        let staged = ws
            .as_ref()
            .and_then(|w| w.staged_root)
            .unwrap_or(head_commit.root);
        let staged_root = db.root_value(staged)?;
        let working_root = db.root_value(working)?;
        let mut rows = diff_tables(&head_root, &staged_root, 1);
        rows.extend(diff_tables(&staged_root, &working_root, 0));
        rows.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        let mut s = String::from("table_name,staged,status\n");
        for (n, st, what) in rows {
            s.push_str(&format!("{n},{st},{what}\n"));
        }
        return Ok(Some(s.into_bytes()));
    }
    if let Some(table) = name.strip_suffix(".schema.txt") {
        let root = db.root_value(working)?;
        let t = db.table(&root, table)?;
        let create = prollystore_sql::show_create_table(db, &root, &t)?;
        return Ok(Some(
            format!("{table} @ working\n{create};\n\n").into_bytes(),
        ));
    }
    if let Some(table) = name.strip_suffix(".create.csv") {
        let root = db.root_value(working)?;
        let t = db.table(&root, table)?;
        let create = prollystore_sql::show_create_table(db, &root, &t)?;
        let mut out = b"Table,Create Table\n".to_vec();
        write_csv_field(Some(table.as_bytes()), &mut out);
        out.push(b',');
        write_csv_field(Some(create.as_bytes()), &mut out);
        out.push(b'\n');
        return Ok(Some(out));
    }
    if let Some(stem) = name.strip_suffix(".csv") {
        let (table, view) = match stem.split_once('.') {
            Some((t, v)) => (t, Some(v)),
            None => (stem, None),
        };
        if let Some(_view) = view {
            let root: RootValue = db.root_value(working)?;
            let t = db.table(&root, table)?;
            return view_csv(db, &t, expected_header).map(Some);
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
        s.push_str(&tag_text(&t));
    }
    Ok(s.into_bytes())
}

/// Checks every file of `expected` (a `<db>.expected` folder) against the database in `db_dir`.
pub fn check_database(db_dir: &Path, expected: &Path) -> Result<Vec<FileResult>> {
    let db = prollystore_sql::open(db_dir)?;
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
    let want = std::fs::read(path);
    let header = want
        .as_ref()
        .ok()
        .and_then(|w| w.split(|&b| b == b'\n').next())
        .map(|h| String::from_utf8_lossy(h).into_owned())
        .unwrap_or_default();
    let outcome = match (produce(db, branch, name, &header), want) {
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

/// Tables that differ between two roots: (name, staged flag, status).
fn diff_tables(from: &RootValue, to: &RootValue, staged: u8) -> Vec<(String, u8, &'static str)> {
    let mut out = Vec::new();
    for (n, a) in &to.tables {
        match from.tables.iter().find(|(m, _)| m == n) {
            None => out.push((n.clone(), staged, "new table")),
            Some((_, b)) if b != a => out.push((n.clone(), staged, "modified")),
            _ => {}
        }
    }
    for (n, _) in &from.tables {
        if !to.tables.iter().any(|(m, _)| m == n) {
            out.push((n.clone(), staged, "deleted"));
        }
    }
    out
}

fn storage_text(db: &Database) -> Result<Vec<u8>> {
    use prollystore_dolt::chunks::ChunkFile;
    let dot = db.dot_dolt();
    let name = dot
        .parent()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut s = String::new();
    let src = db.source();
    for (gen, sub) in [(src.newgen(), ""), (src.oldgen(), "oldgen/")] {
        let specs = gen.manifest.iter().flat_map(|m| &m.specs);
        for (spec, file) in specs.zip(&gen.files) {
            s.push_str(&format!("Storage Artifact:\n  ID: {}\n", spec.name));
            match file {
                ChunkFile::Journal(j) => s.push_str(&format!(
                    "  Path: {name}/.dolt/noms/{sub}{}\n  Table File Metadata:\n    Snappy Chunk Count: {} (bytes: {})\n\n",
                    spec.name,
                    spec.chunk_count,
                    // `dolt admin storage` sizes the journal as if it were a table file: file
                    // length minus a 28-byte index entry per manifest chunk and a 20-byte footer.
                    j.file_len()
                        .saturating_sub(u64::from(spec.chunk_count) * 28 + 20)
                )),
                ChunkFile::Table(t) => s.push_str(&format!(
                    "  Path: {name}/.dolt/noms/{sub}{}\n  Table File Metadata:\n    Snappy Chunk Count: {} (bytes: {})\n\n",
                    spec.name, t.chunk_count(), t.data_bytes()
                )),
                ChunkFile::Archive(a) => {
                    let [sn, zs, di] = a.storage_stats();
                    s.push_str(&format!(
                        "  Path: {name}/.dolt/noms/{sub}{}.darc\n  Archive Metadata:\n    Format Version: {}\n    Snappy Chunk Count: {} (bytes: {})\n    ZStd Chunk Count: {} (bytes: {})\n    Dictionary Count: {} (bytes: {})\n\n",
                        spec.name, a.version(), sn.0, sn.1, zs.0, zs.1, di.0, di.1
                    ))
                }
            }
        }
    }
    Ok(s.into_bytes())
}

fn status_text(db: &Database) -> Result<Option<Vec<u8>>> {
    let Some(branch) = db.current_branch() else {
        return Ok(None);
    };
    let head = db.commit(db.branch_head(&branch)?)?;
    let ws = db.working_set(&branch)?;
    let clean = ws.as_ref().is_none_or(|w| {
        w.working_root == head.root && w.staged_root.is_none_or(|s| s == head.root)
    });
    if !clean {
        return Ok(None);
    }
    Ok(Some(
        format!("On branch {branch}\nnothing to commit, working tree clean\n").into_bytes(),
    ))
}

fn files_text(db: &Database) -> Result<Vec<u8>> {
    let dot = db.dot_dolt();
    let base = dot.parent().unwrap_or(dot);
    let name = base
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut files = Vec::new();
    let mut stack = vec![dot.to_path_buf()];
    while let Some(d) = stack.pop() {
        let rd = std::fs::read_dir(&d).map_err(|source| DoltError::Io {
            file: d.display().to_string(),
            source,
        })?;
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(rel) = p.strip_prefix(base) {
                files.push(format!("{name}/{}", rel.to_string_lossy()));
            }
        }
    }
    files.sort();
    let mut s = String::new();
    for f in files {
        s.push_str(&f);
        s.push('\n');
    }
    Ok(s.into_bytes())
}

/// The extra `.csv` views: the expected header names each column as a table column, or
/// `<col>_hex` (HEX), `<col>_len` (LENGTH), `<col>_srid` (ST_SRID), `<col>_wkt` (ST_AsText)
/// or `<col>_text` (VECTOR_TO_STRING).
fn view_csv(db: &Database, t: &prollystore_dolt::db::Table, header: &str) -> Result<Vec<u8>> {
    use prollystore_dolt::sql_value::SqlValue;
    use prollystore_dolt::table_rows::for_each_row;
    let visible = t.schema.visible_columns();
    let names: Vec<&str> = visible
        .iter()
        .filter_map(|&i| t.schema.columns.get(i).map(|c| c.name.as_str()))
        .collect();
    #[derive(Clone, Copy)]
    enum Op {
        Copy,
        Hex,
        Len,
        Srid,
        Text,
        Wkt,
    }
    let mut plan = Vec::new();
    for h in header.split(',') {
        let found = |n: &str| names.iter().position(|c| *c == n);
        let (col, op) = if let Some(i) = found(h) {
            (i, Op::Copy)
        } else if let Some(i) = h.strip_suffix("_hex").and_then(found) {
            (i, Op::Hex)
        } else if let Some(i) = h.strip_suffix("_len").and_then(found) {
            (i, Op::Len)
        } else if let Some(i) = h.strip_suffix("_srid").and_then(found) {
            (i, Op::Srid)
        } else if let Some(i) = h.strip_suffix("_wkt").and_then(found) {
            (i, Op::Wkt)
        } else if let Some(i) = h.strip_suffix("_text").and_then(found) {
            (i, Op::Text)
        } else {
            return Err(prollystore_dolt::error::bad_input(
                format!("expected-output column {h:?}"),
                "it names no column of the table, nor a _len, _srid, _wkt or _text view of one",
            ));
        };
        plan.push((col, op));
    }
    let mut out = Vec::new();
    out.extend_from_slice(header.as_bytes());
    out.push(b'\n');
    let mut field = Vec::new();
    for_each_row(db, t, &mut |row| {
        for (n, &(col, op)) in plan.iter().enumerate() {
            if n > 0 {
                out.push(b',');
            }
            let Some(Some(v)) = row.get(col) else {
                continue;
            };
            field.clear();
            v.csv_bytes(&mut field);
            let text: Vec<u8> = match op {
                Op::Copy => field.clone(),
                Op::Hex => field
                    .iter()
                    .flat_map(|b| format!("{b:02X}").into_bytes())
                    .collect(),
                Op::Len => field.len().to_string().into_bytes(),
                Op::Srid => {
                    let srid = field
                        .get(..4)
                        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
                    srid.map(|s| s.to_string().into_bytes()).unwrap_or_default()
                }
                Op::Wkt => prollystore_dolt::geometry::wkt(&field)
                    .unwrap_or_default()
                    .into_bytes(),
                Op::Text => {
                    let parts: Vec<String> = field
                        .chunks_exact(4)
                        .map(|c| {
                            let f = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                            SqlValue::Float(f).to_text()
                        })
                        .collect();
                    format!("[{}]", parts.join(", ")).into_bytes()
                }
            };
            write_csv_field(Some(&text), &mut out);
        }
        out.push(b'\n');
        Ok(())
    })?;
    Ok(out)
}
