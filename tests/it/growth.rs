//! Linear in members, proven by growth: every command that walks the members runs at N and 4N
//! members, and its CPU time (user + system of the process and its children, median of three
//! runs, measured by bash's `times` to the millisecond) may grow at most 6× — a ratio within one
//! test, never a time. A per-member check added anywhere adds its cost here; a quadratic one
//! (doctor's member check was: 1.2 s at 5,000 members) fails it.

use crate::support::TestContext;

/// The smaller superbuild: large enough that per-member work, not start-up, dominates.
const N: usize = 500;
/// How much more CPU four times the members may take.
const MAX_RATIO: f64 = 6.0;

const VERSIONS: [&str; 3] = ["1.0.0", "1.1.0", "2.0.0"];

/// A committed git repository at `dir` that adopted `version` (a template copied per member:
/// `git init` for each of thousands would dominate the test).
fn template(t: &TestContext, rel: &str, version: &str) {
    let dir = t.path(rel);
    fs_err::create_dir_all(&dir).unwrap();
    crate::support::git(&dir, &["init", "-q", "--template=", "."]);
    t.write(
        &format!("{rel}/.tools/esys/a2c/adoption.yaml"),
        &format!("schema_version: 2\ntool_version: {version}\ndelivery: package\n"),
    );
    crate::support::git(&dir, &["add", "."]);
    crate::support::git(&dir, &["commit", "-q", "-m", "adopt"]);
}

/// A superbuild `rel` of `n` members pinning the three versions in turn, each recorded by W
/// as a submodule (a gitlink, as a superbuild records its repositories), locked and installed
/// from `../reg`; `extra` is added to its marker.
fn superbuild_of(t: &TestContext, rel: &str, n: usize, extra: &str) {
    t.superbuild(rel, &format!("members: [\"p/*\"]\nregistry: ../reg\n{extra}"));
    let mut links = String::new();
    for i in 0..n {
        let version = VERSIONS[i % VERSIONS.len()];
        let template = t.path(&format!("tpl/{version}"));
        crate::support::copy_tree(&template, &t.path(&format!("{rel}/p/m{i:05}")));
        let head = crate::support::git(&template, &["rev-parse", "HEAD"]);
        links.push_str(&format!("160000 {} 0\tp/m{i:05}\n", head.trim()));
    }
    let mut index = std::process::Command::new("git");
    index
        .args(["update-index", "--index-info"])
        .current_dir(t.path(rel))
        .stdin(std::process::Stdio::piped());
    let mut child = index.spawn().unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), links.as_bytes()).unwrap();
    assert!(child.wait().unwrap().success(), "git update-index");
    t.ok(rel, &["lock"]);
    t.ok(rel, &["install"]);
}

/// The CPU seconds (user + system, the process and its children) of `a2c args` in `cwd`, with
/// `stdin` as its standard input: bash's `times` of the one child it waited for.
fn cpu(t: &TestContext, cwd: &str, args: &[&str], stdin: Option<&str>) -> f64 {
    let words: Vec<String> = args.iter().map(|a| shlex::try_quote(a).unwrap().into_owned()).collect();
    let input = stdin.map_or("/dev/null".to_string(), |s| shlex::try_quote(s).unwrap().into_owned());
    let script = format!("a2c {} < {input} > /dev/null 2>&1 || true; times", words.join(" "));
    let out = t.bash(cwd, &script).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    // The second line is the children's: `0m0.045s 0m0.012s`.
    let children = text
        .lines()
        .nth(1)
        .unwrap_or_else(|| panic!("no `times` output: {text}"));
    children
        .split_whitespace()
        .map(|field| {
            let (m, s) = field.trim_end_matches('s').split_once('m').unwrap();
            m.parse::<f64>().unwrap() * 60.0 + s.parse::<f64>().unwrap()
        })
        .sum()
}

fn median_cpu(t: &TestContext, cwd: &str, args: &[&str], stdin: Option<&str>) -> f64 {
    let mut runs: Vec<f64> = (0..3).map(|_| cpu(t, cwd, args, stdin)).collect();
    runs.sort_by(f64::total_cmp);
    runs[1]
}

/// One MCP session's input: the handshake, then `method` with `params`.
fn mcp_session(t: &TestContext, name: &str, method: &str, params: serde_json::Value) -> String {
    let lines = [
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "growth", "version": "1"}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": method, "params": params}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    t.write(name, &text).display().to_string()
}

#[test]
fn every_command_that_walks_the_members_grows_linearly() {
    let t = TestContext::new();
    for v in VERSIONS {
        t.publish("reg", v, "tar.gz");
        template(&t, &format!("tpl/{v}"), v);
    }
    let (small, large) = ("small", "large");
    superbuild_of(&t, small, N, "");
    superbuild_of(&t, large, 4 * N, "");
    // `migrate --all --dry-run` asks git about each member (about 11 ms each): it is measured at
    // a fifth of the size, still dominated by that per-member work.
    let (small_few, large_few) = ("small-few", "large-few");
    superbuild_of(&t, small_few, N / 5, "");
    superbuild_of(&t, large_few, 4 * N / 5, "");
    // The agents' projection (each member's rules and prompts written for three runtimes,
    // receipts read and files hashed by sync, list and doctor), at a fifth of the size too.
    let (small_agents, large_agents) = ("small-agents", "large-agents");
    let agents = "agents: [claude, copilot, cursor]\n";
    superbuild_of(&t, small_agents, N / 5, agents);
    superbuild_of(&t, large_agents, 4 * N / 5, agents);
    // Both read alike: an install past the racy margin writes each one's workspace snapshot
    // (a path changed less than a second before a run is never recorded), which every later
    // command checks instead of walking the members.
    std::thread::sleep(crate::snapshot::SETTLE);
    for w in [small, large, small_few, large_few, small_agents, large_agents] {
        t.ok(w, &["install"]);
        t.ok(w, &["-v", "list"]).says("the members were not walked");
    }
    let resources = mcp_session(&t, "mcp-resources.jsonl", "resources/list", serde_json::json!({}));
    let list = mcp_session(
        &t,
        "mcp-list.jsonl",
        "tools/call",
        serde_json::json!({"name": "list", "arguments": {}}),
    );
    let resolve = mcp_session(
        &t,
        "mcp-resolve.jsonl",
        "tools/call",
        serde_json::json!({"name": "resolve", "arguments": {"path": "p/m00001"}}),
    );
    // Each command, its arguments and its standard input.
    let commands: Vec<(&str, Vec<&str>, Option<&str>)> = vec![
        ("install (no-op)", vec!["install"], None),
        ("install --locked", vec!["install", "--locked"], None),
        ("lock --check", vec!["lock", "--check"], None),
        ("list", vec!["list"], None),
        ("outdated --offline", vec!["outdated", "--offline"], None),
        ("doctor", vec!["doctor"], None),
        ("gc --dry-run", vec!["gc", "--dry-run"], None),
        ("workspace members", vec!["workspace", "members"], None),
        ("resolve", vec!["-C", "p/m00001", "resolve"], None),
        ("agents list", vec!["agents", "list"], None),
        ("install, agents projected", vec!["install"], None),
        ("agents list, projected", vec!["agents", "list"], None),
        ("agents sync, projected", vec!["agents", "sync"], None),
        ("doctor, agents projected", vec!["doctor"], None),
        (
            "migrate version --all --dry-run",
            vec!["migrate", "version", "--to", "2.0.0", "--all", "--dry-run"],
            None,
        ),
        ("mcp resources/list", vec!["mcp"], Some(resources.as_str())),
        ("mcp list", vec!["mcp"], Some(list.as_str())),
        ("mcp resolve", vec!["mcp"], Some(resolve.as_str())),
    ];
    let mut rows = Vec::new();
    let mut failed = Vec::new();
    for (name, args, stdin) in &commands {
        let ((a, b), n) = if name.starts_with("migrate") {
            ((small_few, large_few), N / 5)
        } else if name.contains("projected") {
            ((small_agents, large_agents), N / 5)
        } else {
            ((small, large), N)
        };
        let at_n = median_cpu(&t, a, args, *stdin).max(0.001);
        let at_4n = median_cpu(&t, b, args, *stdin);
        let ratio = at_4n / at_n;
        let row = format!("{name}: {:.3} s at {n}, {:.3} s at {}: {ratio:.2}x", at_n, at_4n, 4 * n);
        if ratio > MAX_RATIO {
            failed.push(row.clone());
        }
        rows.push(row);
    }
    assert!(
        failed.is_empty(),
        "CPU time grew more than {MAX_RATIO}x for 4x the members:\n{}\n\nall:\n{}",
        failed.join("\n"),
        rows.join("\n")
    );
    eprintln!("{}", rows.join("\n"));
}
