#!/usr/bin/env bash
# Installs the reference MCP client (PyPI `mcp`, the Model Context Protocol
# Python SDK, pinned) into .tools/venv when missing and prints the venv's
# python. The MCP tests (host/bin/tests/it/mcp.rs) run
# conformance/tools/mcp_client.py with it: a client nobody here wrote,
# against the hosted endpoint (streamable HTTP) and `relay mcp` (stdio).
set -euo pipefail
exec "$(dirname "${BASH_SOURCE[0]}")/pypi.sh" mcp 2.3.0
