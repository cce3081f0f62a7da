//! `a2c key generate --out FILE` and `a2c sign --registry DIR --key FILE`: minisign-compatible
//! keys and index signatures.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::{Cx, GlobalArgs, Outcome, Printer};
use crate::registry::RegistryLocation;

#[derive(Debug, Subcommand)]
pub enum KeyCommand {
    /// Write a new Ed25519 key pair in minisign's format: FILE (secret, encrypted with a
    /// password, 0600) and FILE.pub (public key)
    Generate(GenerateArgs),
}

#[derive(Debug, Args)]
#[command(
    after_help = "The password is asked twice on a terminal (not shown), or read from A2C_KEY_PASSWORD;\nsigning asks for it again. The files are minisign's: `minisign -S -s FILE` signs with it.\n\nExamples:\n  a2c key generate --out ~/.config/a2c/a2c.key\n  A2C_KEY_PASSWORD=\"$SECRET\" a2c key generate --out ci.key\n  a2c key generate --out throwaway.key --no-password"
)]
pub struct GenerateArgs {
    /// Where to write the secret key (the public key goes to FILE.pub)
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Do not encrypt the secret key (as `minisign -G -W`): anyone who reads the file can sign
    #[arg(long)]
    pub no_password: bool,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  a2c sign --registry /srv/a2c --key a2c.key --expires-in 30\n  a2c sign --registry oci://ghcr.io/acme/a2c --key a2c.key"
)]
pub struct SignArgs {
    /// The registry whose index to sign: a file registry (a path or file:// URL), an OCI
    /// registry (oci://HOST/NAMESPACE/REPO: the index is pushed as the `a2c-index` artifact) or
    /// an object store (s3://BUCKET/PREFIX, gs://BUCKET/PREFIX, az://ACCOUNT/CONTAINER/PREFIX:
    /// the signature written beside its index);
    /// a package index (pypi+https://…) or a Conan remote (conan+https://…) carries no a2c
    /// signature and refuses
    #[arg(long, value_name = "LOCATION", required_unless_present = "file")]
    pub registry: Option<String>,
    /// Sign this file instead (a release's SHA256SUMS): its signature, in minisign's prehashed
    /// format, is written beside it as FILE.minisig (`minisign -Vm FILE -p KEY.pub` verifies it)
    #[arg(long, value_name = "FILE", conflicts_with_all = ["registry", "expires_in", "no_expiry"])]
    pub file: Option<PathBuf>,
    /// The secret key (from `a2c key generate`)
    #[arg(long, value_name = "KEYFILE")]
    pub key: PathBuf,
    /// Give the index an expiry this many days from now, at least one (a frozen index is then
    /// refused); without it, a file registry's index keeps the expiry it has
    #[arg(long, value_name = "DAYS", value_parser = clap::value_parser!(u64).range(1..))]
    pub expires_in: Option<u64>,
    /// Drop the index's expiry: it never expires
    #[arg(long, conflicts_with = "expires_in")]
    pub no_expiry: bool,
}

pub fn key(cmd: &KeyCommand, global: &GlobalArgs, printer: &Printer) -> anyhow::Result<Outcome> {
    let KeyCommand::Generate(args) = cmd;
    let secret_path = global.start_dir()?.join(&args.out);
    let public_path = PathBuf::from(format!("{}.pub", secret_path.display()));
    for p in [&secret_path, &public_path] {
        if std::fs::symlink_metadata(p).is_ok() {
            anyhow::bail!("`{}` already exists: a2c never overwrites a key", p.display());
        }
    }
    let password = match args.no_password {
        true => None,
        false => Some(new_password(printer)?),
    };
    if password.is_some() {
        printer.status("deriving the key's encryption (scrypt, 1 GiB of memory, as minisign does)…");
    }
    let (line, public_file, secret_file, id) =
        crate::registry::signing::generate(password.as_deref(), crate::registry::signing::KDF_SENSITIVE)?;
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

/// The password of a new key: `A2C_KEY_PASSWORD`, or typed twice on a terminal.
fn new_password(printer: &Printer) -> anyhow::Result<String> {
    if let Some(password) = crate::env::key_password() {
        return Ok(password);
    }
    if !std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        anyhow::bail!(
            "no terminal to ask the new key's password on: set {} (a CI secret), or pass --no-password for a key anyone who reads the file can use",
            crate::env::A2C_KEY_PASSWORD
        );
    }
    let first = crate::util::platform::read_secret_line(&|| printer.status("password for the new key (not shown):"))?;
    let first = first.trim_end_matches(['\r', '\n']);
    if first.is_empty() {
        anyhow::bail!("an empty password: type one, or pass --no-password for an unencrypted key");
    }
    let again = crate::util::platform::read_secret_line(&|| printer.status("the same password again:"))?;
    if again.trim_end_matches(['\r', '\n']) != first {
        anyhow::bail!("the two passwords differ: nothing was written; run `a2c key generate` again");
    }
    Ok(first.to_string())
}

/// Unlocks the secret key at `path` for signing: its password (if it is encrypted) from
/// `A2C_KEY_PASSWORD`, else asked on the terminal. Done before anything is published, so a
/// wrong password changes nothing.
pub fn unlock(path: &std::path::Path, printer: &Printer) -> anyhow::Result<crate::registry::signing::SecretKey> {
    let ask = || {
        if let Some(password) = crate::env::key_password() {
            return Some(password);
        }
        if !std::io::IsTerminal::is_terminal(&std::io::stdin()) {
            return None;
        }
        let prompt = || printer.status(format!("password for the secret key `{}` (not shown):", path.display()));
        let line = crate::util::platform::read_secret_line(&prompt).ok()?;
        Some(line.trim_end_matches(['\r', '\n']).to_string())
    };
    Ok(crate::registry::signing::SecretKey::load(path, ask)?)
}

/// Signs `file` (minisign's prehashed form: the BLAKE2b-512 of its bytes), writing
/// `file.minisig` beside it.
fn sign_file(
    file: &std::path::Path,
    key: &crate::registry::signing::SecretKey,
    printer: &Printer,
) -> anyhow::Result<Outcome> {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let signature = crate::registry::signing::sign_file(key, file, &format!("file:{name}"))
        .map_err(|e| anyhow::anyhow!("cannot sign `{}`: {e}", file.display()))?;
    let path = std::path::PathBuf::from(format!(
        "{}{}",
        file.display(),
        crate::registry::signing::SIGNATURE_SUFFIX
    ));
    crate::util::fs::write_atomic(&path, signature.as_bytes())?;
    if printer.json {
        #[derive(serde::Serialize)]
        struct Signed<'a> {
            signature: &'a std::path::Path,
        }
        printer.json_doc(&Signed { signature: &path });
    } else {
        printer.status(format!(
            "signed `{}` with key {}: `{}`",
            file.display(),
            key.id(),
            path.display()
        ));
    }
    Ok(Outcome::Success)
}

pub fn sign(args: &SignArgs, cx: &Cx) -> anyhow::Result<Outcome> {
    let (session, global, printer) = cx.parts();
    let cwd = global.start_dir()?;
    if let Some(file) = &args.file {
        let key = unlock(&cwd.join(&args.key), printer)?;
        return sign_file(&cwd.join(file), &key, printer);
    }
    let registry = args.registry.as_deref().expect("clap requires --registry or --file");
    let registry = RegistryLocation::parse(registry, &cwd)?.open(&session.network);
    let key = unlock(&cwd.join(&args.key), printer)?;
    let expiry = match (args.expires_in, args.no_expiry) {
        (Some(days), _) => crate::registry::handle::Expiry::InDays(days),
        (None, true) => crate::registry::handle::Expiry::Never,
        (None, false) => crate::registry::handle::Expiry::Keep,
    };
    let signed = registry.sign(&key, expiry)?;
    for w in &signed.warnings {
        printer.warn(w);
    }
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
