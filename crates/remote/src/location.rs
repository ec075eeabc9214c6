//! Turning a remote URL into an object store and a prefix inside it.
//!
//! `s3://bucket/prefix`, `gs://bucket/prefix`, `az://container/prefix` (and the other forms
//! `object_store` parses), `file:///dir`. Credentials and endpoints come from the usual
//! environment variables (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`,
//! `AWS_ENDPOINT` or `AWS_ENDPOINT_URL`, `AWS_ALLOW_HTTP`, `GOOGLE_*`, `AZURE_*`), overridden by
//! explicit options (keys as `object_store` names them, for example `aws_endpoint`).

use std::sync::Arc;

use object_store::aws::{AmazonS3Builder, S3ConditionalPut};
use object_store::azure::MicrosoftAzureBuilder;
use object_store::gcp::GoogleCloudStorageBuilder;
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreScheme, RetryConfig};
use std::time::Duration;
use url::Url;

use crate::RemoteError;

/// `$builder` with every option whose key it knows applied (unknown keys are ignored: they
/// may be meant for another kind of store).
macro_rules! configured {
    ($builder:expr, $options:expr) => {{
        let mut b = $builder;
        for (k, v) in $options {
            if let Ok(key) = k.to_ascii_lowercase().parse() {
                b = b.with_config(key, v);
            }
        }
        b
    }};
}

/// Opens the object store `url` names; returns it with the prefix the store lives under.
pub(crate) fn open(
    url: &str,
    options: &[(String, String)],
) -> Result<(Arc<dyn ObjectStore>, Path), RemoteError> {
    let bad = |reason: String| RemoteError::BadUrl {
        url: url.to_string(),
        reason,
    };
    let parsed = Url::parse(url).map_err(|e| bad(e.to_string()))?;
    let (scheme, path) = ObjectStoreScheme::parse(&parsed).map_err(|e| bad(e.to_string()))?;
    let built = |e: object_store::Error| bad(e.to_string());
    Ok(match scheme {
        ObjectStoreScheme::Local => {
            // The whole path is the directory; keys live directly inside it.
            let dir = parsed
                .to_file_path()
                .map_err(|()| bad("not a local path".into()))?;
            std::fs::create_dir_all(&dir).map_err(|e| RemoteError::Io {
                context: format!("creating {}", dir.display()),
                source: e,
            })?;
            let fs = LocalFileSystem::new_with_prefix(&dir).map_err(built)?;
            (Arc::new(fs) as Arc<dyn ObjectStore>, Path::default())
        }
        ObjectStoreScheme::AmazonS3 => {
            let mut b = AmazonS3Builder::from_env().with_url(url);
            if std::env::var_os("AWS_ENDPOINT").is_none() {
                if let Ok(endpoint) = std::env::var("AWS_ENDPOINT_URL") {
                    b = b.with_endpoint(endpoint);
                }
            }
            // MinIO, R2 and S3 itself honour If-Match / If-None-Match on PUT: the manifest's
            // compare-and-swap relies on it.
            b = b
                .with_conditional_put(S3ConditionalPut::ETagMatch)
                .with_retry(retry());
            (
                Arc::new(configured!(b, options).build().map_err(built)?) as _,
                path,
            )
        }
        ObjectStoreScheme::GoogleCloudStorage => {
            let b = GoogleCloudStorageBuilder::from_env()
                .with_url(url)
                .with_retry(retry());
            (
                Arc::new(configured!(b, options).build().map_err(built)?) as _,
                path,
            )
        }
        ObjectStoreScheme::MicrosoftAzure => {
            let b = MicrosoftAzureBuilder::from_env()
                .with_url(url)
                .with_retry(retry());
            (
                Arc::new(configured!(b, options).build().map_err(built)?) as _,
                path,
            )
        }
        other => return Err(bad(format!("{other:?} URLs are not supported as remotes"))),
    })
}

/// Retries of failed requests (dropped connections, 5xx): a few, within seconds, so that a dead
/// server turns into an error the caller sees instead of minutes of waiting.
fn retry() -> RetryConfig {
    RetryConfig {
        max_retries: 4,
        retry_timeout: Duration::from_secs(20),
        ..RetryConfig::default()
    }
}
