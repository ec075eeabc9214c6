//! Native stores from Python: a store (a directory or memory) holds typed maps
//! ([`prollystore::rows::RowSchema`]); a map is built from rows, read by key or range, edited,
//! diffed, merged three ways with a Python conflict callback, copied between stores.
//!
//! A file store keeps its maps as the CLI does ([`prollystore::catalog`]): root `NAME` is
//! the map's tree and root `NAME.schema` its schema blob, so `prolly` reads what Python saved.

use std::collections::BTreeMap;
use std::ops::Bound as KeyBound;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use prollystore::blob::{read_blob, StoreBlobs};
use prollystore::catalog;
use prollystore::format::{Address, HashProfile};
use prollystore::rows::{RowDecoder, RowEncoder, RowSchema};
use prollystore::store::file::RootUpdate;
use prollystore::tree::merge::Resolution;
use prollystore::tuples::TupleSchema;
use prollystore::{BuiltinStore, DiffEntry, FileStore, Map, MemoryStore};

use arrow_array::ffi_stream::ArrowArrayStreamReader;
use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_pyarrow::FromPyArrow;
use arrow_schema::{ArrowError, SchemaRef};
use prollystore_arrow::{build_map, infer_row_schema, map_schema, MapBatches, DEFAULT_BATCH_ROWS};
use pyo3::types::PyCapsule;

use crate::arrow::{
    arrow_err, arrow_source, is_arrow_data, stream_capsule, to_pandas, to_polars, to_pyarrow,
};
use crate::errors::{catalog_err, closed, row_err, store_err, tree_err};
use crate::values::{py_to_held, value_to_py, Held};

/// The store behind every map made from it; `None` once closed.
pub struct StoreShared {
    inner: Mutex<Option<BuiltinStore>>,
    /// Named maps of a memory store (a file store keeps them as roots).
    memory_maps: Mutex<BTreeMap<String, (Address, RowSchema)>>,
    path: Option<PathBuf>,
}

impl StoreShared {
    fn lock(&self) -> PyResult<StoreGuard<'_>> {
        let g = self.inner.lock().map_err(|_| closed("store"))?;
        if g.is_none() {
            return Err(closed("store"));
        }
        Ok(StoreGuard(g))
    }
}

/// The locked, open store.
struct StoreGuard<'a>(MutexGuard<'a, Option<BuiltinStore>>);

impl StoreGuard<'_> {
    /// Runs `f` on the store with the GIL released. A memory store is not `Sync`, so the
    /// closure gets the store through the guard's exclusive borrow (which is `Send`), and its
    /// result must own its data.
    fn detached<R: Send>(
        &mut self,
        py: Python<'_>,
        f: impl FnOnce(&BuiltinStore) -> R + Send,
    ) -> R {
        let s = self.store_mut();
        py.detach(move || f(s))
    }

    fn store(&self) -> &BuiltinStore {
        self.0.as_ref().expect("checked open by StoreShared::lock")
    }
    fn store_mut(&mut self) -> &mut BuiltinStore {
        self.0.as_mut().expect("checked open by StoreShared::lock")
    }
}

fn profile(name: &str) -> PyResult<HashProfile> {
    match name {
        "blake3" => Ok(HashProfile::Blake3),
        "dolt" => Ok(HashProfile::Dolt),
        _ => Err(PyValueError::new_err(format!(
            "hash profile {name:?}: use \"blake3\" (fast, the default) or \"dolt\" (Dolt's addresses)"
        ))),
    }
}

/// A chunk store holding typed maps: in memory (`Store.memory()`) or in a directory
/// (`Store.create(path)`, `Store.open(path)`). Use as a context manager, or call `close()`.
#[pyclass(module = "prollystore._native", name = "Store", frozen)]
pub struct PyStore {
    shared: Arc<StoreShared>,
}

impl PyStore {
    fn wrap(store: BuiltinStore, path: Option<PathBuf>) -> PyStore {
        PyStore {
            shared: Arc::new(StoreShared {
                inner: Mutex::new(Some(store)),
                memory_maps: Mutex::new(BTreeMap::new()),
                path,
            }),
        }
    }

    fn map_of(&self, root: Address, schema: RowSchema) -> PyMap {
        PyMap::new(self.shared.clone(), root, schema)
    }
}

/// Encodes Python rows (key columns first) into key and value tuples, moving large values out
/// of band into `store`. Errors name the row and column.
fn encode_rows(
    store: &BuiltinStore,
    schema: &RowSchema,
    rows: &Bound<'_, PyAny>,
) -> PyResult<Vec<(Vec<u8>, Vec<u8>)>> {
    let cols: Vec<_> = schema.columns().cloned().collect();
    let mut enc = RowEncoder::new(schema);
    let mut blobs = StoreBlobs::new(store);
    let mut out = Vec::new();
    let mut held: Vec<Held> = Vec::with_capacity(cols.len());
    for (i, row) in rows.try_iter()?.enumerate() {
        let row = row?;
        held.clear();
        hold_row(&row, &cols, i, &mut held)?;
        let values: Vec<_> = held.iter().map(Held::value).collect();
        let (k, v) = enc
            .encode_with(&values, &mut blobs)
            .map_err(|e| row_err(e, Some(i)))?;
        out.push((k.to_vec(), v.to_vec()));
    }
    Ok(out)
}

/// One Python row (a sequence, or a dict by column name) as held values.
fn hold_row(
    row: &Bound<'_, PyAny>,
    cols: &[prollystore::rows::Column],
    i: usize,
    held: &mut Vec<Held>,
) -> PyResult<()> {
    if let Ok(d) = row.downcast::<PyDict>() {
        for c in cols {
            let place = format!("row {i}, column {:?}", c.name);
            match d.get_item(&c.name)? {
                Some(v) => held.push(py_to_held(&v, c.ty.enc, &place)?),
                None => held.push(Held::Null),
            }
        }
        return Ok(());
    }
    if row.is_instance_of::<pyo3::types::PyString>() || row.is_instance_of::<pyo3::types::PyBytes>()
    {
        return Err(PyTypeError::new_err(format!(
            "row {i}: a row is a tuple, list or dict of column values, not {}",
            row.get_type().name()?
        )));
    }
    let n = row.len().map_err(|_| {
        PyTypeError::new_err(format!(
            "row {i}: a row is a tuple, list or dict of column values"
        ))
    })?;
    if n != cols.len() {
        return Err(PyValueError::new_err(format!(
            "row {i}: {n} values; the schema has {} columns ({})",
            cols.len(),
            cols.iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    for (j, c) in cols.iter().enumerate() {
        let v = row.get_item(j)?;
        held.push(py_to_held(
            &v,
            c.ty.enc,
            &format!("row {i}, column {:?}", c.name),
        )?);
    }
    Ok(())
}

#[pymethods]
impl PyStore {
    /// A new store in memory. `profile` is `"blake3"` (default) or `"dolt"` (Dolt's chunk
    /// addresses).
    #[staticmethod]
    #[pyo3(signature = (profile = "blake3"))]
    fn memory(profile: &str) -> PyResult<PyStore> {
        let p = self::profile(profile)?;
        Ok(PyStore::wrap(MemoryStore::new(p).into(), None))
    }

    /// Creates a store in directory `path` (or opens it if it exists with the same profile),
    /// as its writer.
    #[staticmethod]
    #[pyo3(signature = (path, profile = "blake3"))]
    fn create(py: Python<'_>, path: PathBuf, profile: &str) -> PyResult<PyStore> {
        let p = self::profile(profile)?;
        let s = py
            .detach(|| FileStore::create(&path, p))
            .map_err(store_err)?;
        Ok(PyStore::wrap(s.into(), Some(path)))
    }

    /// Opens the store in directory `path`: as its writer when `write` (default), else
    /// read-only.
    #[staticmethod]
    #[pyo3(signature = (path, write = true))]
    fn open(py: Python<'_>, path: PathBuf, write: bool) -> PyResult<PyStore> {
        let s = py
            .detach(|| {
                if write {
                    FileStore::open_writer(&path)
                } else {
                    FileStore::open(&path)
                }
            })
            .map_err(store_err)?;
        Ok(PyStore::wrap(s.into(), Some(path)))
    }

    /// Closes the store (and the write lock of a file store): maps made from it raise
    /// `ClosedError` from now on. Closing twice is allowed.
    fn close(&self, py: Python<'_>) {
        let store = self.shared.inner.lock().ok().and_then(|mut g| g.take());
        py.detach(|| drop(store));
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.shared
            .inner
            .lock()
            .map(|g| g.is_none())
            .unwrap_or(true)
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, PyTuple>) -> bool {
        self.close(py);
        false
    }

    fn __repr__(&self) -> String {
        let state = if self.closed() { " (closed)" } else { "" };
        match &self.shared.path {
            Some(p) => format!("<prollystore.Store {p:?}{state}>"),
            None => format!("<prollystore.Store in memory{state}>"),
        }
    }

    /// The directory of a file store (None in memory).
    #[getter]
    fn path(&self) -> Option<PathBuf> {
        self.shared.path.clone()
    }

    /// An empty map with key columns `key` and value columns `value` (the compact syntax:
    /// `"id:bigint"`, `"name:varchar(40)?, price:decimal(10,2)"`; `?` allows NULL).
    #[pyo3(signature = (key, value = ""))]
    fn empty(&self, py: Python<'_>, key: &str, value: &str) -> PyResult<PyMap> {
        let schema = RowSchema::parse(key, value).map_err(|e| row_err(e, None))?;
        let mut g = self.shared.lock()?;
        let ts = schema.tuple_schema();
        let root = g
            .detached(py, |store| Map::empty(store, ts).map(|m| m.root()))
            .map_err(tree_err)?;
        drop(g);
        Ok(self.map_of(root, schema))
    }

    /// A map of `rows` (an iterable of tuples/lists in column order, key columns first, or of
    /// dicts by column name) with key columns `key` and value columns `value` (see `empty`).
    /// Rows may come in any order; a later row with the same key wins.
    /// Arrow data and pandas DataFrames go through `from_arrow` (columns found by name).
    #[pyo3(signature = (rows, key, value = ""))]
    fn build(
        &self,
        py: Python<'_>,
        rows: &Bound<'_, PyAny>,
        key: &str,
        value: &str,
    ) -> PyResult<PyMap> {
        if is_arrow_data(rows)? {
            return self.build_from_arrow(
                py,
                rows,
                &pyo3::types::PyString::new(py, key),
                Some(value),
            );
        }
        let schema = RowSchema::parse(key, value).map_err(|e| row_err(e, None))?;
        let mut g = self.shared.lock()?;
        let encoded = encode_rows(g.store(), &schema, rows)?;
        let ts = schema.tuple_schema();
        let root = g
            .detached(py, |store| {
                let empty = Map::empty(store, ts)?;
                empty
                    .apply(encoded.iter().map(|(k, v)| (&k[..], Some(&v[..]))))
                    .map(|m| m.root())
            })
            .map_err(tree_err)?;
        drop(g);
        Ok(self.map_of(root, schema))
    }

    /// A map of the rows of `data`: anything with `__arrow_c_stream__` (a pyarrow Table or
    /// RecordBatchReader, a Polars DataFrame, a `RecordBatchStream`…) or a pandas DataFrame
    /// (read through pyarrow, index dropped). With `value` None, `key` names the key
    /// column(s) (a name or a list) and every type comes from the Arrow schema; otherwise `key`
    /// and `value` are schema texts as in `empty` and columns are found by name. Rows may come
    /// in any order; two rows with one key, or a value that does not fit, raise and build
    /// nothing.
    #[pyo3(name = "from_arrow", signature = (data, key, value = None))]
    fn build_from_arrow(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        key: &Bound<'_, PyAny>,
        value: Option<&str>,
    ) -> PyResult<PyMap> {
        let data = arrow_source(data)?;
        let reader = ArrowArrayStreamReader::from_pyarrow_bound(&data)?;
        let schema = match value {
            Some(v) => {
                let k: String = key.extract().map_err(|_| {
                    PyTypeError::new_err(
                        "with a value schema, key is a schema text like \"id:bigint\"",
                    )
                })?;
                RowSchema::parse(&k, v).map_err(|e| row_err(e, None))?
            }
            None => {
                let names: Vec<String> = match key.extract::<String>() {
                    Ok(one) => vec![one],
                    Err(_) => key.extract().map_err(|_| {
                        PyTypeError::new_err("key is a column name or a list of column names")
                    })?,
                };
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                infer_row_schema(&reader.schema(), &names).map_err(arrow_err)?
            }
        };
        let mut g = self.shared.lock()?;
        let root = g
            .detached(py, |store| {
                build_map(store, &schema, reader).map(|m| m.root())
            })
            .map_err(arrow_err)?;
        drop(g);
        Ok(self.map_of(root, schema))
    }

    /// Saves `map` under `name` (a file store commits the map's root and its schema to disk,
    /// readable by `prolly`; a memory store keeps the name until closed).
    fn save(&self, py: Python<'_>, name: &str, map: &PyMap) -> PyResult<()> {
        if !Arc::ptr_eq(&self.shared, &map.store) {
            return Err(PyValueError::new_err(
                "the map is in another store: copy it here first (Store.copy)",
            ));
        }
        catalog::check_map_name(name).map_err(catalog_err)?;
        let mut g = self.shared.lock()?;
        match g.store_mut() {
            BuiltinStore::File(fs) => {
                let schema_root = catalog::write_schema(&*fs, &map.schema).map_err(catalog_err)?;
                let schema_name = catalog::schema_root_name(name);
                let old = fs.root(name);
                let old_schema = fs.root(&schema_name);
                let root = map.root;
                py.detach(|| {
                    fs.commit(&[
                        RootUpdate::new(name, old, Some(root)),
                        RootUpdate::new(&schema_name, old_schema, Some(schema_root)),
                    ])
                })
                .map_err(store_err)?;
            }
            BuiltinStore::Memory(_) => {
                self.shared
                    .memory_maps
                    .lock()
                    .map_err(|_| closed("store"))?
                    .insert(name.to_string(), (map.root, map.schema.clone()));
            }
        }
        Ok(())
    }

    /// The map saved under `name`.
    fn map(&self, name: &str) -> PyResult<PyMap> {
        let g = self.shared.lock()?;
        let (root, schema) = match g.store() {
            BuiltinStore::File(fs) => {
                let e = catalog::open_map(fs, name)
                    .map_err(|e| crate::errors::NotFoundError::new_err(e.to_string()))?;
                (e.root, e.schema)
            }
            BuiltinStore::Memory(_) => self
                .shared
                .memory_maps
                .lock()
                .map_err(|_| closed("store"))?
                .get(name)
                .cloned()
                .ok_or_else(|| {
                    crate::errors::NotFoundError::new_err(format!("no map named {name:?}"))
                })?,
        };
        drop(g);
        Ok(self.map_of(root, schema))
    }

    /// Names of the saved maps.
    fn maps(&self) -> PyResult<Vec<String>> {
        let g = self.shared.lock()?;
        Ok(match g.store() {
            BuiltinStore::File(fs) => catalog::map_names(fs),
            BuiltinStore::Memory(_) => self
                .shared
                .memory_maps
                .lock()
                .map_err(|_| closed("store"))?
                .keys()
                .cloned()
                .collect(),
        })
    }

    /// Copies `map` (from any store) into this store; returns the copy. Only chunks this store
    /// lacks are written.
    fn copy(&self, py: Python<'_>, map: &PyMap) -> PyResult<PyMap> {
        if Arc::ptr_eq(&self.shared, &map.store) {
            return Ok(self.map_of(map.root, map.schema.clone()));
        }
        // Lock in address order so two copies in opposite directions cannot deadlock.
        let (a, b) = (
            Arc::as_ptr(&map.store) as usize,
            Arc::as_ptr(&self.shared) as usize,
        );
        let (mut from, mut to) = if a < b {
            let f = map.store.lock()?;
            (f, self.shared.lock()?)
        } else {
            let t = self.shared.lock()?;
            (map.store.lock()?, t)
        };
        let root = map.root;
        let (f, t) = (from.store_mut(), to.store_mut());
        py.detach(move || prollystore::tree::copy::copy_tree(&*f, &*t, &root))
            .map_err(tree_err)?;
        drop((from, to));
        Ok(self.map_of(map.root, map.schema.clone()))
    }

    /// Checks every chunk of a file store (hashes and messages); returns counts (files,
    /// chunks, bytes, messages). A memory store reports its chunk count.
    fn verify<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let g = self.shared.lock()?;
        let d = PyDict::new(py);
        match g.store() {
            BuiltinStore::File(fs) => {
                let r = py.detach(|| fs.verify()).map_err(store_err)?;
                d.set_item("files", r.files)?;
                d.set_item("chunks", r.chunks)?;
                d.set_item("bytes", r.bytes)?;
                d.set_item("messages", r.messages)?;
            }
            BuiltinStore::Memory(m) => {
                d.set_item("chunks", m.len())?;
            }
        }
        Ok(d)
    }
}

/// A typed map in a store: an immutable tree (edits return a new map).
#[pyclass(module = "prollystore._native", name = "Map", frozen)]
pub struct PyMap {
    store: Arc<StoreShared>,
    root: Address,
    schema: RowSchema,
    tuple_schema: TupleSchema,
    columns: Vec<String>,
}

impl PyMap {
    fn new(store: Arc<StoreShared>, root: Address, schema: RowSchema) -> PyMap {
        let tuple_schema = schema.tuple_schema();
        let columns = schema.columns().map(|c| c.name.clone()).collect();
        PyMap {
            store,
            root,
            schema,
            tuple_schema,
            columns,
        }
    }

    fn with_root(&self, root: Address) -> PyMap {
        PyMap {
            store: self.store.clone(),
            root,
            schema: self.schema.clone(),
            tuple_schema: self.tuple_schema.clone(),
            columns: self.columns.clone(),
        }
    }

    fn same_store(&self, other: &PyMap, what: &str) -> PyResult<()> {
        if !Arc::ptr_eq(&self.store, &other.store) {
            return Err(PyValueError::new_err(format!(
                "the {what} map is in another store: copy it here first (Store.copy)"
            )));
        }
        if self.schema != other.schema {
            return Err(PyValueError::new_err(format!(
                "the {what} map has another schema ({}; this one: {})",
                other.schema.describe(),
                self.schema.describe()
            )));
        }
        Ok(())
    }

    /// Key tuple bytes of Python key values (a value, or a tuple of the key columns' values).
    fn encode_key(&self, key: &Bound<'_, PyAny>, prefix_ok: bool) -> PyResult<Vec<u8>> {
        let items: Vec<Bound<'_, PyAny>> = match key.downcast::<PyTuple>() {
            Ok(t) => t.iter().collect(),
            Err(_) => vec![key.clone()],
        };
        let n = self.schema.key.len();
        if items.len() != n && !(prefix_ok && items.len() < n) {
            return Err(PyValueError::new_err(format!(
                "the key has {n} columns, {} values given",
                items.len()
            )));
        }
        let mut held = Vec::with_capacity(n);
        for (v, c) in items.iter().zip(&self.schema.key) {
            held.push(py_to_held(
                v,
                c.ty.enc,
                &format!("key column {:?}", c.name),
            )?);
        }
        if items.len() < n {
            return Err(PyValueError::new_err(format!(
                "the key has {n} columns, {} values given",
                items.len()
            )));
        }
        let values: Vec<_> = held.iter().map(Held::value).collect();
        self.schema
            .encode_key(&values)
            .map_err(|e| row_err(e, None))
    }

    /// A stored row as a tuple (or a dict).
    fn decode<'py>(
        &self,
        py: Python<'py>,
        store: &BuiltinStore,
        key: &[u8],
        value: &[u8],
        as_dict: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut vals = Vec::new();
        RowDecoder::new(&self.schema)
            .decode_into(key, value, &mut vals)
            .map_err(|e| row_err(e, None))?;
        let mut blob = |a: &Address, out: &mut Vec<u8>| read_blob(store, a, out).map_err(tree_err);
        let mut items = Vec::with_capacity(vals.len());
        for (v, c) in vals.iter().zip(self.schema.columns()) {
            items.push(match v {
                None => py.None(),
                Some(v) => value_to_py(py, v, c.ty.enc, &mut blob)?,
            });
        }
        if as_dict {
            let d = PyDict::new(py);
            for (name, v) in self.columns.iter().zip(items) {
                d.set_item(name, v)?;
            }
            return Ok(d.into_any());
        }
        Ok(PyTuple::new(py, items)?.into_any())
    }

    fn decode_opt<'py>(
        &self,
        py: Python<'py>,
        store: &BuiltinStore,
        key: &[u8],
        value: Option<&[u8]>,
    ) -> PyResult<Py<PyAny>> {
        Ok(match value {
            None => py.None(),
            Some(v) => self.decode(py, store, key, v, false)?.unbind(),
        })
    }
}

/// The sentinel a merge callback returns to leave a key in conflict.
#[pyclass(module = "prollystore._native", name = "ConflictType", frozen)]
pub struct PyConflict;

#[pymethods]
impl PyConflict {
    fn __repr__(&self) -> &'static str {
        "prollystore.CONFLICT"
    }
}

#[pymethods]
impl PyMap {
    /// The root address (hex-like base32 text, as Dolt prints hashes).
    #[getter]
    fn root(&self) -> String {
        self.root.to_string()
    }

    /// Column names, key columns first.
    #[getter]
    fn columns(&self) -> Vec<String> {
        self.columns.clone()
    }

    /// Key column names.
    #[getter]
    fn key_columns(&self) -> Vec<String> {
        self.schema.key.iter().map(|c| c.name.clone()).collect()
    }

    /// The schema in the compact syntax: `(key, value)`.
    #[getter]
    fn schema(&self) -> (String, String) {
        (
            prollystore::rows::format_columns(&self.schema.key),
            prollystore::rows::format_columns(&self.schema.value),
        )
    }

    /// Number of rows.
    fn count(&self) -> PyResult<u64> {
        let g = self.store.lock()?;
        Map::new(g.store(), self.root, self.tuple_schema.clone())
            .count()
            .map_err(tree_err)
    }

    fn __len__(&self) -> PyResult<usize> {
        Ok(self.count()? as usize)
    }

    fn __repr__(&self) -> String {
        let (k, v) = self.schema();
        format!("<prollystore.Map {} key=({k}) value=({v})>", self.root)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        match other.downcast::<PyMap>() {
            Ok(o) => {
                let o = o.get();
                o.root == self.root && o.schema == self.schema
            }
            Err(_) => false,
        }
    }

    fn __hash__(&self) -> u64 {
        u64::from_be_bytes(self.root.as_bytes()[..8].try_into().unwrap_or_default())
    }

    /// The Arrow PyCapsule protocol: the map's rows (key columns first) as an
    /// `arrow_array_stream` capsule.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema; // the protocol lets a producer keep its own schema
        self.store.lock()?;
        let reader = MapStream {
            store: self.store.clone(),
            root: self.root,
            schema: self.schema.clone(),
            arrow: map_schema(&self.schema),
            next: 0,
            done: false,
        };
        stream_capsule(py, Box::new(reader))
    }

    /// The rows as a `pyarrow.Table` (needs pyarrow).
    fn to_arrow<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        to_pyarrow(slf.as_any())
    }

    /// The rows as a `pandas.DataFrame` (needs pandas and pyarrow).
    fn to_pandas<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        to_pandas(slf.as_any())
    }

    /// The rows as a `polars.DataFrame` (needs polars).
    fn to_polars<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        to_polars(slf.as_any())
    }

    /// The row with key `key` (one value per key column) as a tuple (dict with `as_dict`),
    /// or None.
    #[pyo3(signature = (*key, as_dict = false))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyTuple>,
        as_dict: bool,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let k = self.encode_key(key.as_any(), false)?;
        let g = self.store.lock()?;
        let store = g.store();
        let tree_schema = &self.tuple_schema;
        let found = prollystore::map::get(store, self.root, tree_schema, &k).map_err(tree_err)?;
        match found {
            None => Ok(None),
            Some(v) => Ok(Some(self.decode(py, store, &k, v, as_dict)?)),
        }
    }

    /// Whether a row has key `key`.
    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let k = self.encode_key(key, false)?;
        let g = self.store.lock()?;
        Ok(
            prollystore::map::get(g.store(), self.root, &self.tuple_schema, &k)
                .map_err(tree_err)?
                .is_some(),
        )
    }

    /// Rows with keys from `start` (inclusive) to `end` (exclusive), in key order (or
    /// backwards with `reverse`), at most `limit`; a list of tuples (dicts with `as_dict`).
    #[pyo3(signature = (start = None, end = None, *, reverse = false, limit = None, as_dict = false))]
    fn scan<'py>(
        &self,
        py: Python<'py>,
        start: Option<&Bound<'py, PyAny>>,
        end: Option<&Bound<'py, PyAny>>,
        reverse: bool,
        limit: Option<usize>,
        as_dict: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let lo = match start {
            Some(v) if !v.is_none() => Some(self.encode_key(v, false)?),
            _ => None,
        };
        let hi = match end {
            Some(v) if !v.is_none() => Some(self.encode_key(v, false)?),
            _ => None,
        };
        let mut g = self.store.lock()?;
        let (root, ts) = (self.root, self.tuple_schema.clone());
        let limit = limit.unwrap_or(usize::MAX);
        let rows: Vec<(Vec<u8>, Vec<u8>)> = g
            .detached(py, |store| {
                let map = Map::new(store, root, ts);
                let lo_b = lo
                    .as_deref()
                    .map_or(KeyBound::Unbounded, KeyBound::Included);
                let hi_b = hi
                    .as_deref()
                    .map_or(KeyBound::Unbounded, KeyBound::Excluded);
                let mut out = Vec::new();
                let mut push = |r: Result<(&[u8], &[u8]), prollystore::TreeError>| {
                    r.map(|(k, v)| out.push((k.to_vec(), v.to_vec())))
                };
                if reverse {
                    for r in map.range_rev(lo_b, hi_b)?.take(limit) {
                        push(r)?;
                    }
                } else {
                    for r in map.range(lo_b, hi_b)?.take(limit) {
                        push(r)?;
                    }
                }
                Ok::<_, prollystore::TreeError>(out)
            })
            .map_err(tree_err)?;
        let store = g.store();
        let out = PyList::empty(py);
        for (k, v) in rows {
            out.append(self.decode(py, store, &k, &v, as_dict)?)?;
        }
        Ok(out)
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.scan(py, None, None, false, None, false)?
            .as_any()
            .try_iter()
            .map(Bound::into_any)
    }

    /// A new map with `puts` (rows, as in `Store.build`) written and `deletes` (keys) removed;
    /// a later edit of a key wins. Nothing changes on error.
    #[pyo3(signature = (puts = None, deletes = None))]
    fn edit(
        &self,
        py: Python<'_>,
        puts: Option<&Bound<'_, PyAny>>,
        deletes: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyMap> {
        let mut del_keys = Vec::new();
        if let Some(d) = deletes {
            for k in d.try_iter()? {
                del_keys.push(self.encode_key(&k?, false)?);
            }
        }
        let mut g = self.store.lock()?;
        let put_rows = match puts {
            Some(p) => encode_rows(g.store(), &self.schema, p)?,
            None => Vec::new(),
        };
        let (root0, ts) = (self.root, self.tuple_schema.clone());
        let root = g
            .detached(py, |store| {
                let map = Map::new(store, root0, ts);
                let edits = del_keys
                    .iter()
                    .map(|k| (&k[..], None))
                    .chain(put_rows.iter().map(|(k, v)| (&k[..], Some(&v[..]))));
                map.apply(edits).map(|m| m.root())
            })
            .map_err(tree_err)?;
        drop(g);
        Ok(self.with_root(root))
    }

    /// The changes from this map to `other` (same store and schema), in key order:
    /// a list of `(kind, key, old_row, new_row)` with kind `"added"`, `"removed"` or
    /// `"modified"`, key a tuple, rows tuples (None where absent).
    fn diff<'py>(&self, py: Python<'py>, other: &PyMap) -> PyResult<Bound<'py, PyList>> {
        self.same_store(other, "other")?;
        let mut g = self.store.lock()?;
        let (a, b, ts) = (self.root, other.root, self.tuple_schema.clone());
        type Owned = (&'static str, Vec<u8>, Option<Vec<u8>>, Option<Vec<u8>>);
        let entries: Vec<Owned> = g
            .detached(py, |store| {
                let from = Map::new(store, a, ts.clone());
                let to = Map::new(store, b, ts);
                let d = from.diff(&to)?;
                d.map(|e| {
                    Ok(match e? {
                        DiffEntry::Added { key, to } => {
                            ("added", key.to_vec(), None, Some(to.to_vec()))
                        }
                        DiffEntry::Removed { key, from } => {
                            ("removed", key.to_vec(), Some(from.to_vec()), None)
                        }
                        DiffEntry::Modified { key, from, to } => (
                            "modified",
                            key.to_vec(),
                            Some(from.to_vec()),
                            Some(to.to_vec()),
                        ),
                    })
                })
                .collect::<Result<Vec<Owned>, prollystore::TreeError>>()
            })
            .map_err(tree_err)?;
        let store = g.store();
        let out = PyList::empty(py);
        for (kind, key, old, new) in entries {
            let old_row = self.decode_opt(py, store, &key, old.as_deref())?;
            let new_row = self.decode_opt(py, store, &key, new.as_deref())?;
            let key_t = self.key_tuple(py, store, &key)?;
            out.append((kind, key_t, old_row, new_row))?;
        }
        Ok(out)
    }

    /// Merges into this map (the left side) the changes from `base` to `right` (all three in
    /// one store, one schema). Where both sides changed a key differently,
    /// `resolve(key, base_row, left_row, right_row)` decides: it returns the row to keep, None
    /// to delete the key, or `prollystore.CONFLICT` to keep the left row and report the key.
    /// Without `resolve` every such key is a conflict. Returns `(merged_map, conflicts)`,
    /// conflicts as `(key, base_row, left_row, right_row)`.
    #[pyo3(signature = (base, right, resolve = None))]
    fn merge<'py>(
        &self,
        py: Python<'py>,
        base: &PyMap,
        right: &PyMap,
        resolve: Option<Bound<'py, PyAny>>,
    ) -> PyResult<(PyMap, Bound<'py, PyList>)> {
        self.same_store(base, "base")?;
        self.same_store(right, "right")?;
        let mut g = self.store.lock()?;
        let ts = self.tuple_schema.clone();
        let (l, b, r) = (self.root, base.root, right.root);
        let (root, conflicts) = match &resolve {
            None => g
                .detached(py, |store| {
                    let left = Map::new(store, l, ts.clone());
                    let base_m = Map::new(store, b, ts.clone());
                    let right_m = Map::new(store, r, ts);
                    left.merge(&base_m, &right_m, |_, _, _, _| Resolution::Conflict)
                        .map(|(m, c)| (m.root(), c))
                })
                .map_err(tree_err)?,
            Some(cb) => {
                let store = g.store();
                let left = Map::new(store, l, ts.clone());
                let base_m = Map::new(store, b, ts.clone());
                let right_m = Map::new(store, r, ts);
                let mut failure: Option<PyErr> = None;
                let mut enc = RowEncoder::new(&self.schema);
                let r = left
                    .merge(&base_m, &right_m, |k, b, l, r| {
                        if failure.is_some() {
                            return Resolution::Conflict;
                        }
                        match self.call_resolver(py, store, cb, &mut enc, k, b, l, r) {
                            Ok(res) => res,
                            Err(e) => {
                                failure = Some(e);
                                Resolution::Conflict
                            }
                        }
                    })
                    .map_err(tree_err)?;
                if let Some(e) = failure {
                    return Err(e);
                }
                (r.0.root(), r.1)
            }
        };
        let store = g.store();
        let list = PyList::empty(py);
        for c in &conflicts {
            let row = |v: &Option<Vec<u8>>| self.decode_opt(py, store, &c.key, v.as_deref());
            let (b, l, r) = (row(&c.base)?, row(&c.left)?, row(&c.right)?);
            let key = self.key_tuple(py, store, &c.key)?;
            list.append((key, b, l, r))?;
        }
        drop(g);
        Ok((self.with_root(root), list))
    }
}

impl PyMap {
    /// The key columns' values of a stored key, as a tuple.
    fn key_tuple<'py>(
        &self,
        py: Python<'py>,
        store: &BuiltinStore,
        key: &[u8],
    ) -> PyResult<Bound<'py, PyTuple>> {
        let t = prollystore::format::tuple::Tuple::new(key)
            .map_err(|e| crate::errors::CorruptError::new_err(e.to_string()))?;
        let desc = self.schema.key_desc();
        let mut items = Vec::new();
        let mut blob = |a: &Address, out: &mut Vec<u8>| read_blob(store, a, out).map_err(tree_err);
        for (i, c) in self.schema.key.iter().enumerate() {
            let v = desc
                .value(t, i)
                .map_err(|e| crate::errors::CorruptError::new_err(e.to_string()))?;
            items.push(match v {
                None => py.None(),
                Some(v) => value_to_py(py, &v, c.ty.enc, &mut blob)?,
            });
        }
        PyTuple::new(py, items)
    }

    #[allow(clippy::too_many_arguments)]
    fn call_resolver(
        &self,
        py: Python<'_>,
        store: &BuiltinStore,
        cb: &Bound<'_, PyAny>,
        enc: &mut RowEncoder<'_>,
        key: &[u8],
        base: Option<&[u8]>,
        left: Option<&[u8]>,
        right: Option<&[u8]>,
    ) -> PyResult<Resolution> {
        let k = self.key_tuple(py, store, key)?;
        let args = (
            k,
            self.decode_opt(py, store, key, base)?,
            self.decode_opt(py, store, key, left)?,
            self.decode_opt(py, store, key, right)?,
        );
        let out = cb.call1(args)?;
        if out.is_instance_of::<PyConflict>() {
            return Ok(Resolution::Conflict);
        }
        if out.is_none() {
            return Ok(Resolution::Value(None));
        }
        let cols: Vec<_> = self.schema.columns().cloned().collect();
        let mut held = Vec::new();
        hold_row(&out, &cols, 0, &mut held)
            .map_err(|e| PyValueError::new_err(format!("the merge callback's row: {e}")))?;
        let values: Vec<_> = held.iter().map(Held::value).collect();
        let mut blobs = StoreBlobs::new(store);
        let (k2, v) = enc
            .encode_with(&values, &mut blobs)
            .map_err(|e| row_err(e, None))?;
        if k2 != key {
            return Err(PyValueError::new_err(
                "the merge callback returned a row with another key",
            ));
        }
        Ok(Resolution::Value(Some(v.to_vec())))
    }
}

/// Registers the classes and the `CONFLICT` sentinel.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyStore>()?;
    m.add_class::<PyMap>()?;
    m.add_class::<PyConflict>()?;
    m.add("CONFLICT", Py::new(m.py(), PyConflict)?)?;
    Ok(())
}

/// A map's rows as record batches made one at a time, as the consumer asks for them: each
/// batch borrows the store for its own read, so the map is never held whole in memory and the
/// store stays usable between batches. `MapBatches` reads through an `Arc` of the store; the
/// store is moved into one for the batch while the lock is held (no one else can see it
/// missing) and moved back after.
struct MapStream {
    store: Arc<StoreShared>,
    root: Address,
    schema: RowSchema,
    arrow: SchemaRef,
    /// Position of the next row in the map.
    next: u64,
    done: bool,
}

impl MapStream {
    fn next_batch(&mut self) -> Result<Option<RecordBatch>, ArrowError> {
        let closed = || ArrowError::ExternalError("the store is closed".into());
        let mut g = self.store.inner.lock().map_err(|_| closed())?;
        // The Arc never leaves this thread (it is unwrapped before returning), so a store
        // that is not `Sync` (the memory store) is fine inside it.
        #[allow(clippy::arc_with_non_send_sync)]
        let store = Arc::new(g.take().ok_or_else(closed)?);
        let read = MapBatches::new(
            store.clone(),
            self.root,
            self.schema.clone(),
            DEFAULT_BATCH_ROWS,
        )
        .and_then(|b| {
            let mut b = b.skip_to(self.next);
            let batch = b.next_batch();
            self.next = b.position();
            batch
        });
        match Arc::try_unwrap(store) {
            Ok(s) => *g = Some(s),
            Err(_) => {
                return Err(ArrowError::ExternalError(
                    "the store is still in use by a reader".into(),
                ))
            }
        }
        Ok(read?)
    }
}

impl Iterator for MapStream {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let got = self.next_batch().transpose();
        self.done = !matches!(got, Some(Ok(_)));
        got
    }
}

impl RecordBatchReader for MapStream {
    fn schema(&self) -> SchemaRef {
        self.arrow.clone()
    }
}
