//! [`Map`]: a read view of a prolly tree of `(key, value)` tuples: point lookups, ordinals,
//! ordered iteration over ranges in both directions.

use std::cmp::Ordering;
use std::ops::Bound;

use prollystore_format::message::Entries;
use prollystore_format::Address;

use crate::error::TreeError;
use crate::process::background_hashing;
use crate::store::StoreFastPaths;
use crate::tree::build::TreeBuilder;
use crate::tree::diff::{ChangedLeaves, Diff};
use crate::tree::merge::{merge, Conflict, Resolution};
use crate::tree::mutate::{apply_edits, normalize_edits};
use crate::tree::schema::{BytesSchema, TreeSchema};

pub use crate::tree::cursor::Cursor;
/// One edit for [`Map::apply_sorted`]: `Some(value)` puts, `None` deletes.
pub use crate::tree::mutate::Edit;

/// A `(key, value)` pair borrowed from the store.
pub type Row<'s> = (&'s [u8], &'s [u8]);

/// An immutable prolly map stored in `S`, ordered by the schema `T`.
///
/// Cheap to copy around by reference: it is a root address plus borrowed store and schema.
pub struct Map<'s, S: StoreFastPaths + ?Sized, T: TreeSchema> {
    store: &'s S,
    root: Address,
    schema: T,
}

impl<S: StoreFastPaths + ?Sized, T: TreeSchema + Clone> Clone for Map<'_, S, T> {
    fn clone(&self) -> Self {
        Map {
            store: self.store,
            root: self.root,
            schema: self.schema.clone(),
        }
    }
}

impl<'s, S: StoreFastPaths + ?Sized, T: TreeSchema> Map<'s, S, T> {
    /// The map whose root node is at `root`.
    pub fn new(store: &'s S, root: Address, schema: T) -> Map<'s, S, T> {
        Map {
            store,
            root,
            schema,
        }
    }

    /// Builds a map from pairs in strictly increasing key order (checked).
    ///
    /// On a machine with two cores or more, builds of more than a few thousand rows hash their
    /// leaves on a second thread while this one goes on (see
    /// [`set_background_hashing`](crate::process::set_background_hashing)); the tree
    /// is the same either way.
    pub fn from_sorted<'k, I>(store: &'s S, schema: T, items: I) -> Result<Self, TreeError>
    where
        I: IntoIterator<Item = (&'k [u8], &'k [u8])>,
    {
        let mut b = TreeBuilder::new(store, &schema);
        if background_hashing() {
            b = b.with_hash_thread();
        }
        let mut prev: Option<&[u8]> = None;
        for (i, (k, v)) in items.into_iter().enumerate() {
            if let Some(p) = prev {
                if schema.compare_keys(p, k) != Ordering::Less {
                    return Err(TreeError::Unsorted { index: i });
                }
            }
            b.add(k, v)?;
            prev = Some(k);
        }
        let root = b.finish()?;
        Ok(Map::new(store, root, schema))
    }

    /// The empty map (writes the empty leaf).
    pub fn empty(store: &'s S, schema: T) -> Result<Self, TreeError> {
        let root = TreeBuilder::new(store, &schema).finish()?;
        Ok(Map::new(store, root, schema))
    }

    /// Address of the root node.
    pub fn root(&self) -> Address {
        self.root
    }

    /// The store the map reads from.
    pub fn store(&self) -> &'s S {
        self.store
    }

    /// The key order and value layout.
    pub fn schema(&self) -> &T {
        &self.schema
    }

    /// The same map content at another root (for example after edits).
    pub fn with_root(&self, root: Address) -> Self
    where
        T: Clone,
    {
        Map::new(self.store, root, self.schema.clone())
    }

    /// Applies puts (`Some`) and deletes (`None`) in any order — a later edit of a key wins —
    /// and returns the edited map. Only the touched regions of the tree are rewritten; the
    /// result is the tree a build from scratch of the final rows would give. Edits that rewrite
    /// dozens of leaves hash them on a second thread, as [`Map::from_sorted`] does.
    ///
    /// ```
    /// # use prollystore::format::tuple::{TupleBuilder, TupleDesc, Type};
    /// # use prollystore::format::{Encoding, HashProfile};
    /// # use prollystore::{tuples::TupleSchema, Map, MemoryStore};
    /// # fn schema() -> TupleSchema {
    /// #     TupleSchema::new(
    /// #         TupleDesc::new(vec![Type::not_null(Encoding::Int64)]),
    /// #         TupleDesc::new(vec![Type::not_null(Encoding::Int64)]),
    /// #     )
    /// # }
    /// # fn tuple(desc: &TupleDesc, v: i64) -> Vec<u8> {
    /// #     let mut b = TupleBuilder::new(desc.clone());
    /// #     b.put_int64(0, v).unwrap();
    /// #     b.build().unwrap().as_bytes().to_vec()
    /// # }
    /// # fn key(v: i64) -> Vec<u8> { tuple(&schema().key, v) }
    /// # fn value(v: i64) -> Vec<u8> { tuple(&schema().value, v) }
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let store = MemoryStore::new(HashProfile::Dolt);
    /// // key(i) and value(i) encode one int64 each (hidden helpers).
    /// let rows: Vec<(Vec<u8>, Vec<u8>)> = (0..100).map(|i| (key(i), value(i * 10))).collect();
    /// let map = Map::from_sorted(&store, schema(), rows.iter().map(|(k, v)| (&k[..], &v[..])))?;
    /// let (k5, k500, v) = (key(5), key(500), value(-1));
    /// let edited = map.apply([(&k5[..], None), (&k500[..], Some(&v[..]))])?;
    /// assert_eq!(edited.get(&k5)?, None);
    /// assert_eq!(edited.get(&k500)?, Some(&v[..]));
    /// assert_eq!(map.count()?, 100); // the original map is unchanged: trees are immutable
    /// # Ok(())
    /// # }
    /// ```
    pub fn apply<'e>(
        &self,
        edits: impl IntoIterator<Item = (&'e [u8], Option<&'e [u8]>)>,
    ) -> Result<Self, TreeError>
    where
        T: Clone,
    {
        let mut edits: Vec<Edit<'e>> = edits.into_iter().collect();
        normalize_edits(&self.schema, &mut edits);
        let root = apply_edits(self.store, &self.schema, self.root, &edits)?;
        Ok(self.with_root(root))
    }

    /// [`Map::apply`] for edits already in strictly increasing key order (the schema's), one
    /// per key, such as a caller's sorted batch: no copy, no sort. Edits out of order (or two
    /// of one key) are refused with [`TreeError::Unsorted`] before anything is written.
    pub fn apply_sorted(&self, edits: &[Edit<'_>]) -> Result<Self, TreeError>
    where
        T: Clone,
    {
        if let Some(i) = edits
            .windows(2)
            .position(|w| self.schema.compare_keys(w[0].0, w[1].0) != Ordering::Less)
        {
            return Err(TreeError::Unsorted { index: i + 1 });
        }
        let root = apply_edits(self.store, &self.schema, self.root, edits)?;
        Ok(self.with_root(root))
    }

    /// A buffer of puts and deletes against this map, applied in one batch by
    /// [`MapEditor::flush`] (Dolt's `MutableMap`).
    pub fn editor(&self) -> MapEditor<'_, 's, S, T> {
        MapEditor {
            map: self,
            edits: Vec::new(),
        }
    }

    /// The differences from this map to `to` (same store and schema), in key order.
    ///
    /// ```
    /// # use prollystore::format::tuple::{TupleBuilder, TupleDesc, Type};
    /// # use prollystore::format::{Encoding, HashProfile};
    /// # use prollystore::{tuples::TupleSchema, Map, MemoryStore};
    /// # fn schema() -> TupleSchema {
    /// #     TupleSchema::new(
    /// #         TupleDesc::new(vec![Type::not_null(Encoding::Int64)]),
    /// #         TupleDesc::new(vec![Type::not_null(Encoding::Int64)]),
    /// #     )
    /// # }
    /// # fn tuple(desc: &TupleDesc, v: i64) -> Vec<u8> {
    /// #     let mut b = TupleBuilder::new(desc.clone());
    /// #     b.put_int64(0, v).unwrap();
    /// #     b.build().unwrap().as_bytes().to_vec()
    /// # }
    /// # fn key(v: i64) -> Vec<u8> { tuple(&schema().key, v) }
    /// # fn value(v: i64) -> Vec<u8> { tuple(&schema().value, v) }
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let store = MemoryStore::new(HashProfile::Dolt);
    /// // key(i) and value(i) encode one int64 each (hidden helpers).
    /// let rows: Vec<(Vec<u8>, Vec<u8>)> = (0..100).map(|i| (key(i), value(i * 10))).collect();
    /// let map = Map::from_sorted(&store, schema(), rows.iter().map(|(k, v)| (&k[..], &v[..])))?;
    /// use prollystore::DiffEntry;
    /// let (k1, v) = (key(1), value(0));
    /// let edited = map.apply([(&k1[..], Some(&v[..]))])?;
    /// let changes: Vec<DiffEntry<'_>> = map.diff(&edited)?.collect::<Result<_, _>>()?;
    /// assert!(matches!(changes[..], [DiffEntry::Modified { .. }]));
    /// # Ok(())
    /// # }
    /// ```
    pub fn diff<'m>(&'m self, to: &Map<'s, S, T>) -> Result<Diff<'s, 'm, S, T>, TreeError> {
        Diff::new(self.store, &self.schema, self.root, to.root)
    }

    /// The differences to `to` whose keys are within `start` and `end` ([`Diff::range`]):
    /// what [`Map::diff`] gives for those keys, in the same order, at the cost of that range.
    pub fn diff_range<'m>(
        &'m self,
        to: &Map<'s, S, T>,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
    ) -> Result<Diff<'s, 'm, S, T>, TreeError> {
        Diff::range(self.store, &self.schema, self.root, to.root, start, end)
    }

    /// The leaves this map and `to` do not share, with their row counts, from the internal
    /// nodes alone ([`ChangedLeaves`]): where a diff's work is, for cutting it into parts.
    pub fn changed_leaves<'m>(
        &'m self,
        to: &Map<'s, S, T>,
    ) -> Result<ChangedLeaves<'s, 'm, S, T>, TreeError> {
        ChangedLeaves::new(self.store, &self.schema, self.root, to.root)
    }

    /// Merges into this map (the left side) the changes made from `base` to `right`, asking
    /// `resolve(key, base, left, right)` about each key both sides changed to different values
    /// (values are `None` where the key is absent). Returns the merged map (in the same store)
    /// and the keys the resolver left in conflict, which keep their left value.
    ///
    /// ```
    /// # use prollystore::format::tuple::{TupleBuilder, TupleDesc, Type};
    /// # use prollystore::format::{Encoding, HashProfile};
    /// # use prollystore::{tuples::TupleSchema, Map, MemoryStore};
    /// # fn schema() -> TupleSchema {
    /// #     TupleSchema::new(
    /// #         TupleDesc::new(vec![Type::not_null(Encoding::Int64)]),
    /// #         TupleDesc::new(vec![Type::not_null(Encoding::Int64)]),
    /// #     )
    /// # }
    /// # fn tuple(desc: &TupleDesc, v: i64) -> Vec<u8> {
    /// #     let mut b = TupleBuilder::new(desc.clone());
    /// #     b.put_int64(0, v).unwrap();
    /// #     b.build().unwrap().as_bytes().to_vec()
    /// # }
    /// # fn key(v: i64) -> Vec<u8> { tuple(&schema().key, v) }
    /// # fn value(v: i64) -> Vec<u8> { tuple(&schema().value, v) }
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let store = MemoryStore::new(HashProfile::Dolt);
    /// // key(i) and value(i) encode one int64 each (hidden helpers).
    /// let rows: Vec<(Vec<u8>, Vec<u8>)> = (0..100).map(|i| (key(i), value(i * 10))).collect();
    /// let map = Map::from_sorted(&store, schema(), rows.iter().map(|(k, v)| (&k[..], &v[..])))?;
    /// use prollystore::tree::merge::Resolution;
    /// let (k1, k2) = (key(1), key(2));
    /// let (ours, theirs) = (value(-1), value(-2));
    /// let left = map.apply([(&k1[..], Some(&ours[..])), (&k2[..], Some(&ours[..]))])?;
    /// let right = map.apply([(&k2[..], Some(&theirs[..]))])?;
    /// // Both sides changed key 2: take the right side's value.
    /// let (merged, conflicts) = left.merge(&map, &right, |_key, _base, _left, right| {
    ///     Resolution::Value(right.map(<[u8]>::to_vec))
    /// })?;
    /// assert!(conflicts.is_empty());
    /// assert_eq!(merged.get(&k1)?, Some(&ours[..]));
    /// assert_eq!(merged.get(&k2)?, Some(&theirs[..]));
    /// # Ok(())
    /// # }
    /// ```
    pub fn merge<R>(
        &self,
        base: &Map<'s, S, T>,
        right: &Map<'s, S, T>,
        resolve: R,
    ) -> Result<(Self, Vec<Conflict>), TreeError>
    where
        T: Clone,
        R: FnMut(&[u8], Option<&[u8]>, Option<&[u8]>, Option<&[u8]>) -> Resolution,
    {
        let outcome = merge(
            self.store,
            &self.schema,
            base.root,
            self.root,
            right.root,
            resolve,
        )?;
        Ok((self.with_root(outcome.root), outcome.conflicts))
    }

    /// Number of rows (the root's tree count).
    pub fn count(&self) -> Result<u64, TreeError> {
        Ok(self.store.get_node(&self.root)?.tree_count())
    }

    /// Level of the root (0 = a single leaf).
    pub fn height(&self) -> Result<u8, TreeError> {
        Ok(self.store.get_node(&self.root)?.level())
    }

    /// The value stored under `key`, if any.
    ///
    /// ```
    /// # use prollystore::format::tuple::{TupleBuilder, TupleDesc, Type};
    /// # use prollystore::format::{Encoding, HashProfile};
    /// # use prollystore::{tuples::TupleSchema, Map, MemoryStore};
    /// # fn schema() -> TupleSchema {
    /// #     TupleSchema::new(
    /// #         TupleDesc::new(vec![Type::not_null(Encoding::Int64)]),
    /// #         TupleDesc::new(vec![Type::not_null(Encoding::Int64)]),
    /// #     )
    /// # }
    /// # fn tuple(desc: &TupleDesc, v: i64) -> Vec<u8> {
    /// #     let mut b = TupleBuilder::new(desc.clone());
    /// #     b.put_int64(0, v).unwrap();
    /// #     b.build().unwrap().as_bytes().to_vec()
    /// # }
    /// # fn key(v: i64) -> Vec<u8> { tuple(&schema().key, v) }
    /// # fn value(v: i64) -> Vec<u8> { tuple(&schema().value, v) }
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let store = MemoryStore::new(HashProfile::Dolt);
    /// // key(i) and value(i) encode one int64 each (hidden helpers).
    /// let rows: Vec<(Vec<u8>, Vec<u8>)> = (0..100).map(|i| (key(i), value(i * 10))).collect();
    /// let map = Map::from_sorted(&store, schema(), rows.iter().map(|(k, v)| (&k[..], &v[..])))?;
    /// assert_eq!(map.get(&key(7))?, Some(&value(70)[..]));
    /// assert_eq!(map.get(&key(1000))?, None);
    /// # Ok(())
    /// # }
    /// ```
    #[inline]
    pub fn get(&self, key: &[u8]) -> Result<Option<&'s [u8]>, TreeError> {
        get(self.store, self.root, &self.schema, key)
    }

    /// True if `key` is present.
    pub fn contains(&self, key: &[u8]) -> Result<bool, TreeError> {
        Ok(self.get(key)?.is_some())
    }

    /// The row at position `ordinal` in key order.
    pub fn get_ordinal(&self, ordinal: u64) -> Result<Option<Row<'s>>, TreeError> {
        let c = Cursor::at_ordinal(self.store, &self.root, ordinal)?;
        Ok(c.valid().then(|| (c.key(), c.value())))
    }

    /// The smallest row.
    pub fn first(&self) -> Result<Option<Row<'s>>, TreeError> {
        let c = Cursor::at_start(self.store, &self.root)?;
        Ok(c.valid().then(|| (c.key(), c.value())))
    }

    /// The largest row.
    pub fn last(&self) -> Result<Option<Row<'s>>, TreeError> {
        let c = Cursor::at_last(self.store, &self.root)?;
        Ok(c.valid().then(|| (c.key(), c.value())))
    }

    /// A cursor at the first key `>= key`.
    pub fn seek(&self, key: &[u8]) -> Result<Cursor<'s>, TreeError> {
        Cursor::at_key(self.store, &self.root, key, &self.schema)
    }

    /// A cursor at the first row (past the end of an empty map).
    pub fn seek_first(&self) -> Result<Cursor<'s>, TreeError> {
        Cursor::at_start(self.store, &self.root)
    }

    /// A cursor at the last row (before the start of an empty map), for walks backwards.
    pub fn seek_last(&self) -> Result<Cursor<'s>, TreeError> {
        Cursor::at_last(self.store, &self.root)
    }

    /// A cursor at the row at position `ordinal` in key order (past the end if there is none).
    pub fn seek_ordinal(&self, ordinal: u64) -> Result<Cursor<'s>, TreeError> {
        Cursor::at_ordinal(self.store, &self.root, ordinal)
    }

    /// The start of a walk given by `before`, a test of keys that is true for the keys below
    /// where the walk starts and false from there on (a range's start bound compared on some
    /// of the key's fields, say). Forwards: a cursor at the first row for which `before` is
    /// false (past the end if none). Backwards (`reverse`): at the last row for which it is
    /// true (before the start if none). The ranges of [`Map::range`], [`Map::range_rev`] and
    /// [`Map::prefix_range`] and [`Map::window`] start here.
    pub fn seek_partition(
        &self,
        before: impl FnMut(&[u8]) -> bool,
        reverse: bool,
    ) -> Result<Cursor<'s>, TreeError> {
        let mut c = Cursor::at_partition(self.store, &self.root, before)?;
        if reverse {
            // The cursor is at the first row past the start: one step back.
            c.retreat(self.store)?;
        } else if !c.valid() {
            // A descent may end one past the end of a leaf that is not the last.
            c.fix_forward(self.store)?;
        }
        Ok(c)
    }

    /// The map's leaves in key order, each with its number of rows, as their parents list
    /// them: no leaf is read (for callers that read leaves themselves, ahead or in parallel).
    /// A map that is a single leaf gives its root.
    pub fn leaves(&self) -> Result<Leaves<'s, S>, TreeError> {
        self.nodes_at(0)
    }

    /// The map's nodes at `level` (0: the leaves) in key order, each with the number of rows
    /// under it, as their parents list them: no node at `level` is read (a reader that fetches
    /// from far away asks for a window of them at once). A map whose root is at `level` gives
    /// its root; a lower map gives nothing.
    pub fn nodes_at(&self, level: u8) -> Result<Leaves<'s, S>, TreeError> {
        let level = usize::from(level);
        // Frames stop at the parents' level, or at the root when it is not above them (so that
        // nothing below the root is read for a map too low to have parents at that level).
        let stop = (level + 1).min(usize::from(self.height()?));
        let cursor = Cursor::node_start_at_level(self.store, &self.root, stop, &[], &BytesSchema)?;
        let single =
            (cursor.height() == level + 1).then(|| (self.root, cursor.at(level).0.tree_count()));
        Ok(Leaves {
            store: self.store,
            cursor,
            level,
            single,
            ahead: ReadAhead::default(),
            counts: Vec::new(),
            counts_of: None,
        })
    }

    /// The map's leaves from the one holding the row at position `ordinal` on, as
    /// [`Map::leaves`] gives them (no leaf read), and the position of that first leaf's first
    /// row: one descent through the parents' counts, for a reader that starts part-way (a part
    /// of a table cut by row counts). Past the end: no leaves, and the map's count.
    pub fn leaves_from(&self, ordinal: u64) -> Result<(Leaves<'s, S>, u64), TreeError> {
        let stop = 1.min(usize::from(self.height()?));
        // Rows in the subtrees passed over on the way down.
        let mut before = 0u64;
        let mut past_end = false;
        let cursor = Cursor::descend_to(self.store, &self.root, stop, |n| {
            if past_end {
                return n.count();
            }
            if n.is_leaf() {
                // The root itself is the one leaf: its entries are not chosen.
                return 0;
            }
            for (i, count) in n.subtree_counts().enumerate() {
                // Counts come from stored nodes: a corrupt one must not overflow.
                if ordinal < before.saturating_add(count) {
                    return i;
                }
                before = before.saturating_add(count);
            }
            past_end = true;
            n.count()
        })?;
        let single = (cursor.height() == 1).then(|| (self.root, cursor.at(0).0.tree_count()));
        let single = single.filter(|&(_, count)| ordinal < count);
        if cursor.height() == 1 && single.is_none() {
            before = cursor.at(0).0.tree_count();
        }
        Ok((
            Leaves {
                store: self.store,
                cursor,
                level: 0,
                single,
                ahead: ReadAhead::default(),
                counts: Vec::new(),
                counts_of: None,
            },
            before,
        ))
    }

    /// Every row in key order.
    pub fn iter(&self) -> Result<Iter<'s, '_, S, T>, TreeError> {
        self.range(Bound::Unbounded, Bound::Unbounded)
    }

    /// Rows with keys within the bounds, in key order.
    ///
    /// ```
    /// # use prollystore::format::tuple::{TupleBuilder, TupleDesc, Type};
    /// # use prollystore::format::{Encoding, HashProfile};
    /// # use prollystore::{tuples::TupleSchema, Map, MemoryStore};
    /// # fn schema() -> TupleSchema {
    /// #     TupleSchema::new(
    /// #         TupleDesc::new(vec![Type::not_null(Encoding::Int64)]),
    /// #         TupleDesc::new(vec![Type::not_null(Encoding::Int64)]),
    /// #     )
    /// # }
    /// # fn tuple(desc: &TupleDesc, v: i64) -> Vec<u8> {
    /// #     let mut b = TupleBuilder::new(desc.clone());
    /// #     b.put_int64(0, v).unwrap();
    /// #     b.build().unwrap().as_bytes().to_vec()
    /// # }
    /// # fn key(v: i64) -> Vec<u8> { tuple(&schema().key, v) }
    /// # fn value(v: i64) -> Vec<u8> { tuple(&schema().value, v) }
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let store = MemoryStore::new(HashProfile::Dolt);
    /// // key(i) and value(i) encode one int64 each (hidden helpers).
    /// let rows: Vec<(Vec<u8>, Vec<u8>)> = (0..100).map(|i| (key(i), value(i * 10))).collect();
    /// let map = Map::from_sorted(&store, schema(), rows.iter().map(|(k, v)| (&k[..], &v[..])))?;
    /// use std::ops::Bound;
    /// let (lo, hi) = (key(10), key(20));
    /// let rows = map.range(Bound::Included(&lo[..]), Bound::Excluded(&hi[..]))?;
    /// assert_eq!(rows.count(), 10); // keys 10..=19
    /// let last_three = map.range_rev(Bound::Unbounded, Bound::Unbounded)?.take(3);
    /// let firsts: Vec<_> = last_three.map(|r| r.map(|(k, _)| k.to_vec())).collect::<Result<_, _>>()?;
    /// assert_eq!(firsts, vec![key(99), key(98), key(97)]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn range<'b>(
        &'b self,
        lo: Bound<&[u8]>,
        hi: Bound<&'b [u8]>,
    ) -> Result<Iter<'s, 'b, S, T>, TreeError>
    where
        's: 'b,
        T: 'b,
    {
        let mut c = match lo {
            Bound::Unbounded => Cursor::at_start(self.store, &self.root)?,
            Bound::Included(k) => Cursor::at_key(self.store, &self.root, k, &self.schema)?,
            Bound::Excluded(k) => {
                let s = &self.schema;
                self.seek_partition(|x| s.compare_keys(x, k).is_le(), false)?
            }
        };
        if !c.valid() {
            // at_key may leave the cursor one past a leaf end inside the tree.
            c.fix_forward(self.store)?;
        }
        Ok(Iter {
            store: self.store,
            schema: &self.schema,
            cursor: c,
            bound: hi,
            forward: true,
            done: false,
            entries: Entries::default(),
            loaded: false,
            unbounded: matches!(hi, Bound::Unbounded),
            ahead: ReadAhead::default(),
        })
    }

    /// Rows with keys within the bounds, in key order, a leaf at a time: each [`Run`] is the
    /// next rows of one leaf (already cut at the range's upper bound). A run's step is a few
    /// bounds-checked reads, with no bound comparison and no leaf change, so a caller that
    /// hands out one row per call, such as the C ABI's `prolly_cursor_next`, can keep its
    /// common step down to that and refill only at leaf boundaries.
    pub fn range_runs<'b>(
        &'b self,
        lo: Bound<&'b [u8]>,
        hi: Bound<&'b [u8]>,
    ) -> Result<Runs<'s, 'b, S, T>, TreeError>
    where
        's: 'b,
        T: 'b,
    {
        Ok(Runs(self.range(lo, hi)?))
    }

    /// Rows with keys within the bounds, in descending key order.
    pub fn range_rev<'b>(
        &'b self,
        lo: Bound<&'b [u8]>,
        hi: Bound<&'b [u8]>,
    ) -> Result<Iter<'s, 'b, S, T>, TreeError>
    where
        's: 'b,
        T: 'b,
    {
        let s = &self.schema;
        let c = match hi {
            Bound::Unbounded => Cursor::at_last(self.store, &self.root)?,
            Bound::Included(k) => self.seek_partition(|x| s.compare_keys(x, k).is_le(), true)?,
            Bound::Excluded(k) => self.seek_partition(|x| s.compare_keys(x, k).is_lt(), true)?,
        };
        Ok(Iter {
            store: self.store,
            schema: &self.schema,
            cursor: c,
            bound: lo,
            forward: false,
            done: false,
            entries: Entries::default(),
            loaded: false,
            unbounded: matches!(lo, Bound::Unbounded),
            ahead: ReadAhead::default(),
        })
    }

    /// Rows whose keys satisfy `in_prefix` where keys below the prefix give `Less`, keys in it
    /// `Equal` and keys above it `Greater` (for example a descriptor's prefix comparison).
    pub fn prefix_range<F>(&self, cmp: F) -> Result<Window<'s, S, F>, TreeError>
    where
        F: Fn(&[u8]) -> Ordering,
    {
        self.window(cmp, false)
    }

    /// The rows of a [`KeyWindow`] — a range told by tests on keys rather than by bound keys
    /// (bounds on some of a key's fields, say) — in key order, or descending (`reverse`).
    pub fn window<W: KeyWindow>(
        &self,
        window: W,
        reverse: bool,
    ) -> Result<Window<'s, S, W>, TreeError> {
        let cursor = if reverse {
            self.seek_partition(|k| !window.above(k), true)?
        } else {
            self.seek_partition(|k| window.below(k), false)?
        };
        Ok(Window {
            store: self.store,
            cursor,
            window,
            reverse,
            done: false,
        })
    }

    /// The rows of a [`KeyWindow`] in key order from the row at position `ordinal` on (none
    /// if `ordinal` is past the end): a part of a map cut by row counts rather than by keys
    /// (the window's `below` is not consulted; its `above` still ends the walk).
    pub fn window_from_ordinal<W: KeyWindow>(
        &self,
        ordinal: u64,
        window: W,
    ) -> Result<Window<'s, S, W>, TreeError> {
        let cursor = self.seek_ordinal(ordinal)?;
        Ok(Window {
            store: self.store,
            cursor,
            window,
            reverse: false,
            done: false,
        })
    }
}

/// [`Map::get`] of the tree at `root`, for callers that hold the schema behind a reference
/// (the C ABI): `Map<_, _, T>::get` is this function with the same `S` and `T`, so both compile
/// to the same code.
#[inline]
pub fn get<'s, S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized>(
    store: &'s S,
    root: Address,
    schema: &T,
    key: &[u8],
) -> Result<Option<&'s [u8]>, TreeError> {
    let (mut node, mut hint) = store.get_node_hinted(&root)?;
    // The parent's keys around the entry taken: every key below lies after `after` and
    // up to `last`, which lets the search guess where to look first.
    let (mut after, mut last) = (None, None);
    loop {
        let i = schema.lower_bound_within(&node, key, after, last);
        if node.is_leaf() {
            // Equal bytes are equal keys; only a byte mismatch needs the comparator
            // (collations, say, can call different bytes equal).
            if i < node.count() && {
                let k = node.key(i);
                k == key || schema.compare_keys(k, key).is_eq()
            } {
                return Ok(Some(node.value(i)));
            }
            return Ok(None);
        }
        let n = node.count();
        if n == 0 {
            return Err(TreeError::Malformed {
                address: root,
                reason: "empty internal node",
            });
        }
        if i == n {
            // Greater than every key in the tree.
            return Ok(None);
        }
        if i > 0 {
            after = Some(node.key(i - 1));
        }
        last = Some(node.key(i));
        let level = node.level() - 1;
        // Straight into `node`: a separate `child` cost ~50 instructions of copies per get.
        store.descend(&mut node, &mut hint, i)?;
        if node.level() != level || (level > 0 && node.count() == 0) {
            return Err(malformed_child(store, root, schema, key));
        }
    }
}

/// The error for a descent of [`get`] towards `key` that met a child at the wrong level or an
/// empty internal node: the same walk again, by address, to name the child. Out of line, and
/// without the schema's key search (see `crates/ffi/src/lookup.rs` on keeping that inlined).
#[cold]
#[inline(never)]
fn malformed_child<S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized>(
    store: &S,
    root: Address,
    schema: &T,
    key: &[u8],
) -> TreeError {
    let reason = "child node at the wrong level, or an empty internal node";
    let mut address = root;
    loop {
        let node = match store.get_node(&address) {
            Ok(node) => node,
            Err(e) => return e.into(),
        };
        let i = node.partition_point(|k| schema.compare_keys(k, key).is_lt());
        if node.is_leaf() || i >= node.count() {
            // Not reached from `get`; name the root rather than panic.
            return TreeError::Malformed {
                address: root,
                reason,
            };
        }
        let child = node.child(i);
        match store.get_node(&child) {
            Ok(c) if c.level() != node.level() - 1 || (c.level() > 0 && c.count() == 0) => {
                return TreeError::Malformed {
                    address: child,
                    reason,
                }
            }
            Ok(_) => address = child,
            Err(e) => return e.into(),
        }
    }
}

impl<'s> Cursor<'s> {
    /// After a descent that ended past the end of a non-last leaf, moves to the next leaf.
    pub(crate) fn fix_forward<S: StoreFastPaths + ?Sized>(
        &mut self,
        store: &'s S,
    ) -> Result<(), TreeError> {
        if !self.valid() && self.leaf_index() >= self.leaf().count() && self.leaf().count() > 0 {
            // Position on the last item, then step.
            let c = self.leaf().count();
            self.set_leaf_index(c - 1);
            self.advance(store)?;
        }
        Ok(())
    }
}

/// The nodes of a map at one level in key order, with their row counts ([`Map::leaves`],
/// [`Map::nodes_at`]).
pub struct Leaves<'s, S: StoreFastPaths + ?Sized> {
    store: &'s S,
    /// Frames down to the parents' level, `level + 1` (none below).
    cursor: Cursor<'s>,
    /// The level of the nodes given.
    level: usize,
    /// The root, for a map whose root is at `level` (taken when given out).
    single: Option<(Address, u64)>,
    /// The next parents announced to the store as the walk moves on.
    ahead: ReadAhead,
    /// The subtree counts of the parent `counts_of` (its chunk's address in memory).
    counts: Vec<u64>,
    counts_of: Option<usize>,
}

impl<S: StoreFastPaths + ?Sized> Iterator for Leaves<'_, S> {
    type Item = Result<(Address, u64), TreeError>;

    fn next(&mut self) -> Option<Self::Item> {
        let parent = self.level + 1;
        if self.cursor.height() <= parent {
            return self.single.take().map(Ok);
        }
        if !self.cursor.valid_at(parent) {
            return None;
        }
        let (node, i) = self.cursor.at(parent);
        let id = node.chunk().as_ptr() as usize;
        if self.counts_of != Some(id) {
            self.counts.clear();
            self.counts.extend(node.subtree_counts());
            self.counts_of = Some(id);
            // A walk that fetches its nodes from far away gets the next parents in batches.
            self.ahead
                .crossed(self.store, &self.cursor, parent + 1, |_| true);
        }
        let leaf = (node.child(i), self.counts.get(i).copied().unwrap_or(0));
        if let Err(e) = self.cursor.advance_at(self.store, parent) {
            // Nothing after an error.
            self.cursor.set_index(parent, node.count());
            return Some(Err(e));
        }
        Some(Ok(leaf))
    }
}

/// Iterator over a key range (see [`Map::range`] and [`Map::range_rev`]).
pub struct Iter<'s, 'b, S: StoreFastPaths + ?Sized, T: TreeSchema> {
    store: &'s S,
    schema: &'b T,
    cursor: Cursor<'s>,
    bound: Bound<&'b [u8]>,
    forward: bool,
    done: bool,
    /// Forward scans: the rows of the current leaf not yet returned (none until `loaded`).
    entries: Entries<'s>,
    /// Set once a forward scan has taken its first leaf into `entries`.
    loaded: bool,
    /// True if `bound` is `Unbounded`: spares the per-row bound check.
    unbounded: bool,
    /// Forward scans: how far the next leaves have been announced to the store.
    ahead: ReadAhead,
}

/// True if `k` is within the far bound `bound` of a walk (`forward` or backwards).
fn within<T: TreeSchema>(schema: &T, bound: Bound<&[u8]>, forward: bool, k: &[u8]) -> bool {
    match bound {
        Bound::Unbounded => true,
        Bound::Included(b) => {
            let c = schema.compare_keys(k, b);
            if forward {
                c.is_le()
            } else {
                c.is_ge()
            }
        }
        Bound::Excluded(b) => {
            let c = schema.compare_keys(k, b);
            if forward {
                c.is_lt()
            } else {
                c.is_gt()
            }
        }
    }
}

/// Nodes a forward walk crosses before it announces the next ones to the store
/// ([`StoreFastPaths::prefetch`]): a scan of a leaf or two (a point range) reads nothing more.
const READ_AHEAD_AFTER: u32 = 2;

/// Nodes announced at once; the next window goes out when half of one is left.
const READ_AHEAD: usize = 64;

/// Where a forward walk's read-ahead stands: the nodes crossed so far, the parent whose
/// children it announced (its chunk's address in memory) and the index of the first child not
/// announced yet.
#[derive(Default)]
struct ReadAhead {
    crossed: u32,
    parent: usize,
    to: usize,
}

impl ReadAhead {
    /// After the walk of `cursor` has moved to another node below the frame at `level`:
    /// announces to `store` the next children of that frame's node, up to [`READ_AHEAD`] and
    /// none that `inside` (given the key of the child before) says lies past the walk's end,
    /// once [`READ_AHEAD_AFTER`] nodes are crossed and less than half a window is announced
    /// ahead. Stores that do not read ahead skip all of it.
    fn crossed<S: StoreFastPaths + ?Sized>(
        &mut self,
        store: &S,
        cursor: &Cursor<'_>,
        level: usize,
        inside: impl Fn(&[u8]) -> bool,
    ) {
        if !S::PREFETCHES {
            return;
        }
        self.crossed = self.crossed.saturating_add(1);
        if self.crossed < READ_AHEAD_AFTER || cursor.height() <= level {
            return;
        }
        let (parent, i) = cursor.at(level);
        let id = parent.chunk().as_ptr() as usize;
        if self.parent != id {
            (self.parent, self.to) = (id, i + 1);
        }
        if self.to > i + READ_AHEAD / 2 {
            return;
        }
        let from = self.to.max(i + 1);
        let mut to = from;
        let end = (i + 1 + READ_AHEAD).min(parent.count());
        // Child `j` can hold keys inside the walk only if child `j - 1`'s last key is inside.
        while to < end && inside(parent.key(to - 1)) {
            to += 1;
        }
        let mut next = [Address::ZERO; READ_AHEAD];
        for (slot, j) in next.iter_mut().zip(from..to) {
            *slot = parent.child(j);
        }
        if to > from {
            store.prefetch(&next[..to - from]);
        }
        self.to = to;
    }
}

impl<'s, S: StoreFastPaths + ?Sized, T: TreeSchema> Iter<'s, '_, S, T> {
    /// True if `k` is within the far bound.
    #[inline]
    fn inside(&self, k: &[u8]) -> bool {
        within(self.schema, self.bound, self.forward, k)
    }

    /// Moves a forward scan to its next leaf: the cursor's own leaf (from the cursor's index)
    /// on the first call, the following leaf after that. False at the end of the tree.
    #[cold]
    #[inline(never)]
    fn next_leaf(&mut self) -> Result<bool, TreeError> {
        if !self.loaded {
            if !self.cursor.valid() {
                return Ok(false);
            }
            let mut e = self.cursor.leaf().entries();
            e.skip_pairs(self.cursor.leaf_index());
            self.entries = e;
            self.loaded = true;
            return Ok(true);
        }
        if self.cursor.height() < 2 || !self.cursor.advance_at(self.store, 1)? {
            return Ok(false);
        }
        self.entries = self.cursor.leaf().entries();
        let (schema, bound, forward) = (self.schema, self.bound, self.forward);
        let inside = |k: &[u8]| within(schema, bound, forward, k);
        self.ahead.crossed(self.store, &self.cursor, 1, inside);
        Ok(true)
    }

    /// Ends the iteration; every later call returns nothing.
    #[cold]
    fn finish(&mut self) {
        self.done = true;
        self.entries = Entries::default();
    }

    /// The slow part of a forward `next`: loads leaves until one has a row.
    #[cold]
    #[inline(never)]
    fn next_forward_slow(&mut self) -> Option<Result<Row<'s>, TreeError>> {
        loop {
            if self.done {
                return None;
            }
            match self.next_leaf() {
                Ok(true) => {}
                Ok(false) => {
                    self.finish();
                    return None;
                }
                Err(e) => {
                    self.finish();
                    return Some(Err(e));
                }
            }
            if let Some((k, v)) = self.entries.next() {
                if self.unbounded || self.inside(k) {
                    return Some(Ok((k, v)));
                }
                self.finish();
                return None;
            }
        }
    }

    /// The rows `next` would return up to the end of the current leaf (the next leaf's rows
    /// when the current one is used up), as one run; `None` at the end of the range. A
    /// forward scan only (see [`Map::range_runs`]).
    fn next_run(&mut self) -> Result<Option<Run<'s>>, TreeError> {
        debug_assert!(self.forward, "runs are built from forward iterators only");
        loop {
            if self.done {
                return Ok(None);
            }
            let left = self.entries.len();
            if left > 0 {
                // The run takes over the rest of the leaf.
                let mut entries = std::mem::take(&mut self.entries);
                let take = self.inside_count(left);
                if take < left {
                    // The range ends in this leaf.
                    self.finish();
                    if take == 0 {
                        return Ok(None);
                    }
                }
                entries.truncate(take);
                return Ok(Some(Run::new(entries)));
            }
            match self.next_leaf() {
                Ok(true) => {}
                Ok(false) => {
                    self.finish();
                    return Ok(None);
                }
                Err(e) => {
                    self.finish();
                    return Err(e);
                }
            }
        }
    }

    /// How many of the last `left` rows of the current leaf are within the far bound of a
    /// forward scan (a prefix of them, as keys ascend).
    fn inside_count(&self, left: usize) -> usize {
        if matches!(self.bound, Bound::Unbounded) {
            return left;
        }
        let leaf = self.cursor.leaf();
        let count = leaf.count();
        let (mut lo, mut hi) = (count.saturating_sub(left), count);
        let start = lo;
        if hi > lo && self.inside(leaf.key(hi - 1)) {
            return left;
        }
        // The first row outside is in [lo, hi).
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.inside(leaf.key(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo - start
    }

    /// Passes up to `max` next rows to `f` (the same rows as `max` calls of `next`) and
    /// returns how many it passed; fewer than `max` only at the end of the range. An
    /// unbounded forward scan walks each leaf's entries in a tight loop: the fast path for
    /// callers that take rows in batches (the C ABI's `prolly_cursor_next_batch`).
    #[inline]
    pub fn next_batch(
        &mut self,
        max: usize,
        mut f: impl FnMut(&'s [u8], &'s [u8]),
    ) -> Result<usize, TreeError> {
        let mut n = 0usize;
        if !self.forward || !matches!(self.bound, Bound::Unbounded) {
            while n < max {
                match self.next() {
                    Some(r) => {
                        let (k, v) = r?;
                        f(k, v);
                        n += 1;
                    }
                    None => break,
                }
            }
            return Ok(n);
        }
        while n < max {
            // A local copy keeps the walk's state in registers.
            let mut local = self.entries.clone();
            while n < max {
                let Some((k, v)) = local.next() else { break };
                f(k, v);
                n += 1;
            }
            self.entries = local;
            if n == max {
                break;
            }
            match self.next_forward_slow() {
                Some(r) => {
                    let (k, v) = r?;
                    f(k, v);
                    n += 1;
                }
                None => break,
            }
        }
        Ok(n)
    }
}

impl<'s, S: StoreFastPaths + ?Sized, T: TreeSchema> Iterator for Iter<'s, '_, S, T> {
    type Item = Result<Row<'s>, TreeError>;

    /// Internal iteration (`for_each`, `fold`, `count`, ...): an unbounded forward scan walks
    /// each leaf in a loop whose state stays in registers, about twice as fast per row as
    /// repeated `next` calls.
    fn fold<B, F>(mut self, init: B, mut f: F) -> B
    where
        F: FnMut(B, Self::Item) -> B,
    {
        let mut acc = init;
        if !(self.forward && self.unbounded) {
            for r in self.by_ref() {
                acc = f(acc, r);
            }
            return acc;
        }
        loop {
            let leaf = std::mem::take(&mut self.entries);
            acc = leaf.fold(acc, |a, row| f(a, Ok(row)));
            match self.next_forward_slow() {
                Some(r) => acc = f(acc, r),
                None => return acc,
            }
        }
    }

    // Always inlined so that the fast path lands in the C ABI's exported `next` too.
    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        if self.forward {
            // Fast path: the next entry of the current leaf.
            if let Some((k, v)) = self.entries.next() {
                if self.unbounded || self.inside(k) {
                    return Some(Ok((k, v)));
                }
                self.finish();
                return None;
            }
            return self.next_forward_slow();
        }
        if self.done || !self.cursor.valid() {
            return None;
        }
        let (k, v) = (self.cursor.key(), self.cursor.value());
        if !self.inside(k) {
            self.done = true;
            return None;
        }
        if let Err(e) = self.cursor.retreat(self.store) {
            self.done = true;
            return Some(Err(e));
        }
        Some(Ok((k, v)))
    }
}

/// Consecutive rows of one leaf, in key order (see [`Map::range_runs`]). The default run is
/// empty.
///
/// On the common leaves whose keys and values each have one width, a run holds the bytes of
/// its rows and a step splits one key and one value off their fronts: no index arithmetic and
/// no offset vectors read (a C cursor's one-row step is this and nothing more). Other leaves
/// are walked through their [`Entries`].
#[derive(Clone, Debug, Default)]
pub struct Run<'s> {
    /// Fixed widths: the keys not yet returned (a whole number of `key_width` items).
    keys: &'s [u8],
    /// Fixed widths: the values not yet returned, `value_width` bytes each.
    values: &'s [u8],
    /// The key width, or 0 when the run walks `entries` instead.
    key_width: usize,
    value_width: usize,
    /// Other leaves: the pairs not yet returned (empty in a fixed-width run).
    entries: Entries<'s>,
}

impl<'s> Run<'s> {
    /// The run of `entries`' pairs.
    fn new(entries: Entries<'s>) -> Run<'s> {
        match entries.fixed_parts() {
            Some((keys, key_width, values, value_width)) => Run {
                keys,
                values,
                key_width,
                value_width,
                entries: Entries::default(),
            },
            None => Run {
                entries,
                ..Run::default()
            },
        }
    }

    /// On a run whose keys all have one width and whose values all have one width: the rows
    /// not returned yet as `(keys, key width, values, value width)`, both widths nonzero and
    /// both slices a whole number of items (as many of each, on a verified node). `None` on
    /// runs walked through offsets.
    #[inline]
    pub fn fixed_parts(&self) -> Option<(&'s [u8], usize, &'s [u8], usize)> {
        if self.key_width == 0 {
            return None;
        }
        Some((self.keys, self.key_width, self.values, self.value_width))
    }

    /// Rows not returned yet.
    #[inline]
    pub fn len(&self) -> usize {
        match self.key_width {
            0 => self.entries.len(),
            w => self.keys.len() / w,
        }
    }

    /// True when every row has been returned.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Splits off the next `n` rows (fewer if fewer are left) as a run of their own; this run
    /// keeps the rest. Walk the part with `for_each`/`fold` for the fixed-width fast path.
    #[inline]
    pub fn take_front(&mut self, n: usize) -> Run<'s> {
        if self.key_width == 0 {
            let mut front = self.entries.clone();
            front.truncate(n);
            self.entries.skip_pairs(n);
            return Run::new(front);
        }
        let n = n.min(self.len());
        let (keys, rest_keys) = self.keys.split_at(n * self.key_width);
        let (values, rest_values) = self
            .values
            .split_at_checked(n * self.value_width)
            .unwrap_or((self.values, &[]));
        self.keys = rest_keys;
        self.values = rest_values;
        Run {
            keys,
            values,
            entries: Entries::default(),
            ..*self
        }
    }
}

impl<'s> Iterator for Run<'s> {
    type Item = Row<'s>;

    #[inline(always)]
    fn next(&mut self) -> Option<Row<'s>> {
        if self.key_width == 0 {
            return self.entries.next();
        }
        let (k, keys) = self.keys.split_at_checked(self.key_width)?;
        let (v, values) = self.values.split_at_checked(self.value_width)?;
        self.keys = keys;
        self.values = values;
        Some((k, v))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.len();
        (n, Some(n))
    }

    #[inline]
    fn fold<B, F: FnMut(B, Self::Item) -> B>(self, init: B, f: F) -> B {
        if self.key_width == 0 {
            return self.entries.fold(init, f);
        }
        let keys = self.keys.chunks_exact(self.key_width);
        keys.zip(self.values.chunks_exact(self.value_width))
            .fold(init, f)
    }
}

impl ExactSizeIterator for Run<'_> {}

/// The rows of a key range as [`Run`]s, one leaf at a time, in key order (see
/// [`Map::range_runs`]). After an error, the iteration ends.
pub struct Runs<'s, 'b, S: StoreFastPaths + ?Sized, T: TreeSchema>(Iter<'s, 'b, S, T>);

impl<'s, S: StoreFastPaths + ?Sized, T: TreeSchema> Iterator for Runs<'s, '_, S, T> {
    type Item = Result<Run<'s>, TreeError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next_run().transpose()
    }
}

/// A range of keys told by tests on keys: for ranges whose bounds compare only some of a key's
/// fields, or that are not given as keys at all. Both tests are monotone in key order (`below`
/// true up to some key and false from there on, `above` false up to some key and true from
/// there on). A function giving `Less` below the range, `Equal` in it and `Greater` above it is
/// one.
pub trait KeyWindow {
    /// True for keys before the window's first key.
    fn below(&self, key: &[u8]) -> bool;
    /// True for keys after the window's last key.
    fn above(&self, key: &[u8]) -> bool;
}

impl<F: Fn(&[u8]) -> Ordering> KeyWindow for F {
    #[inline]
    fn below(&self, key: &[u8]) -> bool {
        self(key).is_lt()
    }

    #[inline]
    fn above(&self, key: &[u8]) -> bool {
        self(key).is_gt()
    }
}

/// The rows of a [`KeyWindow`] (see [`Map::window`], [`Map::prefix_range`]).
pub struct Window<'s, S: StoreFastPaths + ?Sized, W> {
    store: &'s S,
    cursor: Cursor<'s>,
    window: W,
    reverse: bool,
    done: bool,
}

impl<S: StoreFastPaths + ?Sized, W> Window<'_, S, W> {
    /// The window's tests.
    pub fn window(&self) -> &W {
        &self.window
    }
}

impl<'s, S: StoreFastPaths + ?Sized, W: KeyWindow> Iterator for Window<'s, S, W> {
    type Item = Result<Row<'s>, TreeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || !self.cursor.valid() {
            return None;
        }
        let (k, v) = (self.cursor.key(), self.cursor.value());
        let step = if self.reverse {
            if self.window.below(k) {
                self.done = true;
                return None;
            }
            self.cursor.retreat(self.store)
        } else {
            if self.window.above(k) {
                self.done = true;
                return None;
            }
            self.cursor.advance(self.store)
        };
        if let Err(e) = step {
            self.done = true;
            return Some(Err(e));
        }
        Some(Ok((k, v)))
    }
}

/// Puts and deletes buffered against a [`Map`]; later edits of a key win.
pub struct MapEditor<'m, 's, S: StoreFastPaths + ?Sized, T: TreeSchema> {
    map: &'m Map<'s, S, T>,
    edits: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

impl<'s, S: StoreFastPaths + ?Sized, T: TreeSchema + Clone> MapEditor<'_, 's, S, T> {
    /// Sets `key` to `value`.
    pub fn put(&mut self, key: &[u8], value: &[u8]) {
        self.edits.push((key.to_vec(), Some(value.to_vec())));
    }

    /// Removes `key` (no-op if absent).
    pub fn delete(&mut self, key: &[u8]) {
        self.edits.push((key.to_vec(), None));
    }

    /// Number of buffered edits (before de-duplication).
    pub fn len(&self) -> usize {
        self.edits.len()
    }

    /// True if nothing is buffered.
    pub fn is_empty(&self) -> bool {
        self.edits.is_empty()
    }

    /// Applies the buffered edits and returns the new map (the original is unchanged).
    pub fn flush(self) -> Result<Map<'s, S, T>, TreeError> {
        self.map
            .apply(self.edits.iter().map(|(k, v)| (&k[..], v.as_deref())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BytesSchema, ChunkStore, MemoryStore};
    use prollystore_format::HashProfile;

    /// A one-field tuple of `i` (big-endian), so nodes verify.
    fn tup(i: u32) -> Vec<u8> {
        let mut t = i.to_be_bytes().to_vec();
        t.extend_from_slice(&[1, 0]);
        t
    }

    fn batches<S: StoreFastPaths + ?Sized, T: TreeSchema>(
        mut it: Iter<'_, '_, S, T>,
        max: usize,
    ) -> Vec<Vec<u8>> {
        let mut got = Vec::new();
        loop {
            let n = it.next_batch(max, |k, _| got.push(k.to_vec())).unwrap();
            assert!(n <= max);
            if n == 0 {
                // Exhausted stays exhausted.
                assert_eq!(
                    it.next_batch(max, |_, _| panic!("row after end")).unwrap(),
                    0
                );
                assert!(it.next().is_none());
                return got;
            }
        }
    }

    /// A window gives the rows its tests admit, forwards and backwards, for windows that
    /// start and end at every kind of place (inside a leaf, between rows, past either end,
    /// empty).
    #[test]
    fn windows_forward_and_reverse() {
        let store = MemoryStore::new(HashProfile::Blake3);
        let rows: Vec<Vec<u8>> = (0..20_000).map(|i| tup(2 * i)).collect();
        let m =
            Map::from_sorted(&store, BytesSchema, rows.iter().map(|k| (&k[..], &k[..]))).unwrap();
        let ends = [0u32, 1, 2, 777, 778, 20_000, 39_998, 39_999, 40_000, 50_000];
        for lo in ends {
            for hi in ends {
                let (l, h) = (tup(lo), tup(hi));
                let window = |k: &[u8]| {
                    if k < &l[..] {
                        Ordering::Less
                    } else if k > &h[..] {
                        Ordering::Greater
                    } else {
                        Ordering::Equal
                    }
                };
                let want: Vec<&[u8]> = rows
                    .iter()
                    .map(|k| &k[..])
                    .filter(|k| window(k).is_eq())
                    .collect();
                let got: Vec<&[u8]> = m
                    .window(window, false)
                    .unwrap()
                    .map(|r| r.unwrap().0)
                    .collect();
                assert_eq!(got, want, "forward {lo}..={hi}");
                let mut back: Vec<&[u8]> = m
                    .window(window, true)
                    .unwrap()
                    .map(|r| r.unwrap().0)
                    .collect();
                back.reverse();
                assert_eq!(back, want, "reverse {lo}..={hi}");
            }
        }
    }

    /// A memory store that records what scans announce through `prefetch`.
    struct Announced {
        inner: MemoryStore,
        seen: std::sync::Mutex<Vec<Address>>,
    }

    impl ChunkStore for Announced {
        fn profile(&self) -> HashProfile {
            self.inner.profile()
        }
        fn get(&self, address: &Address) -> Result<Option<&[u8]>, crate::StoreError> {
            self.inner.get(address)
        }
        fn get_node(
            &self,
            address: &Address,
        ) -> Result<prollystore_format::message::Node<'_>, crate::StoreError> {
            self.inner.get_node(address)
        }
        fn has(&self, address: &Address) -> Result<bool, crate::StoreError> {
            self.inner.has(address)
        }
        fn put(&self, chunk: &[u8]) -> Result<Address, crate::StoreError> {
            self.inner.put(chunk)
        }
    }

    impl StoreFastPaths for Announced {
        const PREFETCHES: bool = true;
        fn prefetch(&self, addresses: &[Address]) {
            self.seen.lock().unwrap().extend_from_slice(addresses);
        }
    }

    /// `leaves_from(o)` is the suffix of `leaves()` that starts with the leaf holding row `o`,
    /// with the position of that leaf's first row; past the end, nothing and the count. Maps
    /// of one leaf, two levels and three.
    #[test]
    fn leaves_from_a_position_are_the_suffix_of_the_leaves() {
        let store = MemoryStore::new(HashProfile::Blake3);
        for n in [0usize, 1, 40, 3_000, 200_000] {
            let rows: Vec<Vec<u8>> = (0..n as u32).map(tup).collect();
            let m = Map::from_sorted(&store, BytesSchema, rows.iter().map(|k| (&k[..], &k[..])))
                .unwrap();
            let leaves: Vec<(Address, u64)> = m.leaves().unwrap().map(Result::unwrap).collect();
            let mut starts = vec![0u64];
            for l in &leaves {
                starts.push(starts.last().unwrap() + l.1);
            }
            let step = (n / 97).max(1);
            for o in (0..n + 2)
                .step_by(step)
                .chain([n.saturating_sub(1), n, n + 5])
            {
                let (from, first) = m.leaves_from(o as u64).unwrap();
                let got: Vec<(Address, u64)> = from.map(Result::unwrap).collect();
                let k = starts[1..].iter().position(|&end| end > o as u64);
                match k {
                    Some(k) => {
                        assert_eq!(first, starts[k], "{n} rows, position {o}");
                        assert_eq!(got, leaves[k..].to_vec(), "{n} rows, position {o}");
                    }
                    None => {
                        assert_eq!(first, n as u64, "{n} rows, position {o}");
                        assert!(got.is_empty(), "{n} rows, position {o}");
                    }
                }
            }
        }
    }

    /// A forward scan announces only leaves it goes on to read, each once, none past its far
    /// bound, nearly all of them ahead of time on a long scan, and nothing on a scan of a leaf
    /// or two; the rows are those of a scan without read-ahead.
    #[test]
    fn forward_scans_announce_the_leaves_they_will_read() {
        let store = Announced {
            inner: MemoryStore::new(HashProfile::Blake3),
            seen: std::sync::Mutex::new(Vec::new()),
        };
        let rows: Vec<Vec<u8>> = (0..60_000).map(tup).collect();
        let m =
            Map::from_sorted(&store, BytesSchema, rows.iter().map(|k| (&k[..], &k[..]))).unwrap();
        let leaves: Vec<(Address, u64)> = m.leaves().unwrap().map(Result::unwrap).collect();
        assert!(leaves.len() > 3 * READ_AHEAD, "{} leaves", leaves.len());
        let first_row = |leaf: usize| leaves[..leaf].iter().map(|l| l.1).sum::<u64>() as usize;
        for (lo, hi) in [(0, rows.len() - 1), (5, 40_000), (1_000, 1_001), (100, 130)] {
            store.seen.lock().unwrap().clear();
            let got: Vec<Vec<u8>> = m
                .range(
                    Bound::Included(&rows[lo][..]),
                    Bound::Included(&rows[hi][..]),
                )
                .unwrap()
                .map(|r| r.unwrap().0.to_vec())
                .collect();
            assert_eq!(got, rows[lo..=hi].to_vec());
            let seen = store.seen.lock().unwrap().clone();
            // The leaves the scan read: from the one holding `lo` to the one holding `hi`.
            let read: Vec<Address> = (0..leaves.len())
                .filter(|&l| first_row(l) <= hi && first_row(l + 1) > lo)
                .map(|l| leaves[l].0)
                .collect();
            let mut unique = seen.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(
                unique.len(),
                seen.len(),
                "{lo}..={hi}: a leaf announced twice"
            );
            assert!(
                seen.iter().all(|a| read.contains(a)),
                "{lo}..={hi}: announced a leaf not read"
            );
            if read.len() <= READ_AHEAD_AFTER as usize {
                assert!(
                    seen.is_empty(),
                    "{lo}..={hi}: a short scan announced leaves"
                );
            } else {
                // All but the first leaves of the scan and of each level-1 node (announced
                // only once the scan is in it).
                let parents = m.nodes_at(1).unwrap().count();
                assert!(
                    seen.len() + READ_AHEAD_AFTER as usize + parents >= read.len(),
                    "{lo}..={hi}: {} of {} leaves announced",
                    seen.len(),
                    read.len()
                );
            }
        }
    }

    /// A leaf walk (`leaves`, `nodes_at`) announces the level-1 nodes it goes on to read, each
    /// once, all but the first few, and gives the same leaves as without a store that reads
    /// ahead.
    #[test]
    fn leaf_walks_announce_their_parents() {
        let store = Announced {
            inner: MemoryStore::new(HashProfile::Blake3),
            seen: std::sync::Mutex::new(Vec::new()),
        };
        let rows: Vec<Vec<u8>> = (0..100_000).map(tup).collect();
        let value = [7u8; 200];
        let m = Map::from_sorted(
            &store,
            BytesSchema,
            rows.iter().map(|k| (&k[..], &value[..])),
        )
        .unwrap();
        let parents: Vec<Address> = m.nodes_at(1).unwrap().map(|p| p.unwrap().0).collect();
        assert!(parents.len() > 8, "{} parents", parents.len());
        store.seen.lock().unwrap().clear();
        let leaves: Vec<(Address, u64)> = m.leaves().unwrap().map(Result::unwrap).collect();
        let plain = Map::new(&store.inner, m.root(), BytesSchema);
        assert_eq!(
            leaves,
            plain
                .leaves()
                .unwrap()
                .map(Result::unwrap)
                .collect::<Vec<_>>()
        );
        let seen = store.seen.lock().unwrap().clone();
        let mut unique = seen.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), seen.len(), "a parent announced twice");
        assert!(
            seen.iter().all(|a| parents.contains(a)),
            "announced a node not a parent"
        );
        assert!(
            seen.len() + READ_AHEAD_AFTER as usize >= parents.len(),
            "{} of {} parents announced",
            seen.len(),
            parents.len()
        );
    }

    /// `nodes_at(level)` lists every node of that level once, in key order, with the rows
    /// under it, at every level of a tall map: the leaves as `leaves` gives them, the root at
    /// the root's level, nothing above; each level's nodes are the children of the level above.
    #[test]
    fn nodes_at_every_level() {
        let store = MemoryStore::new(HashProfile::Blake3);
        let rows: Vec<Vec<u8>> = (0..200_000).map(tup).collect();
        let m =
            Map::from_sorted(&store, BytesSchema, rows.iter().map(|k| (&k[..], &k[..]))).unwrap();
        let height = m.height().unwrap();
        assert!(height >= 2, "needs a level between the root and the leaves");
        let leaves: Vec<_> = m.leaves().unwrap().map(Result::unwrap).collect();
        assert_eq!(
            m.nodes_at(0)
                .unwrap()
                .map(Result::unwrap)
                .collect::<Vec<_>>(),
            leaves
        );
        let mut below = leaves;
        for level in 1..=height {
            let nodes: Vec<_> = m.nodes_at(level).unwrap().map(Result::unwrap).collect();
            assert_eq!(nodes.iter().map(|n| n.1).sum::<u64>(), rows.len() as u64);
            let mut children = Vec::new();
            for (address, count) in &nodes {
                let node = store.get_node(address).unwrap();
                assert_eq!(node.level(), level);
                assert_eq!(node.tree_count(), *count);
                children.extend(
                    (0..node.count())
                        .map(|i| (node.child(i), node.subtree_counts().nth(i).unwrap())),
                );
            }
            assert_eq!(
                children, below,
                "level {level}: children of the level above"
            );
            below = nodes;
        }
        assert_eq!(below, vec![(m.root(), rows.len() as u64)]);
        assert_eq!(m.nodes_at(height + 1).unwrap().count(), 0);
        let one = Map::from_sorted(
            &store,
            BytesSchema,
            rows[..3].iter().map(|k| (&k[..], &k[..])),
        )
        .unwrap();
        assert_eq!(one.nodes_at(1).unwrap().count(), 0);
    }

    /// `leaves` lists every leaf once, in order, with its row count; `seek_partition` starts
    /// forward walks at the first row the test rejects and reverse walks at the last it
    /// accepts, at every boundary and past both ends; `apply_sorted` refuses edits out of
    /// order before writing anything.
    #[test]
    fn leaves_seek_partition_and_sorted_edits() {
        let store = MemoryStore::new(HashProfile::Blake3);
        let rows: Vec<Vec<u8>> = (0..20_000).map(|i| tup(2 * i)).collect();
        let m =
            Map::from_sorted(&store, BytesSchema, rows.iter().map(|k| (&k[..], &k[..]))).unwrap();
        assert!(m.height().unwrap() >= 1, "needs several leaves");
        let mut seen = 0u64;
        let mut leaves = 0;
        for leaf in m.leaves().unwrap() {
            let (address, count) = leaf.unwrap();
            let node = store.get_node(&address).unwrap();
            assert!(node.is_leaf());
            assert_eq!(node.count() as u64, count);
            assert_eq!(node.key(0), &rows[seen as usize][..]);
            seen += count;
            leaves += 1;
        }
        assert_eq!(seen, rows.len() as u64);
        assert!(leaves > 10);
        let one = Map::from_sorted(
            &store,
            BytesSchema,
            rows[..3].iter().map(|k| (&k[..], &k[..])),
        )
        .unwrap();
        let single: Vec<_> = one.leaves().unwrap().map(Result::unwrap).collect();
        assert_eq!(single, vec![(one.root(), 3)]);

        for probe in [0u32, 1, 2, 777, 778, 20_000, 39_998, 39_999, 40_000, 50_000] {
            let bound = tup(probe);
            let below = |k: &[u8]| k < &bound[..];
            let first = rows.iter().position(|k| !below(&k[..]));
            let c = m.seek_partition(below, false).unwrap();
            match first {
                Some(i) => assert!(c.valid() && c.key() == &rows[i][..], "forward {probe}"),
                None => assert!(!c.valid(), "forward {probe}"),
            }
            let last = rows.iter().rposition(|k| below(&k[..]));
            let c = m.seek_partition(below, true).unwrap();
            match last {
                Some(i) => assert!(c.valid() && c.key() == &rows[i][..], "reverse {probe}"),
                None => assert!(!c.valid(), "reverse {probe}"),
            }
        }
        let c = m.seek_ordinal(12_345).unwrap();
        assert_eq!((c.key(), c.ordinal()), (&rows[12_345][..], 12_345));
        assert_eq!(m.seek_first().unwrap().key(), &rows[0][..]);
        assert_eq!(m.seek_last().unwrap().key(), &rows[19_999][..]);

        let (a, b) = (tup(5), tup(3));
        let unsorted = [(&a[..], None), (&b[..], Some(&b[..]))];
        assert!(matches!(
            m.apply_sorted(&unsorted),
            Err(TreeError::Unsorted { index: 1 })
        ));
        let twice = [(&a[..], None), (&a[..], Some(&a[..]))];
        assert!(m.apply_sorted(&twice).is_err());
        let sorted = [(&b[..], Some(&b[..])), (&a[..], Some(&a[..]))];
        let edited = m.apply_sorted(&sorted).unwrap();
        assert_eq!(edited.count().unwrap(), 20_002);
        assert_eq!(edited.root(), m.apply(sorted).unwrap().root());
    }

    #[test]
    fn next_batch_gives_the_rows_of_next() {
        let store = MemoryStore::new(HashProfile::Blake3);
        let rows: Vec<Vec<u8>> = (0..20_000).map(tup).collect();
        let m =
            Map::from_sorted(&store, BytesSchema, rows.iter().map(|k| (&k[..], &k[..]))).unwrap();
        assert!(m.height().unwrap() >= 1, "needs several leaves");
        let (lo, hi) = (tup(777), tup(15_000));
        let bounds = [
            (Bound::Unbounded, Bound::Unbounded),
            (Bound::Included(&lo[..]), Bound::Unbounded),
            (Bound::Excluded(&lo[..]), Bound::Excluded(&hi[..])),
            (Bound::Unbounded, Bound::Included(&hi[..])),
        ];
        for (l, h) in bounds {
            let want: Vec<Vec<u8>> = m
                .range(l, h)
                .unwrap()
                .map(|r| r.unwrap().0.to_vec())
                .collect();
            let rev: Vec<Vec<u8>> = m
                .range_rev(l, h)
                .unwrap()
                .map(|r| r.unwrap().0.to_vec())
                .collect();
            for max in [1, 3, 64, 100_000] {
                assert_eq!(
                    batches(m.range(l, h).unwrap(), max),
                    want,
                    "{l:?}..{h:?} by {max}"
                );
                assert_eq!(
                    batches(m.range_rev(l, h).unwrap(), max),
                    rev,
                    "rev by {max}"
                );
            }
            // Mixing single steps and batches.
            let mut it = m.range(l, h).unwrap();
            let mut got = Vec::new();
            while let Some(r) = it.next() {
                got.push(r.unwrap().0.to_vec());
                it.next_batch(5, |k, _| got.push(k.to_vec())).unwrap();
            }
            assert_eq!(got, want);
        }
        let want: Vec<Vec<u8>> = rows;
        assert_eq!(batches(m.iter().unwrap(), 7), want);
    }

    #[test]
    fn runs_give_the_rows_of_range() {
        // Values of one width (the fixed-width walk) and of varying widths (offsets).
        for varying in [false, true] {
            runs_give_the_rows_of_range_with(varying);
        }
    }

    fn runs_give_the_rows_of_range_with(varying: bool) {
        let store = MemoryStore::new(HashProfile::Blake3);
        let rows: Vec<Vec<u8>> = (0..20_000).map(|i| tup(i * 2)).collect();
        let values: Vec<Vec<u8>> = rows
            .iter()
            .enumerate()
            .map(|(i, k)| if varying { vec![7; i % 9] } else { k.clone() })
            .collect();
        let pairs = rows.iter().zip(&values);
        let m =
            Map::from_sorted(&store, BytesSchema, pairs.map(|(k, v)| (&k[..], &v[..]))).unwrap();
        assert!(m.height().unwrap() >= 1, "needs several leaves");
        // Bounds on keys present and absent, at leaf ends and beyond the map.
        let first_leaf_end = m
            .range_runs(Bound::Unbounded, Bound::Unbounded)
            .unwrap()
            .next();
        let n0 = first_leaf_end.unwrap().unwrap().len() as u32;
        let keys: Vec<Vec<u8>> = [0, 1, 777, 778, n0 * 2 - 2, n0 * 2, 30_000, 39_998, 50_000]
            .into_iter()
            .map(tup)
            .collect();
        let mut bounds = vec![(Bound::Unbounded, Bound::Unbounded)];
        for a in &keys {
            bounds.push((Bound::Included(&a[..]), Bound::Unbounded));
            bounds.push((Bound::Unbounded, Bound::Included(&a[..])));
            bounds.push((Bound::Unbounded, Bound::Excluded(&a[..])));
            for b in &keys {
                bounds.push((Bound::Excluded(&a[..]), Bound::Included(&b[..])));
                bounds.push((Bound::Included(&a[..]), Bound::Excluded(&b[..])));
            }
        }
        for (l, h) in bounds {
            let want: Vec<Row<'_>> = m.range(l, h).unwrap().map(Result::unwrap).collect();
            let mut got = Vec::new();
            let mut runs = m.range_runs(l, h).unwrap();
            for run in runs.by_ref() {
                let run = run.unwrap();
                assert!(!run.is_empty(), "{l:?}..{h:?}: empty run");
                let before = got.len();
                let n = run.len();
                let mut r = run;
                // Pieces split off the front (walked with `for_each`, the fixed-width fast
                // path) and single steps, mixed.
                let mut piece = 0;
                while !r.is_empty() {
                    piece = (piece + 1) % 5;
                    let left = r.len();
                    let front = r.take_front(piece);
                    assert_eq!(front.len(), piece.min(left));
                    assert_eq!(r.len(), left - front.len());
                    front.for_each(|row| got.push(row));
                    got.extend(r.next());
                }
                assert_eq!(got.len() - before, n, "len() is the row count");
                assert!(r.is_empty() && r.next().is_none());
                assert!(r.take_front(3).is_empty());
            }
            assert!(runs.next().is_none(), "ended stays ended");
            assert_eq!(got, want, "{l:?}..{h:?}");
        }
        assert_eq!(Run::default().next(), None);
    }
}
