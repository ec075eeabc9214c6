//! `.dolt/repo_state.json` read and written whole, as Dolt writes it (Go's
//! `json.MarshalIndent` with two spaces of its `RepoState`: `head`, `remotes`, `backups`,
//! `branches`, maps in key order, no newline at the end, `<`, `>` and `&` escaped as Go escapes
//! them): the current branch, the remotes (`dolt remote add|remove`), and the branches'
//! upstreams (what `dolt clone` and `dolt push -u` record). Facts from Dolt's
//! `env/repo_state.go`, `env/remotes.go`, and `dolt remote add` output compared byte for byte.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::error::{DoltError, Result};

/// A remote as `repo_state.json` records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteConfig {
    /// Its name (`origin`).
    pub name: String,
    /// Its URL, as Dolt normalised it ([`normalize_remote_url`]).
    pub url: String,
    /// Fetch refspecs (`refs/heads/*:refs/remotes/NAME/*`).
    pub fetch_specs: Vec<String>,
    /// Backend parameters (`aws-region`, …).
    pub params: BTreeMap<String, String>,
}

impl RemoteConfig {
    /// A remote as `dolt remote add NAME URL` records it (the default fetch spec, no
    /// parameters).
    pub fn new(name: &str, url: &str) -> RemoteConfig {
        RemoteConfig {
            name: name.to_string(),
            url: url.to_string(),
            fetch_specs: vec![format!("refs/heads/*:refs/remotes/{name}/*")],
            params: BTreeMap::new(),
        }
    }
}

/// A branch's upstream (`branches` in `repo_state.json`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BranchConfig {
    /// The remote branch it merges (`refs/heads/main`).
    pub merge: String,
    /// The remote's name.
    pub remote: String,
}

/// The whole of `repo_state.json`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepoState {
    /// The current branch's ref (`refs/heads/main`).
    pub head: String,
    /// Remotes by name.
    pub remotes: BTreeMap<String, RemoteConfig>,
    /// Backups by name (same shape as remotes).
    pub backups: BTreeMap<String, RemoteConfig>,
    /// Upstreams by local branch name.
    pub branches: BTreeMap<String, BranchConfig>,
}

impl RepoState {
    /// The current branch's name (`None` when HEAD is not a branch ref).
    pub fn current_branch(&self) -> Option<&str> {
        self.head.strip_prefix("refs/heads/")
    }

    /// A state with `head` and nothing else (what `dolt init` writes).
    pub fn new(head: &str) -> RepoState {
        RepoState {
            head: head.to_string(),
            remotes: BTreeMap::new(),
            backups: BTreeMap::new(),
            branches: BTreeMap::new(),
        }
    }

    /// Reads `DOT/repo_state.json` (`DOT` is a database's `.dolt`).
    pub fn read(dot: &Path) -> Result<RepoState> {
        let path = dot.join("repo_state.json");
        let text = std::fs::read_to_string(&path).map_err(|source| DoltError::Io {
            file: path.display().to_string(),
            source,
        })?;
        RepoState::parse(&text, &path.display().to_string())
    }

    /// Parses the text of a `repo_state.json` (`file` names it in errors).
    pub fn parse(text: &str, file: &str) -> Result<RepoState> {
        let bad = |reason: String| DoltError::Corrupt {
            file: file.to_string(),
            offset: 0,
            reason,
        };
        let v: Value = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
        let head = v
            .get("head")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("no \"head\" string".into()))?
            .to_string();
        let remotes = remote_map(&v, "remotes").map_err(bad)?;
        let backups = remote_map(&v, "backups").map_err(bad)?;
        let mut branches = BTreeMap::new();
        if let Some(m) = object(&v, "branches").map_err(bad)? {
            for (name, b) in m {
                let field = |k: &str| {
                    b.get(k)
                        .and_then(Value::as_str)
                        .map(str::to_string)
                        .ok_or_else(|| bad(format!("branch {name:?} has no {k:?} string")))
                };
                branches.insert(
                    name.clone(),
                    BranchConfig {
                        merge: field("head")?,
                        remote: field("remote")?,
                    },
                );
            }
        }
        Ok(RepoState {
            head,
            remotes,
            backups,
            branches,
        })
    }

    /// The text Dolt writes for this state.
    pub fn encode(&self) -> String {
        let mut out = String::from("{\n");
        out.push_str(&format!("  \"head\": {},\n", quote(&self.head)));
        out.push_str("  \"remotes\": ");
        encode_remotes(&self.remotes, &mut out);
        out.push_str(",\n  \"backups\": ");
        encode_remotes(&self.backups, &mut out);
        out.push_str(",\n  \"branches\": ");
        if self.branches.is_empty() {
            out.push_str("{}");
        } else {
            out.push_str("{\n");
            let items: Vec<String> = self
                .branches
                .iter()
                .map(|(name, b)| {
                    format!(
                        "    {}: {{\n      \"head\": {},\n      \"remote\": {}\n    }}",
                        quote(name),
                        quote(&b.merge),
                        quote(&b.remote)
                    )
                })
                .collect();
            out.push_str(&items.join(",\n"));
            out.push_str("\n  }");
        }
        out.push_str("\n}");
        out
    }

    /// Writes `DOT/repo_state.json` whole: a temporary file beside it, fsync'd, renamed over
    /// it (the old file's permissions kept).
    pub fn write(&self, dot: &Path) -> Result<()> {
        let path = dot.join("repo_state.json");
        let io = |source: std::io::Error| DoltError::Io {
            file: path.display().to_string(),
            source,
        };
        let tmp = dot.join(format!("repo_state.json.tmp{}", std::process::id()));
        {
            use std::io::Write;
            let mut f = std::fs::File::create(&tmp).map_err(io)?;
            f.write_all(self.encode().as_bytes()).map_err(io)?;
            if let Ok(meta) = std::fs::metadata(&path) {
                f.set_permissions(meta.permissions()).map_err(io)?;
            }
            f.sync_all().map_err(io)?;
        }
        std::fs::rename(&tmp, &path).map_err(io)?;
        if let Ok(d) = std::fs::File::open(dot) {
            let _ = d.sync_all();
        }
        Ok(())
    }

    /// The remote named `name`, or an error saying there is none (Dolt: `unknown remote`).
    pub fn remote(&self, name: &str) -> Result<&RemoteConfig> {
        self.remotes.get(name).ok_or_else(|| {
            DoltError::NotFound(format!(
                "remote {name:?} (this database's remotes: {})",
                if self.remotes.is_empty() {
                    "none".to_string()
                } else {
                    self.remotes.keys().cloned().collect::<Vec<_>>().join(", ")
                }
            ))
        })
    }
}

/// A remote URL as `dolt remote add` records it: a URL with a scheme kept (a trailing `/`
/// removed), a bare `org/repo` taken as a DoltHub database
/// (`https://doltremoteapi.dolthub.com/org/repo`).
pub fn normalize_remote_url(url: &str) -> String {
    let trimmed = url.trim();
    if trimmed.contains("://") {
        let (scheme, rest) = trimmed.split_once("://").unwrap_or((trimmed, ""));
        let rest = rest.trim_end_matches('/');
        format!("{scheme}://{rest}")
    } else {
        format!(
            "https://doltremoteapi.dolthub.com/{}",
            trimmed.trim_matches('/')
        )
    }
}

fn object<'a>(
    v: &'a Value,
    key: &str,
) -> std::result::Result<Option<&'a serde_json::Map<String, Value>>, String> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(_) => Err(format!("{key:?} is not an object")),
    }
}

fn remote_map(v: &Value, key: &str) -> std::result::Result<BTreeMap<String, RemoteConfig>, String> {
    let mut out = BTreeMap::new();
    let Some(m) = object(v, key)? else {
        return Ok(out);
    };
    for (name, r) in m {
        let text = |k: &str| {
            r.get(k)
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| format!("{key} {name:?} has no {k:?} string"))
        };
        let fetch_specs = match r.get("fetch_specs") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .map(|s| {
                    s.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| format!("{key} {name:?}: a fetch spec that is not a string"))
                })
                .collect::<std::result::Result<_, _>>()?,
            Some(_) => return Err(format!("{key} {name:?}: fetch_specs is not an array")),
        };
        let params = match r.get("params") {
            None | Some(Value::Null) => BTreeMap::new(),
            Some(Value::Object(p)) => p
                .iter()
                .map(|(k, v)| {
                    v.as_str()
                        .map(|s| (k.clone(), s.to_string()))
                        .ok_or_else(|| format!("{key} {name:?}: param {k:?} is not a string"))
                })
                .collect::<std::result::Result<_, _>>()?,
            Some(_) => return Err(format!("{key} {name:?}: params is not an object")),
        };
        out.insert(
            name.clone(),
            RemoteConfig {
                name: text("name")?,
                url: text("url")?,
                fetch_specs,
                params,
            },
        );
    }
    Ok(out)
}

fn encode_remotes(remotes: &BTreeMap<String, RemoteConfig>, out: &mut String) {
    if remotes.is_empty() {
        out.push_str("{}");
        return;
    }
    out.push_str("{\n");
    let items: Vec<String> = remotes
        .iter()
        .map(|(key, r)| {
            let specs = if r.fetch_specs.is_empty() {
                "[]".to_string()
            } else {
                let s: Vec<String> = r
                    .fetch_specs
                    .iter()
                    .map(|s| format!("        {}", quote(s)))
                    .collect();
                format!("[\n{}\n      ]", s.join(",\n"))
            };
            let params = if r.params.is_empty() {
                "{}".to_string()
            } else {
                let p: Vec<String> = r
                    .params
                    .iter()
                    .map(|(k, v)| format!("        {}: {}", quote(k), quote(v)))
                    .collect();
                format!("{{\n{}\n      }}", p.join(",\n"))
            };
            format!(
                "    {}: {{\n      \"name\": {},\n      \"url\": {},\n      \"fetch_specs\": {specs},\n      \"params\": {params}\n    }}",
                quote(key),
                quote(&r.name),
                quote(&r.url)
            )
        })
        .collect();
    out.push_str(&items.join(",\n"));
    out.push_str("\n  }");
}

/// A JSON string as Go's encoder writes it (HTML-sensitive `<`, `>`, `&` escaped).
fn quote(s: &str) -> String {
    serde_json::to_string(s)
        .unwrap_or_else(|_| "\"\"".to_string())
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Made by `dolt remote add origin file:///tmp/r23/remote` and `dolt remote add second
    /// http://127.0.0.1:1234/db` in a fresh `dolt init` (Dolt 2.3.1).
    const DOLT_TWO_REMOTES: &str = "{\n  \"head\": \"refs/heads/main\",\n  \"remotes\": {\n    \"origin\": {\n      \"name\": \"origin\",\n      \"url\": \"file:///tmp/r23/remote\",\n      \"fetch_specs\": [\n        \"refs/heads/*:refs/remotes/origin/*\"\n      ],\n      \"params\": {}\n    },\n    \"second\": {\n      \"name\": \"second\",\n      \"url\": \"http://127.0.0.1:1234/db\",\n      \"fetch_specs\": [\n        \"refs/heads/*:refs/remotes/second/*\"\n      ],\n      \"params\": {}\n    }\n  },\n  \"backups\": {},\n  \"branches\": {}\n}";
    /// `dolt init`'s.
    const DOLT_INIT: &str = "{\n  \"head\": \"refs/heads/main\",\n  \"remotes\": {},\n  \"backups\": {},\n  \"branches\": {}\n}";

    #[test]
    fn round_trips_dolts_bytes() {
        for text in [DOLT_TWO_REMOTES, DOLT_INIT] {
            let s = RepoState::parse(text, "t").unwrap();
            assert_eq!(s.encode(), text);
        }
        let mut s = RepoState::new("refs/heads/main");
        s.remotes.insert(
            "second".into(),
            RemoteConfig::new("second", "http://127.0.0.1:1234/db"),
        );
        s.remotes.insert(
            "origin".into(),
            RemoteConfig::new("origin", "file:///tmp/r23/remote"),
        );
        assert_eq!(s.encode(), DOLT_TWO_REMOTES);
    }

    #[test]
    fn normalizes_urls_as_dolt_remote_add() {
        // What `dolt remote -v` listed after `dolt remote add` of each.
        assert_eq!(
            normalize_remote_url("file:///tmp/r23/remote/"),
            "file:///tmp/r23/remote"
        );
        assert_eq!(
            normalize_remote_url("dolthub/repo"),
            "https://doltremoteapi.dolthub.com/dolthub/repo"
        );
        assert_eq!(
            normalize_remote_url("/tmp/r23/remote"),
            "https://doltremoteapi.dolthub.com/tmp/r23/remote"
        );
        assert_eq!(normalize_remote_url("foo://x"), "foo://x");
    }

    #[test]
    fn refuses_malformed_state() {
        for bad in ["", "[]", "{\"head\": 1}", "{\"head\":\"x\",\"remotes\":[]}"] {
            assert!(RepoState::parse(bad, "t").is_err(), "{bad}");
        }
    }
}
