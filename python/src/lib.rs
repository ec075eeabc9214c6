//! The `prollystore._native` Python extension module (PyO3): Dolt databases read (module
//! `dolt`, point gets planned by `point_get`) and written (`dolt_write`), native stores
//! (`store`), Arrow streams (`arrow`), values converted by `values` and errors by `errors`.
//! The Python package `prollystore` (in `python/prollystore/`) wraps it.

use pyo3::prelude::*;

mod arrow;
mod dolt;
mod dolt_write;
mod errors;
mod point_get;
mod store;
mod values;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<arrow::PyStream>()?;
    dolt::register(m)?;
    dolt_write::register(m)?;
    store::register(m)?;
    Ok(())
}
