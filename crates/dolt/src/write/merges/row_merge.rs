//! The row-level parts of a three-way table merge that the same-schema merge (`merge`), the
//! schema-changing one (`schema_merge_rows`) and the foreign-key checks (`foreign_keys`)
//! share: the rows that changed between two maps, conflicts and how they are reported, the
//! unique-index check, and the overlay as chunk I/O. Kept apart so that none of those
//! modules needs another's internals.

use prollystore::tuples::TupleSchema;
use prollystore::{DiffEntry, Map};
use prollystore_format::tuple::{Tuple, Value};

use crate::codec::{value_of, Kind};
use crate::error::Result;
use crate::schema::Schema;
use crate::sql_value::SqlValue;
use crate::write::storage::overlay::Overlay;

/// What to do with rows both sides changed in ways that do not merge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) enum ConflictChoice {
    /// Stop: write nothing and report every conflict (Dolt's default).
    #[default]
    Stop,
    /// Keep the current branch's row.
    Ours,
    /// Take the merged branch's row.
    Theirs,
}

/// One conflict that stopped a merge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MergeConflict {
    /// The table.
    pub table: String,
    /// The row's primary key, one text per key column (empty for a table-level conflict).
    pub key: Vec<String>,
    /// What conflicts.
    pub reason: String,
}

/// A primary key's fields as `dolt sql` prints them (text quoted), for messages; `?` for a
/// field no value shows (a keyless table's row hash).
pub(crate) fn key_text(schema: &Schema, key: &[u8]) -> Vec<String> {
    let t = Tuple::new_unverified(key);
    let desc = schema.key_desc();
    schema
        .key_columns
        .iter()
        .enumerate()
        .map(|(i, &c)| match (desc.value(t, i), schema.columns.get(c)) {
            (Ok(None), _) => "NULL".into(),
            (Ok(Some(v)), Some(col)) => {
                let bytes = match &v {
                    Value::String(s) => Some(s.as_bytes()),
                    Value::Bytes(b) => Some(*b),
                    _ => None,
                };
                match value_of(col, &Kind::of_column(col), v, bytes) {
                    Ok(SqlValue::Text(s)) => format!("'{s}'"),
                    Ok(v) => v.to_string(),
                    Err(_) => "?".into(),
                }
            }
            _ => "?".into(),
        })
        .collect()
}

/// A changed primary-index row: key, old value (`None`: added), new value (`None`: removed).
pub(crate) type RowChange = (Vec<u8>, Option<Vec<u8>>, Option<Vec<u8>>);

/// Every row that differs from map `from` to map `to`, owned.
pub(crate) fn row_changes(
    from: &Map<'_, Overlay<'_>, TupleSchema>,
    to: &Map<'_, Overlay<'_>, TupleSchema>,
) -> std::result::Result<Vec<RowChange>, prollystore::TreeError> {
    from.diff(to)?
        .map(|e| {
            e.map(|e| match e {
                DiffEntry::Added { key, to } => (key.to_vec(), None, Some(to.to_vec())),
                DiffEntry::Removed { key, from } => (key.to_vec(), Some(from.to_vec()), None),
                DiffEntry::Modified { key, from, to } => {
                    (key.to_vec(), Some(from.to_vec()), Some(to.to_vec()))
                }
            })
        })
        .collect()
}

/// Adds one table's conflicting keys to the merge's report.
pub(crate) fn report(
    name: &str,
    schema: &Schema,
    keys: Vec<(Vec<u8>, &str)>,
    conflicts: &mut Vec<MergeConflict>,
) {
    conflicts.extend(keys.into_iter().map(|(k, reason)| MergeConflict {
        table: name.to_string(),
        key: key_text(schema, &k),
        reason: reason.into(),
    }));
}

/// Reports unique-index keys whose indexed columns (the first `n` fields, none NULL) occur
/// more than once after the merge: equal as the index compares them, so `'b'` and `'B'`
/// under a `_ci` collation (Dolt: "duplicate unique key given").
pub(crate) fn check_unique(
    index: &Map<'_, Overlay<'_>, TupleSchema>,
    n: usize,
    table: &str,
    index_name: &str,
    conflicts: &mut Vec<MergeConflict>,
) -> Result<()> {
    let desc = &index.schema().key;
    let mut prev: Option<Vec<u8>> = None;
    for item in index.iter()? {
        let (k, _) = item?;
        let t = Tuple::new_unverified(k);
        if !(0..n).all(|i| t.field(i).is_some()) {
            prev = None;
            continue;
        }
        if prev
            .as_deref()
            .is_some_and(|p| desc.compare_prefix(p, k, n).is_eq())
        {
            conflicts.push(MergeConflict {
                table: table.to_string(),
                key: Vec::new(),
                reason: format!("the merge breaks unique index {index_name:?}"),
            });
            return Ok(());
        }
        prev = Some(k.to_vec());
    }
    Ok(())
}

pub(crate) use crate::write::storage::overlay::OverlayIo;
