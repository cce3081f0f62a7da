//! The tools: `workspace` and `resolve` answered in this process (discovery as the CLI does
//! it, for each call), and `list`, `outdated`, `doctor`, `install`, `migrate_plan` and
//! `migrate_apply` answered by this same a2c binary run with `--json` in the workspace — the
//! very documents of docs/json.md. `install` and `migrate_apply` exist only under
//! `a2c mcp --allow-write`; `migrate_apply` takes the digest of the plan the user approved, as
//! `--confirm` does.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

use super::scope::Scope;

/// Where a command's progress goes: each version it finished, counted, with its line.
pub type Progress<'a> = &'a (dyn Fn(u64, &str) + Sync);

/// What a tool call needs from the server.
pub struct Env<'a> {
    pub scope: &'a Scope,
    /// This a2c binary, run for the tools that are commands.
    pub exe: &'a Path,
    pub allow_write: bool,
    /// Whether the client cancelled the request (`notifications/cancelled`): a running command
    /// is then stopped.
    pub cancelled: &'a (dyn Fn() -> bool + Sync),
    /// Where a command's progress goes when the client asked for it (a `progressToken`): each
    /// version a command finished, counted, with its line.
    pub progress: Option<Progress<'a>>,
}

fn schema(properties: Value, required: &[&str]) -> Arc<JsonObject> {
    let mut doc = json!({"type": "object", "properties": properties, "additionalProperties": false});
    if !required.is_empty() {
        doc["required"] = json!(required);
    }
    match doc {
        Value::Object(map) => Arc::new(map),
        _ => unreachable!("an object"),
    }
}

/// The command schemas of docs/json/, the very documents the tests validate real output
/// against.
mod command_schema {
    pub const WORKSPACE: &str = include_str!("../../docs/json/workspace-members.schema.json");
    pub const RESOLVE: &str = include_str!("../../docs/json/resolve.schema.json");
    pub const LIST: &str = include_str!("../../docs/json/list.schema.json");
    pub const OUTDATED: &str = include_str!("../../docs/json/outdated.schema.json");
    pub const DOCTOR: &str = include_str!("../../docs/json/doctor.schema.json");
    pub const INSTALL: &str = include_str!("../../docs/json/install.schema.json");
    pub const MIGRATE: &str = include_str!("../../docs/json/migrate.schema.json");
    pub const MIGRATE_ALL: &str = include_str!("../../docs/json/migrate-all.schema.json");
}

/// A command's schema with the fields a tool adds to its document: no longer that document,
/// so without its `$id`.
fn extended(mut schema: Value, title: &str, added: Value) -> Value {
    if let (Some(doc), Value::Object(added)) = (schema.as_object_mut(), added) {
        doc.remove("$id");
        doc.insert("title".into(), json!(title));
        let names: Vec<Value> = added.keys().map(|k| json!(k)).collect();
        if let Some(Value::Object(properties)) = doc.get_mut("properties") {
            properties.extend(added);
        }
        if let Some(Value::Array(required)) = doc.get_mut("required") {
            required.extend(names);
        }
    }
    schema
}

/// The JSON Schema of what tool `name` answers when it succeeds (its `outputSchema`): its
/// command's. A failure is an error result carrying a2c's error document instead.
pub fn output_schema(name: &str) -> Option<Arc<JsonObject>> {
    use command_schema::*;
    let doc = |text: &str| serde_json::from_str::<Value>(text).ok();
    let schema = match name {
        "workspace" => extended(
            doc(WORKSPACE)?,
            "the `workspace` tool: `a2c workspace members --json`, with `superbuild` and `found_by`",
            json!({
                "superbuild": {"type": "boolean", "description": "whether the root is a superbuild (else the one repository the server was started in)"},
                "found_by": {"type": "string", "description": "how the root was found"},
            }),
        ),
        "resolve" => extended(
            doc(RESOLVE)?,
            "the `resolve` tool: `a2c resolve --json`, with `warnings`",
            json!({"warnings": {"type": "array", "items": {"type": "string"}, "description": "what the CLI prints as warnings: a read-only mount, an unfinished migration, a method that needs a newer a2c"}}),
        ),
        "list" => doc(LIST)?,
        "outdated" => doc(OUTDATED)?,
        "doctor" => doc(DOCTOR)?,
        "install" => doc(INSTALL)?,
        "migrate_plan" | "migrate_apply" => json!({
            "type": "object",
            "title": "`a2c migrate version --json`: one repository's document, or with `all` every member's",
            "anyOf": [doc(MIGRATE)?, doc(MIGRATE_ALL)?],
        }),
        _ => return None,
    };
    match schema {
        Value::Object(map) => Some(Arc::new(map)),
        _ => None,
    }
}

/// Every tool with its output schema.
fn with_output(tool: Tool) -> Tool {
    match output_schema(&tool.name) {
        Some(schema) => tool.with_raw_output_schema(schema),
        None => tool,
    }
}

fn read_only(tool: Tool) -> Tool {
    tool.annotate(ToolAnnotations::new().read_only(true))
}

/// How every path argument is read (`resolve`'s `path`, `migrate_plan`'s and `migrate_apply`'s
/// `repo`): the one rule, said by each schema, docs/agents.md and [`path_argument`].
pub const PATH_RULE: &str = "relative to the repository the server was started in (as a shell reads a path from its working directory; the workspace root W when started there), or absolute below W; a relative path that is not in that repository but names one from W is refused, naming both readings";

/// `args` as `name`'s inputSchema declares them: each argument a declared property, of its
/// type (`additionalProperties: false`). `Err` with the message and the accepted names.
pub fn check_arguments(name: &str, args: &JsonObject) -> Result<(), (String, Vec<String>)> {
    let Some(tool) = list(true).into_iter().find(|t| t.name == name) else {
        return Ok(());
    };
    let properties = tool
        .input_schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let accepted: Vec<String> = properties.keys().cloned().collect();
    let shown = |names: &[String]| match names.is_empty() {
        true => "none".to_string(),
        false => names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "),
    };
    for (key, value) in args {
        let Some(declared) = properties.get(key) else {
            return Err((
                format!("`{name}` takes no argument `{key}`; it accepts {}", shown(&accepted)),
                accepted,
            ));
        };
        let wanted = declared.get("type").and_then(Value::as_str).unwrap_or_default();
        let fits = match wanted {
            "string" => value.is_string(),
            "boolean" => value.is_boolean(),
            _ => true,
        };
        if !fits {
            return Err((format!("`{name}`'s `{key}` must be a {wanted}, not {value}"), accepted));
        }
    }
    Ok(())
}

/// Every tool this server offers (the writing ones only with `--allow-write`).
pub fn list(allow_write: bool) -> Vec<Tool> {
    let repo = json!({"type": "string", "description": format!("the repository: a path {PATH_RULE} (absent: the repository the server was started in)")});
    let to = json!({"type": "string", "description": "the exact target version, such as 1.4.0"});
    let all = json!({"type": "boolean", "description": "every member of the superbuild behind the version (`--all`)"});
    let mut tools = vec![
        read_only(Tool::new(
            "workspace",
            "The superbuild root W, and each member: its path, tool state root, layout, write contract and delivery (`a2c workspace members --json`)",
            schema(json!({}), &[]),
        )),
        read_only(Tool::new(
            "resolve",
            "For a path: its repository, write contract, the method asset root the resolution order (docs/concepts.md) gives that version and the rule that chose it — or, when none resolves, why (`a2c resolve --json`). Agents call this instead of guessing paths; W/tools/ai-rules is never the method.",
            schema(
                json!({"path": {"type": "string", "description": format!("a file or directory, {PATH_RULE}")}, "version": {"type": "string", "description": "another version to mount for reading (default: the write contract)"}}),
                &["path"],
            ),
        )),
        read_only(Tool::new(
            "list",
            "Every version the members need, the lock pins, the store holds and the registry has (`a2c list --json`)",
            schema(
                json!({"offline": {"type": "boolean", "description": "do not read the registry"}}),
                &[],
            ),
        )),
        read_only(Tool::new(
            "outdated",
            "The members behind the newest version the registry publishes (`a2c outdated --json`)",
            schema(json!({}), &[]),
        )),
        read_only(Tool::new(
            "doctor",
            "Findings for every member and version, each with its code, severity and hint (`a2c doctor --json`)",
            schema(
                json!({"deep": {"type": "boolean", "description": "re-hash installed trees"}}),
                &[],
            ),
        )),
        read_only(Tool::new(
            "migrate_plan",
            "The dry run of moving a repository's (or with `all`, every member's) write contract to `to`: what would change, and the plan digest to approve (`a2c migrate version --dry-run --json`)",
            schema(json!({"to": to, "repo": repo, "all": all}), &["to"]),
        )),
    ];
    if allow_write {
        tools.push(Tool::new(
            "install",
            "Install every locked version the members need, verified, side by side (`a2c install --json`)",
            schema(json!({}), &[]),
        ));
        tools.push(Tool::new(
            "migrate_apply",
            "Apply exactly the plan the user approved at a terminal (`a2c migrate version --approve sha256:…`, which an agent cannot run): refused when the user has not approved it, or when anything the plan depends on changed; the error's hint is the command to show the user",
            schema(
                json!({"to": to, "repo": repo, "all": all, "confirm": {"type": "string", "description": "the full `sha256:<64 hex>` plan digest migrate_plan gave, which the user approved with `a2c migrate version --approve`"}}),
                &["to", "confirm"],
            ),
        ));
    }
    tools.into_iter().map(with_output).map(with_title).collect()
}

/// The name a client shows a person for each tool (MCP 2025-06-18 `title`).
fn with_title(tool: Tool) -> Tool {
    let title = match tool.name.as_ref() {
        "workspace" => "Workspace members",
        "resolve" => "Resolve a repository's method assets",
        "list" => "Method versions",
        "outdated" => "Outdated members",
        "doctor" => "Check the superbuild",
        "migrate_plan" => "Plan a migration",
        "install" => "Install the locked versions",
        "migrate_apply" => "Apply an approved migration",
        _ => return tool,
    };
    tool.with_title(title)
}

/// An error result, as the specification has a tool report a failure: `isError` with a2c's
/// error document (docs/json/error.schema.json) as its text content. It carries no
/// `structuredContent`: that must conform to the tool's `outputSchema`, the command's document,
/// and a strict client (the TypeScript SDK) rejects one that does not, hiding the message.
fn failure(code: &str, message: impl Into<String>, hint: impl Into<String>) -> CallToolResult {
    let doc = json!({
        "schema": crate::JSON_SCHEMA,
        "error": {"code": code, "message": message.into(), "causes": [], "hint": hint.into()},
        "exit": 1,
    });
    CallToolResult::error(vec![ContentBlock::text(doc.to_string())])
}

/// A document as `--json` prints it: with its `schema`.
fn success(mut doc: Value) -> CallToolResult {
    if let Some(map) = doc.as_object_mut() {
        map.insert("schema".into(), crate::JSON_SCHEMA.into());
    }
    let mut result = CallToolResult::success(vec![ContentBlock::text(doc.to_string())]);
    result.structured_content = Some(doc);
    result
}

fn string<'a>(args: &'a JsonObject, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

fn flag(args: &JsonObject, key: &str) -> bool {
    args.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// A path an argument names, below the served root ([`PATH_RULE`]): absolute, or relative to
/// the repository the server was started in (as a shell's working directory is, `..` included),
/// else to the root; a relative path that is not in that repository but is one from the root is
/// refused naming both readings, and anything outside the root is refused.
fn below_root(scope: &Scope, path: &str) -> Result<PathBuf, CallToolResult> {
    let outside = |why: String| failure("outside", why, "pass a path in a repository of this workspace");
    let base = match &scope.home {
        Some(home) => scope.root.join(home),
        None => scope.root.clone(),
    };
    let full = match Path::new(path).is_absolute() {
        true => PathBuf::from(path),
        false if path == "." || path.is_empty() => base,
        false => {
            // `..` is read as a shell reads it (`../web` from `p/app` is `p/web`); where the
            // path lands is checked below: within W, through no link.
            let named: Vec<&str> = path.split('/').filter(|s| *s != "..").collect();
            if !named.is_empty() {
                crate::util::paths::check_portable_relative(&named.join("/"))
                    .map_err(|why| outside(format!("`{path}`: {why}")))?;
            }
            let from_home = base.join(path);
            // Not in the start repository, but a path from W: the two readings differ, and an
            // answer for either could be for another repository than the one meant.
            let from_root = scope.root.join(path);
            if base != scope.root && !from_home.exists() && from_root.exists() {
                return Err(failure(
                    "ambiguous",
                    format!(
                        "`{path}` is read from the repository the server was started in, `{}`, where there is no `{path}`; from the workspace root it would be `{}`",
                        base.display(),
                        from_root.display()
                    ),
                    format!(
                        "pass `{}` (absolute) to mean the one from the workspace root; relative paths are read from the repository the server was started in",
                        from_root.display()
                    ),
                ));
            }
            from_home
        }
    };
    let normal = crate::util::paths::normalize(&full);
    let Ok(rel) = normal.strip_prefix(&scope.root) else {
        return Err(outside(format!(
            "`{path}` is outside `{}`, the workspace this server serves",
            scope.root.display()
        )));
    };
    // A link on the way could lead out of the workspace: refused, as every a2c path is.
    if let Err(e) = crate::util::contain::check(&scope.root, rel) {
        return Err(outside(format!("`{path}` is refused: {e}")));
    }
    Ok(normal)
}

/// Whether tool `name` answers from this process (a read of the workspace) rather than by
/// running an a2c command.
pub fn in_process(name: &str) -> bool {
    matches!(name, "workspace" | "resolve")
}

/// Calls `name` with `args`.
pub fn call(env: &Env<'_>, name: &str, args: &JsonObject) -> CallToolResult {
    let writing = matches!(name, "install" | "migrate_apply");
    if writing && !env.allow_write {
        return failure(
            "read-only",
            format!("`{name}` changes the workspace, and this server is read-only"),
            "start the server with `a2c mcp --allow-write` to let an agent install or apply a plan the user approved",
        );
    }
    match name {
        "workspace" => workspace(env.scope),
        "resolve" => resolve(env.scope, args),
        "list" => {
            let mut argv = vec!["list"];
            if flag(args, "offline") {
                argv.push("--offline");
            }
            command(env, &env.scope.root, &argv)
        }
        "outdated" => command(env, &env.scope.root, &["outdated"]),
        "doctor" => {
            let mut argv = vec!["doctor"];
            if flag(args, "deep") {
                argv.push("--deep");
            }
            command(env, &env.scope.root, &argv)
        }
        "install" => command(env, &env.scope.root, &["install"]),
        "migrate_plan" | "migrate_apply" => migrate(env, name, args),
        other => failure(
            "unknown-tool",
            format!("no tool `{other}`"),
            "list the tools (`tools/list`): workspace, resolve, list, outdated, doctor, migrate_plan, and with --allow-write install and migrate_apply",
        ),
    }
}

fn workspace(scope: &Scope) -> CallToolResult {
    let ctx = match crate::workspace::Context::discover(&scope.root, scope.superbuild.then_some(scope.root.as_path())) {
        Ok(ctx) => ctx,
        Err(e) => return failure("workspace", e.to_string(), "run `a2c doctor` in the workspace"),
    };
    let members: Vec<crate::workspace::Member> = match scope.superbuild {
        true => match ctx.members() {
            Ok(m) => m.to_vec(),
            Err(e) => return failure("workspace", e.to_string(), "run `a2c doctor` in the workspace"),
        },
        false => vec![crate::workspace::Member::read(scope.root.clone(), ".".into())],
    };
    let listing = crate::workspace::discovery::MemberListing::new(&scope.root, &members);
    match serde_json::to_value(&listing) {
        Ok(mut doc) => {
            doc["superbuild"] = json!(scope.superbuild);
            doc["found_by"] = json!(match scope.superbuild {
                true => "the workspace marker .tools/esys/a2c/workspace.yaml at this root (`a2c workspace path`)",
                false => "no superbuild: the one repository the server was started in",
            });
            success(doc)
        }
        Err(e) => failure("internal", e.to_string(), "report this as a bug"),
    }
}

fn resolve(scope: &Scope, args: &JsonObject) -> CallToolResult {
    let Some(path) = string(args, "path") else {
        return failure(
            "usage",
            "`resolve` needs `path`",
            "pass the path of a file or directory in a repository",
        );
    };
    let full = match below_root(scope, path) {
        Ok(p) => p,
        Err(refused) => return refused,
    };
    let version = match string(args, "version").map(str::parse::<crate::util::version::MethodVersion>) {
        None => None,
        Some(Ok(v)) => Some(v),
        Some(Err(e)) => {
            return failure(
                "usage",
                format!("`version`: {e}"),
                "write one exact version such as 1.4.0",
            );
        }
    };
    // The directory the path is in (a file's parent), as `a2c -C DIR resolve` starts there.
    let mut start = full.clone();
    while !start.is_dir() {
        match start.parent() {
            Some(p) => start = p.to_path_buf(),
            None => break,
        }
    }
    let ctx = match crate::workspace::Context::discover(&start, scope.superbuild.then_some(scope.root.as_path())) {
        Ok(ctx) => ctx,
        Err(e) => return failure("workspace", e.to_string(), "run `a2c doctor` in the workspace"),
    };
    match crate::ops::resolve::resolve(&ctx, version.as_ref()) {
        Ok(mut resolution) => {
            let unresolved = resolution.failure.take();
            let Ok(mut doc) = serde_json::to_value(&resolution) else {
                return failure("internal", "the resolution does not serialize", "report this as a bug");
            };
            doc["warnings"] = json!(resolution.warnings);
            match unresolved {
                None => success(doc),
                Some(e) => {
                    // The resolution (`root` null) with why, as an error document says it.
                    doc["schema"] = json!(crate::JSON_SCHEMA);
                    doc["error"] = json!({
                        "code": "unresolved",
                        "message": e.to_string(),
                        "causes": [],
                        "hint": crate::util::hint::Hint::hint(&e),
                    });
                    // Text only: with `error` added it is no longer the declared document.
                    CallToolResult::error(vec![ContentBlock::text(doc.to_string())])
                }
            }
        }
        Err(e) => failure(
            "resolve",
            e.to_string(),
            crate::util::hint::Hint::hint(&e).unwrap_or_default(),
        ),
    }
}

fn migrate(env: &Env<'_>, name: &str, args: &JsonObject) -> CallToolResult {
    let Some(to) = string(args, "to") else {
        return failure(
            "usage",
            format!("`{name}` needs `to`"),
            "pass the exact target version, such as 1.4.0",
        );
    };
    let dir = match below_root(env.scope, string(args, "repo").unwrap_or(".")) {
        Ok(p) => p,
        Err(refused) => return refused,
    };
    let mut argv = vec!["migrate", "version", "--to", to];
    if flag(args, "all") {
        argv.push("--all");
    }
    match (name, string(args, "confirm")) {
        ("migrate_plan", _) => argv.push("--dry-run"),
        // Only a plan the user approved in a terminal (`--approve`), never one the agent
        // passes on from migrate_plan by itself.
        (_, Some(digest)) => argv.extend(["--confirm", digest, "--approved-only"]),
        (_, None) => {
            return failure(
                "usage",
                "`migrate_apply` needs `confirm`: the digest of the plan the user approved",
                "call migrate_plan, show the plan to the user, ask them to approve it in a terminal (`a2c migrate version --to V --approve sha256:…`), then pass its digest",
            );
        }
    }
    command(env, &dir, &argv)
}

/// Runs this a2c with `--json -C dir args`: its JSON document, or its error document. The
/// command is watched while it runs: stopped (killed) as soon as the client cancels the
/// request, and, when the client asked for progress, each line it prints as a version is done
/// (`A2C_PROGRESS=lines`) is passed on as it comes.
fn command(env: &Env<'_>, dir: &Path, args: &[&str]) -> CallToolResult {
    use std::io::{BufRead, Read};
    crate::testhook::point(crate::testhook::MCP_COMMAND);
    let spawned = std::process::Command::new(env.exe)
        .arg("--json")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .env("A2C_PROGRESS", if env.progress.is_some() { "lines" } else { "none" })
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => {
            return failure(
                "internal",
                format!("cannot run `{}`: {e}", env.exe.display()),
                "reinstall a2c",
            );
        }
    };
    let (mut stdout, stderr) = (child.stdout.take().expect("piped"), child.stderr.take().expect("piped"));
    let (status, stdout, stderr) = std::thread::scope(|s| {
        let out = s.spawn(move || {
            let mut text = String::new();
            let _ = stdout.read_to_string(&mut text);
            text
        });
        let err = s.spawn(move || {
            let (mut kept, mut done) = (Vec::new(), 0);
            for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.starts_with("installing ") || line.starts_with("done ") {
                    if line.starts_with("done ")
                        && let Some(progress) = env.progress
                    {
                        done += 1;
                        progress(done, &line);
                    }
                    continue;
                }
                kept.push(line);
            }
            kept.join("\n")
        });
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if (env.cancelled)() => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
                Ok(None) => std::thread::sleep(std::time::Duration::from_millis(20)),
                Err(_) => break None,
            }
        };
        (status, out.join().unwrap_or_default(), err.join().unwrap_or_default())
    });
    let Some(status) = status else {
        return failure(
            "cancelled",
            format!("`a2c {}` was stopped: the client cancelled the request", args.join(" ")),
            "call the tool again when you want its answer",
        );
    };
    let stderr = stderr.trim().to_string();
    let doc: Value = serde_json::from_str(&stdout).unwrap_or_else(|_| json!({"output": stdout.trim()}));
    let mut content = vec![ContentBlock::text(doc.to_string())];
    if !stderr.is_empty() {
        content.push(ContentBlock::text(stderr));
    }
    let mut result = match status.success() {
        true => CallToolResult::success(content),
        false => CallToolResult::error(content),
    };
    // The command's own document (a doctor report whose findings fail, too) conforms to the
    // tool's output schema; an error document does not, and stays text only (see `failure`).
    if doc.get("error").is_none() && doc.get("output").is_none() {
        result.structured_content = Some(doc);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_declares_the_schema_of_its_command() {
        for tool in list(true) {
            let schema = tool
                .output_schema
                .unwrap_or_else(|| panic!("{} has no output schema", tool.name));
            assert_eq!(schema.get("type"), Some(&json!("object")), "{}", tool.name);
            assert!(tool.title.is_some(), "{} has a title", tool.name);
        }
        let workspace = output_schema("workspace").unwrap();
        assert!(workspace.get("$id").is_none());
        assert!(workspace["properties"].get("found_by").is_some() && workspace["properties"].get("members").is_some());
        assert!(workspace["required"].as_array().unwrap().contains(&json!("superbuild")));
        assert_eq!(
            output_schema("migrate_plan").unwrap()["anyOf"]
                .as_array()
                .unwrap()
                .len(),
            2
        );
    }

    /// The interface a client reads is the behaviour: every path argument's schema states the
    /// one rule [`below_root`] applies, and docs/agents.md states it too.
    #[test]
    fn every_path_argument_states_the_one_rule() {
        for (tool, argument) in [("resolve", "path"), ("migrate_plan", "repo"), ("migrate_apply", "repo")] {
            let tools = super::list(true);
            let schema = &tools.iter().find(|t| t.name == tool).unwrap().input_schema;
            let said = schema["properties"][argument]["description"].as_str().unwrap();
            assert!(said.contains(super::PATH_RULE), "{tool}.{argument}: {said}");
        }
        let docs = include_str!("../../docs/agents.md");
        for words in [
            "relative to the repository the server was started in (W\nwhen it was started there), `..` included, or absolute below W",
            "refused with error code `ambiguous`, naming both readings",
            "JSON-RPC `-32602` naming it and the accepted ones",
        ] {
            assert!(docs.contains(words), "docs/agents.md no longer says: {words}");
        }
        let (a, b) = super::PATH_RULE.split_once(", or absolute below W").unwrap();
        assert!(a.starts_with("relative to the repository the server was started in") && !b.is_empty());
    }
}
