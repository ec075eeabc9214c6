//! `prolly dolt DBDIR import` and `prolly dolt DBDIR commit`: table changes from CSV into the
//! current branch's working set, and commits of it, written as Dolt writes them (one thin call
//! each into `prollystore_dolt::write`).

use std::io::Write;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use prollystore_dolt::schema::SqlType;
use prollystore_dolt::write::ops::parse_date_millis;
use prollystore_dolt::write::{CommitMeta, DoltWriter, RowMode, TableDef};
use prollystore_dolt::SqlValue;

use crate::error::{Error, Result};

/// How `import` applies the file's rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImportMode {
    /// Insert new keys, update the others (`dolt table import -u`).
    Upsert,
    /// Replace every row of the table by the file's (`dolt table import -r`).
    Replace,
    /// Delete the rows whose keys the file lists.
    Delete,
}

/// One CSV field: `None` for an empty unquoted field (NULL, as Dolt's CSV export writes it),
/// else its bytes (a quoted empty field is the empty string).
type Field = Option<Vec<u8>>;

/// Splits CSV text (RFC 4180: `"` quotes, `""` inside quotes, CRLF or LF) into records.
fn parse_csv(data: &[u8]) -> Result<Vec<Vec<Field>>> {
    let mut records = Vec::new();
    let mut record: Vec<Field> = Vec::new();
    let mut field = Vec::new();
    let (mut quoted, mut in_quotes, mut at_start) = (false, false, true);
    let mut line = 1usize;
    let mut i = 0;
    let end_field = |record: &mut Vec<Field>, field: &mut Vec<u8>, quoted: bool| {
        record.push(if field.is_empty() && !quoted {
            None
        } else {
            Some(std::mem::take(field))
        });
    };
    while i < data.len() {
        let c = data[i];
        if in_quotes {
            match c {
                b'"' if data.get(i + 1) == Some(&b'"') => {
                    field.push(b'"');
                    i += 1;
                }
                b'"' => in_quotes = false,
                b'\n' => {
                    line += 1;
                    field.push(c);
                }
                _ => field.push(c),
            }
        } else {
            match c {
                b'"' if field.is_empty() && !quoted => {
                    in_quotes = true;
                    quoted = true;
                }
                b'"' => {
                    return Err(Error::msg(format!(
                        "CSV line {line}: a quote inside an unquoted field"
                    )))
                }
                b',' => {
                    end_field(&mut record, &mut field, quoted);
                    quoted = false;
                }
                b'\r' if data.get(i + 1) == Some(&b'\n') => {}
                b'\n' => {
                    end_field(&mut record, &mut field, quoted);
                    quoted = false;
                    records.push(std::mem::take(&mut record));
                    line += 1;
                    at_start = true;
                    i += 1;
                    continue;
                }
                _ => field.push(c),
            }
        }
        at_start = false;
        i += 1;
    }
    if in_quotes {
        return Err(Error::msg(format!(
            "CSV line {line}: unterminated quoted field"
        )));
    }
    if !at_start || !field.is_empty() || quoted {
        end_field(&mut record, &mut field, quoted);
        records.push(record);
    }
    Ok(records)
}

/// `import`: applies the rows of the CSV file `file` (a header of column names, then one
/// record per row, values as `dolt sql -r csv` prints them) to `table`, creating it first from
/// `create` (a `CREATE TABLE` statement) if given, and saves the working set. Nothing is
/// written if any row is rejected.
pub fn import(
    dir: &Path,
    table: &str,
    file: &Path,
    create: Option<&str>,
    mode: ImportMode,
    out: &mut dyn Write,
) -> Result<()> {
    let data =
        std::fs::read(file).map_err(|e| Error::msg(format!("reading {}: {e}", file.display())))?;
    let records = parse_csv(&data).map_err(|e| e.context(file.display()))?;
    let Some((header, rows)) = records.split_first() else {
        return Err(Error::msg(format!(
            "{} is empty (no header)",
            file.display()
        )));
    };
    let names = header
        .iter()
        .map(|h| {
            h.as_ref()
                .and_then(|b| String::from_utf8(b.clone()).ok())
                .ok_or_else(|| {
                    Error::msg(format!(
                        "{}: a header field is empty or not UTF-8",
                        file.display()
                    ))
                })
        })
        .collect::<Result<Vec<String>>>()?;
    let mut w = DoltWriter::open(dir)?;
    if let Some(sql) = create {
        let def = TableDef::from_sql(sql)?;
        if !def.name.eq_ignore_ascii_case(table) {
            return Err(Error::msg(format!(
                "--create makes table {:?}, not {table:?}",
                def.name
            )));
        }
        w.create_table(&def)?;
    }
    let columns = w.columns(table)?;
    let binary: Vec<bool> = names
        .iter()
        .map(|n| {
            columns
                .iter()
                .find(|c| c.name.eq_ignore_ascii_case(n))
                .map(|c| matches!(c.sql_type, SqlType::Binary { .. }))
                .ok_or_else(|| Error::msg(format!("table {table} has no column {n:?}")))
        })
        .collect::<Result<_>>()?;
    let mut values = Vec::with_capacity(rows.len());
    for (r, record) in rows.iter().enumerate() {
        if record.len() != names.len() {
            return Err(Error::msg(format!(
                "{} record {}: {} fields for {} columns",
                file.display(),
                r + 1,
                record.len(),
                names.len()
            )));
        }
        let row = record
            .iter()
            .zip(&binary)
            .map(|(f, &bin)| match f {
                None => Ok(None),
                Some(b) if bin => Ok(Some(SqlValue::Bytes(b.clone()))),
                Some(b) => String::from_utf8(b.clone())
                    .map(|s| Some(SqlValue::Text(s)))
                    .map_err(|_| {
                        Error::msg(format!(
                            "{} record {}: a value is not UTF-8",
                            file.display(),
                            r + 1
                        ))
                    }),
            })
            .collect::<Result<Vec<_>>>()?;
        values.push(row);
    }
    let cols: Vec<&str> = names.iter().map(String::as_str).collect();
    match mode {
        ImportMode::Upsert => w.apply(RowMode::Upsert, table, &cols, &values)?,
        ImportMode::Replace => {
            w.truncate(table)?;
            w.apply(RowMode::Insert, table, &cols, &values)?
        }
        ImportMode::Delete => w.apply(RowMode::Delete, table, &cols, &values)?,
    }
    let (name, email) = identity(dir);
    w.save((&name, &email), now_millis() as u64 / 1000)?;
    writeln!(
        out,
        "{} rows of {table} imported into the working set of {}",
        values.len(),
        w.branch()
    )?;
    Ok(())
}

/// `commit`: stages every change of the current branch's working set and commits it.
pub fn commit(
    dir: &Path,
    message: &str,
    author: Option<&str>,
    date: Option<&str>,
    out: &mut dyn Write,
) -> Result<()> {
    let (name, email) = match author {
        Some(a) => parse_author(a)?,
        None => identity(dir),
    };
    if name.is_empty() {
        return Err(Error::msg(
            "no author: give --author 'Name <email>' or set user.name and user.email in Dolt's config",
        ));
    }
    let millis = match date {
        Some(d) => parse_date_millis(d).ok_or_else(|| {
            Error::msg(format!(
                "--date {d:?}: expected YYYY-MM-DD, YYYY-MM-DDTHH:MM:SS or with Z / ±HH:MM"
            ))
        })?,
        None => now_millis(),
    };
    let mut w = DoltWriter::open(dir)?;
    if w.is_clean()? {
        return Err(Error::msg(format!(
            "nothing to commit on {} (the working set equals the head commit)",
            w.branch()
        )));
    }
    let address = w.commit(&CommitMeta {
        message: message.to_string(),
        author_name: name,
        author_email: email,
        author_millis: millis,
        committer: None,
        committer_millis: None,
    })?;
    writeln!(out, "{address}")?;
    Ok(())
}

/// `Name <email>` as (name, email).
fn parse_author(text: &str) -> Result<(String, String)> {
    let (name, rest) = text
        .split_once('<')
        .ok_or_else(|| Error::msg(format!("--author {text:?}: expected 'Name <email>'")))?;
    let email = rest
        .strip_suffix('>')
        .ok_or_else(|| Error::msg(format!("--author {text:?}: expected 'Name <email>'")))?;
    Ok((name.trim().to_string(), email.trim().to_string()))
}

/// `user.name` and `user.email` from the database's config, else Dolt's global config
/// (`$HOME/.dolt/config_global.json`); empty when neither says.
fn identity(dir: &Path) -> (String, String) {
    let mut files = vec![dir.join(".dolt/config.json")];
    if let Some(home) = std::env::var_os("HOME") {
        files.push(Path::new(&home).join(".dolt/config_global.json"));
    }
    let (mut name, mut email) = (String::new(), String::new());
    for f in files {
        let Some(config) = std::fs::read_to_string(&f)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        else {
            continue;
        };
        let get = |k: &str| config[k].as_str().unwrap_or_default().to_string();
        if name.is_empty() {
            name = get("user.name");
        }
        if email.is_empty() {
            email = get("user.email");
        }
    }
    (name, email)
}

fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_keep_null_apart_from_empty() {
        let r = parse_csv(b"a,b,c\r\n1,,\"\"\n\"x,\"\"y\"\"\nz\",2,3").unwrap();
        assert_eq!(r.len(), 3);
        assert_eq!(r[1], vec![Some(b"1".to_vec()), None, Some(Vec::new())]);
        assert_eq!(r[2][0], Some(b"x,\"y\"\nz".to_vec()));
        assert!(parse_csv(b"a\n\"open").is_err());
        assert_eq!(
            parse_author("Ada L <ada@example.com>").unwrap(),
            ("Ada L".into(), "ada@example.com".into())
        );
    }
}
