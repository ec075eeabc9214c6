//! Rows as CSV text: formatting a map's `(key, value)` tuples into fields and writing them as
//! CSV lines (RFC 4180 quoting: a field is quoted only if it holds a comma, a quote, CR or LF).

use std::io::Write;

use prollystore::store::StoreFastPaths;

use crate::error::Result;
use crate::field_text::{format_field, NullText};
use crate::map_schema::MapSchema;

/// One line of fields being assembled, reused between rows.
#[derive(Default)]
pub struct Line {
    buf: Vec<u8>,
    ends: Vec<usize>,
}

impl Line {
    /// Forgets every field.
    pub fn clear(&mut self) {
        self.buf.clear();
        self.ends.clear();
    }

    /// Number of fields.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True if there are no fields.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Field `i`.
    pub fn field(&self, i: usize) -> &[u8] {
        let start = if i == 0 {
            0
        } else {
            self.ends.get(i - 1).copied().unwrap_or(0)
        };
        let end = self.ends.get(i).copied().unwrap_or(start);
        self.buf.get(start..end).unwrap_or(&[])
    }

    /// Appends a field.
    pub fn push(&mut self, text: &[u8]) {
        self.buf.extend_from_slice(text);
        self.ends.push(self.buf.len());
    }

    /// Appends the fields of a tuple (`None`: as many NULLs as the descriptor has fields).
    pub fn push_tuple<S: StoreFastPaths + ?Sized>(
        &mut self,
        store: &S,
        desc: &prollystore_format::tuple::TupleDesc,
        tuple: Option<&[u8]>,
        null: &NullText,
    ) -> Result<()> {
        for i in 0..desc.len() {
            let present = match tuple {
                Some(t) => format_field(store, desc, t, i, &mut self.buf)?,
                None => false,
            };
            if !present {
                self.buf.extend_from_slice(null.out());
            }
            self.ends.push(self.buf.len());
        }
        Ok(())
    }

    /// Writes fields `range` as one CSV line (without the line end).
    pub fn write_fields(&self, range: std::ops::Range<usize>, out: &mut impl Write) -> Result<()> {
        let single = range.len() == 1;
        for i in range.clone() {
            if i > range.start {
                out.write_all(b",")?;
            }
            write_csv_field(self.field(i), single, out)?;
        }
        Ok(())
    }

    /// Writes every field as one CSV line, with `\n`.
    pub fn write_csv(&self, out: &mut impl Write) -> Result<()> {
        self.write_fields(0..self.len(), out)?;
        out.write_all(b"\n")?;
        Ok(())
    }
}

/// Writes one CSV field, quoted if needed (`alone`: the only field of its line, where an empty
/// field is written as `""` so that the line is not blank).
pub fn write_csv_field(f: &[u8], alone: bool, out: &mut impl Write) -> std::io::Result<()> {
    let needs =
        f.iter().any(|&c| matches!(c, b',' | b'"' | b'\r' | b'\n')) || (alone && f.is_empty());
    if !needs {
        return out.write_all(f);
    }
    out.write_all(b"\"")?;
    for part in f.split_inclusive(|&c| c == b'"') {
        out.write_all(part)?;
        if part.last() == Some(&b'"') {
            out.write_all(b"\"")?;
        }
    }
    out.write_all(b"\"")
}

/// The header line: every column name, key first.
pub fn header(schema: &MapSchema) -> Line {
    let mut l = Line::default();
    for c in schema.columns() {
        l.push(c.name.as_bytes());
    }
    l
}

/// Appends a whole row (key then value fields).
pub fn push_row<S: StoreFastPaths + ?Sized>(
    line: &mut Line,
    store: &S,
    key_desc: &prollystore_format::tuple::TupleDesc,
    value_desc: &prollystore_format::tuple::TupleDesc,
    key: &[u8],
    value: &[u8],
    null: &NullText,
) -> Result<()> {
    line.push_tuple(store, key_desc, Some(key), null)?;
    line.push_tuple(store, value_desc, Some(value), null)
}
