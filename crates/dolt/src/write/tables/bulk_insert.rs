//! Rows streamed into an empty table (a new table, or one truncated for a replace): the import
//! path. Each row is checked and encoded once, straight into packed buffers (clustered key and
//! value, and one key per secondary index made from the row's cells rather than decoded back
//! from the encoded row); then each index is sorted and built bottom-up. The trees are the
//! ones row-by-row inserts give, since a prolly tree does not depend on its edit history.

use std::borrow::Cow;

use prollystore::blob::StoreBlobs;
use prollystore::process::background_hashing;
use prollystore::{sort, Map};
use prollystore_format::tuple::{BlobStore, NoBlobStore, TupleBuilder, TupleDesc, TupleError};

use super::table_edit::{bad, empty_value, index_schema, tree, Cell, EditTable};
use crate::codec::text_fields::FastFields;
use crate::error::Result;
use crate::schema::{key_encoding, Index, Schema};
use crate::write::constraints::checks::RowChecks;
use crate::write::storage::overlay::Overlay;

/// Byte strings packed end to end: two allocations for millions of short tuples instead of one
/// per tuple.
#[derive(Default)]
pub(crate) struct Packed {
    bytes: Vec<u8>,
    /// Where each string ends in `bytes`.
    ends: Vec<usize>,
}

impl Packed {
    fn len(&self) -> usize {
        self.ends.len()
    }

    pub(crate) fn get(&self, i: usize) -> &[u8] {
        let start = match i {
            0 => 0,
            _ => self.ends[i - 1],
        };
        &self.bytes[start..self.ends[i]]
    }

    /// Keeps the first `n` strings (dropping any bytes appended after them).
    fn truncate(&mut self, n: usize) {
        self.ends.truncate(n);
        self.bytes.truncate(self.ends.last().copied().unwrap_or(0));
    }

    /// Ends the string appended to `bytes` since the last one.
    fn seal(&mut self) {
        self.ends.push(self.bytes.len());
    }

    /// Appends `other`'s strings after these, in order.
    pub(crate) fn append(&mut self, other: Packed) {
        self.reserve(other.len(), other.bytes.len());
        let at = self.bytes.len();
        self.bytes.extend_from_slice(&other.bytes);
        self.ends.extend(other.ends.iter().map(|e| e + at));
    }

    pub(crate) fn push(&mut self, b: &[u8]) {
        self.bytes.extend_from_slice(b);
        self.seal();
    }

    /// Room for `strings` more strings of `bytes` bytes in all, in memory the kernel is asked
    /// to back with huge pages: a million keys then fault a few dozen pages instead of
    /// thousands (page faults were a quarter of a large index build's CPU).
    pub(crate) fn reserve(&mut self, strings: usize, bytes: usize) {
        let (strings, bytes) = (self.ends.len() + strings, self.bytes.len() + bytes);
        sort::reserve_advised(&mut self.ends, strings);
        sort::reserve_advised(&mut self.bytes, bytes);
    }

    /// The strings one after another.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &[u8]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(&self.ends).map(|(a, &b)| &self.bytes[a..b])
    }

    /// The strings at `order`'s positions, in that order, as consecutive runs: a tree build
    /// then reads its keys from memory in order, instead of from all over this one. Many are
    /// gathered in two runs on two threads (the jumps are cheap only where little else waits
    /// on them).
    pub(crate) fn gathered(&self, order: &[u32]) -> Vec<Packed> {
        let run = |part: &[u32]| {
            let mut out = Packed::default();
            // The average string's share of the bytes, and a little more.
            let bytes = self.bytes.len() / self.len().max(1) * part.len() * 9 / 8;
            out.reserve(part.len(), bytes + 64);
            for &i in part {
                out.push(self.get(i as usize));
            }
            out
        };
        if order.len() < sort::TWO_THREADS_MIN || !background_hashing() {
            return vec![run(order)];
        }
        let (first, second) = order.split_at(order.len() / 2);
        std::thread::scope(|s| {
            let later = s.spawn(|| run(second));
            let first = run(first);
            vec![
                first,
                later
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            ]
        })
    }

    /// Appends the tuple `b` builds (nothing on error; the builder is reset either way).
    pub(crate) fn push_built(&mut self, b: &mut TupleBuilder) -> Result<(), TupleError> {
        b.build_into(&mut NoBlobStore, &mut self.bytes)?;
        self.seal();
        Ok(())
    }

    /// Positions `0..len` in the order of `desc`, ties by position
    /// ([`sort::sorted_positions`]).
    pub(crate) fn sorted(&self, desc: &TupleDesc) -> Vec<u32> {
        sort::sorted_positions(self.len(), |i| self.get(i), desc)
    }

    /// Positions of these keys of index `ix` (of a table of schema `s`) in the index's order
    /// `desc`. Keys gathered from rows in primary-key order (`in_primary_order`) whose own
    /// fields are integers followed by the primary key sort by their own fields alone, ties
    /// in position order ([`sort::sorted_positions_by_prefix`]): fewer fields to pack.
    pub(crate) fn sorted_index_keys(
        &self,
        s: &Schema,
        ix: &Index,
        desc: &TupleDesc,
        in_primary_order: bool,
    ) -> Vec<u32> {
        (in_primary_order && suffix_is_primary_key(s, ix))
            .then(|| {
                let own = ix.columns.len();
                sort::sorted_positions_by_prefix(self.len(), |i| self.get(i), desc, own)
            })
            .flatten()
            .unwrap_or_else(|| self.sorted(desc))
    }
}

/// Whether the key of index `ix` is its own columns followed by the primary-key columns it
/// lacks, in key order, all of them integers: then, among rows in primary-key order, index
/// keys with equal own columns are already in order.
fn suffix_is_primary_key(s: &Schema, ix: &Index) -> bool {
    let own = ix.columns.len();
    let rest = s.key_columns.iter().filter(|c| !ix.columns.contains(c));
    ix.key_columns.get(..own) == Some(&ix.columns[..])
        && ix.key_columns[own..].iter().eq(rest)
        && ix
            .key_columns
            .iter()
            .all(|&c| key_encoding(s.columns[c].encoding).integer().is_some())
}

/// One row's text fields (`None`: NULL).
pub(crate) type Fields<'a> = Vec<Option<Cow<'a, [u8]>>>;

/// Rows encoded so far (clustered keys and values, each index's keys, packed), and the
/// builders that make them.
struct Encoded {
    kb: TupleBuilder,
    vb: TupleBuilder,
    index_builders: Vec<TupleBuilder>,
    keys: Packed,
    values: Packed,
    index_keys: Vec<Packed>,
}

impl Encoded {
    fn new(s: &Schema, index_keys: &[TupleDesc]) -> Encoded {
        Encoded {
            kb: TupleBuilder::new(s.key_desc()),
            vb: TupleBuilder::new(s.value_desc()),
            index_builders: index_keys.iter().cloned().map(TupleBuilder::new).collect(),
            keys: Packed::default(),
            values: Packed::default(),
            index_keys: index_keys.iter().map(|_| Packed::default()).collect(),
        }
    }

    /// Encodes the row `fast` parsed; `false` (nothing kept) when the general path must take
    /// it.
    fn put_fast(
        &mut self,
        fast: &FastFields,
        s: &Schema,
        row: &[Option<Cow<'_, [u8]>>],
        blobs: &mut dyn BlobStore,
    ) -> bool {
        let done = self.keys.len();
        if self.try_put_fast(fast, s, row, blobs).is_some() {
            return true;
        }
        for p in [&mut self.keys, &mut self.values]
            .into_iter()
            .chain(&mut self.index_keys)
        {
            p.truncate(done);
        }
        self.kb.reset();
        self.vb.reset();
        self.index_builders.iter_mut().for_each(TupleBuilder::reset);
        false
    }

    fn try_put_fast(
        &mut self,
        fast: &FastFields,
        s: &Schema,
        row: &[Option<Cow<'_, [u8]>>],
        blobs: &mut dyn BlobStore,
    ) -> Option<()> {
        for (f, &c) in s.value_columns.iter().enumerate() {
            fast.put(row, &mut self.vb, f, c, false)?;
        }
        self.vb.build_into(blobs, &mut self.values.bytes).ok()?;
        self.values.seal();
        for (f, &c) in s.key_columns.iter().enumerate() {
            fast.put(row, &mut self.kb, f, c, true)?;
        }
        self.keys.push(self.kb.build().ok()?.as_bytes());
        for ((ix, b), out) in s
            .indexes
            .iter()
            .zip(&mut self.index_builders)
            .zip(&mut self.index_keys)
        {
            for (f, &c) in ix.key_columns.iter().enumerate() {
                fast.put(row, b, f, c, true)?;
            }
            out.push(b.build().ok()?.as_bytes());
        }
        Some(())
    }

    /// Appends the rows `later` encoded after these.
    fn append(&mut self, later: &Encoded) {
        for (p, q) in [
            (&mut self.keys, &later.keys),
            (&mut self.values, &later.values),
        ]
        .into_iter()
        .chain(self.index_keys.iter_mut().zip(&later.index_keys))
        {
            let base = p.bytes.len();
            p.bytes.extend_from_slice(&q.bytes);
            p.ends.extend(q.ends.iter().map(|e| e + base));
        }
    }
}

/// Encodes `rows` into `out` as long as `fast` takes them (on another thread: no blob store,
/// so a value that must move out of band stops it too). Returns the first row it does not
/// take and the rows after it, for the general path.
fn encode_fast<'a, I: Iterator<Item = Fields<'a>>>(
    fast: &mut FastFields,
    s: &Schema,
    out: &mut Encoded,
    mut rows: I,
) -> Option<(Fields<'a>, I)> {
    while let Some(row) = rows.next() {
        if !(fast.parse(&row) && out.put_fast(fast, s, &row, &mut NoBlobStore)) {
            return Some((row, rows));
        }
    }
    None
}

/// What [`EditTable::insert_into_empty`] did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum BulkInsert {
    /// Every row went in; this many.
    Inserted(usize),
    /// An upsert repeats a primary key (a later row updates an earlier one): nothing changed,
    /// the caller applies the rows one by one.
    RepeatedKey,
}

impl EditTable {
    /// Row `r` (cells `given`) as the general path checks and encodes it, into `enc`.
    #[allow(clippy::too_many_arguments)]
    fn encode_row(
        &mut self,
        s: &Schema,
        checks: Option<&RowChecks>,
        enc: &mut Encoded,
        blobs: &mut dyn BlobStore,
        r: usize,
        given: Vec<(usize, Cell)>,
        upsert: bool,
    ) -> Result<()> {
        let mut cells = self.full_row(r, given)?;
        if upsert {
            // An upsert reads every key first: a NULL there is named as such.
            for &c in &s.key_columns {
                if matches!(cells[c], Cell::Null) {
                    let what = format!("row {r}: NULL in the key");
                    return Err(bad(&self.name, &s.columns[c].name, what));
                }
            }
        }
        self.assign_auto_increment(&mut cells)?;
        for (c, cell) in cells.iter().enumerate() {
            if !s.columns[c].hidden {
                self.check_cell(r, c, cell)?;
            }
        }
        if let Some(checks) = checks {
            let visible = self.visible_values(checks.visible(), &cells)?;
            checks.check(&self.name, r, visible)?;
        }
        let row_error = |e: &dyn std::fmt::Display, columns: &[usize]| {
            bad(
                &self.name,
                self.widest(columns, &cells),
                format!("row {r}: {e}"),
            )
        };
        for (f, &c) in s.value_columns.iter().enumerate() {
            self.put_cell(&mut enc.vb, f, c, s.columns[c].encoding, r, &cells[c])?;
        }
        enc.vb
            .build_into(blobs, &mut enc.values.bytes)
            .map_err(|e| row_error(&e, &s.value_columns))?;
        enc.values.seal();
        for (f, &c) in s.key_columns.iter().enumerate() {
            let enc_c = key_encoding(s.columns[c].encoding);
            self.put_cell(&mut enc.kb, f, c, enc_c, r, &cells[c])?;
        }
        enc.keys.push(
            enc.kb
                .build()
                .map_err(|e| row_error(&e, &s.key_columns))?
                .as_bytes(),
        );
        for ((ix, b), out) in s
            .indexes
            .iter()
            .zip(&mut enc.index_builders)
            .zip(&mut enc.index_keys)
        {
            self.put_index_fields(b, ix, &cells, r)?;
            out.push(b.build().map_err(tree)?.as_bytes());
        }
        Ok(())
    }

    /// Inserts `rows` (each: one text field per column of `positions`) into this table, which
    /// must have a primary key and no rows. The same checks, defaults, AUTO_INCREMENT values,
    /// errors and trees as [`EditTable::insert`] (or [`EditTable::upsert`] when `upsert`) of
    /// the cells `to_cells` makes of each row; all rows or none. Rows of the common column
    /// types are encoded from their text directly (see `codec::text_fields`); `to_cells` serves the
    /// others. The rows `later` holds follow `rows`: they are encoded on a second thread
    /// meanwhile, as far as the direct encoder takes them (the rest, in order, here after
    /// `rows`, so every row keeps its number and the first error is the one rows one by one
    /// give).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn insert_into_empty<'a, J>(
        &mut self,
        store: &Overlay<'_>,
        rows: impl Iterator<Item = Fields<'a>>,
        later: Option<J>,
        positions: &[usize],
        to_cells: impl Fn(usize, Fields<'a>) -> Result<Vec<(usize, Cell)>>,
        upsert: bool,
    ) -> Result<BulkInsert>
    where
        J: Iterator<Item = Fields<'a>> + Send,
    {
        let s = self.schema.clone();
        let checks = RowChecks::for_schema(store.engine, &self.name, &s)?;
        let mut fast = FastFields::new(&s, positions, checks.is_some());
        let primary = s.primary_tuple_schema()?;
        let index_schemas = s
            .indexes
            .iter()
            .map(|ix| index_schema(&s, ix))
            .collect::<Result<Vec<_>>>()?;
        let index_descs: Vec<TupleDesc> = index_schemas.iter().map(|x| x.key.clone()).collect();
        let mut blobs = StoreBlobs::new(store);
        let mut enc = Encoded::new(&s, &index_descs);
        let auto_increment = self.auto_increment;
        // The second thread when there is a core for it (the switch of background hashing:
        // a program that wants every call on its own thread says so there).
        let mut second_fast = fast
            .clone()
            .filter(|_| later.is_some() && prollystore::process::background_hashing());
        let mut encode_rows = |t: &mut EditTable,
                               enc: &mut Encoded,
                               first: usize,
                               rows: &mut dyn Iterator<Item = Fields<'a>>|
         -> Result<()> {
            for (r, row) in (first..).zip(rows) {
                if let Some(fast) = &mut fast {
                    if fast.parse(&row) && enc.put_fast(fast, &s, &row, &mut blobs) {
                        continue;
                    }
                }
                // The general path stores the row or names its error.
                t.encode_row(
                    &s,
                    checks.as_ref(),
                    enc,
                    &mut blobs,
                    r,
                    to_cells(r, row)?,
                    upsert,
                )?;
            }
            Ok(())
        };
        let mut rows = rows;
        match (later, second_fast.as_mut()) {
            (Some(later), Some(second_fast)) => {
                let (here, there) = std::thread::scope(|scope| {
                    let (s, descs) = (&s, &index_descs);
                    let other = scope.spawn(move || {
                        let mut out = Encoded::new(s, descs);
                        let stop = encode_fast(second_fast, s, &mut out, later);
                        (out, stop)
                    });
                    let here = encode_rows(self, &mut enc, 0, &mut rows);
                    let there = other
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                    (here, there)
                });
                here?;
                let (there, stop) = there;
                let first = enc.keys.len() + there.keys.len();
                enc.append(&there);
                drop(there);
                if let Some((row, rest)) = stop {
                    let mut rest = std::iter::once(row).chain(rest);
                    encode_rows(self, &mut enc, first, &mut rest)?;
                }
            }
            (later, _) => {
                let mut all = rows.chain(later.into_iter().flatten());
                encode_rows(self, &mut enc, 0, &mut all)?;
            }
        }
        let Encoded {
            keys,
            values,
            index_keys,
            ..
        } = enc;
        let order = keys.sorted(&primary.key);
        if let Some(w) = order.windows(2).find(|w| {
            primary
                .key
                .compare(keys.get(w[0] as usize), keys.get(w[1] as usize))
                .is_eq()
        }) {
            if upsert {
                self.auto_increment = auto_increment;
                return Ok(BulkInsert::RepeatedKey);
            }
            let what = format!("row {}: duplicate primary key", w[1]);
            return Err(bad(&self.name, &self.key_names(), what));
        }
        let primary_ascending = order.iter().enumerate().all(|(i, &p)| p as usize == i);
        let empty = empty_value()?;
        let mut roots = Vec::with_capacity(s.indexes.len());
        for ((ix, schema), ikeys) in s.indexes.iter().zip(index_schemas).zip(&index_keys) {
            if !keys.ends.is_empty() {
                self.refuse_content_hashed(ix)?;
            }
            if ix.unique {
                let all = (0..ikeys.len()).map(|i| (ikeys.get(i), i));
                self.unique_new_keys(ix, &schema.key, all)?;
            }
            let sorted = ikeys.sorted_index_keys(&s, ix, &schema.key, primary_ascending);
            let items = sorted.iter().map(|&i| (ikeys.get(i as usize), &empty[..]));
            roots.push(Map::from_sorted(store, schema, items).map_err(tree)?.root());
        }
        let items = order
            .iter()
            .map(|&i| (keys.get(i as usize), values.get(i as usize)));
        self.primary = Map::from_sorted(store, primary, items)
            .map_err(tree)?
            .root();
        self.indexes = roots;
        Ok(BulkInsert::Inserted(keys.len()))
    }
}
