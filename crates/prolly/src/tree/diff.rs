//! Two-way diff of trees in key order, skipping subtrees the two trees share (same address),
//! so the cost follows the size of the change, not of the trees.
//!
//! The same walk also runs on a key range ([`Diff::range`]: cursors seeked to its start, the
//! walk ended at its end) and one level up ([`ChangedLeaves`]: the entries of the leaves'
//! parents, so the leaves both trees do not share are listed, with their row counts, without
//! reading one), which is how a diff is cut into parts of nearly equal work.

use std::cmp::Ordering;
use std::ops::Bound;

use prollystore_format::message::Node;
use prollystore_format::{Address, ADDRESS_LEN};

use super::cursor::Cursor;
use super::schema::TreeSchema;
use crate::error::TreeError;
use crate::store::StoreFastPaths;

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
///
/// `FLOOR` is the level whose entries the walk compares: 0, the rows (every public
/// constructor); 1, the leaves' parents, whose entries are (a leaf's last key, its address),
/// for [`ChangedLeaves`]. Entries there are the same walk's: shared subtrees skipped by
/// address, then entries matched by key; a value is a child's address.
pub struct Diff<'s, 't, S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized, const FLOOR: usize = 0>
{
    store: &'s S,
    schema: &'t T,
    /// The two walks, on the heap: a diff is moved into a `Result` and out of it, and with
    /// the cursors inline (over a kilobyte each) those moves are `memcpy`s that cost more than
    /// one allocation per diff (`docs/PERF.md`, "Diff").
    walks: Box<Walks<'s>>,
    /// Above the leaves: the node and index of the entry each side last gave (`None` when the
    /// last entry had nothing on that side), for its row count. Kept out of `walks`: a larger
    /// allocation made every row diff's `malloc` slower (`docs/PERF.md`, "Trees").
    given: [Option<(Node<'s>, usize)>; 2],
    failed: bool,
    /// Where the walk ends ([`Diff::range`]): the first entry past it ends it.
    end: Option<(Box<[u8]>, bool)>,
}

/// The cursors of the two trees a [`Diff`] walks.
struct Walks<'s> {
    from: Cursor<'s>,
    to: Cursor<'s>,
}

impl<'s, 't, S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized> Diff<'s, 't, S, T> {
    /// Diff from the tree at `from` to the tree at `to`, both in `store`.
    pub fn new(store: &'s S, schema: &'t T, from: Address, to: Address) -> Result<Self, TreeError> {
        let mut d = Self::unstarted(store, schema);
        d.start(from, to)?;
        Ok(d)
    }

    /// The differences whose keys are within `start` and `end`, in key order: the entries
    /// [`Diff::new`] gives for those keys. Both walks start at the range's first key (one
    /// descent each) and the walk ends at the first difference past its end, so a range
    /// costs what its own changes cost, plus at most one leaf on each side beyond it.
    pub fn range(
        store: &'s S,
        schema: &'t T,
        from: Address,
        to: Address,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
    ) -> Result<Self, TreeError> {
        let mut d = Self::unstarted(store, schema);
        d.end = match end {
            Bound::Unbounded => None,
            Bound::Included(k) => Some((k.into(), true)),
            Bound::Excluded(k) => Some((k.into(), false)),
        };
        let seek = |root: &Address, key: &[u8], inclusive: bool| {
            let mut c = if inclusive {
                Cursor::at_key(store, root, key, schema)?
            } else {
                Cursor::at_partition(store, root, |x| schema.compare_keys(x, key).is_le())?
            };
            // A descent may end one past the end of a leaf that is not the last.
            c.fix_forward(store)?;
            Ok::<_, TreeError>(c)
        };
        match start {
            Bound::Unbounded => d.start(from, to)?,
            Bound::Included(k) | Bound::Excluded(k) => {
                let inclusive = matches!(start, Bound::Included(_));
                d.walks.from = seek(&from, k, inclusive)?;
                d.walks.to = seek(&to, k, inclusive)?;
            }
        }
        Ok(d)
    }
}

impl<'s, 't, S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized, const FLOOR: usize>
    Diff<'s, 't, S, T, FLOOR>
{
    fn unstarted(store: &'s S, schema: &'t T) -> Self {
        Diff {
            store,
            schema,
            walks: Box::new(Walks {
                from: Cursor::unloaded(),
                to: Cursor::unloaded(),
            }),
            given: [None, None],
            failed: false,
            end: None,
        }
    }

    /// Loads both roots, then goes down to the first nodes at `FLOOR` that can differ.
    fn start(&mut self, from: Address, to: Address) -> Result<(), TreeError> {
        let store = self.store;
        self.walks.from.start_at_root(store, &from)?;
        self.walks.to.start_at_root(store, &to)?;
        if self.walks.from.height() <= FLOOR || self.walks.to.height() <= FLOOR {
            return Err(TreeError::Malformed {
                address: from,
                reason: "a diff above the leaves of a tree without that level",
            });
        }
        // While the trees are equally tall, go down both along their first difference: the
        // children before it have the same addresses in both, so they are shared and skipped
        // without being loaded. (The cursors are loaded where they stay: each is over a
        // kilobyte, and moving one is a `memcpy`.)
        let (from, to) = (&mut self.walks.from, &mut self.walks.to);
        while from.bottom() > FLOOR && from.bottom() == to.bottom() {
            let (fnode, _) = from.at_ref(from.bottom());
            let (tnode, _) = to.at_ref(to.bottom());
            let shared = common_prefix(fnode.address_array(), tnode.address_array()) / ADDRESS_LEN;
            // Both go down at the same index. When one node's children are all shared (a
            // prefix of the other's), that is its last child, which the other has too: the
            // walk then skips it as shared. (Clamping each cursor on its own would put them
            // under different children and lose the entries in between.)
            let i = shared.min(fnode.count() - 1).min(tnode.count() - 1);
            from.descend_into(store, i)?;
            to.descend_into(store, i)?;
        }
        while from.bottom() > FLOOR {
            from.descend_into(store, 0)?;
        }
        while to.bottom() > FLOOR {
            to.descend_into(store, 0)?;
        }
        Ok(())
    }

    /// True if everything after the cursors' entries at `level` is shared: the trees are
    /// equally tall and, at `level` and every level above it, the entries after the cursors'
    /// have the same addresses.
    fn rest_is_shared(&self, level: usize) -> bool {
        let h = self.walks.from.height();
        h == self.walks.to.height()
            && (level.max(FLOOR + 1)..h).all(|l| {
                let (fnode, fi) = self.walks.from.at_ref(l);
                let (tnode, ti) = self.walks.to.at_ref(l);
                tail(fnode.address_array(), (fi + 1) * ADDRESS_LEN)
                    == tail(tnode.address_array(), (ti + 1) * ADDRESS_LEN)
            })
    }

    /// Ends both walks (everything left is shared).
    fn finish_both(&mut self) {
        let (fl, _) = self.walks.from.at_ref(FLOOR);
        let (tl, _) = self.walks.to.at_ref(FLOOR);
        let (fc, tc) = (fl.count(), tl.count());
        self.walks.from.set_index(FLOOR, fc);
        self.walks.to.set_index(FLOOR, tc);
    }

    /// Steps both cursors over whole subtrees they share.
    fn skip_common(&mut self) -> Result<(), TreeError> {
        loop {
            if !(valid::<FLOOR>(&self.walks.from) && valid::<FLOOR>(&self.walks.to)) {
                return Ok(());
            }
            let h = self.walks.from.height().min(self.walks.to.height());
            let mut best = 0usize;
            for l in FLOOR + 1..h {
                let (_, fi) = self.walks.from.at_ref(l - 1);
                let (_, ti) = self.walks.to.at_ref(l - 1);
                if fi != 0 || ti != 0 {
                    break;
                }
                let (fnode, fidx) = self.walks.from.at_ref(l);
                let (tnode, tidx) = self.walks.to.at_ref(l);
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
            let (fnode, fidx) = self.walks.from.at_ref(best);
            let (tnode, tidx) = self.walks.to.at_ref(best);
            let shared = common_prefix(
                tail(fnode.address_array(), (fidx + 1) * ADDRESS_LEN),
                tail(tnode.address_array(), (tidx + 1) * ADDRESS_LEN),
            ) / ADDRESS_LEN;
            self.walks.from.set_index(best, fidx + shared);
            self.walks.to.set_index(best, tidx + shared);
            if self.walks.from.at_node_end(best)
                && self.walks.to.at_node_end(best)
                && self.rest_is_shared(best)
            {
                self.finish_both();
                return Ok(());
            }
            self.walks.from.advance_forward_at(self.store, best)?;
            self.walks.to.advance_forward_at(self.store, best)?;
        }
    }

    /// Moves both walks past their current items. When both are on the last items of their
    /// leaves (and the trees are equally tall), what follows is compared at the levels above
    /// first, so that leaves both trees share are skipped without being loaded.
    fn next_both(&mut self) -> Result<(), TreeError> {
        let (fl, fi) = self.walks.from.at_ref(FLOOR);
        let (tl, ti) = self.walks.to.at_ref(FLOOR);
        if fi + 1 >= fl.count()
            && ti + 1 >= tl.count()
            && self.walks.from.height() == self.walks.to.height()
        {
            return self.skip_after_leaves();
        }
        next_item::<S, FLOOR>(&mut self.walks.from, self.store)?;
        next_item::<S, FLOOR>(&mut self.walks.to, self.store)
    }

    /// Both walks are done with their leaves and the trees are equally tall: from level 1 up,
    /// skips the entries after the walks' that have the same addresses in both (compared as
    /// blocks of the address arrays, nothing loaded), going up while both nodes are used up,
    /// then steps both past the shared run (loading the first subtrees that differ).
    fn skip_after_leaves(&mut self) -> Result<(), TreeError> {
        for l in FLOOR + 1..self.walks.from.height() {
            let (fnode, fi) = self.walks.from.at_ref(l);
            let (tnode, ti) = self.walks.to.at_ref(l);
            let shared = common_prefix(
                tail(fnode.address_array(), (fi + 1) * ADDRESS_LEN),
                tail(tnode.address_array(), (ti + 1) * ADDRESS_LEN),
            ) / ADDRESS_LEN;
            let (fi, ti) = (fi + shared, ti + shared);
            let (fc, tc) = (fnode.count(), tnode.count());
            self.walks.from.set_index(l, fi);
            self.walks.to.set_index(l, ti);
            if fi + 1 >= fc && ti + 1 >= tc {
                continue;
            }
            self.walks.from.advance_forward_at(self.store, l)?;
            self.walks.to.advance_forward_at(self.store, l)?;
            return Ok(());
        }
        self.finish_both();
        Ok(())
    }

    /// Records what the entry about to be given has on each side (above the leaves only).
    #[inline(always)]
    fn give(&mut self, from: bool, to: bool) {
        if FLOOR > 0 {
            let w = &*self.walks;
            self.given = [from.then(|| w.from.at(FLOOR)), to.then(|| w.to.at(FLOOR))];
        }
    }

    fn step(&mut self) -> Result<Option<DiffEntry<'s>>, TreeError> {
        loop {
            self.skip_common()?;
            match (
                valid::<FLOOR>(&self.walks.from),
                valid::<FLOOR>(&self.walks.to),
            ) {
                (false, false) => return Ok(None),
                (true, false) => {
                    let (n, i) = self.walks.from.at_ref(FLOOR);
                    let e = DiffEntry::Removed {
                        key: n.key(i),
                        from: n.value(i),
                    };
                    self.give(true, false);
                    next_item::<S, FLOOR>(&mut self.walks.from, self.store)?;
                    return Ok(Some(e));
                }
                (false, true) => {
                    let (n, i) = self.walks.to.at_ref(FLOOR);
                    let e = DiffEntry::Added {
                        key: n.key(i),
                        to: n.value(i),
                    };
                    self.give(false, true);
                    next_item::<S, FLOOR>(&mut self.walks.to, self.store)?;
                    return Ok(Some(e));
                }
                (true, true) => {
                    // Skip the byte-identical items in both leaves without the comparator
                    // (block compares of the item bytes, not item by item); above the leaves,
                    // the children both nodes list at the same place.
                    let (fl, fi) = self.walks.from.at_ref(FLOOR);
                    let (tl, ti) = self.walks.to.at_ref(FLOOR);
                    let run = if FLOOR == 0 {
                        identical_run(fl, fi, tl, ti)
                    } else {
                        common_prefix(
                            tail(fl.address_array(), fi * ADDRESS_LEN),
                            tail(tl.address_array(), ti * ADDRESS_LEN),
                        ) / ADDRESS_LEN
                    };
                    let (i, j) = (fi + run, ti + run);
                    if run > 0 && (i >= fl.count() || j >= tl.count()) {
                        // A leaf ran out: step over the run's last items (changing leaves).
                        self.walks.from.set_index(FLOOR, i - 1);
                        self.walks.to.set_index(FLOOR, j - 1);
                        self.next_both()?;
                        continue;
                    }
                    let (fk, tk) = (fl.key(i), tl.key(j));
                    let (fv, tv) = (fl.value(i), tl.value(j));
                    if run > 0 {
                        self.walks.from.set_index(FLOOR, i);
                        self.walks.to.set_index(FLOOR, j);
                    }
                    // Equal bytes are equal keys; only different bytes need the comparator.
                    let order = if fk == tk {
                        Ordering::Equal
                    } else {
                        self.schema.compare_keys(fk, tk)
                    };
                    match order {
                        Ordering::Less => {
                            let e = DiffEntry::Removed { key: fk, from: fv };
                            self.give(true, false);
                            next_item::<S, FLOOR>(&mut self.walks.from, self.store)?;
                            return Ok(Some(e));
                        }
                        Ordering::Greater => {
                            let e = DiffEntry::Added { key: tk, to: tv };
                            self.give(false, true);
                            next_item::<S, FLOOR>(&mut self.walks.to, self.store)?;
                            return Ok(Some(e));
                        }
                        Ordering::Equal => {
                            // Above the leaves a value is a child's address: different
                            // addresses are different children.
                            let differ =
                                fv != tv && (FLOOR > 0 || !self.schema.values_equivalent(fv, tv));
                            if differ {
                                self.give(true, true);
                            }
                            self.next_both()?;
                            if differ {
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

    /// True if `key` lies past the walk's end.
    fn past_end(&self, key: &[u8]) -> bool {
        match &self.end {
            None => false,
            Some((end, inclusive)) => match self.schema.compare_keys(key, end) {
                Ordering::Less => false,
                Ordering::Equal => !inclusive,
                Ordering::Greater => true,
            },
        }
    }
}

/// True if `cursor` is on an entry at `FLOOR`.
#[inline(always)]
fn valid<const FLOOR: usize>(cursor: &Cursor<'_>) -> bool {
    if FLOOR == 0 {
        cursor.valid()
    } else {
        cursor.valid_at(FLOOR)
    }
}

/// A leaf one tree lists and the other does not list at the same place (a changed, added or
/// removed leaf), as [`ChangedLeaves`] gives it: its last key and rows, from the parents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChangedLeaf<'s> {
    /// The leaf's last key, as its parent lists it (the `from` tree's spelling when both
    /// trees have a leaf ending at this key).
    pub last_key: &'s [u8],
    /// Rows of the `from` tree's leaf ending at this key (0: `from` has none ending here).
    pub from_rows: u64,
    /// Rows of the `to` tree's leaf ending at this key (0: `to` has none ending here).
    pub to_rows: u64,
}

/// The leaves two trees do not share, in key order, found from their internal nodes only:
/// the diff's own walk one level up (shared subtrees skipped by address, the leaves' parents'
/// entries matched by last key), so no leaf is read and only the parents on changed paths
/// are. The rows under them are what a diff of the two trees compares: the work of the diff
/// (the rows that actually changed are known only by reading those leaves). A tree that is a
/// single leaf has no parents to compare: every leaf of both trees is then listed (unless the
/// trees are the same tree, which share every leaf).
///
/// Made by [`Map::changed_leaves`](crate::Map::changed_leaves).
pub struct ChangedLeaves<'s, 't, S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized> {
    walk: LeafWalk<'s, 't, S, T>,
}

enum LeafWalk<'s, 't, S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized> {
    /// Both trees have parents of leaves: the diff at level 1, and each side's parent whose
    /// subtree counts were decoded last (its chunk's address in memory, the counts).
    Parents(Box<Diff<'s, 't, S, T, 1>>, [(usize, Vec<u64>); 2]),
    /// Every leaf of both trees, merged by key.
    Listed(std::vec::IntoIter<ChangedLeaf<'s>>),
}

impl<'s, 't, S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized> ChangedLeaves<'s, 't, S, T> {
    /// The leaves that differ from the tree at `from` to the tree at `to`, both in `store`.
    pub fn new(store: &'s S, schema: &'t T, from: Address, to: Address) -> Result<Self, TreeError> {
        if from == to {
            return Ok(ChangedLeaves {
                walk: LeafWalk::Listed(Vec::new().into_iter()),
            });
        }
        let (f, t) = (store.get_node(&from)?, store.get_node(&to)?);
        if f.level() > 0 && t.level() > 0 {
            let mut diff = Diff::<S, T, 1>::unstarted(store, schema);
            diff.start(from, to)?;
            let counts = [(0, Vec::new()), (0, Vec::new())];
            return Ok(ChangedLeaves {
                walk: LeafWalk::Parents(Box::new(diff), counts),
            });
        }
        let (fl, tl) = (all_leaves(store, &from)?, all_leaves(store, &to)?);
        let mut merged = Vec::with_capacity(fl.len() + tl.len());
        let (mut fi, mut ti) = (fl.into_iter().peekable(), tl.into_iter().peekable());
        loop {
            let next = match (fi.peek(), ti.peek()) {
                (None, None) => break,
                (Some(_), None) => fi.next().map(|(k, n)| (k, n, 0)),
                (None, Some(_)) => ti.next().map(|(k, n)| (k, 0, n)),
                (Some(a), Some(b)) => match schema.compare_keys(a.0, b.0) {
                    Ordering::Less => fi.next().map(|(k, n)| (k, n, 0)),
                    Ordering::Greater => ti.next().map(|(k, n)| (k, 0, n)),
                    Ordering::Equal => {
                        let to_rows = b.1;
                        ti.next();
                        fi.next().map(|(k, n)| (k, n, to_rows))
                    }
                },
            };
            if let Some((last_key, from_rows, to_rows)) = next {
                merged.push(ChangedLeaf {
                    last_key,
                    from_rows,
                    to_rows,
                });
            }
        }
        Ok(ChangedLeaves {
            walk: LeafWalk::Listed(merged.into_iter()),
        })
    }
}

/// Every leaf of the tree at `root` as (last key, rows), from the parents (a single-leaf tree:
/// its root, if it has rows).
fn all_leaves<'s, S: StoreFastPaths + ?Sized>(
    store: &'s S,
    root: &Address,
) -> Result<Vec<(&'s [u8], u64)>, TreeError> {
    let mut c = Cursor::descend_to(store, root, 1, |_| 0)?;
    if c.height() == 1 {
        let (leaf, _) = c.at(0);
        let n = leaf.count();
        return Ok(if n == 0 {
            Vec::new()
        } else {
            vec![(leaf.key(n - 1), leaf.tree_count())]
        });
    }
    let mut out = Vec::new();
    while c.valid_at(1) {
        let (node, _) = c.at(1);
        out.extend(
            node.subtree_counts()
                .enumerate()
                .map(|(i, n)| (node.key(i), n)),
        );
        c.set_index(1, node.count().saturating_sub(1));
        c.advance_forward_at(store, 1)?;
    }
    Ok(out)
}

impl<'s, S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized> Iterator
    for ChangedLeaves<'s, '_, S, T>
{
    type Item = Result<ChangedLeaf<'s>, TreeError>;

    fn next(&mut self) -> Option<Self::Item> {
        let (diff, counts) = match &mut self.walk {
            LeafWalk::Listed(leaves) => return leaves.next().map(Ok),
            LeafWalk::Parents(diff, counts) => (diff, counts),
        };
        let entry = match diff.next()? {
            Ok(e) => e,
            Err(e) => return Some(Err(e)),
        };
        let mut rows = [0u64; 2];
        for (side, given) in diff.given.iter().enumerate() {
            let Some((node, i)) = given else { continue };
            let id = node.chunk().as_ptr() as usize;
            let (of, c) = &mut counts[side];
            if *of != id {
                c.clear();
                c.extend(node.subtree_counts());
                *of = id;
            }
            rows[side] = c.get(*i).copied().unwrap_or(0);
        }
        Some(Ok(ChangedLeaf {
            last_key: entry.key(),
            from_rows: rows[0],
            to_rows: rows[1],
        }))
    }
}

/// Moves `cursor` to the next item: within its leaf by setting the index, otherwise by the
/// cursor's general step (which loads the next leaf).
#[inline]
fn next_item<'s, S: StoreFastPaths + ?Sized, const FLOOR: usize>(
    cursor: &mut Cursor<'s>,
    store: &'s S,
) -> Result<(), TreeError> {
    let (leaf, i) = cursor.at_ref(FLOOR);
    if i + 1 < leaf.count() {
        cursor.set_index(FLOOR, i + 1);
        return Ok(());
    }
    cursor.advance_forward_at(store, FLOOR).map(|_| ())
}

/// The 8 bytes of `bytes` from `at` as a little-endian word (`at + 8 <= len`).
#[inline(always)]
fn word(bytes: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(w)
}

/// Length of the common prefix of `a` and `b`. Uses AVX-512 or AVX2 where the processor has
/// them (checked once, then cached flags): the 128-byte block loop then takes fewer
/// instructions than with the SSE2 baseline (`docs/PERF.md`, "Diff").
#[inline]
pub(crate) fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
    {
        // SAFETY: `common_prefix_avx512` only needs the AVX-512 F and BW instructions to
        // exist (with the OS saving their registers, which the detection also checks), as
        // the checks above just established; it is otherwise ordinary safe code. It pays
        // over AVX2 (`docs/PERF.md`, "Diff").
        return unsafe { common_prefix_avx512(a, b) };
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: `common_prefix_avx2` only needs the AVX2 instructions to exist, which the
        // check above just established; it is otherwise ordinary safe code. It pays over
        // SSE2 (`docs/PERF.md`, "Diff").
        return unsafe { common_prefix_avx2(a, b) };
    }
    common_prefix_generic(a, b)
}

/// [`common_prefix_body`] for processors without AVX2, out of line: call sites then stay
/// small (a check and a call).
#[inline(never)]
fn common_prefix_generic(a: &[u8], b: &[u8]) -> usize {
    common_prefix_body(a, b)
}

/// [`common_prefix_body`] compiled for processors with AVX-512 (64-byte vectors).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
fn common_prefix_avx512(a: &[u8], b: &[u8]) -> usize {
    common_prefix_body(a, b)
}

/// [`common_prefix_body`] compiled for processors with AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn common_prefix_avx2(a: &[u8], b: &[u8]) -> usize {
    common_prefix_body(a, b)
}

/// Length of the common prefix of `a` and `b`: 128-byte blocks (the XOR of the bytes ORed
/// together, which compiles to wide vector operations), then 16-byte lanes, then 8-byte words
/// (the first differing byte found from the XOR), then one last word overlapping the previous
/// ones.
#[inline(always)]
fn common_prefix_body(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut i = 0usize;
    let (blocks_a, _) = a.as_chunks::<128>();
    let (blocks_b, _) = b.as_chunks::<128>();
    for (x, y) in blocks_a.iter().zip(blocks_b) {
        let mut d = 0u8;
        for k in 0..128 {
            d |= x[k] ^ y[k];
        }
        if d != 0 {
            break;
        }
        i += 128;
    }
    let (lanes_a, _) = a[i..].as_chunks::<16>();
    let (lanes_b, _) = b[i..].as_chunks::<16>();
    for (x, y) in lanes_a.iter().zip(lanes_b) {
        if x != y {
            break;
        }
        i += 16;
    }
    while i + 8 <= n {
        let d = word(a, i) ^ word(b, i);
        if d != 0 {
            return i + (d.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    if i == n {
        return n;
    }
    if n >= 8 {
        // The bytes before `i` are equal, so the first difference in the last word (which
        // overlaps them) is the first difference from `i` on.
        let d = word(a, n - 8) ^ word(b, n - 8);
        return if d == 0 {
            n
        } else {
            n - 8 + (d.trailing_zeros() / 8) as usize
        };
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
#[inline]
fn identical_run(fl: &Node<'_>, fi: usize, tl: &Node<'_>, ti: usize) -> usize {
    let max = (fl.count().saturating_sub(fi)).min(tl.count().saturating_sub(ti));
    if let (Some(kw), Some(vw)) = (fl.key_width(), fl.value_width()) {
        if tl.key_width() == Some(kw) && tl.value_width() == Some(vw) {
            // Fixed-width items: the run is the shorter of the common value and key prefixes,
            // in whole items. Values first, over the whole rest, then keys only as far as the
            // values agree: an update, insert or delete changes the value bytes at its item
            // (the values after an insert or delete shift), so each side is read once up to
            // the first difference, in two block compares.
            let (Some(fv), Some(tv)) = (
                fl.value_items().get(fi * vw..(fi + max) * vw),
                tl.value_items().get(ti * vw..(ti + max) * vw),
            ) else {
                return 0;
            };
            let values = common_prefix(fv, tv) / vw;
            let (Some(fk), Some(tk)) = (
                fl.key_items().get(fi * kw..(fi + values) * kw),
                tl.key_items().get(ti * kw..(ti + values) * kw),
            ) else {
                return 0;
            };
            return common_prefix(fk, tk) / kw;
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

impl<'s, S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized, const FLOOR: usize> Iterator
    for Diff<'s, '_, S, T, FLOOR>
{
    type Item = Result<DiffEntry<'s>, TreeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        match self.step() {
            Ok(Some(e)) if self.end.is_some() && self.past_end(e.key()) => {
                self.failed = true;
                None
            }
            Ok(Some(e)) => Some(Ok(e)),
            Ok(None) => None,
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The common prefix the slow way.
    fn naive(a: &[u8], b: &[u8]) -> usize {
        a.iter().zip(b).take_while(|(x, y)| x == y).count()
    }

    /// A way of computing the common prefix.
    type Variant = fn(&[u8], &[u8]) -> usize;

    /// Every compiled variant this processor can run, by name.
    // Only the x86-64 kernels push more (not under Miri).
    #[cfg_attr(any(miri, not(target_arch = "x86_64")), allow(unused_mut))]
    fn variants() -> Vec<(&'static str, Variant)> {
        let mut v: Vec<(&'static str, Variant)> = vec![
            ("dispatch", common_prefix),
            ("generic", common_prefix_generic),
        ];
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: AVX2 is present (checked just above).
                v.push(("avx2", |a, b| unsafe { common_prefix_avx2(a, b) }));
            }
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512bw")
            {
                // SAFETY: AVX-512 F and BW are present (checked just above).
                v.push(("avx512", |a, b| unsafe { common_prefix_avx512(a, b) }));
            }
        }
        v
    }

    #[test]
    fn common_prefix_variants_agree_with_the_naive_loop() {
        // Lengths around every block size (8, 16, 128) and a difference at every position,
        // with the other input longer, shorter or as long.
        let max = if cfg!(miri) { 40 } else { 300 };
        let a: Vec<u8> = (0..max + 8).map(|i| (i * 7 + 3) as u8).collect();
        for (name, f) in variants() {
            for len in 0..=max {
                for extra in [0usize, 1, 8] {
                    let x = &a[..len];
                    let y = &a[..len + extra];
                    assert_eq!(f(x, y), len, "{name}: equal prefix, len {len} + {extra}");
                    assert_eq!(f(y, x), len, "{name}: equal prefix, len {len} + {extra}");
                    let step = if cfg!(miri) { 7 } else { 1 };
                    for at in (0..len).step_by(step) {
                        let mut z = y.to_vec();
                        z[at] ^= 0x10;
                        assert_eq!(f(x, &z), naive(x, &z), "{name}: len {len}, at {at}");
                        assert_eq!(f(&z, x), at, "{name}: len {len}, at {at}");
                    }
                }
            }
        }
    }
}
