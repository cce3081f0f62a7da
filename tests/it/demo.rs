//! The bundled demo superbuild the README's quick start runs on.

use crate::common::TestContext;

#[test]
fn demo_superbuild_lists_its_members() {
    let t = TestContext::new();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/make-demo.sh");
    let out = std::process::Command::new(script).arg(t.path("demo")).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let run = t.run("demo/superbuild/products/app", &["workspace", "members", "--json"]);
    run.success();
    let doc = run.json();
    assert_eq!(doc["workspace"], t.shown("demo/superbuild"));
    let rel: Vec<&str> = doc["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["relative"].as_str().unwrap())
        .collect();
    assert_eq!(rel, [".", "libs/core", "libs/util", "products/app", "products/web"]);
    assert_eq!(doc["members"][1]["layout"], "legacy");
    assert!(doc["versions"].as_array().unwrap().len() >= 3);
}
