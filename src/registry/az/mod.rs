//! An Azure Blob Storage container as a registry, `az://ACCOUNT/CONTAINER/PREFIX`: the storage
//! account, the container and the key prefix, all in the location (the Azure CLI names them
//! with `--account-name` and `--container-name`; `az://` with the account first says the same in
//! one address). Below the prefix lies a static registry's layout (`index/esys/a2c.json`, its
//! signature, `bundles/`), so signed indexes, mirrors, vendor and offline installs work as for
//! any other registry.
//!
//! Every request is signed by `object_store` with the credentials of the user's environment
//! (`AZURE_*`: shared key, SAS, service principal, workload identity, a bearer token; else the
//! managed identity) — never anything a clone says: a marker may name `az://…`, but the endpoint
//! override (`AZURE_STORAGE_ENDPOINT`) and the credentials come from the environment only, and
//! credentials named for one storage account (`AZURE_STORAGE_ACCOUNT_NAME`) are never used for
//! another. The requests go through a2c's own HTTP client, which follows no redirect. Bundles
//! are fetched through a2c's download path from a URL signed for that one blob (a service SAS).
//! `a2c pack` writes create-only (`If-None-Match: *`) and updates the index by a
//! compare-and-swap on its ETag (`If-Match`).

use std::sync::Arc;

use super::kind::Kind;

mod credentials;
mod location;

pub use location::AzLocation;

/// The Azure Blob Storage registry kind, as `registry::KINDS` registers it.
pub const KIND: Kind = Kind {
    environment: &["AZURE_"],
    ..Kind::new(&["az"], "az://ACCOUNT/CONTAINER/PREFIX", |url| {
        Ok(Arc::new(AzLocation::from_url(url)?))
    })
};
