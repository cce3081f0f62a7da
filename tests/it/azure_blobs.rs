//! Azure Blob Storage containers as registries: an `az://` registry against Azurite
//! (Microsoft's Azure Storage emulator, which checks every Shared Key and SAS signature), started
//! on loopback by each test with a storage account of its own.

use std::process::Command;

use base64::Engine as _;

use crate::support::http_server::Server;
use crate::support::servers::{self, PATIENT, curl_status};
use crate::support::{Spawned, TestContext, layout, require_program};

const ACCOUNT: &str = "a2cteam";
const CONTAINER: &str = "methods";
/// The account's key (Azurite takes any base64 text as one).
const KEY: &str = "YTJjLXRlc3QtYWNjb3VudC1rZXktMDEyMzQ1Njc4OWFiY2RlZg==";
/// The version of the REST API the test's own requests (and SAS tokens) name.
const API: &str = "2021-08-06";

/// Azurite's blob service on loopback, holding the account `ACCOUNT` (key `KEY`) and its
/// container `CONTAINER`.
struct Azurite {
    _child: Spawned,
    port: u16,
    /// The CA that signed its certificate (a PEM file) when it speaks HTTPS.
    ca: Option<std::path::PathBuf>,
}

impl Azurite {
    /// The account's endpoint, path-style as Azurite serves it.
    fn endpoint(&self) -> String {
        format!("{}/{ACCOUNT}", servers::loopback_url(self.port, self.ca.as_deref()))
    }

    /// What a user of this account sets: the endpoint, the account and `credential`.
    fn env(&self, credential: (&'static str, &str)) -> Vec<(&'static str, String)> {
        vec![
            (PATIENT.0, PATIENT.1.to_string()),
            ("AZURE_STORAGE_ENDPOINT", self.endpoint()),
            ("AZURE_STORAGE_ACCOUNT_NAME", ACCOUNT.to_string()),
            (credential.0, credential.1.to_string()),
        ]
    }

    /// `curl -X METHOD` of `path` below the account, authorized by the account SAS `sas`, with
    /// `extra` arguments: the HTTP status.
    fn curl(&self, method: &str, path: &str, sas: &str, extra: &[&str]) -> String {
        let mut args = vec![
            "-X".to_string(),
            method.into(),
            "-H".into(),
            format!("x-ms-version: {API}"),
        ];
        args.extend(
            self.ca
                .iter()
                .flat_map(|ca| ["--cacert".into(), ca.display().to_string()]),
        );
        args.extend(extra.iter().map(|a| a.to_string()));
        let joint = if path.contains('?') { '&' } else { '?' };
        args.push(format!("{}/{path}{joint}{sas}", self.endpoint()));
        curl_status(&args)
    }
}

/// An account SAS for the blob service with `permissions` (`rl`: read and list; `racwdl`: all
/// a publisher needs), signed with `KEY` as Azure defines it (HMAC-SHA256 of the fields).
fn account_sas(permissions: &str) -> String {
    let expiry = "2099-01-01T00:00:00Z";
    let to_sign = format!("{ACCOUNT}\n{permissions}\nb\nsco\n\n{expiry}\n\nhttps,http\n{API}\n\n");
    let key = base64::engine::general_purpose::STANDARD.decode(KEY).unwrap();
    let tag = ring::hmac::sign(&ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &key), to_sign.as_bytes());
    let sig = base64::engine::general_purpose::STANDARD.encode(tag.as_ref());
    let sig: String = url::form_urlencoded::byte_serialize(sig.as_bytes()).collect();
    format!("sv={API}&ss=b&srt=sco&sp={permissions}&se={expiry}&spr=https,http&sig={sig}")
}

/// Starts Azurite's blob service with `ACCOUNT` and its container, or `None` (after the
/// SKIPPED line) when it is not installed.
fn azurite(t: &TestContext) -> Option<Azurite> {
    start_azurite(t, false)
}

/// [`azurite`] over HTTPS (a certificate for 127.0.0.1 from a CA made for the test:
/// `Azurite::ca`) with OAuth on: `--oauth basic` takes a bearer token whose audience is the
/// storage service, whose issuer is Entra's and whose lifetime holds — it does not check the
/// token's signature, which only Microsoft's keys make.
fn azurite_oauth(t: &TestContext) -> Option<Azurite> {
    start_azurite(t, true)
}

fn start_azurite(t: &TestContext, oauth: bool) -> Option<Azurite> {
    let bin = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/ci-node/node_modules/.bin/azurite-blob");
    if !bin.exists() || Command::new("node").arg("--version").output().is_err() {
        require_program("node and Azurite in target/ci-node (npm ci in .ci/node; .ci/run does it)");
        return None;
    }
    let mut tls = Vec::new();
    let ca = oauth.then(|| {
        let dir = t.path("azurite-tls");
        crate::support::http_server::TestCa::new(&["localhost"], &["127.0.0.1"]).write(&dir);
        for (flag, file) in [("--cert", "cert.pem"), ("--key", "key.pem")] {
            tls.push(flag.to_string());
            tls.push(dir.join(file).display().to_string());
        }
        tls.extend(["--oauth".to_string(), "basic".to_string()]);
        dir.join("ca.pem")
    });
    let started = servers::start_listening(t, "azurite", 1, |ports| {
        let mut azurite = Command::new(&bin);
        azurite
            .args(["--blobHost", "127.0.0.1", "--blobPort", &ports[0].to_string()])
            .args(&tls)
            .arg("--location")
            .arg(t.path("azurite"))
            .args(["--disableTelemetry", "--skipApiVersionCheck", "--silent"])
            .env("AZURITE_ACCOUNTS", format!("{ACCOUNT}:{KEY}"));
        azurite
    });
    let server = Azurite {
        port: started.ports[0],
        _child: started.child,
        ca,
    };
    let status = server.curl(
        "PUT",
        &format!("{CONTAINER}?restype=container"),
        &account_sas("racwdl"),
        &["-H", "Content-Length: 0"],
    );
    assert_eq!(status, "201", "cannot create the container");
    Some(server)
}

/// The whole flow on a container, every request signed with the account key (Shared Key):
/// publish create-only, lock and install from a URL signed for the one blob (its signature
/// never shown), `outdated`; a wrong key refused naming its source; an install with a read-only
/// SAS and no key; a publish with that SAS refused, publishing again what is there taken; a bundle changed behind the lock refused.
#[test]
fn an_azure_container_is_a_registry_with_every_request_signed() {
    let t = TestContext::new();
    let Some(store) = azurite(&t) else { return };
    let registry = format!("az://{ACCOUNT}/{CONTAINER}/a2c");
    let env = store.env(("AZURE_STORAGE_ACCOUNT_KEY", KEY));
    t.method_tree("trees/1.0.0", "1.0.0");
    let pack = ["pack", "trees/1.0.0", "--version", "1.0.0", "--registry", &registry];
    insta::assert_snapshot!(t.ok_env(".", &pack, &env).transcript());
    insta::assert_snapshot!(t.ok_env(".", &pack, &env).transcript());
    t.write("trees/1.0.0/rules/extra.md", "changed\n");
    let run = t.run_env(".", &pack, &env);
    run.failure();
    insta::assert_snapshot!(run.error_transcript());
    fs_err::remove_file(t.path("trees/1.0.0/rules/extra.md")).unwrap();

    t.app_superbuild(&registry);
    t.ok_env("w", &["lock"], &env);
    let lock = fs_err::read_to_string(t.path(&layout::lock("w"))).unwrap();
    assert!(
        lock.contains(&format!(
            "source = \"az://{ACCOUNT}/{CONTAINER}/a2c/bundles/a2c-1.0.0.tar.gz\""
        )),
        "{lock}"
    );
    crate::spec::assert_lock_valid(&lock);
    t.ok_env("w", &["install"], &env);
    assert!(t.path(&layout::installed("w", "1.0.0")).exists());
    t.method_tree("trees/1.1.0", "1.1.0");
    t.ok_env(
        ".",
        &["pack", "trees/1.1.0", "--version", "1.1.0", "--registry", &registry],
        &env,
    );
    let doc = t.ok_env("w", &["outdated", "--json"], &env).json();
    assert_eq!(doc["newest"], "1.1.0", "{doc}");

    // A wrong key: refused by the store, and said so with where the credentials came from.
    let wrong_key = base64::engine::general_purpose::STANDARD.encode("not the key");
    let wrong = store.env(("AZURE_STORAGE_ACCOUNT_KEY", &wrong_key));
    let run = t.run_env("w", &["lock", "--update", "1.0.0"], &wrong);
    run.failure();
    insta::assert_snapshot!(run.error_transcript());
    assert!(!run.stderr.contains(&wrong_key), "the key is shown:\n{}", run.stderr);
    // With an empty cache the install meets it at the bundle's signed URL: said the same way.
    t.forget_installed("w");
    let run = t.run_env("w", &["install"], &wrong);
    run.failure();
    insta::assert_snapshot!(run.error_transcript());

    // A read-only SAS and no key: installs (the bundle's URL carries the SAS, never shown)…
    t.forget_installed("w");
    let read_only = account_sas("rl");
    let sas = store.env(("AZURE_STORAGE_SAS_TOKEN", &read_only));
    // With `--json` and `-v`, as CI keeps them: the blob's URL without the user's own SAS.
    let run = t.ok_env("w", &["install", "--json", "-v"], &sas);
    let served = run.json()["installed"][0]["served_from"].as_str().unwrap().to_string();
    assert!(served.ends_with("/a2c/bundles/a2c-1.0.0.tar.gz (signed)"), "{served}");
    run.shows_no_credential(&[&read_only, read_only.trim_start_matches('?')]);
    assert!(t.path(&layout::installed("w", "1.0.0")).exists());
    // …but cannot publish.
    t.method_tree("trees/1.2.0", "1.2.0");
    let run = t.run_env(
        ".",
        &["pack", "trees/1.2.0", "--version", "1.2.0", "--registry", &registry],
        &sas,
    );
    run.failure();
    insta::assert_snapshot!(run.error_transcript());
    // Publishing again what is there needs no write: said as with a key, before any write.
    insta::assert_snapshot!(t.ok_env(".", &pack, &sas).transcript());

    // The bundle changed behind the lock (overwritten with a SAS that may write): refused,
    // nothing installed.
    t.forget_installed("w");
    let tampered = t.write("tampered.tar.gz", "tampered");
    let status = store.curl(
        "PUT",
        &format!("{CONTAINER}/a2c/bundles/a2c-1.0.0.tar.gz"),
        &account_sas("racwdl"),
        &[
            "-H",
            "x-ms-blob-type: BlockBlob",
            "--data-binary",
            &format!("@{}", tampered.display()),
        ],
    );
    assert_eq!(status, "201", "the test could not overwrite the bundle");
    let run = t.run_env("w", &["install"], &env);
    run.failure();
    insta::assert_snapshot!(run.error_transcript());
    assert!(
        !run.stderr.contains("sig="),
        "a signed URL's signature is shown:\n{}",
        run.stderr
    );
    assert!(!t.path(&layout::installed("w", "1.0.0")).exists());
}

/// Credentials go only to the account they are for: with `AZURE_STORAGE_ACCOUNT_NAME` naming
/// one account, a marker that names another is refused before any request — the key is never
/// used to sign for it — and the Azure CLI is never run for credentials.
#[test]
fn credentials_for_one_account_are_never_used_for_another() {
    let t = TestContext::new();
    let Some(store) = azurite(&t) else { return };
    let env = store.env(("AZURE_STORAGE_ACCOUNT_KEY", KEY));
    t.superbuild(
        "w",
        &format!("members: [\"p/*\"]\nregistry: az://elsewhere/{CONTAINER}/a2c\n"),
    );
    t.canonical_repo("w/p/app", "1.0.0");
    let run = t.run_env("w", &["lock"], &env);
    run.failure();
    insta::assert_snapshot!(run.error_transcript());
    // The CLI's credentials: refused with the command that hands over its token.
    let mut cli = env.clone();
    cli.retain(|(k, _)| *k != "AZURE_STORAGE_ACCOUNT_KEY");
    cli.push(("AZURE_USE_AZURE_CLI", "true".into()));
    t.superbuild(
        "v",
        &format!("members: [\"p/*\"]\nregistry: az://{ACCOUNT}/{CONTAINER}/a2c\n"),
    );
    t.canonical_repo("v/p/app", "1.0.0");
    let run = t.run_env("v", &["lock"], &cli);
    run.failure();
    insta::assert_snapshot!(run.error_transcript());
}

const TENANT: &str = "a2c-tenant";
/// A tenant whose tokens are for another resource than storage.
const OTHER_TENANT: &str = "a2c-other-tenant";
const CLIENT_SECRET: &str = "a2c-client-secret-never-shown";

/// The seconds since the Unix epoch, now.
fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A token as Entra issues one for `audience` (its signature is not Entra's: Azurite does not
/// check it), valid for an hour from now.
fn entra_token(audience: &str) -> String {
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let now = unix_now();
    let header = b64.encode(r#"{"alg":"RS256","typ":"JWT"}"#);
    let claims = serde_json::json!({
        "aud": audience,
        "iss": format!("https://sts.windows.net/{TENANT}/"),
        "iat": now - 60,
        "nbf": now - 60,
        "exp": now + 3600,
        "oid": "00000000-0000-0000-0000-0000000000a2",
        "tid": TENANT,
    });
    format!(
        "{header}.{}.{}",
        b64.encode(claims.to_string()),
        b64.encode("not Entra's signature")
    )
}

/// Entra's token endpoints on loopback over HTTPS (a CA of its own): a service principal's
/// (`/TENANT/oauth2/v2.0/token`, and one for `OTHER_TENANT` that gives a token for another
/// audience) and a managed identity's (`/metadata/identity/oauth2/token`, as IMDS serves it).
fn entra(t: &TestContext) -> Server {
    let root = t.path("entra");
    let expires_on = unix_now() + 3600;
    let storage = entra_token("https://storage.azure.com");
    for (path, body) in [
        (
            format!("{TENANT}/oauth2/v2.0/token"),
            serde_json::json!({"token_type": "Bearer", "expires_in": 3599, "access_token": storage}),
        ),
        (
            format!("{OTHER_TENANT}/oauth2/v2.0/token"),
            serde_json::json!({"token_type": "Bearer", "expires_in": 3599, "access_token": entra_token("https://management.azure.com/")}),
        ),
        (
            "metadata/identity/oauth2/token".to_string(),
            serde_json::json!({"token_type": "Bearer", "expires_on": expires_on.to_string(), "resource": "https://storage.azure.com", "access_token": storage}),
        ),
    ] {
        t.write(&format!("entra/{path}"), &body.to_string());
    }
    Server::start_tls(root)
}

/// Entra credentials, as Azure's SDKs take them from the environment, over HTTPS with OAuth:
/// a service principal (client secret) publishes, locks and installs — its token on every
/// request, each bundle from a URL signed by a user delegation key the store gives for that
/// token — and a managed identity (IMDS's token) and a workload identity (a federated token's
/// file) lock and install; a token for another resource is refused by the store, said with the
/// credentials' source and never the secret.
#[test]
fn entra_credentials_publish_and_install_over_oauth() {
    let t = TestContext::new();
    let Some(store) = azurite_oauth(&t) else { return };
    let entra = entra(&t);
    let bundle = t.path("trust.pem");
    let azurite_ca = fs_err::read_to_string(store.ca.as_ref().unwrap()).unwrap();
    fs_err::write(&bundle, format!("{azurite_ca}\n{}", entra.ca_pem.as_ref().unwrap())).unwrap();
    let authority = entra.url().trim_end_matches('/').to_string();
    let msi = format!("{authority}/metadata/identity/oauth2/token");
    let common = |extra: &[(&'static str, &str)]| -> Vec<(&'static str, String)> {
        let mut env = vec![
            (PATIENT.0, PATIENT.1.to_string()),
            ("AZURE_STORAGE_ENDPOINT", store.endpoint()),
            ("AZURE_STORAGE_ACCOUNT_NAME", ACCOUNT.to_string()),
            ("A2C_CA_BUNDLE", bundle.display().to_string()),
        ];
        env.extend(extra.iter().map(|(k, v)| (*k, v.to_string())));
        env
    };
    let principal = common(&[
        ("AZURE_CLIENT_ID", "a2c-app"),
        ("AZURE_CLIENT_SECRET", CLIENT_SECRET),
        ("AZURE_TENANT_ID", TENANT),
        ("AZURE_AUTHORITY_HOST", &authority),
    ]);
    let registry = format!("az://{ACCOUNT}/{CONTAINER}/a2c");
    t.method_tree("trees/1.0.0", "1.0.0");
    t.app_locked(&registry, &[&registry], &principal);
    let run = t.ok_env("w", &["install"], &principal);
    assert!(t.path(&layout::installed("w", "1.0.0")).exists());
    assert!(!run.stderr.contains(CLIENT_SECRET), "{}", run.stderr);
    assert!(
        entra
            .requests()
            .iter()
            .any(|r| r.path == format!("/{TENANT}/oauth2/v2.0/token")),
        "no token was asked of the service principal's endpoint"
    );

    // A managed identity: IMDS's token, and nothing else set.
    t.forget_installed("w");
    let identity = common(&[("AZURE_MSI_ENDPOINT", &msi)]);
    t.ok_env("w", &["lock", "--update", "1.0.0"], &identity);
    t.ok_env("w", &["install"], &identity);
    assert!(t.path(&layout::installed("w", "1.0.0")).exists());
    assert!(
        entra
            .requests()
            .iter()
            .any(|r| r.path.starts_with("/metadata/identity/oauth2/token?")),
        "no token was asked of the managed identity's endpoint"
    );

    // Workload identity (AKS, GitHub Actions' OIDC): the federated token's file instead of a
    // secret, exchanged at the same endpoint.
    t.forget_installed("w");
    let federated = t.write("federated-token", "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhMmMifQ.c2ln");
    let federated = federated.display().to_string();
    let workload = common(&[
        ("AZURE_CLIENT_ID", "a2c-app"),
        ("AZURE_TENANT_ID", TENANT),
        ("AZURE_FEDERATED_TOKEN_FILE", &federated),
        ("AZURE_AUTHORITY_HOST", &authority),
    ]);
    t.ok_env("w", &["lock", "--update", "1.0.0"], &workload);
    t.ok_env("w", &["install"], &workload);
    assert!(t.path(&layout::installed("w", "1.0.0")).exists());

    // A token for another resource: the store refuses it, said with the credentials' source.
    let mut other = principal.clone();
    other.retain(|(k, _)| *k != "AZURE_TENANT_ID");
    other.push(("AZURE_TENANT_ID", OTHER_TENANT.into()));
    let run = t.run_env("w", &["lock", "--update", "1.0.0"], &other);
    run.failure();
    insta::assert_snapshot!(run.error_transcript());
    assert!(!run.stderr.contains(CLIENT_SECRET), "{}", run.stderr);
}
