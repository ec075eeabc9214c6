//! `prollystore.dolt`: Dolt databases read from Python — branches, tags, the log, tables at
//! any state, keyed reads and scans, diffs.

use std::ops::Bound as KeyBound;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use self_cell::self_cell;

use prollystore_dolt::db::parse_at;
use prollystore_dolt::parts::Origin;
use prollystore_dolt::schema::SqlType;
use prollystore_dolt::table_diff::{RowChange, TableDiff};
use prollystore_dolt::{Commit, Database, KeyRange, Rows, Table, TableReader};

use prollystore_arrow::{DiffBatches, TableBatches, DEFAULT_BATCH_ROWS};
use pyo3::types::PyCapsule;

use crate::arrow::{
    arrow_err, stream_capsule, to_pandas, to_polars, to_pyarrow, BoxedReader, PyStream,
};
use crate::errors::{closed, dolt_err};
use crate::point_get::GetPlan;
use crate::values::{py_to_sql, sql_row_to_py};
use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, SchemaRef};

/// An open database shared by the tables and iterators made from it; `closed` makes them all
/// refuse further work (the files are released when the last of them is gone).
pub struct DbShared {
    pub(crate) db: Arc<Database>,
    closed: AtomicBool,
}

impl DbShared {
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    pub(crate) fn check(&self) -> PyResult<&Database> {
        if self.is_closed() {
            Err(closed("database"))
        } else {
            Ok(&self.db)
        }
    }
}

/// A reader that stops with an error once its database is closed.
pub struct Checked<R> {
    pub inner: R,
    pub shared: Arc<DbShared>,
}

impl<R: RecordBatchReader> Iterator for Checked<R> {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.shared.is_closed() {
            return Some(Err(ArrowError::ExternalError(
                "the database is closed".into(),
            )));
        }
        self.inner.next()
    }
}

impl<R: RecordBatchReader> RecordBatchReader for Checked<R> {
    fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }
}

/// What a table handle owns: the database and the table state it reads.
pub struct TableOwner {
    pub(crate) shared: Arc<DbShared>,
    pub(crate) table: Table,
}

self_cell!(
    /// A table with its reader made once, so a `get` costs the lookup alone.
    struct ReaderCell {
        owner: Arc<TableOwner>,
        #[covariant]
        dependent: TableReader,
    }
);

self_cell!(
    /// A scan in progress over a table it keeps alive.
    struct RowsCell {
        owner: Arc<TableOwner>,
        #[not_covariant]
        dependent: Rows,
    }
);

fn commit_dict<'py>(py: Python<'py>, c: &Commit) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("hash", c.address.to_string())?;
    d.set_item(
        "parents",
        c.parents.iter().map(|p| p.to_string()).collect::<Vec<_>>(),
    )?;
    d.set_item("author", &c.name)?;
    d.set_item("email", &c.email)?;
    d.set_item("message", &c.message)?;
    d.set_item("timestamp_ms", c.user_timestamp_millis)?;
    d.set_item("height", c.height)?;
    Ok(d)
}

/// An open Dolt database (read-only). Use as a context manager, or call `close()`.
#[pyclass(module = "prollystore._native", name = "Database", frozen)]
pub struct PyDatabase {
    shared: Arc<DbShared>,
    path: PathBuf,
}

impl PyDatabase {
    /// A database opened elsewhere (a remote read in place); `path` is what `path` shows.
    pub(crate) fn from_database(db: Database, path: PathBuf) -> PyDatabase {
        PyDatabase {
            shared: Arc::new(DbShared {
                db: Arc::new(db),
                closed: AtomicBool::new(false),
            }),
            path,
        }
    }

    pub(crate) fn db(&self) -> PyResult<&Database> {
        self.shared.check()
    }

    /// Table `name` at `at`, and the state it was resolved from (what its parts record).
    fn table_state(&self, py: Python<'_>, name: &str, at: &str) -> PyResult<(Table, Origin)> {
        let db = self.db()?;
        py.detach(|| {
            let origin = Origin::resolve(db, at)?;
            let table = db.table(&db.root_value(origin.root)?, name)?;
            Ok((table, origin))
        })
        .map_err(dolt_err)
    }
}

#[pymethods]
impl PyDatabase {
    /// Opens the database directory `path` (the one holding `.dolt`). Never writes to it.
    /// `verify_hashes=False` skips checking each chunk's SHA-512 against its address (the
    /// CRC-32C of compressed chunks is still checked, as Dolt does): faster, for databases you
    /// trust. `keep_budget`: the most bytes of leaves whole-table reads keep in memory for
    /// later reads (`DoltChunkSource::set_bulk_keep_budget`; None: the default).
    #[new]
    #[pyo3(signature = (path, verify_hashes = true, keep_budget = None))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        verify_hashes: bool,
        keep_budget: Option<u64>,
    ) -> PyResult<Self> {
        let db = py
            .detach(|| prollystore_sql::open(&path).map(|d| d.with_verify_hashes(verify_hashes)))
            .map_err(dolt_err)?;
        if let Some(bytes) = keep_budget {
            db.source().set_bulk_keep_budget(bytes);
        }
        Ok(PyDatabase {
            shared: Arc::new(DbShared {
                db: Arc::new(db),
                closed: AtomicBool::new(false),
            }),
            path,
        })
    }

    /// Closes the database: every table and iterator made from it raises `ClosedError` from
    /// now on. Closing twice is allowed.
    fn close(&self) {
        self.shared.closed.store(true, Ordering::Release);
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.shared.closed.load(Ordering::Acquire)
    }

    /// The most bytes of leaves whole-table reads keep in memory.
    #[getter]
    fn keep_budget(&self) -> PyResult<u64> {
        Ok(self.db()?.source().bulk_keep_budget())
    }

    /// The bytes of leaves whole-table reads have kept so far.
    #[getter]
    fn kept_bytes(&self) -> PyResult<u64> {
        Ok(self.db()?.source().bulk_kept_bytes())
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, _args: &Bound<'_, PyTuple>) -> bool {
        self.close();
        false
    }

    fn __repr__(&self) -> String {
        let state = if self.closed() { " (closed)" } else { "" };
        format!("<prollystore.dolt.Database {:?}{state}>", self.path)
    }

    /// The directory opened.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// The current branch (`repo_state.json`), or None.
    #[getter]
    fn current_branch(&self) -> PyResult<Option<String>> {
        Ok(self.db()?.current_branch())
    }

    /// Branches: name → head commit hash.
    fn branches<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (name, head) in self.db()?.branches().map_err(dolt_err)? {
            d.set_item(name, head.to_string())?;
        }
        Ok(d)
    }

    /// Tags: a list of dicts (name, commit, message, tagger, email, timestamp_ms).
    fn tags<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for t in self.db()?.tags().map_err(dolt_err)? {
            let d = PyDict::new(py);
            d.set_item("name", &t.name)?;
            d.set_item("commit", t.commit.to_string())?;
            d.set_item("message", &t.message)?;
            d.set_item("tagger", &t.tagger_name)?;
            d.set_item("email", &t.tagger_email)?;
            d.set_item("timestamp_ms", t.user_timestamp_millis)?;
            out.append(d)?;
        }
        Ok(out)
    }

    /// The commits reachable from `at` (default HEAD), newest first, as `dolt log` lists them:
    /// dicts (hash, parents, author, email, message, timestamp_ms, height).
    #[pyo3(signature = (at = "HEAD", limit = None))]
    fn log<'py>(
        &self,
        py: Python<'py>,
        at: &str,
        limit: Option<usize>,
    ) -> PyResult<Bound<'py, PyList>> {
        let db = self.db()?;
        let commits = py
            .detach(|| {
                db.resolve_revision(at).and_then(|a| {
                    db.log(a)
                        .take(limit.unwrap_or(usize::MAX))
                        .collect::<Result<Vec<_>, _>>()
                })
            })
            .map_err(dolt_err)?;
        let out = PyList::empty(py);
        for c in &commits {
            out.append(commit_dict(py, c)?)?;
        }
        Ok(out)
    }

    /// The commit hash `rev` names (branch, tag, hash, `HEAD~2`…).
    fn resolve(&self, rev: &str) -> PyResult<String> {
        Ok(self
            .db()?
            .resolve_revision(rev)
            .map_err(dolt_err)?
            .to_string())
    }

    /// Names of the tables at `at` (see `table`).
    #[pyo3(signature = (at = "WORKING"))]
    fn tables(&self, py: Python<'_>, at: &str) -> PyResult<Vec<String>> {
        let db = self.db()?;
        let (spec, state) = parse_at(at);
        let root = py.detach(|| db.root_at(spec, state)).map_err(dolt_err)?;
        Ok(root
            .tables
            .into_iter()
            .map(|(n, _)| n)
            .filter(|n| !n.starts_with("dolt_"))
            .collect())
    }

    /// The table `name` at `at`: `WORKING` (default: the current branch with uncommitted
    /// changes, as `dolt sql` reads), `STAGED`, `HEAD`, a branch, tag or commit hash with
    /// optional `~N`, or `BRANCH@WORKING` / `BRANCH@STAGED`.
    #[pyo3(signature = (name, at = "WORKING"))]
    fn table(&self, py: Python<'_>, name: &str, at: &str) -> PyResult<PyTable> {
        let (table, origin) = self.table_state(py, name, at)?;
        PyTable::new(py, self.shared.clone(), table, origin)
    }

    /// The rows of `table` that differ between `from_` and `to` (revisions as in `table`),
    /// as `dolt_diff` shows them.
    #[pyo3(signature = (from_, to, table))]
    fn diff(&self, py: Python<'_>, from_: &str, to: &str, table: &str) -> PyResult<PyDiff> {
        let db = self.db()?;
        let (changes, from_columns, to_columns, from_utc, to_utc) = py
            .detach(|| {
                let d = TableDiff::new(db, from_, to, table)?;
                let rows = d.rows()?.collect::<Result<Vec<RowChange>, _>>()?;
                let utc = |t: &Option<Table>| t.as_ref().map(timestamp_columns).unwrap_or_default();
                Ok((
                    rows,
                    d.from_columns(),
                    d.to_columns(),
                    utc(&d.from().table),
                    utc(&d.to().table),
                ))
            })
            .map_err(dolt_err)?;
        Ok(PyDiff {
            shared: self.shared.clone(),
            table: table.to_string(),
            from_spec: from_.to_string(),
            to_spec: to.to_string(),
            changes,
            from_columns,
            to_columns,
            from_utc,
            to_utc,
        })
    }

    /// The diff of `table` from `from_` to `to` (states as in `table`) cut into `n` parts of
    /// nearly equal work, from the trees' internal nodes (no leaf is read): the rows of the
    /// leaves the two states do not share are what is balanced (the number of changed rows
    /// is only known by reading them). Each part reads on its own, in any process
    /// (`DiffPart.read()`); their rows, one part after the other, are `diff(...)`'s. Fewer
    /// parts when fewer leaves changed; one empty part when none did. `location` says where
    /// workers find the database, if not where it was opened from.
    #[pyo3(signature = (from_, to, table, n, *, location = None))]
    fn split_diff(
        &self,
        py: Python<'_>,
        from_: &str,
        to: &str,
        table: &str,
        n: usize,
        location: Option<&str>,
    ) -> PyResult<Vec<crate::parts::PyDiffPart>> {
        let db = self.db()?;
        crate::parts::split_diff_parts(py, db, (from_, to, table), n, location)
    }
}

/// Per visible column of `table`: a TIMESTAMP (its values are aware UTC datetimes).
fn timestamp_columns(table: &Table) -> Vec<bool> {
    let s = &table.schema;
    s.visible_columns()
        .iter()
        .map(|&i| matches!(s.columns[i].sql_type, SqlType::Timestamp(_)))
        .collect()
}

/// One table of a Dolt database at one state.
#[pyclass(module = "prollystore._native", name = "Table", frozen)]
pub struct PyTable {
    cell: ReaderCell,
    /// The point-get plan, made once (None for keyless tables and keys without Dolt's
    /// order).
    get_plan: Option<GetPlan>,
    /// The state it was read at, resolved (`at` as given, its commit and root).
    pub(crate) origin: Origin,
    /// Per visible column: a TIMESTAMP (values are aware UTC datetimes).
    utc: Vec<bool>,
    columns: Vec<String>,
}

impl PyTable {
    fn new(
        py: Python<'_>,
        shared: Arc<DbShared>,
        table: Table,
        origin: Origin,
    ) -> PyResult<PyTable> {
        let owner = Arc::new(TableOwner { shared, table });
        let cell = ReaderCell::try_new(owner, |o| TableReader::new(&o.shared.db, &o.table))
            .map_err(dolt_err)?;
        let s = &cell.borrow_owner().table.schema;
        let visible = s.visible_columns();
        let utc = timestamp_columns(&cell.borrow_owner().table);
        let columns = visible.iter().map(|&i| s.columns[i].name.clone()).collect();
        let get_plan = cell
            .borrow_dependent()
            .primary_key()
            .ok()
            .map(|enc| GetPlan::new(py, &cell.borrow_owner().table, &enc, utc.clone()));
        Ok(PyTable {
            get_plan,
            cell,
            origin,
            utc,
            columns,
        })
    }

    pub(crate) fn owner(&self) -> &Arc<TableOwner> {
        self.cell.borrow_owner()
    }

    fn check(&self) -> PyResult<()> {
        self.owner().shared.check().map(|_| ())
    }

    /// Python values as the key values of `cols`, in order.
    fn key_values(
        &self,
        values: &Bound<'_, PyAny>,
        cols: &[prollystore_dolt::Column],
    ) -> PyResult<Vec<Option<prollystore_dolt::SqlValue>>> {
        let items: Vec<Bound<'_, PyAny>> = if let Ok(t) = values.downcast::<PyTuple>() {
            t.iter().collect()
        } else if let Ok(l) = values.downcast::<PyList>() {
            l.iter().collect()
        } else {
            vec![values.clone()]
        };
        if items.len() > cols.len() {
            return Err(PyValueError::new_err(format!(
                "table {:?}: {} key values given, the key has {} columns",
                self.owner().table.name,
                items.len(),
                cols.len()
            )));
        }
        // A None among the values is the NULL key (it sorts first, as in Dolt's indexes).
        items
            .iter()
            .zip(cols)
            .map(|(v, c)| py_to_sql(v, c, &self.owner().table.name))
            .collect()
    }

    /// The key range of a scan: `prefix` (the rows whose leading key values equal it), or
    /// `start` (inclusive) to `end` (exclusive); never both.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn range(
        &self,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        prefix: Option<&Bound<'_, PyAny>>,
        cols: &[prollystore_dolt::Column],
        reverse: bool,
        limit: Option<u64>,
    ) -> PyResult<KeyRange> {
        let given = |v: Option<&Bound<'_, PyAny>>| v.is_some_and(|v| !v.is_none());
        if let Some(p) = prefix.filter(|_| given(prefix)) {
            if given(start) || given(end) {
                return Err(PyValueError::new_err(format!(
                    "table {:?}: give either prefix or start/end, not both",
                    self.owner().table.name
                )));
            }
            return Ok(KeyRange {
                reverse,
                limit,
                ..KeyRange::prefix(self.key_values(p, cols)?)
            });
        }
        Ok(KeyRange {
            from: self.bound(start, cols, true)?,
            to: self.bound(end, cols, false)?,
            reverse,
            limit,
        })
    }

    fn bound(
        &self,
        v: Option<&Bound<'_, PyAny>>,
        cols: &[prollystore_dolt::Column],
        inclusive: bool,
    ) -> PyResult<KeyBound<Vec<Option<prollystore_dolt::SqlValue>>>> {
        Ok(match v {
            None => KeyBound::Unbounded,
            Some(v) if v.is_none() => KeyBound::Unbounded,
            Some(v) => {
                let vals = self.key_values(v, cols)?;
                if inclusive {
                    KeyBound::Included(vals)
                } else {
                    KeyBound::Excluded(vals)
                }
            }
        })
    }
}

#[pymethods]
impl PyTable {
    /// The table's name.
    #[getter]
    fn name(&self) -> &str {
        &self.owner().table.name
    }

    /// The state it was read at.
    #[getter]
    fn at(&self) -> &str {
        &self.origin.at
    }

    /// The visible column names, in row order.
    #[getter]
    fn columns(&self) -> Vec<String> {
        self.columns.clone()
    }

    /// The table's hash (`dolt_hashof_table`).
    #[getter]
    fn hash(&self) -> String {
        self.owner().table.address.to_string()
    }

    /// The schema: a dict with `columns` (dicts: name, type, nullable, primary_key,
    /// auto_increment, generated, default, comment), `primary_key` (column names), `indexes`
    /// (dicts: name, columns, unique), `keyless`.
    #[getter]
    fn schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = &self.owner().table.schema;
        let d = PyDict::new(py);
        let cols = PyList::empty(py);
        for i in s.visible_columns() {
            let c = &s.columns[i];
            let cd = PyDict::new(py);
            cd.set_item("name", &c.name)?;
            cd.set_item("type", &c.sql_type_text)?;
            cd.set_item("nullable", c.nullable)?;
            cd.set_item("primary_key", c.primary_key)?;
            cd.set_item("auto_increment", c.auto_increment)?;
            cd.set_item("generated", c.generated)?;
            cd.set_item("default", &c.default_value)?;
            cd.set_item("comment", &c.comment)?;
            cols.append(cd)?;
        }
        d.set_item("columns", cols)?;
        let pk: Vec<&str> = if s.keyless {
            Vec::new()
        } else {
            s.key_columns
                .iter()
                .map(|&i| s.columns[i].name.as_str())
                .collect()
        };
        d.set_item("primary_key", pk)?;
        let ixs = PyList::empty(py);
        for ix in &s.indexes {
            let id = PyDict::new(py);
            id.set_item("name", &ix.name)?;
            id.set_item(
                "columns",
                ix.columns
                    .iter()
                    .map(|&i| s.columns[i].name.clone())
                    .collect::<Vec<_>>(),
            )?;
            id.set_item("unique", ix.unique)?;
            ixs.append(id)?;
        }
        d.set_item("indexes", ixs)?;
        d.set_item("keyless", s.keyless)?;
        Ok(d)
    }

    /// The row whose primary key is `key` (one value per key column), as a tuple (or a dict
    /// with `as_dict=True`), or None.
    #[pyo3(signature = (*key, as_dict = false))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyTuple>,
        as_dict: bool,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.check()?;
        let reader = self.cell.borrow_dependent();
        let Some(plan) = &self.get_plan else {
            return Err(dolt_err(reader.primary_key().err().unwrap_or_else(|| {
                prollystore_dolt::error::bad_input(
                    "a primary-key get",
                    "the table has no primary key",
                )
            })));
        };
        let n = plan.key_columns().len();
        if key.len() != n {
            return Err(PyTypeError::new_err(format!(
                "table {:?}: get needs {} primary-key values, {} given",
                self.name(),
                n,
                key.len()
            )));
        }
        plan.get(py, reader, self.name(), key, as_dict)
    }

    /// Rows in key order (or `index` order), from `start` (inclusive) to `end` (exclusive),
    /// or those whose leading key values equal `prefix`; each is a value or a tuple of
    /// leading key values, where None is the NULL key (`prefix=(None,)` is SQL's `IS NULL`).
    /// `reverse` walks backwards, `limit` caps the count. Yields tuples, or dicts with
    /// `as_dict=True`.
    #[pyo3(signature = (start = None, end = None, *, prefix = None, index = None, reverse = false, limit = None, as_dict = false))]
    #[allow(clippy::too_many_arguments)]
    fn scan(
        &self,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        prefix: Option<&Bound<'_, PyAny>>,
        index: Option<&str>,
        reverse: bool,
        limit: Option<u64>,
        as_dict: bool,
    ) -> PyResult<PyRows> {
        self.check()?;
        let reader = self.cell.borrow_dependent();
        let bounded = [start, end, prefix]
            .iter()
            .any(|v| v.is_some_and(|v| !v.is_none()));
        let cols = match index {
            Some(ix) => reader.index_key(ix).map_err(dolt_err)?.columns().to_vec(),
            None if bounded => reader.primary_key().map_err(dolt_err)?.columns().to_vec(),
            None => Vec::new(),
        };
        let range = self.range(start, end, prefix, &cols, reverse, limit)?;
        let index = index.map(str::to_owned);
        let rows = RowsCell::try_new(self.owner().clone(), |o| {
            let r = TableReader::new(&o.shared.db, &o.table)?;
            match &index {
                Some(ix) => r.index_scan(ix, &range),
                None => r.scan(&range),
            }
        })
        .map_err(dolt_err)?;
        Ok(PyRows {
            rows: Mutex::new(Some(rows)),
            utc: self.utc.clone(),
            columns: if as_dict {
                Some(self.columns.clone())
            } else {
                None
            },
        })
    }

    fn __iter__(&self) -> PyResult<PyRows> {
        self.scan(None, None, None, None, false, None, false)
    }

    /// The rows as a one-shot stream of Arrow record batches of `batch_rows` rows, with the
    /// same range arguments as `scan` (`index` scans return whole rows in index order). Hand
    /// it to `pyarrow.table`, `polars.DataFrame`, DuckDB, or call its `to_arrow()`.
    #[pyo3(signature = (start = None, end = None, *, prefix = None, index = None, reverse = false, limit = None, batch_rows = DEFAULT_BATCH_ROWS))]
    #[allow(clippy::too_many_arguments)]
    fn batches(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        prefix: Option<&Bound<'_, PyAny>>,
        index: Option<&str>,
        reverse: bool,
        limit: Option<u64>,
        batch_rows: usize,
    ) -> PyResult<PyStream> {
        Ok(PyStream::new(self.reader(
            py,
            [start, end, prefix],
            index,
            reverse,
            limit,
            batch_rows,
        )?))
    }

    /// The Arrow PyCapsule protocol: every row as an `arrow_array_stream` capsule, so
    /// `pyarrow.table(t)`, `polars.DataFrame(t)` and `duckdb.sql("select * from t")` read the
    /// table directly.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema; // the protocol lets a producer keep its own schema
        let reader = self.reader(py, [None; 3], None, false, None, DEFAULT_BATCH_ROWS)?;
        stream_capsule(py, reader)
    }

    /// The whole table as a `pyarrow.Table` (needs pyarrow).
    fn to_arrow<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        to_pyarrow(slf.as_any())
    }

    /// The whole table as a `pandas.DataFrame` (needs pandas and pyarrow).
    fn to_pandas<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        to_pandas(slf.as_any())
    }

    /// The whole table as a `polars.DataFrame` (needs polars).
    fn to_polars<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        to_polars(slf.as_any())
    }

    /// Cuts the table (at the state it was read at) into `n` parts of nearly equal row
    /// counts, from the tree's counts (no scan): a list of `Part`s, in key order, that
    /// together hold every row once. `columns` picks the columns every part reads; `start`,
    /// `end` and `prefix` cut only that primary-key range (as in `scan`). Fewer parts when
    /// there are fewer rows than `n`; one empty part when there are none. `location` says
    /// where workers find the database, if not where it was opened from.
    #[pyo3(signature = (n, columns = None, *, start = None, end = None, prefix = None, location = None))]
    #[allow(clippy::too_many_arguments)]
    fn split(
        &self,
        py: Python<'_>,
        n: usize,
        columns: Option<Vec<String>>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        prefix: Option<&Bound<'_, PyAny>>,
        location: Option<String>,
    ) -> PyResult<Vec<crate::parts::PyPart>> {
        self.check()?;
        let bounded = [start, end, prefix]
            .iter()
            .any(|v| v.is_some_and(|v| !v.is_none()));
        let range = if bounded {
            let reader = self.cell.borrow_dependent();
            let cols = reader.primary_key().map_err(dolt_err)?.columns().to_vec();
            self.range(start, end, prefix, &cols, false, None)?
        } else {
            KeyRange::all()
        };
        let owner = self.owner();
        let options = prollystore_dolt::parts::SplitOptions {
            range,
            columns,
            location,
        };
        let at = (&self.origin, &owner.table);
        crate::parts::split(py, owner.shared.check()?, at, n, options)
    }

    /// Number of rows (keyless rows counted with their copies).
    fn count(&self, py: Python<'_>) -> PyResult<u64> {
        self.check()?;
        let reader = self.cell.borrow_dependent();
        if let Ok(m) = self.owner().table.primary_map(&self.owner().shared.db) {
            if !self.owner().table.schema.keyless {
                return m.count().map_err(|e| dolt_err(e.into()));
            }
        }
        py.detach(|| {
            let mut n = 0u64;
            for r in reader.scan(&KeyRange::all())? {
                r?;
                n += 1;
            }
            Ok(n)
        })
        .map_err(dolt_err)
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.count(py)? as usize)
    }

    fn __repr__(&self) -> String {
        format!(
            "<prollystore.dolt.Table {:?} at {:?}>",
            self.name(),
            self.origin.at
        )
    }
}

impl PyTable {
    /// Record batches of the rows `scan` would give.
    #[allow(clippy::too_many_arguments)]
    /// `bounds` are a scan's `start`, `end` and `prefix` arguments.
    fn reader(
        &self,
        py: Python<'_>,
        bounds: [Option<&Bound<'_, PyAny>>; 3],
        index: Option<&str>,
        reverse: bool,
        limit: Option<u64>,
        batch_rows: usize,
    ) -> PyResult<BoxedReader> {
        self.check()?;
        let owner = self.owner();
        let db = owner.shared.db.clone();
        let table = owner.table.clone();
        let [start, end, prefix] = bounds;
        let whole = bounds.iter().all(|v| v.is_none_or(|v| v.is_none()))
            && index.is_none()
            && !reverse
            && limit.is_none();
        let batches = if whole {
            py.detach(|| TableBatches::new(db, table, batch_rows))
        } else {
            let reader = self.cell.borrow_dependent();
            let cols = match index {
                Some(ix) => reader.index_key(ix).map_err(dolt_err)?.columns().to_vec(),
                None => reader.primary_key().map_err(dolt_err)?.columns().to_vec(),
            };
            let range = self.range(start, end, prefix, &cols, reverse, limit)?;
            py.detach(|| match index {
                Some(ix) => TableBatches::index_range(db, table, ix, &range, batch_rows),
                None => TableBatches::range(db, table, &range, batch_rows),
            })
        }
        .map_err(arrow_err)?;
        Ok(Box::new(Checked {
            inner: batches,
            shared: owner.shared.clone(),
        }))
    }
}

/// Rows of a scan, converted to Python as they are read.
#[pyclass(module = "prollystore._native", name = "Rows", unsendable)]
pub struct PyRows {
    rows: Mutex<Option<RowsCell>>,
    utc: Vec<bool>,
    columns: Option<Vec<String>>,
}

#[pymethods]
impl PyRows {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let mut guard = self.rows.lock().map_err(|_| closed("scan"))?;
        let Some(cell) = guard.as_mut() else {
            return Ok(None);
        };
        cell.borrow_owner().shared.check()?;
        let next = cell.with_dependent_mut(|_, rows| rows.next());
        match next {
            None => {
                *guard = None;
                Ok(None)
            }
            Some(Err(e)) => Err(dolt_err(e)),
            Some(Ok(row)) => {
                let t = sql_row_to_py(py, &row, &self.utc)?;
                match &self.columns {
                    None => Ok(Some(t.into_any())),
                    Some(names) => {
                        let d = PyDict::new(py);
                        for (name, v) in names.iter().zip(t.iter()) {
                            d.set_item(name, v)?;
                        }
                        Ok(Some(d.into_any()))
                    }
                }
            }
        }
    }
}

/// The row changes of one table between two states.
#[pyclass(module = "prollystore._native", name = "Diff", frozen)]
pub struct PyDiff {
    shared: Arc<DbShared>,
    table: String,
    from_spec: String,
    to_spec: String,
    changes: Vec<RowChange>,
    from_columns: Vec<String>,
    to_columns: Vec<String>,
    /// Per visible column of each side: a TIMESTAMP.
    from_utc: Vec<bool>,
    to_utc: Vec<bool>,
}

#[pymethods]
impl PyDiff {
    /// The table diffed.
    #[getter]
    fn table(&self) -> &str {
        &self.table
    }

    /// Column names of the `from` rows.
    #[getter(from_columns)]
    fn old_column_names(&self) -> Vec<String> {
        self.from_columns.clone()
    }

    /// Column names of the `to` rows.
    #[getter(to_columns)]
    fn new_column_names(&self) -> Vec<String> {
        self.to_columns.clone()
    }

    fn __len__(&self) -> usize {
        self.changes.len()
    }

    /// The changes: a list of `(kind, from_row, to_row)` with kind `"added"`, `"removed"` or
    /// `"modified"` and rows as tuples (None on the side where the row is absent).
    fn changes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for c in &self.changes {
            let side = |r: &Option<Vec<Option<prollystore_dolt::SqlValue>>>,
                        utc: &[bool]|
             -> PyResult<Py<PyAny>> {
                Ok(match r {
                    None => py.None(),
                    Some(r) => sql_row_to_py(py, r, utc)?.into_any().unbind(),
                })
            };
            out.append((
                c.kind.as_str(),
                side(&c.from, &self.from_utc)?,
                side(&c.to, &self.to_utc)?,
            ))?;
        }
        Ok(out)
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.changes(py)?.as_any().try_iter().map(Bound::into_any)
    }

    /// The Arrow PyCapsule protocol: the diff with `dolt_diff`'s columns (`to_<col>`…,
    /// `to_commit`, `to_commit_date`, `from_<col>`…, `from_commit`, `from_commit_date`,
    /// `diff_type`).
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema; // the protocol lets a producer keep its own schema
        self.shared.check()?;
        let db = self.shared.db.clone();
        let batches = py
            .detach(|| {
                DiffBatches::new(
                    db,
                    &self.from_spec,
                    &self.to_spec,
                    &self.table,
                    DEFAULT_BATCH_ROWS,
                )
            })
            .map_err(arrow_err)?;
        stream_capsule(
            py,
            Box::new(Checked {
                inner: batches,
                shared: self.shared.clone(),
            }),
        )
    }

    /// The diff as a `pyarrow.Table` (`dolt_diff`'s columns).
    fn to_arrow<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        to_pyarrow(slf.as_any())
    }

    /// The diff as a `pandas.DataFrame`.
    fn to_pandas<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        to_pandas(slf.as_any())
    }

    /// The diff as a `polars.DataFrame`.
    fn to_polars<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        to_polars(slf.as_any())
    }

    fn __repr__(&self) -> String {
        format!(
            "<prollystore.dolt.Diff {:?} {}..{}: {} rows>",
            self.table,
            self.from_spec,
            self.to_spec,
            self.changes.len()
        )
    }
}

/// Registers the classes.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyDatabase>()?;
    m.add_class::<PyTable>()?;
    m.add_class::<PyRows>()?;
    m.add_class::<PyDiff>()?;
    Ok(())
}
