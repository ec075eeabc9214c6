//! `dolt merge BRANCH`: fast-forward when the current branch's head is an ancestor of the
//! other; otherwise a three-way merge from the merge base Dolt picks, committed with two
//! parents (the current head first).
//!
//! Tables changed on one side only are taken whole from that side, schema and all (Dolt's
//! short cut too). A table both sides changed whose schema changed is merged by
//! [`super::schema_merge`] and [`super::schema_merge_rows`]. A table both sides changed
//! under one schema (as Dolt compares schemas) is merged row by row with Dolt's cell-wise rule: a row changed
//! on both sides merges when no column was changed to different values on the two sides;
//! otherwise — or when one side deleted a row the other changed, or both added a key with
//! different rows — it is a conflict. Secondary indexes are edited with the merged rows'
//! changes, which gives the trees Dolt's merge gives (trees depend on content only).
//!
//! Keyless tables merge by row hash as Dolt merges them: a row whose number of copies only one
//! side changed takes that side's count; a row both sides changed is a conflict even when both
//! made the same change (Dolt counts convergent keyless changes as conflicts too).
//!
//! Conflicts stop the merge before anything is written and come back with every conflicting
//! key, unless the caller chose a side for conflicting rows ([`ConflictChoice`]).

use std::collections::{BTreeMap, HashSet};

use prollystore::blob::read_blob;
use prollystore::store::ChunkStore;
use prollystore::tree::merge::Resolution;
use prollystore::tuples::TupleSchema;
use prollystore::Map;
use prollystore_format::message::objects::{RootValueFields, TableFields};
use prollystore_format::tuple::{Tuple, TupleBuilder, TupleDesc};
use prollystore_format::Address;
use prollystore_format::Encoding;

use super::json_merge::merge_json;
use super::row_merge::{
    check_unique, report, row_changes, ConflictChoice, MergeConflict, OverlayIo,
};
use super::schema_merge::{merge_schemas, SchemaMerge};
use super::schema_merge_rows::{merge_rows, Sides};
use crate::error::{bad_chunk, encode, malformed, malformed_from, DoltError, Result};
use crate::schema::{Schema, SqlType};
use crate::sql_value::SqlValue;
use crate::write::history::ancestry::merge_base;
use crate::write::history::branches::{head_ref, working_set_ref};
use crate::write::history::commit::{NewCommit, Person};
use crate::write::maps::address_map::{address_map_entries, edit_address_map};
use crate::write::storage::chunk_io::ChunkIo;
use crate::write::storage::overlay::Overlay;
use crate::write::storage::writer::{StoreWriter, WorkingSetMeta};
use crate::write::tables::table_edit::{index_schema, Cell, EditTable};

/// The metadata of a merge commit.
#[derive(Clone, Debug)]
pub(crate) struct MergeMeta<'a> {
    /// Author.
    pub author: Person<'a>,
    /// Committer, when not the author.
    pub committer: Option<Person<'a>>,
    /// Commit message (Dolt's default: `Merge branch 'B' into C`).
    pub message: &'a str,
    /// Author time, Unix milliseconds.
    pub author_millis: i64,
    /// Committer time, Unix milliseconds.
    pub committer_millis: u64,
}

/// What a merge did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum MergeOutcome {
    /// The other commit is already contained in the current branch: nothing written.
    UpToDate,
    /// The current branch moved to the other head (no commit written).
    FastForward {
        /// The new head.
        commit: Address,
    },
    /// A merge commit was written.
    Merged {
        /// The merge commit.
        commit: Address,
        /// Its root value.
        root: Address,
    },
    /// Conflicts stopped the merge; nothing was written.
    Conflicts(Vec<MergeConflict>),
}

/// A table's message fields with its decoded schema.
struct TableState {
    schema: Schema,
    schema_address: Address,
    primary: Vec<u8>,
    secondary: Vec<u8>,
    auto_increment: u64,
}

fn read_table(io: &dyn ChunkIo, address: Address) -> Result<TableState> {
    let chunk = io.chunk(&address)?;
    let t = TableFields::decode(&chunk).map_err(|e| bad_chunk(address, e.to_string()))?;
    let clean = |b: &[u8]| b.iter().all(|&x| x == 0);
    if !clean(t.artifacts)
        || !clean(t.violations)
        || !clean(t.conflicts.data)
        || !clean(t.conflicts.our_schema)
    {
        return Err(DoltError::Refused(format!(
            "table {address} has unresolved conflicts or constraint violations"
        )));
    }
    let schema_address = Address(t.schema);
    let schema_chunk = io.chunk(&schema_address)?;
    Ok(TableState {
        schema: Schema::decode(&schema_chunk, schema_address)?,
        schema_address,
        primary: t.primary_index.to_vec(),
        secondary: t.secondary_indexes.to_vec(),
        auto_increment: t.auto_increment_value,
    })
}

/// One column's stored field in the base, ours and theirs (`None`: NULL).
type Fields<'a> = (Option<&'a [u8]>, Option<&'a [u8]>, Option<&'a [u8]>);

/// Which side's value of a column both sides changed the row of Dolt's merge takes
/// (`valueMerger.processColumn`): values are compared as the column's type compares them (a
/// `_ci` collation makes `'Paris'` and `'PARIS'` equal). Two equal values merge to the greater
/// of their stored bytes (so the result does not depend on the merge's direction); otherwise
/// the side that changed the value from the base wins. `None`: both changed it differently.
fn pick_side(value: &TupleDesc, i: usize, (bf, of, tf): Fields<'_>) -> Option<bool> {
    let equal = |x: Option<&[u8]>, y: Option<&[u8]>| match (x, y) {
        (None, None) => true,
        (Some(x), Some(y)) => x == y || value.compare_field(i, x, y).is_eq(),
        _ => false,
    };
    if equal(of, tf) {
        Some(of <= tf)
    } else if equal(of, bf) {
        Some(true)
    } else if equal(tf, bf) {
        Some(false)
    } else {
        None
    }
}

/// Dolt's cell-wise merge of one row both sides changed (`None` when it conflicts); see
/// [`pick_side`]. A STORED generated column (`generated[i]`) both sides changed differently
/// takes our value: Dolt computes it again from the merged row ([`EditTable::regenerated`]).
fn merge_cells(
    value: &TupleDesc,
    generated: &[bool],
    base: &[u8],
    ours: &[u8],
    theirs: &[u8],
) -> Option<Vec<u8>> {
    let (b, o, t) = (
        Tuple::new(base).ok()?,
        Tuple::new(ours).ok()?,
        Tuple::new(theirs).ok()?,
    );
    let mut out = TupleBuilder::new(value.clone());
    for i in 0..value.len() {
        let (bf, of, tf) = (b.field(i), o.field(i), t.field(i));
        let side = match pick_side(value, i, (bf, of, tf)) {
            None if generated.get(i) == Some(&true) => false,
            side => side?,
        };
        match if side { tf } else { of } {
            Some(bytes) => out.put_raw(i, bytes).ok()?,
            None => out.put_null(i).ok()?,
        }
    }
    Some(out.build().ok()?.as_bytes().to_vec())
}

/// Refuses a row merged cell by cell whose STORED generated column, covered by an index,
/// Dolt's merge computes again to a new value: Dolt builds that index's entry from the row as
/// merged before computing it (the stale value stays in the index, the new one is not found
/// there), so neither Dolt's bytes nor a correct index can be written here.
fn refuse_stale_index(
    name: &str,
    schema: &Schema,
    indexed: &[(usize, &str)],
    merged: &[u8],
    regenerated: &[u8],
) -> Result<()> {
    let (Ok(before), Ok(after)) = (Tuple::new(merged), Tuple::new(regenerated)) else {
        return Ok(());
    };
    match indexed
        .iter()
        .find(|(f, _)| before.field(*f) != after.field(*f))
    {
        None => Ok(()),
        Some(&(f, index)) => Err(DoltError::Unsupported(format!(
            "merging rows of {name:?} that both sides changed: STORED generated column {:?}, \
             in index {index:?}, takes a new value (Dolt's merge leaves that index holding \
             the old value)",
            schema.columns[schema.value_columns[f]].name
        ))),
    }
}

/// [`merge_cells`] for a row it could not merge: JSON documents both sides changed merge as
/// Dolt merges them ([`merge_json`]); `None` when a conflict remains.
fn merge_json_cells(
    store: &Overlay<'_>,
    rows: &EditTable,
    value: &TupleDesc,
    key: &[u8],
    (base, ours, theirs): (&[u8], &[u8], &[u8]),
) -> Result<Option<Vec<u8>>> {
    let schema = &rows.schema;
    if !schema.columns.iter().any(|c| c.sql_type == SqlType::Json) {
        return Ok(None);
    }
    let row = || format!("a stored row of {:?}", rows.name);
    let tuple = |bytes| Tuple::new(bytes).map_err(|e| malformed_from(row(), "its tuple", e));
    let (b, o, t) = (tuple(base)?, tuple(ours)?, tuple(theirs)?);
    let (cb, co, ct) = (
        rows.cells_of(store, key, base)?,
        rows.cells_of(store, key, ours)?,
        rows.cells_of(store, key, theirs)?,
    );
    let text = |cell: &Cell, enc: Encoding| -> Result<Option<String>> {
        let Cell::Stored(bytes) = cell else {
            return Ok(None);
        };
        let mut out = Vec::new();
        if enc == Encoding::JsonAddr {
            let address = Address(bytes.as_slice().try_into().map_err(|_| {
                malformed(row(), format!("a JSON address of {} bytes", bytes.len()))
            })?);
            read_blob(store, &address, &mut out).map_err(DoltError::from)?;
        } else {
            out.extend_from_slice(bytes.strip_suffix(&[0]).unwrap_or(bytes));
        }
        Ok(String::from_utf8(out).ok())
    };
    let mut cells = co.clone();
    for (i, &c) in schema.value_columns.iter().enumerate() {
        let col = &schema.columns[c];
        match pick_side(value, i, (b.field(i), o.field(i), t.field(i))) {
            Some(false) => {}
            Some(true) => cells[c] = ct[c].clone(),
            None if col.sql_type == SqlType::Json => {
                let docs = (
                    text(&cb[c], col.encoding)?,
                    text(&co[c], col.encoding)?,
                    text(&ct[c], col.encoding)?,
                );
                // A NULL on any side is a conflict, as in Dolt.
                let (Some(bd), Some(od), Some(td)) = docs else {
                    return Ok(None);
                };
                let Some(merged) = merge_json(&bd, &od, &td) else {
                    return Ok(None);
                };
                cells[c] = Cell::Value(SqlValue::Json(merged));
            }
            None => return Ok(None),
        }
    }
    Ok(Some(rows.encode(store, 0, &cells, 1)?.1))
}

/// The stored spelling of `key` in `map` (equal to `key` under the key's collations); `key`
/// itself when absent.
fn merged_key(
    map: &Map<'_, Overlay<'_>, TupleSchema>,
    key: &[u8],
) -> std::result::Result<Vec<u8>, prollystore::TreeError> {
    let c = map.seek(key)?;
    Ok(
        if c.valid() && map.schema().key.compare(c.key(), key).is_eq() {
            c.key().to_vec()
        } else {
            key.to_vec()
        },
    )
}

/// The secondary-index key of a row: the index's key columns taken from the row's key and
/// value tuples as stored, laid out by `desc` (the index's stored key descriptor); a keyless
/// table's keys end with the row hash, its clustered key (refused for layouts where the stored
/// field is not the index field).
fn index_key(
    schema: &Schema,
    desc: &TupleDesc,
    columns: &[usize],
    key: &[u8],
    value: &[u8],
) -> Result<Vec<u8>> {
    let (k, v) = (Tuple::new_unverified(key), Tuple::new_unverified(value));
    let err = |e: prollystore_format::tuple::TupleError| {
        malformed_from("a stored row", "its fields do not make an index key", e)
    };
    let mut b = TupleBuilder::new(desc.clone());
    for (i, &c) in columns.iter().enumerate() {
        let field = if let Some(p) = schema.key_columns.iter().position(|&x| x == c) {
            k.field(p)
        } else if let Some(p) = schema.value_columns.iter().position(|&x| x == c) {
            v.field(p)
        } else {
            return Err(malformed(
                "a table's schema",
                format!(
                    "its index column {:?} is in neither the key nor the value",
                    schema.columns[c].name
                ),
            ));
        };
        match field {
            Some(bytes) => b.put_raw(i, bytes),
            None => b.put_null(i),
        }
        .map_err(err)?;
    }
    if schema.keyless {
        let hash: &[u8; 16] = key
            .get(..16)
            .and_then(|h| h.try_into().ok())
            .ok_or_else(|| malformed("a keyless row's key", "shorter than its 16-byte hash"))?;
        b.put_hash128(columns.len(), hash).map_err(err)?;
    }
    Ok(b.build().map_err(err)?.as_bytes().to_vec())
}

/// A root value's bytes, its tables by name and its foreign-key collection address.
type RootParts = (Vec<u8>, BTreeMap<Vec<u8>, Address>, [u8; 20]);

/// Merges one table both sides changed; new chunks go into `store`. Returns the merged table
/// message, or the conflicts.
#[allow(clippy::too_many_arguments)]
fn merge_table(
    store: &Overlay<'_>,
    name: &str,
    sides: &Sides,
    (base, ours, theirs): (&TableState, &TableState, &TableState),
    choice: ConflictChoice,
    conflicts: &mut Vec<MergeConflict>,
) -> Result<Option<Vec<u8>>> {
    if base.schema_address != ours.schema_address || ours.schema_address != theirs.schema_address {
        let chunk = |a: Address| -> Result<Vec<u8>> {
            Ok(store.get(&a)?.ok_or(DoltError::MissingChunk(a))?.to_vec())
        };
        let (b, o, t) = (
            chunk(base.schema_address)?,
            chunk(ours.schema_address)?,
            chunk(theirs.schema_address)?,
        );
        match merge_schemas(name, &b, &o, &t)? {
            // Equal as Dolt compares schemas: the rows merge under ours.
            SchemaMerge::Ours => {}
            SchemaMerge::Conflicts(reasons) => {
                conflicts.extend(reasons.into_iter().map(|reason| MergeConflict {
                    table: name.to_string(),
                    key: Vec::new(),
                    reason,
                }));
                return Ok(None);
            }
            SchemaMerge::Merged {
                chunk,
                rewrites,
                kept_indexes,
            } => {
                return merge_rows(
                    store,
                    name,
                    sides,
                    &chunk,
                    rewrites,
                    &kept_indexes,
                    choice,
                    conflicts,
                )
            }
        }
    }
    let schema = &ours.schema;
    let ts: TupleSchema = schema.primary_tuple_schema()?;
    let tree_err = DoltError::from;
    let put = |bytes: &[u8]| store.put(bytes).map_err(DoltError::from);
    let (b, o, t) = (
        put(&base.primary)?,
        put(&ours.primary)?,
        put(&theirs.primary)?,
    );
    let (bm, om, tm) = (
        Map::new(store, b, ts.clone()),
        Map::new(store, o, ts.clone()),
        Map::new(store, t, ts.clone()),
    );
    let value_desc = schema.collated_value_desc()?;
    let mut table_conflicts = Vec::new();
    if schema.keyless && choice == ConflictChoice::Stop {
        // Dolt's rule for keyless tables: a row (row hash) whose count both sides changed
        // conflicts, even when both changed it the same way.
        let ours_changed: HashSet<Vec<u8>> = row_changes(&bm, &om)
            .map_err(tree_err)?
            .into_iter()
            .map(|(k, _, _)| k)
            .collect();
        for (k, _, _) in row_changes(&bm, &tm).map_err(tree_err)? {
            if ours_changed.contains(&k) {
                table_conflicts.push((
                    k,
                    "both sides changed the number of copies of this row (keyless tables \
                     merge rows changed on one side only)",
                ));
            }
        }
        if !table_conflicts.is_empty() {
            report(name, schema, table_conflicts, conflicts);
            return Ok(None);
        }
    }
    let rows = EditTable::for_schema(store, name, schema.clone());
    // Per value field: a STORED generated column (computed again in a row merged cell-wise).
    let generated: Vec<bool> = schema
        .value_columns
        .iter()
        .map(|&c| schema.columns[c].generated && !schema.columns[c].virtual_)
        .collect();
    let any_generated = generated.contains(&true);
    // Per value field of a STORED generated column an index covers: that index's name.
    let indexed_generated: Vec<(usize, &str)> = (0..generated.len())
        .filter(|&f| generated[f])
        .filter_map(|f| {
            let c = schema.value_columns[f];
            let ix = schema.indexes.iter().find(|ix| ix.columns.contains(&c))?;
            Some((f, ix.name.as_str()))
        })
        .collect();
    let mut merge_error = None;
    let (merged, _) = om
        .merge(&bm, &tm, |key, b, o, t| {
            let mut fail = |e: DoltError| {
                merge_error.get_or_insert(e);
                None
            };
            let merged = match (b, o, t) {
                (Some(b), Some(o), Some(t)) if !schema.keyless => {
                    merge_cells(&value_desc, &generated, b, o, t)
                        .or_else(|| {
                            merge_json_cells(store, &rows, &value_desc, key, (b, o, t))
                                .unwrap_or_else(&mut fail)
                        })
                        .and_then(|v| match any_generated {
                            true => rows
                                .regenerated(store, key, &v)
                                .and_then(|r| {
                                    refuse_stale_index(name, schema, &indexed_generated, &v, &r)
                                        .map(|()| r)
                                })
                                .map_or_else(&mut fail, Some),
                            false => Some(v),
                        })
                }
                _ => None,
            };
            match (merged, choice) {
                (Some(v), _) => Resolution::Value(Some(v)),
                (None, ConflictChoice::Ours) => Resolution::Value(o.map(<[u8]>::to_vec)),
                (None, ConflictChoice::Theirs) => Resolution::Value(t.map(<[u8]>::to_vec)),
                (None, ConflictChoice::Stop) => {
                    let reason = match (b, o, t) {
                        (None, _, _) => "both sides added the key with different rows",
                        (_, None, _) => "deleted here, changed on the merged branch",
                        (_, _, None) => "changed here, deleted on the merged branch",
                        _ => "both sides changed the same column differently",
                    };
                    table_conflicts.push((key.to_vec(), reason));
                    Resolution::Conflict
                }
            }
        })
        .map_err(tree_err)?;
    if let Some(e) = merge_error {
        return Err(e);
    }
    if !table_conflicts.is_empty() {
        report(name, schema, table_conflicts, conflicts);
        return Ok(None);
    }
    // Secondary indexes: ours, edited with the rows the merge changed in ours.
    let changes = row_changes(&om, &merged).map_err(tree_err)?;
    let index_roots = address_map_entries(&OverlayIo(store), &ours.secondary)?;
    let mut new_roots: Vec<(Vec<u8>, Option<Address>)> = Vec::new();
    // Keys that are not copies of row fields (a prefix cut, a VIRTUAL column's value) are
    // made as the row writer makes them (`rows`).
    for (i, index) in schema.indexes.iter().enumerate() {
        if index.spatial || index.fulltext {
            return Err(DoltError::Unsupported(format!(
                "merging index {:?} of {name:?} (spatial or full-text)",
                index.name
            )));
        }
        let virtual_prefix = index.key_columns.iter().enumerate().any(|(k, &c)| {
            schema.columns[c].virtual_ && index.prefix_lengths.get(k).is_some_and(|&p| p > 0)
        });
        if virtual_prefix && !changes.is_empty() {
            // Dolt's merge puts such keys uncut (and leaves the old cut ones), so its index no
            // longer finds the rows: neither its bytes nor a correct index can be given here.
            return Err(DoltError::Unsupported(format!(
                "merging rows of {name:?} under index {:?}, a prefix of a VIRTUAL column \
                 (Dolt's merge leaves that index inconsistent)",
                index.name
            )));
        }
        let computed = index.prefix_lengths.iter().any(|&p| p != 0)
            || index
                .key_columns
                .iter()
                .any(|&c| schema.columns[c].virtual_);

        let root = index_roots
            .iter()
            .find(|(n, _)| n.as_slice() == index.name.as_bytes())
            .map(|(_, a)| *a)
            .ok_or_else(|| DoltError::NotFound(format!("index {:?} of {name:?}", index.name)))?;
        let its = index_schema(schema, index)?;
        let empty = TupleBuilder::new(its.value.clone())
            .build()
            .map_err(|e| encode(format!("the empty value of index {:?}", index.name), e))?
            .as_bytes()
            .to_vec();
        let key_of = |key: &[u8], v: &[u8]| {
            if computed {
                rows.index_key(store, i, key, v)
            } else {
                index_key(schema, &its.key, &index.key_columns, key, v)
            }
        };
        let mut edits: Vec<(Vec<u8>, Option<Vec<u8>>)> = Vec::new();
        for (key, from, to) in &changes {
            let old = from.as_ref().map(|v| key_of(key, v)).transpose()?;
            // The merged row's own key bytes (a change the merge made to a key equal under
            // its collation keeps the key Dolt's merge wrote, which may be spelled
            // differently from ours).
            let new_key = match to {
                Some(_) => merged_key(&merged, key).map_err(tree_err)?,
                None => key.clone(),
            };
            let new = to.as_ref().map(|v| key_of(&new_key, v)).transpose()?;
            if old == new {
                continue;
            }
            if let Some(o) = old {
                edits.push((o, None));
            }
            if let Some(n) = new {
                edits.push((n, Some(empty.clone())));
            }
        }
        if edits.is_empty() {
            continue;
        }
        // One edit per key as the index orders keys (a respelling under a `_ci` collation is
        // the same key): deletes before puts, a put wins, and its bytes replace the old.
        edits.sort_by(|a, b| {
            its.key
                .compare(&a.0, &b.0)
                .then(a.1.is_some().cmp(&b.1.is_some()))
        });
        let mut by_key: Vec<(Vec<u8>, Option<Vec<u8>>)> = Vec::with_capacity(edits.len());
        for e in edits {
            match by_key.last_mut() {
                Some(last) if its.key.compare(&last.0, &e.0).is_eq() => *last = e,
                _ => by_key.push(e),
            }
        }
        let map = Map::new(store, root, its.clone());
        let edited = map
            .apply(by_key.iter().map(|(k, v)| (&k[..], v.as_deref())))
            .map_err(tree_err)?;
        if index.unique {
            check_unique(&edited, index.columns.len(), name, &index.name, conflicts)?;
        }
        new_roots.push((index.name.as_bytes().to_vec(), Some(edited.root())));
    }
    if conflicts.iter().any(|c| c.table == name) {
        return Ok(None);
    }
    let primary = store
        .get(&merged.root())?
        .ok_or(DoltError::MissingChunk(merged.root()))?
        .to_vec();
    let changes: Vec<(&[u8], Option<Address>)> =
        new_roots.iter().map(|(k, a)| (k.as_slice(), *a)).collect();
    let mut io = OverlayIo(store);
    let secondary = edit_address_map(&mut io, &ours.secondary, &changes)?;
    let zero = [0u8; 20];
    let chunk = TableFields {
        schema: ours.schema_address.0,
        primary_index: &primary,
        secondary_indexes: &secondary,
        auto_increment_value: ours.auto_increment.max(theirs.auto_increment),
        conflicts: prollystore_format::message::objects::ConflictsFields {
            data: &zero,
            our_schema: &zero,
            their_schema: &zero,
            ancestor_schema: &zero,
        },
        violations: &zero,
        artifacts: &zero,
    }
    .encode()
    .map_err(|e| encode(format!("table {name:?}"), e))?;
    Ok(Some(chunk))
}

impl StoreWriter {
    /// `dolt merge BRANCH` into the current branch (`branch` may be any commit spec). The
    /// current branch must have no uncommitted changes. Fast-forwards when possible (the
    /// working set follows); otherwise merges three-way and commits with `meta`, the current
    /// head first among the parents. Conflicts (with [`ConflictChoice::Stop`]) write nothing.
    pub(crate) fn merge(
        &mut self,
        branch: &str,
        meta: &MergeMeta<'_>,
        choice: ConflictChoice,
        ws_meta: &WorkingSetMeta<'_>,
    ) -> Result<MergeOutcome> {
        let current = self.current_branch()?;
        let ours = self.head_of(&current)?;
        let theirs = self.resolve_commit(branch)?;
        let roots = self.working_roots(&current)?;
        let ours_root = self.commit_root(ours)?;
        if roots.working != ours_root || roots.staged != ours_root || roots.merging {
            return Err(DoltError::Refused(format!(
                "branch {current:?} has uncommitted changes; commit them before merging"
            )));
        }
        let base = merge_base(self, ours, theirs)?.ok_or_else(|| {
            DoltError::Refused(format!("{current:?} and {branch:?} share no history"))
        })?;
        if base == theirs {
            return Ok(MergeOutcome::UpToDate);
        }
        let theirs_root = self.commit_root(theirs)?;
        if base == ours {
            let ws = self.put_working_set(theirs_root, ws_meta)?;
            self.update_datasets(
                &[
                    (&head_ref(&current), Some(theirs)),
                    (&working_set_ref(&current), Some(ws)),
                ],
                ws_meta.timestamp_secs,
            )?;
            return Ok(MergeOutcome::FastForward { commit: theirs });
        }
        let base_root = self.commit_root(base)?;
        let (new_root_chunk, conflicts) = {
            let store = Overlay {
                base: self.database().source(),
                new: self.session(),
                engine: self.database().engine(),
            };
            merge_roots(&store, base_root, ours_root, theirs_root, choice)?
        };
        if !conflicts.is_empty() {
            return Ok(MergeOutcome::Conflicts(conflicts));
        }
        // Write what the merged root reaches from the session store to the journal.
        let root = self.session().put(&new_root_chunk)?;
        self.write_reachable(root)?;
        let commit = NewCommit {
            root,
            parents: vec![ours, theirs],
            author: meta.author,
            committer: meta.committer,
            message: meta.message,
            author_millis: meta.author_millis,
            committer_millis: meta.committer_millis,
        };
        let address = self.commit_to_branch(&current, &commit, ws_meta, ws_meta.timestamp_secs)?;
        Ok(MergeOutcome::Merged {
            commit: address,
            root,
        })
    }
}

/// Merges three root values' table maps; returns the merged root value's bytes (its new
/// chunks in the overlay's memory) and the conflicts.
fn merge_roots(
    store: &Overlay<'_>,
    base: Address,
    ours: Address,
    theirs: Address,
    choice: ConflictChoice,
) -> Result<(Vec<u8>, Vec<MergeConflict>)> {
    let io = OverlayIo(store);
    let read = |a: Address| -> Result<RootParts> {
        let chunk = io.chunk(&a)?;
        let rv = RootValueFields::decode(&chunk).map_err(|e| bad_chunk(a, e.to_string()))?;
        let tables = address_map_entries(&io, rv.tables)?.into_iter().collect();
        Ok((chunk.to_vec(), tables, rv.foreign_key_addr))
    };
    let (_, b, bfk) = read(base)?;
    let (ours_chunk, o, ofk) = read(ours)?;
    let (_, t, tfk) = read(theirs)?;
    let mut conflicts = Vec::new();
    let mut changes: Vec<(Vec<u8>, Option<Address>)> = Vec::new();
    let names: std::collections::BTreeSet<&Vec<u8>> =
        b.keys().chain(o.keys()).chain(t.keys()).collect();
    for name in names {
        let (bv, ov, tv) = (b.get(name), o.get(name), t.get(name));
        let text = String::from_utf8_lossy(name).into_owned();
        if bv == tv {
            continue;
        }
        if ov == tv {
            // Identical changes merge as they are, except in a keyless table, where Dolt
            // takes every row both sides changed as a conflict.
            let keyless_both_changed = match (bv, ov) {
                (Some(_), Some(&oa)) => read_table(&io, oa)?.schema.keyless,
                _ => false,
            };
            if !keyless_both_changed || choice != ConflictChoice::Stop {
                continue;
            }
        }
        if bv == ov {
            changes.push((name.clone(), tv.copied()));
            continue;
        }
        match (bv, ov, tv) {
            (Some(&ba), Some(&oa), Some(&ta)) => {
                let (bs, os, ts) = (
                    read_table(&io, ba)?,
                    read_table(&io, oa)?,
                    read_table(&io, ta)?,
                );
                let sides = Sides {
                    base: ba,
                    ours: oa,
                    theirs: ta,
                };
                if let Some(chunk) = merge_table(
                    store,
                    &text,
                    &sides,
                    (&bs, &os, &ts),
                    choice,
                    &mut conflicts,
                )? {
                    let a = store.put(&chunk)?;
                    changes.push((name.clone(), Some(a)));
                }
            }
            _ => conflicts.push(MergeConflict {
                table: text,
                key: Vec::new(),
                reason: "added, dropped or re-created on both sides differently".into(),
            }),
        }
    }
    if ofk != tfk && bfk != tfk && bfk != ofk {
        conflicts.push(MergeConflict {
            table: String::new(),
            key: Vec::new(),
            reason: "both sides changed foreign keys".into(),
        });
    }
    if !conflicts.is_empty() {
        return Ok((Vec::new(), conflicts));
    }
    let rv = RootValueFields::decode(&ours_chunk).map_err(|e| bad_chunk(ours, e.to_string()))?;
    let edits: Vec<(&[u8], Option<Address>)> =
        changes.iter().map(|(k, a)| (k.as_slice(), *a)).collect();
    let mut put_io = OverlayIo(store);
    let tables = edit_address_map(&mut put_io, rv.tables, &edits)?;
    let fk = if bfk == ofk { tfk } else { ofk };
    let chunk = RootValueFields {
        feature_version: rv.feature_version,
        tables: &tables,
        foreign_key_addr: fk,
        collation: rv.collation,
        schemas: rv.schemas.clone(),
    }
    .encode()
    .map_err(|e| encode("root value", e))?;
    Ok((chunk, conflicts))
}
