//! Streaming CSV export identical to `dolt sql -r csv -q "select * from t"`.
//!
//! Rows go straight from the tree's leaf nodes to one reused output buffer: the codec's one
//! decoder ([`RowPlan::decode`]) reads each stored field by the table's plan and hands it to
//! the CSV sink (`CsvSink`), which prints it as `dolt sql -r csv` does. The common kinds
//! (integers, floats, one-word decimals, dates, datetimes, plain text) are printed straight from
//! their stored bytes with no per-row or per-field allocation.
//!
//! Reading a leaf costs about as much as printing it, and both happen on the reader threads of
//! the bulk leaf reader ([`crate::leaf_reader`], `print_leaves`): each reader reads and checks a
//! batch of leaves and prints their rows into the batch's buffer; the calling thread writes the
//! printed batches out in key order.
//!
//! Keyless tables are the exception: Dolt shows them sorted by all columns, so their rows are
//! collected and sorted first.

use prollystore_format::message::Node;
use prollystore_format::tuple::{Date, Decimal, Tuple};
use prollystore_format::Collation;
use std::io::Write;

use crate::codec::{set_text, FieldSink, RowPlan};
use crate::csv_field::write_csv_field;
use crate::db::{Database, Table};
use crate::error::{DoltError, Result};
use crate::leaf_reader::{run_leaves, LeafBatch};
use crate::sql_value::{compare_rows, write_decimal, SqlValue};
use crate::table_rows::for_each_row;
use crate::value_text;

/// Output is handed to the writer in pieces of about this size.
const FLUSH_BYTES: usize = 256 << 10;

/// The CSV lines of one batch of leaves, printed on a reader thread.
#[derive(Default)]
struct Printed {
    csv: Vec<u8>,
    rows: u64,
}

/// Prints the rows of one verified leaf as CSV lines into the buffer, using the scratch
/// buffers; returns the number of rows. Called on the reader threads.
type PrintLeaf<'p> = dyn Fn(Node<'_>, &mut Scratch, &mut Vec<u8>) -> Result<u64> + Sync + 'p;

/// Prints every leaf of the clustered index with `print`, in key order, on the bulk leaf
/// reader's threads ([`run_leaves`]), and writes the text to `out`; returns the number of rows.
fn print_leaves(
    db: &Database,
    table: &Table,
    print: &PrintLeaf<'_>,
    out: &mut dyn Write,
) -> Result<u64> {
    let io = |e: std::io::Error| DoltError::Io {
        file: "CSV output".into(),
        source: e,
    };
    let work = |batch: &mut LeafBatch<Printed>, scratch: &mut Scratch| -> Result<()> {
        let mut printed = std::mem::take(&mut batch.out);
        printed.csv.clear();
        printed.rows = 0;
        for node in batch.nodes() {
            printed.rows += print(node?, scratch, &mut printed.csv)?;
        }
        batch.out = printed;
        Ok(())
    };
    let mut rows = 0u64;
    run_leaves::<Printed, Scratch>(db, table, false, &work, &mut |batch| {
        out.write_all(&batch.out.csv).map_err(io)?;
        rows += batch.out.rows;
        Ok(true)
    })?;
    Ok(rows)
}

/// Reusable buffers of one printing thread.
#[derive(Default)]
struct Scratch {
    /// An out-of-band value's bytes.
    blob: Vec<u8>,
}

/// The CSV sink of the codec: each value's text as `dolt sql -r csv` prints it, appended to
/// `out` (CSV-quoted where needed; NULL is the empty field). Numbers, dates and plain ASCII
/// text go out as they are, with no allocation.
struct CsvSink<'o> {
    out: &'o mut Vec<u8>,
}

impl FieldSink for CsvSink<'_> {
    #[inline]
    fn null(&mut self) {}
    #[inline]
    fn int(&mut self, v: i64) -> bool {
        value_text::write_i64(self.out, v);
        true
    }
    #[inline]
    fn uint(&mut self, v: u64) -> bool {
        value_text::write_u64(self.out, v);
        true
    }
    #[inline]
    fn float(&mut self, v: f32) -> bool {
        value_text::write_f32(self.out, v);
        true
    }
    #[inline]
    fn double(&mut self, v: f64) -> bool {
        value_text::write_f64(self.out, v);
        true
    }
    #[inline(always)]
    fn decimal(&mut self, d: &Decimal<'_>, scale: u8) -> bool {
        // The usual shape of DECIMAL(≤19) values, stored at the column's scale with one
        // 8-byte word of coefficient, is printed from that word.
        if let (Some(c), true) = (
            le::<8>(d.coefficient_be()),
            d.exponent() == -i32::from(scale),
        ) {
            if value_text::write_scaled_u64(self.out, d.is_negative(), u64::from_be_bytes(c), scale)
            {
                return true;
            }
        }
        write_decimal(self.out, d, scale);
        true
    }
    #[inline]
    fn year(&mut self, y: u16) -> bool {
        value_text::write_u64(self.out, u64::from(y));
        true
    }
    #[inline]
    fn date(&mut self, d: Date) -> bool {
        value_text::write_date(self.out, d);
        true
    }
    #[inline]
    fn time(&mut self, us: i64) -> bool {
        value_text::write_time(self.out, us);
        true
    }
    #[inline]
    fn datetime(&mut self, us: i64, fsp: u8, _timestamp: bool) -> bool {
        value_text::write_datetime(self.out, us, fsp);
        true
    }
    fn enumeration(&mut self, index: u16, members: &[String]) -> bool {
        let name = members.get(usize::from(index).wrapping_sub(1));
        write_csv_field(Some(name.map_or(&b""[..], |n| n.as_bytes())), self.out);
        true
    }
    fn set(&mut self, bits: u64, members: &[String]) -> bool {
        write_csv_field(Some(set_text(members, bits).as_bytes()), self.out);
        true
    }
    #[inline(always)]
    fn str(&mut self, s: &str) -> bool {
        let b = s.as_bytes();
        if is_plain_text(b) {
            self.out.extend_from_slice(b);
        } else {
            write_csv_field(Some(b), self.out);
        }
        true
    }
    #[inline(always)]
    fn stored_str(&mut self, b: &[u8]) -> Option<bool> {
        // Plain ASCII is valid UTF-8 and printed as it is: one pass over the bytes.
        is_plain_text(b).then(|| {
            self.out.extend_from_slice(b);
            true
        })
    }
    #[inline(always)]
    fn text(&mut self, b: &[u8]) -> bool {
        write_text(b, self.out);
        true
    }
    fn json(&mut self, b: &[u8]) -> bool {
        write_text(b, self.out);
        true
    }
    fn bytes(&mut self, b: &[u8]) -> bool {
        write_csv_field(Some(b), self.out);
        true
    }
}

/// Field `b` as a little-endian `N`-byte value, if it has that width.
#[inline(always)]
fn le<const N: usize>(b: &[u8]) -> Option<[u8; N]> {
    b.try_into().ok()
}

/// True if any byte of `b` is non-ASCII or one of `,` `"` CR LF (eight bytes at a time).
#[inline]
fn has_special(b: &[u8]) -> bool {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    // Non-zero exactly when some byte of `x` is zero.
    let zero = |x: u64| x.wrapping_sub(LO) & !x & HI;
    let mut words = b.chunks_exact(8);
    for w in &mut words {
        let Some(w) = le::<8>(w).map(u64::from_le_bytes) else {
            return true;
        };
        let hit = (w & HI)
            | zero(w ^ (LO * u64::from(b',')))
            | zero(w ^ (LO * u64::from(b'"')))
            | zero(w ^ (LO * u64::from(b'\r')))
            | zero(w ^ (LO * u64::from(b'\n')));
        if hit != 0 {
            return true;
        }
    }
    words.remainder().iter().any(|&c| SPECIAL[usize::from(c)])
}

/// True for text that Dolt's CSV writer prints as it is: non-empty ASCII, not starting with
/// whitespace, not `\.`, with nothing that needs quoting.
#[inline]
fn is_plain_text(b: &[u8]) -> bool {
    match b.first() {
        None => false,
        Some(&c) => !matches!(c, b' ' | b'\t'..=b'\r') && b != b"\\." && !has_special(b),
    }
}

/// Bytes that send a text field down the general path: non-ASCII (UTF-8 checks, Unicode
/// whitespace) and the characters that force CSV quoting.
static SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0x80;
    while i < 256 {
        t[i] = true;
        i += 1;
    }
    t[b',' as usize] = true;
    t[b'"' as usize] = true;
    t[b'\r' as usize] = true;
    t[b'\n' as usize] = true;
    t
};

/// Appends text bytes as Dolt shows them (invalid UTF-8 replaced), CSV-quoted when needed.
/// Plain ASCII text, the common case, is checked in one pass.
#[inline(always)]
fn write_text(b: &[u8], out: &mut Vec<u8>) {
    if is_plain_text(b) {
        out.extend_from_slice(b);
    } else if std::str::from_utf8(b).is_ok() {
        write_csv_field(Some(b), out);
    } else {
        let s = String::from_utf8_lossy(b);
        write_csv_field(Some(s.as_bytes()), out);
    }
}

/// Appends one row of typed values as a CSV line (`field` is scratch space).
fn write_row(row: &[Option<SqlValue>], field: &mut Vec<u8>, buf: &mut Vec<u8>) {
    for (n, v) in row.iter().enumerate() {
        if n > 0 {
            buf.push(b',');
        }
        if let Some(v) = v {
            field.clear();
            v.csv_bytes(field);
            write_csv_field(Some(field), buf);
        }
    }
    buf.push(b'\n');
}

/// The collation each visible column of a keyless table sorts by: text columns by their own
/// collation, or the table's when the type names none; `None` for byte order and other types.
fn keyless_collations(table: &Table, visible: &[usize]) -> Result<Vec<Option<Collation>>> {
    let schema = &table.schema;
    let mut out = Vec::with_capacity(visible.len());
    for &i in visible {
        let c = match schema.columns.get(i) {
            // The error names the column and its collation; it keeps its kind (a collation
            // not implemented here is Unsupported, an unknown stored one Malformed).
            Some(col) => schema.column_collation(col)?,
            None => None,
        };
        out.push(c.filter(|c| !c.is_code_point_order()));
    }
    Ok(out)
}

/// Writes `table` as `dolt sql -r csv -q "select * from t order by <key>"` would: a header of
/// the visible column names, then one line per row (keyless tables sorted by all columns).
/// Returns the number of rows written.
pub fn export_csv(db: &Database, table: &Table, out: &mut dyn Write) -> Result<u64> {
    let schema = &table.schema;
    let io = |e: std::io::Error| DoltError::Io {
        file: "CSV output".into(),
        source: e,
    };
    let visible = schema.visible_columns();
    let mut buf = Vec::with_capacity(FLUSH_BYTES + (FLUSH_BYTES >> 2));
    for (n, &i) in visible.iter().enumerate() {
        if n > 0 {
            buf.push(b',');
        }
        let name = schema
            .columns
            .get(i)
            .map(|c| c.name.as_bytes())
            .unwrap_or(b"");
        write_csv_field(Some(name), &mut buf);
    }
    buf.push(b'\n');

    if !schema.keyless && schema.columns.iter().any(|c| c.virtual_ && !c.hidden) {
        // VIRTUAL generated columns are computed from typed rows: a slower path that only
        // tables with such columns take.
        let mut rows = 0u64;
        let mut field = Vec::new();
        for_each_row(db, table, &mut |r| {
            write_row(r, &mut field, &mut buf);
            rows += 1;
            if buf.len() >= FLUSH_BYTES {
                out.write_all(&buf).map_err(io)?;
                buf.clear();
            }
            Ok(())
        })?;
        out.write_all(&buf).map_err(io)?;
        return Ok(rows);
    }

    if schema.keyless {
        let mut rows: Vec<Vec<Option<SqlValue>>> = Vec::new();
        for_each_row(db, table, &mut |r| {
            rows.push(r.to_vec());
            Ok(())
        })?;
        let collations = keyless_collations(table, &visible)?;
        rows.sort_by(|a, b| compare_rows(a, b, &collations));
        let mut field = Vec::new();
        for r in &rows {
            write_row(r, &mut field, &mut buf);
            if buf.len() >= FLUSH_BYTES {
                out.write_all(&buf).map_err(io)?;
                buf.clear();
            }
        }
        out.write_all(&buf).map_err(io)?;
        return Ok(rows.len() as u64);
    }

    // Tables with VIRTUAL columns took the typed path above: every field here is stored.
    let rows = RowPlan::new(schema, table.schema_address)?;

    out.write_all(&buf).map_err(io)?;
    let print = |node: Node<'_>, scratch: &mut Scratch, csv: &mut Vec<u8>| -> Result<u64> {
        let blob = &mut scratch.blob;
        for e in 0..node.count() {
            // A verified node's keys and leaf values are valid tuples: no second check.
            let kt = Tuple::new_unverified(node.key(e));
            let vt = Tuple::new_unverified(node.value(e));
            for (n, f) in rows.fields.iter().enumerate() {
                if n > 0 {
                    csv.push(b',');
                }
                let mut sink = CsvSink { out: &mut *csv };
                rows.decode(db, table, f, kt, vt, blob, &mut sink)?;
            }
            csv.push(b'\n');
        }
        Ok(node.count() as u64)
    };
    print_leaves(db, table, &print, out)
}
