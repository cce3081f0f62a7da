//! `a2c key generate --out FILE` and `a2c sign --registry DIR --key FILE`: minisign-compatible
//! keys and index signatures.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::{GlobalArgs, Outcome, Printer};
use crate::registry::RegistryLocation;

#[derive(Debug, Subcommand)]
pub enum KeyCommand {
    /// Write a new Ed25519 key pair: FILE (secret, 0600) and FILE.pub (minisign public key)
    Generate(GenerateArgs),
}

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  a2c key generate --out ~/.config/a2c/a2c.key")]
pub struct GenerateArgs {
    /// Where to write the secret key (the public key goes to FILE.pub)
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  a2c sign --registry /srv/a2c --key a2c.key --expires-in 30\n  a2c sign --registry oci://ghcr.io/acme/a2c --key a2c.key"
)]
pub struct SignArgs {
    /// The registry whose index to sign: a file registry (a path or file:// URL) or an OCI
    /// registry (oci://HOST/NAMESPACE/REPO: the index is pushed as the `a2c-index` artifact)
    #[arg(long, value_name = "DIR|oci://…")]
    pub registry: String,
    /// The secret key (from `a2c key generate`)
    #[arg(long, value_name = "KEYFILE")]
    pub key: PathBuf,
    /// Give the index an expiry this many days from now (a frozen index is then refused)
    #[arg(long, value_name = "DAYS")]
    pub expires_in: Option<u64>,
}

fn cwd(global: &GlobalArgs) -> anyhow::Result<PathBuf> {
    Ok(match &global.directory {
        Some(d) => crate::util::paths::absolute(d),
        None => std::env::current_dir()?,
    })
}

pub fn key(cmd: &KeyCommand, global: &GlobalArgs, printer: &Printer) -> anyhow::Result<Outcome> {
    let KeyCommand::Generate(args) = cmd;
    let secret_path = cwd(global)?.join(&args.out);
    let public_path = PathBuf::from(format!("{}.pub", secret_path.display()));
    for p in [&secret_path, &public_path] {
        if std::fs::symlink_metadata(p).is_ok() {
            anyhow::bail!("`{}` already exists: a2c never overwrites a key", p.display());
        }
    }
    let (line, public_file, secret_file, id) = crate::registry::signing::generate()?;
    if let Some(dir) = secret_path.parent() {
        fs_err::create_dir_all(dir)?;
    }
    crate::util::contain::write_new(&secret_path, secret_file.as_bytes(), 0o600)?;
    crate::util::contain::write_new(&public_path, public_file.as_bytes(), crate::util::fs::default_mode())?;
    if printer.json {
        /// `key generate --json` (docs/json/key-generate.schema.json).
        #[derive(serde::Serialize)]
        struct Generated<'a> {
            key_id: &'a str,
            public_key: &'a str,
            secret: &'a std::path::Path,
            public: &'a std::path::Path,
        }
        printer.json_doc(&Generated {
            key_id: &id,
            public_key: &line,
            secret: &secret_path,
            public: &public_path,
        });
    } else {
        printer.data(&line);
        printer.status(format!(
            "key {id}: secret `{}` (keep it private), public `{}`; pin the line above in a marker's `trusted_keys:`",
            secret_path.display(),
            public_path.display()
        ));
    }
    Ok(Outcome::Success)
}

pub fn sign(
    args: &SignArgs,
    session: &crate::ops::Session,
    global: &GlobalArgs,
    printer: &Printer,
) -> anyhow::Result<Outcome> {
    let cwd = cwd(global)?;
    let registry = crate::registry::open(
        &RegistryLocation::parse(&args.registry, &cwd, session.plain_http())?,
        &session.network,
    );
    let signed = registry.sign(&cwd.join(&args.key), args.expires_in)?;
    match (signed.rebuilt, printer.json) {
        (_, true) => printer.json_doc(&signed),
        (None, false) => printer.status(format!("signed the index: `{}`", signed.signature)),
        (Some((serial, versions)), false) => printer.status(format!(
            "signed the index of {versions} versions (serial {serial}): `{}`",
            signed.signature
        )),
    }
    Ok(Outcome::Success)
}
