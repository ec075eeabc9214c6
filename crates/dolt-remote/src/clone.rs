//! `clone`: a Dolt database copied from a remote into a new directory that Dolt opens as its
//! own clone.
//!
//! The walk starts at the remote's store root and goes level by level: the chunks of a level
//! are located in one `StreamDownloadLocations` call, their records read with HTTP range
//! requests (neighbouring ranges of a file merged, several requests in flight), every chunk
//! decoded and checked against its address, queued for the new database's chunk journal, and
//! the addresses it refers to (not seen before) form the next level. Nothing the new database
//! already holds is asked for again.
//!
//! A `file://` remote is read with the local chunk reader (its manifest, table files and
//! archives) and walked the same way.
//!
//! The database is built in a temporary directory beside the destination and renamed into
//! place only when complete (journal fsync'd, refs and `repo_state.json` written), so a failed
//! or interrupted clone leaves no directory at the destination (an interrupted process may
//! leave the temporary `.NAME.prolly-clone-PID` beside it, which is never read).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::StreamExt;
use prollystore_dolt::write::clone_target::{chunk_refs, set_clone_refs, CloneRefs, CloneTarget};
use prollystore_format::Address;

use crate::client::{source_text, Credentials, RemoteClient};
use crate::error::{RemoteError, Result};
use crate::locations::{
    decode_dictionary, decode_record, merge_ranges, slice, ChunkRange, Dictionary, Span,
};
use crate::remote_url::RemoteUrl;

/// How a clone is made.
#[derive(Clone, Debug)]
pub struct CloneOptions {
    /// The remote's name in the clone (`origin`).
    pub remote_name: String,
    /// The branch to check out; `None`: `main`, else `master`, else the first by name (Dolt's
    /// choice).
    pub branch: Option<String>,
    /// `user.name` for the working set Dolt records; `None`: from `$HOME/.dolt/
    /// config_global.json`, else empty.
    pub user_name: Option<String>,
    /// `user.email`, likewise.
    pub user_email: Option<String>,
    /// HTTP range requests in flight at once.
    pub concurrency: usize,
    /// Fetch and pull only: remove the remote-tracking refs (`refs/remotes/REMOTE/B`) of
    /// branches the remote no longer has, as `dolt fetch --prune` does.
    pub prune: bool,
    /// Who the calls to a `dolt sql-server` remote say they come from (`dolt --user`;
    /// [`Credentials::from_env`] reads the password as Dolt does). `None`: no credentials,
    /// which such a server takes as `root` with an empty password.
    pub credentials: Option<Credentials>,
}

impl CloneOptions {
    /// The default options, with [`CloneOptions::prune`] set as given (fetch and pull).
    pub fn with_prune(prune: bool) -> CloneOptions {
        CloneOptions {
            prune,
            ..Default::default()
        }
    }
}

impl Default for CloneOptions {
    fn default() -> Self {
        CloneOptions {
            remote_name: "origin".into(),
            branch: None,
            user_name: None,
            user_email: None,
            concurrency: 8,
            prune: false,
            credentials: None,
        }
    }
}

/// What a clone did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CloneReport {
    /// The checked-out branch.
    pub branch: String,
    /// The remote's store root when the clone read it.
    pub root: Address,
    /// Chunks copied.
    pub chunks: u64,
    /// Bytes received in HTTP range responses.
    pub bytes: u64,
    /// HTTP range requests made.
    pub requests: u64,
    /// Levels of the walk (location calls).
    pub levels: u64,
}

/// Clones the Dolt database at `url` into `dir`, which must not exist or be an empty
/// directory: `http://HOST:PORT/DATABASE` (as `dolt sql-server --remotesapi-port` serves it)
/// or `file:///DIR` (what `dolt push` writes to a `file://` remote: a manifest and table or
/// archive files). See the module doc for what is written and when.
pub fn clone(url: &str, dir: impl AsRef<Path>, options: &CloneOptions) -> Result<CloneReport> {
    let dir = dir.as_ref();
    let remote = RemoteUrl::parse(url)?;
    let destination = Destination::check(dir)?;
    let temp = destination.temp.clone();
    let result = match remote {
        RemoteUrl::Grpc {
            endpoint,
            repo_path,
        } => runtime(dir)?.block_on(clone_grpc(url, &endpoint, &repo_path, &temp, options)),
        RemoteUrl::File { path } => clone_file(url, &path, &temp),
        RemoteUrl::Bucket { .. } => Err(crate::remote_url::read_in_place_only(url, "a clone")),
    }
    .and_then(|mut report| {
        let (name, email) = user(options);
        report.branch = set_clone_refs(
            &temp,
            &CloneRefs {
                remote: &options.remote_name,
                url,
                branch: options.branch.as_deref(),
                user_name: &name,
                user_email: &email,
                timestamp_secs: now_secs(),
            },
        )?;
        Ok(report)
    });
    match result {
        Ok(report) => {
            destination.commit()?;
            Ok(report)
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(&temp);
            Err(e)
        }
    }
}

/// The I/O runtime of one remote operation on the database at `dir`.
pub(crate) fn runtime(dir: &Path) -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| RemoteError::Destination {
            path: dir.display().to_string(),
            reason: format!("cannot start the I/O runtime: {e}"),
        })
}

/// A new store in `temp`, for a remote whose root is `root` (an empty root is an error).
fn new_target(url: &str, root: Address, temp: &Path) -> Result<CloneTarget> {
    if root.is_zero() {
        return Err(RemoteError::NoSuchDatabase {
            url: url.to_string(),
            reason: "the remote holds no Dolt data (its root is empty)".into(),
        });
    }
    std::fs::create_dir_all(temp).map_err(|e| RemoteError::Destination {
        path: temp.display().to_string(),
        reason: e.to_string(),
    })?;
    Ok(CloneTarget::create(temp)?)
}

pub(crate) fn empty_report(root: Address) -> CloneReport {
    CloneReport {
        branch: String::new(),
        root,
        chunks: 0,
        bytes: 0,
        requests: 0,
        levels: 0,
    }
}

/// The chunks of a gRPC remote, copied into a new store in `temp`.
async fn clone_grpc(
    url: &str,
    endpoint: &str,
    repo_path: &str,
    temp: &Path,
    options: &CloneOptions,
) -> Result<CloneReport> {
    let mut client =
        RemoteClient::connect(url, endpoint, repo_path, options.credentials.as_ref()).await?;
    client.metadata().await?;
    let root = client.root().await?;
    let mut target = new_target(url, root, temp)?;
    let mut report = empty_report(root);
    copy_reachable(&mut client, root, &mut target, options, &mut report).await?;
    report.chunks = target.chunk_count();
    target.finish(root, now_secs())?;
    Ok(report)
}

/// Chunks copied per batch from a `file://` remote.
const FILE_BATCH: usize = 1024;

/// The chunks of a `file://` remote (a directory holding a manifest and table or archive
/// files, as `dolt push` writes it), read with the local chunk reader and copied into a new
/// store in `temp`.
fn clone_file(url: &str, path: &Path, temp: &Path) -> Result<CloneReport> {
    let source = open_file_remote(url, path)?;
    let root = source.root();
    let mut target = new_target(url, root, temp)?;
    let mut report = empty_report(root);
    copy_file_reachable(url, &source, root, &mut target, &mut report)?;
    report.chunks = target.chunk_count();
    target.finish(root, now_secs())?;
    Ok(report)
}

/// The store of a `file://` remote, opened for reading (hashes are checked once, when the
/// chunks are queued).
pub(crate) fn open_file_remote(
    url: &str,
    path: &Path,
) -> Result<prollystore_dolt::chunks::DoltChunkSource> {
    if !path.is_dir() {
        return Err(RemoteError::NoSuchDatabase {
            url: url.to_string(),
            reason: format!("{} is not a directory", path.display()),
        });
    }
    if !path.join("manifest").is_file() {
        return Err(RemoteError::NotARemote {
            url: url.to_string(),
            reason: format!(
                "not a Dolt file remote: {} holds no manifest",
                path.display()
            ),
        });
    }
    Ok(prollystore_dolt::chunks::DoltChunkSource::open(path)
        .map_err(|e| RemoteError::BadResponse {
            url: url.to_string(),
            what: "the remote's files".into(),
            reason: e.to_string(),
        })?
        .with_verify_hashes(false))
}

/// Copies every chunk reachable from `root` in a `file://` remote's store that `target` lacks
/// (the walk does not descend below a chunk `target` holds), level by level.
pub(crate) fn copy_file_reachable(
    url: &str,
    source: &prollystore_dolt::chunks::DoltChunkSource,
    root: Address,
    target: &mut CloneTarget,
    report: &mut CloneReport,
) -> Result<()> {
    let bad = |what: String, e: prollystore_dolt::error::DoltError| RemoteError::BadResponse {
        url: url.to_string(),
        what,
        reason: e.to_string(),
    };
    let mut seen: HashSet<Address> = HashSet::from([root]);
    let mut level = vec![root];
    while !level.is_empty() {
        report.levels += 1;
        let mut next = Vec::new();
        for batch in level.chunks(FILE_BATCH) {
            let mut chunks = Vec::with_capacity(batch.len());
            for a in batch.iter().filter(|a| !target.contains(a)) {
                let chunk = source
                    .read_uncached(a)
                    .map_err(|e| bad(format!("chunk {a}"), e))?
                    .ok_or_else(|| RemoteError::MissingChunk {
                        url: url.to_string(),
                        chunk: *a,
                    })?;
                report.bytes += chunk.len() as u64;
                chunks.push((*a, chunk));
            }
            let pairs: Vec<(Address, &[u8])> = chunks.iter().map(|(a, c)| (*a, &c[..])).collect();
            target
                .put_verified(&pairs, url)
                .map_err(|e| bad("a chunk".into(), e))?;
            for (a, c) in &chunks {
                chunk_refs(*a, c, &mut |r| {
                    if seen.insert(r) {
                        next.push(r);
                    }
                })
                .map_err(|e| bad(format!("chunk {a}"), e))?;
            }
        }
        level = next;
    }
    Ok(())
}

/// The destination directory and the temporary one the clone is built in.
struct Destination {
    dir: PathBuf,
    temp: PathBuf,
    existed: bool,
}

impl Destination {
    fn check(dir: &Path) -> Result<Destination> {
        let bad = |reason: String| RemoteError::Destination {
            path: dir.display().to_string(),
            reason,
        };
        let existed = dir.exists();
        if existed {
            let mut entries = std::fs::read_dir(dir)
                .map_err(|e| bad(format!("cannot read the directory: {e}")))?;
            if entries.next().is_some() {
                return Err(bad("exists and is not empty".into()));
            }
        }
        let name = dir
            .file_name()
            .ok_or_else(|| bad("names no directory".into()))?
            .to_string_lossy()
            .into_owned();
        let parent = match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !parent.is_dir() {
            return Err(bad(format!(
                "its parent {} is not a directory",
                parent.display()
            )));
        }
        let temp = parent.join(format!(".{name}.prolly-clone-{}", std::process::id()));
        Ok(Destination {
            dir: dir.to_path_buf(),
            temp,
            existed,
        })
    }

    /// Moves the finished clone into place.
    fn commit(self) -> Result<()> {
        let bad = |e: std::io::Error| RemoteError::Destination {
            path: self.dir.display().to_string(),
            reason: format!("cannot move the finished clone into place: {e}"),
        };
        if self.existed {
            std::fs::remove_dir(&self.dir).map_err(bad)?;
        }
        if let Err(e) = std::fs::rename(&self.temp, &self.dir) {
            let _ = std::fs::remove_dir_all(&self.temp);
            return Err(bad(e));
        }
        Ok(())
    }
}

pub(crate) fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// `user.name` and `user.email`: the options', else Dolt's global config's, else empty.
pub(crate) fn user(options: &CloneOptions) -> (String, String) {
    let config: Option<serde_like::Config> = std::env::var_os("HOME")
        .map(|h| Path::new(&h).join(".dolt/config_global.json"))
        .and_then(|p| std::fs::read_to_string(p).ok())
        .map(|t| serde_like::Config::parse(&t));
    let from_config = |key: &str| config.as_ref().and_then(|c| c.get(key)).unwrap_or_default();
    (
        options
            .user_name
            .clone()
            .unwrap_or_else(|| from_config("user.name")),
        options
            .user_email
            .clone()
            .unwrap_or_else(|| from_config("user.email")),
    )
}

/// Dolt's global config is a flat JSON object of strings.
mod serde_like {
    pub(super) struct Config(std::collections::BTreeMap<String, String>);

    impl Config {
        pub(super) fn parse(text: &str) -> Config {
            Config(serde_json::from_str(text).unwrap_or_default())
        }

        pub(super) fn get(&self, key: &str) -> Option<String> {
            self.0.get(key).cloned()
        }
    }
}

/// Copies every chunk reachable from `root` that `target` lacks.
pub(crate) async fn copy_reachable(
    client: &mut RemoteClient,
    root: Address,
    target: &mut CloneTarget,
    options: &CloneOptions,
    report: &mut CloneReport,
) -> Result<()> {
    let http = http_client(client.url())?;
    let mut seen: HashSet<Address> = HashSet::new();
    seen.insert(root);
    let mut level = vec![root];
    while !level.is_empty() {
        report.levels += 1;
        level.retain(|a| !target.contains(a));
        if level.is_empty() {
            break;
        }
        let plan = client.locations(&level).await?;
        let mut next = Vec::new();
        for (file, ranges) in plan {
            fetch_file(
                Spans::Http(&http),
                client.url(),
                &file,
                &ranges,
                options.concurrency.max(1),
                &mut |pairs, payloads, file| target.put_verified_payloads(pairs, payloads, file),
                report,
                &mut |a| {
                    if seen.insert(a) {
                        next.push(a);
                    }
                },
            )
            .await?;
        }
        level = next;
    }
    Ok(())
}

/// The HTTP client of the transfers a remote hands out.
pub(crate) fn http_client(remote: &str) -> Result<reqwest::Client> {
    reqwest::Client::builder()
        .build()
        .map_err(|e| RemoteError::Call {
            url: remote.to_string(),
            call: "HTTP client".into(),
            reason: e.to_string(),
        })
}

/// What receives the chunks read from a file: `(address, bytes)` pairs not yet checked
/// against their addresses; for each, its payload as the file stores it when that is a
/// snappy block ‖ CRC-32C with its CRC checked (what a journal record can keep as it is;
/// `None` for an archive's zstd chunk); and the file they came from. A hash mismatch is
/// reported as [`prollystore_dolt::error::DoltError::HashMismatch`].
pub(crate) type ChunkSink<'a> = dyn FnMut(&[(Address, &[u8])], &[Option<&[u8]>], &str) -> prollystore_dolt::error::Result<()>
    + 'a;

/// Reads the chunks `addresses` of a gRPC remote (located, range-read, decoded) into `put`.
pub(crate) async fn read_chunks(
    client: &mut RemoteClient,
    addresses: &[Address],
    put: &mut ChunkSink<'_>,
    report: &mut CloneReport,
) -> Result<()> {
    let http = http_client(client.url())?;
    let plan = client.locations(addresses).await?;
    for (file, ranges) in plan {
        fetch_file(
            Spans::Http(&http),
            client.url(),
            &file,
            &ranges,
            8,
            put,
            report,
            &mut |_| {},
        )
        .await?;
    }
    Ok(())
}

/// Reads the chunks `ranges` of `file` (dictionaries first), decodes each, gives them to
/// `put` (which checks them against their addresses) and reports their references to `refs`.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn fetch_file(
    spans_from: Spans<'_>,
    remote: &str,
    file: &str,
    ranges: &[ChunkRange],
    concurrency: usize,
    put: &mut ChunkSink<'_>,
    report: &mut CloneReport,
    refs: &mut dyn FnMut(Address),
) -> Result<()> {
    let bad = |what: String, reason: String| RemoteError::BadResponse {
        url: remote.to_string(),
        what,
        reason,
    };
    // Dictionaries (archives' zstd chunks), each read and decoded once.
    let dict_ranges: Vec<(u64, u64)> = {
        let set: HashSet<(u64, u64)> = ranges.iter().filter_map(|r| r.dictionary).collect();
        set.into_iter().collect()
    };
    let mut dictionaries: HashMap<(u64, u64), Dictionary> = HashMap::new();
    if !dict_ranges.is_empty() {
        let spans = merge_ranges(dict_ranges.clone());
        let bodies = read_spans(spans_from, remote, file, &spans, concurrency, report).await?;
        for (offset, length) in dict_ranges {
            let (span, body) = bodies
                .iter()
                .find(|(s, _)| s.offset <= offset && offset + length <= s.offset + s.length)
                .ok_or_else(|| bad(file.to_string(), format!("dictionary at {offset} unread")))?;
            let bytes = slice(span.offset, body, offset, length)
                .map_err(|r| bad(format!("{file} dictionary at {offset}"), r))?;
            let d = decode_dictionary(bytes, file, offset)
                .map_err(|r| bad(format!("{file} dictionary at {offset}"), r))?;
            dictionaries.insert((offset, length), d);
        }
    }
    // The chunk records, span by span as they arrive.
    let mut by_offset: Vec<&ChunkRange> = ranges.iter().collect();
    by_offset.sort_unstable_by_key(|r| r.offset);
    let spans = merge_ranges(ranges.iter().map(|r| (r.offset, r.length)).collect());
    let mut stream = futures::stream::iter(spans.into_iter().map(|span| async move {
        let body = spans_from.read(remote, file, &span).await;
        (span, body)
    }))
    .buffer_unordered(concurrency);
    while let Some((span, body)) = stream.next().await {
        let body = body?;
        report.requests += 1;
        report.bytes += body.len() as u64;
        let end = span.offset + span.length;
        let first = by_offset.partition_point(|r| r.offset < span.offset);
        let mut chunks: Vec<(Address, Arc<[u8]>)> = Vec::new();
        let mut payloads: Vec<Option<&[u8]>> = Vec::new();
        for r in by_offset[first..].iter().take_while(|r| r.offset < end) {
            let what = || format!("chunk {} in {file} at {}", r.address, r.offset);
            let record =
                slice(span.offset, &body, r.offset, r.length).map_err(|e| bad(what(), e))?;
            let dictionary = match r.dictionary {
                None => None,
                Some(key) => Some(
                    dictionaries
                        .get(&key)
                        .ok_or_else(|| bad(what(), "its dictionary was not read".into()))?,
                ),
            };
            let chunk =
                decode_record(record, dictionary, file, r.offset).map_err(|e| bad(what(), e))?;
            chunks.push((r.address, chunk));
            // A snappy record (its CRC checked by the decoding) is a journal payload as it is.
            payloads.push(dictionary.is_none().then_some(record));
        }
        let pairs: Vec<(Address, &[u8])> = chunks.iter().map(|(a, c)| (*a, &c[..])).collect();
        put(&pairs, &payloads, file).map_err(|e| match e {
            prollystore_dolt::error::DoltError::HashMismatch {
                address, actual, ..
            } => bad(
                format!("chunk {address} read from {file}"),
                format!("its bytes hash to {actual}"),
            ),
            other => RemoteError::Local(other),
        })?;
        for (a, c) in &chunks {
            chunk_refs(*a, c, &mut *refs)
                .map_err(|e| bad(format!("chunk {a} read from {file}"), e.to_string()))?;
        }
    }
    Ok(())
}

async fn read_spans(
    spans_from: Spans<'_>,
    remote: &str,
    file: &str,
    spans: &[Span],
    concurrency: usize,
    report: &mut CloneReport,
) -> Result<Vec<(Span, Vec<u8>)>> {
    let mut stream = futures::stream::iter(spans.iter().cloned().map(|span| async move {
        let body = spans_from.read(remote, file, &span).await;
        (span, body)
    }))
    .buffer_unordered(concurrency);
    let mut out = Vec::new();
    while let Some((span, body)) = stream.next().await {
        let body = body?;
        report.requests += 1;
        report.bytes += body.len() as u64;
        out.push((span, body));
    }
    Ok(out)
}

/// Where the records of a file are read from: download URLs over HTTP (gRPC remotes), or the
/// objects of a bucket (`s3://` remotes, `file` an object's name under the prefix).
#[derive(Clone, Copy)]
pub(crate) enum Spans<'a> {
    /// HTTP range requests of the URL.
    Http(&'a reqwest::Client),
    /// Range reads of an object in the bucket.
    Bucket(&'a prollystore_remote::Remote),
}

impl Spans<'_> {
    /// Exactly the span's bytes of `file`, or an error naming the file and range.
    async fn read(self, remote: &str, file: &str, span: &Span) -> Result<Vec<u8>> {
        match self {
            Spans::Http(http) => read_span(http, remote, file, span).await,
            Spans::Bucket(bucket) => {
                crate::bucket::read_range(bucket, file, span.offset, span.length)
                    .await
                    .map_err(|e| RemoteError::Call {
                        url: remote.to_string(),
                        call: format!("GET {file} bytes {}+{}", span.offset, span.length),
                        reason: e.to_string(),
                    })
            }
        }
    }
}

/// One HTTP range request: exactly the span's bytes, or an error naming the file and range.
async fn read_span(
    http: &reqwest::Client,
    remote: &str,
    file: &str,
    span: &Span,
) -> Result<Vec<u8>> {
    let last = span.offset + span.length - 1;
    // The file named without its signed query (a short-lived token, noise in an error).
    let name = file.split_once('?').map_or(file, |(path, _)| path);
    let call = format!("GET {name} bytes {}-{last}", span.offset);
    let fail = |reason: String| RemoteError::Call {
        url: remote.to_string(),
        call: call.clone(),
        reason,
    };
    let response = http
        .get(file)
        .header("Range", format!("bytes={}-{last}", span.offset))
        .send()
        .await
        .map_err(|e| fail(source_text(&e.without_url())))?;
    let status = response.status();
    if status.as_u16() != 206 && status.as_u16() != 200 {
        return Err(fail(format!("HTTP {status}")));
    }
    let body = response
        .bytes()
        .await
        .map_err(|e| fail(source_text(&e.without_url())))?;
    let body = if status.as_u16() == 200 {
        // A server that ignored the range sent the whole file.
        slice(0, &body, span.offset, span.length)
            .map_err(fail)?
            .to_vec()
    } else {
        body.to_vec()
    };
    if body.len() as u64 != span.length {
        return Err(fail(format!(
            "{} bytes received, {} asked for",
            body.len(),
            span.length
        )));
    }
    Ok(body)
}
