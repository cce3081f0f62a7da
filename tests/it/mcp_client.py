"""A real MCP client (the official Python SDK, `mcp`) driving `a2c mcp` over stdio, for
tests/it/mcp.rs. Usage: mcp_client.py A2C WORKDIR SCENARIO; prints one JSON report on stdout.

Scenarios:
  read     a read-only server: every list, every tool, resources of two repositories, hostile
           URIs, the writing tools refused, a change notification after a migrate (the CLI's).
  strict   the fixture the TypeScript SDK, the Inspector and rmcp read (tests/it/mcp.rs,
           rich_superbuild): the failing tools as error results, a binary file, names with a
           space, `%` and non-ASCII through the template (expanded as RFC 6570 reserved
           expansion does it) and as listed.
  paths    a server started in a member (WORKDIR is W/p/app): `resolve` and `migrate_plan` asked
           about the sibling p/web by each spelling (relative to the member, relative to W,
           absolute), and arguments no schema declares or of another type.
  write    a server with --allow-write: install, then migrate_plan, migrate_apply of its
           digest refused until the user approves it in a terminal (the command the refusal's
           hint gives, run under `script`, a pseudo-terminal), then applied.
"""

import asyncio
import json
import os
import subprocess
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

A2C, WORKDIR, SCENARIO = sys.argv[1], sys.argv[2], sys.argv[3]


def dump(model):
    return json.loads(model.model_dump_json(by_alias=True, exclude_none=True))


def tool_result(result):
    doc = dump(result)
    text = [c.get("text") for c in doc.get("content", [])]
    # An error result carries a2c's error document as its first text (never as structured
    # content, which must conform to the tool's output schema).
    try:
        error = json.loads(text[0]).get("error") if text else None
    except (ValueError, AttributeError):
        error = None
    return {"is_error": bool(doc.get("isError")), "structured": doc.get("structuredContent"),
            "text": text, "error": error}


async def attempt(coroutine):
    try:
        return {"ok": dump(await coroutine)}
    except Exception as e:  # an MCP error: its message and data
        error = getattr(e, "error", None)
        return {"error": str(e), "data": getattr(error, "data", None) if error else None}


async def read_scenario(session, notes):
    report = {}
    tools = (await session.list_tools()).tools
    report["tools"] = sorted(t.name for t in tools)
    # The SDK validates every successful result against its tool's outputSchema (and raises).
    report["output_schemas"] = {t.name: (t.output_schema or {}).get("title") for t in tools}
    resources, cursor = [], None
    while True:
        from mcp.types import PaginatedRequestParams
        page = await session.list_resources(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        resources += [str(r.uri) for r in page.resources]
        cursor = page.next_cursor
        if not cursor:
            break
    report["resources"] = resources
    report["templates"] = [t.uri_template for t in (await session.list_resource_templates()).resource_templates]
    prompts = (await session.list_prompts()).prompts
    report["prompts"] = [dump(p) for p in prompts]
    report["prompt"] = await attempt(session.get_prompt("p/app/review", {}))
    for name, args in [("workspace", {}), ("resolve", {"path": "p/app/rules"}), ("resolve", {"path": "p/new"}),
                       ("resolve", {"path": "../outside"}), ("resolve", {"path": "p/escape"}), ("list", {"offline": True}), ("outdated", {}),
                       ("doctor", {}), ("migrate_plan", {"to": "2.0.0", "repo": "p/app"}),
                       ("install", {}), ("migrate_apply", {"to": "2.0.0", "confirm": "sha256:" + "0" * 64})]:
        key = name if name not in report else f"{name}:{json.dumps(args, sort_keys=True)}"
        report[key] = tool_result(await session.call_tool(name, args))
    reads = {}
    for uri in ["a2c://method/p/app/-/rules/core.md", "a2c://method/p/web/-/rules/core.md",
                "a2c://method/p/app/-/../../../../etc/passwd", "a2c://method/p/app/-/.a2c-receipt.json",
                "a2c://method/p/app/-/rules/link.md", "a2c://method/p/new/-/rules/core.md",
                "file:///etc/passwd"]:
        reads[uri] = await attempt(session.read_resource(uri))
    report["reads"] = reads
    # The CLI migrates p/app (as a person would, beside the agent): the server notices.
    before = len(notes)
    migrate = subprocess.run([A2C, "-C", f"{WORKDIR}/p/app", "migrate", "version", "--to", "2.0.0"],
                             capture_output=True, text=True)
    report["cli_migrate"] = migrate.returncode
    for _ in range(100):
        if any("list_changed" in n for n in notes[before:]):
            break
        await asyncio.sleep(0.1)
    report["notifications"] = notes[before:]
    report["after_migrate"] = await attempt(session.read_resource("a2c://method/p/app/-/rules/core.md"))
    return report


async def write_scenario(session, notes):
    tools = (await session.list_tools()).tools
    report = {"tools": sorted(t.name for t in tools),
              "output_schemas": {t.name: (t.output_schema or {}).get("title") for t in tools}}
    report["install"] = tool_result(await session.call_tool("install", {}))
    plan = tool_result(await session.call_tool("migrate_plan", {"to": "2.0.0", "all": True}))
    report["plan"] = plan
    digest = (plan["structured"] or {}).get("plan")
    report["apply_wrong"] = tool_result(await session.call_tool(
        "migrate_apply", {"to": "2.0.0", "all": True, "confirm": "sha256:" + "1" * 64}))
    unapproved = tool_result(await session.call_tool(
        "migrate_apply", {"to": "2.0.0", "all": True, "confirm": digest or ""}))
    report["apply_unapproved"] = unapproved
    with open(os.path.join(WORKDIR, "p/app/.tools/esys/a2c/adoption.yaml")) as f:
        report["record_after_unapproved"] = f.read()
    hint = (unapproved["error"] or {}).get("hint", "")
    command = hint.split("(an agent's tools cannot): ", 1)[-1]
    report["approve_command"] = command
    # The agent's own attempt, without a terminal, is refused.
    agent = subprocess.run(["bash", "-c", command], cwd=WORKDIR, capture_output=True, text=True,
                           stdin=subprocess.DEVNULL)
    report["approve_by_agent"] = {"code": agent.returncode, "stderr": agent.stderr}
    user = subprocess.run(["script", "-qec", command, "/dev/null"], cwd=WORKDIR, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL)
    report["approve_by_user"] = {"code": user.returncode, "out": user.stdout}
    report["apply"] = tool_result(await session.call_tool(
        "migrate_apply", {"to": "2.0.0", "all": True, "confirm": digest or ""}))
    return report


async def strict_scenario(session, notes):
    from urllib.parse import quote
    report = {"calls": {}}
    for key, name, args in [("resolve", "resolve", {"path": "p/app"}),
                            ("resolve_not_installed", "resolve", {"path": "p/web"}),
                            ("migrate_plan_unpublished", "migrate_plan", {"to": "9.9.9", "repo": "p/app"})]:
        report["calls"][key] = tool_result(await session.call_tool(name, args))
    template = (await session.list_resource_templates()).resource_templates[0].uri_template
    report["template"] = template
    reads = {}
    for path in ["rules/core.md", "templates/logo.png", "rules/with space.md", "rules/100%.md",
                 "rules/café.md", "rules/with%20space.md"]:
        # RFC 6570 reserved expansion, as encodeURI does it.
        expand = lambda v: quote(v, safe="/;,?:@&=+$-_.!~*'()#")
        uri = template.replace("{+repo}", expand("p/app")).replace("{+path}", expand(path))
        got = await attempt(session.read_resource(uri))
        content = (got.get("ok") or {}).get("contents", [{}])[0]
        reads[path] = {"uri": uri, "mime": content.get("mimeType"), "text": content.get("text"),
                       "blob": content.get("blob"), "error": got.get("error")}
    report["reads"] = reads
    return report


async def paths_scenario(session, notes):
    w = os.path.dirname(os.path.dirname(WORKDIR))
    report = {"calls": {}}
    for key, name, args in [
        ("resolve_dot", "resolve", {"path": "."}),
        ("resolve_sibling_from_member", "resolve", {"path": "../web"}),
        ("resolve_sibling_from_w", "resolve", {"path": "p/web"}),
        ("resolve_sibling_absolute", "resolve", {"path": os.path.join(w, "p/web")}),
        ("plan_sibling_from_w", "migrate_plan", {"to": "2.0.0", "repo": "p/web"}),
        ("plan_sibling_from_member", "migrate_plan", {"to": "2.0.0", "repo": "../web"}),
    ]:
        report["calls"][key] = tool_result(await session.call_tool(name, args))
    for key, name, args in [
        ("unknown_argument", "migrate_plan", {"path": "x", "to": "2.0.0"}),
        ("mistyped_argument", "resolve", {"path": 1}),
    ]:
        got = await attempt(session.call_tool(name, args))
        report["calls"][key] = got if "error" in got else {"result": tool_result_of(got)}
    return report


def tool_result_of(got):
    return got.get("ok")


async def main():
    args = ["mcp"] + (["--allow-write"] if SCENARIO == "write" else [])
    # The SDK passes the server only a default environment unless told: the test's own (its
    # home, its a2c cache, git's identity) is what a runtime's configured `env` would be.
    server = StdioServerParameters(command=A2C, args=args, cwd=WORKDIR, env=dict(os.environ))
    notes = []

    async def on_message(message):
        notes.append(repr(message))

    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write, message_handler=on_message) as session:
            init = await session.initialize()
            report = {"server": dump(init).get("serverInfo")}
            scenario = {"read": read_scenario, "write": write_scenario, "strict": strict_scenario,
                        "paths": paths_scenario}[SCENARIO]
            report.update(await scenario(session, notes))
    print(json.dumps(report))


asyncio.run(asyncio.wait_for(main(), 120))
