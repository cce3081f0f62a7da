//! An S3 bucket as a registry, `s3://BUCKET/PREFIX` as the AWS CLI writes it. Below the prefix
//! lies a static registry's layout (`index/esys/a2c.json`, its signature, `bundles/`), so
//! signed indexes, mirrors, vendor and offline installs work as for any other registry.
//!
//! Every request is signed (SigV4) by `object_store` with the AWS credential chain of the
//! user's environment and AWS files (`profile`) — never anything a clone says: a marker may
//! name `s3://…`, but the endpoint (`AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`, a profile's
//! `endpoint_url`) and the credentials come from the environment and `~/.aws` only. The requests go through a2c's own HTTP client (its TLS roots, proxies and
//! timeouts), which follows no redirect, so a signature never leaves the endpoint. Bundles are
//! fetched through a2c's download path (retries, progress, the digest check) from a URL
//! presigned for that one object. `a2c pack` writes create-only (`If-None-Match: *`) and
//! updates the index by a compare-and-swap on its ETag (`If-Match`).

use std::sync::Arc;

use super::kind::Kind;

mod credentials;
mod location;
mod profile;

pub use location::S3Location;

/// The S3 registry kind, as `registry::KINDS` registers it.
pub const KIND: Kind = Kind {
    environment: &["AWS_"],
    ..Kind::new(&["s3"], "s3://BUCKET/PREFIX", |url| {
        Ok(Arc::new(S3Location::from_url(url)?))
    })
};
