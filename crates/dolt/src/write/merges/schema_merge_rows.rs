//! The rows of a table whose schema the merge changed, carried into the merged schema as
//! Dolt's merge carries them (`mergeProllyTable`): our rows are the starting point; rows the
//! merged branch changed come in (rewritten into the merged layout when their side's layout
//! differs, new columns taking their default or NULL); rows of ours are rewritten the same
//! way when their layout differs and our side changed them; a side whose schema change alters
//! how its rows read counts every row as changed. A row both sides changed merges column by
//! column — a column one side does not have takes the other side's value, a column dropped on
//! one side conflicts when the other side changed its value — and Dolt's conflicts are
//! reported by key.
//!
//! Indexes the merged schema shares with ours (same definition) are edited with the rows the
//! merge changed; new or changed indexes are built from the merged rows; dropped ones go.

use std::collections::HashSet;

use prollystore::store::{ChunkStore, StoreFastPaths};
use prollystore::tuples::TupleSchema;
use prollystore::Map;
use prollystore_format::message::objects::TableFields;
use prollystore_format::Address;

use super::row_merge::{
    check_unique, report, row_changes, ConflictChoice, MergeConflict, OverlayIo,
};
use super::schema_merge::RowRewrites;
use crate::error::{bad_chunk, encode, DoltError, Result};
use crate::schema::{key_encoding, Column, Schema};
use crate::write::constraints::checks::RowChecks;
use crate::write::maps::address_map::{address_map_entries, edit_address_map, empty_address_map};
use crate::write::storage::overlay::Overlay;
use crate::write::tables::bulk_insert::Packed;
use crate::write::tables::table_edit::{copies, empty_value, index_schema, Cell, EditTable};
use prollystore_format::tuple::{Tuple, TupleBuilder, TupleDesc, TupleError};
use prollystore_format::Encoding;

/// One changed row of a side against the ancestor: key, ancestor value, side's value.
type Change = (Vec<u8>, Option<Vec<u8>>, Option<Vec<u8>>);

/// The three sides' tables and the merged (empty) table, with column mappings.
struct Rows<'a, 's> {
    store: &'a Overlay<'s>,
    merged: EditTable,
    base: EditTable,
    ours: EditTable,
    theirs: EditTable,
    /// Per merged column: its position in base, ours, theirs (by tag, else by name).
    in_base: Vec<Option<usize>>,
    in_ours: Vec<Option<usize>>,
    in_theirs: Vec<Option<usize>>,
    /// Per non-key base column: its position in base, ours, theirs.
    base_cols: Vec<(usize, Option<usize>, Option<usize>)>,
    /// The merged value tuple's fields with their collations, and per merged column its
    /// field there: cells are compared as the column's type compares values.
    values: TupleDesc,
    value_field: Vec<Option<usize>>,
}

fn position_in(schema: &Schema, col: &Column) -> Option<usize> {
    let cols = &schema.columns;
    (0..cols.len())
        .find(|&i| cols[i].tag == col.tag && !cols[i].hidden)
        .or_else(|| (0..cols.len()).find(|&i| cols[i].name == col.name && !cols[i].hidden))
}

/// Two cells hold the same stored bytes (or both NULL): how a dropped column's value is
/// checked for a change.
fn same(a: &Cell, b: &Cell) -> bool {
    match (a, b) {
        (Cell::Null, Cell::Null) => true,
        (Cell::Stored(x), Cell::Stored(y)) => x == y,
        _ => false,
    }
}

/// Of two cells equal as values, the one Dolt's merge keeps: the greater stored bytes, so that
/// the result does not depend on the merge's direction (`processColumn`).
fn greater<'c>(a: &'c Cell, b: &'c Cell) -> &'c Cell {
    match (a, b) {
        (Cell::Stored(x), Cell::Stored(y)) if y > x => b,
        _ => a,
    }
}

fn is_null(c: &Cell) -> bool {
    matches!(c, Cell::Null)
}

impl Rows<'_, '_> {
    /// Whether two cells of merged column `m` hold equal values as Dolt's merge compares them
    /// (`sqlType.Compare`): under a `_ci` collation `'Paris'` equals `'PARIS'`.
    fn equal(&self, m: usize, a: &Cell, b: &Cell) -> bool {
        match (a, b) {
            (Cell::Null, Cell::Null) => true,
            (Cell::Stored(x), Cell::Stored(y)) if x == y => true,
            (Cell::Stored(x), Cell::Stored(y)) => self.value_field[m].is_some_and(|f| {
                let adaptive = self
                    .values
                    .types()
                    .get(f)
                    .is_some_and(|t| t.enc.is_adaptive());
                if adaptive {
                    // An adaptive column's cell is the whole value: compare it as stored inline.
                    let inline = |v: &[u8]| [&[0u8][..], v].concat();
                    self.values.compare_field(f, &inline(x), &inline(y)).is_eq()
                } else {
                    self.values.compare_field(f, x, y).is_eq()
                }
            }),
            _ => false,
        }
    }

    fn cells(&self, t: &EditTable, key: &[u8], value: Option<&[u8]>) -> Result<Option<Vec<Cell>>> {
        value.map(|v| t.cells_of(self.store, key, v)).transpose()
    }

    /// A side's row in the merged layout: its columns copied, the others at their default.
    fn remap(&self, theirs: bool, key: &[u8], value: &[u8]) -> Result<Vec<u8>> {
        let (t, map) = if theirs {
            (&self.theirs, &self.in_theirs)
        } else {
            (&self.ours, &self.in_ours)
        };
        let cells = self.in_merged(t, map, t.cells_of(self.store, key, value)?);
        let given: Vec<(usize, Cell)> = map
            .iter()
            .enumerate()
            .filter_map(|(m, p)| p.map(|p| (m, cells[p].clone())))
            .collect();
        let full = self.merged.carried_row(given)?;
        self.encode(key, &full)
    }

    /// A side's cells with each value of a merged column that this side stores another way
    /// (a string or binary value inline here, out of line in the merged schema, or back) put
    /// as the merged column stores it, so values compare and are written as Dolt converts
    /// them to the merged type.
    fn in_merged(&self, t: &EditTable, map: &[Option<usize>], mut cells: Vec<Cell>) -> Vec<Cell> {
        for (m, p) in map.iter().enumerate() {
            let Some(p) = *p else { continue };
            let (from, to) = (
                t.schema.columns[p].encoding,
                self.merged.schema.columns[m].encoding,
            );
            if from != to {
                if let Cell::Stored(bytes) = &mut cells[p] {
                    restore(from, to, bytes);
                }
            }
        }
        cells
    }

    fn encode(&self, key: &[u8], cells: &[Cell]) -> Result<Vec<u8>> {
        let (k, v) = self.merged.encode_full_row(self.store, cells)?;
        if k != key {
            // The merge refuses a primary key that differs between the sides: a bug if reached.
            return Err(encode(
                format!("a merged row of {:?}", self.merged.name),
                "its key changed when rewritten into the merged schema",
            ));
        }
        Ok(v)
    }

    /// Dolt's `TryMerge` for a key both sides changed: `Err` with the reason on a conflict,
    /// `Ok(None)` for a deletion that merges, else the merged row's value.
    fn try_merge(
        &self,
        key: &[u8],
        left: Option<&[u8]>,
        right: Option<&[u8]>,
        base: Option<&[u8]>,
    ) -> Result<std::result::Result<Option<Vec<u8>>, &'static str>> {
        let (o, t, b) = (&self.ours, &self.theirs, &self.base);
        let lc = self
            .cells(o, key, left)?
            .map(|c| self.in_merged(o, &self.in_ours, c));
        let rc = self
            .cells(t, key, right)?
            .map(|c| self.in_merged(t, &self.in_theirs, c));
        let bc = self
            .cells(b, key, base)?
            .map(|c| self.in_merged(b, &self.in_base, c));
        if let Some(bc) = &bc {
            for &(b, o, t) in &self.base_cols {
                let bv = &bc[b];
                let conflict = match (&lc, &rc) {
                    (None, Some(rc)) => t
                        .is_some_and(|t| !same(bv, &rc[t]))
                        .then_some("deleted here, changed on the merged branch"),
                    (Some(lc), None) => o
                        .is_some_and(|o| !same(bv, &lc[o]))
                        .then_some("changed here, deleted on the merged branch"),
                    (Some(lc), Some(rc)) => match (o, t) {
                        (Some(o), None) => !same(&lc[o], bv),
                        (None, Some(t)) => !same(&rc[t], bv),
                        _ => false,
                    }
                    .then_some("a column one side dropped was changed on the other side"),
                    (None, None) => None,
                };
                if let Some(reason) = conflict {
                    return Ok(Err(reason));
                }
            }
            if lc.is_none() != rc.is_none() {
                return Ok(Ok(None));
            }
        }
        let (Some(lc), Some(rc)) = (&lc, &rc) else {
            return Ok(Err("both sides changed the row differently"));
        };
        let cols = &self.merged.schema.columns;
        let mut out = vec![Cell::Null; cols.len()];
        for m in 0..cols.len() {
            let (o, t) = (self.in_ours[m], self.in_theirs[m]);
            let lv = o.map(|o| &lc[o]);
            let rv = t.map(|t| &rc[t]);
            if cols[m].primary_key {
                out[m] = lv.or(rv).cloned().unwrap_or(Cell::Null);
                continue;
            }
            let bv = match (&bc, self.in_base[m]) {
                (Some(bc), Some(b)) => Some(&bc[b]),
                _ => None,
            };
            let null = Cell::Null;
            let pick = match bv {
                None => match (lv, rv) {
                    (l, None) => l.unwrap_or(&null),
                    (None, Some(r)) => r,
                    (Some(l), Some(r)) if self.equal(m, l, r) => greater(l, r),
                    _ if bc.is_none() => {
                        return Ok(Err("both sides added the key with different rows"))
                    }
                    _ => return Ok(Err("both sides set a new column differently")),
                },
                Some(bv) => {
                    if lv.is_none() && rv.is_none() {
                        &null
                    } else {
                        let r = rv.unwrap_or(&null);
                        let right_changed = match rv {
                            None => !is_null(bv),
                            Some(r) => !self.equal(m, r, bv),
                        };
                        let l = lv.unwrap_or(&null);
                        if self.equal(m, l, r) {
                            greater(l, r)
                        } else {
                            match (!self.equal(m, l, bv), right_changed) {
                                (true, true) => {
                                    return Ok(Err(
                                        "both sides changed the same column differently",
                                    ))
                                }
                                (true, false) => l,
                                _ => r,
                            }
                        }
                    }
                }
            };
            out[m] = pick.clone();
        }
        Ok(Ok(Some(self.encode(key, &out)?)))
    }
}

/// A stored string or binary field moved from encoding `from` to `to`: an inline field
/// (`String`, `Bytes`: the bytes and a 0 terminator) becomes the payload an out-of-line
/// (adaptive) column's cell holds, and back. Other encodings are left as they are.
fn restore(from: Encoding, to: Encoding, bytes: &mut Vec<u8>) {
    let inline = |e: Encoding| matches!(e, Encoding::String | Encoding::Bytes);
    match (inline(from), inline(to)) {
        (true, false) if to.is_adaptive() && bytes.last() == Some(&0) => {
            bytes.pop();
        }
        (false, true) if from.is_adaptive() => bytes.push(0),
        _ => {}
    }
}

/// The changes from `base` to `side`; with `all`, every row of either counts (a row on both
/// comes back as changed even when its bytes are the same).
fn side_changes(
    base: &Map<'_, Overlay<'_>, TupleSchema>,
    side: &Map<'_, Overlay<'_>, TupleSchema>,
    all: bool,
) -> Result<Vec<Change>> {
    let tree = DoltError::from;
    if !all {
        return row_changes(base, side).map_err(tree);
    }
    let kd = base.schema().key.clone();
    let collect = |m: &Map<'_, Overlay<'_>, TupleSchema>| -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        m.iter()
            .map_err(tree)?
            .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).map_err(tree))
            .collect()
    };
    let (b, s) = (collect(base)?, collect(side)?);
    let mut out = Vec::with_capacity(b.len().max(s.len()));
    let (mut i, mut j) = (0, 0);
    while i < b.len() || j < s.len() {
        let ord = match (b.get(i), s.get(j)) {
            (Some(x), Some(y)) => kd.compare(&x.0, &y.0),
            (Some(_), None) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        match ord {
            std::cmp::Ordering::Less => {
                out.push((b[i].0.clone(), Some(b[i].1.clone()), None));
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push((s[j].0.clone(), None, Some(s[j].1.clone())));
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push((s[j].0.clone(), Some(b[i].1.clone()), Some(s[j].1.clone())));
                i += 1;
                j += 1;
            }
        }
    }
    Ok(out)
}

/// The three tables' chunk addresses (ancestor, ours, theirs).
pub(in crate::write) struct Sides {
    pub base: Address,
    pub ours: Address,
    pub theirs: Address,
}

/// Merges the rows of table `name` into the merged schema `schema_chunk`; returns the merged
/// table message, or `None` after adding conflicts.
#[allow(clippy::too_many_arguments)]
pub(in crate::write) fn merge_rows(
    store: &Overlay<'_>,
    name: &str,
    sides: &Sides,
    schema_chunk: &[u8],
    rewrites: RowRewrites,
    kept_indexes: &HashSet<String>,
    choice: ConflictChoice,
    conflicts: &mut Vec<MergeConflict>,
) -> Result<Option<Vec<u8>>> {
    let merged = EditTable::create(store, name, schema_chunk)?;
    let ms = &merged.schema;
    if let Some(c) = ms.columns.iter().find(|c| {
        ((c.generated || c.virtual_) && !rewrites.alter || c.on_update.is_some()) && !c.hidden
    }) {
        return Err(DoltError::Unsupported(format!(
            "merging schema changes of {name:?}: column {:?} is generated or has ON UPDATE \
             (not done here)",
            c.name
        )));
    }
    let (base, ours, theirs) = (
        EditTable::load(store, name, sides.base)?,
        EditTable::load(store, name, sides.ours)?,
        EditTable::load(store, name, sides.theirs)?,
    );
    let map_to = |s: &Schema| -> Vec<Option<usize>> {
        ms.columns.iter().map(|c| position_in(s, c)).collect()
    };
    let base_cols = base
        .schema
        .columns
        .iter()
        .enumerate()
        .filter(|(_, c)| !c.primary_key && !c.hidden && !c.virtual_)
        .map(|(b, c)| {
            (
                b,
                position_in(&ours.schema, c),
                position_in(&theirs.schema, c),
            )
        })
        .collect();
    let values = ms.collated_value_desc()?;
    let value_field = (0..ms.columns.len())
        .map(|m| ms.value_columns.iter().position(|&c| c == m))
        .collect();
    let rows = Rows {
        store,
        in_base: map_to(&base.schema),
        in_ours: map_to(&ours.schema),
        in_theirs: map_to(&theirs.schema),
        base_cols,
        values,
        value_field,
        merged,
        base,
        ours,
        theirs,
    };
    // A side's rows need rewriting whenever their layout differs from the merged one.
    let layout = |s: &Schema, map: &[Option<usize>]| {
        let stored: Vec<usize> = rows.merged.schema.value_columns.clone();
        s.value_columns.len() == stored.len()
            && stored.iter().zip(&s.value_columns).all(|(&m, &p)| {
                map[m] == Some(p) && s.columns[p].encoding == rows.merged.schema.columns[m].encoding
            })
    };
    let left_rewrite = rewrites.left_rewrite || !layout(&rows.ours.schema, &rows.in_ours);
    let right_rewrite = rewrites.right_rewrite || !layout(&rows.theirs.schema, &rows.in_theirs);

    let tree = DoltError::from;
    let maps = |t: &EditTable| -> Result<Map<'_, Overlay<'_>, TupleSchema>> {
        Ok(Map::new(store, t.primary, t.schema.primary_tuple_schema()?))
    };
    let (bm, om, tm) = (maps(&rows.base)?, maps(&rows.ours)?, maps(&rows.theirs)?);
    let left = side_changes(&bm, &om, rewrites.left_change)?;
    let right = side_changes(&bm, &tm, rewrites.right_change)?;
    let kd = om.schema().key.clone();
    let mut edits: Vec<(Vec<u8>, Option<Vec<u8>>)> = Vec::new();
    let mut table_conflicts: Vec<(Vec<u8>, &str)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < left.len() || j < right.len() {
        let ord = match (left.get(i), right.get(j)) {
            (Some(l), Some(r)) => kd.compare(&l.0, &r.0),
            (Some(_), None) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        match ord {
            std::cmp::Ordering::Less => {
                let (k, _, to) = &left[i];
                i += 1;
                if let (Some(to), true) = (to, left_rewrite) {
                    edits.push((k.clone(), Some(rows.remap(false, k, to)?)));
                }
            }
            std::cmp::Ordering::Greater => {
                let (k, _, to) = &right[j];
                j += 1;
                let value = match to {
                    Some(to) if right_rewrite => Some(rows.remap(true, k, to)?),
                    Some(to) => Some(to.clone()),
                    None => None,
                };
                edits.push((k.clone(), value));
            }
            std::cmp::Ordering::Equal => {
                let ((k, from, lt), (_, rfrom, rt)) = (&left[i], &right[j]);
                i += 1;
                j += 1;
                if lt.is_none() && rt.is_none() {
                    continue;
                }
                if lt.is_some() && rt.is_some() && from.is_none() == rfrom.is_none() && lt == rt {
                    continue;
                }
                match rows.try_merge(k, lt.as_deref(), rt.as_deref(), from.as_deref())? {
                    Ok(v) => edits.push((k.clone(), v)),
                    Err(reason) => match choice {
                        ConflictChoice::Stop => table_conflicts.push((k.clone(), reason)),
                        ConflictChoice::Ours => match lt {
                            Some(v) if left_rewrite => {
                                edits.push((k.clone(), Some(rows.remap(false, k, v)?)))
                            }
                            Some(_) => {}
                            None => edits.push((k.clone(), None)),
                        },
                        ConflictChoice::Theirs => {
                            let value = match rt {
                                Some(v) if right_rewrite => Some(rows.remap(true, k, v)?),
                                Some(v) => Some(v.clone()),
                                None => None,
                            };
                            edits.push((k.clone(), value));
                        }
                    },
                }
            }
        }
    }
    if !table_conflicts.is_empty() {
        report(name, &rows.merged.schema, table_conflicts, conflicts);
        return Ok(None);
    }
    // Our tree edited under the merged layout: the nodes written then know which value fields
    // hold addresses (a string moved out of line by the merge) as Dolt's do.
    let final_map = Map::new(store, om.root(), rows.merged.schema.primary_tuple_schema()?)
        .apply(edits.iter().map(|(k, v)| (&k[..], v.as_deref())))
        .map_err(tree)?;
    let changes = row_changes(&om, &final_map).map_err(tree)?;

    // NOT NULL and CHECK constraints over the rows the merge changed.
    let ms = &rows.merged.schema;
    let checks = RowChecks::for_schema(store.engine, name, ms)?;
    for (k, _, to) in &changes {
        let Some(v) = to else { continue };
        let cells = rows.merged.cells_of(store, k, v)?;
        if let Some(c) = (0..ms.columns.len())
            .find(|&c| !ms.columns[c].nullable && !ms.columns[c].hidden && is_null(&cells[c]))
        {
            conflicts.push(MergeConflict {
                table: name.to_string(),
                key: super::row_merge::key_text(ms, k),
                reason: format!(
                    "NULL in NOT NULL column {:?} after the merge",
                    ms.columns[c].name
                ),
            });
            continue;
        }
        if let Some(checks) = &checks {
            let values = rows.merged.visible_values(checks.visible(), &cells)?;
            if let Err(e) = checks.check(name, 0, values) {
                conflicts.push(MergeConflict {
                    table: name.to_string(),
                    key: super::row_merge::key_text(ms, k),
                    reason: format!("the merged row breaks a CHECK constraint: {e}"),
                });
            }
        }
    }

    // Secondary indexes.
    let io = OverlayIo(store);
    let ours_chunk = store
        .get(&sides.ours)?
        .ok_or(DoltError::MissingChunk(sides.ours))?
        .to_vec();
    let ours_fields =
        TableFields::decode(&ours_chunk).map_err(|e| bad_chunk(sides.ours, e.to_string()))?;
    let ours_roots = address_map_entries(&io, ours_fields.secondary_indexes)?;
    let empty = empty_value()?;
    let mut roots: Vec<(Vec<u8>, Option<Address>)> = Vec::new();
    for (mi, ix) in ms.indexes.iter().enumerate() {
        if ix.spatial || ix.fulltext {
            return Err(DoltError::Unsupported(format!(
                "merging index {:?} of {name:?} (spatial or full-text)",
                ix.name
            )));
        }
        let its = index_schema(ms, ix)?;
        let kept = kept_indexes
            .contains(&ix.name)
            .then(|| {
                let oi = rows
                    .ours
                    .schema
                    .indexes
                    .iter()
                    .position(|x| x.name == ix.name)?;
                let root = ours_roots
                    .iter()
                    .find(|(n, _)| n.as_slice() == ix.name.as_bytes())?
                    .1;
                Some((oi, root))
            })
            .flatten();
        let edited = match kept {
            Some((oi, root)) => {
                let mut by_key: Vec<(Vec<u8>, Option<Vec<u8>>)> = Vec::new();
                for (k, from, to) in &changes {
                    let old = from
                        .as_ref()
                        .map(|v| rows.ours.index_key(store, oi, k, v))
                        .transpose()?;
                    let new = to
                        .as_ref()
                        .map(|v| rows.merged.index_key(store, mi, k, v))
                        .transpose()?;
                    if old == new {
                        continue;
                    }
                    if let Some(o) = old {
                        by_key.push((o, None));
                    }
                    if let Some(n) = new {
                        by_key.push((n, Some(empty.clone())));
                    }
                }
                // Deletes first, so a put of the same key wins.
                by_key.sort_by_key(|(_, v)| v.is_some());
                Map::new(store, root, its.clone())
                    .apply(by_key.iter().map(|(k, v)| (&k[..], v.as_deref())))
                    .map_err(tree)?
            }
            None => {
                let mut keys = Packed::default();
                match raw_index_fields(ms, ix) {
                    // Fields copied as stored: no row is decoded.
                    Some(fields) => {
                        let raw = RawKeys {
                            fields: &fields,
                            key: &its.key,
                            table: name,
                            index: &ix.name,
                        };
                        keys = raw.of_map(store, &final_map)?;
                    }
                    None => {
                        for r in final_map.iter().map_err(tree)? {
                            let (k, v) = r.map_err(tree)?;
                            keys.push(&rows.merged.index_key(store, mi, k, v)?);
                        }
                    }
                }
                // Every key ends with the row's primary key: no two are equal. The keys come
                // in the rows' order.
                let order = keys.sorted_index_keys(ms, ix, &its.key, true);
                let runs = keys.gathered(&order);
                drop((keys, order));
                let items = runs.iter().flat_map(Packed::iter);
                Map::from_sorted(store, its.clone(), items.map(|k| (k, &empty[..])))
                    .map_err(tree)?
            }
        };
        if ix.unique {
            check_unique(&edited, ix.columns.len(), name, &ix.name, conflicts)?;
            if ms.keyless {
                unique_copies(store, &final_map, &rows.merged, mi, name, conflicts)?;
            }
        }
        roots.push((ix.name.as_bytes().to_vec(), Some(edited.root())));
    }
    if conflicts.iter().any(|c| c.table == name) {
        return Ok(None);
    }
    let edits: Vec<(&[u8], Option<Address>)> =
        roots.iter().map(|(k, a)| (k.as_slice(), *a)).collect();
    let mut put_io = OverlayIo(store);
    let secondary = edit_address_map(&mut put_io, &empty_address_map()?, &edits)?;
    let primary = store
        .get(&final_map.root())?
        .ok_or(DoltError::MissingChunk(final_map.root()))?
        .to_vec();
    // Dolt takes the larger AUTO_INCREMENT counter only when our schema has such a column.
    let auto_increment = if rows.ours.schema.columns.iter().any(|c| c.auto_increment) {
        rows.ours.auto_increment.max(rows.theirs.auto_increment)
    } else {
        rows.ours.auto_increment
    };
    let schema_address = store.put(schema_chunk)?;
    let chunk = TableFields {
        schema: schema_address.0,
        primary_index: &primary,
        secondary_indexes: &secondary,
        auto_increment_value: auto_increment,
        ..ours_fields
    }
    .encode()
    .map_err(|e| encode(format!("table {name:?}"), e))?;
    Ok(Some(chunk))
}

/// Rows a table must hold before a new index reads its rows in parts on several threads.
const SPLIT_ROWS: u64 = 100_000;

/// Parts a new index's rows are read in, per core: reading a part waits on its store's
/// read-ahead now and then, and another part's thread fills the core meanwhile.
const PARTS_PER_CORE: usize = 2;

/// How a new index's keys are copied out of stored rows, field by field ([`raw_index_fields`]).
struct RawKeys<'a> {
    fields: &'a [(bool, usize)],
    key: &'a TupleDesc,
    table: &'a str,
    index: &'a str,
}

impl RawKeys<'_> {
    /// The index keys of every row of `map`, in row order. Reading the rows (and their leaves)
    /// costs more than sorting the keys, so a large table is read in parts on several threads
    /// ([`PARTS_PER_CORE`] per core), each part a run of the root's subtrees with about as
    /// many rows as the others. The parts read the database's files only (the session's own
    /// chunks are not shared between threads), which hold every subtree of an unchanged table:
    /// its root node, carried inside the table chunk, is the one node the session store holds.
    fn of_map(
        &self,
        store: &Overlay<'_>,
        map: &Map<'_, Overlay<'_>, TupleSchema>,
    ) -> Result<Packed> {
        let whole = || {
            let mut keys = Packed::default();
            self.of_rows(map, &mut keys).map(|()| keys)
        };
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        if cores < 2 || map.count().map_err(DoltError::from)? < SPLIT_ROWS {
            return whole();
        }
        let Some(subtrees) = subtrees_in_files(store, map.root())? else {
            return whole();
        };
        // Runs of subtrees with nearly equal row counts, as many as PARTS_PER_CORE per core.
        let parts = (cores * PARTS_PER_CORE).min(subtrees.len());
        let total: u64 = subtrees.iter().map(|&(_, n)| n).sum();
        let mut starts = vec![0];
        let mut before = 0u64;
        for (i, &(_, n)) in subtrees.iter().enumerate().take(subtrees.len() - 1) {
            before += n;
            if starts.len() < parts && before * parts as u64 >= total * starts.len() as u64 {
                starts.push(i + 1);
            }
        }
        starts.push(subtrees.len());
        let (files, schema) = (store.base, map.schema());
        let runs: Vec<&[(Address, u64)]> =
            starts.windows(2).map(|w| &subtrees[w[0]..w[1]]).collect();
        // Room for every key (the first part's, where the others are appended); a key's bytes
        // estimated from its fields' widths (16 for a field of no fixed width).
        let key_bytes: usize = self
            .key
            .types()
            .iter()
            .map(|t| t.enc.fixed_width().unwrap_or(16) + 2)
            .sum();
        let read = |part: &[(Address, u64)], room: u64| -> Result<Packed> {
            let mut keys = Packed::default();
            keys.reserve(room as usize, room as usize * key_bytes);
            for &(root, _) in part {
                self.of_rows(&Map::new(files, root, schema.clone()), &mut keys)?;
            }
            Ok(keys)
        };
        let rows = |run: &[(Address, u64)]| run.iter().map(|&(_, n)| n).sum::<u64>();
        std::thread::scope(|s| {
            let later: Vec<_> = runs[1..]
                .iter()
                .map(|&run| s.spawn(move || read(run, rows(run))))
                .collect();
            let mut keys = read(runs[0], total)?;
            for handle in later {
                match handle.join() {
                    Ok(rest) => keys.append(rest?),
                    Err(_) => {
                        return Err(bad_chunk(
                            map.root(),
                            "a thread reading part of the rows panicked",
                        ))
                    }
                }
            }
            Ok(keys)
        })
    }

    /// Adds the index keys of the rows of `map` to `keys`, in row order.
    fn of_rows<S: StoreFastPaths>(
        &self,
        map: &Map<'_, S, TupleSchema>,
        keys: &mut Packed,
    ) -> Result<()> {
        let raw = |e: TupleError| {
            encode(
                format!("a key of index {:?} of {:?}", self.index, self.table),
                e,
            )
        };
        let ts = map.schema();
        let mut b = TupleBuilder::new(self.key.clone());
        for r in map.iter().map_err(DoltError::from)? {
            let (k, v) = r.map_err(DoltError::from)?;
            for (f, &(in_key, at)) in self.fields.iter().enumerate() {
                let field = if in_key {
                    ts.key.field(Tuple::new_unverified(k), at)
                } else {
                    ts.value.field(Tuple::new_unverified(v), at)
                };
                match field {
                    Some(bytes) => b.put_raw(f, bytes),
                    None => b.put_null(f),
                }
                .map_err(raw)?;
            }
            keys.push_built(&mut b).map_err(raw)?;
        }
        Ok(())
    }
}

/// A keyless table's row stored more than once (its count above 1) has one entry in each
/// index, so [`check_unique`] cannot see it: a unique index `index` (of `table`, position in
/// its schema) over values none of which is NULL is broken by it, as Dolt refuses it.
fn unique_copies(
    store: &Overlay<'_>,
    rows: &Map<'_, Overlay<'_>, TupleSchema>,
    table: &EditTable,
    index: usize,
    name: &str,
    conflicts: &mut Vec<MergeConflict>,
) -> Result<()> {
    let ix = &table.schema.indexes[index];
    for r in rows.iter().map_err(DoltError::from)? {
        let (k, v) = r.map_err(DoltError::from)?;
        if copies(v)? < 2 {
            continue;
        }
        let key = table.index_key(store, index, k, v)?;
        let t = Tuple::new_unverified(&key);
        if (0..ix.columns.len()).all(|f| t.field(f).is_some()) {
            conflicts.push(MergeConflict {
                table: name.to_string(),
                key: Vec::new(),
                reason: format!("a row stored twice breaks unique index {:?}", ix.name),
            });
            return Ok(());
        }
    }
    Ok(())
}

/// The subtrees under `root` with their row counts, in key order, when every one of them lies
/// in the database's files (`None` for a root that is a leaf, or whose children this session
/// made).
fn subtrees_in_files(store: &Overlay<'_>, root: Address) -> Result<Option<Vec<(Address, u64)>>> {
    let node = store.get_node(&root)?;
    if node.is_leaf() || node.count() < 2 {
        return Ok(None);
    }
    let mut subtrees = Vec::with_capacity(node.count());
    for (i, rows) in (0..node.count()).zip(node.subtree_counts()) {
        let child = node.child(i);
        if store.new.has(&child)? {
            return Ok(None);
        }
        subtrees.push((child, rows));
    }
    Ok(Some(subtrees))
}

/// Where each key field of index `ix` of a table of schema `s` is in a stored row: `(true, i)`
/// field `i` of the row's key, `(false, i)` of its value. `None` when a field is not its
/// column's stored bytes (a keyless table, a prefix length, a virtual or out-of-line column,
/// an encoding the index stores differently), so the row must be decoded.
fn raw_index_fields(s: &Schema, ix: &crate::schema::Index) -> Option<Vec<(bool, usize)>> {
    if s.keyless || ix.spatial || ix.fulltext || ix.prefix_lengths.iter().any(|&p| p != 0) {
        return None;
    }
    ix.key_columns
        .iter()
        .map(|&c| {
            let col = &s.columns[c];
            if col.virtual_
                || col.encoding.is_adaptive()
                || key_encoding(col.encoding) != col.encoding
            {
                return None;
            }
            match s.key_columns.iter().position(|&k| k == c) {
                Some(i) => Some((true, i)),
                None => Some((false, s.value_columns.iter().position(|&v| v == c)?)),
            }
        })
        .collect()
}
