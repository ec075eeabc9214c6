//! Dolt tables as Arrow record batches: a whole table at a state, a primary-key range, a
//! secondary-index range, and the diff of a table between two states. Every reader owns what
//! it reads from (an `Arc<Database>` and the [`Table`]), so it is `Send + 'static` and can move
//! to another thread (Python hands it over to release the GIL).
//!
//! Batches hold `batch_rows` rows each, the last one fewer; an empty result is a stream with
//! the schema and no batch. Keyless rows come once per copy, in stored order, as
//! [`Table::rows`] gives them.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, DataType, Field, Schema as ArrowSchema, SchemaRef, TimeUnit};
use prollystore_dolt::diff_parts::DiffPart;
use prollystore_dolt::leaf_reader::{first_leaf_kept, last_leaf_kept, leaf_kept_at};
use prollystore_dolt::parts::{projection, Part};
use prollystore_dolt::schema::SqlType;
use prollystore_dolt::table_diff::{DiffSide, RowChange, RowChanges, TableDiff};
use prollystore_dolt::{Database, KeyRange, Rows, SqlValue, Table};
use self_cell::self_cell;

use crate::columns::{Builders, Extra};
use crate::dolt_scan::{Plan, Scan};
use crate::dolt_types::{arrow_field, table_schema, visible};
use crate::error::{Error, Result};
use crate::leaf_feed::LeafFeed;
use crate::read_ahead::ReadAhead;

/// Rows per batch when the caller has no preference.
pub const DEFAULT_BATCH_ROWS: usize = 65_536;

/// Most worker threads [`TableBatches::new`] starts.
const MAX_THREADS: usize = 4;

/// What a table reader reads from.
struct Source {
    db: Arc<Database>,
    table: Table,
}

self_cell!(
    /// A fast scan together with the database and table it borrows.
    struct OwnedScan {
        owner: Source,
        #[not_covariant]
        dependent: Scan,
    }
);

/// Where a table reader's rows come from.
enum RowSource {
    /// Whole-table batches made on worker threads (tables of more than one batch whose
    /// leaves are in the chunk arena).
    ReadAhead(ReadAhead, Box<Table>),
    /// Whole-table batches built from the bulk leaf reader (tables of more than one batch
    /// read for the first time).
    Leaves(LeafFeed, Box<Table>),
    /// Stored fields straight to the builders (whole scans of most tables).
    Scan(OwnedScan),
    /// The row decoder's typed values (ranges, index scans, keyless tables, virtual columns).
    Rows(OwnedRows),
}

impl RowSource {
    fn table(&self) -> &Table {
        match self {
            RowSource::ReadAhead(_, t) | RowSource::Leaves(_, t) => t,
            RowSource::Scan(s) => &s.borrow_owner().table,
            RowSource::Rows(r) => &r.borrow_owner().table,
        }
    }
}

self_cell!(
    /// A row iterator together with the database and table it borrows.
    struct OwnedRows {
        owner: Source,
        #[not_covariant]
        dependent: Rows,
    }
);

/// How a reader gives geometry values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GeometryBytes {
    /// Standard WKB, Dolt's SRID dropped: what GIS libraries read (the Arrow table in
    /// `docs/ARROW.md`).
    #[default]
    Wkb,
    /// As Dolt stores them and MySQL returns them: the SRID (four bytes, little endian), then
    /// the WKB. A column without a declared SRID may hold values of several.
    Stored,
}

/// The extra facts the builders of a table's visible columns need.
pub(crate) fn extras(table: &Table) -> Vec<Extra> {
    extras_with(table, GeometryBytes::Wkb)
}

fn extras_with(table: &Table, geometry: GeometryBytes) -> Vec<Extra> {
    visible(&table.schema)
        .map(|c| Extra {
            members: match &c.sql_type {
                SqlType::Enum { members: m, .. } => m.clone(),
                _ => Vec::new(),
            },
            wkb: geometry == GeometryBytes::Wkb && matches!(c.sql_type, SqlType::Geometry { .. }),
        })
        .collect()
}

fn check_batch_rows(batch_rows: usize) -> Result<usize> {
    if batch_rows == 0 {
        return Err(Error::Mismatch(
            "a batch must hold at least one row (batch_rows is 0)".into(),
        ));
    }
    Ok(batch_rows)
}

/// A table's rows (all, a key or index range, or the positions of a [`Part`]) as record
/// batches.
pub struct TableBatches {
    rows: RowSource,
    builders: Builders,
    batch_rows: usize,
    /// Rows returned so far (for error messages).
    row: u64,
    /// Stored entries the direct path may still read (a read by positions).
    left: Option<u64>,
    /// The visible columns read, by position, when not all (the typed-value path picks them
    /// from each row; the direct path's plan decodes only them).
    projection: Option<Vec<usize>>,
    /// A decoded row, reused (the typed-value path with a projection).
    scratch: Vec<Option<SqlValue>>,
    done: bool,
}

impl std::fmt::Debug for TableBatches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableBatches")
            .field("table", &self.rows.table().name)
            .field("batch_rows", &self.batch_rows)
            .finish_non_exhaustive()
    }
}

impl TableBatches {
    /// Every row of `table`, in primary-key order (keyless tables: stored order, each row
    /// repeated by its count), `batch_rows` rows a batch.
    pub fn new(db: Arc<Database>, table: Table, batch_rows: usize) -> Result<TableBatches> {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self::with_threads(db, table, batch_rows, threads.min(MAX_THREADS))
    }

    /// As [`TableBatches::new`], making batches on up to `threads` worker threads when the
    /// table has more than one batch of rows and its columns take the direct path (1: on the
    /// calling thread only). A table whose leaves are not in the chunk arena yet (its first or
    /// last leaf missing: a read past the keep budget kept only the first ones) is read by
    /// the CSV export's bulk leaf reader (batched reads, hashes checked on its threads; the
    /// leaves then stay in the arena); a warm one by cursors on the worker threads. Batches
    /// are the same, in the same order, either way.
    pub fn with_threads(
        db: Arc<Database>,
        table: Table,
        batch_rows: usize,
        threads: usize,
    ) -> Result<TableBatches> {
        let Some(plan) = Plan::for_table(&table) else {
            return Self::range(db, table, &KeyRange::all(), batch_rows);
        };
        let batch_rows = check_batch_rows(batch_rows)?;
        let schema = table_schema(&table.schema);
        let extras = extras(&table);
        let rows = table
            .primary_scan_map(&db)
            .count()
            .map_err(prollystore_dolt::DoltError::from)?;
        if threads > 1 && rows > batch_rows as u64 {
            let (s, e) = (schema.clone(), extras.clone());
            // Warm only if both ends are kept: a bulk pass past its keep budget kept the first
            // leaves only, and cursors would keep the rest, past the budget.
            let rows = if first_leaf_kept(&db, &table)? && last_leaf_kept(&db, &table)? {
                let workers =
                    ReadAhead::start(db, table.clone(), plan, s, e, batch_rows, rows, threads);
                RowSource::ReadAhead(workers, Box::new(table))
            } else {
                // Cold: the export's bulk reader reads and checks the leaves on its threads.
                let feed = LeafFeed::start(
                    db,
                    table.clone(),
                    0..u64::MAX,
                    plan,
                    s,
                    e,
                    batch_rows,
                    threads,
                );
                RowSource::Leaves(feed, Box::new(table))
            };
            return Ok(TableBatches {
                rows,
                builders: Builders::new(schema, &extras, 0)?,
                batch_rows,
                row: 0,
                left: None,
                projection: None,
                scratch: Vec::new(),
                done: false,
            });
        }
        let scan = OwnedScan::try_new(Source { db, table }, |s| {
            Scan::new(&s.db, &s.table, plan, 0)
        })?;
        Ok(TableBatches {
            rows: RowSource::Scan(scan),
            builders: Builders::new(schema, &extras, batch_rows.min(DEFAULT_BATCH_ROWS))?,
            batch_rows,
            row: 0,
            left: None,
            projection: None,
            scratch: Vec::new(),
            done: false,
        })
    }

    /// The rows of primary-key range `range` ([`prollystore_dolt::TableReader::scan`]).
    pub fn range(
        db: Arc<Database>,
        table: Table,
        range: &KeyRange,
        batch_rows: usize,
    ) -> Result<TableBatches> {
        Self::range_with(db, table, range, batch_rows, GeometryBytes::Wkb)
    }

    /// [`TableBatches::range`], geometry values given as `geometry` says.
    pub fn range_with(
        db: Arc<Database>,
        table: Table,
        range: &KeyRange,
        batch_rows: usize,
        geometry: GeometryBytes,
    ) -> Result<TableBatches> {
        Self::with_rows(db, table, batch_rows, geometry, |db, t| {
            t.reader(db)?.scan(range)
        })
    }

    /// The rows whose keys in secondary index `index` are in `range`, whole rows in index
    /// order ([`prollystore_dolt::TableReader::index_scan`]).
    pub fn index_range(
        db: Arc<Database>,
        table: Table,
        index: &str,
        range: &KeyRange,
        batch_rows: usize,
    ) -> Result<TableBatches> {
        Self::index_range_with(db, table, index, range, batch_rows, GeometryBytes::Wkb)
    }

    /// [`TableBatches::index_range`], geometry values given as `geometry` says.
    pub fn index_range_with(
        db: Arc<Database>,
        table: Table,
        index: &str,
        range: &KeyRange,
        batch_rows: usize,
        geometry: GeometryBytes,
    ) -> Result<TableBatches> {
        Self::with_rows(db, table, batch_rows, geometry, |db, t| {
            t.reader(db)?.index_scan(index, range)
        })
    }

    fn with_rows(
        db: Arc<Database>,
        table: Table,
        batch_rows: usize,
        geometry: GeometryBytes,
        rows: impl for<'a> FnOnce(&'a Database, &'a Table) -> prollystore_dolt::Result<Rows<'a>>,
    ) -> Result<TableBatches> {
        let batch_rows = check_batch_rows(batch_rows)?;
        let schema = table_schema(&table.schema);
        let extras = extras_with(&table, geometry);
        let rows = OwnedRows::try_new(Source { db, table }, |s| rows(&s.db, &s.table))?;
        Ok(TableBatches {
            rows: RowSource::Rows(rows),
            builders: Builders::new(schema, &extras, batch_rows.min(DEFAULT_BATCH_ROWS))?,
            batch_rows,
            row: 0,
            left: None,
            projection: None,
            scratch: Vec::new(),
            done: false,
        })
    }

    /// The rows at positions `ordinals` of the clustered index
    /// ([`prollystore_dolt::TableReader::scan_ordinals`]: keyless rows with all their copies),
    /// only the visible columns at `columns` (in that order; `None`: all), `batch_rows` a
    /// batch, on the calling thread (a distributed engine runs one part per core). On the
    /// direct path only the columns asked for are decoded.
    pub fn ordinals(
        db: Arc<Database>,
        table: Table,
        ordinals: Range<u64>,
        columns: Option<&[usize]>,
        batch_rows: usize,
    ) -> Result<TableBatches> {
        Self::ordinals_with(db, table, ordinals, columns, batch_rows, GeometryBytes::Wkb)
    }

    /// [`TableBatches::ordinals`], geometry values given as `geometry` says.
    pub fn ordinals_with(
        db: Arc<Database>,
        table: Table,
        ordinals: Range<u64>,
        columns: Option<&[usize]>,
        batch_rows: usize,
        geometry: GeometryBytes,
    ) -> Result<TableBatches> {
        let visible = visible(&table.schema).count();
        if let Some(&c) = columns.and_then(|c| c.iter().find(|&&c| c >= visible)) {
            return Err(Error::Mismatch(format!(
                "table {:?} has {visible} visible columns; column {c} was asked for",
                table.name
            )));
        }
        let project = |schema: SchemaRef, extras: Vec<Extra>| -> Result<(SchemaRef, Vec<Extra>)> {
            Ok(match columns {
                None => (schema, extras),
                Some(c) => (
                    Arc::new(schema.project(c)?),
                    c.iter().map(|&i| extras[i].clone()).collect(),
                ),
            })
        };
        let (schema, extras) = project(table_schema(&table.schema), extras_with(&table, geometry))?;
        let batch_rows = check_batch_rows(batch_rows)?;
        let builders = Builders::new(schema.clone(), &extras, batch_rows.min(DEFAULT_BATCH_ROWS))?;
        let rows = ordinals.end.saturating_sub(ordinals.start);
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let (rows, left, projection) = match Plan::for_table(&table) {
            Some(plan)
                if threads > 1
                    && rows > 0
                    && !(leaf_kept_at(&db, &table, ordinals.start + rows / 2)?
                        && leaf_kept_at(&db, &table, ordinals.start + rows - 1)?) =>
            {
                // Cold (its middle or its last leaf not in the arena; the leaves at its start
                // may be there, read by a part's boundary check or by the range before it; a
                // bulk pass past its keep budget kept a first stretch only): read as the
                // whole-table cold pass reads, from the range's first leaf (leaves in batched
                // reads, hashes checked four at a time, batches built on several threads),
                // rather than one chunk at a time through a cursor.
                let plan = match columns {
                    Some(c) => plan.project(c),
                    None => plan,
                };
                let feed = LeafFeed::start(
                    db,
                    table.clone(),
                    ordinals,
                    plan,
                    schema.clone(),
                    extras.clone(),
                    batch_rows,
                    threads.min(MAX_THREADS),
                );
                (RowSource::Leaves(feed, Box::new(table)), None, None)
            }
            Some(plan) => {
                let plan = match columns {
                    Some(c) => plan.project(c),
                    None => plan,
                };
                let scan = OwnedScan::try_new(Source { db, table }, |s| {
                    Scan::new(&s.db, &s.table, plan, ordinals.start)
                })?;
                (RowSource::Scan(scan), Some(rows), None)
            }
            None => {
                let r = OwnedRows::try_new(Source { db, table }, |s| {
                    s.table.reader(&s.db)?.scan_ordinals(ordinals.clone())
                })?;
                (RowSource::Rows(r), None, columns.map(<[usize]>::to_vec))
            }
        };
        Ok(TableBatches {
            rows,
            builders,
            batch_rows,
            row: 0,
            left,
            projection,
            scratch: Vec::new(),
            done: false,
        })
    }

    /// The rows and columns of `part` ([`prollystore_dolt::parts`]) read from `db`: the table
    /// chunk it was cut from, whatever its branch holds now (an error if `db` does not hold
    /// it, naming the part and why).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use prollystore_arrow::{TableBatches, DEFAULT_BATCH_ROWS};
    /// use prollystore_dolt::parts::{split, Part, SplitOptions};
    /// use prollystore_dolt::Database;
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = prollystore_test_vectors::require("dolt-db/vecdb");
    /// let db = Database::open(&dir)?;
    /// let options = SplitOptions { columns: Some(vec!["id".into(), "name".into()]), ..Default::default() };
    /// let parts: Vec<String> = split(&db, "main", "items", 8, &options)?.iter().map(Part::to_json).collect();
    ///
    /// // Anywhere else: a part's JSON is all a worker needs.
    /// let mut rows = 0;
    /// for json in &parts {
    ///     for batch in TableBatches::open_part(&Part::from_json(json)?, DEFAULT_BATCH_ROWS)? {
    ///         let batch = batch?;
    ///         assert_eq!(batch.num_columns(), 2);
    ///         rows += batch.num_rows();
    ///     }
    /// }
    /// assert_eq!(rows as u64, db.table_at("main", Default::default(), "items")?.primary_map(&db)?.count()?);
    /// # Ok(())
    /// # }
    /// ```
    pub fn part(db: Arc<Database>, part: &Part, batch_rows: usize) -> Result<TableBatches> {
        let table = part.table(&db)?;
        let columns = match &part.columns {
            Some(c) => Some(projection(&table, c)?),
            None => None,
        };
        Self::ordinals(db, table, part.ordinals(), columns.as_deref(), batch_rows)
    }

    /// [`TableBatches::part`] on the database the part names, opened here ([`Part::open_database`]:
    /// without a SQL expression engine; a table with VIRTUAL columns needs
    /// `TableBatches::part(Arc::new(prollystore_sql::open(part.database_path()?)?), …)`).
    pub fn open_part(part: &Part, batch_rows: usize) -> Result<TableBatches> {
        Self::part(Arc::new(part.open_database()?), part, batch_rows)
    }

    /// True if rows go from stored fields straight to the builders; false if they go
    /// through the row decoder's typed values (ranges, keyless tables, virtual columns, rare
    /// types). Both give the same batches; this says which one runs.
    pub fn is_direct(&self) -> bool {
        matches!(
            self.rows,
            RowSource::Scan(_) | RowSource::ReadAhead(..) | RowSource::Leaves(..)
        )
    }

    /// The next batch, `None` after the last.
    pub fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        if self.done {
            return Ok(None);
        }
        let ahead = match &mut self.rows {
            RowSource::ReadAhead(workers, _) => Some(workers.next_batch()),
            RowSource::Leaves(feed, _) => Some(feed.next_batch()),
            _ => None,
        };
        if let Some(next) = ahead {
            let next = next.transpose();
            self.done = !matches!(next, Ok(Some(_)));
            return next;
        }
        let (builders, batch_rows, row) = (&mut self.builders, self.batch_rows, &mut self.row);
        let (left, projection, scratch) = (&mut self.left, &self.projection, &mut self.scratch);
        let end = match &mut self.rows {
            RowSource::ReadAhead(..) | RowSource::Leaves(..) => Ok(true),
            RowSource::Scan(scan) => scan.with_dependent_mut(|source, scan| -> Result<bool> {
                let want = match *left {
                    Some(left) => batch_rows.min(usize::try_from(left).unwrap_or(usize::MAX)),
                    None => batch_rows,
                };
                let n = scan.fill(&mut builders.builders, want, *row)?;
                builders.rows += n;
                *row += n as u64;
                if let Some(left) = left {
                    *left -= n as u64;
                    if n < want {
                        return Err(Error::Mismatch(format!(
                            "table {:?}: the rows ended {left} before the part's end",
                            source.table.name
                        )));
                    }
                    return Ok(*left == 0);
                }
                Ok(n < batch_rows)
            }),
            RowSource::Rows(rows) => rows.with_dependent_mut(|_, rows| -> Result<bool> {
                while builders.rows < batch_rows {
                    if !rows.next_into(scratch)? {
                        return Ok(true);
                    }
                    match projection {
                        None => builders.append(0, scratch, *row)?,
                        Some(p) => {
                            let values: Vec<Option<SqlValue>> =
                                p.iter().map(|&i| scratch[i].clone()).collect();
                            builders.append(0, &values, *row)?
                        }
                    }
                    builders.rows += 1;
                    *row += 1;
                }
                Ok(false)
            }),
        };
        let end = match end {
            Ok(end) => end,
            Err(e) => {
                self.done = true;
                return Err(e);
            }
        };
        self.done = end;
        if self.builders.rows == 0 {
            return Ok(None);
        }
        self.builders.finish().map(Some)
    }
}

impl Iterator for TableBatches {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch().map_err(ArrowError::from).transpose()
    }
}

impl RecordBatchReader for TableBatches {
    fn schema(&self) -> SchemaRef {
        self.builders.schema.clone()
    }
}

self_cell!(
    /// A table diff together with the database it borrows.
    struct OwnedDiff {
        owner: Arc<Database>,
        #[covariant]
        dependent: TableDiff,
    }
);

/// [`RowChanges`] with its two lifetimes made one, as a self-referential cell needs.
type Changes<'a> = RowChanges<'a, 'a>;

self_cell!(
    /// The row changes of a diff together with the diff they borrow.
    struct OwnedChanges {
        owner: OwnedDiff,
        #[not_covariant]
        dependent: Changes,
    }
);

/// A table's diff between two states as record batches with `dolt_diff`'s columns:
/// `to_<column>`… (the `to` side's types), `to_commit` (utf8), `to_commit_date`
/// (timestamp µs), `from_<column>`…, `from_commit`, `from_commit_date`, `diff_type`
/// (`added`, `removed` or `modified`). A side without the row has NULLs in its columns.
pub struct DiffBatches {
    changes: OwnedChanges,
    builders: Builders,
    to_width: usize,
    from_width: usize,
    sides: [(String, i64); 2],
    batch_rows: usize,
    row: u64,
    done: bool,
}

impl std::fmt::Debug for DiffBatches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiffBatches")
            .field(
                "table",
                &self.changes.borrow_owner().borrow_dependent().name(),
            )
            .field("batch_rows", &self.batch_rows)
            .finish_non_exhaustive()
    }
}

/// The fields and builder facts of one side's columns in a diff, names prefixed.
fn side_fields(table: &Table, prefix: &str) -> (Vec<Field>, Vec<Extra>) {
    let fields = visible(&table.schema)
        .map(|c| {
            let f = arrow_field(c);
            let name = format!("{prefix}{}", f.name());
            f.with_name(name).with_nullable(true)
        })
        .collect();
    (fields, extras(table))
}

impl DiffBatches {
    /// The diff of table `name` from revision `from` to revision `to` (as
    /// [`TableDiff::new`] takes them), `batch_rows` rows a batch.
    pub fn new(
        db: Arc<Database>,
        from: &str,
        to: &str,
        name: &str,
        batch_rows: usize,
    ) -> Result<DiffBatches> {
        let diff = OwnedDiff::try_new(db, |db| TableDiff::new(db, from, to, name))?;
        Self::of(diff, name, batch_rows)
    }

    /// The diff between two sides already resolved ([`TableDiff::from_sides`]): a side that is
    /// not a revision [`TableDiff::new`] takes (another branch's working set, a root read
    /// by address), named by its `spec` in `to_commit` / `from_commit`.
    pub fn from_sides(
        db: Arc<Database>,
        from: DiffSide,
        to: DiffSide,
        batch_rows: usize,
    ) -> Result<DiffBatches> {
        let name = match (&to.table, &from.table) {
            (Some(t), _) | (None, Some(t)) => t.name.clone(),
            (None, None) => String::new(),
        };
        let diff = OwnedDiff::try_new(db, |db| TableDiff::from_sides(db, from, to))?;
        Self::of(diff, &name, batch_rows)
    }

    /// The rows of diff part `part` ([`prollystore_dolt::diff_parts`]) read from `db`: the
    /// two table chunks it was cut from, whatever their branches hold now, restricted to the
    /// part's keys. The same columns as [`DiffBatches::new`] gives for the whole diff, and
    /// the same rows for those keys: the parts' batches, one part after the other, are the
    /// whole diff's rows.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use prollystore_arrow::{DiffBatches, DEFAULT_BATCH_ROWS};
    /// use prollystore_dolt::diff_parts::{split_diff, DiffPart};
    /// use prollystore_dolt::Database;
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = prollystore_test_vectors::require("dolt-db/vecdb");
    /// let db = Arc::new(Database::open(&dir)?);
    /// let parts: Vec<String> =
    ///     split_diff(&db, "main", "feature", "items", 4, None)?.iter().map(DiffPart::to_json).collect();
    /// let mut rows = 0;
    /// for json in &parts {
    ///     // Anywhere else: a part's JSON is all a worker needs.
    ///     for batch in DiffBatches::open_diff_part(&DiffPart::from_json(json)?, DEFAULT_BATCH_ROWS)? {
    ///         rows += batch?.num_rows();
    ///     }
    /// }
    /// let whole: usize = DiffBatches::new(db, "main", "feature", "items", DEFAULT_BATCH_ROWS)?
    ///     .map(|b| b.map(|b| b.num_rows()))
    ///     .sum::<Result<_, _>>()?;
    /// assert_eq!(rows, whole);
    /// # Ok(())
    /// # }
    /// ```
    pub fn part(db: Arc<Database>, part: &DiffPart, batch_rows: usize) -> Result<DiffBatches> {
        let diff = OwnedDiff::try_new(db, |db| part.diff(db))?;
        Self::of(diff, &part.table, batch_rows)
    }

    /// [`DiffBatches::part`] on the database the part names, opened here
    /// ([`DiffPart::open_database`]: without a SQL expression engine).
    pub fn open_diff_part(part: &DiffPart, batch_rows: usize) -> Result<DiffBatches> {
        Self::part(Arc::new(part.open_database()?), part, batch_rows)
    }

    fn of(diff: OwnedDiff, name: &str, batch_rows: usize) -> Result<DiffBatches> {
        let batch_rows = check_batch_rows(batch_rows)?;
        let d = diff.borrow_dependent();
        let (Some(to_table), Some(from_table)) = (
            d.to().table.as_ref().or(d.from().table.as_ref()),
            d.from().table.as_ref().or(d.to().table.as_ref()),
        ) else {
            return Err(Error::Mismatch(format!(
                "table {name:?} is in neither state"
            )));
        };
        let mut fields = Vec::new();
        let mut extra = Vec::new();
        let commit_fields = |prefix: &str| {
            [
                Field::new(format!("{prefix}commit"), DataType::Utf8, true),
                Field::new(
                    format!("{prefix}commit_date"),
                    DataType::Timestamp(TimeUnit::Microsecond, None),
                    true,
                ),
            ]
        };
        let (tf, te) = side_fields(to_table, "to_");
        let to_width = tf.len();
        fields.extend(tf);
        extra.extend(te);
        fields.extend(commit_fields("to_"));
        extra.extend([Extra::default(), Extra::default()]);
        let (ff, fe) = side_fields(from_table, "from_");
        let from_width = ff.len();
        fields.extend(ff);
        extra.extend(fe);
        fields.extend(commit_fields("from_"));
        fields.push(Field::new("diff_type", DataType::Utf8, false));
        extra.extend([Extra::default(), Extra::default(), Extra::default()]);
        let sides = [
            (d.to().spec.clone(), d.to().date_micros),
            (d.from().spec.clone(), d.from().date_micros),
        ];
        let schema = Arc::new(ArrowSchema::new(fields));
        let builders = Builders::new(schema, &extra, batch_rows.min(DEFAULT_BATCH_ROWS))?;
        let changes = OwnedChanges::try_new(diff, |d| d.borrow_dependent().rows())?;
        Ok(DiffBatches {
            changes,
            builders,
            to_width,
            from_width,
            sides,
            batch_rows,
            row: 0,
            done: false,
        })
    }

    fn append(&mut self, change: &RowChange) -> Result<()> {
        let row = self.row;
        let mut col = 0;
        for (side, (values, width)) in
            [(&change.to, self.to_width), (&change.from, self.from_width)]
                .into_iter()
                .enumerate()
        {
            match values {
                Some(v) => self.builders.append(col, &v[..v.len().min(width)], row)?,
                None => {
                    for i in col..col + width {
                        if let Some(b) = self.builders.builder(i) {
                            b.append_null();
                        }
                    }
                }
            }
            col += width;
            let (spec, date) = &self.sides[side];
            let values = [
                Some(SqlValue::Text(spec.clone())),
                Some(SqlValue::Datetime(*date, 6)),
            ];
            self.builders.append(col, &values, row)?;
            col += 2;
        }
        let kind = [Some(SqlValue::Text(change.kind.as_str().into()))];
        self.builders.append(col, &kind, row)?;
        self.builders.rows += 1;
        self.row += 1;
        Ok(())
    }

    /// The next batch, `None` after the last.
    pub fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        if self.done {
            return Ok(None);
        }
        while self.builders.rows < self.batch_rows {
            let next: Option<prollystore_dolt::Result<RowChange>> =
                self.changes.with_dependent_mut(|_, c| c.next());
            match next {
                None => {
                    self.done = true;
                    break;
                }
                Some(Err(e)) => {
                    self.done = true;
                    return Err(e.into());
                }
                Some(Ok(change)) => {
                    if let Err(e) = self.append(&change) {
                        self.done = true;
                        return Err(e);
                    }
                }
            }
        }
        if self.builders.rows == 0 {
            return Ok(None);
        }
        self.builders.finish().map(Some)
    }
}

impl Iterator for DiffBatches {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch().map_err(ArrowError::from).transpose()
    }
}

impl RecordBatchReader for DiffBatches {
    fn schema(&self) -> SchemaRef {
        self.builders.schema.clone()
    }
}
