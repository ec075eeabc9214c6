//! `fetch` and `pull` (fast-forward only) from a remote named in a database's
//! `repo_state.json`, and `remote add|remove|list`.
//!
//! A fetch reads the remote's store root and walks from it level by level exactly as a clone
//! does, but into the existing database: a chunk the database holds stops the walk below it
//! (its whole closure is there), so only missing chunks move; every chunk received is checked
//! against its address. The chunks are made durable first (journal records and a root record
//! of the unchanged local root, one fsync), then the remote-tracking refs
//! `refs/remotes/REMOTE/BRANCH` are set to the remote's branches in one store-root update, as
//! `dolt fetch` sets them (branches gone from the remote are kept unless
//! [`CloneOptions::prune`] asks, as `dolt fetch --prune`: then their tracking refs are
//! removed, after the others are set, as Dolt's `pruneBranches` does). Tags follow as Dolt's
//! `FetchFollowTags` makes them: each remote tag whose tag object the database did not hold is
//! set as `refs/tags/NAME`.
//!
//! A pull fetches, then fast-forwards the current branch (and its working set) to the
//! remote's branch of the same name, or to its upstream's (`repo_state.json` `branches`).
//! Refused, with nothing changed but the fetch, when the branch has uncommitted changes or
//! cannot be fast-forwarded (see `fast_forward_branch` in `prollystore_dolt`'s `clone_target`).

use std::path::Path;

use prollystore_dolt::write::clone_target::{
    branches_at, fast_forward_branch, prune_tracking_refs, set_tags, set_tracking_refs, tags_at,
    CloneRefs, CloneTarget, FastForward, TrackingUpdate,
};
use prollystore_dolt::write::repo_state::{normalize_remote_url, RemoteConfig, RepoState};
use prollystore_format::Address;

use crate::client::RemoteClient;
use crate::clone::{
    copy_file_reachable, copy_reachable, empty_report, now_secs, open_file_remote, runtime, user,
    CloneOptions, CloneReport,
};
use crate::error::{RemoteError, Result};
use crate::remote_url::RemoteUrl;

/// What a fetch did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FetchReport {
    /// The remote's name.
    pub remote: String,
    /// Its URL.
    pub url: String,
    /// The remote's store root when the fetch read it.
    pub root: Address,
    /// Chunks copied (those the database lacked).
    pub chunks: u64,
    /// Bytes received.
    pub bytes: u64,
    /// HTTP range requests made (gRPC remotes).
    pub requests: u64,
    /// The remote-tracking refs that moved.
    pub updated: Vec<TrackingUpdate>,
    /// The remote-tracking refs removed by [`CloneOptions::prune`] (branch names): branches
    /// the remote no longer has.
    pub pruned: Vec<String>,
    /// The remote's branches and their commits.
    pub branches: Vec<(String, Address)>,
    /// The remote's tags set locally (`refs/tags/NAME`: name, tag object), as `dolt fetch`
    /// follows tags: those whose tag object the database did not hold.
    pub tags: Vec<(String, Address)>,
}

/// What a pull did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PullReport {
    /// The fetch it made first.
    pub fetch: FetchReport,
    /// The local branch pulled into (the current branch).
    pub branch: String,
    /// The remote branch merged.
    pub remote_branch: String,
    /// Whether the branch moved.
    pub outcome: FastForward,
}

fn dot(dir: &Path) -> std::path::PathBuf {
    dir.join(".dolt")
}

pub(crate) fn read_state(dir: &Path) -> Result<RepoState> {
    if !dot(dir).join("noms").is_dir() {
        return Err(RemoteError::Destination {
            path: dir.display().to_string(),
            reason: "not a Dolt database (no .dolt/noms)".into(),
        });
    }
    Ok(RepoState::read(&dot(dir))?)
}

pub(crate) fn remote_of(state: &RepoState, name: &str) -> Result<RemoteConfig> {
    state
        .remotes
        .get(name)
        .cloned()
        .ok_or_else(|| RemoteError::UnknownRemote {
            name: name.to_string(),
            known: state.remotes.keys().cloned().collect(),
        })
}

/// `dolt remote add NAME URL`: records the remote in `repo_state.json` (the URL normalised as
/// Dolt normalises it; refused when the name is taken, nothing written). Returns the URL
/// recorded.
pub fn remote_add(dir: impl AsRef<Path>, name: &str, url: &str) -> Result<String> {
    let dir = dir.as_ref();
    let mut state = read_state(dir)?;
    if name.is_empty() || name.contains(['/', ' ', ':']) {
        return Err(RemoteError::BadUrl {
            url: name.to_string(),
            reason: "not a valid remote name".into(),
        });
    }
    if state.remotes.contains_key(name) {
        return Err(RemoteError::RemoteExists {
            name: name.to_string(),
        });
    }
    let url = normalize_remote_url(url);
    state
        .remotes
        .insert(name.to_string(), RemoteConfig::new(name, &url));
    state.write(&dot(dir))?;
    Ok(url)
}

/// `dolt remote remove NAME`: the remote, the upstreams naming it and its remote-tracking refs
/// removed (an unknown name refused, nothing written).
pub fn remote_remove(dir: impl AsRef<Path>, name: &str) -> Result<()> {
    let dir = dir.as_ref();
    let mut state = read_state(dir)?;
    remote_of(&state, name)?;
    let tracking: Vec<(String, Address)> =
        prollystore_dolt::write::clone_target::tracking_refs(dir, name)?;
    if !tracking.is_empty() {
        prollystore_dolt::write::clone_target::remove_tracking_refs(dir, name, now_secs())?;
    }
    state.remotes.remove(name);
    state.branches.retain(|_, b| b.remote != name);
    state.write(&dot(dir))?;
    Ok(())
}

/// `dolt remote -v`: every remote (name order).
pub fn remote_list(dir: impl AsRef<Path>) -> Result<Vec<RemoteConfig>> {
    let dir = dir.as_ref();
    Ok(read_state(dir)?.remotes.into_values().collect())
}

/// `dolt fetch REMOTE`: see the module doc.
pub fn fetch(dir: impl AsRef<Path>, remote: &str, options: &CloneOptions) -> Result<FetchReport> {
    let dir = dir.as_ref();
    let state = read_state(dir)?;
    let config = remote_of(&state, remote)?;
    fetch_from(dir, &config, options)
}

fn fetch_from(dir: &Path, config: &RemoteConfig, options: &CloneOptions) -> Result<FetchReport> {
    let url = config.url.as_str();
    let parsed = RemoteUrl::parse(url)?;
    // What the database held before, to tell which remote tags are new to it.
    let before = prollystore_dolt::chunks::DoltChunkSource::open(dot(dir).join("noms"))?
        .with_verify_hashes(false);
    let report = match parsed {
        RemoteUrl::Grpc {
            endpoint,
            repo_path,
        } => runtime(dir)?.block_on(async {
            let mut client =
                RemoteClient::connect(url, &endpoint, &repo_path, options.credentials.as_ref())
                    .await?;
            client.metadata().await?;
            let root = client.root().await?;
            check_root(url, root)?;
            let mut target = CloneTarget::open_existing(dir)?;
            let mut report = empty_report(root);
            copy_reachable(&mut client, root, &mut target, options, &mut report).await?;
            report.chunks = target.chunk_count();
            target.finish_fetch(now_secs())?;
            Ok::<CloneReport, RemoteError>(report)
        })?,
        RemoteUrl::File { path } => {
            let source = open_file_remote(url, &path)?;
            let root = source.root();
            check_root(url, root)?;
            let mut target = CloneTarget::open_existing(dir)?;
            let mut report = empty_report(root);
            copy_file_reachable(url, &source, root, &mut target, &mut report)?;
            report.chunks = target.chunk_count();
            target.finish_fetch(now_secs())?;
            report
        }
        RemoteUrl::Bucket { .. } => {
            return Err(crate::remote_url::read_in_place_only(url, "a fetch"))
        }
    };
    let branches = branches_at(dir, report.root)?;
    let updated = set_tracking_refs(dir, &config.name, &branches, now_secs())?;
    let pruned = if options.prune {
        prune_tracking_refs(dir, &config.name, &branches, now_secs())?
    } else {
        Vec::new()
    };
    // Tags follow as `dolt fetch` makes them follow (`FetchFollowTags`): a remote tag whose
    // object the database did not hold before is set locally (the walk copied it and its
    // commit); one it held already is left as the database has it.
    let tags: Vec<(String, Address)> = tags_at(dir, report.root)?
        .into_iter()
        .filter(|(_, t)| !before.contains(t))
        .collect();
    set_tags(dir, &tags, now_secs())?;
    Ok(FetchReport {
        remote: config.name.clone(),
        url: url.to_string(),
        root: report.root,
        chunks: report.chunks,
        bytes: report.bytes,
        requests: report.requests,
        updated,
        pruned,
        branches,
        tags,
    })
}

fn check_root(url: &str, root: Address) -> Result<()> {
    if root.is_zero() {
        return Err(RemoteError::NoSuchDatabase {
            url: url.to_string(),
            reason: "the remote holds no Dolt data (its root is empty)".into(),
        });
    }
    Ok(())
}

/// `dolt pull [REMOTE [BRANCH]]`, fast-forward only: fetches `remote`, then fast-forwards the
/// current branch to the remote's `remote_branch` (default: the current branch's upstream
/// there, else the branch of the same name). See the module doc.
pub fn pull(
    dir: impl AsRef<Path>,
    remote: &str,
    remote_branch: Option<&str>,
    options: &CloneOptions,
) -> Result<PullReport> {
    let dir = dir.as_ref();
    let state = read_state(dir)?;
    let config = remote_of(&state, remote)?;
    let branch = state
        .head
        .strip_prefix("refs/heads/")
        .ok_or_else(|| RemoteError::Destination {
            path: dir.display().to_string(),
            reason: format!("HEAD is {:?}, not a branch", state.head),
        })?
        .to_string();
    let remote_branch = match remote_branch {
        Some(b) => b.to_string(),
        None => state
            .branches
            .get(&branch)
            .filter(|b| b.remote == remote)
            .and_then(|b| b.merge.strip_prefix("refs/heads/"))
            .unwrap_or(&branch)
            .to_string(),
    };
    let fetch = fetch_from(dir, &config, options)?;
    let Some(to) = fetch
        .branches
        .iter()
        .find(|(b, _)| *b == remote_branch)
        .map(|(_, a)| *a)
    else {
        return Err(RemoteError::NoSuchBranch {
            url: config.url.clone(),
            branch: remote_branch,
        });
    };
    let (name, email) = user(options);
    let outcome = fast_forward_branch(
        dir,
        &branch,
        to,
        &CloneRefs {
            remote,
            url: &config.url,
            branch: Some(&branch),
            user_name: &name,
            user_email: &email,
            timestamp_secs: now_secs(),
        },
    )?;
    Ok(PullReport {
        fetch,
        branch,
        remote_branch,
        outcome,
    })
}
