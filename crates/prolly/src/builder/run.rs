//! Sorted runs: the rows of one sorted buffer, written and read back in large sequential
//! blocks, to a temporary file or (the last buffer of a build, when the bound leaves room for
//! it) to anonymous memory that is unmapped block by block as the merge reads it, so that the
//! memory goes back while the tree grows. A row is its index (over all rows added), key length
//! and value length as LEB128 varints, then the key and value bytes; rows are parsed in place
//! from the read block, so reading a row copies nothing.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::ops::Range;
use std::path::PathBuf;

use memmap2::MmapMut;

use crate::error::TreeError;
use crate::store::StoreError;

/// Bytes written per system call.
pub(super) const BLOCK: usize = 1 << 20;

/// Bytes of a memory run's blocks: each is unmapped once read, so smaller blocks give memory
/// back sooner.
pub(super) const MEMORY_BLOCK: usize = 256 << 10;

/// Bytes read per system call (at first; a row larger than it grows its reader's block).
/// Smaller than [`BLOCK`], since up to 64 runs are read at once.
const READ_BLOCK: usize = 256 << 10;

/// The longest row head: three varints of at most 10 bytes.
pub(super) const MAX_HEAD: usize = 30;

pub(super) fn io_error(what: &str) -> impl FnOnce(std::io::Error) -> TreeError + '_ {
    move |source| {
        TreeError::Store(StoreError::Io {
            context: format!("sorting builder: {what}"),
            source,
        })
    }
}

/// Writes `x` as a varint at `out[at..]`; the position after it. `out` has room for it
/// (10 bytes).
#[inline]
fn put_varint(out: &mut [u8; MAX_HEAD], mut at: usize, mut x: u64) -> usize {
    while x >= 0x80 {
        out[at] = x as u8 | 0x80;
        x >>= 7;
        at += 1;
    }
    out[at] = x as u8;
    at + 1
}

/// The varint at the start of `b` and its length; `None` if `b` ends inside it or it is
/// longer than a `u64`.
#[inline]
fn get_varint(b: &[u8]) -> Option<(u64, usize)> {
    let mut x = 0u64;
    for (i, &byte) in b.iter().enumerate().take(10) {
        x |= u64::from(byte & 0x7f) << (7 * i);
        if byte < 0x80 {
            return Some((x, i + 1));
        }
    }
    None
}

/// Where a run's bytes are: an anonymous temporary file (deleted by the OS when closed), or
/// blocks of anonymous memory (each unmapped when read).
pub(super) enum Run {
    File(File),
    Memory(VecDeque<MmapMut>),
}

impl Run {
    /// Bytes of memory the run holds (0 for a file).
    #[cfg(test)]
    pub(super) fn memory(&self) -> usize {
        match self {
            Run::File(_) => 0,
            Run::Memory(blocks) => blocks.iter().map(|b| b.len()).sum(),
        }
    }
}

/// A run being written.
pub(super) struct RunWriter {
    run: Run,
    block: Vec<u8>,
    /// Bytes at which the block is flushed.
    flush_at: usize,
}

impl RunWriter {
    /// A new run in a temporary file in `dir`, or the system's temporary directory.
    pub(super) fn new(dir: Option<&PathBuf>) -> Result<RunWriter, TreeError> {
        let file = match dir {
            Some(dir) => tempfile::tempfile_in(dir),
            None => tempfile::tempfile(),
        }
        .map_err(io_error("creating a temporary file for a sorted run"))?;
        Ok(RunWriter {
            run: Run::File(file),
            block: Vec::with_capacity(BLOCK + MAX_HEAD),
            flush_at: BLOCK,
        })
    }

    /// A new run kept in memory.
    pub(super) fn memory() -> RunWriter {
        RunWriter {
            run: Run::Memory(VecDeque::new()),
            block: Vec::with_capacity(MEMORY_BLOCK + MAX_HEAD),
            flush_at: MEMORY_BLOCK,
        }
    }

    /// Appends one row.
    #[cfg(test)]
    pub(super) fn push(&mut self, key: &[u8], value: &[u8], row: u64) -> Result<(), TreeError> {
        self.push_head(key.len(), value.len(), row);
        self.block.extend_from_slice(key);
        self.block.extend_from_slice(value);
        self.flush_if_full()
    }

    /// Appends one row whose key and value lie back to back in `bytes` (the key its first
    /// `key_len` bytes): one copy instead of two.
    #[inline]
    pub(super) fn push_row(
        &mut self,
        bytes: &[u8],
        key_len: usize,
        row: u64,
    ) -> Result<(), TreeError> {
        self.push_head(key_len, bytes.len() - key_len, row);
        self.block.extend_from_slice(bytes);
        self.flush_if_full()
    }

    /// The row's three varints, made on the stack and appended at once.
    #[inline]
    fn push_head(&mut self, key_len: usize, value_len: usize, row: u64) {
        let mut head = [0u8; MAX_HEAD];
        let at = put_varint(&mut head, 0, row);
        let at = put_varint(&mut head, at, key_len as u64);
        let at = put_varint(&mut head, at, value_len as u64);
        self.block.extend_from_slice(&head[..at]);
    }

    #[inline]
    fn flush_if_full(&mut self) -> Result<(), TreeError> {
        if self.block.len() >= self.flush_at {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), TreeError> {
        if self.block.is_empty() {
            return Ok(());
        }
        match &mut self.run {
            Run::File(file) => file
                .write_all(&self.block)
                .map_err(io_error("writing a sorted run"))?,
            Run::Memory(blocks) => {
                let mut map = MmapMut::map_anon(self.block.len())
                    .map_err(io_error("mapping memory for a sorted run"))?;
                map.copy_from_slice(&self.block);
                blocks.push_back(map);
            }
        }
        self.block.clear();
        Ok(())
    }

    /// The finished run, rewound for reading.
    pub(super) fn finish(mut self) -> Result<Run, TreeError> {
        self.flush()?;
        if let Run::File(file) = &mut self.run {
            file.seek(SeekFrom::Start(0))
                .map_err(io_error("rewinding a sorted run"))?;
        }
        Ok(self.run)
    }
}

/// A run being read back: its current row, parsed in place from the block read last.
pub(super) struct RunReader {
    run: Run,
    /// Bytes of the front memory block already copied into `block`.
    taken: usize,
    block: Vec<u8>,
    /// Bytes of `block` read from the file.
    filled: usize,
    /// Where the next row starts in `block`.
    next: usize,
    at_end: bool,
    key: Range<usize>,
    value: Range<usize>,
    /// The current row's index over all rows added.
    pub(super) row: u64,
}

impl RunReader {
    pub(super) fn new(run: Run) -> RunReader {
        RunReader {
            run,
            taken: 0,
            block: vec![0; READ_BLOCK],
            filled: 0,
            next: 0,
            at_end: false,
            key: 0..0,
            value: 0..0,
            row: 0,
        }
    }

    /// The current row's key.
    #[inline]
    pub(super) fn key(&self) -> &[u8] {
        &self.block[self.key.clone()]
    }

    /// The current row's key and value, back to back.
    #[inline]
    pub(super) fn row_bytes(&self) -> &[u8] {
        &self.block[self.key.start..self.value.end]
    }

    /// Moves to the next row; false at the end of the run.
    #[inline]
    pub(super) fn advance(&mut self) -> Result<bool, TreeError> {
        loop {
            if let Some(len) = self.parse() {
                self.next += len;
                return Ok(true);
            }
            if self.at_end {
                if self.next == self.filled {
                    return Ok(false);
                }
                return Err(io_error("reading a sorted run")(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    format!(
                        "run ends inside a row ({} bytes left)",
                        self.filled - self.next
                    ),
                )));
            }
            self.refill()?;
        }
    }

    /// Parses the row at `next` if all of it is in the block; its length.
    #[inline]
    fn parse(&mut self) -> Option<usize> {
        let b = self.block.get(self.next..self.filled)?;
        let (row, a) = get_varint(b)?;
        let (key_len, c) = get_varint(b.get(a..)?)?;
        let (value_len, d) = get_varint(b.get(a + c..)?)?;
        let head = a + c + d;
        let key_end = head.checked_add(usize::try_from(key_len).ok()?)?;
        let end = key_end.checked_add(usize::try_from(value_len).ok()?)?;
        if end > b.len() {
            return None;
        }
        self.row = row;
        self.key = self.next + head..self.next + key_end;
        self.value = self.next + key_end..self.next + end;
        Some(end)
    }

    /// Moves the unread bytes to the front and reads more behind them (growing the block for
    /// a row larger than it).
    #[cold]
    fn refill(&mut self) -> Result<(), TreeError> {
        self.block.copy_within(self.next..self.filled, 0);
        self.filled -= self.next;
        self.next = 0;
        if self.filled == self.block.len() {
            // A row longer than the block: double it.
            let len = self.block.len() * 2;
            self.block.resize(len, 0);
        }
        while self.filled < self.block.len() {
            let n = self.read_more()?;
            if n == 0 {
                self.at_end = true;
                break;
            }
            self.filled += n;
        }
        Ok(())
    }

    /// Reads the next bytes of the run behind `filled`; 0 at its end. A memory block is
    /// unmapped as soon as all of it has been copied.
    fn read_more(&mut self) -> Result<usize, TreeError> {
        let space = &mut self.block[self.filled..];
        match &mut self.run {
            Run::File(file) => file.read(space).map_err(io_error("reading a sorted run")),
            Run::Memory(blocks) => {
                let Some(front) = blocks.front() else {
                    return Ok(0);
                };
                let src = &front[self.taken..];
                let n = src.len().min(space.len());
                space[..n].copy_from_slice(&src[..n]);
                self.taken += n;
                if self.taken == front.len() {
                    blocks.pop_front();
                    self.taken = 0;
                }
                Ok(n)
            }
        }
    }
}
