//! CSV records into key and value tuples: the header checked against the schema, then each
//! record through the integer fast path when it takes it, else field by field (the general
//! way, which makes the same tuples or names the line and column of the error).

use std::io::Read;

use indicatif::ProgressBar;
use prollystore::tuples::TupleSchema;
use prollystore::TreeSchema;
use prollystore_format::tuple::{BlobStore, TupleBuilder, TupleDesc};

use crate::error::{quoted, quoted_bytes, quoted_list, Error, Result};
use crate::field_text::{FieldParser, FixedEncoder, NullText};
use crate::map_schema::{Column, MapSchema};
use crate::records::{RecordError, RecordReader};

use super::collected_rows::Rows;
use super::int_rows::IntRows;

impl From<RecordError> for Error {
    fn from(e: RecordError) -> Error {
        match e {
            RecordError::Io(io) => Error::from(io),
            e => Error::msg(e.to_string()),
        }
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
                    "the CSV header has no column {} (header: {})",
                    quoted(&c.name),
                    quoted_list(header.iter().map(|h| &h[..]))
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

/// Turns CSV records into key and value tuples: the header checked against the schema, then
/// one call per record.
pub(super) struct RowMaker {
    key: TupleMaker,
    /// `None` when only keys are read.
    value: Option<TupleMaker>,
    parser: FieldParser,
    pub(super) ints: Option<IntRows>,
}

impl RowMaker {
    /// Reads and checks the header (required; columns matched by name). With `keys_only`, other
    /// columns are ignored; otherwise every header column must be a schema column.
    pub(super) fn new<R: Read>(
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
        let mut unknown: Vec<&[u8]> = Vec::new();
        for (j, h) in header.iter().enumerate() {
            if header[..j].contains(h) {
                return Err(Error::msg(format!(
                    "the CSV header names column {} twice",
                    quoted_bytes(h)
                )));
            }
            let known = schema.columns().any(|c| c.name.as_bytes() == &h[..]);
            if !known && !keys_only {
                unknown.push(h);
            }
        }
        if !unknown.is_empty() {
            // Every unknown column at once, so one fix of the header is enough.
            return Err(Error::msg(format!(
                "the CSV header has {} not in the map's schema: {} (schema: {})",
                if unknown.len() == 1 {
                    "a column"
                } else {
                    "columns"
                },
                quoted_list(unknown),
                schema.describe()
            )));
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
    pub(super) fn next<R: Read>(
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
pub(super) fn collect_rows<R: Read>(
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
#[cfg(test)]
mod tests {
    use super::*;
    use prollystore_format::tuple::NoBlobStore;

    use crate::import::test_input::xorshift;

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
}
