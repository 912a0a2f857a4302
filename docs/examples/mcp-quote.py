"""A quote through relay's MCP endpoint with the official MCP SDK
(`pip install mcp`):

    RELAY_URL=http://127.0.0.1:8787 python mcp-quote.py

Lists the tools, calls `quote` for 5 USDC Base -> Arbitrum and prints
{"tools": [...], "bridge": ..., "estimated": ...}.
"""

import asyncio
import json
import os

from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def main():
    url = os.environ.get("RELAY_URL", "http://127.0.0.1:8787") + "/mcp"
    async with streamable_http_client(url) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = [t.name for t in (await session.list_tools()).tools]
            result = await session.call_tool("quote", {
                "fromChain": 8453, "toChain": 42161, "fromToken": "USDC", "amount": "5000000",
            })
            if result.is_error:
                raise SystemExit(result.content[0].text)
            quote = result.structured_content
            print(json.dumps({"tools": tools, "bridge": quote["bridge"],
                              "estimated": quote["to"]["estimated"]}))


asyncio.run(main())
