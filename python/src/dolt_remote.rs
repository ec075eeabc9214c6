//! `prollystore.dolt.clone(url, dir)`: a Dolt database cloned from a remote
//! (`prollystore-dolt-remote`): `http://HOST:PORT/DB` as `dolt sql-server --remotesapi-port`
//! serves it, or a `file://` directory `dolt push` wrote; `remote_add`, `fetch`, `pull` and
//! `push` on a database's remotes as `dolt remote add`, `dolt fetch`, `dolt pull --ff-only` and
//! `dolt push` do; `open_remote(url)`: a database on a remote read in place, without cloning.
//! The GIL is released meanwhile.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::PyDict;

use prollystore_dolt_remote::{CloneOptions, Credentials, RemoteError};

use crate::errors::{dolt_err, Error, NotFoundError};

/// `RemoteError` as the exception that fits it.
fn remote_err(e: RemoteError) -> PyErr {
    let msg = e.to_string();
    match e {
        RemoteError::Local(d) => dolt_err(d),
        RemoteError::NoSuchDatabase { .. } => NotFoundError::new_err(msg),
        RemoteError::Credentials { .. } => pyo3::exceptions::PyPermissionError::new_err(msg),
        RemoteError::BadUrl { .. }
        | RemoteError::Destination { .. }
        | RemoteError::UnknownRemote { .. }
        | RemoteError::RemoteExists { .. } => pyo3::exceptions::PyValueError::new_err(msg),
        _ => Error::new_err(msg),
    }
}

/// `user` and `password` as the remote functions take them: no user, no credentials (a `dolt
/// sql-server` then takes `root` with no password); a user without a password takes it from
/// `DOLT_REMOTE_PASSWORD`, as `dolt --user` does.
fn credentials(user: Option<String>, password: Option<String>) -> PyResult<Option<Credentials>> {
    match (user, password) {
        (None, None) => Ok(None),
        (None, Some(_)) => Err(pyo3::exceptions::PyValueError::new_err(
            "a password without a user: give user= too",
        )),
        (Some(user), Some(password)) => Ok(Some(Credentials { user, password })),
        (Some(user), None) => Credentials::from_env(&user).map(Some).map_err(remote_err),
    }
}

/// Clones the Dolt database at `url` into `dir` (which must not exist, or be empty), checking
/// out `branch` (default: `main`, else `master`, else the first by name), as `dolt clone`
/// does. Returns a dict: `branch`, `root`, `chunks`, `bytes`, `requests`. `user` (and
/// `password`, else `DOLT_REMOTE_PASSWORD`) authenticate to a password-protected `dolt
/// sql-server`, as `dolt --user` does; the other remote functions take them too.
#[pyfunction]
#[pyo3(signature = (url, dir, branch = None, remote = "origin".to_string(), user = None, password = None))]
fn clone<'py>(
    py: Python<'py>,
    url: String,
    dir: PathBuf,
    branch: Option<String>,
    remote: String,
    user: Option<String>,
    password: Option<String>,
) -> PyResult<Bound<'py, PyDict>> {
    let options = CloneOptions {
        remote_name: remote,
        branch,
        credentials: credentials(user, password)?,
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
#[pyo3(signature = (dir, remote = "origin".to_string(), prune = false, user = None, password = None))]
fn fetch<'py>(
    py: Python<'py>,
    dir: PathBuf,
    remote: String,
    prune: bool,
    user: Option<String>,
    password: Option<String>,
) -> PyResult<Bound<'py, PyDict>> {
    let options = CloneOptions {
        credentials: credentials(user, password)?,
        ..CloneOptions::with_prune(prune)
    };
    let report = py
        .detach(|| prollystore_dolt_remote::fetch(&dir, &remote, &options))
        .map_err(remote_err)?;
    fetch_dict(py, &report)
}

/// Fetches `remote`, then fast-forwards the current branch to the remote's `branch` (default:
/// its upstream, else the same name), as `dolt pull --ff-only` (`prune` as in `fetch`).
/// Returns the fetch's dict plus `moved` (whether the branch moved) and `head` (its head now,
/// when it moved).
#[pyfunction]
#[pyo3(signature = (dir, remote = "origin".to_string(), branch = None, prune = false, user = None, password = None))]
fn pull<'py>(
    py: Python<'py>,
    dir: PathBuf,
    remote: String,
    branch: Option<String>,
    prune: bool,
    user: Option<String>,
    password: Option<String>,
) -> PyResult<Bound<'py, PyDict>> {
    let options = CloneOptions {
        credentials: credentials(user, password)?,
        ..CloneOptions::with_prune(prune)
    };
    let report = py
        .detach(|| prollystore_dolt_remote::pull(&dir, &remote, branch.as_deref(), &options))
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
#[pyo3(signature = (dir, remote = "origin".to_string(), branch = None, user = None, password = None))]
fn push<'py>(
    py: Python<'py>,
    dir: PathBuf,
    remote: String,
    branch: Option<String>,
    user: Option<String>,
    password: Option<String>,
) -> PyResult<Bound<'py, PyDict>> {
    let options = CloneOptions {
        credentials: credentials(user, password)?,
        ..Default::default()
    };
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
        .detach(|| prollystore_dolt_remote::push(&dir, &remote, &branch, &options))
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

/// Opens the Dolt database at `url` (`http://HOST:PORT/DB`, `file:///DIR`) read-only, in
/// place: chunks are fetched as reads need them (batched range reads, each chunk checked
/// against its address, kept in a cache of `cache_bytes`), nothing is cloned. A remote has no
/// current branch: name one (`at="main"`); `default_branch` is what a clone would check out.
#[pyfunction]
#[pyo3(signature = (url, cache_bytes = None, user = None, password = None))]
fn open_remote(
    py: Python<'_>,
    url: String,
    cache_bytes: Option<usize>,
    user: Option<String>,
    password: Option<String>,
) -> PyResult<crate::dolt::PyDatabase> {
    let mut options = prollystore_dolt_remote::OpenOptions {
        credentials: credentials(user, password)?,
        ..Default::default()
    };
    if let Some(bytes) = cache_bytes {
        options.cache_bytes = bytes;
    }
    let db = py
        .detach(|| prollystore_dolt_remote::open_remote(&url, &options))
        .map_err(remote_err)?
        .with_expressions(prollystore_sql::engine());
    Ok(crate::dolt::PyDatabase::from_database(
        db,
        PathBuf::from(url),
    ))
}

/// The branch a clone of the remote database `db` would check out (`main`, else `master`,
/// else the first by name), or None when it has no branches.
#[pyfunction]
fn default_branch(db: &crate::dolt::PyDatabase) -> PyResult<Option<String>> {
    prollystore_dolt_remote::default_branch(db.db()?).map_err(dolt_err)
}

/// Adds `clone`, `open_remote`, `default_branch`, `remote_add`, `fetch`, `pull` and `push` to
/// the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(open_remote, m)?)?;
    m.add_function(wrap_pyfunction!(default_branch, m)?)?;
    m.add_function(wrap_pyfunction!(clone, m)?)?;
    m.add_function(wrap_pyfunction!(remote_add, m)?)?;
    m.add_function(wrap_pyfunction!(fetch, m)?)?;
    m.add_function(wrap_pyfunction!(pull, m)?)?;
    m.add_function(wrap_pyfunction!(push, m)?)?;
    Ok(())
}
