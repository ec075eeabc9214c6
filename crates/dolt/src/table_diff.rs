//! Diffs between two states of a database (commits, branches, tags, `WORKING`, `STAGED`): the
//! rows added, removed and modified in one table — the rows and change kinds Dolt's
//! `dolt_diff(from, to, table)` table function returns — and which tables were added, dropped
//! or changed (Dolt's `dolt_diff_summary(from, to)`).
//!
//! Rows come from the prolly map diff of the two clustered indexes, so the cost follows the
//! size of the change, not of the table: subtrees both states share are never loaded.

use std::cmp::Ordering;
use std::io::Write;
use std::ops::Bound;

use prollystore::tuples::TupleSchema;
use prollystore::{Diff, DiffEntry, Map, TreeError, TreeSchema};
use prollystore_format::message::Node;
use prollystore_format::Encoding;

use crate::chunks::DoltChunkSource;
use crate::csv_field::write_csv_field;
use crate::db::{Database, RootValue, State, Table};
use crate::error::{bad_chunk, malformed, DoltError, Result};
use crate::schema::{Schema, SqlType};
use crate::sql_value::SqlValue;
use crate::table_rows::RowDecoder;
use crate::value_text;

/// One row as values of its table's visible columns (`None` for NULL).
pub type Row = Vec<Option<SqlValue>>;

/// What happened to a row (Dolt's `diff_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChangeKind {
    /// Only in the `to` state.
    Added,
    /// Only in the `from` state.
    Removed,
    /// In both, with different values.
    Modified,
}

impl ChangeKind {
    /// The `diff_type` text Dolt prints: `added`, `removed` or `modified`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Added => "added",
            ChangeKind::Removed => "removed",
            ChangeKind::Modified => "modified",
        }
    }
}

/// One row of `dolt_diff(from, to, table)`.
#[derive(Clone, Debug, PartialEq)]
pub struct RowChange {
    /// Added, removed or modified.
    pub kind: ChangeKind,
    /// The row in the `from` state (`None` when added).
    pub from: Option<Row>,
    /// The row in the `to` state (`None` when removed).
    pub to: Option<Row>,
}

/// One side of a diff: the spec as given, the table in that state (if it exists there) and the
/// date Dolt shows for it.
#[derive(Clone, Debug)]
pub struct DiffSide {
    /// The revision as given (`dolt_diff` prints it as `from_commit` / `to_commit`).
    pub spec: String,
    /// The table in this state, `None` if it does not exist there.
    pub table: Option<Table>,
    /// The commit's committer date in Unix microseconds; for `WORKING` and `STAGED`, which
    /// are not commits, the time the diff was made (as Dolt does).
    pub date_micros: i64,
}

/// A table's diff between two states, ready to iterate ([`TableDiff::rows`]).
pub struct TableDiff<'d> {
    db: &'d Database,
    name: String,
    from: DiffSide,
    to: DiffSide,
    from_map: Option<Map<'d, DoltChunkSource, DiffSchema>>,
    to_map: Option<Map<'d, DoltChunkSource, DiffSchema>>,
    /// The keys the rows are restricted to ([`TableDiff::between`]): after the first
    /// (exclusive), up to the second (inclusive); `None`: no bound.
    keys: (Option<Vec<u8>>, Option<Vec<u8>>),
}

impl std::fmt::Debug for TableDiff<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableDiff")
            .field("name", &self.name)
            .field("from", &self.from)
            .field("to", &self.to)
            .finish()
    }
}

impl<'d> TableDiff<'d> {
    /// The diff of table `name` (matched as Dolt does: exactly, else ignoring ASCII case) from
    /// revision `from` to revision `to`. Revisions are anything [`Database::root_at`] takes
    /// in the committed state: branch, tag, commit hash, `HEAD`, `~N`/`^` ancestry, and
    /// `WORKING` / `STAGED` for the current branch's uncommitted states. Fails when the table
    /// is in neither state.
    pub fn new(db: &'d Database, from: &str, to: &str, name: &str) -> Result<TableDiff<'d>> {
        let from_side = DiffSide::resolve(db, from, name)?;
        let to_side = DiffSide::resolve(db, to, name)?;
        if from_side.table.is_none() && to_side.table.is_none() {
            return Err(DoltError::NotFound(format!(
                "table {name:?} in {from:?} and in {to:?}"
            )));
        }
        TableDiff::from_sides(db, from_side, to_side)
    }

    /// The diff between two sides already resolved (for example tables opened with
    /// [`Database::table_at`], unmodified: each table's primary-index root is found again by its
    /// table chunk's address); at least one side must have the table.
    pub fn from_sides(db: &'d Database, from: DiffSide, to: DiffSide) -> Result<TableDiff<'d>> {
        let name = match (&from.table, &to.table) {
            (_, Some(t)) | (Some(t), None) => t.name.clone(),
            (None, None) => {
                return Err(DoltError::NotFound(format!(
                    "the table in {:?} and in {:?} (neither side has one)",
                    from.spec, to.spec
                )))
            }
        };
        let mut diff = TableDiff {
            db,
            name,
            from,
            to,
            from_map: None,
            to_map: None,
            keys: (None, None),
        };
        if !diff.primary_key_changed() {
            // Keys in both states order alike (same key columns and types); Dolt orders
            // the walk by the `from` side's key order.
            let order = diff
                .from
                .table
                .as_ref()
                .or(diff.to.table.as_ref())
                .map(|t| t.primary_order(db))
                .transpose()?;
            let compare_values = match (&diff.from.table, &diff.to.table) {
                (Some(f), Some(t)) => value_types(&f.schema) == value_types(&t.schema),
                _ => false,
            };
            if let Some(order) = order {
                let schema = DiffSchema {
                    tuples: order,
                    compare_values,
                };
                let map = |t: &Table| {
                    let root = db.source().pin_embedded(t.address, &t.primary_index);
                    Map::new(db.source(), root, schema.clone())
                };
                diff.from_map = diff.from.table.as_ref().map(map);
                diff.to_map = diff.to.table.as_ref().map(map);
            }
        }
        Ok(diff)
    }

    /// The same diff restricted to the rows whose stored keys come after `after` (exclusive)
    /// and up to `through` (inclusive), in the table's key order (`None`: unbounded): what
    /// [`TableDiff::rows`] gives for those keys, in the same order, at the cost of that
    /// range ([`prollystore::Map::diff_range`]). Bounds after a leaf's last key are what a
    /// diff part holds ([`crate::diff_parts`]).
    pub fn between(mut self, after: Option<Vec<u8>>, through: Option<Vec<u8>>) -> TableDiff<'d> {
        self.keys = (after, through);
        self
    }

    /// Where the diff's work is, cut into at most `n` pieces of nearly equal work: for each
    /// piece its last key (inclusive; `None` for the last piece, which runs to the end) and
    /// the stored rows it compares. With both sides, the work is the rows of the leaves the
    /// two states do not share, found from the internal nodes only
    /// ([`prollystore::Map::changed_leaves`]) and cut at leaf ends; with one side (a table
    /// added or dropped) it is every row, cut at exact positions (one descent each). At
    /// least one piece; fails as [`TableDiff::rows`] does when the primary key changed.
    pub fn cuts(&self, n: usize) -> Result<Vec<(Option<Vec<u8>>, u64)>> {
        self.refuse_changed_key()?;
        let n = n.max(1) as u64;
        let tree = |e| self.tree_error(e);
        let (leaves, total): (Vec<(&[u8], u64)>, u64) = match (&self.from_map, &self.to_map) {
            (Some(f), Some(t)) => {
                let mut leaves = Vec::new();
                for leaf in f.changed_leaves(t).map_err(tree)? {
                    let leaf = leaf.map_err(tree)?;
                    leaves.push((leaf.last_key, leaf.from_rows + leaf.to_rows));
                }
                let total = leaves.iter().map(|l| l.1).sum();
                (leaves, total)
            }
            (Some(m), None) | (None, Some(m)) => {
                // Every row changes: cut at positions, exactly.
                let rows = m.count().map_err(tree)?;
                let count = n.min(rows).max(1);
                let bound = |i: u64| (i as u128 * rows as u128 / count as u128) as u64;
                let mut cuts = Vec::with_capacity(count as usize);
                for i in 0..count {
                    let end = bound(i + 1);
                    let last = if i + 1 == count {
                        None
                    } else {
                        let row = m.get_ordinal(end - 1).map_err(tree)?;
                        row.map(|(k, _)| k.to_vec())
                    };
                    cuts.push((last, end - bound(i)));
                }
                return Ok(cuts);
            }
            (None, None) => (Vec::new(), 0),
        };
        let mut cuts = Vec::new();
        let (mut done, mut piece) = (0u64, 0u64);
        for (i, (key, rows)) in leaves.iter().enumerate() {
            done += rows;
            piece += rows;
            let parts = cuts.len() as u64 + 1;
            if i + 1 < leaves.len()
                && parts < n
                && done as u128 * n as u128 >= parts as u128 * total as u128
            {
                cuts.push((Some(key.to_vec()), piece));
                piece = 0;
            }
        }
        cuts.push((None, piece));
        Ok(cuts)
    }

    /// True if `key` is a stored key of the `from` or the `to` side's rows (a part's boundary
    /// keys are: each is a leaf's last key on one side).
    pub(crate) fn holds_key(&self, key: &[u8]) -> Result<bool> {
        for map in [&self.from_map, &self.to_map].into_iter().flatten() {
            if map.get(key).map_err(|e| self.tree_error(e))?.is_some() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The table's name (as stored in the `to` state, else the `from` state).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The `from` side.
    pub fn from(&self) -> &DiffSide {
        &self.from
    }

    /// The `to` side.
    pub fn to(&self) -> &DiffSide {
        &self.to
    }

    /// True if the table's schema differs between the states (columns, types, keys, indexes,
    /// constraints, collation or comment), or the table exists in only one of them.
    pub fn schema_changed(&self) -> bool {
        match (&self.from.table, &self.to.table) {
            (Some(f), Some(t)) => f.schema_address != t.schema_address,
            _ => true,
        }
    }

    /// True if the primary keys of the two states cannot be compared (different key columns,
    /// by tag, or different key types), as Dolt decides for `dolt diff`'s "Primary key sets
    /// differ between revisions". There is then no row diff: [`TableDiff::rows`] fails.
    pub fn primary_key_changed(&self) -> bool {
        let (Some(f), Some(t)) = (&self.from.table, &self.to.table) else {
            return false;
        };
        primary_keys_differ(&f.schema, &t.schema)
    }

    /// Visible column names of the `from` side (the `to` side's when the table does not exist
    /// in `from`), as `dolt_diff` names its `from_…` columns without the prefix.
    pub fn from_columns(&self) -> Vec<String> {
        columns(self.from.table.as_ref().or(self.to.table.as_ref()))
    }

    /// Visible column names of the `to` side (the `from` side's when the table does not exist
    /// in `to`).
    pub fn to_columns(&self) -> Vec<String> {
        columns(self.to.table.as_ref().or(self.from.table.as_ref()))
    }

    /// The row changes in key order (for keyless tables, the stored row-hash order), one item
    /// per row `dolt_diff` returns: a keyless row whose count changed by n comes n times, as
    /// added or removed. Fails when the primary key changed ([`TableDiff::primary_key_changed`]).
    pub fn rows(&self) -> Result<RowChanges<'_, 'd>> {
        self.refuse_changed_key()?;
        let lo = self
            .keys
            .0
            .as_deref()
            .map_or(Bound::Unbounded, Bound::Excluded);
        let hi = self
            .keys
            .1
            .as_deref()
            .map_or(Bound::Unbounded, Bound::Included);
        let tree = |e| self.tree_error(e);
        let walk = match (&self.from_map, &self.to_map) {
            (Some(f), Some(t)) if self.keys == (None, None) => {
                Walk::Diff(Box::new(f.diff(t).map_err(tree)?))
            }
            (Some(f), Some(t)) => Walk::Diff(Box::new(f.diff_range(t, lo, hi).map_err(tree)?)),
            (Some(f), None) => Walk::All(
                ChangeKind::Removed,
                Box::new(f.range(lo, hi).map_err(tree)?),
            ),
            (None, Some(t)) => {
                Walk::All(ChangeKind::Added, Box::new(t.range(lo, hi).map_err(tree)?))
            }
            (None, None) => Walk::Done,
        };
        let keyless = [&self.from.table, &self.to.table]
            .iter()
            .all(|t| t.as_ref().is_some_and(|t| t.schema.keyless));
        Ok(RowChanges {
            diff: self,
            walk,
            from_decoder: decoder_for(self.db, &self.from.table)?,
            to_decoder: decoder_for(self.db, &self.to.table)?,
            keyless,
            pending: None,
        })
    }

    fn refuse_changed_key(&self) -> Result<()> {
        if self.primary_key_changed() {
            return Err(DoltError::Refused(format!(
                "table {:?}: the primary key differs between {} and {}, so rows cannot be matched",
                self.name, self.from.spec, self.to.spec
            )));
        }
        Ok(())
    }

    /// Writes the diff as `dolt sql -r csv -q "select * from dolt_diff('FROM','TO','T')"`
    /// does: the header, then one line per row change.
    pub fn write_csv(&self, out: &mut dyn Write) -> Result<()> {
        let io = output_error;
        let rows = self.rows()?;
        let mut line = Vec::new();
        let header = |prefix: &str, cols: &[String], line: &mut Vec<u8>| {
            for c in cols {
                let name = format!("{prefix}{c}");
                write_csv_field(Some(name.as_bytes()), line);
                line.push(b',');
            }
            line.extend_from_slice(format!("{prefix}commit,{prefix}commit_date,").as_bytes());
        };
        let (to_cols, from_cols) = (self.to_columns(), self.from_columns());
        header("to_", &to_cols, &mut line);
        header("from_", &from_cols, &mut line);
        line.extend_from_slice(b"diff_type\n");
        out.write_all(&line).map_err(io)?;
        let side_text = |s: &DiffSide| {
            let mut t = Vec::new();
            write_csv_field(Some(s.spec.as_bytes()), &mut t);
            t.push(b',');
            value_text::write_datetime(&mut t, s.date_micros, 6);
            t.push(b',');
            t
        };
        let (to_side, from_side) = (side_text(&self.to), side_text(&self.from));
        let mut field = Vec::new();
        let mut values = |row: &Option<Row>, n: usize, line: &mut Vec<u8>| {
            for i in 0..n {
                let v = row.as_ref().and_then(|r| r.get(i)).and_then(Option::as_ref);
                match v {
                    Some(v) => {
                        field.clear();
                        v.csv_bytes(&mut field);
                        write_csv_field(Some(&field), line);
                    }
                    None => write_csv_field(None, line),
                }
                line.push(b',');
            }
        };
        for change in rows {
            let change = change?;
            line.clear();
            values(&change.to, to_cols.len(), &mut line);
            line.extend_from_slice(&to_side);
            values(&change.from, from_cols.len(), &mut line);
            line.extend_from_slice(&from_side);
            line.extend_from_slice(change.kind.as_str().as_bytes());
            line.push(b'\n');
            out.write_all(&line).map_err(io)?;
        }
        Ok(())
    }

    fn tree_error(&self, e: TreeError) -> DoltError {
        // Store failures keep their own variant (a missing chunk, an I/O error, damage).
        let e = match DoltError::from(e) {
            DoltError::Tree(e) => e,
            other => return other,
        };
        let address = self
            .to
            .table
            .as_ref()
            .or(self.from.table.as_ref())
            .map(|t| t.address)
            .unwrap_or_default();
        bad_chunk(address, format!("diff of table {:?}: {e}", self.name))
    }
}

/// True if rows of the two schemas cannot be matched by key: one is keyless and the other is
/// not, or the key columns differ by tag or type.
fn primary_keys_differ(f: &Schema, t: &Schema) -> bool {
    if f.keyless || t.keyless {
        return f.keyless != t.keyless;
    }
    let key = |s: &Schema| -> Vec<(u64, SqlType)> {
        s.key_columns
            .iter()
            .filter_map(|&i| s.columns.get(i))
            .map(|c| (c.tag, c.sql_type.clone()))
            .collect()
    };
    key(f) != key(t)
}

/// The row decoder of a side's table, if it has one.
fn decoder_for<'t>(db: &Database, table: &'t Option<Table>) -> Result<Option<RowDecoder<'t>>> {
    table
        .as_ref()
        .map(|t| RowDecoder::shared(db, t))
        .transpose()
}

impl DiffSide {
    /// Side `spec` of a diff of table `name` (see [`TableDiff::new`]); its `table` is `None`
    /// when the state has no such table.
    pub fn resolve(db: &Database, spec: &str, name: &str) -> Result<DiffSide> {
        let (root, date_micros) = match spec {
            "WORKING" | "STAGED" => (db.root_at(spec, State::Committed)?, now_micros()),
            _ => {
                let commit = db.commit(db.resolve_revision(spec)?)?;
                (
                    db.root_value(commit.root)?,
                    commit_micros(commit.timestamp_millis),
                )
            }
        };
        DiffSide::in_root(db, spec, &root, date_micros, name)
    }

    /// Side `spec` of a diff of table `name` whose root value and date are already known.
    pub fn in_root(
        db: &Database,
        spec: &str,
        root: &RootValue,
        date_micros: i64,
        name: &str,
    ) -> Result<DiffSide> {
        let table = match table_name(root, name) {
            Some(stored) => Some(db.table(root, stored)?),
            None => None,
        };
        Ok(DiffSide {
            spec: spec.to_string(),
            table,
            date_micros,
        })
    }
}

/// A commit's date as `dolt_diff` shows it: Unix microseconds.
pub(crate) fn commit_micros(timestamp_millis: u64) -> i64 {
    let millis = i64::try_from(timestamp_millis).unwrap_or(i64::MAX / 1000);
    millis.saturating_mul(1000)
}

/// Now, in Unix microseconds: the date of a `WORKING` or `STAGED` side.
pub(crate) fn now_micros() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// The stored name of table `name` in `root`: exact, else ignoring ASCII case (SQL names).
fn table_name<'r>(root: &'r RootValue, name: &str) -> Option<&'r str> {
    let names = || root.tables.iter().map(|(n, _)| n.as_str());
    names()
        .find(|n| *n == name)
        .or_else(|| names().find(|n| n.eq_ignore_ascii_case(name)))
}

fn columns(table: Option<&Table>) -> Vec<String> {
    let Some(t) = table else { return Vec::new() };
    t.schema
        .visible_columns()
        .into_iter()
        .filter_map(|i| t.schema.columns.get(i))
        .map(|c| c.name.clone())
        .collect()
}

/// The value tuple's field types: Dolt hides modified rows whose values compare equal only
/// when both states store values alike.
fn value_types(s: &Schema) -> Vec<Encoding> {
    s.value_columns
        .iter()
        .filter_map(|&i| s.columns.get(i))
        .map(|c| c.encoding)
        .collect()
}

/// The tuple schema a diff walks with: keys ordered as the table orders them; two different
/// value byte strings count as one value only when both states store values alike
/// (`compare_values`), as Dolt's map diff decides.
#[derive(Clone, Debug)]
struct DiffSchema {
    tuples: TupleSchema,
    compare_values: bool,
}

impl TreeSchema for DiffSchema {
    #[inline]
    fn compare_keys(&self, a: &[u8], b: &[u8]) -> Ordering {
        self.tuples.compare_keys(a, b)
    }
    fn values_have_addresses(&self) -> bool {
        self.tuples.values_have_addresses()
    }
    fn push_value_address_offsets(&self, value: &[u8], base: usize, out: &mut Vec<u16>) {
        self.tuples.push_value_address_offsets(value, base, out)
    }
    fn values_equivalent(&self, a: &[u8], b: &[u8]) -> bool {
        self.compare_values && self.tuples.values_equivalent(a, b)
    }
    #[inline]
    fn lower_bound(&self, node: &Node<'_>, key: &[u8]) -> usize {
        self.tuples.lower_bound(node, key)
    }
    #[inline]
    fn lower_bound_within(
        &self,
        node: &Node<'_>,
        key: &[u8],
        after: Option<&[u8]>,
        last: Option<&[u8]>,
    ) -> usize {
        self.tuples.lower_bound_within(node, key, after, last)
    }
}

/// What a [`RowChanges`] walks.
enum Walk<'a, 'd> {
    /// Both states have the table: the map diff.
    Diff(Box<Diff<'d, 'a, DoltChunkSource, DiffSchema>>),
    /// Only one state has it: every row, as this kind.
    All(
        ChangeKind,
        // Boxed: a map iterator holds a cursor (over a kilobyte), a diff only a pointer.
        Box<prollystore::map::Iter<'d, 'a, DoltChunkSource, DiffSchema>>,
    ),
    /// Nothing to walk.
    Done,
}

/// Iterator over a [`TableDiff`]'s row changes.
pub struct RowChanges<'a, 'd> {
    diff: &'a TableDiff<'d>,
    walk: Walk<'a, 'd>,
    from_decoder: Option<RowDecoder<'a>>,
    to_decoder: Option<RowDecoder<'a>>,
    keyless: bool,
    /// A change still to be returned `n` more times (keyless rows).
    pending: Option<(RowChange, u64)>,
}

impl std::fmt::Debug for RowChanges<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowChanges")
            .field("table", &self.diff.name)
            .finish_non_exhaustive()
    }
}

impl RowChanges<'_, '_> {
    fn decode(
        decoder: &Option<RowDecoder<'_>>,
        db: &Database,
        key: &[u8],
        value: &[u8],
    ) -> Result<(Row, u64)> {
        let decoder = decoder
            .as_ref()
            .ok_or_else(|| malformed("a row diff", "rows on a side without the table"))?;
        let mut row = Vec::new();
        let n = decoder.decode_into(db, key, value, &mut row)?;
        Ok((row, n))
    }

    /// The next stored difference as a change and the number of times Dolt lists it.
    fn next_entry(&mut self) -> Result<Option<(RowChange, u64)>> {
        let db = self.diff.db;
        let entry = match &mut self.walk {
            Walk::Done => return Ok(None),
            Walk::Diff(d) => match d.next() {
                None => None,
                Some(Err(e)) => return Err(self.diff.tree_error(e)),
                Some(Ok(e)) => Some(e),
            },
            Walk::All(kind, it) => match it.next() {
                None => None,
                Some(Err(e)) => return Err(self.diff.tree_error(e)),
                Some(Ok((key, value))) => Some(match kind {
                    ChangeKind::Removed => DiffEntry::Removed { key, from: value },
                    _ => DiffEntry::Added { key, to: value },
                }),
            },
        };
        let Some(entry) = entry else {
            self.walk = Walk::Done;
            return Ok(None);
        };
        let (kind, from, to, copies) = match entry {
            DiffEntry::Added { key, to } => {
                let (row, n) = Self::decode(&self.to_decoder, db, key, to)?;
                (ChangeKind::Added, None, Some(row), n)
            }
            DiffEntry::Removed { key, from } => {
                let (row, n) = Self::decode(&self.from_decoder, db, key, from)?;
                (ChangeKind::Removed, Some(row), None, n)
            }
            DiffEntry::Modified { key, from, to } => {
                let (f, fnum) = Self::decode(&self.from_decoder, db, key, from)?;
                let (t, tnum) = Self::decode(&self.to_decoder, db, key, to)?;
                if !self.keyless {
                    (ChangeKind::Modified, Some(f), Some(t), 1)
                } else if fnum < tnum {
                    (ChangeKind::Added, None, Some(t), tnum - fnum)
                } else {
                    (ChangeKind::Removed, Some(f), None, fnum - tnum)
                }
            }
        };
        let copies = if self.keyless { copies } else { 1 };
        Ok(Some((RowChange { kind, from, to }, copies)))
    }
}

impl Iterator for RowChanges<'_, '_> {
    type Item = Result<RowChange>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some((change, left)) = self.pending.take() {
                if left > 1 {
                    self.pending = Some((change.clone(), left - 1));
                }
                return Some(Ok(change));
            }
            match self.next_entry() {
                Ok(None) => return None,
                Ok(Some((change, copies))) => {
                    if copies > 0 {
                        self.pending = Some((change, copies));
                    }
                }
                Err(e) => {
                    self.walk = Walk::Done;
                    return Some(Err(e));
                }
            }
        }
    }
}

/// What happened to a table (`dolt_diff_summary`'s `diff_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TableChangeKind {
    /// Only in the `to` state.
    Added,
    /// Only in the `from` state.
    Dropped,
    /// In both, with different contents.
    Modified,
}

impl TableChangeKind {
    /// The text Dolt prints: `added`, `dropped` or `modified`.
    pub fn as_str(self) -> &'static str {
        match self {
            TableChangeKind::Added => "added",
            TableChangeKind::Dropped => "dropped",
            TableChangeKind::Modified => "modified",
        }
    }
}

/// How a table differs between two states (one row of Dolt's `dolt_diff_summary`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableChange {
    /// The name in the `from` state (`None` when added).
    pub from_name: Option<String>,
    /// The name in the `to` state (`None` when dropped).
    pub to_name: Option<String>,
    /// Added, dropped or modified.
    pub kind: TableChangeKind,
    /// True if rows differ (for an added or dropped table: it has rows).
    pub data_change: bool,
    /// True if the schema differs (always for added and dropped tables).
    pub schema_change: bool,
    /// True if rows cannot be matched by key between the states (see
    /// [`TableDiff::primary_key_changed`]); `dolt_diff_summary` leaves such tables out.
    pub primary_key_changed: bool,
}

/// The tables that differ from revision `from` to revision `to` (see [`TableDiff::new`] for
/// the spellings), sorted by name as `dolt_diff_summary(from, to)` lists them (which leaves out
/// those whose primary key changed: here they are marked instead). Tables are
/// matched by name (Dolt also follows renames; a renamed table shows here as dropped + added).
pub fn table_changes(db: &Database, from: &str, to: &str) -> Result<Vec<TableChange>> {
    let from_root = db.root_at(from, State::Committed)?;
    let to_root = db.root_at(to, State::Committed)?;
    let mut names: Vec<&str> = from_root
        .tables
        .iter()
        .chain(&to_root.tables)
        .map(|(n, _)| n.as_str())
        .collect();
    names.sort_unstable();
    names.dedup();
    let find =
        |root: &RootValue, name: &str| root.tables.iter().find(|(n, _)| n == name).map(|(_, a)| *a);
    let mut out = Vec::new();
    for name in names {
        let change = match (find(&from_root, name), find(&to_root, name)) {
            (Some(f), Some(t)) if f == t => continue,
            (Some(_), Some(_)) => {
                let (f, t) = (db.table(&from_root, name)?, db.table(&to_root, name)?);
                TableChange {
                    from_name: Some(name.to_string()),
                    to_name: Some(name.to_string()),
                    kind: TableChangeKind::Modified,
                    data_change: f.primary_index != t.primary_index,
                    schema_change: f.schema_address != t.schema_address,
                    primary_key_changed: primary_keys_differ(&f.schema, &t.schema),
                }
            }
            (Some(_), None) => TableChange {
                from_name: Some(name.to_string()),
                to_name: None,
                kind: TableChangeKind::Dropped,
                data_change: has_rows(&db.table(&from_root, name)?)?,
                schema_change: true,
                primary_key_changed: false,
            },
            (None, Some(_)) => TableChange {
                from_name: None,
                to_name: Some(name.to_string()),
                kind: TableChangeKind::Added,
                data_change: has_rows(&db.table(&to_root, name)?)?,
                schema_change: true,
                primary_key_changed: false,
            },
            (None, None) => continue,
        };
        out.push(change);
    }
    Ok(out)
}

/// Writes `changes` as `dolt sql -r csv -q "select * from dolt_diff_summary('FROM','TO')"`
/// does (tables whose primary key changed are left out, as Dolt leaves them out).
pub fn write_summary_csv(changes: &[TableChange], out: &mut dyn Write) -> Result<()> {
    let mut text = b"from_table_name,to_table_name,diff_type,data_change,schema_change\n".to_vec();
    for c in changes.iter().filter(|c| !c.primary_key_changed) {
        for name in [&c.from_name, &c.to_name] {
            write_csv_field(Some(name.as_deref().unwrap_or("").as_bytes()), &mut text);
            text.push(b',');
        }
        let line = format!(
            "{},{},{}\n",
            c.kind.as_str(),
            c.data_change,
            c.schema_change
        );
        text.extend_from_slice(line.as_bytes());
    }
    out.write_all(&text).map_err(output_error)
}

fn output_error(e: std::io::Error) -> DoltError {
    DoltError::Io {
        file: "output".into(),
        source: e,
    }
}

/// True if the table's clustered index holds any row (its root node's tree count).
fn has_rows(t: &Table) -> Result<bool> {
    let node = Node::verify(&t.primary_index).map_err(|e| bad_chunk(t.address, e.to_string()))?;
    Ok(node.tree_count() > 0)
}
