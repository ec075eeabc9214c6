//! The file store's only `unsafe` that hands out memory: mapping an immutable chunk file. (The
//! other one, in `chunk_file.rs`, is a writeback hint that reads or writes no memory.)
//!
//! # Invariant that makes the mapping sound
//!
//! A mapped slice is only sound to hand out as `&[u8]` while no one changes the file's bytes or
//! length. The file store guarantees that for every file it maps:
//!
//! * Chunk files are written once, under a temporary name (`*.tmp`, opened with `create_new`),
//!   fsynced, and only then renamed into place. After the rename no code in this crate opens a
//!   chunk file for writing, truncates it, or writes into it; replacing or deleting a file
//!   (rename over, unlink) never changes the bytes of an inode that is already mapped.
//! * Only files named in a committed manifest are mapped, never temporary files.
//!
//! What the crate cannot rule out is another program writing into the store directory behind its
//! back; such a store is outside the contract (as for any database file). Users on filesystems
//! where that can happen, or where mapping is unwanted (network filesystems), open with
//! [`super::OpenOptions::mmap`]`(false)`, which reads files into memory and has no `unsafe`.

use std::fs::File;
use std::ops::Deref;

/// The bytes of one chunk file: mapped, or read into memory.
pub(super) enum FileBytes {
    /// A read-only mapping of an immutable file.
    Mapped(memmap2::Mmap),
    /// The file's bytes, read into memory.
    Owned(Vec<u8>),
}

impl FileBytes {
    /// Maps `file` read-only.
    pub(super) fn map(file: &File) -> std::io::Result<FileBytes> {
        // SAFETY: `file` is a chunk file that was renamed into place after being written and
        // fsynced; the store never writes to, truncates or reopens for writing such a file (see the
        // module doc), so the mapped bytes stay unchanged for the mapping's whole life.
        let map = unsafe { memmap2::MmapOptions::new().map(file)? };
        Ok(FileBytes::Mapped(map))
    }
}

impl Deref for FileBytes {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        match self {
            FileBytes::Mapped(m) => m,
            FileBytes::Owned(v) => v,
        }
    }
}
