//! `prollystore.dolt.Writer` and the version-control functions: a Dolt database open for
//! writing from Python (tables from `CREATE TABLE` text, rows inserted, updated, upserted and
//! deleted, commits), branches, checkout and merge.
//!
//! Rows come in as Python values (the Python wrapper turns Arrow tables and pandas / Polars
//! DataFrames into them) and are all converted and checked before anything is applied: a
//! value of the wrong type raises `TypeError`/`ValueError` naming the table, row and column,
//! and the writer is left as it was.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use prollystore_dolt::write::vc::{self, MergeOptions, MergeResult, OnConflict, Signature};
use prollystore_dolt::write::{CommitMeta, DoltWriter, RowMode, TableDef};
use prollystore_dolt::{Column, SqlValue};
use prollystore_sql::{FromSql, SqlWriter};

use arrow_array::ffi_stream::ArrowArrayStreamReader;
use arrow_array::RecordBatch;
use arrow_pyarrow::FromPyArrow;
use prollystore_arrow::dolt_write::write_batches;

use crate::arrow::{arrow_err, arrow_source, is_arrow_data};
use crate::errors::{closed, dolt_err};
use crate::values::py_to_sql_at;

/// Milliseconds since the Unix epoch now, for commits given no date.
fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Unix milliseconds of `date`: None (now), an int or float of Unix seconds, or an aware
/// `datetime`.
fn date_millis(date: Option<&Bound<'_, PyAny>>) -> PyResult<i64> {
    let Some(d) = date.filter(|d| !d.is_none()) else {
        return Ok(now_millis());
    };
    if d.is_instance_of::<pyo3::types::PyInt>() || d.is_instance_of::<pyo3::types::PyFloat>() {
        let secs: f64 = d.extract()?;
        return Ok((secs * 1000.0).round() as i64);
    }
    if d.hasattr("timestamp")? && d.hasattr("tzinfo")? {
        if d.getattr("tzinfo")?.is_none() {
            return Err(PyValueError::new_err(format!(
                "date: a naive datetime {}; give one with a tzinfo (a commit time is an instant)",
                d.repr()?
            )));
        }
        let secs: f64 = d.call_method0("timestamp")?.extract()?;
        return Ok((secs * 1000.0).round() as i64);
    }
    Err(PyTypeError::new_err(format!(
        "date: expected an aware datetime or Unix seconds, got {}",
        d.repr()?
    )))
}

/// A Dolt database open for writing on its current branch. Changes stay in memory until
/// `commit` (or `save`, which leaves them uncommitted in the working set).
#[pyclass(module = "prollystore._native", name = "Writer", frozen)]
pub struct PyWriter {
    inner: Mutex<Option<DoltWriter>>,
}

impl PyWriter {
    fn with<R>(&self, f: impl FnOnce(&mut DoltWriter) -> PyResult<R>) -> PyResult<R> {
        let mut g = self
            .inner
            .lock()
            .map_err(|_| PyValueError::new_err("the writer was poisoned by a panic"))?;
        match g.as_mut() {
            Some(w) => f(w),
            None => Err(closed("writer")),
        }
    }

    /// Rows of Python values for `columns` of `table` as Dolt values, every one checked.
    fn rows(
        table: &str,
        cols: &[Column],
        names: &[String],
        rows: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<Vec<Option<SqlValue>>>> {
        let by_name: Vec<&Column> = names
            .iter()
            .map(|n| {
                cols.iter().find(|c| &c.name == n).ok_or_else(|| {
                    PyValueError::new_err(format!("table {table:?} has no column {n:?}"))
                })
            })
            .collect::<PyResult<_>>()?;
        let mut out = Vec::new();
        for (r, row) in rows.try_iter()?.enumerate() {
            let row = row?;
            let place = |c: &Column| format!("table {table:?}, row {r}, column {:?}", c.name);
            let mut vals = Vec::with_capacity(names.len());
            if let Ok(d) = row.downcast::<PyDict>() {
                for (name, col) in names.iter().zip(&by_name) {
                    let v = d.get_item(name)?.ok_or_else(|| {
                        PyValueError::new_err(format!("{}: no value given", place(col)))
                    })?;
                    vals.push(py_to_sql_at(&v, col, &place(col))?);
                }
            } else {
                let items: Vec<Bound<'_, PyAny>> = row
                    .try_iter()
                    .map_err(|_| {
                        PyTypeError::new_err(format!(
                            "table {table:?}, row {r}: expected a tuple, list or dict of values"
                        ))
                    })?
                    .collect::<PyResult<_>>()?;
                if items.len() != names.len() {
                    return Err(PyValueError::new_err(format!(
                        "table {table:?}, row {r}: {} values for {} columns",
                        items.len(),
                        names.len()
                    )));
                }
                for (v, col) in items.iter().zip(&by_name) {
                    vals.push(py_to_sql_at(v, col, &place(col))?);
                }
            }
            out.push(vals);
        }
        Ok(out)
    }

    fn apply(
        &self,
        mode: RowMode,
        table: &str,
        rows: &Bound<'_, PyAny>,
        columns: Option<Vec<String>>,
    ) -> PyResult<usize> {
        if is_arrow_data(rows)? {
            return self.apply_arrow(mode, table, rows, columns);
        }
        self.with(|w| {
            let cols = w.columns(table).map_err(dolt_err)?;
            let names =
                columns.unwrap_or_else(|| cols.iter().map(|c| c.name.clone()).collect::<Vec<_>>());
            let vals = Self::rows(table, &cols, &names, rows)?;
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            let n = vals.len();
            rows.py()
                .detach(|| w.apply(mode, table, &refs, &vals))
                .map_err(dolt_err)?;
            Ok(n)
        })
    }
}

impl PyWriter {
    /// [`PyWriter::apply`] of Arrow data or a pandas DataFrame: its columns by name, through
    /// the writer's streamed path ([`prollystore_arrow::dolt_write`]).
    fn apply_arrow(
        &self,
        mode: RowMode,
        table: &str,
        data: &Bound<'_, PyAny>,
        columns: Option<Vec<String>>,
    ) -> PyResult<usize> {
        if columns.is_some() {
            return Err(PyTypeError::new_err(
                "Arrow data and DataFrames name their own columns: columns= is for rows of values",
            ));
        }
        let data = arrow_source(data)?;
        let reader = ArrowArrayStreamReader::from_pyarrow_bound(&data)?;
        let batches: Vec<RecordBatch> = reader
            .collect::<Result<_, _>>()
            .map_err(|e| PyValueError::new_err(format!("reading the Arrow data: {e}")))?;
        self.with(|w| {
            data.py()
                .detach(|| write_batches(w, mode, table, batches))
                .map_err(arrow_err)
        })
    }
}

#[pymethods]
impl PyWriter {
    /// Opens the Dolt database directory `path` for writing (Dolt's writer lock is held until
    /// `close`); fails with `LockedError` while Dolt or another writer has it.
    #[new]
    fn new(py: Python<'_>, path: PathBuf) -> PyResult<PyWriter> {
        let w = py
            .detach(|| prollystore_sql::writer(&path))
            .map_err(dolt_err)?;
        Ok(PyWriter {
            inner: Mutex::new(Some(w)),
        })
    }

    /// The branch changes go to.
    #[getter]
    fn branch(&self) -> PyResult<String> {
        self.with(|w| Ok(w.branch().to_string()))
    }

    /// The tables of the working root.
    fn tables(&self) -> PyResult<Vec<String>> {
        self.with(|w| w.tables().map_err(dolt_err))
    }

    /// The visible column names of `table`, in order.
    fn columns(&self, table: &str) -> PyResult<Vec<String>> {
        self.with(|w| {
            Ok(w.columns(table)
                .map_err(dolt_err)?
                .into_iter()
                .map(|c| c.name)
                .collect())
        })
    }

    /// Creates a table from `CREATE TABLE` text.
    fn create_table(&self, sql: &str) -> PyResult<()> {
        let def = TableDef::from_sql(sql).map_err(dolt_err)?;
        self.with(|w| w.create_table(&def).map_err(dolt_err))
    }

    /// Runs one `ALTER TABLE …` statement (or `RENAME TABLE a TO b`) as Dolt runs it; a
    /// clause Dolt refuses, or one not done yet, raises with nothing changed.
    fn alter(&self, sql: &str) -> PyResult<()> {
        self.with(|w| w.alter(sql).map_err(dolt_err))
    }

    /// Drops a table.
    fn drop_table(&self, table: &str) -> PyResult<()> {
        self.with(|w| w.drop_table(table).map_err(dolt_err))
    }

    /// Inserts `rows` (tuples or lists of values for `columns`, default every visible column,
    /// or dicts by column name; or Arrow data — a pyarrow Table or RecordBatchReader, a Polars
    /// or DuckDB result, anything with `__arrow_c_stream__` — or a pandas DataFrame, whose
    /// columns name the table's); a duplicate key is an error. All rows or none. Returns the
    /// count.
    #[pyo3(signature = (table, rows, columns = None))]
    fn insert(
        &self,
        table: &str,
        rows: &Bound<'_, PyAny>,
        columns: Option<Vec<String>>,
    ) -> PyResult<usize> {
        self.apply(RowMode::Insert, table, rows, columns)
    }

    /// Inserts rows whose key is new and updates the others (as `insert`).
    #[pyo3(signature = (table, rows, columns = None))]
    fn upsert(
        &self,
        table: &str,
        rows: &Bound<'_, PyAny>,
        columns: Option<Vec<String>>,
    ) -> PyResult<usize> {
        self.apply(RowMode::Upsert, table, rows, columns)
    }

    /// Updates rows by primary key (`columns` must include the key); a missing row is an
    /// error.
    #[pyo3(signature = (table, rows, columns = None))]
    fn update(
        &self,
        table: &str,
        rows: &Bound<'_, PyAny>,
        columns: Option<Vec<String>>,
    ) -> PyResult<usize> {
        self.apply(RowMode::Update, table, rows, columns)
    }

    /// Deletes rows by primary key: `keys` holds one tuple of key values per row (or one
    /// value, for a one-column key); absent keys are skipped.
    fn delete(&self, table: &str, keys: &Bound<'_, PyAny>) -> PyResult<usize> {
        self.with(|w| {
            let cols = w.columns(table).map_err(dolt_err)?;
            let key_cols: Vec<Column> = cols.iter().filter(|c| c.primary_key).cloned().collect();
            if key_cols.is_empty() {
                return Err(PyValueError::new_err(format!(
                    "table {table:?} has no primary key; delete needs one"
                )));
            }
            let mut out = Vec::new();
            for (r, k) in keys.try_iter()?.enumerate() {
                let k = k?;
                let items: Vec<Bound<'_, PyAny>> = if k.is_instance_of::<pyo3::types::PyTuple>()
                    || k.is_instance_of::<pyo3::types::PyList>()
                {
                    k.try_iter()?.collect::<PyResult<_>>()?
                } else {
                    vec![k]
                };
                if items.len() != key_cols.len() {
                    return Err(PyValueError::new_err(format!(
                        "table {table:?}, row {r}: {} key values for a key of {} columns",
                        items.len(),
                        key_cols.len()
                    )));
                }
                let vals = items
                    .iter()
                    .zip(&key_cols)
                    .map(|(v, c)| {
                        let place = format!("table {table:?}, row {r}, column {:?}", c.name);
                        py_to_sql_at(v, c, &place)?.ok_or_else(|| {
                            PyTypeError::new_err(format!("{place}: a key value cannot be NULL"))
                        })
                    })
                    .collect::<PyResult<Vec<_>>>()?;
                out.push(vals);
            }
            let n = out.len();
            w.delete(table, &out).map_err(dolt_err)?;
            Ok(n)
        })
    }

    /// Writes the changes as the branch's working set, uncommitted (as a `dolt sql`
    /// transaction leaves them). `date`: an aware datetime or Unix seconds (default now).
    #[pyo3(signature = (author, email, date = None))]
    fn save(
        &self,
        py: Python<'_>,
        author: &str,
        email: &str,
        date: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let secs = (date_millis(date)? / 1000).max(0) as u64;
        self.with(|w| {
            py.detach(|| w.save((author, email), secs))
                .map_err(dolt_err)
        })
    }

    /// Stages every change and commits it to the branch (`dolt add -A` + `dolt commit`);
    /// returns the commit hash. `date`: an aware datetime or Unix seconds (default now).
    #[pyo3(signature = (message, author, email, date = None))]
    fn commit(
        &self,
        py: Python<'_>,
        message: &str,
        author: &str,
        email: &str,
        date: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        let meta = CommitMeta {
            message: message.to_string(),
            author_name: author.to_string(),
            author_email: email.to_string(),
            author_millis: date_millis(date)?,
            committer: None,
            committer_millis: None,
        };
        self.with(|w| {
            py.detach(|| w.commit(&meta))
                .map(|a| a.to_string())
                .map_err(dolt_err)
        })
    }

    /// Releases the writer lock, dropping uncommitted, unsaved changes. Idempotent.
    fn close(&self) {
        if let Ok(mut g) = self.inner.lock() {
            g.take();
        }
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __exit__(
        &self,
        _t: Option<&Bound<'_, PyAny>>,
        _v: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) {
        self.close();
    }
}

/// Creates branch `name` at `start` (a branch, tag or commit; default HEAD); returns its
/// commit hash.
#[pyfunction]
#[pyo3(signature = (path, name, start = "HEAD"))]
fn create_branch(py: Python<'_>, path: PathBuf, name: &str, start: &str) -> PyResult<String> {
    py.detach(|| vc::create_branch(&path, name, start))
        .map(|a| a.to_string())
        .map_err(dolt_err)
}

/// Deletes branch `name` (`force`: even when not merged).
#[pyfunction]
#[pyo3(signature = (path, name, force = false))]
fn delete_branch(py: Python<'_>, path: PathBuf, name: &str, force: bool) -> PyResult<()> {
    py.detach(|| vc::delete_branch(&path, name, force))
        .map_err(dolt_err)
}

/// Makes `branch` the current branch (`dolt checkout`).
#[pyfunction]
fn checkout(py: Python<'_>, path: PathBuf, branch: &str) -> PyResult<()> {
    py.detach(|| vc::checkout(&path, branch)).map_err(dolt_err)
}

/// Merges `branch` into the current branch (`dolt merge`): a dict with `kind`
/// (`up_to_date`, `fast_forward`, `merged`, `conflicts`), `commit` (hash or None) and
/// `conflicts` (dicts: table, key, reason; nothing is written then). `on_conflict`: `stop`,
/// `ours` or `theirs`.
#[pyfunction]
#[pyo3(signature = (path, branch, author, email, date = None, message = None, on_conflict = "stop"))]
#[allow(clippy::too_many_arguments)]
fn merge<'py>(
    py: Python<'py>,
    path: PathBuf,
    branch: &str,
    author: &str,
    email: &str,
    date: Option<&Bound<'py, PyAny>>,
    message: Option<String>,
    on_conflict: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let mut opts = MergeOptions::new(Signature::new(author, email, date_millis(date)?));
    opts.message = message;
    opts.expressions = Some(prollystore_sql::engine());
    opts.on_conflict = match on_conflict {
        "stop" => OnConflict::Stop,
        "ours" => OnConflict::Ours,
        "theirs" => OnConflict::Theirs,
        other => {
            return Err(PyValueError::new_err(format!(
                "on_conflict: {other:?}; expected \"stop\", \"ours\" or \"theirs\""
            )))
        }
    };
    let r = py
        .detach(|| vc::merge(Path::new(&path), branch, &opts))
        .map_err(dolt_err)?;
    let d = PyDict::new(py);
    let (kind, commit) = match &r {
        MergeResult::UpToDate => ("up_to_date", None),
        MergeResult::FastForward(a) => ("fast_forward", Some(a.to_string())),
        MergeResult::Merged { commit, .. } => ("merged", Some(commit.to_string())),
        MergeResult::Conflicts(_) => ("conflicts", None),
    };
    d.set_item("kind", PyString::new(py, kind))?;
    d.set_item("commit", commit)?;
    let conflicts = pyo3::types::PyList::empty(py);
    if let MergeResult::Conflicts(cs) = &r {
        for c in cs {
            let cd = PyDict::new(py);
            cd.set_item("table", &c.table)?;
            cd.set_item("key", &c.key)?;
            cd.set_item("reason", &c.reason)?;
            conflicts.append(cd)?;
        }
    }
    d.set_item("conflicts", conflicts)?;
    Ok(d)
}

/// Adds the writer class and functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyWriter>()?;
    m.add_function(wrap_pyfunction!(create_branch, m)?)?;
    m.add_function(wrap_pyfunction!(delete_branch, m)?)?;
    m.add_function(wrap_pyfunction!(checkout, m)?)?;
    m.add_function(wrap_pyfunction!(merge, m)?)?;
    Ok(())
}
