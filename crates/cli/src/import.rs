//! CSV import: parse rows into key and value tuples (kept in two flat arenas), sort them by the
//! key descriptor unless they already come sorted, then build a tree or edit an existing one.
//!
//! The hot loop reuses one `ByteRecord`, parses integers straight from bytes, and writes tuples
//! of all-fixed-width descriptors directly ([`FixedEncoder`]); other descriptors go through a
//! reused [`TupleBuilder`] that appends to the arena. Nothing is allocated per row.

use std::io::Read;

use indicatif::ProgressBar;
use prollystore::blob::StoreBlobs;
use prollystore::store::ChunkStore;
use prollystore::tree::build::TreeBuilder;
use prollystore::tuples::TupleSchema;
use prollystore::{Map, TreeSchema};
use prollystore_format::tuple::TupleBuilder;
use prollystore_format::Address;

use crate::error::{Error, Result};
use crate::schema::{Column, MapSchema};
use crate::text::{FieldParser, FixedEncoder, NullText};

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
    fn new(
        columns: &[Column],
        desc: prollystore_format::tuple::TupleDesc,
        header: &[&[u8]],
    ) -> Result<TupleMaker> {
        let mut fields = Vec::with_capacity(columns.len());
        for c in columns {
            let Some(j) = header.iter().position(|h| *h == c.name.as_bytes()) else {
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
    fn make(
        &mut self,
        rec: &csv::ByteRecord,
        null: &NullText,
        parser: &mut FieldParser,
        blobs: &mut dyn prollystore_format::tuple::BlobStore,
        out: &mut Vec<u8>,
    ) -> std::result::Result<(), String> {
        if let Some(fixed) = &mut self.fixed {
            let fields = self.fields.iter().map(|&j| rec.get(j).unwrap_or(b""));
            return fixed.encode(fields, null, out).map_err(|(i, e)| {
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
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(true)
        .buffer_capacity(1 << 16)
        .from_reader(input);
    let header: Vec<Vec<u8>> = rdr
        .byte_headers()
        .map_err(|e| Error::from(e).context("reading the CSV header"))?
        .iter()
        .map(<[u8]>::to_vec)
        .collect();
    let header_refs: Vec<&[u8]> = header.iter().map(Vec::as_slice).collect();
    if header_refs.is_empty() || header_refs == [b"".as_slice()] {
        return Err(Error::msg(
            "the CSV file is empty: a header row is required",
        ));
    }
    for (j, h) in header_refs.iter().enumerate() {
        if header_refs[..j].contains(h) {
            return Err(Error::msg(format!(
                "the CSV header names column {:?} twice",
                String::from_utf8_lossy(h)
            )));
        }
        let known = schema.columns().any(|c| c.name.as_bytes() == *h);
        if !known && !keys_only {
            return Err(Error::msg(format!(
                "the CSV header has column {:?}, which is not in the map's schema ({})",
                String::from_utf8_lossy(h),
                schema.describe()
            )));
        }
    }
    let tuple_schema = schema.tuple_schema();
    let mut key_maker = TupleMaker::new(&schema.key, schema.key_desc(), &header_refs)?;
    let mut value_maker = if keys_only {
        None
    } else {
        Some(TupleMaker::new(
            &schema.value,
            schema.value_desc(),
            &header_refs,
        )?)
    };
    let mut blobs = StoreBlobs::new(store);
    let mut parser = FieldParser::default();
    let mut rows = Rows {
        sorted_input: true,
        ..Rows::default()
    };
    let mut rec = csv::ByteRecord::new();
    let mut prev_key_start = 0usize;
    loop {
        let more = rdr.read_byte_record(&mut rec).map_err(Error::from)?;
        if !more {
            break;
        }
        let line = rec.position().map_or(0, |p| p.line());
        let key_start = rows.keys.len();
        let at = |e: String| Error::msg(format!("line {line}: {e}"));
        key_maker
            .make(&rec, null, &mut parser, &mut blobs, &mut rows.keys)
            .map_err(at)?;
        if let Some(vm) = &mut value_maker {
            vm.make(&rec, null, &mut parser, &mut blobs, &mut rows.values)
                .map_err(at)?;
        }
        if rows.sorted_input && !rows.key_ends.is_empty() {
            let prev = rows.keys.get(prev_key_start..key_start).unwrap_or(&[]);
            let cur = rows.keys.get(key_start..).unwrap_or(&[]);
            if !tuple_schema.compare_keys(prev, cur).is_lt() {
                rows.sorted_input = false;
            }
        }
        prev_key_start = key_start;
        rows.key_ends.push(rows.keys.len());
        rows.value_ends.push(rows.values.len());
        rows.lines.push(line);
        if rows.key_ends.len() == 4096 {
            // Size the arenas for the whole input once, from the first rows, rather than
            // growing them by copying.
            if let Some(total) = len_hint {
                let read = rdr.position().byte().max(1);
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
            progress.set_position(rdr.position().byte());
        }
    }
    progress.set_position(rdr.position().byte());
    Ok(rows)
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
/// map of the CSV rows.
pub fn import_new<S: ChunkStore + ?Sized>(
    input: &[u8],
    schema: &MapSchema,
    null: &NullText,
    store: &S,
) -> Result<(Address, usize)> {
    let len = Some(input.len() as u64);
    let mut rows = read_csv(
        input,
        len,
        schema,
        null,
        store,
        false,
        &ProgressBar::hidden(),
    )?;
    let ts = schema.tuple_schema();
    rows.sort(&ts)?;
    Ok((build(store, &ts, &rows)?, rows.len()))
}
