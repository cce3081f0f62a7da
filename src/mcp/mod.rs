//! `a2c mcp`: a Model Context Protocol server over stdio (the official Rust SDK, `rmcp`), so
//! that an agent calls a2c for W and its method instead of guessing paths (docs/agents.md).
//! It serves the workspace it was started in and every repository below it: tools (the
//! commands, as their `--json` documents), resources (the files of each repository's method
//! tree, of the version its write contract names), prompts (the method's prompt files of that
//! version), and a resource-list change notification when the store or a contract changes.
//! Nothing but the protocol is written to stdout; it is read-only unless `--allow-write`.
//! docs/agents.md is the reference an agent relies on.

mod pipe;
mod prompts;
mod resources;
mod scope;
mod skills;
mod tools;
mod worker;

use crate::util::paths::JoinRel as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, GetPromptRequestParams, GetPromptResponse, GetPromptResult,
    Implementation, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, Prompt, PromptArgument, PromptMessage, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceTemplate, Role, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

pub use scope::Scope;

/// How `a2c mcp` was started.
pub struct Options {
    /// Where discovery starts (`-C DIR` or the current directory).
    pub start: PathBuf,
    /// `--workspace DIR`.
    pub workspace: Option<PathBuf>,
    /// `--allow-write`: `install` and `migrate_apply` are tools.
    pub allow_write: bool,
    /// This a2c binary (the commands the tools run).
    pub exe: PathBuf,
}

/// The server: cheap to clone (one per request handler).
#[derive(Clone)]
pub struct Server(Arc<Inner>);

struct Inner {
    scope: Scope,
    allow_write: bool,
    exe: PathBuf,
    /// Where the server's own reads of the workspace run.
    reads: worker::Worker,
}

/// Serves MCP on stdin/stdout until the client closes it.
pub fn serve(options: Options) -> anyhow::Result<()> {
    let scope = Scope::discover(&options.start, options.workspace.as_deref())?;
    let server = Server(Arc::new(Inner {
        scope,
        allow_write: options.allow_write,
        exe: options.exe,
        reads: worker::Worker::start()?,
    }));
    // The protocol on this thread, the reads on the worker's, stdin, stdout and the child
    // commands on the runtime's blocking threads.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async move {
        let running = server
            .clone()
            .serve(pipe::start())
            .await
            .map_err(|e| anyhow::anyhow!("the MCP session did not start: {e}"))?;
        let watcher = tokio::spawn(watch(server.clone(), running.peer().clone()));
        let end = running.waiting().await;
        watcher.abort();
        end.map(|_| ())
            .map_err(|e| anyhow::anyhow!("the MCP session ended: {e}"))
    })
}

type Stamp = Vec<(PathBuf, Option<SystemTime>, u64)>;

/// The identity (modified time, size) of each path, without following links.
fn stamp(paths: impl IntoIterator<Item = PathBuf>) -> Stamp {
    paths
        .into_iter()
        .map(|p| {
            let meta = std::fs::symlink_metadata(&p).ok();
            let modified = meta.as_ref().and_then(|m| m.modified().ok());
            let len = meta.map_or(0, |m| m.len());
            (p, modified, len)
        })
        .collect()
}

/// What changes the set of members or of installed versions: the workspace marker, the
/// workspace snapshot (rewritten when a member's record or pointer changes) and the store
/// directory itself — a version is installed or removed only by a rename into or out of it,
/// which changes its own modified time, and a version directory never changes once there.
/// Three `stat`s, whatever the store holds (a store of 100,000 entries once cost 4.5 s of CPU
/// per 10 s idle).
fn outline(root: &Path) -> Stamp {
    let store = root.join_rel(crate::store::STORE_DIR);
    stamp([
        root.join_rel(crate::workspace::marker::MARKER_PATH),
        store.join(crate::store::layout::SNAPSHOT_FILE),
        store,
    ])
}

/// Each served repository's adoption records (both roots): a contract changed by any means.
fn records(scope: &Scope) -> Vec<PathBuf> {
    scope
        .repos()
        .map(|repos| {
            repos
                .iter()
                .flat_map(|r| {
                    [
                        r.path.join(".tools/esys/a2c/adoption.yaml"),
                        r.path.join(".a2c/adoption.yaml"),
                    ]
                })
                .collect()
        })
        .unwrap_or_default()
}

/// What the watcher saw last.
struct Look {
    outline: Stamp,
    /// The records' paths, enumerated again only when the outline changes.
    paths: Vec<PathBuf>,
    records: Stamp,
}

/// Looks again; with what was seen `last`, whether anything changed since.
fn look(scope: &Scope, last: Option<Look>) -> (Look, bool) {
    let outline = outline(&scope.root);
    let (paths, before) = match last {
        Some(l) if l.outline == outline => (l.paths, Some(l.records)),
        Some(_) => (records(scope), None),
        None => {
            return (
                {
                    let paths = records(scope);
                    Look {
                        records: stamp(paths.iter().cloned()),
                        outline,
                        paths,
                    }
                },
                false,
            );
        }
    };
    let records = stamp(paths.iter().cloned());
    let changed = before.as_ref() != Some(&records);
    (
        Look {
            outline,
            paths,
            records,
        },
        changed,
    )
}

/// Notifies the client that the resource (and prompt) list changed whenever the outline or a
/// record does: a few `stat`s per member every half second, on the reads' thread; the members
/// are enumerated again only when the outline changes, never the trees walked.
async fn watch(server: Server, peer: rmcp::Peer<RoleServer>) {
    let Ok((mut last, _)) = server.blocking(|inner| look(&inner.scope, None)).await else {
        return;
    };
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let Ok((now, changed)) = server.blocking(move |inner| look(&inner.scope, Some(last))).await else {
            return;
        };
        last = now;
        if changed {
            if peer.notify_resource_list_changed().await.is_err() {
                return;
            }
            let _ = peer.notify_prompt_list_changed().await;
        }
    }
}

/// The skills methods answer a client that declared the skills extension (SEP-2133: an
/// extension is used by both sides or by neither); the others keep the resources and prompts.
fn skills_declared(context: &RequestContext<RoleServer>) -> Result<(), ErrorData> {
    let declared = context.peer.peer_info().is_some_and(|info| {
        info.capabilities
            .extensions
            .as_ref()
            .is_some_and(|e| e.contains_key(rmcp::model::SKILLS_EXTENSION_ID))
    });
    match declared {
        true => Ok(()),
        false => Err(ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            format!(
                "the skills methods answer a client that declares the `{}` extension in its capabilities; the method's skills are also resources (`resources/list`)",
                rmcp::model::SKILLS_EXTENSION_ID
            ),
            None,
        )),
    }
}

fn internal(e: impl std::fmt::Display) -> ErrorData {
    ErrorData::internal_error(e.to_string(), None)
}

/// An MCP error carrying a2c's message (and hint, as `data.hint`).
fn refused(message: String, hint: &str) -> ErrorData {
    ErrorData::invalid_params(message, Some(serde_json::json!({ "hint": hint })))
}

fn offset(request: Option<&PaginatedRequestParams>) -> Result<usize, ErrorData> {
    match request.and_then(|r| r.cursor.as_deref()) {
        None => Ok(0),
        Some(c) => c
            .parse()
            .map_err(|_| ErrorData::invalid_params(format!("`{c}` is not a cursor this server gave"), None)),
    }
}

impl Server {
    /// Runs a read of the workspace on the reads' thread ([`worker`]), off the protocol's.
    async fn blocking<T: Send + 'static>(&self, f: impl FnOnce(&Inner) -> T + Send + 'static) -> Result<T, ErrorData> {
        let inner = self.0.clone();
        self.0
            .reads
            .run(move || f(&inner))
            .await
            .ok_or_else(|| internal("the read failed (a bug: report it)"))
    }

    /// Runs a tool that waits on a child command on the runtime's blocking threads, so that
    /// a long install never holds a read back.
    async fn waiting<T: Send + 'static>(&self, f: impl FnOnce(&Inner) -> T + Send + 'static) -> Result<T, ErrorData> {
        let inner = self.0.clone();
        tokio::task::spawn_blocking(move || f(&inner)).await.map_err(internal)
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_resources_list_changed()
                .enable_prompts()
                .enable_prompts_list_changed()
                .enable_skills()
                .build(),
        )
        .with_server_info(Implementation::new("a2c", crate::A2C_VERSION))
        .with_instructions(
            "a2c serves the A2C method of this workspace. Call `resolve` with a path to learn its repository's write contract and method asset root; read the method's files as resources a2c://method/{+repo}/-/{+path} (percent-encoded; the version that repository is bound to, never another); its skills are skill://a2c/VERSION/NAME/SKILL.md (`skills/list` with the skills extension); never take W/tools/ai-rules for the method; author only under the write contract's rules.",
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::list(self.0.allow_write)))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        if !tools::list(true).iter().any(|t| t.name == name) {
            return Err(ErrorData::invalid_params(
                format!("no tool {}", crate::util::text::quoted_short(&name)),
                None,
            ));
        }
        let args = request.arguments.unwrap_or_default();
        // The arguments the tool's inputSchema declares, of its types, or -32602 naming them:
        // an argument dropped or misread would answer another question than the one asked.
        tools::check_arguments(&name, &args).map_err(|(message, accepted)| {
            ErrorData::invalid_params(message, Some(serde_json::json!({ "accepted": accepted })))
        })?;
        let in_process = tools::in_process(&name);
        // Progress the client asked for (a `progressToken`) goes to it from the command's
        // thread through a channel; a cancellation stops the command.
        let (progress_tx, mut progress_rx) = tokio::sync::mpsc::unbounded_channel::<(u64, String)>();
        let forward = match context.meta.get_progress_token() {
            Some(token) => {
                let peer = context.peer.clone();
                Some(tokio::spawn(async move {
                    while let Some((done, line)) = progress_rx.recv().await {
                        let mut note = rmcp::model::ProgressNotificationParam::new(token.clone(), done as f64);
                        note.message = Some(line);
                        let _ = peer.notify_progress(note).await;
                    }
                }))
            }
            None => {
                progress_rx.close();
                None
            }
        };
        let wants_progress = forward.is_some();
        let ct = context.ct.clone();
        let call = move |inner: &Inner| {
            let cancelled = move || ct.is_cancelled();
            let progress = move |done: u64, line: &str| {
                let _ = progress_tx.send((done, line.to_string()));
            };
            let env = tools::Env {
                scope: &inner.scope,
                exe: &inner.exe,
                allow_write: inner.allow_write,
                cancelled: &cancelled,
                progress: wants_progress.then_some(&progress as tools::Progress<'_>),
            };
            tools::call(&env, &name, &args)
        };
        let result = match in_process {
            true => self.blocking(call).await?,
            false => self.waiting(call).await?,
        };
        // Every progress notification goes out before the result (the sender is gone now).
        if let Some(forward) = forward {
            let _ = forward.await;
        }
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let start = offset(request.as_ref())?;
        let all = self
            .blocking(|inner| {
                let repos = inner.scope.repos()?;
                Ok::<_, anyhow::Error>(
                    repos
                        .iter()
                        .flat_map(|r| {
                            resources::files(r).into_iter().map(move |(uri, path, size)| {
                                let version = r.contract.as_ref().map(ToString::to_string).unwrap_or_default();
                                let resource = Resource::new(uri, format!("{}: {path}", r.relative))
                                    .with_description(format!(
                                        "{path} of method {version}, the write contract of `{}`",
                                        r.relative
                                    ))
                                    .with_size(size);
                                match resources::mime(&path) {
                                    Some(mime) => resource.with_mime_type(mime),
                                    None => resource,
                                }
                            })
                        })
                        .collect::<Vec<_>>(),
                )
            })
            .await?
            .map_err(internal)?;
        let end = (start + resources::PAGE).min(all.len());
        let mut page = ListResourcesResult::with_all_items(all.get(start..end).map(<[_]>::to_vec).unwrap_or_default());
        if end < all.len() {
            page.next_cursor = Some(end.to_string());
        }
        Ok(page)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new(resources::TEMPLATE, "method file")
                .with_description("A file below the method asset root of {repo}'s write contract; {repo} is the repository's path relative to W (`.` for W itself), {path} the file's below the tree; both percent-encoded as RFC 6570 reserved expansion writes them, decoded once"),
        ]))
    }

    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListSkillsResult, ErrorData> {
        skills_declared(&context)?;
        let listed = self.blocking(|inner| skills::list(&inner.scope)).await?;
        listed
            .map(rmcp::model::ListSkillsResult::with_all_items)
            .map_err(|why| ErrorData::internal_error(why, None))
    }

    async fn get_skill(
        &self,
        request: rmcp::model::GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetSkillResult, ErrorData> {
        skills_declared(&context)?;
        let asked = request.uri;
        let got = self.blocking(move |inner| skills::get(&inner.scope, &asked)).await?;
        got.map(rmcp::model::GetSkillResult::new)
            .map_err(|why| ErrorData::invalid_params(why, None))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        let asked = uri.clone();
        let read = self
            .blocking(move |inner| match skills::is_skill_uri(&asked) {
                true => skills::read(&inner.scope, &asked),
                false => resources::read(&inner.scope, &asked),
            })
            .await?;
        match read {
            Ok((path, bytes)) => Ok(ReadResourceResult::new(vec![resources::contents(uri, &path, bytes)]).into()),
            Err(why) => Err(ErrorData::resource_not_found(
                why,
                Some(
                    serde_json::json!({ "uri": uri, "hint": "list the resources (`resources/list`), or call `resolve` for the repository's method asset root" }),
                ),
            )),
        }
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let listed = self
            .blocking(|inner| prompts::prompts(&inner.scope))
            .await?
            .map_err(internal)?;
        Ok(ListPromptsResult::with_all_items(
            listed
                .found
                .into_iter()
                .map(|p| {
                    let arguments = p
                        .arguments
                        .iter()
                        .map(|a| {
                            let arg = PromptArgument::new(&a.name).with_required(a.required);
                            match &a.description {
                                Some(d) => arg.with_description(d),
                                None => arg,
                            }
                        })
                        .collect::<Vec<_>>();
                    Prompt::new(
                        p.name,
                        p.description.or(Some(p.path)),
                        (!arguments.is_empty()).then_some(arguments),
                    )
                })
                .collect(),
        ))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let listed = self
            .blocking(|inner| prompts::prompts(&inner.scope))
            .await?
            .map_err(internal)?;
        let Some(prompt) = listed.found.into_iter().find(|p| p.name == request.name) else {
            let skipped: Vec<String> = listed.skipped.iter().map(|(f, why)| format!("{f}: {why}")).collect();
            let mut message = format!(
                "no prompt {} in the method this repository is bound to",
                crate::util::text::quoted_short(&request.name)
            );
            if !skipped.is_empty() {
                message.push_str(&format!(
                    " (files below prompts/ that are not prompts: {})",
                    skipped.join("; ")
                ));
            }
            return Err(refused(message, "list the prompts (`prompts/list`)"));
        };
        let text = prompts::render(&prompt, &request.arguments.unwrap_or_default())
            .map_err(|why| refused(why, "pass the arguments `prompts/list` declares for it"))?;
        let mut result = GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]);
        if let Some(d) = prompt.description {
            result = result.with_description(d);
        }
        Ok(result.into())
    }
}

/// Resource URIs and prompt files on arbitrary bytes (feature `fuzzing`): an accepted URI
/// names a portable path below its tree (no `..`, not absolute, never bookkeeping), and a
/// prompt's arguments all have names.
#[cfg(feature = "fuzzing")]
pub fn fuzz_uri_and_prompt(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok((repo, path)) = resources::parse(text) {
        assert!(crate::util::paths::check_portable_relative(&path).is_ok(), "{path}");
        assert!(
            repo == "." || crate::util::paths::check_portable_relative(&repo).is_ok(),
            "{repo}"
        );
        assert!(!path.split('/').any(|s| s.starts_with(".a2c-")), "{path}");
        assert_eq!(resources::parse(&resources::uri(&repo, &path)), Ok((repo, path)));
    }
    if let Ok(p) = prompts::parse(text, "default") {
        assert!(p.arguments.iter().all(|a| !a.name.is_empty()));
        let _ = prompts::render(&p, &serde_json::Map::new());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The watcher's outline is three `stat`s however many entries the store holds, and sees a
    /// version installed (renamed in) or removed.
    #[test]
    fn the_outline_is_bounded_and_sees_versions_come_and_go() {
        let w = tempfile::tempdir().unwrap();
        let store = w.path().join_rel(crate::store::STORE_DIR);
        fs_err::create_dir_all(&store).unwrap();
        for i in 0..2_000 {
            fs_err::create_dir(store.join(format!("junk-{i}"))).unwrap();
        }
        let before = outline(w.path());
        assert_eq!(before.len(), 3);
        std::thread::sleep(Duration::from_millis(20));
        fs_err::create_dir(w.path().join("staged")).unwrap();
        fs_err::rename(w.path().join("staged"), store.join("1.0.0")).unwrap();
        let installed = outline(w.path());
        assert_ne!(before, installed);
        std::thread::sleep(Duration::from_millis(20));
        fs_err::remove_dir(store.join("1.0.0")).unwrap();
        assert_ne!(installed, outline(w.path()));
    }
}
