//! The `tree_ops` input: a configuration byte and a list of operations, decoded with
//! `arbitrary`. Shared by the fuzz target and the seed generator (`examples/tree_ops_seeds.rs`).

use arbitrary::Arbitrary;

/// One fuzz case.
#[derive(Arbitrary, Debug, Clone, PartialEq, Eq)]
pub struct Input {
    /// Bits 0-1: the key shape (see the target's `KeyShape`); bit 2: Dolt's SHA-512 hash profile
    /// instead of BLAKE3.
    pub config: u8,
    /// Applied in order.
    pub ops: Vec<Op>,
}

/// A value: a nullable string of `len % 64` bytes (`250 + 2 * len` when `big`, so that a few
/// hundred rows fill several chunks) and a nullable integer.
#[derive(Arbitrary, Debug, Clone, Copy, PartialEq, Eq)]
pub struct Val {
    /// The string's length (see above).
    pub len: u8,
    /// A long string.
    pub big: bool,
    /// Picks the string's bytes; an odd seed with an empty, not `big` string makes it NULL.
    pub seed: u8,
    /// The integer field (NULL when absent).
    pub int: Option<i8>,
}

/// A range bound on a fuzzer key number.
#[derive(Arbitrary, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bnd {
    /// No bound.
    Unbounded,
    /// The key itself is in range.
    Included(u16),
    /// The key itself is out of range.
    Excluded(u16),
}

/// One operation. Keys are numbers the target maps to tuples of the chosen shape.
#[derive(Arbitrary, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Buffers a put.
    Put {
        /// The key number.
        key: u16,
        /// The value.
        val: Val,
    },
    /// Buffers a delete.
    Delete {
        /// The key number.
        key: u16,
    },
    /// Buffers puts of `n` consecutive key numbers from `key`, values derived from `val`.
    PutRun {
        /// The first key number.
        key: u16,
        /// How many.
        n: u8,
        /// The first value; the others vary its length and bytes.
        val: Val,
    },
    /// Buffers deletes of `n` consecutive key numbers from `key`.
    DeleteRun {
        /// The first key number.
        key: u16,
        /// How many.
        n: u8,
    },
    /// Applies the buffered edits (through `Map::editor` or `Map::apply`) and checks the new
    /// version.
    Flush {
        /// Use the editor.
        editor: bool,
    },
    /// Point lookup.
    Get {
        /// The key number.
        key: u16,
    },
    /// Row at an ordinal (taken modulo count + 2).
    Ordinal {
        /// The ordinal.
        i: u16,
    },
    /// Range scan.
    Range {
        /// Low bound.
        lo: Bnd,
        /// High bound.
        hi: Bnd,
        /// Descending.
        rev: bool,
        /// 0: row by row; otherwise `next_batch` with this many rows.
        batch: u8,
    },
    /// Cursor at the first key at or above `key`, then `steps` moves (negative: backward).
    Seek {
        /// The key number.
        key: u16,
        /// Moves after the seek.
        steps: i8,
    },
    /// Rows whose first key field equals that of `key`.
    Prefix {
        /// The key number.
        key: u16,
    },
    /// Diff from an earlier version (`back` versions ago, modulo the history) to the current.
    Diff {
        /// How far back.
        back: u8,
    },
    /// Makes an earlier version current (buffered edits are flushed first).
    Checkout {
        /// How far back.
        back: u8,
    },
    /// Three-way merge of the current version (left) with `right`, from `base`; the result
    /// becomes current.
    Merge {
        /// How far back the base is.
        base: u8,
        /// How far back the right side is.
        right: u8,
        /// Resolver for keys both sides changed differently: 0 right wins, 1 conflict (keep
        /// left), 2 delete.
        resolve: u8,
    },
}
