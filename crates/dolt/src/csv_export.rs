//! Streaming CSV export identical to `dolt sql -r csv -q "select * from t"`.
//!
//! Rows go straight from the tree's leaf nodes to one reused output buffer: each visible column
//! gets a `FieldPlan` chosen once from its SQL type and stored encoding, and the common kinds
//! (integers, floats, one-word decimals, dates, datetimes, plain text) are printed straight from
//! their stored bytes (`write_fast`) with no per-row or per-field allocation. Everything else,
//! and any field whose bytes are not the expected shape, goes through the checked path
//! (`write_field`, `decode_field`), so the output is the same bytes either way.
//!
//! Reading a leaf costs about as much as printing it, and both happen on the reader threads of
//! the bulk leaf reader ([`crate::leaf_reader`], `print_leaves`): each reader reads and checks a
//! batch of leaves and prints their rows into the batch's buffer; the calling thread writes the
//! printed batches out in key order.
//!
//! Keyless tables are the exception: Dolt shows them sorted by all columns, so their rows are
//! collected and sorted first.

use prollystore_format::message::Node;
use prollystore_format::tuple::{Adaptive, Date, Tuple, TupleDesc};
use prollystore_format::{Collation, Encoding};
use std::io::Write;

use crate::codec::read_blob_into;
use crate::codec::{Field, Kind, RowPlan, Slot};
use crate::csv_field::write_csv_field;
use crate::db::{Database, Table};
use crate::error::{bad_chunk, DoltError, Result};
use crate::leaf_reader::{run_leaves, LeafBatch};
use crate::sql_value::{compare_rows, write_decimal, SqlValue};
use crate::table_rows::{decode_field, for_each_row};
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

/// How one visible column is turned into CSV text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FieldKind {
    /// Signed integer encodings, printed in decimal.
    Int,
    /// Unsigned integer and BIT encodings, printed in decimal.
    Uint,
    /// FLOAT, Go's shortest text.
    Float32,
    /// DOUBLE, Go's shortest text.
    Float64,
    /// DECIMAL with this scale.
    Decimal(u8),
    /// DATETIME/TIMESTAMP with this many fraction digits.
    Datetime(u8),
    /// DATE.
    Date,
    /// Text stored as a plain string.
    Text,
    /// Text stored as an adaptive value (inline or in a blob tree).
    TextAdaptive,
    /// Anything else: decoded to a [`SqlValue`] first.
    General,
}

/// Where one visible column lives (from the table's [`RowPlan`]) and how it is printed.
#[derive(Clone, Copy, Debug)]
struct FieldPlan<'p> {
    /// In the key tuple (else the value tuple).
    key: bool,
    /// Field index in that tuple.
    index: usize,
    /// The column's plan (for the general path).
    field: &'p Field,
    kind: FieldKind,
    /// The stored encoding (`field.enc`, kept at hand for the fast path).
    enc: Encoding,
}

impl FieldKind {
    /// The printing path of a column of kind `kind` stored in encoding `enc` (of its tuple):
    /// the fast kinds print exactly the text of the general path ([`decode_field`]).
    fn of(kind: &Kind, enc: Encoding) -> FieldKind {
        use Encoding as E;
        match (kind, enc) {
            (Kind::Decimal { scale, .. }, _) => FieldKind::Decimal(*scale),
            (Kind::Datetime { fsp, .. }, _) => FieldKind::Datetime(*fsp),
            (Kind::Text(_), E::String) => FieldKind::Text,
            (Kind::Text(_), e) if e.is_adaptive() => FieldKind::TextAdaptive,
            (Kind::Int, E::Int8 | E::Int16 | E::Int32 | E::Int64) => FieldKind::Int,
            (Kind::Int | Kind::Bit, _) => FieldKind::Uint,
            (Kind::Float, _) => FieldKind::Float32,
            (Kind::Double, _) => FieldKind::Float64,
            (Kind::Date, _) => FieldKind::Date,
            _ => FieldKind::General,
        }
    }
}

/// Reusable buffers of one printing thread.
#[derive(Default)]
struct Scratch {
    /// A value's text before CSV quoting (general path).
    field: Vec<u8>,
    /// An out-of-band value's bytes.
    blob: Vec<u8>,
}

/// Appends the CSV text of field `p` of a row.
fn write_field(
    db: &Database,
    table: &Table,
    p: &FieldPlan<'_>,
    desc: &TupleDesc,
    t: Tuple<'_>,
    scratch: &mut Scratch,
    out: &mut Vec<u8>,
) -> Result<()> {
    let err = |e: prollystore_format::tuple::TupleError| {
        let name = table
            .schema
            .columns
            .get(p.field.column)
            .map(|c| c.name.as_str())
            .unwrap_or("");
        bad_chunk(table.address, format!("column {name}: {e}"))
    };
    let i = p.index;
    match p.kind {
        FieldKind::Int => {
            let v = match desc.type_of(i).map_err(err)?.enc {
                Encoding::Int8 => desc.get_int8(t, i).map_err(err)?.map(i64::from),
                Encoding::Int16 => desc.get_int16(t, i).map_err(err)?.map(i64::from),
                Encoding::Int32 => desc.get_int32(t, i).map_err(err)?.map(i64::from),
                _ => desc.get_int64(t, i).map_err(err)?,
            };
            if let Some(v) = v {
                value_text::write_i64(out, v);
            }
        }
        FieldKind::Uint => {
            let v = match desc.type_of(i).map_err(err)?.enc {
                Encoding::Uint8 => desc.get_uint8(t, i).map_err(err)?.map(u64::from),
                Encoding::Uint16 => desc.get_uint16(t, i).map_err(err)?.map(u64::from),
                Encoding::Uint32 => desc.get_uint32(t, i).map_err(err)?.map(u64::from),
                Encoding::Bit64 => desc.get_bit64(t, i).map_err(err)?,
                _ => desc.get_uint64(t, i).map_err(err)?,
            };
            if let Some(v) = v {
                value_text::write_u64(out, v);
            }
        }
        FieldKind::Float32 => {
            if let Some(v) = desc.get_float32(t, i).map_err(err)? {
                value_text::write_f32(out, v);
            }
        }
        FieldKind::Float64 => {
            if let Some(v) = desc.get_float64(t, i).map_err(err)? {
                value_text::write_f64(out, v);
            }
        }
        FieldKind::Decimal(scale) => {
            if let Some(d) = desc.get_decimal(t, i).map_err(err)? {
                write_decimal(out, &d, scale);
            }
        }
        FieldKind::Datetime(fsp) => {
            if let Some(us) = desc.get_datetime(t, i).map_err(err)? {
                value_text::write_datetime(out, us, fsp);
            }
        }
        FieldKind::Date => {
            if let Some(d) = desc.get_date(t, i).map_err(err)? {
                value_text::write_date(out, d);
            }
        }
        FieldKind::Text => {
            if let Some(b) = desc.get_string_bytes(t, i).map_err(err)? {
                if !write_text(b, out) {
                    // Plain strings must be UTF-8: report it as the general path does.
                    desc.get_string(t, i).map_err(err)?;
                }
            }
        }
        FieldKind::TextAdaptive => match desc.get_adaptive(t, i).map_err(err)? {
            None => {}
            Some(Adaptive::Inline(b)) => {
                write_text(b, out);
            }
            Some(Adaptive::OutOfBand { len, address }) => {
                scratch.blob.clear();
                read_blob_into(db, address, &mut scratch.blob, 0)?;
                if scratch.blob.len() as u64 != len {
                    return Err(bad_chunk(
                        address,
                        format!(
                            "blob holds {} bytes, the row says {len}",
                            scratch.blob.len()
                        ),
                    ));
                }
                write_text(&scratch.blob, out);
            }
        },
        FieldKind::General => {
            let Some(col) = table.schema.columns.get(p.field.column) else {
                return Ok(());
            };
            if let Some(v) = decode_field(db, col, &p.field.kind, desc, t, i)? {
                scratch.field.clear();
                v.csv_bytes(&mut scratch.field);
                write_csv_field(Some(&scratch.field), out);
            }
        }
    }
    Ok(())
}

/// Field `b` as a little-endian `N`-byte value, if it has that width.
#[inline(always)]
fn le<const N: usize>(b: &[u8]) -> Option<[u8; N]> {
    b.try_into().ok()
}

/// Appends the CSV text of field `p` from its (non-NULL) stored bytes `b` for the common kinds,
/// straight from the bytes. Returns false, having written nothing, when the bytes are not the
/// expected shape or the kind has no fast path; [`write_field`] then prints the value (or
/// reports what is wrong) the checked way.
#[inline]
fn write_fast(p: &FieldPlan<'_>, b: &[u8], out: &mut Vec<u8>) -> bool {
    use Encoding as E;
    match p.kind {
        FieldKind::Int => {
            let v = match p.enc {
                E::Int8 => le::<1>(b).map(|a| i64::from(i8::from_le_bytes(a))),
                E::Int16 => le::<2>(b).map(|a| i64::from(i16::from_le_bytes(a))),
                E::Int32 => le::<4>(b).map(|a| i64::from(i32::from_le_bytes(a))),
                E::Int64 => le::<8>(b).map(i64::from_le_bytes),
                _ => None,
            };
            let Some(v) = v else { return false };
            value_text::write_i64(out, v);
        }
        FieldKind::Uint => {
            let v = match p.enc {
                E::Uint8 => le::<1>(b).map(|a| u64::from(a[0])),
                E::Uint16 => le::<2>(b).map(|a| u64::from(u16::from_le_bytes(a))),
                E::Uint32 => le::<4>(b).map(|a| u64::from(u32::from_le_bytes(a))),
                E::Uint64 | E::Bit64 => le::<8>(b).map(u64::from_le_bytes),
                _ => None,
            };
            let Some(v) = v else { return false };
            value_text::write_u64(out, v);
        }
        FieldKind::Float32 => match le::<4>(b) {
            Some(a) => value_text::write_f32(out, f32::from_le_bytes(a)),
            None => return false,
        },
        FieldKind::Float64 => match le::<8>(b) {
            Some(a) => value_text::write_f64(out, f64::from_le_bytes(a)),
            None => return false,
        },
        FieldKind::Decimal(scale) => {
            // [exponent i32 LE][sign][coefficient: one big-endian 8-byte word], stored at the
            // column's scale: the usual shape of DECIMAL(≤19) values.
            let [e0, e1, e2, e3, sign, coeff @ ..] = b else {
                return false;
            };
            let Some(c) = le::<8>(coeff) else {
                return false;
            };
            if i32::from_le_bytes([*e0, *e1, *e2, *e3]) != -i32::from(scale) {
                return false;
            }
            if !value_text::write_scaled_u64(out, (*sign as i8) < 0, u64::from_be_bytes(c), scale) {
                return false;
            }
        }
        FieldKind::Datetime(fsp) => match le::<8>(b) {
            Some(a) => value_text::write_datetime(out, i64::from_le_bytes(a), fsp),
            None => return false,
        },
        FieldKind::Date => match le::<4>(b) {
            Some(a) => value_text::write_date(out, Date::from_raw(u32::from_le_bytes(a))),
            None => return false,
        },
        FieldKind::Text => match b.split_last() {
            // Invalid UTF-8 is an error, which the checked path reports.
            Some((0, s)) if is_plain_text(s) => out.extend_from_slice(s),
            _ => return false,
        },
        FieldKind::TextAdaptive => match Adaptive::from_bytes(b) {
            Some(Adaptive::Inline(s)) if is_plain_text(s) => out.extend_from_slice(s),
            _ => return false,
        },
        FieldKind::General => return false,
    }
    true
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

/// Appends text bytes as Dolt shows them (invalid UTF-8 replaced, as the general path does for
/// adaptive text), CSV-quoted when needed, and says whether they were valid UTF-8. Plain ASCII
/// text, the common case, is checked in one pass.
#[inline]
fn write_text(b: &[u8], out: &mut Vec<u8>) -> bool {
    if is_plain_text(b) {
        out.extend_from_slice(b);
        true
    } else if std::str::from_utf8(b).is_ok() {
        write_csv_field(Some(b), out);
        true
    } else {
        let s = String::from_utf8_lossy(b);
        write_csv_field(Some(s.as_bytes()), out);
        false
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

    let rows = RowPlan::new(schema, table.schema_address)?;
    let (key_desc, value_desc) = (&rows.key_desc, &rows.value_desc);
    let plans: Vec<FieldPlan<'_>> = rows
        .fields
        .iter()
        .filter_map(|field| {
            let (key, index) = match field.slot {
                Slot::Key(i) => (true, i),
                Slot::Value(i) => (false, i),
                Slot::Virtual => return None,
            };
            Some(FieldPlan {
                key,
                index,
                field,
                kind: FieldKind::of(&field.kind, field.enc),
                enc: field.enc,
            })
        })
        .collect();

    out.write_all(&buf).map_err(io)?;
    let print = |node: Node<'_>, scratch: &mut Scratch, csv: &mut Vec<u8>| -> Result<u64> {
        for e in 0..node.count() {
            // A verified node's keys and leaf values are valid tuples: no second check.
            let kt = Tuple::new_unverified(node.key(e));
            let vt = Tuple::new_unverified(node.value(e));
            for (n, p) in plans.iter().enumerate() {
                if n > 0 {
                    csv.push(b',');
                }
                let (desc, t) = if p.key {
                    (key_desc, kt)
                } else {
                    (value_desc, vt)
                };
                match desc.field(t, p.index) {
                    None => {} // NULL: an empty field
                    Some(b) if write_fast(p, b, csv) => {}
                    Some(_) => write_field(db, table, p, desc, t, scratch, csv)?,
                }
            }
            csv.push(b'\n');
        }
        Ok(node.count() as u64)
    };
    print_leaves(db, table, &print, out)
}
