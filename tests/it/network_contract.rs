//! One network contract for every request a2c makes, object_store's included: the user's
//! `A2C_HTTP_TIMEOUT` to connect (only a cloud's metadata service gets a second),
//! `A2C_HTTP_RETRIES` tries again, each told as a2c tells its own.

use std::time::{Duration, Instant};

use crate::support::TestContext;
use crate::support::scripted::{Answer, Body, Scripted, unanswering};

/// An object store that takes no connection is waited on for `A2C_HTTP_TIMEOUT`, as any
/// registry is (object_store's requests got one second: the metadata services' connect
/// timeout), and its failure is said as a2c's own.
#[test]
fn a_store_that_takes_no_connection_is_waited_on_for_the_users_timeout() {
    let t = TestContext::new();
    let endpoint = unanswering();
    let env = [
        ("AWS_ENDPOINT_URL", format!("http://{}", endpoint.address)),
        ("AWS_ACCESS_KEY_ID", "AKIDA2CTEST".to_string()),
        ("AWS_SECRET_ACCESS_KEY", "s3cret-key-for-a2c".to_string()),
        ("A2C_HTTP_TIMEOUT", "4".to_string()),
        ("A2C_HTTP_RETRIES", "0".to_string()),
    ];
    let started = Instant::now();
    let run = t.run_env(".", &["yank", "1.0.0", "--registry", "s3://team-bucket/a2c"], &env);
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(3500),
        "gave up after {took:?}: {}",
        run.stderr
    );
    assert!(took < Duration::from_secs(30), "{took:?}");
    insta::assert_snapshot!(run.error_transcript());
}

/// A store that answers 503 twice, then the index: each retry told (as net tells its own, with
/// its number and `A2C_HTTP_RETRIES`), then success.
#[test]
fn a_store_that_fails_twice_is_tried_again_and_each_retry_told() {
    let t = TestContext::new();
    t.method_tree("trees/1.0.0", "1.0.0");
    t.ok(".", &["pack", "trees/1.0.0", "--version", "1.0.0", "--registry", "reg"]);
    let index = fs_err::read(t.path("reg/index/esys/a2c.json")).unwrap();
    let ok = Answer::new(200, Body::Fixed(index))
        .header("Last-Modified", "Sun, 06 Dec 2026 10:00:00 GMT")
        .header("ETag", "\"a2c-index-1\"")
        .header("Content-Type", "application/json");
    let unavailable = Answer::new(503, Body::Fixed(b"<Error><Code>SlowDown</Code></Error>".to_vec()));
    let store = Scripted::start(vec![unavailable.clone(), unavailable, ok]);
    t.superbuild("w", "members: [\"p/*\"]\nregistry: s3://team-bucket/a2c\n");
    t.canonical_repo("w/p/app", "1.0.0");
    let env = [
        ("AWS_ENDPOINT_URL", store.url()),
        ("AWS_ACCESS_KEY_ID", "AKIDA2CTEST".to_string()),
        ("AWS_SECRET_ACCESS_KEY", "s3cret-key-for-a2c".to_string()),
        ("A2C_HTTP_RETRIES", "3".to_string()),
    ];
    let run = t.run_env("w", &["outdated"], &env);
    run.success();
    let retries: Vec<String> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("warning: retry"))
        .map(|l| {
            // The wait is jittered: its figure is masked.
            let (head, rest) = l.split_once(" in ").unwrap();
            let (_, tail) = rest.split_once(" s: ").unwrap();
            crate::support::masked(&format!("{head} in [WAIT] s: {tail}"))
        })
        .collect();
    insta::assert_snapshot!(retries.join("\n"));
    assert_eq!(store.heads().len(), 3, "{:?}", store.heads());
}
