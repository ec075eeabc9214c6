//! Dolt databases in an S3-compatible bucket (`s3://BUCKET/PATH`), read in place.
//!
//! The layout is what Dolt writes to an `s3://` remote (its blobstore-backed store), and it
//! is the layout of a `file://` remote directory too, so a directory `dolt push` wrote and
//! then copied into a bucket reads the same way:
//!
//! * `PATH/manifest`: the one-line text manifest (storage version, format, lock, root, GC
//!   generation, then `NAME:CHUNK_COUNT` per chunk file);
//! * `PATH/NAME`: a classic table file, or `PATH/NAME.darc`: an archive (the manifest does not
//!   say which; the object that exists is used). Other objects (a `LOCK`, an empty `oldgen/`,
//!   the `NAME.records`/`NAME.tail` pieces a blobstore may leave) are never read.
//!
//! At open the manifest is read, each listed file's size is asked for (`HEAD`), and each
//! file's index is read with range requests (its footer, then the index; an archive's
//! metadata too). Chunks are then located in those indexes and fetched with the same
//! batched, merged range reads, decoding and address checks as an `http://` remote's
//! (`clone::fetch_file`), through `prollystore_remote::Remote`'s object store, so endpoint and
//! credentials are configured exactly as for prollystore's own `s3://` remotes.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::StreamExt;
use prollystore_dolt::chunks::archive::Archive;
use prollystore_dolt::chunks::codec::{Backing, RangeRead};
use prollystore_dolt::chunks::manifest::Manifest;
use prollystore_dolt::chunks::table_file::TableFile;
use prollystore_dolt::error::DoltError;
use prollystore_format::Address;
use prollystore_remote::Remote;

use crate::error::{RemoteError, Result};
use crate::locations::{check_range, ChunkRange};

/// Index files opened at once.
const PARALLEL_OPENS: usize = 8;

/// A bucket's Dolt store: the connection, its root and the index of every chunk file.
pub(crate) struct Bucket {
    pub(crate) remote: Arc<Remote>,
    pub(crate) root: Address,
    files: Vec<(String, Index)>,
}

/// One chunk file's index (the chunk bytes stay in the bucket).
enum Index {
    Table(TableFile),
    Archive(Archive),
}

impl std::fmt::Debug for Bucket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bucket")
            .field("url", &self.remote.url())
            .field("files", &self.files.len())
            .finish()
    }
}

impl Bucket {
    /// Opens the store at `store_url` (`s3://BUCKET/PATH`) with object-store `options`; `url`
    /// (the URL as given) names it in errors. Blocks on the connection's runtime: call it
    /// outside any async runtime.
    pub(crate) fn open(url: &str, store_url: &str, options: &[(String, String)]) -> Result<Bucket> {
        let remote =
            Arc::new(
                Remote::open_with(store_url, options).map_err(|e| RemoteError::BadUrl {
                    url: url.to_string(),
                    reason: e.to_string(),
                })?,
            );
        let not_a_remote = |reason: String| RemoteError::NotARemote {
            url: url.to_string(),
            reason,
        };
        let bytes = remote
            .run(remote.read_object("manifest"))
            .map_err(|e| not_a_remote(e.to_string()))?
            .ok_or_else(|| {
                not_a_remote(format!(
                    "no Dolt database there: the object {} is missing",
                    object_url(store_url, "manifest")
                ))
            })?;
        let manifest = Manifest::parse(&bytes, &object_url(store_url, "manifest"))
            .map_err(|e| not_a_remote(e.to_string()))?;
        if manifest.specs.iter().any(|s| s.is_journal()) {
            return Err(not_a_remote(
                "its manifest lists a chunk journal: that is a database's own store, not a \
                 remote (push to the bucket with `dolt push`, or copy a file:// remote there)"
                    .into(),
            ));
        }
        if manifest.root.is_zero() {
            return Err(RemoteError::NoSuchDatabase {
                url: url.to_string(),
                reason: "the remote holds no Dolt data (its root is empty)".into(),
            });
        }
        // Which object each listed file is, and its size: one HEAD of each candidate.
        let names: Vec<String> = manifest.specs.iter().map(|s| s.name.clone()).collect();
        let sizes: Vec<Result<(String, u64, bool)>> = remote.run(
            futures::stream::iter(names.iter().map(|name| {
                let remote = &remote;
                async move {
                    let darc = format!("{name}.darc");
                    let (table, archive) =
                        futures::join!(remote.size_of(name), remote.size_of(&darc));
                    let fail = |e: prollystore_remote::RemoteError| RemoteError::Call {
                        url: url.to_string(),
                        call: format!("HEAD {name}"),
                        reason: e.to_string(),
                    };
                    match (table.map_err(fail)?, archive.map_err(fail)?) {
                        (Some((len, _)), _) => Ok((name.clone(), len, false)),
                        (None, Some((len, _))) => Ok((darc, len, true)),
                        (None, None) => Err(RemoteError::BadResponse {
                            url: url.to_string(),
                            what: format!("chunk file {name}, which the manifest lists"),
                            reason: format!(
                                "neither {} nor {} exists",
                                object_url(store_url, name),
                                object_url(store_url, &darc)
                            ),
                        }),
                    }
                }
            }))
            .buffered(PARALLEL_OPENS)
            .collect(),
        );
        let sizes = sizes.into_iter().collect::<Result<Vec<_>>>()?;
        // The indexes: range reads of each file's tail, several files at once.
        let mut files = Vec::with_capacity(sizes.len());
        for group in sizes.chunks(PARALLEL_OPENS) {
            let opened: Vec<Result<(String, Index)>> = std::thread::scope(|s| {
                let handles: Vec<_> = group
                    .iter()
                    .map(|(name, len, archive)| {
                        let object = Object {
                            remote: remote.clone(),
                            key: name.clone(),
                            url: object_url(store_url, name),
                            len: *len,
                        };
                        s.spawn(move || open_index(url, object, *archive))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join().unwrap_or_else(|_| {
                            Err(RemoteError::Call {
                                url: url.to_string(),
                                call: "reading an index".into(),
                                reason: "the reading thread panicked (a bug)".into(),
                            })
                        })
                    })
                    .collect()
            });
            for f in opened {
                files.push(f?);
            }
        }
        Ok(Bucket {
            remote,
            root: manifest.root,
            files,
        })
    }

    /// Where `addresses` are: per object name, the chunk ranges to read (a chunk held by
    /// several files is read from the first the manifest lists), each range checked as a
    /// gRPC remote's locations are. Addresses no file holds are left out (the caller reports
    /// them missing).
    pub(crate) fn locate(
        &self,
        addresses: &[Address],
    ) -> Result<BTreeMap<String, Vec<ChunkRange>>> {
        let mut plan: BTreeMap<String, Vec<ChunkRange>> = BTreeMap::new();
        for &address in addresses {
            let found = self.files.iter().find_map(|(name, index)| {
                let range = match index {
                    Index::Table(t) => t.record_span(&address).map(|(offset, len)| ChunkRange {
                        address,
                        offset,
                        length: len as u64,
                        dictionary: None,
                    }),
                    Index::Archive(a) => {
                        a.record_spans(&address)
                            .map(|((offset, length), dictionary)| ChunkRange {
                                address,
                                offset,
                                length,
                                dictionary,
                            })
                    }
                }?;
                Some((name, range))
            });
            let Some((name, range)) = found else { continue };
            let checked =
                check_range(range.offset, range.length, &address, "record").and_then(|()| {
                    match range.dictionary {
                        Some((offset, length)) => {
                            check_range(offset, length, &address, "dictionary")
                        }
                        None => Ok(()),
                    }
                });
            checked.map_err(|reason| RemoteError::BadResponse {
                url: self.remote.url().to_string(),
                what: format!("the index of {name}"),
                reason,
            })?;
            plan.entry(name.clone()).or_default().push(range);
        }
        Ok(plan)
    }
}

/// Opens the index of one chunk file.
fn open_index(url: &str, object: Object, archive: bool) -> Result<(String, Index)> {
    let name = object.key.clone();
    let backing = Backing::Ranged(Arc::new(object));
    let index = if archive {
        Archive::open(backing).map(Index::Archive)
    } else {
        TableFile::open(backing).map(Index::Table)
    };
    let index = index.map_err(|e| RemoteError::BadResponse {
        url: url.to_string(),
        what: format!("the index of {name}"),
        reason: e.to_string(),
    })?;
    Ok((name, index))
}

/// The URL of object `name` under the store at `store_url`, for messages.
fn object_url(store_url: &str, name: &str) -> String {
    format!("{}/{name}", store_url.trim_end_matches('/'))
}

/// One object of the bucket, read by range (the indexes' reads).
struct Object {
    remote: Arc<Remote>,
    /// The object's key under the prefix.
    key: String,
    url: String,
    len: u64,
}

impl std::fmt::Debug for Object {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Object").field("url", &self.url).finish()
    }
}

impl RangeRead for Object {
    fn name(&self) -> &str {
        &self.url
    }

    fn size(&self) -> u64 {
        self.len
    }

    fn read_at(&self, offset: u64, len: usize) -> prollystore_dolt::Result<Vec<u8>> {
        self.remote
            .run(read_range(&self.remote, &self.key, offset, len as u64))
            .map_err(|e| DoltError::Io {
                file: self.url.clone(),
                source: std::io::Error::other(e.to_string()),
            })
    }
}

/// Exactly `len` bytes of object `key` at `offset` (a short read is an error).
pub(crate) async fn read_range(
    remote: &Remote,
    key: &str,
    offset: u64,
    len: u64,
) -> std::result::Result<Vec<u8>, prollystore_remote::RemoteError> {
    let range = offset..offset.saturating_add(len);
    let mut got = remote.read_ranges(key, &[range]).await?;
    Ok(got.pop().map(|b| b.to_vec()).unwrap_or_default())
}
