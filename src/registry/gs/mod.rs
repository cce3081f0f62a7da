//! A Google Cloud Storage bucket as a registry, `gs://BUCKET/PREFIX` as `gcloud storage` and
//! `gsutil` write it. Below the prefix lies a static registry's layout (`index/esys/a2c.json`,
//! its signature, `bundles/`), so signed indexes, mirrors, vendor and offline installs work as
//! for any other registry.
//!
//! Every request is signed by `object_store` with the credentials of the user's environment:
//! a service account key (`GOOGLE_SERVICE_ACCOUNT`, `GOOGLE_SERVICE_ACCOUNT_KEY`), Application
//! Default Credentials (`GOOGLE_APPLICATION_CREDENTIALS`, else gcloud's own file), else the
//! metadata server — never anything a clone says: a marker may name `gs://…`, but the endpoint
//! override (`GOOGLE_BASE_URL`, `STORAGE_EMULATOR_HOST`; never a key file's own `gcs_base_url`)
//! and the credentials come from the environment only. The requests go through a2c's own HTTP
//! client, which follows no redirect. Bundles are fetched through a2c's download path from a URL
//! signed (V4) for that one object by a service account's key, or, for credentials that hold no
//! key (a person's ADC, the metadata server), from the object's URL with their access token,
//! which the download sends to that origin alone. `a2c pack` writes create-only
//! (`x-goog-if-generation-match: 0`) and updates the index by a compare-and-swap on its
//! generation.

use std::sync::Arc;

use super::kind::Kind;

mod credentials;
mod location;

pub use location::GsLocation;

/// The Google Cloud Storage registry kind, as `registry::KINDS` registers it.
pub const KIND: Kind = Kind {
    environment: &["GOOGLE_", "GCE_METADATA_", "STORAGE_EMULATOR_HOST"],
    ..Kind::new(&["gs"], "gs://BUCKET/PREFIX", |url| {
        Ok(Arc::new(GsLocation::from_url(url)?))
    })
};
