//! `prolly dolt DBDIR import` and `prolly dolt DBDIR commit`: table changes from CSV into the
//! current branch's working set, and commits of it, written as Dolt writes them (one thin call
//! each into `prollystore_dolt::write`).

use std::borrow::Cow;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use prollystore_dolt::write::{parse_date_millis, CommitMeta, DoltWriter, RowMode, TableDef};
use prollystore_sql::{FromSql, SqlWriter};

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
/// else its bytes (a quoted empty field is the empty string), borrowed from the file's text
/// unless quotes had to be undone.
type Field<'a> = Option<Cow<'a, [u8]>>;

/// CSV text split into records one at a time as `dolt table import` reads it, fields borrowed
/// from the text where they can be. Dolt's reader (checked against `dolt table import` on
/// crafted files, `crates/cli/tests/dolt_write.rs`): Unicode whitespace before a field is
/// dropped (so a field of only spaces is NULL, and spaces before a quote leave a quoted
/// field); trailing whitespace and whitespace inside quotes are kept; a quote inside an
/// unquoted field is an ordinary byte; a closing quote must be followed by a comma or the end
/// of the line; CRLF is read as LF (inside quotes too), a lone CR is kept; empty lines
/// between records are skipped.
#[derive(Clone)]
struct CsvRecords<'a> {
    data: &'a [u8],
    /// Where the next record starts.
    at: usize,
    /// Line of `at`, for errors.
    line: usize,
}

/// How many bytes of Unicode whitespace (`char::is_whitespace`, the same set as Go's
/// `unicode.IsSpace`) start `d`, stopping at a line feed (which ends the record).
fn leading_space(d: &[u8]) -> usize {
    let mut n = 0;
    while let Some(&b) = d.get(n) {
        if b.is_ascii() {
            if b == b'\n' || !matches!(b, b' ' | b'\t'..=b'\r') {
                break;
            }
            n += 1;
            continue;
        }
        let rest = &d[n..];
        let c = (2..=rest.len().min(4))
            .find_map(|e| std::str::from_utf8(&rest[..e]).ok())
            .and_then(|s| s.chars().next());
        match c {
            Some(c) if c.is_whitespace() => n += c.len_utf8(),
            _ => break,
        }
    }
    n
}

impl<'a> CsvRecords<'a> {
    fn new(data: &'a [u8]) -> CsvRecords<'a> {
        CsvRecords {
            data,
            at: 0,
            line: 1,
        }
    }

    /// These records (from `at` on) in two halves split at a line end (the second knowing its
    /// first line), when the text is large and has no quote (so that every line is one
    /// record); `None` otherwise.
    fn halves(&self) -> Option<(CsvRecords<'a>, CsvRecords<'a>)> {
        let rest = self.data.get(self.at..)?;
        if rest.len() < 1 << 20 || rest.contains(&b'"') {
            return None;
        }
        let mid = self.at + rest.len() / 2;
        let split = mid + self.data[mid..].iter().position(|&c| c == b'\n')? + 1;
        let lines = self.data[self.at..split]
            .iter()
            .filter(|&&c| c == b'\n')
            .count();
        let first = CsvRecords {
            data: &self.data[..split],
            at: self.at,
            line: self.line,
        };
        let second = CsvRecords {
            data: self.data,
            at: split,
            line: self.line + lines,
        };
        Some((first, second))
    }

    /// Moves past empty lines (LF, CRLF, or a CR that ends the text).
    fn skip_empty_lines(&mut self) {
        loop {
            match self.data.get(self.at..).unwrap_or_default() {
                [b'\n', ..] => self.at += 1,
                [b'\r', b'\n', ..] => self.at += 2,
                [b'\r'] => {
                    self.at += 1;
                    return;
                }
                _ => return,
            }
            self.line += 1;
        }
    }

    /// The next record, or `None` at the end of the text.
    fn next_record(&mut self, width: usize) -> Option<Result<Vec<Field<'a>>>> {
        self.skip_empty_lines();
        if self.at >= self.data.len() {
            return None;
        }
        let mut record = Vec::with_capacity(width);
        loop {
            match self.field() {
                Err(e) => return Some(Err(e)),
                Ok((field, last)) => {
                    record.push(field);
                    if last {
                        return Some(Ok(record));
                    }
                }
            }
        }
    }

    /// The field at `at` (after the whitespace that starts it), and whether it ends its
    /// record.
    fn field(&mut self) -> Result<(Field<'a>, bool)> {
        let d = self.data;
        self.at += leading_space(&d[self.at..]);
        let start = self.at;
        if d.get(start) == Some(&b'"') {
            return self.quoted_field();
        }
        let plain = |end: usize| (end > start).then(|| Cow::Borrowed(&d[start..end]));
        let len = start
            + d[start..]
                .iter()
                .position(|&c| matches!(c, b',' | b'\n'))
                .unwrap_or(d.len() - start);
        let Some(&c) = d.get(len) else {
            // The text's end: a CR there is dropped, as Dolt drops it.
            self.at = len;
            let end = if len > start && d[len - 1] == b'\r' {
                len - 1
            } else {
                len
            };
            return Ok((plain(end), true));
        };
        self.at = len + 1;
        if c == b',' {
            return Ok((plain(len), false));
        }
        self.line += 1;
        let end = if len > start && d[len - 1] == b'\r' {
            len - 1
        } else {
            len
        };
        Ok((plain(end), true))
    }

    /// A field that starts with a quote; its closing quote is followed by a comma or the end
    /// of the line.
    fn quoted_field(&mut self) -> Result<(Field<'a>, bool)> {
        let d = self.data;
        let first_line = self.line;
        let mut field = Vec::new();
        let mut i = self.at + 1;
        while i < d.len() {
            match d[i] {
                b'"' if d.get(i + 1) == Some(&b'"') => {
                    field.push(b'"');
                    i += 2;
                }
                b'"' => {
                    let (at, last) = match d.get(i + 1..).unwrap_or_default() {
                        [b',', ..] => (i + 2, false),
                        [] | [b'\r'] => (d.len(), true),
                        [b'\n', ..] => (i + 2, true),
                        [b'\r', b'\n', ..] => (i + 3, true),
                        _ => return Err(self.quote_error()),
                    };
                    self.line += usize::from(d.get(at - 1) == Some(&b'\n'));
                    self.at = at;
                    return Ok((Some(Cow::Owned(field)), last));
                }
                b'\r' if d.get(i + 1) == Some(&b'\n') => i += 1,
                c => {
                    self.line += usize::from(c == b'\n');
                    field.push(c);
                    i += 1;
                }
            }
        }
        Err(Error::msg(format!(
            "line {first_line}: a quoted field that does not end"
        )))
    }

    fn quote_error(&self) -> Error {
        Error::msg(format!(
            "line {}: text after a closing quote (a field that starts with a quote ends \
             with one, before a comma or the line's end)",
            self.line
        ))
    }

    /// The line on which data record `row` (0 for the one after the header) starts, reading
    /// from the start of the text.
    fn line_of_row(data: &'a [u8], row: usize) -> Option<usize> {
        let mut records = CsvRecords::new(data);
        for _ in 0..=row {
            records.next_record(0)?.ok()?;
        }
        (records.at < data.len()).then_some(records.line)
    }
}

/// A writer's error about "row N" of the rows it was given (counted from 0 after the header),
/// said as the line of `file` that record starts on, as every other import error is (the
/// header is line 1, as in Dolt's "on line N").
fn at_line(e: prollystore_dolt::DoltError, data: &[u8], file: &Path) -> Error {
    if let prollystore_dolt::DoltError::BadValue {
        table,
        column,
        reason,
    } = &e
    {
        let digits = reason
            .strip_prefix("row ")
            .map(|r| r.len() - r.trim_start_matches(|c: char| c.is_ascii_digit()).len());
        if let Some(n) = digits.filter(|&n| n > 0) {
            let rest = &reason[4 + n..];
            if let Some(line) = reason[4..4 + n]
                .parse()
                .ok()
                .and_then(|row| CsvRecords::line_of_row(data, row))
            {
                return Error::msg(format!(
                    "{}: line {line}: table {table:?}, column {column:?}{rest}",
                    file.display()
                ));
            }
        }
    }
    e.into()
}

/// Records of a CSV file given to the writer as one stream: where they start (and on which
/// line), and how reading them ended.
struct Part<'a> {
    records: CsvRecords<'a>,
    /// The first bad record, and whether the records were read to the end.
    outcome: Mutex<(Option<Error>, bool)>,
}

impl<'a> Part<'a> {
    fn new(records: CsvRecords<'a>) -> Part<'a> {
        Part {
            records,
            outcome: Mutex::new((None, false)),
        }
    }

    /// The records as rows of `width` fields, without the fields `keep` marks `false`; the
    /// first bad one ends them (and is kept).
    fn rows<'p>(
        &'p self,
        width: usize,
        keep: &'p [bool],
        file: &'p Path,
    ) -> impl Iterator<Item = Vec<Field<'a>>> + Send + 'p {
        let mut records = self.records.clone();
        *self.lock() = (None, false);
        std::iter::from_fn(move || {
            let fail = |e: Error| {
                self.lock().0 = Some(e);
                None
            };
            let line = records.line;
            let Some(record) = records.next_record(width) else {
                self.lock().1 = true;
                return None;
            };
            let record = match record {
                Ok(rec) => rec,
                Err(e) => return fail(e.context(file.display())),
            };
            if record.len() != width {
                return fail(Error::msg(format!(
                    "{}: line {line}: {} fields for {width} columns",
                    file.display(),
                    record.len(),
                )));
            }
            if keep.iter().all(|&k| k) {
                return Some(record);
            }
            Some(
                record
                    .into_iter()
                    .zip(keep)
                    .filter_map(|(f, &k)| k.then_some(f))
                    .collect(),
            )
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (Option<Error>, bool)> {
        self.outcome.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The bad record, if reading stopped at one, and whether the records were read to the
    /// end.
    fn outcome(&self) -> (Option<Error>, bool) {
        std::mem::take(&mut *self.lock())
    }
}

/// `import`: applies the rows of the CSV file `file` (a header of column names, then one
/// record per row, values as `dolt sql -r csv` prints them) to `table`, creating it first from
/// `create` (a `CREATE TABLE` statement) if given, and saves the working set. Nothing is
/// written if any row is rejected. Records are parsed as the writer takes them, not held.
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
    let mut records = CsvRecords::new(&data);
    let header = match records.next_record(0) {
        None => {
            return Err(Error::msg(format!(
                "{} is empty (no header)",
                file.display()
            )))
        }
        Some(h) => h.map_err(|e| e.context(file.display()))?,
    };
    let names = header
        .into_iter()
        .map(|h| {
            // Dolt trims spaces, tabs, CR and LF around header names.
            h.and_then(|b| String::from_utf8(b.into_owned()).ok())
                .map(|n| n.trim_matches([' ', '\t', '\r', '\n']).to_string())
                .filter(|n| !n.is_empty())
                .ok_or_else(|| {
                    Error::msg(format!(
                        "{}: a header field is empty or not UTF-8",
                        file.display()
                    ))
                })
        })
        .collect::<Result<Vec<String>>>()?;
    let mut w = prollystore_sql::writer(dir)?;
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
    for n in &names {
        if !columns.iter().any(|c| c.name.eq_ignore_ascii_case(n)) {
            return Err(Error::msg(format!("table {table} has no column {n:?}")));
        }
    }
    // A column named twice: the first field is taken and the others left out, as `dolt
    // table import` does (and says).
    let keep: Vec<bool> = (0..names.len())
        .map(|i| !names[..i].iter().any(|m| m.eq_ignore_ascii_case(&names[i])))
        .collect();
    if keep.contains(&false) {
        writeln!(out, "Extra columns in import file:")?;
        for (n, _) in names.iter().zip(&keep).filter(|(_, &k)| !k) {
            writeln!(out, "\t{n}")?;
        }
    }
    // The first bad record stops the rows (the writer then sees fewer) and is reported
    // before anything is saved. A large file without quotes (each line a record) is given
    // in two halves, the second read on another thread (`apply_fields_in_two`); each half
    // knows its first line, and the first failure in file order is reported.
    let width = names.len();
    let names: Vec<&String> = names
        .iter()
        .zip(&keep)
        .filter(|(_, &k)| k)
        .map(|(n, _)| n)
        .collect();
    let parts: Vec<Part> = match records.halves() {
        Some((first, second)) => vec![Part::new(first), Part::new(second)],
        None => vec![Part::new(records)],
    };
    let cols: Vec<&str> = names.iter().map(|n| n.as_str()).collect();
    let applied = {
        let rows = |k: usize| parts[k].rows(width, &keep, file);
        let apply = |w: &mut DoltWriter, mode: RowMode| match parts.len() {
            1 => w.apply_fields(mode, table, &cols, || rows(0)),
            _ => w.apply_fields_in_two(mode, table, &cols, || (rows(0), rows(1))),
        };
        match mode {
            ImportMode::Upsert => apply(&mut w, RowMode::Upsert),
            ImportMode::Replace => {
                w.truncate(table)?;
                apply(&mut w, RowMode::Insert)
            }
            ImportMode::Delete => apply(&mut w, RowMode::Delete),
        }
    };
    // A part that failed, unless an earlier part stopped before its end (the writer refused
    // one of its rows: that error is the first).
    for part in &parts {
        let (failed, done) = part.outcome();
        if let Some(e) = failed {
            return Err(e);
        }
        if !done {
            break;
        }
    }
    let count = applied.map_err(|e| at_line(e, &data, file))?;
    let (name, email) = identity(dir);
    w.save((&name, &email), now_millis() as u64 / 1000)?;
    writeln!(
        out,
        "{count} rows of {table} imported into the working set of {}",
        w.branch()
    )?;
    Ok(())
}

/// `alter`: one `ALTER TABLE` statement on the current branch's working set.
pub fn alter(dir: &Path, sql: &str, out: &mut dyn Write) -> Result<()> {
    let mut w = prollystore_sql::writer(dir)?;
    w.alter(sql)?;
    let (name, email) = identity(dir);
    w.save((&name, &email), now_millis() as u64 / 1000)?;
    writeln!(out, "altered in the working set of {}", w.branch())?;
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
    let (name, email, millis) = author_and_date(dir, author, date)?;
    let mut w = prollystore_sql::writer(dir)?;
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

/// The author of a commit, merge or tag — `--author 'Name <email>'`, else Dolt's configured
/// user — and its time in Unix milliseconds: `--date`, else now.
pub(crate) fn author_and_date(
    dir: &Path,
    author: Option<&str>,
    date: Option<&str>,
) -> Result<(String, String, i64)> {
    let (name, email) = match author {
        Some(a) => parse_author(a)?,
        None => identity(dir),
    };
    if name.is_empty() || email.is_empty() {
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
    Ok((name, email, millis))
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

    /// Every record of `data`, or the first error.
    fn parse_csv(data: &[u8]) -> Result<Vec<Vec<Option<Vec<u8>>>>> {
        let mut records = CsvRecords::new(data);
        let mut out = Vec::new();
        while let Some(r) = records.next_record(0) {
            out.push(r?.into_iter().map(|f| f.map(Cow::into_owned)).collect());
        }
        Ok(out)
    }

    #[test]
    fn csv_fields_keep_null_apart_from_empty() {
        let r = parse_csv(b"a,b,c\r\n1,,\"\"\n\"x,\"\"y\"\"\nz\",2,3").unwrap();
        assert_eq!(r.len(), 3);
        assert_eq!(r[1], vec![Some(b"1".to_vec()), None, Some(Vec::new())]);
        assert_eq!(r[2][0], Some(b"x,\"y\"\nz".to_vec()));
        assert!(parse_csv(b"a\n\"open").is_err());
        assert_eq!(
            parse_csv(b"a\nx\"y").unwrap()[1],
            vec![Some(b"x\"y".to_vec())]
        );
        assert!(parse_csv(b"a\n\"x\"\"").is_err());
        assert!(parse_csv(b"a\n\"x\"y").is_err());
        // Whitespace before a field goes (a field of it is NULL), after it stays; empty
        // lines are skipped; CRLF inside quotes is LF; a lone CR stays.
        let r = parse_csv(b" \"a\",c\rd\r\n\r\n\n \t,\xc2\xa0x \n\"1\r\n2\"\r").unwrap();
        assert_eq!(r[0], vec![Some(b"a".to_vec()), Some(b"c\rd".to_vec())]);
        assert_eq!(r[1], vec![None, Some(b"x ".to_vec())]);
        assert_eq!(r[2], vec![Some(b"1\n2".to_vec())]);
        assert_eq!(r.len(), 3);
        assert_eq!(
            parse_author("Ada L <ada@example.com>").unwrap(),
            ("Ada L".into(), "ada@example.com".into())
        );
        assert!(parse_author("nobody").is_err());
    }
}
