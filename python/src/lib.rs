//! The `prollystore._native` Python extension module (PyO3): Dolt databases (module
//! `dolt`) and native stores (`store`) from Python, Arrow streams (`arrow`), values converted
//! by `values` and errors by `errors`. The Python package `prollystore` (in
//! `python/prollystore/`) wraps it.

use pyo3::prelude::*;

mod arrow;
mod dolt;
mod errors;
mod store;
mod values;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<arrow::PyStream>()?;
    dolt::register(m)?;
    store::register(m)?;
    Ok(())
}
