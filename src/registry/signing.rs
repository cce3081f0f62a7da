//! Signed indexes in minisign's format, so the `minisign` CLI can sign and verify too.
//!
//! - A **public key** is one line of base64: `Ed` + an 8-byte key id + the 32-byte Ed25519
//!   key (minisign's `minisign.pub` second line). It can be pasted into a marker's
//!   `trusted_keys:`.
//! - A **signature** `index/esys/a2c.json.minisig` is minisign's: an untrusted comment, the
//!   signature line (`Ed` legacy, over the index bytes, as a2c writes it; `ED` prehashed, as
//!   the minisign CLI writes it by default), a trusted comment, and the global signature over
//!   the signature and the trusted comment.
//! - A **secret key** is minisign's too, written 0600: encrypted with a password by default
//!   (scrypt with minisign's own limits, a BLAKE2b checksum that tells a wrong password), or
//!   not (`--no-password`, as `minisign -G -W`). a2c signs with keys `minisign -G` made, and the
//!   minisign CLI with keys a2c made; the unencrypted `a2c-secret-key-v1` files of earlier a2c
//!   versions still sign.
//!
//! Verification is `minisign-verify`'s; signing and key generation use `ring` (already the
//! TLS provider's crypto), so no second crypto stack comes in; the key's encryption is the
//! `scrypt` and `blake2` crates (on the same `sha2`).

use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use ring::rand::SecureRandom;
use ring::signature::KeyPair;

/// The signature file beside an index.
pub const SIGNATURE_SUFFIX: &str = ".minisig";
const SECRET_TAG: &str = "a2c-secret-key-v1";

/// Why a key or signature was refused.
#[derive(Debug, thiserror::Error)]
pub enum SignError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error("`{}` is not an a2c secret key (made by `a2c key generate`)", path.display())]
    BadSecretKey { path: PathBuf },
    #[error(
        "`{key}` is not a minisign public key (one line of base64, as `a2c key generate` or `minisign -G` print it)"
    )]
    BadPublicKey { key: String },
    #[error("the index of `{registry}` is not signed, but the workspace pins trusted keys ({keys})")]
    Unsigned { registry: String, keys: String },
    #[error("the signature of `{registry}`'s index is not a minisign signature: {reason}")]
    BadSignatureFile { registry: String, reason: String },
    #[error(
        "the index of `{registry}` is signed by key {key_id}, which the workspace does not trust (trusted: {keys})"
    )]
    UntrustedKey {
        registry: String,
        key_id: String,
        keys: String,
    },
    #[error(
        "the signature of `{registry}`'s index by key {key_id} does not verify: the index or its signature was altered"
    )]
    BadSignature { registry: String, key_id: String },
}

impl SignError {
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            Self::BadSecretKey { .. } => "make one with `a2c key generate`".into(),
            Self::BadPublicKey { .. } => "paste the second line of the `.pub` file `a2c key generate` (or `minisign -G`) wrote".into(),
            Self::Unsigned { .. } => "ask the registry's owner to sign it (`a2c sign --registry DIR --key KEY`); nothing in the index was trusted".into(),
            Self::BadSignatureFile { .. } | Self::BadSignature { .. } => {
                "do not use this registry until its owner re-signs it; nothing in the index was trusted".into()
            }
            Self::UntrustedKey { .. } => "if the registry rotated its key, add the new public key to `trusted_keys:` in the marker (keep the old one until every index is re-signed)".into(),
            Self::Io(e) => return crate::util::contain::refusal(e).map(|r| r.hint()),
        })
    }
}

fn key_id_hex(id: &[u8]) -> String {
    // minisign shows key ids as the 8 bytes read little-endian, in upper-case hex.
    let mut le = [0u8; 8];
    le.copy_from_slice(&id[..8]);
    format!("{:016X}", u64::from_le_bytes(le))
}

/// minisign's secret key file: `Ed`, the key derivation (`Sc`: scrypt; two zero bytes: none),
/// the checksum (`B2`: BLAKE2b-256), a 32-byte salt, the scrypt limits (8 bytes each, little
/// endian), then the key id, the Ed25519 secret key (seed and public key) and the checksum —
/// those 104 bytes XORed with as many bytes of scrypt(password, salt) when encrypted.
const KEY_HEADER: usize = 2 + 2 + 2 + 32 + 8 + 8;
const KEYNUM: usize = 8 + 64 + 32;
const KDF_SCRYPT: &[u8; 2] = b"Sc";
const KDF_NONE: &[u8; 2] = &[0, 0];

/// How hard the password of a new key is to guess: minisign's own limits (libsodium's
/// "sensitive": scrypt with N = 2^20, r = 8, p = 1 — 1 GiB of memory, a few seconds).
pub const KDF_SENSITIVE: KdfLimits = KdfLimits {
    opslimit: 33_554_432,
    memlimit: 1_073_741_824,
};

/// The most memory a2c lets a secret key's scrypt limits ask for when it is unlocked
/// (minisign's own, N = 2^20 and r = 8): a key file that asks for more is refused, not obeyed.
const KDF_MAX_MEMORY: u64 = 1 << 30;
/// The most scrypt work (N × r × p) a key file may ask for: minisign's own (2^20 × 8 × 1), a
/// few seconds. A crafted file asking for 16 passes is refused before any is run.
const KDF_MAX_WORK: u64 = (1 << 20) * 8;

/// The scrypt limits stored in a minisign secret key, as libsodium counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KdfLimits {
    pub opslimit: u64,
    pub memlimit: u64,
}

impl KdfLimits {
    /// scrypt's (log2 N, r, p) for these limits, as libsodium's
    /// `crypto_pwhash_scryptsalsa208sha256` picks them, so that minisign and a2c derive the
    /// same bytes from one file.
    fn params(self) -> (u8, u32, u32) {
        let opslimit = self.opslimit.max(32_768);
        let r: u64 = 8;
        let smallest_log_n = |max_n: u64| (1u8..63).find(|&l| (1u64 << l) > max_n / 2).unwrap_or(63);
        if opslimit < self.memlimit / 32 {
            (smallest_log_n(opslimit / (r * 4)), r as u32, 1)
        } else {
            let log_n = smallest_log_n(self.memlimit / (r * 128));
            let max_rp = ((opslimit / 4) >> log_n).min(0x3fff_ffff);
            (log_n, r as u32, (max_rp / r) as u32)
        }
    }
}

/// Why a secret key could not be unlocked.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error(transparent)]
    Sign(#[from] SignError),
    #[error("`{}` is encrypted and no password was given", path.display())]
    NeedsPassword { path: PathBuf },
    #[error("wrong password for `{}`", path.display())]
    WrongPassword { path: PathBuf },
    #[error("`{}` asks for {mib} MiB of memory and {passes} times minisign's scrypt work to unlock, more than a2c allows ({} MiB, once minisign's work)", path.display(), KDF_MAX_MEMORY >> 20)]
    TooCostly { path: PathBuf, mib: u64, passes: u64 },
    #[error("`{}` holds a secret key but is readable or writable by others (or owned by another user)", path.display())]
    Exposed { path: PathBuf },
}

impl KeyError {
    pub fn hint(&self) -> Option<String> {
        match self {
            Self::Sign(e) => e.hint(),
            Self::NeedsPassword { .. } => Some(format!(
                "type it on a terminal, or set {} (a CI secret)",
                crate::env::A2C_KEY_PASSWORD
            )),
            Self::WrongPassword { .. } => Some("nothing was signed; try again".into()),
            Self::TooCostly { .. } => Some("re-create the key with `a2c key generate` or `minisign -G`".into()),
            Self::Exposed { path } => Some(format!("run `chmod 600 {}`", crate::util::text::shell_quoted(path))),
        }
    }
}

impl crate::util::hint::Hint for KeyError {
    fn hint(&self) -> Option<String> {
        KeyError::hint(self)
    }
}

/// A new key pair, its secret key encrypted with `password` (scrypt with `limits`) or, with
/// `None`, not encrypted (as `minisign -G -W`): (the public key line, the public key file
/// text, the secret key file text, the key id). Both files are minisign's.
pub fn generate(password: Option<&str>, limits: KdfLimits) -> Result<(String, String, String, String), SignError> {
    let rng = ring::rand::SystemRandom::new();
    let no_randomness = |_| std::io::Error::other("no randomness");
    let mut seed = [0u8; 32];
    rng.fill(&mut seed).map_err(no_randomness)?;
    let pair = ring::signature::Ed25519KeyPair::from_seed_unchecked(&seed)
        .map_err(|_| std::io::Error::other("cannot make an Ed25519 key"))?;
    let mut id = [0u8; 8];
    rng.fill(&mut id).map_err(no_randomness)?;
    let mut public = b"Ed".to_vec();
    public.extend_from_slice(&id);
    public.extend_from_slice(pair.public_key().as_ref());
    let line = B64.encode(&public);
    let hex = key_id_hex(&id);
    let public_file = format!("untrusted comment: minisign public key {hex}\n{line}\n");

    let mut keynum = Vec::with_capacity(KEYNUM);
    keynum.extend_from_slice(&id);
    keynum.extend_from_slice(&seed);
    keynum.extend_from_slice(pair.public_key().as_ref());
    let checksum = key_checksum(&id, &keynum[8..72]);
    keynum.extend_from_slice(&checksum);
    let mut salt = [0u8; 32];
    rng.fill(&mut salt).map_err(no_randomness)?;
    let mut file = b"Ed".to_vec();
    let (kdf, comment) = match password {
        Some(_) => (KDF_SCRYPT, "minisign encrypted secret key"),
        None => (KDF_NONE, "minisign secret key (not encrypted)"),
    };
    file.extend_from_slice(kdf);
    file.extend_from_slice(b"B2");
    file.extend_from_slice(&salt);
    file.extend_from_slice(&limits.opslimit.to_le_bytes());
    file.extend_from_slice(&limits.memlimit.to_le_bytes());
    if let Some(password) = password {
        xor_stream(&mut keynum, password, &salt, limits)?;
    }
    file.extend_from_slice(&keynum);
    let secret_file = format!("untrusted comment: {comment} {hex}\n{}\n", B64.encode(&file));
    Ok((line, public_file, secret_file, hex))
}

/// minisign's checksum of a secret key: BLAKE2b-256 of `Ed`, the key id and the secret key.
fn key_checksum(id: &[u8], secret: &[u8]) -> [u8; 32] {
    use blake2::Digest;
    let mut h = blake2::Blake2b256::new();
    h.update(b"Ed");
    h.update(id);
    h.update(secret);
    h.finalize().into()
}

/// XORs `data` with scrypt(password, salt) under `limits` (encrypting and decrypting alike).
fn xor_stream(data: &mut [u8], password: &str, salt: &[u8], limits: KdfLimits) -> Result<(), std::io::Error> {
    let (log_n, r, p) = limits.params();
    let params = scrypt::Params::new(log_n, r, p).map_err(|e| std::io::Error::other(format!("scrypt limits: {e}")))?;
    let mut stream = vec![0u8; data.len()];
    scrypt::scrypt(password.as_bytes(), salt, &params, &mut stream)
        .map_err(|e| std::io::Error::other(format!("scrypt: {e}")))?;
    data.iter_mut().zip(&stream).for_each(|(d, k)| *d ^= k);
    Ok(())
}

/// An unlocked secret key: what signs.
pub struct SecretKey {
    id: [u8; 8],
    pair: ring::signature::Ed25519KeyPair,
}

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SecretKey({})", key_id_hex(&self.id))
    }
}

impl SecretKey {
    /// Reads the secret key at `path`: minisign's (from `a2c key generate` or `minisign -G`),
    /// asking `password` for its password when it is encrypted, or the unencrypted
    /// `a2c-secret-key-v1` of earlier a2c versions.
    pub fn load(path: &Path, password: impl FnOnce() -> Option<String>) -> Result<Self, KeyError> {
        let bad = || SignError::BadSecretKey {
            path: path.to_path_buf(),
        };
        let text = crate::util::contain::read_config(path)
            .map_err(SignError::from)?
            .ok_or_else(|| {
                SignError::from(std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    format!("`{}` does not exist", path.display()),
                ))
            })?;
        // A secret key others can read is refused, as `credentials.toml` is.
        {
            let meta = std::fs::symlink_metadata(path).map_err(SignError::from)?;
            if crate::util::platform::exposed_to_others(&meta) {
                return Err(KeyError::Exposed {
                    path: path.to_path_buf(),
                });
            }
        }
        if let Some(b64) = text.lines().find_map(|l| l.strip_prefix(SECRET_TAG)) {
            let bytes = B64.decode(b64.trim()).map_err(|_| bad())?;
            if bytes.len() < 9 {
                return Err(bad().into());
            }
            let mut id = [0u8; 8];
            id.copy_from_slice(&bytes[..8]);
            let pair = ring::signature::Ed25519KeyPair::from_pkcs8(&bytes[8..]).map_err(|_| bad())?;
            return Ok(Self { id, pair });
        }
        let line = text.lines().nth(1).map(str::trim).ok_or_else(bad)?;
        let bytes = B64.decode(line).map_err(|_| bad())?;
        if bytes.len() != KEY_HEADER + KEYNUM || &bytes[..2] != b"Ed" || &bytes[4..6] != b"B2" {
            return Err(bad().into());
        }
        let salt = &bytes[6..38];
        let number = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("eight bytes"));
        let limits = KdfLimits {
            opslimit: number(38),
            memlimit: number(46),
        };
        let mut keynum = bytes[KEY_HEADER..].to_vec();
        let encrypted = match <&[u8; 2]>::try_from(&bytes[2..4]).expect("two bytes") {
            k if k == KDF_SCRYPT => true,
            k if k == KDF_NONE => false,
            _ => return Err(bad().into()),
        };
        if encrypted {
            let (log_n, r, p) = limits.params();
            if p == 0 {
                return Err(bad().into()); // limits no scrypt can run with: not minisign's
            }
            let memory = (128u64 * r as u64).saturating_mul(1u64 << log_n.min(62));
            let work = (1u64 << log_n.min(62))
                .saturating_mul(r as u64)
                .saturating_mul(p as u64);
            if memory > KDF_MAX_MEMORY || work > KDF_MAX_WORK {
                return Err(KeyError::TooCostly {
                    path: path.to_path_buf(),
                    mib: memory >> 20,
                    passes: work.div_ceil(KDF_MAX_WORK),
                });
            }
            let password = password().ok_or_else(|| KeyError::NeedsPassword {
                path: path.to_path_buf(),
            })?;
            xor_stream(&mut keynum, &password, salt, limits).map_err(SignError::from)?;
        }
        let (id, rest) = keynum.split_at(8);
        let (secret, checksum) = rest.split_at(64);
        if key_checksum(id, secret) != checksum {
            return Err(match encrypted {
                true => KeyError::WrongPassword {
                    path: path.to_path_buf(),
                },
                false => bad().into(),
            });
        }
        let pair = ring::signature::Ed25519KeyPair::from_seed_and_public_key(&secret[..32], &secret[32..])
            .map_err(|_| bad())?;
        Ok(Self {
            id: id.try_into().expect("eight bytes"),
            pair,
        })
    }

    /// The key id (upper-case hex, as minisign shows it).
    pub fn id(&self) -> String {
        key_id_hex(&self.id)
    }
}

/// A minisign signature of `data` with `key`: the text of a `.minisig` file.
pub fn sign(key: &SecretKey, data: &[u8], trusted_comment: &str) -> String {
    let signature = key.pair.sign(data);
    let mut line = b"Ed".to_vec();
    line.extend_from_slice(&key.id);
    line.extend_from_slice(signature.as_ref());
    let mut global = signature.as_ref().to_vec();
    global.extend_from_slice(trusted_comment.as_bytes());
    let global = key.pair.sign(&global);
    format!(
        "untrusted comment: signature from a2c secret key {}\n{}\ntrusted comment: {trusted_comment}\n{}\n",
        key_id_hex(&key.id),
        B64.encode(&line),
        B64.encode(global.as_ref())
    )
}

/// A minisign signature of the file at `path` in minisign's prehashed form (`ED`: the
/// signature is over the BLAKE2b-512 of its bytes, read in blocks, as `minisign -S` writes by
/// default and as OpenSSL's Ed25519 can check from that hash): the text of a `.minisig` file.
pub fn sign_file(key: &SecretKey, path: &Path, trusted_comment: &str) -> std::io::Result<String> {
    use blake2::Digest;
    use std::io::Read;
    let mut file = fs_err::File::open(path)?;
    let mut hash = blake2::Blake2b512::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hash.update(&buf[..n]);
    }
    let prehash = hash.finalize();
    let signature = key.pair.sign(&prehash);
    let mut line = b"ED".to_vec();
    line.extend_from_slice(&key.id);
    line.extend_from_slice(signature.as_ref());
    let mut global = signature.as_ref().to_vec();
    global.extend_from_slice(trusted_comment.as_bytes());
    let global = key.pair.sign(&global);
    Ok(format!(
        "untrusted comment: signature from a2c secret key {}\n{}\ntrusted comment: {trusted_comment}\n{}\n",
        key_id_hex(&key.id),
        B64.encode(&line),
        B64.encode(global.as_ref())
    ))
}

/// For a registry that carries no a2c signature (a package index, a Conan remote): fine when
/// no key is pinned, else the refusal of an unsigned index naming the pinned keys.
pub fn unsigned_unless_unpinned(registry: &str, trusted: &[String]) -> Result<(), SignError> {
    if trusted.is_empty() {
        return Ok(());
    }
    let keys = trusted
        .iter()
        .map(|k| public_key_id(k))
        .collect::<Result<Vec<_>, _>>()?;
    Err(SignError::Unsigned {
        registry: registry.to_string(),
        keys: keys.join(", "),
    })
}

/// The key id of a public key line (upper-case hex, as minisign shows it).
pub fn public_key_id(key: &str) -> Result<String, SignError> {
    let line = key.lines().map(str::trim).rfind(|l| !l.is_empty()).unwrap_or_default();
    let bytes = B64
        .decode(line)
        .map_err(|_| SignError::BadPublicKey { key: key.to_string() })?;
    if bytes.len() != 42 || &bytes[..1] != b"E" {
        return Err(SignError::BadPublicKey { key: key.to_string() });
    }
    Ok(key_id_hex(&bytes[2..10]))
}

/// Verifies `signature` (the text of a `.minisig`) over `data` against the `trusted` public
/// keys; returns the key id that signed. Fails closed: no signature, a key not trusted, or a
/// signature that does not verify is an error naming the registry and the key id.
pub fn verify(registry: &str, data: &[u8], signature: Option<&str>, trusted: &[String]) -> Result<String, SignError> {
    let ids: Vec<String> = trusted.iter().map(|k| public_key_id(k)).collect::<Result<_, _>>()?;
    let keys = ids.join(", ");
    let Some(text) = signature else {
        return Err(SignError::Unsigned {
            registry: registry.to_string(),
            keys,
        });
    };
    let bad_file = |reason: String| SignError::BadSignatureFile {
        registry: registry.to_string(),
        reason,
    };
    let sig = minisign_verify::Signature::decode(text).map_err(|e| bad_file(e.to_string()))?;
    let sig_line = text.lines().nth(1).unwrap_or_default().trim();
    let sig_bytes = B64.decode(sig_line).map_err(|e| bad_file(e.to_string()))?;
    if sig_bytes.len() < 10 {
        return Err(bad_file("too short".into()));
    }
    let key_id = key_id_hex(&sig_bytes[2..10]);
    let Some(pos) = ids.iter().position(|id| *id == key_id) else {
        return Err(SignError::UntrustedKey {
            registry: registry.to_string(),
            key_id,
            keys,
        });
    };
    let line = trusted[pos]
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or_default();
    let public = minisign_verify::PublicKey::from_base64(line).map_err(|_| SignError::BadPublicKey {
        key: trusted[pos].clone(),
    })?;
    public.verify(data, &sig, true).map_err(|_| SignError::BadSignature {
        registry: registry.to_string(),
        key_id: key_id.clone(),
    })?;
    Ok(key_id)
}

impl crate::util::hint::Hint for SignError {
    fn hint(&self) -> Option<String> {
        SignError::hint(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cheap limits for tests: N = 2^10, 1 MiB.
    const LIGHT: KdfLimits = KdfLimits {
        opslimit: 32_768,
        memlimit: 1 << 20,
    };

    #[test]
    fn a_registry_without_signatures_is_refused_only_when_keys_are_pinned() {
        let (line, _, _, id) = generate(None, LIGHT).unwrap();
        assert!(unsigned_unless_unpinned("pypi+https://h/simple/#p", &[]).is_ok());
        match unsigned_unless_unpinned("pypi+https://h/simple/#p", &[line]) {
            Err(SignError::Unsigned { keys, .. }) => assert_eq!(keys, id),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn scrypt_parameters_are_libsodiums() {
        // minisign's "sensitive" and libsodium's "interactive" limits.
        assert_eq!(KDF_SENSITIVE.params(), (20, 8, 1));
        let interactive = KdfLimits {
            opslimit: 524_288,
            memlimit: 16_777_216,
        };
        assert_eq!(interactive.params(), (14, 8, 1));
        assert_eq!(LIGHT.params(), (10, 8, 1));
    }

    #[test]
    fn an_encrypted_key_unlocks_with_its_password_only() {
        let dir = tempfile::tempdir().unwrap();
        let (_, _, secret, id) = generate(Some("correct horse"), LIGHT).unwrap();
        assert!(secret.starts_with("untrusted comment: minisign encrypted secret key"));
        let key = dir.path().join("a2c.key");
        write_key(&key, &secret);
        assert_eq!(SecretKey::load(&key, || Some("correct horse".into())).unwrap().id(), id);
        assert!(matches!(
            SecretKey::load(&key, || Some("wrong".into())),
            Err(KeyError::WrongPassword { .. })
        ));
        assert!(matches!(
            SecretKey::load(&key, || None),
            Err(KeyError::NeedsPassword { .. })
        ));
        // Limits that would take more memory than a2c allows are refused before the password.
        let text = std::fs::read_to_string(&key).unwrap();
        let mut bytes = B64.decode(text.lines().nth(1).unwrap()).unwrap();
        bytes[46..54].copy_from_slice(&(64u64 << 30).to_le_bytes());
        bytes[38..46].copy_from_slice(&(64u64 << 30).to_le_bytes());
        write_key(&key, &format!("untrusted comment: x\n{}\n", B64.encode(&bytes)));
        assert!(matches!(
            SecretKey::load(&key, || panic!("not asked")),
            Err(KeyError::TooCostly { .. })
        ));
        // minisign's memory but sixteen times its work (p = 16): refused too.
        let heavy = KdfLimits {
            opslimit: 1 << 29,
            memlimit: 1 << 30,
        };
        assert_eq!(heavy.params(), (20, 8, 16));
        bytes[38..46].copy_from_slice(&heavy.opslimit.to_le_bytes());
        bytes[46..54].copy_from_slice(&heavy.memlimit.to_le_bytes());
        write_key(&key, &format!("untrusted comment: x\n{}\n", B64.encode(&bytes)));
        assert!(matches!(
            SecretKey::load(&key, || panic!("not asked")),
            Err(KeyError::TooCostly { passes: 16, .. })
        ));
        // minisign's own limits are accepted (refused only for the wrong password).
        bytes[38..46].copy_from_slice(&KDF_SENSITIVE.opslimit.to_le_bytes());
        bytes[46..54].copy_from_slice(&KDF_SENSITIVE.memlimit.to_le_bytes());
        write_key(&key, &format!("untrusted comment: x\n{}\n", B64.encode(&bytes)));
        assert!(matches!(
            SecretKey::load(&key, || None),
            Err(KeyError::NeedsPassword { .. })
        ));
    }

    /// A secret key others can read is refused, with the `chmod 600` hint.
    #[test]
    fn a_secret_key_others_can_read_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (_, _, secret, _) = generate(None, LIGHT).unwrap();
        let key = dir.path().join("my keys").join("a2c's.key");
        std::fs::create_dir(key.parent().unwrap()).unwrap();
        write_key(&key, &secret);
        assert!(SecretKey::load(&key, || None).is_ok());
        for mode in [0o644, 0o640, 0o604, 0o620] {
            crate::util::platform::set_mode(&key, mode).unwrap();
            let err = SecretKey::load(&key, || None).err().unwrap();
            assert!(matches!(err, KeyError::Exposed { .. }), "{mode:o}");
            // The hint is a command that works as printed (the path has a space and a quote).
            let hint = err.hint().unwrap();
            let command = hint.strip_prefix("run `").and_then(|h| h.strip_suffix('`')).unwrap();
            let ran = std::process::Command::new("sh").args(["-c", command]).status().unwrap();
            assert!(ran.success(), "{command}");
            assert!(SecretKey::load(&key, || None).is_ok(), "{command}");
        }
    }

    /// A secret key file as `a2c key generate` writes it: readable by its owner only.
    fn write_key(path: &Path, text: &str) {
        std::fs::write(path, text).unwrap();
        crate::util::platform::set_mode(path, 0o600).unwrap();
    }

    #[test]
    fn sign_then_verify_and_every_refusal() {
        let dir = tempfile::tempdir().unwrap();
        let (line, _, secret, id) = generate(None, LIGHT).unwrap();
        let key = dir.path().join("a2c.key");
        write_key(&key, &secret);
        let key = SecretKey::load(&key, || panic!("an unencrypted key needs no password")).unwrap();
        let sig = sign(&key, b"index", "a2c index");
        let trusted = std::slice::from_ref(&line);
        assert_eq!(verify("reg", b"index", Some(&sig), trusted).unwrap(), id);
        assert!(matches!(
            verify("reg", b"other", Some(&sig), trusted),
            Err(SignError::BadSignature { .. })
        ));
        assert!(matches!(
            verify("reg", b"index", None, trusted),
            Err(SignError::Unsigned { .. })
        ));
        let (other, _, _, _) = generate(None, LIGHT).unwrap();
        assert!(matches!(
            verify("reg", b"index", Some(&sig), std::slice::from_ref(&other)),
            Err(SignError::UntrustedKey { .. })
        ));
        // Rotation: either of two trusted keys.
        assert!(verify("reg", b"index", Some(&sig), &[other, line]).is_ok());
    }
}
