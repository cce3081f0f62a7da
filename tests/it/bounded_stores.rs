//! Every read from an object store is bounded as net's own are: an index, a signature or an
//! error body at `A2C_MAX_DOCUMENT_BYTES` whatever `Content-Length` says, a credential's token
//! answer at a few hundred KiB, a trickle cut by the low-speed check — for `s3://`, `gs://` and
//! `az://`, and for the token answers of IMDSv2, the container endpoint, Google's metadata
//! server and Azure's managed identity. Each hostile store is a scripted server on loopback
//! with a bounded sender; a2c runs under `prlimit --as` (2 GiB) and GNU time.

use std::time::Duration;

use crate::support::TestContext;
use crate::support::scripted::{Answer, Body, Scripted};

/// Sent at most by an "endless" body: four times the default document cap.
const ENDLESS: u64 = 256 << 20;

/// Peak memory an aborted read may leave: well under what reading the body would take.
const PEAK_KIB: u64 = 200 * 1024;

/// The environment that points each kind at `store` (with credentials that need no exchange),
/// and the registry to lock from.
fn kind_at(kind: &str, store: &str) -> (Vec<(&'static str, String)>, String) {
    match kind {
        "s3" => (
            vec![
                ("AWS_ENDPOINT_URL", store.to_string()),
                ("AWS_ACCESS_KEY_ID", "AKIDA2CTEST".into()),
                ("AWS_SECRET_ACCESS_KEY", "s3cret-key-for-a2c".into()),
            ],
            "s3://team-methods/a2c".into(),
        ),
        "gs" => (
            vec![("STORAGE_EMULATOR_HOST", store.to_string())],
            "gs://team-methods/a2c".into(),
        ),
        "az" => (
            vec![
                ("AZURE_STORAGE_ENDPOINT", format!("{store}/teamstore")),
                ("AZURE_STORAGE_ACCOUNT_NAME", "teamstore".into()),
                ("AZURE_STORAGE_ACCOUNT_KEY", "a2V5LWZvci1hMmMtdGVzdHM=".into()),
            ],
            "az://teamstore/methods/a2c".into(),
        ),
        _ => unreachable!(),
    }
}

/// `a2c lock --registry REGISTRY` in a superbuild pinning 1.0.0, with `env`, under a 2 GiB
/// address-space limit: its transcript and peak RSS (KiB), or `None` when the programs are
/// missing (after the SKIPPED line).
fn lock_limited(t: &TestContext, registry: &str, env: &[(&str, String)]) -> Option<(crate::support::Run, u64)> {
    if !t.path("w").exists() {
        t.superbuild("w", "members: [\"p/*\"]\n");
        t.canonical_repo("w/p/app", "1.0.0");
    }
    let (out, kib) = t.run_limited("w", &["lock", "--registry", registry], env, 2 << 30)?;
    Some((crate::support::Run::from_output(out, &t.root), kib))
}

/// Each kind's index read against a store whose answers never end: the read stops at the cap,
/// the process lives, and the error names the object.
#[test]
fn an_endless_or_lying_answer_from_a_store_is_cut_at_the_document_cap() {
    let hostile = [
        (
            "Content-Length: 200 beside an endless chunked body",
            Answer::new(200, Body::Chunked(ENDLESS)).header("Content-Length", "200"),
        ),
        (
            "no length and an endless body",
            Answer::new(200, Body::Endless(ENDLESS)),
        ),
        (
            "an endless error body",
            Answer::new(500, Body::Endless(ENDLESS)).header("Content-Type", "application/xml"),
        ),
        ("an endless refusal", Answer::new(403, Body::Chunked(ENDLESS))),
    ];
    let mut transcripts = Vec::new();
    for kind in ["s3", "gs", "az"] {
        for (what, answer) in &hostile {
            let t = TestContext::new();
            let store = Scripted::start(vec![answer.clone()]);
            let (mut env, registry) = kind_at(kind, &store.url());
            env.push(("A2C_HTTP_RETRIES", "0".into()));
            let Some((run, kib)) = lock_limited(&t, &registry, &env) else {
                return;
            };
            assert_eq!(run.code, 1, "{kind}, {what}: {}", run.stderr);
            assert!(kib < PEAK_KIB, "{kind}, {what}: peak RSS {kib} KiB\n{}", run.stderr);
            transcripts.push(format!("## {kind}: {what}\n{}", run.error_transcript()));
        }
    }
    insta::assert_snapshot!(transcripts.join("\n"));
}

/// A `Content-Length` the store lies with (200 announced, far more sent) reads 200 bytes and
/// no more: what follows is never read.
#[test]
fn a_lying_content_length_reads_no_further_than_it_says() {
    let t = TestContext::new();
    let store = Scripted::start(vec![
        Answer::new(200, Body::Endless(ENDLESS)).header("Content-Length", "200"),
    ]);
    let (env, registry) = kind_at("s3", &store.url());
    let Some((run, kib)) = lock_limited(&t, &registry, &env) else {
        return;
    };
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(kib < PEAK_KIB, "peak RSS {kib} KiB");
    insta::assert_snapshot!(run.error_transcript());
}

/// The environment and registry of a case, from the service's URL.
type Setup = fn(&str, &TestContext) -> (Vec<(&'static str, String)>, String);

/// The token answers of each cloud's credential services, endless: cut at the small cap for a
/// credential, said as the credentials' failure.
#[test]
fn an_endless_token_answer_is_cut_small() {
    let mut transcripts = Vec::new();
    let cases: [(&str, Setup); 4] = [
        ("IMDSv2", |url, _| {
            (
                vec![
                    ("AWS_ENDPOINT_URL", "http://127.0.0.1:9".into()),
                    ("AWS_EC2_METADATA_SERVICE_ENDPOINT", url.to_string()),
                ],
                "s3://team-methods/a2c".into(),
            )
        }),
        ("the container endpoint", |url, t| {
            let token = t.write("pod-token", "pod-identity-token");
            (
                vec![
                    ("AWS_ENDPOINT_URL", "http://127.0.0.1:9".into()),
                    ("AWS_CONTAINER_CREDENTIALS_FULL_URI", format!("{url}/v1/credentials")),
                    ("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", token.display().to_string()),
                ],
                "s3://team-methods/a2c".into(),
            )
        }),
        ("Google's metadata server", |url, _| {
            (
                vec![
                    ("GOOGLE_BASE_URL", "http://127.0.0.1:9".into()),
                    ("GCE_METADATA_HOST", url.trim_start_matches("http://").to_string()),
                ],
                "gs://team-methods/a2c".into(),
            )
        }),
        ("Azure's managed identity", |url, _| {
            (
                vec![
                    ("AZURE_STORAGE_ENDPOINT", "http://127.0.0.1:9/teamstore".into()),
                    ("AZURE_STORAGE_ACCOUNT_NAME", "teamstore".into()),
                    ("AZURE_MSI_ENDPOINT", format!("{url}/metadata/identity/oauth2/token")),
                ],
                "az://teamstore/methods/a2c".into(),
            )
        }),
    ];
    for (what, setup) in cases {
        let t = TestContext::new();
        let service = Scripted::start(vec![
            Answer::new(200, Body::Endless(ENDLESS)).header("Content-Type", "application/json"),
        ]);
        let (mut env, registry) = setup(&service.url(), &t);
        env.push(("A2C_HTTP_RETRIES", "0".into()));
        let Some((run, kib)) = lock_limited(&t, &registry, &env) else {
            return;
        };
        assert_eq!(run.code, 1, "{what}: {}", run.stderr);
        assert!(kib < PEAK_KIB, "{what}: peak RSS {kib} KiB\n{}", run.stderr);
        assert!(!service.heads().is_empty(), "{what}: the service was never asked");
        transcripts.push(format!("## {what}\n{}", run.error_transcript()));
    }
    insta::assert_snapshot!(transcripts.join("\n"));
}

/// An index trickled at a byte every half second fails once the low-speed window is over, as a
/// trickled index over plain HTTPS does.
#[test]
fn a_trickled_index_fails_within_the_low_speed_window() {
    let t = TestContext::new();
    let store = Scripted::start(vec![Answer::new(
        200,
        Body::Trickle {
            every: Duration::from_millis(500),
            n: 1000,
        },
    )]);
    let (mut env, registry) = kind_at("s3", &store.url());
    env.extend([
        ("A2C_HTTP_LOW_SPEED", "100".to_string()),
        ("A2C_HTTP_LOW_SPEED_TIME", "2".to_string()),
        ("A2C_HTTP_RETRIES", "0".to_string()),
    ]);
    let started = std::time::Instant::now();
    let Some((run, _)) = lock_limited(&t, &registry, &env) else {
        return;
    };
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
    // The count the message gives is below what the window asks (2 s at 100 bytes/s).
    let bytes: u32 = regex::Regex::new(r"trickled: ([0-9]+) bytes in the last 2 s")
        .unwrap()
        .captures(&run.stderr)
        .map(|c| c[1].parse().unwrap())
        .unwrap_or_else(|| panic!("no count in: {}", run.stderr));
    assert!(bytes < 200, "{bytes} bytes");
    insta::assert_snapshot!(run.error_transcript());
}
