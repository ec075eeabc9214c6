//! A remote: an object store prefix holding a prollystore store in the file store's layout
//! (`MANIFEST` and `<seq>.chunks` objects, `docs/FORMAT.md`), and the requests made to it.
//!
//! Every call that waits for the network counts one *round trip*, however many requests it
//! sends in parallel; [`Remote::stats`] reports them, for the round-trip bounds in the docs.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures::stream::{self, StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{
    ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion, WriteMultipart,
};
use prollystore::format::HashProfile;
use prollystore::store::file::layout::{
    file_name, parse_tail, tail_len, FileRecord, IndexEntry, Manifest, HEADER_LEN, MANIFEST,
};

use crate::{location, RemoteError};

/// Requests in flight at once for one batch.
pub(crate) const PARALLEL_REQUESTS: usize = 8;
/// Part size of multipart uploads.
const PART_LEN: usize = 8 << 20;

/// Counters of the traffic a [`Remote`] made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RemoteStats {
    /// Times a caller waited on the network (parallel requests of one batch count once).
    pub round_trips: u64,
    /// Requests sent.
    pub requests: u64,
    /// Bytes downloaded.
    pub bytes_in: u64,
    /// Bytes uploaded.
    pub bytes_out: u64,
}

/// The remote's manifest with the version the compare-and-swap expects.
#[derive(Clone, Debug)]
pub(crate) struct ManifestVersion {
    /// The manifest, `None` if the remote is empty.
    pub manifest: Option<Manifest>,
    /// Its object version (`None` if absent: the swap must then create it).
    pub version: Option<UpdateVersion>,
    /// Its bytes as read (the compare half of the swap on a local directory).
    pub bytes: Option<Bytes>,
}

/// A connection to a remote store: an object store and the prefix the store lives under.
pub struct Remote {
    url: String,
    store: Arc<dyn ObjectStore>,
    prefix: Path,
    runtime: tokio::runtime::Runtime,
    round_trips: AtomicU64,
    requests: AtomicU64,
    bytes_in: AtomicU64,
    bytes_out: AtomicU64,
    /// For `file://` remotes, the directory: `object_store` offers no compare-and-swap on local
    /// files, so the manifest swap is done here under a lock.
    local_dir: Option<std::path::PathBuf>,
    /// Chunk-file indexes already read (files are immutable, so they never go stale).
    indexes: Mutex<HashMap<u64, Arc<Vec<IndexEntry>>>>,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote").field("url", &self.url).finish()
    }
}

impl Remote {
    /// Connects to the remote at `url` with credentials from the environment.
    pub fn open(url: &str) -> Result<Remote, RemoteError> {
        Remote::open_with(url, &[])
    }

    /// Connects to the remote at `url`; `options` (object_store configuration keys such as
    /// `aws_endpoint`, `aws_access_key_id`, `aws_allow_http`) override the environment.
    pub fn open_with(url: &str, options: &[(String, String)]) -> Result<Remote, RemoteError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| RemoteError::Io {
                context: "starting the I/O runtime".into(),
                source: e,
            })?;
        // Builders for cloud stores may start background tasks: build inside the runtime.
        let (store, prefix) = {
            let _guard = runtime.enter();
            location::open(url, options)?
        };
        let local_dir = url::Url::parse(url)
            .ok()
            .filter(|u| u.scheme() == "file")
            .and_then(|u| u.to_file_path().ok());
        Ok(Remote {
            local_dir,
            url: url.to_string(),
            store,
            prefix,
            runtime,
            round_trips: AtomicU64::new(0),
            requests: AtomicU64::new(0),
            bytes_in: AtomicU64::new(0),
            bytes_out: AtomicU64::new(0),
            indexes: Mutex::new(HashMap::new()),
        })
    }

    /// The URL this remote was opened with.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Traffic so far.
    pub fn stats(&self) -> RemoteStats {
        RemoteStats {
            round_trips: self.round_trips.load(Ordering::Relaxed),
            requests: self.requests.load(Ordering::Relaxed),
            bytes_in: self.bytes_in.load(Ordering::Relaxed),
            bytes_out: self.bytes_out.load(Ordering::Relaxed),
        }
    }

    /// The object path of `name` under the prefix.
    pub(crate) fn path(&self, name: &str) -> Path {
        self.prefix.clone().join(name)
    }

    /// The object store itself and the prefix (benchmarks compare against plain uploads, tests
    /// damage objects). Drive requests on it with [`Remote::run`]: its connections belong to
    /// this remote's runtime.
    pub fn object_store(&self) -> (&Arc<dyn ObjectStore>, &Path) {
        (&self.store, &self.prefix)
    }

    /// Runs `f` on this remote's runtime and waits for it (counted as one round trip).
    pub fn run<T>(&self, f: impl std::future::Future<Output = T>) -> T {
        self.wait(1, f)
    }

    /// Runs one batch of requests and waits for it: one round trip.
    pub(crate) fn wait<T>(&self, requests: u64, f: impl std::future::Future<Output = T>) -> T {
        self.round_trips.fetch_add(1, Ordering::Relaxed);
        self.requests.fetch_add(requests, Ordering::Relaxed);
        self.runtime.block_on(f)
    }

    fn count_in(&self, n: usize) {
        self.bytes_in.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// Reads the remote's manifest and its version (one round trip).
    pub(crate) fn read_manifest(&self) -> Result<ManifestVersion, RemoteError> {
        let path = self.path(MANIFEST);
        let got = self.wait(1, async {
            let r = self.store.get(&path).await?;
            let version = UpdateVersion {
                e_tag: r.meta.e_tag.clone(),
                version: r.meta.version.clone(),
            };
            Ok::<_, object_store::Error>((r.bytes().await?, version))
        });
        match got {
            Ok((bytes, version)) => {
                self.count_in(bytes.len());
                let manifest = Manifest::decode(&bytes).map_err(|e| match e {
                    prollystore::StoreError::Corrupted { offset, reason, .. } => {
                        prollystore::StoreError::Corrupted {
                            file: path.to_string(),
                            offset,
                            reason,
                        }
                    }
                    other => other,
                })?;
                Ok(ManifestVersion {
                    manifest: Some(manifest),
                    version: Some(version),
                    bytes: Some(bytes),
                })
            }
            Err(object_store::Error::NotFound { .. }) => Ok(ManifestVersion {
                manifest: None,
                version: None,
                bytes: None,
            }),
            Err(e) => Err(RemoteError::object("reading", path.as_ref(), e)),
        }
    }

    /// Replaces the manifest read as `expected` by `manifest` if nobody changed it since
    /// (compare-and-swap on the object's ETag/version; creation if it was absent).
    pub(crate) fn swap_manifest(
        &self,
        expected: &ManifestVersion,
        manifest: &Manifest,
    ) -> Result<(), RemoteError> {
        let path = self.path(MANIFEST);
        let bytes = manifest.encode();
        if let Some(dir) = &self.local_dir {
            self.round_trips.fetch_add(1, Ordering::Relaxed);
            return swap_local(dir, expected.bytes.as_deref(), &bytes).map_err(|e| match e {
                RemoteError::Conflict { reason, .. } => RemoteError::Conflict {
                    remote: self.url.clone(),
                    reason,
                },
                other => other,
            });
        }
        let mode = match &expected.version {
            Some(v) => PutMode::Update(v.clone()),
            None => PutMode::Create,
        };
        self.bytes_out
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        let put = self.wait(
            1,
            self.store
                .put_opts(&path, PutPayload::from(bytes), PutOptions::from(mode)),
        );
        match put {
            Ok(_) => Ok(()),
            Err(object_store::Error::Precondition { .. })
            | Err(object_store::Error::AlreadyExists { .. }) => Err(RemoteError::Conflict {
                remote: self.url.clone(),
                reason: "its manifest changed since it was read (another push won)".into(),
            }),
            Err(e) => Err(RemoteError::object("writing", path.as_ref(), e)),
        }
    }

    /// The indexes of `files`, read with range reads of each file's header and tail, all in
    /// parallel (one round trip for those not read before), and validated against the records.
    pub(crate) fn indexes(
        &self,
        profile: HashProfile,
        files: &[FileRecord],
    ) -> Result<Vec<Arc<Vec<IndexEntry>>>, RemoteError> {
        let known = self.indexes.lock().expect("index cache poisoned").clone();
        let wanted: Vec<FileRecord> = files
            .iter()
            .filter(|f| !known.contains_key(&f.seq))
            .copied()
            .collect();
        if !wanted.is_empty() {
            let fetched: Vec<(u64, Vec<IndexEntry>)> = self.wait(
                wanted.len() as u64,
                stream::iter(wanted.iter().map(|f| self.read_index(profile, *f)))
                    .buffer_unordered(PARALLEL_REQUESTS)
                    .try_collect(),
            )?;
            let mut cache = self.indexes.lock().expect("index cache poisoned");
            for (seq, entries) in fetched {
                cache.insert(seq, Arc::new(entries));
            }
        }
        let cache = self.indexes.lock().expect("index cache poisoned");
        Ok(files
            .iter()
            .map(|f| cache.get(&f.seq).cloned().unwrap_or_default())
            .collect())
    }

    async fn read_index(
        &self,
        profile: HashProfile,
        record: FileRecord,
    ) -> Result<(u64, Vec<IndexEntry>), RemoteError> {
        let name = file_name(record.seq);
        let path = self.path(&name);
        let tail = tail_len(record.chunk_count)
            .filter(|&t| t <= record.file_len.saturating_sub(HEADER_LEN))
            .ok_or_else(|| {
                RemoteError::Store(prollystore::StoreError::Corrupted {
                    file: path.to_string(),
                    offset: 0,
                    reason: "the manifest's chunk count does not fit the file length".into(),
                })
            })?;
        let ranges = [0..HEADER_LEN, record.file_len - tail..record.file_len];
        let parts = self
            .store
            .get_ranges(&path, &ranges)
            .await
            .map_err(|e| RemoteError::object("reading the index of", path.as_ref(), e))?;
        self.count_in(parts.iter().map(Bytes::len).sum());
        let entries = parse_tail(path.as_ref(), &record, profile, &parts[0], &parts[1])?;
        Ok((record.seq, entries))
    }

    /// Reads byte ranges of object `name` under the prefix (in parallel, a single round trip
    /// when awaited alone; drive it with [`Remote::run`]). A short read is an error naming the
    /// object and offset.
    pub async fn read_ranges(
        &self,
        name: &str,
        ranges: &[Range<u64>],
    ) -> Result<Vec<Bytes>, RemoteError> {
        let path = self.path(name);
        let parts = self
            .store
            .get_ranges(&path, ranges)
            .await
            .map_err(|e| RemoteError::object("reading", path.as_ref(), e))?;
        for (p, r) in parts.iter().zip(ranges) {
            if p.len() as u64 != r.end - r.start {
                return Err(RemoteError::Store(prollystore::StoreError::Corrupted {
                    file: path.to_string(),
                    offset: r.start,
                    reason: format!(
                        "range read returned {} of {} bytes",
                        p.len(),
                        r.end - r.start
                    ),
                }));
            }
        }
        self.count_in(parts.iter().map(Bytes::len).sum());
        Ok(parts)
    }

    /// The length of object `name` and its age (since its last write, by the remote's clock
    /// against this machine's), or `None` if it is absent.
    pub async fn size_of(
        &self,
        name: &str,
    ) -> Result<Option<(u64, std::time::Duration)>, RemoteError> {
        let path = self.path(name);
        match self.store.head(&path).await {
            Ok(meta) => Ok(Some((meta.size, age(&meta)))),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(RemoteError::object("checking", path.as_ref(), e)),
        }
    }

    /// The whole of object `name` under the prefix, or `None` if it is absent (drive it with
    /// [`Remote::run`]).
    pub async fn read_object(&self, name: &str) -> Result<Option<Bytes>, RemoteError> {
        let path = self.path(name);
        let got = async { self.store.get(&path).await?.bytes().await }.await;
        match got {
            Ok(bytes) => {
                self.count_in(bytes.len());
                Ok(Some(bytes))
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(RemoteError::object("reading", path.as_ref(), e)),
        }
    }

    /// Uploads the local file `file` as object `name` (multipart with parallel parts when big).
    pub(crate) async fn upload(
        &self,
        name: &str,
        file: &std::path::Path,
    ) -> Result<(), RemoteError> {
        let path = self.path(name);
        let bytes = std::fs::read(file).map_err(|e| RemoteError::Io {
            context: format!("reading {}", file.display()),
            source: e,
        })?;
        self.bytes_out
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        self.requests
            .fetch_add(1 + (bytes.len() / PART_LEN) as u64, Ordering::Relaxed);
        put_bytes(&*self.store, &path, Bytes::from(bytes))
            .await
            .map_err(|e| RemoteError::object("uploading", path.as_ref(), e))
    }
}

/// How long ago an object was last written (zero if its time is in the future).
pub(crate) fn age(meta: &object_store::ObjectMeta) -> std::time::Duration {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis() as i64;
    let ms = now.saturating_sub(meta.last_modified.timestamp_millis());
    std::time::Duration::from_millis(ms.max(0) as u64)
}

/// The manifest swap on a local directory: under an exclusive lock on `LOCK`, checks that the
/// manifest still holds `expected` (absent if `None`), then replaces it atomically (temporary
/// file, fsync, rename, directory fsync).
fn swap_local(
    dir: &std::path::Path,
    expected: Option<&[u8]>,
    new: &[u8],
) -> Result<(), RemoteError> {
    let io = |what: &str| {
        let what = format!("{what} in {}", dir.display());
        move |e| RemoteError::Io {
            context: what,
            source: e,
        }
    };
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join("LOCK"))
        .map_err(io("opening LOCK"))?;
    lock.lock().map_err(io("locking LOCK"))?;
    let current = match std::fs::read(dir.join(MANIFEST)) {
        Ok(b) => Some(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io("reading MANIFEST")(e)),
    };
    if current.as_deref() != expected {
        return Err(RemoteError::Conflict {
            remote: dir.display().to_string(),
            reason: "its manifest changed since it was read (another push won)".into(),
        });
    }
    let tmp = dir.join(format!("{MANIFEST}.tmp"));
    let mut f = std::fs::File::create(&tmp).map_err(io("creating MANIFEST.tmp"))?;
    std::io::Write::write_all(&mut f, new)
        .and_then(|()| f.sync_all())
        .map_err(io("writing MANIFEST.tmp"))?;
    std::fs::rename(&tmp, dir.join(MANIFEST)).map_err(io("renaming MANIFEST.tmp"))?;
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io("syncing the directory"))?;
    Ok(())
}

/// Uploads `bytes` to `path` with one PUT, or a multipart upload with parallel parts when they
/// are big (as plain uploads with `object_store` do; the benchmarks compare against this).
pub async fn put_bytes(
    store: &dyn ObjectStore,
    path: &Path,
    bytes: Bytes,
) -> Result<(), object_store::Error> {
    if bytes.len() <= PART_LEN {
        store.put(path, PutPayload::from(bytes)).await?;
        return Ok(());
    }
    let upload = store.put_multipart(path).await?;
    let mut w = WriteMultipart::new_with_chunk_size(upload, PART_LEN);
    for piece in bytes.chunks(PART_LEN) {
        w.wait_for_capacity(PARALLEL_REQUESTS).await?;
        w.write(piece);
    }
    w.finish().await?;
    Ok(())
}

/// Ranges closer than this are read as one (the gap is cheaper than another request).
const COALESCE_GAP: u64 = 64 << 10;
/// Largest coalesced read.
const COALESCE_MAX: u64 = 8 << 20;

/// A chunk to fetch: the object holding it and where.
#[derive(Clone, Debug)]
pub(crate) struct ChunkAt {
    /// Object name (under the prefix).
    pub object: Arc<str>,
    /// Where the chunk lies in it.
    pub entry: IndexEntry,
}

/// One range read covering neighbouring chunks of one object.
#[derive(Debug)]
pub(crate) struct CoalescedRead {
    /// Object name (under the prefix).
    pub object: Arc<str>,
    /// The bytes read.
    pub range: Range<u64>,
    /// The chunks inside, by offset.
    pub inside: Vec<IndexEntry>,
}

impl CoalescedRead {
    /// The bytes of `entry` (one of `inside`) within `bytes`, this read's result.
    pub(crate) fn chunk<'b>(&self, bytes: &'b [u8], entry: &IndexEntry) -> &'b [u8] {
        let at = (entry.offset - self.range.start) as usize;
        &bytes[at..at + entry.len as usize]
    }

    /// The error for `entry` (one of `inside`) whose bytes hash to `actual`.
    pub(crate) fn corrupt(
        &self,
        remote: &Remote,
        entry: &IndexEntry,
        actual: prollystore::format::Address,
    ) -> RemoteError {
        RemoteError::CorruptChunk {
            object: remote.path(&self.object).to_string(),
            offset: entry.offset,
            address: entry.address,
            reason: format!("hashes to {actual}"),
        }
    }
}

/// Groups `chunks` into as few range reads as fit [`COALESCE_GAP`] and [`COALESCE_MAX`]:
/// neighbouring ranges of one object become one read.
pub(crate) fn coalesce(mut chunks: Vec<ChunkAt>) -> Vec<CoalescedRead> {
    chunks.sort_by(|a, b| (&a.object, a.entry.offset).cmp(&(&b.object, b.entry.offset)));
    let mut reads: Vec<CoalescedRead> = Vec::new();
    for c in chunks {
        let start = c.entry.offset;
        let end = start + u64::from(c.entry.len);
        match reads.last_mut() {
            Some(r)
                if r.object == c.object
                    && start <= r.range.end + COALESCE_GAP
                    && end.max(r.range.end) - r.range.start <= COALESCE_MAX =>
            {
                r.range.end = r.range.end.max(end);
                r.inside.push(c.entry);
            }
            _ => reads.push(CoalescedRead {
                object: c.object.clone(),
                range: start..end,
                inside: vec![c.entry],
            }),
        }
    }
    reads
}

impl Remote {
    /// Performs one coalesced read (a missing object named with the first chunk wanted).
    pub(crate) async fn read_coalesced(&self, read: &CoalescedRead) -> Result<Bytes, RemoteError> {
        let first = read.inside.first().map(|e| e.address);
        let bytes = self
            .read_ranges(&read.object, std::slice::from_ref(&read.range))
            .await
            .map_err(|e| match e {
                RemoteError::MissingObject { object, .. } => RemoteError::MissingObject {
                    object,
                    address: first,
                },
                other => other,
            })?;
        Ok(bytes.into_iter().next().unwrap_or_default())
    }

    /// Fetches `chunks` with as few requests as possible (neighbouring ranges of one object
    /// coalesced, objects and ranges fetched in parallel) and checks each against its address.
    pub(crate) async fn fetch_chunks(
        &self,
        profile: HashProfile,
        chunks: Vec<ChunkAt>,
    ) -> Result<Vec<(prollystore::format::Address, Bytes)>, RemoteError> {
        let reads = coalesce(chunks);
        self.requests
            .fetch_add(reads.len() as u64, Ordering::Relaxed);
        let fetched: Vec<Vec<(prollystore::format::Address, Bytes)>> =
            stream::iter(reads.into_iter().map(|read| async move {
                let bytes = self.read_coalesced(&read).await?;
                let single = read.inside.len() == 1;
                read.inside
                    .iter()
                    .map(|e| {
                        let chunk = read.chunk(&bytes, e);
                        let actual = profile.address_of(chunk);
                        if actual != e.address {
                            return Err(read.corrupt(self, e, actual));
                        }
                        // A chunk of a coalesced read gets its own buffer: a slice would keep
                        // the whole read (and its gaps) alive while any chunk of it is cached.
                        let chunk = if single {
                            bytes.clone()
                        } else {
                            Bytes::copy_from_slice(chunk)
                        };
                        Ok((e.address, chunk))
                    })
                    .collect::<Result<Vec<_>, RemoteError>>()
            }))
            .buffer_unordered(PARALLEL_REQUESTS)
            .try_collect()
            .await?;
        Ok(fetched.into_iter().flatten().collect())
    }
}
