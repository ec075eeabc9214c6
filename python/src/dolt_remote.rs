//! `prollystore.dolt.clone(url, dir)`: a Dolt database cloned from a remote
//! (`prollystore-dolt-remote`): `http://HOST:PORT/DB` as `dolt sql-server --remotesapi-port`
//! serves it, or a `file://` directory `dolt push` wrote; `remote_add`, `fetch`, `pull` and
//! `push` on a database's remotes as `dolt remote add`, `dolt fetch`, `dolt pull --ff-only` and
//! `dolt push` do. The GIL is released meanwhile.

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
        RemoteError::BadUrl { .. }
        | RemoteError::Destination { .. }
        | RemoteError::UnknownRemote { .. }
        | RemoteError::RemoteExists { .. } => pyo3::exceptions::PyValueError::new_err(msg),
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

/// Records remote `name` at `url` in the database at `dir` (as `dolt remote add`); returns the
/// URL as recorded.
#[pyfunction]
fn remote_add(py: Python<'_>, dir: PathBuf, name: String, url: String) -> PyResult<String> {
    py.detach(|| prollystore_dolt_remote::remote_add(&dir, &name, &url))
        .map_err(remote_err)
}

fn fetch_dict<'py>(
    py: Python<'py>,
    report: &prollystore_dolt_remote::FetchReport,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("remote", &report.remote)?;
    d.set_item("root", report.root.to_string())?;
    d.set_item("chunks", report.chunks)?;
    d.set_item("bytes", report.bytes)?;
    let updated: Vec<String> = report.updated.iter().map(|u| u.branch.clone()).collect();
    d.set_item("updated", updated)?;
    d.set_item("pruned", &report.pruned)?;
    Ok(d)
}

/// Fetches `remote` into the database at `dir` (as `dolt fetch`: only missing chunks move,
/// then `refs/remotes/REMOTE/*`; `prune`: then the tracking refs of branches the remote no
/// longer has are removed, as `dolt fetch --prune`). Returns a dict: `remote`, `root`,
/// `chunks`, `bytes`, `updated` (the remote branches whose tracking refs moved), `pruned`
/// (those whose tracking refs were removed).
#[pyfunction]
#[pyo3(signature = (dir, remote = "origin".to_string(), prune = false))]
fn fetch<'py>(
    py: Python<'py>,
    dir: PathBuf,
    remote: String,
    prune: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let report = py
        .detach(|| prollystore_dolt_remote::fetch(&dir, &remote, &CloneOptions::with_prune(prune)))
        .map_err(remote_err)?;
    fetch_dict(py, &report)
}

/// Fetches `remote`, then fast-forwards the current branch to the remote's `branch` (default:
/// its upstream, else the same name), as `dolt pull --ff-only` (`prune` as in `fetch`).
/// Returns the fetch's dict plus `moved` (whether the branch moved) and `head` (its head now,
/// when it moved).
#[pyfunction]
#[pyo3(signature = (dir, remote = "origin".to_string(), branch = None, prune = false))]
fn pull<'py>(
    py: Python<'py>,
    dir: PathBuf,
    remote: String,
    branch: Option<String>,
    prune: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let report = py
        .detach(|| {
            prollystore_dolt_remote::pull(
                &dir,
                &remote,
                branch.as_deref(),
                &CloneOptions::with_prune(prune),
            )
        })
        .map_err(remote_err)?;
    let d = fetch_dict(py, &report.fetch)?;
    match report.outcome {
        prollystore_dolt_remote::FastForward::UpToDate => d.set_item("moved", false)?,
        prollystore_dolt_remote::FastForward::Moved { to, .. } => {
            d.set_item("moved", true)?;
            d.set_item("head", to.to_string())?;
        }
    }
    Ok(d)
}

/// Pushes `branch` (default: the current branch) of the database at `dir` to `remote` (as
/// `dolt push REMOTE BRANCH`, fast-forward only; a refusal raises). Returns a dict: `pushed`
/// (whether the remote's branch moved), `head`, `chunks`, `bytes`.
#[pyfunction]
#[pyo3(signature = (dir, remote = "origin".to_string(), branch = None))]
fn push<'py>(
    py: Python<'py>,
    dir: PathBuf,
    remote: String,
    branch: Option<String>,
) -> PyResult<Bound<'py, PyDict>> {
    let branch = match branch {
        Some(b) => b,
        None => {
            let state = prollystore_dolt::write::repo_state::RepoState::read(&dir.join(".dolt"))
                .map_err(dolt_err)?;
            state.current_branch().map(str::to_string).ok_or_else(|| {
                pyo3::exceptions::PyValueError::new_err(format!(
                    "{}: HEAD is {:?}, not a branch: name the branch to push",
                    dir.display(),
                    state.head
                ))
            })?
        }
    };
    let report = py
        .detach(|| prollystore_dolt_remote::push(&dir, &remote, &branch, &CloneOptions::default()))
        .map_err(remote_err)?;
    let d = PyDict::new(py);
    match report.outcome {
        prollystore_dolt_remote::PushOutcome::UpToDate => d.set_item("pushed", false)?,
        prollystore_dolt_remote::PushOutcome::Pushed { to, .. } => {
            d.set_item("pushed", true)?;
            d.set_item("head", to.to_string())?;
        }
    }
    d.set_item("chunks", report.chunks)?;
    d.set_item("bytes", report.bytes)?;
    Ok(d)
}

/// Adds `clone`, `remote_add`, `fetch`, `pull` and `push` to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(clone, m)?)?;
    m.add_function(wrap_pyfunction!(remote_add, m)?)?;
    m.add_function(wrap_pyfunction!(fetch, m)?)?;
    m.add_function(wrap_pyfunction!(pull, m)?)?;
    m.add_function(wrap_pyfunction!(push, m)?)?;
    Ok(())
}
