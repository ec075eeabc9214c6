//! `push REMOTE BRANCH`, fast-forward only, to a `file://` remote or a gRPC remote
//! (`dolt sql-server --remotesapi-port`), as `dolt push` does it:
//!
//! 1. the remote's store root (`Root`, or its manifest) and, from its address map (the few
//!    chunks read on demand), the head of `refs/heads/BRANCH` there;
//! 2. refused as Dolt refuses it (`! [rejected] B -> B (non-fast-forward)`) unless that head
//!    is absent or an ancestor of the local head;
//! 3. the chunks the remote lacks: a walk from the local head level by level that asks the
//!    remote which of each level it lacks (`HasChunks`, or its files) and does not descend
//!    below a chunk it has;
//! 4. those chunks, the new address map and the new store root (the remote's datasets with
//!    `refs/heads/BRANCH` moved) written as one NBS table file as Dolt's writer writes it
//!    (`prollystore_dolt::write::push_target`);
//! 5. the file uploaded first (`GetUploadLocations` and an HTTP `PUT`, or written and
//!    fsync'd into the remote's directory), then the root moved with Dolt's compare-and-set
//!    (`Commit` with the root read in 1 as `last`, or the manifest replaced under the remote's
//!    `LOCK` only if its root still is that one): a concurrent push that moved the root in
//!    between gets [`RemoteError::Rejected`], never a lost update, and the remote stays at its
//!    root (the uploaded file unreferenced, as Dolt leaves one);
//! 6. the local remote-tracking ref `refs/remotes/REMOTE/BRANCH` set to the pushed commit.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use prollystore_dolt::chunks::DoltChunkSource;
use prollystore_dolt::error::DoltError;
use prollystore_dolt::write::clone_target::{chunk_refs, push_head, set_tracking_refs, PushHead};
use prollystore_dolt::write::push_target::{
    commit_file_remote, encode_table_file, RemoteRoot, TableFile,
};
use prollystore_format::Address;

use crate::client::{Credentials, RemoteClient, LOCATION_BATCH};
use crate::clone::{empty_report, http_client, now_secs, read_chunks, runtime, CloneOptions};
use crate::error::{RemoteError, Result};
use crate::fetch::{read_state, remote_of};
use crate::remote_url::RemoteUrl;

/// What a push did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PushReport {
    /// The remote's name.
    pub remote: String,
    /// Its URL.
    pub url: String,
    /// The branch pushed (the same name on both sides).
    pub branch: String,
    /// What happened to the remote's branch.
    pub outcome: PushOutcome,
    /// Chunks uploaded (those the remote lacked, the new address map and store root).
    pub chunks: u64,
    /// Bytes of the table file uploaded.
    pub bytes: u64,
    /// The remote's store root after the push.
    pub root: Address,
}

/// What a push did to the remote's branch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PushOutcome {
    /// The remote's branch already was at the local head; nothing was uploaded.
    UpToDate,
    /// The remote's branch moved.
    Pushed {
        /// Its head before (`None`: a new branch on the remote).
        from: Option<Address>,
        /// Its head now (the local head).
        to: Address,
    },
}

/// `dolt push REMOTE BRANCH` (fast-forward only): see the module doc. `options` gives the
/// transfer concurrency.
///
/// ```no_run
/// use prollystore_dolt_remote::{push, CloneOptions, PushOutcome};
/// let report = push(std::path::Path::new("mydb"), "origin", "main", &CloneOptions::default())?;
/// if let PushOutcome::Pushed { to, .. } = report.outcome {
///     println!("{} is now at {to}: {} chunks uploaded", report.branch, report.chunks);
/// }
/// # Ok::<(), prollystore_dolt_remote::RemoteError>(())
/// ```
pub fn push(
    dir: impl AsRef<Path>,
    remote: &str,
    branch: &str,
    options: &CloneOptions,
) -> Result<PushReport> {
    let dir = dir.as_ref();
    let state = read_state(dir)?;
    let config = remote_of(&state, remote)?;
    let url = config.url.clone();
    let mut side = Side::open(dir, &url, options.credentials.as_ref())?;
    let last = side.root()?;
    // The remote's datasets, its address map read chunk by chunk as asked for.
    let mut known = RemoteRoot::new();
    let datasets = with_remote_chunks(&mut side, &mut known, |k| k.datasets(last))?;
    let head_ref = format!("refs/heads/{branch}");
    let remote_head = datasets
        .iter()
        .find(|(n, _)| *n == head_ref)
        .map(|(_, a)| *a);
    let head = match push_head(dir, branch, remote_head).map_err(|e| rejected(&url, e))? {
        PushHead::UpToDate(head) => {
            set_tracking_refs(dir, remote, &[(branch.to_string(), head)], now_secs())?;
            return Ok(PushReport {
                remote: remote.to_string(),
                url,
                branch: branch.to_string(),
                outcome: PushOutcome::UpToDate,
                chunks: 0,
                bytes: 0,
                root: last,
            });
        }
        PushHead::FastForward(head) => head,
    };
    let local = DoltChunkSource::open(dir.join(".dolt").join("noms"))?.with_verify_hashes(false);
    let mut chunks = novel_chunks(&mut side, &local, head)?;
    let head_root = commit_root(&local, head)?;
    let assert_ws = side.asserts_working_set();
    let new = with_remote_chunks(&mut side, &mut known, |k| {
        k.fast_forward(last, branch, head, head_root, assert_ws)
    })?;
    chunks.extend(new.chunks);
    let pairs: Vec<(Address, &[u8])> = chunks.iter().map(|(a, c)| (*a, &c[..])).collect();
    let table = encode_table_file(&pairs)?;
    side.commit(&table, last, new.root)?;
    set_tracking_refs(dir, remote, &[(branch.to_string(), head)], now_secs())?;
    Ok(PushReport {
        remote: remote.to_string(),
        url,
        branch: branch.to_string(),
        outcome: PushOutcome::Pushed {
            from: remote_head,
            to: head,
        },
        chunks: u64::from(table.chunk_count),
        bytes: table.data.len() as u64,
        root: new.root,
    })
}

/// A refusal of the local side (non-fast-forward) as the remote's rejection.
fn rejected(url: &str, e: DoltError) -> RemoteError {
    match e {
        DoltError::Refused(reason) => RemoteError::Rejected {
            url: url.to_string(),
            reason,
        },
        other => RemoteError::Local(other),
    }
}

/// Runs `op` over the remote chunks known so far, reading each chunk it misses from the
/// remote (checked against its address) until it needs no more.
fn with_remote_chunks<T>(
    side: &mut Side,
    known: &mut RemoteRoot,
    op: impl Fn(&RemoteRoot) -> prollystore_dolt::error::Result<T>,
) -> Result<T> {
    let mut asked = HashSet::new();
    loop {
        match op(known) {
            Ok(v) => return Ok(v),
            Err(DoltError::MissingChunk(a)) if asked.insert(a) => side.read_into(a, known)?,
            Err(DoltError::Refused(reason)) => {
                return Err(RemoteError::Rejected {
                    url: side.url().to_string(),
                    reason,
                })
            }
            Err(e) => {
                return Err(RemoteError::BadResponse {
                    url: side.url().to_string(),
                    what: "the remote's store root".into(),
                    reason: e.to_string(),
                })
            }
        }
    }
}

/// The root value of commit `commit` in `local`.
fn commit_root(local: &DoltChunkSource, commit: Address) -> Result<Address> {
    let chunk = local
        .read_uncached(&commit)?
        .ok_or(RemoteError::Local(DoltError::MissingChunk(commit)))?;
    let fields =
        prollystore_format::message::objects::CommitFields::decode(&chunk).map_err(|e| {
            RemoteError::Local(DoltError::BadChunk {
                address: commit,
                reason: e.to_string(),
            })
        })?;
    Ok(Address(fields.root))
}

/// The chunks reachable from `head` in `local` that the remote lacks (it is asked level by
/// level; the walk does not descend below a chunk it has).
fn novel_chunks(
    side: &mut Side,
    local: &DoltChunkSource,
    head: Address,
) -> Result<Vec<(Address, Vec<u8>)>> {
    let mut out = Vec::new();
    let mut seen = HashSet::from([head]);
    let mut level = vec![head];
    while !level.is_empty() {
        let mut next = Vec::new();
        for a in side.absent(&level)? {
            let chunk = local
                .read_uncached(&a)?
                .ok_or(RemoteError::Local(DoltError::MissingChunk(a)))?;
            chunk_refs(a, &chunk, &mut |r| {
                if seen.insert(r) {
                    next.push(r);
                }
            })?;
            out.push((a, chunk.to_vec()));
        }
        level = next;
    }
    Ok(out)
}

/// The remote a push writes to.
enum Side {
    Grpc {
        url: String,
        runtime: tokio::runtime::Runtime,
        client: Box<RemoteClient>,
        /// The remote asks pushes to check and move the branch's working set
        /// (`PUSH_CONCURRENCY_CONTROL_ASSERT_WORKING_SET`, as `dolt sql-server` does).
        assert_working_set: bool,
    },
    File {
        url: String,
        path: PathBuf,
        /// `None`: a directory that holds no store yet (a new `file://` remote).
        source: Option<Box<DoltChunkSource>>,
    },
}

impl Side {
    fn open(dir: &Path, url: &str, credentials: Option<&Credentials>) -> Result<Side> {
        match RemoteUrl::parse(url)? {
            RemoteUrl::Grpc {
                endpoint,
                repo_path,
            } => {
                let runtime = runtime(dir)?;
                let (client, metadata) = runtime.block_on(async {
                    let mut client =
                        RemoteClient::connect(url, &endpoint, &repo_path, credentials).await?;
                    let metadata = client.metadata().await?;
                    Ok::<_, RemoteError>((client, metadata))
                })?;
                Ok(Side::Grpc {
                    url: url.to_string(),
                    runtime,
                    client: Box::new(client),
                    assert_working_set: metadata.push_concurrency_control
                        == crate::proto::PushConcurrencyControl::AssertWorkingSet as i32,
                })
            }
            RemoteUrl::File { path } => {
                let manifest = path.join("manifest");
                if let Ok(bytes) = std::fs::read(&manifest) {
                    let parsed = prollystore_dolt::chunks::manifest::Manifest::parse(
                        &bytes,
                        &manifest.display().to_string(),
                    )
                    .map_err(|e| RemoteError::NotARemote {
                        url: url.to_string(),
                        reason: e.to_string(),
                    })?;
                    if parsed.specs.iter().any(|s| s.is_journal()) {
                        return Err(RemoteError::NotARemote {
                            url: url.to_string(),
                            reason: "a database's own store (it has a chunk journal), not a \
                                     file remote: push to a directory `dolt push` or this \
                                     client made as a remote"
                                .into(),
                        });
                    }
                }
                let source = if manifest.is_file() {
                    Some(Box::new(
                        DoltChunkSource::open(&path)
                            .map_err(|e| RemoteError::BadResponse {
                                url: url.to_string(),
                                what: "the remote's files".into(),
                                reason: e.to_string(),
                            })?
                            .with_verify_hashes(false),
                    ))
                } else if path.exists() && !path.is_dir() {
                    return Err(RemoteError::NotARemote {
                        url: url.to_string(),
                        reason: format!("{} is not a directory", path.display()),
                    });
                } else {
                    None
                };
                Ok(Side::File {
                    url: url.to_string(),
                    path,
                    source,
                })
            }
            RemoteUrl::Bucket { .. } => Err(crate::remote_url::read_in_place_only(url, "a push")),
        }
    }

    fn asserts_working_set(&self) -> bool {
        matches!(
            self,
            Side::Grpc {
                assert_working_set: true,
                ..
            }
        )
    }

    fn url(&self) -> &str {
        match self {
            Side::Grpc { url, .. } | Side::File { url, .. } => url,
        }
    }

    fn root(&mut self) -> Result<Address> {
        match self {
            Side::Grpc {
                runtime, client, ..
            } => runtime.block_on(client.root()),
            Side::File { source, .. } => Ok(source.as_ref().map_or(Address::ZERO, |s| s.root())),
        }
    }

    /// Reads chunk `a` from the remote into `known` (checked against its address).
    fn read_into(&mut self, a: Address, known: &mut RemoteRoot) -> Result<()> {
        let url = self.url().to_string();
        let bad = |what: String, e: DoltError| RemoteError::BadResponse {
            url: url.clone(),
            what,
            reason: e.to_string(),
        };
        match self {
            Side::Grpc {
                runtime, client, ..
            } => {
                let mut report = empty_report(Address::ZERO);
                let mut got = false;
                runtime.block_on(read_chunks(
                    client,
                    &[a],
                    &mut |pairs, _, file| {
                        for (address, chunk) in pairs {
                            known.insert(*address, chunk, file)?;
                            got |= *address == a;
                        }
                        Ok(())
                    },
                    &mut report,
                ))?;
                if !got {
                    return Err(RemoteError::MissingChunk { url, chunk: a });
                }
                Ok(())
            }
            Side::File { source, .. } => {
                let chunk = source
                    .as_ref()
                    .map(|s| s.read_uncached(&a))
                    .transpose()
                    .map_err(|e| bad(format!("chunk {a}"), e))?
                    .flatten()
                    .ok_or(RemoteError::MissingChunk {
                        url: url.clone(),
                        chunk: a,
                    })?;
                known
                    .insert(a, &chunk, &url)
                    .map_err(|e| bad(format!("chunk {a}"), e))
            }
        }
    }

    /// Which of `addresses` the remote lacks.
    fn absent(&mut self, addresses: &[Address]) -> Result<Vec<Address>> {
        match self {
            Side::Grpc {
                runtime, client, ..
            } => runtime.block_on(async {
                let mut out = Vec::new();
                for batch in addresses.chunks(LOCATION_BATCH) {
                    out.extend(client.absent(batch).await?);
                }
                Ok(out)
            }),
            Side::File { source, .. } => Ok(addresses
                .iter()
                .filter(|a| !source.as_ref().is_some_and(|s| s.contains(a)))
                .copied()
                .collect()),
        }
    }

    /// Uploads `table`, then moves the remote's root from `last` to `current` (see the
    /// module doc).
    fn commit(&mut self, table: &TableFile, last: Address, current: Address) -> Result<()> {
        let conflict = |url: &str, reason: String| RemoteError::Rejected {
            url: url.to_string(),
            reason,
        };
        match self {
            Side::Grpc {
                url,
                runtime,
                client,
                ..
            } => runtime.block_on(async {
                let http = http_client(url)?;
                client.upload_table_file(&http, table).await?;
                if client
                    .commit(&[(table.name, table.chunk_count)], last, current)
                    .await?
                {
                    Ok(())
                } else {
                    Err(conflict(
                        url,
                        format!(
                            "the remote's root moved from {last} while this push ran (another \
                             push?); nothing was changed there, fetch and push again"
                        ),
                    ))
                }
            }),
            Side::File { url, path, .. } => {
                commit_file_remote(path, table, last, current).map_err(|e| match e {
                    DoltError::Conflict { reason, .. } => conflict(url, reason),
                    other => RemoteError::Local(other),
                })
            }
        }
    }
}
