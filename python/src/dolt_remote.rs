//! `prollystore.dolt.clone(url, dir)`: a Dolt database cloned from a remote
//! (`prollystore-dolt-remote`): `http://HOST:PORT/DB` as `dolt sql-server --remotesapi-port`
//! serves it, or a `file://` directory `dolt push` wrote. The GIL is released meanwhile.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::PyDict;

use prollystore_dolt_remote::{CloneOptions, RemoteError};

use crate::errors::{dolt_err, Error, NotFoundError};

/// `RemoteError` as the exception that fits it.
fn remote_err(e: RemoteError) -> PyErr {
    let msg = e.to_string();
    match e {
        RemoteError::Local(d) => dolt_err(d),
        RemoteError::NoSuchDatabase { .. } => NotFoundError::new_err(msg),
        RemoteError::BadUrl { .. } | RemoteError::Destination { .. } => {
            pyo3::exceptions::PyValueError::new_err(msg)
        }
        _ => Error::new_err(msg),
    }
}

/// Clones the Dolt database at `url` into `dir` (which must not exist, or be empty), checking
/// out `branch` (default: `main`, else `master`, else the first by name), as `dolt clone`
/// does. Returns a dict: `branch`, `root`, `chunks`, `bytes`, `requests`.
#[pyfunction]
#[pyo3(signature = (url, dir, branch = None, remote = "origin".to_string()))]
fn clone<'py>(
    py: Python<'py>,
    url: String,
    dir: PathBuf,
    branch: Option<String>,
    remote: String,
) -> PyResult<Bound<'py, PyDict>> {
    let options = CloneOptions {
        remote_name: remote,
        branch,
        ..Default::default()
    };
    let report = py
        .detach(|| prollystore_dolt_remote::clone(&url, &dir, &options))
        .map_err(remote_err)?;
    let d = PyDict::new(py);
    d.set_item("branch", report.branch)?;
    d.set_item("root", report.root.to_string())?;
    d.set_item("chunks", report.chunks)?;
    d.set_item("bytes", report.bytes)?;
    d.set_item("requests", report.requests)?;
    Ok(d)
}

/// Adds `clone` to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(clone, m)?)?;
    Ok(())
}
