//! `Table.split(n)` and `Part`: a Dolt table cut into parts of nearly equal row counts
//! (`prollystore_dolt::parts`), each a small JSON description that pickles, travels to a Dask
//! or Ray worker process or a Spark executor, and reads there on its own as Arrow.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyType};

use prollystore_arrow::{DiffBatches, TableBatches, DEFAULT_BATCH_ROWS};
use prollystore_dolt::diff_parts::{split_diff, DiffPart};
use prollystore_dolt::parts::{split_table, Located, Origin, Part, SplitOptions};
use prollystore_dolt::{Database, Table};

use crate::arrow::{arrow_err, stream_capsule, to_pandas, to_pyarrow, BoxedReader, PyStream};
use crate::errors::dolt_err;

/// Cuts `table`, read from `db` at `origin`, into `n` parts; see `Table.split`.
pub(crate) fn split(
    py: Python<'_>,
    db: &Database,
    (origin, table): (&Origin, &Table),
    n: usize,
    options: SplitOptions,
) -> PyResult<Vec<PyPart>> {
    let parts = py
        .detach(|| split_table(db, origin, table, n, &options))
        .map_err(dolt_err)?;
    Ok(parts.into_iter().map(|part| PyPart { part }).collect())
}

/// The database a part names, opened in this process (a remote read in place: `http(s)://`
/// or `s3://`, credentials from the environment; else a local directory), with the SQL
/// expression engine (VIRTUAL columns).
fn open_database(part: &impl Located) -> prollystore_dolt::Result<Database> {
    let options = prollystore_dolt_remote::OpenOptions::default();
    prollystore_dolt_remote::open_part_database(part, &options)
        .map(|db| db.with_expressions(prollystore_sql::engine()))
        .map_err(|e| match e {
            prollystore_dolt_remote::RemoteError::Local(e) => e,
            e => prollystore_dolt::error::bad_input(part.describe(), e.to_string()),
        })
}

/// `reader` as a `pyarrow.RecordBatchReader` (`what` names the method needing pyarrow).
fn pyarrow_reader<'py>(
    py: Python<'py>,
    reader: BoxedReader,
    what: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let stream = Bound::new(py, PyStream::new(reader))?;
    let pa = py.import("pyarrow").map_err(|e| {
        pyo3::exceptions::PyImportError::new_err(format!(
            "{what} needs pyarrow ({e}); install it, e.g. `pip install pyarrow`"
        ))
    })?;
    pa.getattr("RecordBatchReader")?
        .call_method1("from_stream", (stream,))
}

/// The rows of `part` as made by `read` on its database, opened here (without the GIL).
fn part_reader<P, R>(
    py: Python<'_>,
    part: &P,
    read: impl FnOnce(Arc<Database>, &P) -> prollystore_arrow::Result<R> + Send,
) -> PyResult<BoxedReader>
where
    P: Located + Sync,
    R: arrow_array::RecordBatchReader + Send + 'static,
{
    let batches = py
        .detach(|| read(Arc::new(open_database(part)?), part))
        .map_err(arrow_err)?;
    Ok(Box::new(batches))
}

/// A part's hash: its JSON's.
fn json_hash(json: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    json.hash(&mut h);
    h.finish()
}

/// The methods both kinds of part have in Python: JSON and pickling, equality and hashing by
/// their JSON, and their rows as Arrow (`read`, `batches`, the PyCapsule stream, `to_arrow`,
/// `to_pandas`) from the class's `reader`; the class's own methods go in the braces.
macro_rules! part_methods {
    ($class:ty, $name:literal { $($own:tt)* }) => {
        #[pymethods]
        impl $class {
            $($own)*

            /// The part as one line of JSON.
            fn to_json(&self) -> String {
                self.part.to_json()
            }

            /// A part from its JSON (`to_json`); anything else raises `BadInputError` saying what.
            #[classmethod]
            fn from_json(_cls: &Bound<'_, PyType>, text: &str) -> PyResult<Self> {
                FromJson::from_json(text)
                    .map(|part| Self { part })
                    .map_err(dolt_err)
            }

            /// Pickled as its JSON.
            fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
                let from_json = slf.get_type().getattr("from_json")?;
                Ok((from_json, (slf.get().part.to_json(),)))
            }

            fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
                other
                    .downcast::<Self>()
                    .is_ok_and(|o| o.get().part == self.part)
            }

            fn __hash__(&self) -> u64 {
                json_hash(&self.part.to_json())
            }

            /// The part's rows as a `pyarrow.RecordBatchReader` of `batch_rows`-row batches (needs
            /// pyarrow), read from the database opened in this process.
            #[pyo3(signature = (batch_rows = DEFAULT_BATCH_ROWS))]
            fn read<'py>(&self, py: Python<'py>, batch_rows: usize) -> PyResult<Bound<'py, PyAny>> {
                pyarrow_reader(py, self.reader(py, batch_rows)?, concat!($name, ".read"))
            }

            /// Record batches of the part, one at a time (for Spark's `mapInArrow`, or any loop).
            #[pyo3(signature = (batch_rows = DEFAULT_BATCH_ROWS))]
            fn batches(&self, py: Python<'_>, batch_rows: usize) -> PyResult<PyStream> {
                Ok(PyStream::new(self.reader(py, batch_rows)?))
            }

            /// The Arrow PyCapsule protocol: the part's rows as an `arrow_array_stream` capsule.
            #[pyo3(signature = (requested_schema = None))]
            fn __arrow_c_stream__<'py>(
                &self,
                py: Python<'py>,
                requested_schema: Option<Bound<'py, PyAny>>,
            ) -> PyResult<Bound<'py, PyCapsule>> {
                let _ = requested_schema; // the protocol lets a producer keep its own schema
                stream_capsule(py, self.reader(py, DEFAULT_BATCH_ROWS)?)
            }

            /// The part's rows as a `pyarrow.Table`.
            fn to_arrow<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
                to_pyarrow(slf.as_any())
            }

            /// The part's rows as a `pandas.DataFrame`.
            fn to_pandas<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
                to_pandas(slf.as_any())
            }
        }
    };
}

/// A part description read from its JSON (either kind).
trait FromJson: Sized {
    fn from_json(text: &str) -> prollystore_dolt::Result<Self>;
}

impl FromJson for Part {
    fn from_json(text: &str) -> prollystore_dolt::Result<Part> {
        Part::from_json(text)
    }
}

impl FromJson for DiffPart {
    fn from_json(text: &str) -> prollystore_dolt::Result<DiffPart> {
        DiffPart::from_json(text)
    }
}

/// One part of a Dolt table: where the database is, the state and table chunk it was cut
/// from, the rows (positions and boundary keys) and columns it reads. Picklable; `to_json()`
/// and `Part.from_json(text)` for anything else. `read()` opens the database in this process
/// and reads just the part's rows, whatever the branch holds now.
#[pyclass(module = "prollystore._native", name = "Part", frozen)]
pub struct PyPart {
    part: Part,
}

impl PyPart {
    fn reader(&self, py: Python<'_>, batch_rows: usize) -> PyResult<BoxedReader> {
        part_reader(py, &self.part, |db, part| {
            TableBatches::part(db, part, batch_rows)
        })
    }
}

part_methods!(PyPart, "Part" {
    fn __repr__(&self) -> String {
        let p = &self.part;
        format!(
            "<prollystore.dolt.Part {} of {} of {:?} at {:?}: rows {}..{}>",
            p.index, p.of, p.table, p.at, p.start, p.end
        )
    }

    /// This part's number, from 0.
    #[getter]
    fn index(&self) -> u64 {
        self.part.index
    }

    /// How many parts the table (or range) was cut into.
    #[getter]
    fn of(&self) -> u64 {
        self.part.of
    }

    /// The first row position (0: the table's first row in key order).
    #[getter]
    fn start(&self) -> u64 {
        self.part.start
    }

    /// One past the last row position.
    #[getter]
    fn end(&self) -> u64 {
        self.part.end
    }

    /// Rows in the part (stored rows: a keyless row counts once with all its copies).
    #[getter]
    fn rows(&self) -> u64 {
        self.part.rows()
    }

    /// The table's name.
    #[getter]
    fn table(&self) -> &str {
        &self.part.table
    }

    /// Where the database is (a `file://` URL, a path, or a remote's URL).
    #[getter]
    fn database(&self) -> &str {
        &self.part.database
    }

    /// The state the table was read at, as given.
    #[getter]
    fn at(&self) -> &str {
        &self.part.at
    }

    /// The commit that state resolved to (None for working and staged states).
    #[getter]
    fn commit(&self) -> Option<String> {
        self.part.commit.map(|c| c.to_string())
    }

    /// The root value the part was cut from.
    #[getter]
    fn root(&self) -> String {
        self.part.root.to_string()
    }

    /// The table chunk the part reads (`dolt_hashof_table`).
    #[getter]
    fn table_hash(&self) -> String {
        self.part.table_hash.to_string()
    }

    /// The columns read (None: every visible column).
    #[getter]
    fn columns(&self) -> Option<Vec<String>> {
        self.part.columns.clone()
    }

});

/// Cuts the diff of `table` from `from` to `to` into `n` parts; see `Database.split_diff`.
pub(crate) fn split_diff_parts(
    py: Python<'_>,
    db: &Database,
    (from, to, table): (&str, &str, &str),
    n: usize,
    location: Option<&str>,
) -> PyResult<Vec<PyDiffPart>> {
    let parts = py
        .detach(|| split_diff(db, from, to, table, n, location))
        .map_err(dolt_err)?;
    Ok(parts.into_iter().map(|part| PyDiffPart { part }).collect())
}

/// One part of a table's diff between two states: where the database is, the two states and
/// table chunks it was cut from, and its key range. Picklable; `to_json()` and
/// `DiffPart.from_json(text)` for anything else. `read()` opens the database in this process
/// and reads just the part's rows of the diff (`dolt_diff`'s columns), whatever the branches
/// hold now; the parts' rows, one part after the other, are the whole diff's.
#[pyclass(module = "prollystore._native", name = "DiffPart", frozen)]
pub struct PyDiffPart {
    part: DiffPart,
}

impl PyDiffPart {
    fn reader(&self, py: Python<'_>, batch_rows: usize) -> PyResult<BoxedReader> {
        part_reader(py, &self.part, |db, part| {
            DiffBatches::part(db, part, batch_rows)
        })
    }
}

part_methods!(PyDiffPart, "DiffPart" {
    fn __repr__(&self) -> String {
        let p = &self.part;
        format!(
            "<prollystore.dolt.DiffPart {} of {} of the diff of {:?} from {:?} to {:?}: {} rows compared>",
            p.index, p.of, p.table, p.from.at, p.to.at, p.rows_compared
        )
    }

    /// This part's number, from 0.
    #[getter]
    fn index(&self) -> u64 {
        self.part.index
    }

    /// How many parts the diff was cut into.
    #[getter]
    fn of(&self) -> u64 {
        self.part.of
    }

    /// The table's name.
    #[getter]
    fn table(&self) -> &str {
        &self.part.table
    }

    /// Where the database is (a `file://` URL, a path, or a remote's URL).
    #[getter]
    fn database(&self) -> &str {
        &self.part.database
    }

    /// The state the diff is from, as given.
    #[getter]
    fn from_(&self) -> &str {
        &self.part.from.at
    }

    /// The state the diff is to, as given.
    #[getter]
    fn to(&self) -> &str {
        &self.part.to.at
    }

    /// The table chunk in the `from` state (None: the table is not there).
    #[getter(from_table_hash)]
    fn older_table_hash(&self) -> Option<String> {
        self.part.from.table_hash.map(|a| a.to_string())
    }

    /// The table chunk in the `to` state (None: the table is not there).
    #[getter]
    fn to_table_hash(&self) -> Option<String> {
        self.part.to.table_hash.map(|a| a.to_string())
    }

    /// The stored key the part's keys come after (exclusive), as bytes; None for the first.
    #[getter]
    fn after_key(&self) -> Option<Vec<u8>> {
        self.part.after_key.clone()
    }

    /// The stored key the part's keys go up to (inclusive), as bytes; None for the last.
    #[getter]
    fn last_key(&self) -> Option<Vec<u8>> {
        self.part.last_key.clone()
    }

    /// Stored rows the part compares (the rows of the leaves the two states do not share):
    /// what the parts were balanced by, not the number of rows the part gives.
    #[getter]
    fn rows_compared(&self) -> u64 {
        self.part.rows_compared
    }

});

/// Registers the classes.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyPart>()?;
    m.add_class::<PyDiffPart>()?;
    Ok(())
}
