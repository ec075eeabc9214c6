//! Arrow out of (and into) Python: every object that yields tabular data hands a
//! `RecordBatchReader` to Python through the Arrow PyCapsule protocol (`__arrow_c_stream__`), so
//! pyarrow, Polars, pandas and DuckDB read it without copying; `to_arrow`, `to_pandas` and
//! `to_polars` import those libraries lazily.

use std::ffi::CString;
use std::sync::Mutex;

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::RecordBatchReader;
use arrow_pyarrow::ToPyArrow;
use arrow_schema::SchemaRef;
use pyo3::exceptions::{PyImportError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use crate::errors::{dolt_err, tree_err, Error};

/// A reader of batches that may cross threads (what the C stream interface holds).
pub type BoxedReader = Box<dyn RecordBatchReader + Send>;

/// `prollystore_arrow::Error` as the exception that fits it.
pub fn arrow_err(e: prollystore_arrow::Error) -> PyErr {
    use prollystore_arrow::Error as E;
    match e {
        E::Dolt(d) => dolt_err(d),
        E::Tree(t) => tree_err(t),
        E::Row(r) => crate::errors::row_err(r, None),
        E::Mismatch(m) => PyValueError::new_err(m),
        other => Error::new_err(other.to_string()),
    }
}

/// `reader` as an `arrow_array_stream` capsule. The capsule owns the C stream; a consumer
/// moves the stream out (leaving its `release` empty), and the capsule's destructor releases
/// a stream nobody took.
pub fn stream_capsule(py: Python<'_>, reader: BoxedReader) -> PyResult<Bound<'_, PyCapsule>> {
    let stream = FFI_ArrowArrayStream::new(reader);
    let name = CString::new("arrow_array_stream").expect("no NUL in the name");
    PyCapsule::new(py, stream, Some(name))
}

fn import<'py>(py: Python<'py>, module: &str, extra: &str) -> PyResult<Bound<'py, PyModule>> {
    py.import(module).map_err(|e| {
        PyImportError::new_err(format!(
            "{module} is not installed ({e}); install it, e.g. `pip install {extra}`"
        ))
    })
}

/// `obj` (anything with `__arrow_c_stream__`) as a `pyarrow.Table`: its stream read whole
/// through `pyarrow.RecordBatchReader.from_stream` (pyarrow 15 on), which is what
/// `pyarrow.table(obj)` does after asking whether `obj` is a pandas DataFrame; that question
/// imports pandas (when installed) on the first call in a process, 0.2-0.3 s of a first read
/// (`docs/PERF.md`, "First read in a fresh process"). Older pyarrow: `pyarrow.table`.
pub fn to_pyarrow<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let pa = import(obj.py(), "pyarrow", "pyarrow")?;
    let reader = pa.getattr("RecordBatchReader")?;
    if reader.hasattr("from_stream")? {
        return reader
            .call_method1("from_stream", (obj,))?
            .call_method0("read_all");
    }
    pa.call_method1("table", (obj,))
}

/// `obj` as a `pandas.DataFrame` (through pyarrow).
pub fn to_pandas<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    import(obj.py(), "pandas", "pandas")?;
    to_pyarrow(obj)?.call_method0("to_pandas")
}

/// `obj` as a `polars.DataFrame` (Polars reads the C stream itself; pyarrow not needed).
pub fn to_polars<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let pl = import(obj.py(), "polars", "polars")?;
    pl.call_method1("DataFrame", (obj,))
}

/// A one-shot stream of record batches (from `Table.batches`): pass it to `pyarrow.table`,
/// `polars.DataFrame`, DuckDB, or call `to_arrow()`; it can be read once.
#[pyclass(module = "prollystore._native", name = "RecordBatchStream", frozen)]
pub struct PyStream {
    reader: Mutex<Option<BoxedReader>>,
    schema: SchemaRef,
}

impl PyStream {
    /// Wraps `reader`.
    pub fn new(reader: BoxedReader) -> PyStream {
        let schema = reader.schema();
        PyStream {
            reader: Mutex::new(Some(reader)),
            schema,
        }
    }
}

impl PyStream {
    /// The next batch as a `pyarrow.RecordBatch`, `None` at the end (also once the stream
    /// was handed on whole).
    fn read_next<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let next = {
            let mut guard = self
                .reader
                .lock()
                .map_err(|_| Error::new_err("this stream failed while being read"))?;
            // A stream handed on whole (`read_all`, `__arrow_c_stream__`) has no more batches.
            let Some(reader) = guard.as_mut() else {
                return Ok(None);
            };
            py.detach(|| reader.next())
        };
        match next {
            None => Ok(None),
            Some(Ok(batch)) => {
                import(py, "pyarrow", "pyarrow")?;
                batch.to_pyarrow(py).map(Some)
            }
            Some(Err(e)) => Err(Error::new_err(e.to_string())),
        }
    }
}

#[pymethods]
impl PyStream {
    /// The Arrow PyCapsule protocol: the batches as an `arrow_array_stream` capsule (once).
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema; // the protocol lets a producer keep its own schema
        let reader = self
            .reader
            .lock()
            .ok()
            .and_then(|mut g| g.take())
            .ok_or_else(|| Error::new_err("this stream was already read"))?;
        stream_capsule(py, reader)
    }

    /// `for batch in stream`: the stream's batches as `pyarrow.RecordBatch`es, as a
    /// `pyarrow.RecordBatchReader` yields them.
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.read_next(py)
    }

    /// The next batch as a `pyarrow.RecordBatch`; `StopIteration` at the end (as
    /// `pyarrow.RecordBatchReader.read_next_batch`).
    fn read_next_batch<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.read_next(py)?
            .ok_or_else(|| pyo3::exceptions::PyStopIteration::new_err(()))
    }

    /// The rest of the stream as a `pyarrow.Table` (as `pyarrow.RecordBatchReader.read_all`).
    fn read_all<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        to_pyarrow(slf.as_any())
    }

    /// Column names.
    #[getter]
    fn columns(&self) -> Vec<String> {
        self.schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect()
    }

    /// Reads the stream into a `pyarrow.Table`.
    fn to_arrow<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        to_pyarrow(slf.as_any())
    }

    /// Reads the stream into a `pandas.DataFrame`.
    fn to_pandas<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        to_pandas(slf.as_any())
    }

    /// Reads the stream into a `polars.DataFrame`.
    fn to_polars<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        to_polars(slf.as_any())
    }
}

/// Whether `obj` is a pandas DataFrame (without importing pandas).
fn is_pandas(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    let t = obj.get_type();
    let name = t.name()?;
    Ok(t.module()?.to_cow()?.starts_with("pandas") && name.to_cow()? == "DataFrame")
}

/// Whether `obj` is Arrow data (anything with `__arrow_c_stream__`: pyarrow tables and
/// readers, Polars and DuckDB results) or a pandas DataFrame.
pub(crate) fn is_arrow_data(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(obj.hasattr("__arrow_c_stream__")? || is_pandas(obj)?)
}

/// `obj` as something with `__arrow_c_stream__`: pandas DataFrames through
/// `pyarrow.Table.from_pandas` (index dropped).
pub(crate) fn arrow_source<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if is_pandas(obj)? {
        let pa = obj.py().import("pyarrow").map_err(|e| {
            pyo3::exceptions::PyImportError::new_err(format!(
                "reading a pandas DataFrame needs pyarrow ({e})"
            ))
        })?;
        let kw = pyo3::types::PyDict::new(obj.py());
        kw.set_item("preserve_index", false)?;
        return pa
            .getattr("Table")?
            .call_method("from_pandas", (obj,), Some(&kw));
    }
    Ok(obj.clone())
}
