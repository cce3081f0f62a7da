//! `a2c mcp`, driven by the official MCP Python SDK as a real client over stdio
//! (tests/it/mcp_client.py), and by raw JSON-RPC lines for the protocol's edge cases.

use crate::support::{TestContext, at_pinned_version, items, layout, require_program, strings_of};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::support::{assert_contains, text_of};
use serde_json::{Value, json};

const CLIENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/mcp_client.py");

/// A new test context when `python3` on PATH has the MCP SDK; `None` after the SKIPPED line.
fn with_sdk() -> Option<TestContext> {
    sdk().then(TestContext::new)
}

/// Whether `python3` on PATH has the MCP SDK, or `false` after the SKIPPED line.
fn sdk() -> bool {
    let ok = Command::new(crate::support::program("python3"))
        .args(["-c", "import mcp.client.stdio"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        require_program("the MCP Python SDK `mcp` (pip install -r .ci/requirements.txt; .ci/run does it)");
    }
    ok
}

/// A superbuild `w` on registry `reg` whose members pin 1.0.0 (`p/app`) and 2.0.0 (`p/web`),
/// and, with `with_new`, 3.0.0 (`p/new`); committed and locked.
fn superbuild(t: &TestContext, with_new: bool) {
    t.superbuild("w", "members: [\"p/*\"]\nregistry: ../reg\n");
    let mut pins = vec![("app", "1.0.0"), ("web", "2.0.0")];
    if with_new {
        pins.push(("new", "3.0.0"));
    }
    for (_, v) in &pins {
        t.publish("reg", v, "tar.gz");
    }
    for (m, v) in &pins {
        t.canonical_repo(&format!("w/p/{m}"), v);
        t.write(&format!("w/p/{m}/.gitignore"), ".tools_local/\n");
        t.commit_all(&format!("w/p/{m}"));
    }
    t.run("w", &["lock"]).success();
}

/// Runs the Python client's `scenario` against `a2c mcp` started in `w`: its report.
fn client(t: &TestContext, scenario: &str) -> Value {
    let a2c = env!("CARGO_BIN_EXE_a2c");
    let mut cmd = Command::new(crate::support::program("python3"));
    t.environment(&mut cmd);
    // a2c on PATH, as an installed one is: the client runs the commands hints print.
    let bin = std::path::Path::new(a2c).parent().unwrap().display().to_string();
    cmd.env("PATH", format!("{bin}:{}", std::env::var("PATH").unwrap_or_default()));
    cmd.args([CLIENT, a2c, &t.path("w").display().to_string(), scenario]);
    client_report(&mut cmd)
}

/// What an MCP client the test runs reports: the JSON document on the last line it prints,
/// once it exited successfully.
fn client_report(client: &mut Command) -> Value {
    let out = client.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the MCP client failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn text(read: &Value) -> &str {
    read["ok"]["contents"][0]["text"].as_str().unwrap_or_default()
}

/// Everything a read-only server offers, through the real SDK: each repository gets its own
/// version's files and prompts, hostile URIs and the writing tools are refused, a repository
/// whose contract has no installed tree gets the finding (never another version's files), and
/// a migrate made with the CLI is noticed.
#[test]
fn an_agent_gets_its_repositorys_method_through_the_python_sdk() {
    let Some(t) = with_sdk() else { return };
    superbuild(&t, true);
    t.run("w", &["install"]).success();
    let store = t.path(&layout::store("w"));
    fs_err::remove_dir_all(store.join("3.0.0")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", store.join("1.0.0/rules/link.md")).unwrap();
    // A link in the workspace to a repository outside it.
    t.canonical_repo("outside-repo", "2.0.0");
    std::os::unix::fs::symlink(t.path("outside-repo"), t.path("w/p/escape")).unwrap();
    let r = client(&t, "read");
    assert_eq!(r["server"]["name"], "a2c", "{r}");
    assert_eq!(
        r["tools"],
        json!(["doctor", "list", "migrate_plan", "outdated", "resolve", "workspace"])
    );
    // Each tool declares its command's schema, and the SDK checked every successful result.
    assert_eq!(r["output_schemas"]["list"], "`a2c list --json`", "{r}");
    assert!(
        r["output_schemas"]["workspace"].as_str().unwrap().contains("found_by"),
        "{r}"
    );
    for tool in ["workspace", "resolve", "list", "outdated", "migrate_plan"] {
        assert!(!r[tool]["is_error"].as_bool().unwrap(), "{tool} succeeds here: {r}");
    }
    let resources: Vec<&str> = items(&r["resources"]).iter().map(|u| u.as_str().unwrap()).collect();
    for uri in [
        "a2c://method/p/app/-/rules/core.md",
        "a2c://method/p/web/-/prompts/review.md",
    ] {
        assert!(resources.contains(&uri), "{uri}: {resources:?}");
    }
    assert!(
        !resources.iter().any(|u| u.contains("/p/new/") || u.contains(".a2c-")),
        "{resources:?}"
    );
    assert_eq!(r["templates"], json!(["a2c://method/{+repo}/-/{+path}"]));
    let prompts = strings_of(&r, "prompts", "name");
    assert_eq!(prompts, ["p/app/review", "p/web/review"], "{r}");
    assert_eq!(
        r["prompt"]["ok"]["messages"][0]["content"]["text"], "Review under method 1.0.0.\n",
        "{r}"
    );
    // Tools.
    assert_eq!(
        r["workspace"]["structured"]["members"].as_array().unwrap().len(),
        3,
        "{r}"
    );
    let resolved = &r["resolve"]["structured"];
    assert_eq!(
        (resolved["version"].as_str(), resolved["write_contract"].as_str()),
        (Some("1.0.0"), Some("1.0.0"))
    );
    assert!(
        resolved["root"]
            .as_str()
            .unwrap()
            .ends_with(".tools_local/esys/a2c/1.0.0"),
        "{r}"
    );
    let new = &r["resolve:{\"path\": \"p/new\"}"];
    assert!(new["is_error"].as_bool().unwrap(), "{r}");
    // The resolution (`root` null) with why, as text: no longer the declared document, so
    // no structured content.
    let said: Value = serde_json::from_str(new["text"][0].as_str().unwrap()).unwrap();
    assert!(
        new["structured"].is_null()
            && said["root"].is_null()
            && new["error"]["message"].as_str().unwrap().contains("3.0.0"),
        "{r}"
    );
    let outside = &r["resolve:{\"path\": \"../outside\"}"];
    assert!(outside["is_error"].as_bool().unwrap(), "{r}");
    assert!(
        outside["error"]["message"].as_str().unwrap().contains("is outside"),
        "{r}"
    );
    let escape = &r["resolve:{\"path\": \"p/escape\"}"];
    assert!(escape["is_error"].as_bool().unwrap(), "{r}");
    assert!(escape["error"]["message"].as_str().unwrap().contains("link"), "{r}");
    assert!(!r["list"]["is_error"].as_bool().unwrap(), "{r}");
    assert!(r["list"]["structured"]["versions"].is_array(), "{r}");
    assert!(r["doctor"]["structured"]["findings"].is_array(), "{r}");
    assert!(
        r["migrate_plan"]["structured"]["plan"]
            .as_str()
            .unwrap()
            .starts_with("sha256:"),
        "{r}"
    );
    for writing in ["install", "migrate_apply"] {
        assert!(r[writing]["is_error"].as_bool().unwrap(), "{writing}: {r}");
        assert!(r[writing]["structured"].is_null(), "{writing}: {r}");
        let doc: Value = serde_json::from_str(r[writing]["text"][0].as_str().unwrap()).unwrap();
        crate::cli_surface::validate("error", &doc);
        assert_eq!(r[writing]["error"]["code"], "read-only", "{writing}: {r}");
        assert!(
            r[writing]["error"]["hint"]
                .as_str()
                .unwrap()
                .contains("a2c mcp --allow-write")
        );
    }
    // Resources: each repository its own version; every hostile one refused.
    let reads = &r["reads"];
    assert_eq!(
        text(&reads["a2c://method/p/app/-/rules/core.md"]),
        "# Core rules of 1.0.0\n"
    );
    assert_eq!(
        text(&reads["a2c://method/p/web/-/rules/core.md"]),
        "# Core rules of 2.0.0\n"
    );
    for (uri, why) in [
        ("a2c://method/p/app/-/../../../../etc/passwd", "`..`"),
        ("a2c://method/p/app/-/.a2c-receipt.json", "bookkeeping"),
        ("a2c://method/p/app/-/rules/link.md", "link"),
        ("a2c://method/p/new/-/rules/core.md", "no method tree"),
        ("file:///etc/passwd", "not an a2c resource"),
    ] {
        let e = reads[uri]["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{uri}: {}", reads[uri]));
        assert!(e.contains(why), "{uri}: {e}");
        assert!(!e.contains("root:x:0"), "{uri}: {e}");
    }
    // The CLI migrates p/app: the server notices, and p/app now reads 2.0.0's files.
    assert_eq!(r["cli_migrate"], 0, "{r}");
    let notes = r["notifications"].to_string();
    assert!(notes.contains("list_changed"), "{r}");
    assert_eq!(text(&r["after_migrate"]), "# Core rules of 2.0.0\n", "{r}");
}

/// With `--allow-write`: `install`, and `migrate_apply` of exactly the digest `migrate_plan`
/// gave (another digest refused, nothing written).
#[test]
fn with_allow_write_an_agent_installs_and_applies_the_approved_plan() {
    let Some(t) = with_sdk() else { return };
    superbuild(&t, false);
    let r = client(&t, "write");
    let tools: Vec<&str> = items(&r["tools"]).iter().map(|t| t.as_str().unwrap()).collect();
    assert!(tools.contains(&"install") && tools.contains(&"migrate_apply"), "{r}");
    assert_eq!(r["output_schemas"]["install"], "`a2c install --json`", "{r}");
    assert!(!r["install"]["is_error"].as_bool().unwrap(), "{r}");
    assert!(t.has_installed("w", "1.0.0", "rules/core.md"));
    assert!(r["apply_wrong"]["is_error"].as_bool().unwrap(), "{r}");
    // The agent cannot approve its own plan: the right digest is refused until the user
    // approves it in a terminal, with the command the hint gives; the agent's own run of that
    // command (no terminal) is refused.
    assert!(r["apply_unapproved"]["is_error"].as_bool().unwrap(), "{r}");
    assert_eq!(r["apply_unapproved"]["error"]["code"], "not-approved", "{r}");
    let unapproved = r["apply_unapproved"]["error"]["message"].as_str().unwrap();
    assert!(unapproved.contains("has not approved the plan"), "{r}");
    // What the client recorded at `value` holds `part`.
    let holds = |value: &serde_json::Value, part: &str| {
        assert!(value.as_str().unwrap().contains(part), "`{part}` in {value}, of {r}");
    };
    holds(&r["record_after_unapproved"], "tool_version: 1.0.0"); // nothing applied before the approval
    let command = r["approve_command"].as_str().unwrap();
    assert!(command.starts_with("a2c -C "), "{r}");
    holds(&r["approve_command"], "--approve sha256:");
    assert_eq!(r["approve_by_agent"]["code"], 1, "{r}");
    holds(&r["approve_by_agent"]["stderr"], "standard input is not a terminal");
    assert_eq!(r["approve_by_user"]["code"], 0, "{r}");
    holds(&r["approve_by_user"]["out"], "approved plan sha256:");
    assert!(!r["apply"]["is_error"].as_bool().unwrap(), "{r}");
    let record = fs_err::read_to_string(t.path("w/p/app/.tools/esys/a2c/adoption.yaml")).unwrap();
    assert!(record.contains("tool_version: 2.0.0"), "{record}");
}

/// `a2c mcp` driven by raw JSON-RPC lines: each answer is read with a timeout.
struct Raw {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl Raw {
    fn start(cmd: &mut Command) -> Self {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel::<String>();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Self { child, stdin, lines }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn recv(&self) -> Value {
        let line = self.lines.recv_timeout(Duration::from_secs(20)).expect("an answer");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout holds a non-protocol line ({e}): {line}"))
    }

    /// `initialize` and `notifications/initialized`.
    fn initialize(&mut self) {
        self.send(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#,
        );
        assert_eq!(self.recv()["result"]["serverInfo"]["name"], "a2c");
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    }

    /// Closes stdin and waits for the server to end; its status and stderr.
    fn finish(mut self) -> (std::process::ExitStatus, String) {
        drop(self.stdin.take());
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut self.child.stderr.take().unwrap(), &mut stderr).unwrap();
        (self.child.wait().unwrap(), stderr)
    }
}

/// Raw JSON-RPC lines: bad JSON, a JSON value that is no message, an unknown method, a call
/// before `initialize` and a request past the line bound each get a protocol error, and the
/// server keeps serving; nothing but protocol lines reaches stdout.
#[test]
fn protocol_edge_cases_get_errors_and_the_server_keeps_serving() {
    let t = TestContext::new();
    superbuild(&t, false);
    let mut raw = Raw::start(t.cmd("w").arg("mcp"));
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    let early = raw.recv();
    assert_eq!(early["id"], 1, "{early}");
    assert!(early["error"]["code"].is_i64(), "a call before initialize: {early}");
    raw.send(
        r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#,
    );
    assert_eq!(raw.recv()["result"]["serverInfo"]["name"], "a2c");
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    raw.send("{not json");
    assert_eq!(raw.recv()["error"]["code"], -32700);
    raw.send("42");
    assert_eq!(raw.recv()["error"]["code"], -32600);
    raw.send(r#"{"jsonrpc":"2.0","id":3,"method":"no/such/method"}"#);
    let unknown = raw.recv();
    assert_eq!(
        (unknown["id"].clone(), unknown["error"]["code"].clone()),
        (json!(3), json!(-32601))
    );
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{{"name":"{}"}}}}"#,
        "x".repeat(3 << 20)
    );
    raw.send(&huge);
    let refused = raw.recv();
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(
        refused.to_string().len() < 1000,
        "the refusal does not echo the request"
    );
    raw.send(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"no-such-tool"}}"#);
    assert!(raw.recv()["error"]["message"].as_str().unwrap().contains("no tool"));
    raw.send(r#"{"jsonrpc":"2.0","id":6,"method":"tools/list"}"#);
    let tools = raw.recv();
    assert_eq!(tools["id"], 6, "{tools}");
    assert!(tools["result"]["tools"].as_array().unwrap().len() >= 6, "{tools}");
    let (status, _) = raw.finish();
    assert!(status.success(), "the server ends when its stdin closes: {status}");
}

/// A prompt of 20,000 `{{a}}` asked for with a 100 KB value would render 2 GB: the request is
/// answered with an error naming the cap, the server keeps serving, and its peak RSS stays
/// small (GNU time; `prlimit --as` keeps a regression from taking the machine down).
#[test]
fn a_prompt_request_cannot_amplify_the_answer() {
    let t = TestContext::new();
    t.superbuild("w", "members: [\"p/*\"]\nregistry: ../reg\n");
    t.method_tree("trees/1.0.0", "1.0.0");
    let body = "{{a}}".repeat(20_000);
    t.write(
        "trees/1.0.0/prompts/amp.md",
        &format!("---\narguments: [a, b]\n---\n{body}"),
    );
    t.pack("trees/1.0.0", "1.0.0", "reg", "tar.gz");
    t.canonical_repo("w/p/app", "1.0.0");
    t.run("w", &["install"]).success();
    if !std::path::Path::new("/usr/bin/time").exists() {
        return require_program("time (GNU time at /usr/bin/time)");
    }
    let a2c = t.cmd("w/p/app");
    let mut cmd = Command::new("prlimit");
    cmd.args(["--as=4294967296", "--", "/usr/bin/time", "-f", "peak-rss-kib=%M"])
        .arg(a2c.get_program())
        .arg("mcp")
        .current_dir(t.path("w/p/app"));
    for (k, v) in a2c.get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    let mut raw = Raw::start(&mut cmd);
    raw.initialize();
    let ask = |id: u32, a: &str, b: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "prompts/get",
               "params": {"name": "amp", "arguments": {"a": a, "b": b}}})
        .to_string()
    };
    raw.send(&ask(1, &"x".repeat(100_000), ""));
    let refused = raw.recv();
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("more than 4194304"),
        "{}",
        &refused.to_string()[..refused.to_string().len().min(2000)]
    );
    raw.send(&ask(2, "{{b}}", "X"));
    let fine = raw.recv();
    let text = fine["result"]["messages"][0]["content"]["text"].as_str().unwrap();
    assert_eq!(text, "{{b}}".repeat(20_000), "a value is never read again");
    let (status, stderr) = raw.finish();
    assert!(status.success(), "{stderr}");
    let kib: u64 = stderr
        .lines()
        .find_map(|l| l.strip_prefix("peak-rss-kib="))
        .expect("GNU time reports the peak RSS")
        .trim()
        .parse()
        .unwrap();
    assert!(kib < 120 << 10, "peak RSS {kib} KiB");
}

/// Requests in flight are bounded: with 16 held (a test pause before each tool's command), a
/// 17th is answered at once with an error, as is a request reusing an id in flight; once the
/// held ones are answered, the server takes requests again. A batch is refused.
#[test]
fn requests_in_flight_are_bounded_and_ids_unique() {
    let t = TestContext::new();
    superbuild(&t, false);
    let release = t.path("release");
    let hook = format!("pause-until:mcp-command:{}", release.display());
    let mut raw = Raw::start(t.cmd("w").arg("mcp").env("A2C_TEST_HOOK", &hook));
    raw.initialize();
    let call = |id: u32| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "outdated", "arguments": {}}})
            .to_string()
    };
    for id in 1..=20 {
        raw.send(&call(id));
    }
    raw.send(&call(3));
    raw.send(r#"[{"jsonrpc":"2.0","id":99,"method":"tools/list"}]"#);
    let mut refused: Vec<(Value, i64)> = (0..6)
        .map(|_| {
            let a = raw.recv();
            (
                a["id"].clone(),
                a["error"]["code"].as_i64().unwrap_or_else(|| panic!("{a}")),
            )
        })
        .collect();
    refused.sort_by_key(|(id, _)| id.to_string());
    let ids: Vec<String> = refused.iter().map(|(id, code)| format!("{id}:{code}")).collect();
    assert_eq!(
        ids,
        [
            "17:-32000",
            "18:-32000",
            "19:-32000",
            "20:-32000",
            "3:-32600",
            "null:-32600"
        ]
    );
    fs_err::write(&release, "").unwrap();
    let mut answered: Vec<u64> = (0..16).map(|_| raw.recv()["id"].as_u64().unwrap()).collect();
    answered.sort();
    assert_eq!(answered, (1..=16).collect::<Vec<u64>>());
    raw.send(&call(21));
    let again = raw.recv();
    assert_eq!(
        (again["id"].as_u64(), again["error"].is_null()),
        (Some(21), true),
        "{again}"
    );
}

/// A directory of the tree swapped for a link to an outside directory while the server reads
/// a file below it: the outside file is never served (reads are opened beneath the tree, not
/// checked and then opened by path, where a swap in between once served it hundreds of times
/// in 20 s).
#[test]
fn a_directory_swapped_for_a_link_mid_read_serves_nothing_outside() {
    let t = TestContext::new();
    superbuild(&t, false);
    t.run("w", &["install"]).success();
    t.write("outside/core.md", "OUTSIDE\n");
    let rules = t.path(&layout::installed_file("w", "1.0.0", "rules"));
    let real = rules.with_file_name("rules.real");
    let outside = t.path("outside");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = {
        let (rules, real, stop) = (rules.clone(), real.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = std::fs::rename(&rules, &real);
                let _ = std::os::unix::fs::symlink(&outside, &rules);
                std::thread::yield_now();
                let _ = std::fs::remove_file(&rules);
                let _ = std::fs::rename(&real, &rules);
            }
        })
    };
    let mut raw = Raw::start(t.cmd("w").arg("mcp"));
    raw.initialize();
    let (mut served, mut outside_served) = (0, 0);
    for id in 1..=400 {
        raw.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "resources/read",
                    "params": {"uri": "a2c://method/p/app/-/rules/core.md"}})
            .to_string(),
        );
        let answer = raw.recv();
        let text = answer["result"]["contents"][0]["text"].as_str().unwrap_or_default();
        served += usize::from(!text.is_empty());
        outside_served += usize::from(text.contains("OUTSIDE"));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    swapper.join().unwrap();
    assert_eq!(outside_served, 0, "the outside file was served ({served} reads served)");
    // The swapping over, the real file reads.
    raw.send(
        &json!({"jsonrpc": "2.0", "id": 401, "method": "resources/read",
                "params": {"uri": "a2c://method/p/app/-/rules/core.md"}})
        .to_string(),
    );
    let answer = raw.recv();
    let text = answer["result"]["contents"][0]["text"].as_str().unwrap_or_default();
    assert!(!text.is_empty() && !text.contains("OUTSIDE"), "{answer}");
}

/// A server started in a member answers `resolve {"path": "."}` for that member (a relative
/// path is taken from where the server was started, as a shell's is), never for W with an
/// `adopt` hint; at W, "." is W, which is no member, and says so.
#[test]
fn resolve_dot_is_the_repository_the_server_started_in() {
    let t = TestContext::new();
    superbuild(&t, false);
    t.run("w", &["install"]).success();
    let call = |raw: &mut Raw| {
        raw.send(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"resolve","arguments":{"path":"."}}}"#,
        );
        raw.recv()
    };
    let mut raw = Raw::start(t.cmd("w/p/app").arg("mcp"));
    raw.initialize();
    let answer = call(&mut raw);
    let doc = &answer["result"]["structuredContent"];
    assert_eq!(doc["write_contract"], "1.0.0", "{answer}");
    assert!(doc["repo"].as_str().unwrap().ends_with("w/p/app"), "{answer}");
    assert!(doc["root"].as_str().unwrap().ends_with("1.0.0"), "{answer}");
    let mut raw = Raw::start(t.cmd("w").arg("mcp"));
    raw.initialize();
    let answer = call(&mut raw);
    let text = answer.to_string();
    assert_contains(&text, "is the superbuild's root, not one of its members");
    assert!(!text.contains("a2c adopt"), "{text}");
}

/// The TypeScript SDK's `node_modules` (installed by `.ci/run`), or `None` after the SKIPPED
/// line.
fn typescript_sdk() -> Option<std::path::PathBuf> {
    let modules = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/ci-node/node_modules");
    let ok = modules.join("@modelcontextprotocol/sdk/package.json").is_file()
        && Command::new("node")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
    if !ok {
        require_program(
            "node and the TypeScript MCP SDK in target/ci-node (npm install @modelcontextprotocol/sdk; .ci/run does it)",
        );
        return None;
    }
    Some(modules)
}

/// A superbuild whose `p/app` pins 1.0.0, installed, its tree holding a binary file and names
/// with a space, `%`, non-ASCII and one that only looks encoded; `p/web` pins 2.0.0, which is
/// not installed.
fn rich_superbuild(t: &TestContext) {
    t.superbuild("w", "members: [\"p/*\"]\nregistry: ../reg\n");
    t.method_tree("trees/1.0.0", "1.0.0");
    fs_err::create_dir_all(t.path("trees/1.0.0/templates")).unwrap();
    fs_err::write(t.path("trees/1.0.0/templates/logo.png"), PNG).unwrap();
    for (name, text) in [
        ("with space.md", "spaced\n"),
        ("100%.md", "a hundred\n"),
        ("café.md", "coffee\n"),
        ("with%20space.md", "literally percent-two-zero\n"),
    ] {
        t.write(&format!("trees/1.0.0/rules/{name}"), text);
    }
    t.pack("trees/1.0.0", "1.0.0", "reg", "tar.gz");
    t.publish("reg", "2.0.0", "tar.gz");
    for (m, v) in [("app", "1.0.0"), ("web", "2.0.0")] {
        t.canonical_repo(&format!("w/p/{m}"), v);
        t.write(&format!("w/p/{m}/.gitignore"), ".tools_local/\n");
        t.commit_all(&format!("w/p/{m}"));
    }
    t.run("w", &["lock"]).success();
    t.run("w", &["install"]).success();
    fs_err::remove_dir_all(t.path(&layout::installed("w", "2.0.0"))).unwrap();
}

/// What an SDK read of the rich superbuild's files gives, `read` finding a file's answer by its
/// path: the logo a PNG blob, byte for byte; each file whose name needs encoding its own text.
fn rich_reads_are_whole(read: impl Fn(&str) -> Value, r: &Value) {
    use base64::Engine;
    let logo = read("templates/logo.png");
    assert_eq!(logo["mime"], "image/png", "{logo}");
    let blob = base64::engine::general_purpose::STANDARD.decode(text_of(&logo, "blob"));
    assert_eq!(blob.unwrap(), PNG);
    for (path, text) in [
        ("rules/with space.md", "spaced\n"),
        ("rules/100%.md", "a hundred\n"),
        ("rules/café.md", "coffee\n"),
        ("rules/with%20space.md", "literally percent-two-zero\n"),
    ] {
        assert_eq!(read(path)["text"], text, "{path}: {r}");
    }
}

/// The first bytes of a PNG: not UTF-8.
const PNG: &[u8] =
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89";

/// Through the official TypeScript SDK, which is stricter than the Python SDK: every tool,
/// the failing ones included, answers a result the SDK accepts and can show (a2c's error
/// document with its hint, never "Structured content does not match"); a binary file reads as
/// a base64 blob with its MIME type; the template, expanded by the SDK itself, reaches every
/// file; listed URIs are RFC 3986 URIs that read as they are; and a name that only looks
/// encoded is another file than the one it looks like.
#[test]
fn the_typescript_sdk_gets_every_tool_resource_and_prompt() {
    let Some(modules) = typescript_sdk() else { return };
    let t = TestContext::new();
    rich_superbuild(&t);
    let mut cmd = Command::new("node");
    t.environment(&mut cmd);
    cmd.arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/mcp_client.mjs"))
        .arg(&modules)
        .arg(env!("CARGO_BIN_EXE_a2c"))
        .arg(t.path("w"));
    let r = client_report(&mut cmd);
    assert_eq!(r["server"]["name"], "a2c", "{r}");
    // Every call is a result the SDK took: successes structured, failures a2c's own words.
    for (name, call) in r["calls"].as_object().unwrap() {
        assert!(call.get("threw").is_none(), "{name}: the SDK threw: {call}");
    }
    for name in ["workspace", "resolve", "list", "outdated", "migrate_plan"] {
        let call = &r["calls"][name];
        assert!(
            !call["is_error"].as_bool().unwrap() && call["structured"].is_object(),
            "{name}: {call}"
        );
    }
    for (name, words) in [
        ("resolve_not_installed", "no method asset root for version 2.0.0"),
        ("resolve_no_such_version", "9.9.9"),
        ("migrate_plan_unpublished", "version 9.9.9 is not in the registry"),
        ("install_read_only", "this server is read-only"),
    ] {
        let call = &r["calls"][name];
        assert!(call["is_error"].as_bool().unwrap(), "{name}: {call}");
        assert!(
            call["error"]["message"].as_str().unwrap().contains(words),
            "{name}: {call}"
        );
        assert!(call["error"]["hint"].is_string(), "{name}: {call}");
    }
    assert_eq!(r["templates"], json!(["a2c://method/{+repo}/-/{+path}"]));
    let by_path = |path: &str| {
        items(&r["through_template"])
            .iter()
            .find(|x| x["path"] == path)
            .unwrap_or_else(|| panic!("{path}: {r}"))
            .clone()
    };
    let core = by_path("rules/core.md");
    assert_eq!(
        (core["mime"].as_str(), core["text"].is_string()),
        (Some("text/markdown"), true),
        "{core}"
    );
    rich_reads_are_whole(by_path, &r);
    let listed = r["listed"].as_array().unwrap();
    assert!(listed.len() >= 8, "{r}");
    for item in listed {
        assert_eq!(item["href_same"], true, "{item}");
        assert!(item["uri"].as_str().unwrap().is_ascii(), "{item}");
        assert!(item["error"].is_null(), "a listed URI reads: {item}");
        assert_eq!(item["match"]["repo"], "p/app", "the SDK's own match: {item}");
    }
    let spaced = listed.iter().find(|i| i["text"] == "spaced\n").unwrap();
    assert_eq!(spaced["uri"], "a2c://method/p/app/-/rules/with%20space.md");
    assert!(r["prompts"].as_array().unwrap().contains(&json!("p/app/review")), "{r}");
    assert_eq!(r["prompt"], "Review under method 1.0.0.\n", "{r}");
}

/// Protocol version negotiation: asked for a version a2c supports (each the TypeScript SDK
/// 1.32 offers: 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05), the server answers with that
/// one; asked for one it does not know, with the newest it supports that has `initialize`.
#[test]
fn the_server_answers_the_protocol_version_the_client_asked_for() {
    let t = TestContext::new();
    superbuild(&t, false);
    let initialize = |version: &str| {
        let mut raw = Raw::start(t.cmd("w").arg("mcp"));
        raw.send(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
            .to_string(),
        );
        raw.recv()["result"]["protocolVersion"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    for version in ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] {
        assert_eq!(initialize(version), version);
    }
    assert_eq!(initialize("1999-01-01"), "2025-11-25", "the newest with `initialize`");
}

/// Through the MCP Inspector CLI (`@modelcontextprotocol/inspector-cli`, pinned in .ci/node):
/// tools/list, tools/call — the failing `resolve` of a repository whose version is not
/// installed included, the issue's repro, which once ended in "Structured content does not
/// match" — resources/list and prompts/list each answer what the other clients get.
#[test]
fn the_inspector_cli_lists_and_calls_as_the_sdks_do() {
    let Some(modules) = typescript_sdk() else { return };
    let cli = modules.join("@modelcontextprotocol/inspector-cli/build/index.js");
    if !cli.is_file() {
        return require_program("the MCP Inspector CLI in target/ci-node (.ci/run installs it)");
    }
    // Its output's shape is its release's: the pinned one is read (another is skipped).
    if !at_pinned_version("@modelcontextprotocol/inspector-cli") {
        return;
    }
    let t = TestContext::new();
    rich_superbuild(&t);
    let w = t.path("w").display().to_string();
    let inspect = |args: &[&str]| -> Value {
        let mut cmd = Command::new("node");
        t.environment(&mut cmd);
        // It reads `../package.json` relative to its working directory: its own build directory.
        let out = cmd
            .current_dir(cli.parent().unwrap())
            .arg(&cli)
            .args([env!("CARGO_BIN_EXE_a2c"), "-C", &w, "mcp"])
            .args(args)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{args:?}: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {stdout}"))
    };
    let tools = inspect(&["--method", "tools/list"]);
    let names = strings_of(&tools, "tools", "name");
    assert_eq!(
        names,
        ["workspace", "resolve", "list", "outdated", "doctor", "migrate_plan"]
    );
    assert!(tools["tools"][1]["title"].is_string(), "{tools}");
    // Every tool, through the Inspector: none ends in a client-side error.
    for (tool, args, fails) in [
        ("workspace", &[][..], false),
        ("list", &[], false),
        ("outdated", &[], false),
        ("doctor", &[], true),
        ("migrate_plan", &["to=2.0.0", "repo=p/app"], false),
        ("migrate_plan", &["to=9.9.9", "repo=p/app"], true),
    ] {
        let mut argv = vec!["--method", "tools/call", "--tool-name", tool];
        for a in args {
            argv.extend(["--tool-arg", a]);
        }
        let r = inspect(&argv);
        assert_eq!(r["isError"].as_bool().unwrap_or(false), fails, "{tool} {args:?}: {r}");
        assert!(r["content"][0]["text"].is_string(), "{tool}: {r}");
    }
    let ok = inspect(&[
        "--method",
        "tools/call",
        "--tool-name",
        "resolve",
        "--tool-arg",
        "path=p/app",
    ]);
    assert_eq!(ok["structuredContent"]["write_contract"], "1.0.0", "{ok}");
    let failed = inspect(&[
        "--method",
        "tools/call",
        "--tool-name",
        "resolve",
        "--tool-arg",
        "path=p/web",
    ]);
    assert_eq!(failed["isError"], true, "{failed}");
    let doc: Value = serde_json::from_str(failed["content"][0]["text"].as_str().unwrap()).unwrap();
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no method asset root for version 2.0.0"),
        "{doc}"
    );
    assert!(doc["error"]["hint"].as_str().unwrap().contains("a2c install"), "{doc}");
    let resources = inspect(&["--method", "resources/list"]);
    let uris = strings_of(&resources, "resources", "uri");
    assert!(
        uris.iter().any(|u| u == "a2c://method/p/app/-/rules/caf%C3%A9.md"),
        "{uris:?}"
    );
    assert!(
        uris.iter().any(|u| u == "a2c://method/p/app/-/templates/logo.png"),
        "{uris:?}"
    );
    let read = inspect(&[
        "--method",
        "resources/read",
        "--uri",
        "a2c://method/p/app/-/templates/logo.png",
    ]);
    assert_eq!(read["contents"][0]["mimeType"], "image/png", "{read}");
    assert!(read["contents"][0]["blob"].is_string(), "{read}");
    let prompts = inspect(&["--method", "prompts/list"]);
    assert_eq!(prompts["prompts"][0]["name"], "p/app/review", "{prompts}");
}

/// Through the official Rust SDK's own client (`rmcp`, a dev-dependency): the same answers the
/// TypeScript and Python SDKs get — a failing tool an error result with a2c's error document
/// and no structured content, a structured success, a binary file as a blob with its MIME type,
/// a listed percent-encoded name read as it is, and the prompts.
#[test]
fn the_rust_sdk_client_agrees() {
    use rmcp::ServiceExt;
    use rmcp::model::{CallToolRequestParams, ReadResourceRequestParams, ResourceContents};
    let t = TestContext::new();
    rich_superbuild(&t);
    crate::support::block_on(async {
        let client = ().serve(t.mcp_transport("w")).await.expect("initialize");
        let tools = client.list_all_tools().await.unwrap();
        assert!(
            tools.iter().all(|t| t.output_schema.is_some() && t.title.is_some()),
            "{tools:?}"
        );
        let args = |path: &str| serde_json::json!({"path": path}).as_object().unwrap().clone();
        let ok = client
            .call_tool(CallToolRequestParams::new("resolve").with_arguments(args("p/app")))
            .await
            .unwrap();
        assert_eq!(ok.is_error, Some(false));
        assert_eq!(ok.structured_content.as_ref().unwrap()["write_contract"], "1.0.0");
        let failed = client
            .call_tool(CallToolRequestParams::new("resolve").with_arguments(args("p/web")))
            .await
            .unwrap();
        assert_eq!(failed.is_error, Some(true));
        assert!(failed.structured_content.is_none(), "{failed:?}");
        let text = failed.content[0].as_text().unwrap().text.clone();
        let doc: Value = serde_json::from_str(&text).unwrap();
        assert!(doc["error"]["hint"].as_str().unwrap().contains("a2c install"), "{doc}");
        // Every tool: the successes structured, the failures a2c's error document as text.
        let obj = |v: Value| v.as_object().unwrap().clone();
        for (name, arguments, fails) in [
            ("workspace", json!({}), false),
            ("list", json!({}), false),
            ("outdated", json!({}), false),
            ("doctor", json!({}), true),
            ("migrate_plan", json!({"to": "2.0.0", "repo": "p/app"}), false),
            ("migrate_plan", json!({"to": "9.9.9", "repo": "p/app"}), true),
            ("resolve", json!({"path": "p/app", "version": "9.9.9"}), true),
            ("install", json!({}), true),
        ] {
            let r = client
                .call_tool(CallToolRequestParams::new(name).with_arguments(obj(arguments.clone())))
                .await
                .unwrap();
            assert_eq!(r.is_error, Some(fails), "{name} {arguments}: {r:?}");
            let text: Value = serde_json::from_str(&r.content[0].as_text().unwrap().text).unwrap();
            match (fails, name) {
                // doctor's failing report is its own document: structured, and it conforms.
                (true, "doctor") => assert!(r.structured_content.is_some(), "{r:?}"),
                (true, _) => assert!(
                    r.structured_content.is_none() && text["error"]["hint"].is_string(),
                    "{name}: {r:?}"
                ),
                (false, _) => assert!(r.structured_content.is_some(), "{name}: {r:?}"),
            }
        }
        let resources = client.list_all_resources().await.unwrap();
        let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
        assert!(
            uris.contains(&"a2c://method/p/app/-/rules/with%2520space.md"),
            "{uris:?}"
        );
        let read = |uri: &str| {
            let client = &client;
            let uri = uri.to_string();
            async move {
                client
                    .read_resource(ReadResourceRequestParams::new(uri))
                    .await
                    .unwrap()
                    .contents
            }
        };
        match &read("a2c://method/p/app/-/templates/logo.png").await[0] {
            ResourceContents::BlobResourceContents { mime_type, blob, .. } => {
                use base64::Engine;
                assert_eq!(mime_type.as_deref(), Some("image/png"));
                assert_eq!(base64::engine::general_purpose::STANDARD.decode(blob).unwrap(), PNG);
            }
            other => panic!("a blob: {other:?}"),
        }
        for (uri, expected) in [
            (
                "a2c://method/p/app/-/rules/with%2520space.md",
                "literally percent-two-zero\n",
            ),
            ("a2c://method/p/app/-/rules/with%20space.md", "spaced\n"),
            ("a2c://method/p/app/-/rules/100%25.md", "a hundred\n"),
            ("a2c://method/p/app/-/rules/caf%C3%A9.md", "coffee\n"),
        ] {
            match &read(uri).await[0] {
                ResourceContents::TextResourceContents { text, mime_type, .. } => {
                    assert_eq!(
                        (text.as_str(), mime_type.as_deref()),
                        (expected, Some("text/markdown")),
                        "{uri}"
                    )
                }
                other => panic!("text: {other:?}"),
            }
        }
        let prompts = client.list_all_prompts().await.unwrap();
        assert_eq!(prompts[0].name, "p/app/review");
        client.cancel().await.unwrap();
    });
}

/// `install` with a `progressToken`: a progress notification for each version as it is done,
/// counting up, every one before the result.
#[test]
fn install_with_a_progress_token_reports_each_version() {
    let t = TestContext::new();
    superbuild(&t, false);
    let mut raw = Raw::start(t.cmd("w").args(["mcp", "--allow-write"]));
    raw.initialize();
    raw.send(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"install","arguments":{},"_meta":{"progressToken":"p1"}}}"#);
    let mut notes = Vec::new();
    let result = loop {
        let message = raw.recv();
        match message["method"].as_str() {
            Some("notifications/progress") => notes.push(message["params"].clone()),
            _ if message["id"] == 7 => break message,
            _ => {}
        }
    };
    assert_eq!(result["result"]["isError"], false, "{result}");
    assert_eq!(notes.len(), 2, "one per version: {notes:?}");
    for (i, note) in notes.iter().enumerate() {
        assert_eq!(note["progressToken"], "p1", "{note}");
        assert_eq!(note["progress"].as_f64(), Some((i + 1) as f64), "{note}");
        assert!(note["message"].as_str().unwrap().starts_with("done "), "{note}");
    }
}

/// `notifications/cancelled` for a long `doctor --deep` (held by a test pause in the child)
/// stops its command: the child process is gone within seconds, and the server keeps serving.
#[test]
fn a_cancelled_doctor_stops_its_command() {
    let t = TestContext::new();
    superbuild(&t, false);
    t.run("w", &["install"]).success();
    let w = t.path("w").display().to_string();
    let mut raw = Raw::start(t.cmd("w").arg("mcp").env("A2C_TEST_HOOK", "pause:doctor-deep"));
    raw.initialize();
    raw.send(r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"doctor","arguments":{"deep":true}}}"#);
    // The child of this server doing `doctor --deep` in W, by its command line.
    let children = || {
        fs_err::read_dir("/proc")
            .unwrap()
            .filter_map(|e| fs_err::read(e.ok()?.path().join("cmdline")).ok())
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .filter(|c| c.contains(&w) && c.contains(" doctor --deep"))
            .count()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while children() == 0 {
        assert!(std::time::Instant::now() < deadline, "the doctor never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"the user stopped it"}}"#);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while children() > 0 {
        assert!(std::time::Instant::now() < deadline, "the cancelled doctor still runs");
        std::thread::sleep(Duration::from_millis(50));
    }
    raw.send(r#"{"jsonrpc":"2.0","id":10,"method":"tools/list"}"#);
    let answer = loop {
        let message = raw.recv();
        if message["id"] == 10 {
            break message;
        }
    };
    assert!(answer["result"]["tools"].is_array(), "{answer}");
}

/// The Python SDK on the fixture the TypeScript SDK, the Inspector and rmcp read: the same
/// answers — error results as a2c's error document without structured content, a binary file
/// as a blob with its MIME type, every name through the template.
#[test]
fn the_python_sdk_agrees_on_the_strict_fixture() {
    let Some(t) = with_sdk() else { return };
    rich_superbuild(&t);
    let r = client(&t, "strict");
    let ok = &r["calls"]["resolve"];
    assert!(
        !ok["is_error"].as_bool().unwrap() && ok["structured"]["write_contract"] == "1.0.0",
        "{r}"
    );
    for name in ["resolve_not_installed", "migrate_plan_unpublished"] {
        let call = &r["calls"][name];
        assert!(
            call["is_error"].as_bool().unwrap() && call["structured"].is_null(),
            "{name}: {r}"
        );
        assert!(call["error"]["hint"].is_string(), "{name}: {r}");
    }
    assert_eq!(r["template"], "a2c://method/{+repo}/-/{+path}");
    let reads = &r["reads"];
    rich_reads_are_whole(|path| reads[path].clone(), &r);
    assert_eq!(reads["rules/core.md"]["mime"], "text/markdown", "{r}");
}

/// One rule for paths, through the Python and the TypeScript SDK: a server started in member
/// `p/app` reads a relative path from that repository (as a shell does), so `../web` is the
/// sibling and `p/web` — not in `p/app`, but a path from W — is refused naming both readings
/// (it answered app's 1.0.0 root without a word); an absolute path is itself. An argument no
/// schema declares, or of another type, is JSON-RPC -32602 naming it and the accepted ones.
#[test]
fn a_server_started_in_a_member_reads_paths_from_it_and_refuses_the_ambiguous() {
    let t = TestContext::new();
    superbuild(&t, false);
    t.run("w", &["install"]).success();
    // Each SDK's client, started with the test's environment: its one-line JSON report.
    let report_of = |mut cmd: Command| -> Value {
        t.environment(&mut cmd);
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_str(stdout.lines().last().unwrap()).unwrap()
    };
    let member = t.path("w/p/app").display().to_string();
    let mut reports = Vec::new();
    if sdk() {
        let mut cmd = Command::new(crate::support::program("python3"));
        cmd.args([CLIENT, env!("CARGO_BIN_EXE_a2c"), &member, "paths"]);
        reports.push(("python", report_of(cmd)));
    }
    if let Some(modules) = typescript_sdk() {
        let mut cmd = Command::new("node");
        cmd.arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/mcp_client.mjs"))
            .arg(&modules)
            .args([env!("CARGO_BIN_EXE_a2c"), &member, "paths"]);
        reports.push(("typescript", report_of(cmd)));
    }
    for (sdk, report) in &reports {
        let calls = &report["calls"];
        let contract = |key: &str| calls[key]["structured"]["write_contract"].clone();
        assert_eq!(contract("resolve_dot"), "1.0.0", "{sdk}: {calls}");
        assert_eq!(contract("resolve_sibling_from_member"), "2.0.0", "{sdk}: {calls}");
        assert_eq!(contract("resolve_sibling_absolute"), "2.0.0", "{sdk}: {calls}");
        for key in ["resolve_sibling_from_w", "plan_sibling_from_w"] {
            let error = &calls[key]["error"];
            assert_eq!(calls[key]["is_error"], true, "{sdk} {key}: {calls}");
            assert_eq!(error["code"], "ambiguous", "{sdk} {key}: {calls}");
            let message = error["message"].as_str().unwrap();
            assert!(
                message.contains("w/p/app`, where there is no `p/web`") && message.contains("w/p/web`"),
                "{sdk} {key}: {message}"
            );
        }
        assert_ne!(
            calls["plan_sibling_from_member"]["error"]["code"], "ambiguous",
            "{sdk}: {calls}"
        );
        for (key, named) in [("unknown_argument", "`path`"), ("mistyped_argument", "`path`")] {
            let text = calls[key].to_string();
            assert!(text.contains("-32602") || *sdk == "python", "{sdk} {key}: {text}");
            assert!(text.contains(named), "{sdk} {key}: {text}");
        }
        assert!(
            calls["unknown_argument"]
                .to_string()
                .contains("it accepts `all`, `repo`, `to`"),
            "{sdk}: {calls}"
        );
    }
}
