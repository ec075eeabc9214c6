//! The fast path for a schema whose columns are all integers: plain records parsed straight
//! from the reader's buffer into tuples (digits eight at a time), with the input order checked
//! on the parsed integers. Any record it declines goes the general way.

use prollystore::tuples::TupleSchema;
use prollystore::TreeSchema;

use crate::field_text::NullText;
use crate::map_schema::{Column, MapSchema};
use crate::records::PlainRun;
use prollystore_format::value_parse::{parse_i64, parse_u64};

use super::batch::Batch;
use super::int64_layout::Int64Layout;
use super::int_tuple::{IntField, IntKind, IntTuple, INT_COLUMNS, INT_KEY};

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

/// The fast path for a schema whose columns are all integers: a record of plain decimal
/// fields is parsed straight from the reader's buffer into tuples of constant layout (every
/// field present). Any other record (empty or NULL fields, signs other than a leading `-`, more
/// than 18 digits, values out of range, quotes, spaces, another field count, a line not wholly
/// buffered) is left to the general path, which makes the same tuples or the error.
pub(super) struct IntRows {
    /// Each CSV column, with the byte that must follow its text: `,`, and `\n` after the last
    /// (a `\r` there is checked on the side).
    columns: Vec<(IntText, u8)>,
    key: IntTuple,
    /// `None` when only keys are read.
    value: Option<IntTuple>,
    /// Set when the tuples are all `int64` and fit [`Int64Layout`].
    pub(super) int64: Option<Int64Layout>,
}

impl IntRows {
    /// The fast path for `header` under `schema`, if every key and value column is an integer
    /// and no integer text can be the NULL marker.
    pub(super) fn new(
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

    /// Parses the record at the start of `data` (see
    /// [`RecordReader::read_plain_with`](crate::records::RecordReader::read_plain_with)),
    /// appending its tuples; `None` (nothing appended) if it is not of the simple kind.
    #[inline]
    pub(super) fn parse(
        &self,
        data: &[u8],
        keys: &mut Vec<u8>,
        values: &mut Vec<u8>,
    ) -> Option<usize> {
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
    pub(super) fn parse_run(
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
#[cfg(test)]
mod tests {
    use super::*;

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
}
