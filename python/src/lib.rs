//! The `prollystore._native` Python extension module (PyO3). The Python package `prollystore`
//! (in `python/prollystore/`) wraps it.
//!
//! * `dolt`: Dolt databases read — branches, tags, log, tables at any state, `get`, scans,
//!   diffs — with `point_get`: a table's point gets planned once (key builder, field readers).
//! * `dolt_write`: Dolt databases written — `prollystore.dolt.Writer` (tables from `CREATE
//!   TABLE` text, rows inserted, updated, upserted and deleted, commits), branches, checkout
//!   and merge.
//! * `dolt_remote`: `prollystore.dolt.clone(url, dir)` from a Dolt remote.
//! * `parts`: `Table.split(n)` and `Part`, `Database.split_diff(...)` and `DiffPart`: a table
//!   (or a diff) cut into parts that pickle and read on
//!   their own in another process (Dask, Ray, Spark).
//! * `store`: native stores and maps — built from rows, pandas or Arrow; get, scan, edit, diff,
//!   three-way merge, copy, verify.
//! * `arrow`: tables, scans, diffs and maps as Arrow streams (the PyCapsule protocol), and
//!   Arrow data from Python into maps.
//! * `values`: Python objects to and from the library's values (Dolt's `SqlValue`s, the
//!   tuple values of native maps); `errors`: the `prollystore.Error` hierarchy.

use pyo3::prelude::*;

mod arrow;
mod dolt;
mod dolt_remote;
mod dolt_write;
mod errors;
mod parts;
mod point_get;
mod store;
mod values;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<arrow::PyStream>()?;
    dolt::register(m)?;
    dolt_write::register(m)?;
    dolt_remote::register(m)?;
    parts::register(m)?;
    store::register(m)?;
    Ok(())
}
