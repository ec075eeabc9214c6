//! The remotes a local store knows by name: the file `REMOTES` in the store directory, one
//! `name<TAB>url` per line (the file store ignores files it does not name, `docs/FORMAT.md`).

use std::collections::BTreeMap;
use std::path::Path;

use crate::RemoteError;

/// The file in a store directory that lists its remotes.
pub const REMOTES_FILE: &str = "REMOTES";

/// The remotes recorded for the store in `dir`, by name.
pub fn remotes(dir: impl AsRef<Path>) -> Result<BTreeMap<String, String>, RemoteError> {
    let dir = dir.as_ref();
    let path = dir.join(REMOTES_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(e) => {
            return Err(RemoteError::Io {
                context: format!("reading {}", path.display()),
                source: e,
            })
        }
    };
    Ok(text
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(n, u)| (n.to_string(), u.to_string()))
        .collect())
}

/// Records remote `name` at `url` for the store in `dir` (replacing an earlier URL).
pub fn add_remote(dir: impl AsRef<Path>, name: &str, url: &str) -> Result<(), RemoteError> {
    let dir = dir.as_ref();
    if name.is_empty() || name.contains(['\t', '\n', '/']) || url.contains(['\t', '\n']) {
        return Err(RemoteError::Invalid(format!(
            "remote name {name:?} or URL {url:?} is not usable (no tabs, newlines; no '/' in names)"
        )));
    }
    let mut all = remotes(dir)?;
    all.insert(name.to_string(), url.to_string());
    let text: String = all.iter().map(|(n, u)| format!("{n}\t{u}\n")).collect();
    let tmp = dir.join(format!("{REMOTES_FILE}.tmp"));
    let io = |e| RemoteError::Io {
        context: format!("writing {}", tmp.display()),
        source: e,
    };
    std::fs::write(&tmp, text).map_err(io)?;
    std::fs::rename(&tmp, dir.join(REMOTES_FILE)).map_err(io)
}

/// The URL of remote `name` of the store in `dir`.
pub fn remote_url(dir: impl AsRef<Path>, name: &str) -> Result<String, RemoteError> {
    let dir = dir.as_ref();
    remotes(dir)?.remove(name).ok_or_else(|| {
        RemoteError::Invalid(format!(
            "the store {} has no remote named {name:?} (add it with `prolly remote add`)",
            dir.display()
        ))
    })
}
