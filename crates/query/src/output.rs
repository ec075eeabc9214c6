//! A query's result printed as `dolt sql -r csv|json|table` prints it: every value as Dolt's
//! text ([`prollystore_arrow::cell_text::write_cell`]); CSV quoted as Dolt quotes it (an
//! empty string as `""`, NULL as nothing); JSON as `{"rows": [...]}` with each row's keys in
//! byte order, numbers, booleans and JSON values bare and NULLs left out; a table boxed with `+---+` rules,
//! NULL shown as `NULL`.

use std::io::Write;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Field, Float32Type, Float64Type};
use prollystore_arrow::cell_text::write_cell;

use prollystore_dolt::csv_field::write_csv_field;
use prollystore_format::json::write_go_string;
use prollystore_format::value_text;

use crate::error::{Error, Result};
use crate::mysql_json::is_json;

/// The forms `-r` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Comma-separated values with a header line.
    Csv,
    /// `{"rows": [{...}, ...]}`.
    Json,
    /// A boxed table (`tabular` is Dolt's name for it).
    #[value(alias = "tabular")]
    Table,
}

/// One cell's text (`None`: NULL).
fn cell(field: &Field, array: &ArrayRef, r: usize, buf: &mut Vec<u8>) -> Result<bool> {
    buf.clear();
    if array.is_null(r) {
        return Ok(false);
    }
    write_cell(field, array, r, buf)?;
    Ok(true)
}

/// Writes `batches` to `out` in `format`, headed by `headers` (one per column).
pub fn write(
    format: Format,
    headers: &[String],
    batches: &[RecordBatch],
    out: &mut dyn Write,
) -> Result<()> {
    let io = |e: std::io::Error| Error::Unsupported(format!("writing the result: {e}"));
    match format {
        Format::Csv => write_csv(headers, batches, out).map_err(io),
        Format::Json => write_json(headers, batches, out, io),
        Format::Table => write_table(headers, batches, out, io),
    }
}

fn write_csv(
    headers: &[String],
    batches: &[RecordBatch],
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let mut line = Vec::new();
    for (i, h) in headers.iter().enumerate() {
        if i > 0 {
            line.push(b',');
        }
        write_csv_field(Some(h.as_bytes()), &mut line);
    }
    line.push(b'\n');
    out.write_all(&line)?;
    let mut buf = Vec::new();
    for batch in batches {
        let schema = batch.schema();
        for r in 0..batch.num_rows() {
            line.clear();
            for (c, array) in batch.columns().iter().enumerate() {
                if c > 0 {
                    line.push(b',');
                }
                let present =
                    cell(schema.field(c), array, r, &mut buf).map_err(std::io::Error::other)?;
                write_csv_field(present.then_some(&buf[..]), &mut line);
            }
            line.push(b'\n');
            out.write_all(&line)?;
        }
    }
    Ok(())
}

/// Whether a column's values print bare in JSON.
fn bare(t: &DataType) -> bool {
    t.is_numeric() && !matches!(t, DataType::Decimal128(..) | DataType::Decimal256(..))
        || *t == DataType::Boolean
}

/// A cell of a JSON row as `dolt sql -r json` prints it: doubles and floats as Go's
/// `encoding/json` writes them, a decimal as its own digits even where Dolt types it as a
/// DOUBLE (a `SUM` or `AVG` of decimals: Dolt's JSON shows the value it holds), the rest as
/// [`cell`].
fn json_cell(field: &Field, array: &ArrayRef, r: usize, buf: &mut Vec<u8>) -> Result<bool> {
    buf.clear();
    if array.is_null(r) {
        return Ok(false);
    }
    match array.data_type() {
        DataType::Float64 => {
            let v = array.as_primitive::<Float64Type>().value(r);
            if v.is_finite() {
                value_text::write_json_f64(buf, v);
                return Ok(true);
            }
        }
        DataType::Float32 => {
            let v = array.as_primitive::<Float32Type>().value(r);
            if v.is_finite() {
                value_text::write_json_f32(buf, v);
                return Ok(true);
            }
        }
        // Only a field with metadata (a decimal marked as a DOUBLE) needs a plain copy.
        DataType::Decimal128(..) | DataType::Decimal256(..) if !field.metadata().is_empty() => {
            let plain = Field::new(field.name(), field.data_type().clone(), true);
            write_cell(&plain, array, r, buf)?;
            return Ok(true);
        }
        _ => {}
    }
    cell(field, array, r, buf)
}

fn write_json(
    headers: &[String],
    batches: &[RecordBatch],
    out: &mut dyn Write,
    io: impl Fn(std::io::Error) -> Error,
) -> Result<()> {
    let mut order: Vec<usize> = (0..headers.len()).collect();
    order.sort_by(|&a, &b| headers[a].as_bytes().cmp(headers[b].as_bytes()));
    let mut text = Vec::from(&b"{\"rows\": ["[..]);
    let mut first = true;
    let mut buf = Vec::new();
    for batch in batches {
        let schema = batch.schema();
        for r in 0..batch.num_rows() {
            if !first {
                text.push(b',');
            }
            first = false;
            text.push(b'{');
            let mut first_key = true;
            for &c in &order {
                let field = schema.field(c);
                if !json_cell(field, batch.column(c), r, &mut buf)? {
                    continue;
                }
                if !first_key {
                    text.push(b',');
                }
                first_key = false;
                write_go_string(headers[c].as_bytes(), &mut text);
                text.push(b':');
                let json = is_json(field.metadata());
                if json {
                    // Dolt's JSON rows hold documents without spaces (a computed one's text
                    // has MySQL's `", "` and `": "`).
                    compact_json(&buf, &mut text);
                } else if bare(field.data_type())
                    && std::str::from_utf8(&buf)
                        .ok()
                        .and_then(|v| v.parse::<f64>().ok())
                        .is_some_and(f64::is_finite)
                    || *field.data_type() == DataType::Boolean
                {
                    text.extend_from_slice(&buf);
                } else {
                    // As Go writes it: a byte that is not UTF-8 as `\ufffd`.
                    write_go_string(&buf, &mut text);
                }
            }
            text.push(b'}');
        }
    }
    if first {
        // No row: Dolt prints an empty object and an empty line.
        return out.write_all(b"{}\n\n").map_err(io);
    }
    text.extend_from_slice(b"]}\n");
    out.write_all(&text).map_err(io)
}

/// Appends JSON text `doc` without the spaces and line breaks outside its strings.
fn compact_json(doc: &[u8], out: &mut Vec<u8>) {
    let (mut in_string, mut escaped) = (false, false);
    for &b in doc {
        if in_string {
            in_string = escaped || b != b'"';
            escaped = !escaped && b == b'\\';
        } else if b == b'"' {
            in_string = true;
        } else if b.is_ascii_whitespace() {
            continue;
        }
        out.push(b);
    }
}

fn write_table(
    headers: &[String],
    batches: &[RecordBatch],
    out: &mut dyn Write,
    io: impl Fn(std::io::Error) -> Error,
) -> Result<()> {
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut buf = Vec::new();
    for batch in batches {
        let schema = batch.schema();
        for r in 0..batch.num_rows() {
            let mut row = Vec::with_capacity(headers.len());
            for (c, array) in batch.columns().iter().enumerate() {
                row.push(if cell(schema.field(c), array, r, &mut buf)? {
                    String::from_utf8_lossy(&buf).into_owned()
                } else {
                    "NULL".to_string()
                });
            }
            rows.push(row);
        }
    }
    let width = |c: usize| {
        rows.iter()
            .map(|r| r[c].chars().count())
            .chain([headers[c].chars().count()])
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..headers.len()).map(width).collect();
    let rule: String = widths
        .iter()
        .map(|w| format!("+{}", "-".repeat(w + 2)))
        .collect::<String>()
        + "+\n";
    let line = |cells: &[String]| -> String {
        cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("| {c:<w$} "))
            .collect::<String>()
            + "|\n"
    };
    if rows.is_empty() {
        // No row: Dolt prints an empty line.
        return out.write_all(b"\n").map_err(io);
    }
    let mut text = String::new();
    text.push_str(&rule);
    text.push_str(&line(headers));
    text.push_str(&rule);
    for r in &rows {
        text.push_str(&line(r));
    }
    text.push_str(&rule);
    // Dolt ends the table with an empty line.
    text.push('\n');
    out.write_all(text.as_bytes()).map_err(io)
}
