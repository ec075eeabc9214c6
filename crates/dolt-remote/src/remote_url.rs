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
    /// A `file://` remote directory.
    File {
        /// The directory.
        path: std::path::PathBuf,
    },
    /// A Dolt database in an S3-compatible bucket, as Dolt's `s3://BUCKET/PATH` remotes write
    /// it (`manifest`, table files, `NAME.darc` archives under the path): Dolt's URL, whose
    /// query may name the `endpoint`, `region` and `path-style` (Dolt's parameters);
    /// credentials come from the standard AWS environment variables, never the URL.
    Bucket {
        /// The bucket and path as an object-store URL (`s3://BUCKET/PATH`, no query).
        store_url: String,
        /// The query's parameters as object-store options (`aws_endpoint`, `aws_region`,
        /// `aws_virtual_hosted_style_request`, and `aws_allow_http` for an `http://`
        /// endpoint).
        options: Vec<(String, String)>,
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
            "s3" => {
                let bucket = url.host_str().unwrap_or_default();
                if bucket.is_empty() {
                    return Err(bad("expected s3://BUCKET/PATH"));
                }
                if !url.username().is_empty() || url.password().is_some() {
                    return Err(bad(
                        "an s3:// URL must not hold credentials: give them as AWS_ACCESS_KEY_ID \
                         and AWS_SECRET_ACCESS_KEY (or another standard AWS source)",
                    ));
                }
                let mut options = Vec::new();
                for (key, value) in url.query_pairs() {
                    if value.is_empty() {
                        return Err(bad(&format!("the parameter {key:?} has no value")));
                    }
                    match &*key {
                        "endpoint" => {
                            if value.starts_with("http://") {
                                options.push(("aws_allow_http".into(), "true".into()));
                            }
                            options.push(("aws_endpoint".into(), value.to_string()));
                        }
                        "region" => options.push(("aws_region".into(), value.to_string())),
                        "path-style" => {
                            let path_style: bool = value.parse().map_err(|_| {
                                bad(&format!("path-style must be true or false, not {value:?}"))
                            })?;
                            options.push((
                                "aws_virtual_hosted_style_request".into(),
                                (!path_style).to_string(),
                            ));
                        }
                        other => {
                            return Err(bad(&format!(
                                "unknown parameter {other:?} (Dolt's s3:// URLs take endpoint, \
                                 region and path-style)"
                            )))
                        }
                    }
                }
                let path = url.path().trim_matches('/');
                Ok(RemoteUrl::Bucket {
                    store_url: format!("s3://{bucket}/{path}"),
                    options,
                })
            }
            other => Err(bad(&format!(
                "unknown remote scheme {other:?} (this client speaks http://, https://, file:// \
                 and s3://)"
            ))),
        }
    }
}

/// The error of a clone, fetch, pull or push of an `s3://` remote (read in place only).
pub(crate) fn read_in_place_only(url: &str, what: &str) -> RemoteError {
    RemoteError::BadUrl {
        url: url.to_string(),
        reason: format!(
            "s3:// remotes are read in place only (open_remote); {what} from or to one is not \
             supported yet"
        ),
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
        assert_eq!(
            RemoteUrl::parse(
                "s3://bkt/dbs/one?endpoint=http://127.0.0.1:9000&region=us-east-1&path-style=true"
            )
            .unwrap(),
            RemoteUrl::Bucket {
                store_url: "s3://bkt/dbs/one".into(),
                options: vec![
                    ("aws_allow_http".into(), "true".into()),
                    ("aws_endpoint".into(), "http://127.0.0.1:9000".into()),
                    ("aws_region".into(), "us-east-1".into()),
                    ("aws_virtual_hosted_style_request".into(), "false".into()),
                ]
            }
        );
        assert_eq!(
            RemoteUrl::parse("s3://bkt").unwrap(),
            RemoteUrl::Bucket {
                store_url: "s3://bkt/".into(),
                options: vec![]
            }
        );
        for bad in [
            "aws://x/y",
            "http://127.0.0.1:1/",
            "not a url",
            "gs://b/p",
            "s3://key:secret@bkt/p",
            "s3://bkt/p?endpoint=",
            "s3://bkt/p?path-style=maybe",
            "s3://bkt/p?acl=public",
        ] {
            let e = RemoteUrl::parse(bad).unwrap_err().to_string();
            assert!(e.starts_with(bad), "{e}");
        }
    }
}
