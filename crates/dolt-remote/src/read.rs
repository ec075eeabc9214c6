//! Reading a remote in place: [`open_remote`] opens a Dolt database on a remote read-only, as a
//! [`Database`] whose chunks are fetched when a read needs them, without cloning it. Every read
//! the local reader has (branches, log, get, scan, Arrow streams, diffs) works on it.
//!
//! * `http://HOST:PORT/DATABASE` (a `dolt sql-server --remotesapi-port`): the chunks a read
//!   asks for are located with one `StreamDownloadLocations` call per batch, their records
//!   read with HTTP range requests (nearby ranges of a file merged into one request, several
//!   in flight), decoded, and checked against their addresses before anything uses them. The
//!   bulk leaf reader behind exports and Arrow streams asks for the leaves of a scan a batch at
//!   a time, ahead of the caller, so a scan costs a few requests per batch of leaves, not one
//!   per leaf. Chunks are kept in the reader's own bounded cache
//!   ([`OpenOptions::cache_bytes`]) and in its node arena (the nodes tree reads visit), as for
//!   a local database; nothing is written to disk.
//! * `file:///DIR` (a directory as `dolt push` writes it: a manifest and table or archive
//!   files): opened with the local chunk reader, in place.
//! * `s3://BUCKET/PATH[?endpoint=URL&region=R&path-style=true]` (what Dolt's `s3://` remotes
//!   write, the same layout as a `file://` remote; see the `bucket` module): the manifest and
//!   every chunk file's index read at open, chunks located in those indexes and read with the
//!   same batched range reads and checks as above. Credentials and any endpoint not in the
//!   URL come from the standard AWS environment variables (`AWS_ACCESS_KEY_ID`,
//!   `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, `AWS_ENDPOINT_URL`, …), as for prollystore's own
//!   `s3://` remotes.
//!
//! The remote's root is read once, at open: the database shows the remote as it was then.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use prollystore_dolt::chunks::{check_chunks, DoltChunkSource, FetchChunks};
use prollystore_dolt::error::DoltError;
use prollystore_dolt::Database;
use prollystore_format::Address;

use prollystore_dolt::parts::Located;

use crate::bucket::Bucket;
use crate::client::{Credentials, RemoteClient};
use crate::clone::{empty_report, fetch_file, http_client, open_file_remote, runtime, Spans};
use crate::error::{RemoteError, Result};
use crate::remote_url::RemoteUrl;

/// How a remote is read in place.
#[derive(Clone, Debug)]
pub struct OpenOptions {
    /// HTTP range requests in flight at once per fetch.
    pub concurrency: usize,
    /// Byte budget of the decompressed-chunk cache (see
    /// [`DoltChunkSource::with_cache_bytes`]).
    pub cache_bytes: usize,
    /// Where to count what is fetched (`None`: not counted).
    pub stats: Option<Arc<FetchStats>>,
    /// Who the calls say they come from (see [`crate::CloneOptions::credentials`]).
    pub credentials: Option<Credentials>,
    /// `s3://` remotes: object-store options (keys as `object_store` names them:
    /// `aws_access_key_id`, `aws_secret_access_key`, `aws_endpoint`, …) that override the
    /// environment and the URL's query, as `prollystore_remote::Remote::open_with` takes them.
    pub store_options: Vec<(String, String)>,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            concurrency: 8,
            cache_bytes: prollystore_dolt::chunks::source::DEFAULT_CACHE_BYTES,
            stats: None,
            credentials: None,
            store_options: Vec::new(),
        }
    }
}

/// What reading a remote in place has fetched so far (`http://` and `s3://` remotes; a
/// `file://` remote is read from its files and counts nothing).
#[derive(Debug, Default)]
pub struct FetchStats {
    chunks: AtomicU64,
    bytes: AtomicU64,
    requests: AtomicU64,
    location_calls: AtomicU64,
}

/// A snapshot of [`FetchStats`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FetchCounts {
    /// Chunks fetched (and checked against their addresses).
    pub chunks: u64,
    /// Bytes received in range responses (HTTP, or the bucket's).
    pub bytes: u64,
    /// Range requests made (the indexes an `s3://` remote reads at open are not counted).
    pub requests: u64,
    /// `StreamDownloadLocations` calls made.
    pub location_calls: u64,
}

impl FetchStats {
    /// The counts so far.
    pub fn counts(&self) -> FetchCounts {
        FetchCounts {
            chunks: self.chunks.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            requests: self.requests.load(Ordering::Relaxed),
            location_calls: self.location_calls.load(Ordering::Relaxed),
        }
    }
}

/// Opens the Dolt database at `url` read-only, in place (see the module doc):
/// `http://HOST:PORT/DATABASE` or `file:///DIR`. The remote is asked for its root (so a
/// server that is not a Dolt remote, or a database that does not exist, is an error here);
/// chunks are fetched as reads need them.
///
/// ```no_run
/// use prollystore_dolt::{table_rows::for_each_row, State};
/// use prollystore_dolt_remote::{open_remote, OpenOptions};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let db = open_remote("http://127.0.0.1:50051/mydb", &OpenOptions::default())?;
/// let table = db.table_at("main", State::Committed, "t")?;
/// for_each_row(&db, &table, &mut |row| {
///     println!("{row:?}");
///     Ok(())
/// })?;
/// # Ok(())
/// # }
/// ```
pub fn open_remote(url: &str, options: &OpenOptions) -> Result<Database> {
    let source = match RemoteUrl::parse(url)? {
        RemoteUrl::File { path } => open_file_remote(url, &path)?.with_verify_hashes(true),
        RemoteUrl::Grpc {
            endpoint,
            repo_path,
        } => {
            let runtime = runtime(Path::new(url))?;
            let (client, root) = runtime.block_on(async {
                let mut client =
                    RemoteClient::connect(url, &endpoint, &repo_path, options.credentials.as_ref())
                        .await?;
                client.metadata().await?;
                let root = client.root().await?;
                Ok::<_, RemoteError>((client, root))
            })?;
            if root.is_zero() {
                return Err(RemoteError::NoSuchDatabase {
                    url: url.to_string(),
                    reason: "the remote holds no Dolt data (its root is empty)".into(),
                });
            }
            let transport = Transport::Grpc {
                http: http_client(url)?,
                runtime,
                client: Box::new(client),
            };
            DoltChunkSource::fetched(root, Arc::new(RemoteFetcher::new(url, transport, options)))?
        }
        RemoteUrl::Bucket {
            store_url,
            options: mut store_options,
        } => {
            store_options.extend(options.store_options.iter().cloned());
            let bucket = off_runtime(url, || Bucket::open(url, &store_url, &store_options))?;
            let root = bucket.root;
            let transport = Transport::Bucket(bucket);
            DoltChunkSource::fetched(root, Arc::new(RemoteFetcher::new(url, transport, options)))?
        }
    };
    Ok(Database::from_source(
        url,
        source.with_cache_bytes(options.cache_bytes),
    ))
}

/// The database a part names (a table's [`Part`](prollystore_dolt::parts::Part) or a diff's
/// [`DiffPart`](prollystore_dolt::diff_parts::DiffPart)), opened in this process: a remote's URL
/// (`http(s)://`, `s3://`) read in place with `options` ([`open_remote`]), else a local
/// database directory (a `file://` URL or a path, [`Located::database_path`]). Add an expression
/// engine for tables with VIRTUAL columns (`.with_expressions(prollystore_sql::engine())`).
/// Opened to read one part, it keeps none of the leaves its read brings in
/// ([`DoltChunkSource::set_keep_bulk_reads`](prollystore_dolt::chunks::DoltChunkSource::set_keep_bulk_reads)).
pub fn open_part_database(part: &impl Located, options: &OpenOptions) -> Result<Database> {
    let db = open_located(part, options)?;
    db.source().set_keep_bulk_reads(false);
    Ok(db)
}

/// [`open_part_database`] before its setting.
fn open_located(part: &impl Located, options: &OpenOptions) -> Result<Database> {
    let l = part.database();
    if REMOTE_SCHEMES.iter().any(|s| l.starts_with(s)) {
        return open_remote(l, options);
    }
    let path = part.database_path()?;
    // A `file://` remote's directory (a manifest, no `.dolt`): what a part cut from a
    // database opened with `open_remote("file://…")` records.
    if !path.join(".dolt").exists() && path.join("manifest").is_file() {
        if let Ok(url) = url::Url::from_directory_path(&path) {
            return open_remote(url.as_str(), options);
        }
    }
    Ok(Database::open(path)?)
}

/// The URL schemes of databases read in place from a remote (what a part's `database` holds
/// when it was cut from one); a `file://` part location is a local database directory.
pub const REMOTE_SCHEMES: [&str; 3] = ["http://", "https://", "s3://"];

/// Runs `f` where it may block on a runtime of its own: here, or, called from inside another
/// runtime (an async caller, where blocking would panic), on a thread of its own.
fn off_runtime<T: Send>(url: &str, f: impl FnOnce() -> Result<T> + Send) -> Result<T> {
    if tokio::runtime::Handle::try_current().is_err() {
        return f();
    }
    std::thread::scope(|s| {
        s.spawn(f).join().unwrap_or_else(|_| {
            Err(RemoteError::Call {
                url: url.to_string(),
                call: "fetch".into(),
                reason: "the fetching thread panicked (a bug)".into(),
            })
        })
    })
}

/// The branch a read of a remote defaults to, as a clone of it would check out: `main`, else
/// `master`, else the first by name (`None`: no branches).
pub fn default_branch(db: &Database) -> prollystore_dolt::Result<Option<String>> {
    let branches = db.branches()?;
    if branches.is_empty() {
        return Ok(None);
    }
    let named: Vec<(&str, Address)> = branches.iter().map(|(b, a)| (b.as_str(), *a)).collect();
    Ok(Some(
        prollystore_dolt::write::clone_target::default_branch(&named).to_string(),
    ))
}

/// How a remote's chunks are located and read.
enum Transport {
    /// A gRPC remote: located with `StreamDownloadLocations`, read over HTTP, on `runtime`.
    Grpc {
        runtime: tokio::runtime::Runtime,
        client: Box<RemoteClient>,
        http: reqwest::Client,
    },
    /// A bucket: located in the indexes read at open, read from its objects.
    Bucket(Bucket),
}

/// The chunks of a remote, fetched on demand for a [`DoltChunkSource`].
struct RemoteFetcher {
    transport: Transport,
    url: String,
    concurrency: usize,
    stats: Arc<FetchStats>,
}

impl std::fmt::Debug for RemoteFetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteFetcher")
            .field("url", &self.url)
            .field("fetched", &self.stats.counts())
            .finish()
    }
}

impl RemoteFetcher {
    fn new(url: &str, transport: Transport, options: &OpenOptions) -> RemoteFetcher {
        RemoteFetcher {
            transport,
            url: url.to_string(),
            concurrency: options.concurrency.max(1),
            stats: options.stats.clone().unwrap_or_default(),
        }
    }

    /// Locates, reads, decodes and checks `addresses`.
    async fn fetch_async(&self, addresses: &[Address]) -> Result<HashMap<Address, Arc<[u8]>>> {
        let (plan, spans) = match &self.transport {
            Transport::Grpc { client, http, .. } => {
                let mut client = RemoteClient::clone(client);
                self.stats.location_calls.fetch_add(1, Ordering::Relaxed);
                (client.locations(addresses).await?, Spans::Http(http))
            }
            Transport::Bucket(bucket) => (bucket.locate(addresses)?, Spans::Bucket(&bucket.remote)),
        };
        let mut report = empty_report(Address::ZERO);
        let mut got: HashMap<Address, Arc<[u8]>> = HashMap::with_capacity(addresses.len());
        for (file, ranges) in plan {
            let mut put = |pairs: &[(Address, &[u8])], _: &[Option<&[u8]>], file: &str| {
                check_chunks(pairs, file)?;
                for (address, chunk) in pairs {
                    got.insert(*address, Arc::from(*chunk));
                }
                Ok(())
            };
            let result = fetch_file(
                spans,
                &self.url,
                &file,
                &ranges,
                self.concurrency,
                &mut put,
                &mut report,
                &mut |_| {},
            )
            .await;
            self.stats
                .requests
                .fetch_add(report.requests, Ordering::Relaxed);
            self.stats.bytes.fetch_add(report.bytes, Ordering::Relaxed);
            (report.requests, report.bytes) = (0, 0);
            result?;
        }
        self.stats
            .chunks
            .fetch_add(got.len() as u64, Ordering::Relaxed);
        Ok(got)
    }

    /// [`RemoteFetcher::fetch_async`], waited for on the transport's runtime.
    fn fetch_blocking(&self, addresses: &[Address]) -> Result<HashMap<Address, Arc<[u8]>>> {
        match &self.transport {
            Transport::Grpc { runtime, .. } => runtime.block_on(self.fetch_async(addresses)),
            Transport::Bucket(bucket) => bucket.remote.run(self.fetch_async(addresses)),
        }
    }
}

impl FetchChunks for RemoteFetcher {
    fn name(&self) -> &str {
        &self.url
    }

    fn fetch(&self, addresses: &[Address]) -> prollystore_dolt::Result<Vec<Option<Arc<[u8]>>>> {
        let mut wanted: Vec<Address> = addresses.to_vec();
        wanted.sort_unstable();
        wanted.dedup();
        let got = off_runtime(&self.url, || self.fetch_blocking(&wanted)).map_err(to_dolt_error)?;
        Ok(addresses.iter().map(|a| got.get(a).cloned()).collect())
    }
}

/// A remote's error as the reader's: a chunk the remote lacks is a missing chunk; anything
/// else an I/O error naming the remote and what failed.
fn to_dolt_error(e: RemoteError) -> DoltError {
    match e {
        RemoteError::MissingChunk { chunk, .. } => DoltError::MissingChunk(chunk),
        RemoteError::Local(e) => e,
        other => DoltError::Io {
            file: "reading a remote in place".into(),
            source: std::io::Error::other(other.to_string()),
        },
    }
}
