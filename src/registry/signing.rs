//! Signed indexes in minisign's format, so the `minisign` CLI can sign and verify too.
//!
//! - A **public key** is one line of base64: `Ed` + an 8-byte key id + the 32-byte Ed25519
//!   key (minisign's `minisign.pub` second line). It can be pasted into a marker's
//!   `trusted_keys:`.
//! - A **signature** `index/esys/a2c.json.minisig` is minisign's: an untrusted comment, the
//!   signature line (`Ed` legacy, over the index bytes, as a2c writes it; `ED` prehashed, as
//!   the minisign CLI writes it by default), a trusted comment, and the global signature over
//!   the signature and the trusted comment.
//! - a2c's **secret key** file is its own (`a2c-secret-key-v1`: the key id and the Ed25519
//!   PKCS#8 document, base64), written 0600; keys made by `minisign -G` sign with the
//!   minisign CLI and verify in a2c.
//!
//! Verification is `minisign-verify`'s; signing and key generation use `ring` (already the
//! TLS provider's crypto), so no second crypto stack comes in.

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

/// A new key pair: (the public key line, the public key file text, the secret key file text,
/// the key id).
pub fn generate() -> Result<(String, String, String, String), SignError> {
    let rng = ring::rand::SystemRandom::new();
    let pkcs8 = ring::signature::Ed25519KeyPair::generate_pkcs8(&rng)
        .map_err(|_| std::io::Error::other("cannot generate an Ed25519 key"))?;
    let pair = ring::signature::Ed25519KeyPair::from_pkcs8(pkcs8.as_ref())
        .map_err(|_| std::io::Error::other("cannot read the generated key"))?;
    let mut id = [0u8; 8];
    rng.fill(&mut id).map_err(|_| std::io::Error::other("no randomness"))?;
    let mut public = b"Ed".to_vec();
    public.extend_from_slice(&id);
    public.extend_from_slice(pair.public_key().as_ref());
    let line = B64.encode(&public);
    let hex = key_id_hex(&id);
    let public_file = format!("untrusted comment: minisign public key {hex}\n{line}\n");
    let mut secret = id.to_vec();
    secret.extend_from_slice(pkcs8.as_ref());
    let secret_file = format!(
        "untrusted comment: a2c secret key {hex} (keep it private)\n{SECRET_TAG} {}\n",
        B64.encode(&secret)
    );
    Ok((line, public_file, secret_file, hex))
}

struct Secret {
    id: [u8; 8],
    pair: ring::signature::Ed25519KeyPair,
}

fn read_secret(path: &Path) -> Result<Secret, SignError> {
    let bad = || SignError::BadSecretKey {
        path: path.to_path_buf(),
    };
    let text = crate::util::contain::read_config(path)?.ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("`{}` does not exist", path.display()),
        )
    })?;
    let b64 = text
        .lines()
        .find_map(|l| l.strip_prefix(SECRET_TAG))
        .map(str::trim)
        .ok_or_else(bad)?;
    let bytes = B64.decode(b64).map_err(|_| bad())?;
    if bytes.len() < 9 {
        return Err(bad());
    }
    let mut id = [0u8; 8];
    id.copy_from_slice(&bytes[..8]);
    let pair = ring::signature::Ed25519KeyPair::from_pkcs8(&bytes[8..]).map_err(|_| bad())?;
    Ok(Secret { id, pair })
}

/// A minisign signature of `data` with the secret key at `key`: the text of a `.minisig` file.
pub fn sign(key: &Path, data: &[u8], trusted_comment: &str) -> Result<String, SignError> {
    let secret = read_secret(key)?;
    let signature = secret.pair.sign(data);
    let mut line = b"Ed".to_vec();
    line.extend_from_slice(&secret.id);
    line.extend_from_slice(signature.as_ref());
    let mut global = signature.as_ref().to_vec();
    global.extend_from_slice(trusted_comment.as_bytes());
    let global = secret.pair.sign(&global);
    Ok(format!(
        "untrusted comment: signature from a2c secret key {}\n{}\ntrusted comment: {trusted_comment}\n{}\n",
        key_id_hex(&secret.id),
        B64.encode(&line),
        B64.encode(global.as_ref())
    ))
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

    #[test]
    fn sign_then_verify_and_every_refusal() {
        let dir = tempfile::tempdir().unwrap();
        let (line, _, secret, id) = generate().unwrap();
        let key = dir.path().join("a2c.key");
        std::fs::write(&key, secret).unwrap();
        let sig = sign(&key, b"index", "a2c index").unwrap();
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
        let (other, _, _, _) = generate().unwrap();
        assert!(matches!(
            verify("reg", b"index", Some(&sig), std::slice::from_ref(&other)),
            Err(SignError::UntrustedKey { .. })
        ));
        // Rotation: either of two trusted keys.
        assert!(verify("reg", b"index", Some(&sig), &[other, line]).is_ok());
    }
}
