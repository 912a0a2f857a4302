#!/usr/bin/env bash
# Installs the reference JSON Schema validator (PyPI `jsonschema`, pinned;
# schemathesis already brings it) into .tools/venv when missing and prints
# the venv's python. The simulators' schema test
# (conformance/simulators/tests/it/vendor_schemas.rs) runs
# conformance/tools/vendor_schema.py with it: each simulator answer is
# validated against the schema its vendor publishes.
set -euo pipefail
exec "$(dirname "${BASH_SOURCE[0]}")/pypi.sh" jsonschema 4.26.0
