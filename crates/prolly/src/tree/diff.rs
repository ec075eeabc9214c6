//! Two-way diff of trees in key order, skipping subtrees the two trees share (same address),
//! so the cost follows the size of the change, not of the trees.

use std::cmp::Ordering;

use prollystore_format::Address;

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
        Ok(Diff {
            store,
            schema,
            from: Cursor::at_start(store, &from)?,
            to: Cursor::at_start(store, &to)?,
            failed: false,
        })
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
            // under them, then step past the last one (loading what follows).
            loop {
                let (fnode, fidx) = self.from.at(best);
                let (tnode, tidx) = self.to.at(best);
                let same_next = fidx + 1 < fnode.count()
                    && tidx + 1 < tnode.count()
                    && fnode.value(fidx + 1) == tnode.value(tidx + 1);
                if !same_next {
                    break;
                }
                self.from.bump(best);
                self.to.bump(best);
            }
            self.from.advance_at(self.store, best)?;
            self.to.advance_at(self.store, best)?;
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
                    self.from.advance(self.store)?;
                    return Ok(Some(e));
                }
                (false, true) => {
                    let e = DiffEntry::Added {
                        key: self.to.key(),
                        to: self.to.value(),
                    };
                    self.to.advance(self.store)?;
                    return Ok(Some(e));
                }
                (true, true) => {
                    let (fk, tk) = (self.from.key(), self.to.key());
                    if fk == tk && self.from.value() == self.to.value() {
                        // Identical items: skip the identical run in both leaves without the
                        // comparator, then step over the last one (which may change leaves).
                        let (fl, fi) = self.from.at(0);
                        let (tl, ti) = self.to.at(0);
                        let (mut i, mut j) = (fi + 1, ti + 1);
                        while i < fl.count()
                            && j < tl.count()
                            && fl.key(i) == tl.key(j)
                            && fl.value(i) == tl.value(j)
                        {
                            i += 1;
                            j += 1;
                        }
                        self.from.set_leaf_index(i - 1);
                        self.to.set_leaf_index(j - 1);
                        self.from.advance(self.store)?;
                        self.to.advance(self.store)?;
                        continue;
                    }
                    match self.schema.compare_keys(fk, tk) {
                        Ordering::Less => {
                            let e = DiffEntry::Removed {
                                key: fk,
                                from: self.from.value(),
                            };
                            self.from.advance(self.store)?;
                            return Ok(Some(e));
                        }
                        Ordering::Greater => {
                            let e = DiffEntry::Added {
                                key: tk,
                                to: self.to.value(),
                            };
                            self.to.advance(self.store)?;
                            return Ok(Some(e));
                        }
                        Ordering::Equal => {
                            let (fv, tv) = (self.from.value(), self.to.value());
                            self.from.advance(self.store)?;
                            self.to.advance(self.store)?;
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
