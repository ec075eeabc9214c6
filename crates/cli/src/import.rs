//! CSV import: parse rows into key and value tuples, then build a tree or edit an existing one.
//!
//! Records come from [`RecordReader`] (plain lines split in place, the rest through
//! `csv-core`); tuples of all-fixed-width descriptors are written directly ([`FixedEncoder`]),
//! others through a reused [`TupleBuilder`]. Nothing is allocated per row. Schemas of integer
//! columns have fast paths that read plain records straight from the reader's buffer
//! (`IntRows`, and for one to four `int64` key and value fields `Int64Layout`); any record
//! they decline goes the general way, which makes the same tuples or error.
//!
//! A new tree ([`build_csv`]) is built while the input is still being read: one thread parses
//! rows into batches of tuples, the calling thread adds them to the tree, and the batches go
//! back to the parser for reuse, so the rows never pile up in memory. That needs the input in
//! key order, which is only known at its end; when a row comes out of order the parser keeps
//! the rest, the rows already built are read back from the partial tree, and the caller gets
//! every row to sort and build ([`Built::Unsorted`]). Edits of an existing tree, and schemas
//! whose values may go out of band, read every row first ([`read_csv`]).

use std::io::Read;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TryRecvError};
use std::time::{Duration, Instant};

use indicatif::ProgressBar;
use prollystore::blob::StoreBlobs;
use prollystore::store::ChunkStore;
use prollystore::tree::build::TreeBuilder;
use prollystore::tree::hash_thread::background_hashing;
use prollystore::tuples::TupleSchema;
use prollystore::{Map, TreeSchema};
use prollystore_format::tuple::{BlobStore, NoBlobStore, TupleBuilder, TupleDesc};
use prollystore_format::{Address, Encoding};

use crate::error::{Error, Result};
use crate::field_text::{parse_i64, parse_u64, FieldParser, FixedEncoder, NullText};
use crate::map_schema::{Column, MapSchema};
use crate::records::{PlainRun, RecordError, RecordReader};

impl From<RecordError> for Error {
    fn from(e: RecordError) -> Error {
        match e {
            RecordError::Io(io) => Error::from(io),
            e => Error::msg(e.to_string()),
        }
    }
}

/// Parsed rows: key and value tuples back to back, with their end offsets and CSV line numbers.
#[derive(Default)]
pub struct Rows {
    keys: Vec<u8>,
    key_ends: Vec<usize>,
    values: Vec<u8>,
    value_ends: Vec<usize>,
    lines: Vec<u64>,
    /// Row indexes in key order; `None` while the input order is the key order.
    order: Option<Vec<u32>>,
    sorted_input: bool,
}

fn slice<'a>(arena: &'a [u8], ends: &[usize], i: usize) -> &'a [u8] {
    let start = if i == 0 {
        0
    } else {
        ends.get(i - 1).copied().unwrap_or(0)
    };
    let end = ends.get(i).copied().unwrap_or(start);
    arena.get(start..end).unwrap_or(&[])
}

impl Rows {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.key_ends.len()
    }

    /// True if there are none.
    pub fn is_empty(&self) -> bool {
        self.key_ends.is_empty()
    }

    /// True if the input already came in strictly increasing key order (no sort was needed).
    pub fn sorted_input(&self) -> bool {
        self.sorted_input
    }

    /// Appends a row (its tuples and its CSV line), keeping track of the input order.
    fn push(&mut self, key: &[u8], value: &[u8], line: u64, schema: &TupleSchema) {
        if self.sorted_input && !self.key_ends.is_empty() {
            let prev = self.key(self.key_ends.len() - 1);
            if !schema.compare_keys(prev, key).is_lt() {
                self.sorted_input = false;
            }
        }
        self.keys.extend_from_slice(key);
        self.values.extend_from_slice(value);
        self.key_ends.push(self.keys.len());
        self.value_ends.push(self.values.len());
        self.lines.push(line);
    }

    fn key(&self, i: usize) -> &[u8] {
        slice(&self.keys, &self.key_ends, i)
    }

    fn value(&self, i: usize) -> &[u8] {
        slice(&self.values, &self.value_ends, i)
    }

    /// The rows in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> + '_ {
        let n = self.len();
        let idx: Box<dyn Iterator<Item = usize> + '_> = match &self.order {
            Some(o) => Box::new(o.iter().map(|&i| i as usize)),
            None => Box::new(0..n),
        };
        idx.map(move |i| (self.key(i), self.value(i)))
    }

    /// Orders the rows by key (skipped when the input was sorted); duplicate keys are an error
    /// naming both lines.
    pub fn sort(&mut self, schema: &TupleSchema) -> Result<()> {
        if self.sorted_input {
            return Ok(());
        }
        let n = u32::try_from(self.len())
            .map_err(|_| Error::msg("more than 4294967295 rows in one import"))?;
        let mut order: Vec<u32> = (0..n).collect();
        order.sort_by(|&a, &b| {
            schema
                .compare_keys(self.key(a as usize), self.key(b as usize))
                .then(a.cmp(&b))
        });
        for w in order.windows(2) {
            if let [a, b] = *w {
                if schema
                    .compare_keys(self.key(a as usize), self.key(b as usize))
                    .is_eq()
                {
                    let la = self.lines.get(a as usize).copied().unwrap_or(0);
                    let lb = self.lines.get(b as usize).copied().unwrap_or(0);
                    return Err(Error::msg(format!(
                        "line {lb}: duplicate key (same key as line {la})"
                    )));
                }
            }
        }
        self.order = Some(order);
        Ok(())
    }
}

/// How each tuple of a row is made from the CSV fields.
struct TupleMaker {
    /// CSV field index per descriptor field.
    fields: Vec<usize>,
    columns: Vec<Column>,
    fixed: Option<FixedEncoder>,
    builder: TupleBuilder,
}

impl TupleMaker {
    fn new(columns: &[Column], desc: TupleDesc, header: &[Vec<u8>]) -> Result<TupleMaker> {
        let mut fields = Vec::with_capacity(columns.len());
        for c in columns {
            let Some(j) = header.iter().position(|h| h == c.name.as_bytes()) else {
                return Err(Error::msg(format!(
                    "the CSV header has no column {:?} (header: {})",
                    c.name,
                    header
                        .iter()
                        .map(|h| String::from_utf8_lossy(h).into_owned())
                        .collect::<Vec<_>>()
                        .join(",")
                )));
            };
            fields.push(j);
        }
        Ok(TupleMaker {
            fields,
            columns: columns.to_vec(),
            fixed: FixedEncoder::new(&desc),
            builder: TupleBuilder::new(desc),
        })
    }

    /// Appends the tuple of `rec` to `out`; an error names the column.
    #[inline]
    fn make<R>(
        &mut self,
        rec: &RecordReader<R>,
        null: &NullText,
        parser: &mut FieldParser,
        blobs: &mut dyn BlobStore,
        out: &mut Vec<u8>,
    ) -> std::result::Result<(), String> {
        if let Some(fixed) = &mut self.fixed {
            let (src, bounds) = rec.parts();
            return fixed
                .encode_record(src, bounds, &self.fields, null, out)
                .map_err(|(i, e)| {
                    let name = self.columns.get(i).map_or("?", |c| c.name.as_str());
                    format!("column {name:?}: {e}")
                });
        }
        for (i, (&j, c)) in self.fields.iter().zip(&self.columns).enumerate() {
            let t = rec.get(j).unwrap_or(b"");
            let r = match null.is_null(c.ty, t) {
                Ok(true) => Ok(()),
                Ok(false) => parser.put(&mut self.builder, i, c.ty, t, blobs),
                Err(e) => Err(e),
            };
            if let Err(e) = r {
                self.builder.reset();
                return Err(format!("column {:?}: {e}", c.name));
            }
        }
        self.builder
            .build_into(blobs, out)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

/// An integer field's width and signedness.
#[derive(Clone, Copy)]
enum IntKind {
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
}

impl IntKind {
    fn of(enc: Encoding) -> Option<IntKind> {
        use Encoding as E;
        Some(match enc {
            E::Int8 => IntKind::I8,
            E::Int16 => IntKind::I16,
            E::Int32 => IntKind::I32,
            E::Int64 => IntKind::I64,
            E::Uint8 => IntKind::U8,
            E::Uint16 => IntKind::U16,
            E::Uint32 => IntKind::U32,
            E::Uint64 => IntKind::U64,
            _ => return None,
        })
    }

    fn signed(self) -> bool {
        matches!(
            self,
            IntKind::I8 | IntKind::I16 | IntKind::I32 | IntKind::I64
        )
    }
}

/// The value of the decimal digits that start `data[i..]` (wrapped if there are more than 19)
/// and the index after them. Eight bytes at a time while eight are there.
#[inline]
fn digits(data: &[u8], mut i: usize) -> (u64, usize) {
    const POW10: [u64; 9] = [
        1,
        10,
        100,
        1_000,
        10_000,
        100_000,
        1_000_000,
        10_000_000,
        100_000_000,
    ];
    let mut v = 0u64;
    while let Some(word) = data.get(i..i + 8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        let x = u64::from_le_bytes(w).wrapping_sub(0x3030_3030_3030_3030);
        // The high bit of each byte that is not a digit (byte - '0' above 9). Borrows and
        // carries only move upwards from such a byte, so the lowest one found is exact.
        let other = (x.wrapping_add(0x7676_7676_7676_7676) | x) & 0x8080_8080_8080_8080;
        let n = (other.trailing_zeros() / 8) as usize;
        if n == 0 {
            return (v, i);
        }
        // The n digits to the top bytes (first digit most significant), then pairs, quads,
        // and the eight combined.
        let d = x << (8 * (8 - n));
        let d = ((d & 0x0f0f_0f0f_0f0f_0f0f).wrapping_mul(2561)) >> 8;
        let d = ((d & 0x00ff_00ff_00ff_00ff).wrapping_mul(6_553_601)) >> 16;
        let d = ((d & 0x0000_ffff_0000_ffff).wrapping_mul(42_949_672_960_001)) >> 32;
        v = v
            .wrapping_mul(POW10.get(n).copied().unwrap_or(0))
            .wrapping_add(d);
        i += n;
        if n < 8 {
            return (v, i);
        }
    }
    while let Some(&b) = data.get(i) {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        v = v.wrapping_mul(10).wrapping_add(u64::from(d));
        i += 1;
    }
    (v, i)
}

/// How one CSV column of an [`IntRows`] record is read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum IntText {
    /// Not in the schema (only keys are read): any plain field.
    Ignored,
    /// A decimal integer; `true`: a leading `-` is allowed.
    Int(bool),
}

/// One field of a tuple made by [`IntRows`]: which CSV column, what width.
#[derive(Clone, Copy)]
struct IntField {
    column: usize,
    kind: IntKind,
}

/// CSV columns an [`IntRows`] record may have (more: no fast path).
const INT_COLUMNS: usize = 16;
/// Key columns an [`IntRows`] schema may have.
const INT_KEY: usize = 8;

/// The fast path for a schema whose columns are all integers: a record of plain decimal
/// fields is parsed straight from the reader's buffer into tuples of constant layout (every
/// field present). Any other record (empty or NULL fields, signs other than a leading `-`, more
/// than 18 digits, values out of range, quotes, spaces, another field count, a line not wholly
/// buffered) is left to the general path, which makes the same tuples or the error.
struct IntRows {
    /// Each CSV column, with the byte that must follow its text: `,`, and `\n` after the last
    /// (a `\r` there is checked on the side).
    columns: Vec<(IntText, u8)>,
    key: IntTuple,
    /// `None` when only keys are read.
    value: Option<IntTuple>,
    /// Set when the tuples are all `int64` and fit [`Int64Layout`].
    int64: Option<Int64Layout>,
}

/// The constant layout of the key or value tuples an [`IntRows`] makes.
struct IntTuple {
    fields: Vec<IntField>,
    /// What follows the field bytes: field offsets, then the count.
    suffix: Vec<u16>,
    /// `Some(n)` for one to four fields, all `int64`: tuples of constant size, put together
    /// on the stack (decided once, not per row).
    int64s: Option<usize>,
}

impl IntTuple {
    fn new(fields: Vec<IntField>, suffix: Vec<u16>) -> IntTuple {
        let all_i64 = fields.iter().all(|f| matches!(f.kind, IntKind::I64));
        let int64s = (all_i64 && (1..=4).contains(&fields.len())).then_some(fields.len());
        IntTuple {
            fields,
            suffix,
            int64s,
        }
    }

    /// Appends the tuple of `ints` to `out`; false, with `out` as it was, if an integer is out
    /// of its field's range.
    #[inline(always)]
    fn append(&self, ints: &[i64; INT_COLUMNS], out: &mut Vec<u8>) -> bool {
        match self.int64s {
            Some(1) => append_int64s::<10>(&self.fields, &self.suffix, ints, out),
            Some(2) => append_int64s::<20>(&self.fields, &self.suffix, ints, out),
            Some(3) => append_int64s::<30>(&self.fields, &self.suffix, ints, out),
            Some(4) => append_int64s::<40>(&self.fields, &self.suffix, ints, out),
            _ => append(&self.fields, &self.suffix, ints, out),
        }
    }
}

impl IntRows {
    /// The fast path for `header` under `schema`, if every key and value column is an integer
    /// and no integer text can be the NULL marker.
    fn new(
        schema: &MapSchema,
        header: &[Vec<u8>],
        null: &NullText,
        keys_only: bool,
    ) -> Option<IntRows> {
        if header.len() > INT_COLUMNS || schema.key.len() > INT_KEY {
            return None;
        }
        if let Some(m) = &null.marker {
            if parse_i64(m).is_some() || parse_u64(m).is_some() {
                return None;
            }
        }
        let column = |name: &str| header.iter().position(|h| h == name.as_bytes());
        // The fields of each tuple, and what follows them (every field is present).
        let layout = |cols: &[Column]| -> Option<(Vec<IntField>, Vec<u16>)> {
            let mut fields = Vec::with_capacity(cols.len());
            let mut len = 0usize;
            let mut suffix = Vec::with_capacity(cols.len());
            for c in cols {
                fields.push(IntField {
                    column: column(&c.name)?,
                    kind: IntKind::of(c.ty.enc)?,
                });
                len += c.ty.enc.fixed_width()?;
                suffix.push(u16::try_from(len).ok()?);
            }
            suffix.pop();
            suffix.push(u16::try_from(cols.len()).ok()?);
            Some((fields, suffix))
        };
        let (key_fields, key_suffix) = layout(&schema.key)?;
        let key = IntTuple::new(key_fields, key_suffix);
        let value = if keys_only {
            None
        } else {
            let (fields, suffix) = layout(&schema.value)?;
            Some(IntTuple::new(fields, suffix))
        };
        let mut columns = vec![IntText::Ignored; header.len()];
        let value_fields = value.iter().flat_map(|v| &v.fields);
        for f in key.fields.iter().chain(value_fields) {
            *columns.get_mut(f.column)? = IntText::Int(f.kind.signed());
        }
        let last = columns.len().checked_sub(1)?;
        let columns = columns
            .into_iter()
            .enumerate()
            .map(|(c, text)| (text, if c == last { b'\n' } else { b',' }))
            .collect();
        let int64 = value
            .as_ref()
            .and_then(|v| Int64Layout::new(&key, v, header.len()));
        Some(IntRows {
            columns,
            key,
            value,
            int64,
        })
    }

    /// Parses the record at the start of `data` (see [`RecordReader::read_plain_with`]),
    /// appending its tuples; `None` (nothing appended) if it is not of the simple kind.
    #[inline]
    fn parse(&self, data: &[u8], keys: &mut Vec<u8>, values: &mut Vec<u8>) -> Option<usize> {
        let mut ints = [0i64; INT_COLUMNS];
        let n = self.scan(data, &mut ints)?;
        let (kb, vb) = (keys.len(), values.len());
        let mut ok = self.key.append(&ints, keys);
        if let Some(value) = &self.value {
            ok = ok && value.append(&ints, values);
        }
        if ok {
            Some(n)
        } else {
            keys.truncate(kb);
            values.truncate(vb);
            None
        }
    }

    /// Parses records from the start of `data` straight into `batch`, at most `room` of them,
    /// while each is of the simple kind, ends with `\n`, and has a key above the one before:
    /// `prev` (that key's integers, kept up to date here) or, when `prev` is `None`,
    /// `prev_key` (a tuple, compared through `schema`). Stops before the first record it does
    /// not take, which the general path then reads.
    #[inline]
    fn parse_run(
        &self,
        data: &[u8],
        room: usize,
        batch: &mut Batch,
        prev: &mut Option<[i64; INT_KEY]>,
        prev_key: Option<&[u8]>,
        schema: &TupleSchema,
    ) -> PlainRun {
        if let Some(layout) = &self.int64 {
            return layout.run(data, room, batch, prev, prev_key, schema);
        }
        let mut run = PlainRun::default();
        let mut ints = [0i64; INT_COLUMNS];
        while run.records < room {
            let rest = data.get(run.bytes..).unwrap_or(&[]);
            let Some(n) = self.scan(rest, &mut ints) else {
                break;
            };
            if rest.get(n.wrapping_sub(1)) != Some(&b'\n') {
                break;
            }
            // Strictly after the previous key?
            let after = match prev {
                Some(p) => {
                    let mut o = std::cmp::Ordering::Equal;
                    for (f, &pv) in self.key.fields.iter().zip(p.iter()) {
                        o = ints.get(f.column).copied().unwrap_or(0).cmp(&pv);
                        if o.is_ne() {
                            break;
                        }
                    }
                    o.is_gt()
                }
                None => true,
            };
            if !after {
                break;
            }
            let (kb, vb) = (batch.keys.len(), batch.values.len());
            let mut ok = self.key.append(&ints, &mut batch.keys);
            if let Some(value) = &self.value {
                ok = ok && value.append(&ints, &mut batch.values);
            }
            if ok && prev.is_none() {
                if let Some(pk) = prev_key {
                    let key = batch.keys.get(kb..).unwrap_or(&[]);
                    ok = schema.compare_keys(pk, key).is_lt();
                }
            }
            if !ok || batch.end_row(kb, vb).is_err() {
                batch.keys.truncate(kb);
                batch.values.truncate(vb);
                break;
            }
            let key = prev.get_or_insert([0; INT_KEY]);
            for (k, f) in key.iter_mut().zip(&self.key.fields) {
                *k = ints.get(f.column).copied().unwrap_or(0);
            }
            run.last_start = run.bytes;
            run.bytes += n;
            run.records += 1;
        }
        run
    }

    /// Reads the record's integers into `ints`; the record's length with its terminator.
    #[inline]
    fn scan(&self, data: &[u8], ints: &mut [i64; INT_COLUMNS]) -> Option<usize> {
        let mut i = 0usize;
        // `columns` holds at most `INT_COLUMNS` (see `new`).
        for (&(text, delimiter), int) in self.columns.iter().zip(ints.iter_mut()) {
            match text {
                IntText::Int(signed) => {
                    let neg = signed && data.get(i) == Some(&b'-');
                    i += usize::from(neg);
                    let start = i;
                    let (v, end) = digits(data, i);
                    // One to 18 digits (`v` < 10^18 fits an i64).
                    if (end - start).wrapping_sub(1) >= 18 {
                        return None;
                    }
                    i = end;
                    let sign = -i64::from(neg);
                    *int = (v as i64 ^ sign) - sign;
                }
                IntText::Ignored => {
                    while !matches!(data.get(i)?, b',' | b'\n' | b'\r' | b'"') {
                        i += 1;
                    }
                }
            }
            let at = data.get(i).copied();
            if at != Some(delimiter) && !(delimiter == b'\n' && at == Some(b'\r')) {
                return None;
            }
            i += 1;
        }
        Some(i)
    }
}

/// Appends the tuple of `fields` (every one present) and `suffix` (offsets and count) to
/// `out`; false, with `out` as it was, if an integer is out of its field's range.
#[inline]
fn append(
    fields: &[IntField],
    suffix: &[u16],
    ints: &[i64; INT_COLUMNS],
    out: &mut Vec<u8>,
) -> bool {
    let base = out.len();
    for f in fields {
        let v = ints.get(f.column).copied().unwrap_or(0);
        macro_rules! put {
            ($t:ty) => {{
                let Ok(x) = <$t>::try_from(v) else {
                    out.truncate(base);
                    return false;
                };
                out.extend_from_slice(&x.to_le_bytes());
            }};
        }
        match f.kind {
            IntKind::I64 => out.extend_from_slice(&v.to_le_bytes()),
            IntKind::I32 => put!(i32),
            IntKind::I16 => put!(i16),
            IntKind::I8 => put!(i8),
            IntKind::U64 => put!(u64),
            IntKind::U32 => put!(u32),
            IntKind::U16 => put!(u16),
            IntKind::U8 => put!(u8),
        }
    }
    for &o in suffix {
        out.extend_from_slice(&o.to_le_bytes());
    }
    true
}

/// [`append`] for `N / 10` fields, all `int64`.
#[inline(always)]
fn append_int64s<const N: usize>(
    fields: &[IntField],
    suffix: &[u16],
    ints: &[i64; INT_COLUMNS],
    out: &mut Vec<u8>,
) -> bool {
    let mut t = [0u8; N];
    let mut at = 0;
    for f in fields {
        let v = ints.get(f.column).copied().unwrap_or(0);
        if let Some(d) = t.get_mut(at..at + 8) {
            d.copy_from_slice(&v.to_le_bytes());
        }
        at += 8;
    }
    for &o in suffix {
        if let Some(d) = t.get_mut(at..at + 2) {
            d.copy_from_slice(&o.to_le_bytes());
        }
        at += 2;
    }
    out.extend_from_slice(&t);
    true
}

/// The layout of a map whose key and value tuples are one to four `int64` fields each, every
/// CSV column one of them: records of such maps are read by [`Int64Layout::run`], made for the
/// field counts at compile time (tuples of constant size written in place, no per-field
/// dispatch).
#[derive(Clone, Copy)]
struct Int64Layout {
    /// Key fields (1 to 4).
    key_fields: usize,
    /// Value fields (1 to 4).
    value_fields: usize,
    /// The CSV column of each key field.
    key: [usize; 4],
    /// The CSV column of each value field.
    value: [usize; 4],
    /// True if the CSV columns are the key fields, then the value fields, in order (the
    /// columns are then known at compile time).
    in_order: bool,
}

/// The SWAR digit test of [`digits`] on the eight bytes of `x` (each byte minus `'0'`): how
/// many of its low bytes are digits (0 to 8).
#[inline(always)]
fn digit_count(x: u64) -> usize {
    let other = (x.wrapping_add(0x7676_7676_7676_7676) | x) & 0x8080_8080_8080_8080;
    (other.trailing_zeros() / 8) as usize
}

/// The value of the digits in the top bytes of `d` (each byte minus `'0'`, first digit in the
/// lowest of them, the bytes below them zero).
#[inline(always)]
fn digits8(d: u64) -> u64 {
    let d = ((d & 0x0f0f_0f0f_0f0f_0f0f).wrapping_mul(2561)) >> 8;
    let d = ((d & 0x00ff_00ff_00ff_00ff).wrapping_mul(6_553_601)) >> 16;
    ((d & 0x0000_ffff_0000_ffff).wrapping_mul(42_949_672_960_001)) >> 32
}

/// The eight bytes of `data` from `i`, as a little-endian integer, minus `'0'` in each byte.
#[inline(always)]
fn word(data: &[u8], i: usize) -> Option<u64> {
    let b: [u8; 8] = data.get(i..i.wrapping_add(8))?.try_into().ok()?;
    Some(u64::from_le_bytes(b).wrapping_sub(0x3030_3030_3030_3030))
}

/// Reads one decimal `int64` field at `data[i..]` that ends with `delimiter`: its value and the
/// index after the delimiter. `None` (for the general path to read) unless it is an optional
/// `-` and 1 to 15 digits, with eight bytes buffered from the field's start, from its first
/// digit and, past eight digits, from the ninth.
#[inline(always)]
fn int64_field(data: &[u8], i: usize, delimiter: u8) -> Option<(i64, usize)> {
    let mut x = word(data, i)?;
    // The lowest byte has no borrow from below.
    let neg = x & 0xff == u64::from(b'-'.wrapping_sub(b'0'));
    let j = i + usize::from(neg);
    if neg {
        x = word(data, j)?;
    }
    let n = digit_count(x);
    let want = u64::from(delimiter.wrapping_sub(b'0'));
    // No borrow reaches byte `n` from the digits below it, so it is the delimiter minus '0'.
    let (v, end) = if (1..8).contains(&n) {
        if (x >> (8 * n)) & 0xff != want {
            return None;
        }
        (digits8(x << (8 * (8 - n))), j + n)
    } else if n == 8 {
        let y = word(data, j + 8)?;
        let m = digit_count(y);
        if m == 8 || (y >> (8 * m)) & 0xff != want {
            return None;
        }
        // Shifted in two steps: by 64 when `m` is 0.
        let low = digits8((y << 8) << (8 * (7 - m)));
        const POW10: [u64; 8] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000];
        (digits8(x) * POW10[m & 7] + low, j + 8 + m)
    } else {
        return None;
    };
    // At most 15 digits: `v` fits an i64 either way.
    let sign = -i64::from(neg);
    Some(((v as i64 ^ sign) - sign, end + 1))
}

/// The tuple of `N` (at most 4) `int64`s in the first `10 * N` bytes: the fields, the
/// offsets of all but the first, the count.
#[inline(always)]
fn int64s_tuple<const N: usize>(ints: &[i64; N]) -> [u8; 40] {
    let mut t = [0u8; 40];
    for (f, v) in ints.iter().enumerate() {
        t[8 * f..8 * f + 8].copy_from_slice(&v.to_le_bytes());
    }
    for f in 1..N {
        let o = 8 * N + 2 * (f - 1);
        t[o..o + 2].copy_from_slice(&((8 * f) as u16).to_le_bytes());
    }
    t[10 * N - 2..10 * N].copy_from_slice(&(N as u16).to_le_bytes());
    t
}

impl Int64Layout {
    /// The layout for `key` and `value` tuples of a CSV file of `columns` columns.
    fn new(key: &IntTuple, value: &IntTuple, columns: usize) -> Option<Int64Layout> {
        let (k, v) = (key.int64s?, value.int64s?);
        if k + v != columns {
            return None;
        }
        let mut layout = Int64Layout {
            key_fields: k,
            value_fields: v,
            key: [0; 4],
            value: [0; 4],
            in_order: false,
        };
        for (c, f) in layout.key.iter_mut().zip(&key.fields) {
            *c = f.column;
        }
        for (c, f) in layout.value.iter_mut().zip(&value.fields) {
            *c = f.column;
        }
        let columns = layout.key.iter().take(k).chain(layout.value.iter().take(v));
        layout.in_order = columns.copied().eq(0..k + v);
        Some(layout)
    }

    /// [`IntRows::parse_run`] for this layout.
    #[inline]
    fn run(
        &self,
        data: &[u8],
        room: usize,
        batch: &mut Batch,
        prev: &mut Option<[i64; INT_KEY]>,
        prev_key: Option<&[u8]>,
        schema: &TupleSchema,
    ) -> PlainRun {
        macro_rules! dispatch {
            ($(($k:literal, $v:literal)),*) => {
                match (self.key_fields, self.value_fields, self.in_order) {
                    $(
                        ($k, $v, true) => {
                            self.run_kv::<$k, $v, true>(data, room, batch, prev, prev_key, schema)
                        }
                        ($k, $v, false) => {
                            self.run_kv::<$k, $v, false>(data, room, batch, prev, prev_key, schema)
                        }
                    )*
                    _ => PlainRun::default(),
                }
            };
        }
        dispatch!(
            (1, 1),
            (1, 2),
            (1, 3),
            (1, 4),
            (2, 1),
            (2, 2),
            (2, 3),
            (2, 4),
            (3, 1),
            (3, 2),
            (3, 3),
            (3, 4),
            (4, 1),
            (4, 2),
            (4, 3),
            (4, 4)
        )
    }

    /// [`Int64Layout::run`] for `K` key and `V` value fields (and the columns in that order if
    /// `IN_ORDER`): tuples of constant size made on the stack, the batch's room for them made
    /// once, the rows counted once at the end.
    #[inline(never)]
    fn run_kv<const K: usize, const V: usize, const IN_ORDER: bool>(
        &self,
        data: &[u8],
        room: usize,
        batch: &mut Batch,
        prev: &mut Option<[i64; INT_KEY]>,
        prev_key: Option<&[u8]>,
        schema: &TupleSchema,
    ) -> PlainRun {
        let (ksize, vsize) = (10 * K, 10 * V);
        let mut last: [i64; K] = [0; K];
        let mut have_last = prev.is_some();
        if let Some(p) = prev {
            for (l, p) in last.iter_mut().zip(p.iter()) {
                *l = *p;
            }
        }
        let (key_cols, value_cols) = if IN_ORDER {
            (
                std::array::from_fn::<_, 4, _>(|f| f % INT_COLUMNS),
                std::array::from_fn::<_, 4, _>(|f| (K + f) % INT_COLUMNS),
            )
        } else {
            (
                self.key.map(|c| c % INT_COLUMNS),
                self.value.map(|c| c % INT_COLUMNS),
            )
        };
        let mut run = PlainRun::default();
        batch.keys.reserve(room * ksize);
        batch.values.reserve(room * vsize);
        while run.records < room {
            let rest = data.get(run.bytes..).unwrap_or(&[]);
            let mut cols = [0i64; INT_COLUMNS];
            let mut i = 0;
            let mut whole = true;
            for c in 0..K + V {
                let delimiter = if c + 1 == K + V { b'\n' } else { b',' };
                match int64_field(rest, i, delimiter) {
                    Some((v, next)) => {
                        cols[c % INT_COLUMNS] = v;
                        i = next;
                    }
                    None => {
                        whole = false;
                        break;
                    }
                }
            }
            if !whole {
                break;
            }
            let key: [i64; K] = std::array::from_fn(|f| cols[key_cols[f]]);
            let value: [i64; V] = std::array::from_fn(|f| cols[value_cols[f]]);
            let kt = int64s_tuple(&key);
            let kt = &kt[..ksize];
            // Strictly after the previous key?
            let after = if have_last {
                key > last
            } else {
                prev_key.is_none_or(|pk| schema.compare_keys(pk, kt).is_lt())
            };
            if !after {
                break;
            }
            batch.keys.extend_from_slice(kt);
            batch
                .values
                .extend_from_slice(&int64s_tuple(&value)[..vsize]);
            last = key;
            have_last = true;
            run.last_start = run.bytes;
            run.bytes += i;
            run.records += 1;
        }
        if batch.end_rows(run.records, (ksize, vsize)).is_err() {
            batch.keys.truncate(batch.keys.len() - run.records * ksize);
            batch
                .values
                .truncate(batch.values.len() - run.records * vsize);
            return PlainRun::default();
        }
        if have_last {
            let p = prev.get_or_insert([0; INT_KEY]);
            for (p, l) in p.iter_mut().zip(last) {
                *p = l;
            }
        }
        run
    }
}

/// Turns CSV records into key and value tuples: the header checked against the schema, then
/// one call per record.
struct RowMaker {
    key: TupleMaker,
    /// `None` when only keys are read.
    value: Option<TupleMaker>,
    parser: FieldParser,
    ints: Option<IntRows>,
}

impl RowMaker {
    /// Reads and checks the header (required; columns matched by name). With `keys_only`, other
    /// columns are ignored; otherwise every header column must be a schema column.
    fn new<R: Read>(
        rdr: &mut RecordReader<R>,
        schema: &MapSchema,
        null: &NullText,
        keys_only: bool,
    ) -> Result<RowMaker> {
        rdr.read()
            .map_err(|e| Error::from(e).context("reading the CSV header"))?;
        let header: Vec<Vec<u8>> = rdr.fields().map(<[u8]>::to_vec).collect();
        if header.is_empty() || header == [b"".to_vec()] {
            return Err(Error::msg(
                "the CSV file is empty: a header row is required",
            ));
        }
        for (j, h) in header.iter().enumerate() {
            if header[..j].contains(h) {
                return Err(Error::msg(format!(
                    "the CSV header names column {:?} twice",
                    String::from_utf8_lossy(h)
                )));
            }
            let known = schema.columns().any(|c| c.name.as_bytes() == &h[..]);
            if !known && !keys_only {
                return Err(Error::msg(format!(
                    "the CSV header has column {:?}, which is not in the map's schema ({})",
                    String::from_utf8_lossy(h),
                    schema.describe()
                )));
            }
        }
        let key = TupleMaker::new(&schema.key, schema.key_desc(), &header)?;
        let value = if keys_only {
            None
        } else {
            Some(TupleMaker::new(
                &schema.value,
                schema.value_desc(),
                &header,
            )?)
        };
        Ok(RowMaker {
            key,
            value,
            parser: FieldParser::default(),
            ints: IntRows::new(schema, &header, null, keys_only),
        })
    }

    /// Reads the next record of `rdr` and appends its tuples (see [`RowMaker::make`]); false
    /// at the end of the input.
    #[inline]
    fn next<R: Read>(
        &mut self,
        rdr: &mut RecordReader<R>,
        null: &NullText,
        blobs: &mut dyn BlobStore,
        keys: &mut Vec<u8>,
        values: &mut Vec<u8>,
    ) -> Result<bool> {
        if let Some(ints) = &self.ints {
            if rdr.read_plain_with(|data| ints.parse(data, keys, values)) {
                return Ok(true);
            }
        }
        if !rdr.read()? {
            return Ok(false);
        }
        self.make(rdr, null, blobs, keys, values)?;
        Ok(true)
    }

    /// Appends the key and value tuples of the current record of `rdr` to `keys` and
    /// `values`; an error names the record's line and the column.
    #[inline]
    fn make<R>(
        &mut self,
        rdr: &RecordReader<R>,
        null: &NullText,
        blobs: &mut dyn BlobStore,
        keys: &mut Vec<u8>,
        values: &mut Vec<u8>,
    ) -> Result<()> {
        let at = |e: String| Error::msg(format!("line {}: {e}", rdr.position().line));
        self.key
            .make(rdr, null, &mut self.parser, blobs, keys)
            .map_err(at)?;
        if let Some(vm) = &mut self.value {
            vm.make(rdr, null, &mut self.parser, blobs, values)
                .map_err(at)?;
        }
        Ok(())
    }
}

/// Reads the remaining records of `rdr` into `rows`.
#[allow(clippy::too_many_arguments)]
fn collect_rows<R: Read>(
    rdr: &mut RecordReader<R>,
    maker: &mut RowMaker,
    null: &NullText,
    blobs: &mut dyn BlobStore,
    schema: &TupleSchema,
    len_hint: Option<u64>,
    progress: &ProgressBar,
    rows: &mut Rows,
) -> Result<()> {
    let mut prev_key_start = rows.keys.len();
    let mut reserved = false;
    loop {
        let key_start = rows.keys.len();
        if !maker.next(rdr, null, blobs, &mut rows.keys, &mut rows.values)? {
            break;
        }
        let line = rdr.position().line;
        if rows.sorted_input && !rows.key_ends.is_empty() {
            let prev = rows.keys.get(prev_key_start..key_start).unwrap_or(&[]);
            let cur = rows.keys.get(key_start..).unwrap_or(&[]);
            if !schema.compare_keys(prev, cur).is_lt() {
                rows.sorted_input = false;
            }
        }
        prev_key_start = key_start;
        rows.key_ends.push(rows.keys.len());
        rows.value_ends.push(rows.values.len());
        rows.lines.push(line);
        if !reserved && rows.key_ends.len() >= 4096 {
            // Size the arenas for the whole input once, from the first rows, rather than
            // growing them by copying.
            reserved = true;
            if let Some(total) = len_hint {
                let read = rdr.bytes_read().max(1);
                let scale = total as f64 / read as f64 * 1.05;
                let want = |have: usize| ((have as f64) * scale) as usize;
                rows.keys.reserve(want(rows.keys.len()));
                rows.values.reserve(want(rows.values.len()));
                let n = want(rows.key_ends.len());
                rows.key_ends.reserve(n);
                rows.value_ends.reserve(n);
                rows.lines.reserve(n);
            }
        }
        if rows.key_ends.len().is_multiple_of(65536) {
            progress.set_position(rdr.bytes_read());
        }
    }
    progress.set_position(rdr.bytes_read());
    Ok(())
}

/// Reads CSV rows (header required, columns matched by name) into tuples. With `keys_only`,
/// only the key columns are read (other columns are ignored) and values are empty; otherwise
/// every header column must be a schema column. Large values go out of band into `store`.
pub fn read_csv<R: Read, S: ChunkStore + ?Sized>(
    input: R,
    len_hint: Option<u64>,
    schema: &MapSchema,
    null: &NullText,
    store: &S,
    keys_only: bool,
    progress: &ProgressBar,
) -> Result<Rows> {
    let mut rdr = RecordReader::new(input);
    let mut maker = RowMaker::new(&mut rdr, schema, null, keys_only)?;
    let mut blobs = StoreBlobs::new(store);
    let mut rows = Rows {
        sorted_input: true,
        ..Rows::default()
    };
    let ts = schema.tuple_schema();
    collect_rows(
        &mut rdr, &mut maker, null, &mut blobs, &ts, len_hint, progress, &mut rows,
    )?;
    Ok(rows)
}

/// Rows per batch handed from the parsing thread to the building one.
const BATCH_ROWS: usize = 4096;
/// A batch is handed over early once its tuples take this many bytes.
const BATCH_BYTES: usize = 1 << 20;
/// Batches in circulation (being filled, queued, being built).
const BATCHES: usize = 4;

/// Encoded rows on their way from the parser to the tree builder (reused, never shrunk).
///
/// While every row's key and value have the same sizes as the first row's (always so for
/// schemas of fixed-width, non-null columns), no ends are listed: row `i` is at `i` times those
/// sizes. The first row of another size lists the ends of all rows from then on.
#[derive(Default)]
struct Batch {
    keys: Vec<u8>,
    values: Vec<u8>,
    /// Number of rows.
    rows: usize,
    /// Key and value sizes of every row, while `key_ends` is empty.
    sizes: (usize, usize),
    key_ends: Vec<u32>,
    value_ends: Vec<u32>,
}

impl Batch {
    fn clear(&mut self) {
        self.keys.clear();
        self.key_ends.clear();
        self.values.clear();
        self.value_ends.clear();
        self.rows = 0;
        self.sizes = (0, 0);
    }

    fn len(&self) -> usize {
        self.rows
    }

    /// True while rows are found from their sizes (no ends listed).
    fn uniform(&self) -> bool {
        self.key_ends.is_empty()
    }

    /// Counts the tuples appended since the lengths `(ks, vs)` of `keys` and `values` as one
    /// row; an error if the batch outgrows 4 GiB.
    #[inline]
    fn end_row(&mut self, ks: usize, vs: usize) -> Result<()> {
        let sizes = (self.keys.len() - ks, self.values.len() - vs);
        self.end_rows(1, sizes)
    }

    /// Counts `n` rows of `sizes` (key and value bytes) appended last as rows.
    #[inline]
    fn end_rows(&mut self, n: usize, sizes: (usize, usize)) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        if self.uniform() && (self.rows == 0 || self.sizes == sizes) {
            self.sizes = sizes;
            self.rows += n;
            return Ok(());
        }
        let too_big = || Error::msg("a batch of rows grew past 4 GiB");
        // Every end listed below is at most these.
        if u32::try_from(self.keys.len()).is_err() || u32::try_from(self.values.len()).is_err() {
            return Err(too_big());
        }
        if self.uniform() {
            // The first row of other sizes: list the ends of the rows before it.
            let (ks, vs) = self.sizes;
            for r in 1..=self.rows {
                let ke = u32::try_from(r * ks).map_err(|_| too_big())?;
                let ve = u32::try_from(r * vs).map_err(|_| too_big())?;
                self.key_ends.push(ke);
                self.value_ends.push(ve);
            }
        }
        let (mut ke, mut ve) = (
            self.keys.len() - n * sizes.0,
            self.values.len() - n * sizes.1,
        );
        for _ in 0..n {
            ke += sizes.0;
            ve += sizes.1;
            self.key_ends
                .push(u32::try_from(ke).map_err(|_| too_big())?);
            self.value_ends
                .push(u32::try_from(ve).map_err(|_| too_big())?);
        }
        self.rows += n;
        Ok(())
    }

    fn key(&self, i: usize) -> &[u8] {
        self.row(i).0
    }

    /// Row `i` (empty tuples if there is none).
    fn row(&self, i: usize) -> (&[u8], &[u8]) {
        let ((ks, ke), (vs, ve)) = if self.uniform() {
            let (k, v) = self.sizes;
            ((i * k, (i + 1) * k), (i * v, (i + 1) * v))
        } else {
            let end = |ends: &[u32], i: usize| ends.get(i).map_or(0, |&e| e as usize);
            let start = |ends: &[u32]| i.checked_sub(1).map_or(0, |p| end(ends, p));
            (
                (start(&self.key_ends), end(&self.key_ends, i)),
                (start(&self.value_ends), end(&self.value_ends, i)),
            )
        };
        (
            self.keys.get(ks..ke).unwrap_or(&[]),
            self.values.get(vs..ve).unwrap_or(&[]),
        )
    }

    /// Calls `f` with every row in order, until it fails.
    #[inline]
    fn for_each<E>(&self, mut f: impl FnMut(&[u8], &[u8]) -> Result<(), E>) -> Result<(), E> {
        match self.sizes {
            (ks, vs) if self.uniform() && ks > 0 && vs > 0 => {
                // `keys` and `values` hold exactly `rows` tuples of these sizes.
                let keys = self.keys.chunks_exact(ks);
                let values = self.values.chunks_exact(vs);
                for (k, v) in keys.zip(values) {
                    f(k, v)?;
                }
            }
            _ => {
                for i in 0..self.rows {
                    let (k, v) = self.row(i);
                    f(k, v)?;
                }
            }
        }
        Ok(())
    }
}

/// The CSV line of each row handed over, kept as the places where lines stop following each
/// other one by one (one entry for a file without blank or multi-line records).
#[derive(Default)]
struct LineMap {
    /// (row, line) where `line` is not the previous row's line plus one.
    marks: Vec<(u64, u64)>,
    rows: u64,
    next_line: u64,
}

impl LineMap {
    #[inline]
    fn push(&mut self, line: u64) {
        if self.rows == 0 || line != self.next_line {
            self.marks.push((self.rows, line));
        }
        self.rows += 1;
        self.next_line = line + 1;
    }

    /// `n` rows on the lines from `first` on, one each.
    #[inline]
    fn push_run(&mut self, first: u64, n: usize) {
        if n == 0 {
            return;
        }
        if self.rows == 0 || first != self.next_line {
            self.marks.push((self.rows, first));
        }
        self.rows += n as u64;
        self.next_line = first + n as u64;
    }

    fn get(&self, row: u64) -> u64 {
        let i = self.marks.partition_point(|&(r, _)| r <= row);
        match i.checked_sub(1).and_then(|i| self.marks.get(i)) {
            Some(&(r, l)) => l + (row - r),
            None => 0,
        }
    }
}

/// What the parsing thread ends with.
struct Parsed {
    /// Rows handed over in batches (all in strictly increasing key order), with their lines.
    lines: LineMap,
    /// The rows from the first one out of order to the end, when there was one.
    rest: Option<Rows>,
    /// When the last record had been parsed.
    done: Instant,
}

/// The parsing thread: records into batches of tuples, sent to the builder while they come in
/// key order; from the first row out of order on, into [`Parsed::rest`]. Fails with `None`
/// if the builder stopped taking batches.
fn parse_batches<R: Read>(
    input: R,
    schema: &MapSchema,
    null: &NullText,
    progress: &ProgressBar,
    full: SyncSender<Batch>,
    empty: Receiver<Batch>,
) -> Result<Parsed, Option<Error>> {
    let mut rdr = RecordReader::new(input);
    let maker = RowMaker::new(&mut rdr, schema, null, false)?;
    parse_batches_with(rdr, maker, schema, null, progress, full, empty)
}

/// [`parse_batches`] after the header, with `maker` made for it.
#[allow(clippy::too_many_arguments)]
fn parse_batches_with<R: Read>(
    mut rdr: RecordReader<R>,
    mut maker: RowMaker,
    schema: &MapSchema,
    null: &NullText,
    progress: &ProgressBar,
    full: SyncSender<Batch>,
    empty: Receiver<Batch>,
) -> Result<Parsed, Option<Error>> {
    let ts = schema.tuple_schema();
    let mut lines = LineMap::default();
    // The last key handed over, for the order check across batches.
    let mut last: Vec<u8> = Vec::new();
    // The integers of the last key, while the integer fast path made it.
    let mut prev_ints: Option<[i64; INT_KEY]> = None;
    let mut made = 0;
    loop {
        let mut batch = match empty.try_recv() {
            Ok(b) => b,
            Err(TryRecvError::Empty) if made < BATCHES => {
                made += 1;
                Batch::default()
            }
            Err(_) => empty.recv().map_err(|_| None)?,
        };
        batch.clear();
        let mut more = true;
        while batch.len() < BATCH_ROWS && batch.keys.len() + batch.values.len() < BATCH_BYTES {
            if let Some(ints) = &maker.ints {
                // Plain integer records, as many as come, straight into the batch.
                let before = lines.rows;
                let room = BATCH_ROWS - batch.len();
                let prev_key = match (&prev_ints, batch.len()) {
                    (Some(_), _) => None,
                    (None, 0) => (lines.rows > 0).then(|| last.clone()),
                    (None, n) => Some(batch.key(n - 1).to_vec()),
                };
                let n = rdr.read_plain_run(|data| {
                    ints.parse_run(
                        data,
                        room,
                        &mut batch,
                        &mut prev_ints,
                        prev_key.as_deref(),
                        &ts,
                    )
                });
                if n > 0 {
                    lines.push_run(rdr.position().line + 1 - n as u64, n);
                    if before / 65536 != lines.rows / 65536 {
                        progress.set_position(rdr.bytes_read());
                    }
                    continue;
                }
            }
            prev_ints = None;
            let (ks, vs) = (batch.keys.len(), batch.values.len());
            if !maker.next(
                &mut rdr,
                null,
                &mut NoBlobStore,
                &mut batch.keys,
                &mut batch.values,
            )? {
                more = false;
                break;
            }
            let line = rdr.position().line;
            let key = batch.keys.get(ks..).unwrap_or(&[]);
            let prev = match batch.len() {
                0 => (lines.rows > 0).then_some(&last[..]),
                n => Some(batch.key(n - 1)),
            };
            if prev.is_some_and(|p| !ts.compare_keys(p, key).is_lt()) {
                // The rest goes to the caller to sort, starting with this row.
                let mut rest = Rows::default();
                rest.push(key, batch.values.get(vs..).unwrap_or(&[]), line, &ts);
                batch.keys.truncate(ks);
                batch.values.truncate(vs);
                let mut blobs = NoBlobStore;
                collect_rows(
                    &mut rdr, &mut maker, null, &mut blobs, &ts, None, progress, &mut rest,
                )?;
                rest.sorted_input = false;
                if batch.len() > 0 {
                    full.send(batch).map_err(|_| None)?;
                }
                return Ok(Parsed {
                    lines,
                    rest: Some(rest),
                    done: Instant::now(),
                });
            }
            batch.end_row(ks, vs)?;
            lines.push(line);
            if lines.rows.is_multiple_of(65536) {
                progress.set_position(rdr.bytes_read());
            }
        }
        if let Some(n) = batch.len().checked_sub(1) {
            last.clear();
            last.extend_from_slice(batch.key(n));
            full.send(batch).map_err(|_| None)?;
        }
        if !more {
            progress.set_position(rdr.bytes_read());
            return Ok(Parsed {
                lines,
                rest: None,
                done: Instant::now(),
            });
        }
    }
}

/// The outcome of [`build_csv`].
pub enum Built {
    /// The input came in key order and the tree is built.
    Tree {
        /// Its root.
        root: Address,
        /// Its row count.
        rows: usize,
        /// How long reading and parsing the input took (the build ran alongside).
        parse_time: Duration,
    },
    /// The input was not in key order: every row, to sort ([`Rows::sort`], which also finds
    /// duplicate keys) and build ([`build`]).
    Unsorted {
        /// The rows.
        rows: Rows,
        /// True if `store` got chunks of a partial tree (built before the first row out of
        /// order) that nothing refers to, and nothing else: a caller that does not want them
        /// kept can drop its uncommitted chunks before building. False if `store` holds
        /// values of `rows` written out of band.
        partial_tree: bool,
    },
}

/// True if tuples of `desc` may need a blob store (values written out of band).
fn needs_blobs(desc: &TupleDesc) -> bool {
    desc.types()
        .iter()
        .any(|t| t.enc.is_adaptive() || t.enc.is_address())
}

/// Reads CSV rows (header required, every header column a schema column) and builds a new tree
/// of them, parsing on a second thread while this one builds. See [`Built`] for input that is
/// not in key order.
pub fn build_csv<R: Read + Send, S: ChunkStore + ?Sized>(
    input: R,
    len_hint: Option<u64>,
    schema: &MapSchema,
    null: &NullText,
    store: &S,
    progress: &ProgressBar,
) -> Result<Built> {
    let started = Instant::now();
    let ts = schema.tuple_schema();
    if needs_blobs(&ts.key) || needs_blobs(&ts.value) {
        // The parser needs the store, which stays on this thread.
        let rows = read_csv(input, len_hint, schema, null, store, false, progress)?;
        if !rows.sorted_input() {
            return Ok(Built::Unsorted {
                rows,
                partial_tree: false,
            });
        }
        let parse_time = started.elapsed();
        return Ok(Built::Tree {
            root: build(store, &ts, &rows)?,
            rows: rows.len(),
            parse_time,
        });
    }
    let (full_tx, full_rx) = sync_channel::<Batch>(BATCHES - 2);
    let (empty_tx, empty_rx) = sync_channel::<Batch>(BATCHES);
    std::thread::scope(|scope| {
        let parser =
            scope.spawn(move || parse_batches(input, schema, null, progress, full_tx, empty_rx));
        let mut builder = TreeBuilder::new(store, &ts);
        if background_hashing() {
            // A third thread: it pays when the parser leaves the build thread the bottleneck.
            builder = builder.with_hash_thread();
        }
        let mut failed = None;
        for batch in full_rx.iter() {
            if let Err(e) = batch.for_each(|k, v| builder.add(k, v)) {
                failed = Some(e);
            }
            if failed.is_some() {
                break;
            }
            // The parser may have finished and gone: then the batch is simply dropped.
            let _ = empty_tx.send(batch);
        }
        drop(full_rx);
        drop(empty_tx);
        let parsed = match parser.join() {
            Ok(p) => p,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        if let Some(e) = failed {
            return Err(e.into());
        }
        let parsed = match parsed {
            Ok(p) => p,
            Err(Some(e)) => return Err(e),
            Err(None) => return Err(Error::msg("the tree builder stopped taking rows")),
        };
        let parse_time = parsed.done.duration_since(started);
        let root = builder.finish()?;
        let Some(rest) = parsed.rest else {
            return Ok(Built::Tree {
                root,
                rows: usize::try_from(parsed.lines.rows).unwrap_or(usize::MAX),
                parse_time,
            });
        };
        // Read back the rows built so far, then the rest after them.
        let mut all = Rows::default();
        let map = Map::new(store, root, ts.clone());
        for (i, row) in map.iter()?.enumerate() {
            let (k, v) = row?;
            all.push(k, v, parsed.lines.get(i as u64), &ts);
        }
        all.keys.extend_from_slice(&rest.keys);
        all.values.extend_from_slice(&rest.values);
        let (kb, vb) = (
            all.keys.len() - rest.keys.len(),
            all.values.len() - rest.values.len(),
        );
        all.key_ends.extend(rest.key_ends.iter().map(|e| e + kb));
        all.value_ends
            .extend(rest.value_ends.iter().map(|e| e + vb));
        all.lines.extend_from_slice(&rest.lines);
        all.sorted_input = false;
        Ok(Built::Unsorted {
            rows: all,
            partial_tree: true,
        })
    })
}

/// Builds a new tree of the (sorted) rows; returns its root.
pub fn build<S: ChunkStore + ?Sized>(
    store: &S,
    schema: &TupleSchema,
    rows: &Rows,
) -> Result<Address> {
    let mut b = TreeBuilder::new(store, schema);
    for (k, v) in rows.iter() {
        b.add(k, v)?;
    }
    Ok(b.finish()?)
}

/// Puts every row into the map at `root` (rows replace values of existing keys); returns the
/// new root.
pub fn upsert<S: ChunkStore + ?Sized>(
    store: &S,
    schema: &TupleSchema,
    root: Address,
    rows: &Rows,
) -> Result<Address> {
    let map = Map::new(store, root, schema.clone());
    Ok(map.apply(rows.iter().map(|(k, v)| (k, Some(v))))?.root())
}

/// Deletes every row's key from the map at `root`; returns the new root.
pub fn delete<S: ChunkStore + ?Sized>(
    store: &S,
    schema: &TupleSchema,
    root: Address,
    rows: &Rows,
) -> Result<Address> {
    let map = Map::new(store, root, schema.clone());
    Ok(map.apply(rows.iter().map(|(k, _)| (k, None)))?.root())
}

/// Parses, sorts and builds in one call, for benchmarks and library users: the root of a new
/// map of the CSV rows, and their count.
pub fn import_new<S: ChunkStore + ?Sized>(
    input: &[u8],
    schema: &MapSchema,
    null: &NullText,
    store: &S,
) -> Result<(Address, usize)> {
    let len = Some(input.len() as u64);
    match build_csv(input, len, schema, null, store, &ProgressBar::hidden())? {
        Built::Tree { root, rows, .. } => Ok((root, rows)),
        Built::Unsorted { mut rows, .. } => {
            let ts = schema.tuple_schema();
            rows.sort(&ts)?;
            Ok((build(store, &ts, &rows)?, rows.len()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny deterministic generator (xorshift64) for the randomized tests.
    fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }
    use prollystore::format::HashProfile;
    use prollystore::MemoryStore;

    fn int_schema() -> MapSchema {
        MapSchema::parse("a:int64,b:int64", "c:int64,d:int64").unwrap()
    }

    fn row(i: i64) -> (i64, i64, i64, i64) {
        (i, (i * 7) % 1_000_003, i * 13, -i)
    }

    /// CSV text of rows `ids` (header `a,b,c,d`), with some records written the long way
    /// (quoted fields, blank lines, `\r\n`) so both record paths are taken.
    fn csv_of(ids: &[i64]) -> String {
        let mut s = String::from("a,b,c,d\n");
        for (n, &i) in ids.iter().enumerate() {
            let (a, b, c, d) = row(i);
            match n % 97 {
                5 => s.push_str(&format!("\"{a}\",{b},\"{c}\",{d}\n")),
                6 => s.push_str(&format!("\n{a},{b},{c},{d}\r\n")),
                7 => s.push_str(&format!("{a},+{b},{c},{d}\n")),
                _ => s.push_str(&format!("{a},{b},{c},{d}\n")),
            }
        }
        s
    }

    /// The root of the rows built from tuples with the library, not through CSV.
    fn library_root(store: &MemoryStore, ids: &[i64]) -> Address {
        let schema = int_schema();
        let mut kb = TupleBuilder::new(schema.key_desc());
        let mut vb = TupleBuilder::new(schema.value_desc());
        let mut ids = ids.to_vec();
        ids.sort_unstable();
        let mut rows = Vec::new();
        for i in ids {
            let (a, b, c, d) = row(i);
            kb.put_int64(0, a).unwrap();
            kb.put_int64(1, b).unwrap();
            vb.put_int64(0, c).unwrap();
            vb.put_int64(1, d).unwrap();
            rows.push((
                kb.build().unwrap().as_bytes().to_vec(),
                vb.build().unwrap().as_bytes().to_vec(),
            ));
        }
        Map::from_sorted(
            store,
            schema.tuple_schema(),
            rows.iter().map(|(k, v)| (&k[..], &v[..])),
        )
        .unwrap()
        .root()
    }

    fn import(text: &str, schema: &MapSchema) -> Result<(Address, usize)> {
        let store = MemoryStore::new(HashProfile::Blake3);
        import_new(text.as_bytes(), schema, &NullText::default(), &store)
    }

    /// The same CSV through `read_csv` (every row first): the error, or the root after sorting.
    fn import_collected(text: &str, schema: &MapSchema) -> Result<Address> {
        let store = MemoryStore::new(HashProfile::Blake3);
        let ts = schema.tuple_schema();
        let mut rows = read_csv(
            text.as_bytes(),
            None,
            schema,
            &NullText::default(),
            &store,
            false,
            &ProgressBar::hidden(),
        )?;
        rows.sort(&ts)?;
        build(&store, &ts, &rows)
    }

    #[test]
    fn sorted_and_unsorted_input_give_the_library_root() {
        let n = 30_000i64;
        let sorted: Vec<i64> = (0..n).collect();
        let store = MemoryStore::new(HashProfile::Blake3);
        let want = library_root(&store, &sorted);
        let schema = int_schema();
        assert_eq!(
            import(&csv_of(&sorted), &schema).unwrap(),
            (want, n as usize)
        );
        // Out of order from the start, in the middle, and at the very end (after batches
        // have been built: they are read back).
        let mut early = sorted.clone();
        early.swap(0, 1);
        let mut middle = sorted.clone();
        middle.swap(15_000, 15_001);
        let mut late = sorted.clone();
        late.swap(29_998, 29_999);
        let mut reversed = sorted.clone();
        reversed.reverse();
        for ids in [early, middle, late, reversed] {
            let text = csv_of(&ids);
            assert_eq!(import(&text, &schema).unwrap(), (want, n as usize));
            assert_eq!(import_collected(&text, &schema).unwrap(), want);
        }
        // An empty file with a header: an empty map.
        let empty = library_root(&store, &[]);
        assert_eq!(import("a,b,c,d\n", &schema).unwrap(), (empty, 0));
    }

    #[test]
    fn general_path_gives_the_same_tuples() {
        // Nullable columns and a NULL marker turn the integer fast path off, and `int32`
        // fields go through the general encoder: the tuples must not change.
        let text = csv_of(&(0..5000).collect::<Vec<_>>());
        let fast = import(&text, &int_schema()).unwrap();
        let nullable = MapSchema::parse("a:int64,b:int64", "c:int64?,d:int64?").unwrap();
        let store = MemoryStore::new(HashProfile::Blake3);
        let marker = NullText {
            marker: Some(b"7".to_vec()),
        };
        let slow = import_new(text.as_bytes(), &nullable, &NullText::default(), &store).unwrap();
        // Nullability does not change the tuple bytes, so the roots agree.
        assert_eq!(slow, fast);
        // A marker that is an integer text disables the fast path; rows with `7` become NULL.
        let store = MemoryStore::new(HashProfile::Blake3);
        let with_marker =
            import_new(b"a,b,c,d\n1,2,7,4\n2,3,4,5\n", &nullable, &marker, &store).unwrap();
        let store = MemoryStore::new(HashProfile::Blake3);
        let with_empty = import_new(
            b"a,b,c,d\n1,2,,4\n2,3,4,5\n",
            &nullable,
            &NullText::default(),
            &store,
        )
        .unwrap();
        assert_eq!(with_marker, with_empty);
    }

    #[test]
    fn errors_name_the_line() {
        let schema = int_schema();
        let ids: Vec<i64> = (0..20_000).collect();
        let good = csv_of(&ids);
        let lines: Vec<&str> = good.lines().collect();
        // A bad value far into the file (after batches were built), on its line number.
        let mut bad = lines.clone();
        bad[15_000] = "15000,1,x,3";
        let bad = bad.join("\n") + "\n";
        // (Blank lines count: `lines` holds them too.)
        let want = "line 15001: column \"c\": int64 \"x\" is not ";
        for e in [
            import(&bad, &schema).unwrap_err().to_string(),
            import_collected(&bad, &schema).unwrap_err().to_string(),
        ] {
            assert!(e.starts_with(want), "{e} / {want}");
        }
        // A record with another field count: the csv crate's own message.
        let mut short = lines.clone();
        short[12_000] = "1,2,3";
        let short = short.join("\n") + "\n";
        let mut r = csv::Reader::from_reader(short.as_bytes());
        let mut rec = csv::ByteRecord::new();
        let want = loop {
            match r.read_byte_record(&mut rec) {
                Ok(true) => {}
                Ok(false) => panic!("no error"),
                Err(e) => break e.to_string(),
            }
        };
        assert_eq!(import(&short, &schema).unwrap_err().to_string(), want);
        assert_eq!(
            import_collected(&short, &schema).unwrap_err().to_string(),
            want
        );
        // Duplicate keys, early and late, both named by line.
        for (at, dup_of) in [(3usize, 2usize), (19_990, 19_000)] {
            let mut dup = lines.clone();
            dup[at] = dup[dup_of];
            let dup = dup.join("\n") + "\n";
            let want = format!(
                "line {}: duplicate key (same key as line {})",
                at + 1,
                dup_of + 1
            );
            assert_eq!(import(&dup, &schema).unwrap_err().to_string(), want);
            assert_eq!(
                import_collected(&dup, &schema).unwrap_err().to_string(),
                want
            );
        }
    }

    /// Every row's tuples (or the first error), with or without the integer fast path.
    fn tuples(text: &str, schema: &MapSchema, fast: bool) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let null = NullText::default();
        let mut rdr = RecordReader::with_capacity(text.as_bytes(), 64);
        let mut maker = RowMaker::new(&mut rdr, schema, &null, false)?;
        assert!(maker.ints.is_some(), "the fast path applies");
        if !fast {
            maker.ints = None;
        }
        let mut rows = Rows::default();
        collect_rows(
            &mut rdr,
            &mut maker,
            &null,
            &mut NoBlobStore,
            &schema.tuple_schema(),
            None,
            &ProgressBar::hidden(),
            &mut rows,
        )?;
        Ok((0..rows.len())
            .map(|i| (rows.key(i).to_vec(), rows.value(i).to_vec()))
            .collect())
    }

    #[test]
    fn integer_fast_path_makes_the_general_tuples() {
        let schemas = [
            MapSchema::parse("a:int8,b:uint16", "c:int32,d:uint64,e:int64,f:uint8").unwrap(),
            MapSchema::parse("a:int64", "b:int64,c:int64,d:int64,e:int64,f:int64").unwrap(),
            MapSchema::parse("a:int64,b:int64", "c:int64,d:int64,e:int64,f:int64").unwrap(),
            MapSchema::parse("a:int64,b:int64,c:int64", "d:int64,e:int64,f:int64").unwrap(),
        ];
        let edge = [
            "0",
            "-0",
            "1",
            "-1",
            "127",
            "128",
            "-128",
            "-129",
            "255",
            "256",
            "65535",
            "65536",
            "2147483647",
            "2147483648",
            "-2147483648",
            "-2147483649",
            "999999999999999999",
            "-999999999999999999",
            "1000000000000000000",
            "9223372036854775807",
            "-9223372036854775808",
            "18446744073709551615",
            "007",
            "+5",
            " 5",
            "5 ",
            "",
            "x",
            "1.5",
            "\"12\"",
            "--1",
        ];
        let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
        for _ in 0..3000 {
            let mut text = String::from("f,e,d,c,b,a\n");
            for _ in 0..1 + next() % 4 {
                let fields: Vec<&str> = (0..6)
                    .map(|_| {
                        if next().is_multiple_of(3) {
                            edge[(next() % edge.len() as u64) as usize]
                        } else {
                            ["3", "42", "-7", "200", "65000", "12345678"][(next() % 6) as usize]
                        }
                    })
                    .collect();
                text.push_str(&fields.join(","));
                text.push_str(if next().is_multiple_of(5) {
                    "\r\n"
                } else {
                    "\n"
                });
            }
            // Mixed widths, and all-`int64` tuples of one to five fields.
            for schema in &schemas {
                let fast = tuples(&text, schema, true).map_err(|e| e.to_string());
                let general = tuples(&text, schema, false).map_err(|e| e.to_string());
                assert_eq!(fast, general, "{text:?}");
            }
        }
    }

    #[test]
    fn integer_keys_in_numeric_order_are_in_key_order() {
        // The fast path checks the input order on the parsed integers: it must agree with
        // the key comparator, signs and widths included.
        let schema = MapSchema::parse("a:int32,b:uint16,c:int64", "v:int8").unwrap();
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
        let mut keys: Vec<(i64, i64, i64)> = (0..20_000)
            .map(|_| {
                let a = (next() % 7) as i64 - 3;
                let b = (next() % 5) as i64;
                let c = (next() % 2_000_001) as i64 - 1_000_000;
                (a * 700_000_000 * i64::from(next().is_multiple_of(2)), b, c)
            })
            .collect();
        keys.sort_unstable();
        keys.dedup();
        let mut text = String::from("a,b,c,v\n");
        for (a, b, c) in &keys {
            text.push_str(&format!("{a},{b},{c},{}\n", c % 100));
        }
        let (root, n) = import(&text, &schema).unwrap();
        assert_eq!(n, keys.len());
        assert_eq!(import_collected(&text, &schema).unwrap(), root);
        let store = MemoryStore::new(HashProfile::Blake3);
        let rows = read_csv(
            text.as_bytes(),
            None,
            &schema,
            &NullText::default(),
            &store,
            false,
            &ProgressBar::hidden(),
        )
        .unwrap();
        assert!(rows.sorted_input(), "numeric order is key order");
    }

    #[test]
    fn digits_match_a_plain_loop() {
        let mut texts: Vec<String> = vec![String::new(), "x".into(), "0".into()];
        for n in [
            1u64,
            9,
            10,
            12345678,
            99999999,
            100000000,
            123456789012345678,
        ] {
            texts.push(n.to_string());
        }
        for len in 1..=20 {
            texts.push("7".repeat(len));
            texts.push(format!("{}1", "0".repeat(len)));
        }
        for t in texts {
            for tail in ["", ",", "\n", "-", "a", "9\u{ff}", ",12345678"] {
                let s = format!("{t}{tail}");
                let b = s.as_bytes();
                let end = b
                    .iter()
                    .position(|c| !c.is_ascii_digit())
                    .unwrap_or(b.len());
                let want = b[..end].iter().fold(0u64, |v, c| {
                    v.wrapping_mul(10).wrapping_add(u64::from(c - b'0'))
                });
                assert_eq!(digits(b, 0), (want, end), "{s:?}");
            }
        }
    }

    /// Which record readers [`batched`] may use.
    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Path {
        /// All of them ([`Int64Layout`] where it applies).
        Fastest,
        /// [`IntRows`] without [`Int64Layout`].
        Ints,
        /// The general reader only.
        General,
    }

    /// A row as handed over: key, value and CSV line.
    type Row = (Vec<u8>, Vec<u8>, u64);

    /// What `parse_batches` makes of `text` (read through a buffer of `capacity` bytes): the
    /// rows handed over in batches and, after the first out of order, the rest; or its error.
    fn batched(
        text: &str,
        schema: &MapSchema,
        path: Path,
        capacity: usize,
    ) -> std::result::Result<(Vec<Row>, Option<Vec<Row>>), String> {
        let null = NullText::default();
        let mut rdr = RecordReader::with_capacity(text.as_bytes(), capacity);
        let mut maker = RowMaker::new(&mut rdr, schema, &null, false).map_err(|e| e.to_string())?;
        match path {
            Path::Fastest => {}
            Path::Ints => {
                if let Some(ints) = &mut maker.ints {
                    ints.int64 = None;
                }
            }
            Path::General => maker.ints = None,
        }
        let (full_tx, full_rx) = sync_channel::<Batch>(BATCHES - 2);
        let (empty_tx, empty_rx) = sync_channel::<Batch>(BATCHES);
        let progress = ProgressBar::hidden();
        let (rows, parsed) = std::thread::scope(|scope| {
            let null = &null;
            let progress = &progress;
            let parser = scope.spawn(move || {
                parse_batches_with(rdr, maker, schema, null, progress, full_tx, empty_rx)
            });
            let mut rows = Vec::new();
            for batch in full_rx.iter() {
                assert!(batch.len() > 0, "empty batches are not sent");
                batch
                    .for_each(|k, v| {
                        rows.push((k.to_vec(), v.to_vec()));
                        Ok::<(), ()>(())
                    })
                    .unwrap();
                let _ = empty_tx.send(batch);
            }
            (rows, parser.join().unwrap())
        });
        let parsed = parsed.map_err(|e| e.map_or("stopped".to_string(), |e| e.to_string()))?;
        let rows = rows
            .into_iter()
            .enumerate()
            .map(|(i, (k, v))| (k, v, parsed.lines.get(i as u64)))
            .collect();
        let rest = parsed.rest.map(|r| {
            (0..r.len())
                .map(|i| (r.key(i).to_vec(), r.value(i).to_vec(), r.lines[i]))
                .collect()
        });
        Ok((rows, rest))
    }

    #[test]
    fn int64_fields_match_a_plain_parse() {
        let mut texts: Vec<String> = vec![
            String::new(),
            "-".into(),
            "--1".into(),
            "+1".into(),
            "-0".into(),
            "0".into(),
            " 1".into(),
            "1 ".into(),
            "\"1\"".into(),
            "x".into(),
        ];
        for len in 1..=20 {
            for d in ["7", "9", "0"] {
                texts.push(d.repeat(len));
                texts.push(format!("-{}", d.repeat(len)));
            }
            texts.push(format!("{}1", "0".repeat(len)));
        }
        for t in &texts {
            for tail in [",", "\n", "\r\n", "", ";", "-"] {
                for pad in ["", "1,2,3\n", "1234567890123456789"] {
                    let s = format!("{t}{tail}{pad}");
                    let b = s.as_bytes();
                    for delimiter in [b',', b'\n'] {
                        let got = int64_field(b, 0, delimiter);
                        // The field: an optional `-`, the digits after it.
                        let first = usize::from(b.first() == Some(&b'-'));
                        let digits = b[first..].iter().take_while(|c| c.is_ascii_digit()).count();
                        let end = first + digits;
                        let want = ((1..=15).contains(&digits) && b.get(end) == Some(&delimiter))
                            .then(|| (s[..end].parse::<i64>().unwrap(), end + 1));
                        match got {
                            Some(g) => assert_eq!(Some(g), want, "{s:?}"),
                            // Declined: only for want of buffered bytes (8 from the first
                            // digit, and from the ninth when there are more than 8).
                            None => {
                                let short =
                                    b.len() < first + 8 || (digits >= 8 && b.len() < first + 16);
                                assert!(want.is_none() || short, "{s:?} declined");
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn int64_layout_applies_to_all_int64_maps() {
        let applies = |key: &str, value: &str, header: &[&str], keys_only: bool| {
            let schema = MapSchema::parse(key, value).unwrap();
            let header: Vec<Vec<u8>> = header.iter().map(|h| h.as_bytes().to_vec()).collect();
            IntRows::new(&schema, &header, &NullText::default(), keys_only)
                .is_some_and(|r| r.int64.is_some())
        };
        assert!(applies("a:int64", "b:int64", &["a", "b"], false));
        assert!(applies("a:int64", "b:int64", &["b", "a"], false));
        assert!(applies(
            "a:int64,b:int64,c:int64,d:int64",
            "e:int64,f:int64,g:int64,h:int64",
            &["h", "g", "f", "e", "d", "c", "b", "a"],
            false
        ));
        assert!(!applies("a:int64", "b:int64", &["a", "b"], true));
        let in_order = |header: &[&str]| {
            let schema = MapSchema::parse("a:int64,b:int64", "c:int64").unwrap();
            let header: Vec<Vec<u8>> = header.iter().map(|h| h.as_bytes().to_vec()).collect();
            IntRows::new(&schema, &header, &NullText::default(), false)
                .and_then(|r| r.int64)
                .map(|l| l.in_order)
        };
        assert_eq!(in_order(&["a", "b", "c"]), Some(true));
        assert_eq!(in_order(&["b", "a", "c"]), Some(false));
        assert_eq!(in_order(&["a", "c", "b"]), Some(false));
        assert!(!applies("a:int64", "b:int32", &["a", "b"], false));
        assert!(!applies("a:uint64", "b:int64", &["a", "b"], false));
        assert!(!applies(
            "a:int64",
            "b:int64,c:int64,d:int64,e:int64,f:int64",
            &["a", "b", "c", "d", "e", "f"],
            false
        ));
    }

    #[test]
    fn int64_layout_makes_the_general_rows() {
        // Every layout's field counts, header orders shuffled; records written in every way
        // the fast path declines (it must then leave them to the others, which make the same
        // rows, lines, order decisions and errors). Small reader buffers put records across
        // buffer ends.
        let edge = [
            "0",
            "-0",
            "007",
            "-",
            "+5",
            " 5",
            "5 ",
            "",
            "x",
            "1.5",
            "\"12\"",
            "--1",
            "99999999",
            "100000000",
            "-12345678",
            "123456789012345",
            "1234567890123456",
            "123456789;",
            "12345678 ",
            "-1234567x",
            "1234567\"",
            "999999999999999999",
            "9223372036854775807",
            "-9223372036854775808",
            "9223372036854775808",
            "18446744073709551615",
        ];
        let mut next = xorshift(0x0123_4567_89ab_cdefu64);
        let names = ["a", "b", "c", "d", "e", "f", "g", "h"];
        for case in 0..1500 {
            let k = 1 + (case % 4) as usize;
            let v = 1 + (case / 4 % 4) as usize;
            let cols = k + v;
            let key: Vec<String> = (0..k).map(|i| format!("{}:int64", names[i])).collect();
            let value: Vec<String> = (k..cols).map(|i| format!("{}:int64", names[i])).collect();
            let schema = MapSchema::parse(&key.join(","), &value.join(",")).unwrap();
            // The header in some order; the first key column counts up so rows come sorted.
            let mut order: Vec<usize> = (0..cols).collect();
            for i in (1..cols).rev() {
                order.swap(i, (next() % (i as u64 + 1)) as usize);
            }
            let mut text = order
                .iter()
                .map(|&i| names[i])
                .collect::<Vec<_>>()
                .join(",");
            text.push('\n');
            let rows = 1 + next() % 40;
            let mut id: i64 = -((next() % 300) as i64);
            for r in 0..rows {
                id += (next() % 3) as i64 - i64::from(next().is_multiple_of(17)) * 2;
                let mut fields: Vec<String> = order
                    .iter()
                    .map(|&c| {
                        if c == 0 && !next().is_multiple_of(8) {
                            id.to_string()
                        } else if next().is_multiple_of(6) {
                            edge[(next() % edge.len() as u64) as usize].to_string()
                        } else {
                            ((next() % 2_000_000_000) as i64 - 1_000_000_000).to_string()
                        }
                    })
                    .collect();
                match next() % 40 {
                    0 => fields.push("1".into()),
                    1 => {
                        fields.pop();
                    }
                    2 => text.push('\n'),
                    _ => {}
                }
                text.push_str(&fields.join(","));
                let last = r + 1 == rows;
                match next() % 25 {
                    0 => text.push_str("\r\n"),
                    1 => text.push('\r'),
                    2 if last => {}
                    _ => text.push('\n'),
                }
            }
            let capacity = [16, 64, 4096][(next() % 3) as usize];
            let fastest = batched(&text, &schema, Path::Fastest, capacity);
            for path in [Path::Ints, Path::General] {
                let other = batched(&text, &schema, path, capacity);
                assert_eq!(fastest, other, "{path:?} {capacity} {text:?}");
            }
        }
    }

    #[test]
    fn int64_layout_spans_batches_and_buffers() {
        // Enough rows for several batches, with records the fast path declines among them
        // (every `Path` must agree), then one out of order far in.
        let schema = int_schema();
        let ids: Vec<i64> = (0..20_000).collect();
        let text = csv_of(&ids);
        let fastest = batched(&text, &schema, Path::Fastest, 256 << 10).unwrap();
        assert_eq!(fastest.0.len(), 20_000);
        assert!(fastest.1.is_none());
        assert_eq!(
            fastest,
            batched(&text, &schema, Path::General, 256 << 10).unwrap()
        );
        assert_eq!(fastest, batched(&text, &schema, Path::Ints, 1000).unwrap());
        let mut late = ids.clone();
        late.swap(17_000, 17_001);
        let text = csv_of(&late);
        let fastest = batched(&text, &schema, Path::Fastest, 256 << 10).unwrap();
        // Rows up to the first out of order (the 17002nd) are handed over.
        assert_eq!(fastest.0.len(), 17_001);
        assert_eq!(fastest.1.as_ref().map(Vec::len), Some(2_999));
        assert_eq!(
            fastest,
            batched(&text, &schema, Path::General, 333).unwrap()
        );
    }

    #[test]
    fn batches_list_ends_once_sizes_differ() {
        let mut b = Batch::default();
        let push = |b: &mut Batch, k: &[u8], v: &[u8]| {
            let (ks, vs) = (b.keys.len(), b.values.len());
            b.keys.extend_from_slice(k);
            b.values.extend_from_slice(v);
            b.end_row(ks, vs).unwrap();
        };
        push(&mut b, b"k1", b"v1x");
        push(&mut b, b"k2", b"v2x");
        assert!(b.uniform());
        b.keys.extend_from_slice(b"k3k4");
        b.values.extend_from_slice(b"v3xv4x");
        b.end_rows(2, (2, 3)).unwrap();
        assert!(b.uniform());
        push(&mut b, b"k5long", b"");
        assert!(!b.uniform());
        b.keys.extend_from_slice(b"k6k7");
        b.values.extend_from_slice(b"v6xv7x");
        b.end_rows(2, (2, 3)).unwrap();
        push(&mut b, b"k8", b"v8x");
        let want: Vec<(&[u8], &[u8])> = vec![
            (b"k1", b"v1x"),
            (b"k2", b"v2x"),
            (b"k3", b"v3x"),
            (b"k4", b"v4x"),
            (b"k5long", b""),
            (b"k6", b"v6x"),
            (b"k7", b"v7x"),
            (b"k8", b"v8x"),
        ];
        assert_eq!(b.len(), want.len());
        let mut got = Vec::new();
        b.for_each(|k, v| {
            got.push((k.to_vec(), v.to_vec()));
            Ok::<(), ()>(())
        })
        .unwrap();
        let got: Vec<(&[u8], &[u8])> = got.iter().map(|(k, v)| (&k[..], &v[..])).collect();
        assert_eq!(got, want);
        for (i, &(k, v)) in want.iter().enumerate() {
            assert_eq!(b.row(i), (k, v));
            assert_eq!(b.key(i), k);
        }
        b.clear();
        assert!(b.uniform() && b.len() == 0);
        // Empty values (a keys-only map): uniform, still walked row by row.
        push(&mut b, b"a", b"");
        push(&mut b, b"b", b"");
        let mut n = 0;
        b.for_each(|_, v| {
            assert!(v.is_empty());
            n += 1;
            Ok::<(), ()>(())
        })
        .unwrap();
        assert_eq!(n, 2);
    }

    #[test]
    fn nullable_int64_rows_mix_tuple_sizes() {
        // NULLs (empty fields) make shorter tuples among the fast path's rows: the batches
        // list their ends, and every path hands over the same rows.
        let schema = MapSchema::parse("a:int64", "b:int64?,c:int64?").unwrap();
        let header = [b"a".to_vec(), b"b".to_vec(), b"c".to_vec()];
        let rows = IntRows::new(&schema, &header, &NullText::default(), false);
        assert!(
            rows.is_some_and(|r| r.int64.is_some()),
            "the fast path applies"
        );
        let mut text = String::from("a,b,c\n");
        for i in 0..3000 {
            match i % 7 {
                3 => text.push_str(&format!("{i},,{}\n", i * 3)),
                5 => text.push_str(&format!("{i},{},\n", -i)),
                _ => text.push_str(&format!("{i},{},{}\n", -i, i * 3)),
            }
        }
        let fastest = batched(&text, &schema, Path::Fastest, 256 << 10).unwrap();
        assert_eq!(fastest.0.len(), 3000);
        assert_eq!(
            fastest,
            batched(&text, &schema, Path::General, 256 << 10).unwrap()
        );
        assert_eq!(fastest, batched(&text, &schema, Path::Ints, 100).unwrap());
        let (root, n) = import(&text, &schema).unwrap();
        assert_eq!(n, 3000);
        assert_eq!(import_collected(&text, &schema).unwrap(), root);
    }

    #[test]
    fn line_map_counts_lines() {
        let mut m = LineMap::default();
        let lines = [2u64, 3, 4, 7, 8, 12, 13, 14, 15];
        for &l in &lines {
            m.push(l);
        }
        for (i, &l) in lines.iter().enumerate() {
            assert_eq!(m.get(i as u64), l);
        }
        assert_eq!(m.marks.len(), 3);
    }
}
