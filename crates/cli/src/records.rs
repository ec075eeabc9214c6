//! CSV records as fast as the import needs them, read exactly as `csv::Reader` with its default
//! settings reads them (comma, `"` quotes with doubling, `\r`, `\n` or `\r\n` line ends, blank
//! lines skipped, a UTF-8 BOM dropped, every record as long as the first).
//!
//! A line without quotes is split in place with one byte-class lookup per byte; anything else
//! (quotes, the header with its possible BOM) goes through `csv-core`, the parser under the `csv`
//! crate. Records, their [`Position`]s and the one data error a byte reader can meet (a record
//! with another field count than the first) are the `csv` crate's, message included: the tests
//! compare the two readers on random input.

use std::io::{self, Read};

/// Where a record starts, counted as `csv::Position` counts: bytes consumed before it, `1 +`
/// the newlines among them, and the records before it (the header is record 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Position {
    /// Byte offset.
    pub byte: u64,
    /// Line number (1-based).
    pub line: u64,
    /// Record index (0-based, the header included).
    pub record: u64,
}

/// Why a record could not be read.
#[derive(Debug)]
pub enum RecordError {
    /// Reading the input failed.
    Io(io::Error),
    /// A record has another number of fields than the first record (the header).
    UnequalLengths {
        /// Where the record starts.
        pos: Position,
        /// Fields of the first record.
        expected: usize,
        /// Fields of this one.
        len: usize,
    },
}

impl std::fmt::Display for RecordError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecordError::Io(e) => e.fmt(f),
            // The `csv` crate's words, so that messages stay what they were.
            RecordError::UnequalLengths { pos, expected, len } => write!(
                f,
                "CSV error: record {} (line: {}, byte: {}): found record with {len} fields, \
                 but the previous record has {expected} fields",
                pos.record, pos.line, pos.byte
            ),
        }
    }
}

impl std::error::Error for RecordError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RecordError::Io(e) => Some(e),
            RecordError::UnequalLengths { .. } => None,
        }
    }
}

impl From<io::Error> for RecordError {
    fn from(e: io::Error) -> RecordError {
        RecordError::Io(e)
    }
}

/// How far a reader given to [`RecordReader::read_plain_run`] got.
#[derive(Clone, Copy, Debug, Default)]
pub struct PlainRun {
    /// Bytes taken: whole records, each ending with its `\n`.
    pub bytes: usize,
    /// Records taken.
    pub records: usize,
    /// Where the last record taken starts.
    pub last_start: usize,
}

const PLAIN: u8 = 0;
const COMMA: u8 = 1;
const END: u8 = 2;
const QUOTE: u8 = 3;

/// The byte classes of the fast path.
static CLASS: [u8; 256] = {
    let mut t = [PLAIN; 256];
    t[b',' as usize] = COMMA;
    t[b'\n' as usize] = END;
    t[b'\r' as usize] = END;
    t[b'"' as usize] = QUOTE;
    t
};

/// The index of the first byte of `data` at or after `i` that is not [`PLAIN`], or
/// `data.len()`. Eight bytes at a time: any byte below `-` (0x2d) is a candidate (the special
/// bytes all are), checked against [`CLASS`].
#[inline]
fn next_special(data: &[u8], mut i: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    loop {
        match data.get(i..i + 8) {
            Some(word) => {
                let mut w = [0u8; 8];
                w.copy_from_slice(word);
                let w = u64::from_le_bytes(w);
                // High bit set in each byte below 0x2d; the lowest one found is exact.
                let below = w.wrapping_sub(ONES * 0x2d) & !w & HIGH;
                if below == 0 {
                    i += 8;
                    continue;
                }
                let j = i + (below.trailing_zeros() / 8) as usize;
                if data.get(j).is_some_and(|&b| CLASS[usize::from(b)] != PLAIN) {
                    return j;
                }
                i = j + 1;
            }
            None => {
                while let Some(&b) = data.get(i) {
                    if CLASS[usize::from(b)] != PLAIN {
                        return i;
                    }
                    i += 1;
                }
                return data.len();
            }
        }
    }
}

/// Reads CSV records one at a time into reused buffers (nothing is allocated per record).
pub struct RecordReader<R> {
    rdr: R,
    /// Input bytes; `buf[start..end]` is read but not yet consumed.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    /// The last record has been read.
    done: bool,
    /// No record has been read yet (the first one goes through `core`, for the BOM).
    first: bool,
    core: csv_core::Reader,
    /// Fields of the current record: ranges of `buf`, or of `out` when `in_out`.
    bounds: Vec<(usize, usize)>,
    in_out: bool,
    /// `core`'s output: field bytes and field ends.
    out: Vec<u8>,
    ends: Vec<usize>,
    pos: Position,
    /// The position after the bytes consumed so far (its `record` is the next record's index).
    next: Position,
    expected: Option<usize>,
}

impl<R> RecordReader<R> {
    /// Where the current record starts.
    pub fn position(&self) -> Position {
        self.pos
    }

    /// Bytes consumed so far.
    pub fn bytes_read(&self) -> u64 {
        self.next.byte
    }

    /// Number of fields of the current record.
    pub fn len(&self) -> usize {
        self.bounds.len()
    }

    /// True if the current record has no fields (before the first read, or at the end).
    pub fn is_empty(&self) -> bool {
        self.bounds.is_empty()
    }

    /// Field `i` of the current record, if it has one.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        let &(s, e) = self.bounds.get(i)?;
        let src = if self.in_out { &self.out } else { &self.buf };
        src.get(s..e)
    }

    /// The current record as the bytes its fields lie in and each field's range of them.
    #[inline]
    pub fn parts(&self) -> (&[u8], &[(usize, usize)]) {
        let src = if self.in_out { &self.out } else { &self.buf };
        (src, &self.bounds)
    }

    /// The fields of the current record.
    pub fn fields(&self) -> impl Iterator<Item = &[u8]> + '_ {
        (0..self.len()).map(|i| self.get(i).unwrap_or(&[]))
    }
}

impl<R: Read> RecordReader<R> {
    /// A reader of `rdr` with a 256 KiB buffer.
    pub fn new(rdr: R) -> RecordReader<R> {
        RecordReader::with_capacity(rdr, 256 << 10)
    }

    /// A reader of `rdr` whose buffer starts at `capacity` bytes (it grows for longer lines).
    pub fn with_capacity(rdr: R, capacity: usize) -> RecordReader<R> {
        RecordReader {
            rdr,
            buf: vec![0; capacity.max(1)],
            start: 0,
            end: 0,
            eof: false,
            done: false,
            first: true,
            core: csv_core::Reader::new(),
            bounds: Vec::new(),
            in_out: false,
            out: vec![0; 1024],
            ends: vec![0; 64],
            pos: Position::default(),
            next: Position {
                byte: 0,
                line: 1,
                record: 0,
            },
            expected: None,
        }
    }

    /// Offers the buffered input from the next record on to `f`, to read that record its own
    /// way. `f` returns `Some(n)` only if `data[..n]` is one whole record of plain fields (no
    /// `"`, as many fields as the first record, separated by commas) ending with its `\n` or
    /// `\r`; the record is then consumed and counted as [`RecordReader::read`] would have, and
    /// this returns true (the record's fields are not kept: [`RecordReader::len`] is 0). False
    /// (nothing consumed) when `f` declines, or when the next record does not start with a
    /// buffered byte that is not a line end: then call `read`.
    #[inline]
    pub fn read_plain_with(&mut self, f: impl FnOnce(&[u8]) -> Option<usize>) -> bool {
        if self.first || self.done {
            return false;
        }
        let data = self.buf.get(self.start..self.end).unwrap_or(&[]);
        if matches!(data.first(), None | Some(b'\n' | b'\r')) {
            return false;
        }
        let Some(n) = f(data) else {
            return false;
        };
        let newline = n.checked_sub(1).and_then(|i| data.get(i)) == Some(&b'\n');
        self.pos = self.next;
        self.bounds.clear();
        self.in_out = false;
        self.next.line += u64::from(newline);
        self.next.byte += n as u64;
        self.next.record += 1;
        self.start += n;
        true
    }

    /// [`RecordReader::read_plain_with`] for many records at once: `f` reads records from the
    /// start of the buffered input its own way and says how far it got ([`PlainRun`]); each
    /// record it took must be plain (as for `read_plain_with`) and end with `\n`. They are
    /// consumed and counted; the current record is the last of them (its fields not kept).
    /// Returns how many records were taken (0: nothing consumed).
    #[inline]
    pub fn read_plain_run(&mut self, f: impl FnOnce(&[u8]) -> PlainRun) -> usize {
        if self.first || self.done {
            return 0;
        }
        let data = self.buf.get(self.start..self.end).unwrap_or(&[]);
        if matches!(data.first(), None | Some(b'\n' | b'\r')) {
            return 0;
        }
        let run = f(data);
        let Some(before_last) = run.records.checked_sub(1) else {
            return 0;
        };
        self.pos = Position {
            byte: self.next.byte + run.last_start as u64,
            line: self.next.line + before_last as u64,
            record: self.next.record + before_last as u64,
        };
        self.bounds.clear();
        self.in_out = false;
        self.next.line += run.records as u64;
        self.next.byte += run.bytes as u64;
        self.next.record += run.records as u64;
        self.start += run.bytes;
        run.records
    }

    /// Reads the next record; false at the end of the input (the current record is then empty).
    pub fn read(&mut self) -> Result<bool, RecordError> {
        self.pos = self.next;
        self.bounds.clear();
        self.in_out = false;
        if self.done {
            return Ok(false);
        }
        if self.first {
            self.first = false;
            return self.read_core();
        }
        // Blank lines (and the `\n` of a `\r\n` that ended the last record) are skipped.
        loop {
            while let Some(&b) = self.buf.get(self.start).filter(|_| self.start < self.end) {
                if b == b'\n' {
                    self.next.line += 1;
                } else if b != b'\r' {
                    break;
                }
                self.start += 1;
                self.next.byte += 1;
            }
            if self.start < self.end {
                break;
            }
            if !self.fill()? {
                self.done = true;
                return Ok(false);
            }
        }
        // One plain line: split it at commas, up to its terminator (consumed with it) or the
        // end of the input.
        'line: loop {
            self.bounds.clear();
            let data = self.buf.get(..self.end).unwrap_or(&[]);
            let mut i = self.start;
            let mut field = i;
            loop {
                i = next_special(data, i);
                let class = data.get(i).map_or(PLAIN, |&b| CLASS[usize::from(b)]);
                match class {
                    COMMA => {
                        self.bounds.push((field, i));
                        i += 1;
                        field = i;
                    }
                    END => {
                        self.bounds.push((field, i));
                        if data.get(i) == Some(&b'\n') {
                            self.next.line += 1;
                        }
                        self.consume(i + 1);
                        break 'line;
                    }
                    QUOTE => return self.read_core(),
                    _ => {
                        // The end of the buffer.
                        if self.eof {
                            self.bounds.push((field, i));
                            self.consume(i);
                            break 'line;
                        }
                        self.fill()?;
                        continue 'line;
                    }
                }
            }
        }
        self.finish_record()
    }

    fn consume(&mut self, to: usize) {
        self.next.byte += (to - self.start) as u64;
        self.start = to;
    }

    /// Counts the record and checks its length against the first record's.
    fn finish_record(&mut self) -> Result<bool, RecordError> {
        self.next.record += 1;
        match self.expected {
            None => self.expected = Some(self.bounds.len()),
            Some(n) if n != self.bounds.len() => {
                return Err(RecordError::UnequalLengths {
                    pos: self.pos,
                    expected: n,
                    len: self.bounds.len(),
                })
            }
            Some(_) => {}
        }
        Ok(true)
    }

    /// Reads more input, keeping `buf[start..end]` (moved to the front, the buffer grown when
    /// full); false at the end of the input.
    fn fill(&mut self) -> Result<bool, RecordError> {
        if self.eof {
            return Ok(false);
        }
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            let n = self.buf.len() * 2;
            self.buf.resize(n, 0);
        }
        let n = loop {
            match self
                .rdr
                .read(self.buf.get_mut(self.end..).unwrap_or(&mut []))
            {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        };
        self.end += n;
        self.eof = n == 0;
        Ok(n > 0)
    }

    /// One record through `csv-core`, from `start` (the reader is between records).
    fn read_core(&mut self) -> Result<bool, RecordError> {
        use csv_core::ReadRecordResult as R;
        self.bounds.clear();
        if self.next.record == 0 {
            // csv-core drops a BOM only if its first input holds all three bytes, and takes an
            // input of only a BOM for the end of the data.
            while self.end - self.start < 4 && self.fill()? {}
        }
        let (mut outlen, mut endlen) = (0, 0);
        loop {
            if self.start == self.end {
                self.fill()?;
            }
            let input = self.buf.get(self.start..self.end).unwrap_or(&[]);
            let (res, nin, nout, nend) = self.core.read_record(
                input,
                self.out.get_mut(outlen..).unwrap_or(&mut []),
                self.ends.get_mut(endlen..).unwrap_or(&mut []),
            );
            let newlines = input
                .get(..nin)
                .unwrap_or(&[])
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            self.next.line += newlines as u64;
            self.consume(self.start + nin);
            outlen += nout;
            endlen += nend;
            match res {
                R::InputEmpty => {}
                R::OutputFull => {
                    let n = self.out.len() * 2;
                    self.out.resize(n, 0);
                }
                R::OutputEndsFull => {
                    let n = self.ends.len() * 2;
                    self.ends.resize(n, 0);
                }
                R::Record => {
                    self.in_out = true;
                    let mut s = 0;
                    for &e in self.ends.get(..endlen).unwrap_or(&[]) {
                        self.bounds.push((s, e));
                        s = e;
                    }
                    return self.finish_record();
                }
                R::End => {
                    self.done = true;
                    return Ok(false);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What `csv::Reader` (default settings, no header handling) makes of `input`: each record
    /// with its position, then the error that stopped it, if any.
    /// Records with their positions, then the error that stopped the reader, if any.
    type Outcome = (Vec<(Position, Vec<Vec<u8>>)>, Option<String>);

    fn with_csv(input: &[u8]) -> Outcome {
        let mut r = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(input);
        let mut rec = csv::ByteRecord::new();
        let mut out = Vec::new();
        loop {
            match r.read_byte_record(&mut rec) {
                Ok(true) => {
                    let p = rec.position().expect("position");
                    let pos = Position {
                        byte: p.byte(),
                        line: p.line(),
                        record: p.record(),
                    };
                    out.push((pos, rec.iter().map(<[u8]>::to_vec).collect()));
                }
                Ok(false) => return (out, None),
                Err(e) => return (out, Some(e.to_string())),
            }
        }
    }

    fn with_ours(input: &[u8], capacity: usize) -> Outcome {
        let mut r = RecordReader::with_capacity(input, capacity);
        let mut out = Vec::new();
        loop {
            match r.read() {
                Ok(true) => out.push((r.position(), r.fields().map(<[u8]>::to_vec).collect())),
                Ok(false) => return (out, None),
                Err(e) => return (out, Some(e.to_string())),
            }
        }
    }

    fn same(input: &[u8]) {
        let want = with_csv(input);
        for cap in [1, 3, 7, 64, 1 << 16] {
            assert_eq!(
                with_ours(input, cap),
                want,
                "input {:?}, capacity {cap}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn matches_the_csv_crate_on_examples() {
        for s in [
            "",
            "a,b\n1,2\n3,4\n",
            "a,b\n1,2\n3,4",
            "a,b\r\n1,2\r\n3,4\r\n",
            "a,b\r1,2\r3,4",
            "\u{feff}a,b\n1,2\n",
            "\n\na,b\n\n\n1,2\n\r\n3,4\n\n",
            "a,b\n1,2,3\n",
            "a,b\n1\n",
            "a,b\n\"x,y\",2\n\"q\"\"q\",\"multi\nline\"\n5,6\n",
            "a,b\n1,x\"y\n",
            "a,b\n,\n,,\n",
            "a\n\"\"\n\n",
            "a,b\n1,2\r\r\n\r\n3,4",
        ] {
            same(s.as_bytes());
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn matches_the_csv_crate_on_random_input(
            bom in any::<bool>(),
            bytes in proptest::collection::vec(
                prop_oneof![
                    Just(b'a'), Just(b'1'), Just(b','), Just(b'"'), Just(b'\r'), Just(b'\n'),
                    Just(b' '), Just(0xef), Just(0xbb), Just(0xbf)
                ],
                0..80,
            )
        ) {
            let mut input = if bom { b"\xef\xbb\xbf".to_vec() } else { Vec::new() };
            input.extend_from_slice(&bytes);
            same(&input);
        }
    }
}
