//! Two-way diff of trees in key order, skipping subtrees the two trees share (same address),
//! so the cost follows the size of the change, not of the trees.

use std::cmp::Ordering;

use prollystore_format::message::Node;
use prollystore_format::{Address, ADDRESS_LEN};

use super::cursor::Cursor;
use super::schema::TreeSchema;
use crate::error::TreeError;
use crate::store::ChunkStore;

/// One difference between two trees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiffEntry<'s> {
    /// The key is only in the `to` tree.
    Added {
        /// The key.
        key: &'s [u8],
        /// Its value in `to`.
        to: &'s [u8],
    },
    /// The key is only in the `from` tree.
    Removed {
        /// The key.
        key: &'s [u8],
        /// Its value in `from`.
        from: &'s [u8],
    },
    /// The key is in both with values that differ (in bytes, and under the schema's value
    /// comparison); the key is `from`'s spelling.
    Modified {
        /// The key.
        key: &'s [u8],
        /// Value in `from`.
        from: &'s [u8],
        /// Value in `to`.
        to: &'s [u8],
    },
}

impl<'s> DiffEntry<'s> {
    /// The key the entry is about.
    pub fn key(&self) -> &'s [u8] {
        match *self {
            DiffEntry::Added { key, .. }
            | DiffEntry::Removed { key, .. }
            | DiffEntry::Modified { key, .. } => key,
        }
    }
}

/// Iterator over the differences from one tree to another (Dolt's `Differ`).
pub struct Diff<'s, 't, S: ChunkStore + ?Sized, T: TreeSchema + ?Sized> {
    store: &'s S,
    schema: &'t T,
    from: Cursor<'s>,
    to: Cursor<'s>,
    failed: bool,
}

impl<'s, 't, S: ChunkStore + ?Sized, T: TreeSchema + ?Sized> Diff<'s, 't, S, T> {
    /// Diff from the tree at `from` to the tree at `to`, both in `store`.
    pub fn new(store: &'s S, schema: &'t T, from: Address, to: Address) -> Result<Self, TreeError> {
        let (mut from, mut to) = (Cursor::at_root(store, &from)?, Cursor::at_root(store, &to)?);
        // While the trees are equally tall, go down both along their first difference: the
        // children before it have the same addresses in both, so they are shared and skipped
        // without being loaded.
        while from.bottom() > 0 && from.bottom() == to.bottom() {
            let (fnode, _) = from.at(from.bottom());
            let (tnode, _) = to.at(to.bottom());
            let shared = common_prefix(fnode.address_array(), tnode.address_array()) / ADDRESS_LEN;
            from.descend_into(store, shared)?;
            to.descend_into(store, shared)?;
        }
        while from.bottom() > 0 {
            from.descend_into(store, 0)?;
        }
        while to.bottom() > 0 {
            to.descend_into(store, 0)?;
        }
        Ok(Diff {
            store,
            schema,
            from,
            to,
            failed: false,
        })
    }

    /// True if everything after the cursors' entries at `level` is shared: the trees are
    /// equally tall and, at `level` and every level above it, the entries after the cursors'
    /// have the same addresses.
    fn rest_is_shared(&self, level: usize) -> bool {
        let h = self.from.height();
        h == self.to.height()
            && (level.max(1)..h).all(|l| {
                let (fnode, fi) = self.from.at(l);
                let (tnode, ti) = self.to.at(l);
                tail(fnode.address_array(), (fi + 1) * ADDRESS_LEN)
                    == tail(tnode.address_array(), (ti + 1) * ADDRESS_LEN)
            })
    }

    /// Ends both walks (everything left is shared).
    fn finish_both(&mut self) {
        let (fl, _) = self.from.at(0);
        let (tl, _) = self.to.at(0);
        self.from.set_leaf_index(fl.count());
        self.to.set_leaf_index(tl.count());
    }

    /// Steps both cursors over whole subtrees they share.
    fn skip_common(&mut self) -> Result<(), TreeError> {
        loop {
            if !(self.from.valid() && self.to.valid()) {
                return Ok(());
            }
            let h = self.from.height().min(self.to.height());
            let mut best = 0usize;
            for l in 1..h {
                let (_, fi) = self.from.at(l - 1);
                let (_, ti) = self.to.at(l - 1);
                if fi != 0 || ti != 0 {
                    break;
                }
                let (fnode, fidx) = self.from.at(l);
                let (tnode, tidx) = self.to.at(l);
                if fnode.child(fidx) == tnode.child(tidx) {
                    best = l;
                } else {
                    break;
                }
            }
            if best == 0 {
                return Ok(());
            }
            // Skip the whole run of shared entries at this level without loading the subtrees
            // under them (the run is found by comparing the address arrays as blocks), then
            // step past the last one (loading what follows).
            let (fnode, fidx) = self.from.at(best);
            let (tnode, tidx) = self.to.at(best);
            let shared = common_prefix(
                tail(fnode.address_array(), (fidx + 1) * ADDRESS_LEN),
                tail(tnode.address_array(), (tidx + 1) * ADDRESS_LEN),
            ) / ADDRESS_LEN;
            self.from.set_index(best, fidx + shared);
            self.to.set_index(best, tidx + shared);
            if self.from.at_node_end(best) && self.to.at_node_end(best) && self.rest_is_shared(best)
            {
                self.finish_both();
                return Ok(());
            }
            self.from.advance_forward_at(self.store, best)?;
            self.to.advance_forward_at(self.store, best)?;
        }
    }

    fn step(&mut self) -> Result<Option<DiffEntry<'s>>, TreeError> {
        loop {
            self.skip_common()?;
            match (self.from.valid(), self.to.valid()) {
                (false, false) => return Ok(None),
                (true, false) => {
                    let e = DiffEntry::Removed {
                        key: self.from.key(),
                        from: self.from.value(),
                    };
                    self.from.advance_forward_at(self.store, 0)?;
                    return Ok(Some(e));
                }
                (false, true) => {
                    let e = DiffEntry::Added {
                        key: self.to.key(),
                        to: self.to.value(),
                    };
                    self.to.advance_forward_at(self.store, 0)?;
                    return Ok(Some(e));
                }
                (true, true) => {
                    let (fk, tk) = (self.from.key(), self.to.key());
                    if fk == tk && self.from.value() == self.to.value() {
                        // Identical items: skip the identical run in both leaves without the
                        // comparator, then step over the last one (which may change leaves).
                        let (fl, fi) = self.from.at(0);
                        let (tl, ti) = self.to.at(0);
                        let run = identical_run(&fl, fi, &tl, ti).max(1);
                        let (i, j) = (fi + run, ti + run);
                        if i == fl.count() && j == tl.count() && self.rest_is_shared(1) {
                            self.finish_both();
                            continue;
                        }
                        self.from.set_leaf_index(i - 1);
                        self.to.set_leaf_index(j - 1);
                        self.from.advance_forward_at(self.store, 0)?;
                        self.to.advance_forward_at(self.store, 0)?;
                        continue;
                    }
                    match self.schema.compare_keys(fk, tk) {
                        Ordering::Less => {
                            let e = DiffEntry::Removed {
                                key: fk,
                                from: self.from.value(),
                            };
                            self.from.advance_forward_at(self.store, 0)?;
                            return Ok(Some(e));
                        }
                        Ordering::Greater => {
                            let e = DiffEntry::Added {
                                key: tk,
                                to: self.to.value(),
                            };
                            self.to.advance_forward_at(self.store, 0)?;
                            return Ok(Some(e));
                        }
                        Ordering::Equal => {
                            let (fv, tv) = (self.from.value(), self.to.value());
                            self.from.advance_forward_at(self.store, 0)?;
                            self.to.advance_forward_at(self.store, 0)?;
                            if fv != tv && !self.schema.values_equivalent(fv, tv) {
                                return Ok(Some(DiffEntry::Modified {
                                    key: fk,
                                    from: fv,
                                    to: tv,
                                }));
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Length of the common prefix of `a` and `b`: 32-byte blocks, then 8-byte words (the first
/// differing byte found from the words' XOR), then bytes.
#[inline]
pub(crate) fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut i = 0usize;
    let (blocks_a, _) = a.as_chunks::<32>();
    let (blocks_b, _) = b.as_chunks::<32>();
    for (x, y) in blocks_a.iter().zip(blocks_b) {
        if x != y {
            break;
        }
        i += 32;
    }
    let (words_a, _) = a[i..].as_chunks::<8>();
    let (words_b, _) = b[i..].as_chunks::<8>();
    for (x, y) in words_a.iter().zip(words_b) {
        let d = u64::from_le_bytes(*x) ^ u64::from_le_bytes(*y);
        if d != 0 {
            return i + (d.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

/// `bytes` from `at` on (empty past the end).
#[inline(always)]
fn tail(bytes: &[u8], at: usize) -> &[u8] {
    bytes.get(at..).unwrap_or(&[])
}

/// The little-endian u16 at pair `i` of an offsets array (0 if out of range).
#[inline(always)]
fn offset_at(offsets: &[u8], i: usize) -> usize {
    match offsets.get(2 * i..2 * i + 2) {
        Some(&[a, b]) => usize::from(u16::from_le_bytes([a, b])),
        _ => 0,
    }
}

/// How many leaf items, from `fi` in `fl` and `ti` in `tl`, are byte-identical: the item
/// bytes are compared as two blocks (keys, values), then item boundaries by offsets, instead
/// of comparing item by item.
fn identical_run(fl: &Node<'_>, fi: usize, tl: &Node<'_>, ti: usize) -> usize {
    let max = (fl.count().saturating_sub(fi)).min(tl.count().saturating_sub(ti));
    if let (Some(kw), Some(vw)) = (fl.key_width(), fl.value_width()) {
        if tl.key_width() == Some(kw) && tl.value_width() == Some(vw) {
            // Fixed-width items: the run is the shorter of the common key and value prefixes,
            // in whole items.
            let keys =
                common_prefix(tail(fl.key_items(), fi * kw), tail(tl.key_items(), ti * kw)) / kw;
            let from_values = tail(fl.value_items(), fi * vw);
            let bound = (keys.min(max) * vw).min(from_values.len());
            let values = common_prefix(&from_values[..bound], tail(tl.value_items(), ti * vw)) / vw;
            return keys.min(values).min(max);
        }
    }
    let (fko, tko) = (fl.key_offsets_bytes(), tl.key_offsets_bytes());
    let (fvo, tvo) = (fl.value_offsets_bytes(), tl.value_offsets_bytes());
    let (fk0, tk0) = (offset_at(fko, fi), offset_at(tko, ti));
    let (fv0, tv0) = (offset_at(fvo, fi), offset_at(tvo, ti));
    let keys = common_prefix(
        fl.key_items().get(fk0..).unwrap_or(&[]),
        tl.key_items().get(tk0..).unwrap_or(&[]),
    );
    let values = common_prefix(
        fl.value_items().get(fv0..).unwrap_or(&[]),
        tl.value_items().get(tv0..).unwrap_or(&[]),
    );
    let mut run = 0usize;
    while run < max {
        let (fk, tk) = (
            offset_at(fko, fi + run + 1).wrapping_sub(fk0),
            offset_at(tko, ti + run + 1).wrapping_sub(tk0),
        );
        let (fv, tv) = (
            offset_at(fvo, fi + run + 1).wrapping_sub(fv0),
            offset_at(tvo, ti + run + 1).wrapping_sub(tv0),
        );
        if fk != tk || fv != tv || fk > keys || fv > values {
            break;
        }
        run += 1;
    }
    run
}

impl<'s, S: ChunkStore + ?Sized, T: TreeSchema + ?Sized> Iterator for Diff<'s, '_, S, T> {
    type Item = Result<DiffEntry<'s>, TreeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        match self.step() {
            Ok(Some(e)) => Some(Ok(e)),
            Ok(None) => None,
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}
