//! The `ChunkStoreService` calls the clone makes, over the generated tonic client: each call
//! names the database as Dolt's own client does (`repo_path`, plus `repo_id` when the path is
//! `org/repo`), and every failure becomes a [`RemoteError`] naming the remote and the call.

use std::collections::{BTreeMap, HashSet};

use prollystore_format::Address;
use tonic::transport::{Channel, Endpoint};
use tonic::Code;

use crate::error::{RemoteError, Result};
use crate::locations::{add_locations, ChunkRange};
use crate::proto::chunk_store_service_client::ChunkStoreServiceClient;
use crate::proto::{
    upload_loc, ChunkTableInfo, ClientRepoFormat, CommitRequest, GetDownloadLocsRequest,
    GetRepoMetadataRequest, GetRepoMetadataResponse, GetUploadLocsRequest, HasChunksRequest,
    RepoId, RootRequest, TableFileDetails,
};

/// Dolt's binary format name (`types.Format_DOLT`), the only one this project reads.
pub const NBF_VERSION: &str = "__DOLT__";
/// Dolt's table-file storage version (`nbs.StorageVersion`).
pub const NBS_VERSION: &str = "5";
/// Largest gRPC message accepted (Dolt's client allows 128 MiB; location batches are far
/// smaller).
const MAX_MESSAGE: usize = 64 << 20;
/// Hashes per download-location request (Dolt's client sends batches of this order).
pub const LOCATION_BATCH: usize = 4096;

/// Who a request to a remote says it comes from: a user and password, sent as Dolt's client
/// sends them (`authorization: Basic …` on every call). A `dolt sql-server` checks them against
/// its SQL users; without credentials it takes a request as `root` with an empty password.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// The user name.
    pub user: String,
    /// The password.
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("user", &self.user)
            .finish_non_exhaustive()
    }
}

/// The environment variable Dolt reads a remote user's password from (`dolt push --user`).
pub const PASSWORD_ENV: &str = "DOLT_REMOTE_PASSWORD";

impl Credentials {
    /// `user` with the password in [`PASSWORD_ENV`], as `dolt --user USER` takes it; an error
    /// naming the variable when it is not set (an empty value is an empty password).
    pub fn from_env(user: &str) -> Result<Credentials> {
        match std::env::var(PASSWORD_ENV) {
            Ok(password) => Ok(Credentials {
                user: user.to_string(),
                password,
            }),
            Err(_) => Err(RemoteError::BadUrl {
                url: format!("--user {user}"),
                reason: format!("set {PASSWORD_ENV} to the user's password (empty for none)"),
            }),
        }
    }

    /// The `authorization` header value.
    fn header(&self) -> String {
        use base64::Engine as _;
        let pair = format!("{}:{}", self.user, self.password);
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(pair)
        )
    }
}

/// Adds the credentials' header to every call.
#[derive(Clone)]
struct Auth(Option<tonic::metadata::MetadataValue<tonic::metadata::Ascii>>);

impl tonic::service::Interceptor for Auth {
    fn call(
        &mut self,
        mut request: tonic::Request<()>,
    ) -> std::result::Result<tonic::Request<()>, tonic::Status> {
        if let Some(value) = &self.0 {
            request
                .metadata_mut()
                .insert("authorization", value.clone());
        }
        Ok(request)
    }
}

type Service = tonic::service::interceptor::InterceptedService<Channel, Auth>;

/// A connected client for one database on one remote.
#[derive(Clone)]
pub struct RemoteClient {
    client: ChunkStoreServiceClient<Service>,
    url: String,
    repo_path: String,
    repo_id: Option<RepoId>,
    /// The user the calls name, for errors (`root` when no credentials were given).
    user: String,
}

impl std::fmt::Debug for RemoteClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteClient")
            .field("url", &self.url)
            .field("repo_path", &self.repo_path)
            .field("user", &self.user)
            .finish_non_exhaustive()
    }
}

impl RemoteClient {
    /// Connects to `endpoint` (`http://HOST:PORT`) for database `repo_path`, every call sent
    /// with `credentials` when given; `url` is the remote's URL as the user gave it, for
    /// errors.
    pub async fn connect(
        url: &str,
        endpoint: &str,
        repo_path: &str,
        credentials: Option<&Credentials>,
    ) -> Result<RemoteClient> {
        let not_remote = |reason: String| RemoteError::NotARemote {
            url: url.to_string(),
            reason,
        };
        let channel = Endpoint::from_shared(endpoint.to_string())
            .map_err(|e| not_remote(format!("bad endpoint {endpoint}: {e}")))?
            .connect_timeout(std::time::Duration::from_secs(10))
            .connect()
            .await
            .map_err(|e| {
                not_remote(format!("cannot connect to {endpoint}: {}", source_text(&e)))
            })?;
        let header = match credentials {
            Some(c) => Some(c.header().parse().map_err(|_| RemoteError::BadUrl {
                url: url.to_string(),
                reason: format!(
                    "user {:?}: the name or password cannot be sent in a header",
                    c.user
                ),
            })?),
            None => None,
        };
        let client = ChunkStoreServiceClient::with_interceptor(channel, Auth(header))
            .max_decoding_message_size(MAX_MESSAGE)
            .max_encoding_message_size(MAX_MESSAGE);
        let tokens: Vec<&str> = repo_path.split('/').collect();
        let repo_id = match tokens.as_slice() {
            [org, name] => Some(RepoId {
                org: org.to_string(),
                repo_name: name.to_string(),
            }),
            _ => None,
        };
        Ok(RemoteClient {
            client,
            url: url.to_string(),
            repo_path: repo_path.to_string(),
            repo_id,
            user: credentials.map_or_else(|| "root".to_string(), |c| c.user.clone()),
        })
    }

    /// The remote's URL as given.
    pub fn url(&self) -> &str {
        &self.url
    }

    fn status_error(&self, call: &str, status: tonic::Status) -> RemoteError {
        let code = status.code();
        let reason = if status.message().is_empty() {
            format!("{code:?}")
        } else {
            format!("{code:?}: {}", status.message())
        };
        let url = self.url.clone();
        if matches!(code, Code::Unauthenticated | Code::PermissionDenied) {
            return RemoteError::Credentials {
                url,
                user: self.user.clone(),
                reason: format!("{call}: {reason}"),
            };
        }
        if code == Code::NotFound || status.message().contains("database not found") {
            // Dolt's sql-server says "database not found: NAME" with code Unknown.
            return RemoteError::NoSuchDatabase {
                url,
                reason: status.message().to_string(),
            };
        }
        // A connection closed before an answer (tonic's "transport error") may be a server
        // that speaks something else and hangs up, or a cut: the two look the same here.
        let transport = source_text(&status).contains("transport error");
        match code {
            // The first call: whatever answered (an HTTP/1 server, another gRPC service) did
            // not answer as Dolt's service does.
            Code::Unimplemented
            | Code::Unknown
            | Code::Internal
            | Code::Cancelled
            | Code::Unavailable
                if call == "GetRepoMetadata" =>
            {
                let what = if transport {
                    "not a Dolt remote, or the connection was cut"
                } else {
                    "not a Dolt remote"
                };
                RemoteError::NotARemote {
                    url,
                    reason: format!("{what} ({call} failed: {reason})"),
                }
            }
            _ => RemoteError::Call {
                url,
                call: call.to_string(),
                reason,
            },
        }
    }

    /// `GetRepoMetadata`: the database's formats. A database in another binary format than
    /// Dolt's current one is refused.
    pub async fn metadata(&mut self) -> Result<GetRepoMetadataResponse> {
        let request = GetRepoMetadataRequest {
            repo_id: self.repo_id.clone(),
            client_repo_format: Some(ClientRepoFormat {
                nbf_version: NBF_VERSION.into(),
                nbs_version: NBS_VERSION.into(),
            }),
            repo_token: String::new(),
            repo_path: self.repo_path.clone(),
        };
        let response = self
            .client
            .get_repo_metadata(request)
            .await
            .map_err(|s| self.status_error("GetRepoMetadata", s))?
            .into_inner();
        if response.nbf_version != NBF_VERSION {
            return Err(RemoteError::BadResponse {
                url: self.url.clone(),
                what: "GetRepoMetadata".into(),
                reason: format!(
                    "the database is in format {:?}; only {NBF_VERSION} is read",
                    response.nbf_version
                ),
            });
        }
        Ok(response)
    }

    /// `Root`: the address of the remote's store root (zero for an empty database).
    pub async fn root(&mut self) -> Result<Address> {
        let request = RootRequest {
            repo_id: self.repo_id.clone(),
            repo_token: String::new(),
            repo_path: self.repo_path.clone(),
        };
        let response = self
            .client
            .root(request)
            .await
            .map_err(|s| self.status_error("Root", s))?
            .into_inner();
        Address::from_slice(&response.root_hash).ok_or_else(|| RemoteError::BadResponse {
            url: self.url.clone(),
            what: "Root".into(),
            reason: format!("a root hash of {} bytes, not 20", response.root_hash.len()),
        })
    }

    /// `HasChunks`: which of `addresses` the remote lacks.
    pub async fn absent(&mut self, addresses: &[Address]) -> Result<Vec<Address>> {
        let request = HasChunksRequest {
            repo_id: self.repo_id.clone(),
            hashes: addresses.iter().map(|a| a.0.to_vec()).collect(),
            repo_token: String::new(),
            repo_path: self.repo_path.clone(),
        };
        let response = self
            .client
            .has_chunks(request)
            .await
            .map_err(|s| self.status_error("HasChunks", s))?
            .into_inner();
        response
            .absent
            .iter()
            .map(|&i| {
                usize::try_from(i)
                    .ok()
                    .and_then(|i| addresses.get(i))
                    .copied()
                    .ok_or_else(|| RemoteError::BadResponse {
                        url: self.url.clone(),
                        what: "HasChunks".into(),
                        reason: format!("index {i} of {} hashes asked", addresses.len()),
                    })
            })
            .collect()
    }

    /// Uploads a table file as Dolt's client does: `GetUploadLocations` for its details (name,
    /// length, MD5, chunk count, split offset), then an HTTP `PUT` of its bytes to the URL
    /// handed out (with `Content-MD5`). The remote's root does not move ([`RemoteClient::commit`]
    /// does that).
    pub async fn upload_table_file(
        &mut self,
        http: &reqwest::Client,
        table: &prollystore_dolt::write::push_target::TableFile,
    ) -> Result<()> {
        use base64::Engine as _;
        use md5::Digest as _;
        let md5 = md5::Md5::digest(&table.data).to_vec();
        let request = GetUploadLocsRequest {
            repo_id: self.repo_id.clone(),
            table_file_details: vec![TableFileDetails {
                id: table.name.0.to_vec(),
                content_length: table.data.len() as u64,
                content_hash: md5.clone(),
                num_chunks: u64::from(table.chunk_count),
                suffix: String::new(),
                split_offset: table.split_offset,
            }],
            repo_token: String::new(),
            repo_path: self.repo_path.clone(),
            ..Default::default()
        };
        let response = self
            .client
            .get_upload_locations(request)
            .await
            .map_err(|s| self.status_error("GetUploadLocations", s))?
            .into_inner();
        let bad = |reason: String| RemoteError::BadResponse {
            url: self.url.clone(),
            what: "GetUploadLocations".into(),
            reason,
        };
        let [location] = response.locs.as_slice() else {
            return Err(bad(format!(
                "{} locations for one file",
                response.locs.len()
            )));
        };
        let Some(upload_loc::Location::HttpPost(post)) = &location.location else {
            return Err(bad("a location that is not an HTTP upload".into()));
        };
        let call = format!("PUT table file {}", table.file_name());
        let fail = |reason: String| RemoteError::Call {
            url: self.url.clone(),
            call: call.clone(),
            reason,
        };
        let response = http
            .put(&post.url)
            .header("Content-Length", table.data.len())
            .header(
                "Content-MD5",
                base64::engine::general_purpose::STANDARD.encode(&md5),
            )
            .body(table.data.clone())
            .send()
            .await
            .map_err(|e| fail(source_text(&e.without_url())))?;
        let status = response.status();
        if !status.is_success() {
            let body = response.text().await.unwrap_or_default();
            return Err(fail(format!("HTTP {status}: {}", body.trim())));
        }
        Ok(())
    }

    /// `Commit`: adds `tables` (name, chunk count) to the remote's manifest and moves its root
    /// from `last` to `current` if it still is `last` (Dolt's compare-and-set). `Ok(false)`:
    /// the root had moved, nothing changed.
    pub async fn commit(
        &mut self,
        tables: &[(Address, u32)],
        last: Address,
        current: Address,
    ) -> Result<bool> {
        let request = CommitRequest {
            repo_id: self.repo_id.clone(),
            current: current.0.to_vec(),
            last: last.0.to_vec(),
            chunk_table_info: tables
                .iter()
                .map(|(name, count)| ChunkTableInfo {
                    hash: name.0.to_vec(),
                    chunk_count: *count,
                })
                .collect(),
            client_repo_format: Some(ClientRepoFormat {
                nbf_version: NBF_VERSION.into(),
                nbs_version: NBS_VERSION.into(),
            }),
            repo_path: self.repo_path.clone(),
        };
        Ok(self
            .client
            .commit(request)
            .await
            .map_err(|s| self.status_error("Commit", s))?
            .into_inner()
            .success)
    }

    /// `StreamDownloadLocations` for `addresses` (in batches of [`LOCATION_BATCH`] on one
    /// stream): file URL → the chunks' ranges, every location checked
    /// ([`add_locations`]). A chunk the remote does not locate is [`RemoteError::MissingChunk`].
    pub async fn locations(
        &mut self,
        addresses: &[Address],
    ) -> Result<BTreeMap<String, Vec<ChunkRange>>> {
        let requests: Vec<GetDownloadLocsRequest> = addresses
            .chunks(LOCATION_BATCH)
            .map(|batch| GetDownloadLocsRequest {
                repo_id: self.repo_id.clone(),
                chunk_hashes: batch.iter().map(|a| a.0.to_vec()).collect(),
                repo_token: String::new(),
                repo_path: self.repo_path.clone(),
                client_capabilities: Vec::new(),
            })
            .collect();
        let expected = requests.len();
        let mut stream = self
            .client
            .stream_download_locations(futures::stream::iter(requests))
            .await
            .map_err(|s| self.status_error("StreamDownloadLocations", s))?
            .into_inner();
        let requested: HashSet<Address> = addresses.iter().copied().collect();
        let mut found = HashSet::with_capacity(addresses.len());
        let mut plan = BTreeMap::new();
        let mut responses = 0;
        while let Some(response) = stream
            .message()
            .await
            .map_err(|s| self.status_error("StreamDownloadLocations", s))?
        {
            responses += 1;
            add_locations(&response, &requested, &mut found, &mut plan).map_err(|reason| {
                RemoteError::BadResponse {
                    url: self.url.clone(),
                    what: "StreamDownloadLocations".into(),
                    reason,
                }
            })?;
        }
        if responses != expected {
            return Err(RemoteError::BadResponse {
                url: self.url.clone(),
                what: "StreamDownloadLocations".into(),
                reason: format!("{responses} responses to {expected} requests"),
            });
        }
        if let Some(missing) = addresses.iter().find(|a| !found.contains(a)) {
            return Err(RemoteError::MissingChunk {
                url: self.url.clone(),
                chunk: *missing,
            });
        }
        Ok(plan)
    }
}

/// An error and its sources, on one line.
pub(crate) fn source_text(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut next = e.source();
    while let Some(s) = next {
        text.push_str(": ");
        text.push_str(&s.to_string());
        next = s.source();
    }
    text
}
