//! The parsing thread of a new map's import: records into batches of tuples, handed to the
//! builder while they come in key order, and the CSV line of every row handed over, kept
//! compactly for the errors found later.

use std::io::Read;
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError};
use std::time::Instant;

use indicatif::ProgressBar;
use prollystore::TreeSchema;
use prollystore_format::tuple::NoBlobStore;

use crate::error::{Error, Result};
use crate::field_text::NullText;
use crate::map_schema::MapSchema;
use crate::records::RecordReader;

use super::batch::Batch;
use super::int_tuple::INT_KEY;
use super::row_maker::RowMaker;

/// Rows per batch handed from the parsing thread to the building one.
const BATCH_ROWS: usize = 4096;
/// A batch is handed over early once its tuples take this many bytes.
const BATCH_BYTES: usize = 1 << 20;
/// Batches in circulation (being filled, queued, being built).
pub(super) const BATCHES: usize = 4;

/// The CSV line of each row handed over, kept as the places where lines stop following each
/// other one by one (one entry for a file without blank or multi-line records).
#[derive(Default)]
pub(super) struct LineMap {
    /// (row, line) where `line` is not the previous row's line plus one.
    marks: Vec<(u64, u64)>,
    pub(super) rows: u64,
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

    pub(super) fn get(&self, row: u64) -> u64 {
        let i = self.marks.partition_point(|&(r, _)| r <= row);
        match i.checked_sub(1).and_then(|i| self.marks.get(i)) {
            Some(&(r, l)) => l + (row - r),
            None => 0,
        }
    }
}

/// What the parsing thread ends with.
pub(super) struct Parsed {
    /// Rows handed over in batches, with their lines.
    pub(super) lines: LineMap,
    /// When the last record had been parsed.
    pub(super) done: Instant,
}

/// The parsing thread: records into batches of tuples, sent to the builder, checked for key
/// order up to the first row out of order, which the batch marks ([`Batch::first_unsorted`]);
/// later batches are marked unsorted from their first row. Fails with `None`
/// if the builder stopped taking batches.
pub(super) fn parse_batches<R: Read>(
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
    // False from the first row out of order on: no more checks, no integer fast path (whose
    // runs stop at rows out of order).
    let mut in_order = true;
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
        if !in_order {
            batch.first_unsorted = Some(0);
        }
        let mut more = true;
        while batch.len() < BATCH_ROWS && batch.keys.len() + batch.values.len() < BATCH_BYTES {
            if let (Some(ints), true) = (&maker.ints, in_order) {
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
            if in_order && prev.is_some_and(|p| !ts.compare_keys(p, key).is_lt()) {
                // The builder sorts the rows from this one on.
                in_order = false;
                batch.first_unsorted = Some(batch.len());
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
                done: Instant::now(),
            });
        }
    }
}
#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::sync::mpsc::sync_channel;

    use crate::import::test_input::{csv_of, int_schema, xorshift};

    /// Which record readers [`batched`] may use.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub(in crate::import) enum Path {
        /// All of them ([`Int64Layout`](crate::import::int64_layout::Int64Layout) where it
        /// applies).
        Fastest,
        /// [`IntRows`](crate::import::int_rows::IntRows) without `Int64Layout`.
        Ints,
        /// The general reader only.
        General,
    }

    /// A row as handed over: key, value and CSV line.
    pub(in crate::import) type Row = (Vec<u8>, Vec<u8>, u64);

    /// What `parse_batches` makes of `text` (read through a buffer of `capacity` bytes): the
    /// rows handed over in batches and, after the first out of order, the rest; or its error.
    pub(in crate::import) fn batched(
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
        let rows = std::thread::scope(|scope| {
            let null = &null;
            let progress = &progress;
            let parser = scope.spawn(move || {
                parse_batches_with(rdr, maker, schema, null, progress, full_tx, empty_rx)
            });
            let mut rows = Vec::new();
            let mut first_unsorted = None;
            for batch in full_rx.iter() {
                assert!(batch.len() > 0, "empty batches are not sent");
                if let (None, Some(i)) = (first_unsorted, batch.first_unsorted) {
                    first_unsorted = Some(rows.len() + i);
                }
                batch
                    .for_each(|k, v| {
                        rows.push((k.to_vec(), v.to_vec()));
                        Ok::<(), ()>(())
                    })
                    .unwrap();
                let _ = empty_tx.send(batch);
            }
            (rows, first_unsorted, parser.join().unwrap())
        });
        let (rows, first_unsorted, parsed) = (rows.0, rows.1, rows.2);
        let parsed = parsed.map_err(|e| e.map_or("stopped".to_string(), |e| e.to_string()))?;
        let mut rows: Vec<Row> = rows
            .into_iter()
            .enumerate()
            .map(|(i, (k, v))| (k, v, parsed.lines.get(i as u64)))
            .collect();
        let rest = first_unsorted.map(|i| rows.split_off(i));
        Ok((rows, rest))
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
