"""Drives the reference MCP client (PyPI `mcp`, conformance/tools/mcp.sh)
against a relay tool server and prints what it saw as one JSON object.

    mcp_client.py http  <plan.json>   # plan: {"url", "headers"?, "calls": [[tool, args]…], "private": tool?}
    mcp_client.py stdio <plan.json>   # plan: {"command", "args", "env", "calls": […]}

Output: {"tools": [names], "schemas": {name: inputSchema}, "calls":
[{"tool", "isError", "structured", "text"}], "private": {"clientError",
"isError", "structured", "text" (the call in the session), "status", "body"
(the same call posted outside a session)}} — the test
(host/bin/tests/it/mcp.rs) asserts on it.
"""

import asyncio
import json
import sys
import urllib.error
import urllib.request

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def drive(session, plan):
    await session.initialize()
    listed = await session.list_tools()
    out = {
        "tools": [t.name for t in listed.tools],
        "schemas": {t.name: t.input_schema for t in listed.tools},
        "calls": [],
    }
    for tool, args in plan.get("calls", []):
        r = await session.call_tool(tool, args)
        text = "".join(getattr(c, "text", "") for c in r.content)
        out["calls"].append(
            {"tool": tool, "isError": r.is_error, "structured": r.structured_content, "text": text}
        )
    private = plan.get("private")
    if private:
        try:
            r = await session.call_tool(private, {})
            text = "".join(getattr(c, "text", "") for c in r.content)
            out["private"] = {
                "clientError": None, "isError": r.is_error, "structured": r.structured_content, "text": text
            }
        except Exception as e:  # the SDK surfaces a non-2xx answer as an error
            out["private"] = {"clientError": f"{type(e).__name__}: {e}"}
    return out


def raw_private_call(url, tool):
    """The same private call as a plain HTTP POST: the status and JSON body."""
    msg = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": {}}}
    req = urllib.request.Request(
        url,
        data=json.dumps(msg).encode(),
        method="POST",
        headers={"content-type": "application/json", "accept": "application/json, text/event-stream"},
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


async def main():
    mode, plan_path = sys.argv[1], sys.argv[2]
    with open(plan_path) as f:
        plan = json.load(f)
    if mode == "http":
        async with create_mcp_http_client(headers=plan.get("headers")) as http:
            async with streamable_http_client(plan["url"], http_client=http) as (read, write):
                async with ClientSession(read, write) as session:
                    out = await drive(session, plan)
        if plan.get("private"):
            status, body = raw_private_call(plan["url"], plan["private"])
            out["private"].update({"status": status, "body": body})
    else:
        params = StdioServerParameters(command=plan["command"], args=plan["args"], env=plan.get("env"))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                out = await drive(session, plan)
    print(json.dumps(out))


asyncio.run(main())
