// A real MCP client — the official TypeScript SDK (`@modelcontextprotocol/sdk`, the library
// under Claude Code, VS Code's agent mode and Cursor) — driving `a2c mcp` over stdio, for
// tests/it/mcp.rs. Usage: node mcp_client.mjs NODE_MODULES A2C WORKDIR [paths]; prints one JSON
// report. With `paths`, WORKDIR is a member (W/p/app): only the path spellings are asked.
//
// The SDK validates every tool result that carries `structuredContent` against the tool's
// `outputSchema` (error results too) and throws when it does not conform: each call below is
// recorded as the SDK gave it, or as the error it threw.

const [modules, a2c, workdir, mode] = process.argv.slice(2);
const sdk = `${modules}/@modelcontextprotocol/sdk/dist/esm`;
const { Client } = await import(`${sdk}/client/index.js`);
const { StdioClientTransport } = await import(`${sdk}/client/stdio.js`);
const { UriTemplate } = await import(`${sdk}/shared/uriTemplate.js`);

async function attempt(promise) {
  try {
    return { ok: await promise };
  } catch (e) {
    return { error: { code: e.code ?? null, message: String(e.message ?? e) } };
  }
}

// What a tool call gave: whether it is an error result, the error document its text carries,
// and whether it had structured content.
async function call(name, args) {
  const r = await attempt(client.callTool({ name, arguments: args }));
  if (r.error) return { threw: r.error };
  const first = r.ok.content?.[0]?.text ?? "";
  let doc = null;
  try {
    doc = JSON.parse(first);
  } catch {}
  return {
    is_error: Boolean(r.ok.isError),
    structured: r.ok.structuredContent ?? null,
    error: doc?.error ?? null,
  };
}

async function read(uri) {
  const r = await attempt(client.readResource({ uri }));
  if (r.error) return { uri, error: r.error };
  const c = r.ok.contents[0];
  return { uri, mime: c.mimeType ?? null, text: c.text ?? null, blob: c.blob ?? null };
}

const transport = new StdioClientTransport({
  command: a2c,
  args: ["mcp"],
  cwd: workdir,
  env: process.env,
  stderr: "ignore",
});
const client = new Client({ name: "a2c-test-typescript", version: "0" });
await client.connect(transport);
const report = { server: client.getServerVersion(), protocol: transport.protocolVersion ?? null };

if (mode === "paths") {
  const w = workdir.replace(/\/p\/app\/?$/, "");
  const paths = {
    resolve_dot: await call("resolve", { path: "." }),
    resolve_sibling_from_member: await call("resolve", { path: "../web" }),
    resolve_sibling_from_w: await call("resolve", { path: "p/web" }),
    resolve_sibling_absolute: await call("resolve", { path: `${w}/p/web` }),
    plan_sibling_from_w: await call("migrate_plan", { to: "2.0.0", repo: "p/web" }),
    plan_sibling_from_member: await call("migrate_plan", { to: "2.0.0", repo: "../web" }),
    unknown_argument: await call("migrate_plan", { path: "x", to: "2.0.0" }),
    mistyped_argument: await call("resolve", { path: 1 }),
  };
  await client.close();
  console.log(JSON.stringify({ calls: paths }));
  process.exit(0);
}

const tools = (await client.listTools()).tools;
report.tools = tools.map((t) => t.name).sort();
report.output_schemas = Object.fromEntries(tools.map((t) => [t.name, Boolean(t.outputSchema)]));
report.calls = {
  workspace: await call("workspace", {}),
  resolve: await call("resolve", { path: "p/app" }),
  resolve_not_installed: await call("resolve", { path: "p/web" }),
  resolve_no_such_version: await call("resolve", { path: "p/app", version: "9.9.9" }),
  list: await call("list", {}),
  outdated: await call("outdated", {}),
  doctor: await call("doctor", {}),
  migrate_plan: await call("migrate_plan", { to: "2.0.0", repo: "p/app" }),
  migrate_plan_unpublished: await call("migrate_plan", { to: "9.9.9", repo: "p/app" }),
  install_read_only: await call("install", {}),
};

let resources = [];
let cursor;
do {
  const page = await client.listResources(cursor ? { cursor } : {});
  resources = resources.concat(page.resources);
  cursor = page.nextCursor;
} while (cursor);
report.resources = resources.map((r) => ({ uri: r.uri, mime: r.mimeType ?? null }));
const templates = (await client.listResourceTemplates()).resourceTemplates;
report.templates = templates.map((t) => t.uriTemplate);
const template = new UriTemplate(templates[0].uriTemplate);
const names = ["rules/core.md", "templates/logo.png", "rules/with space.md", "rules/100%.md", "rules/café.md", "rules/with%20space.md"];
report.through_template = [];
for (const path of names) {
  const uri = template.expand({ repo: "p/app", path });
  report.through_template.push({ path, ...(await read(uri)) });
}
// Each listed URI is an RFC 3986 URI: `new URL(uri).href` is the same URI, and it reads.
report.listed = [];
for (const r of resources.filter((r) => r.uri.startsWith("a2c://method/p/app/"))) {
  report.listed.push({ href_same: new URL(r.uri).href === r.uri, match: template.match(r.uri), ...(await read(r.uri)) });
}
report.prompts = (await client.listPrompts()).prompts.map((p) => p.name);
const prompt = await attempt(client.getPrompt({ name: "p/app/review", arguments: {} }));
report.prompt = prompt.ok ? prompt.ok.messages[0].content.text : prompt;
await client.close();
console.log(JSON.stringify(report));
