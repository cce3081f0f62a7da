//! Credentials stay with their origin and out of every output: a signed URL is shown without
//! its signature in every message and `-v` hop line, and an Azure credential goes only to a
//! storage account the user named — never to one a committed marker or lock names. (Every run
//! of the suite is also checked for signature parameters and the secrets it was given:
//! `support::Run::shows_no_credential`.)

use crate::support::http_server::Fault;
use crate::support::scripted::{Answer, Body, Scripted};
use crate::support::{TestContext, layout};

const B1: &str = "/bundles/a2c-1.0.0.tar.gz";

/// A query as a store signs a URL: what must never be printed.
const SIGNED: &str =
    "X-Amz-Credential=AKIDA2CTEST%2F20990101&X-Amz-Signature=5ec7e75157a7e0f1d2c3b4a5&sig=a2cSASsignature";

/// A bundle whose server redirects it to a signed URL that is not HTTP(S), in a loop, or on and
/// on: each message names the URLs without their signature, with and without `-v`.
#[test]
fn redirects_to_signed_urls_are_said_without_their_signature() {
    let t = TestContext::new();
    let server = t.standard_http_superbuild();
    t.ok("w", &["lock"]);
    let mut transcripts = Vec::new();
    let base = server.url();
    let base = base.trim_end_matches('/');
    let hop = |i: usize| format!("/hop{i}?{SIGNED}");
    for (what, faults) in [
        (
            "not HTTP(S)",
            vec![(B1.to_string(), format!("ftp://127.0.0.1/bundle?{SIGNED}"))],
        ),
        (
            "a loop",
            vec![
                (B1.to_string(), format!("{base}{}", hop(0))),
                (hop(0), format!("{base}{}", hop(0))),
            ],
        ),
        (
            "on and on",
            std::iter::once((B1.to_string(), format!("{base}{}", hop(1))))
                .chain((1..14).map(|i| (hop(i), format!("{base}{}", hop(i + 1)))))
                .collect(),
        ),
    ] {
        t.forget_installed("w");
        for (path, to) in &faults {
            server.fault(path, &[Fault::Redirect(to.clone())]);
        }
        let run = t.run("w", &["install", "-v", "--jobs", "1"]);
        assert_eq!(run.code, 1, "{what}: {}", run.stderr);
        // The hop lines and what the run said of the failure (not `-v`'s other details).
        let said: Vec<&str> = run
            .stderr
            .lines()
            .filter(|l| {
                !l.contains("workspace snapshot") && !l.starts_with("installed ") && !l.starts_with("warning: retry")
            })
            .collect();
        transcripts.push(format!("## {what}\n{}", said.join("\n")));
    }
    let text = transcripts.join("\n");
    assert!(!text.contains("5ec7e75157"), "{text}");
    insta::assert_snapshot!(crate::support::masked(&text));
}

/// The Azure credential chain — a SAS, a key, a managed identity's token — is never used for a
/// storage account only the workspace names: refused before any request, with the way to name
/// it. Named by the user (`--registry`, `AZURE_STORAGE_ACCOUNT_NAME`), the same account is asked.
#[test]
fn an_azure_account_only_a_clone_names_gets_no_credential() {
    let t = TestContext::new();
    let store = Scripted::start(vec![Answer::new(404, Body::Fixed(Vec::new()))]);
    let identity = Scripted::start(vec![Answer::new(404, Body::Fixed(Vec::new()))]);
    t.superbuild("w", "members: [\"p/*\"]\nregistry: az://attackeracct/methods/a2c\n");
    t.canonical_repo("w/p/app", "1.0.0");
    let endpoint = format!("{}/attackeracct", store.url());
    let msi = format!("{}/metadata/identity/oauth2/token", identity.url());
    let sas = "sv=2022-11-02&ss=b&srt=sco&sp=rwdlac&se=2099-01-01T00:00:00Z&sig=dXNlcnMtb3duLXNhcw%3D%3D";
    let mut transcripts = Vec::new();
    for (what, credential) in [
        ("the user's SAS", ("AZURE_STORAGE_SAS_TOKEN", sas)),
        ("an account key", ("AZURE_STORAGE_ACCOUNT_KEY", "dXNlcnMtb3duLWtleQ==")),
        ("a managed identity", ("AZURE_MSI_ENDPOINT", msi.as_str())),
    ] {
        let env = [("AZURE_STORAGE_ENDPOINT", endpoint.as_str()), credential];
        let run = t.run_env("w", &["lock"], &env);
        transcripts.push(format!("## {what}\n{}", run.error_transcript()));
    }
    assert_eq!(
        store.heads(),
        Vec::<String>::new(),
        "the account the clone names was asked"
    );
    assert_eq!(identity.heads(), Vec::<String>::new(), "a token was asked for it");
    // A lock entry naming the other account beside the user's own registry: refused too.
    t.write(
        &layout::lock("w"),
        &format!(
            "version = 3\n\n[[method]]\nname = \"esys/a2c\"\nversion = \"1.0.0\"\nsource = \"az://attackeracct/methods/a2c/bundles/a2c-1.0.0.tar.gz\"\nsha256 = \"{}\"\nsize = 10\nformat = \"tar.gz\"\n",
            "0".repeat(64)
        ),
    );
    let users = Scripted::start(vec![Answer::new(404, Body::Fixed(Vec::new()))]);
    let users_endpoint = format!("{}/teamstore", users.url());
    let env = [
        ("AZURE_STORAGE_ENDPOINT", users_endpoint.as_str()),
        ("AZURE_STORAGE_SAS_TOKEN", sas),
    ];
    let run = t.run_env("w", &["install", "--registry", "az://teamstore/methods/a2c"], &env);
    transcripts.push(format!("## a lock entry\n{}", run.error_transcript()));
    assert!(
        !users.heads().iter().any(|h| h.contains("bundles/")),
        "the lock entry's bundle was asked: {:?}",
        users.heads()
    );
    insta::assert_snapshot!(transcripts.join("\n"));
    let env = [
        ("AZURE_STORAGE_ENDPOINT", endpoint.as_str()),
        ("AZURE_STORAGE_SAS_TOKEN", sas),
    ];
    // Named by the user, it is asked (and answers 404 here: no index).
    let run = t.run_env("w", &["lock", "--registry", "az://attackeracct/methods/a2c"], &env);
    run.failure();
    assert!(!store.heads().is_empty(), "the account the user named was not asked");
}

/// An S3 or Cloud Storage bucket a clone names is asked at the user's own endpoint only, with a
/// request signed for that one object: the credential never goes to a host the clone chose.
#[test]
fn a_bucket_a_clone_names_is_asked_at_the_users_endpoint_only() {
    for (kind, registry) in [("s3", "s3://clone-bucket/a2c"), ("gs", "gs://clone-bucket/a2c")] {
        let t = TestContext::new();
        let endpoint = Scripted::start(vec![Answer::new(404, Body::Fixed(Vec::new()))]);
        t.app_superbuild(registry);
        let url = endpoint.url();
        let env: Vec<(&str, &str)> = match kind {
            "s3" => vec![
                ("AWS_ENDPOINT_URL", url.as_str()),
                ("AWS_ACCESS_KEY_ID", "AKIDA2CTEST"),
                ("AWS_SECRET_ACCESS_KEY", "s3cret-key-for-a2c"),
            ],
            _ => vec![("STORAGE_EMULATOR_HOST", url.as_str())],
        };
        t.run_env("w", &["lock"], &env).failure();
        let heads = endpoint.heads();
        assert!(!heads.is_empty(), "{kind}: the user's endpoint was not asked");
        for head in &heads {
            let line = head.lines().next().unwrap_or_default();
            assert!(
                line.contains("/clone-bucket/") || line.contains("/clone%2Dbucket/"),
                "{kind}: {line}"
            );
        }
    }
}

/// Userinfo in a store's endpoint variable (`AWS_ENDPOINT_URL`, `AZURE_STORAGE_ENDPOINT`) is
/// never printed: errors and hints name the endpoint with `***@` in its place.
#[test]
fn userinfo_in_an_endpoint_variable_is_never_printed() {
    let t = TestContext::new();
    t.superbuild("w", "members: [\"p/*\"]\n");
    t.canonical_repo("w/p/app", "1.0.0");
    let mut transcripts = Vec::new();
    for (registry, env) in [
        (
            "s3://team-methods/a2c",
            vec![
                ("AWS_ENDPOINT_URL", "http://admin:hunter2-endpoint@127.0.0.1:9"),
                ("AWS_ACCESS_KEY_ID", "AKIDA2CTEST"),
                ("AWS_SECRET_ACCESS_KEY", "s3cret-key-for-a2c"),
                ("A2C_HTTP_RETRIES", "0"),
            ],
        ),
        (
            "az://teamstore/methods/a2c",
            vec![
                (
                    "AZURE_STORAGE_ENDPOINT",
                    "http://admin:hunter2-endpoint@127.0.0.1:9/teamstore",
                ),
                ("AZURE_STORAGE_ACCOUNT_NAME", "teamstore"),
                ("AZURE_STORAGE_ACCOUNT_KEY", "a2V5LWZvci1hMmMtdGVzdHM="),
                ("A2C_HTTP_RETRIES", "0"),
            ],
        ),
    ] {
        let run = t.run_env("w", &["lock", "--registry", registry, "--json"], &env);
        assert_eq!(run.code, 1, "{}", run.stderr);
        run.shows_no_credential(&["hunter2-endpoint", "admin:hunter2-endpoint"]);
        transcripts.push(run.error_transcript());
    }
    insta::assert_snapshot!(transcripts.join("\n"));
}
