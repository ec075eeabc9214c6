//! Remote URLs: which transport and which database.

use crate::error::{RemoteError, Result};

/// A parsed remote URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RemoteUrl {
    /// A `dolt sql-server --remotesapi-port` or DoltHub-style gRPC remote:
    /// `http(s)://HOST[:PORT]/PATH`.
    Grpc {
        /// `http://HOST:PORT` or `https://HOST:PORT`: where the gRPC service listens.
        endpoint: String,
        /// The database path on the server (`db`, or `org/repo`), without slashes around it.
        repo_path: String,
    },
    /// A `file://` remote directory (not supported yet by clone).
    File {
        /// The directory.
        path: std::path::PathBuf,
    },
}

impl RemoteUrl {
    /// Parses `text`; an unknown scheme or a URL without a database path is an error that says
    /// so.
    pub fn parse(text: &str) -> Result<RemoteUrl> {
        let bad = |reason: &str| RemoteError::BadUrl {
            url: text.to_string(),
            reason: reason.to_string(),
        };
        let url = url::Url::parse(text).map_err(|e| bad(&format!("not a URL ({e})")))?;
        match url.scheme() {
            "http" | "https" => {
                let host = url.host_str().ok_or_else(|| bad("the URL names no host"))?;
                let port = url
                    .port_or_known_default()
                    .ok_or_else(|| bad("the URL names no port"))?;
                let repo_path = url.path().trim_matches('/').to_string();
                if repo_path.is_empty() {
                    return Err(bad(
                        "the URL names no database (expected http://HOST:PORT/DATABASE)",
                    ));
                }
                let host = if host.contains(':') {
                    format!("[{host}]")
                } else {
                    host.to_string()
                };
                Ok(RemoteUrl::Grpc {
                    endpoint: format!("{}://{host}:{port}", url.scheme()),
                    repo_path,
                })
            }
            "file" => {
                let path = url
                    .to_file_path()
                    .map_err(|()| bad("not a local file path"))?;
                Ok(RemoteUrl::File { path })
            }
            other => Err(bad(&format!(
                "unknown remote scheme {other:?} (this client speaks http://, https:// and file://)"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RemoteUrl;

    #[test]
    fn parses_what_dolt_takes_and_refuses_the_rest() {
        assert_eq!(
            RemoteUrl::parse("http://127.0.0.1:50051/db").unwrap(),
            RemoteUrl::Grpc {
                endpoint: "http://127.0.0.1:50051".into(),
                repo_path: "db".into()
            }
        );
        assert_eq!(
            RemoteUrl::parse("https://doltremoteapi.dolthub.com/org/repo/").unwrap(),
            RemoteUrl::Grpc {
                endpoint: "https://doltremoteapi.dolthub.com:443".into(),
                repo_path: "org/repo".into()
            }
        );
        for bad in ["aws://x/y", "http://127.0.0.1:1/", "not a url", "gs://b/p"] {
            let e = RemoteUrl::parse(bad).unwrap_err().to_string();
            assert!(e.starts_with(bad), "{e}");
        }
    }
}
